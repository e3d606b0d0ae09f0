"""Time and peak memory of the CDEM set-up at scale: everything before the first time step.

    [mpiexec -n N] python scripts/bench_setup.py --elements 1000000 [--mesh-dir DIR]
                                                 [--json FILE]

The mesh is the Jiweishan slope of scripts/make_jiweishan.py at the production preset's
resolution (195 x 65 x 15 elements in the mass, 25 m cells on the valley floor: 210,794
elements) scaled by s = (elements / 210,794)^(1/3): s times the elements along, across and
through the mass, floor cells s times smaller, and an aspect limit s times higher (the
bedrock slab under the bed stays one layer 40 m thick). Its groups are those of the
production mesh: ``bedrock`` (held), ``key_body`` and ``sliding_body`` (breakable). The
generator runs once, in a separate process (its memory is not counted), and writes a
Gmsh 2.2 ASCII file into --mesh-dir as the production mesh is written, so that the read is
measured too; a later run with the same resolution reads that file again.

The set-up is that of ``solver run cases/jiweishan.toml --set mesh.path=<the mesh>``: the
calls of solver.cdem.run._run_partition, in its order, grouped into phases:

* read: mesh_from_config on rank 0 (meshio, the mesh checks);
* check_case: the case against the mesh, on rank 0;
* distribute: the case digest, the mesh's measures (shared faces, volumes, centroids, face
  areas; solver.mesh.measures) and the partition on rank 0, and every rank's part sent to
  it;
* observer: make_observer (the landslide observer's set-up from the whole mesh and its
  measures on rank 0);
* build_model: every rank's model from its part;
* time_step: the stability limits, the stages' steps and check_time_step on rank 0;
* time_loop: the whole mesh released, the step control and the TimeLoop made.

It stops there: the first output frame and the first step are not part of it. Per phase and
rank it records the wall seconds (the rank's time in the phase's calls, waits for rank 0
included; the ranks meet at a barrier between phases), the CPU seconds (the process's; MPI
waits by polling, so they count the waits too, but on a machine shared with other jobs
rank 0's CPU seconds in its own phases are its work, where the wall seconds also count the
time it was not given a core), the peak resident memory so far
(getrusage's ru_maxrss and /proc/self/status's VmHWM) and the resident memory at the phase's
end (VmRSS), in MB; ``start`` is the process after its imports. Rank 0 writes them all to
the JSON (default: <mesh-dir>/setup_<elements>_<ranks>ranks.json) and prints a table of
rank 0's figures and the largest of the other ranks' (peaks by VmHWM; ru_maxrss is the
same to the MB).
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

from mpi4py import MPI

from solver.case import load_case, resolved_data
from solver.cdem.analyses import make_observer
from solver.cdem.checks import check_case, check_time_step
from solver.cdem.model import build_model
from solver.cdem.run import stability_limits, time_steps
from solver.cdem.stable_step import StepControl
from solver.cdem.timeloop import TimeLoop
from solver.io import checkpoint as files
from solver.io.summary import git_commit
from solver.mesh.build import mesh_from_config
from solver.mesh.distribute import distribute
from solver.mesh.measures import measure
from solver.parallel import root_only

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import make_jiweishan  # noqa: E402

CASE = ROOT / "cases" / "jiweishan.toml"
PRODUCTION_ELEMENTS = 210_794
"""Elements of the production preset (s = 1)."""


def resolution(elements: int) -> dict[str, float]:
    """The make_jiweishan ``--set`` fields of the production mesh scaled to about
    ``elements`` (module docstring)."""
    s = (elements / PRODUCTION_ELEMENTS) ** (1.0 / 3.0)
    base = make_jiweishan.PRESETS["production"]
    geometry = make_jiweishan.Geometry(resolution=base)
    return {"resolution.n_along": round(base.n_along * s),
            "resolution.n_across": round(base.n_across * s),
            "resolution.n_thick": round(base.n_thick * s),
            "resolution.floor_cell_m": base.floor_cell_m / s,
            "max_aspect": geometry.max_aspect * max(s, 1.0)}


def mesh_file(elements: int, folder: Path) -> Path:
    """The scaled mesh's file in ``folder``, generated first if it is not there."""
    fields = resolution(elements)
    r = [fields[f"resolution.{k}"] for k in ("n_along", "n_across", "n_thick")]
    path = folder / f"jiweishan_{r[0]}x{r[1]}x{r[2]}.msh"
    if not path.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        sets = [arg for key, value in fields.items() for arg in ("--set", f"{key}={value!r}")]
        subprocess.run([sys.executable, str(ROOT / "scripts" / "make_jiweishan.py"),
                        "production", "--out", str(path), *sets], check=True)
    return path


def memory_mb() -> dict[str, float]:
    """Peak resident memory so far (ru_maxrss and VmHWM) and resident memory now [MB]."""
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text()
                  .splitlines() if ":" in line)
    kb = {key: float(status[key].split()[0]) for key in ("VmHWM", "VmRSS")}
    return {"maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
            "hwm_mb": kb["VmHWM"] / 1024.0, "rss_mb": kb["VmRSS"] / 1024.0}


class Phases:
    """Per-phase wall and CPU seconds and memory of this rank (collective: a barrier ends
    each phase)."""

    def __init__(self, comm):
        self.comm = comm
        self.rows = [{"phase": "start", "seconds": 0.0, "cpu_s": 0.0, **memory_mb()}]
        self.start, self.cpu = time.perf_counter(), time.process_time()

    def done(self, name: str) -> None:
        """End the phase ``name`` that started at the last call (or at construction)."""
        seconds, cpu = time.perf_counter() - self.start, time.process_time() - self.cpu
        self.rows.append({"phase": name, "seconds": seconds, "cpu_s": cpu, **memory_mb()})
        self.comm.Barrier()
        self.start, self.cpu = time.perf_counter(), time.process_time()

    def gathered(self) -> list[dict] | None:
        """On rank 0, every phase with a list per measure, one entry per rank."""
        ranks = self.comm.gather(self.rows, root=0)
        if ranks is None:
            return None
        return [{"phase": row["phase"],
                 **{key: [r[k][key] for r in ranks] for key in row if key != "phase"}}
                for k, row in enumerate(ranks[0])]


def set_up(comm, mesh_path: Path) -> tuple[Phases, dict]:
    """The set-up of cases/jiweishan.toml on ``mesh_path`` as solver.cdem.run makes it,
    timed by phase; also the mesh's sizes (on rank 0)."""
    case = load_case(CASE, [f"mesh.path={str(mesh_path)!r}"])
    cfg, where = case.config, str(case.path)
    out_dir = ROOT / "out" / "bench_setup" / "run"
    phases = Phases(comm)
    mesh = root_only(comm, lambda: mesh_from_config(cfg.mesh, f"{where}: mesh"))
    phases.done("read")
    root_only(comm, lambda: check_case(cfg, mesh, where))
    phases.done("check_case")
    files.case_digest(resolved_data(case))
    measures = root_only(comm, lambda: measure(mesh, f"{where}: mesh"))
    part = distribute(comm, mesh, measures, cfg.partitioner, None)
    sizes = {"elements": part.n_cells, "faces": part.n_faces,
             "nodes": len(mesh.points) if mesh is not None else None}
    phases.done("distribute")
    make_observer(comm, cfg, mesh, measures, where, (out_dir, case.name))
    del measures
    phases.done("observer")
    model = build_model(comm, cfg, part, where)
    del part
    phases.done("build_model")
    limits = stability_limits(comm, model)
    steps = time_steps(cfg, limits, where)
    root_only(comm, lambda: check_time_step(cfg, mesh, steps, limits, where))
    phases.done("time_step")
    del mesh
    control = StepControl(comm, model.step_bound, model.active_faces, cfg.time.safety,
                          cfg.time.dt)
    TimeLoop(comm, model, cfg.gravity, control=control)
    phases.done("time_loop")
    return phases, sizes


def host_cpu() -> str:
    """The CPU's model name (/proc/cpuinfo) and the core count."""
    names = [line.split(":", 1)[1].strip() for line in
             Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")]
    return f"{names[0] if names else platform.processor()}, {len(names)} cores"


def table(record: dict) -> str:
    """The record as a text table: per phase, rank 0's seconds and memory, and the largest
    of the other ranks'."""
    lines = [f"{record['elements']:,} elements, {record['nodes']:,} nodes, "
             f"{record['faces']:,} shared faces, {record['ranks']} rank(s); mesh "
             f"{record['mesh_mb']:.0f} MB; {record['host_cpu']}; {record['git_commit']}",
             f"{'':<12} {'seconds':>17} {'CPU seconds':>17} {'peak RSS [MB]':>17} "
             f"{'RSS at end [MB]':>17}",
             f"{'phase':<12}" + f" {'rank 0':>8} {'others':>8}" * 4]

    def cells(values: list[float], digits: int) -> str:
        others = f"{max(values[1:]):>8.{digits}f}" if len(values) > 1 else f"{'':>8}"
        return f" {values[0]:>8.{digits}f} {others}"

    for row in record["phases"]:
        lines.append(f"{row['phase']:<12}" + cells(row["seconds"], 1) + cells(row["cpu_s"], 1)
                     + cells(row["hwm_mb"], 0) + cells(row["rss_mb"], 0))
    total = {key: [sum(row[key][k] for row in record["phases"])
                   for k in range(record["ranks"])] for key in ("seconds", "cpu_s")}
    peak = record["phases"][-1]["hwm_mb"]
    lines.append(f"{'total':<12}" + cells(total["seconds"], 1) + cells(total["cpu_s"], 1)
                 + cells(peak, 0))
    lines.append(f"rank 0: {peak[0] / 1024 / (record['elements'] / 1e6):.2f} GB per million "
                 "elements")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=float, default=PRODUCTION_ELEMENTS,
                        help="about this many elements (default: the production mesh's)")
    parser.add_argument("--mesh-dir", type=Path, default=ROOT / "out" / "bench_setup",
                        help="folder of the generated meshes (kept for later runs)")
    parser.add_argument("--json", type=Path, help="the record's file")
    args = parser.parse_args(argv)
    comm = MPI.COMM_WORLD.Dup()
    mesh_path = mesh_file(int(args.elements), args.mesh_dir) if comm.rank == 0 else None
    mesh_path = comm.bcast(mesh_path, root=0)
    phases, sizes = set_up(comm, mesh_path)
    rows = phases.gathered()
    if comm.rank != 0:
        return 0
    record = {**sizes, "ranks": comm.size, "mesh": str(mesh_path),
              "mesh_mb": mesh_path.stat().st_size / 1e6, "host_cpu": host_cpu(),
              "git_commit": git_commit(), "phases": rows}
    print(table(record))
    target = args.json or (args.mesh_dir / f"setup_{sizes['elements']}_{comm.size}ranks.json")
    target.write_text(json.dumps(record, indent=1))
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
