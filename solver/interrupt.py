"""Clean interruption: SIGINT and SIGTERM only set a flag, which the time loops read at step
boundaries (reduced over all ranks with the step's sums, so every rank stops after the same
step and none is left waiting in a collective). Exit code 128 + the signal number."""

from __future__ import annotations

import signal

_received = {"signal": 0}


def _handler(signum, _frame) -> None:
    _received["signal"] = signum


def install() -> None:
    """Catch SIGINT and SIGTERM for the rest of the run."""
    signal.signal(signal.SIGINT, _handler)
    signal.signal(signal.SIGTERM, _handler)


def received() -> int:
    """The signal number caught on this rank (0: none)."""
    return _received["signal"]


class Interrupted(Exception):
    """A run stopped by a signal at a step boundary (after its final checkpoint)."""

    def __init__(self, signum: int, step: int, time: float):
        super().__init__(f"interrupted by signal {signum} after step {step} (t = {time:.6g} s)")
        self.signum = signum
        self.step = step
        self.time = time


class Diverged(Exception):
    """A run whose state became non-finite or whose kinetic energy outgrew the work done on
    it; ``where`` names the step and the worst element."""

    def __init__(self, where: str, message: str, step: int, time: float):
        super().__init__(f"{where}: {message}")
        self.where = where
        self.message = message
        self.step = step
        self.time = time
