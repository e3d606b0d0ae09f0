"""Energy tallies (solver.cdem.tally): named exact sums, and what a checkpoint keeps of them."""

from fractions import Fraction

import numpy as np
import pytest
from mpi4py import MPI

from solver import exact_sum
from solver.cdem import tally

NAMES = ("released", "friction")


def _filled() -> np.void:
    t = tally.zeroed(tally.record(*NAMES))
    exact_sum.add_all(t["released"], np.array([0.1, 0.2, 1e20, -1e20]))
    exact_sum.add_all(t["friction"], np.array([3.5, 1e-300]))
    return t


@pytest.mark.parametrize("kept", ["exact sums", "doubles by name", "doubles in order"])
def test_a_tally_comes_back_from_what_a_checkpoint_kept(kept):
    """The exact sums of this solver's checkpoints, and the doubles of earlier solvers' (by
    name, or a list in the order of the names)."""
    comm = MPI.COMM_SELF
    t = _filled()
    saved = {"exact sums": tally.to_checkpoint(comm, t, NAMES),
             "doubles by name": {n: tally.value(t, n) for n in NAMES},
             "doubles in order": [tally.value(t, n) for n in NAMES]}[kept]
    back = tally.zeroed(tally.record(*NAMES))
    back["friction"][:] = 7          # whatever it held is replaced
    tally.restore(comm, back, saved, NAMES)
    assert [tally.value(back, n) for n in NAMES] == [float(Fraction(0.1) + Fraction(0.2)), 3.5]
    if kept == "exact sums":
        assert np.array_equal(back["friction"], t["friction"])


def test_reset_and_local_sum():
    t = _filled()
    exact = sum(map(Fraction, (0.1, 0.2, 1e20, -1e20, 3.5, 1e-300)), Fraction(0))
    assert exact_sum.value(tally.local_sum(t, NAMES)) == float(exact)
    tally.reset(t, ["released"])
    assert tally.value(t, "released") == 0.0 and tally.value(t, "friction") == 3.5
