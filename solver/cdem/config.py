"""Case schema of the CDEM module (``module = "cdem"``). Units are SI; angles in degrees."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from solver.case import (ANGLE_LIMIT, COORDINATE_LIMIT, SPEED_LIMIT, TIME_LIMIT, exactly_one,
                         param, section)
from solver.contact_laws.register import (DYNAMIC_FRICTION, FRICTION, NORMAL_LAWS, RESTITUTION,
                                          TANGENTIAL_LAWS, WEAKENING_VELOCITY, law_field)
from solver.errors import InputError
from solver.resources import need_count
from solver.sweep import CaseSweep

INF = math.inf
Vec3 = tuple[float, float, float]
COORD = {"ge": -COORDINATE_LIMIT, "le": COORDINATE_LIMIT}
"""Bounds of a coordinate, and of an axis's components (solver.case.COORDINATE_LIMIT)."""
ANGLE = {"ge": -ANGLE_LIMIT, "le": ANGLE_LIMIT}
"""Bounds of a free angle (solver.case.ANGLE_LIMIT)."""
STRENGTH_LIMIT = 1e12
"""Largest finite strength [Pa]: a thousand times the strongest rock (inf: unbreakable)."""
STIFFNESS_RANGE = (1e3, 1e18)
"""A given spring stiffness per area [Pa/m]: from 1e3 (a metre of loose sand's 1 MPa over a
thousand metres) to 1e18 (diamond's modulus over a micrometre); 0 takes the default."""
MAX_ELEMENTS = 1e10
"""Most elements of a generated box: 2.5 TB of mesh on rank 0
(solver.mesh.generate.BYTES_PER_ELEMENT), beyond the memory of the largest single nodes."""


def check_stiffness(obj, names: tuple[str, ...], where: str) -> None:
    """Each given stiffness of ``obj`` is 0 (the default) or within STIFFNESS_RANGE."""
    low, high = STIFFNESS_RANGE
    for name in names:
        value = getattr(obj, name)
        if value and not low <= value <= high:
            raise InputError(f"{where}.{name}", f"must be 0 (the default) or {low:g} to "
                                                f"{high:g} Pa/m, got {value:g}")


def check_axis(axis: Vec3, where: str) -> None:
    """An axis of rotation must have a direction."""
    if not math.hypot(*axis) > 0.0:
        raise InputError(where, f"an axis needs a non-zero direction, got {list(axis)}")


@dataclass
class BoxMesh:
    """A structured box of hexahedra generated at load time."""

    n: tuple[int, int, int] = param(unit="-", doc="elements along x, y, z")
    size: Vec3 = param(unit="m", doc="box edge lengths along x, y, z (1e-6 to 1e8: from a "
                       "micrometre, below any grain, to beyond any geographic extent)",
                       ge=1e-6, le=COORDINATE_LIMIT)
    origin: Vec3 = param((0.0, 0.0, 0.0), unit="m", doc="corner with the smallest coordinates",
                         **COORD)
    group: str = param("block", unit="-", doc="material group name of all its elements")
    layer_groups: list[str] = param(unit="-", doc="group of each element layer along z, bottom "
                                    "to top (overrides group)", default_factory=list)
    rotate_deg: float = param(0.0, unit="deg", doc="rigid rotation of the box about its centre",
                              **ANGLE)
    rotate_axis: Vec3 = param((0.0, 0.0, 1.0), unit="-", doc="axis of that rotation", **COORD)
    separate: bool = param(False, unit="-", doc="every element a separate block, none glued "
                           "(a fully jointed rock mass)")

    def validate(self, where: str) -> None:
        if min(self.n) < 1:
            raise InputError(f"{where}.n",
                             f"needs at least one element per direction, got {self.n}")
        need_count(f"{where}.n", self.elements, MAX_ELEMENTS, "elements")
        if self.layer_groups and len(self.layer_groups) != self.n[2]:
            raise InputError(f"{where}.layer_groups", f"needs {self.n[2]} names (one per layer)")
        for name, values in (("origin", self.origin),
                             ("size", [o + s for o, s in zip(self.origin, self.size)])):
            if max(map(abs, values)) > COORDINATE_LIMIT:
                raise InputError(f"{where}.{name}", f"coordinates beyond "
                                 f"{COORDINATE_LIMIT:g} m: {list(values)}")
        check_axis(self.rotate_axis, f"{where}.rotate_axis")

    @property
    def elements(self) -> int:
        """How many hexahedra the box has."""
        return math.prod(self.n)


@dataclass
class MeshConfig:
    """Where the hexahedra come from: a mesh file, or one or more generated boxes."""

    path: str = param("", unit="-", doc="mesh file read with meshio (.msh, .vtu, .inp; "
                      "what it holds must fit rank 0's memory)",
                      path=True)
    boxes: list[BoxMesh] = param(unit="-", doc="generated boxes (instead of path)",
                                 default_factory=list)
    rotate_deg: float = param(0.0, unit="deg", doc="rigid rotation applied to the mesh at load",
                              **ANGLE)
    rotate_axis: Vec3 = param((0.0, 1.0, 0.0), unit="-", doc="axis of that rotation", **COORD)
    rotate_origin: Vec3 = param((0.0, 0.0, 0.0), unit="m", doc="point on the rotation axis",
                                **COORD)

    def validate(self, where: str) -> None:
        exactly_one(self, ("path", "boxes"), f"{where}.path")
        check_axis(self.rotate_axis, f"{where}.rotate_axis")


@dataclass
class Material:
    """Elastic block material of one group, and the strength of the interfaces inside it."""

    density: float = param(unit="kg/m3", doc="mass density (10 to 1e5: any solid, in kg/m3)",
                           ge=10.0, le=1e5)
    youngs_modulus: float = param(unit="Pa", doc="Young's modulus E (up to 1e15: a thousand "
                                  "times diamond's, for near-rigid blocks)", gt=0.0, le=1e15)
    group: str = param("all", unit="-", doc="group name or id this applies to ('all': every group)")
    poisson_ratio: float = param(0.25, unit="-", doc="Poisson's ratio nu (-1 < nu < 0.5)",
                                 gt=-1.0, lt=0.5)
    model: Literal["elastic"] = param("elastic", unit="-", doc="constitutive law of the blocks")
    tensile_strength: float = param(INF, unit="Pa", doc="interface tensile strength T "
                                    "(inf: never breaks in tension; finite: up to 1e12, a "
                                    "thousand times the strongest rock)", ge=0.0,
                                    le=STRENGTH_LIMIT, allow_inf=True)
    cohesion: float = param(INF, unit="Pa", doc="interface cohesion c (inf: never breaks in "
                            "shear; finite: up to 1e12)", ge=0.0, le=STRENGTH_LIMIT,
                            allow_inf=True)
    friction_deg: float = param(30.0, unit="deg", doc="interface friction angle phi",
                                ge=0.0, lt=90.0)


@dataclass
class InterfacePair:
    """Strength of the interfaces between two groups (e.g. a weak bedding plane)."""

    groups: tuple[str, str] = param(unit="-", doc="the two group names or ids")
    tensile_strength: float = param(0.0, unit="Pa", doc="tensile strength T (inf: never breaks "
                                    "in tension; finite: up to 1e12)", ge=0.0,
                                    le=STRENGTH_LIMIT, allow_inf=True)
    cohesion: float = param(0.0, unit="Pa", doc="cohesion c (inf: never breaks in shear; "
                            "finite: up to 1e12)", ge=0.0, le=STRENGTH_LIMIT, allow_inf=True)
    friction_deg: float = param(30.0, unit="deg", doc="friction angle phi", ge=0.0, lt=90.0)
    weakening_time: float = param(0.0, unit="s", doc="a trigger by strength reduction: over "
                                  "this much time of breakable stages, T, c and tan(phi) fall "
                                  "linearly from the weaker group's (what the faces have "
                                  "without this entry) to the values above (0: at once)",
                                  ge=0.0, le=TIME_LIMIT)
    normal_stiffness: float = param(0.0, unit="Pa/m", doc="k_n per unit area (0: as elsewhere; "
                                    "else 1e3 to 1e18)", ge=0.0, le=STIFFNESS_RANGE[1])
    shear_stiffness: float = param(0.0, unit="Pa/m", doc="k_s per unit area (0: as elsewhere; "
                                   "else 1e3 to 1e18)", ge=0.0, le=STIFFNESS_RANGE[1])

    def validate(self, where: str) -> None:
        check_stiffness(self, ("normal_stiffness", "shear_stiffness"), where)


@dataclass
class InterfaceConfig:
    """Interface spring stiffness: k_n = beta (K + 4G/3)/h, k_s = beta G/h unless given."""

    stiffness_factor: float = param(10.0, unit="-", doc="beta in k = beta * modulus / h "
                                    "(1e-3 to 1e6: beyond, the springs are a gap or make the "
                                    "stable step vanish)", ge=1e-3, le=1e6)
    normal_stiffness: float = param(0.0, unit="Pa/m", doc="k_n per unit area (0: from beta; "
                                    "else 1e3 to 1e18)", ge=0.0, le=STIFFNESS_RANGE[1])
    shear_stiffness: float = param(0.0, unit="Pa/m", doc="k_s per unit area (0: from beta; "
                                   "else 1e3 to 1e18)", ge=0.0, le=STIFFNESS_RANGE[1])
    pairs: list[InterfacePair] = param(unit="-", doc="interfaces between groups",
                                       default_factory=list)

    def validate(self, where: str) -> None:
        check_stiffness(self, ("normal_stiffness", "shear_stiffness"), where)


@dataclass
class ContactConfig:
    """Semi-spring contact between blocks (solver.cdem.contact)."""

    enabled: bool = param(False, unit="-", doc="detect and resolve block contacts")
    normal_law: Literal[tuple(NORMAL_LAWS)] = param(
        "linear_dashpot", unit="-", doc="law of the normal force (solver.contact_laws.register)")
    tangential_law: Literal[tuple(TANGENTIAL_LAWS)] = param(
        "coulomb", unit="-", doc="law of the friction coefficient (solver.contact_laws.register)")
    friction_deg: float = law_field(FRICTION)
    dynamic_friction_deg: float = law_field(DYNAMIC_FRICTION)
    weakening_velocity: float = law_field(WEAKENING_VELOCITY)
    normal_stiffness: float = param(0.0, unit="Pa/m", doc="k_n per area (0: beta (K+4G/3)/h)",
                                    ge=0.0)
    shear_stiffness: float = param(0.0, unit="Pa/m", doc="k_t per area (0: beta G/h)", ge=0.0)
    stiffness_factor: float = param(1.0, unit="-", doc="beta of the default stiffness", gt=0.0)
    restitution: float = law_field(RESTITUTION)
    indentation: float = param(0.01, unit="-", doc="alpha in d = alpha L (Feng et al. 2014 Eq. 3)",
                               gt=0.0, lt=0.5)
    tolerance: float = param(1e-3, unit="-", doc="search tolerance / median face size",
                             gt=0.0)
    margin: float = param(0.25, unit="-", doc="search margin / median face size", gt=0.0)
    renew_every: int = param(100, unit="-", doc="steps between target renewals", ge=1)

    def validate(self, where: str) -> None:
        if self.tolerance >= self.indentation:
            raise InputError(f"{where}.tolerance", "must be below the indentation alpha "
                                                   "(Feng et al. 2014: d = alpha L > tolerance)")
        NORMAL_LAWS[self.normal_law].check(self, where)
        TANGENTIAL_LAWS[self.tangential_law].check(self, where)


@dataclass
class Boundary:
    """Fixed or prescribed-velocity degrees of freedom of the nodes inside a box."""

    box: tuple[float, float, float, float, float, float] = param(
        (-INF, INF, -INF, INF, -INF, INF), unit="m",
        doc="xmin, xmax, ymin, ymax, zmin, zmax of the selected nodes (initial coordinates; "
            "+-inf: unbounded; finite: up to 1e15 in magnitude, a selection may reach beyond "
            "the mesh)", allow_inf=True, ge=-1e15, le=1e15)
    group: str = param("", unit="-", doc="only nodes of elements of this group ('' any)")
    fix: list[Literal["x", "y", "z"]] = param(unit="-", doc="components held",
                                              default_factory=lambda: ["x", "y", "z"])
    velocity: Vec3 = param((0.0, 0.0, 0.0), unit="m/s", doc="velocity of the held components "
                           "(up to 1e3 in magnitude: solver.case.SPEED_LIMIT)", ge=-SPEED_LIMIT,
                           le=SPEED_LIMIT)

    def validate(self, where: str) -> None:
        b = self.box
        for axis, lo, hi in zip("xyz", b[0::2], b[1::2]):
            if not lo <= hi:
                raise InputError(f"{where}.box", f"{axis}min {lo} is above {axis}max {hi}")


@dataclass
class Stage:
    """One stage of the time march: dynamic relaxation or a dynamic run."""

    name: str = param("stage", unit="-", doc="label in progress lines and results")
    kind: Literal["relax", "dynamic"] = param("dynamic", unit="-",
                                              doc="relax: stop at unbalance_tol")
    damping: Literal["local", "viscous", "none"] = param("none", unit="-", doc="damping mode")
    local_damping: float = param(0.8, unit="-", doc="Cundall local damping coefficient alpha",
                                 ge=0.0, lt=1.0)
    viscous_damping: float = param(0.0, unit="1/s", doc="mass-proportional damping c in c*m*v "
                                   "(up to 1e6: beyond, the stable step vanishes)", ge=0.0,
                                   le=1e6)
    duration: float = param(INF, unit="s", doc="simulated time of the stage (inf: until "
                            "converged or max_steps; finite: up to 1e7)", gt=0.0,
                            le=TIME_LIMIT, allow_inf=True)
    max_steps: int = param(1_000_000, unit="-", doc="step limit of the stage", ge=1)
    unbalance_tol: float = param(1e-5, unit="-", doc="relax: converged below this ratio (up "
                                 "to 1, the largest ratio; below about 1e-12, round-off, the "
                                 "stage runs to max_steps)", gt=0.0, le=1.0)
    breakable: bool = param(True, unit="-", doc="apply the spring failure criteria")
    tilt_rate: float = param(0.0, unit="deg/s", doc="gravity turns at this rate (a tilting "
                             "base; up to 3600 in magnitude, ten turns a second)", ge=-3600.0,
                             le=3600.0)
    tilt_axis: Vec3 = param((0.0, 1.0, 0.0), unit="-", doc="axis gravity turns about", **COORD)
    gravity_ramp: float = param(0.0, unit="1/s", doc="g grows as g0 (1 + ramp t) (up to 1e3: g "
                                "doubles in a millisecond)", ge=0.0, le=1e3)
    load_tolerance: float = param(0.0, unit="-", doc="quasi-static servo: tilt and gravity ramp "
                                  "advance only in steps whose unbalance ratio is below this "
                                  "(0: they follow the clock; at most 1, the largest ratio)",
                                  ge=0.0, le=1.0)
    stop_on_failure: bool = param(False, unit="-", doc="end the stage at the first broken spring")
    reset_displacement: bool = param(False, unit="-",
                                     doc="after the stage, displacements and velocities to 0")
    prestep: Literal["none", "implicit"] = param(
        "none", unit="-", doc="relax: implicit: first solve the elastic gravity equilibrium "
        "with every spring intact (PETSc CG + GAMG, or pyamg), then relax")

    def validate(self, where: str) -> None:
        if self.prestep == "implicit" and self.kind != "relax":
            raise InputError(f"{where}.prestep", "only a relax stage can have a prestep")
        if math.isinf(self.duration) and self.kind == "dynamic" and self.max_steps >= 1_000_000:
            raise InputError(f"{where}.duration", "a dynamic stage needs a duration or max_steps")
        check_axis(self.tilt_axis, f"{where}.tilt_axis")

    @property
    def damping_terms(self) -> tuple[float, float]:
        """(Cundall local alpha, mass-proportional c [1/s]) this stage applies."""
        return (self.local_damping if self.damping == "local" else 0.0,
                self.viscous_damping if self.damping == "viscous" else 0.0)


@dataclass
class TimeConfig:
    """Time step: automatic, per stage (safety * the stage's stability limit under its own
    damping), or given (the same for every stage)."""

    safety: float = param(0.8, unit="-", doc="fraction of the stable step (0.01 to 1)",
                          ge=0.01, le=1.0)
    dt: float = param(0.0, unit="s",
                      doc="fixed step of every stage (0: automatic); below every stage's limit "
                      "(and 1 s: no block is that slow to vibrate)", ge=0.0, le=1.0)


@dataclass
class OutputConfig:
    """VTK frames and progress."""

    vtk: bool = param(True, unit="-", doc="write the .pvd/.pvtu/.vtu series")
    every: float = param(0.0, unit="s", doc="simulated time between frames (0: stage ends only; "
                         "up to 1e7)", ge=0.0, le=TIME_LIMIT)


@dataclass
class Analysis:
    """What the run measures for its results (see solver.cdem.analyses)."""

    type: Literal["none", "pendulum", "failure", "column", "sliding", "resting", "stack",
                  "landslide"] = param("none", unit="-", doc="which result set to compute")
    mode: Literal["tensile", "shear", "toppling"] = param(
        "tensile", unit="-", doc="failure: which closed form is the theory")
    pivot: Vec3 = param((0.0, 0.0, 0.0), unit="m", doc="pendulum: point on the pinned axis",
                        **COORD)
    axis: Vec3 = param((0.0, 1.0, 0.0), unit="-", doc="pendulum: the pinned axis", **COORD)
    block_group: str = param("block", unit="-", doc="failure/column: the group of the block; "
                             "landslide: the sliding body")
    sample_every: int = param(10, unit="-", doc="steps between samples", ge=1)
    failure_displacement: float = param(0.005, unit="m", doc="stack: a block moved this far "
                                        "during the last stage means failure; landslide: the "
                                        "sliding body's centre of mass, in the trigger stage",
                                        gt=0.0, le=COORDINATE_LIMIT)
    bed_group: str = param("bedrock", unit="-", doc="landslide: the held bedrock group (the "
                           "landslide mass is every other group)")
    trigger_stage: str = param("trigger", unit="-", doc="landslide: the stage that ends once "
                               "the sliding body has moved failure_displacement")
    runout_stage: str = param("runout", unit="-", doc="landslide: the stage that ends when "
                              "the mass stops (skipped when the trigger did not move it)")
    stop_fraction: float = param(1e-3, unit="-", doc="landslide: the mass has stopped when "
                                 "its kinetic energy stays below this fraction of its peak",
                                 gt=0.0, lt=1.0)
    stop_window: float = param(2.0, unit="s", doc="landslide: for this long", gt=0.0,
                               le=TIME_LIMIT)
    map_cell: float = param(0.0, unit="m", doc="landslide: cell of the deposit map (0: half "
                            "the median plan size of the mass elements; else 1e-3 to 1e8, "
                            "and at most 1e8 cells over the mass)", ge=0.0,
                            le=COORDINATE_LIMIT)

    def validate(self, where: str) -> None:
        check_axis(self.axis, f"{where}.axis")
        if 0.0 < self.map_cell < 1e-3:
            raise InputError(f"{where}.map_cell", f"must be 0 (the default) or 1e-3 to 1e8 m "
                                                  f"(a millimetre cell maps grains), got "
                                                  f"{self.map_cell:g}")


@dataclass
class Config:
    """A CDEM case: mesh, materials, interfaces, boundaries, gravity, stages, output."""

    mesh: MeshConfig = section(MeshConfig, "the hexahedral mesh", required=True)
    materials: list[Material] = param(unit="-", doc="materials by group")
    stages: list[Stage] = param(unit="-", doc="the stages, run in order")
    interface: InterfaceConfig = section(InterfaceConfig, "interface springs")
    boundaries: list[Boundary] = param(unit="-", doc="held degrees of freedom",
                                       default_factory=list)
    gravity: Vec3 = param((0.0, 0.0, -9.81), unit="m/s2", doc="gravitational acceleration "
                          "(components up to 1e4: a thousand g)", ge=-1e4, le=1e4)
    time: TimeConfig = section(TimeConfig, "time step")
    output: OutputConfig = section(OutputConfig, "output")
    analysis: Analysis = section(Analysis, "results to compute")
    contact: ContactConfig = section(ContactConfig, "block contact")
    partitioner: Literal["metis", "rcb"] = param("metis", unit="-",
                                                 doc="element partitioner across MPI ranks")
    sweep: CaseSweep = section(CaseSweep, "whole runs of the case with fields changed "
                               "(solver.sweep)")

    def validate(self, where: str) -> None:
        if not self.materials:
            raise InputError(f"{where}: materials", "at least one material is needed")
        if not self.stages:
            raise InputError(f"{where}: stages", "at least one stage is needed")
        check_contact_ranges(self.contact, f"{where}: contact")


CONTACT_RANGES = {"stiffness_factor": (1e-3, 1e6), "tolerance": (1e-9, 0.5),
                  "margin": (1e-6, 100.0), "weakening_velocity": (1e-9, SPEED_LIMIT)}
"""Bounds of the [contact] search, stiffness and law fields beyond those its schema gives
(solver.contact_laws.register owns the schema): beta as for the interfaces; a search
tolerance below 1e-9 of the face size is below round-off; a margin of over 100 face sizes
makes every face a candidate of every other; a weakening velocity is a slip speed."""


def check_contact_ranges(contact: ContactConfig, where: str) -> None:
    """The [contact] stiffnesses are 0 or within STIFFNESS_RANGE, and the fields of
    CONTACT_RANGES within their bounds."""
    check_stiffness(contact, ("normal_stiffness", "shear_stiffness"), where)
    for name, (low, high) in CONTACT_RANGES.items():
        value = getattr(contact, name)
        if not low <= value <= high:
            raise InputError(f"{where}.{name}", f"must be within [{low:g}, {high:g}], "
                                                f"got {value:g}")
