"""Read a hexahedral mesh from any file meshio reads (Gmsh .msh v2/v4, .vtu, Abaqus .inp, ...).

Only 3D cells are kept, and they must all be 8-node hexahedra; lower-dimensional cells (the
quads, lines and vertices Gmsh writes for boundary physical groups) are ignored. Nodes no
hexahedron uses are dropped and the rest renumbered in file order. The result passes
:func:`solver.mesh.checks.check_hex_mesh`; every problem is an InputError naming the file.

meshio reads a file whole, so the memory it takes is estimated before (:func:`memory_to_read`,
checked by solver.mesh.build against this node's memory, solver.resources): at least the
nodes a Gmsh file's header lists, 3 float64 each, and at least a third of the file's size
(a number takes 8 bytes in memory and at most 24 characters in a text file, its own 8 bytes
in a binary one).
"""

from __future__ import annotations

import contextlib
import io
import os

import meshio
import numpy as np

from solver.errors import InputError
from solver.mesh.checks import check_hex_mesh
from solver.mesh.hexmesh import HexMesh
from solver.resources import size_text

GROUP_ARRAYS = ("group", "material", "gmsh:physical")
"""Cell-data arrays read as material group ids, first present wins."""

HEADER_BYTES = 1 << 20
"""How far into a Gmsh file its node count is looked for (``$Nodes`` comes after the format,
the physical names and the entities)."""

BYTES_PER_NODE = 24.0
"""Memory of a node's coordinates once read (3 float64) [bytes]."""

FILE_BYTES_PER_BYTE = 1.0 / 3.0
"""Memory meshio's arrays take per byte of the file, at least: a number of 8 bytes takes at
most 24 characters of text."""


def memory_to_read(path: str) -> tuple[float, str]:
    """A lower bound of the memory meshio takes to read ``path`` [bytes] and what it counts
    (module docstring), before the file is read."""
    size = os.path.getsize(path)
    nodes = nodes_in_header(path)
    if nodes is not None and nodes * BYTES_PER_NODE > size * FILE_BYTES_PER_BYTE:
        return nodes * BYTES_PER_NODE, f"the {nodes:.3g} nodes its header lists"
    return (size * FILE_BYTES_PER_BYTE,
            f"the arrays meshio reads from the {size_text(size)} file")


def nodes_in_header(path: str) -> int | None:
    """The number of nodes the ``$Nodes`` section of a Gmsh file (format 2 or 4, text or
    binary) says it holds, found within its first HEADER_BYTES; None for another file or
    where it is not found there."""
    with open(path, "rb") as file:
        if file.readline(64).strip() != b"$MeshFormat":
            return None
        fields = file.readline(64).split()
        try:
            version, binary, word = fields[0], fields[1] == b"1", int(fields[2])
            while file.tell() < HEADER_BYTES:
                line = file.readline(HEADER_BYTES)
                if not line:
                    return None
                if line.strip() == b"$Nodes":
                    break
            else:
                return None
            if not version.startswith(b"4"):
                return int(file.readline(64).split()[0])
            if binary:
                return int(np.frombuffer(file.read(2 * word), dtype=f"<u{word}")[1])
            return int(file.readline(256).split()[1])
        except (IndexError, ValueError, TypeError):
            return None


def read_hex_mesh(path: str) -> HexMesh:
    """The checked HexMesh in ``path``; InputError(path, ...) if missing, unreadable or bad."""
    where = str(path)
    if not os.path.isfile(path):
        raise InputError(where, "mesh file not found")
    raw = _meshio_read(path, where)
    blocks = _hex_blocks(raw, where)
    cells = np.concatenate([raw.cells[i].data for i in blocks]).astype(np.int64)
    if cells.size and (cells.min() < 0 or cells.max() >= len(raw.points)):
        raise InputError(where, f"elements refer to nodes outside 0..{len(raw.points) - 1}")
    groups, names = _groups(raw, blocks, where)
    node_ids, cells = _renumbered(cells, len(raw.points))
    points = np.asarray(raw.points, dtype=np.float64)[node_ids]
    if points.shape[1] != 3:
        raise InputError(where, f"points have {points.shape[1]} coordinates, need 3")
    mesh = HexMesh(points=points, cells=cells, groups=groups, group_names=names)
    check_hex_mesh(mesh, where, node_ids)
    return mesh


def _renumbered(cells: np.ndarray, n_points: int) -> tuple[np.ndarray, np.ndarray]:
    """The file indices of the nodes the cells use, increasing, and the cells with those
    nodes numbered 0.. in that order: ``np.unique(cells, return_inverse=True)``, without
    its sort."""
    used = np.zeros(n_points, dtype=bool)
    used[cells] = True
    number = np.cumsum(used, dtype=np.int64) - 1
    return np.flatnonzero(used), number[cells]


def _meshio_read(path: str, where: str) -> meshio.Mesh:
    """meshio.read with its console output captured and every failure as one InputError.

    On junk meshio raises anything from ReadError to IndexError, and for a file whose format
    it only guesses from the suffix it prints to stderr and calls sys.exit; the CLI must
    print exactly one error line instead.
    """
    chatter = io.StringIO()
    try:
        with contextlib.redirect_stdout(chatter), contextlib.redirect_stderr(chatter):
            return meshio.read(path)
    except SystemExit:
        detail = chatter.getvalue()
    except Exception as exc:
        detail = str(exc) or type(exc).__name__
    detail = " ".join(detail.split()).removeprefix("Error: ")
    raise InputError(where, f"cannot read the mesh with meshio: {detail}")


def _hex_blocks(raw: meshio.Mesh, where: str) -> list[int]:
    """Indices of the cell blocks holding the 3D cells; all must be 8-node hexahedra."""
    solid = [i for i, block in enumerate(raw.cells) if block.dim == 3]
    for i in solid:
        kind = raw.cells[i].type
        if kind != "hexahedron":
            count = sum(len(b.data) for b in raw.cells if b.type == kind)
            raise InputError(where, f"{count} '{kind}' cell(s): only 8-node hexahedra are "
                                    "supported")
    if not solid:
        found = ", ".join(sorted({b.type for b in raw.cells})) or "none"
        raise InputError(where, f"no hexahedra in the mesh (cell types: {found})")
    return solid


def _groups(raw: meshio.Mesh, blocks: list[int], where: str) -> tuple[np.ndarray, dict]:
    """Group id of every hexahedron and the id -> name map.

    Abaqus cell sets (``*ELSET``) are numbered 1.. in meshio's order (``*ELSET`` blocks, then
    ``*ELEMENT, ELSET=``); a cell in several sets takes the smallest set (the most specific,
    so an all-elements set only fills the gaps; on a tie the earlier set, i.e. an explicit
    ``*ELSET`` such as a Gmsh physical group over the element block's own set), and sets
    left with no cell are not named. Other formats use the first cell-data array of GROUP_ARRAYS,
    named from Gmsh-style field_data ``{name: [id, 3]}``. Cells without a group get 0.
    """
    for key in GROUP_ARRAYS:
        if key in raw.cell_data:
            ids = np.concatenate([np.asarray(raw.cell_data[key][i]).ravel() for i in blocks])
            return ids.astype(np.int64), _names_from_field_data(raw.field_data)
    offsets = np.cumsum([0] + [len(raw.cells[i].data) for i in blocks])
    sets = []
    for name, per_block in raw.cell_sets.items():
        members = np.concatenate([np.asarray(per_block[i], dtype=np.int64).ravel() + off
                                  for i, off in zip(blocks, offsets)
                                  if per_block[i] is not None] or [np.zeros(0, np.int64)])
        if len(members):
            sets.append((name, np.unique(members)))
    groups = np.zeros(offsets[-1], dtype=np.int64)
    ids = {name: k + 1 for k, (name, _) in enumerate(sets)}
    # Largest first, so smaller sets overwrite; on a tie the earlier set is applied last.
    ranked = sorted(range(len(sets)), key=lambda k: (-len(sets[k][1]), -k))
    for name, members in (sets[k] for k in ranked):
        if members.max() >= len(groups):
            raise InputError(where, f"cell set '{name}' refers to element {members.max()}, "
                                    f"beyond the {len(groups)} hexahedra")
        groups[members] = ids[name]
    used = set(np.unique(groups).tolist())
    return groups, {k: name for name, k in ids.items() if k in used}


def _names_from_field_data(field_data: dict) -> dict[int, str]:
    """Names of 3D physical groups: Gmsh field_data maps name -> [tag, dim]."""
    names = {}
    for name, value in field_data.items():
        value = np.asarray(value).ravel()
        if len(value) == 2 and value[1] == 3:
            names[int(value[0])] = name
    return names
