"""Exact sums (solver.exact_sum) against exact rational arithmetic."""

import math
from fractions import Fraction

import numpy as np
import pytest
from mpi4py import MPI

from solver import exact_sum


def correctly_rounded(terms) -> float:
    """The sum of the doubles ``terms`` in exact rational arithmetic, rounded once (inf
    beyond the largest double)."""
    exact = sum((Fraction(float(t)) for t in terms), Fraction(0))
    try:
        return float(exact)
    except OverflowError:
        return math.inf if exact > 0 else -math.inf


def held(terms) -> float:
    acc = exact_sum.accumulator()
    exact_sum.add_all(acc, np.asarray(terms, dtype=np.float64))
    return float(exact_sum.value(acc))


def _random(rng, n, spread):
    return rng.standard_normal(n) * 2.0 ** rng.integers(-spread, spread, n)


TINY = 5e-324
CASES = {
    "empty": [],
    "one": [0.1],
    "cancel to zero": [1e300, -1e300, 3.0, -3.0],
    "cancel to the small term": [1e308, 1.0, -1e308],
    "halfway, round to even": [1.0, 2.0 ** -53],
    "halfway plus a sticky bit far below": [1.0, 2.0 ** -53, 2.0 ** -1000],
    "halfway below zero": [-1.0, -(2.0 ** -53)],
    "subnormals": [TINY, TINY, 3 * TINY, -TINY],
    "subnormal and normal": [2.0 ** -1022, -TINY],
    "largest doubles overflow": [1.7976931348623157e308, 1.7976931348623157e308],
    "largest doubles cancel": [1.7976931348623157e308, 1.7976931348623157e308,
                               -1.7976931348623157e308],
    "negative sum": [-0.1, -0.2, 0.05],
    "many tenths": [0.1] * 1000,
}


@pytest.mark.parametrize("terms", CASES.values(), ids=CASES.keys())
def test_the_sum_is_the_exact_one_rounded_once(terms):
    expected = correctly_rounded(terms)
    assert held(terms) == expected
    assert math.copysign(1.0, held(terms)) == math.copysign(1.0, expected) or expected == 0.0


@pytest.mark.parametrize("spread", [4, 60, 1000])
def test_random_terms_of_any_spread_sum_exactly(spread):
    rng = np.random.default_rng(spread)
    for _ in range(20):
        terms = _random(rng, int(rng.integers(1, 300)), spread)
        assert held(terms) == correctly_rounded(terms) == math.fsum(terms)


def test_the_same_bits_in_any_order_and_any_split():
    """What makes a sum over ranks independent of the partition: any order of the terms,
    and the sum of the accumulators of any split of them, hold the same value."""
    rng = np.random.default_rng(7)
    terms = _random(rng, 5000, 200)
    whole = held(terms)
    assert held(rng.permutation(terms)) == whole
    for parts in (2, 3, 7):
        cut = np.sort(rng.choice(np.arange(1, len(terms)), parts - 1, replace=False))
        accs = exact_sum.accumulator(parts)
        for acc, piece in zip(accs, np.split(rng.permutation(terms), cut)):
            exact_sum.add_all(acc, piece)
        assert exact_sum.value(accs.sum(axis=0)) == whole
    assert whole == math.fsum(terms)


@pytest.mark.parametrize("terms, expected", [
    ([1.0, math.inf], math.inf), ([1.0, -math.inf], -math.inf),
    ([math.inf, -math.inf], math.nan), ([math.nan, 1.0], math.nan),
])
def test_non_finite_terms_give_the_floating_point_result(terms, expected):
    got = held(terms)
    assert (math.isnan(got) and math.isnan(expected)) or got == expected


def test_an_accumulator_round_trips_through_json():
    rng = np.random.default_rng(3)
    acc = exact_sum.accumulator()
    exact_sum.add_all(acc, _random(rng, 100, 300))
    back = exact_sum.from_json(exact_sum.to_json(acc))
    assert exact_sum.value(back) == exact_sum.value(acc)
    assert exact_sum.value(exact_sum.from_json(0.1)) == 0.1
    with pytest.raises(ValueError):
        exact_sum.from_json([1, 2, 3])


def test_columns_sum_like_each_column_alone():
    rng = np.random.default_rng(11)
    terms = _random(rng, 400, 100).reshape(100, 4)
    got = exact_sum.global_sums(MPI.COMM_SELF, list(terms.T))
    assert got.tolist() == [correctly_rounded(terms[:, j]) for j in range(4)]
    assert exact_sum.global_sum(MPI.COMM_SELF, terms[:, 1]) == got[1]


@pytest.mark.mpi(min_size=2)
def test_a_global_sum_has_the_same_bits_on_any_partition():
    """Each rank holds another share of one list of terms; the global sum is the exact
    one, rounded once, whatever the shares."""
    comm = MPI.COMM_WORLD
    rng = np.random.default_rng(5)
    terms = _random(rng, 3001, 300)
    expected = correctly_rounded(terms)
    for shift in (0, 1, 1500):
        mine = np.array_split(np.roll(terms, shift), comm.size)[comm.rank]
        assert exact_sum.global_sum(comm, mine[::-1]) == expected
