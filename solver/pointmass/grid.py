"""The N point masses and their links (Gallotti et al. 2020, section 2, Figs. 1-2).

Footprint grid: the footprint polygon's bounding box, in a frame turned by ``angle_deg``, is cut
into nx * ny cells. Each cell's point mass is the mass of the slide inside it,
m_c = rho_r * integral of thickness over (cell intersect polygon), placed at the plan CoM of that
part (a midpoint rule on samples_per_cell^2 points per cell); the masses then sit on the surface
below those plan points (Gallotti et al. 2020: point masses are the projections of the element CoMs
on the surface). So the total mass and the plan CoM of the masses are those of the sampled slide
exactly. Cells with no slide are left out. Sides join neighbouring cells along the grid axes,
diagonals join opposite corners of every complete quadrilateral.

Ring: n equal masses equally spaced on a horizontal circle, sides joining neighbours (the
sphere cup example of Gallotti et al. 2020, section 3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from matplotlib.path import Path as PolygonPath
from scipy.interpolate import RegularGridInterpolator

from solver.errors import InputError
from solver.pointmass.config import Config, GridConfig
from solver.pointmass.terrain import read_grid
from solver.pointmass.surface import Surface


@dataclass
class Body:
    """Masses ``m`` (N,), plan positions ``xy`` (N, 2), plan velocities ``v`` (N, 2), side and
    diagonal index pairs (S, 2) / (D, 2), and the RB and EP link pairs taken from them."""

    m: np.ndarray
    xy: np.ndarray
    v: np.ndarray
    sides: np.ndarray
    diagonals: np.ndarray
    rb: np.ndarray
    ep: np.ndarray


def _links_by_law(cfg: Config, sides: np.ndarray, diagonals: np.ndarray):
    pairs = {"rb": [], "ep": [], "none": []}
    pairs[cfg.links.sides].append(sides)
    pairs[cfg.links.diagonals].append(diagonals)
    stack = [np.concatenate(pairs[k]) if pairs[k] else np.zeros((0, 2), dtype=np.int64)
             for k in ("rb", "ep")]
    return [s.reshape(-1, 2).astype(np.int64) for s in stack]


def _thickness_sampler(g: GridConfig, crs: str, where: str):
    """Thickness at plan points: a raster (bilinear, zero off the raster and where it has no
    data) or a constant. ``crs``: the DEM's, which a georeferenced raster must share."""
    if not g.thickness_path:
        return lambda pts: np.full(len(pts), g.thickness)
    grid = read_grid(g.thickness_path, g.thickness_origin, g.thickness_spacing,
                     f"{where}: grid.thickness_path", fill=0.0)
    if grid.crs and crs and grid.crs != crs:
        raise InputError(f"{where}: grid.thickness_path",
                         f"CRS {grid.crs} differs from the DEM's {crs}")
    interp = RegularGridInterpolator((grid.ys, grid.xs), np.clip(grid.z, 0.0, None),
                                     bounds_error=False, fill_value=0.0)
    return lambda pts: interp(pts[:, ::-1])


def footprint_body(cfg: Config, surface: Surface, where: str) -> Body:
    g = cfg.grid
    poly = np.asarray(g.footprint, dtype=float)
    a = math.radians(g.angle_deg)
    axes = np.array([[math.cos(a), math.sin(a)], [-math.sin(a), math.cos(a)]])
    local = poly @ axes.T
    lo, hi = local.min(axis=0), local.max(axis=0)
    cell = (hi - lo) / (g.nx, g.ny)
    if surface.spacing > 0.0 and cell.min() < surface.spacing:
        raise InputError(f"{where}: grid.footprint",
                         f"mass spacing {cell[0]:.4g} x {cell[1]:.4g} m is below the DEM spacing "
                         f"{surface.spacing:.4g} m: use a larger footprint or fewer masses "
                         f"(nx = {g.nx}, ny = {g.ny})")
    if cell.min() <= 0.0:
        raise InputError(f"{where}: grid.footprint", "the footprint polygon has no area")
    s = g.samples_per_cell
    ku = lo[0] + cell[0] * (np.arange(g.nx * s) + 0.5) / s
    kw = lo[1] + cell[1] * (np.arange(g.ny * s) + 0.5) / s
    U, W = np.meshgrid(ku, kw)
    pts = np.column_stack([U.ravel(), W.ravel()]) @ axes
    inside = PolygonPath(poly).contains_points(pts)
    if g.thickness_values:
        per_cell = np.asarray(g.thickness_values, dtype=float).reshape(g.ny, g.nx)
        thick = np.repeat(np.repeat(per_cell, s, axis=0), s, axis=1).ravel()
    else:
        thick = _thickness_sampler(g, surface.crs, where)(pts)
    weight = np.where(inside, thick, 0.0) * (cell[0] * cell[1] / s ** 2)
    volume = weight.sum()
    if not volume > 0.0:
        raise InputError(f"{where}: grid.footprint", "the footprint holds no slide volume "
                         "(polygon smaller than the sampling, or zero thickness inside)")
    if g.volume > 0.0:
        weight *= g.volume / volume
    cell_id = ((np.arange(g.ny * s) // s)[:, None] * g.nx + (np.arange(g.nx * s) // s)[None, :])
    cell_id = cell_id.ravel()
    wsum = np.bincount(cell_id, weight, minlength=g.nx * g.ny)
    cx = np.bincount(cell_id, weight * pts[:, 0], minlength=g.nx * g.ny)
    cy = np.bincount(cell_id, weight * pts[:, 1], minlength=g.nx * g.ny)
    keep = wsum > 0.0
    index = np.full(g.nx * g.ny, -1, dtype=np.int64)
    index[keep] = np.arange(keep.sum())
    xy = np.column_stack([cx[keep], cy[keep]]) / wsum[keep, None]
    m = g.density * wsum[keep]
    node = index.reshape(g.ny, g.nx)
    sides, diagonals = [], []
    for iy in range(g.ny):
        for ix in range(g.nx):
            here = node[iy, ix]
            if here < 0:
                continue
            if ix + 1 < g.nx and node[iy, ix + 1] >= 0:
                sides.append((here, node[iy, ix + 1]))
            if iy + 1 < g.ny and node[iy + 1, ix] >= 0:
                sides.append((here, node[iy + 1, ix]))
            if ix + 1 < g.nx and iy + 1 < g.ny:
                quad = (here, node[iy, ix + 1], node[iy + 1, ix + 1], node[iy + 1, ix])
                if min(quad) >= 0:
                    diagonals += [(quad[0], quad[2]), (quad[1], quad[3])]
    sides = np.asarray(sides, dtype=np.int64).reshape(-1, 2)
    diagonals = np.asarray(diagonals, dtype=np.int64).reshape(-1, 2)
    v = np.tile(np.asarray(g.velocity, dtype=float), (len(m), 1))
    rb, ep = _links_by_law(cfg, sides, diagonals)
    return Body(m, xy, v, sides, diagonals, rb, ep)


def escape_speed(radius: float, colatitude: float, gravity: float) -> float:
    """v0 at which the RB forces of the sphere-cup ring vanish: v0^2 = R_s g sin(theta) tan(theta)
    (Gallotti et al. 2020, section 3, after Eq. 13)."""
    return math.sqrt(radius * gravity * math.sin(colatitude) * math.tan(colatitude))


def ring_speed(cfg: Config) -> float:
    g = cfg.grid
    if g.speed_over_escape > 0.0:
        return g.speed_over_escape * escape_speed(cfg.surface.radius,
                                                  math.radians(g.colatitude_deg), cfg.gravity)
    return g.tangential_speed


def ring_body(cfg: Config) -> Body:
    g = cfg.grid
    radius = g.ring_radius or cfg.surface.radius * math.sin(math.radians(g.colatitude_deg))
    phi = 2.0 * math.pi * np.arange(g.n) / g.n
    xy = radius * np.column_stack([np.cos(phi), np.sin(phi)])
    v = ring_speed(cfg) * np.column_stack([-np.sin(phi), np.cos(phi)])
    sides = np.column_stack([np.arange(g.n), (np.arange(g.n) + 1) % g.n]).astype(np.int64)
    diagonals = np.zeros((0, 2), dtype=np.int64)
    rb, ep = _links_by_law(cfg, sides, diagonals)
    return Body(np.full(g.n, g.mass), xy, v, sides, diagonals, rb, ep)


def build_body(cfg: Config, surface: Surface, where: str) -> Body:
    """The masses and links of a case; checks they lie on the surface and that the RB links
    leave the system free to move (at most 2N - 3 of them, Gallotti et al. 2020, section 5)."""
    body = footprint_body(cfg, surface, where) if cfg.grid.kind == "footprint" \
        else ring_body(cfg)
    off = surface.outside(body.xy[:, 0], body.xy[:, 1])
    if off.any() and cfg.surface.kind == "expression":
        k = int(np.flatnonzero(off)[0])
        raise InputError(f"{where}: surface.expression", f"the surface or its slope is not "
                         f"finite under {int(off.sum())} of {len(body.m)} masses (a square "
                         f"root or logarithm of a negative number, a division by zero, an "
                         f"overflow), e.g. mass {k} at ({body.xy[k, 0]:.6g}, "
                         f"{body.xy[k, 1]:.6g})")
    if off.any():
        k = int(np.flatnonzero(off)[0])
        span = "" if surface.bounds is None else \
            " (x in [{:.6g}, {:.6g}], y in [{:.6g}, {:.6g}])".format(*surface.bounds)
        raise InputError(f"{where}: grid", f"{int(off.sum())} of {len(body.m)} masses lie outside "
                         f"the surface{span}, e.g. mass {k} at ({body.xy[k, 0]:.6g}, "
                         f"{body.xy[k, 1]:.6g})")
    lonely = np.setdiff1d(np.arange(len(body.m)), body.sides.ravel())
    if len(lonely) and cfg.surface.z_sea > -math.inf and cfg.water.drag_coefficient > 0.0 \
            and cfg.water.drag_length == 0.0:
        raise InputError(f"{where}: water.drag_length", f"{len(lonely)} masses have no grid side "
                         "to take the drag length l_v from: give water.drag_length > 0")
    n, n_rb = len(body.m), len(body.rb)
    if n_rb > 0 and n_rb > 2 * n - 3:
        raise InputError(f"{where}: links", f"the RB grid is over-constrained: {n_rb} RB links "
                         f"for {n} masses, but a surface leaves them 2N = {2 * n} degrees of "
                         f"freedom, 3 of which a rigid motion needs (at most {2 * n - 3} RB "
                         "links); make the diagonals 'ep' or 'none'")
    return body
