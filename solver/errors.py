"""User-facing errors.

Every problem with the user's input (case file, mesh, parameters) is raised as
:class:`InputError`. The CLI prints ``error: <where>: <message>`` on one line and exits
with code 2, never with a traceback.
"""


class InputError(Exception):
    """Bad user input. ``where`` names the file and field (``case.toml: mesh.path``)."""

    def __init__(self, where: str, message: str):
        super().__init__(f"{where}: {message}")
        self.where = where
        self.message = message
