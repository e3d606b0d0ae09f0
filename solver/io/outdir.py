"""The output folder of a run: one run per folder, results that appear whole.

A run never writes into its target folder directly. Rank 0 checks the target and creates a
hidden sibling ``.<name>.part-<pid>-<random>``; every rank writes there, and
:meth:`OutputFolder.publish` renames it onto the target once the run is complete
(``summary.json`` included), so the target holds a complete run or nothing new. A run that
fails calls :meth:`OutputFolder.discard`; one that is killed leaves only the hidden sibling.
The checks, on rank 0, reported on every rank as one InputError naming ``--out``:

* the target must not be a file, and its parent must be writable;
* a non-empty target holding a run (``summary.json`` or a ``.pvd`` series) is refused unless
  ``overwrite``; the old run is then replaced at publication, so a failed rerun keeps it;
* a non-empty target holding anything else is refused even with ``overwrite``: the solver
  never deletes files it did not write.

A restart (:meth:`OutputFolder.resume`) goes on in the folder of the run it continues: its
checkpoint is only ever replaced whole (solver.io.checkpoint), so a restart that fails
leaves a folder that can be restarted again.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from pathlib import Path

from solver.errors import InputError
from solver.parallel import on_root


def holds_run(folder: Path) -> bool:
    """Whether ``folder`` holds a solver run (a summary or a VTK series)."""
    return (folder / "summary.json").exists() or any(folder.glob("*.pvd"))


def _prepare(target: Path, overwrite: bool) -> Path:
    """Check ``target`` and create the sibling the run writes into (rank 0)."""
    where = "--out"
    shown = str(target)
    try:
        target = target.resolve()
        if target.exists() and not target.is_dir():
            raise InputError(where, f"{shown} is a file, not a folder")
        if target.is_dir():
            if not os.access(target, os.W_OK | os.X_OK):
                raise InputError(where, f"{shown}: the folder is not writable")
            if any(target.iterdir()):
                if not holds_run(target):
                    raise InputError(where, f"{shown} holds files that are not a solver run; "
                                            "choose an empty or new folder")
                if not overwrite:
                    raise InputError(where, f"{shown} holds another run; pass --overwrite to "
                                            "replace it, or choose another folder")
        target.parent.mkdir(parents=True, exist_ok=True)
        work = target.parent / f".{target.name}.part-{os.getpid()}-{secrets.token_hex(4)}"
        work.mkdir()
        return work
    except OSError as exc:
        raise InputError(where, f"cannot write the output folder {shown}: "
                                f"{exc.strerror or exc}") from None


class OutputFolder:
    """The target folder of a run and the sibling the run writes into (``work``)."""

    def __init__(self, comm, target: str | Path, overwrite: bool = False):
        self.comm = comm
        self.target = Path(target)
        self.overwrite = overwrite
        self.in_place = False
        self.work = on_root(comm, lambda: _prepare(self.target, overwrite))

    @classmethod
    def resume(cls, comm, target: str | Path) -> OutputFolder:
        """The folder of a run to continue, written in place."""
        folder = cls.__new__(cls)
        folder.comm, folder.target, folder.overwrite = comm, Path(target), False
        folder.in_place = True
        folder.work = folder.target

        def check() -> None:
            if not (folder.target.is_dir() and holds_run(folder.target)):
                raise InputError("--restart", f"{target} is not the folder of a run")
            if not os.access(folder.target, os.W_OK | os.X_OK):
                raise InputError("--restart", f"{target}: the folder is not writable")

        on_root(comm, check)
        return folder

    def replaces_run(self) -> bool:
        """Whether publishing would replace an earlier run in the target."""
        return not self.in_place and self.target.is_dir() and holds_run(self.target)

    def publish(self) -> Path:
        """Put the complete run in place of the target (collective); returns the target."""
        self.comm.Barrier()
        if self.in_place:
            return self.target
        error = None
        if self.comm.rank == 0:
            error = self._swap()
        error = self.comm.bcast(error, root=0)
        if error is not None:
            raise InputError("--out", error)
        return self.target

    def _swap(self) -> str | None:
        target = self.target.resolve()
        old = None
        try:
            if target.exists() and any(target.iterdir()):
                if not (self.overwrite and holds_run(target)):
                    return f"{self.target} filled up during the run with files it may not " \
                           f"replace; the run is kept in {self.work}"
                old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
                target.rename(old / target.name)
            os.replace(self.work, target)
        except OSError as exc:
            if old is not None and not target.exists():
                (old / target.name).rename(target)
            return f"cannot move the finished run into {self.target}: {exc.strerror or exc}" \
                   f" (it is kept in {self.work})"
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        return None

    def discard(self, collective: bool = True) -> None:
        """Remove what a failed run wrote; ``collective``: wait until every rank has stopped
        writing (all ranks call it, as after an InputError every rank raises)."""
        if collective:
            self.comm.Barrier()
        if self.comm.rank == 0 and not self.in_place:
            shutil.rmtree(self.work, ignore_errors=True)
