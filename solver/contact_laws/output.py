"""Files of the tangential restitution map: CSV table and PNG plot (matplotlib, Agg)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from solver.io.table import png_figure, read_columns, write_rows

COLUMNS = ("kt_kn", "gt_gn", "e_t", "switches", "starts_sliding")


def write_csv(path: Path, kt_kn: np.ndarray, gt_gn: np.ndarray, e_t: np.ndarray,
              switches: np.ndarray, starts: np.ndarray) -> None:
    """One row per map point (all arrays (n,); every column dimensionless, as the header
    states); e_t to 12 significant digits."""
    write_rows(path, COLUMNS, dict.fromkeys(COLUMNS, "-"),
               zip(kt_kn, gt_gn, e_t, switches.astype(int), starts.astype(int)),
               digits={"e_t": 12})


def read_csv(path: Path) -> dict[str, np.ndarray]:
    """The columns of a map written by :func:`write_csv`."""
    return read_columns(path)


def write_plot(path: Path, kt: np.ndarray, gt: np.ndarray, e_t: np.ndarray,
               switches: np.ndarray, log_kt: bool, title: str) -> None:
    """Two panels over (g_t/g_n, k_t/k_n): e_t and the number of regime switches; ``e_t`` and
    ``switches`` are (len(kt), len(gt))."""
    with png_figure(path, 1, 2, figsize=(11, 4.5), dpi=120, tight=False,
                    constrained_layout=True) as (fig, axes):
        mesh = axes[0].pcolormesh(gt, kt, e_t, cmap="RdBu_r", vmin=-1.0, vmax=1.0,
                                  shading="auto")
        fig.colorbar(mesh, ax=axes[0], label="e_t")
        levels = np.arange(-0.5, switches.max() + 1.0)
        mesh = axes[1].pcolormesh(gt, kt, switches, cmap="viridis", shading="auto",
                                  vmin=levels[0], vmax=levels[-1])
        fig.colorbar(mesh, ax=axes[1], label="regime switches",
                     ticks=np.arange(switches.max() + 1))
        for ax, label in zip(axes, ("coefficient of tangential restitution",
                                    "stick/slip switches")):
            ax.set_xlabel("g_t / g_n")
            ax.set_ylabel("k_t / k_n")
            ax.set_title(label)
            if log_kt:
                ax.set_yscale("log")
        fig.suptitle(title)
