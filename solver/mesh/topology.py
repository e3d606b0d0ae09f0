"""Face topology of a hexahedral mesh: the faces two elements share, and their node pairs.

Local faces of the VTK-ordered hexahedron are listed so that (x_c - x_a) x (x_d - x_b) points
outward for face nodes a, b, c, d.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: The six faces as local node lists, ordered so that (c - a) x (d - b) points outward.
FACES = np.array([[0, 3, 2, 1], [4, 5, 6, 7], [0, 1, 5, 4],
                  [1, 2, 6, 5], [2, 3, 7, 6], [3, 0, 4, 7]], dtype=np.int64)

_CHUNK = 65536
"""Faces whose node pairs are matched at once."""


@dataclass
class InterfaceTopology:
    """Shared faces of a hex mesh: element A/B, their local face numbers and node pairs.

    elem: (n_faces, 2) element ids (A < B); face: (n_faces, 2) local face numbers 0..5;
    local_nodes: (n_faces, 2, 4) local node numbers (0..7) of the 4 coincident node pairs,
    in A's face order. Faces are numbered in this order (the global face ids).
    """

    elem: np.ndarray
    face: np.ndarray
    local_nodes: np.ndarray

    @property
    def n_faces(self) -> int:
        return len(self.elem)


def shared_faces(cells: np.ndarray) -> InterfaceTopology:
    """Find every face shared by two hexahedra (matching sorted node quadruples).

    B's node of each pair is looked up among the 4 nodes of B's face only (they are the 4
    nodes of A's face, so this is the node a search of all of B's 8 nodes finds), _CHUNK
    faces at a time.
    """
    small = cells.max(initial=0) < np.iinfo(np.int32).max
    keys = cells.astype(np.int32 if small else np.int64)[:, FACES].reshape(-1, 4)
    keys.sort(axis=1)
    order = np.lexsort(keys.T[::-1])
    keys = keys[order]
    same = np.all(keys[1:] == keys[:-1], axis=1)
    del keys
    first = np.nonzero(same)[0]
    if len(first) > 1 and np.any(first[1:] == first[:-1] + 1):
        raise ValueError("a face is shared by more than two elements")
    a_idx, b_idx = order[first], order[first + 1]
    del order
    swap = a_idx // 6 > b_idx // 6
    a_idx, b_idx = np.where(swap, b_idx, a_idx), np.where(swap, a_idx, b_idx)
    del swap
    elem = np.stack([a_idx // 6, b_idx // 6], axis=1)
    face = np.stack([a_idx % 6, b_idx % 6], axis=1)
    del a_idx, b_idx
    local = FACES[face]                           # (n, 2, 4) local nodes of A's and B's face
    for start in range(0, len(elem), _CHUNK):
        rows = slice(start, start + _CHUNK)
        glob = cells[elem[rows, :1], local[rows, 0]]          # global ids in A's order
        match = cells[elem[rows, 1:], local[rows, 1]][:, None, :] == glob[:, :, None]
        if not match.any(axis=2).all():
            raise ValueError("shared face without coincident nodes")
        local[rows, 1] = np.take_along_axis(local[rows, 1], np.argmax(match, axis=2), axis=1)
    return InterfaceTopology(elem=elem, face=face, local_nodes=local)


def face_areas(x: np.ndarray) -> np.ndarray:
    """Areas of quadrilaterals (n, 4, 3): half the norm of the diagonals' cross product."""
    cross = np.cross(x[:, 2] - x[:, 0], x[:, 3] - x[:, 1])
    return 0.5 * np.linalg.norm(cross, axis=1)
