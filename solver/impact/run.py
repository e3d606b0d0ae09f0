"""``module = "impact"``: one ellipsoid impact, or a parametric sweep over MPI ranks.

A single impact writes ``<name>_history.csv``, ``<name>_histories.png``, the VTK series
``<name>.pvd`` of the ellipsoid over the ground ``<name>_ground.pvd``, and the results
``max_penetration, max_force, duration, e_n, e_t, e_contact, e_energy, rot_ratio_max`` (plus
``end``, ``e_energy_formula``, ``e_vijayakumar``, ``energy_closure``, ...). A sweep writes
``<name>_sweep.csv`` (one row per impact, :data:`solver.impact.sweeps.COLUMNS`) and one PNG per
plotted column.
"""

from __future__ import annotations

import math

import numpy as np


from solver.case import Case
from solver.context import RunContext, RunOutput
from solver.errors import InputError, written_by_root
from solver.impact import geometry, plots
from solver.impact.config import Config
from solver.impact.output import write_impact_vtk
from solver.impact.restitution import rotational_ratio
from solver.impact.sweeps import (INPUTS, UNITS, fields, inputs, make_setup, run_impact,
                                  run_sweep, write_table)
from solver.io.table import number_text, plot_title, write_rows
from solver.modules import TEMPLATES, ModuleSpec
from solver.sweep import Point, is_sweep, points, units

RESULT_UNITS = {**UNITS, "semi_axis_r": "m", "semi_axis_h": "m", "n_impacts": "-",
                "table": "-", "e_energy_max": "-", "energy_closure_max": "-", "ends": "-"}


def _check_contact_velocity(points: list[Point], where: str) -> None:
    """The first contact point must move into the ground (else there is no impact)."""
    for point in points:
        setup = make_setup(point.config, *inputs(point.config))
        v_n0, _, omega = setup.initial_velocity
        if v_n0 + setup.contact_arm_0 * omega <= 0.0:
            a_r, theta_0, _, omega_0 = inputs(point.config)
            raise InputError(f"{where}: impact.omega_0", f"with A_r={a_r:g}, "
                             f"theta_0={theta_0:g} deg the spin {omega_0:g} deg/s lifts the "
                             f"contact point off the ground: no impact")


def _json(value):
    return None if isinstance(value, float) and not math.isfinite(value) else value


HISTORY_UNITS = {"t": "s", "u_n": "m", "u_t": "m", "theta": "rad", "v_n": "m/s", "v_t": "m/s",
                 "omega": "rad/s", "N": "N", "T": "N", "M": "N m", "B_t": "m", "B_w": "m",
                 "r_t": "m", "u_D": "m", "R_r": "-", "E_k": "J", "W_contact": "J"}


def _write_history(path, history) -> None:
    d, y = history.derived, history.y
    ratio = rotational_ratio(d["E_kr"], d["E_kt"])
    columns = {"t": history.t, "u_n": y[0], "u_t": y[1], "theta": y[2], "v_n": y[3],
               "v_t": y[4], "omega": y[5], "N": d["N"], "T": d["T"], "M": d["M"],
               "B_t": d["B_t"], "B_w": d["B_w"], "r_t": d["r_t"], "u_D": d["u_D"],
               "R_r": ratio, "E_k": d["E_kt"] + d["E_kr"], "W_contact": d["W_contact"]}
    write_rows(path, list(columns), HISTORY_UNITS, np.column_stack(list(columns.values())))


def run(case: Case, ctx: RunContext) -> RunOutput:
    cfg: Config = case.config
    comm = ctx.comm
    runs = points(cfg, str(case.path), case.path.parent)
    _check_contact_velocity(runs, str(case.path))
    if not is_sweep(cfg):
        point = inputs(cfg)
        row, history = run_impact(cfg, point)

        def write() -> None:
            _write_history(ctx.out_dir / f"{case.name}_history.csv", history)
            if cfg.output.vtk:
                write_impact_vtk(ctx.out_dir, case.name, make_setup(cfg, *point), history,
                                 cfg.output.vtk_frames)
            plots.plot_histories(ctx.out_dir, case.name, [case.name],
                                 [(history.t, history.y, history.derived)],
                                 plots.inputs_title(case.name, point))

        written_by_root(comm, write, ctx.out_dir)
        radius, semi_h = geometry.block_size(cfg.block.mass, cfg.block.density,
                                             cfg.block.aspect_ratio)
        results = {k: _json(v) for k, v in row.items()}
        results.update(semi_axis_r=float(radius), semi_axis_h=float(semi_h))
        return RunOutput(steps=len(history.t), results=results)

    def write_vtk(index: int, point: Point, history) -> None:
        write_impact_vtk(ctx.out_dir / f"{case.name}_impacts", f"impact_{index:03d}",
                         make_setup(point.config, *inputs(point.config)), history,
                         cfg.output.vtk_frames)

    rows, histories, steps = run_sweep(comm, runs, cfg.sweep.histories,
                                       ctx.progress(len(runs), label="impacts"),
                                       write_vtk if cfg.output.vtk_in_sweeps else None)

    def finish() -> dict:
        table = ctx.out_dir / f"{case.name}_sweep.csv"
        columns = units(Config, list(fields(runs[0])))
        write_table(table, rows, columns)
        plots.plot_sweep(ctx.out_dir, case.name, rows, cfg.sweep.x, cfg.sweep.plots,
                         (*columns, *INPUTS))
        if cfg.sweep.histories:
            varied = [k for k in (*columns, *INPUTS) if len({r[k] for r in rows}) > 1]
            labels = [", ".join(f"{k}={number_text(r[k])}" for k in varied) for r in rows]
            plots.plot_histories(ctx.out_dir, case.name, labels, histories,
                                 plot_title(case.name, varied))
        return {"n_impacts": len(rows), "table": table.name,
                "e_energy_max": max(r["e_energy"] for r in rows),
                "energy_closure_max": max(r["energy_closure"] for r in rows),
                "ends": {e: sum(r["end"] == e for r in rows) for e in ("bounce", "topple",
                                                                       "stop")}}

    results = written_by_root(comm, finish, ctx.out_dir)
    return RunOutput(steps=steps, results=results)


SPEC = ModuleSpec(name="impact", config=Config, run=run, template=TEMPLATES / "impact.toml",
                  result_units=RESULT_UNITS, sweeps_whole_cases=False, checkpoints=False)
