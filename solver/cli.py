"""Command line: ``solver run CASE.toml``, ``solver init MODULE``, ``solver describe [MODULE]``,
``solver cases``, ``solver render OUT``, ``solver bench``.

``mpiexec -n N solver run CASE.toml`` runs the same case on N ranks. Bad input ends with one
line ``error: <file>: <field>: <message>`` and exit code 2.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
import traceback
from pathlib import Path

from solver import __version__

CASES = Path(__file__).resolve().parents[1] / "cases"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="solver", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"solver {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a case file")
    run.add_argument("case", help="case file (TOML)")
    run.add_argument("--out", help="output folder (default: out/<case name>)")
    run.add_argument("--set", dest="overrides", action="append", default=[],
                     metavar="KEY.SUB=VALUE", help="override a case field (value parsed as TOML)")
    run.add_argument("--quiet", action="store_true", help="no progress lines")
    init = sub.add_parser("init", help="write a commented case template that runs as written")
    init.add_argument("module")
    init.add_argument("--out", default="case.toml", help="case file to write (default case.toml)")
    describe = sub.add_parser("describe", help="list the modules, or a module's case fields "
                                               "with units, defaults and choices")
    describe.add_argument("module", nargs="?")
    cases = sub.add_parser("cases", help="list the shipped cases, one line each")
    cases.add_argument("folder", nargs="?", default=str(CASES), help="folder of case files")
    render = sub.add_parser("render", help="PNG (or movie) of a run's VTK output, off screen")
    render.add_argument("out", help="output folder of a run")
    render.add_argument("--field", help="array to colour by (default: the series' first)")
    render.add_argument("--frame", default="last", help="frame index K or 'last' (default)")
    render.add_argument("--movie", action="store_true",
                        help="also every frame as an MP4 (imageio-ffmpeg) or GIF")
    bench = sub.add_parser("bench", help="CDEM throughput benchmark on a generated block")
    bench.add_argument("--elements", type=int, default=64_000, help="hex elements (default 64000)")
    bench.add_argument("--steps", type=int, default=50, help="time steps to time (default 50)")
    bench.add_argument("--heap", type=int, default=4000,
                       help="elements of the fragmented heap for the contact figures")
    bench.add_argument("--scale", type=int, metavar="N",
                       help="instead: the fragmented-heap benchmark at N elements, per rank "
                            "(element-steps/s, contact updates/s, bytes per step, peak RSS)")
    bench.add_argument("--json", help="also write the figures to this JSON file")
    return parser


def _run(args, comm) -> int:
    from solver.case import load_case, resolved_data
    from solver.context import RunContext
    from solver.io import summary as summ
    from solver.io.folders import check_writable
    from solver.io.toml import dumps
    from solver.modules import result_units_for, runner_for
    from solver.parallel import root_only

    case = load_case(args.case, args.overrides)
    run = runner_for(case.module, f"{case.path}: module")
    out_dir = Path(args.out) if args.out else Path("out") / case.name
    resolved = out_dir / "case.resolved.toml"
    created = False
    started = summ.now_utc()
    root_only(comm, lambda: check_writable(out_dir))
    if comm.rank == 0:
        created = not out_dir.exists()
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "summary.json").unlink(missing_ok=True)
        overrides = "".join(f"\n  --set {o}" for o in args.overrides)
        resolved.write_text(dumps(resolved_data(case), header=(
            f"{case.path} as run on {started}{overrides}\n"
            "every field with its value (defaults filled in, paths absolute)")))
    created = comm.bcast(created, root=0)
    comm.Barrier()
    start = time.perf_counter()
    try:
        output = run(case, RunContext(comm=comm, out_dir=out_dir, quiet=args.quiet))
    except BaseException:
        if comm.rank == 0:
            if created:
                shutil.rmtree(out_dir, ignore_errors=True)
            else:
                resolved.unlink(missing_ok=True)
        raise
    wall = comm.allreduce(time.perf_counter() - start, op=_max_op())
    if comm.rank == 0:
        for line in output.unconverged:
            print(f"warning: {case.path}: {line}: not converged", file=sys.stderr)
        path = summ.write_summary(
            out_dir, case.name, case.module, comm.size, wall, output.steps, output.results,
            started=started, solver_version=__version__, git_commit=summ.git_commit(),
            converged=not output.unconverged,
            units=summ.units_of(output.results, result_units_for(case.module, "units")))
        if not args.quiet:
            print(f"wrote {path}", file=sys.stderr)
    return 0


def _max_op():
    from mpi4py import MPI
    return MPI.MAX


def _describe(args) -> int:
    from solver.case import describe
    from solver.modules import DESCRIPTIONS, MODULES, available, schema_for
    if args.module is None:
        for name in MODULES:
            note = "" if available(name) else " (not in this build)"
            print(f"{name:<13} {DESCRIPTIONS[name]}{note}")
        print("solver describe MODULE lists a module's case fields")
        return 0
    for line in describe(schema_for(args.module, "describe")):
        print(line)
    return 0


def _init(args) -> int:
    from solver.errors import InputError
    from solver.modules import template_for
    text = template_for(args.module, f"init: {args.module}")
    out = Path(args.out)
    if out.exists():
        raise InputError(str(out), "file exists (choose another --out)")
    out.write_text(text)
    print(f"wrote {out}; run it with: solver run {out}", file=sys.stderr)
    return 0


def _cases(args) -> int:
    import tomllib

    from solver.errors import InputError
    folder = Path(args.folder)
    paths = sorted(folder.glob("*.toml"))
    if not paths:
        raise InputError(str(folder), "no case files here (the cases ship with the source tree)")
    for path in paths:
        text = path.read_text()
        module = tomllib.loads(text).get("module", "?")
        print(f"{_shown(path):<42} {module:<13} {_about(text)}")
    return 0


def _shown(path: Path) -> str:
    relative = os.path.relpath(path)
    return relative if not relative.startswith("..") else str(path)


def _about(text: str, limit: int = 100) -> str:
    """The start of a case file's leading comment block, on one line."""
    comment = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        comment.append(line.lstrip("# ").strip())
    about = " ".join(comment)
    return about if len(about) <= limit else about[:limit - 3].rstrip() + "..."


def _render(args) -> int:
    from solver.io.render import render
    for path in render(Path(args.out), field=args.field, frame=args.frame, movie=args.movie):
        print(f"wrote {path}", file=sys.stderr)
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
    commands = {"describe": _describe, "init": _init, "cases": _cases, "render": _render}
    try:
        if args.command == "run":
            return _run(args, comm)
        if args.command == "bench":
            return _bench(args, comm)
        return commands[args.command](args)
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
