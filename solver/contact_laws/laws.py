"""Contact force laws: linear spring-dashpot normal force, Cundall-Strack tangential spring with
the Coulomb cap, velocity-weakening friction, and a brittle Mohr-Coulomb rock-joint variant
with tension cut-off; and the dispatch kernels that apply the laws a case chose by name
(:func:`normal_law_force`, :func:`friction_coefficient`; the register of names and ids is
solver.contact_laws.register).

All functions are numba ``@njit(cache=True)`` scalar kernels, callable from other njit kernels;
the ones used per contact in hot loops are inlined into their callers.

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
* Normal force F_n = k_n xi + gamma_n xi_dot, the linear dashpot model (Becker, Schwager and
  Poeschel 2008, their Eq. 3), with the coefficient of normal restitution e_n = exp(-beta t_c),
  beta = gamma_n / (2 m_eff), t_c = pi / omega, omega = sqrt(k_n/m_eff - beta^2) (their
  Eq. 5; the standard damped oscillator).
* Tangential spring: Cundall and Strack (1979), as written by Becker et al. (2008), Eqs. 12-14:
  F_t = -sgn(zeta) min(k_t |zeta|, mu F_n), with the spring length reset to the Coulomb limit
  while sliding, |zeta| = mu F_n / k_t (their Eq. 42). In 3D the stored force is rotated into
  the current tangent plane each step (magnitude kept), as 3DEC and PFC do.
* Velocity-weakening friction (:func:`velocity_weakening_friction`): Lucas, Mangeney and
  Ampuero (2014), mu(v) = mu_d + (mu_s - mu_d) / (1 + |v| / v_c).
* Rock joints (:func:`joint_spring`): brittle Mohr-Coulomb with tension cut-off (Feng et al.
  2014, Eq. 14, whose typeset form is lost; written out as equations J1-J4 of
  docs/references.md; the 3DEC joint model): tension F_n < -T A breaks the joint; shear
  |F_t| > c A + mu F_n, F_n signed, breaks it; a broken joint keeps residual friction mu F_n
  only and carries no tension. The CDEM interface springs (solver.cdem.interface) call it.

Full references: docs/references.md.
"""

from __future__ import annotations

import math

from numba import njit

from solver.contact_laws.register import VELOCITY_WEAKENING_ID

STICK = 0
SLIP = 1
OPEN = 2

INTACT, BROKEN_TENSION, BROKEN_SHEAR = 0, 1, 2
"""States of a joint spring (:func:`joint_spring`)."""


@njit(cache=True)
def damping_ratio_from_restitution(e_n):
    """Damping ratio zeta = beta / omega_0 of the linear dashpot for a target e_n in (0, 1].

    From e_n = exp(-beta pi / omega), omega = omega_0 sqrt(1 - zeta^2) (damped oscillator,
    Becker et al. 2008, Eq. 5):
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
    (linear spring-dashpot, Becker et al. 2008, Eq. 3, with
    beta = gamma_n / (2 m_eff) = zeta omega_0)."""
    return 2.0 * damping_ratio_from_restitution(e_n) * math.sqrt(k_n * m_eff)


@njit(cache=True)
def normal_force(overlap, overlap_rate, k_n, c_n, tensile_cutoff):
    """Linear spring-dashpot normal force F_n = k_n delta + c_n d(delta)/dt (Becker et al. 2008,
    Eq. 3), compression positive, clamped from below at ``-tensile_cutoff``.

    ``tensile_cutoff = 0`` is the no-tension contact: F_n >= 0, so the dashpot never pulls the
    bodies together at the end of an impact (the force ends when k_n delta + c_n delta_dot = 0,
    slightly before delta = 0), and a separated contact (delta <= 0) carries no force. A positive
    cut-off lets a bonded joint carry tension down to -tensile_cutoff (failure is decided by
    :func:`joint_spring`, not here).
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


@njit(cache=True, inline="always")
def rotate_to_tangent(f0, f1, f2, n0, n1, n2):
    """A stored tangential force turned into the plane normal to the unit vector n, its
    magnitude kept (3DEC/PFC convention; zero if it was purely normal). Where removing the
    normal part left the squared magnitude as it was (a normal part at the rounding level, as
    in most springs of a block at rest), the rescale would multiply by exactly 1: it is left
    out, with its two square roots and division."""
    old2 = f0 * f0 + f1 * f1 + f2 * f2
    fn_part = f0 * n0 + f1 * n1 + f2 * n2
    f0 -= fn_part * n0
    f1 -= fn_part * n1
    f2 -= fn_part * n2
    rot2 = f0 * f0 + f1 * f1 + f2 * f2
    if rot2 == old2:
        return f0, f1, f2
    rot = math.sqrt(rot2)
    if rot > 0.0:
        s = math.sqrt(old2) / rot
        f0 *= s
        f1 *= s
        f2 *= s
    return f0, f1, f2


@njit(cache=True, inline="always")
def tangential_trial(f0, f1, f2, d0, d1, d2, n0, n1, n2, k_t):
    """Elastic trial of the incremental tangential spring (Cundall and Strack 1979): the old
    force f on A rotated into the plane normal to n (:func:`rotate_to_tangent`), then
    f <- f - k_t d_t with d_t the tangential part of the slip increment d = du_A - du_B.

    Returns ``(f0, f1, f2, old2)``, old2 = |rotated old force|^2 (for :func:`coulomb_return`).
    """
    f0, f1, f2 = rotate_to_tangent(f0, f1, f2, n0, n1, n2)
    old2 = f0 * f0 + f1 * f1 + f2 * f2
    dn = d0 * n0 + d1 * n1 + d2 * n2
    f0 -= k_t * (d0 - dn * n0)
    f1 -= k_t * (d1 - dn * n1)
    f2 -= k_t * (d2 - dn * n2)
    return f0, f1, f2, old2


@njit(cache=True, inline="always")
def coulomb_return(f0, f1, f2, old2, cap, k_t):
    """Radial return of a trial tangential force to the Coulomb cap >= 0.

    Sliding where |F| > cap: F <- cap F/|F| (the spring length reset to the Coulomb limit).
    The dissipated energy is that of the path "slip under the cap c1 = max(|f_old|, cap), then
    the cap moves to its new value" (|f_old| = sqrt(old2)):
    c1 max(|F| - c1, 0)/k_t + (min(|F|, c1)^2 - cap^2)/(2 k_t) >= 0; with an unchanged or
    growing cap this is cap (|F| - cap)/k_t, the cap force times the plastic slip. While
    sticking nothing is dissipated: the spring is conservative.
    Returns ``(f0, f1, f2, sliding, dissipated)``.
    """
    trial = math.sqrt(f0 * f0 + f1 * f1 + f2 * f2)
    if trial <= cap:
        return f0, f1, f2, False, 0.0
    c1 = max(math.sqrt(old2), cap)
    dissipated = 0.0
    if trial > c1:
        dissipated += c1 * (trial - c1) / k_t
    reached = min(trial, c1)
    dissipated += 0.5 * (reached * reached - cap * cap) / k_t
    s = cap / trial
    return f0 * s, f1 * s, f2 * s, True, dissipated


@njit(cache=True)
def cundall_strack_xyz(f, d, n, k_t, mu, f_n, cohesion_force):
    """Incremental Cundall-Strack tangential spring with the Coulomb cap, component form.

    f old tangential force on A [N]; d relative displacement increment of A w.r.t. B [m];
    n unit normal B -> A (each a 3-tuple (x, y, z)); k_t tangential stiffness [N/m]; mu
    friction coefficient; f_n normal force (compression positive) [N]; cohesion_force c*A [N]
    (0 for a frictional contact).

    Steps (Cundall and Strack 1979; Becker et al. 2008, Eqs. 12-14 and 42):
      1. :func:`tangential_trial`: rotate f into the plane normal to n, keeping |f|, then
         F = f - k_t d_t;
      2. cap = max(c A + mu F_n, 0);
      3. :func:`coulomb_return` to the cap, with the dissipated energy.
    Returns ``(f0, f1, f2, sliding, dissipated)``.
    """
    f0, f1, f2 = f
    d0, d1, d2 = d
    n0, n1, n2 = n
    f0, f1, f2, old2 = tangential_trial(f0, f1, f2, d0, d1, d2, n0, n1, n2, k_t)
    cap = max(cohesion_force + mu * f_n, 0.0)
    return coulomb_return(f0, f1, f2, old2, cap, k_t)


@njit(cache=True, inline="always")
def velocity_weakening_friction(mu_s, mu_d, v_c, slip_rate):
    """Friction coefficient of a contact slipping at ``slip_rate`` [m/s] (Lucas, Mangeney and
    Ampuero 2014): mu(v) = mu_d + (mu_s - mu_d) / (1 + |v| / v_c), from the static mu_s at
    rest down to the dynamic mu_d at |v| >> v_c [m/s], half-way at |v| = v_c."""
    return mu_d + (mu_s - mu_d) / (1.0 + abs(slip_rate) / v_c)


@njit(cache=True, inline="always")
def normal_law_force(laws, overlap, overlap_rate, k_n, c_n):
    """Normal force of the law ``laws.normal`` (solver.contact_laws.register.LawChoice),
    compression positive, no tension. linear_dashpot (:func:`normal_force`, penalty spring
    k_n and dashpot c_n) is the only one; a new normal law adds its branch on the id."""
    return normal_force(overlap, overlap_rate, k_n, c_n, 0.0)


@njit(cache=True, inline="always")
def friction_coefficient(laws, mu, t0, t1, t2, dt):
    """Friction coefficient of the law ``laws.tangential`` (solver.contact_laws.register
    .LawChoice) for a contact whose tangential relative displacement increment over this
    step (dt) is t = (t0, t1, t2): coulomb, mu itself; velocity_weakening,
    :func:`velocity_weakening_friction` with mu_s = mu at the slip rate v = |t| / dt.

    v is the relative tangential speed of the two bodies at the contact over the step, the
    increment of the step's half-step velocities (the trial slip), not the last step's
    plastic slip: it is known before the force (the law stays explicit, mu(v^(n-1/2)) for
    F^n), it needs no state per contact, and it is the sliding speed the law of Lucas et
    al. (2014) is written in; a sticking contact's elastic rate is small and keeps mu near
    mu_s. Evaluated half a step behind, the law is stable where the friction's slope
    F_n (mu_s - mu_d) / v_c, over the mass it acts on, times dt is far below 1."""
    if laws.tangential == VELOCITY_WEAKENING_ID:
        slip_rate = math.sqrt(t0 * t0 + t1 * t1 + t2 * t2) / dt
        return velocity_weakening_friction(mu, laws.dynamic_friction, laws.weakening_velocity,
                                           slip_rate)
    return mu


@njit(cache=True, inline="always")
def joint_spring(overlap, f, d, n, k_n, k_t, tan_phi, tension_force, cohesion_force, state,
                 breakable):
    """Brittle rock-joint spring: linear normal spring, Cundall-Strack shear spring, Mohr-Coulomb
    strength with a tension cut-off (Feng et al. 2014, Eq. 14; joint equations J1-J4 of
    docs/references.md).

    Sign convention (this package's): overlap delta = accumulated normal relative displacement,
    **compression positive** (the caller adds each step's increment, Feng et al. 2014 Eq. 13);
    F_n = k_n delta, compression positive, the force on A is F_n n (n unit normal from B to A);
    f the shear force on A, d = du_A - du_B the step's relative displacement increment (f, d
    and n each a 3-tuple (x, y, z)); k_n, k_t spring constants [N/m]; tension_force T A and
    cohesion_force c A [N] of the intact joint; state INTACT, BROKEN_TENSION or BROKEN_SHEAR;
    breakable: whether the failure criteria apply.

    * Intact, F_n < -T A: tensile failure; both springs are released.
    * Intact shear strength S = c A + F_n tan(phi), the Mohr-Coulomb line on the signed normal
      force, tension included: a tensile normal force lowers the strength. This is the
      Mohr-Coulomb joint of 3DEC and UDEC (Itasca documentation), the criterion Feng et al.
      (2014) name for Eq. 14; clipping the normal force at zero (S = c A for any tension)
      would make a joint in tension as strong in shear as one without normal load, which no
      Coulomb joint is. Where S < 0 (tension beyond the envelope's apex, F_n < -c A/tan(phi))
      the joint fails in tension, so the effective cut-off is min(T, c/tan(phi)) A, as in
      3DEC. |F_s| > S: shear failure; the shear force drops to the residual
      max(F_n, 0) tan(phi) and a tensile F_n is released.
    * Broken (for ever: T = c = 0): no tension, F_n = k_n max(delta, 0); residual friction
      |F_s| <= F_n tan(phi) (:func:`cundall_strack_xyz` with no cohesion).
    Returns ``(f_n, f0, f1, f2, state, released, dissipated)``: released is the elastic energy
    freed by a failure this step, dissipated the friction work of a broken joint [J].
    """
    f0, f1, f2 = f
    d0, d1, d2 = d
    n0, n1, n2 = n
    f_n = k_n * overlap
    f0, f1, f2, old2 = tangential_trial(f0, f1, f2, d0, d1, d2, n0, n1, n2, k_t)
    if state != INTACT:
        if f_n < 0.0:
            f_n = 0.0
        f0, f1, f2, _, dissipated = coulomb_return(f0, f1, f2, old2, f_n * tan_phi, k_t)
        return f_n, f0, f1, f2, state, 0.0, dissipated
    if not breakable:
        return f_n, f0, f1, f2, state, 0.0, 0.0
    mag2 = f0 * f0 + f1 * f1 + f2 * f2
    strength = cohesion_force + f_n * tan_phi
    if f_n < -tension_force or strength < 0.0:
        released = 0.5 * f_n * f_n / k_n + 0.5 * mag2 / k_t
        return 0.0, 0.0, 0.0, 0.0, BROKEN_TENSION, released, 0.0
    if mag2 > strength * strength:
        released = 0.0
        if f_n < 0.0:
            released = 0.5 * f_n * f_n / k_n
            f_n = 0.0
        cap = f_n * tan_phi
        released += 0.5 * (mag2 - cap * cap) / k_t
        s = cap / math.sqrt(mag2)
        return f_n, f0 * s, f1 * s, f2 * s, BROKEN_SHEAR, released, 0.0
    return f_n, f0, f1, f2, state, 0.0, 0.0
