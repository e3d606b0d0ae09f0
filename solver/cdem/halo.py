"""Neighbour exchanges between MPI ranks (DOLFINx's scatter_forward / scatter_reverse).

:class:`Neighbours` is a distributed-graph communicator over a symmetric set of neighbour
ranks; every exchange is one ``Neighbor_alltoall(v)`` on it, and it counts the bytes it
sends and receives and its messages, one to each neighbour (:class:`Traffic`). Every rank
of the parent communicator calls each exchange (a rank without neighbours moves nothing).

:class:`Halo` exchanges fixed rows of (n, w) float arrays with the neighbours:

* ``forward(values)``: owners send their rows to the ranks holding them as ghosts
  (owner -> ghost); for the interface springs, the step increments du of the B-side nodes;
* ``reverse_set(values)``: the ghost rows are sent back and written into the owners' rows
  (ghost -> owner); for the interface springs, the spring forces written into ghost node
  slots. Every row has one writer, so nothing is summed across ranks.

Rows bound for ranks that need not be neighbours (the owners of bodies that cross
partitions): :func:`grouped_by_rank` orders them by rank and exchanges the counts,
:func:`to_ranks` sends them, only between the ranks that have rows for each other.
"""

from __future__ import annotations

import time

import numpy as np
from mpi4py import MPI


class Traffic:
    """Bytes sent and received by the exchanges that share this counter, the messages sent
    by its neighbour collectives (one to each neighbour per collective, empty ones
    included), and the wall time spent in them (waiting for the neighbours included)."""

    def __init__(self):
        self.sent = 0
        self.received = 0
        self.messages = 0
        self.seconds = 0.0

    def add(self, sent: int, received: int, seconds: float = 0.0, messages: int = 0) -> None:
        self.sent += int(sent)
        self.received += int(received)
        self.messages += messages
        self.seconds += seconds


class Neighbours:
    """Neighbour collectives among ``ranks`` (symmetric: I send to and receive from them),
    counting their bytes in ``traffic``. On a communicator of one rank there is nobody to
    talk to, and no MPI call is made (an empty neighbour collective still costs a trip
    through the MPI progress engine, up to a millisecond on a busy machine)."""

    def __init__(self, comm, ranks, traffic: Traffic | None = None):
        self.ranks = sorted(int(r) for r in ranks)
        self.alone = comm.Get_size() == 1
        self.graph = comm.Create_dist_graph_adjacent(self.ranks, self.ranks, reorder=False)
        self.traffic = traffic if traffic is not None else Traffic()

    def counts(self, send_counts: np.ndarray) -> np.ndarray:
        """Exchange one count per neighbour; returns the neighbours' counts for me."""
        send = np.ascontiguousarray(send_counts, dtype=np.int64)
        recv = np.zeros(len(self.ranks), dtype=np.int64)
        if self.alone:
            return recv
        start = time.perf_counter()
        self.graph.Neighbor_alltoall([send, MPI.INT64_T], [recv, MPI.INT64_T])
        self.traffic.add(send.nbytes, recv.nbytes, time.perf_counter() - start,
                         len(self.ranks))
        return recv

    def alltoallv(self, send: np.ndarray, send_rows: np.ndarray, recv: np.ndarray,
                  recv_rows: np.ndarray) -> None:
        """Send consecutive row blocks of ``send`` (send_rows[i] rows to neighbour i) and
        receive into ``recv`` likewise; rows of equal width and dtype (float64 or int64)."""
        if self.alone:
            return
        width = send.shape[1] if send.ndim == 2 else 1
        start = time.perf_counter()
        self.graph.Neighbor_alltoallv([send, (np.asarray(send_rows) * width, None)],
                                      [recv, (np.asarray(recv_rows) * width, None)])
        self.traffic.add(send.nbytes, recv.nbytes, time.perf_counter() - start,
                         len(self.ranks))

    def exchange(self, send: np.ndarray, send_rows: np.ndarray) -> tuple[np.ndarray,
                                                                          np.ndarray]:
        """Variable-size exchange: counts first, then the rows; returns (rows received,
        rows per neighbour)."""
        recv_rows = self.counts(send_rows)
        recv = np.empty((int(recv_rows.sum()),) + send.shape[1:], dtype=send.dtype)
        self.alltoallv(np.ascontiguousarray(send), send_rows, recv, recv_rows)
        return recv, recv_rows

    def free(self) -> None:
        self.graph.Free()


class Halo:
    """send[r]: my rows that rank r holds as ghosts; recv[r]: my ghost rows owned by r (the
    same rows in the same order on both sides)."""

    def __init__(self, neighbours: Neighbours, send: dict[int, np.ndarray],
                 recv: dict[int, np.ndarray], width: int = 3):
        self.neighbours = neighbours
        empty = np.zeros(0, dtype=np.int64)
        ranks = neighbours.ranks
        self.send_idx = np.concatenate([send.get(r, empty) for r in ranks] or [empty])
        self.recv_idx = np.concatenate([recv.get(r, empty) for r in ranks] or [empty])
        self.send_rows = np.array([len(send.get(r, empty)) for r in ranks], dtype=np.int64)
        self.recv_rows = np.array([len(recv.get(r, empty)) for r in ranks], dtype=np.int64)
        self.send_buf = np.zeros((len(self.send_idx), width))
        self.recv_buf = np.zeros((len(self.recv_idx), width))

    def forward(self, values: np.ndarray, into: np.ndarray | None = None) -> None:
        """Copy owners' rows of ``values`` into the ghost rows of the holding ranks (of
        ``into``, when the ghosts live in an array of their own)."""
        np.take(values, self.send_idx, axis=0, out=self.send_buf)
        self.neighbours.alltoallv(self.send_buf, self.send_rows, self.recv_buf,
                                  self.recv_rows)
        (values if into is None else into)[self.recv_idx] = self.recv_buf

    def reverse_set(self, values: np.ndarray) -> None:
        """Write the ghost rows of ``values`` into their owners' rows."""
        np.take(values, self.recv_idx, axis=0, out=self.recv_buf)
        self.neighbours.alltoallv(self.recv_buf, self.recv_rows, self.send_buf,
                                  self.send_rows)
        values[self.send_idx] = self.send_buf


def grouped_by_rank(comm, rows: np.ndarray, rank: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                        np.ndarray]:
    """For rows (indices) bound for ranks ``rank[rows]``: (the rows in rank order, stable;
    how many go to each rank; how many come from each), the counts by one Alltoall
    (collective; a rank's messages then follow the ranks it sends to, :func:`to_ranks`)."""
    rows = rows[np.argsort(rank[rows], kind="stable")]
    send_counts = np.bincount(rank[rows], minlength=comm.size).astype(np.int64)
    recv_counts = np.empty(comm.size, dtype=np.int64)
    comm.Alltoall([send_counts, MPI.INT64_T], [recv_counts, MPI.INT64_T])
    return rows, send_counts, recv_counts


def to_ranks(comm, values: np.ndarray, send_counts: np.ndarray,
             recv_counts: np.ndarray) -> np.ndarray:
    """Rows of ``values`` (n, ...), send_counts[r] of them (consecutive, by rank) to rank r;
    returns the rows received, by rank (one Alltoallv in which only the ranks with rows
    send; collective)."""
    values = np.ascontiguousarray(values)
    width = int(np.prod(values.shape[1:], dtype=np.int64))
    out = np.empty((int(recv_counts.sum()),) + values.shape[1:], dtype=values.dtype)
    comm.Alltoallv([values, (width * send_counts, None)], [out, (width * recv_counts, None)])
    return out
