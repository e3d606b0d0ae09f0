"""Sliding surfaces z = f(x, y): each gives f and its first and second derivatives.

``surface.eval(x, y)`` returns ``(f, f_x, f_y, f_xx, f_xy, f_yy)`` on arrays; these feed the
unit normal n = (-f_x, -f_y, 1) / sqrt(1 + f_x^2 + f_y^2) and the normal acceleration of
Gallotti et al. 2020 Eq. (4). ``surface.outside(x, y)`` flags points where f is not defined (off the
raster).

* plane:      f = z0 - tan(slope) (x cos(phi) + y sin(phi)), phi the downhill direction;
* sphere_cup: f = R_s - sqrt(R_s^2 - x^2 - y^2), the lower half of a sphere of radius R_s
              whose bottom point O is the origin (Gallotti et al. 2020, section 3, Fig. 4);
* expression: any f(x, y), derivatives by automatic differentiation (expression.py);
* raster:     an interpolating bicubic spline (scipy RectBivariateSpline, kx = ky = 3, s = 0)
              through the DEM nodes; its derivatives are those of the spline, so f, f_x, f_y
              are continuous (C2 piecewise cubic) along a trajectory.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.interpolate import RectBivariateSpline

from solver.pointmass.config import SurfaceConfig
from solver.pointmass.terrain import Grid2D, read_grid
from solver.pointmass.expression import compile_expression


class Surface:
    """Base: analytic surfaces are defined everywhere."""

    spacing: float = 0.0
    bounds: tuple[float, float, float, float] | None = None  # rasters: x0, x1, y0, y1
    crs: str = ""                                            # rasters: their CRS, if any

    def eval(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, ...]:
        raise NotImplementedError

    def outside(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.zeros(np.shape(x), dtype=bool)


class Plane(Surface):
    def __init__(self, slope_deg: float, dip_direction_deg: float, z0: float):
        t = math.tan(math.radians(slope_deg))
        phi = math.radians(dip_direction_deg)
        self.gx, self.gy, self.z0 = -t * math.cos(phi), -t * math.sin(phi), z0

    def eval(self, x, y):
        zero = np.zeros_like(x)
        return (self.z0 + self.gx * x + self.gy * y, zero + self.gx, zero + self.gy,
                zero, zero, zero)


class SphereCup(Surface):
    def __init__(self, radius: float):
        self.radius = radius

    def eval(self, x, y):
        s = np.sqrt(self.radius ** 2 - x * x - y * y)
        s3 = s ** 3
        return (self.radius - s, x / s, y / s, 1.0 / s + x * x / s3, x * y / s3,
                1.0 / s + y * y / s3)

    def outside(self, x, y):
        return x * x + y * y >= self.radius ** 2


class Expression(Surface):
    def __init__(self, text: str, constants: dict[str, float], where: str):
        self.fn = compile_expression(text, constants, where)

    def eval(self, x, y):
        return self.fn(x, y)

    def outside(self, x, y):
        """Where f or a derivative is not finite (e.g. sqrt or log of a negative number)."""
        with np.errstate(all="ignore"):
            f = self.fn(x, y)
        return ~np.all(np.isfinite(np.stack(f)), axis=0)


class Raster(Surface):
    """Bicubic interpolating spline through a DEM (``Grid2D``)."""

    def __init__(self, grid: Grid2D):
        self.grid = grid
        self.crs = grid.crs
        self.spline = RectBivariateSpline(grid.xs, grid.ys, grid.z.T, kx=3, ky=3, s=0)
        self.spacing = max(grid.spacing)
        self.bounds = (float(grid.xs[0]), float(grid.xs[-1]),
                       float(grid.ys[0]), float(grid.ys[-1]))

    def eval(self, x, y):
        ev = self.spline.ev
        return (ev(x, y), ev(x, y, dx=1), ev(x, y, dy=1), ev(x, y, dx=2), ev(x, y, dx=1, dy=1),
                ev(x, y, dy=2))

    def outside(self, x, y):
        x0, x1, y0, y1 = self.bounds
        return (x < x0) | (x > x1) | (y < y0) | (y > y1)


def build_surface(cfg: SurfaceConfig, where: str) -> Surface:
    """The surface of a case (``where`` names the case file for errors)."""
    if cfg.kind == "plane":
        return Plane(cfg.slope_deg, cfg.dip_direction_deg, cfg.z0)
    if cfg.kind == "sphere_cup":
        return SphereCup(cfg.radius)
    if cfg.kind == "expression":
        return Expression(cfg.expression, cfg.constants, f"{where}: surface.expression")
    return Raster(read_grid(cfg.path, cfg.origin, cfg.spacing, f"{where}: surface.path"))
