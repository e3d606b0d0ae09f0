"""Explicit central-difference time marching of a CDEM model (Feng et al. 2014, section 2).

Per step, on every rank:

1. nodes: F = F_int + F_spring + m g; a = (F + F_damp) / m; v^{n+1/2} = v^{n-1/2} + a dt;
   du = v^{n+1/2} dt; x^{n+1} = x^n + du (held dofs move with their prescribed velocity);
2. elements: stresses and F_int at x^{n+1} (solver.cdem.hex8.element_step);
3. halo forward of du, interface springs (solver.cdem.interface.interface_step) into the
   nodes' face slots, ghost slots written back to their owners, F_spring = the sum of a
   node's slots (in slot order) when the next step applies them;
4. one global reduction: the unbalance ratio and energy sums, the springs broken, and
   whether a contact node moved far enough to renew the contact targets;
5. contact forces (solver.cdem.contact) added to F_spring; after breakage, the new glue
   state goes to the contact.

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
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from mpi4py import MPI
from numba import njit

from solver.cdem.config import Stage
from solver.cdem.hex8 import DNDXI, element_step, strain_energy
from solver.cdem.interface import interface_energy, interface_step, sum_slots
from solver.cdem.model import Model

DAMPING = {"none": 0, "local": 1, "viscous": 2}


@njit(cache=True)
def node_step(n_own, f_int, f_slot, f_contact, mass, g, v, x, du, fixed, held_velocity, dt,
              mode, alpha, c_visc, sums):
    """Advance own nodes one step; ``sums`` += [|F_unbalanced|, |F| scale, damping work,
    gravity work, held-dof work, kinetic energy] over the free (or held) dofs. The spring
    force of a node is the sum of its three interface slots in slot order plus its contact
    force, ((s_0 + s_1) + s_2) + f_contact (solver.cdem.interface.sum_slots)."""
    for i in range(n_own):
        m = mass[i]
        for c in range(3):
            fg = m * g[c]
            fs = ((f_slot[i, 0, c] + f_slot[i, 1, c]) + f_slot[i, 2, c]) + f_contact[i, c]
            fi = f_int[i, c] + fs
            force = fi + fg
            if fixed[i, c]:
                vn = held_velocity[i, c]
                sums[4] -= force * vn * dt
            else:
                sums[0] += abs(force)
                sums[1] += abs(f_int[i, c]) + abs(fs) + abs(fg)
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


class ModelView:
    """Read-only views of a rank's model state, what observers and writers may read."""

    def __init__(self, model: Model):
        def frozen(a: np.ndarray) -> np.ndarray:
            view = a.view()
            view.flags.writeable = False
            return view

        n, e = model.nodes, model.elements
        self.x, self.x0, self.v, self.mass = frozen(n.x), frozen(n.x0), frozen(n.v), \
            frozen(n.mass)
        self.f_int, self.fixed = frozen(n.f_int), frozen(n.fixed)
        self.gid, self.group, self.density = frozen(e.gid), frozen(e.group), frozen(e.density)
        self.stress = frozen(e.stress)
        self._contact = model.contact
        self._f_slot, self._f_contact = model.springs.f_slot, n.f_contact

    def spring_forces(self) -> np.ndarray:
        """Interface spring and contact force of every own node (n, 3), as the next step
        applies them."""
        out = np.empty_like(self._f_contact)
        sum_slots(self._f_slot, out)
        return out + self._f_contact

    def contact_normal_force(self) -> float:
        """Sum of this rank's semi-spring normal forces [N] (0 without contact)."""
        return float(self._contact.ss.f_n.sum()) if self._contact is not None else 0.0


@dataclass(frozen=True)
class StepRecord:
    """What observers see after each step: counters, the stage, its gravity and load, the
    global unbalance ratio and new broken springs, read-only model views and ``energies()``,
    a collective call that returns the current global energy balance."""

    step: int
    time: float
    dt: float
    stage: Stage
    stage_time: float
    gravity: np.ndarray
    unbalance: float
    new_broken: int
    load: dict
    model: ModelView
    energies: Callable[[], "Energies"]


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
    """Runs the stages of a case on one rank's Model, collectively over ``comm``.

    A stage's load (gravity tilt and ramp) follows the load clock, which advances with the
    time step, or, with ``load_tolerance`` > 0, only in steps whose unbalance ratio is below
    it (a servo that keeps a slow ramp quasi-static).
    """

    def __init__(self, comm, model: Model, gravity, dt: float):
        self.comm = comm
        self.m = model
        self.view = ModelView(model)
        self.g0 = np.asarray(gravity, dtype=float)
        self.dt = dt
        self.step = 0
        self.time = 0.0
        self.energies = Energies()
        self.tally = np.zeros(2)
        self.broken_total = 0
        self.sums = np.zeros(6)
        self.reduced = np.zeros(8)
        self.unbalance = math.inf
        self.compute_seconds = 0.0
        self.contact_seconds = 0.0
        self.contact_rows = np.zeros(0, dtype=np.int64)

    def one_step(self, g: np.ndarray, stage: Stage) -> int:
        """Advance one step on every rank; returns the springs broken in it (global)."""
        m = self.m
        n, e, s, ifc = m.nodes, m.elements, m.springs, m.interfaces
        t0 = time.perf_counter()
        self.sums[:] = 0.0
        node_step(n.n_own, n.f_int, s.f_slot, n.f_contact, n.mass, g, n.v, n.x, n.du,
                  n.fixed, n.held_velocity, self.dt, DAMPING[stage.damping],
                  stage.local_damping, stage.viscous_damping, self.sums)
        element_step(n.x, n.du, e.stress, n.f_int, e.lam, e.mu, e.model)
        self.compute_seconds += time.perf_counter() - t0
        ifc.du_halo.forward(n.du)
        t0 = time.perf_counter()
        broken = interface_step(n.x, n.du, s.f_slot, s.node_i, s.node_j, s.slot_i, s.slot_j,
                                s.k_n, s.k_s, s.area, s.tensile, s.cohesion, s.tan_phi, s.u_n,
                                s.f_s, s.state, stage.breakable, self.tally)
        self.compute_seconds += time.perf_counter() - t0
        ifc.slot_halo.reverse_set(s.f_slot.reshape(-1, 3))
        moved = False
        t0 = time.perf_counter()
        if m.contact is not None:
            m.contact.refresh_ghosts(n.du)
            moved = m.contact.needs_renewal(n.x)
        t1 = time.perf_counter()
        broken = self._reduce(broken, moved)
        t2 = time.perf_counter()
        if m.contact is not None:
            rows, forces = m.contact.step(n.x, n.du, self.dt, self.reduced[7] > 0)
            n.f_contact[self.contact_rows] = 0.0
            n.f_contact[rows] = forces
            self.contact_rows = rows.copy()
            if broken:
                m.contact.set_glue(ifc.glued_neighbours(s.state, len(e)))
        self.contact_seconds += (t1 - t0) + (time.perf_counter() - t2)
        return broken

    def _reduce(self, broken: int, moved: bool) -> int:
        """One reduction per step: unbalance ratio and energy increments, springs broken and
        whether a contact node moved anywhere (global sums)."""
        self.reduced[:6] = self.sums
        self.reduced[6] = broken
        self.reduced[7] = moved
        self.comm.Allreduce(MPI.IN_PLACE, self.reduced, op=MPI.SUM)
        total = self.reduced
        self.unbalance = total[0] / total[1] if total[1] > 0 else 0.0
        e = self.energies
        e.damping += total[2]
        e.gravity_work += total[3]
        e.held_work += total[4]
        e.kinetic = total[5]
        return int(total[6])

    def update_stored_energy(self) -> Energies:
        """Element and spring strain energy and spring dissipation (global; collective)."""
        m = self.m
        n, e, s = m.nodes, m.elements, m.springs
        contact = m.contact.tally if m.contact is not None else np.zeros(3)
        local = np.array([strain_energy(n.x, e.stress, e.lam, e.mu, DNDXI),
                          interface_energy(s.k_n, s.k_s, s.u_n, s.f_s, s.state) + contact[2],
                          self.tally[0] + self.tally[1] + contact[0] + contact[1]])
        total = np.empty(3)
        self.comm.Allreduce(local, total, op=MPI.SUM)
        self.energies.strain, self.energies.spring, self.energies.spring_dissipated = total
        return self.energies

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
            broken = self.one_step(g, stage)
            self.broken_total += broken
            steps += 1
            self.step += 1
            self.time += self.dt
            t_stage += self.dt
            if stage.load_tolerance == 0.0 or self.unbalance < stage.load_tolerance:
                t_load += self.dt
            record = StepRecord(self.step, self.time, self.dt, stage, t_stage, g,
                                self.unbalance, broken, load, self.view,
                                self.update_stored_energy)
            stop = [obs(record) for obs in observers]
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
        n = self.m.nodes
        n.v[:] = 0.0
        n.x0[:] = n.x
        self.tally[:] = 0.0
        if self.m.contact is not None:
            self.m.contact.tally[:2] = 0.0
        self.update_stored_energy()
        self.energies = Energies(strain=self.energies.strain, spring=self.energies.spring,
                                 reference=self.energies.strain + self.energies.spring)
