"""The sphere-cup benchmark of Gallotti et al. 2020, section 3: N equal masses m on a horizontal
circle of colatitude theta inside a frictionless sphere cup of radius R_s, initial speed v0 tangent
to the circle. The motion stays on the circle and every RB force equals (Eq. 13, Eq. 12.2 for N = 3)

    H = (M g / N) / (2 sin(pi / N)) * (tan(theta) - v0^2 / (R_s g sin(theta))),

repulsive when positive, with M = N m. The "r" of Eq. (12.2) is R_s: solving Eqs. (10)-(11)
for F_r and H gives exactly this, and the reaction F_r = m g / cos(theta) (Eq. 12.1) for any N.
H vanishes at the escape speed v0^2 = R_s g sin(theta) tan(theta).

RB forces and reactions are compared with the theory at every output frame, link lengths and
the total energy after every time step (simulate.py). With N > 3 the ring is not rigid and a
compressed ring (H > 0) buckles away from the circle, so Eq. (13) is checked in tension.
"""

from __future__ import annotations

import math

import numpy as np

from solver.pointmass.config import Config
from solver.pointmass.dynamics import Frame, Model
from solver.pointmass.forces import link_geometry


def ring_force_theory(n: int, mass: float, g: float, radius: float, theta: float,
                      v0: float) -> float:
    """H of Gallotti et al. 2020 Eq. (13) (Eq. 12.2 for n = 3)."""
    return mass * g / (2.0 * math.sin(math.pi / n)) * (
        math.tan(theta) - v0 ** 2 / (radius * g * math.sin(theta)))


def applies(cfg: Config) -> bool:
    """True for a frictionless dry sphere cup with an RB ring of masses."""
    return (cfg.surface.kind == "sphere_cup" and cfg.grid.kind == "ring"
            and cfg.links.sides == "rb" and cfg.friction.mu == 0.0
            and cfg.surface.z_sea == -math.inf)


class SphereCupCheck:
    """Tracks the worst RB-force, reaction and link-length errors against the theory."""

    def __init__(self, cfg: Config, model: Model):
        body = model.body
        self.m, self.g = float(body.m[0]), cfg.gravity
        radius = float(np.hypot(*body.xy[0]))
        self.theta = math.asin(radius / cfg.surface.radius)
        v0 = float(np.hypot(*body.v[0]))
        self.h_theory = ring_force_theory(len(body.m), self.m, self.g, cfg.surface.radius,
                                          self.theta, v0)
        self.reaction_theory = self.m * self.g / math.cos(self.theta)
        self.escape = abs(self.h_theory) < 1e-9 * self.m * self.g
        self.model = model
        self.force_err = 0.0
        self.reaction_err = 0.0

    def update(self, frame: Frame) -> None:
        dh = np.max(np.abs(frame.h - self.h_theory))
        scale = self.m * self.g if self.escape else abs(self.h_theory)
        self.force_err = max(self.force_err, float(dh / scale))
        dr = np.max(np.abs(frame.reaction - self.reaction_theory)) / self.reaction_theory
        self.reaction_err = max(self.reaction_err, float(dr))

    def state(self) -> dict:
        """The worst errors so far (a checkpoint)."""
        return {"force_err": self.force_err, "reaction_err": self.reaction_err}

    def restore(self, state: dict) -> None:
        self.force_err, self.reaction_err = state["force_err"], state["reaction_err"]

    def results(self) -> dict:
        out = {"theta_deg": math.degrees(self.theta), "force_theory": self.h_theory,
               "escape": self.escape, "reaction_rel_error_max": self.reaction_err}
        if self.escape:
            out["escape_force_over_weight_max"] = self.force_err
        else:
            out["force_rel_error_max"] = self.force_err
        return out


def link_length_error(r3: np.ndarray, pairs: np.ndarray, l0: np.ndarray) -> float:
    """max |l - l0| / l0 over the links ``pairs`` (0 when there are none)."""
    if len(pairs) == 0:
        return 0.0
    return float(np.max(np.abs(link_geometry(r3, pairs)[1] - l0) / l0))
