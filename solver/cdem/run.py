"""``module = "cdem"``: load the mesh, build the partitioned model, run the stages."""

from __future__ import annotations

import dataclasses
import gc
import math
import signal
import sys

import numpy as np
from mpi4py import MPI

from solver import interrupt
from solver.case import Case
from solver.cdem import checkpoint
from solver.cdem.analyses import make_observer
from solver.cdem.checks import check_case, check_frames, check_time_step
from solver.cdem.config import Config
from solver.cdem.model import build_model
from solver.cdem.output import CdemWriter
from solver.cdem.prestep import implicit_prestep
from solver.cdem.stable_step import StepControl
from solver.cdem.results import RESULT_UNITS
from solver.cdem.timeloop import Checkpointing, TimeLoop
from solver.context import RunContext, RunOutput
from solver.errors import InputError
from solver.interrupt import Interrupted
from solver.io import checkpoint as files
from solver.mesh.build import mesh_from_config
from solver.mesh.distribute import distribute
from solver.mesh.measures import measure
from solver.modules import TEMPLATES, ModuleSpec
from solver.parallel import root_only


def stability_limits(comm, model) -> list[float]:
    """The global stable step of each stage with every spring glued and the contact on
    every element with a face that can open (the smallest over the ranks;
    solver.cdem.stable_step.StepBound.worst_limits) [s]: no glue state the run can reach
    steps below it."""
    local = np.array(model.stage_dt_limits_local, dtype=float)
    comm.Allreduce(MPI.IN_PLACE, local, op=MPI.MIN)
    return local.tolist()


def time_steps(cfg: Config, limits: list[float], where: str) -> list[float]:
    """The smallest step each stage can take: safety x its stability limit ``limits``
    (under its own damping, :func:`stability_limits`), or the given one, which must be
    below every stage's limit."""
    if cfg.time.dt <= 0:
        return [cfg.time.safety * limit for limit in limits]
    for k, limit in enumerate(limits):
        if cfg.time.dt > limit:
            raise InputError(f"{where}: time.dt", f"{cfg.time.dt:.3e} s is above the stability "
                                                  f"limit {limit:.3e} s of stages[{k}] "
                                                  f"({cfg.stages[k].name})")
    return [cfg.time.dt] * len(limits)


def _restart_partition(comm, ctx: RunContext, digest: str, mesh, where: str,
                       repartition: bool) -> tuple[np.ndarray | None, np.ndarray | None]:
    """On a restart, (parts, work) on rank 0: the checkpoint's partition where it is kept
    (solver.cdem.checkpoint.restart_partition; never with ``repartition``, a rebalance),
    else the work per element at the checkpoint to partition by."""
    if not ctx.restart:
        return None, None
    return root_only(comm, lambda: checkpoint.restart_partition(
        ctx.out_dir, digest, mesh.n_cells, comm.size, where, keep=not repartition)) or (None, None)


def run(case: Case, ctx: RunContext) -> RunOutput:
    """Run the case on ``ctx``'s ranks. With ``ctx.rebalance_above``, a checkpoint after
    which the ranks' work was that uneven ends the model: the run goes on from it on a new
    partition by the work, as a restart does, to the last bit the same motion."""
    output = _run_partition(case, ctx)
    while output is None:
        gc.collect()          # the old model now: its loop and checkpoint writer form a cycle
        output = _run_partition(case, dataclasses.replace(ctx, restart=True), repartition=True)
    return output


def _imbalance(work: list[float]) -> float:
    """The largest of the ranks' work over their mean (1 where none worked)."""
    mean = sum(work) / len(work)
    return max(work) / mean if mean > 0.0 else 1.0


def _work_imbalance(comm, loop: TimeLoop) -> float:
    """The busiest rank's wall time in its steps outside the exchanges (``busy_seconds``)
    over the mean of all ranks, since the last call (collective)."""
    busy = comm.allgather(loop.busy_seconds)
    loop.busy_seconds = 0.0
    return _imbalance(busy)


def _timing(comm, loop: TimeLoop) -> dict | None:
    """Where each rank's time in the steps went since the run started on this partition
    (a restart or a rebalance starts the count again), on rank 0 (collective): ``steps_s``
    its wall time in the steps, ``waiting_s`` the part of it in the exchanges (the neighbour
    collectives and the step's reductions: waiting for the other ranks, and moving the
    bytes), ``contact_s`` the part in the contact; ``work_imbalance`` the busiest rank's
    time outside the exchanges over the mean. The step's work comes in phases between its
    exchanges, so ranks of equal work may still wait for each other: ``waiting_s`` says how
    much."""
    rows = comm.gather((loop.step_seconds, loop.waiting_seconds, loop.contact_seconds), root=0)
    if rows is None:
        return None
    steps, waiting, contact = (list(column) for column in zip(*rows))
    return {"steps_s": steps, "waiting_s": waiting, "contact_s": contact,
            "work_imbalance": _imbalance([s - w for s, w in zip(steps, waiting)])}


def _run_partition(case: Case, ctx: RunContext, repartition: bool = False) -> RunOutput | None:
    """The run on one partition (``repartition``: a restart after a rebalance, on a new
    partition by the work): its output, or None when a checkpoint asked for a new partition
    (see :func:`run`)."""
    cfg: Config = case.config
    comm = ctx.comm
    where = str(case.path)
    mesh = root_only(comm, lambda: mesh_from_config(cfg.mesh, f"{where}: mesh"))
    root_only(comm, lambda: check_case(cfg, mesh, where))
    digest = files.run_digest(ctx.out_dir, case)
    parts, work = _restart_partition(comm, ctx, digest, mesh, where, repartition)
    measures = root_only(comm, lambda: measure(mesh, f"{where}: mesh"))
    part = distribute(comm, mesh, measures, cfg.partitioner, work, parts)
    observer = make_observer(comm, cfg, mesh, measures, where, (ctx.out_dir, case.name))
    del measures
    model = build_model(comm, cfg, part, where)
    group_names = part.group_names
    del part
    limits = stability_limits(comm, model)
    steps = time_steps(cfg, limits, where)
    root_only(comm, lambda: check_time_step(cfg, mesh, steps, limits, where))
    root_only(comm, lambda: check_frames(cfg, mesh, steps, where, ctx.out_dir, comm.size))
    del mesh
    control = StepControl(comm, model.step_bound, model.active_faces, cfg.time.safety,
                          cfg.time.dt)
    loop = TimeLoop(comm, model, cfg.gravity, control=control)
    writer = (CdemWriter(comm, ctx.out_dir, case.name, cfg.contact.enabled,
                         group_names=group_names) if cfg.output.vtk else None)
    frames = PeriodicFrames(writer, model, cfg.output.every)
    observers = [observer] if observer is not None else []
    run_state = {"stage": 0, "stage_results": [], "unconverged": [], "rebalances": []}
    clock = None
    if ctx.restart:
        manifest = checkpoint.load(comm, ctx.out_dir, digest, loop, observers, where)
        run_state = manifest["run"]
        clock = manifest["clock"]
        frames.restore(run_state["frames"], model)
    elif writer is not None:
        writer.write(0.0, model)

    def save(last: bool = False) -> None:
        if ctx.rebalance_above and comm.size > 1 and not last:
            imbalance = _work_imbalance(comm, loop)
            loop.checkpoint.rebalance_due = imbalance >= ctx.rebalance_above
            if loop.checkpoint.rebalance_due:
                run_state.setdefault("rebalances", []).append({"step": loop.step,
                                                               "imbalance": imbalance})
                if comm.rank == 0 and not ctx.quiet:
                    print(f"rebalance after step {loop.step}: the busiest rank worked "
                          f"{imbalance:.3g} times the mean since the last checkpoint",
                          file=sys.stderr, flush=True)
        run_state["frames"] = frames.state()
        checkpoint.save(comm, ctx.out_dir, digest, loop, run_state["stage"], observers,
                        run_state)

    if ctx.checkpoint_steps or ctx.checkpoint_seconds:
        loop.checkpoint = Checkpointing(save, ctx.checkpoint_steps, ctx.checkpoint_seconds)
    for k in range(run_state["stage"], len(cfg.stages)):
        stage = cfg.stages[k]
        run_state["stage"] = k
        timed = math.isfinite(stage.duration)
        start_at = 0.0 if clock is None else clock.t_stage if timed else clock.steps
        progress = ctx.progress(stage.duration if timed else stage.max_steps,
                                label=f"{stage.name}:", start_at=start_at)
        start_step = loop.step - (clock.steps if clock is not None else 0)
        if model.contact is not None and clock is None:
            run_state["renewals_at_stage_start"] = model.contact.renewals
        loop.set_step(control.step(stage.damping_terms))
        prestep = (implicit_prestep(comm, loop, stage, f"{where}: stages[{k}].prestep")
                   if stage.prestep == "implicit" and clock is None else None)
        reason = loop.run_stage(stage, observers + frames.observers(), progress, clock)
        if reason == "rebalance":
            return None
        clock = None
        if reason == "interrupted":
            if loop.checkpoint.write is not None:
                save(last=True)
            raise Interrupted(interrupt.received() or signal.SIGTERM, loop.step, loop.time)
        loop.update_stored_energy()
        stage_result = {"name": stage.name, "steps": loop.step - start_step,
                        "dt": [loop.clock.dt_min, loop.clock.dt_max],
                        "end": reason, "unbalance_ratio": loop.unbalance}
        if "renewals_at_stage_start" in run_state:
            stage_result["renewals"] = (model.contact.renewals
                                        - run_state["renewals_at_stage_start"])
        if prestep is not None:
            stage_result["prestep"] = prestep
        if stage.kind == "relax":
            stage_result["converged"] = reason == "converged"
            if reason != "converged":
                run_state["unconverged"].append(
                    f"stages[{k}] ({stage.name}): relaxation ended by {reason} at unbalance "
                    f"ratio {loop.unbalance:.3g} (tolerance {stage.unbalance_tol:g})")
        run_state["stage_results"].append(stage_result)
        if writer is not None and writer.last_time() != loop.time:
            writer.write(loop.time, model)
    run_state["stage"] = len(cfg.stages)
    results = _general_results(comm, loop, model)
    if model.contact is not None:
        results["contact"] = model.contact.summary()
        results["contact_types_seen"] = results["contact"]["types_seen"]
        results["max_penetration_ratio"] = results["contact"]["max_penetration_ratio"]
    results["stages"] = run_state["stage_results"]
    if ctx.rebalance_above:
        results["rebalances"] = run_state.get("rebalances", [])
    if observer is not None:
        results.update(observer.results())
    return RunOutput(steps=loop.step, results=results, unconverged=run_state["unconverged"],
                     timing=_timing(comm, loop))


class PeriodicFrames:
    """Frames every ``every`` seconds of simulated time (none for 0, or without a writer)."""

    def __init__(self, writer, model, every: float):
        self.writer = writer
        self.model = model
        self.every = every
        self.next = every

    def observers(self) -> list:
        return [self] if self.writer is not None and self.every > 0 else []

    def __call__(self, record) -> None:
        if record.time >= self.next - 0.5 * record.dt:
            self.writer.write(record.time, self.model)
            self.next += self.every

    def state(self) -> dict:
        return {"next": self.next,
                "series": self.writer.state() if self.writer is not None else {}}

    def restore(self, state: dict, model) -> None:
        self.next = state["next"]
        if self.writer is not None:
            self.writer.restore(state["series"], model)


def _general_results(comm, loop: TimeLoop, model) -> dict:
    n = model.nodes
    disp = np.linalg.norm(n.x - n.x0, axis=1)
    max_disp = comm.allreduce(float(disp.max()) if len(disp) else 0.0, op=MPI.MAX)
    broken = comm.allreduce(int(np.count_nonzero(model.springs.state)), op=MPI.SUM)
    springs = 4 * model.n_faces_global
    e = loop.energies
    return {"dt": loop.dt, "time": loop.time, "max_displacement": max_disp,
            "broken_springs": broken, "broken_fraction": broken / springs if springs else 0.0,
            "unbalance_ratio": loop.unbalance, "energy": e.as_dict(),
            "energy_error": e.relative_error()}


SPEC = ModuleSpec(name="cdem", config=Config, run=run, template=TEMPLATES / "cdem.toml",
                  result_units=RESULT_UNITS, sweeps_whole_cases=True, checkpoints=True)
