"""``module = "rockfall"``: an ensemble of ellipsoidal blocks on a profile or a DEM.

The runs (:mod:`~solver.rockfall.ensemble`) are handed out to the MPI ranks one at a time
(:func:`solver.ensemble.run_ensemble`: runs differ much in length) and gathered on rank 0,
which writes the files (:mod:`~solver.rockfall.output`). Each run's randomness comes from its
own seed, so the results do not depend on the number of ranks.

Results: ``runout_mean``, ``runout_std`` [m] (plan distance from release to the end point),
``stopped_fraction`` (blocks arrested on the terrain), ``e_n_mean``, ``e_n_std``, ``e_t_mean``,
``e_t_std`` and their KS p-values (normal fits over all impacts), ``bounce_height_fit_lambda``
[1/m] (exponential fit of the jump heights of the rebound and roll-off jumps; null without
any), ``bounce_height_mean``, its KS p-value, counts (``n_blocks``, ``n_impacts``,
``n_flights``: all ballistic phases, ``n_jumps``: those fitted, ``ends``, ``failed_impacts``:
impacts the impact module could not integrate), the stop range and the envelopes at the
barriers. ``steps`` in the summary counts the flights and impacts.

Every block's trajectory samples (:data:`~solver.rockfall.trajectory.COLUMNS`, float64) meet
on rank 0 at the end. How long a block runs is known only once it ran, and most stop long
before ``motion.t_end``, so their memory is not refused beforehand: where the samples of
every block run to ``motion.t_end`` would not fit that node's memory, rank 0 says so in one
warning line before the ensemble starts.

Checkpoints (``--checkpoint-every``, ``--restart``, a clean stop at SIGTERM or SIGINT:
:mod:`solver.ensemble_checkpoint`) hold the blocks that finished, with everything they
recorded. A block under way is not stored: its whole motion takes about a second (0.3 to 2 s
in the shipped cases), and it starts over from its seed on a restart, so a stop costs at most
one block per rank. The ranks stop before a block's next phase (flight, impact or rolling),
and a checkpoint due by steps counts the phases.
"""

from __future__ import annotations

import sys

import numpy as np

from solver.case import Case
from solver.context import RunContext, RunOutput
from solver.ensemble import run_ensemble
from solver.ensemble_checkpoint import EnsembleCheckpoint, Record
from solver.errors import InputError, written_by_root
from solver.modules import TEMPLATES, ModuleSpec
from solver.resources import available_memory, need_count, size_text
from solver.rockfall import output, statistics
from solver.rockfall.config import MAX_STATIONS, Config
from solver.rockfall.ensemble import expand
from solver.rockfall.terrain import build_terrain
from solver.rockfall.trajectory import COLUMNS, BlockRun, BlockSimulation

ENVELOPE_UNITS = {f"{name}_{stat}": unit
                  for name, unit in (("height", "m"), ("energy", "J"), ("speed", "m/s"))
                  for stat in ("mean", "p95", "p99", "max")}
"""Units of the passing-height, kinetic-energy and speed envelopes at a station
(:func:`solver.rockfall.statistics.station_envelopes`)."""

RESULT_UNITS = {
    "n_blocks": "-", "n_impacts": "-", "n_flights": "-", "n_jumps": "-",
    "runout_mean": "m", "runout_std": "m", "stopped_fraction": "-",
    "x_stop_min": "m", "x_stop_max": "m",
    "e_n_mean": "-", "e_n_std": "-", "e_n_ks_pvalue": "-",
    "e_t_mean": "-", "e_t_std": "-", "e_t_ks_pvalue": "-",
    "bounce_height_fit_lambda": "1/m", "bounce_height_mean": "m", "bounce_height_ks_pvalue": "-",
    "ends": "-", "failed_impacts": "-",
    "barriers": {"x": "m", "reached": "-", "fraction": "-", **ENVELOPE_UNITS},
}
"""Unit of each result of :func:`summarize` (``ends``: block counts by how each run ended;
``barriers``: one table per barrier)."""


def _check_barriers(cfg: Config, terrain, where: str) -> None:
    for i, x in enumerate(cfg.output.barriers):
        if terrain.outside_distance(x, cfg.start.y, 0.0) > 0.0:
            raise InputError(f"{where}: output.barriers[{i}]", f"x = {x:g} is off the terrain")


def _warn_trajectories(cfg: Config, where: str) -> None:
    """Warn (one line on stderr) where the trajectories of all blocks, each run to
    motion.t_end, would not fit this node's memory (module docstring; rank 0)."""
    blocks, samples = cfg.blocks(), cfg.motion.t_end / cfg.output.sample_dt + 1.0
    need, have = blocks * samples * 8.0 * len(COLUMNS), available_memory()
    if need > have:
        print(f"warning: {where}: output.sample_dt: the trajectories of {blocks:.3g} blocks "
              f"would need {size_text(need)} of memory on rank 0 if every block ran to "
              f"motion.t_end ({samples:.3g} samples); this node has {size_text(have)} "
              "available", file=sys.stderr)


def _check_stations(cfg: Config, terrain, where: str) -> None:
    """The envelope stations along the terrain's x extent are at most MAX_STATIONS."""
    xs = (terrain.px if terrain.kind == "profile" else terrain.raster.grid.xs)
    stations = float(xs[-1] - xs[0]) / cfg.output.envelope_spacing
    need_count(f"{where}: output.envelope_spacing", stations, MAX_STATIONS,
               "envelope stations along the terrain")


def _title(case: Case, runs) -> str:
    cfg = case.config
    parts = [f"{case.name}: {len(runs)} blocks", f"m = {cfg.block.mass:g} kg"]
    for name in cfg.varied():
        values = [r.values[name] for r in runs]
        parts.append(f"{name} {min(values):g}..{max(values):g}")
    return ", ".join(parts)


def fits(runs) -> dict:
    """Exponential fit of the rebound and roll-off jump heights, normal fits of e_n and e_t."""
    impacts = [i for r in runs for i in r.impacts]
    heights = [j["jump_height"] for r in runs for j in r.jumps if j["kind"] != "release"]
    return {"jump_height": statistics.exponential_fit(heights),
            "e_n": statistics.normal_fit([i["e_n"] for i in impacts]),
            "e_t": statistics.normal_fit([i["e_t"] for i in impacts])}


def summarize(runs, fit: dict, barriers: list[dict]) -> dict:
    """The ``results`` of an ensemble (module docstring)."""
    runout = np.array([r.summary["runout"] for r in runs])
    ends = [r.end for r in runs]
    stopped = [r for r in runs if r.end == "arrested"]
    e_n, e_t, jump = fit["e_n"], fit["e_t"], fit["jump_height"]
    return {
        "n_blocks": len(runs), "n_impacts": sum(len(r.impacts) for r in runs),
        "n_flights": sum(len(r.jumps) for r in runs), "n_jumps": jump["n"],
        "runout_mean": float(np.mean(runout)), "runout_std": float(np.std(runout)),
        "stopped_fraction": len(stopped) / len(runs),
        "x_stop_min": min((r.summary["x_stop"] for r in stopped), default=None),
        "x_stop_max": max((r.summary["x_stop"] for r in stopped), default=None),
        "e_n_mean": e_n["mean"], "e_n_std": e_n["std"], "e_n_ks_pvalue": e_n["ks_pvalue"],
        "e_t_mean": e_t["mean"], "e_t_std": e_t["std"], "e_t_ks_pvalue": e_t["ks_pvalue"],
        "bounce_height_fit_lambda": jump["lambda"], "bounce_height_mean": jump["mean"],
        "bounce_height_ks_pvalue": jump["ks_pvalue"],
        "ends": {e: ends.count(e) for e in sorted(set(ends))},
        "failed_impacts": sum(i["end"] == "failed" for r in runs for i in r.impacts),
        "barriers": barriers,
    }


def _encode(run: BlockRun) -> Record:
    meta = {"index": run.index, "values": run.values, "impacts": run.impacts,
            "jumps": run.jumps, "end": run.end, "summary": run.summary}
    return Record(len(run.impacts) + len(run.jumps), run.summary["duration"], meta,
                  {"samples": run.samples})


def _decode(record: Record) -> BlockRun:
    return BlockRun(samples=record.arrays["samples"], **record.meta)


def run(case: Case, ctx: RunContext) -> RunOutput:
    cfg: Config = case.config
    comm, where = ctx.comm, str(case.path)
    if comm.rank == 0:
        _warn_trajectories(cfg, where)
    names = list(cfg.grounds)
    terrain = build_terrain(cfg.terrain, names, where)
    _check_barriers(cfg, terrain, where)
    _check_stations(cfg, terrain, where)
    runs = expand(cfg, where)
    simulation = BlockSimulation(cfg, terrain, names, where)
    for spec in runs:
        simulation.release(spec)
    checkpoint = EnsembleCheckpoint(case, ctx, _encode, _decode)
    gathered = run_ensemble(comm, runs, lambda _, spec: simulation.run(spec, checkpoint.boundary),
                            ctx.progress(len(runs), label="blocks"), checkpoint)
    results = written_by_root(comm, lambda: _finish(case, ctx, terrain, runs, gathered),
                              ctx.out_dir)
    return RunOutput(steps=results["n_impacts"] + results["n_flights"], results=results)


def _finish(case: Case, ctx: RunContext, terrain, specs, runs) -> dict:
    cfg, out, name = case.config, ctx.out_dir, case.name
    trajectories = [r.samples for r in runs]
    x_lo = min(float(np.min(s[:, 1])) for s in trajectories)
    x_hi = max(float(np.max(s[:, 1])) for s in trajectories)
    spacing = cfg.output.envelope_spacing
    grid = np.arange(np.ceil(x_lo / spacing) * spacing, x_hi, spacing)
    stations = {"barriers": statistics.station_envelopes(trajectories, cfg.output.barriers),
                "grid": statistics.station_envelopes(trajectories, grid)}
    fit = fits(runs)
    results = summarize(runs, fit, stations["barriers"])
    output.write_tables(out, name, runs, cfg.varied(), stations["barriers"],
                        stations["grid"], cfg.output.trajectories)
    if cfg.output.plots:
        output.plot_all(out, name, _title(case, specs), terrain, runs, fit, stations["grid"],
                        stations["barriers"], cfg.output.bins)
    if cfg.output.vtk:
        output.write_vtk(out, name, terrain, runs, cfg.terrain.width, cfg.output.vtk_dt)
    return results


SPEC = ModuleSpec(name="rockfall", config=Config, run=run, template=TEMPLATES / "rockfall.toml",
                  result_units=RESULT_UNITS, sweeps_whole_cases=False, checkpoints=True)
