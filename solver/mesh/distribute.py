"""Partition a hexahedral mesh on rank 0 and hand every rank only its share.

Rank 0 holds the whole mesh (it read or generated it) and its measures (shared faces,
volumes, centroids and face areas; solver.mesh.measures), computes the partition, and sends
each rank its :class:`MeshPart`: its elements, and the shared faces that touch them with
what the model build needs of the element on the other side (its owner, group and volume).
No other rank ever holds an array sized by the whole mesh.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from solver.mesh.hexmesh import HexMesh
from solver.mesh.measures import MeshMeasures
from solver.mesh.partition import partition_elements
from solver.parallel import root_only


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


def _part_for(rank: int, mesh: HexMesh, measures: MeshMeasures, parts: np.ndarray,
              owner: np.ndarray, group_ids: np.ndarray) -> MeshPart:
    topo = measures.topology
    mine = np.nonzero(parts == rank)[0]
    touching = np.nonzero((owner == rank).any(axis=1))[0]
    elem = topo.elem[touching]
    faces = SharedFaces(gid=touching, elem=elem, local_face=topo.face[touching],
                        local_nodes=topo.local_nodes[touching], owner=owner[touching],
                        area=measures.face_area[touching], volume=measures.volumes[elem],
                        group=mesh.groups[elem])
    return MeshPart(elem_gid=mine, coords=mesh.points[mesh.cells[mine]],
                    groups=mesh.groups[mine], faces=faces, group_ids=group_ids,
                    group_names=dict(mesh.group_names), n_cells=mesh.n_cells,
                    n_faces=topo.n_faces)


def _partition(n_parts: int, measures: MeshMeasures, method: str,
               work: np.ndarray | None = None) -> np.ndarray:
    return partition_elements(n_parts, measures.centroids, measures.topology.elem, method,
                              work)


def distribute(comm, mesh: HexMesh | None, measures: MeshMeasures | None, method: str,
               work: np.ndarray | None = None, parts: np.ndarray | None = None) -> MeshPart:
    """This rank's MeshPart; ``mesh`` is the whole mesh on rank 0 and ``measures`` its
    measures there (both ignored elsewhere), and ``work`` there the work of each element
    per step that the ranks share equally (None: the same for all; solver.mesh.partition),
    or ``parts`` there the rank of each element, a partition given. Collective."""
    parts = root_only(comm, lambda: parts if parts is not None
                      else _partition(comm.size, measures, method, work))
    if comm.rank != 0:
        return comm.recv(source=0, tag=11)
    owner = parts[measures.topology.elem]
    group_ids = np.unique(mesh.groups)
    for rank in range(1, comm.size):
        comm.send(_part_for(rank, mesh, measures, parts, owner, group_ids), dest=rank, tag=11)
    return _part_for(0, mesh, measures, parts, owner, group_ids)


def whole(mesh: HexMesh, measures: MeshMeasures) -> MeshPart:
    """The whole mesh as one part (on the rank that holds the mesh and its ``measures``; for
    checks of the case against the mesh)."""
    parts = _partition(1, measures, "rcb")
    return _part_for(0, mesh, measures, parts, parts[measures.topology.elem],
                     np.unique(mesh.groups))
