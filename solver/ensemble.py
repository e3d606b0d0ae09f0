"""One ensemble layer for every module: runs shared over the MPI ranks, rows gathered in order.

A module turns its case into a list of points (one per run: :func:`solver.sweep.points`),
hands them with a function ``fn(index, point) -> row`` to :func:`run_ensemble` and gets, on
rank 0, the rows in point order. The runs are handed out one at a time
(:func:`solver.parallel.dynamic_share`; round-robin when MPI gives no THREAD_MULTIPLE), so
ranks that draw long runs take fewer of them. Each run depends on its point only, so the rows
do not depend on the number of ranks. A module whose sweeps run whole cases (``cdem``,
``contact_laws``: ``ModuleSpec.sweeps_whole_cases``) runs each point as a whole case on one
rank (:func:`run_sweep`); :func:`runner` picks the run of a case accordingly.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable, Sequence

from solver import sweep
from solver.case import Case, write_resolved
from solver.context import RunContext, RunOutput
from solver.ensemble_checkpoint import EnsembleCheckpoint, Stopped
from solver.errors import InputError, written_by_root
from solver.interrupt import Diverged
from solver.io.progress import Progress
from solver.io.table import plot_rows, plot_title, write_rows
from solver.modules import ModuleSpec, spec_for
from solver.parallel import dynamic_share, gather_rows


def run_ensemble(comm, points: Sequence[Any], fn: Callable[[int, Any], Any],
                 progress: Progress | None = None,
                 checkpoint: EnsembleCheckpoint | None = None) -> list[Any] | None:
    """Run ``fn(index, point)`` for every point, shared over the ranks of ``comm``.

    Returns the rows in point order on rank 0 and None on the other ranks. ``progress``
    (rank 0 prints) is updated with the number of runs handed out, and once more at the end.
    Collective. A point whose run raises :class:`InputError` or
    :class:`solver.interrupt.Diverged` stops this rank's work; every rank then raises the
    error of the lowest failing point, so the message is the same on 1 or N ranks. Any other
    exception is a bug and goes on at once (the CLI aborts all ranks).
    ``checkpoint`` (:mod:`solver.ensemble_checkpoint`) adds checkpoints, the restart of the
    runs its checkpoint left unfinished, and clean stops at a signal
    (:class:`solver.interrupt.Interrupted` on every rank).
    """
    on_hand_out = progress.update if progress is not None else None
    todo = checkpoint.todo(len(points)) if checkpoint is not None else range(len(points))
    mine = checkpoint.restored() if checkpoint is not None else []
    error = None
    for k in dynamic_share(comm, len(todo), on_hand_out,
                           checkpoint.idle if checkpoint is not None else None):
        index = todo[k]
        if error is not None or (checkpoint is not None and checkpoint.stopped()):
            continue
        try:
            mine.append((index, fn(index, points[index]) if checkpoint is None
                         else checkpoint.call(fn, index, points[index])))
        except InputError as exc:
            error = (index, "input", (exc.where, exc.message))
        except Diverged as exc:
            error = (index, "diverged", (exc.where, exc.message, exc.step, exc.time))
        except Stopped:
            continue
    if checkpoint is not None:
        checkpoint.wait()
    errors = [e for e in comm.allgather(error) if e is not None]
    if errors:
        _, kind, payload = min(errors, key=lambda e: e[0])
        raise (InputError if kind == "input" else Diverged)(*payload)
    if checkpoint is not None:
        checkpoint.raise_if_stopped()
    rows = gather_rows(comm, mine)
    if progress is not None:
        progress.update(len(points), force=True)
    return rows


def run_alone(case, out_dir: Path) -> dict[str, Any]:
    """Run ``case`` on this rank alone (``MPI.COMM_SELF``) into ``out_dir`` (made if missing),
    which gets the run's ``case.resolved.toml``, ``summary.json`` and the module's files.
    Returns the row ``{"status", "steps", "wall_s", "results", "unconverged"}``; a run that
    diverges is a row with status ``diverged`` (its summary says where), not an error."""
    from mpi4py import MPI

    from solver.interrupt import Diverged
    from solver.io import summary

    out_dir.mkdir(parents=True, exist_ok=True)
    started = summary.now_utc()
    commit = summary.git_commit()
    write_resolved(case, out_dir, started)
    spec = spec_for(case.module, f"{case.path}: module")
    run = runner(spec)
    start = time.perf_counter()
    status, unconverged = "done", []
    try:
        output = run(case, RunContext(comm=MPI.COMM_SELF, out_dir=out_dir, quiet=True))
        steps, results, unconverged = output.steps, output.results, output.unconverged
    except Diverged as exc:
        status, steps, results = "diverged", exc.step, {"time": exc.time,
                                                        "diverged": f"{exc.where}: {exc.message}"}
    wall = time.perf_counter() - start
    summary.write_summary(out_dir, case.name, case.module, 1, wall, steps, results,
                          status=status, started=started, solver_version=summary.solver_version(),
                          git_commit=commit,
                          converged=status == "done" and not unconverged,
                          units=summary.units_of(results, result_units(spec)))
    return {"status": status, "steps": int(steps), "wall_s": wall, "results": results,
            "unconverged": unconverged}


def run_cases(comm, case, points: Sequence[sweep.Point], out_dir: Path,
              progress: Progress | None = None) -> list[dict[str, Any]] | None:
    """Each point run as a whole case of its own (:func:`run_alone`, one rank per run, the
    runs shared by :func:`run_ensemble`) in ``out_dir/runs/run_NNN``. Returns on rank 0 the
    rows ``{"index", "label", "params", "status", "steps", "wall_s", "results"}`` in point
    order, None elsewhere. Collective."""
    def one(index: int, point: sweep.Point) -> dict[str, Any]:
        alone = Case(case.module, case.name, case.path, point.config)
        row = run_alone(alone, out_dir / "runs" / f"run_{index:03d}")
        return {"index": index, "label": point.label, "params": point.values, **row}

    return run_ensemble(comm, points, one, progress)


def run_sweep(case, ctx, units: dict[str, Any]) -> RunOutput:
    """A case whose module has no rows of its own, swept: every point of its ``[sweep]``
    (:func:`solver.sweep.points`) run as a whole case (:func:`run_cases`). Rank 0 writes
    ``<name>_sweep.csv``: the run, its swept fields, status, steps, wall time and every scalar
    result (nested tables as ``table.key``), units in the header; and one PNG per
    ``sweep.plots`` result against the first swept field, one curve per combination of the
    others. ``units`` are the module's result units. Results: ``runs``, one entry per run
    (index, label, params, status, steps, wall_s and its results)."""
    cfg = case.config
    known = _scalar_units(units)
    for i, name in enumerate(cfg.sweep.plots):
        if name not in known:
            raise InputError(f"{case.path}: sweep.plots[{i}]", f"unknown result {name!r} "
                             f"(known: {', '.join(known)})")
    points = sweep.points(cfg, str(case.path), case.path.parent)
    rows = run_cases(ctx.comm, case, points, ctx.out_dir,
                     ctx.progress(len(points), label="runs"))

    def finish() -> dict:
        swept = sweep.units(type(cfg), cfg.sweep.swept())
        table = [{"run": r["index"], **r["params"], "status": r["status"], "steps": r["steps"],
                  "wall_s": r["wall_s"], **_scalars(r["results"])} for r in rows]
        columns = list(dict.fromkeys(c for row in table for c in row))
        write_rows(ctx.out_dir / f"{case.name}_sweep.csv", columns,
                   {"run": "-", "status": "-", **{c: _unit(c, known) for c in columns},
                    **swept}, table)
        x, *others = swept
        groups = [k for k in others if len({repr(r[k]) for r in table}) > 1]
        for name in cfg.sweep.plots:
            plot_rows(ctx.out_dir / f"{case.name}_{name}.png", table, x, name, groups,
                      plot_title(case.name, list(swept)),
                      {k: f"{k} [{u}]" for k, u in {**swept, **known}.items()})
        return {"runs": [{"index": r["index"], "label": r["label"], "params": r["params"],
                          "status": r["status"], "steps": r["steps"], "wall_s": r["wall_s"],
                          **r["results"]} for r in rows],
                "unconverged": [f"run {r['index']} ({r['label']}): {line}" for r in rows
                                for line in r["unconverged"]]}

    summary = written_by_root(ctx.comm, finish, ctx.out_dir)
    return RunOutput(steps=sum(r["steps"] for r in summary["runs"]),
                     results={"runs": summary["runs"]}, unconverged=summary["unconverged"])


def runner(spec: ModuleSpec) -> Callable[[Case, RunContext], RunOutput]:
    """The run of a case of the module ``spec``: a case that sweeps whole cases
    (:func:`sweeps_whole_cases`) runs each point as a whole case (:func:`run_sweep`), any
    other case runs by ``spec.run``."""
    if not spec.sweeps_whole_cases:
        return spec.run

    def run(case: Case, ctx: RunContext) -> RunOutput:
        if sweeps_whole_cases(spec, case):
            return run_sweep(case, ctx, spec.result_units)
        return spec.run(case, ctx)

    return run


def sweeps_whole_cases(spec: ModuleSpec, case: Case) -> bool:
    """Whether ``case`` (of the module ``spec``) is a sweep that runs as one whole case per
    point: such a sweep takes no checkpoints and stops at once at a signal."""
    return spec.sweeps_whole_cases and sweep.is_sweep(case.config)


def result_units(spec: ModuleSpec) -> dict[str, Any]:
    """The result units of a case of the module ``spec``: those of one run, with the ``runs``
    of a sweep (:func:`run_sweep`) when its sweeps run whole cases."""
    units = dict(spec.result_units)
    if not spec.sweeps_whole_cases:
        return units
    return {**units, "runs": {"index": "-", "label": "-", "params": "-", "status": "-",
                              "steps": "-", "wall_s": "s", **units}}


def _scalars(results: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """The scalar results, nested tables flattened to ``table.key`` (lists left out)."""
    out = {}
    for key, value in results.items():
        if isinstance(value, dict):
            out.update(_scalars(value, f"{prefix}{key}."))
        elif not isinstance(value, (list, tuple)):
            out[f"{prefix}{key}"] = value
    return out


def _unit(column: str, known: dict[str, str]) -> str:
    """The unit of a result column: its own, else that of the table it is in (``energy.kinetic``
    in ``energy`` [J]), else ``-``."""
    while column not in known and "." in column:
        column = column.rsplit(".", 1)[0]
    return known.get(column, "-")


def _scalar_units(units: dict[str, Any], prefix: str = "") -> dict[str, str]:
    """``{"steps": "-", "wall_s": "s", "table.key": unit, ...}``: the columns a result table
    may hold."""
    out = {"steps": "-", "wall_s": "s"} if not prefix else {}
    for key, unit in units.items():
        if isinstance(unit, dict):
            out.update(_scalar_units(unit, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = unit
    return out
