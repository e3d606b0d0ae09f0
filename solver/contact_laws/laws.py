"""Contact force laws: linear spring-dashpot normal force, Cundall-Strack tangential spring with
the Coulomb cap, and a brittle Mohr-Coulomb rock-joint variant with tension cut-off.

All functions are numba ``@njit(cache=True)`` and callable from other njit kernels.

Sign conventions (the same everywhere in this package)
-------------------------------------------------------
A contact joins body A (the one carrying the spring, e.g. a semi-spring) and body B (the
target face / edge / wall). ``normal`` is the unit contact normal pointing from B towards A
(the outward normal of B's target face).

* ``overlap`` delta > 0 is interpenetration (compression); ``overlap_rate`` = d delta/dt
  = -(v_A - v_B) . normal at the contact point.
* ``f_n`` is the normal force magnitude, **compression positive**: the force on A is
  ``f_n * normal``, on B ``-f_n * normal``. A negative ``f_n`` is tension (rock joints only).
* ``d_slip`` is the relative displacement increment of A with respect to B at the contact point
  during the step, (du_A - du_B); only its tangential part is used.
* ``f_t`` is the tangential force **on A** (on B it is ``-f_t``); the elastic spring opposes
  the slip: ``f_t <- f_t - k_t * d_slip_t``.
* Energies are in J; every ``dissipated`` value returned is >= 0 by construction.

Sources
-------
* Normal force F_n = k_n xi + gamma_n xi_dot, the linear dashpot model of seed 004 (its Eq. 3;
  Becker, Schwager & Poeschel 2008, Phys. Rev. E 77, 011304), with the coefficient of normal
  restitution e_n = exp(-beta t_c), beta = gamma_n / (2 m_eff), t_c = pi / omega,
  omega = sqrt(k_n/m_eff - beta^2) (seed 004 Eq. 5; the standard damped oscillator).
* Tangential spring: Cundall & Strack 1979 (Geotechnique 29(1), 47-65), as written in seed 004
  Eqs. 12-14 (numbers as cited in the seed text): F_t = -sgn(zeta) min(k_t |zeta|, mu F_n),
  with the spring length reset to the Coulomb limit while sliding, |zeta| = mu F_n / k_t
  (seed 004 Eq. 42). In 3D the stored force is rotated into the current tangent plane each step
  (magnitude kept), as 3DEC and PFC do.
* Rock joints: brittle Mohr-Coulomb with tension cut-off (CDEM seed 002 Eq. 14, reconstructed in
  ``shared/notes/cdem_anchors.md`` 1.2; 3DEC joint model): tension F_n < -T A breaks the joint;
  shear |F_t| > c A + mu F_n breaks it; a broken joint keeps residual friction mu F_n only and
  carries no tension.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

STICK = 0
SLIP = 1
OPEN = 2


@njit(cache=True)
def damping_ratio_from_restitution(e_n):
    """Damping ratio zeta = beta / omega_0 of the linear dashpot for a target e_n in (0, 1].

    From e_n = exp(-beta pi / omega), omega = omega_0 sqrt(1 - zeta^2) (damped oscillator,
    seed 004 Eq. 5):
    zeta = -ln e_n / sqrt(pi^2 + ln^2 e_n). This e_n holds when the collision ends at xi = 0
    (the force allowed to pull at the end); with the no-tension clamp of :func:`normal_force`
    the contact force ends earlier and the realised e_n is slightly larger, see
    :func:`clamped_restitution`.
    """
    ln_e = math.log(e_n)
    return -ln_e / math.sqrt(math.pi * math.pi + ln_e * ln_e)


@njit(cache=True)
def dashpot_coefficient(e_n, k_n, m_eff):
    """Normal dashpot coefficient gamma_n = 2 zeta sqrt(k_n m_eff) [N s/m] for a target e_n
    (linear spring-dashpot, seed 004 Eq. 3 with beta = gamma_n / (2 m_eff) = zeta omega_0)."""
    return 2.0 * damping_ratio_from_restitution(e_n) * math.sqrt(k_n * m_eff)


@njit(cache=True)
def normal_force(overlap, overlap_rate, k_n, c_n, tensile_cutoff):
    """Linear spring-dashpot normal force F_n = k_n delta + c_n d(delta)/dt (seed 004 Eq. 3),
    compression positive, clamped from below at ``-tensile_cutoff``.

    ``tensile_cutoff = 0`` is the no-tension contact: F_n >= 0, so the dashpot never pulls the
    bodies together at the end of an impact (the force ends when k_n delta + c_n delta_dot = 0,
    slightly before delta = 0), and a separated contact (delta <= 0) carries no force. A positive
    cut-off lets a bonded joint carry tension down to -tensile_cutoff (failure is decided by
    :func:`joint_update`, not here).
    """
    if overlap <= 0.0 and tensile_cutoff == 0.0:
        return 0.0
    f = k_n * overlap + c_n * overlap_rate
    if f < -tensile_cutoff:
        return -tensile_cutoff
    return f


@njit(cache=True)
def clamped_restitution(e_n):
    """The coefficient of normal restitution actually realised by the no-tension dashpot whose
    gamma_n was chosen by :func:`dashpot_coefficient` for ``e_n``.

    The contact force of the damped oscillator xi = (g_n/omega) e^{-beta t} sin(omega t) vanishes
    at omega t* = pi - atan2(2 beta omega, omega^2 - beta^2) (Schwager & Poeschel 2007, Granular
    Matter 9:465); the rebound velocity is -xi_dot(t*)/g_n.
    """
    zeta = damping_ratio_from_restitution(e_n)
    omega = math.sqrt(1.0 - zeta * zeta)
    t_star = force_end_time(zeta, omega)
    return -math.exp(-zeta * t_star) * (math.cos(omega * t_star)
                                        - zeta / omega * math.sin(omega * t_star))


@njit(cache=True)
def force_end_time(beta, omega):
    """Time t* at which the linear dashpot force k xi + gamma xi_dot of a collision starting at
    xi = 0, xi_dot = g_n > 0 first returns to zero: omega t* = pi - atan2(2 beta omega,
    omega^2 - beta^2); t* = pi/omega without damping."""
    return (math.pi - math.atan2(2.0 * beta * omega, omega * omega - beta * beta)) / omega


@njit(cache=True)
def rotate_to_tangent(f0, f1, f2, n0, n1, n2):
    """A stored tangential force turned into the plane normal to the unit vector n, its
    magnitude kept (3DEC/PFC convention; zero if it was purely normal)."""
    old = math.sqrt(f0 * f0 + f1 * f1 + f2 * f2)
    fn_part = f0 * n0 + f1 * n1 + f2 * n2
    f0 -= fn_part * n0
    f1 -= fn_part * n1
    f2 -= fn_part * n2
    rot = math.sqrt(f0 * f0 + f1 * f1 + f2 * f2)
    if rot > 0.0:
        s = old / rot
        f0 *= s
        f1 *= s
        f2 *= s
    return f0, f1, f2


@njit(cache=True)
def cundall_strack_xyz(f0, f1, f2, d0, d1, d2, n0, n1, n2, k_t, mu, f_n, cohesion_force):
    """Component form of :func:`cundall_strack_update` (no allocation, for hot loops).

    Returns ``(f0, f1, f2, sliding, dissipated)``.
    """
    f0, f1, f2 = rotate_to_tangent(f0, f1, f2, n0, n1, n2)
    old = math.sqrt(f0 * f0 + f1 * f1 + f2 * f2)
    cap = max(cohesion_force + mu * f_n, 0.0)
    # elastic trial with the tangential part of the slip increment
    dn = d0 * n0 + d1 * n1 + d2 * n2
    f0 -= k_t * (d0 - dn * n0)
    f1 -= k_t * (d1 - dn * n1)
    f2 -= k_t * (d2 - dn * n2)
    trial = math.sqrt(f0 * f0 + f1 * f1 + f2 * f2)
    sliding = trial > cap
    dissipated = 0.0
    if sliding:
        # radial return to the cap (spring length reset to the Coulomb limit); the energy is
        # booked along the path "slip under the cap c1 = max(|f_old|, cap), then the cap moves
        # to its new value", so it is >= 0 even when the normal force falls during the step
        c1 = max(old, cap)
        if trial > c1:
            dissipated += c1 * (trial - c1) / k_t
        reached = min(trial, c1)
        dissipated += 0.5 * (reached * reached - cap * cap) / k_t
        s = cap / trial
        f0 *= s
        f1 *= s
        f2 *= s
    return f0, f1, f2, sliding, dissipated


@njit(cache=True)
def cundall_strack_update(f_t, d_slip, normal, k_t, mu, f_n, cohesion_force):
    """Incremental Cundall-Strack tangential spring with the Coulomb cap.

    f_t (3,) old tangential force on A [N]; d_slip (3,) relative displacement increment of A
    w.r.t. B [m]; normal (3,) unit normal B -> A; k_t tangential stiffness [N/m]; mu friction
    coefficient; f_n normal force (compression positive) [N]; cohesion_force c*A [N] (0 for a
    frictional contact).

    Steps (Cundall & Strack 1979; seed 004 Eqs. 12-14, 42):
      1. rotate f_t into the plane normal to ``normal``, keeping |f_t|;
      2. trial F = f_t - k_t d_slip_t, cap = max(c A + mu F_n, 0);
      3. if |F| > cap: sliding, F <- cap F/|F| (radial return: the spring length is reset to
         the Coulomb limit). The dissipated energy is that of the path "slip d under the cap
         c1 = max(|f_t|, cap), then the cap moves to its new value":
         c1 max(|F| - c1, 0)/k_t + (min(|F|, c1)^2 - cap^2)/(2 k_t) >= 0; with an unchanged
         or growing cap this is cap (|F| - cap)/k_t, the cap force times the plastic slip.
    While sticking nothing is dissipated: the spring is conservative. Returns
    ``(f_t_new (3,), sliding, dissipated)``.
    """
    f0, f1, f2, sliding, dissipated = cundall_strack_xyz(
        f_t[0], f_t[1], f_t[2], d_slip[0], d_slip[1], d_slip[2],
        normal[0], normal[1], normal[2], k_t, mu, f_n, cohesion_force)
    out = np.empty(3)
    out[0] = f0
    out[1] = f1
    out[2] = f2
    return out, sliding, dissipated


@njit(cache=True)
def spring_energy(f_n, f_t, k_n, k_t):
    """Elastic energy of a contact's springs, F_n^2/(2 k_n) + |F_t|^2/(2 k_t) [J]."""
    return 0.5 * f_n * f_n / k_n + 0.5 * (f_t[0] ** 2 + f_t[1] ** 2 + f_t[2] ** 2) / k_t


@njit(cache=True)
def joint_update(overlap, f_t, d_slip, normal, k_n, k_t, mu, tension_force, cohesion_force,
                 broken):
    """Rock-joint contact spring: linear normal spring with tension cut-off, Cundall-Strack shear
    with Mohr-Coulomb strength, brittle (seed 002 Eq. 14 as reconstructed in cdem_anchors 1.2).

    overlap: the accumulated normal relative displacement [m] (the caller adds each step's
    increment, seed 002 Eq. 13 F_n <- F_n + K_n d(delta)), compression positive; f_t, d_slip,
    normal, k_t, mu as in :func:`cundall_strack_update`; tension_force T*A [N] and
    cohesion_force c*A [N] of the intact joint; broken: whether it has failed before.

    * F_n = k_n delta. Intact: if F_n < -T A the joint breaks in tension (both springs released).
      Broken: F_n <= 0 means open (no force, shear spring released).
    * Intact shear strength c A + mu F_n (F_n may be tensile); exceeding it breaks the joint in
      shear and the step is redone with the residual strength mu max(F_n, 0).
    Returns ``(f_n, f_t_new (3,), broken, status, dissipated)``; status is STICK, SLIP or OPEN;
    dissipated includes the spring energy released by breakage.
    """
    f_n = k_n * overlap
    released = 0.5 * (f_t[0] ** 2 + f_t[1] ** 2 + f_t[2] ** 2) / k_t
    if not broken and f_n < -tension_force:
        return 0.0, np.zeros(3), True, OPEN, released + 0.5 * f_n * f_n / k_n
    if broken and f_n <= 0.0:
        return 0.0, np.zeros(3), True, OPEN, released
    if not broken:
        new, sliding, dissipated = cundall_strack_update(f_t, d_slip, normal, k_t, mu, f_n,
                                                         cohesion_force)
        if not sliding:
            return f_n, new, False, STICK, dissipated
        if f_n <= 0.0:
            return 0.0, np.zeros(3), True, OPEN, released + 0.5 * f_n * f_n / k_n
    new, sliding, dissipated = cundall_strack_update(f_t, d_slip, normal, k_t, mu, f_n, 0.0)
    return f_n, new, True, SLIP if sliding else STICK, dissipated


@njit(cache=True)
def normal_force_array(overlap, overlap_rate, k_n, c_n, tensile_cutoff):
    """:func:`normal_force` over arrays of contacts (all arguments (n,)); returns (n,)."""
    out = np.empty(overlap.shape[0])
    for i in range(overlap.shape[0]):
        out[i] = normal_force(overlap[i], overlap_rate[i], k_n[i], c_n[i], tensile_cutoff[i])
    return out


@njit(cache=True)
def cundall_strack_array(f_t, d_slip, normal, k_t, mu, f_n, cohesion_force):
    """:func:`cundall_strack_update` over n contacts: f_t, d_slip, normal (n, 3), the rest (n,).

    Returns ``(f_t_new (n, 3), sliding (n,) bool, dissipated (n,))``.
    """
    n = f_t.shape[0]
    out = np.empty((n, 3))
    sliding = np.empty(n, dtype=np.bool_)
    dissipated = np.empty(n)
    for i in range(n):
        f0, f1, f2, s, e = cundall_strack_xyz(
            f_t[i, 0], f_t[i, 1], f_t[i, 2], d_slip[i, 0], d_slip[i, 1], d_slip[i, 2],
            normal[i, 0], normal[i, 1], normal[i, 2], k_t[i], mu[i], f_n[i], cohesion_force[i])
        out[i, 0] = f0
        out[i, 1] = f1
        out[i, 2] = f2
        sliding[i] = s
        dissipated[i] = e
    return out, sliding, dissipated
