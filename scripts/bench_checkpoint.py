"""Checkpoint size and write/read time of the fragmented heap of ``solver bench --scale``
(every face in contact: elements, springs of the base and contact records all present).

    mpiexec -n N python scripts/bench_checkpoint.py [N_ELEMENTS] [OUT_DIR]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from mpi4py import MPI

from solver.cdem import checkpoint
from solver.bench.scale import heap_config, heap_mesh
from solver.cdem.model import model_from_mesh
from solver.cdem.timeloop import TimeLoop


def _loop(comm, cfg, n_elements: int) -> TimeLoop:
    model = model_from_mesh(comm, cfg, heap_mesh(n_elements) if comm.rank == 0 else None,
                            "bench")
    return TimeLoop(comm, model, cfg.gravity,
                    0.5 * comm.allreduce(model.dt_limit_local, op=MPI.MIN))


def main(n_elements: int, out: Path) -> None:
    comm = MPI.COMM_WORLD
    cfg = heap_config()
    loop = _loop(comm, cfg, n_elements)
    for _ in range(20):
        loop.one_step(np.asarray(cfg.gravity), cfg.stages[0])
    seconds = checkpoint.save(comm, out, "bench", loop, 0, [], {})
    fresh = _loop(comm, cfg, n_elements)
    comm.Barrier()
    start = time.perf_counter()
    checkpoint.load(comm, out, "bench", fresh, [], "bench")
    read = comm.allreduce(time.perf_counter() - start, op=MPI.MAX)
    same = comm.allreduce(int(np.array_equal(fresh.m.nodes.x, loop.m.nodes.x)), op=MPI.MIN)
    if comm.rank == 0:
        size = sum(p.stat().st_size for p in (out / "checkpoint").rglob("*") if p.is_file())
        elements = loop.m.n_cells_global
        print(f"{elements} elements on {comm.size} rank(s): checkpoint {size / 2**20:.1f} MB "
              f"({size / elements:.0f} B/element), written in {seconds:.2f} s, read back in "
              f"{read:.2f} s, state restored: {bool(same)}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000,
         Path(sys.argv[2]) if len(sys.argv) > 2 else Path("out/bench_checkpoint"))
