"""Free flight: the ballistic path, exact or with air drag, and the exact first ground contact.

Path of the centre of mass (HyStone's kinematic free fall, Agliardi & Crosta 2003):

* without drag, exact: ``c(t) = c0 + v0 t + g t^2 / 2``, ``v(t) = v0 + g t``;
* with quadratic drag ``F = -rho_air C_d A |v| v / 2`` (A: frontal area of the equal-volume
  sphere), ``dv/dt = g - k |v| v`` with ``k = rho_air C_d A / (2 m)``, integrated by scipy's
  DOP853 at ``rtol = 1e-12`` (8th order, dense output of order 7).

The rotation is torque-free in both cases (:class:`solver.rockfall.body.FreeRotation`, exact).

Ground contact (event location). The gap ``g(t)`` of the terrain (a signed lower bound of the
distance between block and ground, :mod:`solver.rockfall.terrain`) is marched by conservative
advancement: no point of the block moves faster than ``U = |v| + |omega| H``, so the next step
``0.9 g / (U + g_grav dt)`` cannot step over a contact. Steps never fall below the fine step in
which block points move R/20 and the block turns 0.05 rad (grazes shallower than about R/40 can
be missed there). The first step with ``g <= 0`` brackets the touch, which brentq then locates
to round-off (``xtol = 1e-13 s``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import brentq, minimize_scalar

from solver.guard import TICK_EVERY, solve
from solver.rockfall.body import FreeRotation, Shape
from solver.rockfall.terrain import Contact

CA_SAFETY = 0.9
FINE_TRAVEL = 0.05
FINE_TURN = 0.05
MAX_STEPS = 1_000_000
"""Most marching steps of one flight (a 600 s flight at 100 m/s of a 3 m block takes
400,000 fine steps); a flight that needs more, or whose gap stops being finite, stalls."""
MAX_EVALUATIONS = 1_000_000
"""Most right-hand-side evaluations of a flight with drag."""


class Ballistic:
    """Exact drag-free path from centre ``c0`` and velocity ``v0``."""

    def __init__(self, c0: np.ndarray, v0: np.ndarray, gravity: np.ndarray,
                 rotation: FreeRotation):
        self.c0, self.v0, self.gravity, self.rotation = c0, v0, gravity, rotation

    def centre(self, tau: float) -> np.ndarray:
        return self.c0 + self.v0 * tau + 0.5 * self.gravity * tau * tau

    def velocity(self, tau: float) -> np.ndarray:
        return self.v0 + self.gravity * tau

    def state(self, tau: float):
        axis, omega = self.rotation.at(tau)
        return self.centre(tau), self.velocity(tau), axis, omega


class Dragged(Ballistic):
    """Path with quadratic air drag, integrated once up to ``tau_max`` or until the centre
    sinks below ``z_floor`` (below every ground point)."""

    def __init__(self, c0, v0, gravity, rotation, drag_factor: float, tau_max: float,
                 z_floor: float, tick=None):
        super().__init__(c0, v0, gravity, rotation)

        def rhs(_t, y):
            v = y[3:]
            return np.concatenate([v, gravity - drag_factor * np.linalg.norm(v) * v])

        def floor(_t, y):
            return y[2] - z_floor
        floor.terminal = True
        scale = max(float(np.linalg.norm(v0)), 1.0)
        self.sol = solve(solve_ivp, rhs, (0.0, tau_max), np.concatenate([c0, v0]),
                         limit=MAX_EVALUATIONS, tick=tick, method="DOP853", rtol=1e-12,
                         atol=1e-12 * scale, dense_output=True, events=floor)
        self.tau_end = float(self.sol.t[-1])

    def centre(self, tau: float) -> np.ndarray:
        return self.sol.sol(tau)[:3]

    def velocity(self, tau: float) -> np.ndarray:
        return self.sol.sol(tau)[3:]


def make_path(shape: Shape, c0, v0, axis, omega, motion, tau_max: float, z_floor: float,
              tick=None):
    """The flight path of a block leaving ``c0`` with ``v0``, ``axis``, ``omega``; a path with
    drag that cannot be integrated raises solver.guard.IntegrationFailed."""
    gravity = np.array([0.0, 0.0, -motion.gravity])
    rotation = FreeRotation(shape, axis, omega)
    k = 0.5 * motion.air_density * motion.drag_coefficient * shape.frontal_area / shape.mass
    if k > 0.0:
        return Dragged(c0, v0, gravity, rotation, k, tau_max, z_floor, tick)
    return Ballistic(c0, v0, gravity, rotation)


@dataclass
class FlightEnd:
    """How a flight ended after ``tau`` seconds: ``contact`` (with ``contact``), ``left``
    (the block left the terrain), ``time`` (the time limit) or ``stalled`` (no contact
    found within MAX_STEPS, or a gap that is not finite)."""

    tau: float
    reason: str
    contact: Contact | None = None


def _fine_step(path, shape: Shape, tau: float, gravity: float) -> float:
    speed = float(np.linalg.norm(path.velocity(tau))) + path.rotation.spin_speed * shape.semi_h
    travel = FINE_TRAVEL * shape.semi_r / speed if speed > 0.0 else math.sqrt(
        FINE_TRAVEL * shape.semi_r / gravity)
    turn = FINE_TURN / path.rotation.spin_speed if path.rotation.spin_speed > 0.0 else math.inf
    return min(travel, turn)


def first_contact(path, terrain, shape: Shape, tau_max: float, touching: bool,
                  gravity: float, tick=None) -> FlightEnd:
    """March the gap along ``path`` to the first touch (see the module docstring), in at
    most MAX_STEPS steps; ``tick()`` is called every solver.guard.TICK_EVERY of them.

    ``touching``: the flight starts from a contact the block is leaving; the search begins
    once the gap has opened (if it closes again within the fine steps, the flight ends at once).
    """
    limit = min(tau_max, getattr(path, "tau_end", math.inf))
    margin = 2.0 * shape.semi_h

    def gap(tau: float) -> float:
        c, _, axis, _ = path.state(tau)
        return terrain.gap(c, shape.matrix(axis), shape.semi_r)

    def outside(tau: float) -> float:
        c = path.centre(tau)
        return terrain.outside_distance(c[0], c[1], margin)

    def touch(tau: float) -> FlightEnd:
        c, _, axis, _ = path.state(tau)
        return FlightEnd(tau, "contact", terrain.contact(c, shape.matrix(axis)))

    if outside(0.0) > 0.0:
        return FlightEnd(0.0, "left")
    tau, g = 0.0, gap(0.0)
    tol = 1e-9 * shape.semi_r
    if touching:
        for _ in range(10_000):
            nxt = tau + _fine_step(path, shape, tau, gravity)
            if nxt > limit:
                return FlightEnd(limit, "time")
            g_next = gap(nxt)
            if g_next < -tol:
                return touch(tau)
            tau, g = nxt, g_next
            if g > tol:
                break
        else:
            return touch(tau)
    for count in range(MAX_STEPS):
        if tick is not None and count % TICK_EVERY == TICK_EVERY - 1:
            tick()
        if not math.isfinite(g):
            return FlightEnd(tau, "stalled")
        if tau >= limit:
            return FlightEnd(limit, "time")
        speed = float(np.linalg.norm(path.velocity(tau))) + path.rotation.spin_speed * \
            shape.semi_h
        guess = g / speed if speed > 0.0 else math.sqrt(2.0 * g / gravity)
        step = max(CA_SAFETY * g / (speed + gravity * guess), _fine_step(path, shape, tau,
                                                                           gravity))
        nxt = min(tau + step, limit)
        if outside(nxt) > 0.0:
            exit_tau = brentq(outside, tau, nxt, xtol=1e-13)
            if gap(exit_tau) > 0.0:
                return FlightEnd(exit_tau, "left")
            nxt = exit_tau
        g_next = gap(nxt)
        if g_next <= 0.0:
            root = brentq(gap, tau, nxt, xtol=1e-13, rtol=8.9e-16)
            return touch(root)
        tau, g = nxt, g_next
    return FlightEnd(tau, "stalled")


def sample_times(tau_end: float, dt: float) -> np.ndarray:
    """``0, dt, 2 dt, ...`` below ``tau_end``, and ``tau_end``."""
    return np.append(np.arange(0.0, tau_end, dt), tau_end)


def highest_point(path, terrain, tau_end: float, times: np.ndarray) -> tuple[float, float]:
    """Largest height of the centre above the ground below it over the flight, and when.

    The samples bracket the maximum, which a bounded scalar search then refines."""
    def height(tau: float) -> float:
        c = path.centre(tau)
        return float(c[2] - terrain.elevation(c[0], c[1]))

    values = np.array([height(t) for t in times])
    k = int(np.argmax(values))
    lo, hi = times[max(k - 1, 0)], times[min(k + 1, len(times) - 1)]
    if hi > lo:
        best = minimize_scalar(lambda t: -height(t), bounds=(lo, hi), method="bounded",
                               options={"xatol": 1e-10 * max(1.0, tau_end)})
        if -best.fun > values[k]:
            return float(-best.fun), float(best.x)
    return float(values[k]), float(times[k])
