"""Case schema of the rockfall module (``module = "rockfall"``). SI units, angles in degrees.

World frame: x east (down the profile), y north, z up. A 2-D profile is the curve z(x),
extruded along y; a 3-D raster is z(x, y). Spin about +y is clockwise in the x-z picture
(x to the right, z up): for a block moving towards +x it is forward rolling (top-spin).

A ground set (``[grounds.<name>]``) holds the impact module's macro-element soil parameters
(:class:`solver.impact.config.Soil`) plus the rolling resistance; each profile segment or the
raster selects one by name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from solver import resources, sweep
from solver.case import ANGLE_LIMIT, COORDINATE_LIMIT, SPEED_LIMIT, exactly_one, param, section
from solver.errors import InputError
from solver.impact.config import MAX_SPIN, Block, Soil, Solver
from solver.resources import need_count

Vec2 = tuple[float, float]
COORD = {"ge": -COORDINATE_LIMIT, "le": COORDINATE_LIMIT}
"""Bounds of a coordinate (solver.case.COORDINATE_LIMIT)."""
ANGLE = {"ge": -ANGLE_LIMIT, "le": ANGLE_LIMIT}
"""Bounds of a free angle (solver.case.ANGLE_LIMIT)."""
MAX_BLOCKS = 1_000_000
"""Most blocks of an ensemble (sweep points x grid points x samples): rank 0 holds every
block's record and trajectory, a kilobyte at least each."""
MAX_SAMPLES = 1e7
"""Most trajectory samples of one block (motion.t_end / output.sample_dt): 1.3 GB."""
MAX_FRAMES = 100_000
"""Most VTK frames (motion.t_end / output.vtk_dt), a file each."""
MAX_STATIONS = 1_000_000
"""Most envelope stations along the terrain (its x extent / output.envelope_spacing)."""

#: Start and block fields an ensemble may vary (``[ensemble.vary.<name>]``).
VARIABLES = ("aspect_ratio", "mass", "theta_0", "axis_yaw", "omega_0", "speed", "dip",
             "azimuth", "x", "y", "height")
BLOCK_VARIABLES = ("aspect_ratio", "mass")
"""The variables that are block fields (the others are start fields)."""


@dataclass
class Ground(Soil):
    """A ground set: the impact macro-element soil plus the rolling resistance.

    While rolling, the sliding friction is ``tan(phi_b)`` (the impact module's slider) and the
    rolling resistance a moment ``mu_r N R`` opposing the rolling.
    """

    rolling_resistance: float = param(0.3, unit="-", doc="rolling resistance mu_r = tan of the "
                                      "rolling friction angle (not given by Dattola et al. "
                                      "2023; STONE's "
                                      "range is 0.3-0.85)", ge=0.0, lt=10.0)


@dataclass
class Segment:
    """A stretch of the profile, ``x = [from, to]``, on one ground set."""

    x: Vec2 = param(unit="m", doc="x range [from, to] of the stretch", **COORD)
    ground: str = param(unit="-", doc="name of its ground set in [grounds]")


@dataclass
class Terrain:
    """The slope: a 2-D profile (polyline z(x)) or a 3-D raster DEM z(x, y)."""

    kind: Literal["profile", "raster"] = param(unit="-", doc="profile (2-D polyline) or raster "
                                               "(3-D DEM: GeoTIFF, ESRI ASCII or .npy)")
    points: list[Vec2] = param(unit="m", doc="profile: vertices (x, z), x strictly increasing",
                               default_factory=list, **COORD)
    segments: list[Segment] = param(unit="-", doc="profile: ground stretches covering "
                                    "[x_first, x_last] without overlap", default_factory=list)
    path: str = param("", unit="-", doc="raster: DEM file, GeoTIFF (.tif, needs rasterio), "
                      "ESRI ASCII grid (.asc) or .npy z[iy, ix]", path=True)
    origin: Vec2 = param((0.0, 0.0), unit="m", doc=".npy raster: x, y of node [0, 0]", **COORD)
    spacing: Vec2 = param((0.0, 0.0), unit="m", doc=".npy raster: node spacing dx, dy", ge=0.0,
                          le=COORDINATE_LIMIT)
    ground: str = param("", unit="-", doc="raster: name of its ground set in [grounds]")
    width: float = param(20.0, unit="m", doc="profile: width of the VTK terrain strip", gt=0.0,
                         le=COORDINATE_LIMIT)

    def validate(self, where: str) -> None:
        if self.kind == "raster":
            if not self.path:
                raise InputError(f"{where}.path", "a raster terrain needs a DEM file")
            if self.path.endswith(".npy") and min(self.spacing) <= 0.0:
                raise InputError(f"{where}.spacing", "a .npy raster needs spacing = [dx, dy] > 0")
            if not self.ground:
                raise InputError(f"{where}.ground", "a raster terrain needs a ground set name")
            return
        if len(self.points) < 2:
            raise InputError(f"{where}.points", "a profile needs at least 2 points")
        for i in range(1, len(self.points)):
            if not self.points[i][0] > self.points[i - 1][0]:
                raise InputError(f"{where}.points[{i}]", f"the profile is not a function of x: "
                                 f"x = {self.points[i][0]:g} does not exceed the previous "
                                 f"x = {self.points[i - 1][0]:g}")
        self._check_segments(where)

    def _check_segments(self, where: str) -> None:
        if not self.segments:
            raise InputError(f"{where}.segments", "a profile needs ground segments")
        for i, seg in enumerate(self.segments):
            if not seg.x[1] > seg.x[0]:
                raise InputError(f"{where}.segments[{i}].x", f"empty stretch [{seg.x[0]:g}, "
                                 f"{seg.x[1]:g}]: 'to' must exceed 'from'")
        order = sorted(range(len(self.segments)), key=lambda i: self.segments[i].x[0])
        first, last = self.points[0][0], self.points[-1][0]
        reach = first
        for i in order:
            lo, hi = self.segments[i].x
            if lo < reach - 1e-9 * max(1.0, abs(reach)):
                raise InputError(f"{where}.segments[{i}].x", f"overlapping segments: "
                                 f"[{lo:g}, {hi:g}] starts before x = {reach:g}, where "
                                 "the previous segment (or the profile) ends")
            if lo > reach + 1e-9 * max(1.0, abs(reach)):
                raise InputError(f"{where}.segments[{i}].x", f"no ground between x = {reach:g} "
                                 f"and x = {lo:g}")
            reach = hi
        if abs(reach - last) > 1e-9 * max(1.0, abs(last)):
            raise InputError(f"{where}.segments", f"the segments end at x = {reach:g}, the "
                             f"profile at x = {last:g}")


@dataclass
class Start:
    """Release state of a block (the ensemble may vary any of these and the block shape)."""

    x: float = param(unit="m", doc="plan x of the centre of mass", **COORD)
    y: float = param(0.0, unit="m", doc="plan y of the centre of mass", **COORD)
    height: float = param(0.0, unit="m", doc="height of the centre above the ground vertically "
                          "below it (ignored with on_ground; up to 1e4, above any cliff)",
                          ge=-1e4, le=1e4)
    on_ground: bool = param(False, unit="-", doc="place the block resting on the ground at "
                            "(x, y) instead (height ignored)")
    speed: float = param(0.0, unit="m/s", doc="initial speed (up to 1e3)", ge=0.0,
                         le=SPEED_LIMIT)
    dip: float = param(0.0, unit="deg", doc="angle of the initial velocity below the horizontal",
                       ge=-90.0, le=90.0)
    azimuth: float = param(0.0, unit="deg", doc="plan direction of the initial velocity, "
                           "counter-clockwise from +x", **ANGLE)
    theta_0: float = param(0.0, unit="deg", doc="tilt of the major axis from the vertical, "
                           "towards the azimuth (positive: the top leans forward)", **ANGLE)
    axis_yaw: float = param(0.0, unit="deg", doc="turn of the tilt plane of the major axis about "
                            "the vertical, away from the azimuth (0: axis in the vertical plane "
                            "of the motion)", **ANGLE)
    omega_0: float = param(0.0, unit="deg/s", doc="initial spin about the horizontal axis across "
                           f"the azimuth; positive is forward rolling (top-spin; at most "
                           f"{MAX_SPIN:g} in magnitude)", ge=-MAX_SPIN, le=MAX_SPIN)


@dataclass
class Spread:
    """How one quantity varies over the ensemble: a grid of values or a distribution."""

    values: list[float] = param(unit="(of the field)", doc="grid of values (each run's value "
                                "is checked against its field's bounds)",
                                default_factory=list, **COORD)
    uniform: list[float] = param(unit="(of the field)", doc="[low, high] of a uniform draw",
                                 default_factory=list, **COORD)
    normal: list[float] = param(unit="(of the field)", doc="[mean, std] of a normal draw",
                                default_factory=list, **COORD)

    def validate(self, where: str) -> None:
        exactly_one(self, ("values", "uniform", "normal"), where)
        if self.uniform and (len(self.uniform) != 2 or self.uniform[1] < self.uniform[0]):
            raise InputError(f"{where}.uniform", "expected [low, high] with low <= high")
        if self.normal and (len(self.normal) != 2 or self.normal[1] < 0.0):
            raise InputError(f"{where}.normal", "expected [mean, std] with std >= 0")

    @property
    def is_grid(self) -> bool:
        return bool(self.values)


@dataclass
class Ensemble:
    """The runs: the Cartesian product of the grids, each repeated ``samples`` times with the
    distributions drawn anew. Run i draws from ``numpy.random.default_rng([seed, i])``, so a
    run's block does not depend on how the runs are shared among MPI ranks."""

    vary: dict[str, Spread] = param(unit="-", doc="varied quantities (start or block fields)",
                                    default_factory=dict)
    samples: int = param(1, unit="-", doc=f"runs per grid point (an ensemble has at most "
                         f"{MAX_BLOCKS:g} blocks)", ge=1, le=MAX_BLOCKS)
    seed: int = param(0, unit="-", doc="seed of the per-run random streams", ge=0)

    def validate(self, where: str) -> None:
        for name in self.vary:
            if name not in VARIABLES:
                raise InputError(f"{where}.vary.{name}", f"cannot be varied (allowed: "
                                 f"{', '.join(VARIABLES)})")


@dataclass
class Sweep(sweep.Sweep):
    """Grids over the start and block fields in the sweep syntax of every module
    (solver.sweep): ``"start.speed" = [1.0, 2.0]`` is ``[ensemble.vary.speed] values =
    [1.0, 2.0]``."""

    def validate(self, where: str) -> None:
        super().validate(where)
        for i, key in enumerate(self.swept()):
            table, _, name = key.partition(".")
            if name not in VARIABLES or table != ("block" if name in BLOCK_VARIABLES
                                                   else "start"):
                raise InputError(f"{where}.keys[{i}]" if self.keys else f"{where}.{key}",
                                 "cannot be swept (allowed: " + ", ".join(
                                     f"{'block' if v in BLOCK_VARIABLES else 'start'}.{v}"
                                     for v in VARIABLES) + ")")


@dataclass
class Motion:
    """Phase rules and free-flight physics."""

    gravity: float = param(9.81, unit="m/s2", doc="gravitational acceleration (0.1, below "
                           "Ceres' 0.28, to 1e4, a thousand g)", ge=0.1, le=1e4)
    air_density: float = param(0.0, unit="kg/m3", doc="air density for the quadratic drag "
                               "(0: no drag, exact ballistic flight; up to 100, above Venus' "
                               "65 at its surface)", ge=0.0, le=100.0)
    drag_coefficient: float = param(0.47, unit="-", doc="drag coefficient C_d on the frontal "
                                    "area of the equal-volume sphere (up to 100; a flat plate "
                                    "has 2)", ge=0.0, le=100.0)
    roll_height: float = param(0.05, unit="m", doc="contacts with a normal approach speed below "
                               "sqrt(2 g cos(beta) h), and rebounds lower than h, roll instead "
                               "of bouncing; up to 100)", gt=0.0, le=100.0)
    after_topple: Literal["roll", "rebound"] = param("roll", unit="-", doc="after the impact "
                                                     "module's toppling end the block rolls "
                                                     "(HyStone), or flies when its rebound "
                                                     "clears roll_height")
    stop_speed: float = param(0.1, unit="m/s", doc="arrest speed (where the rolling resistance "
                              "can hold the block; up to 100)", gt=0.0, le=100.0)
    t_end: float = param(600.0, unit="s", doc="longest simulated time of a block (up to a day: "
                         "a rockfall lasts minutes)", gt=0.0, le=86400.0)
    max_impacts: int = param(200, unit="-", doc="most impacts of a block before it is declared "
                             "stopped (up to 1e5: rank 0 holds every impact's record)", ge=1,
                             le=100_000)


@dataclass
class Output:
    """Tables, plots and VTK."""

    barriers: list[float] = param(unit="m", doc="x positions of the barriers for the energy and "
                                  "passing-height envelopes", default_factory=list, **COORD)
    envelope_spacing: float = param(10.0, unit="m", doc="x spacing of the envelope stations "
                                    f"along the slope (at most {MAX_STATIONS:g} stations)",
                                    gt=0.0, le=COORDINATE_LIMIT)
    sample_dt: float = param(0.02, unit="s", doc="time between stored trajectory samples (at "
                             f"most {MAX_SAMPLES:g} per block: motion.t_end / sample_dt; "
                             "every block's, each to motion.t_end, must fit rank 0's memory)",
                             gt=0.0, le=86400.0)
    bins: int = param(20, unit="-", doc="histogram bins (up to 1e4, more than a plot has "
                      "pixels across)", ge=2, le=10_000)
    trajectories: bool = param(True, unit="-", doc="write trajectories/block_NNNN.csv")
    vtk: bool = param(True, unit="-", doc="write the VTK files")
    vtk_dt: float = param(0.5, unit="s", doc="time between VTK frames of the block positions "
                          f"(at most {MAX_FRAMES:g} frames: motion.t_end / vtk_dt)", gt=0.0,
                          le=86400.0)
    plots: bool = param(True, unit="-", doc="write the PNG plots")


@dataclass
class Config:
    """Root of a rockfall case."""

    terrain: Terrain = section(Terrain, "the slope", required=True)
    start: Start = section(Start, "release state", required=True)
    grounds: dict[str, Ground] = param(unit="-", doc="named ground sets [grounds.<name>]: the "
                                       "impact module's soil fields (solver describe impact, "
                                       "soil.*) and rolling_resistance", default_factory=dict)
    block: Block = section(Block, "the ellipsoidal block")
    motion: Motion = section(Motion, "phase rules")
    impact_solver: Solver = section(Solver, "integration of each impact")
    ensemble: Ensemble = section(Ensemble, "ensemble of runs")
    sweep: Sweep = section(Sweep, "grids over start and block fields, dotted keys")
    output: Output = section(Output, "outputs")

    def validate(self, where: str) -> None:
        names = ([s.ground for s in self.terrain.segments] if self.terrain.kind == "profile"
                 else [self.terrain.ground])
        fields = ([f"terrain.segments[{i}].ground" for i in range(len(names))]
                  if self.terrain.kind == "profile" else ["terrain.ground"])
        for name, dotted in zip(names, fields):
            if name not in self.grounds:
                raise InputError(f"{where}: {dotted}", f"unknown ground set {name!r} (defined: "
                                 f"{', '.join(self.grounds) or 'none'})")
        for key in self.sweep.swept():
            if key.partition(".")[2] in self.ensemble.vary:
                raise InputError(f"{where}: sweep.{key}", "also in ensemble.vary: give one")
        self._check_sizes(where)

    def _check_sizes(self, where: str) -> None:
        """The counts the case sets, before anything is expanded or allocated: blocks of the
        ensemble, samples of a trajectory, VTK frames (module constants)."""
        need_count(f"{where}: ensemble.samples", self.blocks(), MAX_BLOCKS,
                   "blocks (sweep points x grid points x samples)")
        need_count(f"{where}: output.sample_dt", self.motion.t_end / self.output.sample_dt,
                   MAX_SAMPLES, "trajectory samples of a block (motion.t_end / sample_dt)")
        if self.output.vtk:
            need_count(f"{where}: output.vtk_dt", self.motion.t_end / self.output.vtk_dt,
                       MAX_FRAMES, "VTK frames (motion.t_end / vtk_dt)")

    def outputs_at_least(self) -> list[resources.Output]:
        """The trajectory tables, one per block (two rows of 16 numbers at least)."""
        blocks = self.blocks() if self.output.trajectories else 0
        return [resources.Output("output.trajectories", blocks, blocks * 2 * 16 * 8.0,
                                 f"{blocks} trajectory tables")]

    def blocks(self) -> int:
        """How many blocks the ensemble runs, counted without expanding it."""
        grids = math.prod(len(s.values) for s in self.ensemble.vary.values() if s.is_grid)
        return self.sweep.count() * grids * self.ensemble.samples

    def varied(self) -> list[str]:
        """The names of the varied quantities: the swept fields, then ``ensemble.vary``."""
        return [key.partition(".")[2] for key in self.sweep.swept()] + list(self.ensemble.vary)
