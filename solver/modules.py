"""The physics modules: what each gives the solver (:class:`ModuleSpec`) and which exist.

A case's ``module = "..."`` names an entry of :data:`MODULES`. Each entry's ``entry`` module
(``solver/<module>/run.py``) defines ``SPEC``, the module's one :class:`ModuleSpec`: its case
schema, its run function, its case template, the units of its results, whether its sweeps run
whole cases and whether it checkpoints. Every piece is required and checked when ``SPEC`` is
built, so a module that lacks one fails as its entry module is imported.

The entry modules are imported on first use (:func:`spec_for`), so that a point-mass run never
pays for loading the CDEM kernels. This module imports no other ``solver`` module but
:mod:`solver.errors`: the schema, the sweeps and the ensembles build on it.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from solver.errors import InputError

TEMPLATES = Path(__file__).resolve().parent / "templates"
"""The folder of the case templates (``<module>.toml``) that ``solver init MODULE`` writes."""


@dataclass(frozen=True)
class ModuleSpec:
    """What a physics module gives the solver.

    ``config``: the root dataclass of its case schema (fields built with
    :func:`solver.case.param`). ``run(case: solver.case.Case, ctx: solver.context.RunContext)
    -> solver.context.RunOutput``: runs one case. ``template``: the case file ``solver init``
    writes, which runs as written. ``result_units``: result key -> unit, or -> a table of the
    units of its sub-keys (a nested table, or the items of a list of tables); a unit given for
    a table covers all its sub-keys. ``sweeps_whole_cases``: True when a case's ``[sweep]``
    runs each point as a whole case of its own (:func:`solver.ensemble.run_sweep`), False when
    ``run`` expands the sweep into rows of its own (:func:`solver.sweep.points`).
    ``checkpoints``: True when ``run`` honours the context's checkpoint and restart settings.
    """

    name: str
    config: type
    run: Callable[..., Any]
    template: Path
    result_units: Mapping[str, Any]
    sweeps_whole_cases: bool
    checkpoints: bool

    def __post_init__(self) -> None:
        problems = []
        if not dataclasses.is_dataclass(self.config) or not isinstance(self.config, type):
            problems.append(f"config {self.config!r} is not a dataclass")
        if not callable(self.run):
            problems.append(f"run {self.run!r} is not callable")
        if not isinstance(self.template, Path) or not self.template.is_file():
            problems.append(f"template {self.template} is not a file")
        if not self.result_units:
            problems.append("result_units is empty")
        problems += _unit_problems(self.result_units, "result_units")
        for flag in ("sweeps_whole_cases", "checkpoints"):
            if not isinstance(getattr(self, flag), bool):
                problems.append(f"{flag} is not True or False")
        if problems:
            raise TypeError(f"module {self.name!r}: {'; '.join(problems)}")


def _unit_problems(units: Any, where: str) -> list[str]:
    """What is wrong with a table of result units: every key a string, every value a unit
    string or a table of the same kind."""
    if not isinstance(units, Mapping):
        return [f"{where} is not a table"]
    problems = []
    for key, unit in units.items():
        if not isinstance(key, str):
            problems.append(f"{where} has the key {key!r}, not a string")
        elif isinstance(unit, Mapping):
            problems += _unit_problems(unit, f"{where}.{key}")
        elif not isinstance(unit, str):
            problems.append(f"{where}.{key} is {unit!r}, not a unit")
    return problems


@dataclass(frozen=True)
class Registered:
    """A module as the registry lists it: the module that defines its ``SPEC`` and one line
    on what it does (both known without importing it)."""

    entry: str
    description: str


MODULES = {
    "cdem": Registered(
        "solver.cdem.run",
        "deformable hexahedral blocks, breakable interface springs, semi-spring contact"),
    "contact_laws": Registered(
        "solver.contact_laws.run", "Cundall-Strack contact law: tangential restitution map"),
    "pointmass": Registered(
        "solver.pointmass.run", "UBO-Inter point-mass slides on a surface or DEM, into the sea"),
    "impact": Registered(
        "solver.impact.run", "ellipsoid impact on deformable ground, restitution coefficients"),
    "rockfall": Registered(
        "solver.rockfall.run", "rockfall trajectories on a slope profile, stochastic ensembles"),
}
"""Module name (``module = "..."`` in a case) -> where its spec is and what it does."""


def spec_for(module: str, where: str) -> ModuleSpec:
    """The :class:`ModuleSpec` of ``module``; an unknown module, or one this build lacks,
    raises InputError at ``where``."""
    if module not in MODULES:
        raise InputError(where, f"unknown module {module!r} (known: {', '.join(MODULES)})")
    entry = MODULES[module].entry
    try:
        found = importlib.import_module(entry)
    except ModuleNotFoundError as exc:
        if exc.name and (entry + ".").startswith(exc.name + "."):
            raise InputError(where, f"module {module!r} is not available in this build") from None
        raise
    spec = found.SPEC
    if not isinstance(spec, ModuleSpec) or spec.name != module:
        raise TypeError(f"{entry}.SPEC is not the ModuleSpec of {module!r}")
    return spec


def available(module: str) -> bool:
    """Whether ``module`` is part of this build."""
    try:
        spec_for(module, module)
    except InputError:
        return False
    return True
