"""MPI helpers shared by all modules: collective errors and ensemble work sharing.

Every collective function takes the communicator as its first argument (DOLFINx style).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from solver.errors import InputError


def on_root(comm, fn: Callable[[], Any]) -> Any:
    """Run ``fn`` on rank 0 and broadcast its result; an InputError there is raised on all
    ranks, so a bad mesh read on rank 0 never leaves the other ranks waiting."""
    result, error = None, None
    if comm.rank == 0:
        try:
            result = fn()
        except InputError as exc:
            error = (exc.where, exc.message)
    error = comm.bcast(error, root=0)
    if error is not None:
        raise InputError(*error)
    return comm.bcast(result, root=0)


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
