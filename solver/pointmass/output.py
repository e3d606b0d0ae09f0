"""Outputs of a point-mass run: VTK frames, the sliding surface and the sea as VTK surfaces,
the CoM history CSV and the CoM speed plot."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from solver.io.table import png_figure, write_rows
from solver.io.vtk import VtkSeries
from solver.pointmass.dynamics import Frame
from solver.pointmass.grid import Body
from solver.pointmass.surface import Surface

HISTORY_UNITS = {"time": "s", "com_x": "m", "com_y": "m", "com_z": "m", "com_speed": "m/s",
                 "kinetic_energy": "J", "rb_force_mean_over_weight": "-",
                 "underwater_fraction": "-"}
HISTORY_COLUMNS = tuple(HISTORY_UNITS)


LINK_TYPES = {0: "mass (vertex cell)", 1: "RB link", 2: "EP link"}
SURFACE_NODES = 101     # per side, where an analytic surface is sampled
RASTER_NODES = 401      # per side at most, where a DEM is drawn (every k-th node)


class VtkFrames:
    """Masses as vertices (velocity, mass, reaction, underwater) and links as lines
    (rb_force, ep_force, link_type 1 = RB, 2 = EP); one piece, written by the run's rank.
    :meth:`write_surfaces` adds ``<name>_terrain.pvd`` and ``<name>_sea.pvd``."""

    def __init__(self, out_dir: Path, name: str, body: Body):
        from mpi4py import MPI
        self.out_dir, self.name = out_dir, name
        self.series = VtkSeries(MPI.COMM_SELF, out_dir, name,
                                {"link_types": LINK_TYPES})
        self.lo, self.hi = np.full(2, np.inf), np.full(2, -np.inf)
        self.m = body.m
        n, n_rb, n_ep = len(body.m), len(body.rb), len(body.ep)
        self.cells = {"vertex": np.arange(n)[:, None]}
        if n_rb + n_ep:
            self.cells["line"] = np.concatenate([body.rb, body.ep])
        self.n, self.n_rb, self.n_ep = n, n_rb, n_ep
        self.link_type = np.concatenate([np.zeros(n), np.ones(n_rb), np.full(n_ep, 2.0)])

    def write(self, t: float, frame: Frame) -> None:
        self.lo = np.minimum(self.lo, frame.r3[:, :2].min(axis=0))
        self.hi = np.maximum(self.hi, frame.r3[:, :2].max(axis=0))
        zeros = np.zeros(self.n)
        rb = np.concatenate([zeros, frame.h, np.zeros(self.n_ep)])
        ep = np.concatenate([zeros, np.zeros(self.n_rb), frame.p])
        self.series.write(t, frame.r3, self.cells,
                          point_data={"velocity": frame.v3, "mass": self.m,
                                      "reaction": frame.reaction,
                                      "underwater": frame.wet.astype(np.uint8)},
                          cell_data={"rb_force": rb, "ep_force": ep,
                                     "link_type": self.link_type})

    def state(self) -> dict:
        """The frames written so far and the plan area the masses covered (a checkpoint)."""
        return {"frames": self.series.frames, "lo": self.lo.tolist(), "hi": self.hi.tolist()}

    def restore(self, state: dict) -> None:
        """Continue the series of a checkpoint (later frames of an interrupted run go)."""
        self.series.restore(state["frames"])
        self.lo, self.hi = np.array(state["lo"]), np.array(state["hi"])

    def write_surfaces(self, surface: Surface, z_sea: float) -> None:
        """The sliding surface (a DEM as it is, an analytic surface sampled over the area the
        masses covered plus half its size around it) and, with a sea, the sea surface over the
        same area: one-frame series, so ParaView shows them at every time."""
        from mpi4py import MPI
        xs, ys, z = surface_grid(surface, self.lo, self.hi)
        field = {"crs": {0: surface.crs}} if surface.crs else {}
        X, Y = np.meshgrid(xs, ys)
        points = np.column_stack([X.ravel(), Y.ravel(), z.ravel()])
        quads = _grid_quads(len(xs), len(ys))
        quads = quads[np.all(np.isfinite(points[quads, 2]), axis=1)]
        terrain = VtkSeries(MPI.COMM_SELF, self.out_dir, f"{self.name}_terrain", field)
        terrain.write(0.0, np.nan_to_num(points), {"quad": quads},
                      point_data={"elevation": np.nan_to_num(points[:, 2])})
        if np.isfinite(z_sea):
            corners = np.array([[xs[0], ys[0]], [xs[-1], ys[0]], [xs[-1], ys[-1]],
                                [xs[0], ys[-1]]])
            sea = VtkSeries(MPI.COMM_SELF, self.out_dir, f"{self.name}_sea", field)
            sea.write(0.0, np.column_stack([corners, np.full(4, z_sea)]),
                      {"quad": np.arange(4)[None, :]}, point_data={"elevation": np.full(4, z_sea)})


def surface_grid(surface: Surface, lo: np.ndarray, hi: np.ndarray):
    """Nodes ``xs``, ``ys`` and heights ``z[iy, ix]`` (NaN where the surface is undefined) of a
    drawing of the surface: a DEM's own nodes (thinned to at most RASTER_NODES per side), or an
    analytic surface sampled over the box ``lo``..``hi`` grown by half its size."""
    grid = getattr(surface, "grid", None)
    if grid is not None:
        step = max(1, -(-max(grid.z.shape) // RASTER_NODES))
        return grid.xs[::step], grid.ys[::step], grid.z[::step, ::step]
    size = np.maximum(hi - lo, 1.0)
    xs = np.linspace(lo[0] - 0.5 * size[0], hi[0] + 0.5 * size[0], SURFACE_NODES)
    ys = np.linspace(lo[1] - 0.5 * size[1], hi[1] + 0.5 * size[1], SURFACE_NODES)
    X, Y = np.meshgrid(xs, ys)
    outside = surface.outside(X, Y)
    with np.errstate(all="ignore"):
        z = surface.eval(np.where(outside, 0.0, X), np.where(outside, 0.0, Y))[0]
    return xs, ys, np.where(outside, np.nan, np.broadcast_to(z, X.shape))


def _grid_quads(nx: int, ny: int) -> np.ndarray:
    """Quads of a structured nx x ny node grid (node index iy * nx + ix)."""
    ix, iy = np.meshgrid(np.arange(nx - 1), np.arange(ny - 1))
    first = (iy * nx + ix).ravel()
    return np.column_stack([first, first + 1, first + nx + 1, first + nx])


def write_history(path: Path, rows: np.ndarray) -> None:
    """The CoM history table (one row per output frame) as CSV, units in the header."""
    write_rows(path, HISTORY_COLUMNS, HISTORY_UNITS, rows, digits=15)


def plot_speed(path: Path, histories: list[tuple[str, np.ndarray]], title: str) -> None:
    """PNG of the CoM speed against time, one curve per run."""
    with png_figure(path, figsize=(7, 4), dpi=120) as (_, ax):
        for label, rows in histories:
            ax.plot(rows[:, 0], rows[:, 4], label=label)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("CoM speed (m/s)")
        ax.set_title(title, fontsize=10)
        ax.grid(True, alpha=0.3)
        if len(histories) > 1:
            ax.legend(fontsize=8)
