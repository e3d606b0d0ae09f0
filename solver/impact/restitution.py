"""Restitution coefficients of one impact (Dattola et al. 2023, Sects. 2.3-2.4, Eqs. 1-6).

* apparent coefficients at the centre of mass: ``e_n = -v_n^f / v_n^0``, ``e_t = v_t^f / v_t^0``
  (Dattola et al. 2023, Sect. 2.3; ``e_t`` is undefined for ``theta_in = 0``), read at the end
  of contact (docs/references.md, Eq. R3). An impact that ends by loss of adherence
  (``bounce``) or in contact at ``t_max`` (``stop``) is read at that instant. One that ends by
  toppling of the equivalent foundation goes on rolling about the contact (Dattola et al. 2023,
  Sect. 2.1): ``e_n`` is read at the toppling (the rolling phase carries no normal velocity),
  ``e_t`` once the friction at the contact has stopped its slip, by the conservation of the
  angular momentum about the contact point, ``r_n`` below the centre::

      v_t^roll = (m r_n v_t + I dtheta/dt) / (m r_n + I / r_n)

  which for a block without spin is the rolling limit ``v_t^roll / v_t = 1 - 1/(1 + m r_n^2/I)``
  (5/7 for a sphere on its radius);
* contact coefficient ``e_n* = -v_c^f / v_c^0`` with the normal velocity of the contact point,
  ``v_c = v_n + r dtheta/dt`` (r: t-offset of the contact point from the centre; the lowest
  point at onset, the footprint centre, Eq. 37, at the end);
* rotational energy ratio ``R_r(t) = E_kr / E_k`` (Eqs. 2-3);
* energetic coefficient ``e_bar = sqrt(E_k^f / E_k^0)`` (Heidenreich 2004) and its expression
  from the apparent coefficients, Eq. (5) with the paper's ``R_t0, R_t`` read as ``R_r0, R_r``
  (docs/references.md, Eq. R1)::

      e_bar = sqrt((1 - R_r0) / (1 - R_r) (e_n^2 cos^2 theta_in + e_t^2 sin^2 theta_in))

  where ``e_t sin theta_in`` is written ``v_t^f / |v^0|`` so that the formula also holds for
  vertical impacts of eccentric blocks (``v_t^0 = 0`` but ``v_t^f != 0``);
* Vijayakumar et al. (2012) apparent coefficient, Dattola et al. (2023), Eq. (6), for a rigid
  instantaneous impact with a normal impulse at the contact point (docs/references.md, Eq. R2,
  derived; the paper prints ``r_t^2`` in the last numerator, which is dimensionally wrong)::

      e_n = (I e_n* - m r^2) / (I + m r^2) + (1 + e_n*) I r / (I + m r^2) * dtheta_0 / v_n^0

  with r the onset contact-point offset, ``dtheta_0`` clockwise and ``v_n^0 > 0`` into the
  ground; for a sphere (r = 0) it reduces to ``e_n = e_n*``.
"""

from __future__ import annotations

import numpy as np


def rotational_ratio(e_kr, e_kt):
    """``R_r = E_kr / (E_kr + E_kt)`` (Dattola et al. 2023, Eqs. 2-3)."""
    e_kr, e_kt = np.asarray(e_kr, float), np.asarray(e_kt, float)
    total = e_kr + e_kt
    return np.where(total > 0.0, e_kr / np.where(total > 0.0, total, 1.0), 0.0)


def energetic_coefficient(e_n, e_t_sin, theta_in, r_r0, r_r):
    """Dattola et al. (2023), Eq. (5), corrected (docs/references.md, Eq. R1):
    ``sqrt((1 - R_r0)/(1 - R_r) (e_n^2 cos^2 th_in + (e_t sin th_in)^2))``."""
    translational = np.asarray(e_n) ** 2 * np.cos(theta_in) ** 2 + np.asarray(e_t_sin) ** 2
    return np.sqrt((1.0 - np.asarray(r_r0)) / (1.0 - np.asarray(r_r)) * translational)


def vijayakumar(e_contact, mass, inertia, arm, omega_0, v_n0):
    """Apparent normal coefficient of a rigid instantaneous impact, Dattola et al. (2023),
    Eq. (6) corrected (docs/references.md, Eq. R2)."""
    e_contact, arm = np.asarray(e_contact, float), np.asarray(arm, float)
    denom = inertia + mass * arm ** 2
    return ((inertia * e_contact - mass * arm ** 2) / denom
            + (1.0 + e_contact) * inertia * arm / denom * np.asarray(omega_0) / np.asarray(v_n0))


def rolling_velocity(mass, inertia, arm, v_t, omega):
    """Centre velocity along the ground once the slip of the contact point ``arm`` below the
    centre has stopped: ``(m r v_t + I omega) / (m r + I / r)`` (angular momentum about the
    contact point conserved; docs/references.md, Eq. R3)."""
    return (mass * arm * v_t + inertia * omega) / (mass * arm + inertia / arm)


def peak(t, values) -> float:
    """Largest value of a smooth history sampled at the solver's steps: the vertex of the
    parabola through the largest sample and its two neighbours (error third order in the
    step, so that mirror-image impacts, stepped differently, give the same peak)."""
    t, values = np.asarray(t, float), np.asarray(values, float)
    i = int(np.argmax(values))
    if i == 0 or i == len(values) - 1:
        return float(values[i])
    a, b, c = np.polyfit(t[i - 1:i + 2] - t[i], values[i - 1:i + 2], 2)
    return float(c - b * b / (4.0 * a)) if a < 0.0 else float(values[i])


def coefficients(setup, history) -> dict:
    """All coefficients and impact measures of a finished impact ``history``."""
    y, d = history.y, history.derived
    v_n0, v_t0, omega_0 = setup.initial_velocity
    v_n, v_t, omega = y[3, -1], y[4, -1], y[5, -1]
    e_k0 = 0.5 * setup.mass * setup.speed ** 2 + 0.5 * setup.inertia * omega_0 ** 2
    e_kt, e_kr = d["E_kt"], d["E_kr"]
    r_r = rotational_ratio(e_kr, e_kt)
    r_r0 = float(r_r[0])
    e_n = -v_n / v_n0
    v_t_out = (rolling_velocity(setup.mass, setup.inertia, float(d["r_n"][-1]), v_t, omega)
               if history.end == "topple" else v_t)
    e_t = v_t_out / v_t0 if v_t0 != 0.0 else float("nan")
    v_c0 = v_n0 + setup.contact_arm_0 * omega_0
    e_contact = -(v_n + d["r_t"][-1] * omega) / v_c0
    balance = e_kt + e_kr + d["E_p"] + d["W_contact"]
    return {
        "end": history.end,
        "duration": float(history.t[-1]),
        "max_penetration": peak(history.t, d["u_D"]),
        "max_displacement": float(np.max(y[0])),
        "max_force": float(np.max(d["N"])),
        "max_moment": float(np.max(np.abs(d["M"]))),
        "rotation": float(y[2, -1]),
        "e_n": float(e_n),
        "e_t": float(e_t),
        "e_contact": float(e_contact),
        "e_energy": float(np.sqrt((e_kt[-1] + e_kr[-1]) / e_k0)),
        "e_energy_formula": float(energetic_coefficient(e_n, v_t / setup.speed, setup.theta_in,
                                                        r_r0, r_r[-1])),
        "e_vijayakumar": float(vijayakumar(e_contact, setup.mass, setup.inertia,
                                           setup.contact_arm_0, omega_0, v_n0)),
        "rot_ratio_max": float(np.max(r_r)),
        "dissipated": float(np.sum(y[16:19, -1])),
        "energy_closure": float(np.max(np.abs(balance - e_k0)) / e_k0),
    }
