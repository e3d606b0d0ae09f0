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


REQUEST, REPLY = 11, 12


def dynamic_share(comm, n_items: int, on_hand_out: Callable[[int], None] | None = None,
                  idle: Callable[[], None] | None = None):
    """Yield the item indices this rank runs, handed out one at a time (self-scheduling).

    Every rank, rank 0 included, works on items; when a rank finishes one it gets the next
    free index, so ranks that draw long items take fewer of them (dynamic load balancing).
    Rank 0 serves the other ranks' requests from a helper thread that polls with a
    non-blocking receive, so its own work is not held up. Collective: every rank must iterate
    the generator to its end (an error on a rank ends the run through the CLI's MPI abort).
    ``on_hand_out(count)`` is called on rank 0 with the number of items handed out so far
    (for a progress line). Falls back to :func:`my_share` on one rank or when MPI does not
    give THREAD_MULTIPLE (the server thread calls MPI while rank 0's own work may). Once
    every item is handed out, rank 0 waits for the other ranks to take their last ones,
    calling ``idle()`` every few milliseconds meanwhile (to take part in the ranks' polls,
    :mod:`solver.ensemble_checkpoint`).
    """
    from mpi4py import MPI

    if comm.size == 1 or MPI.Query_thread() < MPI.THREAD_MULTIPLE:
        for count, i in enumerate(my_share(comm, n_items)):
            if on_hand_out is not None:
                on_hand_out(count + 1)
            yield int(i)
        return
    channel = comm.Dup()
    if channel.rank == 0:
        yield from _serve_and_work(channel, n_items, on_hand_out, idle)
    else:
        request, reply = np.zeros(1, np.int64), np.zeros(1, np.int64)
        while True:
            channel.Send(request, dest=0, tag=REQUEST)
            channel.Recv(reply, source=0, tag=REPLY)
            if reply[0] < 0:
                break
            yield int(reply[0])
    channel.Free()


def _serve_and_work(channel, n_items: int, on_hand_out, idle):
    """Rank 0: a thread answers requests while this generator yields rank 0's own items. The
    thread is joined once the items are all handed out (calling ``idle`` while it waits); if
    rank 0's own work fails, the error goes on at once (the CLI then aborts all ranks)."""
    import threading
    import time

    from mpi4py import MPI

    lock = threading.Lock()
    handed = [0]

    def take() -> int:
        with lock:
            index = handed[0]
            handed[0] += 1
        if on_hand_out is not None:
            on_hand_out(min(handed[0], n_items))
        return index if index < n_items else -1

    def serve() -> None:
        buf, status = np.zeros(1, np.int64), MPI.Status()
        finished = 0
        while finished < channel.size - 1:
            req = channel.Irecv(buf, source=MPI.ANY_SOURCE, tag=REQUEST)
            while not req.Test(status):
                time.sleep(0.002)
            index = take()
            channel.Send(np.array([index], np.int64), dest=status.Get_source(), tag=REPLY)
            finished += index < 0

    server = threading.Thread(target=serve, daemon=True)
    server.start()
    while (index := take()) >= 0:
        yield index
    while server.is_alive():
        if idle is not None:
            idle()
        server.join(timeout=0.005)
