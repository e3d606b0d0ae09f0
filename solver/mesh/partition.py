"""Element partitioning across MPI ranks: METIS on the face-adjacency graph, or RCB."""

from __future__ import annotations

import numpy as np


def partition_elements(n_parts: int, centroids: np.ndarray, adjacency: np.ndarray,
                       method: str = "metis") -> np.ndarray:
    """Rank of each element (n_el,).

    centroids: (n_el, 3) element centres; adjacency: (n_pairs, 2) elements sharing a face.
    ``metis``: pymetis k-way partition of the dual (face) graph, minimising the interface
    springs cut; ``rcb``: recursive coordinate bisection of the centroids (deterministic,
    dependency-free fallback).
    """
    n_el = len(centroids)
    if n_parts == 1 or n_el == 0:
        return np.zeros(n_el, dtype=np.int64)
    if method == "metis" and n_el >= n_parts:
        return _metis(n_parts, n_el, adjacency)
    return _rcb(n_parts, centroids)


def _metis(n_parts: int, n_el: int, adjacency: np.ndarray) -> np.ndarray:
    import pymetis

    both = np.concatenate([adjacency, adjacency[:, ::-1]]) if len(adjacency) else \
        np.zeros((0, 2), dtype=np.int64)
    order = np.lexsort((both[:, 1], both[:, 0]))
    both = both[order]
    xadj = np.zeros(n_el + 1, dtype=np.int64)
    np.add.at(xadj, both[:, 0] + 1, 1)
    xadj = np.cumsum(xadj)
    graph = pymetis.CSRAdjacency(adj_starts=xadj, adjacent=both[:, 1].copy())
    _, parts = pymetis.part_graph(n_parts, adjacency=graph)
    return np.asarray(parts, dtype=np.int64)


def _rcb(n_parts: int, centroids: np.ndarray) -> np.ndarray:
    parts = np.zeros(len(centroids), dtype=np.int64)

    def split(idx: np.ndarray, first: int, count: int) -> None:
        if count == 1:
            parts[idx] = first
            return
        pts = centroids[idx]
        axis = int(np.argmax(np.ptp(pts, axis=0))) if len(idx) else 0
        order = idx[np.lexsort((idx, pts[:, axis]))]
        left = count // 2
        cut = int(round(len(order) * left / count))
        split(order[:cut], first, left)
        split(order[cut:], first + left, count - left)

    split(np.arange(len(centroids)), 0, n_parts)
    return parts
