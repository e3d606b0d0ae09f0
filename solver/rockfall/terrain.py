"""Terrains: a 2-D profile z(x) (a polyline extruded along y) and a 3-D raster DEM z(x, y).

Both give the block's gap to the ground, the contact at a touch, the local surface for rolling
and a VTK surface. The raster is the point-mass module's:
:func:`solver.pointmass.terrain.read_grid` (GeoTIFF, ESRI ASCII or .npy; no-data nodes are
rejected) and its interpolating bicubic spline :class:`solver.pointmass.surface.Raster`.

Gap of the ellipsoid ``{(x - c)^T M^-1 (x - c) <= 1}`` to the profile. The profile does not
depend on y, so the block touches it exactly when its shadow on the x-z plane, the ellipse of
matrix ``S = M[xz, xz]`` (the projection of an ellipsoid of support matrix M has support matrix
P M P^T), touches the polyline. With ``A^T A = S^-1`` the map ``u -> A u`` sends the shadow to
the unit disc and segments to segments, so the shadow meets segment k iff the distance
``delta_k`` from the origin to the mapped segment is below 1. The gap is
``g = R (min_k delta_k - 1)`` for a centre above the ground (``-R (min_k delta_k + 1)`` below
it: the ground is the solid under the profile): it has the sign of the true distance, is zero
exactly at a touch, and is a lower bound of the Euclidean distance (A shortens no length by
more than 1/R).
At a touch the nearest point of the mapped segment tells the contact: inside the segment, the
ground normal is the segment's; at a convex vertex, the block's own normal there.

Gap to the raster: the support point ``s = c - M n / sqrt(n^T M n)`` of the block in the
direction of the downward surface normal, iterated with the normal below s (three passes), and
``g = (s_z - f(s_x, s_y)) n_z``, the normal distance from s to the tangent plane. On a plane it
is the exact distance; on a smooth DEM it errs by O(g^2 / curvature radius).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from solver.errors import InputError
from solver.pointmass.terrain import read_grid
from solver.pointmass.surface import Raster


@dataclass
class Contact:
    """Where and how the block touches: point, upward unit normal, ground set index, the
    rolling piece (profile segment index or None on a raster) and ``vertex`` for a convex
    profile vertex."""

    point: np.ndarray
    normal: np.ndarray
    ground: int
    piece: int | None
    vertex: bool = False


def _upward_normal(fx: float, fy: float) -> np.ndarray:
    q = math.sqrt(1.0 + fx * fx + fy * fy)
    return np.array([-fx / q, -fy / q, 1.0 / q])


class Profile:
    """Polyline z(x) split into pieces at its vertices and at ground changes."""

    def __init__(self, points, stretches, ground_index: dict[str, int]):
        xs = [p[0] for p in points]
        breaks = sorted({x for s in stretches for x in s.x if xs[0] < x < xs[-1]} | set(xs))
        self.px = np.array(breaks, dtype=float)
        self.pz = np.interp(self.px, xs, [p[1] for p in points])
        mid = 0.5 * (self.px[1:] + self.px[:-1])
        self.ground = np.empty(len(mid), dtype=int)
        for s in stretches:
            self.ground[(mid >= s.x[0]) & (mid <= s.x[1])] = ground_index[s.ground]
        self.slope = np.diff(self.pz) / np.diff(self.px)
        self.normals = np.array([_upward_normal(s, 0.0) for s in self.slope])
        self.vertices = np.column_stack([self.px, self.pz])
        turn = np.diff(self.slope)
        self.convex = np.concatenate([[False], turn < -1e-12, [False]])
        self.kind = "profile"

    @property
    def z_min(self) -> float:
        return float(np.min(self.pz))

    def elevation(self, x, y):
        return np.interp(x, self.px, self.pz)

    def outside_distance(self, x: float, y: float, margin: float) -> float:
        """Positive once (x, y) is off the profile's x range."""
        return max(self.px[0] - x, x - self.px[-1])

    def _mapped(self, centre: np.ndarray, matrix: np.ndarray):
        """Scaled distances ``delta_k`` of the segments, the nearest-point parameters and the
        shadow matrix S (the metric ``u^T S^-1 u`` is ``|A u|^2``)."""
        a, b, c = matrix[0, 0], matrix[0, 2], matrix[2, 2]
        det = a * c - b * b
        inv = np.array([[c, -b], [-b, a]]) / det
        rel = self.vertices - centre[[0, 2]]
        start, d = rel[:-1], rel[1:] - rel[:-1]
        inv_d = d @ inv
        lam = np.clip(-np.einsum("kc,kc->k", start, inv_d) / np.einsum("kc,kc->k", d, inv_d),
                      0.0, 1.0)
        nearest = start + lam[:, None] * d
        dist2 = np.einsum("kc,kc->k", nearest @ inv, nearest)
        return np.sqrt(dist2), lam, np.array([[a, b], [b, c]])

    def gap(self, centre: np.ndarray, matrix: np.ndarray, semi_r: float) -> float:
        dist = float(np.min(self._mapped(centre, matrix)[0]))
        if centre[2] < np.interp(centre[0], self.px, self.pz):
            return -semi_r * (dist + 1.0)
        return semi_r * (dist - 1.0)

    def contact(self, centre: np.ndarray, matrix: np.ndarray) -> Contact:
        dist, lam, shadow = self._mapped(centre, matrix)
        k = int(np.argmin(dist))
        node = k + 1 if lam[k] >= 1.0 else k if lam[k] <= 0.0 else -1
        if node >= 0 and self.convex[node]:
            vertex = self.vertices[node]
            outward = np.linalg.solve(shadow, vertex - centre[[0, 2]])
            normal = -outward / np.linalg.norm(outward)
            return Contact(np.array([vertex[0], centre[1], vertex[1]]),
                           np.array([normal[0], 0.0, normal[1]]), int(self.ground[k]), k, True)
        point = self.vertices[k] + lam[k] * (self.vertices[k + 1] - self.vertices[k])
        return Contact(np.array([point[0], centre[1], point[1]]), self.normals[k].copy(),
                       int(self.ground[k]), k)

    def surface(self, x: float, y: float, piece: int):
        """``(f, f_x, f_y, f_xx, f_xy, f_yy)`` of the piece's straight line at (x, y)."""
        s = self.slope[piece]
        return self.pz[piece] + s * (x - self.px[piece]), s, 0.0, 0.0, 0.0, 0.0

    def piece_span(self, piece: int) -> tuple[float, float]:
        return float(self.px[piece]), float(self.px[piece + 1])

    def n_pieces(self) -> int:
        return len(self.slope)

    def vtk_surface(self, width: float):
        """A strip of quads, the profile extruded over ``-width/2 <= y <= width/2``."""
        n = len(self.px)
        points = np.vstack([np.column_stack([self.px, np.full(n, s * 0.5 * width), self.pz])
                            for s in (-1.0, 1.0)])
        i = np.arange(n - 1)
        quads = np.column_stack([i, i + 1, n + i + 1, n + i])
        return points, quads, self.ground


class RasterTerrain:
    """A DEM raster with one ground set."""

    def __init__(self, cfg, ground: int, where: str):
        self.raster = Raster(read_grid(cfg.path, cfg.origin, cfg.spacing, f"{where}: "
                                       "terrain.path"))
        self.spline = self.raster.spline
        self.ground_index = ground
        self.kind = "raster"

    @property
    def z_min(self) -> float:
        return float(np.min(self.raster.grid.z))

    def elevation(self, x, y):
        return self.spline.ev(x, y)

    def outside_distance(self, x: float, y: float, margin: float) -> float:
        """Positive once (x, y) is within ``margin`` of the raster edge or beyond it."""
        x0, x1, y0, y1 = self.raster.bounds
        return max(x0 - x, x - x1, y0 - y, y - y1) + margin

    def _normal(self, x: float, y: float) -> np.ndarray:
        ev = self.spline.ev
        return _upward_normal(float(ev(x, y, dx=1)), float(ev(x, y, dy=1)))

    def _support(self, centre: np.ndarray, matrix: np.ndarray):
        normal = self._normal(centre[0], centre[1])
        for _ in range(3):
            md = matrix @ normal
            point = centre - md / math.sqrt(float(normal @ md))
            normal = self._normal(point[0], point[1])
        return point, normal

    def gap(self, centre: np.ndarray, matrix: np.ndarray, semi_r: float) -> float:
        point, normal = self._support(centre, matrix)
        return float(point[2] - self.spline.ev(point[0], point[1])) * float(normal[2])

    def contact(self, centre: np.ndarray, matrix: np.ndarray) -> Contact:
        point, normal = self._support(centre, matrix)
        ground = np.array([point[0], point[1], float(self.spline.ev(point[0], point[1]))])
        return Contact(ground, normal, self.ground_index, None)

    def surface(self, x: float, y: float, piece):
        return tuple(float(v) for v in self.raster.eval(np.float64(x), np.float64(y)))

    def vtk_surface(self, width: float):
        grid = self.raster.grid
        gx, gy = np.meshgrid(grid.xs, grid.ys)
        points = np.column_stack([gx.ravel(), gy.ravel(), grid.z.ravel()])
        nx, ny = len(grid.xs), len(grid.ys)
        i, j = np.meshgrid(np.arange(nx - 1), np.arange(ny - 1))
        first = (j * nx + i).ravel()
        quads = np.column_stack([first, first + 1, first + nx + 1, first + nx])
        return points, quads, np.full(len(quads), self.ground_index)


def build_terrain(cfg, ground_names: list[str], where: str):
    """The terrain of a case; ``ground_names`` orders the ground sets (their indices)."""
    index = {name: i for i, name in enumerate(ground_names)}
    if cfg.kind == "profile":
        return Profile(cfg.points, cfg.segments, index)
    if cfg.ground not in index:
        raise InputError(f"{where}: terrain.ground", f"unknown ground set {cfg.ground!r}")
    return RasterTerrain(cfg, index[cfg.ground], where)
