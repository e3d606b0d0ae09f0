"""Build the hexahedral mesh of the Jiweishan landslide (Feng et al. 2014, section 7).

    python scripts/make_jiweishan.py coarse                 # meshes/jiweishan_coarse.msh
    python scripts/make_jiweishan.py production             # meshes/jiweishan_production.msh
    python scripts/make_jiweishan.py coarse --out m.msh --set dip_deg=25 --set key_length_m=0

Writes a Gmsh 2.2 file with three named groups, numbered as in the paper's Fig. 22:
1 ``bedrock`` (the bed, the flank wall, the cliff and the valley floor; held in the case),
2 ``key_body``, 3 ``sliding_body``. Bad input (a negative length, a dip of 90 deg or more,
a resolution that leaves elements degenerate) stops with one line
``error: <where>: <field>: <what>`` and exit code 2.

What the paper gives: the 2009 Jiweishan rockslide (Wulong, Chongqing), about 7e6 m3; the
landslide mass about 780 m long, 260 m wide and 60 m thick; the bedding (the sliding bed)
dips 21 deg towards azimuth 345 deg; the mechanism is "virtual dip slipping" (the mass
slides along an apparent dip, not the true dip); the key body crumbled first, the sliding
body then slid along the bed and toppled once its mass centre left the bed. Its figures
(the plan sketch Fig. 20, the real model Fig. 22, the simple model Fig. 24) are lost, so
every other number below is an assumption of this builder, marked [A]:

* frame: x east, y north, z up [m]. The mass slides along ``sliding_azimuth_deg`` [A: 0,
  due north, the direction of the paper's DACN component]; the bed's dip is split into the
  apparent dips along that direction (DACN, positive down-slope) and across it (DACW,
  positive when the bed dips to the left of the sliding direction, i.e. west for a slide
  to the north): tan(DACN) = tan(dip) cos(a), tan(DACW) = tan(dip) sin(a), a the angle from
  the sliding direction to the dip direction, counter-clockwise (for 345 deg and a slide
  to the north: DACN = 20.35 deg, DACW = 5.68 deg);
* virtual dip slipping [A]: a wall of stable bedrock flanks the mass on the side the bed
  dips towards (``flank_wall``), so the mass is pressed against it and can only slide
  along the sliding direction; the key body sits in front of the sliding body on the same
  bed and blocks it. The flank wall is ``wall_width_m`` wide [A: 40 m] and as high as the
  mass; the mass is glued to the bed and to the wall (the sliding faces of Fig. 23);
* shape of the mass [A]: 780 x 260 x 60 m would hold 12.2e6 m3, not 7e6, so the mass
  tapers from the front (the key body's end: 260 m wide, 60 m thick normal to the bed) to
  the back scarp (``back_width_m`` 150 m wide, ``back_thickness_m`` 30 m thick), linearly
  along the slope: 7.4e6 m3. Lengths are measured along the bed in the sliding direction,
  widths horizontally across it, thicknesses normal to the bed; the flank-wall side of the
  mass is straight, the other side carries the taper;
* key body [A]: the front ``key_length_m`` (100 m, rounded to whole element rows) of the
  mass, over its full width and thickness;
* bedrock [A]: a slab ``bedrock_thickness_m`` (40 m) thick under the mass, the wall and a
  strip ``bed_margin_m`` (60 m) wide beyond the mass on the other flank, all glued into one
  conforming mesh with the mass; below its front edge a cliff ``cliff_height_m`` (150 m)
  high from the lowest point of the bed's front edge to a flat valley floor that reaches
  ``runout_length_m`` (1500 m) beyond the cliff and is ``runout_width_m`` (1200 m) wide,
  centred on the mass; the floor also runs under the slope back to the scarp, so that
  blocks leaving the bed sideways land on it; beyond the cliff, walls
  ``valley_wall_height_m`` (100 m) high close the valley on both sides and at its end;
  the cliff (100 m deep, standing on the floor), the floor and the walls are separate
  bodies (touching, not glued);
  without a runout area (``runout_length_m = 0``) the bed simply ends at the key body
  (the simple model of the CFFA study);
* resolution: elements along the slope, across the mass and through its thickness; the
  wall is one column wide, the slab one layer thick, the bed margin one column; the cliff
  and the floor have square cells of ``floor_cell_m``. An element whose longest edge is
  more than ``max_aspect`` (25) times its shortest is refused as degenerate (it would
  shrink the explicit time step for nothing).
"""

from __future__ import annotations

import argparse
import math
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from solver.case import apply_overrides, from_dict, param
from solver.errors import InputError
from solver.mesh import HexMesh, box, check_hex_mesh, write_mesh
from solver.mesh.build import concatenate

ROOT = Path(__file__).resolve().parents[1]
GROUPS = {"bedrock": 1, "key_body": 2, "sliding_body": 3}
# Corners of a hexahedron mirrored in its first axis, back in VTK order.
MIRROR = np.array([1, 0, 3, 2, 5, 4, 7, 6])
GAP = 0.01
"""Clearance between the separate held bodies [m] (a mesh file may not hold two nodes at
one position)."""


@dataclass
class Resolution:
    """Elements of the mass along the slope, across it and through its thickness."""

    n_along: int = param(unit="-", doc="element rows along the slope (mass)", ge=1)
    n_across: int = param(unit="-", doc="element columns across the mass", ge=1)
    n_thick: int = param(unit="-", doc="element layers through the mass", ge=1)
    floor_cell_m: float = param(unit="m", doc="cell size of the cliff and valley floor", gt=0.0)


@dataclass
class Geometry:
    """The landslide and its surroundings (module docstring: [A] marks assumptions)."""

    resolution: Resolution = param(unit="-", doc="mesh resolution")
    length_m: float = param(780.0, unit="m", doc="mass length along the bed (paper)", gt=0.0)
    width_m: float = param(260.0, unit="m", doc="mass width at the front (paper)", gt=0.0)
    thickness_m: float = param(60.0, unit="m", doc="mass thickness at the front (paper)",
                               gt=0.0)
    back_width_m: float = param(150.0, unit="m", doc="mass width at the back scarp [A]", gt=0.0)
    back_thickness_m: float = param(30.0, unit="m", doc="mass thickness at the scarp [A]",
                                    gt=0.0)
    dip_deg: float = param(21.0, unit="deg", doc="dip of the sliding bed (paper)", ge=0.0,
                           lt=90.0)
    dip_direction_deg: float = param(345.0, unit="deg", doc="dip direction, clockwise from "
                                     "north (paper)", ge=0.0, lt=360.0)
    sliding_azimuth_deg: float = param(0.0, unit="deg", doc="direction the mass slides "
                                       "along, clockwise from north [A]", ge=0.0, lt=360.0)
    key_length_m: float = param(100.0, unit="m", doc="key body length along the bed, 0: "
                                "none [A]", ge=0.0)
    flank_wall: bool = param(True, unit="-", doc="a bedrock wall on the flank the bed dips "
                             "towards [A]")
    wall_width_m: float = param(40.0, unit="m", doc="width of the flank wall [A]", gt=0.0)
    bedrock_thickness_m: float = param(40.0, unit="m", doc="bedrock slab under the bed [A]",
                                       gt=0.0)
    bed_margin_m: float = param(60.0, unit="m", doc="bed beyond the mass on the open flank "
                                "[A]", gt=0.0)
    cliff_height_m: float = param(150.0, unit="m", doc="cliff below the bed's front edge [A]",
                                  gt=0.0)
    runout_length_m: float = param(1500.0, unit="m", doc="valley floor beyond the cliff, 0: "
                                   "no runout area [A]", ge=0.0)
    runout_width_m: float = param(1200.0, unit="m", doc="valley floor width [A]", gt=0.0)
    valley_wall_height_m: float = param(100.0, unit="m", doc="walls along the valley floor "
                                        "beyond the cliff, 0: none [A]", ge=0.0)
    max_aspect: float = param(25.0, unit="-", doc="longest / shortest edge allowed", gt=1.0)

    def validate(self, where: str) -> None:
        for name, value in vars(self).items():
            if isinstance(value, float) and not math.isfinite(value):
                raise InputError(f"{where}: {name}", f"must be finite, got {value}")
        if self.key_length_m >= self.length_m:
            raise InputError(f"{where}: key_length_m", f"{self.key_length_m:g} m leaves no "
                             f"sliding body in a {self.length_m:g} m long mass")
        if self.dip_deg > 0 and abs(_angle_to_dip(self)) >= 90.0:
            raise InputError(f"{where}: sliding_azimuth_deg", "the bed rises along the sliding "
                             f"direction ({self.sliding_azimuth_deg:g} deg is more than 90 "
                             f"deg from the dip direction {self.dip_direction_deg:g} deg)")


PRESETS = {
    "coarse": Resolution(n_along=8, n_across=3, n_thick=1, floor_cell_m=150.0),
    "production": Resolution(n_along=195, n_across=65, n_thick=15, floor_cell_m=25.0),
}


def _angle_to_dip(g: Geometry) -> float:
    """Angle from the sliding direction to the dip direction, counter-clockwise [deg]."""
    return (g.sliding_azimuth_deg - g.dip_direction_deg + 180.0) % 360.0 - 180.0


def dip_components(g: Geometry) -> tuple[float, float]:
    """(DACN, DACW) [deg]: apparent dips along the sliding direction and across it (positive
    when the bed dips to the left of the sliding direction)."""
    a = math.radians(_angle_to_dip(g))
    t = math.tan(math.radians(g.dip_deg))
    return math.degrees(math.atan(t * math.cos(a))), math.degrees(math.atan(t * math.sin(a)))


def geometry_from_components(dacn_deg: float, dacw_deg: float) -> tuple[float, float]:
    """(dip, dip direction) [deg] of a bed with apparent dips DACN towards north and DACW
    towards west (a mass sliding due north)."""
    north, west = math.tan(math.radians(dacn_deg)), math.tan(math.radians(dacw_deg))
    dip = math.degrees(math.atan(math.hypot(north, west)))
    return dip, math.degrees(math.atan2(-west, north)) % 360.0


class _Frame:
    """The local frame of the mass: s along the sliding direction (down-slope, horizontal),
    u across it, towards the flank the bed rises to; bed z = z0 - s tan(DACN) + u tan|DACW|;
    s = 0 at the back scarp, u = 0 on the flank-wall side."""

    def __init__(self, g: Geometry, res: Resolution):
        dacn, dacw = dip_components(g)
        self.g, self.res = g, res
        self.grad_s = math.tan(math.radians(dacn))
        self.grad_u = abs(math.tan(math.radians(dacw)))
        self.mirror = dacw < 0.0
        self.n_z = 1.0 / math.sqrt(1.0 + self.grad_s ** 2 + self.grad_u ** 2)
        self.length = g.length_m * math.cos(math.radians(dacn))      # horizontal
        self.z0 = 0.0

    def bed(self, u, s):
        return self.z0 - s * self.grad_s + u * self.grad_u

    def along(self, s, back: float, front: float):
        return back + (front - back) * np.asarray(s) / self.length


def _mass_and_bed(f: _Frame) -> HexMesh:
    """Mass, bed slab, flank wall and bed margin: one conforming mapped grid (local frame).

    Index space (i, j, k): i across (wall column, mass columns, margin column), j along the
    slope, k up (slab layer, mass layers). The map keeps i, j, k increasing with u, s, z, so
    the cells of :func:`solver.mesh.box` keep a positive Jacobian.
    """
    g, r = f.g, f.res
    n_wall = 1 if g.flank_wall else 0
    ni, nj, nk = n_wall + r.n_across + 1, r.n_along, 1 + r.n_thick
    index = box(ni, nj, nk, size=(ni, nj, nk))
    i, j, k = (np.rint(index.points[:, c]).astype(np.int64) for c in range(3))
    s = f.length * j / nj
    width = f.along(s, g.back_width_m, g.width_m)
    in_mass = (i - n_wall) / r.n_across
    u = np.where(i < n_wall, -g.wall_width_m, width * in_mass)
    u = np.where(i > n_wall + r.n_across, width + g.bed_margin_m, u)
    t_vertical = f.along(s, g.back_thickness_m, g.thickness_m) / f.n_z
    bed = f.bed(u, s)
    z = np.where(k == 0, bed - g.bedrock_thickness_m, bed + t_vertical * (k - 1) / r.n_thick)
    centre = index.points[index.cells].mean(axis=1)
    ci, cj, ck = centre[:, 0], centre[:, 1], centre[:, 2]
    mass = (ck > 1) & (ci > n_wall) & (ci < n_wall + r.n_across)
    keep = (ck < 1) | (ci < n_wall) | mass
    n_key = round(g.key_length_m / g.length_m * nj) if g.key_length_m > 0 else 0
    if g.key_length_m > 0 and n_key == 0:
        n_key = 1
    key = mass & (cj > nj - n_key)
    groups = np.where(key, GROUPS["key_body"],
                      np.where(mass, GROUPS["sliding_body"], GROUPS["bedrock"]))
    cells = index.cells[keep]
    used, compact = np.unique(cells, return_inverse=True)
    points = np.column_stack([u, s, z])[used]
    return HexMesh(points, compact.reshape(cells.shape), groups[keep])


def _mapped_box(nu: int, ns: int, u, s, bottom, top) -> HexMesh:
    """A grid of nu x ns x 1 cells over [u0, u1] x [s0, s1] between the surfaces
    z = bottom(u, s) and z = top(u, s)."""
    index = box(nu, ns, 1, size=(1.0, 1.0, 1.0))
    p = index.points
    uu = u[0] + (u[1] - u[0]) * p[:, 0]
    ss = s[0] + (s[1] - s[0]) * p[:, 1]
    z = np.where(p[:, 2] > 0.5, top(uu, ss), bottom(uu, ss))
    return HexMesh(np.column_stack([uu, ss, z]), index.cells,
                   np.full(len(index.cells), GROUPS["bedrock"]))


def _cells(extent: float, size: float) -> int:
    return max(1, math.ceil(extent / size - 1e-9))


def _runout_area(f: _Frame) -> list[HexMesh]:
    """The cliff under the bed's front edge and the valley floor beyond and below it
    (separate held bodies, local frame); the cliff stands ``GAP`` clear of both."""
    g, r = f.g, f.res
    u_lo = -g.wall_width_m if g.flank_wall else 0.0
    u_hi = g.width_m + g.bed_margin_m
    front = f.length
    floor = min(f.bed(u_lo, front), f.bed(u_hi, front)) - g.cliff_height_m
    base = floor - g.bedrock_thickness_m
    depth = 100.0
    cliff = _mapped_box(_cells(u_hi - u_lo, r.floor_cell_m), 1, (u_lo, u_hi),
                        (front - depth, front), lambda u, s: np.full_like(u, floor + GAP),
                        lambda u, s: f.bed(u, s) - g.bedrock_thickness_m - GAP)
    centre = 0.5 * (u_lo + u_hi)
    half = 0.5 * max(g.runout_width_m, u_hi - u_lo)
    reach = front + g.runout_length_m
    valley = _mapped_box(_cells(2 * half, r.floor_cell_m), _cells(reach, r.floor_cell_m),
                         (centre - half, centre + half), (0.0, reach),
                         lambda u, s: np.full_like(u, base), lambda u, s: np.full_like(u, floor))
    if g.valley_wall_height_m == 0:
        return [cliff, valley]
    top = floor + g.valley_wall_height_m
    thick = g.bedrock_thickness_m

    def wall(u, s):
        return _mapped_box(_cells(u[1] - u[0], r.floor_cell_m), _cells(s[1] - s[0],
                                                                       r.floor_cell_m),
                           u, s, lambda u, s: np.full_like(u, base),
                           lambda u, s: np.full_like(u, top))

    west, east = centre - half - GAP, centre + half + GAP
    return [cliff, valley, wall((west - thick, west), (front, reach)),
            wall((east, east + thick), (front, reach)),
            wall((west - thick, east + thick), (reach + GAP, reach + GAP + thick))]


def _to_world(mesh: HexMesh, f: _Frame) -> HexMesh:
    """Local (u, s, z) -> world (x east, y north, z up): mirror u when the bed dips to the
    right of the sliding direction (the wall stays on the low flank), turn by the azimuth,
    lift so that the valley floor (or the lowest bed point) is at z = 0."""
    u, s, z = mesh.points.T
    cells = mesh.cells
    if f.mirror:
        u, cells = -u, cells[:, MIRROR]
    a = math.radians(f.g.sliding_azimuth_deg)
    x = u * math.cos(a) + s * math.sin(a)
    y = -u * math.sin(a) + s * math.cos(a)
    points = np.column_stack([x, y, z - z.min() - f.g.bedrock_thickness_m])
    return HexMesh(points, cells, mesh.groups, mesh.group_names)


def build(g: Geometry, where: str) -> HexMesh:
    """The checked world mesh of geometry ``g`` (InputError on degenerate elements, with
    ``where`` naming the geometry's source)."""
    f = _Frame(g, g.resolution)
    parts = [_mass_and_bed(f)]
    if g.runout_length_m > 0:
        parts += _runout_area(f)
    names = dict(GROUPS)
    local = concatenate(parts, names)
    mesh = _to_world(local, f)
    _check_aspect(mesh, g, where)
    check_hex_mesh(mesh, f"{where}: resolution")
    return mesh


def _check_aspect(mesh: HexMesh, g: Geometry, where: str) -> None:
    x = mesh.points[mesh.cells]
    edges = np.concatenate([x[:, [1, 2, 3, 0, 5, 6, 7, 4, 4, 5, 6, 7]]
                            - x[:, [0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3]]], axis=1)
    length = np.linalg.norm(edges, axis=2)
    aspect = length.max(axis=1) / np.maximum(length.min(axis=1), 1e-300)
    worst = int(np.argmax(aspect))
    if aspect[worst] > g.max_aspect:
        name = {v: k for k, v in GROUPS.items()}[int(mesh.groups[worst])]
        raise InputError(f"{where}: resolution", f"element {worst} ({name}) has edges from "
                         f"{length[worst].min():.3g} to {length[worst].max():.3g} m (aspect "
                         f"{aspect[worst]:.3g} > max_aspect {g.max_aspect:g}): degenerate; "
                         "change n_along, n_across, n_thick or floor_cell_m")


def load_geometry(preset: str, overrides: list[str], source: str | None,
                  where: str) -> Geometry:
    """The geometry of a resolution preset with ``--set`` overrides, validated; a TOML file
    ``source`` of Geometry fields may replace the defaults. Errors name ``source`` or, without
    one, ``where``."""
    data: dict = {}
    if source:
        where = source
        try:
            data = tomllib.loads(Path(source).read_text())
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise InputError(source, f"cannot read the geometry: {exc}") from None
    res = PRESETS[preset]
    table = data.setdefault("resolution", {})
    for name in ("n_along", "n_across", "n_thick", "floor_cell_m"):
        table.setdefault(name, getattr(res, name))
    apply_overrides(data, overrides)
    return from_dict(Geometry, data, where, "", ROOT)


def volume_summary(mesh: HexMesh) -> dict[str, float]:
    """Volume [m3] and element count per group name."""
    from solver.mesh import element_volumes
    vol = element_volumes(mesh.points, mesh.cells)
    return {name: (float(vol[mesh.groups == gid].sum()), int(np.sum(mesh.groups == gid)))
            for name, gid in GROUPS.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("preset", choices=sorted(PRESETS), help="resolution preset")
    parser.add_argument("--out", help="mesh file (.msh); default meshes/jiweishan_<preset>.msh")
    parser.add_argument("--geometry", help="TOML file of Geometry fields (instead of the "
                        "defaults)")
    parser.add_argument("--set", dest="overrides", action="append", default=[],
                        metavar="FIELD=VALUE", help="override a geometry field, e.g. "
                        "dip_deg=25 or resolution.n_along=12")
    args = parser.parse_args(argv)
    out = Path(args.out or ROOT / "meshes" / f"jiweishan_{args.preset}.msh")
    try:
        g = load_geometry(args.preset, args.overrides, args.geometry, str(out))
        mesh = build(g, args.geometry or str(out))
    except InputError as exc:
        print(f"error: {exc.where}: {exc.message}", file=sys.stderr)
        return 2
    out.parent.mkdir(parents=True, exist_ok=True)
    write_mesh(mesh, out)
    dacn, dacw = dip_components(g)
    parts = ", ".join(f"{name} {v:.3e} m3 ({n} elements)"
                      for name, (v, n) in volume_summary(mesh).items())
    print(f"{out}: {mesh.n_cells} elements, {len(mesh.points)} nodes; DACN {dacn:.2f} deg, "
          f"DACW {dacw:.2f} deg; {parts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
