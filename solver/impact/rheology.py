"""Macro-element equivalent foundation (Dattola et al. 2023, Sect. 2.1, Appendix B Eq. 9,
Appendix C).

Verified from the paper: the structure of Eq. (9): an elasto-damping element
``L = b_L(B_t, B_w, u_ed, du_ed/dt)`` in series with a visco-plastic element
``du_vp/dt = b_vp(Q(L, B_t), rho_c)``, ``drho_c/dt = b_rho(Q, rho_c)`` and a plastic slider
``du_ps/dt = b_ps(lambda_ps, L)``, ``f_ps lambda_ps = 0``; the compatibility of Eq. (10)-(11)
``u_ed = C_bl u_D - u_vp - u_ps``; the Gazetas shape factor ``J_s(R_s)`` of Eqs. (13)-(14); the
parameter list of Appendix A. The element laws themselves are those of Dattola et al. (2021)
and di Prisco & Vecchiotti (2006, "BIMPAM"); their full texts could not be found, so this
module implements the project's PROPOSED law, written out in docs/references.md, Eqs. I3-I9.
All of it sits in :func:`foundation` (stiffness, dashpots, capacity) and :func:`element_law`
(the series solve); replacing those two functions replaces the law.

Proposed laws [P] (``L = [N, T, M]``, ``p_a = 101.325 kPa``, ``B_eq = sqrt(B_t B_w)``,
``A_f = pi B_t B_w / 4``, ``I_w = pi B_t^3 B_w / 64``):

* springs, hypoelastic so that the footprint may grow during loading:
  ``dN_e = K_N du_ed_n`` with ``K_N = n_E J_s S_ef k_E p_a B_eq (u_ed_n / B_eq)^(n_E - 1)``
  (secant law ``N = J_s S_ef k_E p_a B_eq^2 (u/B_eq)^n_E`` at fixed footprint; for a sphere
  and ``n_E = 1`` this is Hertz-like, ``N ~ u^1.5``); ``K_T = 2(1-nu)/(2-nu) K_N``,
  ``K_R = K_N B_t^2 / 6`` (ratios of the rigid circular footing stiffnesses).
* dashpots (Gazetas radiation dashpots times ``eta``): ``C_N = eta_N sqrt(G_0/G) rho_s V_La
  A_f``, ``C_T = eta_T rho_s V_s A_f``, ``C_R = eta_R rho_s V_La I_w`` with ``rho_s = gamma/g``,
  ``G = (1-nu) K_N / (2 B_eq)``, ``V_s = sqrt(G/rho_s)``, ``V_La = 3.4 V_s / (pi (1-nu))``.
  The normal pair is Lysmer's analog of a rigid circular footing (Lysmer and Richart 1966):
  ``K_N = 4 G r_0 / (1-nu)`` and, at one modulus, the damping ratio ``0.425 / sqrt(B_z)`` with
  the mass ratio ``B_z = (1-nu) m / (4 rho_s r_0^3)``, so the rebound is set by the footprint
  against the block mass. The spring is the secant stiffness of the strained near field; the
  dashpot radiates waves into the far field (the "deep substrate" of the paper), which
  deforms at small strain, so its wave speed is that of the small-strain modulus ``G_0``:
  ``C_N`` carries ``sqrt(G_0/G)`` (``g0_ratio``; docs/references.md, Eq. I4, value and
  sensitivity in Sect. 2.8). The tangential and rocking dashpots keep the secant modulus
  (no trend of the paper constrains them).
* generalized force ``Q = [xi, h, m] = [N, T/mu, M/(psi B_t)] / V_M`` with ``mu = tan phi'``
  and the static capacity ``V_M = A_f (gamma B_min N_g s_g / 2 + gamma u_D N_q s_q)``
  (Vesic ``N_q = e^(pi tan phi) tan^2(45 + phi/2)``, ``N_g = 2 (N_q + 1) tan phi``,
  ``s_g = 1 - 0.4 B_min/B_max``, ``s_q = 1 + (B_min/B_max) tan phi``).
* Nova-Montrasio locus ``f = h^2 + m^2 - xi^2 (1 - xi/rho)^(2 beta)``; it is homothetic, so the
  locus through the current ``Q`` has size ``rho_d = xi / (1 - eta^(1/beta))``,
  ``eta = sqrt(h^2 + m^2)/xi`` (capped at 0.99); overstress ``Phi = <rho_d - rho_c>``.
* Perzyna flow along the gradient of the plastic potential
  ``g = Delta_1^2 h^2 + Delta_2^2 m^2 - xi^2 (1 - xi/rho_g)^(2 beta_g)`` through Q, divided by
  ``xi``: ``[du_n, mu du_t, psi B_t dtheta]_vp = Lambda [<1 - 3y>, 2 Delta_1^2 h/xi,
  2 Delta_2^2 m/xi]``, ``Lambda = gamma_v B_eq Phi^c_v``, ``y = (Delta_1^2 h^2 +
  Delta_2^2 m^2)/xi^2``. Choices made: (i) ``beta_g = 1/2`` instead of
  ``beta``: with ``beta = 0.95`` the potential has a near-corner at its tip ``h = m = 0``, where
  the flow direction grows like ``(|h|/xi)^((1-beta)/beta)``, so the slightest tangential force
  of a vertical impact switches on a large tangential flow and the ODE is not Lipschitz;
  (ii) the dilatant branch (``y > 1/3``) of the normal component is cut to zero;
  (iii) the flow is not normalised, so the tangential and rotational rates are proportional to
  ``T/N`` and ``M/N`` and cannot overshoot the imposed rate.
* hardening ``drho_c = (k_p / (2R)) (1 - rho_c) (du_n + alpha_vt |du_t| + alpha_vR B_t
  |dtheta|)_vp``. The length is the block diameter ``2R``, not the
  evolving ``B_eq`` (which vanishes at onset and would saturate rho_c instantly).
* plastic slider (Coulomb, non-dilatant): ``|T| <= tan(phi'_b) <N>``, ``du_ps_t`` along ``T``.

Series solve (the algebraic part of Eq. 9): the chain carries one force ``L``; with the
compatibility rate ``w`` (see ``dynamics.py``), ``du_ed = w - du_vp - du_ps`` and
``L = L_e + C du_ed``. With the trial force ``L* = L_e + C w``, the stress ratio ``eta`` and the
normal flow factor ``<1 - 3y>`` are taken at ``L*``; then ``Lambda`` solves
``Lambda = gamma_v B_eq Phi(N* - C_N Lambda <1 - 3y>)^c_v`` (brentq; ``Phi`` falls linearly
with ``Lambda``, so the root is unique), ``N = N* - C_N Lambda <1 - 3y>``, and ``T``, ``M``
follow in closed form, ``T = T* / (1 + 2 C_T Lambda Delta_1^2 / (mu^2 N))`` (same for M with
``psi B_t``). The slider then caps ``T``. Energy is exact by construction:
``L.w = L_e.du_ed + C du_ed^2 + L.du_vp + T du_ps`` with ``L.du_vp >= 0``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy.optimize import brentq

P_ATM = 101.325e3
ETA_MAX = 0.99


@dataclass(frozen=True)
class SoilLaw:
    """Numeric parameters of the macro-element (SI units, angles in radians)."""

    rho_s: float
    unit_weight: float
    mu: float
    nu: float
    mu_b: float
    k_e: float
    n_e: float
    s_ef: float
    eta: tuple[float, float, float]
    g0_ratio: float
    psi: float
    beta: float
    delta_1: float
    delta_2: float
    alpha_vt: float
    alpha_vr: float
    k_p: float
    gamma_v: float
    c_v: float
    n_q: float
    n_g: float

    @classmethod
    def from_config(cls, soil, gravity: float) -> "SoilLaw":
        tan_phi = math.tan(math.radians(soil.phi))
        n_q = math.exp(math.pi * tan_phi) * math.tan(math.radians(45.0 + soil.phi / 2.0)) ** 2
        return cls(rho_s=soil.unit_weight / (gravity if gravity > 0 else 9.81),
                   unit_weight=soil.unit_weight, mu=tan_phi, nu=soil.nu,
                   mu_b=math.tan(math.radians(soil.phi_b)), k_e=soil.k_e, n_e=soil.n_e,
                   s_ef=soil.s_ef, eta=(soil.eta_n, soil.eta_t, soil.eta_r),
                   g0_ratio=soil.g0_ratio, psi=soil.psi,
                   beta=soil.beta, delta_1=soil.delta_1, delta_2=soil.delta_2,
                   alpha_vt=soil.alpha_vt, alpha_vr=soil.alpha_vr, k_p=soil.k_p,
                   gamma_v=soil.gamma_v, c_v=soil.c_v, n_q=n_q, n_g=2.0 * (n_q + 1.0) * tan_phi)


@dataclass(frozen=True)
class Foundation:
    """Equivalent-foundation coefficients at one instant."""

    stiffness: tuple[float, float, float]
    damping: tuple[float, float, float]
    capacity: float
    b_eq: float
    b_t: float
    length: float


def foundation(law: SoilLaw, b_t: float, b_w: float, u_d: float, u_ed_n: float, j_s: float,
               length: float) -> Foundation:
    """Springs, dashpots and static capacity V_M of the footprint ``B_t x B_w`` [P]."""
    b_eq = math.sqrt(max(b_t * b_w, 0.0))
    if b_eq <= 0.0:
        return Foundation((0.0, 0.0, 0.0), (0.0, 0.0, 0.0), 0.0, 0.0, b_t, length)
    strain = max(u_ed_n, 1.0e-9 * b_eq) / b_eq
    k_n = law.n_e * j_s * law.s_ef * law.k_e * P_ATM * b_eq * strain ** (law.n_e - 1.0)
    k_t = 2.0 * (1.0 - law.nu) / (2.0 - law.nu) * k_n
    k_r = k_n * b_t * b_t / 6.0
    area = 0.25 * math.pi * b_t * b_w
    i_w = math.pi * b_t ** 3 * b_w / 64.0
    v_s = math.sqrt((1.0 - law.nu) * k_n / (2.0 * b_eq) / law.rho_s)
    v_la = 3.4 * v_s / (math.pi * (1.0 - law.nu))
    damping = (law.eta[0] * math.sqrt(law.g0_ratio) * law.rho_s * v_la * area,
               law.eta[1] * law.rho_s * v_s * area, law.eta[2] * law.rho_s * v_la * i_w)
    b_min, b_max = min(b_t, b_w), max(b_t, b_w)
    ratio = b_min / b_max
    capacity = area * (0.5 * law.unit_weight * b_min * law.n_g * (1.0 - 0.4 * ratio)
                       + law.unit_weight * max(u_d, 0.0) * law.n_q * (1.0 + ratio * law.mu))
    return Foundation((k_n, k_t, k_r), damping, capacity, b_eq, b_t, length)


def _locus_factor(law: SoilLaw, q: tuple[float, float, float]) -> float:
    """``1 / (1 - eta^(1/beta))``: the Nova-Montrasio locus through Q has size
    ``rho_d = xi`` times this factor (``eta = sqrt(h^2 + m^2)/xi``, capped at 0.99)."""
    xi, h, m = q
    ratio = min(math.hypot(h, m) / xi, ETA_MAX)
    return 1.0 / (1.0 - ratio ** (1.0 / law.beta))


def element_law(law: SoilLaw, fnd: Foundation, l_e, w, rho_c: float):
    """Series elasto-damping / visco-plastic / slider chain at one instant [P].

    ``l_e``: spring forces ``[N_e, T_e, M_e]``; ``w``: compatibility rate (Eq. 10 in rate
    form). Returns ``(L, du_ed, du_vp, du_ps_t, drho_c)`` with ``L = l_e + C du_ed`` and
    ``du_ed = w - du_vp - [0, du_ps_t, 0]``.
    """
    c = fnd.damping
    trial = [l_e[i] + c[i] * w[i] for i in range(3)]
    force, du_vp = list(trial), [0.0, 0.0, 0.0]
    if fnd.capacity > 0.0 and trial[0] > 0.0:
        q_trial = (trial[0] / fnd.capacity, trial[1] / (law.mu * fnd.capacity),
                   trial[2] / (law.psi * fnd.b_t * fnd.capacity))
        factor = _locus_factor(law, q_trial)
        y = ((law.delta_1 * q_trial[1]) ** 2 + (law.delta_2 * q_trial[2]) ** 2) / q_trial[0] ** 2
        normal = max(1.0 - 3.0 * y, 0.0)
        velocity = law.gamma_v * fnd.b_eq

        def rate(lam_: float) -> float:
            over = factor * (trial[0] - lam_ * c[0] * normal) / fnd.capacity - rho_c
            return velocity * over ** law.c_v if over > 0.0 else 0.0

        lam = rate(0.0)
        if lam > 0.0 and normal > 0.0:
            lam = brentq(lambda x: x - rate(x), 0.0, lam, xtol=1e-14 * lam, rtol=1e-13)
        force[0] = trial[0] - c[0] * lam * normal
        if force[0] > 0.0 and lam > 0.0:
            shear_t = 2.0 * lam * law.delta_1 ** 2 / (law.mu ** 2 * force[0])
            shear_r = 2.0 * lam * law.delta_2 ** 2 / ((law.psi * fnd.b_t) ** 2 * force[0])
            force[1] = trial[1] / (1.0 + c[1] * shear_t)
            force[2] = trial[2] / (1.0 + c[2] * shear_r)
            du_vp = [lam * normal, shear_t * force[1], shear_r * force[2]]
    du_ps = 0.0
    cap = law.mu_b * max(force[0], 0.0)
    if abs(force[1]) > cap and c[1] > 0.0:
        capped = math.copysign(cap, force[1])
        du_ps = (force[1] - capped) / c[1]
        force[1] = capped
    du_ed = [w[0] - du_vp[0], w[1] - du_vp[1] - du_ps, w[2] - du_vp[2]]
    hardening = du_vp[0] + law.alpha_vt * abs(du_vp[1]) + law.alpha_vr * fnd.b_t * abs(du_vp[2])
    drho = law.k_p / fnd.length * (1.0 - rho_c) * hardening
    return force, du_ed, du_vp, du_ps, drho
