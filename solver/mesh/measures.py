"""What the set-up needs of the whole mesh, computed once on the rank that holds it.

The shared-face topology, the element volumes and centroids and the shared faces' areas,
gathered in :class:`MeshMeasures` and handed to every consumer of the set-up: the partition
and the parts (solver.mesh.distribute), the observers (solver.cdem.analyses) and the
time-step check (solver.cdem.checks). Volumes, centroids and areas are computed from the
corner coordinates of _CHUNK elements or faces at a time (never those of the whole mesh at
once); an element's volume does not depend on the elements computed with it
(solver.mesh.reference_hex.jacobians).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from solver.errors import InputError
from solver.mesh.hexmesh import HexMesh
from solver.mesh.reference_hex import element_volumes
from solver.mesh.topology import FACES, InterfaceTopology, face_areas, shared_faces

_CHUNK = 65536
"""Elements or faces whose corner coordinates are gathered at once."""


@dataclass
class MeshMeasures:
    """topology: the faces two elements share (global face ids in its order); volumes (n,)
    [m3] and centroids (n, 3) [m] of the elements; face_area (n_faces,) [m2] of every shared
    face, on its A side."""

    topology: InterfaceTopology
    volumes: np.ndarray
    centroids: np.ndarray
    face_area: np.ndarray


def measure(mesh: HexMesh, where: str) -> MeshMeasures:
    """The measures of the whole ``mesh``; a face shared by more than two elements, or
    without coincident nodes, is an InputError at ``where``."""
    try:
        topology = shared_faces(mesh.cells)
    except ValueError as exc:
        raise InputError(where, str(exc)) from None
    volumes, centroids = _volumes_and_centroids(mesh)
    return MeshMeasures(topology=topology, volumes=volumes, centroids=centroids,
                        face_area=_shared_face_areas(mesh, topology))


def _volumes_and_centroids(mesh: HexMesh) -> tuple[np.ndarray, np.ndarray]:
    """Volume (n,) and centroid (n, 3) of every element."""
    volumes, centroids = np.empty(mesh.n_cells), np.empty((mesh.n_cells, 3))
    for start in range(0, mesh.n_cells, _CHUNK):
        x = mesh.points[mesh.cells[start:start + _CHUNK]]
        volumes[start:start + _CHUNK] = element_volumes(x)
        centroids[start:start + _CHUNK] = x.mean(axis=1)
    return volumes, centroids


def _shared_face_areas(mesh: HexMesh, topology: InterfaceTopology) -> np.ndarray:
    """Area of every shared face (n_faces,), on its A side."""
    area = np.empty(topology.n_faces)
    for start in range(0, topology.n_faces, _CHUNK):
        chunk = slice(start, start + _CHUNK)
        corners = mesh.cells[topology.elem[chunk, 0][:, None], FACES[topology.face[chunk, 0]]]
        area[chunk] = face_areas(mesh.points[corners])
    return area
