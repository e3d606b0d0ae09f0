"""The contact force of semi-springs and semi-edges alike: one call into solver.contact_laws.

Penalty springs in the contact frame (Feng et al. 2014, Eq. 13), K_n = k_n A, K_t = k_t A:
the normal force of solver.contact_laws.laws.normal_force on the overlap (no tension;
dashpot c_n = 2 zeta(e_n) sqrt(K_n m), m = m_a m_b / (m_a + m_b) with m_a, m_b a quarter
of the masses of the carrying and the target element, a held element counting as infinitely
heavy: a single stiff element landing flat on a face of a fixed base, 4 semi-springs
carrying its mass, rebounds with solver.contact_laws.laws.clamped_restitution(e_n)) and the
incremental Cundall-Strack tangential spring with the Coulomb cap mu F_n
(cundall_strack_xyz) on the relative displacement increment. The tangential spring is kept
when the target changes (rotated into the new tangent plane) and reset when the contact
opens.

Energy booking: a force computed now acts over the next step, so the work of the dashpot
term F_n - K_n delta (the dashpot, or minus the spring while the no-tension clamp holds) is
booked then, at the mean of this step's and the next step's overlap rates; a contact that
opens books its last dashpot force at its last rate.
"""

from __future__ import annotations

import math

from numba import njit

from solver.contact_laws.laws import OPEN, SLIP, STICK, cundall_strack_xyz, normal_force


@njit(cache=True)
def _effective_mass(m_a, m_b):
    """Reduced mass of two bodies; a held one (inf) leaves the other's, two held ones 0."""
    if math.isinf(m_a):
        return 0.0 if math.isinf(m_b) else m_b
    if math.isinf(m_b):
        return m_a
    return m_a * m_b / (m_a + m_b)


@njit(cache=True)
def contact_law(overlap, normal, slip, elem, target_elem, k_n, k_t, c_unit, mass, mu, dt,
                f_t, f_n, status, dashpot, force, tally):
    """Forces of one set of contact records (semi-springs or semi-edges) from this step's
    geometry; see the module docstring. mass (n_elements,) the dashpot mass of each contact
    element [kg] (inf: held); f_t, f_n, status, dashpot, force updated per record; tally
    (3,) += friction and dashpot dissipation [J]. Returns (records in compression, stored
    elastic energy [J])."""
    n_active = 0
    stored = 0.0
    for s in range(overlap.shape[0]):
        if overlap[s] <= 0.0:
            if dashpot[s, 0] != 0.0:
                tally[1] += dashpot[s, 0] * dashpot[s, 1] * dt
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
        c_n = c_unit[s] * math.sqrt(_effective_mass(mass[elem[s]], mass[target_elem[s]]))
        rate = -(d0 * n0 + d1 * n1 + d2 * n2) / dt
        fn = normal_force(delta, rate, k_n[s], c_n, 0.0)
        s0, s1, s2, sliding, dissipated = cundall_strack_xyz(
            f_t[s, 0], f_t[s, 1], f_t[s, 2], d0, d1, d2, n0, n1, n2, k_t[s], mu, fn, 0.0)
        f_t[s, 0] = s0
        f_t[s, 1] = s1
        f_t[s, 2] = s2
        f_n[s] = fn
        status[s] = SLIP if sliding else STICK
        tally[0] += dissipated
        tally[1] += dashpot[s, 0] * 0.5 * (dashpot[s, 1] + rate) * dt
        dashpot[s, 0] = fn - k_n[s] * delta
        dashpot[s, 1] = rate
        force[s, 0] = fn * n0 + s0
        force[s, 1] = fn * n1 + s1
        force[s, 2] = fn * n2 + s2
        stored += 0.5 * k_n[s] * delta * delta + 0.5 * (s0 * s0 + s1 * s1 + s2 * s2) / k_t[s]
        if fn > 0.0:
            n_active += 1
    return n_active, stored
