"""``solver bench --scale N``: the CDEM engine at scale, on a fragmented heap.

The heap: a fractured column of w x w x 2w separate unit cubes (every face free for contact,
neighbouring faces coincident, nothing glued) standing on a held base slab of glued
elements, under gravity tilted 30 deg (friction 25 deg), so that the column settles,
shears and slides from the first step: blocks touch and move. It is partitioned by RCB.

Per rank, over the timed steps (after warm-up steps that compile the kernels and load the
contacts), it prints:

* element-steps/s: the rank's elements x steps / wall time of the whole step;
* contact updates/s: the rank's semi-springs plus semi-edges evaluated per second of the
  contact phase (ghost refresh, geometry, law, node shares);
* bytes sent and received per step by the rank's exchanges (interface halo, ghost
  refresh, node shares, and renewals: boxes, cells, ghost elements), counted from the
  buffers, and the messages it sends per step in its neighbour collectives (one to each
  neighbour per collective; the renewals' allgather and alltoall not counted);
* seconds per step: ``step_s`` in the whole step, ``waiting_s`` the part of it in the
  exchanges (neighbour collectives and reductions), ``busy_s`` = step_s - waiting_s, and
  ``cpu_s`` the process's CPU time (MPI waits by polling, so waiting burns CPU too);
* peak RSS [MB], beyond the fixed part: the peak of the same run on an 8-cube heap.
"""

from __future__ import annotations

import json
import math
import resource
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


def heap_mesh(n_elements: int) -> HexMesh:
    """A column of about n_elements separate unit cubes (w x w x 2w) on a base slab."""
    w = max(1, round((n_elements / 2.0) ** (1.0 / 3.0)))
    base = box(w + 4, w + 4, 1, size=(w + 4.0, w + 4.0, 1.0), origin=(-2.0, -2.0, -1.0))
    column = separate_blocks(w, w, 2 * w, size=(w, w, 2.0 * w))
    return concatenate([base, HexMesh(column.points, column.cells, column.groups + 1)],
                       {"base": 0, "heap": 1})


def heap_config() -> Config:
    """The heap's case: soft rock, contact, held base, gravity tilted TILT_DEG."""
    tilt = math.radians(TILT_DEG)
    data = {"mesh": {"boxes": [{"n": [1, 1, 1], "size": [1.0, 1.0, 1.0]}]},
            "materials": [{"density": 2600.0, "youngs_modulus": 1e9, "poisson_ratio": 0.25}],
            "contact": {"enabled": True, "friction_deg": 25.0, "restitution": 0.3},
            "boundaries": [{"group": "base"}],
            "gravity": [9.81 * math.sin(tilt), 0.0, -9.81 * math.cos(tilt)],
            "stages": [{"kind": "dynamic", "max_steps": 10, "damping": "none"}],
            "partitioner": "rcb"}
    return from_dict(Config, data, "bench", "", None)


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def measure_heap(comm, n_elements: int, steps: int, warmup: int = 30) -> dict:
    """Per-rank figures of the heap (module docstring), gathered on rank 0."""
    cfg = heap_config()
    model = model_from_mesh(comm, cfg, heap_mesh(n_elements) if comm.rank == 0 else None,
                            "bench")
    dt = 0.5 * comm.allreduce(model.dt_limit_local, op=MPI.MIN)
    loop = TimeLoop(comm, model, cfg.gravity, dt)
    stage = cfg.stages[0]
    g = np.asarray(cfg.gravity)
    for _ in range(warmup):
        loop.one_step(g, stage)
    traffic = [model.interfaces.neighbours.traffic, model.contact.traffic,
               model.contact.renewal_traffic]
    sent0 = sum(t.sent for t in traffic)
    received0 = sum(t.received for t in traffic)
    messages0 = sum(t.messages for t in traffic)
    loop.contact_seconds = loop.step_seconds = loop.waiting_seconds = 0.0
    renewals0 = model.contact.renewals
    comm.Barrier()
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(steps):
        loop.one_step(g, stage)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    c = model.contact
    springs, edges = c.semi_springs, c.semi_edges
    row = {"rank": comm.rank, "elements": len(model.elements),
           "records": len(springs) + len(edges), "ghosts": len(c.mesh.gid) - c.mesh.n_own,
           "neighbours": len(c.neighbours.ranks),
           "element_steps_per_s": len(model.elements) * steps / wall,
           "contact_updates_per_s": (len(springs) + len(edges)) * steps
           / max(loop.contact_seconds, 1e-300),
           "contact_fraction": loop.contact_seconds / wall,
           "bytes_sent_per_step": (sum(t.sent for t in traffic) - sent0) / steps,
           "bytes_received_per_step": (sum(t.received for t in traffic) - received0) / steps,
           "messages_per_step": (sum(t.messages for t in traffic) - messages0) / steps,
           "step_s": loop.step_seconds / steps, "waiting_s": loop.waiting_seconds / steps,
           "busy_s": (loop.step_seconds - loop.waiting_seconds) / steps, "cpu_s": cpu / steps,
           "in_compression": int(np.count_nonzero(springs.f_n > 0)
                                 + np.count_nonzero(edges.f_n > 0)),
           "model_mb": model.nbytes() / 2 ** 20, "peak_rss_mb": _peak_rss_mb()}
    rows = comm.gather(row, root=0)
    return {"ranks": comm.size, "steps": steps, "renewals": model.contact.renewals - renewals0,
            "elements": comm.allreduce(len(model.elements)), "per_rank": rows}


def run_scale_bench(comm, n_elements: int, steps: int, json_path: str | None = None) -> dict:
    """Measure an 8-cube heap (its peak RSS is the fixed part: interpreter, libraries,
    compiled kernels), then the heap of n_elements; print the per-rank table."""
    fixed = measure_heap(comm, 8, 2, warmup=2)
    report = measure_heap(comm, n_elements, steps)
    if comm.rank == 0:
        for row, tiny in zip(report["per_rank"], fixed["per_rank"]):
            row["fixed_rss_mb"] = tiny["peak_rss_mb"]
            row["rss_beyond_fixed_mb"] = row["peak_rss_mb"] - tiny["peak_rss_mb"]
        head = (f"heap of {report['elements']} elements on {report['ranks']} rank(s), "
                f"{steps} steps ({report['renewals']} renewals)")
        cols = ("rank", "elements", "records", "ghosts", "neighbours", "in_compression",
                "element_steps_per_s", "contact_updates_per_s", "contact_fraction",
                "bytes_sent_per_step", "bytes_received_per_step", "messages_per_step",
                "step_s", "waiting_s", "busy_s", "cpu_s", "model_mb", "peak_rss_mb",
                "rss_beyond_fixed_mb")
        lines = [head, "  ".join(cols)]
        for r in report["per_rank"]:
            lines.append("  ".join(f"{r[c]:.3g}" if isinstance(r[c], float) else str(r[c])
                                   for c in cols))
        print("\n".join(lines), flush=True)
        if json_path:
            with open(json_path, "w") as fh:
                json.dump(report, fh, indent=2)
    return report
