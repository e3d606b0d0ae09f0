"""What the CLI hands to a module's ``run`` and what it gets back."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from solver.io.progress import Progress


@dataclass
class RunContext:
    """Communicator, output folder and reporting for one run.

    ``comm`` is an mpi4py communicator owned by the run (a duplicate of the caller's);
    every rank gets the same ``out_dir``. ``progress(total, label)`` makes a rank-0 progress
    reporter that honours ``--quiet``. Checkpoints go into ``out_dir`` every
    ``checkpoint_steps`` steps and/or ``checkpoint_seconds`` of wall time (0: never);
    ``restart`` continues from the checkpoint in ``out_dir``. ``rebalance_above`` (cdem, 0:
    never): after a checkpoint at which the busiest rank's work since the last one was at
    least this many times the mean, the run goes on from that checkpoint partitioned by the
    work, as a restart does.
    """

    comm: Any
    out_dir: Path
    quiet: bool = False
    checkpoint_steps: int = 0
    checkpoint_seconds: float = 0.0
    restart: bool = False
    rebalance_above: float = 0.0

    def progress(self, total: float, label: str = "step", start_at: float = 0.0) -> Progress:
        return Progress(self.comm, total, label=label, quiet=self.quiet, start_at=start_at)


@dataclass
class RunOutput:
    """``steps``: time steps (or integrations) done; ``results``: the case's named results
    (JSON-serialisable scalars, lists or small dicts) that go into ``summary.json``;
    ``unconverged``: one line per stage that ended without converging (the CLI warns and
    writes ``"converged": false``); ``timing``: where the ranks' time went (on rank 0, for
    the summary's ``timing``; None where the module does not say)."""

    steps: int
    results: dict[str, Any] = field(default_factory=dict)
    unconverged: list[str] = field(default_factory=list)
    timing: dict[str, Any] | None = None
