"""The module registry: case ``module = "..."`` -> its schema class and its run function.

Each physics module exposes, in ``solver/<module>/run.py``:

* ``Config``: the root dataclass of its case schema (fields built with ``solver.case.param``);
* ``run(case: solver.case.Case, ctx: solver.context.RunContext) -> solver.context.RunOutput``;
* ``RESULT_UNITS``: result key -> unit (or -> a table of the units of its sub-keys);
* ``CHECKPOINTS = True`` when its ``run`` honours the context's checkpoint and restart
  settings;
* ``SWEEPS = True`` when its ``run`` expands the case's ``[sweep]`` into rows of its own
  (:func:`solver.sweep.points`); the other modules' sweeps run each point as a whole case
  (:func:`solver.ensemble.run_sweep`).

``solver/templates/<module>.toml`` is the case ``solver init MODULE`` writes.

Modules are imported lazily so that a point-mass run never pays for compiling CDEM kernels.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from solver.errors import InputError

MODULES = {
    "cdem": "solver.cdem.run",
    "contact_laws": "solver.contact_laws.run",
    "pointmass": "solver.pointmass.run",
    "impact": "solver.impact.run",
    "rockfall": "solver.rockfall.run",
}

DESCRIPTIONS = {
    "cdem": "deformable hexahedral blocks, breakable interface springs, semi-spring contact",
    "contact_laws": "Cundall-Strack contact law: tangential restitution map",
    "pointmass": "UBO-Inter point-mass slides on a surface or DEM, into the sea",
    "impact": "ellipsoid impact on deformable ground, restitution coefficients",
    "rockfall": "rockfall trajectories on a slope profile, stochastic ensembles",
}

TEMPLATES = Path(__file__).resolve().parent / "templates"


def _load(module: str, where: str):
    if module not in MODULES:
        raise InputError(where, f"unknown module {module!r} (known: {', '.join(MODULES)})")
    try:
        return importlib.import_module(MODULES[module])
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith(MODULES[module]):
            raise InputError(where, f"module {module!r} is not available in this build") from None
        raise


def schema_for(module: str, where: str) -> type:
    """The root case dataclass of ``module``."""
    return _load(module, where).Config


def runner_for(module: str, where: str):
    """The ``run(case, ctx)`` function of ``module``: a case that sweeps fields runs as one
    whole case per point when the module has no rows of its own."""
    found = _load(module, where)
    if getattr(found, "SWEEPS", False):
        return found.run

    def run(case, ctx):
        from solver import ensemble
        if sweeps_whole_cases(case):
            return ensemble.run_sweep(case, ctx, getattr(found, "RESULT_UNITS", {}))
        return found.run(case, ctx)

    return run


def sweeps_whole_cases(case) -> bool:
    """Whether ``case`` is a sweep that runs as one whole case per point (its module has no
    rows of its own): such a sweep takes no checkpoints and stops at once at a signal."""
    from solver.sweep import is_sweep
    return is_sweep(case.config) and not getattr(_load(case.module, "module"), "SWEEPS", False)


def result_units_for(module: str, where: str) -> dict:
    """Result key -> unit of ``module`` (empty when the module declares none), with the
    ``runs`` of a swept case for a module without rows of its own."""
    found = _load(module, where)
    units = getattr(found, "RESULT_UNITS", {})
    if getattr(found, "SWEEPS", False):
        return units
    from solver.ensemble import sweep_units
    return {**units, **sweep_units(units)}


def checkpoints(module: str, where: str) -> bool:
    """Whether ``module`` writes checkpoints and restarts from them."""
    return getattr(_load(module, where), "CHECKPOINTS", False)


def available(module: str) -> bool:
    """Whether ``module`` is part of this build."""
    try:
        _load(module, module)
    except InputError:
        return False
    return True


def template_for(module: str, where: str) -> str:
    """The text of the case template of ``module``."""
    _load(module, where)
    path = TEMPLATES / f"{module}.toml"
    if not path.is_file():
        raise InputError(where, f"no case template for module {module!r}")
    return path.read_text()
