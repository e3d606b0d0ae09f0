"""The contact force of semi-springs and semi-edges alike: one call into solver.contact_laws.

Penalty springs in the contact frame (Feng et al. 2014, Eq. 13), K_n = k_n A, K_t = k_t A,
times the record's share (1/2 where two semi-springs sit at the same place, Feng et al. 2014
section 5; it changes in a contact only where the semi-spring comes to or leaves a place,
so that elsewhere a loaded spring keeps its constant and its force derives from its stored
energy): the normal force of the case's normal law on the overlap (no tension;
solver.contact_laws.laws.normal_law_force, linear_dashpot by default) and the incremental
Cundall-Strack tangential spring (cundall_strack_xyz) on the relative displacement
increment, capped at mu F_n with mu from the case's tangential law
(solver.contact_laws.laws.friction_coefficient: coulomb, a constant mu, by default;
velocity_weakening, mu of the step's slip rate). The laws come by id
(solver.contact_laws.register.LawChoice), as the case named them. The tangential spring is
kept when the target changes (rotated into the new tangent plane) and reset when the
contact opens.

Dashpot: a contact moves the bodies it joins (glued blocks, solver.cdem.bodies), not its
elements. Each body's mass M is shared over the contacts loaded on it in proportion to their
stiffness, m = K M / S with S the sum of the stiffness K of every contact in compression on
the body (of both kinds, its own records and those targeting it). A record's dashpot then
takes the reduced mass of its two shares, m = K (h_a h_b / (h_a + h_b)), h = M / S (a held
body, M = inf, leaves the other's), and c_n = 2 zeta(e_n) sqrt(K m): the contacts of a body
landing flat sum to 2 zeta sqrt(S M), the single-contact damped oscillator, whatever the
mesh, and a block rebounds with solver.contact_laws.laws.clamped_restitution(e_n). The
share is capped at each of the two elements' ``stable_mass``, the mass at which the
dashpot's damping ratio on a node reaches the limit of the time step (see
:func:`stable_dashpot_mass`). An n x n x n block landing flat puts 2 n node masses on each
dashpot (damping ratio zeta sqrt(2 n) on the node), while the step assumes zeta sqrt(2):
for strongly damped contacts of finely meshed blocks the cap binds and they rebound a few
per cent high (4 x 4 x 4, e_n = 0.1: 3.7 % at time.safety 0.8, 0.8 % at 0.4).

Energy booking: a force F^n computed now acts over this step's increment and the next (the
leapfrog's kinetic energy changes by F^n . (du_n + du_{n+1}) / 2), so the work of its dashpot
term F_n - K_n delta (the dashpot, or minus the spring while the no-tension clamp holds) is
booked half now, at this step's overlap rate, and half at the next step
(:func:`book_carried_dashpot`), at the rate of the next step's increments at this step's
nodes, weights and normal: the force's own work, whether the contact goes on, turns to
another target or opens. Booked instead at the mean of this and the next step's rates, and
at the last rate alone where the contact opened or its target changed, it missed
F_d (r_next - r_last) dt / 2 at each such event; where the motion turns within the step of
an impact (a contact's first and last steps) that is not small, and it happened to offset
part of the contacts' formation and opening error (level 2 of the Jiweishan resolution
study: 0.25 % booked so, 0.28 % booked exactly). The
tangential spring's dissipation is the work the contact takes over the step's tangential
increment d_t at the mean of its forces before and after it (the trapezoid, the work the
central-difference step does on the blocks, summed by parts) less the change of its stored
energy |f|^2 / (2 K_t):
D = -(f_old + f_new) . d_t / 2 - (|f_new|^2 - |f_old|^2) / (2 K_t): zero while it sticks,
the cap times the slip while it slides at a constant cap. It needs nothing of the law but
the forces, so it holds as well for a cap that changes with the slip rate. Booking the law's own
dissipation (the slip under the cap, solver.contact_laws.laws.coulomb_return) instead
counted each step's slip at the step's end force: where the cap rises while the slip is
fast and falls as it slows, as in every impact, it booked more than the blocks lost (5.4 %
of the gravity work in the coarse Jiweishan runout without dashpot, 0.8 % with it).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from solver.cdem.tally import record as tally_record
from solver.cdem.tally import zeroed
from solver.contact_laws.laws import (OPEN, SLIP, STICK, cundall_strack_xyz,
                                      friction_coefficient, normal_law_force, rotate_to_tangent)
from solver.exact_sum import add, normalize
from solver.mesh.topology import FACES

#: The contact's energy tally [J] (solver.cdem.tally; numba adds to its fields by name):
#: friction and dashpot the energy dissipated by the tangential springs and the normal
#: dashpots since the stage's reference (module docstring), stored the elastic energy the
#: springs held at the last step's forces.
CONTACT_ENERGY = tally_record("friction", "dashpot", "stored")

#: The fields of CONTACT_ENERGY that sum the energy dissipated since the stage's reference
#: (a checkpoint keeps them; ``stored`` is taken anew each step).
DISSIPATED = ("friction", "dashpot")


def energy_tally() -> np.void:
    """A zeroed CONTACT_ENERGY tally."""
    return zeroed(CONTACT_ENERGY)


class DashpotBodies(NamedTuple):
    """The bodies (glued blocks, solver.cdem.bodies) a contact's dashpot moves, as
    :func:`contact_law` reads them (packed, solver.cdem.packed): of (n_c,) the body of each
    contact element, an index into mass (n_b,) [kg] (inf: held) and stiffness (n_b,) [N/m],
    the body's loaded stiffness (:func:`loaded_stiffness`, summed over the ranks);
    stable_mass (n_c,) [kg] the cap of a dashpot mass on each contact element
    (:func:`stable_dashpot_mass`)."""

    of: np.ndarray
    mass: np.ndarray
    stiffness: np.ndarray
    stable_mass: np.ndarray


@njit(cache=True, inline="always")
def _effective_mass(m_a, m_b):
    """Reduced mass of two bodies; a held one (inf) leaves the other's, two held ones 0."""
    if math.isinf(m_a):
        return 0.0 if math.isinf(m_b) else m_b
    if math.isinf(m_b):
        return m_a
    return m_a * m_b / (m_a + m_b)


def stable_dashpot_mass(node_mass, omega, zeta, dt, damping=(0.0, 0.0)):
    """Largest dashpot mass m of a contact on an element (n,) that keeps the explicit step
    dt stable: the dashpot 2 zeta sqrt(K m) on a node of mass m_node has the damping ratio
    z = zeta sqrt(m / m_node), and the central-difference step with the damping force on
    the last half-step velocity is stable up to dt = (2 / omega) (sqrt(1 + z^2) - z), i.e.
    for z <= (1 - a^2) / (2 a), a = omega dt / 2, omega the element's highest node
    frequency. Under the stage's ``damping``, Cundall local alpha and mass-proportional c,
    omega and z become sqrt(1 + alpha) omega and sqrt(1 + alpha) z + c / (2 omega)
    (solver.cdem.stable_step.critical_step). Infinite for a held element or without dashpot."""
    if zeta == 0.0:
        return np.full(len(node_mass), np.inf)
    alpha, c = damping
    w = math.sqrt(1.0 + alpha) * omega
    a = 0.5 * w * dt
    z_max = np.maximum(((1.0 - a * a) / (2.0 * a) - c / (2.0 * w)) / math.sqrt(1.0 + alpha),
                       0.0)
    return np.where(np.isinf(node_mass), np.inf, node_mass * (z_max / zeta) ** 2)


@njit(cache=True)
def book_carried_dashpot(mesh, records, dt, known, energy):
    """energy.dashpot += the second half of the dashpot work of last step's forces (module
    docstring; ``energy`` a CONTACT_ENERGY record; ``mesh``, ``records`` a ContactMesh and
    RecordArrays, packed, solver.cdem.packed): each loaded record's dashpot force
    records.dashpot[:, 0] times the overlap rate of this step's increments at last step's
    nodes and weights (own_w on the carrying face; target_node 8 c + a, target_w, of a
    contact element c of ``mesh``, a ghost's increments in mesh.ghost_du at row
    8 (c - n_own) + a), along last step's normal; at the last rate records.dashpot[:, 1]
    where last step's geometry is not ``known`` (the first step after a restart)."""
    mesh, records = mesh.value, records.value
    du, ghost_du, base, n_own = mesh.du, mesh.ghost_du, mesh.base, mesh.n_own
    elem, face, dashpot, normal = records.elem, records.face, records.dashpot, records.normal
    own_w, target_node, target_w = records.own_w, records.target_node, records.target_w
    for s in range(elem.shape[0]):
        if dashpot[s, 0] == 0.0:
            continue
        rate = dashpot[s, 1]
        if known:
            b = base[elem[s]]
            r0 = r1 = r2 = 0.0
            for k in range(4):
                row = b + FACES[face[s], k]
                r0 += own_w[s, k] * du[row, 0]
                r1 += own_w[s, k] * du[row, 1]
                r2 += own_w[s, k] * du[row, 2]
            for k in range(4):
                node = target_node[s, k]
                if node < 0:
                    continue
                c = node // 8
                w = target_w[s, k]
                if c < n_own:
                    row = base[c] + node % 8
                    r0 -= w * du[row, 0]
                    r1 -= w * du[row, 1]
                    r2 -= w * du[row, 2]
                else:
                    row = 8 * (c - n_own) + node % 8
                    r0 -= w * ghost_du[row, 0]
                    r1 -= w * ghost_du[row, 1]
                    r2 -= w * ghost_du[row, 2]
            rate = -(r0 * normal[s, 0] + r1 * normal[s, 1] + r2 * normal[s, 2]) / dt
        add(energy.dashpot, dashpot[s, 0] * 0.5 * rate * dt)
    normalize(energy.dashpot)


@njit(cache=True)
def loaded_stiffness(overlap, elem, target_elem, share, k_n, body, stiffness):
    """Add the normal stiffness share K [N/m] of every record in compression to the sums
    ``stiffness`` (n_b,) of the two bodies it joins (``body``: the body of each contact
    element)."""
    for s in range(overlap.shape[0]):
        if overlap[s] > 0.0:
            k = share[s] * k_n[s]
            stiffness[body[elem[s]]] += k
            stiffness[body[target_elem[s]]] += k


@njit(cache=True)
def contact_law(records, bodies, params, dt, energy):
    """Forces of one set of contact records (semi-springs or semi-edges,
    solver.cdem.contact.records.RecordArrays, packed: solver.cdem.packed) from this step's
    geometry; see the module docstring. records.share the part of the contact each record
    carries; ``bodies`` the DashpotBodies of the contact elements; ``params`` (ContactParams;
    the three packed) the dashpot's damping ratio zeta (damping_ratio), the friction coefficient
    mu (velocity_weakening: the static mu_s) and the chosen laws (laws,
    solver.contact_laws.register.LawChoice); dt the step [s]. Updated per record: f_t (the whole
    spring's tangential force), f_n (the normal force carried), status, dashpot (dashpot force
    and overlap rate, for book_carried_dashpot), force; ``energy`` (a CONTACT_ENERGY tally) +=
    friction, the first half of the dashpot's dissipation and the stored elastic energy [J].
    Returns the records in compression."""
    records, bodies, params = records.value, bodies.value, params.value
    zeta, mu, laws = params.damping_ratio, params.mu, params.laws
    elem, k_n, k_t, f_t = records.elem, records.k_n, records.k_t, records.f_t
    dashpot, f_n, status, overlap = records.dashpot, records.f_n, records.status, records.overlap
    normal, slip, target_elem = records.normal, records.slip, records.target_elem
    share, force = records.share, records.force
    body_of, body_mass, body_stiffness = bodies.of, bodies.mass, bodies.stiffness
    stable_mass = bodies.stable_mass
    n_active = 0
    for s in range(overlap.shape[0]):
        if overlap[s] <= 0.0:
            if status[s] == OPEN:
                continue                    # its forces and dashpot were cleared on opening
            dashpot[s, 0] = 0.0
            dashpot[s, 1] = 0.0
            force[s, 0] = 0.0
            force[s, 1] = 0.0
            force[s, 2] = 0.0
            f_t[s, 0] = 0.0
            f_t[s, 1] = 0.0
            f_t[s, 2] = 0.0
            f_n[s] = 0.0
            status[s] = OPEN
            continue
        n0, n1, n2 = normal[s, 0], normal[s, 1], normal[s, 2]
        d0, d1, d2 = slip[s, 0], slip[s, 1], slip[s, 2]
        delta = overlap[s]
        w = share[s]
        a = body_of[elem[s]]
        b = body_of[target_elem[s]]
        m = w * k_n[s] * _effective_mass(body_mass[a] / body_stiffness[a],
                                         body_mass[b] / body_stiffness[b])
        m = min(m, stable_mass[elem[s]], stable_mass[target_elem[s]])
        c_n = 2.0 * zeta * math.sqrt(k_n[s] * m / w)
        rate = -(d0 * n0 + d1 * n1 + d2 * n2) / dt
        fn = normal_law_force(laws, delta, rate, k_n[s], c_n)
        o0, o1, o2 = rotate_to_tangent(f_t[s, 0], f_t[s, 1], f_t[s, 2], n0, n1, n2)
        dn = d0 * n0 + d1 * n1 + d2 * n2
        t0, t1, t2 = d0 - dn * n0, d1 - dn * n1, d2 - dn * n2
        mu_now = friction_coefficient(laws, mu, t0, t1, t2, dt)
        s0, s1, s2, sliding, _ = cundall_strack_xyz(
            (f_t[s, 0], f_t[s, 1], f_t[s, 2]), (d0, d1, d2), (n0, n1, n2), k_t[s], mu_now, fn,
            0.0)
        work = -0.5 * ((o0 + s0) * t0 + (o1 + s1) * t1 + (o2 + s2) * t2)
        released = 0.5 * ((o0 * o0 + o1 * o1 + o2 * o2) - (s0 * s0 + s1 * s1 + s2 * s2)) / k_t[s]
        f_t[s, 0] = s0
        f_t[s, 1] = s1
        f_t[s, 2] = s2
        f_n[s] = w * fn
        status[s] = SLIP if sliding else STICK
        add(energy.friction, w * (work + released))
        dashpot[s, 0] = w * (fn - k_n[s] * delta)
        add(energy.dashpot, dashpot[s, 0] * 0.5 * rate * dt)
        dashpot[s, 1] = rate
        force[s, 0] = w * (fn * n0 + s0)
        force[s, 1] = w * (fn * n1 + s1)
        force[s, 2] = w * (fn * n2 + s2)
        add(energy.stored, w * (0.5 * k_n[s] * delta * delta
                                + 0.5 * (s0 * s0 + s1 * s1 + s2 * s2) / k_t[s]))
        if fn > 0.0:
            n_active += 1
    normalize(energy.friction)
    normalize(energy.dashpot)
    normalize(energy.stored)
    return n_active
