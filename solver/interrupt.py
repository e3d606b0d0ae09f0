"""Clean interruption: SIGINT and SIGTERM only set a flag, which the time loops read at step
boundaries (reduced over all ranks with the step's sums, so every rank stops after the same
step and none is left waiting in a collective). Exit code 128 + the signal number."""

from __future__ import annotations

import contextlib
import signal

_received = {"signal": 0}


def _handler(signum, _frame) -> None:
    _received["signal"] = signum


@contextlib.contextmanager
def catching_signals():
    """Within the block, SIGINT and SIGTERM only set the flag (the previous handlers come
    back afterwards)."""
    _received["signal"] = 0
    previous = {s: signal.signal(s, _handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
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
