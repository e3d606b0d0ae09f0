"""Ghost-node halo exchange for interface springs that cross partition boundaries.

A spring is owned by the rank of its A element. The owner holds the B-side nodes of its
cross-rank springs as ghosts, appended after its own nodes. Each step:

* ``forward(du)``: owners of B nodes send their step increments to the ranks holding them as
  ghosts (owner -> ghost);
* ``reverse_set(f_slot)``: the spring-force slots the owner of a spring wrote into its ghost
  rows are sent back and written into the owners' slots (ghost -> owner). Every slot has
  one writer, so nothing is summed across ranks.

Rows are rows of any (n, 3) array: node rows for ``forward``, node-slot rows (3 node + slot)
for ``reverse_set``. Both use one ``Neighbor_alltoallv`` on a distributed-graph communicator
built once (DOLFINx's scatter_forward / scatter_reverse pattern).
"""

from __future__ import annotations

import numpy as np
from mpi4py import MPI


class NodeHalo:
    """send[r]: my rows rank r holds as ghosts; recv[r]: my ghost rows owned by r (the same
    rows in the same order on both sides)."""

    def __init__(self, comm, send: dict[int, np.ndarray], recv: dict[int, np.ndarray]):
        self.neighbours = sorted(set(send) | set(recv))
        empty = np.zeros(0, dtype=np.int64)
        self.send_idx = np.concatenate([send.get(r, empty) for r in self.neighbours] or [empty])
        self.recv_idx = np.concatenate([recv.get(r, empty) for r in self.neighbours] or [empty])
        self.send_counts = np.array([3 * len(send.get(r, empty)) for r in self.neighbours],
                                    dtype=np.int64)
        self.recv_counts = np.array([3 * len(recv.get(r, empty)) for r in self.neighbours],
                                    dtype=np.int64)
        self.graph = comm.Create_dist_graph_adjacent(self.neighbours, self.neighbours,
                                                     reorder=False)
        self.send_buf = np.zeros((len(self.send_idx), 3))
        self.recv_buf = np.zeros((len(self.recv_idx), 3))

    @property
    def active(self) -> bool:
        return bool(self.neighbours)

    def _exchange(self, send_buf, send_counts, recv_buf, recv_counts) -> None:
        self.graph.Neighbor_alltoallv([send_buf, (send_counts, None), MPI.DOUBLE],
                                      [recv_buf, (recv_counts, None), MPI.DOUBLE])

    def forward(self, values: np.ndarray) -> None:
        """Copy owners' rows of ``values`` into the ghost rows of the holding ranks."""
        if not self.active:
            return
        np.take(values, self.send_idx, axis=0, out=self.send_buf)
        self._exchange(self.send_buf, self.send_counts, self.recv_buf, self.recv_counts)
        values[self.recv_idx] = self.recv_buf

    def reverse_set(self, values: np.ndarray) -> None:
        """Write the ghost rows of ``values`` into their owners' rows."""
        if not self.active:
            return
        np.take(values, self.recv_idx, axis=0, out=self.recv_buf)
        self._exchange(self.recv_buf, self.recv_counts, self.send_buf, self.send_counts)
        values[self.send_idx] = self.send_buf
