"""Single impacts and parametric sweeps (Dattola et al. 2023, Sect. 3, Figs. 4-9 and 13).

A sweep's impacts are the points of the case's ``[sweep]`` (:func:`solver.sweep.points`: the
dotted case fields, then the four input lists); they are handed out over the MPI ranks
(:func:`solver.ensemble.run_ensemble`) and gathered in order on rank 0, so the table is the
same for any number of ranks.
"""

from __future__ import annotations

import math
from pathlib import Path

from solver.ensemble import run_ensemble
from solver.guard import IntegrationFailed
from solver.impact import geometry
from solver.impact.dynamics import History, ImpactSetup, simulate
from solver.impact.restitution import coefficients
from solver.impact.rheology import SoilLaw
from solver.interrupt import Diverged
from solver.io.table import read_rows, write_rows

INPUTS = ("aspect_ratio", "theta_0", "theta_in", "omega_0")
UNITS = {"aspect_ratio": "-", "theta_0": "deg", "theta_in": "deg", "omega_0": "deg/s",
         "end": "-", "duration": "s", "max_penetration": "m", "max_displacement": "m",
         "max_force": "N", "max_moment": "N m", "rotation": "rad", "e_n": "-", "e_t": "-",
         "e_contact": "-", "e_energy": "-", "e_energy_formula": "-", "e_vijayakumar": "-",
         "rot_ratio_max": "-", "dissipated": "J", "energy_closure": "-"}
COLUMNS = tuple(UNITS)


def make_setup(cfg, aspect_ratio: float, theta_0: float, theta_in: float,
               omega_0: float) -> ImpactSetup:
    """The impact of the case ``cfg`` with the four swept inputs replaced (degrees)."""
    radius, semi_h = geometry.block_size(cfg.block.mass, cfg.block.density, aspect_ratio)
    return ImpactSetup(
        mass=cfg.block.mass, semi_h=float(semi_h), semi_r=float(radius),
        theta_0=math.radians(theta_0), speed=cfg.impact.speed,
        theta_in=math.radians(theta_in), omega_0=math.radians(omega_0),
        slope=math.radians(cfg.impact.slope), gravity=cfg.impact.gravity,
        law=SoilLaw.from_config(cfg.soil, cfg.impact.gravity), method=cfg.solver.method,
        rtol=cfg.solver.rtol, atol=cfg.solver.atol, t_max=cfg.solver.t_max)


def run_impact(cfg, inputs: tuple[float, float, float, float]) -> tuple[dict, History]:
    """One impact: its table row and its history; an impact the integrator cannot finish
    (solver.guard) raises solver.interrupt.Diverged naming its inputs."""
    setup = make_setup(cfg, *inputs)
    try:
        history = simulate(setup, cfg.soil.rho_c0)
    except IntegrationFailed as exc:
        label = ", ".join(f"{name} = {value:g}" for name, value in zip(INPUTS, inputs))
        raise Diverged(f"impact ({label})", f"diverged: {exc}", 0, 0.0) from None
    row = dict(zip(INPUTS, inputs))
    row.update(coefficients(setup, history))
    return row, history


def inputs(cfg) -> tuple[float, float, float, float]:
    """The four impact inputs of the case ``cfg``: A_r, theta_0, theta_in, omega_0."""
    return (cfg.block.aspect_ratio, cfg.impact.theta_0, cfg.impact.theta_in,
            cfg.impact.omega_0)


def fields(point) -> dict:
    """The swept case fields of a sweep point other than the four inputs (their columns)."""
    aliased = set(type(point.config.sweep).ALIASES.values())
    return {k: v for k, v in point.values.items() if k not in aliased}


def run_sweep(comm, points: list, histories: bool, progress,
              on_impact=None) -> tuple[list[dict] | None, list | None, int]:
    """Run the sweep points (:func:`solver.sweep.points`) over the ranks; rank 0 gets all rows
    (and histories if asked), every rank the total number of integration steps.
    ``on_impact(index, point, history)`` is called on the rank that ran the impact."""
    def impact(index: int, point) -> tuple[dict, tuple | None, int]:
        row, history = run_impact(point.config, inputs(point.config))
        if on_impact is not None:
            on_impact(index, point, history)
        keep = (history.t, history.y[:3], history.derived) if histories else None
        return {**fields(point), **row}, keep, len(history.t)

    gathered = run_ensemble(comm, points, impact, progress)
    steps = comm.bcast(None if gathered is None else sum(g[2] for g in gathered), root=0)
    if gathered is None:
        return None, None, steps
    return [g[0] for g in gathered], [g[1] for g in gathered], steps


def write_table(path: Path, rows: list[dict], fields: dict[str, str]) -> None:
    """CSV with one row per impact: the dotted sweep ``fields`` (name -> unit), then
    :data:`COLUMNS` with their :data:`UNITS`."""
    write_rows(path, [*fields, *COLUMNS], {**fields, **UNITS}, rows)


def read_table(path: Path) -> list[dict]:
    """Rows of a table written by :func:`write_table` (numbers as floats)."""
    return [{k: (v if k == "end" else _number(v)) for k, v in row.items()}
            for row in read_rows(path)]


def _number(text: str) -> float | str:
    try:
        return float(text)
    except ValueError:
        return text
