"""Explicit central-difference time marching of a CDEM model (Feng et al. 2014, section 2).

Per step, on every rank:

1. nodes: F = F_int + F_spring + m g; a = (F + F_damp) / m;
   v^{n+1/2} = v^{n-1/2} + a (dt^{n-1/2} + dt^{n+1/2}) / 2; du = v^{n+1/2} dt^{n+1/2};
   x^{n+1} = x^n + du (held dofs move with their prescribed velocity). The step is safety
   times the stable step of the model as it is (solver.cdem.stable_step.StepControl): taken
   anew where a stage starts (its damping) and before the step after a glue change (springs
   that left the bound, contact that entered it); the central difference with a variable
   step (Belytschko et al. 2000, section 6.2);
2. halo forward of du; one global reduction: the unbalance ratio and energy sums, and
   whether a contact node moved far enough to renew the contact targets;
3. contact geometry (solver.cdem.contact), the elements' stresses and F_int at x^{n+1}
   (solver.cdem.hex8.element_step) and the interface springs
   (solver.cdem.interface.interface_step; the strength of the pairs with a weakening time
   first set for the time spent in breakable stages, ``weakening_clock``, this step
   included) into the nodes' face slots: the heavy parts of
   a step, with no exchange between them, so that a partition by their sum
   (solver.cdem.checkpoint.element_work) balances the ranks;
4. contact forces added to F_spring; ghost slots written back to their owners, F_spring =
   the sum of a node's slots (in slot order) when the next step applies them; the springs
   broken summed over the ranks, and after breakage the new glue state goes to the
   contact and to the stable-step bound.

Every floating-point sum that feeds the motion is taken in an order that does not depend on
the partition, and the global sums (unbalance ratio, energies) are exact sums rounded once
(solver.exact_sum), so a run gives the same numbers, to the last bit, on any number of
ranks, its energies and unbalance ratio included.

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
Every ENERGY_EVERY steps the progress line shows its residual as a share of the energy the
run handles (``energy_error``, as in the results), so that a long run shows a leak while it
runs, not only at its end; before the first of those steps of a run or restart it shows
``-`` (at a run's first step the half-step kinetic energy is half the work of gravity: a
residual of 0.5 that tells nothing of a leak).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from mpi4py import MPI
from numba import njit

from solver import exact_sum, interrupt
from solver.cdem import tally
from solver.cdem.config import Stage
from solver.cdem.contact.law import DISSIPATED, energy_tally
from solver.cdem.hex8 import element_step, strain_energy
from solver.cdem.interface import (INTERFACE_ENERGY, interface_energy, interface_step,
                                   interface_tally, sum_slots)
from solver.cdem.model import Model
from solver.cdem.stable_step import StepControl
from solver.exact_sum import add, normalize
from solver.interrupt import Diverged
from solver.mesh.reference_hex import DNDXI
from solver.rotation import rotate_about_axis

DAMPING = {"none": 0, "local": 1, "viscous": 2}


#: The step's sums (solver.exact_sum accumulators, rows of TimeLoop.sums): unbalanced and
#: total force magnitudes (the unbalance ratio), the work of damping, gravity and the held
#: dofs in the step, the kinetic energy.
STEP_SUMS = 6
UNBALANCED, FORCE_SCALE, DAMPING_WORK, GRAVITY_WORK, HELD_WORK, KINETIC = range(STEP_SUMS)


@njit(cache=True)
def node_step(nodes, f_slot, g, dt, dt_v, mode, alpha, c_visc, sums):
    """Advance the own nodes (``nodes``, solver.cdem.state.NodeArrays, packed: velocities v,
    coordinates x and increments du updated) one step of dt under gravity g (3,), with the
    velocity step dt_v (dt, or the mean of the last step and dt where the step changes) and
    the stage's damping (``mode`` its DAMPING id, Cundall's ``alpha``, the mass-proportional
    ``c_visc`` [1/s]); ``sums`` (STEP_SUMS, WORDS) += [|F_unbalanced|, |F| scale, damping
    work, gravity work, held-dof work, kinetic energy] over the free (or held) dofs, each
    element's eight nodes summed in their order and added exactly (solver.exact_sum), so
    that the sums do not depend on the partition. The spring force of a node is the sum of
    its three interface slots f_slot in slot order plus its contact force,
    ((s_0 + s_1) + s_2) + f_contact (solver.cdem.interface.sum_slots). The local damping
    force takes the velocity's sign from (v > 0) - (v < 0), not from a branch: where the
    signs vary from node to node (a block that barely moves), a branch on them is
    mispredicted about half the time."""
    nodes = nodes.value
    x, v, du, f_int, f_contact = nodes.x, nodes.v, nodes.du, nodes.f_int, nodes.f_contact
    mass, fixed, held_velocity = nodes.mass, nodes.fixed, nodes.held_velocity
    n = x.shape[0]
    s0 = s1 = s2 = s3 = s4 = s5 = 0.0
    for i in range(n):
        m = mass[i]
        for c in range(3):
            fg = m * g[c]
            fs = ((f_slot[i, 0, c] + f_slot[i, 1, c]) + f_slot[i, 2, c]) + f_contact[i, c]
            fi = f_int[i, c] + fs
            force = fi + fg
            if fixed[i, c]:
                vn = held_velocity[i, c]
                s4 -= force * vn * dt
            else:
                s0 += abs(force)
                s1 += abs(f_int[i, c]) + abs(fs) + abs(fg)
                vo = v[i, c]
                fd = 0.0
                if mode == 1:
                    fd = -alpha * abs(force) * ((vo > 0.0) - (vo < 0.0))
                elif mode == 2:
                    fd = -c_visc * m * vo
                vn = vo + (force + fd) * dt_v / m
                if mode == 1 and vo == 0.0:
                    fd = -alpha * abs(force) * np.sign(vn)
                    vn = vo + (force + fd) * dt_v / m
                s2 -= fd * 0.5 * (vo + vn) * dt
            v[i, c] = vn
            d = vn * dt
            du[i, c] = d
            x[i, c] += d
            s3 += fg * d
            s5 += 0.5 * m * vn * vn
        if i % 8 == 7 or i == n - 1:          # an element's last node: its sums, exactly
            add(sums[UNBALANCED], s0)
            add(sums[FORCE_SCALE], s1)
            add(sums[DAMPING_WORK], s2)
            add(sums[GRAVITY_WORK], s3)
            add(sums[HELD_WORK], s4)
            add(sums[KINETIC], s5)
            s0 = s1 = s2 = s3 = s4 = s5 = 0.0
    for k in range(STEP_SUMS):
        normalize(sums[k])


GROWTH = 100.0
STREAK = 20
#: Steps between two energy balances for the progress line (``energy_error``).
ENERGY_EVERY = 100


@dataclass
class StageClock:
    """Where a stage stands: simulated time, load time (the servo's clock), steps, and the
    smallest and largest step taken in it."""

    t_stage: float = 0.0
    t_load: float = 0.0
    steps: int = 0
    dt_min: float = math.inf
    dt_max: float = 0.0


class Checkpointing:
    """When to write a checkpoint: every ``every_steps`` steps and/or every
    ``every_seconds`` of wall time (rank 0's clock, reduced with the step's sums), by
    calling ``write()``; nothing when both are unset. ``write`` sets ``rebalance_due`` (on
    every rank) when the stage is to end at this checkpoint for a new partition."""

    def __init__(self, write=None, every_steps: int = 0, every_seconds: float = 0.0):
        self.write = write
        self.every_steps = every_steps
        self.every_seconds = every_seconds
        self.last = time.perf_counter()
        self.clock_due = False
        self.rebalance_due = False

    def due_by_clock(self) -> bool:
        return bool(self.every_seconds) and time.perf_counter() - self.last >= self.every_seconds

    def after_step(self, step: int) -> None:
        if self.write is not None and (
                self.clock_due or (self.every_steps and step % self.every_steps == 0)):
            self.write()
            self.last = time.perf_counter()
            self.clock_due = False


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

    def relative_error(self) -> float:
        """|error()| over the largest of the work of gravity, the kinetic and the stored
        energy: the share of the energy the run handles that its balance misses."""
        scale = max(abs(self.gravity_work), self.kinetic, self.strain + self.spring, 1e-300)
        return abs(self.error()) / scale

    def as_dict(self) -> dict:
        return {"kinetic": self.kinetic, "strain_elements": self.strain,
                "strain_springs": self.spring, "gravity_work": self.gravity_work,
                "held_dof_work": self.held_work, "damping": self.damping,
                "spring_dissipation": self.spring_dissipated, "balance_error": self.error()}


class ModelView:
    """Read-only views of a rank's model state, what observers and writers may read; the
    interface springs' face ids, states, openings u_n, shear forces f_s and constants k_n
    (solver.cdem.state.InterfaceSprings) as ``spring_*``."""

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
        s = model.springs
        self.spring_face_gid, self.spring_state = frozen(s.face_gid), frozen(s.state)
        self.spring_u_n, self.spring_f_s, self.spring_k_n = frozen(s.u_n), frozen(s.f_s), \
            frozen(s.k_n)
        self._contact = model.contact
        self._f_slot, self._f_contact = model.springs.f_slot, n.f_contact

    def spring_forces(self) -> np.ndarray:
        """Interface spring and contact force of every own node (n, 3), as the next step
        applies them."""
        out = np.empty_like(self._f_contact)
        sum_slots(self._f_slot, out)
        return out + self._f_contact

    def contact_normal_forces(self) -> np.ndarray:
        """This rank's semi-spring normal forces [N] (none without contact)."""
        return self._contact.semi_springs.f_n if self._contact is not None else np.zeros(0)


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
    g = rotate_about_axis(g0, axis, angle)
    factor = 1.0 + stage.gravity_ramp * t
    return g * factor, {"tilt_deg": stage.tilt_rate * t, "gravity_factor": factor}


class TimeLoop:
    """Runs the stages of a case on one rank's Model, collectively over ``comm``.

    A stage's load (gravity tilt and ramp) follows the load clock, which advances with the
    time step, or, with ``load_tolerance`` > 0, only in steps whose unbalance ratio is below
    it (a servo that keeps a slow ramp quasi-static). ``compute_seconds`` and
    ``contact_seconds`` count this rank's wall time in the element, node and spring kernels
    and in the contact; ``step_seconds`` its wall time in the steps and ``waiting_seconds``
    the part of it in the exchanges (the neighbour collectives and the step's reductions),
    where it waits for the other ranks; ``busy_seconds`` the rest since the work imbalance
    was last taken (solver.cdem.run): what a partition by work balances. ``dt`` is the step
    to start with; without it the first :meth:`set_step` (or a checkpoint) gives it.
    """

    def __init__(self, comm, model: Model, gravity, dt: float | None = None,
                 control: StepControl | None = None):
        self.comm = comm
        self.control = control
        self.step_due = False
        self.m = model
        self.view = ModelView(model)
        self.g0 = np.asarray(gravity, dtype=float)
        self.dt = dt
        self.velocity_step = dt
        self.step = 0
        self.time = 0.0
        self.energies = Energies()
        self.tally = interface_tally()
        self.broken_total = 0
        self.sums = exact_sum.accumulator(STEP_SUMS)
        self.reduced = np.zeros(STEP_SUMS * exact_sum.WORDS + 3, dtype=np.int64)
        self.unbalance = math.inf
        self.compute_seconds = 0.0
        self.contact_seconds = 0.0
        self.busy_seconds = 0.0
        self.step_seconds = 0.0
        self.waiting_seconds = 0.0
        self.reduce_seconds = 0.0
        self.contact_rows = np.zeros(0, dtype=np.int64)
        self.clock = StageClock()
        self.checkpoint = Checkpointing()
        self.stop_requested = False
        self.first_kinetic = None
        self.last_kinetic = 0.0
        self.growth_streak = 0
        self.energy_error = None
        self.weakening_clock = 0.0

    def set_glue(self, glued: np.ndarray) -> None:
        """Take the glue state (n_el, 6; solver.cdem.model.Interfaces.glued_neighbours)
        into the stable-step bound (with ``control``), whose new step the next step of the
        stage takes, and into the contact, with the bound's new node frequencies of the
        elements whose faces changed (collective)."""
        if self.control is None:
            self.m.contact.set_glue(glued)
            return
        changed = self.control.set_active(glued < 0)
        self.step_due = True
        self.m.contact.set_glue(glued, changed, self.control.element_omega(changed))

    def _follow_glue(self, stage: Stage) -> None:
        """Step at the stable step of the glue as it now is (collective); a step that stays
        the same leaves the velocity step as it is, so that a restart, which sets the
        stage's step anew, goes on bit for bit."""
        dt = self.control.step(stage.damping_terms)
        if dt != self.dt:
            self.set_step(dt)
        self.step_due = False

    def set_step(self, dt: float) -> None:
        """Step at ``dt`` from now on; the next velocity update spans the mean of the last
        step and dt (module docstring), or dt where the loop was made without a step."""
        self.velocity_step = dt if self.dt is None else 0.5 * (self.dt + dt)
        self.dt = dt

    def one_step(self, g: np.ndarray, stage: Stage) -> int:
        """Advance one step on every rank; returns the springs broken in it (global)."""
        m = self.m
        n, e, s, ifc = m.nodes, m.elements, m.springs, m.interfaces
        exchanged = self._exchange_seconds()
        start = t0 = time.perf_counter()
        self.sums[:] = 0
        node_step(n.packed, s.f_slot, g, self.dt, self.velocity_step, DAMPING[stage.damping],
                  stage.local_damping, stage.viscous_damping, self.sums)
        self.velocity_step = self.dt
        self.compute_seconds += time.perf_counter() - t0
        ifc.du_halo.forward(n.du)
        moved = False
        t0 = time.perf_counter()
        if m.contact is not None:
            m.contact.refresh_ghosts(n.du)
            moved = m.contact.needs_renewal(n.x)
        t1 = time.perf_counter()
        moved_anywhere = self._reduce(moved)
        t2 = time.perf_counter()
        if m.contact is not None:
            m.contact.geometry(n.x, n.du, self.dt, stage.damping_terms, moved_anywhere)
        t3 = time.perf_counter()
        element_step(n.x, n.du, e.stress, n.f_int, e.lam, e.mu, e.model)
        if stage.breakable:
            self.weakening_clock += self.dt
        if m.strength_ramp is not None and self.weakening_clock > 0.0:
            m.strength_ramp.apply(self.weakening_clock, s)
        broken = interface_step(n.x, n.du, s.packed, stage.breakable, self.tally,
                                m.contact is not None)
        t4 = time.perf_counter()
        self.compute_seconds += t4 - t3
        if m.contact is not None:
            rows, forces = m.contact.forces()
            n.f_contact[self.contact_rows] = 0.0
            n.f_contact[rows] = forces
            self.contact_rows = rows.copy()
        t5 = time.perf_counter()
        ifc.slot_halo.reverse_set(s.f_slot.reshape(-1, 3))
        reducing = time.perf_counter()
        broken = self.comm.allreduce(broken)
        t6 = time.perf_counter()
        self.reduce_seconds += t6 - reducing
        if m.contact is not None and broken:
            self.set_glue(ifc.glued_neighbours(s.state, len(e)))
        end = time.perf_counter()
        self.contact_seconds += (t1 - t0) + (t3 - t2) + (t5 - t4) + (end - t6)
        waited = self._exchange_seconds() - exchanged
        self.step_seconds += end - start
        self.waiting_seconds += waited
        self.busy_seconds += (end - start) - waited
        return broken

    def _exchange_seconds(self) -> float:
        """Wall time so far in the exchanges: the model's and the contact's neighbour
        collectives, and the step's reductions."""
        m = self.m
        return (m.interfaces.neighbours.traffic.seconds + self.reduce_seconds
                + (m.contact.traffic.seconds if m.contact is not None else 0.0))

    def _reduce(self, moved: bool) -> bool:
        """The step's reduction: unbalance ratio and energy increments (exact sums, the same
        bits on any partition), whether a contact node moved, a signal was caught or a
        checkpoint is due by the wall clock on any rank (global). Returns whether a contact
        node moved anywhere."""
        n_sums = STEP_SUMS * exact_sum.WORDS
        self.reduced[:n_sums] = self.sums.ravel()
        self.reduced[n_sums:] = (moved, interrupt.received() > 0, self.checkpoint.due_by_clock())
        reducing = time.perf_counter()
        self.comm.Allreduce(MPI.IN_PLACE, self.reduced, op=MPI.SUM)
        self.reduce_seconds += time.perf_counter() - reducing
        total = exact_sum.values(self.reduced[:n_sums].reshape(STEP_SUMS, exact_sum.WORDS))
        self.unbalance = (total[UNBALANCED] / total[FORCE_SCALE] if total[FORCE_SCALE] > 0
                          else 0.0)
        e = self.energies
        e.damping += total[DAMPING_WORK]
        e.gravity_work += total[GRAVITY_WORK]
        e.held_work += total[HELD_WORK]
        e.kinetic = total[KINETIC]
        self.stop_requested = self.reduced[n_sums + 1] > 0
        self.checkpoint.clock_due = self.reduced[n_sums + 2] > 0
        self._guard(total)
        return bool(self.reduced[n_sums] > 0)

    def _guard(self, total: np.ndarray) -> None:
        """Stop a diverging run at once: the reduced sums non-finite, or the kinetic energy
        beyond GROWTH times everything that could have fed it (its first value, the work of
        gravity and of the held dofs, the stored energy at the start) while growing
        exponentially, by a factor over 1.5 per step for STREAK steps in a row (the mark of
        an unstable step; an impact that frees stored contact energy grows it only for a
        few steps)."""
        e = self.energies
        if self.first_kinetic is None:
            self.first_kinetic = e.kinetic
        self.growth_streak = self.growth_streak + 1 if e.kinetic > 1.5 * self.last_kinetic \
            else 0
        self.last_kinetic = e.kinetic
        bound = GROWTH * (self.first_kinetic + abs(e.gravity_work) + abs(e.held_work)
                          + abs(e.reference)) + 1e-300
        if np.all(np.isfinite(total)) and (e.kinetic <= bound or self.growth_streak < STREAK):
            return
        what = (f"kinetic energy {e.kinetic:.3e} J, over {GROWTH:g} times the work done on "
                f"the model ({bound / GROWTH:.3e} J)" if np.all(np.isfinite(total))
                else "the state is not finite")
        raise Diverged(f"step {self.step + 1} (t = {self.time + self.dt:.6g} s)",
                       f"diverged: {what}; {self._worst_element()}", self.step + 1,
                       self.time + self.dt)

    def _worst_element(self) -> str:
        """The element with the fastest (or a non-finite) node velocity, over all ranks."""
        n, e = self.m.nodes, self.m.elements
        speed = np.abs(n.v).max(axis=1).reshape(-1, 8).max(axis=1) if len(e) else np.zeros(0)
        speed = np.where(np.isnan(speed), np.inf, speed)
        local = (float(speed.max()), int(e.gid[np.argmax(speed)])) if len(e) else (-1.0, -1)
        top, gid = max(self.comm.allgather(local))
        return f"worst element {gid} (node velocity {top:.3e} m/s)"

    def update_stored_energy(self) -> Energies:
        """Element and spring strain energy and spring dissipation (global, exact sums;
        collective)."""
        m = self.m
        n, e, s = m.nodes, m.elements, m.springs
        contact = m.contact.energy if m.contact is not None else energy_tally()
        local = exact_sum.accumulator(3)
        strain_energy(n.x, e.stress, e.lam, e.mu, DNDXI, local[0])
        interface_energy(s.k_n, s.k_s, s.u_n, s.f_s, s.state, local[1])
        local[1] += contact["stored"]
        local[2] = (tally.local_sum(self.tally, INTERFACE_ENERGY.names)
                    + tally.local_sum(contact, DISSIPATED))
        total = exact_sum.values(exact_sum.total(self.comm, local))
        self.energies.strain, self.energies.spring, self.energies.spring_dissipated = total
        return self.energies

    def run_stage(self, stage: Stage, observers, progress=None,
                  clock: StageClock | None = None) -> str:
        """March one stage, from its start or from ``clock`` (a restart); returns why it
        ended ("converged", "failure", "duration", "max_steps", "observer" when an observer
        returned True, "interrupted" after a signal, or "rebalance" after a checkpoint that
        asked for a new partition). Due checkpoints are written at the step boundaries
        where the stage goes on (``self.checkpoint``)."""
        self.clock = clock = clock if clock is not None else StageClock()
        reason = "max_steps"
        while clock.steps < stage.max_steps:
            if clock.t_stage >= stage.duration - 1e-12 * self.dt:
                reason = "duration"
                break
            if self.step_due:
                self._follow_glue(stage)
            g, load = gravity_at(self.g0, stage, clock.t_load)
            broken = self.one_step(g, stage)
            self.broken_total += broken
            clock.steps += 1
            clock.dt_min, clock.dt_max = min(clock.dt_min, self.dt), max(clock.dt_max, self.dt)
            self.step += 1
            self.time += self.dt
            clock.t_stage += self.dt
            if stage.load_tolerance == 0.0 or self.unbalance < stage.load_tolerance:
                clock.t_load += self.dt
            record = StepRecord(self.step, self.time, self.dt, stage, clock.t_stage, g,
                                self.unbalance, broken, load, self.view,
                                self.update_stored_energy)
            stop = [obs(record) for obs in observers]
            if progress is not None and progress.shown and self.step % ENERGY_EVERY == 0:
                self.energy_error = self.update_stored_energy().relative_error()
            if progress is not None:
                progress.update(clock.t_stage if math.isfinite(stage.duration) else clock.steps,
                                stage=stage.name, step=self.step, unbalance=self.unbalance,
                                broken=self.broken_total, energy_error=self.energy_error,
                                **_observer_metrics(observers))
            if stage.stop_on_failure and broken > 0:
                reason = "failure"
                break
            if any(stop):
                reason = "observer"
                break
            if (stage.kind == "relax" and self.unbalance < stage.unbalance_tol
                    and clock.steps > 1):
                reason = "converged"
                break
            if self.stop_requested:
                return "interrupted"
            self.checkpoint.after_step(self.step)
            if self.checkpoint.rebalance_due:
                return "rebalance"
        self.g0 = gravity_at(self.g0, stage, clock.t_load)[0]
        if stage.reset_displacement:
            self.reset_displacement()
        return reason

    def reset_displacement(self) -> None:
        """Start the next stage from the current state as reference: zero v, keep stress."""
        n = self.m.nodes
        n.v[:] = 0.0
        n.x0[:] = n.x
        tally.reset(self.tally, INTERFACE_ENERGY.names)
        if self.m.contact is not None:
            tally.reset(self.m.contact.energy, DISSIPATED)
        self.update_stored_energy()
        self.energies = Energies(strain=self.energies.strain, spring=self.energies.spring,
                                 reference=self.energies.strain + self.energies.spring)


def _observer_metrics(observers) -> dict:
    """What the observers that end a stage by a measure of their own (a displacement, a
    speed) report for the progress line: their ``progress_metrics()``, where they have one."""
    metrics = {}
    for obs in observers:
        if hasattr(obs, "progress_metrics"):
            metrics.update(obs.progress_metrics())
    return metrics
