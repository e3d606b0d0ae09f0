"""Contact node forces and what crosses ranks: ghost elements, node shares, ordered sums.

Every loaded contact hands its force to at most 8 nodes: the 4 nodes of its carrying face
with the weights of its point (own_w) and the target's nodes with minus the target weights.
Each such node share is keyed by the contact's place in the global order,
2 key + kind (kind 0 semi-spring, 1 semi-edge); shares for ghost nodes go back to the
ranks owning them, and every node's shares are summed in key order (0 + s_1) + s_2 + ...,
so a node force is the same to the last bit on any partition.

A ghost element travels at a renewal as one row of ``GHOST_WIDTH`` floats: global id, its
body's label, owner rank and mass, its smallest node mass and highest node frequency, the
owner's base row of its nodes, its 8 node coordinates and its 6 active-face flags.

The loaded stiffness of a body (the dashpot's share of its mass, solver.cdem.contact.law)
sums over every rank with contacts on it: :class:`BodySums` sends the partial sums to the
body's owner and the totals back; the sums are exact (solver.cdem.bodies), so their order
does not matter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from mpi4py import MPI
from numba import njit

from solver.cdem.halo import Neighbours, grouped_by_rank, to_ranks
from solver.mesh.topology import FACES

#: gid, label, owner, body mass, node mass, omega (the ELEMENT_FIELDS), base row, 24
#: coordinates, 6 active flags.
ELEMENT_FIELDS = 6
GHOST_WIDTH = ELEMENT_FIELDS + 1 + 24 + 6
#: last_key of a row in :func:`ordered_sums` whose shares came out of key order.
UNSORTED = np.iinfo(np.int64).max


@njit(cache=True)
def count_loaded(semi_spring_force, semi_edge_force):
    """Contacts of both kinds carrying a force."""
    loaded = 0
    for s in range(semi_spring_force.shape[0]):
        if (semi_spring_force[s, 0] != 0.0 or semi_spring_force[s, 1] != 0.0
                or semi_spring_force[s, 2] != 0.0):
            loaded += 1
        if (semi_edge_force[s, 0] != 0.0 or semi_edge_force[s, 1] != 0.0
                or semi_edge_force[s, 2] != 0.0):
            loaded += 1
    return loaded


class NodeShares(NamedTuple):
    """Node shares, as :func:`node_shares` writes them: node (m,) the node each share goes
    to (a row of the model's node arrays; for a ghost node, 8 c + a of contact element c),
    key (m,) the place of its contact in the global order (2 key + kind), value (m, 3) the
    share of the contact's force [N]."""

    node: np.ndarray
    key: np.ndarray
    value: np.ndarray


@njit(cache=True)
def node_shares(mesh, semi_springs, semi_edges, local, ghost):
    """Node shares of every loaded semi-spring and semi-edge (RecordArrays; the two record sets
    share their keys and their order) on the contact elements of ``mesh`` (a ContactMesh; the
    three packed, solver.cdem.packed), in record order, written into ``local`` (NodeShares) for
    nodes in the model's arrays and ``ghost`` (NodeShares, node 8 c + a) for ghost nodes; the
    buffers hold 8 (local) and 4 (ghost) shares per loaded contact. Returns the numbers of local
    and ghost shares."""
    mesh, springs, edges = mesh.value, semi_springs.value, semi_edges.value
    base, n_own = mesh.base, mesh.n_own
    key, face, elem = springs.key, springs.face, springs.elem
    spring_force, spring_own_w = springs.force, springs.own_w
    spring_node, spring_w = springs.target_node, springs.target_w
    edge_force, edge_own_w, edge_node, edge_w = (edges.force, edges.own_w, edges.target_node,
                                                 edges.target_w)
    rows, keys, values = local.node, local.key, local.value
    ghost_nodes, ghost_keys, ghost_values = ghost.node, ghost.key, ghost.value
    n_local = 0
    n_ghost = 0
    for s in range(key.shape[0]):
        b = base[elem[s]]
        for kind in range(2):
            force = spring_force if kind == 0 else edge_force
            f0, f1, f2 = force[s, 0], force[s, 1], force[s, 2]
            if f0 == 0.0 and f1 == 0.0 and f2 == 0.0:
                continue
            own_w = spring_own_w if kind == 0 else edge_own_w
            target_node = spring_node if kind == 0 else edge_node
            target_w = spring_w if kind == 0 else edge_w
            k_s = 2 * key[s] + kind
            for k in range(4):
                w = own_w[s, k]
                rows[n_local] = b + FACES[face[s], k]
                keys[n_local] = k_s
                values[n_local, 0] = w * f0
                values[n_local, 1] = w * f1
                values[n_local, 2] = w * f2
                n_local += 1
            for k in range(4):
                node = target_node[s, k]
                if node < 0:
                    continue
                w = -target_w[s, k]
                c = node // 8
                if c < n_own:
                    rows[n_local] = base[c] + node % 8
                    keys[n_local] = k_s
                    values[n_local, 0] = w * f0
                    values[n_local, 1] = w * f1
                    values[n_local, 2] = w * f2
                    n_local += 1
                else:
                    ghost_nodes[n_ghost] = node
                    ghost_keys[n_ghost] = k_s
                    ghost_values[n_ghost, 0] = w * f0
                    ghost_values[n_ghost, 1] = w * f1
                    ghost_values[n_ghost, 2] = w * f2
                    n_ghost += 1
    return n_local, n_ghost


@njit(cache=True)
def ordered_sums(rows, keys, values, head, first, last_key, nxt, touched, chain, out):
    """Per distinct row, the sum of its values in increasing key order, (0 + v_1) + v_2 ...
    ``head`` (n_rows,) is scratch filled with -1 (and left so); first, last_key, nxt,
    touched, chain and out (m, 3) scratch of at least the number of shares m. Returns the
    number of distinct rows, listed in ``touched`` with their sums in ``out``.

    One pass keeps each row's running sum while its shares arrive in increasing key order,
    as most of a rank's own shares do (they are made in record order, key order but for the
    records of faces freed later), and links each row's shares; only a row with a share out
    of order (received from another rank, or from a record of a face freed later) has its
    linked shares sorted by key (insertion sort) and summed again."""
    n_rows = 0
    for i in range(rows.shape[0]):
        r = rows[i]
        t = head[r]
        if t < 0:
            t = n_rows
            n_rows += 1
            head[r] = t
            touched[t] = r
            first[t] = -1
            last_key[t] = keys[i] - 1
            out[t, 0] = out[t, 1] = out[t, 2] = 0.0
        nxt[i] = first[t]
        first[t] = i
        if keys[i] > last_key[t]:
            last_key[t] = keys[i]
            out[t, 0] += values[i, 0]
            out[t, 1] += values[i, 1]
            out[t, 2] += values[i, 2]
        else:
            last_key[t] = UNSORTED
    for t in range(n_rows):
        head[touched[t]] = -1
        if last_key[t] != UNSORTED:
            continue
        count = 0
        i = first[t]
        while i >= 0:
            chain[count] = i
            count += 1
            i = nxt[i]
        for j in range(count // 2):
            chain[j], chain[count - 1 - j] = chain[count - 1 - j], chain[j]
        for j in range(1, count):
            item = chain[j]
            k = j
            while k > 0 and keys[chain[k - 1]] > keys[item]:
                chain[k] = chain[k - 1]
                k -= 1
            chain[k] = item
        s0 = s1 = s2 = 0.0
        for j in range(count):
            s0 += values[chain[j], 0]
            s1 += values[chain[j], 1]
            s2 += values[chain[j], 2]
        out[t, 0] = s0
        out[t, 1] = s1
        out[t, 2] = s2
    return n_rows


class ShareBuffers:
    """Persistent buffers of the node shares and their ordered sums, grown on demand (a
    fresh allocation each step costs more in page faults than the kernels take): local
    and ghost (NodeShares) the shares node_shares writes, the shares received from other
    ranks after the local ones; head, first, last_key, nxt, touched, chain, out the
    scratch of :func:`ordered_sums`."""

    def __init__(self, n_rows: int):
        self.head = np.full(n_rows, -1, dtype=np.int64)
        self.capacity = -1
        self.reserve(1024)

    def reserve(self, loaded: int) -> None:
        """Room for the shares of ``loaded`` contacts (8 local, 4 ghost each), and as many
        received from other ranks."""
        if loaded <= self.capacity:
            return
        self.capacity = int(1.5 * loaded)
        n = 4 * self.capacity
        self.ghost = _empty_shares(n)
        self.grow(4 * n)

    def grow(self, m: int, keep: int = 0) -> None:
        """Room for m shares in all (local and received), keeping the first ``keep``."""
        local = _empty_shares(m)
        if keep:
            for new, old in zip(local, self.local):
                new[:keep] = old[:keep]
        self.local = local
        self.first = np.empty(m, dtype=np.int64)
        self.last_key = np.empty(m, dtype=np.int64)
        self.nxt = np.empty(m, dtype=np.int64)
        self.touched = np.empty(m, dtype=np.int64)
        self.chain = np.empty(m, dtype=np.int64)
        self.out = np.empty((m, 3))


def _empty_shares(m: int) -> NodeShares:
    return NodeShares(np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int64),
                      np.empty((m, 3)))


FACE_FACE, EDGE_FACE, VERTEX_FACE, EDGE_EDGE = 1, 2, 4, 8


@njit(cache=True)
def contact_types(semi_spring_target, semi_spring_f_n, semi_edge_target, semi_edge_f_n):
    """Traditional contact types of the compressed contacts (bit mask of FACE_FACE, ...),
    per pair (own face, target element) with n semi-springs and m semi-edges in
    compression: face-face for n + m >= 3 (a face held at three or more points, also over
    the target's edge without a vertex inside), edge-face for n = 2, vertex-face for n = 1,
    edge-edge for semi-edges alone. A face's four records are consecutive."""
    seen = 0
    targets = np.empty(8, dtype=np.int64)
    counts = np.zeros((8, 2), dtype=np.int64)
    for first in range(0, semi_spring_target.shape[0], 4):
        n_t = 0
        for kind in range(2):
            for s in range(first, first + 4):
                if (semi_spring_f_n[s] if kind == 0 else semi_edge_f_n[s]) <= 0.0:
                    continue
                t = semi_spring_target[s] // 6 if kind == 0 else semi_edge_target[s] // 24
                at = n_t
                for i in range(n_t):
                    if targets[i] == t:
                        at = i
                if at == n_t:
                    targets[n_t] = t
                    counts[n_t, 0] = 0
                    counts[n_t, 1] = 0
                    n_t += 1
                counts[at, kind] += 1
        for i in range(n_t):
            n, m = counts[i, 0], counts[i, 1]
            if n + m >= 3:
                seen |= FACE_FACE
            elif n == 2:
                seen |= EDGE_FACE
            elif n == 1:
                seen |= VERTEX_FACE
            else:
                seen |= EDGE_EDGE
    return seen


@njit(cache=True)
def semi_spring_points(x, base, elem, face, vertex, alpha, out):
    """Positions (n, 3) of the semi-springs, (1 - alpha) x_v + alpha x_c."""
    w_other = 0.25 * alpha
    w_vertex = 1.0 - alpha + w_other
    for s in range(elem.shape[0]):
        b = base[elem[s]]
        for c in range(3):
            total = 0.0
            for k in range(4):
                w = w_vertex if k == vertex[s] else w_other
                total += w * x[b + FACES[face[s], k], c]
            out[s, c] = total


def ghost_rows(fields, owner_base, coords, active, fresh) -> np.ndarray:
    """The rows (n, GHOST_WIDTH) that carry elements to a neighbour as ghosts: fields (n,
    ELEMENT_FIELDS), the owner's base rows, coordinates (n, 8, 3), active faces (n, 6)
    and which of them are fresh (n, 6; solver.cdem.contact.pipeline), sent as 0, 1 or 2."""
    return np.hstack([fields, owner_base[:, None].astype(float), coords.reshape(-1, 24),
                      active.astype(float) + (active & fresh)])


@dataclass
class GhostElements:
    """Received ghost elements (n,): gid, body label, owner and mass, node mass, omega,
    the owner's base row of their nodes, x (n * 8, 3), active and fresh faces (n, 6)."""

    gid: np.ndarray
    label: np.ndarray
    owner: np.ndarray
    body_mass: np.ndarray
    node_mass: np.ndarray
    omega: np.ndarray
    owner_base: np.ndarray
    x: np.ndarray
    active: np.ndarray
    fresh: np.ndarray


def unpack_ghosts(rows: np.ndarray) -> GhostElements:
    """The ghost elements of received rows."""
    k = ELEMENT_FIELDS
    return GhostElements(gid=rows[:, 0].astype(np.int64), label=rows[:, 1].astype(np.int64),
                         owner=rows[:, 2].astype(np.int64), body_mass=rows[:, 3].copy(),
                         node_mass=rows[:, 4].copy(), omega=rows[:, 5].copy(),
                         owner_base=rows[:, k].astype(np.int64),
                         x=np.ascontiguousarray(rows[:, k + 1:k + 25]).reshape(-1, 3),
                         active=rows[:, k + 25:k + 31] > 0.5,
                         fresh=rows[:, k + 25:k + 31] > 1.5)


class BodySums:
    """Sums over ranks of per-body values (n_bodies,) of a rank's body table (labels,
    owners): each rank sends its partial sums of the bodies owned elsewhere to their
    owners, which add them and send the totals back. The pattern is set at each renewal
    (collective; when any rank has a body owned elsewhere, an Alltoall of one count per
    rank and an Alltoallv of the labels, in which only the ranks that share bodies send);
    without such bodies nothing is exchanged."""

    def __init__(self, comm, traffic=None, renewal_traffic=None):
        self.comm = comm
        self.traffic = traffic
        self.renewal_traffic = renewal_traffic
        self.neighbours = None
        self.ranks: list[int] = []
        self.crossing = False

    def renew(self, labels: np.ndarray, owner: np.ndarray) -> None:
        comm = self.comm
        theirs = owner != comm.rank
        self.crossing = comm.allreduce(bool(theirs.any()), op=MPI.LOR)
        if not self.crossing:
            return
        send_pos, send_counts, recv_counts = grouped_by_rank(comm, np.nonzero(theirs)[0], owner)
        outgoing = labels[send_pos].astype(np.int64)
        incoming = to_ranks(comm, outgoing, send_counts, recv_counts)
        if self.renewal_traffic is not None:
            self.renewal_traffic.add(outgoing.nbytes + send_counts.nbytes,
                                     incoming.nbytes + recv_counts.nbytes)
        ranks = [int(r) for r in np.nonzero((send_counts > 0) | (recv_counts > 0))[0]]
        if comm.allreduce(ranks != self.ranks or self.neighbours is None, op=MPI.LOR):
            if self.neighbours is not None:
                self.neighbours.free()
            self.neighbours = Neighbours(comm, ranks, self.traffic)
            self.ranks = ranks
        mine = labels[~theirs]
        self.owned = np.unique(np.concatenate([mine, incoming]))
        self.table_owned = np.nonzero(~theirs)[0]
        self.owned_of_table = np.searchsorted(self.owned, mine)
        self.send_pos = send_pos
        self.send_rows = send_counts[ranks]
        self.recv_pos = np.searchsorted(self.owned, incoming)
        self.recv_rows = recv_counts[ranks]

    def total(self, values: np.ndarray) -> None:
        """Replace every rank's partial sums ``values`` by the totals over all ranks
        (collective)."""
        if not self.crossing:
            return
        acc = np.zeros(len(self.owned))
        acc[self.owned_of_table] = values[self.table_owned]
        received = np.empty(len(self.recv_pos))
        self.neighbours.alltoallv(np.ascontiguousarray(values[self.send_pos]),
                                  self.send_rows, received, self.recv_rows)
        np.add.at(acc, self.recv_pos, received)
        values[self.table_owned] = acc[self.owned_of_table]
        back = np.empty(len(self.send_pos))
        self.neighbours.alltoallv(np.ascontiguousarray(acc[self.recv_pos]), self.recv_rows,
                                  back, self.send_rows)
        values[self.send_pos] = back
