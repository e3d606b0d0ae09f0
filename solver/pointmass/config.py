"""Case schema of the point-mass slide module (``module = "pointmass"``): the UBO-Inter
model (Gallotti, Tinti et al.).

Units are SI, angles in degrees. Plan coordinates are x (east), y (north); z is up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from solver.case import (ANGLE_LIMIT, COORDINATE_LIMIT, SPEED_LIMIT, TIME_LIMIT, exactly_one,
                         param, section)
from solver.errors import InputError
from solver import resources
from solver.resources import need_count
from solver.sweep import Sweep

INF = math.inf
Vec2 = tuple[float, float]
COORD = {"ge": -COORDINATE_LIMIT, "le": COORDINATE_LIMIT}
"""Bounds of a coordinate (solver.case.COORDINATE_LIMIT)."""
ANGLE = {"ge": -ANGLE_LIMIT, "le": ANGLE_LIMIT}
"""Bounds of a free angle (solver.case.ANGLE_LIMIT)."""
SPEED = {"ge": -SPEED_LIMIT, "le": SPEED_LIMIT}
"""Bounds of a velocity component (solver.case.SPEED_LIMIT)."""
MAX_QUADRATURE_POINTS = 1e8
"""Most quadrature points of a footprint grid: about 5 GB of coordinate, thickness and
cell-index arrays."""
FRICTION_LIMIT = 10.0
"""Largest friction coefficient: tan 84 deg, beyond any rock or soil."""
MAX_STEPS = 1e8
"""Most time steps (t_end / dt) and output frames (t_end / every x 100) a run may need."""


def _segments_cross(p, q, a, b) -> bool:
    """Whether the closed segments pq and ab share a point (orientation tests)."""
    def side(o, u, v):
        return (u[0] - o[0]) * (v[1] - o[1]) - (u[1] - o[1]) * (v[0] - o[0])

    def within(o, u, v):
        return min(o[0], u[0]) <= v[0] <= max(o[0], u[0]) and \
            min(o[1], u[1]) <= v[1] <= max(o[1], u[1])

    d1, d2, d3, d4 = side(a, b, p), side(a, b, q), side(p, q, a), side(p, q, b)
    if ((d1 > 0) != (d2 > 0) and d1 * d2 != 0) and ((d3 > 0) != (d4 > 0) and d3 * d4 != 0):
        return True
    return any(d == 0 and within(*seg, pt) for d, seg, pt in
               ((d1, (a, b), p), (d2, (a, b), q), (d3, (p, q), a), (d4, (p, q), b)))


def check_simple_polygon(vertices: list[Vec2], where: str) -> None:
    """A polygon must enclose an area and be simple: no edge meets another except its
    neighbours at their shared vertex (a bow-tie has no inside; a repeated vertex has a
    zero-length edge)."""
    n = len(vertices)
    area = 0.5 * sum(p[0] * q[1] - q[0] * p[1] for p, q in
                     zip(vertices, vertices[1:] + vertices[:1]))
    if area == 0.0:
        raise InputError(where, "the polygon encloses no area")
    for i in range(n):
        p, q = vertices[i], vertices[(i + 1) % n]
        if p == q:
            raise InputError(where, f"vertices {i} and {(i + 1) % n} coincide at {list(p)}")
        for j in range(i + 2, n):
            if i == 0 and j == n - 1:
                continue
            if _segments_cross(p, q, vertices[j], vertices[(j + 1) % n]):
                raise InputError(where, f"edges {i}-{(i + 1) % n} and {j}-{(j + 1) % n} cross: "
                                        "the polygon must be simple")


@dataclass
class SurfaceConfig:
    """The sliding surface z = f(x, y) and the sea level."""

    kind: Literal["plane", "sphere_cup", "expression", "raster"] = param(
        unit="-", doc="plane, sphere_cup (bottom at the origin), expression z = f(x, y), "
                      "or raster DEM")
    slope_deg: float = param(0.0, unit="deg", doc="plane: dip angle", ge=0.0, lt=90.0)
    dip_direction_deg: float = param(0.0, unit="deg",
                                     doc="plane: downhill direction, counterclockwise from +x",
                                     **ANGLE)
    z0: float = param(0.0, unit="m", doc="plane: height at the origin", ge=-COORDINATE_LIMIT,
                      le=COORDINATE_LIMIT)
    radius: float = param(100.0, unit="m", doc="sphere_cup: sphere radius R_s", gt=0.0,
                          le=COORDINATE_LIMIT)
    expression: str = param("", unit="m", doc="expression: f(x, y) in Python syntax with "
                            "+ - * / **, sin cos tan exp log sqrt tanh arctan sinh cosh, pi, e "
                            "and constants")
    constants: dict[str, float] = param(unit="-", doc="expression: named constants it may use "
                                        "(up to 1e15 in magnitude: beyond any length, slope "
                                        "or scale of a surface in metres)",
                                        default_factory=dict, ge=-1e15, le=1e15)
    path: str = param("", unit="-", doc="raster: DEM file, GeoTIFF (.tif, needs rasterio), "
                      "ESRI ASCII grid (.asc) or .npy z[iy, ix]", path=True)
    origin: Vec2 = param((0.0, 0.0), unit="m", doc=".npy raster: x, y of node [0, 0]",
                         ge=-COORDINATE_LIMIT, le=COORDINATE_LIMIT)
    spacing: Vec2 = param((0.0, 0.0), unit="m", doc=".npy raster: node spacing dx, dy", ge=0.0,
                          le=COORDINATE_LIMIT)
    z_sea: float = param(-INF, unit="m", doc="sea level: a mass with z < z_sea is underwater "
                         "(-inf: no sea)", allow_inf=True, **COORD)

    def validate(self, where: str) -> None:
        if self.kind == "expression":
            from solver.pointmass.expression import compile_expression
            compile_expression(self.expression, self.constants, f"{where}.expression")
        if self.kind == "raster":
            if not self.path:
                raise InputError(f"{where}.path", "a raster surface needs a DEM file")
            if self.path.endswith(".npy") and min(self.spacing) <= 0.0:
                raise InputError(f"{where}.spacing", "a .npy raster needs spacing = [dx, dy] > 0")


@dataclass
class GridConfig:
    """The N point masses and their grid (UBO-Inter Fig. 2): a footprint split in nx * ny cells,
    or a ring of equal masses (the sphere cup example of UBO-Inter section 3)."""

    kind: Literal["footprint", "ring"] = param(unit="-", doc="footprint polygon grid or ring")
    footprint: list[Vec2] = param(unit="m", doc="footprint: polygon vertices (x, y) in plan",
                                  default_factory=list, **COORD)
    nx: int = param(3, unit="-", doc="footprint: cells (masses) along the grid x axis", ge=1,
                    le=1000)
    ny: int = param(3, unit="-", doc="footprint: cells (masses) along the grid y axis", ge=1,
                    le=1000)
    angle_deg: float = param(0.0, unit="deg",
                             doc="footprint: grid x axis, counterclockwise from +x", **ANGLE)
    thickness: float = param(1.0, unit="m", doc="footprint: uniform thickness (no raster or list; "
                             "from 1e-3, a film rather than a slide)", ge=1e-3,
                             le=COORDINATE_LIMIT)
    thickness_path: str = param("", unit="-", doc="footprint: thickness raster (.tif, .asc or "
                                ".npy; no data = 0 m)", path=True)
    thickness_origin: Vec2 = param((0.0, 0.0), unit="m", doc=".npy thickness: x, y of node "
                                   "[0, 0]", ge=-COORDINATE_LIMIT, le=COORDINATE_LIMIT)
    thickness_spacing: Vec2 = param((0.0, 0.0), unit="m", doc=".npy thickness: node spacing",
                                    ge=0.0, le=COORDINATE_LIMIT)
    thickness_values: list[float] = param(unit="m", doc="footprint: thickness per cell, ny rows "
                                          "of nx values (row 0 at the lowest grid y)",
                                          default_factory=list, ge=0.0, le=COORDINATE_LIMIT)
    volume: float = param(0.0, unit="m3", doc="footprint: if > 0, thickness is scaled to this "
                          "slide volume (up to 1e12: a thousand km3)", ge=0.0, le=1e12)
    density: float = param(2200.0, unit="kg/m3", doc="rock density rho_r (10 to 1e5)",
                           ge=10.0, le=1e5)
    samples_per_cell: int = param(16, unit="-", doc="footprint: quadrature points per cell side",
                                  ge=2, le=256)
    velocity: Vec2 = param((0.0, 0.0), unit="m/s", doc="initial plan velocity of every mass",
                           **SPEED)
    n: int = param(3, unit="-", doc="ring: number of masses", ge=3, le=10_000)
    ring_radius: float = param(0.0, unit="m", doc="ring: plan radius (0: from colatitude_deg)",
                               ge=0.0, le=COORDINATE_LIMIT)
    colatitude_deg: float = param(0.0, unit="deg", doc="ring on a sphere_cup: colatitude theta, "
                                  "plan radius R_s sin(theta)", ge=0.0, lt=90.0)
    mass: float = param(1.0, unit="kg", doc="ring: mass of each point (1e-6, a milligram, to "
                        "1e15)", ge=1e-6, le=1e15)
    tangential_speed: float = param(0.0, unit="m/s", doc="ring: initial horizontal speed v0 "
                                    "tangent to the circle, counterclockwise", **SPEED)
    speed_over_escape: float = param(0.0, unit="-", doc="ring on a sphere_cup: if > 0, v0 as a "
                                     "multiple of the escape speed "
                                     "sqrt(R_s g sin(theta) tan(theta)); up to 100",
                                     ge=0.0, le=100.0)

    def validate(self, where: str) -> None:
        if self.kind == "footprint":
            if len(self.footprint) < 3:
                raise InputError(f"{where}.footprint", "a footprint polygon needs >= 3 vertices")
            for i, vertex in enumerate(self.footprint):
                if max(map(abs, vertex)) > COORDINATE_LIMIT:
                    raise InputError(f"{where}.footprint[{i}]", f"coordinates beyond "
                                     f"{COORDINATE_LIMIT:g} m: {list(vertex)}")
            ring = self.footprint[:-1] if self.footprint[0] == self.footprint[-1] \
                else self.footprint
            check_simple_polygon(ring, f"{where}.footprint")
            exactly_one(self, ("thickness_path", "thickness_values"), where, required=False)
            if self.thickness_values and len(self.thickness_values) != self.nx * self.ny:
                raise InputError(f"{where}.thickness_values",
                                 f"expected nx * ny = {self.nx * self.ny} values, "
                                 f"got {len(self.thickness_values)}")
            if self.thickness_values and min(self.thickness_values) < 0.0:
                raise InputError(f"{where}.thickness_values", "thickness must be >= 0")
            points = self.nx * self.ny * self.samples_per_cell ** 2
            need_count(f"{where}.samples_per_cell", points, MAX_QUADRATURE_POINTS,
                       "quadrature points (nx ny samples_per_cell^2)")
            if self.thickness_path.endswith(".npy") and min(self.thickness_spacing) <= 0.0:
                raise InputError(f"{where}.thickness_spacing", "a .npy thickness raster needs "
                                 "thickness_spacing = [dx, dy] > 0")
        else:
            exactly_one(self, ("ring_radius", "colatitude_deg"), where)
            exactly_one(self, ("tangential_speed", "speed_over_escape"), where, required=False)


@dataclass
class LinksConfig:
    """Which interaction acts on grid sides and diagonals (UBO-Inter section 2: RB on sides,
    EP on diagonals). A ring has sides only."""

    sides: Literal["rb", "ep", "none"] = param("rb", unit="-", doc="law on the grid sides")
    diagonals: Literal["ep", "rb", "none"] = param("ep", unit="-", doc="law on both diagonals "
                                                   "of every quadrilateral")


@dataclass
class EpConfig:
    """Parameters of the elasto-plastic law k(w) of UBO-Inter Eq. (5) (defaults: its Fig. 3)."""

    w1: float = param(-0.5, unit="-", doc="shortening where the repulsion saturates (a link "
                      "shortens by less than its length: above -1)", gt=-1.0, lt=0.0)
    w2: float = param(0.5, unit="-", doc="lengthening of the peak attraction (1e-6, below which "
                      "the law is a step, to 100 link lengths)", ge=1e-6, le=100.0)
    w3: float = param(1.0, unit="-", doc="lengthening beyond which the link carries no force "
                      "(1e-6 to 100 link lengths)", ge=1e-6, le=100.0)
    k_max: float = param(10.0, unit="-", doc="cap of the repulsive factor k (up to 1e6: beyond, "
                         "the links make RK4 unstable at any step)", gt=0.0, le=1e6)
    k_min: float = param(1.0, unit="-", doc="peak attractive factor |k| (up to 1e6)", ge=0.0,
                         le=1e6)

    def validate(self, where: str) -> None:
        if not self.w3 > self.w2:
            raise InputError(f"{where}.w3", f"must be > w2 = {self.w2}, got {self.w3}")


@dataclass
class FrictionConfig:
    """Basal Coulomb friction coefficients (UBO-Inter Eq. 2 and section 4)."""

    mu: float = param(0.0, unit="-", doc="basal friction on land (up to 10, tan 84 deg)",
                      ge=0.0, le=FRICTION_LIMIT)
    mu_w: float = param(0.0, unit="-", doc="basal friction underwater (up to 10)", ge=0.0,
                        le=FRICTION_LIMIT)


@dataclass
class WaterConfig:
    """Sea water: buoyancy (reduced weight alpha*m*g) and drag via mu_eq (UBO-Inter section 4)."""

    density: float = param(1030.0, unit="kg/m3", doc="water density rho_w (10 to 1e5)",
                           ge=10.0, le=1e5)
    drag_coefficient: float = param(1.0, unit="-", doc="drag coefficient C_d (up to 100; a "
                                    "flat plate has 2)", ge=0.0, le=100.0)
    drag_length: float = param(0.0, unit="m", doc="block length l_v (0: the grid side most "
                               "aligned with the motion)", ge=0.0, le=COORDINATE_LIMIT)
    buoyancy: bool = param(True, unit="-", doc="reduce the weight of underwater masses")


@dataclass
class TimeConfig:
    """RK4 time integration and the stop criterion."""

    t_end: float = param(100.0, unit="s", doc="end time (up to 1e7, and t_end / dt up to 1e8 "
                         "steps: checked with dt)", gt=0.0)
    dt: float = param(0.05, unit="s", doc="time step (fixed) or first/maximum step (adaptive; "
                      "up to 1e7)", gt=0.0, le=TIME_LIMIT)
    scheme: Literal["rk4", "rk4_adaptive"] = param("rk4", unit="-",
                                                   doc="fixed-step RK4 or RK4 with step doubling")
    rtol: float = param(1e-8, unit="-", doc="adaptive: relative error per step (1e-15, "
                        "round-off, to 0.1)", ge=1e-15, le=0.1)
    atol: float = param(1e-8, unit="m", doc="adaptive: absolute error per step (m and m/s; "
                        "1e-15 to 1)", ge=1e-15, le=1.0)
    dt_min: float = param(1e-8, unit="s", doc="adaptive: smallest step before giving up (up to "
                          "dt)", gt=0.0, le=TIME_LIMIT)

    def validate(self, where: str) -> None:
        if self.t_end / self.dt > MAX_STEPS:
            raise InputError(f"{where}.dt", f"t_end / dt = {self.t_end / self.dt:.3g} steps, "
                             f"more than {MAX_STEPS:g}")
        if self.t_end > TIME_LIMIT:
            raise InputError(f"{where}.t_end", f"must be <= {TIME_LIMIT:g}, got {self.t_end:g}")
        if self.scheme == "rk4_adaptive" and self.dt_min > self.dt:
            raise InputError(f"{where}.dt_min", f"{self.dt_min:g} s is above dt = {self.dt:g} s")
    stop_speed: float = param(0.0, unit="m/s", doc="stop when every mass is slower (0: never; "
                              "up to 1e3)", ge=0.0, le=SPEED_LIMIT)
    stop_after: float = param(1.0, unit="s", doc="the stop criterion applies from this time on",
                              ge=0.0, le=TIME_LIMIT)
    rest_speed: float = param(1e-6, unit="m/s", doc="below this speed a mass is at rest for the "
                              "friction direction (1e-12, round-off on a km/s, to 1)",
                              ge=1e-12, le=1.0)


@dataclass
class OutputConfig:
    """CSV/VTK frames and the plot."""

    every: float = param(1.0, unit="s", doc="interval between output frames (up to 1e7)",
                         gt=0.0, le=TIME_LIMIT)
    vtk: bool = param(True, unit="-", doc="write the VTK time series")
    vtk_run: int = param(0, unit="-", doc="in a sweep, the run index that writes VTK", ge=0)
    plot: bool = param(True, unit="-", doc="write com_speed.png")


@dataclass
class Config:
    """Root of a point-mass case."""

    surface: SurfaceConfig = section(SurfaceConfig, "sliding surface", required=True)
    grid: GridConfig = section(GridConfig, "point masses", required=True)
    links: LinksConfig = section(LinksConfig, "interaction laws")
    ep: EpConfig = section(EpConfig, "elasto-plastic law")
    friction: FrictionConfig = section(FrictionConfig, "basal friction")
    water: WaterConfig = section(WaterConfig, "sea water")
    time: TimeConfig = section(TimeConfig, "time integration")
    output: OutputConfig = section(OutputConfig, "outputs")
    sweep: Sweep = section(Sweep, "runs of the case with fields changed (solver.sweep)")
    gravity: float = param(9.81, unit="m/s2", doc="gravity acceleration g (0.01, a small "
                           "asteroid's, to 1e4, a thousand g)", ge=0.01, le=1e4)

    def outputs_at_least(self) -> list[resources.Output]:
        """The run tables of a sweep (one per run) and the VTK frames of the run that writes
        them (a .vtu and a .pvtu per frame, 24 B per mass at least)."""
        runs = self.sweep.count()
        masses = self.grid.nx * self.grid.ny if self.grid.kind == "footprint" else self.grid.n
        frames = (self.time.t_end / self.output.every + 1.0) if self.output.vtk else 0.0
        return [resources.Output("sweep", runs if runs > 1 else 0, 0.0, f"{runs} run tables"),
                resources.Output("output.every", 2.0 * frames, frames * masses * 24.0,
                                 f"{frames:.3g} VTK frames")]

    def validate(self, where: str) -> None:
        frames = self.time.t_end / self.output.every
        if frames > MAX_STEPS / 100:
            raise InputError(f"{where}: output.every", f"t_end / every = {frames:.3g} frames, "
                             f"more than {MAX_STEPS / 100:g}")
        if self.grid.kind == "ring" and self.grid.colatitude_deg > 0.0 \
                and self.surface.kind != "sphere_cup":
            raise InputError(f"{where}: grid.colatitude_deg", "needs surface.kind = 'sphere_cup'")
        if self.grid.speed_over_escape > 0.0 and self.surface.kind != "sphere_cup":
            raise InputError(f"{where}: grid.speed_over_escape",
                             "needs surface.kind = 'sphere_cup'")
