"""One impact: the 3-DOF block on the equivalent foundation, integrated with scipy solve_ivp.

Equations of motion (Dattola et al. 2023, Sect. 2.1: linear and angular momentum balance with
contact forces and self-weight; explicit form derived from the frame of Eq. 15, n into the
ground, t down-slope, theta clockwise: docs/references.md, Eqs. I1-I2)::

    m du_n/dt^2 = m g cos(omega) - N
    m du_t/dt^2 = m g sin(omega) - T
    I dtheta/dt^2 = -r_t N + r_n T - M          (I = m (H^2 + R^2) / 5)

with ``L = [N, T, M]`` the soil reaction applied at the footprint centre ``(r_t, r_n)``
(Eqs. 36-37). Compatibility (Eqs. 10-12) is integrated in rate form: the macro-element is
deformed by the velocity of the point where ``L`` acts,
``w = [du_n + r_t dtheta, du_t - r_n dtheta, dtheta]``, which makes the contact power
``N w_n + T w_t + M w_theta`` equal to the power the block loses; the element's normal
displacement ``u_Dc = int w_n dt`` is the sinking of Eq. (10). It differs from the geometric
sinking of Eq. (38), whose rate uses the lowest-point arm ``dr_y/dalpha`` instead of ``r_t``;
pairing Eq. (38) with the arm of Eq. (37), as the printed equations do, would create or destroy
energy whenever the block rotates, so the rate form above was chosen (inferred).

End of the impact (Dattola et al. 2023, Sect. 2.1), as terminal solve_ivp events:

* loss of adherence: the contact force ``N`` falls to zero while the contact point moves
  out of the ground (``w_n < 0``; event function ``<N> + F <w_n>/v``), or the block leaves
  the plane (geometric sinking ``u_D -> 0``): ``end = "bounce"``;
* toppling of the equivalent foundation: the resultant reaches a footprint edge,
  ``|M| = N B_t / 2``: ``end = "topple"`` (rolling starts);
* ``t_max`` reached with the block still in contact: ``end = "stop"``.

State vector: ``u_n, u_t, theta, v_n, v_t, dtheta, N_e, T_e, M_e, u_vp (3), u_ps_t, rho_c,
u_Dc`` and the work integrals ``W_spring, D_dashpot, D_vp, D_slider`` used by the energy
balance ``E_k + E_p + W_spring + D_dashpot + D_vp + D_slider = E_k0``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp

from solver.guard import solve
from solver.impact import geometry
from solver.impact.rheology import SoilLaw, element_law, foundation

N_STATE = 19
WORK = slice(15, 19)
END_EVENTS = ("bounce", "bounce", "topple")


@dataclass(frozen=True)
class ImpactSetup:
    """Everything one impact needs, in SI units and radians."""

    mass: float
    semi_h: float
    semi_r: float
    theta_0: float
    speed: float
    theta_in: float
    omega_0: float
    slope: float
    gravity: float
    law: SoilLaw
    method: str = "Radau"
    rtol: float = 1e-8
    atol: float = 1e-11
    t_max: float = 0.2

    @property
    def inertia(self) -> float:
        return float(geometry.inertia(self.mass, self.semi_h, self.semi_r))

    @property
    def initial_velocity(self) -> tuple[float, float, float]:
        return (self.speed * math.cos(self.theta_in), self.speed * math.sin(self.theta_in),
                self.omega_0)

    @property
    def contact_arm_0(self) -> float:
        """t-offset of the first contact point (the lowest point) from the centre."""
        return float(geometry.lowest_point_offset(self.semi_h, self.semi_r, self.theta_0))


@dataclass
class History:
    """Time history of one impact and its end reason."""

    t: np.ndarray
    y: np.ndarray
    derived: dict[str, np.ndarray]
    end: str


def contact_state(setup: ImpactSetup, y) -> dict:
    """Footprint, foundation and element response for the state vector ``y``."""
    geom = geometry.footprint(setup.semi_h, setup.semi_r, setup.theta_0, y[0], y[1], y[2])
    g = {k: float(v) for k, v in geom.items()}
    j_s = float(geometry.shape_factor(g["B_t"], g["B_w"]))
    fnd = foundation(setup.law, g["B_t"], g["B_w"], g["u_D"], y[14] - y[9], j_s,
                     2.0 * setup.semi_r)
    w = (y[3] + g["r_t"] * y[5], y[4] - g["r_n"] * y[5], y[5])
    force, du_ed, du_vp, du_ps, drho = element_law(setup.law, fnd, (y[6], y[7], y[8]), w, y[13])
    return {"geom": g, "fnd": fnd, "w": w, "L": force, "du_ed": du_ed, "du_vp": du_vp,
            "du_ps": du_ps, "drho": drho}


def rhs(setup: ImpactSetup, y) -> np.ndarray:
    """Time derivative of the state vector."""
    s = contact_state(setup, y)
    g, fnd, (n, t, m) = s["geom"], s["fnd"], s["L"]
    du_ed, du_vp = s["du_ed"], s["du_vp"]
    k, c = fnd.stiffness, fnd.damping
    dy = np.empty(N_STATE)
    dy[0:3] = y[3:6]
    dy[3] = setup.gravity * math.cos(setup.slope) - n / setup.mass
    dy[4] = setup.gravity * math.sin(setup.slope) - t / setup.mass
    dy[5] = (-g["r_t"] * n + g["r_n"] * t - m) / setup.inertia
    dy[6:9] = [k[i] * du_ed[i] for i in range(3)]
    dy[9:12] = du_vp
    dy[12] = s["du_ps"]
    dy[13] = s["drho"]
    dy[14] = s["w"][0]
    dy[15] = sum(y[6 + i] * du_ed[i] for i in range(3))
    dy[16] = sum(c[i] * du_ed[i] ** 2 for i in range(3))
    dy[17] = n * du_vp[0] + t * du_vp[1] + m * du_vp[2]
    dy[18] = t * s["du_ps"]
    return dy


def _events(setup: ImpactSetup):
    """Terminal events; each carries a slack of 1e-9 of its scale so that the unloaded
    onset (where they are exactly zero) does not fire."""
    energy = 0.5 * setup.mass * setup.speed ** 2

    force = energy / setup.semi_r

    def adherence(_t, y):
        s = contact_state(setup, y)
        return (max(s["L"][0], 0.0) + force * max(s["w"][0], 0.0) / setup.speed
                - 1e-9 * force)

    def detached(_t, y):
        return float(geometry.footprint(setup.semi_h, setup.semi_r, setup.theta_0,
                                        y[0], y[1], y[2])["u_D"]) + 1e-9 * setup.semi_r

    def topple(_t, y):
        s = contact_state(setup, y)
        return 0.5 * s["geom"]["B_t"] * s["L"][0] - abs(s["L"][2]) + 1e-9 * energy

    for event in (adherence, detached, topple):
        event.terminal, event.direction = True, -1.0
    return [adherence, detached, topple]


def _scales(setup: ImpactSetup) -> np.ndarray:
    r, v = setup.semi_r, setup.speed
    energy = 0.5 * setup.mass * v * v
    force = energy / r
    return np.array([r, r, 1.0, v, v, v / r, force, force, force * r, r, r, 1.0, r, 1.0, r,
                     energy, energy, energy, energy])


def jacobian(fun, t, y, scales) -> np.ndarray:
    """Forward-difference Jacobian with steps of 1e-7 of each state's scale; the work
    integrals feed no other state, so their columns are zero."""
    f0 = fun(t, y)
    out = np.zeros((N_STATE, N_STATE))
    for j in range(WORK.start):
        step = 1e-7 * scales[j] + 1e-7 * abs(y[j])
        shifted = y.copy()
        shifted[j] += step
        out[:, j] = (fun(t, shifted) - f0) / step
    return out


MAX_EVALUATIONS = 200_000
"""Most right-hand-side evaluations of one impact: fifty times the 4,000 of the shipped
impacts (a minute of Radau)."""


def simulate(setup: ImpactSetup, rho_c0: float, tick=None) -> History:
    """Integrate one impact from the onset of contact to its end event (or ``t_max``); an
    integration that cannot end raises solver.guard.IntegrationFailed (a RuntimeError).
    ``tick()`` is called every few thousand evaluations (solver.guard)."""
    y0 = np.zeros(N_STATE)
    y0[3:6] = setup.initial_velocity
    y0[13] = rho_c0

    def fun(_t, y):
        return rhs(setup, y)

    scales = _scales(setup)

    def jac(t, y):
        return jacobian(fun, t, y, scales)

    sol = solve(solve_ivp, fun, (0.0, setup.t_max), y0, limit=MAX_EVALUATIONS, tick=tick,
                method=setup.method, rtol=setup.rtol, atol=setup.atol * scales,
                events=_events(setup), jac=jac)
    end = "stop"
    for name, times in zip(END_EVENTS, sol.t_events):
        if len(times):
            end = name
    return History(t=sol.t, y=sol.y, derived=derived(setup, sol.y), end=end)


def derived(setup: ImpactSetup, y: np.ndarray) -> dict[str, np.ndarray]:
    """Contact forces, footprint and energies along a history ``y`` (states x times)."""
    rows = [contact_state(setup, y[:, j]) for j in range(y.shape[1])]
    geom = geometry.footprint(setup.semi_h, setup.semi_r, setup.theta_0, y[0], y[1], y[2])
    kin_t = 0.5 * setup.mass * (y[3] ** 2 + y[4] ** 2)
    kin_r = 0.5 * setup.inertia * y[5] ** 2
    potential = -setup.mass * setup.gravity * (y[0] * math.cos(setup.slope)
                                               + y[1] * math.sin(setup.slope))
    return {"N": np.array([r["L"][0] for r in rows]), "T": np.array([r["L"][1] for r in rows]),
            "M": np.array([r["L"][2] for r in rows]), "B_t": geom["B_t"], "B_w": geom["B_w"],
            "r_t": geom["r_t"], "r_n": geom["r_n"], "u_D": geom["u_D"], "E_kt": kin_t,
            "E_kr": kin_r, "E_p": potential, "W_contact": np.sum(y[WORK], axis=0)}
