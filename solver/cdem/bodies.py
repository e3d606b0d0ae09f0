"""Glued blocks: the elements joined by intact interface springs, labelled and weighed the
same way on any partition.

A body is a connected component of the graph whose vertices are the elements and whose
edges are the glued faces (a face with an intact spring). Its label is the smallest global
element id in it, its owner the rank holding that element. It is held when one of its
elements has all 24 dofs held (its mass is then infinite for the contact), otherwise its
mass is the sum of its element masses.

Labels spread over ranks by minimum propagation across the glued faces on partition
boundaries (the interface springs' face exchange, forward and back), as many rounds as the
body crosses partitions; partial masses go to the owner and the totals come back.

Exact sums: element masses are rounded to a grid q = 2^k so coarse that every sum of them
stays below 2^53 q (:func:`exact_grid`); each such sum is then exact, hence the same in any
order and on any partition. The rounding moves a mass by at most q / 2, about 1e-16 times
the model's mass.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from mpi4py import MPI
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components


def exact_grid(comm, largest: float, count: int) -> float:
    """The power of two q such that the values counted over all ranks (``count`` of them
    here), each a multiple of q and at most the largest over all ranks, sum exactly in any
    order: count * largest < 2^52 q (collective; both arguments are this rank's)."""
    top = comm.allreduce(float(largest), op=MPI.MAX)
    n = comm.allreduce(int(count))
    if top <= 0.0 or n == 0:
        return 1.0
    return 2.0 ** (math.ceil(math.log2(n * top)) - 52)


def on_grid(values: np.ndarray, q: float) -> np.ndarray:
    """``values`` rounded to multiples of q."""
    return np.round(values / q) * q


@dataclass
class Bodies:
    """Per own element (n,): label (smallest global element id of its body), owner (the
    rank holding that element) and mass of its body [kg] (inf: held)."""

    label: np.ndarray
    owner: np.ndarray
    mass: np.ndarray


def _local_components(glued: np.ndarray, gid: np.ndarray) -> np.ndarray:
    """Component index of every own element, joining elements glued to each other here."""
    n = len(gid)
    e, f = np.nonzero(glued >= 0)
    other = np.searchsorted(gid, glued[e, f])
    here = (other < n) & (gid[np.minimum(other, n - 1)] == glued[e, f]) if n else other < 0
    graph = coo_matrix((np.ones(np.count_nonzero(here)), (e[here], other[here])), shape=(n, n))
    return connected_components(graph, directed=False)[1]


def glued_bodies(comm, halo, a_side: np.ndarray, b_remote: np.ndarray, glued: np.ndarray,
                 gid: np.ndarray, mass: np.ndarray, held: np.ndarray) -> Bodies:
    """The bodies of the own elements (collective). halo: the interface springs' face
    exchange (rows: owned faces, then the faces owned elsewhere whose B element is here);
    a_side, b_remote: their (local element, face, other element's global id); glued
    (n, 6): global id of the element glued across each face (-1: none); mass (n,) element
    masses on the exact grid; held (n,) whether all dofs of an element are held."""
    comp = _local_components(glued, gid)
    n_comp = int(comp.max(initial=-1)) + 1
    label = np.full(n_comp, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(label, comp, gid)
    owner = np.full(n_comp, comm.rank, dtype=np.int64)
    elem = np.concatenate([a_side[:, 0], b_remote[:, 0]]).astype(np.int64)
    face = np.concatenate([a_side[:, 1], b_remote[:, 1]]).astype(np.int64)
    across = np.concatenate([a_side[:, 2], b_remote[:, 2]]).astype(np.int64)
    remote = np.zeros(len(elem), dtype=bool)
    remote[halo.send_idx] = True
    remote[halo.recv_idx] = True
    remote &= glued[elem, face] == across
    crossing = np.zeros(n_comp, dtype=bool)
    crossing[comp[elem[remote]]] = True
    while True:
        theirs = [_across(halo, mine[comp[elem]])[remote] for mine in (label, owner)]
        best = label.copy()
        np.minimum.at(best, comp[elem[remote]], theirs[0])
        changed = best < label
        win = theirs[0] == best[comp[elem[remote]]]
        at = comp[elem[remote]]
        owner[at[win & changed[at]]] = theirs[1][win & changed[at]]
        label = best
        if not comm.allreduce(bool(changed.any()), op=MPI.LOR):
            break
    part = np.zeros(n_comp)
    np.add.at(part, comp, mass)
    any_held = np.zeros(n_comp, dtype=bool)
    any_held[comp[held]] = True
    total = _owner_sums(comm, label, owner, crossing, part, any_held)
    return Bodies(label=label[comp], owner=owner[comp], mass=total[comp])


def _across(halo, mine: np.ndarray) -> np.ndarray:
    """Per face row, the value of the element on the other side of the partition (rows of
    faces within this rank keep ``mine``)."""
    forward = mine[:, None].astype(float)
    back = forward.copy()
    halo.forward(forward.copy(), into=forward)
    halo.reverse_set(back)
    out = mine.copy()
    out[halo.recv_idx] = forward[halo.recv_idx, 0].astype(np.int64)
    out[halo.send_idx] = back[halo.send_idx, 0].astype(np.int64)
    return out


def _owner_sums(comm, label, owner, crossing, part, any_held) -> np.ndarray:
    """Body masses (inf: held): components within this rank alone sum here; those that
    cross partitions send their partial sums to the owner, which returns the totals."""
    total = np.where(any_held, np.inf, part)
    send = [[] for _ in range(comm.size)]
    for c in np.nonzero(crossing)[0]:
        send[owner[c]].append((int(label[c]), float(part[c]), bool(any_held[c])))
    received = comm.alltoall(send)
    sums: dict[int, list] = {}
    for rows in received:
        for lab, m, h in rows:
            entry = sums.setdefault(lab, [0.0, False])
            entry[0] += m
            entry[1] |= h
    back = [[(lab, sums[lab][0], sums[lab][1]) for lab, _, _ in rows] for rows in received]
    answers = {lab: (m, h) for rows in comm.alltoall(back) for lab, m, h in rows}
    for c in np.nonzero(crossing)[0]:
        m, h = answers[int(label[c])]
        total[c] = np.inf if h else m
    return total
