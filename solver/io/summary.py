"""``summary.json``: the contract every run fulfils (design.md section 3)."""

from __future__ import annotations

import json
import math
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


def write_summary(out_dir: Path, case: str, module: str, ranks: int, wall_s: float, steps: int,
                  results: dict[str, Any]) -> Path:
    """Write ``out_dir/summary.json`` atomically and return its path."""
    summary = {"case": case, "module": module, "ranks": ranks, "wall_s": wall_s,
               "steps": int(steps), "results": _plain(results)}
    path = Path(out_dir) / "summary.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(summary, indent=2) + "\n")
    tmp.replace(path)
    return path
