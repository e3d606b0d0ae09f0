"""Equations of motion of the N masses on z = f(x, y) (Gallotti et al. 2020 Eqs. 1-4 and 6-9).

State: plan positions (x_i, y_i) and plan velocities (vx_i, vy_i); the masses stay on the
surface, z_i = f(x_i, y_i) and vz_i = f_x vx_i + f_y vy_i. For mass i (Eq. 1)

    m_i a_i = W_i + R_i n_i + T_i + sum_j h_ij e_ij + sum_j p_ij e_ij,

with W_i = -beta_i m_i g k the weight (beta_i = alpha = 1 - rho_w/rho_r underwater with
buoyancy, else 1: Gallotti et al. 2020, section 4's reduced mass alpha m_i in the external force,
while the inertia stays m_i), n_i the upward unit normal, p_ij the EP forces (forces.ep_forces),
h_ij the RB forces (forces.RbSystem) and T_i the basal friction.

The normal acceleration is fixed by the surface, Eq. (4):
    a_i . n_i = kappa_i = (vx^2 f_xx + 2 vx vy f_xy + vy^2 f_yy) / sqrt(1 + f_x^2 + f_y^2),
so the reaction is R_i = m_i kappa_i - n_i . (W_i + sum h + sum p). This is Eq. (2),
F_i = m_i g + m_i N_i (a_i - g) . n_i with N_i = n_i - mu v_i/|v_i|, written with the
normal part of the internal forces kept in the reaction, as the sphere-cup balance of Gallotti et
al. 2020 Eq. (11) requires (we infer this; Eq. 3 as printed drops it). Friction is
T_i = -mu_i |R_i| v_i/|v_i| with mu_i = mu on land and mu_eq (forces.equivalent_friction)
underwater. A mass slower than rest_speed takes the direction of its driving tangential force
F_t (without RB forces) instead of v, and sticks (T_i = -F_t) when mu_i |R_i| >= |F_t|.

Because |R_i| depends on the RB forces, the RB system is solved with sign(R_i) from the
estimate without RB forces and re-solved (at most 4 times) until the signs agree.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from solver.pointmass.config import Config
from solver.pointmass.forces import (RbSystem, ep_forces, equivalent_friction, link_geometry)
from solver.pointmass.grid import Body
from solver.pointmass.surface import Surface


class LeftSurface(Exception):
    """A mass left the domain where the surface is defined (off the raster)."""


@dataclass
class Frame:
    """Everything known about the system at one instant (for outputs and diagnostics)."""

    r3: np.ndarray
    v3: np.ndarray
    a3: np.ndarray
    reaction: np.ndarray
    wet: np.ndarray
    h: np.ndarray
    p: np.ndarray


class Model:
    """Accelerations of the masses of ``body`` on ``surface`` under the case's physics."""

    def __init__(self, cfg: Config, surface: Surface, body: Body):
        self.surface = surface
        self.body = body
        self.m = body.m
        self.g = cfg.gravity
        self.z_sea = cfg.surface.z_sea
        self.mu, self.mu_w = cfg.friction.mu, cfg.friction.mu_w
        self.rho_r, self.water = cfg.grid.density, cfg.water
        self.alpha = 1.0 - cfg.water.density / cfg.grid.density if cfg.water.buoyancy else 1.0
        self.rest_speed = cfg.time.rest_speed
        self.law = dict(w1=cfg.ep.w1, w2=cfg.ep.w2, w3=cfg.ep.w3, k_max=cfg.ep.k_max,
                        k_min=cfg.ep.k_min)
        r3 = self.positions(body.xy)
        self.rb = RbSystem(body.rb, len(body.m)) if len(body.rb) else None
        self.check_rank = True
        self.rb_l0 = link_geometry(r3, body.rb)[1]
        self.ep_l0 = link_geometry(r3, body.ep)[1]
        inc_node = np.concatenate([body.sides[:, 0], body.sides[:, 1]])
        inc_side = np.concatenate([np.arange(len(body.sides))] * 2)
        order = np.argsort(inc_node, kind="stable")
        self.inc_node, self.inc_side = inc_node[order], inc_side[order]
        self.has_side = np.bincount(self.inc_node, minlength=len(body.m)) > 0
        ends = np.searchsorted(self.inc_node, np.arange(len(body.m)), side="right") - 1
        self.group_end = ends[self.has_side]

    def positions(self, xy: np.ndarray) -> np.ndarray:
        f = self.surface.eval(xy[:, 0], xy[:, 1])[0]
        return np.column_stack([xy, f])

    def kinematics(self, xy: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """3-D positions and velocities (N, 3) of masses on the surface."""
        f, fx, fy = self.surface.eval(xy[:, 0], xy[:, 1])[:3]
        return (np.column_stack([xy, f]),
                np.column_stack([v, fx * v[:, 0] + fy * v[:, 1]]))

    def drag_length(self, r3: np.ndarray, direction: np.ndarray) -> np.ndarray:
        """l_v: length of the grid side at each mass most aligned with its motion."""
        if self.water.drag_length > 0.0:
            return np.full(len(self.m), self.water.drag_length)
        _, length, e = link_geometry(r3, self.body.sides)
        align = np.abs(np.einsum("ec,ec->e", e[self.inc_side], direction[self.inc_node]))
        order = np.lexsort((align, self.inc_node))
        out = np.full(len(self.m), np.inf)
        out[self.has_side] = length[self.inc_side[order[self.group_end]]]
        return out

    def evaluate(self, xy: np.ndarray, v: np.ndarray) -> Frame:
        """The full state at plan positions ``xy`` and plan velocities ``v``."""
        x, y = xy[:, 0], xy[:, 1]
        n, m = len(self.m), self.m
        if self.surface.bounds is not None and self.surface.outside(x, y).any():
            raise LeftSurface()
        with np.errstate(all="ignore"):
            f, fx, fy, fxx, fxy, fyy = self.surface.eval(x, y)
        if not np.isfinite(f + fx + fy + fxx + fxy + fyy).all():
            raise LeftSurface()
        q = np.sqrt(1.0 + fx * fx + fy * fy)
        nrm = np.empty((n, 3))
        nrm[:, 0], nrm[:, 1], nrm[:, 2] = -fx / q, -fy / q, 1.0 / q
        r3 = np.empty((n, 3))
        r3[:, 0], r3[:, 1], r3[:, 2] = x, y, f
        vx, vy = v[:, 0], v[:, 1]
        v3 = np.empty((n, 3))
        v3[:, 0], v3[:, 1], v3[:, 2] = vx, vy, fx * vx + fy * vy
        kappa = (vx * vx * fxx + 2.0 * vx * vy * fxy + vy * vy * fyy) / q
        wet = f < self.z_sea
        any_wet = wet.any()
        force = np.zeros((n, 3))
        force[:, 2] = -self.g * (m * np.where(wet, self.alpha, 1.0) if any_wet else m)
        p = np.zeros(len(self.body.ep))
        if len(p):
            p, f_ep = ep_forces(r3, m, self.body.ep, self.ep_l0, self.g, self.law)
            force += f_ep
        fn = np.einsum("nc,nc->n", force, nrm)
        tangential = force - fn[:, None] * nrm
        speed = np.sqrt(np.einsum("nc,nc->n", v3, v3))
        moving = speed >= self.rest_speed
        all_moving = moving.all()
        with np.errstate(invalid="ignore", divide="ignore"):
            direction = v3 / speed[:, None]
            if not all_moving:
                t_mag = np.sqrt(np.einsum("nc,nc->n", tangential, tangential))
                direction = np.where(moving[:, None], direction,
                                     np.where(t_mag[:, None] > 0.0,
                                              tangential / t_mag[:, None], 0.0))
        r0 = m * kappa - fn
        frictionless = self.mu == 0.0 and not any_wet
        if frictionless:
            c = np.zeros(n)
            a0 = kappa[:, None] * nrm + tangential / m[:, None]
        else:
            mu = np.full(n, self.mu)
            if any_wet:
                l_v = self.drag_length(r3, direction)
                mu_eq = equivalent_friction(self.mu_w, self.rho_r, self.water.density,
                                            self.water.drag_coefficient, self.g, speed, l_v)
                mu = np.where(wet, mu_eq, mu)
            stuck = np.zeros(n, dtype=bool) if all_moving else \
                ~moving & (mu * np.abs(r0) >= t_mag)
            sign = np.where(r0 < 0.0, -1.0, 1.0)
        h = np.zeros(len(self.body.rb))
        f_rb = np.zeros((n, 3))
        for _ in range(5):
            if not frictionless:
                c = np.where(stuck, 0.0, mu * sign)
                friction = np.where(stuck[:, None], -tangential, -(c * r0)[:, None] * direction)
                a0 = kappa[:, None] * nrm + (tangential + friction) / m[:, None]
            b = c[:, None] * direction - nrm if not frictionless else -nrm
            if self.rb is None:
                break
            h, f_rb = self.rb.solve(r3, v3, a0, nrm, b, m, check_rank=self.check_rank)
            self.check_rank = False
            if frictionless:
                break
            reaction = r0 - np.einsum("nc,nc->n", f_rb, nrm)
            new_sign = np.where(reaction < 0.0, -1.0, 1.0)
            if np.array_equal(new_sign[c != 0.0], sign[c != 0.0]):
                break
            sign = new_sign
        fn_rb = np.einsum("nc,nc->n", f_rb, nrm)
        a3 = a0 + (f_rb + b * fn_rb[:, None]) / m[:, None]
        return Frame(r3, v3, a3, r0 - fn_rb, wet, h, p)

    def rhs(self, y: np.ndarray) -> np.ndarray:
        """d/dt of the flat state [x, y, vx, vy] (4N,)."""
        n = len(self.m)
        s = y.reshape(4, n)
        frame = self.evaluate(s[:2].T, s[2:].T)
        return np.concatenate([s[2], s[3], frame.a3[:, 0], frame.a3[:, 1]])

    def energy(self, r3: np.ndarray, v3: np.ndarray) -> float:
        """Kinetic plus gravitational potential energy (reference z = 0)."""
        kin = 0.5 * np.sum(self.m * np.einsum("nc,nc->n", v3, v3))
        return float(kin + np.sum(self.m * self.g * r3[:, 2]))
