"""Command line: ``solver run CASE.toml``, ``solver init MODULE``, ``solver describe [MODULE]``,
``solver cases``, ``solver render OUT``, ``solver bench``.

``mpiexec -n N solver run CASE.toml`` runs the same case on N ranks. Bad input ends with one
line ``error: <file>: <field>: <message>`` and exit code 2; a write the file system refused
(no space, quota, I/O error) with one line naming the path and the errno, and exit code 4
(solver.errors).
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import shlex
import signal
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from solver.version import __version__

CASES = Path(__file__).resolve().parents[1] / "cases"


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


MAX_BENCH_STEPS = 100_000
"""Most time steps ``solver bench`` times: a rate measured over more says nothing new."""


def _bench_steps(text: str) -> int:
    """``solver bench --steps``: 1 to MAX_BENCH_STEPS."""
    value = _at_least_one(text)
    if value > MAX_BENCH_STEPS:
        raise argparse.ArgumentTypeError(f"must be <= {MAX_BENCH_STEPS}, got {value}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="solver", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"solver {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a case file")
    run.add_argument("case", help="case file (TOML)")
    run.add_argument("--out", help="output folder (default: out/<case name>)")
    run.add_argument("--overwrite", action="store_true",
                     help="replace the run an existing output folder holds")
    run.add_argument("--set", dest="overrides", action="append", default=[],
                     metavar="KEY.SUB=VALUE", help="override a case field (value parsed as TOML)")
    run.add_argument("--quiet", action="store_true", help="no progress lines")
    run.add_argument("--checkpoint-every", type=_every, metavar="N|TIME",
                     help="write a checkpoint every N steps, or every TIME of wall time "
                          "(e.g. 30min, 45s, 2h), and a last one when interrupted")
    run.add_argument("--restart", metavar="DIR",
                     help="continue the run in DIR from its last checkpoint (the same case)")
    run.add_argument("--rebalance-above", type=_ratio, metavar="RATIO",
                     help="cdem with --checkpoint-every on several ranks: after a checkpoint "
                          "at which the busiest rank's work since the last one was RATIO "
                          "times the mean or more, go on partitioned by the work (e.g. 1.2)")
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
    bench.add_argument("--elements", type=_at_least_one, default=64_000,
                       help="hex elements (default 64000)")
    bench.add_argument("--steps", type=_bench_steps, default=50,
                       help=f"time steps to time (default 50, at most {MAX_BENCH_STEPS})")
    bench.add_argument("--heap", type=_at_least_one, default=4000,
                       help="elements of the fragmented heap for the contact figures")
    bench.add_argument("--scale", type=_at_least_one, metavar="N",
                       help="instead: the fragmented-heap benchmark at N elements, per rank "
                            "(element-steps/s, contact updates/s, bytes per step, peak RSS)")
    bench.add_argument("--json", help="also write the figures to this JSON file")
    return parser


def _every(text: str) -> tuple[int, float]:
    """``--checkpoint-every``: (steps, seconds), one of them 0 (at most 18 digits)."""
    units = {"s": 1.0, "min": 60.0, "h": 3600.0}
    for unit, scale in sorted(units.items(), key=lambda u: -len(u[0])):
        number = text[: -len(unit)].replace(".", "", 1)
        if text.endswith(unit) and number.isascii() and number.isdigit() and len(number) <= 18:
            seconds = float(text[: -len(unit)]) * scale
            if seconds > 0:
                return 0, seconds
    if text.isascii() and text.isdigit() and len(text) <= 18 and int(text) > 0:
        return int(text), 0.0
    raise argparse.ArgumentTypeError(f"expected a step count or a time such as 30min, "
                                     f"got {text!r}")


def _ratio(text: str) -> float:
    """``--rebalance-above``: a finite ratio of at least 1."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 1.0):
        raise argparse.ArgumentTypeError(f"expected a ratio of at least 1, such as 1.2, "
                                         f"got {text!r}")
    return value


def _run(args, comm) -> int:
    from solver.case import load_case
    return run_loaded(load_case(args.case, args.overrides), args, comm).code


@dataclass
class Finished:
    """What ``solver run`` did: its exit code and the folder that holds the run."""

    code: int
    folder: Path


def run_arguments(argv: list[str]) -> argparse.Namespace:
    """The options of ``solver run`` from its arguments (``argv`` after ``run``); a mistake
    raises InputError."""
    return _parser().parse_args(["run", *argv])


def run_loaded(case, args, comm) -> Finished:
    """``solver run`` of a validated case (solver.case.Case) with the options ``args``
    (:func:`run_arguments`) on ``comm``: checks the options, writes the run into its output
    folder and publishes it. Bad input raises InputError on every rank and leaves no
    folder; a run stopped by a signal returns its exit code (130, 143). A refused restart
    changes nothing on disk. A write the file system refused raises OutputFailed, after
    :meth:`solver.io.outdir.OutputFolder.fail` kept or removed the run's folder (a refused
    publication keeps the finished run in it). The files
    the case says it writes are checked against the file system before the folder is made
    (solver.resources.check_outputs)."""
    from solver import interrupt
    from solver.case import write_resolved
    from solver.context import RunContext, RunOutput
    from solver.ensemble import result_units, runner, sweeps_whole_cases
    from solver.errors import InputError, OutputFailed, is_write_failure, write_together
    from solver.io import checkpoint
    from solver.io import summary as summ
    from solver.io.outdir import OutputFolder
    from solver.modules import spec_for
    from solver.parallel import root_only
    from solver.resources import check_outputs

    for option, path in (("--out", args.out), ("--restart", args.restart)):
        if path is not None:
            _given_path(path, option)
    spec = spec_for(case.module, f"{case.path}: module")
    run = runner(spec)
    if (args.checkpoint_every or args.restart) and not spec.checkpoints:
        raise InputError("command line", f"module {case.module!r} writes no checkpoints "
                                          "(--checkpoint-every and --restart are for "
                                          "cdem, pointmass and rockfall)")
    if (args.checkpoint_every or args.restart) and sweeps_whole_cases(spec, case):
        raise InputError("command line", f"a {case.module} sweep runs whole cases: "
                                          "--checkpoint-every and --restart are for a single run")
    if args.rebalance_above and (case.module != "cdem" or not args.checkpoint_every):
        raise InputError("command line", "--rebalance-above is for a cdem run with "
                                          "--checkpoint-every (it acts at the checkpoints)")
    if args.restart and (args.out or args.overwrite):
        raise InputError("command line", "--restart DIR goes on in DIR: leave out --out and "
                                          "--overwrite")
    target = args.restart or args.out or Path("out") / case.name
    root_only(comm, lambda: check_outputs(case.config, str(case.path), target))
    folder = (OutputFolder.resume(comm, args.restart) if args.restart else
              OutputFolder(comm, target, args.overwrite))
    if args.restart:
        checkpoint.verify(comm, folder.work, checkpoint.run_digest(folder.work, case),
                          "--restart")
    started = summ.now_utc()
    commit = summ.git_commit() if comm.rank == 0 else None
    try:
        write_together(comm, (lambda: write_resolved(case, folder.work, started,
                                                       args.overrides))
                       if comm.rank == 0 and not args.restart else None,
                       folder.work / "case.resolved.toml")
    except OutputFailed as failure:
        folder.fail(failure, _restart_command(args))
        raise
    steps, seconds = args.checkpoint_every or (0, 0.0)
    context = RunContext(comm=comm, out_dir=folder.work, quiet=args.quiet,
                         checkpoint_steps=steps, checkpoint_seconds=seconds,
                         restart=bool(args.restart), rebalance_above=args.rebalance_above or 0.0)
    start = time.perf_counter()
    status, code = "done", 0
    signals = (interrupt.catching_signals()
               if spec.checkpoints and not sweeps_whole_cases(spec, case)
               else contextlib.nullcontext())
    try:
        with signals:
            output = run(case, context)
    except interrupt.Interrupted as exc:
        output = RunOutput(steps=exc.step, results={"time": exc.time, **exc.results})
        status, code = "interrupted", 128 + exc.signum
    except interrupt.Diverged as exc:
        output = RunOutput(steps=exc.step, results={"time": exc.time})
        status, code = "diverged", 3
        if comm.rank == 0:
            print(f"error: {case.path}: {exc.where}: {exc.message}", file=sys.stderr)
    except InputError:
        folder.discard()
        raise
    except OutputFailed as failure:
        folder.fail(failure, _restart_command(args))
        raise
    except OSError as exc:
        if not is_write_failure(exc):
            raise
        failure = OutputFailed.from_os_error(exc, folder.work)
        failure.everywhere = comm.size == 1
        folder.fail(failure, _restart_command(args), collective=failure.everywhere)
        raise failure from None
    except BaseException:
        if comm.size == 1:
            folder.discard(collective=False)
        raise
    wall = comm.allreduce(time.perf_counter() - start, op=_max_op())
    peak_rss = comm.gather(_peak_rss_mb(), root=0)
    if comm.rank == 0:
        for line in output.unconverged:
            print(f"warning: {case.path}: {line}: not converged", file=sys.stderr)

    def write_summary() -> None:
        summ.write_summary(
            folder.work, case.name, case.module, comm.size, wall, output.steps, output.results,
            status=status, started=started, solver_version=__version__,
            git_commit=commit,
            converged=status == "done" and not output.unconverged, peak_rss_mb=peak_rss,
            **({"timing": output.timing} if output.timing is not None else {}),
            units=summ.units_of(output.results, result_units(spec)))

    try:
        write_together(comm, write_summary if comm.rank == 0 else None,
                       folder.work / "summary.json")
    except OutputFailed as failure:
        folder.fail(failure, _restart_command(args))
        raise
    if status == "interrupted" and not (steps or seconds) and folder.replaces_run():
        folder.discard()
        if comm.rank == 0:
            print(f"interrupted after step {output.steps}, without checkpoints: "
                  f"{folder.target} keeps the earlier run", file=sys.stderr)
        return Finished(code, folder.target)
    target = folder.publish()
    if comm.rank == 0:
        if status == "interrupted":
            sets = "".join(f" --set {shlex.quote(o)}" for o in args.overrides)
            print(f"interrupted after step {output.steps}; the run goes on with "
                  f"'solver run {args.case}{sets} --restart {target}'"
                  + ("" if steps or seconds else " once it writes checkpoints"
                     " (--checkpoint-every)"), file=sys.stderr)
        elif not args.quiet:
            print(f"wrote {target / 'summary.json'}", file=sys.stderr)
    return Finished(code, target)


def _restart_command(args):
    """The command line that goes on from a run folder, as a function of the folder."""
    sets = [word for o in args.overrides for word in ("--set", o)]
    return lambda folder: shlex.join(["solver", "run", args.case, *sets,
                                      "--restart", str(folder)])


def _peak_rss_mb() -> float:
    """This process's peak resident memory so far [MB] (Linux reports kB)."""
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _max_op():
    from mpi4py import MPI
    return MPI.MAX


def _describe(args) -> int:
    from solver.case import describe
    from solver.modules import MODULES, available, spec_for
    if args.module is None:
        for name in MODULES:
            note = "" if available(name) else " (not in this build)"
            print(f"{name:<13} {MODULES[name].description}{note}")
        print("solver describe MODULE lists a module's case fields")
        return 0
    for line in describe(spec_for(args.module, "describe").config):
        print(line)
    return 0


def _init(args) -> int:
    from solver.errors import InputError, OutputFailed, is_write_failure
    from solver.modules import spec_for
    text = spec_for(args.module, f"init: {args.module}").template.read_text()
    out = _given_path(args.out, "--out")
    if out.exists():
        raise InputError(str(out), "file exists (choose another --out)")
    if not out.parent.is_dir():
        raise InputError(f"--out {out}", f"no folder {out.parent} to write into")
    try:
        out.write_text(text)
    except OSError as exc:
        if is_write_failure(exc):
            raise OutputFailed.from_os_error(exc, out) from None
        raise InputError(f"--out {out}", f"cannot write: {exc.strerror or exc}") from None
    print(f"wrote {out}; run it with: solver run {out}", file=sys.stderr)
    return 0


def _given_path(text: str, option: str) -> Path:
    """The path an option names, one the operating system can take
    (:func:`solver.case.check_path`); an empty one is refused."""
    from solver.case import check_path
    from solver.errors import InputError
    if not text:
        raise InputError(option, "an empty path")
    check_path(text, option)
    return Path(text)


def _cases(args) -> int:
    from solver.errors import InputError
    folder = _given_path(args.folder, "cases")
    paths = sorted(folder.glob("*.toml")) if folder.is_dir() else []
    if not paths:
        raise InputError(str(folder), "no case files here (the cases ship with the source tree)")
    for path, text, module in [_case_heading(path) for path in paths]:
        print(f"{_shown(path):<42} {module:<13} {_about(text)}")
    return 0


def _case_heading(path: Path) -> tuple[Path, str, str]:
    """(path, text, module) of a case file for ``solver cases``; a file that is not readable
    TOML raises InputError naming it (a module that is not a string shows as ``?``)."""
    import tomllib

    from solver.case import MAX_CASE_BYTES, toml_loads
    from solver.errors import InputError
    try:
        if path.stat().st_size > MAX_CASE_BYTES:
            raise InputError(str(path), f"more than the {MAX_CASE_BYTES} bytes of a case file")
        text = path.read_text()
        module = toml_loads(text, str(path)).get("module", "?")
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InputError(str(path), f"not valid TOML ({exc})") from None
    except OSError as exc:
        raise InputError(str(path), f"cannot read: {exc.strerror or exc}") from None
    return path, text, module if isinstance(module, str) else "?"


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
    out = _given_path(args.out, "render")
    for path in render(out, field=args.field, frame=args.frame, movie=args.movie):
        print(f"wrote {path}", file=sys.stderr)
    return 0


def _bench(args, comm) -> int:
    from solver.parallel import root_only
    root_only(comm, lambda: _check_bench(args))
    if args.scale:
        from solver.bench.scale import run_scale_bench
        run_scale_bench(comm, n_elements=args.scale, steps=args.steps, json_path=args.json)
        return 0
    from solver.bench.throughput import run_bench
    run_bench(comm, n_elements=args.elements, steps=args.steps, heap=args.heap,
              json_path=args.json)
    return 0


def _check_bench(args) -> None:
    """The sizes ``solver bench`` was given fit this node's memory (solver.resources), and
    the folder of ``--json`` exists, before anything is built."""
    from solver.errors import InputError
    from solver.mesh.generate import BYTES_PER_ELEMENT
    from solver.resources import need_memory
    for option, elements in (("--elements", args.elements), ("--heap", args.heap),
                             ("--scale", args.scale)):
        if elements:
            need_memory(option, elements * BYTES_PER_ELEMENT, f"{elements:.3g} elements")
    if args.json is not None:
        path = _given_path(args.json, "--json")
        if not path.parent.is_dir():
            raise InputError(f"--json {path}", f"no folder {path.parent} to write into")


def main(argv: list[str] | None = None) -> int:
    """``solver ARGS``: the exit code (0, 2 bad input, 3 diverged, 4 a refused write, 130 and
    143 stopped by SIGINT and SIGTERM); every failure of a command is one line on stderr.
    A signal stops it at any moment (solver.interrupt); on several ranks, a signal outside
    a run's step boundaries and a write refused on one rank only end this process at once
    with the code, and mpiexec ends the others."""
    from solver import interrupt

    with interrupt.stopping_at_once():
        try:
            return _main(argv)
        except BaseException as exc:
            stopped = interrupt.terminated_by(exc)
            if stopped is None:
                raise
            return _stopped(stopped.signum)


def _main(argv: list[str] | None) -> int:
    """:func:`main` once its signals are taken care of."""
    from mpi4py import MPI

    from solver import interrupt
    from solver.errors import EXIT_INPUT, EXIT_OUTPUT, InputError, OutputFailed

    interrupt.mpi_started()
    comm = MPI.COMM_WORLD.Dup()
    commands = {"describe": _describe, "init": _init, "cases": _cases, "render": _render}
    try:
        args = _parser().parse_args(argv)
        if args.command == "run":
            return _run(args, comm)
        if args.command == "bench":
            return _bench(args, comm)
        return _side_command(commands[args.command], args)
    except InputError as exc:
        if comm.rank == 0:
            print(exc.line, file=sys.stderr)
        return EXIT_INPUT
    except OutputFailed as exc:
        if comm.rank == 0 or not exc.everywhere:
            print(exc.line, file=sys.stderr, flush=True)
        if not exc.everywhere and comm.size > 1:
            _exit_now(EXIT_OUTPUT)
        return EXIT_OUTPUT
    except Exception as exc:
        if interrupt.terminated_by(exc) is not None:
            raise
        if comm.size > 1:
            traceback.print_exc()
            sys.stderr.flush()
            MPI.COMM_WORLD.Abort(1)
        raise
    finally:
        comm.Free()


def _side_command(command, args) -> int:
    """``command(args)`` of a command other than run and bench: a file it cannot read or
    write is one error line too (OutputFailed for a refused write, else InputError naming
    the file)."""
    from solver.errors import InputError, OutputFailed, is_write_failure
    try:
        return command(args)
    except OSError as exc:
        if is_write_failure(exc):
            raise OutputFailed.from_os_error(exc) from None
        raise InputError(str(exc.filename or args.command),
                         f"{exc.strerror or exc}") from None


def _stopped(signum: int) -> int:
    """The exit code of a command stopped by the signal ``signum`` outside a run's step
    boundaries (128 + signum), after one line on stderr (solver.interrupt; on several ranks
    the handler has already ended the process)."""
    print(f"stopped by {signal.Signals(signum).name}", file=sys.stderr, flush=True)
    return 128 + signum


def _exit_now(code: int) -> None:
    """End this process at once with ``code`` (output flushed, no MPI_Finalize): under
    mpiexec the other ranks are ended too, without an MPI_Abort message."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
