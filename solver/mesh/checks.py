"""Checks that a hexahedral mesh is usable by the CDEM stages, with errors naming the culprit.

Each check raises :class:`solver.errors.InputError` with ``where`` = the mesh file (or any
label the caller passes) and a message naming the first offending node or element index
(0-based) and how many there are in total. :func:`check_hex_mesh` runs them all in order:
finite coordinates, element Jacobians, duplicate nodes.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

from solver.case import COORDINATE_LIMIT
from solver.errors import InputError
from solver.mesh.hexmesh import HexMesh
from solver.mesh.reference_hex import CORNERS, gauss_points, jacobians, shape_derivatives

DUPLICATE_TOLERANCE = 1e-9
"""Two nodes closer than this times the bounding-box diagonal are duplicates."""

DEGENERATE_TOLERANCE = 1e-12
"""An element is degenerate where 8 |det J| < this times h^3 (h: its longest edge)."""

# Evaluation points: the 8 corners, then the 2x2x2 Gauss points.
_SAMPLES = np.vstack([CORNERS, gauss_points()])
_DN = shape_derivatives(_SAMPLES)                           # (16, 8, 3)
_EDGES = np.array([[0, 1], [1, 2], [2, 3], [3, 0], [4, 5], [5, 6], [6, 7], [7, 4],
                   [0, 4], [1, 5], [2, 6], [3, 7]])
_CHUNK = 65536


def element_determinants(points: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """det J of the trilinear map of each element, (n_cells, 16).

    Columns 0-7 are the corners (in node order), 8-15 the 2x2x2 Gauss points; J is taken
    with respect to the [-1, 1]^3 reference cube (solver.mesh.reference_hex), so a
    parallelepiped has det J = V / 8.
    """
    out = np.empty((len(cells), len(_SAMPLES)))
    for start in range(0, len(cells), _CHUNK):
        out[start:start + _CHUNK] = np.linalg.det(jacobians(points[cells[start:start + _CHUNK]],
                                                            _DN))
    return out


def _node_label(node: int, node_ids: np.ndarray | None) -> int:
    return int(node if node_ids is None else node_ids[node])


def check_finite(mesh: HexMesh, where: str, node_ids: np.ndarray | None = None) -> None:
    """Every coordinate is finite: NaN/inf would poison every force and time step silently;
    and within +-COORDINATE_LIMIT (solver.case), beyond which the volumes and stiffnesses
    overflow.

    node_ids: index of each mesh node in the file (when unused nodes were dropped).
    """
    bad = np.flatnonzero(~np.isfinite(mesh.points).all(axis=1))
    if len(bad):
        node = bad[0]
        raise InputError(where, f"node {_node_label(node, node_ids)} has a non-finite "
                                f"coordinate {mesh.points[node].tolist()} "
                                f"({len(bad)} such node(s))")
    far = np.flatnonzero((np.abs(mesh.points) > COORDINATE_LIMIT).any(axis=1))
    if len(far):
        node = far[0]
        raise InputError(where, f"node {_node_label(node, node_ids)} has a coordinate beyond "
                                f"{COORDINATE_LIMIT:g} m: {mesh.points[node].tolist()} "
                                f"({len(far)} such node(s))")


def check_duplicate_nodes(mesh: HexMesh, where: str,
                          node_ids: np.ndarray | None = None) -> None:
    """No two distinct nodes at the same position (within 1e-9 of the bounding-box diagonal).

    Elements meant to share a face must share node ids; coincident but distinct nodes would
    silently leave the mesh disconnected there (no interface springs, a free crack).
    """
    size = float(np.linalg.norm(np.ptp(mesh.points, axis=0))) if len(mesh.points) else 0.0
    pairs = cKDTree(mesh.points).query_pairs(DUPLICATE_TOLERANCE * size, output_type="ndarray")
    if len(pairs):
        pairs = np.sort(pairs, axis=1)
        a, b = pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))[0]]
        raise InputError(where, f"duplicate nodes {_node_label(a, node_ids)} and "
                                f"{_node_label(b, node_ids)} at {mesh.points[a].tolist()} "
                                f"({len(pairs)} duplicate pair(s)); distinct nodes at one "
                                "position disconnect the elements using them")


def check_elements(mesh: HexMesh, where: str) -> None:
    """Every element has det J > 0 at its 8 corners and 8 Gauss points, clear of zero.

    inverted: det J < -tol somewhere (folded, or nodes in the wrong order); when every element
    is negative everywhere the file most likely uses the mirror-image node order, which the
    message says, but the mesh is not reordered silently. zero-volume/degenerate:
    |det J| <= tol somewhere (flat element, collapsed edge or face). tol = 1e-12 h^3 / 8, h
    the element's longest edge, so the test is independent of units. The elements are
    tested a chunk at a time: nothing but two flags per element is held for the whole mesh.
    """
    n = mesh.n_cells
    inverted, degenerate = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    all_inverted = True
    for start in range(0, n, _CHUNK):
        det, tol = _determinants_and_tolerance(mesh.points, mesh.cells[start:start + _CHUNK])
        below = det < -tol
        inverted[start:start + _CHUNK] = below.any(axis=1)
        degenerate[start:start + _CHUNK] = (np.abs(det) <= tol).any(axis=1)
        all_inverted = all_inverted and bool(below.all())
    if inverted.any():
        if all_inverted:
            raise InputError(where, f"all {n} elements are inverted (node order?): "
                                    "det J < 0 everywhere, as for the mirror-image node order; "
                                    "expected VTK order, bottom face 0-1-2-3 counter-clockwise "
                                    "seen from +z, top face 4-5-6-7 above it")
        e = int(np.flatnonzero(inverted)[0])
        det, _ = _determinants_and_tolerance(mesh.points, mesh.cells[e:e + 1])
        raise InputError(where, f"element {e} is inverted: det J < 0 at "
                                f"{_sample_name(int(np.argmin(det[0])))} "
                                f"({int(inverted.sum())} inverted element(s))")
    if degenerate.any():
        e = int(np.flatnonzero(degenerate)[0])
        det, _ = _determinants_and_tolerance(mesh.points, mesh.cells[e:e + 1])
        raise InputError(where, f"element {e} has zero volume or is degenerate: det J ~ 0 at "
                                f"{_sample_name(int(np.argmin(np.abs(det[0]))))} "
                                f"({int(degenerate.sum())} degenerate element(s))")


def _determinants_and_tolerance(points: np.ndarray,
                                cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """det J (n, 16) of the elements ``cells`` (:func:`element_determinants`) and the
    tolerance (n, 1) below which |det J| counts as zero (:func:`check_elements`)."""
    edges = points[cells[:, _EDGES[:, 1]]] - points[cells[:, _EDGES[:, 0]]]
    h = np.linalg.norm(edges, axis=2).max(axis=1)
    return element_determinants(points, cells), (DEGENERATE_TOLERANCE / 8.0) * h[:, None] ** 3


def _sample_name(k: int) -> str:
    return f"corner {k}" if k < 8 else f"Gauss point {k - 8}"


def check_hex_mesh(mesh: HexMesh, where: str, node_ids: np.ndarray | None = None) -> None:
    """All checks: coordinates first (the others need them finite), then element shapes
    (so a flattened element is reported as such, not as its coincident nodes), then nodes."""
    check_finite(mesh, where, node_ids)
    check_elements(mesh, where)
    check_duplicate_nodes(mesh, where, node_ids)
