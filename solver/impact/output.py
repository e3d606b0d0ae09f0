"""VTK series of one impact: the ellipsoid moving over the ground plane, for ParaView.

World frame: x down the slope in plan, y out of the impact plane, z up. The slope frame of
solver.impact.geometry maps to it as ``n = (-sin w, 0, -cos w)`` (into the ground),
``t = (cos w, 0, -sin w)`` (down the slope), ``w = (0, 1, 0)``, with ``w`` the slope angle, so
that gravity has the components ``g cos w`` along n and ``g sin w`` along t. The ground is the
plane n = 0 through the origin; the block's centre is at ``(u_n - r_y0) n + u_t t``.

A surface point at body coordinates ``a`` (along the symmetry axis ``e_H``), ``b`` (along
``e_R``) and ``c`` (along w) sits at ``centre + a e_H + b e_R + c w`` with
``e_H = cos(alpha) n - sin(alpha) t``, ``e_R = sin(alpha) n + cos(alpha) t``,
``alpha = theta_0 + theta``, and moves at ``v_n n + v_t t + dtheta (b e_H - a e_R)``
(``de_H/dalpha = -e_R``, ``de_R/dalpha = e_H``). Its depth below the ground is its n
coordinate.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from solver.impact import geometry
from solver.impact.dynamics import History, ImpactSetup
from solver.io.vtk import VtkSeries

RINGS = 24      # latitude rings of the ellipsoid surface, pole to pole
SECTORS = 36    # points per ring


def slope_axes(slope: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """World vectors of the slope frame ``(n, t, w)`` for a slope angle (rad)."""
    s, c = math.sin(slope), math.cos(slope)
    return np.array([-s, 0.0, -c]), np.array([c, 0.0, -s]), np.array([0.0, 1.0, 0.0])


def _unit_spheroid() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Surface nodes of the unit sphere as (axial, radial-in-plane, out-of-plane) coordinates
    and its cells: quads between rings, triangles at the two poles."""
    phi = np.linspace(0.0, math.pi, RINGS + 1)[1:-1]
    psi = np.linspace(0.0, 2.0 * math.pi, SECTORS, endpoint=False)
    P, S = np.meshgrid(phi, psi, indexing="ij")
    ring = np.column_stack([np.cos(P).ravel(), (np.sin(P) * np.cos(S)).ravel(),
                            (np.sin(P) * np.sin(S)).ravel()])
    nodes = np.vstack([[1.0, 0.0, 0.0], ring, [-1.0, 0.0, 0.0]])
    j = np.arange(SECTORS)
    k = (j + 1) % SECTORS
    quads = np.vstack([np.column_stack([1 + r * SECTORS + j, 1 + r * SECTORS + k,
                                        1 + (r + 1) * SECTORS + k, 1 + (r + 1) * SECTORS + j])
                       for r in range(RINGS - 2)])
    south = len(nodes) - 1
    last = 1 + (RINGS - 2) * SECTORS
    tris = np.vstack([np.column_stack([np.zeros(SECTORS, int), 1 + k, 1 + j]),
                      np.column_stack([np.full(SECTORS, south), last + j, last + k])])
    return nodes, quads, tris


def write_impact_vtk(out_dir: Path, name: str, setup: ImpactSetup, history: History,
                     frames: int) -> None:
    """``<name>.pvd``: the ellipsoid at ``frames`` evenly spaced instants of the impact (the
    state interpolated linearly between the integrator's steps; velocity and depth below the
    ground as point data); ``<name>_ground.pvd``: the ground plane."""
    from mpi4py import MPI
    n_ax, t_ax, w_ax = slope_axes(setup.slope)
    unit, quads, tris = _unit_spheroid()
    body = unit * [setup.semi_h, setup.semi_r, setup.semi_r]
    r_y0 = float(geometry.support_distance(setup.semi_h, setup.semi_r, setup.theta_0))
    series = VtkSeries(MPI.COMM_SELF, out_dir, name)
    times = np.linspace(history.t[0], history.t[-1], frames)
    u_n, u_t, theta, v_n, v_t, omega = (np.interp(times, history.t, y) for y in history.y[:6])
    for i, time in enumerate(times):
        alpha = setup.theta_0 + theta[i]
        e_h = math.cos(alpha) * n_ax - math.sin(alpha) * t_ax
        e_r = math.sin(alpha) * n_ax + math.cos(alpha) * t_ax
        a, b, c = body[:, :1], body[:, 1:2], body[:, 2:]
        points = (u_n[i] - r_y0) * n_ax + u_t[i] * t_ax + a * e_h + b * e_r + c * w_ax
        velocity = v_n[i] * n_ax + v_t[i] * t_ax + omega[i] * (b * e_h - a * e_r)
        series.write(float(time), points, {"quad": quads, "triangle": tris},
                     point_data={"velocity": velocity, "depth_below_ground": points @ n_ax})
    reach = float(np.max(np.abs(u_t))) + 3.0 * max(setup.semi_h, setup.semi_r)
    half_w = 3.0 * max(setup.semi_h, setup.semi_r)
    corners = [(-reach, -half_w), (reach, -half_w), (reach, half_w), (-reach, half_w)]
    ground = VtkSeries(MPI.COMM_SELF, out_dir, f"{name}_ground")
    ground.write(0.0, np.array([t * t_ax + w * w_ax for t, w in corners]),
                 {"quad": np.arange(4)[None, :]})
