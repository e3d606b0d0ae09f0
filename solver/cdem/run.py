"""``module = "cdem"``: load the mesh, build the partitioned model, run the stages."""

from __future__ import annotations

import math

import numpy as np
from mpi4py import MPI

from solver.case import Case
from solver.cdem.analyses import make_observer
from solver.cdem.checks import check_case, check_time_step
from solver.cdem.config import Config
from solver.cdem.model import build_local_model
from solver.cdem.output import CdemWriter
from solver.cdem.timeloop import TimeLoop
from solver.context import RunContext, RunOutput
from solver.errors import InputError
from solver.mesh.build import mesh_from_config
from solver.parallel import on_root

__all__ = ["Config", "run"]


def stability_limit(comm, model) -> float:
    """The global stable step of the model (the smallest over the ranks)."""
    return comm.allreduce(model.dt_limit_local, op=MPI.MIN)


def time_step(comm, cfg: Config, model, where: str) -> float:
    """The global step: safety x stability limit, or the given one if it is below the limit."""
    limit = stability_limit(comm, model)
    if cfg.time.dt > 0:
        if cfg.time.dt > limit:
            raise InputError(f"{where}: time.dt", f"{cfg.time.dt:.3e} s is above the stability "
                                                  f"limit {limit:.3e} s")
        return cfg.time.dt
    return cfg.time.safety * limit


def run(case: Case, ctx: RunContext) -> RunOutput:
    cfg: Config = case.config
    comm = ctx.comm
    where = str(case.path)
    mesh = on_root(comm, lambda: mesh_from_config(cfg.mesh, f"{where}: mesh"))
    check_case(cfg, mesh, where)
    model = build_local_model(comm, cfg, mesh, where)
    dt = time_step(comm, cfg, model, where)
    check_time_step(cfg, mesh, dt, stability_limit(comm, model), where)
    loop = TimeLoop(comm, model, cfg.gravity, dt)
    observer = make_observer(comm, cfg, mesh, model)
    writer = (CdemWriter(comm, ctx.out_dir, case.name, cfg.contact.enabled)
              if cfg.output.vtk else None)
    observers = [observer] if observer is not None else []
    if writer is not None:
        writer.write(0.0, model)
        if cfg.output.every > 0:
            observers.append(_periodic_writer(writer, model, cfg.output.every))
    stage_results = []
    for stage in cfg.stages:
        progress = ctx.progress(stage.duration if math.isfinite(stage.duration)
                                else stage.max_steps, label=f"{stage.name}:")
        start_step = loop.step
        reason = loop.run_stage(stage, observers, progress)
        loop.update_stored_energy()
        stage_results.append({"name": stage.name, "steps": loop.step - start_step,
                              "end": reason, "unbalance_ratio": loop.unbalance})
        if writer is not None:
            writer.write(loop.time, model)
    results = _general_results(comm, loop, model)
    if model.contact is not None:
        results["contact"] = model.contact.summary()
        results["contact_types_seen"] = results["contact"]["types_seen"]
        results["max_penetration_ratio"] = results["contact"]["max_penetration_ratio"]
    results["stages"] = stage_results
    if observer is not None:
        results.update(observer.results())
    return RunOutput(steps=loop.step, results=results)


def _periodic_writer(writer, model, every: float):
    state = {"next": every}

    def observe(loop, info) -> None:
        if info.time >= state["next"] - 0.5 * loop.dt:
            writer.write(info.time, model)
            state["next"] += every

    return observe


def _general_results(comm, loop: TimeLoop, model) -> dict:
    n = model.n_own
    disp = np.linalg.norm(model.x[:n] - model.x0, axis=1)
    max_disp = comm.allreduce(float(disp.max()) if n else 0.0, op=MPI.MAX)
    broken = comm.allreduce(int(np.count_nonzero(model.state)), op=MPI.SUM)
    springs = 4 * model.n_faces_global
    e = loop.energies
    scale = max(abs(e.gravity_work), e.kinetic, e.strain + e.spring, 1e-300)
    return {"dt": loop.dt, "time": loop.time, "max_displacement": max_disp,
            "broken_springs": broken, "broken_fraction": broken / springs if springs else 0.0,
            "unbalance_ratio": loop.unbalance, "energy": e.as_dict(),
            "energy_error": abs(e.error()) / scale}
