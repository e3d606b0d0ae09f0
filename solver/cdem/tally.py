"""Energy tallies: named exact sums that the kernels add to and a checkpoint carries.

A tally is one record with a field per energy [J], each an exact-sum accumulator
(solver.exact_sum): a kernel adds a spring's or a contact's share with
``exact_sum.add(tally.name, joules)`` and normalizes the fields it added to before it
returns. Since the sums are exact, the reported totals (summed over the ranks) are the
same on any partition, and a restart on any partition goes on to the last bit: the
checkpoint keeps each field's global accumulator, which rank 0 takes back while the other
ranks start from zero.
"""

from __future__ import annotations

import numpy as np

from solver import exact_sum


def record(*names: str) -> np.dtype:
    """The dtype of a tally with the fields ``names``."""
    return np.dtype([(name, np.int64, (exact_sum.WORDS,)) for name in names])


def zeroed(dtype: np.dtype) -> np.void:
    """A zeroed tally of ``dtype``: a view into its own one-row array, so that the kernels
    that take it add to it in place."""
    return np.zeros(1, dtype)[0]


def reset(tally: np.void, names) -> None:
    """Set the fields ``names`` of ``tally`` to zero."""
    for name in names:
        tally[name][:] = 0


def local_sum(tally: np.void, names) -> np.ndarray:
    """The accumulator of this rank's share of the fields ``names`` together (exact)."""
    acc = exact_sum.accumulator()
    for name in names:
        acc += tally[name]
    return acc


def totals(comm, tally: np.void, names) -> dict[str, np.ndarray]:
    """Each field of ``names`` summed over the ranks, as an accumulator (collective)."""
    summed = exact_sum.total(comm, np.stack([tally[name] for name in names]))
    return dict(zip(names, summed))


def to_checkpoint(comm, tally: np.void, names) -> dict[str, list[int]]:
    """The fields ``names`` summed over the ranks, for a checkpoint's manifest
    (solver.exact_sum.to_json; collective)."""
    return {name: exact_sum.to_json(acc) for name, acc in totals(comm, tally, names).items()}


def restore(comm, tally: np.void, saved: dict, names) -> None:
    """Take :func:`to_checkpoint`'s fields back: rank 0 the global sums, the others zero.
    A field kept as a double, or fields kept as a list of doubles in the order of ``names``
    (checkpoints of earlier solvers), are taken as those doubles."""
    if not isinstance(saved, dict):
        saved = dict(zip(names, saved))
    reset(tally, names)
    if comm.rank == 0:
        for name in names:
            tally[name][:] = exact_sum.from_json(saved[name])


def value(tally: np.void, name: str) -> float:
    """This rank's share of the field ``name``, as a double."""
    return float(exact_sum.value(tally[name]))
