"""Coefficient of tangential restitution e_t of the linear dashpot + Cundall-Strack contact
(Becker, Schwager and Poeschel 2008, Phys. Rev. E 77, 011304; docs/references.md).

One oblique collision (sphere-sphere, or sphere-wall with the wall's m, J -> infinity), relative
velocity at the contact point g = (g_n, g_t) at impact:

* normal: m_eff xi'' = -F_n, F_n = k_n xi + gamma_n xi' >= 0 (Becker et al. 2008 Eqs. 1, 3), solved
  exactly: xi = (g_n/omega) e^{-beta t} sin(omega t), beta = gamma_n/(2 m_eff),
  omega = sqrt(k_n/m_eff - beta^2) (Becker et al. 2008 Eq. 5). The contact force ends at t_end, the
  first zero of F_n (:func:`solver.contact_laws.laws.force_end_time`; t_end = t_c = pi/omega_n when
  gamma_n = 0). The tangential force is zero from then on, so e_t is final at t_end.
* tangential: alpha g_t' = F_t (Becker et al. 2008 Eq. 14) with 1/alpha = 1/m_eff + R_1^2/J_1 +
  R_2^2/J_2 (Becker et al. 2008 Eq. 15; alpha/m_eff = 2/7 for identical homogeneous spheres and for
  a homogeneous sphere on a wall), F_t the Cundall-Strack force of :func:`solver.contact_laws.laws.
  cundall_strack_xyz` with the Coulomb cap mu F_n (Becker et al. 2008 Eqs. 12-13).
* e_t = g_t(t_end) / g_t(0): +1 no tangential loss, negative when the tangential motion at the
  contact point is reversed (the sign convention of Becker et al. 2008).

Integration: the normal motion is evaluated exactly; the tangential degree of freedom is advanced
through the contact law itself by drift-kick-drift (position Verlet) with N steps of
dt = t_end/N. This is second order inside each regime (the Coulomb impulse is a midpoint
quadrature of the exact mu F_n(t)); the regime switches are not event-located, so a switch costs
a local error of at most O(dt) in the spring length. Measured self-convergence |e_t(N) - e_t(2N)|
at N = 4000: 5e-8 to 1.4e-6 (single- and multi-switch points; :func:`convergence_error`).
The switch count sees a regime phase only if it spans a half step: phases shorter than
~t_end/N (pairs of switches just before the end of contact, Becker et al. 2008 Sec. III.3.5) are
missed, so the count is a lower bound; with N = 4000, 27 of 16000 points of the default map have a
count of the wrong parity (a sliding start must end sliding, so it needs an even count), and
line scans at k_t/k_n = 12-20 give the same maximum (8) at N = 8000 and 32000.

With a dashpot (gamma_n > 0) F_n jumps to gamma_n g_n at impact while the spring starts at zero,
so every collision first sticks; Eqs. 45/48 and the sliding-throughout regime are for
gamma_n = 0.

Closed forms used as references
-------------------------------
* pure Coulomb sliding throughout (Walton 1993; Becker et al. 2008 Eq. 18):
  e_t = 1 - mu (1 + e_n) (m_eff/alpha) g_n/g_t.
* start in the Coulomb regime iff k_t g_t > mu dF_n/dt(0) (Becker et al. 2008 Eq. 45; gamma_n = 0:
  g_t/g_n > mu k_n/k_t); with gamma_n = 0 the Coulomb -> Cundall-Strack switch condition
  k_t g_t(t_s) = mu k_n xi'(t_s) (Becker et al. 2008 Eq. 44) with the Coulomb solution
  g_t(t) = g_t - mu (m_eff/alpha) g_n (1 - cos omega_n t) (Becker et al. 2008 Eq. 41) gives
  cos(omega_n t_s) = (k_t g_t - mu k_t (m_eff/alpha) g_n) / (mu g_n (k_n - k_t m_eff/alpha))
  (Becker et al. 2008 Eq. 47); no real root (|.| > 1, Becker et al. 2008 Eq. 48) means Coulomb
  throughout.
* small g_t/g_n: e_t -> cos(omega_t t_c), omega_t = sqrt(k_t/alpha) (Becker et al. 2008 Eq. 49),
  i.e. e_t -> cos(pi sqrt((m_eff/alpha) k_t/k_n)) for gamma_n = 0 (the k_t/k_n form of Eq. 49 in
  Becker et al. 2008's discussion of its Fig. 10; its equation number is lost in the text
  available).
* plateaus e_t = (-1)^m when omega_t = m omega_n and g_t/g_n < mu k_n/k_t (Becker et al. 2008, the
  commensurate-frequency plateaus of its Figs. 8-9; boundary from Eq. 45).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from solver.contact_laws.laws import cundall_strack_xyz, force_end_time, normal_force


@njit(cache=True)
def normal_history(g_n, k_n, m_eff, gamma_n, n_steps):
    """The exact normal motion of one collision sampled for the tangential integrator.

    xi = (g_n/omega) e^{-beta t} sin(omega t) (Becker et al. 2008 Eq. 5 solution), F_n from
    :func:`solver.contact_laws.laws.normal_force` (no tension). Returns ``(dt, f_half, f_whole,
    e_n)``: the step dt = t_end/n_steps, F_n at t_{n+1/2} and at t_{n+1} (n = 0..N-1; the last
    one is 0, the end of contact) and the normal restitution -xi_dot(t_end)/g_n.
    """
    beta = gamma_n / (2.0 * m_eff)
    omega = math.sqrt(k_n / m_eff - beta * beta)
    t_end = force_end_time(beta, omega)
    dt = t_end / n_steps
    f_half = np.empty(n_steps)
    f_whole = np.zeros(n_steps)
    for n in range(n_steps):
        for k in range(2):
            t = (n + 0.5 * (k + 1)) * dt
            decay = math.exp(-beta * t)
            s = math.sin(omega * t)
            xi = g_n / omega * decay * s
            xi_dot = g_n * decay * (math.cos(omega * t) - beta / omega * s)
            if k == 0:
                f_half[n] = normal_force(xi, xi_dot, k_n, gamma_n, 0.0)
            elif n + 1 < n_steps:
                f_whole[n] = normal_force(xi, xi_dot, k_n, gamma_n, 0.0)
    decay = math.exp(-beta * t_end)
    e_n = -decay * (math.cos(omega * t_end) - beta / omega * math.sin(omega * t_end))
    return dt, f_half, f_whole, e_n


@njit(cache=True)
def tangential_collision(g_t, k_t, alpha, mu, dt, f_half, f_whole):
    """Integrate the tangential motion of one collision; returns ``(e_t, n_switches,
    starts_sliding)``.

    g_t > 0 tangential relative velocity at impact [m/s]; k_t [N/m]; alpha tangential effective
    mass [kg]; mu friction coefficient; dt, f_half, f_whole from :func:`normal_history`.

    Drift-kick-drift (position Verlet): the spring takes the slip g_t(t_n) dt/2 up to t_{n+1/2},
    where its force (the contact law, cap mu F_n(t_{n+1/2})) kicks g_t over dt, then the slip
    g_{n+1} dt/2 up to t_{n+1}. The regime (Cundall-Strack stick or Coulomb slip) is read at the
    half steps, so it is never sampled at t = 0 or t_end where F_n = 0 and it is undefined;
    n_switches counts its changes between consecutive half steps.
    """
    normal = (0.0, 0.0, 1.0)
    g = g_t
    f_t = 0.0
    switches = 0
    starts_sliding = False
    previous = False
    for n in range(f_half.shape[0]):
        f_t, _, _, sliding, _ = cundall_strack_xyz((f_t, 0.0, 0.0), (0.5 * g * dt, 0.0, 0.0),
                                                   normal, k_t, mu, f_half[n], 0.0)
        if n == 0:
            starts_sliding = sliding
        elif sliding != previous:
            switches += 1
        previous = sliding
        g += f_t / alpha * dt
        f_t, _, _, _, _ = cundall_strack_xyz((f_t, 0.0, 0.0), (0.5 * g * dt, 0.0, 0.0),
                                             normal, k_t, mu, f_whole[n], 0.0)
    return g / g_t, switches, starts_sliding


def collide(g_n, g_t, k_n, k_t, m_eff, alpha, mu, gamma_n, n_steps):
    """One oblique collision (see the module docstring): ``(e_t, n_switches, starts_sliding,
    e_n)``; g_n, g_t > 0 [m/s], k_n, k_t [N/m], m_eff, alpha [kg], gamma_n [N s/m]."""
    dt, f_half, f_whole, e_n = normal_history(g_n, k_n, m_eff, gamma_n, n_steps)
    return (*tangential_collision(g_t, k_t, alpha, mu, dt, f_half, f_whole), e_n)


@njit(cache=True)
def collide_many(g_t, k_t, alpha, mu, dt, f_half, f_whole):
    """:func:`tangential_collision` over arrays g_t (n,) and k_t (n,) sharing one normal history.

    Returns ``(e_t (n,), switches (n,) int, starts_sliding (n,) bool)``.
    """
    n = g_t.shape[0]
    e_t = np.empty(n)
    switches = np.empty(n, dtype=np.int64)
    starts = np.empty(n, dtype=np.bool_)
    for i in range(n):
        e, s, st = tangential_collision(g_t[i], k_t[i], alpha, mu, dt, f_half, f_whole)
        e_t[i] = e
        switches[i] = s
        starts[i] = st
    return e_t, switches, starts


def walton_e_t(gt_gn, mu, e_n, alpha_over_meff):
    """Pure Coulomb sliding for the whole contact (Walton 1993; Becker et al. 2008 Eq. 18):
    e_t = 1 - mu (1 + e_n) (m_eff/alpha) g_n/g_t."""
    return 1.0 - mu * (1.0 + e_n) / alpha_over_meff / np.asarray(gt_gn, dtype=float)


def small_gt_limit(kt_kn, alpha_over_meff, omega_t_end):
    """e_t -> cos(omega_t t_end) for g_t/g_n -> 0 (Becker et al. 2008 Eq. 49); ``omega_t_end`` is
    omega_n t_end (= pi without damping), so omega_t t_end = sqrt(k_t/k_n / (alpha/m_eff))
    * omega_n t_end."""
    return math.cos(math.sqrt(kt_kn / alpha_over_meff) * omega_t_end)


def pure_coulomb_theory(gt_gn, kt_kn, mu, alpha_over_meff):
    """Whether an undamped collision stays in the Coulomb regime throughout: it starts there
    (Becker et al. 2008 Eq. 45) and the switch condition has no real root (Becker et al. 2008,
    Eqs. 47-48)."""
    gt_gn = np.asarray(gt_gn, dtype=float)
    kt_kn = np.asarray(kt_kn, dtype=float)
    m_over_a = 1.0 / alpha_over_meff
    starts = kt_kn * gt_gn > mu
    with np.errstate(divide="ignore", invalid="ignore"):
        cos_ts = (kt_kn * gt_gn - mu * kt_kn * m_over_a) / (mu * (1.0 - kt_kn * m_over_a))
    return starts & (np.abs(cos_ts) > 1.0)


def small_gt_first_order(gt_gn, kt_kn, mu, alpha_over_meff, omega_t_end):
    """Eq. 49 with its first-order correction in g_t/g_n (not in Becker et al. 2008;
    docs/references.md, Eq. T1):
    e_t ~ cos(theta) + (k_t/k_n) (g_t/g_n) sin(theta) |sin(theta)| / (2 mu),
    theta = omega_t t_c, for gamma_n = 0.

    Near the end of contact the Cundall-Strack spring holds zeta_e = (g_t/omega_t) sin(theta)
    while the cap mu k_n g_n (t_c - t) falls to zero; the collision switches to Coulomb a time
    s = k_t |zeta_e| / (mu k_n g_n) before t_c, where the tangential impulse drops from k_t zeta_e s
    (spring) to k_t zeta_e s / 2 (linearly falling cap). Dividing the impulse difference by
    alpha g_t gives the term above: the deviation from Eq. 49 is first order in g_t/g_n.
    """
    theta = math.sqrt(kt_kn / alpha_over_meff) * omega_t_end
    s = math.sin(theta)
    return math.cos(theta) + kt_kn * gt_gn * s * abs(s) / (2.0 * mu)


def convergence_error(gt_gn, kt_kn, mu, alpha_over_meff, n_steps):
    """|e_t(N) - e_t(2N)| for one undamped collision (unit g_n, k_n, m_eff): the self-convergence
    estimate of the integration error at N steps."""
    runs = [collide(1.0, gt_gn, 1.0, kt_kn, 1.0, alpha_over_meff, mu, 0.0, n)[0]
            for n in (n_steps, 2 * n_steps)]
    return abs(runs[0] - runs[1])
