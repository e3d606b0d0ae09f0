"""Explicit central-difference time marching of a CDEM model (seed 002 section 2).

Per step, on every rank (design.md section 4):

1. nodes: F = F_int + F_spring + m g; a = (F + F_damp) / m; v^{n+1/2} = v^{n-1/2} + a dt;
   du = v^{n+1/2} dt; x^{n+1} = x^n + du (held dofs move with their prescribed velocity);
2. elements: stresses and F_int at x^{n+1} (solver.cdem.hex8.element_step);
3. halo forward of du, interface springs (solver.cdem.interface.interface_step) into the
   nodes' face slots, ghost slots written back to their owners, F_spring = the sum of a
   node's slots (in slot order), then the contact forces (solver.cdem.contact).

Every floating-point sum that feeds the motion is taken in an order that does not depend on
the partition, so a run gives the same numbers, to the last bit, on any number of ranks;
only the reported global sums (unbalance ratio, energies) are reduced over ranks.

Damping (F_damp per dof):
* ``local``: Cundall's non-viscous local damping, F_d = -alpha |F| sign(v) (Itasca);
* ``viscous``: mass-proportional, F_d = -c m v;
* ``none``.

Unbalance ratio (the 3DEC/OpenFDEM solve ratio, reduced over all ranks):
R = sum_free_dofs |F| / sum_free_dofs (|F_int| + |F_spring| + |m g|).

Energy bookkeeping (all reduced over ranks): kinetic 1/2 m v^2 (at the half step), strain
energy of the elements and the springs, work of gravity sum m g.du, work of held dofs
(reactions), damping work, and the energy the springs released at failure or dissipated by
friction. Balance: E_kin + U_el + U_spr + D_damp + D_spring - W_gravity - W_held = E_0.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
from mpi4py import MPI
from numba import njit

from solver.cdem.config import Stage
from solver.cdem.hex8 import DNDXI, element_step, strain_energy
from solver.cdem.interface import interface_energy, interface_step, sum_slots
from solver.cdem.model import LocalModel

DAMPING = {"none": 0, "local": 1, "viscous": 2}


@njit(cache=True)
def node_step(n_own, f_int, f_spr, mass, g, v, x, du, fixed, held_velocity, dt, mode, alpha,
              c_visc, sums):
    """Advance own nodes one step; ``sums`` += [|F_unbalanced|, |F| scale, damping work,
    gravity work, held-dof work, kinetic energy] over the free (or held) dofs."""
    for i in range(n_own):
        m = mass[i]
        for c in range(3):
            fg = m * g[c]
            fi = f_int[i, c] + f_spr[i, c]
            force = fi + fg
            if fixed[i, c]:
                vn = held_velocity[i, c]
                sums[4] -= force * vn * dt
            else:
                sums[0] += abs(force)
                sums[1] += abs(f_int[i, c]) + abs(f_spr[i, c]) + abs(fg)
                vo = v[i, c]
                fd = 0.0
                if mode == 1:
                    if vo > 0.0:
                        fd = -alpha * abs(force)
                    elif vo < 0.0:
                        fd = alpha * abs(force)
                elif mode == 2:
                    fd = -c_visc * m * vo
                vn = vo + (force + fd) * dt / m
                if mode == 1 and vo == 0.0:
                    fd = -alpha * abs(force) * np.sign(vn)
                    vn = vo + (force + fd) * dt / m
                sums[2] -= fd * 0.5 * (vo + vn) * dt
            v[i, c] = vn
            d = vn * dt
            du[i, c] = d
            x[i, c] += d
            sums[3] += fg * d
            sums[5] += 0.5 * m * vn * vn


@dataclass
class Energies:
    """Running energy tally of the whole model [J] (global sums). ``spring`` holds the
    interface and contact springs, ``spring_dissipated`` their breakage, friction and dashpot
    losses."""

    damping: float = 0.0
    gravity_work: float = 0.0
    held_work: float = 0.0
    kinetic: float = 0.0
    strain: float = 0.0
    spring: float = 0.0
    spring_dissipated: float = 0.0
    reference: float = 0.0

    def error(self) -> float:
        """Balance residual E_kin + U + D - W - E_0 (E_0: stored energy at the reference)."""
        return (self.kinetic + self.strain + self.spring + self.damping + self.spring_dissipated
                - self.gravity_work - self.held_work - self.reference)

    def as_dict(self) -> dict:
        return {"kinetic": self.kinetic, "strain_elements": self.strain,
                "strain_springs": self.spring, "gravity_work": self.gravity_work,
                "held_dof_work": self.held_work, "damping": self.damping,
                "spring_dissipation": self.spring_dissipated, "balance_error": self.error()}


@dataclass
class StepInfo:
    """What observers see after each step."""

    step: int
    time: float
    stage: Stage
    stage_time: float
    unbalance: float
    new_broken: int
    load: dict = field(default_factory=dict)


def gravity_at(g0: np.ndarray, stage: Stage, t: float) -> tuple[np.ndarray, dict]:
    """Gravity vector of a stage at load time t: the stage's starting gravity g0 turned about
    ``tilt_axis`` by tilt_rate t (a slowly tilting base) and scaled by (1 + gravity_ramp t).
    The next stage starts from the gravity this one ended with (tilts accumulate)."""
    angle = math.radians(stage.tilt_rate * t)
    axis = np.asarray(stage.tilt_axis, dtype=float)
    axis /= np.linalg.norm(axis)
    g = g0 * math.cos(angle) + np.cross(axis, g0) * math.sin(angle) \
        + axis * (axis @ g0) * (1.0 - math.cos(angle))
    factor = 1.0 + stage.gravity_ramp * t
    return g * factor, {"tilt_deg": stage.tilt_rate * t, "gravity_factor": factor}


class TimeLoop:
    """Runs the stages of a case on one rank's LocalModel, collectively over ``comm``.

    A stage's load (gravity tilt and ramp) follows the load clock, which advances with the
    time step, or, with ``load_tolerance`` > 0, only in steps whose unbalance ratio is below
    it (a servo that keeps a slow ramp quasi-static).
    """

    def __init__(self, comm, model: LocalModel, gravity, dt: float):
        self.comm = comm
        self.m = model
        self.g0 = np.asarray(gravity, dtype=float)
        self.dt = dt
        self.step = 0
        self.time = 0.0
        self.energies = Energies()
        self.tally = np.zeros(2)
        self.broken_total = 0
        self.sums = np.zeros(6)
        self.unbalance = math.inf
        self.compute_seconds = 0.0

    def one_step(self, g: np.ndarray, stage: Stage) -> int:
        m = self.m
        t0 = time.perf_counter()
        self.sums[:] = 0.0
        node_step(m.n_own, m.f_int, m.f_spr, m.mass, g, m.v, m.x, m.du, m.fixed,
                  m.held_velocity, self.dt, DAMPING[stage.damping], stage.local_damping,
                  stage.viscous_damping, self.sums)
        element_step(m.x, m.du, m.stress, m.f_int, m.lam, m.mu, m.model, DNDXI)
        self.compute_seconds += time.perf_counter() - t0
        m.halo.forward(m.du)
        t0 = time.perf_counter()
        broken = interface_step(m.x, m.du, m.f_slot, m.node_i, m.node_j, m.slot_i, m.slot_j,
                                m.k_n, m.k_s, m.area, m.tensile, m.cohesion, m.tan_phi, m.u_n,
                                m.f_s, m.state, stage.breakable, self.tally)
        m.slot_halo.reverse_set(m.f_slot.reshape(-1, 3))
        sum_slots(m.f_slot, m.f_spr)
        self.compute_seconds += time.perf_counter() - t0
        if m.contact is not None:
            m.contact.step(self.dt)
        return broken

    def reduce_step(self, broken: int) -> int:
        """Global unbalance ratio and energy increments of the step just taken."""
        local = np.concatenate([self.sums, [broken]])
        total = np.empty_like(local)
        self.comm.Allreduce(local, total, op=MPI.SUM)
        self.unbalance = total[0] / total[1] if total[1] > 0 else 0.0
        e = self.energies
        e.damping += total[2]
        e.gravity_work += total[3]
        e.held_work += total[4]
        e.kinetic = total[5]
        return int(total[6])

    def update_stored_energy(self) -> None:
        """Element and spring strain energy and spring dissipation (global; at samples)."""
        m = self.m
        contact = m.contact.tally if m.contact is not None else np.zeros(3)
        local = np.array([strain_energy(m.x, m.stress, m.lam, m.mu, DNDXI),
                          interface_energy(m.k_n, m.k_s, m.u_n, m.f_s, m.state) + contact[2],
                          self.tally[0] + self.tally[1] + contact[0] + contact[1]])
        total = np.empty(3)
        self.comm.Allreduce(local, total, op=MPI.SUM)
        self.energies.strain, self.energies.spring, self.energies.spring_dissipated = total

    def run_stage(self, stage: Stage, observers, progress=None) -> str:
        """March one stage; returns why it ended ("converged", "failure", "duration",
        "max_steps", or "observer" when an observer returned True)."""
        t_stage = 0.0
        t_load = 0.0
        steps = 0
        reason = "max_steps"
        while steps < stage.max_steps:
            if t_stage >= stage.duration - 1e-12 * self.dt:
                reason = "duration"
                break
            g, load = gravity_at(self.g0, stage, t_load)
            broken = self.reduce_step(self.one_step(g, stage))
            self.broken_total += broken
            if broken and self.m.contact is not None:
                self.m.contact.update_glue()
            steps += 1
            self.step += 1
            self.time += self.dt
            t_stage += self.dt
            if stage.load_tolerance == 0.0 or self.unbalance < stage.load_tolerance:
                t_load += self.dt
            info = StepInfo(self.step, self.time, stage, t_stage, self.unbalance, broken, load)
            stop = [obs(self, info) for obs in observers]
            if progress is not None:
                progress.update(t_stage if math.isfinite(stage.duration) else steps,
                                stage=stage.name, step=self.step, unbalance=self.unbalance,
                                broken=self.broken_total)
            if stage.stop_on_failure and broken > 0:
                reason = "failure"
                break
            if any(stop):
                reason = "observer"
                break
            if stage.kind == "relax" and self.unbalance < stage.unbalance_tol and steps > 1:
                reason = "converged"
                break
        self.g0 = gravity_at(self.g0, stage, t_load)[0]
        if stage.reset_displacement:
            self.reset_displacement()
        return reason

    def reset_displacement(self) -> None:
        """Start the next stage from the current state as reference: zero v, keep stress."""
        m = self.m
        m.v[:] = 0.0
        m.x0[:] = m.x[: m.n_own]
        self.tally[:] = 0.0
        if m.contact is not None:
            m.contact.tally[:2] = 0.0
        self.update_stored_energy()
        self.energies = Energies(strain=self.energies.strain, spring=self.energies.spring,
                                 reference=self.energies.strain + self.energies.spring)
