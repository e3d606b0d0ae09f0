"""Command line: ``solver run CASE.toml``, ``solver bench``, ``solver describe MODULE``.

``mpiexec -n N solver run CASE.toml`` runs the same case on N ranks. Bad input ends with one
line ``error: <file>: <field>: <message>`` and exit code 2.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from pathlib import Path


class _Parser(argparse.ArgumentParser):
    """Command-line mistakes are bad input too: one error line, exit code 2."""

    def error(self, message: str):
        from solver.errors import InputError
        raise InputError("command line", message)


def _at_least_one(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="solver", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a case file")
    run.add_argument("case", help="case file (TOML)")
    run.add_argument("--out", help="output folder (default: out/<case name>)")
    run.add_argument("--overwrite", action="store_true",
                     help="replace the run an existing output folder holds")
    run.add_argument("--set", dest="overrides", action="append", default=[],
                     metavar="KEY.SUB=VALUE", help="override a case field (value parsed as TOML)")
    run.add_argument("--quiet", action="store_true", help="no progress lines")
    bench = sub.add_parser("bench", help="CDEM throughput benchmark on a generated block")
    bench.add_argument("--elements", type=_at_least_one, default=64_000,
                       help="hex elements (default 64000)")
    bench.add_argument("--steps", type=_at_least_one, default=50,
                       help="time steps to time (default 50)")
    bench.add_argument("--json", help="also write the figures to this JSON file")
    describe = sub.add_parser("describe", help="list a module's case fields with units")
    describe.add_argument("module")
    return parser


def _run(args, comm) -> int:
    from solver.case import load_case
    from solver.context import RunContext
    from solver.errors import InputError
    from solver.io.outdir import OutputFolder
    from solver.io.summary import write_summary
    from solver.modules import runner_for

    case = load_case(args.case, args.overrides)
    run = runner_for(case.module, f"{case.path}: module")
    folder = OutputFolder(comm, args.out or Path("out") / case.name, args.overwrite)
    start = time.perf_counter()
    try:
        output = run(case, RunContext(comm=comm, out_dir=folder.work, quiet=args.quiet))
        wall = comm.allreduce(time.perf_counter() - start, op=_max_op())
        if comm.rank == 0:
            write_summary(folder.work, case.name, case.module, comm.size, wall, output.steps,
                          output.results)
    except InputError:
        folder.discard()
        raise
    except BaseException:
        if comm.size == 1:
            folder.discard(collective=False)
        raise
    target = folder.publish()
    if comm.rank == 0 and not args.quiet:
        print(f"wrote {target / 'summary.json'}", file=sys.stderr)
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
    from solver.cdem.bench import run_bench
    run_bench(comm, n_elements=args.elements, steps=args.steps, json_path=args.json)
    return 0


def main(argv: list[str] | None = None) -> int:
    from mpi4py import MPI

    from solver.errors import InputError

    comm = MPI.COMM_WORLD.Dup()
    try:
        args = _parser().parse_args(argv)
        if args.command == "run":
            return _run(args, comm)
        if args.command == "bench":
            return _bench(args, comm)
        return _describe(args)
    except InputError as exc:
        if comm.rank == 0:
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
    finally:
        comm.Free()


if __name__ == "__main__":
    sys.exit(main())
