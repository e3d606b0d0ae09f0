"""Clean interruption, exit code 128 + the signal number (130 for SIGINT, 143 for SIGTERM).

Within a run that checkpoints (:func:`catching_signals`), SIGINT and SIGTERM only set a flag,
which the time loops read at step boundaries (reduced over all ranks with the step's sums, so
every rank stops after the same step and none is left waiting in a collective). Everywhere
else in the command line (:func:`stopping_at_once`, from the first instruction of
``solver.cli.main`` on: start-up, reading and checking the case, a run without checkpoints)
the signal stops the command at once: on one rank it raises :class:`Terminated`, which the
command line turns into its exit code (and a folder it began is removed); on several ranks,
where another rank may wait in a collective, the process ends in the handler itself with
the exit code, which is safe at any instruction (an exception raised inside the import of a
compiled module turns into an ImportError), and mpiexec ends the others; what was handed to
:func:`at_stop_now` (the removal of a folder it began) runs first. A signal that comes on
several ranks before MPI has started waits until it has (:func:`mpi_started`). Neither prints a
traceback or an MPI abort.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable

_received = {"signal": 0}
_at_stop: list = []

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Terminated(BaseException):
    """SIGINT or SIGTERM outside a run that stops at a step boundary (:func:`stopping_at_once`);
    a BaseException, so that no ``except Exception`` takes it for an error."""

    def __init__(self, signum: int):
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum


def _handler(signum, _frame) -> None:
    _received["signal"] = signum


def _terminate(signum, _frame) -> None:
    rank, size = world()
    if size > 1:
        if not _mpi_started():
            _received["at_start"] = signum
            return
        stop_now(signum, rank)
    raise Terminated(signum)


def _mpi_started() -> bool:
    """Whether MPI has started on this process (mpi4py.MPI imported and initialised)."""
    module = sys.modules.get("mpi4py.MPI")
    started = getattr(module, "Is_initialized", None)
    return started is not None and started() and not module.Is_finalized()


def mpi_started() -> None:
    """Act on a signal that came, on several ranks, before MPI had started here: the
    command line calls it once mpi4py is imported. A rank that ended before its MPI_Init
    would leave the others spinning in theirs for ever (MPICH's start-up waits on shared
    memory, not on mpiexec), so :func:`_terminate` only notes such a signal."""
    signum = _received.pop("at_start", 0)
    if signum:
        _terminate(signum, None)


def stop_now(signum: int, rank: int) -> None:
    """End this process at once with exit code 128 + ``signum``, rank 0 saying so in one
    line (output flushed, no MPI_Finalize: mpiexec ends the other ranks, silently), after
    the calls handed to :func:`at_stop_now`."""
    for call in tuple(_at_stop):
        with contextlib.suppress(Exception):
            call()
    if rank == 0:
        print(f"stopped by {signal.Signals(signum).name}", file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(128 + signum)


def at_stop_now(call) -> Callable[[], None]:
    """Have :func:`stop_now` run ``call()`` (on this process) before it ends the process;
    returns the function that takes it back."""
    _at_stop.append(call)

    def forget() -> None:
        if call in _at_stop:
            _at_stop.remove(call)

    return forget


def world() -> tuple[int, int]:
    """(rank, size) of this process: from MPI once it is started, else from what the
    launcher put in the environment (MPICH's PMI_RANK and PMI_SIZE, Open MPI's
    OMPI_COMM_WORLD_RANK and _SIZE), else (0, 1). A signal may come before MPI is."""
    if _mpi_started():
        world_comm = sys.modules["mpi4py.MPI"].COMM_WORLD
        return world_comm.rank, world_comm.size
    for rank, size in (("PMI_RANK", "PMI_SIZE"),
                       ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE")):
        if os.environ.get(size, "").isdigit():
            return int(os.environ.get(rank, "0") or 0), int(os.environ[size])
    return 0, 1


def terminated_by(exc: BaseException) -> Terminated | None:
    """The Terminated that ``exc`` is or arose from (an import the signal interrupted fails
    with an ImportError whose context is the Terminated), else None."""
    seen = 0
    while exc is not None and seen < 100:
        if isinstance(exc, Terminated):
            return exc
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return None


@contextlib.contextmanager
def _handling(handler):
    """Within the block, ``handler`` takes SIGINT and SIGTERM; the previous handlers come
    back afterwards."""
    previous = {s: signal.signal(s, handler) for s in SIGNALS}
    try:
        yield
    finally:
        for s, earlier in previous.items():
            signal.signal(s, earlier)


@contextlib.contextmanager
def stopping_at_once():
    """Within the block, SIGINT and SIGTERM raise :class:`Terminated` (the previous handlers
    come back afterwards; outside the main thread, where Python takes no handlers, nothing
    changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    with _handling(_terminate):
        yield


@contextlib.contextmanager
def catching_signals():
    """Within the block, SIGINT and SIGTERM only set the flag (the previous handlers come
    back afterwards)."""
    _received["signal"] = 0
    try:
        with _handling(_handler):
            yield
    finally:
        _received["signal"] = 0


def received() -> int:
    """The signal number caught on this rank (0: none)."""
    return _received["signal"]


class Interrupted(Exception):
    """A run stopped by a signal at a step boundary (after its final checkpoint); ``results``:
    what else the interrupted summary reports (such as the runs an ensemble finished)."""

    def __init__(self, signum: int, step: int, time: float, results: dict | None = None):
        super().__init__(f"interrupted by signal {signum} after step {step} (t = {time:.6g} s)")
        self.signum = signum
        self.step = step
        self.time = time
        self.results = dict(results or {})


class Diverged(Exception):
    """A run whose state became non-finite or whose kinetic energy outgrew the work done on
    it; ``where`` names the step and the worst element."""

    def __init__(self, where: str, message: str, step: int, time: float):
        super().__init__(f"{where}: {message}")
        self.where = where
        self.message = message
        self.step = step
        self.time = time
