"""CSV tables and PNG titles an engineer can use on their own.

Every CSV header states the unit of each column as ``name [unit]`` (``-`` for dimensionless);
:func:`column_name` strips it again for readers. Every PNG title names the case and the swept
inputs (:func:`plot_title`).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any, Iterable

import numpy as np


def header(columns: Iterable[str], units: dict[str, str]) -> list[str]:
    """``["time [s]", "com_x [m]", ...]`` for the given columns."""
    return [f"{c} [{units[c]}]" for c in columns]


def column_name(label: str) -> str:
    """``"time [s]"`` -> ``"time"``."""
    return label.split(" [", 1)[0]


def write_rows(path: Path, columns: list[str], units: dict[str, str],
               rows: Iterable[Iterable[Any]]) -> None:
    """A CSV with a unit-stating header; floats to 10 significant digits."""
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(header(columns, units))
        for row in rows:
            writer.writerow([f"{v:.10g}" if isinstance(v, (float, np.floating)) else v
                             for v in row])


def read_rows(path: Path) -> list[dict[str, str]]:
    """The rows of a CSV written by :func:`write_rows`, keyed by column name (no unit)."""
    with open(path, newline="") as fh:
        return [{column_name(k): v for k, v in row.items()} for row in csv.DictReader(fh)]


def read_columns(path: Path) -> dict[str, np.ndarray]:
    """The numeric columns of a CSV written by :func:`write_rows`, keyed by column name."""
    with open(path, newline="") as fh:
        names = [column_name(k) for k in next(csv.reader(fh))]
    data = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    return {name: data[:, i] for i, name in enumerate(names)}


def plot_title(case: str, swept: dict[str, Any] | list[str] | None = None,
               fixed: dict[str, Any] | None = None) -> str:
    """``"case: key = value, ..."`` for one run, ``"case: swept a, b"`` for a sweep over several
    runs, followed by ``fixed`` inputs in parentheses."""
    title = case
    if isinstance(swept, dict) and swept:
        title += ": " + ", ".join(f"{k} = {_short(v)}" for k, v in swept.items())
    elif swept:
        title += f": swept {', '.join(swept)}"
    if fixed:
        title += " (" + ", ".join(f"{k} = {_short(v)}" for k, v in fixed.items()) + ")"
    return title


def _short(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)
