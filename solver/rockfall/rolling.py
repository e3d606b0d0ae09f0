"""Rolling and sliding on the ground (the dynamic rolling phase of HyStone, Agliardi & Crosta
2003; phase rules of STONE, Guzzetti et al. 2002).

The block rolls on its side: its major axis lies in the tangent plane across the motion and
it rolls like a sphere of radius R with the axial inertia ``I = k m R^2``, ``k = 2/5``. The
contact point p moves on the surface z = f(x, y) with the upward normal n; per unit mass the
gravity ``G = (0, 0, -g)`` has the tangential part ``G_t = G - (G.n) n``, the surface bends
the path with the normal acceleration ``kappa = v^T Hess(f) v / sqrt(1 + |grad f|^2)`` (the
point-mass module's Eq. 4) and the normal reaction is ``N = kappa - G.n``.

* Rolling, resisted by the moment ``mu_r N R`` (``mu_r`` the ground's rolling resistance)::

      (1 + k) a_t = G_t - mu_r N v/|v|          (5/7 g sin(beta) on a plane for mu_r = 0)

  with the static friction ``F = a_t - G_t`` it needs; once ``|F| > tan(phi'_b) N`` it slides.
* Sliding, slip velocity ``u = v + omega x (-R n)``::

      a_t = G_t - mu_s N u/|u|,   k R^2 domega/dt = R mu_s N n x u/|u| - mu_r N R omega_t/|omega_t|

  with ``mu_s = tan(phi'_b)``; the slip vanishes when it reverses, then the block rolls.
* Arrest: the speed falls to ``stop_speed`` where the ground can hold the block,
  ``|G_t| <= min(mu_r, mu_s) N``; elsewhere it rolls on (back down a counter-slope).
* Segments of a profile: the equations are integrated on one straight piece at a time (their
  right-hand side is then constant, so DOP853 is exact). At a concave vertex the block meets
  the next piece when its centre reaches the crossing of the two offset lines; if it then
  approaches that piece with a normal speed of at least ``sqrt(2 g cos(beta) roll_height)`` it
  impacts it (the impact module), else its normal velocity is dropped (STONE). At a convex
  vertex it takes off. On a raster it takes off where ``N`` falls to zero.

The block's centre is ``p + R n`` (exact on planes; on a DEM the offset surface is taken as
parallel, which holds for curvature radii much larger than R).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp

from solver.guard import IntegrationFailed, solve
from solver.rockfall.body import Shape, unit
from solver.rotation import cross

K_SPHERE = 0.4
SLIP_TOL = 1e-9
MAX_STRETCHES = 10_000
RTOL = 1e-8
MAX_EVALUATIONS = 100_000
"""Most right-hand-side evaluations of one stretch (DOP853 needs tens on a straight piece);
a stretch that needs more, where the friction chatters about a slip reversal, stalls."""


@dataclass
class RollState:
    """Contact point, velocity, spin, mode (``roll`` or ``slide``) and profile piece."""

    t: float
    point: np.ndarray
    velocity: np.ndarray
    omega: np.ndarray
    mode: str
    piece: int | None
    ground: int


@dataclass
class RollEnd:
    """Why rolling ended: ``arrest``, ``takeoff``, ``kink`` (an impact on the next profile
    piece), ``left``, ``time`` or ``stalled`` (endless mode switching); ``normal`` is the
    upward normal of the ground under the block then."""

    reason: str
    state: RollState
    normal: np.ndarray


class LocalSurface:
    """Local surface of the terrain along one piece."""

    def __init__(self, terrain, piece, gravity: float):
        self.terrain, self.piece, self.g = terrain, piece, gravity
        self._last = (None, None)

    def local(self, x: float, y: float):
        """Upward normal, normal curvature matrix terms and slope gradient at (x, y); the last
        point is remembered (the event functions of a step all ask for the same point)."""
        key = (float(x), float(y))
        if self._last[0] == key:
            return self._last[1]
        self._last = (key, self._evaluate(x, y))
        return self._last[1]

    def _evaluate(self, x: float, y: float):
        f, fx, fy, fxx, fxy, fyy = self.terrain.surface(x, y, self.piece)
        q = math.sqrt(1.0 + fx * fx + fy * fy)
        return np.array([-fx / q, -fy / q, 1.0 / q]), (fxx, fxy, fyy), q, fx, fy

    def forces(self, xy, v_plan):
        """Normal n, 3-D velocity, tangential gravity G_t, normal reaction N (per mass) and
        curvature acceleration kappa at a contact point moving with plan velocity ``v_plan``."""
        n, (fxx, fxy, fyy), q, fx, fy = self.local(xy[0], xy[1])
        vx, vy = v_plan
        v3 = np.array([vx, vy, fx * vx + fy * vy])
        kappa = (vx * vx * fxx + 2.0 * vx * vy * fxy + vy * vy * fyy) / q
        gravity = np.array([0.0, 0.0, -self.g])
        g_t = gravity - float(gravity @ n) * n
        return n, v3, g_t, kappa - float(gravity @ n), kappa


def _direction(v3, g_t) -> np.ndarray:
    speed = float(np.linalg.norm(v3))
    if speed > 1e-12:
        return v3 / speed
    size = float(np.linalg.norm(g_t))
    return g_t / size if size > 0.0 else np.zeros(3)


def rolling_friction(g_t, normal_force: float, mu_r: float, direction) -> tuple:
    """Tangential acceleration and the static friction it needs, per unit mass."""
    a_t = (g_t - mu_r * normal_force * direction) / (1.0 + K_SPHERE)
    return a_t, a_t - g_t


class Roller:
    """Integrates the rolling/sliding phase of one block on one terrain."""

    def __init__(self, shape: Shape, terrain, grounds: list, motion):
        self.shape, self.terrain, self.grounds, self.motion = shape, terrain, grounds, motion
        self.radius = shape.semi_r

    def coefficients(self, ground: int) -> tuple[float, float]:
        g = self.grounds[ground]
        return g.rolling_resistance, math.tan(math.radians(g.phi_b))

    def roll_speed(self, normal) -> float:
        """Normal approach speed below which a contact rolls instead of impacting."""
        return math.sqrt(max(2.0 * self.motion.gravity * float(normal[2])
                             * self.motion.roll_height, 0.0))

    def rhs(self, ground: LocalSurface, mode: str, mu_r: float, mu_s: float):
        radius = self.radius

        def fun(_t, y):
            n, v3, g_t, normal_force, kappa = ground.forces(y[0:2], y[2:4])
            out = np.zeros(7)
            if mode == "roll":
                a_t, _ = rolling_friction(g_t, normal_force, mu_r, _direction(v3, g_t))
            else:
                omega = y[4:7]
                slip = v3 - radius * cross(omega, n)
                u = unit(slip) if np.linalg.norm(slip) > 0.0 else np.zeros(3)
                a_t = g_t - mu_s * normal_force * u
                spin_t = omega - float(omega @ n) * n
                size = float(np.linalg.norm(spin_t))
                resist = spin_t / size if size > 0.0 else np.zeros(3)
                out[4:7] = (mu_s * normal_force * cross(n, u) - mu_r * normal_force * resist) \
                    / (K_SPHERE * radius)
            a3 = a_t + kappa * n
            out[0:2] = y[2:4]
            out[2:4] = a3[0:2]
            return out
        return fun

    def state_vector(self, s: RollState) -> np.ndarray:
        return np.concatenate([s.point[:2], s.velocity[:2], s.omega])

    def unpack(self, ground: LocalSurface, t: float, y, mode: str, piece,
               index: int) -> RollState:
        n, v3, _, _, _ = ground.forces(y[0:2], y[2:4])
        f = ground.terrain.surface(y[0], y[1], piece)[0]
        omega = cross(n, v3) / self.radius if mode == "roll" else np.array(y[4:7])
        return RollState(t, np.array([y[0], y[1], f]), v3, omega, mode, piece, index)

    def _events(self, ground: LocalSurface, mode: str, mu_r: float, mu_s: float, s: RollState,
                stop_speed: float, margin: float):
        radius = self.radius
        events, names = [], []

        def arrest(_t, y):
            _, v3, _, _, _ = ground.forces(y[0:2], y[2:4])
            return float(np.linalg.norm(v3)) - stop_speed
        arrest.direction = -1.0
        events.append(arrest)
        names.append("arrest")
        if mode == "roll":
            def slips(_t, y):
                n, v3, g_t, normal_force, _ = ground.forces(y[0:2], y[2:4])
                _, need = rolling_friction(g_t, normal_force, mu_r, _direction(v3, g_t))
                return mu_s * normal_force - float(np.linalg.norm(need))
            slips.direction = -1.0
            events.append(slips)
            names.append("slip")
        else:
            first = self._slip_direction(ground, s, mu_r)

            def sticks(_t, y):
                n, v3, _, _, _ = ground.forces(y[0:2], y[2:4])
                return float((v3 - radius * cross(y[4:7], n)) @ first)
            sticks.direction = -1.0
            events.append(sticks)
            names.append("stick")
        if s.piece is not None:
            lo, hi = self._piece_limits(s.piece)

            def low(_t, y):
                return y[0] - lo

            def high(_t, y):
                return y[0] - hi
            low.direction, high.direction = -1.0, 1.0
            events += [low, high]
            names += ["piece_low", "piece_high"]
        else:
            def takeoff(_t, y):
                return ground.forces(y[0:2], y[2:4])[3]
            takeoff.direction = -1.0

            def leaves(_t, y):
                return self.terrain.outside_distance(y[0], y[1], margin)
            leaves.direction = 1.0
            events += [takeoff, leaves]
            names += ["takeoff", "left"]
        for e in events:
            e.terminal = True
        return events, names

    def _slip_direction(self, ground: LocalSurface, s: RollState, mu_r: float) -> np.ndarray:
        """Direction of the slip at the start of a sliding stretch; a block that starts to
        slip from rolling slips against the friction it would need."""
        n, v3, g_t, nf, _ = ground.forces(s.point[:2], s.velocity[:2])
        slip = v3 - self.radius * cross(s.omega, n)
        if np.linalg.norm(slip) > SLIP_TOL * max(1.0, float(np.linalg.norm(v3))):
            return unit(slip)
        _, need = rolling_friction(g_t, nf, mu_r, _direction(v3, g_t))
        return -unit(need)

    def start(self, contact, velocity, omega, t: float) -> RollState:
        """The rolling state of a block touching ``contact``: its normal velocity and spin
        are dropped; it rolls if its slip is nil, else it slides."""
        n, piece = contact.normal, contact.piece
        if contact.vertex:
            node = piece + 1 if contact.point[0] >= self.terrain.px[piece + 1] else piece
            piece = node if float(velocity[0]) >= 0.0 else node - 1
            piece = min(max(piece, 0), self.terrain.n_pieces() - 1)
            n = self.terrain.normals[piece]
        v_t = velocity - float(velocity @ n) * n
        spin = omega - float(omega @ n) * n
        slip = v_t - self.radius * cross(spin, n)
        rolls = np.linalg.norm(slip) <= SLIP_TOL * max(1.0, float(np.linalg.norm(v_t)))
        return RollState(t, contact.point.copy(), v_t, cross(n, v_t) / self.radius if rolls
                         else spin, "roll" if rolls else "slide", piece, contact.ground)

    def _turn(self, piece: int, other: int) -> float:
        """Angle from piece to other along +x (positive: concave)."""
        slopes = self.terrain.slope
        return math.atan(slopes[other]) - math.atan(slopes[piece])

    def _piece_limits(self, piece: int) -> tuple[float, float]:
        """x of the contact point where the block leaves the piece at either end: the vertex,
        or before a concave vertex the point where the block also touches the next piece
        (``R tan(turn / 2)`` along the piece)."""
        lo, hi = self.terrain.piece_span(piece)
        cos_beta = math.cos(math.atan(self.terrain.slope[piece]))
        n = self.terrain.n_pieces()
        if piece + 1 < n and self._turn(piece, piece + 1) > 0.0:
            hi -= self.radius * math.tan(0.5 * self._turn(piece, piece + 1)) * cos_beta
        if piece > 0 and self._turn(piece - 1, piece) > 0.0:
            lo += self.radius * math.tan(0.5 * self._turn(piece - 1, piece)) * cos_beta
        return lo, hi

    def run(self, s: RollState, t_limit: float, sample, tick=None) -> RollEnd:
        """Roll from state ``s`` until one of the ends (:class:`RollEnd`). Each integrated
        stretch goes to ``sample(solution, surface, mode, piece, ground)`` for the output.
        A block too slow to go on where the ground cannot hold it restarts with the arrest
        threshold just above its speed, so that the event does not fire again at once. A
        stretch the integrator cannot finish (solver.guard: MAX_EVALUATIONS, a non-finite
        state) ends the rolling as ``stalled``; ``tick()`` is called while it integrates."""
        stop_speed = self.motion.stop_speed
        margin = 2.0 * self.shape.semi_h
        for _ in range(MAX_STRETCHES):
            ground = LocalSurface(self.terrain, s.piece, self.motion.gravity)
            mu_r, mu_s = self.coefficients(s.ground)
            if s.mode == "roll":
                n, v3, g_t, nf, _ = ground.forces(s.point[:2], s.velocity[:2])
                _, need = rolling_friction(g_t, nf, mu_r, _direction(v3, g_t))
                if np.linalg.norm(need) > mu_s * nf:
                    s.mode = "slide"
                    s.omega = cross(n, v3) / self.radius
            events, names = self._events(ground, s.mode, mu_r, mu_s, s, stop_speed, margin)
            scale = max(float(np.linalg.norm(s.velocity)), 1.0)
            try:
                sol = solve(solve_ivp, self.rhs(ground, s.mode, mu_r, mu_s), (s.t, t_limit),
                            self.state_vector(s), limit=MAX_EVALUATIONS, tick=tick,
                            method="DOP853", rtol=RTOL, atol=RTOL * scale, events=events,
                            dense_output=True)
            except IntegrationFailed:
                return RollEnd("stalled", s, ground.forces(s.point[:2], s.velocity[:2])[0])
            sample(sol, ground, s.mode, s.piece, s.ground)
            fired = [names[i] for i, te in enumerate(sol.t_events) if len(te)]
            end = self.unpack(ground, float(sol.t[-1]), sol.y[:, -1], s.mode, s.piece, s.ground)
            if not fired:
                return RollEnd("time", end, ground.forces(end.point[:2], end.velocity[:2])[0])
            what = fired[0]
            n, v3, g_t, nf, _ = ground.forces(end.point[:2], end.velocity[:2])
            if what == "arrest":
                if np.linalg.norm(g_t) <= min(mu_r, mu_s) * nf:
                    end.velocity[:] = 0.0
                    end.omega[:] = 0.0
                    return RollEnd("arrest", end, n)
                stop_speed = float(np.linalg.norm(v3)) * (1.0 + 1e-9)
            elif what == "slip":
                end.mode = "slide"
            elif what == "stick":
                end.mode = "roll"
            elif what in ("takeoff", "left"):
                return RollEnd(what, end, n)
            else:
                step = 1 if what == "piece_high" else -1
                result = self._next_piece(end, step, n)
                if result is not None:
                    return result
                stop_speed = self.motion.stop_speed
            s = end
        surface = LocalSurface(self.terrain, s.piece, self.motion.gravity)
        return RollEnd("stalled", s, surface.forces(s.point[:2], s.velocity[:2])[0])

    def _next_piece(self, s: RollState, step: int, n_old) -> RollEnd | None:
        """Cross to the next profile piece; an end (takeoff, kink impact, left) or None."""
        other = s.piece + step
        if not 0 <= other < self.terrain.n_pieces():
            return RollEnd("left", s, n_old)
        turn = self._turn(min(s.piece, other), max(s.piece, other))
        if turn < 0.0:
            return RollEnd("takeoff", s, n_old)
        centre = s.point + self.radius * n_old
        n_new = self.terrain.normals[other]
        point = centre - self.radius * n_new
        approach = -float(s.velocity @ n_new)
        s.point = point
        s.piece, s.ground = other, int(self.terrain.ground[other])
        if turn > 0.0 and approach >= self.roll_speed(n_new):
            return RollEnd("kink", s, n_new)
        s.velocity = s.velocity - float(s.velocity @ n_new) * n_new
        if s.mode == "roll":
            s.omega = cross(n_new, s.velocity) / self.radius
        return None
