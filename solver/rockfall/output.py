"""Files of a rockfall ensemble: CSV tables, PNG plots (matplotlib, Agg) and VTK for ParaView.

Written by rank 0 into the run folder (``<name>`` is the case name):

* ``<name>_blocks.csv`` one row per block (varied inputs, end, stop point, runout, ...);
  ``<name>_impacts.csv`` one row per impact (inputs of the impact module and its e_n, e_t,
  e_energy, peak force, penetration); ``<name>_jumps.csv`` one row per ballistic jump;
  ``<name>_barriers.csv`` and ``<name>_envelopes.csv`` the envelopes at the barriers and at
  stations every ``envelope_spacing``; ``trajectories/block_NNNN.csv`` the samples of each block
  (:data:`solver.rockfall.trajectory.COLUMNS`, SI units, phase 0 flight, 1 impact, 2 rolling,
  3 sliding, 4 at rest).
* ``<name>_trajectories.png``, ``<name>_bounce_heights.png`` (histogram and exponential fit),
  ``<name>_restitution.png`` (e_n and e_t histograms and normal fits), ``<name>_envelopes.png``,
  ``<name>_runout.png``.
* ``<name>.pvd``: the blocks as points every ``vtk_dt`` (velocity, omega, axis, semi_axes for
  glyphs); ``<name>_trajectories.pvd``: every path as a polyline of line cells;
  ``<name>_terrain.pvd``: the terrain surface (profiles extruded over ``terrain.width``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from solver.io.table import png_figure, write_rows
from solver.io.vtk import VtkSeries
from solver.rockfall.trajectory import COLUMNS

IMPACT_COLUMNS = ("block", "impact", "t", "x", "y", "z", "ground", "speed_in", "theta_in",
                  "theta_0", "omega_in", "slope", "e_n", "e_t", "e_energy", "e_contact",
                  "max_force", "max_penetration", "duration", "end", "outcome", "energy_in",
                  "energy_out", "normal_impulse")
JUMP_COLUMNS = ("block", "kind", "t_start", "t_end", "x_start", "x_end", "x_top", "y_top",
                "max_height", "jump_height")
BLOCK_COLUMNS = ("end", "x_stop", "y_stop", "z_stop", "runout", "duration", "n_impacts",
                 "n_bounces", "max_speed", "max_energy", "max_height", "semi_r", "semi_h")
STATION_COLUMNS = ("x", "reached", "fraction") + tuple(
    f"{q}_{s}" for q in ("height", "energy", "speed") for s in ("mean", "p95", "p99", "max"))


def write_tables(out: Path, name: str, runs, varied: list[str], barriers: list[dict],
                 stations: list[dict], trajectories: bool) -> None:
    write_rows(out / f"{name}_blocks.csv", ("block", *varied, *BLOCK_COLUMNS), None,
               [{"block": r.index, **r.values, **r.summary} for r in runs])
    write_rows(out / f"{name}_impacts.csv", IMPACT_COLUMNS, None,
               [i for r in runs for i in r.impacts])
    write_rows(out / f"{name}_jumps.csv", JUMP_COLUMNS, None,
               [{"block": r.index, **j} for r in runs for j in r.jumps])
    write_rows(out / f"{name}_barriers.csv", STATION_COLUMNS, None, barriers)
    write_rows(out / f"{name}_envelopes.csv", STATION_COLUMNS, None, stations)
    if trajectories:
        for r in runs:
            write_rows(out / "trajectories" / f"block_{r.index:04d}.csv", COLUMNS, None,
                       r.samples)


def _histogram(ax, values, bins: int, what: str, pdf=None, fit_label: str = "") -> None:
    """Counts of ``values`` and, given ``pdf``, the fitted density scaled to counts."""
    if not values:
        return
    _, edges, _ = ax.hist(values, bins=bins, color="0.75", edgecolor="k",
                          label=f"{len(values)} {what}")
    if pdf is not None:
        x = np.linspace(edges[0], edges[-1], 200)
        ax.plot(x, len(values) * (edges[1] - edges[0]) * pdf(x), "r-", label=fit_label)
    ax.legend(fontsize=8)


def plot_all(out: Path, name: str, title: str, terrain, runs, fits: dict, stations, barriers,
             bins: int) -> None:
    """The five PNG plots; ``title`` names the case parameters."""
    _plot_paths(out / f"{name}_trajectories.png", title, terrain, runs)
    with png_figure(out / f"{name}_bounce_heights.png") as (_, ax):
        lam = fits["jump_height"]["lambda"]
        _histogram(ax, [j["jump_height"] for r in runs for j in r.jumps
                        if j["kind"] != "release"],
                   bins, "jumps", (lambda h: lam * np.exp(-lam * h)) if lam else None,
                   f"exponential fit, lambda = {lam:.3g} 1/m" if lam else "")
        ax.set_xlabel("jump height of the centre above its take-off height [m]")
        ax.set_ylabel("number of jumps")
        ax.set_title(f"{title}\nbounce heights (rebound and roll-off jumps)", fontsize=9)

    with png_figure(out / f"{name}_restitution.png", 1, 2, figsize=(10, 4.2)) as (fig, axes):
        for ax, key, label in zip(axes, ("e_n", "e_t"), ("normal", "tangential")):
            mean, std = fits[key]["mean"], fits[key]["std"]
            _histogram(ax, [i[key] for r in runs for i in r.impacts if np.isfinite(i[key])],
                       bins, "impacts",
                       (lambda x, m=mean, s=std: np.exp(-0.5 * ((x - m) / s) ** 2)
                        / (s * np.sqrt(2.0 * np.pi))) if std else None,
                       f"normal fit, mean {mean:.3g}, std {std:.3g}" if std else "")
            ax.set_xlabel(f"apparent {label} restitution coefficient {key} [-]")
            ax.set_ylabel("number of impacts")
        fig.suptitle(title, fontsize=9)

    _plot_envelopes(out / f"{name}_envelopes.png", title, stations, barriers)

    with png_figure(out / f"{name}_runout.png") as (_, ax):
        stops = [r.summary["x_stop"] for r in runs if r.end == "arrested"]
        _histogram(ax, stops, bins, f"of {len(runs)} blocks stopped")
        ax.set_xlabel("x of the stop point [m]")
        ax.set_ylabel("number of blocks")
        ax.set_title(f"{title}\nstop positions", fontsize=9)


def _plot_paths(path: Path, title: str, terrain, runs) -> None:
    """Paths of the centres over the profile (x-z) or over the DEM contours (plan)."""
    with png_figure(path, figsize=(9, 4.6)) as (_, ax):
        if terrain.kind == "profile":
            for r in runs:
                ax.plot(r.samples[:, 1], r.samples[:, 3], lw=0.6)
            ax.plot(terrain.px, terrain.pz, "k-", lw=2.0, label="profile")
            ax.set_ylabel("z [m]")
        else:
            grid = terrain.raster.grid
            contours = ax.contour(grid.xs, grid.ys, grid.z, levels=15, colors="0.6",
                                  linewidths=0.6)
            ax.clabel(contours, fontsize=6, fmt="%.0f")
            for r in runs:
                ax.plot(r.samples[:, 1], r.samples[:, 2], lw=0.7)
            ax.set_aspect("equal")
            ax.set_ylabel("y [m]")
        ax.set_xlabel("x [m]")
        ax.set_title(f"{title}\ntrajectories of the centres of mass", fontsize=9)
        ax.grid(alpha=0.3)


def _plot_envelopes(path: Path, title: str, stations, barriers) -> None:
    """Mean, 95th and 99th percentile of energy and passing height along x."""
    xs = [s["x"] for s in stations]
    with png_figure(path, 2, 1, figsize=(8, 6.4), sharex=True) as (_, axes):
        for ax, key, scale, label in ((axes[0], "energy", 1e-3, "kinetic energy [kJ]"),
                                      (axes[1], "height", 1.0,
                                       "passing height of the centre [m]")):
            for stat, style in (("mean", "k-"), ("p95", "b--"), ("p99", "r:")):
                ys = [np.nan if s[f"{key}_{stat}"] is None else s[f"{key}_{stat}"] * scale
                      for s in stations]
                ax.plot(xs, ys, style, label=stat)
            for b in barriers:
                ax.axvline(b["x"], color="g", lw=0.8)
            ax.set_ylabel(label)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
        axes[1].set_xlabel("x [m] (green: barriers)")
        axes[0].set_title(f"{title}\nenvelopes over the blocks that reach x", fontsize=9)


def write_vtk(out: Path, name: str, terrain, runs, width: float, vtk_dt: float) -> None:
    """Terrain surface, trajectory polylines and the time series of block positions."""
    from mpi4py import MPI
    comm = MPI.COMM_SELF
    points, quads, ground = terrain.vtk_surface(width)
    VtkSeries(comm, out, f"{name}_terrain").write(0.0, points, {"quad": quads},
                                                  cell_data={"ground": ground.astype(np.int64)})
    samples = [r.samples for r in runs]
    offsets = np.cumsum([0] + [len(s) for s in samples])
    lines = np.concatenate([np.column_stack([np.arange(a, b - 1), np.arange(a + 1, b)])
                            for a, b in zip(offsets[:-1], offsets[1:])]) \
        if offsets[-1] > len(samples) else np.zeros((0, 2), dtype=np.int64)
    allsamp = np.vstack(samples)
    block = np.concatenate([np.full(len(s), r.index) for r, s in zip(runs, samples)])
    VtkSeries(comm, out, f"{name}_trajectories").write(
        0.0, allsamp[:, 1:4], {"line": lines},
        point_data=_point_data(allsamp, block, runs, [len(s) for s in samples]),
        cell_data={"block": block[lines[:, 0]].astype(np.int64)})
    series = VtkSeries(comm, out, name)
    t_last = max(float(s[-1, 0]) for s in samples)
    for t in np.append(np.arange(0.0, t_last, vtk_dt), t_last):
        rows = np.vstack([_at(s, t) for s in samples])
        ids = np.array([r.index for r in runs])
        series.write(float(t), rows[:, 1:4], {"vertex": np.arange(len(rows))[:, None]},
                     point_data=_point_data(rows, ids, runs, [1] * len(runs)))


def _at(samples: np.ndarray, t: float) -> np.ndarray:
    """The sample row at time t (linear in time; the last row after the block's end)."""
    if t >= samples[-1, 0]:
        return samples[-1]
    k = int(np.searchsorted(samples[:, 0], t, side="right"))
    if k == 0:
        return samples[0]
    a, b = samples[k - 1], samples[k]
    f = (t - a[0]) / (b[0] - a[0]) if b[0] > a[0] else 1.0
    row = a + f * (b - a)
    row[13] = a[13]
    return row


def _point_data(rows: np.ndarray, block: np.ndarray, runs, repeat: list[int]) -> dict:
    axes = np.repeat([[r.summary["semi_h"], r.summary["semi_r"], r.summary["semi_r"]]
                      for r in runs], repeat, axis=0)
    return {"time": rows[:, 0], "axis": rows[:, 4:7], "velocity": rows[:, 7:10],
            "omega": rows[:, 10:13], "speed": np.linalg.norm(rows[:, 7:10], axis=1),
            "phase": rows[:, 13].astype(np.int64), "height": rows[:, 14],
            "energy": rows[:, 15], "block": block.astype(np.int64), "semi_axes": axes}
