"""User-facing errors.

Every problem with the user's input (case file, mesh, parameters) is raised as
:class:`InputError`. The CLI prints its ``line``, ``error: <where>: <message>``, and exits
with code 2, never with a traceback; the Python API (solver.run_case) raises it as it is.
"""


class InputError(Exception):
    """Bad user input. ``where`` names the file and field (``case.toml: mesh.path``)."""

    def __init__(self, where: str, message: str):
        super().__init__(f"{where}: {message}")
        self.where = where
        self.message = message

    @property
    def line(self) -> str:
        """The one line the CLI prints: ``error: <where>: <message>``."""
        return f"error: {self.where}: {self.message}"
