"""Checks of a CDEM case against its mesh, before the first step.

They run on rank 0, which holds the whole mesh before it is distributed (the caller
broadcasts the verdict). Each error names the case file and the field:

* references: every group a material, boundary, interface pair or analysis names is in the
  mesh, and every boundary holds a component of at least one node;
* self-weight: no element strains under its own weight beyond the elastic range,
  rho |g| h / (K + 4G/3) < 1 (h its extent; the laterally confined column, the stiffest
  response gravity meets), which catches a modulus, density or gravity off by many orders;
* time step: positive and finite, no stage shorter than one step, and no stage needing
  more than :data:`STEP_CAP` steps (duration / dt, or for an open-ended stage the steps a
  p-wave takes to cross the mesh). The error names the culprit: a given ``time.dt`` far
  below the limit; the springs at the limiting element where they raise its frequency more
  than :data:`SPRING_BLAME` times; its material where the p-wave is faster than in any
  solid (:data:`C_SOLID`); else the stage's duration.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from solver.cdem.config import Config
from solver.cdem.hex8 import thinnest_height
from solver.cdem.model import MaterialTable, group_ids, spring_stiffness
from solver.cdem.stable_step import element_frequency
from solver.errors import InputError
from solver.mesh.distribute import whole
from solver.mesh.hexmesh import HexMesh
from solver.mesh.measures import measure
from solver.resources import need_count, need_disk

STEP_CAP = 1e8
"""Most steps a stage may need (hours already for a thousand elements, at 1e7
element-steps/s)."""

SPRING_BLAME = 10.0
"""Springs that raise the limiting element's frequency more than this are named in the error
(the default interface stiffness factor 10 raises it about 5.6 times)."""

C_SOLID = 1e5
"""A p-wave faster than this [m/s] is in no solid (diamond: 1.8e4): the material is named."""

BLOCK_ANALYSES = ("failure", "sliding", "resting", "stack")
"""Analyses that measure ``analysis.block_group``."""


def _group_ids(mesh: HexMesh, label: str, where: str) -> np.ndarray:
    return group_ids(label, np.unique(mesh.groups), mesh.group_names, where)


def _materials(mesh: HexMesh, cfg: Config, where: str):
    """The material table and the density, lam, mu of every element of the mesh."""
    table = MaterialTable.build(cfg.materials, np.unique(mesh.groups), mesh.group_names, where)
    row = table.row(mesh.groups)
    return table, SimpleNamespace(density=table.density[row], lam=table.lam[row],
                                  mu=table.mu[row])


def check_case(cfg: Config, mesh: HexMesh, where: str) -> None:
    """References, boundaries and self-weight of the case ``where`` on its mesh."""
    check_references(cfg, mesh, where)
    check_boundaries(cfg, mesh, where)
    check_self_weight(cfg, mesh, where)


def check_references(cfg: Config, mesh: HexMesh, where: str) -> None:
    """Every group label the case uses names a group of the mesh."""
    for k, mat in enumerate(cfg.materials):
        _group_ids(mesh, mat.group, f"{where}: materials[{k}].group")
    for k, bc in enumerate(cfg.boundaries):
        if bc.group:
            _group_ids(mesh, bc.group, f"{where}: boundaries[{k}].group")
    for k, pair in enumerate(cfg.interface.pairs):
        for i, label in enumerate(pair.groups):
            _group_ids(mesh, label, f"{where}: interface.pairs[{k}].groups[{i}]")
    if cfg.analysis.type in BLOCK_ANALYSES:
        _group_ids(mesh, cfg.analysis.block_group, f"{where}: analysis.block_group")


def check_boundaries(cfg: Config, mesh: HexMesh, where: str) -> None:
    """Every boundary holds at least one component of at least one node."""
    for k, bc in enumerate(cfg.boundaries):
        field = f"{where}: boundaries[{k}]"
        if not bc.fix:
            raise InputError(f"{field}.fix", "holds no component (give some of x, y, z)")
        b = np.asarray(bc.box)
        inside = np.all((mesh.points >= b[0::2]) & (mesh.points <= b[1::2]), axis=1)
        cells = mesh.cells
        if bc.group:
            cells = cells[np.isin(mesh.groups, _group_ids(mesh, bc.group, f"{field}.group"))]
        if not inside[cells].any():
            group = f" of group {bc.group!r}" if bc.group else ""
            raise InputError(f"{field}.box", f"selects no node{group}: {list(bc.box)}")


def material_index(mesh: HexMesh, cfg: Config, where: str) -> np.ndarray:
    """Index into ``cfg.materials`` of each element (the last entry naming its group)."""
    chosen = np.full(mesh.n_cells, -1)
    for k, mat in enumerate(cfg.materials):
        chosen[np.isin(mesh.groups, _group_ids(mesh, mat.group, where))] = k
    return chosen


def check_self_weight(cfg: Config, mesh: HexMesh, where: str) -> None:
    """rho |g| h / (K + 4G/3) < 1 in every element."""
    g = float(np.linalg.norm(cfg.gravity))
    if g == 0.0:
        return
    _, mats = _materials(mesh, cfg, where)
    extent = np.ptp(mesh.points[mesh.cells], axis=1).max(axis=1)
    strain = mats.density * g * extent / (mats.lam + 2.0 * mats.mu)
    e = int(np.argmax(strain))
    if strain[e] >= 1.0:
        k = int(material_index(mesh, cfg, where)[e])
        mat = cfg.materials[k]
        raise InputError(f"{where}: materials[{k}]", f"element {e} ({extent[e]:.3g} m) would "
                         f"strain {strain[e]:.3g} under its own weight (density "
                         f"{mat.density:g} kg/m3, youngs_modulus {mat.youngs_modulus:g} Pa, "
                         f"|g| {g:g} m/s2): beyond any elastic range")


def check_time_step(cfg: Config, mesh: HexMesh, steps: list[float], limits: list[float],
                    where: str) -> None:
    """The step each stage will take (``steps``; ``limits``: their stability limits) suits
    it."""
    crossing = None
    for i, (stage, dt, limit) in enumerate(zip(cfg.stages, steps, limits)):
        if not (math.isfinite(dt) and dt > 0.0):
            field, text = _model_step(cfg, mesh, limit, where)
            raise InputError(f"{where}: {field}", f"{text}: no usable time step")
        label = f"stage {stage.name!r} (stages[{i}])"
        if math.isfinite(stage.duration):
            if stage.duration < dt:
                raise InputError(f"{where}: stages[{i}].duration",
                                 f"{stage.duration:g} s is shorter than one time step "
                                 f"({dt:.3e} s)")
            span, need = stage.duration, f"{label} needs"
        else:
            crossing = crossing or _crossing_time(cfg, mesh, where)
            span = crossing
            need = f"a p-wave crosses the mesh in {crossing:.3g} s, so {label} needs over"
        steps = span / dt
        if steps <= STEP_CAP:
            continue
        tail = f"{need} {steps:.3g} steps, more than {STEP_CAP:g}"
        if cfg.time.dt > 0.0 and span / limit <= STEP_CAP:
            raise InputError(f"{where}: time.dt", f"the given step {dt:.3g} s is "
                             f"{limit / dt:.3g} times below the stability limit {limit:.3g} s; "
                             f"{tail}")
        field, text = _model_step(cfg, mesh, limit, where)
        if field is None:
            field, text = f"stages[{i}].duration", f"{text}, within the range of solids"
        raise InputError(f"{where}: {field}", f"{text}; {tail}")


MAX_FRAMES = 100_000
"""Most VTK frames of a run (a .pvtu and a .vtu per rank each)."""

FRAME_BYTES_PER_ELEMENT = 50.0
"""Disk a frame takes per element, at least [bytes]: its 8 corners' coordinates (192 B)
compressed about fourfold, without the cell data."""


def check_frames(cfg: Config, mesh: HexMesh, steps: list[float], where: str, out_dir,
                 ranks: int) -> None:
    """The VTK frames ``output.every`` asks for (:func:`frames_at_least`) are at most
    MAX_FRAMES, and their files and bytes fit the file system of ``out_dir``
    (solver.resources)."""
    if not cfg.output.vtk:
        return
    frames = frames_at_least(cfg, steps)
    field, what = f"{where}: output.every", f"{frames:.3g} VTK frames"
    need_count(field, frames, MAX_FRAMES, "VTK frames")
    need_disk(field, frames * mesh.n_cells * FRAME_BYTES_PER_ELEMENT, frames * (ranks + 1),
              out_dir, what)


def frames_at_least(cfg: Config, steps: list[float]) -> float:
    """The frames a run writes at least: one at the start and one per stage, and in each
    dynamic stage that runs its whole duration (no stop at a failure or at the landslide
    analysis' end of a stage) one per ``output.every``, at most one per step (``steps``:
    each stage's time step)."""
    ending = {cfg.analysis.trigger_stage, cfg.analysis.runout_stage} \
        if cfg.analysis.type == "landslide" else set()
    frames = 1.0 + len(cfg.stages)
    for stage, dt in zip(cfg.stages, steps):
        whole = (stage.kind == "dynamic" and math.isfinite(stage.duration)
                 and not stage.stop_on_failure and stage.name not in ending)
        if whole and cfg.output.every > 0.0:
            frames += min(stage.max_steps, stage.duration / dt,
                          stage.duration / cfg.output.every)
    return frames


def _crossing_time(cfg: Config, mesh: HexMesh, where: str) -> float:
    """Time a p-wave of the slowest material takes to cross the mesh's bounding box."""
    _, mats = _materials(mesh, cfg, where)
    c_p = np.sqrt((mats.lam + 2.0 * mats.mu) / mats.density)
    return float(np.linalg.norm(np.ptp(mesh.points, axis=0)) / c_p.min())


def _model_step(cfg: Config, mesh: HexMesh, limit: float,
                where: str) -> tuple[str | None, str]:
    """(field, description) of what sets the stability limit at the limiting element:
    mass-proportional damping that cuts its step more than SPRING_BLAME times (damping ratio
    zeta = c / (2 omega), omega the element's own largest frequency), springs that raise
    its frequency more than SPRING_BLAME times, or its material; field is None when the
    material is within the range of solids (p-wave speed up to C_SOLID)."""
    table, mats = _materials(mesh, cfg, where)
    x = mesh.points[mesh.cells]
    h = thinnest_height(x)
    c_p = np.sqrt((mats.lam + 2.0 * mats.mu) / mats.density)
    with np.errstate(all="ignore"):
        element_step = 2.0 / element_frequency(mats.density, mats.lam, mats.mu, x)
    e = int(np.nanargmin(element_step))
    k = int(material_index(mesh, cfg, where)[e])
    mat = cfg.materials[k]
    text = (f"the stable time step is {limit:.3g} s: element {e} of materials[{k}] (density "
            f"{mat.density:g} kg/m3, youngs_modulus {mat.youngs_modulus:g} Pa) carries a "
            f"p-wave at {c_p[e]:.3g} m/s across {h[e]:.3g} m")
    ratio = element_step[e] / limit if limit > 0.0 else math.inf
    for i, stage in enumerate(cfg.stages):
        zeta = stage.damping_terms[1] * element_step[e] / 4.0
        if math.hypot(1.0, zeta) + zeta > SPRING_BLAME:
            field = f"stages[{i}].viscous_damping"
            return field, (f"{text}, and {field} = {stage.damping_terms[1]:g} 1/s is "
                           f"{zeta:.3g} times critical there")
    if ratio > SPRING_BLAME:
        field, value = _stiffest_springs(cfg, mesh, table, mats, h, where)
        return field, (f"{text}, and the springs of {field} = {value:g} raise its frequency "
                       f"{ratio:.3g} times")
    if c_p[e] > C_SOLID or not math.isfinite(limit) or limit <= 0.0:
        return f"materials[{k}]", text
    return None, text


def _stiffest_springs(cfg: Config, mesh: HexMesh, table: MaterialTable, mats, h: np.ndarray,
                      where: str) -> tuple[str, float]:
    """The field setting the stiffest springs per unit area, interface or contact, and its
    value. A node carries up to 3 interface springs and up to 6 contact semi-springs (the
    weights of the stable-step estimate). The interface springs come from the mesh's
    measures, computed here: the set-up has released its own before the model build, and
    this error path runs once, at the end of a run that cannot start."""
    candidates = []
    part = whole(mesh, measure(mesh, where))
    if len(part.faces):
        k_n, k_s = spring_stiffness(cfg, table, part, where)
        f = int(np.argmax(np.maximum(k_n, k_s)))
        candidates.append((3.0 * max(k_n[f], k_s[f]),
                           *_interface_source(cfg, mesh, part.faces.elem[f], k_n[f] >= k_s[f])))
    c = cfg.contact
    if c.enabled:
        given = max(c.normal_stiffness, c.shear_stiffness)
        if given > 0.0:
            name = "normal_stiffness" if c.normal_stiffness >= c.shear_stiffness \
                else "shear_stiffness"
            candidates.append((6.0 * given, f"contact.{name}", given))
        else:
            k = c.stiffness_factor * float(np.max((mats.lam + 2.0 * mats.mu) / h))
            candidates.append((6.0 * k, "contact.stiffness_factor", c.stiffness_factor))
    if not candidates:
        return "interface.stiffness_factor", cfg.interface.stiffness_factor
    _, field, value = max(candidates, key=lambda item: item[0])
    return field, value


def _interface_source(cfg: Config, mesh: HexMesh, elems: np.ndarray,
                      normal: bool) -> tuple[str, float]:
    """The field that sets the stiffness of the interface face between ``elems``."""
    name = "normal_stiffness" if normal else "shear_stiffness"
    ga, gb = mesh.groups[elems]
    for k in reversed(range(len(cfg.interface.pairs))):
        pair = cfg.interface.pairs[k]
        ids = [_group_ids(mesh, label, where="") for label in pair.groups]
        inside = (ga in ids[0] and gb in ids[1]) or (ga in ids[1] and gb in ids[0])
        if inside and getattr(pair, name) > 0.0:
            return f"interface.pairs[{k}].{name}", getattr(pair, name)
    if getattr(cfg.interface, name) > 0.0:
        return f"interface.{name}", getattr(cfg.interface, name)
    return "interface.stiffness_factor", cfg.interface.stiffness_factor
