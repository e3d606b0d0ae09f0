"""Exact sums of floating-point numbers: the same bits in any order and on any partition.

A sum over the ranks of an MPI run is usually taken as each rank's own floating-point sum,
then a reduction of these: its rounding depends on which rank holds which term, so the same
run gives other last bits on another number of ranks. Here every term is added without
rounding into a long accumulator (Kulisch and Miranker 1981; the "large superaccumulator"
of Neal 2015): an integer array whose word k holds the bits of weight 2^(32 k - 1074), so
that every double, subnormals included, is a sum of at most three of them. Integer
addition is associative, so a rank's accumulator, the reduction of all ranks'
accumulators (MPI_SUM over int64) and the double rounded from it (correctly rounded to
nearest, ties to even) are the same whatever the order of the terms and the partition.

Layout of an accumulator (int64, ``WORDS`` long): words 0..BITS-1 the value, then the
counts of +inf, -inf and NaN terms (their sum is then inf, -inf or NaN as in floating
point). A word takes a signed share below 2^32 per term, so an accumulator stays exact
for 2^30 terms between two calls of :func:`normalize`, which carries every value word but
the top one into [0, 2^32). Every function here that adds many terms normalizes at its end.

Where many sums of the same terms are taken (a body's mass, a deposit map's cells), the
terms are rounded instead to a grid q = 2^k so coarse that every sum of them is exact in
double precision (:func:`exact_grid`, :func:`on_grid`).

A term costs a bit cast, a few integer operations and three additions (about 3 ns); a
reduction sends WORDS int64 per sum.
"""

from __future__ import annotations

import math

import numpy as np
from mpi4py import MPI
from numba import njit, types
from numba.extending import intrinsic

#: Value words: 68 x 32 bits cover the weights 2^-1074 .. 2^1101, every double and the
#: carries of up to 2^30 terms of the largest.
BITS = 68
POS_INF, NEG_INF, NAN = BITS, BITS + 1, BITS + 2
WORDS = BITS + 3

_MASK = 0xFFFFFFFF


def accumulator(*shape: int) -> np.ndarray:
    """A zeroed accumulator, or an array of them of the given leading shape."""
    return np.zeros((*shape, WORDS), dtype=np.int64)


@intrinsic
def _bits_of(typingctx, x):
    """The IEEE 754 bits of the double x, as an int64 (a bit cast, no conversion)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.int64))
    return types.int64(types.float64), codegen


@njit(cache=True, inline="always")
def add(acc, x):
    """acc += x, exactly (x any double). The term is m 2^(p - 1074) with m the 53-bit
    significand (the hidden bit set, or a subnormal's bits with p = 0) and p = the biased
    exponent - 1: it adds to the words p // 32 .. p // 32 + 2, with the sign taken without a
    branch (terms of either sign alternate at random in a sum of forces); a zero, the
    common term of a tally, returns at once."""
    if x == 0.0:
        return
    b = _bits_of(x)
    biased = (b >> 52) & 0x7FF
    m = b & 0xFFFFFFFFFFFFF
    if biased == 0x7FF:
        if m:
            acc[NAN] += 1
        elif b < 0:
            acc[NEG_INF] += 1
        else:
            acc[POS_INF] += 1
        return
    p = 0
    if biased:
        m |= np.int64(1) << 52
        p = biased - 1
    k = p >> 5
    o = p & 31
    sign = (b >> 63) | 1
    rest = m >> (32 - o)
    acc[k] += sign * ((m << o) & _MASK)
    acc[k + 1] += sign * (rest & _MASK)
    acc[k + 2] += sign * (rest >> 32)


@njit(cache=True)
def normalize(acc):
    """Carry the value words 0..BITS-2 into [0, 2^32) (the top word keeps the sign); the
    value is unchanged."""
    for k in range(BITS - 1):
        carry = acc[k] >> 32
        acc[k] -= carry << 32
        acc[k + 1] += carry


@njit(cache=True)
def add_all(acc, values):
    """acc += every term of ``values`` (1-D), exactly; leaves acc normalized."""
    for x in values:
        add(acc, x)
    normalize(acc)


@njit(cache=True)
def _bits(a, lo, n):
    """Bits lo .. lo+n-1 of the normalized, non-negative value words a (n <= 62)."""
    r = np.int64(0)
    k = lo >> 5
    shift = -(lo & 31)
    while shift < n and k < BITS:
        w = a[k]
        r |= (w >> -shift) if shift < 0 else (w << shift)
        shift += 32
        k += 1
    return r & ((np.int64(1) << n) - 1)


@njit(cache=True)
def value(acc):
    """The sum held in ``acc``, rounded to the nearest double (ties to even); inf, -inf or
    NaN where such terms were added, as their floating-point sum would be."""
    if acc[NAN] > 0 or (acc[POS_INF] > 0 and acc[NEG_INF] > 0):
        return math.nan
    if acc[POS_INF] > 0:
        return math.inf
    if acc[NEG_INF] > 0:
        return -math.inf
    a = acc[:BITS].copy()
    normalize(a)
    sign = 1.0
    if a[BITS - 1] < 0:
        sign = -1.0
        for k in range(BITS):
            a[k] = -a[k]
        normalize(a)
    h = BITS - 1
    while h >= 0 and a[h] == 0:
        h -= 1
    if h < 0:
        return 0.0
    if a[h] >> 32:
        return sign * math.inf
    top = 32 * h + math.frexp(float(a[h]))[1] - 1
    if top <= 52:
        return sign * math.ldexp(float(_bits(a, 0, 53)), -1074)
    lo = top - 52
    keep = _bits(a, lo, 53)
    below = lo - 1
    if _bits(a, below, 1):
        sticky = _bits(a, below & ~31, below & 31) != 0
        k = (below >> 5) - 1
        while not sticky and k >= 0:
            sticky = a[k] != 0
            k -= 1
        if sticky or keep & 1:
            keep += 1
    return sign * math.ldexp(float(keep), lo - 1074)


def of(x: float) -> np.ndarray:
    """An accumulator that holds the double x."""
    acc = accumulator()
    add_all(acc, np.array([x], dtype=np.float64))
    return acc


@njit(cache=True)
def _normalize_rows(accs):
    for k in range(accs.shape[0]):
        normalize(accs[k])


@njit(cache=True)
def _values_of_rows(accs, out):
    for k in range(accs.shape[0]):
        out[k] = value(accs[k])


def total(comm, accs: np.ndarray) -> np.ndarray:
    """The accumulators ``accs`` (..., WORDS), normalized, summed over the ranks (int64 sum,
    exact; collective)."""
    local = np.array(accs, dtype=np.int64)
    _normalize_rows(local.reshape(-1, WORDS))
    out = np.empty_like(local)
    comm.Allreduce(local, out, op=MPI.SUM)
    return out


def values(accs: np.ndarray) -> np.ndarray:
    """The doubles held in the accumulators ``accs`` (..., WORDS)."""
    rows = np.ascontiguousarray(accs, dtype=np.int64).reshape(-1, WORDS)
    out = np.empty(rows.shape[0])
    _values_of_rows(rows, out)
    return out.reshape(accs.shape[:-1])


def global_sums(comm, columns) -> np.ndarray:
    """The sums over all ranks of each of ``columns`` (k arrays of this rank's terms, their
    lengths free to differ between ranks), exact and rounded once: the same bits on any
    partition (collective)."""
    accs = accumulator(len(columns))
    for acc, col in zip(accs, columns):
        add_all(acc, np.ascontiguousarray(col, dtype=np.float64).ravel())
    return values(total(comm, accs))


def global_sum(comm, terms) -> float:
    """The sum of every term of ``terms`` over all ranks (:func:`global_sums`)."""
    return float(global_sums(comm, [terms])[0])


def exact_grid(comm, largest: float, count: int) -> float:
    """The power of two q such that the values counted over all ranks (``count`` of them
    here), each a multiple of q and at most the largest over all ranks, sum exactly in any
    order: count * largest < 2^52 q (collective; both arguments are this rank's)."""
    top = comm.allreduce(float(largest), op=MPI.MAX)
    n = comm.allreduce(int(count))
    if top <= 0.0 or n == 0:
        return 1.0
    return 2.0 ** (math.ceil(math.log2(n * top)) - 52)


def on_grid(values: np.ndarray, q: float) -> np.ndarray:
    """``values`` rounded to multiples of q."""
    return np.round(values / q) * q


def to_json(acc: np.ndarray) -> list[int]:
    """An accumulator as a JSON list of ints (normalized)."""
    a = np.array(acc, dtype=np.int64)
    normalize(a)
    return [int(w) for w in a]


def from_json(words) -> np.ndarray:
    """An accumulator from :func:`to_json`'s list, or from a plain number (a sum that was
    kept as a double)."""
    if isinstance(words, (int, float)):
        return of(float(words))
    acc = np.array(words, dtype=np.int64)
    if acc.shape != (WORDS,):
        raise ValueError(f"an exact sum has {WORDS} words, not {acc.shape}")
    return acc
