"""What a renewal's neighbour search costs one rank, as the rank count grows.

    python scripts/bench_renewal_ranks.py --ranks 16 64 256 1024 4096 --per-rank 206

At every renewal each rank finds the ranks whose parts come within reach of its own
(solver.cdem.contact.detect, "Ghost faces", level 1). This runs that search for one interior
rank of p simulated ranks, in one process: a heap of unit cubes cut into a near-cubic grid
of p parts of ``--per-rank`` cubes, each part bounded by its surface boxes
(``surface_boxes``, up to 64). It times, per rank and renewal (best of ``--repeat``):

* ``holding``: what the solver does, near_holding_boxes on the table of every rank's
  holding row (the Allgather's), then boxes_within with the boxes of the ranks it keeps
  (the Alltoallv's);
* ``all pairs``: boxes_within with the boxes of every other rank, as if every rank's boxes
  were gathered: the work that grows with the rank count (the reference).

and gives the bytes a rank receives for each, and the neighbours found (equal for both).
MPI's own time for the Allgather (log2 p latencies and 64 B per rank) is not in it.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from solver.cdem.contact.detect import (boxes_within, holding_row, near_holding_boxes,
                                        surface_boxes)

#: h = largest face radius of a unit cube + the search margin (solver.cdem.contact, 0.25 of
#: the median face size).
REACH = math.sqrt(0.5) + 0.25


def grid_of(p: int) -> tuple[int, int, int]:
    """The most cubic px x py x pz = p."""
    best = (p, 1, 1)
    for px in range(1, p + 1):
        for py in range(1, p // px + 1):
            if p % (px * py) == 0:
                pz = p // (px * py)
                if max(px, py, pz) - min(px, py, pz) < max(best) - min(best):
                    best = (px, py, pz)
    return best


def part_boxes(p: int, per_rank: int) -> list[np.ndarray]:
    """The surface boxes of each of p parts of n x n x n unit cubes (n^3 ~ per_rank)."""
    n = max(1, round(per_rank ** (1 / 3)))
    cube = np.stack(np.meshgrid(*(np.arange(n),) * 3, indexing="ij"), -1).reshape(-1, 3)
    px, py, pz = grid_of(p)
    out = []
    for i in range(px):
        for j in range(py):
            for k in range(pz):
                lo = (cube + n * np.array([i, j, k])).astype(float)
                out.append(surface_boxes(lo, lo + 1.0))
    return out


def best_of(repeat: int, work) -> tuple[float, object]:
    """(least seconds of ``repeat`` calls of work, its result)."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - start)
    return min(times), result


def measure(p: int, per_rank: int, repeat: int) -> dict:
    """Both searches for the most central of p parts of per_rank cubes (module docstring):
    their times, the neighbours found (checked equal), the ranks kept by holding box and
    the kB received for each."""
    boxes = part_boxes(p, per_rank)
    table = np.array([holding_row(b, math.sqrt(0.5)) for b in boxes])
    me = int(np.argmin(np.linalg.norm(table[:, :3] - table[:, :3].mean(axis=0), axis=1)))
    lo, hi = np.ascontiguousarray(boxes[me][:, :3]), np.ascontiguousarray(boxes[me][:, 3:])

    def meet(r):
        return len(boxes_within(lo, hi, boxes[r], REACH)) > 0

    def holding():
        near = near_holding_boxes(table, me, REACH)
        return [int(r) for r in near if meet(r)], near

    def all_pairs():
        return [r for r in range(p) if r != me and meet(r)]

    meet(me)
    t_hold, (found, near) = best_of(repeat, holding)
    t_all, found_all = best_of(repeat, all_pairs)
    if found != found_all:
        raise SystemExit(f"p = {p}: the two searches disagree")
    return {"ranks": p, "neighbours": len(found), "near_holding": len(near),
            "holding_ms": 1e3 * t_hold, "all_pairs_ms": 1e3 * t_all,
            "holding_kB": ((p - 1) * table[0].nbytes + sum(boxes[r].nbytes for r in near)) / 1e3,
            "all_pairs_kB": sum(b.nbytes + 8 for r, b in enumerate(boxes) if r != me) / 1e3}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ranks", type=int, nargs="+", default=[16, 64, 256, 1024])
    ap.add_argument("--per-rank", type=int, default=206, help="cubes per part")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    cols = ["ranks", "neighbours", "near_holding", "holding_ms", "all_pairs_ms", "holding_kB",
            "all_pairs_kB"]
    print("  ".join(cols))
    for p in args.ranks:
        row = measure(p, args.per_rank, args.repeat)
        print("  ".join(f"{row[c]:.3g}" if isinstance(row[c], float) else str(row[c])
                        for c in cols), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
