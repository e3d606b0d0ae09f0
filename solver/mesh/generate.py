"""Structured hexahedral meshes (boxes, layered stacks, tilted slabs) and writing them.

Coordinates: x east, y north, z up [m]. Nodes are numbered x fastest, then y, then z;
elements likewise, so element (i, j, k) is ``i + nx * (j + ny * k)``. Cells are in VTK
order with a positive Jacobian. ``groups`` arguments are callables
``group_of(centroids (n_cells, 3)) -> ids (n_cells,)`` setting the material group of each
element (e.g. a layer by z); without one every element is in group 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

import meshio
import numpy as np

from solver.mesh.hexmesh import HexMesh

GroupOf = Callable[[np.ndarray], np.ndarray]

BYTES_PER_ELEMENT = 256.0
"""Memory a generated box takes per element, at least [bytes]: its 8 node ids (64 B) and the
three corner index arrays :func:`grid` builds them from (3 x 64 B)."""

# Offsets (di, dj, dk) of the 8 VTK-ordered corners of a grid cell.
_CORNERS = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
                     [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]])


def grid(xs: np.ndarray, ys: np.ndarray, zs: np.ndarray, groups: GroupOf | None = None,
         group_names: dict[int, str] | None = None) -> HexMesh:
    """Tensor-product mesh on strictly increasing node coordinates xs, ys, zs [m]."""
    xs, ys, zs = (np.asarray(c, dtype=np.float64) for c in (xs, ys, zs))
    for name, c in (("x", xs), ("y", ys), ("z", zs)):
        if c.ndim != 1 or len(c) < 2 or not (np.diff(c) > 0).all():
            raise ValueError(f"{name} node coordinates must be >= 2 strictly increasing values")
    nx, ny, nz = len(xs) - 1, len(ys) - 1, len(zs) - 1
    z, y, x = np.meshgrid(zs, ys, xs, indexing="ij")
    points = np.column_stack([x.ravel(), y.ravel(), z.ravel()])
    k, j, i = (a.ravel() for a in np.meshgrid(np.arange(nz), np.arange(ny), np.arange(nx),
                                               indexing="ij"))
    ci, cj, ck = (i[:, None] + _CORNERS[:, 0], j[:, None] + _CORNERS[:, 1],
                  k[:, None] + _CORNERS[:, 2])
    cells = (ci + (nx + 1) * (cj + (ny + 1) * ck)).astype(np.int64)
    return _grouped(points, cells, groups, group_names)


def _grouped(points: np.ndarray, cells: np.ndarray, groups: GroupOf | None,
             group_names: dict[int, str] | None) -> HexMesh:
    """HexMesh with group ids from ``groups(centroids)`` (one int per element) or all 0."""
    if groups is None:
        ids = np.zeros(len(cells), dtype=np.int64)
    else:
        ids = np.asarray(groups(points[cells].mean(axis=1)), dtype=np.int64).reshape(-1)
        if ids.shape != (len(cells),):
            raise ValueError(f"group_of returned {ids.shape} ids for {len(cells)} elements")
    return HexMesh(points, cells, ids, dict(group_names or {}))


def box(nx: int, ny: int, nz: int, size: Sequence[float] = (1.0, 1.0, 1.0),
        origin: Sequence[float] = (0.0, 0.0, 0.0), groups: GroupOf | None = None,
        group_names: dict[int, str] | None = None) -> HexMesh:
    """Axis-aligned box of nx x ny x nz equal elements, size (Lx, Ly, Lz) [m] from origin."""
    if min(nx, ny, nz) < 1 or min(size) <= 0:
        raise ValueError(f"box needs n >= 1 and size > 0, got n={(nx, ny, nz)}, size={size}")
    axes = [o + np.linspace(0.0, s, n + 1) for o, s, n in zip(origin, size, (nx, ny, nz))]
    return grid(*axes, groups=groups, group_names=group_names)


def separate_blocks(nx: int, ny: int, nz: int, size: Sequence[float] = (1.0, 1.0, 1.0),
                    origin: Sequence[float] = (0.0, 0.0, 0.0), groups: GroupOf | None = None,
                    group_names: dict[int, str] | None = None, block: int = 1) -> HexMesh:
    """The elements of :func:`box` in blocks of block x block x block elements (fewer at the
    far sides where block does not divide n): the elements of a block share their nodes,
    so the CDEM split glues them, and no node is shared between blocks, so every block
    face is free for contact (the faces of neighbouring blocks coincide). block = 1: a
    fully jointed rock mass, nothing glued. Nodes are numbered as they first appear, going
    through the elements in order and each element's corners in VTK order."""
    if block < 1:
        raise ValueError(f"block must be >= 1, got {block}")
    mesh = box(nx, ny, nz, size=size, origin=origin, groups=groups, group_names=group_names)
    element = np.arange(len(mesh.cells))
    i, j, k = element % nx, (element // nx) % ny, element // (nx * ny)
    bx, by = -(-nx // block), -(-ny // block)
    of_block = i // block + bx * (j // block + by * (k // block))
    key = (of_block[:, None] * len(mesh.points) + mesh.cells).ravel()
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    order = np.argsort(first)
    number = np.empty_like(order)
    number[order] = np.arange(len(order))
    points = mesh.points[mesh.cells.ravel()[first[order]]]
    cells = number[inverse.ravel()].reshape(-1, 8).astype(np.int64)
    return HexMesh(points, cells, mesh.groups, mesh.group_names)


def stack(nx: int, ny: int, layers: Sequence[tuple[str, float, int]],
          size_xy: Sequence[float] = (1.0, 1.0),
          origin: Sequence[float] = (0.0, 0.0, 0.0)) -> HexMesh:
    """Conforming horizontal layers, bottom to top: ``layers`` = [(name, thickness [m], nz)].

    Layer k is group k + 1 named ``name`` (group ids start at 1 so Gmsh physical tags are
    valid); adjacent layers share their nodes, so the CDEM split glues them with springs.
    """
    if not layers:
        raise ValueError("stack needs at least one layer")
    zs, bounds = [np.array([origin[2]], dtype=np.float64)], [float(origin[2])]
    for name, thickness, nz in layers:
        if thickness <= 0 or nz < 1:
            raise ValueError(f"layer '{name}' needs thickness > 0 and nz >= 1")
        zs.append(bounds[-1] + np.linspace(0.0, thickness, nz + 1)[1:])
        bounds.append(bounds[-1] + thickness)
    mids = np.array(bounds[1:-1])

    def layer_of(centroids: np.ndarray) -> np.ndarray:
        return np.searchsorted(mids, centroids[:, 2]) + 1

    xs = origin[0] + np.linspace(0.0, size_xy[0], nx + 1)
    ys = origin[1] + np.linspace(0.0, size_xy[1], ny + 1)
    return grid(xs, ys, np.concatenate(zs), groups=layer_of,
                group_names={k + 1: layer[0] for k, layer in enumerate(layers)})


def slab_rotation(dip_deg: float, dip_direction_deg: float) -> np.ndarray:
    """3x3 rotation taking the slab's local axes to world axes.

    Local x (down-dip), y (along strike), z (slab normal) become: x dipping dip_deg below
    the horizontal towards the azimuth dip_direction_deg (clockwise from north, +y; 90 =
    east, +x), y horizontal, z the upward normal of the tilted base. It is R_z(90 - azimuth)
    R_y(dip): a rotation about the horizontal strike axis, then about the vertical.
    """
    d, a = math.radians(dip_deg), math.radians(90.0 - dip_direction_deg)
    tilt = np.array([[math.cos(d), 0.0, math.sin(d)], [0.0, 1.0, 0.0],
                     [-math.sin(d), 0.0, math.cos(d)]])
    turn = np.array([[math.cos(a), -math.sin(a), 0.0], [math.sin(a), math.cos(a), 0.0],
                     [0.0, 0.0, 1.0]])
    return turn @ tilt


def tilted_slab(nx: int, ny: int, nz: int, size: Sequence[float], dip_deg: float,
                dip_direction_deg: float = 90.0, origin: Sequence[float] = (0.0, 0.0, 0.0),
                groups: GroupOf | None = None,
                group_names: dict[int, str] | None = None) -> HexMesh:
    """A box rigidly rotated (not sheared) so its base is a plane dipping dip_deg [deg].

    size = (down-dip length, strike width, thickness normal to the slab) [m]; the box corner
    at local (0, 0, 0), the up-dip end of the base, is placed at origin and the rest turned
    by :func:`slab_rotation`. Elements stay undistorted rectangular boxes. ``groups`` sees
    the local (unrotated) centroids, so "layer by z" means layers parallel to the base.
    """
    local = box(nx, ny, nz, size=size, groups=groups, group_names=group_names)
    points = local.points @ slab_rotation(dip_deg, dip_direction_deg).T + np.asarray(origin)
    return HexMesh(points, local.cells, local.groups, local.group_names)


def write_mesh(mesh: HexMesh, path: str | Path, msh_version: str = "2.2") -> None:
    """Write ``mesh`` with meshio, chosen by suffix, keeping its groups (ascii files).

    .msh: Gmsh ``msh_version`` "2.2" or "4.1", groups as gmsh:physical (= geometrical) tags,
    names as 3D $PhysicalNames. Gmsh 4.1 stores elements per volume entity, so the cells are
    written sorted by group (stable); the order survives a round trip when each group is
    contiguous. .vtu: cell array ``group`` (meshio's VTU writer keeps no names).
    .inp: Abaqus, one *ELSET per non-zero group, named by group_names or ``group_<id>``.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".msh":
        if msh_version == "2.2":
            out = meshio.Mesh(mesh.points, [("hexahedron", mesh.cells)],
                              cell_data={"gmsh:physical": [mesh.groups],
                                         "gmsh:geometrical": [mesh.groups]},
                              field_data=_physical_names(mesh))
            meshio.write(path, out, file_format="gmsh22", binary=False)
        elif msh_version == "4.1":
            meshio.write(path, _gmsh41_mesh(mesh), file_format="gmsh", binary=False)
        else:
            raise ValueError(f"msh_version must be '2.2' or '4.1', got {msh_version!r}")
    elif suffix == ".vtu":
        meshio.write(path, meshio.Mesh(mesh.points, [("hexahedron", mesh.cells)],
                                       cell_data={"group": [mesh.groups]}))
    elif suffix == ".inp":
        sets = {mesh.group_names.get(int(g), f"group_{int(g)}"): [np.flatnonzero(mesh.groups == g)]
                for g in np.unique(mesh.groups) if g != 0}
        meshio.write(path, meshio.Mesh(mesh.points, [("hexahedron", mesh.cells)],
                                       cell_sets=sets), file_format="abaqus")
    else:
        raise ValueError(f"cannot write {path.name}: use .msh, .vtu or .inp")


def _physical_names(mesh: HexMesh) -> dict[str, np.ndarray]:
    return {name: np.array([gid, 3]) for gid, name in mesh.group_names.items()}


def _gmsh41_mesh(mesh: HexMesh) -> meshio.Mesh:
    """One cell block (volume entity, tag = group id) per group, nodes classified on them.

    Gmsh 4.1 lists nodes per entity and meshio builds the entity table from the nodes, so
    every volume must own at least one node: groups claim their unclaimed nodes smallest
    group first.
    """
    ids, counts = np.unique(mesh.groups, return_counts=True)
    owner = np.full(len(mesh.points), -1, dtype=np.int64)
    for gid in ids[np.argsort(counts, kind="stable")]:
        nodes = np.unique(mesh.cells[mesh.groups == gid])
        free = nodes[owner[nodes] < 0]
        if not len(free):
            raise ValueError(f"group {gid} owns no node of its own; write Gmsh 2.2 instead")
        owner[free] = gid
    blocks = [("hexahedron", mesh.cells[mesh.groups == gid]) for gid in ids]
    tags = [np.full(len(b[1]), gid, dtype=np.int64) for gid, b in zip(ids, blocks)]
    return meshio.Mesh(mesh.points, blocks,
                       point_data={"gmsh:dim_tags": np.column_stack(
                           [np.full(len(owner), 3), owner])},
                       cell_data={"gmsh:physical": tags, "gmsh:geometrical": tags},
                       field_data=_physical_names(mesh))
