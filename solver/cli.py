"""Command line: ``solver run CASE.toml``, ``solver bench``, ``solver describe MODULE``.

``mpiexec -n N solver run CASE.toml`` runs the same case on N ranks. Bad input ends with one
line ``error: <file>: <field>: <message>`` and exit code 2.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
import traceback
from pathlib import Path


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="solver", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a case file")
    run.add_argument("case", help="case file (TOML)")
    run.add_argument("--out", help="output folder (default: out/<case name>)")
    run.add_argument("--set", dest="overrides", action="append", default=[],
                     metavar="KEY.SUB=VALUE", help="override a case field (value parsed as TOML)")
    run.add_argument("--quiet", action="store_true", help="no progress lines")
    bench = sub.add_parser("bench", help="CDEM throughput benchmark on a generated block")
    bench.add_argument("--elements", type=int, default=64_000, help="hex elements (default 64000)")
    bench.add_argument("--steps", type=int, default=50, help="time steps to time (default 50)")
    bench.add_argument("--heap", type=int, default=4000,
                       help="elements of the fragmented heap for the contact figures")
    bench.add_argument("--scale", type=int, metavar="N",
                       help="instead: the fragmented-heap benchmark at N elements, per rank "
                            "(element-steps/s, contact updates/s, bytes per step, peak RSS)")
    bench.add_argument("--json", help="also write the figures to this JSON file")
    describe = sub.add_parser("describe", help="list a module's case fields with units")
    describe.add_argument("module")
    return parser


def _run(args, comm) -> int:
    from solver.case import load_case
    from solver.context import RunContext
    from solver.io.summary import write_summary
    from solver.modules import runner_for

    case = load_case(args.case, args.overrides)
    run = runner_for(case.module, f"{case.path}: module")
    out_dir = Path(args.out) if args.out else Path("out") / case.name
    created = False
    if comm.rank == 0:
        created = not out_dir.exists()
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "summary.json").unlink(missing_ok=True)
    created = comm.bcast(created, root=0)
    comm.Barrier()
    start = time.perf_counter()
    try:
        output = run(case, RunContext(comm=comm, out_dir=out_dir, quiet=args.quiet))
    except BaseException:
        if comm.rank == 0 and created:
            shutil.rmtree(out_dir, ignore_errors=True)
        raise
    wall = comm.allreduce(time.perf_counter() - start, op=_max_op())
    if comm.rank == 0:
        path = write_summary(out_dir, case.name, case.module, comm.size, wall, output.steps,
                             output.results)
        if not args.quiet:
            print(f"wrote {path}", file=sys.stderr)
    return 0


def _max_op():
    from mpi4py import MPI
    return MPI.MAX


def _describe(args) -> int:
    from solver.case import describe
    from solver.modules import schema_for
    for line in describe(schema_for(args.module, "describe")):
        print(line)
    return 0


def _bench(args, comm) -> int:
    if args.scale:
        from solver.cdem.bench_scale import run_scale_bench
        run_scale_bench(comm, n_elements=args.scale, steps=args.steps, json_path=args.json)
        return 0
    from solver.cdem.bench import run_bench
    run_bench(comm, n_elements=args.elements, steps=args.steps, heap=args.heap,
              json_path=args.json)
    return 0


def main(argv: list[str] | None = None) -> int:
    from solver.errors import InputError

    args = _parser().parse_args(argv)
    from mpi4py import MPI
    comm = MPI.COMM_WORLD.Dup()
    try:
        if args.command == "run":
            return _run(args, comm)
        if args.command == "bench":
            return _bench(args, comm)
        return _describe(args)
    except InputError as exc:
        if comm.rank == 0 or comm.size == 1:
            print(f"error: {exc.where}: {exc.message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception:
        if comm.size > 1:
            traceback.print_exc()
            sys.stderr.flush()
            MPI.COMM_WORLD.Abort(1)
        raise


if __name__ == "__main__":
    sys.exit(main())
