"""One point-mass run: build the surface, masses and model, march in time, collect results."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import numpy as np

from solver.ensemble_checkpoint import Record
from solver.errors import InputError
from solver.interrupt import Diverged
from solver.pointmass import benchmark
from solver.pointmass.config import MAX_STEPS, Config
from solver.pointmass.dynamics import LeftSurface, Model
from solver.pointmass.forces import SingularRbSystem
from solver.pointmass.grid import build_body
from solver.pointmass.integrate import StepTooSmall, rk4_adaptive_step, rk4_step
from solver.pointmass.output import VtkFrames, write_history
from solver.pointmass.surface import build_surface


def _history_row(t: float, model: Model, frame) -> list[float]:
    m = model.m
    total = m.sum()
    com = (m[:, None] * frame.r3).sum(axis=0) / total
    vcom = (m[:, None] * frame.v3).sum(axis=0) / total
    kin = 0.5 * float(np.sum(m * np.einsum("nc,nc->n", frame.v3, frame.v3)))
    rb = float(np.mean(np.abs(frame.h))) / (total * model.g / len(m)) if len(frame.h) else 0.0
    return [t, *com, float(np.linalg.norm(vcom)), kin, rb, float(np.mean(frame.wet))]


def simulate(cfg: Config, where: str, csv_path: Path | None, vtk: tuple[Path, str] | None,
             progress=None, resume: Record | None = None,
             boundary: Callable | None = None) -> tuple[dict, np.ndarray]:
    """Run one case configuration; returns its results row and its CoM history (frames x 8).

    ``boundary(steps, t, state)`` is called before every time step
    (:meth:`solver.ensemble_checkpoint.EnsembleCheckpoint.boundary`); ``state()`` gives the
    run as it stands: the state vector, time, step count, current adaptive step, next output
    time, the peak and error tallies, the CoM history rows and the VTK series' frames.
    ``resume``: such a state to go on from (a restart)."""
    surface = build_surface(cfg.surface, where)
    body = build_body(cfg, surface, where)
    model = Model(cfg, surface, body)
    try:
        return _march(cfg, model, csv_path, vtk, progress, resume, boundary)
    except SingularRbSystem:
        raise InputError(f"{where}: links", "the RB system of Eq. (9) is singular: the RB links "
                         "are redundant or degenerate (e.g. three masses on one line)") from None


def _march(cfg: Config, model: Model, csv_path, vtk, progress, resume,
           boundary) -> tuple[dict, np.ndarray]:
    tc, n = cfg.time, len(model.m)
    body = model.body
    total = model.m.sum()
    check = benchmark.SphereCupCheck(cfg, model) if benchmark.applies(cfg) else None
    conservative = (cfg.friction.mu == 0.0 and cfg.surface.z_sea == -math.inf
                    and len(body.ep) == 0)
    frames = VtkFrames(*vtk, body) if vtk else None
    y = np.concatenate([body.xy[:, 0], body.xy[:, 1], body.v[:, 0], body.v[:, 1]])
    r3, v3 = model.kinematics(body.xy, body.v)
    e0 = model.energy(r3, v3)
    com0 = (model.m[:, None] * r3).sum(axis=0) / total
    t, steps, h = 0.0, 0, tc.dt
    state = {"peak_speed": 0.0, "peak_time": 0.0, "energy": 0.0, "distance": 0.0}
    history = []
    stop_reason, stop_time = "t_end", None

    def observe(t: float, y: np.ndarray) -> float:
        xy, v = y.reshape(4, n)[:2].T, y.reshape(4, n)[2:].T
        r3, v3 = model.kinematics(xy, v)
        speed = float(np.linalg.norm((model.m[:, None] * v3).sum(axis=0)) / total)
        if speed > state["peak_speed"]:
            state["peak_speed"], state["peak_time"] = speed, t
        state["distance"] = max(state["distance"],
                                benchmark.link_length_error(r3, body.rb, model.rb_l0))
        if conservative:
            state["energy"] = max(state["energy"], abs(model.energy(r3, v3) - e0) / abs(e0))
        return float(np.max(np.sqrt(np.einsum("nc,nc->n", v3, v3))))

    def record(t: float, y: np.ndarray) -> None:
        s = y.reshape(4, n)
        frame = model.evaluate(s[:2].T, s[2:].T)
        history.append(_history_row(t, model, frame))
        if check is not None:
            check.update(frame)
        if frames is not None:
            frames.write(t, frame)

    def snapshot() -> tuple[dict, dict[str, np.ndarray]]:
        meta = {"t": t, "steps": steps, "h": h, "next_out": next_out, "tallies": dict(state),
                "check": check.state() if check is not None else None,
                "frames": frames.state() if frames is not None else None}
        return meta, {"y": y, "history": np.asarray(history)}

    if resume is None:
        observe(0.0, y)
        record(0.0, y)
        next_out = cfg.output.every
    else:
        meta = resume.meta
        t, steps, h, next_out = meta["t"], meta["steps"], meta["h"], meta["next_out"]
        y = resume.arrays["y"]
        history.extend(resume.arrays["history"].tolist())
        state.update(meta["tallies"])
        if check is not None:
            check.restore(meta["check"])
        if frames is not None:
            frames.restore(meta["frames"])
    eps = 1e-9 * tc.dt
    while t < tc.t_end - eps:
        if steps >= MAX_STEPS:
            stop_reason = "step_limit"
            break
        if boundary is not None:
            boundary(steps, t, snapshot)
        try:
            if tc.scheme == "rk4":
                step = min(tc.dt, tc.t_end - t)
                y_new = rk4_step(model.rhs, y, step)
            else:
                step = min(h, tc.dt, tc.t_end - t, next_out - t)
                y_new, step, h = rk4_adaptive_step(model.rhs, y, step, tc.rtol, tc.atol,
                                                   tc.dt_min)
            t_new = min((steps + 1) * tc.dt, tc.t_end) if tc.scheme == "rk4" else t + step
            if not np.all(np.isfinite(y_new)):
                raise Diverged(f"step {steps + 1} (t = {t_new:.6g} s)", "diverged: the "
                               "positions or velocities of the masses are not finite",
                               steps + 1, t_new)
            observed = observe(t_new, y_new)
        except LeftSurface:
            stop_reason = "left_surface"
            break
        except StepTooSmall:
            stop_reason = "step_too_small"
            break
        y, t, steps = y_new, t_new, steps + 1
        stopping = tc.stop_speed > 0.0 and t >= tc.stop_after and observed < tc.stop_speed
        if t >= next_out - eps or stopping or t >= tc.t_end - eps:
            record(t, y)
            while next_out <= t + eps:
                next_out += cfg.output.every
        if progress is not None:
            progress.update(t, com_speed=history[-1][4] if history else 0.0)
        if stopping:
            stop_reason, stop_time = "stopped", t
            break
    if history[-1][0] != t:
        record(t, y)
    rows = np.asarray(history)
    if frames is not None:
        frames.write_surfaces(model.surface, cfg.surface.z_sea)
    if csv_path is not None:
        write_history(csv_path, rows)
    final_com = rows[-1, 1:4]
    result = {"n_masses": n, "n_rb": len(body.rb), "n_ep": len(body.ep),
              "mass_total": float(total), "steps": steps,
              "peak_speed": state["peak_speed"], "peak_time": state["peak_time"],
              "stop_time": stop_time, "stop_reason": stop_reason, "final_time": t,
              "final_com": final_com.tolist(), "final_com_speed": float(rows[-1, 4]),
              "com_travel": float(np.linalg.norm(final_com[:2] - com0[:2])),
              "initial_com": com0.tolist(),
              "distance_rel_error_max": state["distance"]}
    if conservative:
        result["energy_rel_drift"] = state["energy"]
    if model.surface.crs:
        result["surface_crs"] = model.surface.crs
    if check is not None:
        result.update(check.results())
    return result, rows
