"""Progress lines for long runs, printed by rank 0 only, at most every few seconds."""

from __future__ import annotations

import sys
import time


class Progress:
    """``update(done, **metrics)`` prints ``label done/total  metric=...  ETA ...`` to stderr.

    ``total`` is in the same unit as ``done`` (steps or simulated seconds). Nothing is printed
    on ranks other than 0 or when ``quiet`` is set; ``shown`` (the same on every rank) says
    whether lines are printed at all, for metrics that take collective work to make.
    ``done`` starts at ``start_at`` (a restart's point), and the ETA goes by the pace since;
    it shows as ``-`` until ``ETA_AFTER_S`` of work have been timed. A metric that is not
    defined yet is passed as None and shows as ``-``.
    """

    #: Seconds between two lines, unless given.
    EVERY_S = 2.0
    #: Seconds of timed work before a line gives an ETA.
    ETA_AFTER_S = 3.0

    def __init__(self, comm, total: float, label: str = "step", quiet: bool = False,
                 every_s: float | None = None, stream=None, start_at: float = 0.0):
        self.total = float(total)
        self.start_at = float(start_at)
        self.label = label
        self.shown = not quiet
        self.active = self.shown and comm.rank == 0
        self.every_s = self.EVERY_S if every_s is None else every_s
        self.stream = stream or sys.stderr
        self.start = time.perf_counter()
        self.last = -float("inf")

    def update(self, done: float, force: bool = False, **metrics) -> None:
        if not self.active:
            return
        now = time.perf_counter()
        if not force and now - self.last < self.every_s:
            return
        self.last = now
        elapsed = now - self.start
        parts = [f"{self.label} {done:.6g}/{self.total:.6g}"]
        parts += [f"{k}={_shown(v)}" for k, v in metrics.items()]
        parts.append(f"elapsed {elapsed:.1f} s  ETA {self._eta(done, elapsed)}")
        print("  ".join(parts), file=self.stream, flush=True)

    def _eta(self, done: float, elapsed: float) -> str:
        """The time left at the pace since the start, ``-`` before ``ETA_AFTER_S`` of it
        (or with no work done yet)."""
        left = max(self.total - done, 0.0)
        if left == 0.0:
            return "0.0 s"
        pace = (done - self.start_at) / elapsed if elapsed > 0 else 0.0
        if elapsed < self.ETA_AFTER_S or pace <= 0:
            return "-"
        return f"{left / pace:.1f} s"


def _shown(value) -> str:
    """A metric as the line shows it: floats to 4 digits, None (not defined yet) as ``-``."""
    if value is None:
        return "-"
    return f"{value:.4g}" if isinstance(value, float) else str(value)
