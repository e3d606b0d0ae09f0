"""The Python API: run a case in this process, or read a finished run back.

``run_case`` goes the way ``solver run`` goes (solver.cli.run_loaded: the same checks, output
folder, summary and files), on the caller's MPI communicator: one rank, or every rank of an
``mpiexec`` job calling it together. Bad input raises :class:`solver.errors.InputError`,
whose ``line`` is the CLI's ``error: ...`` line; nothing raises SystemExit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from solver.errors import InputError
from solver.io.run_folder import RunFolder

DICT_CASE = Path("<dict>")
"""How a case given as a dict is named in error lines (relative paths in it resolve against
the working directory)."""
DICT_CASE_NAME = "case"
"""The name of a case given as a dict without a ``name``."""


def run_case(case: str | Path | Mapping[str, Any], out: str | Path | None = None,
             overrides: Mapping[str, Any] | Sequence[str] | None = None, *,
             overwrite: bool = False, quiet: bool = True, comm=None) -> RunFolder:
    """Run ``case`` and return the finished run (:class:`solver.io.run_folder.RunFolder`).

    ``case``: a case file, or the case's tables as a dict (``{"module": "cdem", "mesh":
    {...}, "stages": [...]}``, as a TOML file would give them). ``out``: the output folder
    (default ``out/<case name>``); ``overwrite`` replaces a run it holds. ``overrides``:
    ``{"stages[0].duration": 2.0, ...}`` or ``["stages[0].duration=2.0", ...]``, as
    ``--set``. ``quiet=False`` prints the progress lines. ``comm``: the MPI communicator
    (default MPI.COMM_WORLD; every rank of it calls ``run_case`` with the same arguments).

    A run that diverges returns (``summary["status"] == "diverged"``); one stopped by SIGINT
    or SIGTERM raises KeyboardInterrupt once its folder is written.
    """
    from mpi4py import MPI

    from solver.case import case_from_data, load_case
    from solver.cli import run_arguments, run_loaded

    sets = override_lines(overrides)
    given = isinstance(case, Mapping)
    argv = [str(DICT_CASE if given else case), *(["--out", str(out)] if out is not None else []),
            *(["--overwrite"] if overwrite else []), *(["--quiet"] if quiet else []),
            *(arg for line in sets for arg in ("--set", line))]
    run_comm = (comm if comm is not None else MPI.COMM_WORLD).Dup()
    try:
        args = run_arguments(argv)
        loaded = (case_from_data({"name": DICT_CASE_NAME, **case}, DICT_CASE, sets) if given
                  else load_case(case, sets))
        finished = run_loaded(loaded, args, run_comm)
    finally:
        run_comm.Free()
    if finished.code in (130, 143):
        raise KeyboardInterrupt(f"the run was stopped by a signal; its folder: "
                                f"{finished.folder}")
    return RunFolder(finished.folder)


def load_run(out_dir: str | Path) -> RunFolder:
    """A finished run read back from its folder (a CLI run or a ``run_case``)."""
    return RunFolder(out_dir)


def override_lines(overrides: Mapping[str, Any] | Sequence[str] | None) -> list[str]:
    """``--set`` lines ``key=value`` of ``overrides`` (a mapping's values written as TOML)."""
    from solver.io.toml import value_text

    if overrides is None:
        return []
    if isinstance(overrides, str):
        raise InputError("overrides", "expected a dict or a list of 'key=value' strings, "
                                      f"got the string {overrides!r}")
    if not isinstance(overrides, Mapping):
        return [str(line) for line in overrides]
    lines = []
    for key, value in overrides.items():
        try:
            lines.append(f"{key}={value_text(_plain(value))}")
        except TypeError as exc:
            raise InputError(f"overrides: {key}", str(exc)) from None
    return lines


def _plain(value: Any) -> Any:
    """numpy scalars and arrays as Python numbers and lists, for the TOML writer."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value
