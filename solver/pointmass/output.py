"""Outputs of a point-mass run: VTK frames, the CoM history CSV and the CoM speed plot."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from solver.io.table import header
from solver.io.vtk import VtkSeries
from solver.pointmass.dynamics import Frame
from solver.pointmass.grid import Body

HISTORY_UNITS = {"time": "s", "com_x": "m", "com_y": "m", "com_z": "m", "com_speed": "m/s",
                 "kinetic_energy": "J", "rb_force_mean_over_weight": "-",
                 "underwater_fraction": "-"}
HISTORY_COLUMNS = tuple(HISTORY_UNITS)


class VtkFrames:
    """Masses as vertices (velocity, mass, reaction, underwater) and links as lines
    (rb_force, ep_force, link_type 1 = RB, 2 = EP); one piece, written by the run's rank."""

    def __init__(self, out_dir: Path, name: str, body: Body):
        from mpi4py import MPI
        self.series = VtkSeries(MPI.COMM_SELF, out_dir, name)
        self.m = body.m
        n, n_rb, n_ep = len(body.m), len(body.rb), len(body.ep)
        self.cells = {"vertex": np.arange(n)[:, None]}
        if n_rb + n_ep:
            self.cells["line"] = np.concatenate([body.rb, body.ep])
        self.n, self.n_rb, self.n_ep = n, n_rb, n_ep
        self.link_type = np.concatenate([np.zeros(n), np.ones(n_rb), np.full(n_ep, 2.0)])

    def write(self, t: float, frame: Frame) -> None:
        zeros = np.zeros(self.n)
        rb = np.concatenate([zeros, frame.h, np.zeros(self.n_ep)])
        ep = np.concatenate([zeros, np.zeros(self.n_rb), frame.p])
        self.series.write(t, frame.r3, self.cells,
                          point_data={"velocity": frame.v3, "mass": self.m,
                                      "reaction": frame.reaction,
                                      "underwater": frame.wet.astype(np.uint8)},
                          cell_data={"rb_force": rb, "ep_force": ep,
                                     "link_type": self.link_type})


def write_history(path: Path, rows: np.ndarray) -> None:
    """The CoM history table (one row per output frame) as CSV, units in the header."""
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savetxt(path, rows, delimiter=",", header=",".join(header(HISTORY_COLUMNS, HISTORY_UNITS)),
               comments="", fmt="%.15g")


def plot_speed(path: Path, histories: list[tuple[str, np.ndarray]], title: str) -> None:
    """PNG of the CoM speed against time, one curve per run."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4))
    for label, rows in histories:
        ax.plot(rows[:, 0], rows[:, 4], label=label)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("CoM speed (m/s)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, alpha=0.3)
    if len(histories) > 1:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
