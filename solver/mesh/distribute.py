"""Partition a hexahedral mesh on rank 0 and hand every rank only its share.

Rank 0 holds the whole mesh (it read or generated it), computes the shared-face topology,
the element volumes and the partition, and sends each rank its :class:`MeshPart`: its
elements, and the shared faces that touch them with what the model build needs of the
element on the other side (its owner, group and volume). No other rank ever holds an array
sized by the whole mesh.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from solver.errors import InputError
from solver.mesh.reference_hex import element_volumes
from solver.mesh.hexmesh import HexMesh
from solver.mesh.partition import partition_elements
from solver.mesh.topology import FACES, face_areas, shared_faces
from solver.parallel import root_only

_CHUNK = 65536
"""Elements or faces whose corner coordinates are gathered at once."""


@dataclass
class SharedFaces:
    """Shared faces with an element on this rank, in global face order.

    gid (m,) global face ids; elem (m, 2) global ids of elements A < B; local_face (m, 2)
    their local faces; local_nodes (m, 2, 4) the local nodes of the 4 coincident node pairs
    in A's face order; owner (m, 2) ranks of A and B; area (m,) face area [m2]; volume,
    group (m, 2) volume [m3] and group id of A and B.
    """

    gid: np.ndarray
    elem: np.ndarray
    local_face: np.ndarray
    local_nodes: np.ndarray
    owner: np.ndarray
    area: np.ndarray
    volume: np.ndarray
    group: np.ndarray

    def __len__(self) -> int:
        return len(self.gid)


@dataclass
class MeshPart:
    """One rank's elements: elem_gid (n,) increasing global ids, coords (n, 8, 3) corner
    coordinates [m] in VTK order, groups (n,) group ids; the shared faces touching them;
    the mesh-wide group ids and names and the global element and face counts."""

    elem_gid: np.ndarray
    coords: np.ndarray
    groups: np.ndarray
    faces: SharedFaces
    group_ids: np.ndarray
    group_names: dict[int, str] = field(default_factory=dict)
    n_cells: int = 0
    n_faces: int = 0

    @property
    def n_el(self) -> int:
        return len(self.elem_gid)

    def nbytes(self) -> int:
        """Bytes of the arrays this rank holds."""
        arrays = [self.elem_gid, self.coords, self.groups, *vars(self.faces).values()]
        return int(sum(a.nbytes for a in arrays))


def _part_for(rank: int, mesh: HexMesh, parts: np.ndarray, owner: np.ndarray, topo,
              face_area: np.ndarray, volumes: np.ndarray, group_ids: np.ndarray) -> MeshPart:
    mine = np.nonzero(parts == rank)[0]
    touching = np.nonzero((owner == rank).any(axis=1))[0]
    elem = topo.elem[touching]
    faces = SharedFaces(gid=touching, elem=elem, local_face=topo.face[touching],
                        local_nodes=topo.local_nodes[touching], owner=owner[touching],
                        area=face_area[touching], volume=volumes[elem],
                        group=mesh.groups[elem])
    return MeshPart(elem_gid=mine, coords=mesh.points[mesh.cells[mine]],
                    groups=mesh.groups[mine], faces=faces, group_ids=group_ids,
                    group_names=dict(mesh.group_names), n_cells=mesh.n_cells,
                    n_faces=topo.n_faces)


def _plan(n_parts: int, mesh: HexMesh, method: str, where: str,
          work: np.ndarray | None = None):
    try:
        topo = shared_faces(mesh.cells)
    except ValueError as exc:
        raise InputError(where, str(exc)) from None
    volumes, centroids = _volumes_and_centroids(mesh)
    parts = partition_elements(n_parts, centroids, topo.elem, method, work)
    return topo, volumes, parts, _shared_face_areas(mesh, topo)


def _volumes_and_centroids(mesh: HexMesh) -> tuple[np.ndarray, np.ndarray]:
    """Volume (n,) and centroid (n, 3) of every element, from the corner coordinates of
    _CHUNK elements at a time (never those of the whole mesh at once)."""
    volumes, centroids = np.empty(mesh.n_cells), np.empty((mesh.n_cells, 3))
    for start in range(0, mesh.n_cells, _CHUNK):
        x = mesh.points[mesh.cells[start:start + _CHUNK]]
        volumes[start:start + _CHUNK] = element_volumes(x)
        centroids[start:start + _CHUNK] = x.mean(axis=1)
    return volumes, centroids


def _shared_face_areas(mesh: HexMesh, topo) -> np.ndarray:
    """Area of every shared face (n_faces,), on its A side, _CHUNK faces at a time."""
    area = np.empty(topo.n_faces)
    for start in range(0, topo.n_faces, _CHUNK):
        chunk = slice(start, start + _CHUNK)
        corners = mesh.cells[topo.elem[chunk, 0][:, None], FACES[topo.face[chunk, 0]]]
        area[chunk] = face_areas(mesh.points[corners])
    return area


def distribute(comm, mesh: HexMesh | None, method: str, where: str,
               work: np.ndarray | None = None) -> MeshPart:
    """This rank's MeshPart; ``mesh`` is the whole mesh on rank 0 (ignored elsewhere), and
    ``work`` there the work of each element per step that the ranks share equally (None: the
    same for all; solver.mesh.partition). Collective; a bad topology is an InputError on
    every rank."""
    plan = root_only(comm, lambda: _plan(comm.size, mesh, method, where, work))
    if comm.rank != 0:
        return comm.recv(source=0, tag=11)
    topo, volumes, parts, face_area = plan
    owner = parts[topo.elem]
    group_ids = np.unique(mesh.groups)
    for rank in range(1, comm.size):
        comm.send(_part_for(rank, mesh, parts, owner, topo, face_area, volumes, group_ids),
                  dest=rank, tag=11)
    return _part_for(0, mesh, parts, owner, topo, face_area, volumes, group_ids)


def whole(mesh: HexMesh, where: str) -> MeshPart:
    """The whole mesh as one part (on the rank that holds the mesh; for checks of the case
    against the mesh before it is distributed)."""
    topo, volumes, parts, face_area = _plan(1, mesh, "rcb", where)
    return _part_for(0, mesh, parts, parts[topo.elem], topo, face_area, volumes,
                     np.unique(mesh.groups))
