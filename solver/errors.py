"""User-facing errors and the exit codes they end a run with.

Every problem with the user's input (case file, mesh, parameters, a checkpoint to restart
from) is raised as :class:`InputError`. The CLI prints its ``line``, ``error: <where>:
<message>``, and exits with code 2 (``EXIT_INPUT``), never with a traceback; the Python API
(solver.run_case) raises it as it is.

A file system that refuses a write (no space, quota exceeded, an I/O error) ends the run as
:class:`OutputFailed`, on every rank together: the CLI prints its ``line``, naming the path
and the errno, and exits with code 4 (``EXIT_OUTPUT``).
"""

from __future__ import annotations

import contextlib
import errno
import os

EXIT_INPUT = 2
EXIT_OUTPUT = 4

LINE_LIMIT = 800
"""Most characters of an error line: a longer file name, field or value is cut in the middle
(its start and end kept), so that the line names the file and field and stays one line (room
for a path, the field, the message and the command that restarts a run)."""

#: The errnos of a write the file system refused for lack of room or by a fault: no space
#: left, disk quota exceeded, file too large, I/O error.
WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


class InputError(Exception):
    """Bad user input. ``where`` names the file and field (``case.toml: mesh.path``)."""

    def __init__(self, where: str, message: str):
        super().__init__(f"{where}: {message}")
        self.where = where
        self.message = message

    @property
    def line(self) -> str:
        """The one line the CLI prints: ``error: <where>: <message>``, at most LINE_LIMIT
        characters (:func:`one_line`)."""
        return one_line(self.where, self.message)


class OutputFailed(Exception):
    """A write of the run's output or checkpoint that the file system refused: ``path`` the
    file or folder, ``errno`` the error number, ``reason`` its text; ``kept`` says what of
    the run is left on disk (set once the output folder is dealt with); ``everywhere``:
    raised on every rank together (:func:`write_together`), not on the one rank whose
    write failed while the others went on."""

    def __init__(self, path: str, error_number: int | None, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.errno = error_number
        self.reason = reason
        self.kept = ""
        self.everywhere = True

    def __reduce__(self):
        """Pickled whole, to be raised on the ranks that did not see the failure."""
        return self.__class__, (self.path, self.errno, self.reason), self.__dict__

    @classmethod
    def from_os_error(cls, exc: OSError, path: str | os.PathLike | None = None) -> OutputFailed:
        """The failure of ``exc``, naming its file (or ``path`` where it names none)."""
        named = exc.filename if exc.filename is not None else path
        return cls(str(named), exc.errno, exc.strerror or str(exc))

    @property
    def line(self) -> str:
        """The one line the CLI prints: ``error: <path>: cannot write: <reason> (<ERRNO>)``
        and what is kept."""
        code = errno.errorcode.get(self.errno, "") if self.errno is not None else ""
        named = f" ({code}, errno {self.errno})" if code else ""
        kept = f"; {self.kept}" if self.kept else ""
        return one_line(self.path, f"cannot write: {self.reason}{named}{kept}")


def shortened(text: str, limit: int) -> str:
    """``text`` on one line (line breaks as spaces), cut in the middle to ``limit``
    characters when longer: its start, `` ... ``, its end."""
    text = " ".join(str(text).splitlines())
    if len(text) <= limit:
        return text
    head = (limit - 5) // 2
    return f"{text[:head]} ... {text[len(text) - (limit - 5 - head):]}"


def one_line(where: str, message: str) -> str:
    """``error: <where>: <message>`` on one line of at most LINE_LIMIT characters: a long
    ``where`` (a long path) keeps its end, the file name and field, and a long message its
    start and end (:func:`shortened`)."""
    where = shortened(where, LINE_LIMIT // 3)
    return f"error: {where}: {shortened(message, LINE_LIMIT - len(where) - 9)}"


def is_write_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is an OSError of a write the file system refused (WRITE_ERRNOS)."""
    return isinstance(exc, OSError) and exc.errno in WRITE_ERRNOS


@contextlib.contextmanager
def naming(path: str | os.PathLike):
    """Within the block, an OSError that names no file (a failed write or close of an open
    file) names ``path``."""
    try:
        yield
    except OSError as exc:
        if exc.filename is None:
            exc.filename = str(path)
        raise


def written_by_root(comm, write, path: str | os.PathLike):
    """``write()`` on rank 0 of ``comm`` (it writes files under ``path``) and its result on
    every rank; a write the file system refuses raises OutputFailed on every rank
    (:func:`write_together`; collective)."""
    return comm.bcast(write_together(comm, write if comm.rank == 0 else None, path), root=0)


def write_together(comm, write=None, path: str | os.PathLike | None = None):
    """Run this rank's ``write`` (a callable; None: this rank writes nothing) and agree with
    every rank of ``comm`` on the outcome, in place of a barrier (collective): an OSError on
    any rank raises OutputFailed on every rank, naming the failure of the lowest such rank
    (its file, or ``path``), so that no rank is left waiting for one that stopped. Returns
    what ``write`` returned."""
    result, failure = None, None
    try:
        if write is not None:
            result = write()
    except OSError as exc:
        failure = OutputFailed.from_os_error(exc, path)
    failures = [f for f in comm.allgather(failure) if f is not None]
    if failures:
        raise failures[0]
    return result
