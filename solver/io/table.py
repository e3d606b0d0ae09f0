"""CSV tables and PNG plots an engineer can use on their own.

Every CSV header states the unit of each column as ``name [unit]`` (``-`` for dimensionless);
:func:`column_name` strips it again for readers. Every PNG is made by :func:`png_figure`
(matplotlib, Agg backend: no display needed) and titled with the case and the swept inputs
(:func:`plot_title`).
"""

from __future__ import annotations

import csv
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator

import numpy as np


def header(columns: Iterable[str], units: dict[str, str]) -> list[str]:
    """``["time [s]", "com_x [m]", ...]`` for the given columns."""
    return [f"{c} [{units[c]}]" for c in columns]


def column_name(label: str) -> str:
    """``"time [s]"`` -> ``"time"``."""
    return label.split(" [", 1)[0]


def write_rows(path: Path, columns: Iterable[str], units: dict[str, str] | None,
               rows: Iterable[Any], digits: int | dict[str, int] = 10) -> None:
    """The one CSV writer: a header stating each column's unit (plain names when ``units`` is
    None), then one line per row. A row is a sequence in column order or a dict (a missing key
    or None is an empty cell); floats get ``digits`` significant digits (an int for all
    columns, or a dict per column with 10 for the others). The folder is made if missing."""
    columns = list(columns)
    widths = ([digits] * len(columns) if isinstance(digits, int)
              else [digits.get(c, 10) for c in columns])
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(columns if units is None else header(columns, units))
        for row in rows:
            values = [row.get(c) for c in columns] if isinstance(row, dict) else row
            writer.writerow(["" if v is None else
                             f"{v:.{n}g}" if isinstance(v, (float, np.floating)) else v
                             for v, n in zip(values, widths)])


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


def read_units(path: Path) -> dict[str, str]:
    """Column name -> unit of a CSV written by :func:`write_rows` (no unit: ``""``)."""
    with open(path, newline="") as fh:
        labels = next(csv.reader(fh), [])
    return {column_name(k): k[len(column_name(k)) + 2:-1] if k.endswith("]") else ""
            for k in labels}


def read_table(path: Path) -> Any:
    """A CSV written by :func:`write_rows`, its columns named without their units: a pandas
    DataFrame where pandas is installed, else a numpy record array (a column of numbers as
    int64 or float64, an empty cell as NaN, any other column as strings)."""
    try:
        import pandas
    except ImportError:
        pandas = None
    if pandas is not None:
        frame = pandas.read_csv(path)
        return frame.rename(columns=column_name)
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    names = [column_name(k) for k in rows[0]] if rows else []
    columns = [_typed([row[i] if i < len(row) else "" for row in rows[1:]]) for i in
               range(len(names))]
    return np.rec.fromarrays(columns, names=names) if names else np.recarray(0, dtype=[])


def _typed(cells: list[str]) -> np.ndarray:
    """One CSV column as int64, float64 (empty cells NaN) or, failing both, strings."""
    try:
        return np.array([int(c) for c in cells], dtype=np.int64)
    except ValueError:
        pass
    try:
        return np.array([float(c) if c else np.nan for c in cells], dtype=np.float64)
    except ValueError:
        return np.array(cells, dtype=str)


@contextmanager
def png_figure(path: Path, nrows: int = 1, ncols: int = 1, *,
               figsize: tuple[float, float] = (6.4, 4.4), dpi: int = 110, tight: bool = True,
               **subplots: Any) -> Iterator[tuple[Any, Any]]:
    """The one PNG writer: ``with png_figure(path) as (fig, ax): ax.plot(...)`` draws on a new
    figure of ``nrows`` x ``ncols`` axes (``subplots``: further arguments of
    ``pyplot.subplots``, e.g. ``sharex``); on leaving the block the layout is tightened (unless
    ``tight`` is false), the PNG written at ``dpi`` (its folder made if missing) and the figure
    closed, also when drawing fails."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(nrows, ncols, figsize=figsize, **subplots)
    try:
        yield fig, axes
        if tight:
            fig.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=dpi)
    finally:
        plt.close(fig)


def plot_rows(path: Path, rows: list[dict], x: str, y: str, groups: Iterable[str] = (),
              title: str = "", labels: dict[str, str] | None = None) -> None:
    """A PNG of the column ``y`` of ``rows`` against ``x``: one curve (points in the order of
    x) per combination of the values of the ``groups`` columns, labelled with them; ``labels``
    maps a column to its axis label (default: its name). A missing value is left out."""
    labels = labels or {}
    groups = list(groups)
    curves: dict[tuple, list[dict]] = {}
    for row in rows:
        curves.setdefault(tuple(row[k] for k in groups), []).append(row)
    with png_figure(path) as (_, ax):
        for key, members in curves.items():
            members = sorted(members, key=lambda r: r[x])
            label = ", ".join(f"{labels.get(k, k).split(' ')[0]}={number_text(v)}"
                              for k, v in zip(groups, key))
            ax.plot([r[x] for r in members], [_value(r.get(y)) for r in members], "o-", ms=3,
                    label=label or None)
        ax.set_xlabel(labels.get(x, x))
        ax.set_ylabel(labels.get(y, y))
        ax.set_title(title, fontsize=9)
        ax.grid(alpha=0.3)
        if groups:
            ax.legend(fontsize=7)


def number_text(value: Any) -> str:
    """A number as ``%g``, anything else as it is."""
    return f"{value:g}" if isinstance(value, (int, float)) else str(value)


def _value(value: Any) -> Any:
    return np.nan if value is None else value


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
