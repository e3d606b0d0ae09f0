"""The module registry: case ``module = "..."`` -> its schema class and its run function.

Each physics module exposes, in ``solver/<module>/run.py``:

* ``Config``: the root dataclass of its case schema (fields built with ``solver.case.param``);
* ``run(case: solver.case.Case, ctx: solver.context.RunContext) -> solver.context.RunOutput``.

Modules are imported lazily so that a point-mass run never pays for compiling CDEM kernels.
"""

from __future__ import annotations

import importlib

from solver.errors import InputError

MODULES = {
    "cdem": "solver.cdem.run",
    "contact_laws": "solver.contact_laws.run",
    "pointmass": "solver.pointmass.run",
    "impact": "solver.impact.run",
    "rockfall": "solver.rockfall.run",
}


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
    """The ``run(case, ctx)`` function of ``module``."""
    return _load(module, where).run
