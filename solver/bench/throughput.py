"""``solver bench``: CDEM throughput on a generated block of hexahedra.

Prints, per rank count (1 rank alone, then all ranks of the communicator):
* element-steps/s per rank of the whole step (nodes + elements + springs + halo) and of the
  element + interface-spring kernels alone;
* the parallel efficiency rate(N) / (N rate(1));
* achieved bytes/s of the kernels (array traffic per step / time) over a numpy triad
  a = b + s c bandwidth measured in the same run;
* contact: contact updates/s per rank (semi-springs and semi-edges evaluated per second of
  the contact phase) on a fragmented heap (solver.bench.scale).
"""

from __future__ import annotations

import json
import time

import numpy as np
from mpi4py import MPI

from solver.case import from_dict
from solver.bench.scale import measure_heap
from solver.cdem.config import Config
from solver.cdem.model import model_from_mesh
from solver.cdem.timeloop import TimeLoop
from solver.mesh.build import mesh_from_config


def triad_bandwidth(n: int = 20_000_000, repeats: int = 5) -> float:
    """Best-of numpy triad a = b + s*c in bytes/s (3 arrays x 8 bytes per element; numpy
    does it in two passes, counted as the 3 streams STREAM counts)."""
    b = np.random.default_rng(0).random(n)
    c = np.random.default_rng(1).random(n)
    a = np.empty(n)
    best = np.inf
    for _ in range(repeats):
        t = time.perf_counter()
        np.multiply(c, 3.0, out=a)
        np.add(a, b, out=a)
        best = min(best, time.perf_counter() - t)
    return 3 * 8 * n / best


def _bench_config(n_elements: int) -> Config:
    side = max(1, round(n_elements ** (1.0 / 3.0)))
    nz = max(1, n_elements // (side * side))
    data = {"mesh": {"boxes": [{"n": [side, side, nz], "size": [side * 1.0, side * 1.0,
                                                                  nz * 1.0]}]},
            "materials": [{"density": 2500.0, "youngs_modulus": 1e9, "poisson_ratio": 0.25}],
            "boundaries": [{"box": [-1e9, 1e9, -1e9, 1e9, -1e-6, 1e-6]}],
            "stages": [{"kind": "dynamic", "max_steps": 10, "damping": "local"}]}
    return from_dict(Config, data, "bench", "", None)


def _step_bytes(model) -> float:
    """Array bytes the kernels read or write in one step, each access counted once.

    Nodes (per node): f_int, the 3 spring slots, f_contact, mass, fixed, held velocity read;
    v, x read and written; du written. Elements: x, du read;
    stress read and written; f_int written. Interface faces (per face): 8 node indices, 8
    slot indices, 6 spring constants, x of 4 A nodes and du of 8 nodes read; u_n, f_s, state
    read and written; 8 slot forces written.
    """
    m, s = model.nodes, model.springs
    node = (m.f_int.nbytes + s.f_slot.nbytes + m.f_contact.nbytes + m.mass.nbytes
            + m.fixed.nbytes + m.held_velocity.nbytes + 2 * m.v.nbytes + 2 * m.x.nbytes
            + m.du.nbytes)
    element = m.x.nbytes + m.du.nbytes + 2 * model.elements.stress.nbytes + m.f_int.nbytes
    indices = 8 * (s.node_i.itemsize + s.slot_i.itemsize)
    per_face = (indices + 6 * 8 + 4 * 24 + 8 * 24 + 2 * (4 * 8 + 4 * 24 + 4 * s.state.itemsize)
                + 8 * 24)
    return float(node + element + per_face * len(s))


def _measure(comm, cfg: Config, mesh, steps: int) -> dict:
    model = model_from_mesh(comm, cfg, mesh, "bench")
    loop = TimeLoop(comm, model, cfg.gravity, 1e-5)
    stage = cfg.stages[0]
    g = np.asarray(cfg.gravity)
    loop.one_step(g, stage)                               # compile and warm up
    loop.compute_seconds = 0.0
    comm.Barrier()
    start = time.perf_counter()
    for _ in range(steps):
        loop.one_step(g, stage)
    wall = comm.allreduce(time.perf_counter() - start, op=MPI.MAX)
    kernels = comm.allreduce(loop.compute_seconds, op=MPI.MAX)
    n_el = comm.allreduce(len(model.elements), op=MPI.SUM)
    bytes_step = comm.allreduce(_step_bytes(model), op=MPI.SUM)
    return {"ranks": comm.size, "elements": n_el, "steps": steps,
            "element_steps_per_s_per_rank": n_el * steps / wall / comm.size,
            "kernel_element_steps_per_s_per_rank": n_el * steps / kernels / comm.size,
            "kernel_bytes_per_s_per_rank": bytes_step * steps / kernels / comm.size,
            "bytes_per_element_step": bytes_step / n_el}


def run_bench(comm, n_elements: int, steps: int, heap: int = 4000,
              json_path: str | None = None) -> dict:
    cfg = _bench_config(n_elements)
    mesh = mesh_from_config(cfg.mesh, "bench")
    triad = triad_bandwidth()
    report = {"triad_bytes_per_s": triad}
    if comm.rank == 0:
        report["serial"] = _measure(MPI.COMM_SELF, cfg, mesh, steps)
    comm.Barrier()
    if comm.size > 1:
        report["parallel"] = _measure(comm, cfg, mesh, steps)
    report["contact"] = measure_heap(comm, heap, steps)
    if comm.rank == 0:
        serial = report["serial"]
        lines = [f"triad bandwidth: {triad / 1e9:.2f} GB/s per rank",
                 f"1 rank, {serial['elements']} elements: "
                 f"{serial['element_steps_per_s_per_rank']:.3e} element-steps/s (whole step), "
                 f"{serial['kernel_element_steps_per_s_per_rank']:.3e} (node + element + spring "
                 f"kernels), {serial['bytes_per_element_step']:.0f} B/element-step, "
                 f"{serial['kernel_bytes_per_s_per_rank'] / triad:.2f} of triad"]
        if "parallel" in report:
            par = report["parallel"]
            eff = par["element_steps_per_s_per_rank"] / serial["element_steps_per_s_per_rank"]
            report["parallel_efficiency"] = eff
            lines.append(f"{par['ranks']} ranks: {par['element_steps_per_s_per_rank']:.3e} "
                         f"element-steps/s per rank, parallel efficiency {eff:.2f}")
        con = report["contact"]
        rate = np.mean([r["contact_updates_per_s"] for r in con["per_rank"]])
        lines.append(f"contact ({con['ranks']} rank(s), fragmented heap of {con['elements']} "
                     f"elements): {rate:.3e} contact updates/s per rank (semi-springs and "
                     "semi-edges)")
        print("\n".join(lines), flush=True)
        if json_path:
            with open(json_path, "w") as fh:
                json.dump(report, fh, indent=2)
    return report
