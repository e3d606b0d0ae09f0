"""Meshes: reading (Gmsh 2.2/4.1, VTU, Abaqus), structured generators, and the input checks."""

import math
import subprocess
import sys
from pathlib import Path

import meshio
import numpy as np
import pytest

from solver.errors import InputError
from solver.mesh import (box, check_hex_mesh, element_volumes, read_hex_mesh, stack,
                         tilted_slab, write_mesh)
from solver.mesh.generate import separate_blocks
from solver.mesh.partition import partition_elements
from solver.mesh.topology import shared_faces

CUBE = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
                 [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]], dtype=float)
HEX = np.array([[0, 1, 2, 3, 4, 5, 6, 7]])
TWO_CUBES = np.vstack([CUBE, CUBE[4:] + [0.0, 0.0, 1.0]])
TWO_HEX = np.array([[0, 1, 2, 3, 4, 5, 6, 7], [4, 5, 6, 7, 8, 9, 10, 11]])

# Gmsh 2.2 as Gmsh writes it: a geometry point node used by no hexahedron (node 1), a
# boundary quad and a vertex in physical groups, and physical tag 1 used in 2D and in 3D.
GMSH22 = """$MeshFormat
2.2 0 8
$EndMeshFormat
$PhysicalNames
3
2 1 "base"
3 1 "rock"
3 2 "soil"
$EndPhysicalNames
$Nodes
13
1 5 5 5
{nodes}$EndNodes
$Elements
4
1 15 2 1 1 2
2 3 2 1 1 2 3 4 5
3 5 2 1 1 2 3 4 5 6 7 8 9
4 5 2 2 2 6 7 8 9 10 11 12 13
$EndElements
"""

# Gmsh 4.1 as Gmsh writes it: entities with physical tags, nodes and elements per entity.
GMSH41 = """$MeshFormat
4.1 0 8
$EndMeshFormat
$PhysicalNames
2
2 5 "base"
3 7 "rock"
$EndPhysicalNames
$Entities
0 0 1 1
1 0 0 0 1 1 0 1 5 0
1 0 0 0 1 1 1 1 7 0
$EndEntities
$Nodes
2 8 1 8
2 1 0 4
1
2
3
4
0 0 0
1 0 0
1 1 0
0 1 0
3 1 0 4
5
6
7
8
0 0 1
1 0 1
1 1 1
0 1 1
$EndNodes
$Elements
2 2 1 2
2 1 3 1
1 1 2 3 4
3 1 5 1
2 1 2 3 4 5 6 7 8
$EndElements
"""

# Abaqus: an all-elements set, two specific sets (one by GENERATE), a shell skin set.
ABAQUS = """*HEADING
two stacked cubes
*NODE
{nodes}*ELEMENT, TYPE=C3D8, ELSET=ALL
1, 1, 2, 3, 4, 5, 6, 7, 8
2, 5, 6, 7, 8, 9, 10, 11, 12
*ELEMENT, TYPE=S4R, ELSET=SKIN
3, 1, 2, 3, 4
*ELSET, ELSET=TOP
2
*ELSET, ELSET=BOTTOM, GENERATE
1, 1, 1
"""


def _node_lines(points, sep=" ", first=1):
    return "".join(f"{k}{sep}" + sep.join(f"{c:g}" for c in p) + "\n"
                   for k, p in enumerate(points, start=first))


def _write(tmp_path, points, cells, cell_type="hexahedron", name="m.vtu"):
    path = tmp_path / name
    meshio.write(path, meshio.Mesh(points, [(cell_type, cells)]))
    return str(path)


def _error(path) -> str:
    with pytest.raises(InputError) as info:
        read_hex_mesh(path)
    assert info.value.where == str(path)
    return info.value.message


def _layered_box():
    return box(3, 2, 4, size=(3.0, 2.0, 2.0), origin=(10.0, -1.0, 5.0),
               groups=lambda c: 1 + (c[:, 2] > 6.0), group_names={1: "soil", 2: "rock"})


# --- generators -----------------------------------------------------------------------------

def test_box_structure_and_volume():
    mesh = box(3, 2, 4, size=(3.0, 2.0, 2.0), origin=(10.0, -1.0, 5.0))
    assert mesh.points.shape == (4 * 3 * 5, 3) and mesh.cells.shape == (24, 8)
    assert np.array_equal(mesh.groups, np.zeros(24)) and mesh.group_names == {}
    assert np.allclose(mesh.points.min(axis=0), [10, -1, 5])
    assert np.allclose(mesh.points.max(axis=0), [13, 1, 7])
    i, j, k = 2, 1, 3                                      # element i + nx * (j + ny * k)
    assert np.allclose(mesh.points[mesh.cells[i + 3 * (j + 2 * k), 0]],
                       [10.0 + i, -1.0 + j, 5.0 + 0.5 * k])
    vol = element_volumes(mesh.points[mesh.cells])
    assert abs(vol.sum() - 12.0) <= 1e-12 * 12.0
    assert np.allclose(vol, 0.5, rtol=1e-14)
    check_hex_mesh(mesh, "box")


@pytest.mark.parametrize("block, n_points, n_glued", [
    (1, 8 * 120, 0),                                   # every element on its own
    (2, (3 + 3 + 2) * (3 + 3) * (3 + 3 + 3), 12 * 12 + 6 * 4),
    (6, 6 * 5 * 7, 4 * 4 * 6 + 5 * 3 * 6 + 5 * 4 * 5)])  # one block: the box itself
def test_separate_blocks_glue_within_a_block_only(block, n_points, n_glued):
    """5 x 4 x 6 elements in blocks of block^3 (the blocks at the far x side one element
    thin for block 2): the nodes and glued faces of the separate blocks, the geometry of
    the box. For block 2: 12 full 2x2x2 blocks (12 inner faces each) and 6 of 1x2x2 (4)."""
    mesh = separate_blocks(5, 4, 6, size=(5.0, 4.0, 6.0), block=block)
    whole = box(5, 4, 6, size=(5.0, 4.0, 6.0))
    assert np.array_equal(mesh.points[mesh.cells], whole.points[whole.cells])
    assert len(mesh.points) == n_points and len(np.unique(mesh.cells)) == n_points
    faces = shared_faces(mesh.cells)
    assert len(faces.elem) == n_glued
    i = np.arange(120)
    of_block = np.stack([i % 5, (i // 5) % 4, i // 20], axis=1) // block
    assert np.array_equal(of_block[faces.elem[:, 0]], of_block[faces.elem[:, 1]])


def test_separate_blocks_needs_a_positive_block():
    with pytest.raises(ValueError, match="block must be >= 1"):
        separate_blocks(2, 2, 2, block=0)


def test_stack_layers_share_nodes_and_are_named():
    mesh = stack(2, 2, [("soil", 1.0, 2), ("rock", 3.0, 3)], size_xy=(2.0, 2.0))
    assert mesh.group_names == {1: "soil", 2: "rock"}
    assert np.array_equal(np.bincount(mesh.groups), [0, 8, 12])
    assert len(mesh.points) == 9 * 6                 # one shared node layer at z = 1
    assert np.isclose(mesh.points[:, 2].max(), 4.0)
    assert abs(element_volumes(mesh.points[mesh.cells]).sum() - 16.0) <= 1e-12 * 16.0
    check_hex_mesh(mesh, "stack")


@pytest.mark.parametrize("dip, azimuth", [(21.0, 345.0), (30.0, 90.0), (0.0, 0.0)])
def test_tilted_slab_is_a_rotated_box(dip, azimuth):
    size = (4.0, 2.0, 1.0)
    slab = tilted_slab(4, 2, 2, size, dip, azimuth, origin=(1.0, 2.0, 3.0))
    flat = box(4, 2, 2, size=size)
    assert np.array_equal(slab.cells, flat.cells)
    assert np.allclose(slab.points[0], [1.0, 2.0, 3.0])
    vol = element_volumes(slab.points[slab.cells])
    assert abs(vol.sum() - 8.0) <= 1e-12 * 8.0
    # Distances are kept (rigid rotation, not shear).
    assert np.allclose(np.linalg.norm(slab.points - slab.points[0], axis=1),
                       np.linalg.norm(flat.points, axis=1))
    # Down-dip edge (local +x) dips `dip` towards the azimuth, strike edge stays horizontal.
    down = slab.points[4] - slab.points[0]
    strike = slab.points[5 * 2] - slab.points[0]
    assert math.isclose(math.degrees(math.asin(-down[2] / np.linalg.norm(down))), dip,
                        abs_tol=1e-12)
    if dip:
        assert math.isclose(math.degrees(math.atan2(down[0], down[1])) % 360.0, azimuth,
                            abs_tol=1e-9)
    assert abs(strike[2]) < 1e-12
    check_hex_mesh(slab, "slab")


def test_group_of_must_return_one_id_per_element():
    with pytest.raises(ValueError, match="ids for 8 elements"):
        box(2, 2, 2, groups=lambda c: np.zeros(3))


# --- round trips -----------------------------------------------------------------------------

@pytest.mark.parametrize("name, version", [("m.msh", "2.2"), ("m.msh", "4.1"),
                                           ("m.vtu", "2.2"), ("m.inp", "2.2")])
def test_round_trip(tmp_path, name, version):
    mesh = _layered_box()
    path = tmp_path / name
    write_mesh(mesh, path, msh_version=version)
    back = read_hex_mesh(str(path))
    assert np.array_equal(back.points, mesh.points)
    assert np.array_equal(back.cells, mesh.cells)
    assert np.array_equal(back.groups, mesh.groups)
    assert back.group_names == ({} if name.endswith(".vtu") else mesh.group_names)


def test_gmsh22_as_gmsh_writes_it(tmp_path):
    path = tmp_path / "g22.msh"
    path.write_text(GMSH22.format(nodes=_node_lines(TWO_CUBES, first=2)))
    mesh = read_hex_mesh(str(path))
    assert np.array_equal(mesh.points, TWO_CUBES)          # geometry point dropped
    assert np.array_equal(mesh.cells, TWO_HEX)
    assert np.array_equal(mesh.groups, [1, 2])
    assert mesh.group_names == {1: "rock", 2: "soil"}      # the 2D "base" is not a group


def test_gmsh41_as_gmsh_writes_it(tmp_path):
    path = tmp_path / "g41.msh"
    path.write_text(GMSH41)
    mesh = read_hex_mesh(str(path))
    assert np.array_equal(mesh.points, CUBE) and np.array_equal(mesh.cells, HEX)
    assert np.array_equal(mesh.groups, [7]) and mesh.group_names == {7: "rock"}


def test_abaqus_elsets_give_groups(tmp_path):
    path = tmp_path / "m.inp"
    path.write_text(ABAQUS.format(nodes=_node_lines(TWO_CUBES, sep=", ")))
    mesh = read_hex_mesh(str(path))
    assert np.array_equal(mesh.cells, TWO_HEX)
    names = [mesh.group_names[g] for g in mesh.groups]
    assert names == ["BOTTOM", "TOP"]                      # specific sets win over ALL


def test_abaqus_as_gmsh_writes_it(tmp_path):
    """Gmsh names each element block after its entity and adds an *ELSET per physical group
    with the same members: the physical group's name wins the tie."""
    text = ("*NODE\n" + _node_lines(TWO_CUBES, sep=", ")
            + "*ELEMENT, type=C3D8, ELSET=Volume1\n1, 1, 2, 3, 4, 5, 6, 7, 8\n"
            + "*ELEMENT, type=C3D8, ELSET=Volume2\n2, 5, 6, 7, 8, 9, 10, 11, 12\n"
            + "*ELSET,ELSET=lower\n1, \n*ELSET,ELSET=upper\n2, \n")
    path = tmp_path / "gmsh.inp"
    path.write_text(text)
    mesh = read_hex_mesh(str(path))
    assert [mesh.group_names[g] for g in mesh.groups] == ["lower", "upper"]
    assert set(mesh.group_names.values()) == {"lower", "upper"}


def test_vtu_material_array(tmp_path):
    path = tmp_path / "m.vtu"
    meshio.write(path, meshio.Mesh(TWO_CUBES, [("hexahedron", TWO_HEX)],
                                   cell_data={"material": [np.array([3, 4])]}))
    assert np.array_equal(read_hex_mesh(str(path)).groups, [3, 4])


def test_unused_nodes_dropped_and_renumbered(tmp_path):
    pts = np.vstack([[9.0, 9.0, 9.0], CUBE])
    mesh = read_hex_mesh(_write(tmp_path, pts, HEX + 1))
    assert np.array_equal(mesh.points, CUBE) and np.array_equal(mesh.cells, HEX)
    assert np.array_equal(mesh.groups, [0])


# --- bad input ------------------------------------------------------------------------------

def test_missing_file(tmp_path):
    assert "not found" in _error(tmp_path / "nope.msh")


@pytest.mark.parametrize("name, text", [("broken.msh", "this is not a mesh\n"),
                                        ("broken.vtu", "<VTKFile"),
                                        ("broken.xyz", "1 2 3\n")])
def test_unreadable_file(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    message = _error(path)
    assert "cannot read" in message and "\n" not in message


def test_tetra_cells(tmp_path):
    message = _error(_write(tmp_path, CUBE, np.array([[0, 1, 3, 4], [1, 2, 3, 6]]), "tetra"))
    assert "2 'tetra' cell(s)" in message and "hexahedra" in message


def test_mixed_hex_and_wedge(tmp_path):
    path = tmp_path / "mixed.vtu"
    meshio.write(path, meshio.Mesh(TWO_CUBES, [("hexahedron", HEX),
                                               ("wedge", np.array([[4, 5, 6, 8, 9, 10]]))]))
    assert "1 'wedge' cell(s)" in _error(path)


def test_only_surface_cells(tmp_path):
    assert "no hexahedra" in _error(_write(tmp_path, CUBE, np.array([[0, 1, 2, 3]]), "quad"))


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_non_finite_coordinate(tmp_path, value):
    pts = CUBE.copy()
    pts[5, 1] = value
    assert "node 5 has a non-finite coordinate" in _error(_write(tmp_path, pts, HEX))


def test_duplicate_node(tmp_path):
    top = CUBE[4:] + [0.0, 0.0, 1.0]
    pts = np.vstack([CUBE, top, CUBE[4:5] + 1e-12])        # node 12 duplicates node 4
    cells = np.array([[0, 1, 2, 3, 4, 5, 6, 7], [12, 5, 6, 7, 8, 9, 10, 11]])
    assert "duplicate nodes 4 and 12" in _error(_write(tmp_path, pts, cells))


def test_close_but_distinct_nodes_are_fine(tmp_path):
    pts = TWO_CUBES.copy()
    pts[8, 0] += 1e-6
    assert read_hex_mesh(_write(tmp_path, pts, TWO_HEX)).n_cells == 2


def test_one_inverted_element(tmp_path):
    cells = TWO_HEX.copy()
    cells[1] = cells[1, [4, 5, 6, 7, 0, 1, 2, 3]]
    message = _error(_write(tmp_path, TWO_CUBES, cells))
    assert "element 1 is inverted" in message and "node order?" not in message


def test_folded_element(tmp_path):
    pts = CUBE.copy()
    pts[6] = [0.2, 0.2, -0.5]                              # top corner pushed through the base
    assert "element 0 is inverted" in _error(_write(tmp_path, pts, HEX))


def test_all_inverted_says_node_order(tmp_path):
    mirrored = TWO_HEX[:, [4, 5, 6, 7, 0, 1, 2, 3]]
    assert "all 2 elements are inverted (node order?)" in _error(
        _write(tmp_path, TWO_CUBES, mirrored))


def test_zero_volume_element(tmp_path):
    flat = CUBE.copy()
    flat[4:, 2] = 0.0
    assert "element 0 has zero volume" in _error(_write(tmp_path, flat, HEX))


def test_collapsed_edge_is_degenerate(tmp_path):
    cells = HEX.copy()
    cells[0, 5] = 4                                        # edge 4-5 collapsed to a point
    assert "element 0 has zero volume or is degenerate" in _error(
        _write(tmp_path, CUBE, cells))


# --- example meshes -------------------------------------------------------------------------

#: The meshes shipped in meshes/; not the production Jiweishan mesh, which a user builds there
#: on demand (README: 210,794 elements, 32 MB) and the repository ignores.
EXAMPLES = sorted(p for p in (Path(__file__).resolve().parents[1] / "meshes").iterdir()
                  if p.suffix in (".msh", ".vtu", ".inp") and p.name != "jiweishan_production.msh")


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_meshes_read_and_are_small(path):
    mesh = read_hex_mesh(str(path))
    assert mesh.n_cells > 0 and path.stat().st_size < 200e3


def test_make_meshes_reproduces_the_examples(tmp_path):
    """Every example mesh but Jiweishan's (test_jiweishan checks its builder's)."""
    proc = subprocess.run([sys.executable, "scripts/make_meshes.py", "--out", str(tmp_path)],
                          capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1])
    assert proc.returncode == 0, proc.stderr
    for path in (p for p in EXAMPLES if not p.name.startswith("jiweishan")):
        a, b = read_hex_mesh(str(path)), read_hex_mesh(str(tmp_path / path.name))
        assert np.array_equal(a.points, b.points) and np.array_equal(a.cells, b.cells)
        assert np.array_equal(a.groups, b.groups) and a.group_names == b.group_names


def _row_and_faces(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Centroids and face adjacency of a row of n elements along x (an n x 2 x 1 box, so
    that METIS has a graph with some width)."""
    mesh = box(n, 2, 1, size=(float(n), 2.0, 1.0))
    centroids = mesh.points[mesh.cells].mean(axis=1)
    return centroids, shared_faces(mesh.cells).elem


@pytest.mark.parametrize("method", ["rcb", "metis"])
@pytest.mark.parametrize("n_parts", [2, 3])
def test_partition_shares_the_work_not_the_elements(method, n_parts):
    centroids, adjacency = _row_and_faces(24)
    work = np.where(centroids[:, 0] < 6.0, 25, 1)        # a fragmented quarter: 25x the work
    parts = partition_elements(n_parts, centroids, adjacency, method, work)
    per_part = np.bincount(parts, weights=work, minlength=n_parts)
    assert per_part.max() <= work.sum() / n_parts + work.max()
    assert np.bincount(parts).max() > len(work) / n_parts + 3     # unequal element counts
    plain = np.bincount(partition_elements(n_parts, centroids, adjacency, method),
                        weights=work, minlength=n_parts)
    assert plain.max() > 1.5 * per_part.max()


@pytest.mark.parametrize("n", [6, 7, 9])
def test_rcb_with_unit_work_cuts_at_the_rounded_half(n):
    centroids = np.column_stack([np.arange(n, dtype=float), np.zeros(n), np.zeros(n)])
    parts = partition_elements(2, centroids, np.zeros((0, 2), dtype=np.int64), "rcb",
                               np.ones(n, dtype=np.int64))
    assert np.count_nonzero(parts == 0) == round(n / 2)
