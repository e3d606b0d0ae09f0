"""``summary.json``: the contract every run fulfils, and how the run was made.

Keys: ``case, module, ranks, wall_s, steps`` and ``results`` (the case's named results), plus
``status`` (``done``, ``interrupted`` or ``diverged``), ``started`` (UTC, ISO 8601),
``solver_version``, ``git_commit`` (of the code the run started with; ``None`` outside a git
checkout; ``-dirty`` when tracked files differ from it), ``converged`` (false when a stage
ended without converging) and ``units`` (the unit of each result present).
"""

from __future__ import annotations

import json
import math
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np


def _plain(value: Any) -> Any:
    """numpy scalars/arrays -> JSON types; NaN/inf -> null (JSON has no NaN)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def solver_version() -> str:
    from solver import __version__
    return __version__


def git_commit() -> str | None:
    """The commit of the checkout the solver package runs from, if it is one."""
    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(here), "status", "--porcelain",
                                "--untracked-files=no"], capture_output=True, text=True,
                               timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def now_utc() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def units_of(results: dict[str, Any], table: dict[str, Any]) -> dict[str, Any]:
    """The entries of ``table`` (result key -> unit, or key -> table of sub-keys) whose keys
    are in ``results``."""
    return {k: table[k] for k in results if k in table}


def write_summary(out_dir: Path, case: str, module: str, ranks: int, wall_s: float, steps: int,
                  results: dict[str, Any], **run_info: Any) -> Path:
    """Write ``out_dir/summary.json`` atomically and return its path. ``run_info``: the
    status and provenance keys (``status``, ``started``, ``solver_version``, ``git_commit``,
    ``converged``, ``units``), written after ``steps``."""
    summary = {"case": case, "module": module, "ranks": ranks, "wall_s": wall_s,
               "steps": int(steps), **_plain(run_info), "results": _plain(results)}
    path = Path(out_dir) / "summary.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(summary, indent=2) + "\n")
    tmp.replace(path)
    return path
