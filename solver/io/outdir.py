"""The output folder of a run: one run per folder, results that appear whole.

A run never writes into its target folder directly. Rank 0 checks the target and creates a
hidden sibling ``.<name>.part-<pid>-<random>``; every rank writes there, and
:meth:`OutputFolder.publish` renames it onto the target once the run is complete
(``summary.json`` included), so the target holds a complete run or nothing new. A run that
fails calls :meth:`OutputFolder.discard`; one that is killed leaves only the hidden sibling.
A signal that ends the ranks at once (solver.interrupt.stop_now) has rank 0 remove the
sibling it created first, unless it holds a checkpoint or a summary.
The checks, on rank 0, reported on every rank as one InputError naming ``--out``:

* the target must not be a file, and its parent must be writable;
* a non-empty target holding a run (``summary.json`` or a ``.pvd`` series) is refused unless
  ``overwrite``; the old run is then replaced at publication, so a failed rerun keeps it;
* a non-empty target holding anything else is refused even with ``overwrite``: the solver
  never deletes files it did not write.

A restart (:meth:`OutputFolder.resume`) goes on in the folder of the run it continues: its
checkpoint is only ever replaced whole (solver.io.checkpoint), so a restart that fails
leaves a folder that can be restarted again. The hidden sibling a killed run left is such a
folder too: a restart of ``.<name>.part-*`` writes there and, once complete, is published
onto ``<name>`` as the killed run would have been.

A write the file system refused (solver.errors.OutputFailed) ends the run through
:meth:`OutputFolder.fail`: the working folder stays where it holds a complete checkpoint to
go on from (or is the folder a restart continues), and goes otherwise. A publication the
file system refuses (no space, quota, I/O error) raises OutputFailed on every rank and keeps
the finished run, its last checkpoint included, in the working folder; the target is left
as it was.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from solver import interrupt
from solver.errors import InputError, OutputFailed, is_write_failure
from solver.io import checkpoint
from solver.parallel import on_root

#: The hidden sibling a run writes into: ``.<name>.part-<pid>-<8 hex digits>``.
PART_NAME = re.compile(r"\.(?P<name>.+)\.part-\d+-[0-9a-f]{8}")


def holds_run(folder: Path) -> bool:
    """Whether ``folder`` holds a solver run (a summary or a VTK series)."""
    return (folder / "summary.json").exists() or any(folder.glob("*.pvd"))


def _uid_hint() -> str:
    """What to do when a folder is not writable for this user (in a container, a mounted
    folder owned by another uid)."""
    return (f" for uid {os.getuid()} (in a container, mount a folder this user owns: "
            'docker run --user "$(id -u):$(id -g)" -v "$PWD:/work")')


def _check_target(target: Path, shown: str, overwrite: bool, where: str) -> None:
    """Refuse a resolved ``target`` that a run may not be published onto (rank 0)."""
    if target.exists() and not target.is_dir():
        raise InputError(where, f"{shown} is a file, not a folder")
    if target.is_dir():
        if not os.access(target, os.W_OK | os.X_OK):
            raise InputError(where, f"{shown}: the folder is not writable{_uid_hint()}")
        if any(target.iterdir()):
            if not holds_run(target):
                raise InputError(where, f"{shown} holds files that are not a solver run; "
                                        "choose an empty or new folder")
            if not overwrite:
                raise InputError(where, f"{shown} holds another run; pass --overwrite to "
                                        "replace it, or choose another folder")


def _prepare(target: Path, overwrite: bool) -> Path | OutputFailed:
    """Check ``target`` and create the sibling the run writes into (rank 0); a file system
    that refuses to (no space, quota, I/O error) gives the failure, to be raised on every
    rank."""
    where = "--out"
    shown = str(target)
    try:
        target = target.resolve()
        _check_target(target, shown, overwrite, where)
        target.parent.mkdir(parents=True, exist_ok=True)
        work = target.parent / f".{target.name}.part-{os.getpid()}-{secrets.token_hex(4)}"
        work.mkdir()
        return work
    except PermissionError as exc:
        raise InputError(where, f"cannot write the output folder {shown}: "
                                f"{exc.strerror or exc}{_uid_hint()}") from None
    except OSError as exc:
        if is_write_failure(exc):
            return OutputFailed.from_os_error(exc, target)
        raise InputError(where, f"cannot write the output folder {shown}: "
                                f"{exc.strerror or exc}") from None


def _nothing() -> None:
    pass


def _put_back(aside: Path, target: Path) -> str:
    """Rename the earlier run that a publication moved into the folder ``aside`` back onto
    ``target``, where it is not there, and remove ``aside``; returns "" once done, else
    where the earlier run is."""
    try:
        if not target.exists():
            (aside / target.name).rename(target)
    except OSError:
        return f"the earlier run of {target} is in {aside / target.name}"
    shutil.rmtree(aside, ignore_errors=True)
    return ""


class OutputFolder:
    """The target folder of a run and the folder the run writes into (``work``): a new
    hidden sibling, or on a restart (``resumed``) the folder of the run it continues, which
    is never removed."""

    def __init__(self, comm, target: str | Path, overwrite: bool = False):
        self.comm = comm
        self.target = Path(target)
        self.overwrite = overwrite
        self.resumed = False
        work = on_root(comm, lambda: _prepare(self.target, overwrite))
        if isinstance(work, OutputFailed):
            work.kept = f"{self.target} is left as it was"
            raise work
        self.work = work
        self._forget = (interrupt.at_stop_now(self._remove_unfinished) if comm.rank == 0
                        else _nothing)

    def _remove_unfinished(self) -> None:
        """Remove the working folder unless it holds a checkpoint or a summary (rank 0, as
        a signal ends the ranks at once)."""
        if not (checkpoint.exists(self.work) or (self.work / "summary.json").exists()):
            shutil.rmtree(self.work, ignore_errors=True)

    @classmethod
    def resume(cls, comm, folder: str | Path) -> OutputFolder:
        """The folder of a run to continue: written in place, or, for the hidden sibling
        ``.<name>.part-*`` of a killed run, published onto ``<name>`` once complete
        (replacing a run there, as the killed run was to)."""
        resumed = cls.__new__(cls)
        resumed.comm, resumed.work, resumed.resumed = comm, Path(folder), True
        resumed._forget = _nothing
        part = PART_NAME.fullmatch(resumed.work.name)
        resumed.target = resumed.work.parent / part["name"] if part else resumed.work
        resumed.overwrite = part is not None
        on_root(comm, resumed._check_resumable)
        return resumed

    def _check_resumable(self) -> None:
        """Refuse a folder that holds no run to go on from, or whose run cannot be
        published (rank 0)."""
        shown = str(self.work)
        if not (self.work.is_dir() and (holds_run(self.work) or
                                        (self.work / checkpoint.CHECKPOINT).is_dir() or
                                        (self.work / checkpoint.OLD).is_dir())):
            raise InputError("--restart", f"{shown} is not the folder of a run")
        if not os.access(self.work, os.W_OK | os.X_OK):
            raise InputError("--restart", f"{shown}: the folder is not writable")
        if self.target != self.work:
            _check_target(self.target.resolve(), str(self.target), True, "--restart")

    def replaces_run(self) -> bool:
        """Whether publishing would replace an earlier run in the target."""
        return self.work != self.target and self.target.is_dir() and holds_run(self.target)

    def publish(self) -> Path:
        """Put the complete run in place of the target (collective); returns the target. A
        target that cannot take it raises InputError, a file system that refuses the renames
        OutputFailed (module docstring), on every rank."""
        self.comm.Barrier()
        if self.work == self.target:
            return self.target
        error = None
        if self.comm.rank == 0:
            self._forget()
            error = self._swap()
        error = self.comm.bcast(error, root=0)
        if isinstance(error, OutputFailed):
            raise error
        if error is not None:
            raise InputError("--out", error)
        return self.target

    def _swap(self) -> str | OutputFailed | None:
        """Rename the working folder onto the target (rank 0), an earlier run there moved
        aside first and removed after; on failure the earlier run is put back, and the
        reason (OutputFailed for a write the file system refused) returned."""
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
            earlier = "" if old is None else _put_back(old, target)
            if is_write_failure(exc):
                failure = OutputFailed(str(self.target), exc.errno, exc.strerror or str(exc))
                failure.kept = (f"the finished run is kept in {self.work}; "
                                + (earlier or f"{self.target} is left as it was"))
                return failure
            return f"cannot move the finished run into {self.target}: {exc.strerror or exc}" \
                   f" (it is kept in {self.work}{'; ' + earlier if earlier else ''})"
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        return None

    def discard(self, collective: bool = True) -> None:
        """Remove what a failed run wrote; ``collective``: wait until every rank has stopped
        writing (all ranks call it, as after an InputError every rank raises). The folder
        of a restart stays."""
        if collective:
            self.comm.Barrier()
        self._forget()
        if self.comm.rank == 0 and not self.resumed:
            shutil.rmtree(self.work, ignore_errors=True)

    def fail(self, failure: OutputFailed, restart_command: Callable[[Path], str],
             collective: bool = True) -> None:
        """After a write the file system refused: keep the working folder where it holds a
        complete checkpoint (or is the folder a restart continues), remove it otherwise, and
        say which in ``failure.kept`` (``restart_command(folder)``: the command line that
        goes on from a folder). ``collective``: all ranks call it together; otherwise only
        the rank that failed, whose write stopped the others."""
        if collective:
            self.comm.Barrier()
        self._forget()
        if self.comm.rank != 0 and collective:
            return
        if checkpoint.exists(self.work):
            failure.kept = (f"the last checkpoint is kept in {self.work}; go on with: "
                            + restart_command(self.work))
        elif not self.resumed:
            shutil.rmtree(self.work, ignore_errors=True)
            failure.kept = f"nothing was published; {self.target} is left as it was"
