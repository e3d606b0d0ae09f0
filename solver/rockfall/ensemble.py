"""The runs of an ensemble and the release state of each block.

Runs are the Cartesian product of the grids (the points of the case's ``[sweep]``,
:func:`solver.sweep.points`, then the grids of ``[ensemble.vary]`` in the order the case lists
them), each repeated ``samples`` times; run i draws its distributed quantities from
``numpy.random.default_rng([seed, i])`` in the order the case lists them, so its block is the
same whatever the number of MPI ranks.

Release state (world frame x, y, z up): with the plan direction ``d = (cos az, sin az, 0)``
the velocity is ``speed (cos(dip) d - sin(dip) z)``, the spin ``omega_0 (z x d)`` (forward
rolling for a block moving along d), the major axis ``cos(theta_0) z + sin(theta_0) d'`` with
``d'`` the direction ``az + axis_yaw``.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.optimize import brentq

from solver.case import check_field_value
from solver.errors import InputError
from solver.impact.config import Block
from solver.rockfall.body import Shape
from solver.rockfall.config import BLOCK_VARIABLES, Config, Start
from solver.sweep import points



@dataclass
class RunSpec:
    """One block of the ensemble: its index, the varied values and its block and start."""

    index: int
    values: dict[str, float]
    block: Block
    start: Start


def expand(cfg: Config, where: str) -> list[RunSpec]:
    """All runs of the case (from the file ``where``), with every drawn block checked like a
    case value."""
    vary = cfg.ensemble.vary
    grids = [(name, s.values) for name, s in vary.items() if s.is_grid]
    drawn = [(name, s) for name, s in vary.items() if not s.is_grid]
    runs = []
    for point in points(cfg, where, Path(where).parent):
        swept = {key.partition(".")[2]: float(v) for key, v in point.values.items()}
        for combo in itertools.product(*[values for _, values in grids]):
            for _ in range(cfg.ensemble.samples):
                index = len(runs)
                rng = np.random.default_rng([cfg.ensemble.seed, index])
                values = {**swept, **dict(zip([name for name, _ in grids], combo))}
                for name, spread in drawn:
                    values[name] = float(rng.uniform(*spread.uniform) if spread.uniform
                                         else rng.normal(*spread.normal))
                runs.append(_spec(point.config, index, values, where))
    return runs


def _spec(cfg: Config, index: int, values: dict[str, float], where: str) -> RunSpec:
    """The run's block and start: the point's case with the ``ensemble.vary`` values set, each
    checked (the swept values were checked with the point)."""
    label = ", ".join(f"{k} = {v:g}" for k, v in values.items())
    for name in cfg.ensemble.vary:
        value, field = values[name], f"{where}: ensemble.vary.{name}"
        try:
            check_field_value(Block if name in BLOCK_VARIABLES else Start, name, value, field)
            if name in BLOCK_VARIABLES:
                Block(**{name: value}).validate(field)
        except InputError as exc:
            raise InputError(field, f"run {index} ({label}): {name} {exc.message}") from None
    block = dataclasses.replace(cfg.block, **{k: v for k, v in values.items()
                                              if k in BLOCK_VARIABLES})
    start = dataclasses.replace(cfg.start, **{k: v for k, v in values.items()
                                              if k not in BLOCK_VARIABLES})
    return RunSpec(index, values, block, start)


def release_vectors(start: Start) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Velocity, major axis and angular velocity (rad/s) at release."""
    az = math.radians(start.azimuth)
    d = np.array([math.cos(az), math.sin(az), 0.0])
    dip = math.radians(start.dip)
    velocity = start.speed * (math.cos(dip) * d - math.sin(dip) * np.array([0.0, 0.0, 1.0]))
    yaw = az + math.radians(start.axis_yaw)
    tilt = math.radians(start.theta_0)
    axis = np.array([math.sin(tilt) * math.cos(yaw), math.sin(tilt) * math.sin(yaw),
                     math.cos(tilt)])
    omega = math.radians(start.omega_0) * np.cross([0.0, 0.0, 1.0], d)
    return velocity, axis, omega


def release_centre(spec: RunSpec, shape: Shape, axis: np.ndarray, terrain, where: str):
    """Centre of mass at release; InputError when the block starts off the terrain or (in
    part) below the ground."""
    s = spec.start
    label = f"run {spec.index}" + (f" ({', '.join(f'{k} = {v:g}' for k, v in spec.values.items())})"
                                   if spec.values else "")
    if terrain.outside_distance(s.x, s.y, 2.0 * shape.semi_h) > 0.0:
        raise InputError(f"{where}: start.x", f"{label}: the block starts off the terrain at "
                         f"(x, y) = ({s.x:g}, {s.y:g})")
    ground = float(terrain.elevation(s.x, s.y))
    matrix = shape.matrix(axis)

    def gap(height: float) -> float:
        return terrain.gap(np.array([s.x, s.y, ground + height]), matrix, shape.semi_r)

    if s.on_ground:
        top = 2.0 * shape.semi_h
        for _ in range(200):
            if gap(top) > 0.0:
                return np.array([s.x, s.y,
                                 ground + brentq(gap, -shape.semi_h, top, xtol=1e-14)])
            top *= 2.0
        raise InputError(f"{where}: start.on_ground", f"{label}: no height above the ground "
                         f"at (x, y) = ({s.x:g}, {s.y:g}) clears the block")
    clearance = gap(s.height)
    if clearance < 0.0:
        raise InputError(f"{where}: start.height", f"{label}: the block starts below the "
                         f"ground (its centre {s.height:g} m above the ground leaves part of "
                         "it underground); raise the start or use on_ground")
    return np.array([s.x, s.y, ground + s.height])
