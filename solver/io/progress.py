"""Progress lines for long runs, printed by rank 0 only, at most every few seconds."""

from __future__ import annotations

import sys
import time


class Progress:
    """``update(done, **metrics)`` prints ``label done/total  metric=...  ETA ...`` to stderr.

    ``total`` is in the same unit as ``done`` (steps or simulated seconds). Nothing is printed
    on ranks other than 0 or when ``quiet`` is set; ``shown`` (the same on every rank) says
    whether lines are printed at all, for metrics that take collective work to make.
    ``done`` starts at ``start_at`` (a restart's point), and the ETA goes by the pace since.
    """

    #: Seconds between two lines, unless given.
    EVERY_S = 2.0

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
        pace = (done - self.start_at) / elapsed if elapsed > 0 else 0.0
        left = max(self.total - done, 0.0)
        eta = left / pace if pace > 0 else (0.0 if left == 0.0 else float("nan"))
        parts = [f"{self.label} {done:.6g}/{self.total:.6g}"]
        parts += [f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                  for k, v in metrics.items()]
        parts.append(f"elapsed {elapsed:.1f} s  ETA {eta:.1f} s")
        print("  ".join(parts), file=self.stream, flush=True)
