"""Plan-view maps of a landslide deposit, and the tables and plots of a landslide run.

A map is a grid of square cells over the horizontal plane (x east, y north). Every element
is sampled at n^3 points of a regular grid in its reference cube, mapped through its
trilinear shape functions, each point carrying V_e / n^3 of its volume, so

* thickness [m] = sum of the volume of the points in a cell / cell area (the depth of the
  material column there, voids between blocks excluded);
* travel [m] = volume-weighted mean, over the points in a cell, of the horizontal travel of
  their element's centroid.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from solver.exact_sum import exact_grid, on_grid
from solver.io.table import png_figure, write_rows
from solver.mesh.reference_hex import element_volumes, shape_values

HISTORY_COLUMNS = ["time", "com_x", "com_y", "com_z", "com_speed", "kinetic_energy",
                   "broken_fraction"]
HISTORY_UNITS = {"time": "s", "com_x": "m", "com_y": "m", "com_z": "m", "com_speed": "m/s",
                 "kinetic_energy": "J", "broken_fraction": "-"}
MAP_COLUMNS = ["x", "y", "thickness", "travel", "initial_thickness"]
MAP_UNITS = {"x": "m", "y": "m", "thickness": "m", "travel": "m", "initial_thickness": "m"}


@dataclass
class PlanGrid:
    """Cells of edge ``cell`` [m] from the corner ``origin`` (x, y), ``shape`` = (ny, nx)."""

    origin: np.ndarray
    cell: float
    shape: tuple[int, int]

    @classmethod
    def covering(cls, lo: np.ndarray, hi: np.ndarray, cell: float) -> PlanGrid:
        """The grid covering the box [lo, hi] (x, y) with a one-cell margin."""
        origin = np.floor(np.asarray(lo) / cell) * cell - cell
        n = np.ceil((np.asarray(hi) - origin) / cell).astype(int) + 1
        return cls(origin=origin, cell=float(cell), shape=(int(n[1]), int(n[0])))

    def centres(self) -> tuple[np.ndarray, np.ndarray]:
        ny, nx = self.shape
        return (self.origin[0] + self.cell * (np.arange(nx) + 0.5),
                self.origin[1] + self.cell * (np.arange(ny) + 0.5))

    def extent(self) -> list[float]:
        ny, nx = self.shape
        return [self.origin[0], self.origin[0] + nx * self.cell,
                self.origin[1], self.origin[1] + ny * self.cell]


def sample_points(x_el: np.ndarray, n: int) -> np.ndarray:
    """(n_el, n^3, 3) points of a regular n x n x n grid in each element's reference cube
    (cell centres), mapped by the trilinear shape functions of its corners x_el (n_el, 8, 3)."""
    ref = -1.0 + (2.0 * np.arange(n) + 1.0) / n
    xi = np.stack(np.meshgrid(ref, ref, ref, indexing="ij"), axis=-1).reshape(-1, 3)
    return np.einsum("pa,eak->epk", shape_values(xi), x_el)


def rasterise(grid: PlanGrid, x_el: np.ndarray, point_weights: np.ndarray, n: int) -> np.ndarray:
    """Sum over each element's n^3 sample points of its point_weights_e, per cell (ny, nx)."""
    ny, nx = grid.shape
    if not len(x_el):
        return np.zeros(grid.shape)
    points = sample_points(x_el, n)
    i = np.floor((points[..., 0] - grid.origin[0]) / grid.cell).astype(np.int64)
    j = np.floor((points[..., 1] - grid.origin[1]) / grid.cell).astype(np.int64)
    w = np.broadcast_to(point_weights[:, None], i.shape)
    inside = (i >= 0) & (i < nx) & (j >= 0) & (j < ny)
    return np.bincount((j * nx + i)[inside], weights=w[inside],
                       minlength=nx * ny).reshape(grid.shape)


def deposit_sums(comm, grid: PlanGrid, x_el: np.ndarray, x0_el: np.ndarray,
                 n: int) -> np.ndarray:
    """(3, ny, nx) per-cell sums of this rank's elements: final volume, final volume times
    horizontal centroid travel, initial volume [m3, m4, m3]. Each element's share is rounded
    to a grid on which every cell's sum over all ranks is exact (solver.exact_sum.exact_grid,
    a relative change of about the number of sample points times 1e-16), so that the map is
    the same on any partition (collective)."""
    travel = np.linalg.norm((x_el - x0_el).mean(axis=1)[:, :2], axis=1)
    volume = element_volumes(x_el) if len(x_el) else np.zeros(0)
    volume0 = element_volumes(x0_el) if len(x0_el) else np.zeros(0)
    shares = []
    for x, weights in ((x_el, volume), (x_el, volume * travel), (x0_el, volume0)):
        point = weights / n ** 3
        q = exact_grid(comm, np.abs(point).max(initial=0.0), len(point) * n ** 3)
        shares.append(rasterise(grid, x, on_grid(point, q), n))
    return np.stack(shares)


def maps_from_sums(grid: PlanGrid, sums: np.ndarray) -> dict[str, np.ndarray]:
    """Thickness, travel and initial thickness (ny, nx) [m] from :func:`deposit_sums` totals;
    travel is NaN where there is no material."""
    area = grid.cell ** 2
    with np.errstate(invalid="ignore", divide="ignore"):
        travel = np.where(sums[0] > 0, sums[1] / sums[0], np.nan)
    return {"thickness": sums[0] / area, "travel": travel, "initial_thickness": sums[2] / area}


def write_map_table(path: Path, grid: PlanGrid, maps: dict[str, np.ndarray]) -> None:
    """The cells holding material before or after, one row each."""
    xs, ys = grid.centres()
    x, y = np.meshgrid(xs, ys)
    full = (maps["thickness"] > 0) | (maps["initial_thickness"] > 0)
    columns = [x, y, maps["thickness"], np.nan_to_num(maps["travel"]),
               maps["initial_thickness"]]
    write_rows(path, MAP_COLUMNS, MAP_UNITS, zip(*(c[full] for c in columns)))


def plot_map(path: Path, grid: PlanGrid, maps: dict[str, np.ndarray], title: str) -> None:
    """Two panels: final thickness and travel distance, with the initial footprint."""
    thickness = np.ma.masked_where(maps["thickness"] <= 0, maps["thickness"])
    travel = np.ma.masked_invalid(maps["travel"])
    xs, ys = grid.centres()
    with png_figure(path, 1, 2, figsize=(12, 5.6), sharey=True) as (fig, axes):
        for ax, data, label, cmap in ((axes[0], thickness, "deposit thickness [m]", "viridis"),
                                      (axes[1], travel, "travel distance [m]", "magma")):
            image = ax.imshow(data, origin="lower", extent=grid.extent(), cmap=cmap,
                              interpolation="nearest")
            if np.any(maps["initial_thickness"] > 0):
                ax.contour(xs, ys, (maps["initial_thickness"] > 0).astype(float), levels=[0.5],
                           colors="k", linewidths=1.0, linestyles="dashed")
            fig.colorbar(image, ax=ax, shrink=0.85, label=label)
            ax.set_xlabel("x (east) [m]")
            ax.set_aspect("equal")
            ax.grid(alpha=0.2)
        axes[0].set_ylabel("y (north) [m]")
        fig.suptitle(f"{title}; dashed: initial footprint", fontsize=10)


def write_history(path: Path, rows: list[list[float]]) -> None:
    write_rows(path, HISTORY_COLUMNS, HISTORY_UNITS, rows)


def plot_history(path: Path, rows: list[list[float]], title: str) -> None:
    """Centre-of-mass speed, travel and elevation, and the broken fraction against time."""
    data = np.asarray(rows, dtype=float).reshape(-1, len(HISTORY_COLUMNS))
    t = data[:, 0]
    travel = np.linalg.norm(data[:, 1:3] - data[:1, 1:3], axis=1)
    with png_figure(path, 2, 2, figsize=(10, 7), sharex=True) as (fig, axes):
        panels = ((axes[0, 0], data[:, 4], "centre-of-mass speed [m/s]"),
                  (axes[0, 1], travel, "centre-of-mass horizontal travel [m]"),
                  (axes[1, 0], data[:, 3], "centre-of-mass elevation [m]"),
                  (axes[1, 1], data[:, 6], "broken fraction of inner interfaces [-]"))
        for ax, y, label in panels:
            ax.plot(t, y)
            ax.set_title(label, fontsize=9)
            ax.grid(alpha=0.3)
        for ax in axes[1]:
            ax.set_xlabel("t [s]")
        fig.suptitle(title, fontsize=10)
