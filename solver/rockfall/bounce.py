"""A ground impact of the block, resolved by the ellipsoid-impact module in the local n-t frame.

Local frame at the contact (the impact module's, Dattola et al. 2023, Sect. 2.1): n into
the ground (minus the upward surface normal), t along the tangential velocity of the centre
(so ``v_t >= 0`` and ``theta_in = atan2(v_t, v_n)``), w = t x n, which makes the module's
clockwise theta (t to the right, n down) a right-handed rotation about w. Inputs of the module:

* ``theta_0``: the angle between the major axis and n, with the sign of the axis' lean towards
  -t (``e_H = cos(theta_0) n - sin(theta_0) t``). In 3-D an axis out of the n-t plane is turned
  about n into the plane: its angle to n, hence its support distance and the size of the
  footprint, is kept;
* ``omega_0``: the spin about w; the slope angle from gravity, ``atan2(g.t, g.n)``.

Back in 3-D: ``v = v_n' n + v_t' t``, the spin about w replaced by the module's, the axis turned
about w by the module's rotation, the centre moved by ``u_n n + u_t t``. The motion across the
impact plane (3-D only) meets the block-ground friction ``tan(phi'_b)`` of the slider at the
block's lowest point: a Coulomb impulse on the slip across the plane, at most the module's
normal impulse ``int N dt`` times ``tan(phi'_b)`` and at most what stops the slip (rigid-body
impulse with the full inertia tensor), so it can only dissipate energy.

Outcome. The module ends an impact by loss of adherence (``bounce``), by toppling of the
equivalent foundation (``topple``: the resultant reaches the footprint edge) or with the block
still in contact at ``t_max`` (``stop``). As in HyStone with this model, a bounce is followed
by a flight and a topple by rolling; a bounce whose rebound (the outward normal speed u of the
centre) would lift the block by less than ``roll_height`` normal to the ground,
``u^2 < 2 g cos(beta) h``, rolls as well (STONE's flight-to-roll switch, Guzzetti et al. 2002).
With ``motion.after_topple = "rebound"`` a topple is judged like a bounce, by its rebound.
The impact's recorded e_t is read as the impact module reads it (docs/references.md, Eq. R3):
after a topple, once the slip at the contact has stopped; the velocity handed to the rolling
phase is the one at the toppling, whose slip the rolling phase's sliding then removes.
An impact the module cannot integrate (its stiff solver gives up) is recorded with
``end = "failed"`` and no coefficients, and the block rolls on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.integrate import trapezoid

from solver.impact.dynamics import ImpactSetup, simulate
from solver.impact.restitution import coefficients
from solver.rockfall.body import Shape, unit
from solver.rotation import cross, rotate_about_axis


@dataclass
class Frame:
    """The local n-t-w frame of one impact and the module's inputs (radians, SI)."""

    n: np.ndarray
    t: np.ndarray
    w: np.ndarray
    v_n: float
    v_t: float
    theta_0: float
    omega_0: float
    slope: float


def local_frame(velocity, axis, omega, normal, gravity: float) -> Frame:
    """The impact frame for a block with ``velocity``, ``axis``, ``omega`` touching ground of
    upward unit ``normal``."""
    n = -normal
    g = np.array([0.0, 0.0, -gravity])
    v_n = float(velocity @ n)
    tangential = velocity - v_n * n
    v_t = float(np.linalg.norm(tangential))
    if v_t > 1e-12 * max(abs(v_n), 1e-300):
        t = tangential / v_t
    else:
        downhill = g - float(g @ n) * n
        fallback = downhill if np.linalg.norm(downhill) > 1e-9 * gravity else \
            cross(n, [0.0, 1.0, 0.0])
        t, v_t = unit(fallback), 0.0
    w = cross(t, n)
    lower = axis if float(axis @ n) >= 0.0 else -axis
    angle = math.acos(min(1.0, max(-1.0, float(lower @ n))))
    theta_0 = -angle if float(lower @ t) > 0.0 else angle
    return Frame(n, t, w, v_n, v_t, theta_0, float(omega @ w),
                 math.atan2(float(g @ t), float(g @ n)))


@dataclass
class ImpactResult:
    """The block after the impact, the impact's record and what comes next."""

    centre: np.ndarray
    velocity: np.ndarray
    axis: np.ndarray
    omega: np.ndarray
    duration: float
    outcome: str
    record: dict


def resolve(shape: Shape, centre, velocity, axis, omega, normal, law, rho_c0: float,
            solver, motion, tick=None) -> ImpactResult | None:
    """Run the impact module for a block touching ground of upward ``normal``; ``None`` when
    the module's contact point is not moving into the ground (a graze: no impact).
    ``tick()`` is called while the impact integrates (solver.guard)."""
    f = local_frame(velocity, axis, omega, normal, motion.gravity)
    setup = ImpactSetup(mass=shape.mass, semi_h=shape.semi_h, semi_r=shape.semi_r,
                        theta_0=f.theta_0, speed=math.hypot(f.v_n, f.v_t),
                        theta_in=math.atan2(f.v_t, f.v_n), omega_0=f.omega_0, slope=f.slope,
                        gravity=motion.gravity, law=law, method=solver.method, rtol=solver.rtol,
                        atol=solver.atol, t_max=solver.t_max)
    if f.v_n + setup.contact_arm_0 * f.omega_0 <= 0.0:
        return None
    inputs = {"speed_in": setup.speed, "theta_in": math.degrees(setup.theta_in),
              "theta_0": math.degrees(f.theta_0), "omega_in": math.degrees(f.omega_0),
              "slope": math.degrees(f.slope),
              "energy_in": shape.kinetic_energy(velocity, omega, axis)}
    try:
        history = simulate(setup, rho_c0, tick)
    except RuntimeError:
        failed = dict.fromkeys(("e_n", "e_t", "e_energy", "e_contact", "max_force",
                                "max_penetration", "duration", "normal_impulse"), math.nan)
        return ImpactResult(centre, velocity, axis, omega, 0.0, "roll",
                            {**inputs, **failed, "end": "failed", "outcome": "roll",
                             "energy_out": inputs["energy_in"]})
    coef = coefficients(setup, history)
    u_n, u_t, theta, v_n, v_t, spin = (float(v) for v in history.y[:6, -1])
    lower = axis if float(axis @ f.n) >= 0.0 else -axis
    new_axis = rotate_about_axis(lower, f.w, theta)
    lateral = velocity - f.v_n * f.n - f.v_t * f.t
    new_velocity = v_n * f.n + v_t * f.t + lateral
    new_omega = omega + (spin - f.omega_0) * f.w
    impulse = float(trapezoid(history.derived["N"], history.t))
    new_velocity, new_omega = _lateral_friction(shape, new_axis, new_velocity, new_omega, f,
                                                law.mu_b * impulse)
    outcome = next_phase(history.end, -v_n, f.slope, motion)
    record = {**inputs, "e_n": coef["e_n"], "e_t": coef["e_t"], "e_energy": coef["e_energy"],
              "e_contact": coef["e_contact"], "max_force": coef["max_force"],
              "max_penetration": coef["max_penetration"], "duration": coef["duration"],
              "end": history.end, "outcome": outcome,
              "energy_out": shape.kinetic_energy(new_velocity, new_omega, new_axis),
              "normal_impulse": impulse}
    return ImpactResult(centre + u_n * f.n + u_t * f.t, new_velocity, new_axis, new_omega,
                        coef["duration"], outcome, record)


def next_phase(end: str, outward: float, slope: float, motion) -> str:
    """``bounce`` or ``roll`` after an impact that ended by ``end`` with the centre leaving
    the ground at the normal speed ``outward`` (module docstring)."""
    flies = ("bounce", "topple") if motion.after_topple == "rebound" else ("bounce",)
    lift = 2.0 * motion.gravity * math.cos(slope) * motion.roll_height
    return "bounce" if end in flies and outward * abs(outward) >= lift else "roll"


def _lateral_friction(shape: Shape, axis, velocity, omega, f: Frame, limit: float):
    """Coulomb impulse across the impact plane at the lowest point (module docstring)."""
    arm = shape.support(axis, f.n)
    slip = float((velocity + cross(omega, arm)) @ f.w)
    if slip == 0.0 or limit <= 0.0:
        return velocity, omega
    inv = shape.inverse_inertia(axis)
    compliance = 1.0 / shape.mass + float(f.w @ cross(inv @ cross(arm, f.w), arm))
    impulse = -math.copysign(min(limit, abs(slip) / compliance), slip) * f.w
    return velocity + impulse / shape.mass, omega + inv @ cross(arm, impulse)
