"""``summary.json``: the contract every run fulfils, and how the run was made.

Keys: ``case, module, ranks, wall_s, steps`` and ``results`` (the case's named results), plus
``status`` (``done``, ``interrupted`` or ``diverged``), ``started`` (UTC, ISO 8601),
``solver_version``, ``git_commit`` (of the code the run started with; ``-dirty`` when
tracked files differ from it; outside a git checkout, as a container image is, the commit
recorded in ``solver/build_commit.txt`` when the image was built, else ``None``),
``converged`` (false when a stage ended without converging) and ``units`` (the unit of each
result present).
"""

from __future__ import annotations

import json
import math
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from solver.version import __version__


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
    return __version__


PACKAGE_DIR = Path(__file__).resolve().parents[1]
"""The ``solver`` package folder."""
BUILD_COMMIT_FILE = "build_commit.txt"
"""In ``PACKAGE_DIR``: the commit an image was built from (the Dockerfile's ``GIT_COMMIT``)."""


def git_commit(package_dir: Path = PACKAGE_DIR) -> str | None:
    """The commit of the checkout ``package_dir`` lies in; outside a checkout (or without
    git), the commit its ``build_commit.txt`` records; None without either."""
    return _checkout_commit(package_dir) or _recorded_commit(package_dir)


def _checkout_commit(package_dir: Path) -> str | None:
    try:
        head = subprocess.run(["git", "-C", str(package_dir), "rev-parse", "HEAD"],
                              capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(package_dir), "status", "--porcelain",
                                "--untracked-files=no"], capture_output=True, text=True,
                               timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def _recorded_commit(package_dir: Path) -> str | None:
    try:
        recorded = (Path(package_dir) / BUILD_COMMIT_FILE).read_text().strip()
    except OSError:
        return None
    return recorded or None


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
