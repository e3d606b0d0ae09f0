"""Parameter sweeps: one validated Config per run.

Two forms, one per case: the dotted-key lists of :mod:`solver.sweep` (``[sweep]`` with
``"grid.nx" = [3, 4]``: the Cartesian product), or ``keys`` with ``runs``, one row of values per
run (for runs that set several fields together).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from solver import sweep
from solver.case import Case
from solver.pointmass.config import Config


@dataclass
class RunSpec:
    index: int
    label: str
    params: dict[str, Any]
    config: Config


def points(cfg: Config) -> list[dict[str, Any]]:
    """The swept values of each run (none: the case is one run)."""
    if cfg.sweep.keys:
        return [dict(zip(cfg.sweep.keys, row)) for row in cfg.sweep.runs]
    return sweep.product(cfg.sweep.fields) if cfg.sweep.fields else []


def expand(case: Case) -> list[RunSpec]:
    """The runs of a case: itself, or one per sweep point with the point's values set."""
    cfg = case.config
    if not (found := points(cfg)):
        return [RunSpec(0, case.name, {}, cfg)]
    rows = bool(cfg.sweep.keys)
    return [RunSpec(i, sweep.label(p), p,
                    sweep.configure(cfg, p, str(case.path), case.path.parent,
                                    f"sweep.runs[{i}]" if rows else "sweep"))
            for i, p in enumerate(found)]
