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
stays below 2^53 q (solver.exact_sum.exact_grid); each such sum is then exact, hence the
same in any order and on any partition. The rounding moves a mass by at most q / 2, about
1e-16 times the model's mass.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mpi4py import MPI
from numba import njit

from solver.cdem.halo import grouped_by_rank, to_ranks


@dataclass
class Bodies:
    """Per own element (n,): label (smallest global element id of its body), owner (the
    rank holding that element) and mass of its body [kg] (inf: held)."""

    label: np.ndarray
    owner: np.ndarray
    mass: np.ndarray


@njit(cache=True)
def _local_bodies(glued, across, mass, held, gid):
    """Connected components of the own elements joined by the faces glued here (across
    (n, 6): the local index of the element glued across a face, -1 where it is not here;
    a face counts while glued >= 0), by union-find. Returns per element its component
    (numbered by their smallest local element) and per component its smallest global id,
    its mass sum (exact on the grid) and whether an element of it is held."""
    n = glued.shape[0]
    root = np.arange(n)
    for e in range(n):
        for f in range(6):
            o = across[e, f]
            if o < 0 or glued[e, f] < 0:
                continue
            a, b = e, o
            while root[a] != a:
                root[a] = root[root[a]]
                a = root[a]
            while root[b] != b:
                root[b] = root[root[b]]
                b = root[b]
            if a != b:
                root[max(a, b)] = min(a, b)
    comp = np.empty(n, dtype=np.int64)
    n_comp = 0
    for e in range(n):
        r = e
        while root[r] != r:
            r = root[r]
        if r == e:
            comp[e] = n_comp
            n_comp += 1
        else:
            comp[e] = comp[r]
    label = np.full(n_comp, np.iinfo(np.int64).max, dtype=np.int64)
    part = np.zeros(n_comp)
    any_held = np.zeros(n_comp, dtype=np.bool_)
    for e in range(n):
        c = comp[e]
        label[c] = min(label[c], gid[e])
        part[c] += mass[e]
        any_held[c] |= held[e]
    return comp, label, part, any_held


class GluedBodies:
    """The bodies of the own elements for a glue state (collective). halo: the interface
    springs' face exchange (rows: owned faces, then the faces owned elsewhere whose B
    element is here); a_side, b_remote: their (local element, face, other element's
    global id); gid (n,) global element ids (increasing); mass (n,) element masses on the
    exact grid; held (n,) whether all dofs of an element are held.

    Calling it with a glue state (n, 6) (global id of the element glued across each face,
    -1: none) returns the :class:`Bodies`. It remembers the local index of the element
    across each glued face, so that a state in which glue only broke costs one linear pass
    over the elements (union-find) and the rounds over the partition boundary."""

    def __init__(self, comm, halo, a_side: np.ndarray, b_remote: np.ndarray,
                 gid: np.ndarray, mass: np.ndarray, held: np.ndarray):
        self.comm, self.halo, self.gid, self.mass, self.held = comm, halo, gid, mass, held
        self.elem = np.concatenate([a_side[:, 0], b_remote[:, 0]]).astype(np.int64)
        self.face = np.concatenate([a_side[:, 1], b_remote[:, 1]]).astype(np.int64)
        self.other = np.concatenate([a_side[:, 2], b_remote[:, 2]]).astype(np.int64)
        boundary = np.zeros(len(self.elem), dtype=bool)
        boundary[halo.send_idx] = True
        boundary[halo.recv_idx] = True
        self.rows = np.nonzero(boundary)[0]
        self.at_send = np.searchsorted(self.rows, halo.send_idx)
        self.at_recv = np.searchsorted(self.rows, halo.recv_idx)
        self.glued = np.full((len(gid), 6), -1, dtype=np.int64)
        self.across = np.full((len(gid), 6), -1, dtype=np.int64)

    def _remember(self, glued: np.ndarray) -> None:
        """The local index of the element across every face glued now (-1: not here)."""
        e, f = np.nonzero((glued != self.glued) & (glued >= 0))
        n = len(self.gid)
        other = np.searchsorted(self.gid, glued[e, f])
        here = other < n
        here[here] = self.gid[other[here]] == glued[e, f][here]
        self.across[e, f] = np.where(here, other, -1)
        self.glued = glued.copy()

    def _across(self, mine: np.ndarray) -> np.ndarray:
        """Per face row on the partition boundary (``rows``), the value of the element on
        the other side, given those of the elements on this side (``mine``)."""
        values = np.zeros((len(self.elem), 1))
        values[self.rows, 0] = mine
        back = values.copy()
        self.halo.forward(values.copy(), into=values)
        self.halo.reverse_set(back)
        out = mine.copy()
        out[self.at_recv] = values[self.halo.recv_idx, 0].astype(np.int64)
        out[self.at_send] = back[self.halo.send_idx, 0].astype(np.int64)
        return out

    def __call__(self, glued: np.ndarray) -> Bodies:
        comm, elem = self.comm, self.elem
        self._remember(glued)
        comp, label, part, any_held = _local_bodies(glued, self.across, self.mass, self.held,
                                                    self.gid)
        owner = np.full(len(label), comm.rank, dtype=np.int64)
        rows = self.rows
        here = comp[elem[rows]]
        remote = glued[elem[rows], self.face[rows]] == self.other[rows]
        at = here[remote]
        crossing = np.zeros(len(label), dtype=bool)
        crossing[at] = True
        while True:
            theirs = [self._across(mine[here])[remote] for mine in (label, owner)]
            best = label.copy()
            np.minimum.at(best, at, theirs[0])
            changed = best < label
            win = theirs[0] == best[at]
            owner[at[win & changed[at]]] = theirs[1][win & changed[at]]
            label = best
            if not comm.allreduce(bool(changed.any()), op=MPI.LOR):
                break
        total = _owner_sums(comm, label, owner, crossing, part, any_held)
        return Bodies(label=label[comp], owner=owner[comp], mass=total[comp])


def _owner_sums(comm, label, owner, crossing, part, any_held) -> np.ndarray:
    """Body masses (inf: held): components within this rank alone sum here; those that
    cross partitions send their partial sums to the owner, which returns the totals (an
    Alltoall of one count per rank, then two Alltoallv in which only the ranks that share
    bodies send: a rank's messages follow the ranks its bodies reach, not the rank count).
    Rows travel as doubles (label, partial mass, held): labels are global element ids,
    below 2^53, so exact. The partial masses lie on the grid of the module docstring, so
    their sum is exact in any order."""
    total = np.where(any_held, np.inf, part)
    mine, send_counts, recv_counts = grouped_by_rank(comm, np.nonzero(crossing)[0], owner)
    rows = np.column_stack([label[mine], part[mine], any_held[mine]]).astype(np.float64)
    received = to_ranks(comm, rows, send_counts, recv_counts)
    labels, at = np.unique(received[:, 0], return_inverse=True)
    sums = np.zeros(len(labels))
    held = np.zeros(len(labels), dtype=bool)
    np.add.at(sums, at, received[:, 1])
    np.logical_or.at(held, at, received[:, 2] > 0.0)
    answers = np.column_stack([sums[at], held[at]]).astype(np.float64)
    back = to_ranks(comm, answers, recv_counts, send_counts)
    total[mine] = np.where(back[:, 1] > 0.0, np.inf, back[:, 0])
    return total
