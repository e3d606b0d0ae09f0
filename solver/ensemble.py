"""One ensemble layer for every module: runs shared over the MPI ranks, rows gathered in order.

A module turns its case into a list of points (one per run), hands them with a function
``fn(index, point) -> row`` to :func:`run_ensemble` and gets, on rank 0, the rows in point
order. The runs are handed out one at a time (:func:`solver.parallel.dynamic_share`; round-robin
when MPI gives no THREAD_MULTIPLE), so ranks that draw long runs take fewer of them. Each
run depends on its point only, so the rows do not depend on the number of ranks.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from solver.ensemble_checkpoint import EnsembleCheckpoint, Stopped
from solver.errors import InputError
from solver.io.progress import Progress
from solver.parallel import dynamic_share, gather_rows


def run_ensemble(comm, points: Sequence[Any], fn: Callable[[int, Any], Any],
                 progress: Progress | None = None,
                 checkpoint: EnsembleCheckpoint | None = None) -> list[Any] | None:
    """Run ``fn(index, point)`` for every point, shared over the ranks of ``comm``.

    Returns the rows in point order on rank 0 and None on the other ranks. ``progress``
    (rank 0 prints) is updated with the number of runs handed out, and once more at the end.
    Collective. A point whose run raises :class:`InputError` stops this rank's work; every rank
    then raises the error of the lowest failing point, so the message is the same on 1 or N
    ranks. Any other exception is a bug and goes on at once (the CLI aborts all ranks).
    ``checkpoint`` (:mod:`solver.ensemble_checkpoint`) adds checkpoints, the restart of the
    runs its checkpoint left unfinished, and clean stops at a signal
    (:class:`solver.interrupt.Interrupted` on every rank).
    """
    on_hand_out = progress.update if progress is not None else None
    todo = checkpoint.todo(len(points)) if checkpoint is not None else range(len(points))
    mine = checkpoint.restored() if checkpoint is not None else []
    error = None
    for k in dynamic_share(comm, len(todo), on_hand_out,
                           checkpoint.idle if checkpoint is not None else None):
        index = todo[k]
        if error is not None or (checkpoint is not None and checkpoint.stopped()):
            continue
        try:
            mine.append((index, fn(index, points[index]) if checkpoint is None
                         else checkpoint.call(fn, index, points[index])))
        except InputError as exc:
            error = (index, exc.where, exc.message)
        except Stopped:
            continue
    if checkpoint is not None:
        checkpoint.wait()
    errors = [e for e in comm.allgather(error) if e is not None]
    if errors:
        raise InputError(*min(errors)[1:])
    if checkpoint is not None:
        checkpoint.raise_if_stopped()
    rows = gather_rows(comm, mine)
    if progress is not None:
        progress.update(len(points), force=True)
    return rows
