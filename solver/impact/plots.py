"""PNG plots of impact histories and sweep tables (matplotlib, Agg backend)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from solver.impact.restitution import rotational_ratio
from solver.impact.sweeps import INPUTS, UNITS
from solver.io.table import plot_rows, plot_title, png_figure

LABELS = {"aspect_ratio": "A_r", "theta_0": "theta_0 [deg]", "theta_in": "theta_in [deg]",
          "omega_0": "omega_0 [deg/s]", "max_penetration": "max sinking u_D [m]",
          "max_displacement": "max u_n [m]", "max_force": "max normal force N [N]",
          "max_moment": "max |M| [N m]", "rotation": "rotation change [rad]",
          "duration": "impact duration [s]", "rot_ratio_max": "max R_r [-]"}


def _with_unit(key: str, value: float) -> str:
    return f"{value:g}" + ("" if UNITS[key] == "-" else f" {UNITS[key]}")


def inputs_title(name: str, inputs: tuple[float, ...]) -> str:
    """The title of a single impact: the case and its four inputs with units."""
    return plot_title(name, {k: _with_unit(k, v) for k, v in zip(INPUTS, inputs)})


def plot_sweep(out_dir: Path, name: str, rows: list[dict], x: str, columns: list[str],
               inputs: tuple[str, ...] = INPUTS) -> list:
    """One PNG per column: column vs ``x``, one curve per combination of the other ``inputs``
    (the four impact inputs and any dotted sweep field)."""
    others = [k for k in inputs if k != x and len({r[k] for r in rows}) > 1]
    title = plot_title(name, [k for k in inputs if len({r[k] for r in rows}) > 1],
                       {k: _with_unit(k, rows[0][k]) for k in INPUTS
                        if len({r[k] for r in rows}) == 1})
    paths = []
    for column in columns:
        path = out_dir / f"{name}_{column}.png"
        plot_rows(path, rows, x, column, others, title, LABELS)
        paths.append(path)
    return paths


def plot_histories(out_dir: Path, name: str, labels: list[str], histories: list,
                   title: str) -> Path:
    """u_n(t), N(t), rotation(t) and R_r(t) of several impacts (Dattola et al. 2023, Figs. 4
    and 6)."""
    path = out_dir / f"{name}_histories.png"
    with png_figure(path, 2, 2, figsize=(10, 7)) as (fig, axes):
        for label, (t, y, d) in zip(labels, histories):
            ms = 1e3 * np.asarray(t)
            axes[0, 0].plot(ms, y[0], label=label)
            axes[0, 1].plot(ms, d["N"] / 1e3, label=label)
            axes[1, 0].plot(ms, np.degrees(y[2]), label=label)
            axes[1, 1].plot(ms, rotational_ratio(d["E_kr"], d["E_kt"]), label=label)
        titles = ("normal displacement u_n [m]", "normal force N [kN]", "rotation change [deg]",
                  "rotational energy ratio R_r [-]")
        for ax, title in zip(axes.flat, titles):
            ax.set_title(title, fontsize=9)
            ax.set_xlabel("t [ms]")
            ax.grid(alpha=0.3)
        axes[0, 0].legend(fontsize=7)
        fig.suptitle(title, fontsize=10)
    return path
