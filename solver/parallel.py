"""MPI helpers shared by all modules: collective errors and ensemble work sharing.

Every collective function takes the communicator as its first argument (DOLFINx style).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from mpi4py import MPI

from solver.errors import InputError


def on_root(comm, fn: Callable[[], Any]) -> Any:
    """Run ``fn`` on rank 0 and broadcast its result; an InputError there is raised on all
    ranks, so a bad mesh read on rank 0 never leaves the other ranks waiting."""
    return comm.bcast(root_only(comm, fn), root=0)


def root_only(comm, fn: Callable[[], Any]) -> Any:
    """Run ``fn`` on rank 0 only and return its result there (None elsewhere); an InputError
    there is raised on all ranks."""
    result, error = None, None
    if comm.rank == 0:
        try:
            result = fn()
        except InputError as exc:
            error = (exc.where, exc.message)
    error = comm.bcast(error, root=0)
    if error is not None:
        raise InputError(*error)
    return result


def global_median(comm, values: np.ndarray) -> float:
    """The median of the non-negative ``values`` of all ranks together, exactly as np.median
    of their concatenation (the middle value, or the mean of the two middle ones), found by
    bisection on the float bit patterns with one integer reduction per halving."""
    bits = np.ascontiguousarray(values, dtype=np.float64).view(np.int64)
    n = comm.allreduce(len(bits))
    if n == 0:
        return 0.0
    low = comm.allreduce(int(bits.min(initial=np.iinfo(np.int64).max)), op=MPI.MIN)
    high = comm.allreduce(int(bits.max(initial=0)), op=MPI.MAX)

    def kth(k: int) -> float:
        lo, hi = low, high
        while lo < hi:
            mid = (lo + hi) // 2
            if comm.allreduce(int(np.count_nonzero(bits <= mid))) >= k + 1:
                hi = mid
            else:
                lo = mid + 1
        return float(np.array(lo, dtype=np.int64).view(np.float64))

    return 0.5 * (kth((n - 1) // 2) + kth(n // 2))


def my_share(comm, n_items: int) -> np.ndarray:
    """Indices of the items this rank runs in an ensemble (round-robin, deterministic)."""
    return np.arange(comm.rank, n_items, comm.size)


def gather_rows(comm, rows: list[tuple[int, Any]]) -> list[Any] | None:
    """Gather ``(index, row)`` pairs from all ranks; rank 0 gets the rows in index order."""
    gathered = comm.gather(rows, root=0)
    if comm.rank != 0:
        return None
    flat = sorted(((i, r) for part in gathered for i, r in part), key=lambda pair: pair[0])
    return [r for _, r in flat]
