"""Entry point of ``module = "pointmass"``: one run, or a sweep (:func:`solver.sweep.points`)
shared by the MPI ranks.

Outputs in the run folder: ``summary.json`` (by the CLI), ``com.csv`` (a sweep:
``runs/run_NNN.csv``), ``com_speed.png``, and the VTK series ``<case>.pvd`` (a sweep: of run
``output.vtk_run`` only).

Results of a single run: the keys of :func:`solver.pointmass.simulate.simulate` (``peak_speed``,
``peak_time``, ``stop_time``, ``final_com``, ...; the sphere cup adds ``force_rel_error_max``,
``distance_rel_error_max``, ``energy_rel_drift``). A sweep gives ``runs`` (one row per run
with its parameters), the worst value over the runs of each error key, and each descriptive
key as a list in run order.

Checkpoints (``--checkpoint-every``, ``--restart``, a clean stop at SIGTERM or SIGINT:
:mod:`solver.ensemble_checkpoint`) hold the finished runs of a sweep and every run under way
at its last time step, since most cases are a single run, the whole job: its state vector,
time and step count, adaptive step, output times, tallies, CoM history and VTK frames
(:func:`solver.pointmass.simulate.simulate`).
"""

from __future__ import annotations

import numpy as np

from solver.case import Case
from solver.context import RunContext, RunOutput
from solver.ensemble import run_ensemble
from solver.ensemble_checkpoint import EnsembleCheckpoint, Record
from solver.errors import InputError, written_by_root
from solver.io.table import plot_title
from solver.modules import TEMPLATES, ModuleSpec
from solver.pointmass.config import Config
from solver.pointmass.output import plot_speed
from solver.pointmass.simulate import simulate
from solver.sweep import points

WORST = ("force_rel_error_max", "escape_force_over_weight_max", "reaction_rel_error_max",
         "distance_rel_error_max", "energy_rel_drift")
LISTED = ("n_masses", "peak_speed", "peak_time", "stop_time", "stop_reason", "final_com")

RUN_UNITS = {"n_masses": "-", "n_rb": "-", "n_ep": "-", "mass_total": "kg", "steps": "-",
             "peak_speed": "m/s", "peak_time": "s", "stop_time": "s", "stop_reason": "-",
             "final_time": "s", "final_com": "m", "final_com_speed": "m/s", "com_travel": "m",
             "initial_com": "m", "distance_rel_error_max": "-", "energy_rel_drift": "-",
             "theta_deg": "deg", "force_theory": "N", "escape": "-",
             "reaction_rel_error_max": "-", "escape_force_over_weight_max": "-",
             "force_rel_error_max": "-", "surface_crs": "-"}
RESULT_UNITS = {**RUN_UNITS, "runs": {"index": "-", "label": "-", "params": "-", **RUN_UNITS},
                "steps_total": "-"}


def _summarize(specs, rows: list[dict]) -> dict:
    if len(specs) == 1:
        return rows[0]
    table = [{"index": s.index, "label": s.label, "params": s.values, **r}
             for s, r in zip(specs, rows)]
    out: dict = {"runs": table}
    for key in WORST:
        values = [r[key] for r in rows if key in r]
        if values:
            out[key] = max(values)
    for key in LISTED:
        out[key] = [r[key] for r in rows]
    if "surface_crs" in rows[0]:
        out["surface_crs"] = rows[0]["surface_crs"]
    return out


def _encode(row: tuple[dict, np.ndarray]) -> Record:
    result, history = row
    return Record(result["steps"], result["final_time"], result, {"history": history})


def _decode(record: Record) -> tuple[dict, np.ndarray]:
    return record.meta, record.arrays["history"]


def run(case: Case, ctx: RunContext) -> RunOutput:
    specs = points(case.config, str(case.path), case.path.parent)
    comm = ctx.comm
    sweep = len(specs) > 1
    vtk_run = case.config.output.vtk_run if sweep else 0
    if vtk_run >= len(specs):
        raise InputError(f"{case.path}: output.vtk_run",
                         f"the sweep has {len(specs)} runs, got index {vtk_run}")

    def run_one(idx: int, spec) -> tuple[dict, np.ndarray]:
        cfg = spec.config
        csv = ctx.out_dir / (f"runs/run_{idx:03d}.csv" if sweep else "com.csv")
        vtk = (ctx.out_dir, case.name) if cfg.output.vtk and idx == vtk_run else None
        progress = ctx.progress(cfg.time.t_end, label=f"run {idx} t" if sweep else "t")
        return simulate(cfg, str(case.path), csv, vtk, progress, checkpoint.resumed(idx),
                        checkpoint.boundary)

    checkpoint = EnsembleCheckpoint(case, ctx, _encode, _decode)
    gathered = run_ensemble(comm, specs, run_one,
                            ctx.progress(len(specs), label="runs") if sweep else None,
                            checkpoint)

    def finish() -> dict:
        rows = [r for r, _ in gathered]
        if case.config.output.plot:
            plot_speed(ctx.out_dir / "com_speed.png",
                       [(s.label, h) for s, (_, h) in zip(specs, gathered)],
                       plot_title(case.name, list(specs[0].values)))
        return {**_summarize(specs, rows),
                "steps_total": int(np.sum([r["steps"] for r in rows]))}

    results = written_by_root(comm, finish, ctx.out_dir)
    return RunOutput(steps=results["steps_total"], results=results)


SPEC = ModuleSpec(name="pointmass", config=Config, run=run, template=TEMPLATES / "pointmass.toml",
                  result_units=RESULT_UNITS, sweeps_whole_cases=False, checkpoints=True)
