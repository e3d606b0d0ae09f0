"""Element partitioning across MPI ranks: METIS on the face-adjacency graph, or RCB."""

from __future__ import annotations

import numpy as np


def partition_elements(n_parts: int, centroids: np.ndarray, adjacency: np.ndarray,
                       method: str = "metis", work: np.ndarray | None = None) -> np.ndarray:
    """Rank of each element (n_el,).

    centroids: (n_el, 3) element centres; adjacency: (n_pairs, 2) elements sharing a face;
    work: (n_el,) positive integer work of each element per step (None: one each), which
    the parts share about equally.
    ``metis``: pymetis k-way partition of the dual (face) graph with the work as vertex
    weights, minimising the interface springs cut; ``rcb``: recursive coordinate bisection
    of the centroids at the work's weighted median (deterministic, dependency-free fallback).
    """
    n_el = len(centroids)
    if n_parts == 1 or n_el == 0:
        return np.zeros(n_el, dtype=np.int64)
    if method == "metis" and n_el >= n_parts:
        return _metis(n_parts, n_el, adjacency, work)
    return _rcb(n_parts, centroids, np.ones(n_el, dtype=np.int64) if work is None else work)


def _metis(n_parts: int, n_el: int, adjacency: np.ndarray,
           work: np.ndarray | None) -> np.ndarray:
    import pymetis

    both = np.concatenate([adjacency, adjacency[:, ::-1]]) if len(adjacency) else \
        np.zeros((0, 2), dtype=np.int64)
    order = np.lexsort((both[:, 1], both[:, 0]))
    both = both[order]
    xadj = np.zeros(n_el + 1, dtype=np.int64)
    np.add.at(xadj, both[:, 0] + 1, 1)
    xadj = np.cumsum(xadj)
    graph = pymetis.CSRAdjacency(adj_starts=xadj, adjacent=both[:, 1].copy())
    vweights = None if work is None else np.asarray(work, dtype=np.int64).tolist()
    _, parts = pymetis.part_graph(n_parts, adjacency=graph, vweights=vweights)
    return np.asarray(parts, dtype=np.int64)


def _rcb(n_parts: int, centroids: np.ndarray, work: np.ndarray) -> np.ndarray:
    """Each bisection cuts along the longest extent where the work before the cut is
    closest to left / count of the whole, ``left`` and ``count`` the parts on the left and
    in all; with unit work that is round(n left / count) elements."""
    parts = np.zeros(len(centroids), dtype=np.int64)

    def split(idx: np.ndarray, first: int, count: int) -> None:
        if count == 1:
            parts[idx] = first
            return
        pts = centroids[idx]
        axis = int(np.argmax(np.ptp(pts, axis=0))) if len(idx) else 0
        order = idx[np.lexsort((idx, pts[:, axis]))]
        left = count // 2
        cut = _cut(work[order], left, count)
        split(order[:cut], first, left)
        split(order[cut:], first + left, count - left)

    split(np.arange(len(centroids)), 0, n_parts)
    return parts


def _cut(work: np.ndarray, left: int, count: int) -> int:
    """Elements to the left of the cut: the point where the running work reaches
    left / count of the total, interpolated within the element it falls in and rounded."""
    if not len(work):
        return 0
    before = np.concatenate([[0], np.cumsum(work)])
    target = before[-1] * left / count
    k = min(int(np.searchsorted(before, target, side="right")) - 1, len(work) - 1)
    return int(round(k + (target - before[k]) / work[k]))
