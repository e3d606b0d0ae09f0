"""Footprint of an ellipsoid of revolution on the ground plane (Dattola et al. 2023,
Appendix D, corrected: docs/references.md, Eqs. G1-G9).

Frame (Dattola et al. 2023, Sect. 2.1, Eq. 15): ``n`` normal to the slope and pointing *into*
the ground, ``t`` along the slope, ``w`` out of plane; the ground plane is ``n = 0``. The block is a
prolate spheroid with semi-axis ``H`` along its symmetry axis and ``R`` across it (Eq. 7:
``H = A_r R``). Its centre of mass is at ``(n_c, t_c) = (u_n - r_y0, u_t)``; its symmetry
axis makes the angle ``alpha = theta_0 + theta`` with the ``n`` axis, ``theta`` positive
clockwise (t to the right, n down), so the axis unit vectors are
``e_H = (cos alpha, -sin alpha)`` and ``e_R = (sin alpha, cos alpha)`` in ``(n, t)``.

Corrected equations (derived here; the paper's printed forms carry typos):

* Eq. 16: ``r_y(alpha) = sqrt(H^2 cos^2 alpha + R^2 sin^2 alpha)`` is the support distance of
  the block along ``n``; ``r_y0 = r_y(theta_0)`` puts the block tangent to the plane at onset.
* Eq. 17 (Cartesian form): the out-of-plane term is ``w^2 / R^2`` (printed ``w^2 / H^2``)::

      [(dn cos a - dt sin a)/H]^2 + [(dn sin a + dt cos a)/R]^2 + (w/R)^2 = 1

  with ``dn = n - n_c`` and ``dt = t - u_t``.
* Eqs. 19-22 (intersection with ``n = 0``, where ``dn = d = r_y0 - u_n = r_n``, Eq. 36)::

      b1 = d (H^2 - R^2) sin a cos a / r_y          (printed with (R^2 + H^2))
      b2 = H^2 R^2 - d^2 (H^2 + R^2 - r_y^2)
      a_t = sqrt(b2 + b1^2) / r_y,   a_w = sqrt(b2 + b1^2) / H,   centre t_e = u_t - b1 / r_y

  ``b2 + b1^2 = 0`` at ``u_n = 0`` for every ``theta_0``: the block is tangent at onset.
* Eqs. 24-29 (extreme points of the meridian section): with
  ``q = sqrt(H^2 sin^2 a + R^2 cos^2 a)`` the section reaches ``t = u_t +/- q`` at
  ``n = n_c -/+ (H^2 - R^2) sin a cos a / q``.
* Eqs. 30-35 (footprint bounds, printed ``D_w2 = C_w1`` corrected to ``C_w2``): the footprint
  is the projection on the plane of the part of the block below it (a convex set), so each
  bound is the extreme point when that point is below ground (``n >= 0``) and the vertex of the
  intersection ellipse otherwise. ``B_t = t_2 - t_1``; ``B_w = 2R`` when the centre is below
  ground (``n_c >= 0``), else ``2 a_w``.
* Eq. 37: ``r_t = (t_1 + t_2)/2 - u_t``; Eq. 36: ``r_n = r_y0 - u_n``.
* Eqs. 38-42 (sinking): ``u_D = max n over the block = u_n - r_y0 + r_y(theta_0 + theta)``.
  The lowest point sits at ``t - u_t = dr_y/dalpha = -(H^2 - R^2) sin a cos a / r_y``.

Sphere limit (``H = R``): ``B_t = B_w = 2 sqrt(2 R u - u^2)`` (``u <= R``), ``r_t = 0``,
``u_D = u_n``. Every function takes numpy arrays (or scalars) and returns arrays.
"""

from __future__ import annotations

import numpy as np


def block_size(mass, density, aspect_ratio):
    """Semi-axes ``(R, H)`` of a spheroid of given mass (Dattola et al. 2023, Eq. 7).

    ``R = (3 m / (4 pi rho A_r))^(1/3)``, ``H = A_r R``.
    """
    radius = np.cbrt(3.0 * np.asarray(mass) / (4.0 * np.pi * np.asarray(density)
                                               * np.asarray(aspect_ratio)))
    return radius, np.asarray(aspect_ratio) * radius


def inertia(mass, semi_h, semi_r):
    """Moment of inertia about the out-of-plane axis through the centre: ``m (H^2 + R^2) / 5``
    (solid spheroid, the axis ``w`` is perpendicular to the symmetry axis)."""
    return np.asarray(mass) * (np.asarray(semi_h) ** 2 + np.asarray(semi_r) ** 2) / 5.0


def support_distance(semi_h, semi_r, alpha):
    """``r_y(alpha) = sqrt(H^2 cos^2 alpha + R^2 sin^2 alpha)`` (Dattola et al. 2023,
    Eqs. 16 and 22)."""
    return np.sqrt((semi_h * np.cos(alpha)) ** 2 + (semi_r * np.sin(alpha)) ** 2)


def lowest_point_offset(semi_h, semi_r, alpha):
    """t-offset of the lowest point from the centre, ``dr_y/dalpha`` (from Eqs. 38-41)."""
    return -(semi_h ** 2 - semi_r ** 2) * np.sin(alpha) * np.cos(alpha) / support_distance(
        semi_h, semi_r, alpha)


def footprint(semi_h, semi_r, theta0, u_n, u_t, theta):
    """Equivalent-foundation geometry for the block state ``(u_n, u_t, theta)``.

    Returns a dict of arrays: ``B_t``, ``B_w`` (footprint sizes, Eqs. 34-35), ``r_n``, ``r_t``
    (arms of the contact force about the centre, Eqs. 36-37), ``u_D`` (sinking, Eq. 38),
    ``a_t``, ``a_w``, ``t_e`` (intersection ellipse, Eqs. 19-21), ``t_1``, ``t_2`` (footprint
    bounds) and ``area`` (``pi B_t B_w / 4``). Where the block does not reach the plane all
    sizes are zero and ``r_t`` is the lowest-point offset.
    """
    h, r = np.asarray(semi_h, float), np.asarray(semi_r, float)
    u_n, u_t = np.asarray(u_n, float), np.asarray(u_t, float)
    alpha = np.asarray(theta0, float) + np.asarray(theta, float)
    s, c = np.sin(alpha), np.cos(alpha)
    r_y0 = support_distance(h, r, np.asarray(theta0, float))
    r_y = support_distance(h, r, alpha)
    d = r_y0 - u_n
    n_c = -d
    b1 = d * (h ** 2 - r ** 2) * s * c / r_y
    b2 = (h * r) ** 2 - d ** 2 * (h ** 2 + r ** 2 - r_y ** 2)
    disc = np.maximum(b2 + b1 ** 2, 0.0)
    a_t = np.sqrt(disc) / r_y
    a_w = np.sqrt(disc) / h
    t_e = u_t - b1 / r_y
    q = np.sqrt((h * s) ** 2 + (r * c) ** 2)
    shift = (h ** 2 - r ** 2) * s * c / q
    n_tmax, n_tmin = n_c - shift, n_c + shift
    t_1 = np.where(n_tmin >= 0.0, u_t - q, t_e - a_t)
    t_2 = np.where(n_tmax >= 0.0, u_t + q, t_e + a_t)
    u_d = u_n - r_y0 + r_y
    touching = u_d > 0.0
    b_t = np.where(touching, t_2 - t_1, 0.0)
    b_w = np.where(touching, np.where(n_c >= 0.0, 2.0 * r, 2.0 * a_w), 0.0)
    r_t = np.where(touching, 0.5 * (t_1 + t_2) - u_t, lowest_point_offset(h, r, alpha))
    return {"B_t": b_t, "B_w": b_w, "r_n": d, "r_t": r_t, "u_D": u_d, "a_t": a_t, "a_w": a_w,
            "t_e": t_e, "t_1": t_1, "t_2": t_2, "area": 0.25 * np.pi * b_t * b_w}


def shape_factor(b_t, b_w):
    """Gazetas shape correction of the normal stiffness (Dattola et al. 2023, Eqs. 13-14).

    ``R_s = max(B_t, B_w) / min(B_t, B_w) >= 1``, ``J_s = 0.957 exp(0.0394 R_s)``;
    ``R_s = 1`` for a vanishing footprint.
    """
    lo, hi = np.minimum(b_t, b_w), np.maximum(b_t, b_w)
    ratio = np.where(lo > 0.0, hi / np.where(lo > 0.0, lo, 1.0), 1.0)
    return 0.957 * np.exp(0.0394 * ratio)
