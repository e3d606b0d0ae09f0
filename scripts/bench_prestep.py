"""Steps and wall time to gravity equilibrium: dynamic relaxation alone against the implicit
prestep followed by relaxation (solver.cdem.prestep).

    [mpiexec -n N] python scripts/bench_prestep.py --model column|jiweishan|slope
                                                   [--backend petsc|scipy] [--max-steps N]
                                                   [--only alone|prestep] [--json FILE]

Models:
* column: the shipped gravity column (cases/column_gravity.toml), 10 elements;
* jiweishan: the equilibrium stage (intact interfaces) of cases/jiweishan.toml on the coarse
  mesh (meshes/jiweishan_coarse.msh, from scripts/make_jiweishan.py);
* slope: a 400 x 125 m slope, 80 x 25 x 50 = 100,000 elements, 50 m high at the toe and 150 m
  at the crest (26.6 deg face between x = 100 and 300 m), held at the base, on rollers at
  the sides, E = 10 GPa, rho = 2600 kg/m3.

``--max-steps`` caps the relaxation (alone it may need far more steps than an explicit
benchmark can afford: the cap is reported with the unbalance ratio reached).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from mpi4py import MPI

from solver.case import from_dict, load_case
from solver.cdem.config import Config
from solver.cdem.model import model_from_mesh
from solver.cdem.prestep import implicit_prestep
from solver.cdem.timeloop import TimeLoop
from solver.mesh.build import mesh_from_config
from solver.mesh.generate import grid
from solver.mesh.hexmesh import HexMesh

ROOT = Path(__file__).resolve().parents[1]
CASES = {"column": "column_gravity.toml", "jiweishan": "jiweishan.toml"}
SLOPE = {
    "mesh": {"boxes": [{"n": [1, 1, 1], "size": [1.0, 1.0, 1.0]}]},       # replaced below
    "materials": [{"density": 2600.0, "youngs_modulus": 1e10, "poisson_ratio": 0.25}],
    "boundaries": [{"box": [-1e9, 1e9, -1e9, 1e9, -1e-6, 1e-6]},
                   {"box": [-1e-6, 1e-6, -1e9, 1e9, -1e9, 1e9], "fix": ["x"]},
                   {"box": [400 - 1e-6, 1e9, -1e9, 1e9, -1e9, 1e9], "fix": ["x"]},
                   {"box": [-1e9, 1e9, -1e-6, 1e-6, -1e9, 1e9], "fix": ["y"]},
                   {"box": [-1e9, 1e9, 125 - 1e-6, 1e9, -1e9, 1e9], "fix": ["y"]}],
    "stages": [{"kind": "relax", "damping": "local", "max_steps": 1_000_000}],
    "partitioner": "rcb",
}


def slope_mesh(nx: int = 80, ny: int = 25, nz: int = 50) -> HexMesh:
    """The slope: a tensor grid whose columns are stretched to the surface height."""
    mesh = grid(np.linspace(0, 400, nx + 1), np.linspace(0, 125, ny + 1),
                np.linspace(0, 1, nz + 1))
    x = mesh.points[:, 0]
    top = 50.0 + 100.0 * np.clip((x - 100.0) / 200.0, 0.0, 1.0)
    mesh.points[:, 2] *= top
    return mesh


def model_and_config(comm, name: str, slope_n=(80, 25, 50)):
    if name in CASES:
        cfg = load_case(ROOT / "cases" / CASES[name]).config
        mesh = mesh_from_config(cfg.mesh, name) if comm.rank == 0 else None
    else:
        cfg = from_dict(Config, SLOPE, "slope", "", None)
        mesh = slope_mesh(*slope_n) if comm.rank == 0 else None
    model = model_from_mesh(comm, cfg, mesh, name)
    dt = cfg.time.safety * comm.allreduce(model.dt_limit_local, op=MPI.MIN)
    return cfg, model, TimeLoop(comm, model, cfg.gravity, dt)


def measure(comm, name: str, prestep: bool, backend: str | None, max_steps: int,
            slope_n=(80, 25, 50)) -> dict:
    cfg, model, loop = model_and_config(comm, name, slope_n)
    stage = cfg.stages[0]
    stage.max_steps = max_steps
    comm.Barrier()
    start = time.perf_counter()
    report = implicit_prestep(comm, loop, stage, name, backend) if prestep else None
    relax_start = time.perf_counter()
    end = loop.run_stage(stage, [])
    done = time.perf_counter()
    return {"model": name, "elements": model.n_cells_global, "ranks": comm.size,
            "prestep": report, "relax_steps": loop.step, "relax_end": end,
            "unbalance_ratio": loop.unbalance,
            "relax_s": comm.allreduce(done - relax_start, op=MPI.MAX),
            "total_s": comm.allreduce(done - start, op=MPI.MAX)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=[*CASES, "slope"], default="column")
    parser.add_argument("--backend", choices=["petsc", "scipy"])
    parser.add_argument("--max-steps", type=int, default=1_000_000)
    parser.add_argument("--only", choices=["alone", "prestep"],
                        help="only relaxation alone, or only the prestep + relaxation")
    parser.add_argument("--slope-n", type=int, nargs=3, default=[80, 25, 50],
                        metavar=("NX", "NY", "NZ"), help="slope elements along x, y, z")
    parser.add_argument("--json")
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    modes = {"alone": [False], "prestep": [True], None: [False, True]}[args.only]
    warm_up = args.model if args.model in CASES else "column"     # the slope has no contact
    measure(comm, warm_up, True, args.backend, 3)       # compiles its kernels, loads the solver
    rows = [measure(comm, args.model, p, args.backend, args.max_steps, args.slope_n)
            for p in modes]
    if comm.rank == 0:
        for row in rows:
            pre = row["prestep"]
            what = (f"prestep {pre['wall_s']:.2f} s ({pre['solver']}, {pre['unknowns']} "
                    f"unknowns, CG iterations {pre['linear_iterations']}) + relaxation"
                    if pre else "relaxation alone")
            print(f"{row['model']} ({row['elements']} elements, {row['ranks']} ranks): {what}: "
                  f"{row['relax_steps']} steps, {row['relax_s']:.2f} s, end {row['relax_end']} "
                  f"at unbalance {row['unbalance_ratio']:.2e}; total {row['total_s']:.2f} s")
        if args.json:
            Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
