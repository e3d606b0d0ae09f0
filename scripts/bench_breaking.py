"""The step while a glued mass breaks up: where a fragmenting runout's time goes.

A column of w x w x 2w glued unit cubes (weak interfaces: tensile strength T, cohesion C)
stands on a held slab under gravity tilted 30 deg; its interfaces break from the first
steps on, a few dozen springs in most steps, as in the trigger of the Jiweishan case. With
BLOCK > 0 the column is cut into separate blocks of BLOCK^3 glued cubes instead, every
element then in contact from the first step, as in the runout of a mass that has broken
up and goes on breaking (BLOCK 2, T 5, C 50: some 40 springs break in most steps).

Every step that breaks a spring changes the glue (the glue table, the bodies, the new
contact records) and the next one renews the potential targets of the faces set free (a
partial renewal). Rank 0 prints, for the timed steps, the mean time per step and per part
(the largest over the ranks), and the counts (records at the end; ghost elements after a
ghost exchange, the mean over the exchanges of the rank with the most):

    mpiexec -n 2 python scripts/bench_breaking.py [W] [STEPS] [T_PA] [C_PA] [BLOCK]

(default 24, 300, 2e3, 2e4, 0: 28,432 elements, about 160 breaking steps). The parts are
timed by wrapping the pipeline's methods; they nest (a partial renewal includes its ghost
exchange and candidate search).
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np
from mpi4py import MPI

from solver.case import from_dict
from solver.cdem.config import Config
from solver.cdem.model import model_from_mesh
from solver.cdem.timeloop import TimeLoop
from solver.mesh.build import concatenate
from solver.mesh.generate import box, separate_blocks
from solver.mesh.hexmesh import HexMesh

TILT_DEG = 30.0
#: The pipeline methods timed (pipeline.Contact unless qualified).
PARTS = ("set_glue", "renew_fresh", "renew", "_exchange_ghosts", "_near_fresh",
         "_carried_candidates", "_node_forces")


def breaking_column(w: int, tensile: float, cohesion: float,
                    block: int = 0) -> tuple[Config, HexMesh]:
    tilt = math.radians(TILT_DEG)
    data = {"mesh": {"boxes": [{"n": [1, 1, 1], "size": [1.0, 1.0, 1.0]}]},
            "materials": [{"density": 2600.0, "youngs_modulus": 1e9, "poisson_ratio": 0.25,
                           "tensile_strength": tensile, "cohesion": cohesion}],
            "contact": {"enabled": True, "friction_deg": 25.0, "restitution": 0.3},
            "boundaries": [{"group": "base"}],
            "gravity": [9.81 * math.sin(tilt), 0.0, -9.81 * math.cos(tilt)],
            "stages": [{"kind": "dynamic", "max_steps": 10, "damping": "none"}],
            "partitioner": "rcb"}
    cfg = from_dict(Config, data, "bench_breaking", "", None)
    base = box(w + 4, w + 4, 1, size=(w + 4.0, w + 4.0, 1.0), origin=(-2.0, -2.0, -1.0))
    column = (separate_blocks(w, w, 2 * w, size=(w, w, 2.0 * w), block=block) if block
              else box(w, w, 2 * w, size=(w, w, 2.0 * w)))
    mesh = concatenate([base, HexMesh(column.points, column.cells, column.groups + 1)],
                       {"base": 0, "column": 1})
    return cfg, mesh


def _timed(seconds: dict, obj, name: str, label: str) -> None:
    method = getattr(obj, name)

    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        out = method(*args, **kwargs)
        seconds[label] = seconds.get(label, 0.0) + time.perf_counter() - start
        return out

    setattr(obj, name, wrapper)


def _ghosts_counted(contact) -> list[int]:
    """The ghost elements a rank holds after each of its ghost exchanges, appended to the
    list returned as they happen."""
    counts = []
    exchange = contact._exchange_ghosts

    def counted(*args, **kwargs):
        out = exchange(*args, **kwargs)
        counts.append(len(contact.mesh.gid) - contact.mesh.n_own)
        return out

    contact._exchange_ghosts = counted
    return counts


def main(w: int, steps: int, tensile: float, cohesion: float, block: int) -> None:
    comm = MPI.COMM_WORLD
    cfg, mesh = breaking_column(w, tensile, cohesion, block)
    model = model_from_mesh(comm, cfg, mesh if comm.rank == 0 else None, "bench_breaking")
    dt = 0.5 * comm.allreduce(model.dt_limit_local, op=MPI.MIN)
    loop = TimeLoop(comm, model, cfg.gravity, dt)
    stage, g = cfg.stages[0], np.asarray(cfg.gravity)
    seconds: dict[str, float] = {}
    for name in PARTS:
        _timed(seconds, model.contact, name, name)
    _timed(seconds, model.contact.own, "bodies", "bodies")
    _timed(seconds, model.interfaces, "glued_neighbours", "glued_neighbours")
    exchanged = _ghosts_counted(model.contact)
    broken = breaking = 0
    comm.Barrier()
    start = time.perf_counter()
    for _ in range(steps):
        n = loop.one_step(g, stage)
        broken += n
        breaking += n > 0
    wall = comm.allreduce(time.perf_counter() - start, op=MPI.MAX)
    parts = {k: comm.allreduce(seconds.get(k, 0.0), op=MPI.MAX)
             for k in (*PARTS, "bodies", "glued_neighbours")}
    contact = comm.allreduce(loop.contact_seconds, op=MPI.MAX)
    records = comm.allreduce(len(model.contact.semi_springs) + len(model.contact.semi_edges))
    ghosts = comm.allreduce(float(np.mean(exchanged)) if exchanged else 0.0, op=MPI.MAX)
    if comm.rank == 0:
        print(f"{model.n_cells_global} elements on {comm.size} rank(s), {steps} steps: "
              f"{breaking} broke springs ({broken} in all); {records} contact records at the "
              f"end, {ghosts:.0f} ghost elements per exchange (mean; the busiest rank's); "
              f"{1e3 * wall / steps:.1f} ms/step, contact {1e3 * contact / steps:.1f}")
        for name, t in sorted(parts.items(), key=lambda kv: -kv[1]):
            print(f"  {name:20s} {1e3 * t / steps:8.2f} ms/step  {100 * t / wall:5.1f} %")


if __name__ == "__main__":
    args = sys.argv[1:]
    main(int(args[0]) if args else 24, int(args[1]) if len(args) > 1 else 300,
         float(args[2]) if len(args) > 2 else 2e3, float(args[3]) if len(args) > 3 else 2e4,
         int(args[4]) if len(args) > 4 else 0)
