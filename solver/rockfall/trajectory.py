"""One block from release to arrest: the phase machine of a HyStone-type simulation.

flight (:mod:`~solver.rockfall.flight`) -> at the touch, an impact
(:mod:`~solver.rockfall.bounce`) if the contact point approaches the ground at least at
``sqrt(2 g cos(beta) roll_height)``, else rolling; impact -> flight (bounce) or rolling
(toppling, low rebound); rolling (:mod:`~solver.rockfall.rolling`) -> arrest, take-off
(flight), an impact on the next profile piece, or the end of the terrain. After a bounce the
block is lifted out of its crater to touch the undeformed ground.

Recorded per block: samples every ``sample_dt`` (:data:`COLUMNS`), every impact, every ballistic
jump (its highest point above the ground and the rise of the centre over its take-off height),
the end and the stop point.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import brentq

from solver.guard import IntegrationFailed
from solver.impact.rheology import SoilLaw
from solver.rockfall.body import Shape, unit
from solver.rotation import cross
from solver.rockfall.bounce import resolve
from solver.rockfall.ensemble import RunSpec, release_centre, release_vectors
from solver.rockfall.flight import first_contact, highest_point, make_path, sample_times
from solver.rockfall.rolling import Roller
from solver.rockfall.terrain import Contact

COLUMNS = ("t", "x", "y", "z", "axis_x", "axis_y", "axis_z", "vx", "vy", "vz", "wx", "wy",
           "wz", "phase", "height", "energy")
PHASES = {"flight": 0, "impact": 1, "roll": 2, "slide": 3, "rest": 4}
ENDS = ("arrested", "left_terrain", "time_limit", "max_impacts", "stalled")


@dataclass
class BlockRun:
    """Everything one block produced."""

    index: int
    values: dict
    samples: np.ndarray
    impacts: list = field(default_factory=list)
    jumps: list = field(default_factory=list)
    end: str = ""
    summary: dict = field(default_factory=dict)


class Recorder:
    """Trajectory samples on the time grid ``k * dt`` plus every phase boundary."""

    def __init__(self, shape: Shape, terrain, dt: float, axis: np.ndarray):
        self.shape, self.terrain, self.dt = shape, terrain, dt
        self.rows: list[list[float]] = []
        self.last_axis = axis

    def add(self, t, centre, axis, velocity, omega, phase: str) -> None:
        height = float(centre[2] - self.terrain.elevation(centre[0], centre[1]))
        energy = self.shape.kinetic_energy(velocity, omega, axis)
        self.last_axis = np.asarray(axis)
        self.rows.append([t, *centre, *axis, *velocity, *omega, PHASES[phase], height, energy])

    def grid(self, t0: float, t1: float) -> np.ndarray:
        """Grid times in ``(t0, t1)`` and ``t1``."""
        first = math.floor(t0 / self.dt) + 1
        times = self.dt * np.arange(first, math.ceil(t1 / self.dt))
        return np.append(times[(times > t0) & (times < t1)], t1)

    def flight(self, path, t0: float, tau_end: float) -> None:
        if tau_end <= 0.0:
            return
        for t in np.concatenate([[t0], self.grid(t0, t0 + tau_end)]):
            centre, velocity, axis, omega = path.state(t - t0)
            self.add(t, centre, axis, velocity, omega, "flight")

    def rolling(self, roller: Roller):
        radius = roller.radius

        def sample(sol, ground, mode, piece, ground_index):
            for t in np.concatenate([[sol.t[0]], self.grid(sol.t[0], sol.t[-1])]):
                s = roller.unpack(ground, t, sol.sol(t), mode, piece, ground_index)
                n = ground.forces(s.point[:2], s.velocity[:2])[0]
                self.add(t, s.point + radius * n, rolling_axis(n, s.velocity, self.last_axis),
                         s.velocity, s.omega, mode)
        return sample

    def array(self) -> np.ndarray:
        return np.array(self.rows, dtype=float).reshape(-1, len(COLUMNS))


def rolling_axis(normal, velocity, previous) -> np.ndarray:
    """A rolling block lies on its side: major axis across the motion, in the tangent plane."""
    across = cross(normal, velocity)
    size = float(np.linalg.norm(across))
    if size > 1e-12:
        return across / size
    flat = previous - float(previous @ normal) * normal
    return unit(flat) if np.linalg.norm(flat) > 1e-12 else unit(cross(normal, [1.0, 0, 0]))


def settle(terrain, shape: Shape, centre, axis, normal) -> np.ndarray:
    """The centre moved along ``normal`` until the block just touches the ground (if it was
    below it)."""
    matrix = shape.matrix(axis)

    def gap(s: float) -> float:
        return terrain.gap(centre + s * normal, matrix, shape.semi_r)

    if gap(0.0) >= 0.0:
        return centre
    return centre + brentq(gap, 0.0, clear_above(gap, shape.semi_r), xtol=1e-14) * normal


def clear_above(gap, start: float) -> float:
    """A lift ``start * 2^k`` (k < 200) at which ``gap`` is positive; IntegrationFailed where
    none is (a gap that is not finite)."""
    top = start
    for _ in range(200):
        if gap(top) > 0.0:
            return top
        top *= 2.0
    raise IntegrationFailed(f"no lift of up to {top:.3g} m clears the ground")


class BlockSimulation:
    """The phase machine for one block on a terrain with the case's ground sets."""

    def __init__(self, cfg, terrain, ground_names: list[str], where: str):
        self.cfg, self.terrain, self.where = cfg, terrain, where
        self.names = ground_names
        self.grounds = [cfg.grounds[name] for name in ground_names]
        self.laws = [SoilLaw.from_config(g, cfg.motion.gravity) for g in self.grounds]

    def shape(self, spec: RunSpec) -> Shape:
        return Shape.from_block(spec.block.mass, spec.block.density, spec.block.aspect_ratio)

    def release(self, spec: RunSpec):
        """Centre, velocity, axis and spin at release (validated against the terrain)."""
        shape = self.shape(spec)
        velocity, axis, omega = release_vectors(spec.start)
        return release_centre(spec, shape, axis, self.terrain, self.where), velocity, axis, omega

    def run(self, spec: RunSpec, boundary=None) -> BlockRun:
        """The whole motion of one block; ``boundary(steps, t)`` is called before every phase
        (steps: the flights and impacts so far;
        :meth:`solver.ensemble_checkpoint.EnsembleCheckpoint.boundary`)."""
        block = _Block(self, spec)
        if boundary is not None:
            block.tick = lambda: boundary(len(block.impacts) + len(block.jumps), block.t)
        phase = "flight"
        while phase not in ENDS:
            if boundary is not None:
                boundary(len(block.impacts) + len(block.jumps), block.t)
            phase = {"flight": block.fly, "impact": block.impact, "roll": block.roll}[phase]()
        samples = block.rec.array()
        summary = self._summary(block.shape, samples, block.impacts, block.jumps, block.start,
                                block.centre, phase)
        return BlockRun(spec.index, dict(spec.values), samples, block.impacts, block.jumps,
                        phase, summary)

    def jump(self, path, t0: float, tau: float, kind: str) -> dict:
        """Record of a ballistic jump: its highest point above the ground and the rise of the
        centre over its take-off height."""
        height, when = highest_point(path, self.terrain, tau,
                                     sample_times(tau, self.cfg.output.sample_dt))
        c0, c1, top = path.centre(0.0), path.centre(tau), path.centre(when)
        rise = height - float(c0[2] - self.terrain.elevation(c0[0], c0[1]))
        return {"kind": kind, "t_start": t0, "t_end": t0 + tau, "x_start": c0[0],
                "x_end": c1[0], "x_top": top[0], "y_top": top[1], "max_height": height,
                "jump_height": rise}

    @staticmethod
    def _summary(shape, samples, impacts, jumps, start, stop, end) -> dict:
        speed = np.linalg.norm(samples[:, 7:10], axis=1)
        flights = [j["max_height"] for j in jumps]
        return {"end": end, "semi_r": shape.semi_r, "semi_h": shape.semi_h,
                "x_stop": float(stop[0]), "y_stop": float(stop[1]), "z_stop": float(stop[2]),
                "runout": float(math.hypot(stop[0] - start[0], stop[1] - start[1])),
                "duration": float(samples[-1, 0]), "n_impacts": len(impacts),
                "n_bounces": sum(i["outcome"] == "bounce" for i in impacts),
                "max_speed": float(np.max(speed)), "max_energy": float(np.max(samples[:, 15])),
                "max_height": float(max(flights)) if flights else 0.0}


class _Block:
    """The state of one block between phases; each phase method returns the next phase or
    one of :data:`ENDS`."""

    def __init__(self, sim: BlockSimulation, spec: RunSpec):
        self.sim, self.index = sim, spec.index
        self.shape = sim.shape(spec)
        self.roller = Roller(self.shape, sim.terrain, sim.grounds, sim.cfg.motion)
        self.centre, self.velocity, self.axis, self.omega = sim.release(spec)
        self.start = self.centre.copy()
        self.rec = Recorder(self.shape, sim.terrain, sim.cfg.output.sample_dt, self.axis)
        self.t, self.touching, self.kind = 0.0, spec.start.on_ground, "release"
        self.contact: Contact | None = None
        self.impacts: list[dict] = []
        self.jumps: list[dict] = []
        self.tick = None

    def fly(self) -> str:
        sim, motion, shape = self.sim, self.sim.cfg.motion, self.shape
        try:
            path = make_path(shape, self.centre, self.velocity, self.axis, self.omega, motion,
                             motion.t_end - self.t, sim.terrain.z_min - 4.0 * shape.semi_h,
                             self.tick)
        except IntegrationFailed:
            return "stalled"
        end = first_contact(path, sim.terrain, shape, motion.t_end - self.t, self.touching,
                            motion.gravity, self.tick)
        if end.reason == "stalled":
            return "stalled"
        self.rec.flight(path, self.t, end.tau)
        if end.tau > 0.0:
            self.jumps.append(sim.jump(path, self.t, end.tau, self.kind))
        self.centre, self.velocity, self.axis, self.omega = path.state(end.tau)
        self.t += end.tau
        if end.reason != "contact":
            return "left_terrain" if end.reason == "left" else "time_limit"
        self.contact = end.contact
        arm = self.contact.point - self.centre
        approach = -float((self.velocity + cross(self.omega, arm)) @ self.contact.normal)
        return "impact" if approach >= self.roller.roll_speed(self.contact.normal) else "roll"

    def impact(self) -> str:
        sim, contact = self.sim, self.contact
        if len(self.impacts) >= sim.cfg.motion.max_impacts:
            return "max_impacts"
        result = resolve(self.shape, self.centre, self.velocity, self.axis, self.omega,
                         contact.normal, sim.laws[contact.ground],
                         sim.grounds[contact.ground].rho_c0, sim.cfg.impact_solver,
                         sim.cfg.motion, self.tick)
        if result is None:
            return "roll"
        self.rec.add(self.t, self.centre, self.axis, self.velocity, self.omega, "impact")
        self.impacts.append({"block": self.index, "impact": len(self.impacts), "t": self.t,
                             "x": contact.point[0], "y": contact.point[1],
                             "z": contact.point[2], "ground": sim.names[contact.ground],
                             **result.record})
        self.t += result.duration
        self.velocity, self.axis, self.omega = result.velocity, result.axis, result.omega
        try:
            self.centre = settle(sim.terrain, self.shape, result.centre, self.axis,
                                 contact.normal)
        except IntegrationFailed:
            return "stalled"
        self.rec.add(self.t, self.centre, self.axis, self.velocity, self.omega, "impact")
        if result.outcome == "bounce":
            self.touching, self.kind = True, "rebound"
            return "flight"
        self.contact = sim.terrain.contact(self.centre, self.shape.matrix(self.axis))
        return "roll"

    def roll(self) -> str:
        state = self.roller.start(self.contact, self.velocity, self.omega, self.t)
        done = self.roller.run(state, self.sim.cfg.motion.t_end, self.rec.rolling(self.roller),
                               self.tick)
        s = done.state
        self.t, self.velocity, self.omega = s.t, s.velocity, s.omega
        self.axis = rolling_axis(done.normal, self.velocity, self.rec.last_axis)
        self.centre = s.point + self.roller.radius * done.normal
        if done.reason == "arrest":
            self.rec.add(self.t, self.centre, self.axis, self.velocity, self.omega, "rest")
            return "arrested"
        if done.reason == "takeoff":
            self.touching, self.kind = True, "rolloff"
            return "flight"
        if done.reason == "kink":
            self.contact = Contact(s.point.copy(), done.normal, s.ground, s.piece)
            return "impact"
        return {"left": "left_terrain", "time": "time_limit"}.get(done.reason, done.reason)
