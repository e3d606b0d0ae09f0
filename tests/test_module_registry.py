"""Every registered module gives the solver its whole interface (solver.modules.ModuleSpec):
its template loads and runs, its result units cover its results, ``solver describe`` lists its
case fields; a spec that lacks a piece fails as it is built."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest
from conftest import main_in_process

from solver.case import load_case
from solver.modules import MODULES, TEMPLATES, ModuleSpec, spec_for

SHRINK = {
    "cdem": ["stages[0].max_steps=20", "stages[1].duration=0.01", "output.vtk=false"],
    "contact_laws": ["grid.n_gt=4", "grid.n_kt=3", "steps=400", "small_gt.steps=2000"],
    "pointmass": ["time.t_end=5.0"],
    "rockfall": ["ensemble.vary.omega_0.values=[0.0]"],
}
"""``--set`` overrides that make a module's template run quickly in the test, as a user would
shorten it; a module not named here runs its template as written."""


def uncovered(results: dict, units: dict, prefix: str = "") -> list[str]:
    """The dotted result keys that ``units`` gives no unit for (a unit given for a table covers
    its sub-keys; a table of units applies to a nested table or to each item of a list)."""
    missing = []
    for key, value in results.items():
        name = f"{prefix}{key}"
        if key not in units:
            missing.append(name)
            continue
        unit = units[key]
        if isinstance(unit, str):
            continue
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, dict):
                missing += uncovered(item, unit, f"{name}.")
            elif item is not None:
                missing.append(f"{name} (a table of units for the value {item!r})")
    return sorted(set(missing))


@pytest.mark.parametrize("module", list(MODULES))
def test_spec_is_the_modules_own(module):
    spec = spec_for(module, "test")
    assert isinstance(spec, ModuleSpec) and spec.name == module
    assert spec.template.parent == TEMPLATES


@pytest.mark.parametrize("module", list(MODULES))
def test_template_runs_and_its_units_cover_the_results(module, tmp_path):
    spec = spec_for(module, "test")
    case = tmp_path / "case.toml"
    assert main_in_process(["init", module, "--out", str(case)]).returncode == 0
    assert case.read_text() == spec.template.read_text()
    assert load_case(case).module == module
    sets = [word for line in SHRINK.get(module, []) for word in ("--set", line)]
    out = tmp_path / "out"
    done = main_in_process(["run", str(case), "--out", str(out), "--quiet", *sets])
    assert done.returncode == 0, done.stderr[-4000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["module"] == module and summary["status"] == "done"
    assert summary["results"]
    assert uncovered(summary["results"], spec.result_units) == []
    assert set(summary["results"]) == set(summary["units"])


@pytest.mark.parametrize("module", list(MODULES))
def test_describe_lists_every_case_field(module):
    spec = spec_for(module, "test")
    done = main_in_process(["describe", module])
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    for field in dataclasses.fields(spec.config):
        pattern = re.compile(rf"{re.escape(field.name)}(\[\])?(:| \[)")
        assert any(pattern.match(line) for line in lines), field.name


def test_describe_lists_every_module_with_its_description():
    listed = main_in_process(["describe"]).stdout.splitlines()
    for module, registered in MODULES.items():
        assert any(line.split() == [module, *registered.description.split()]
                   for line in listed), module


def test_a_spec_that_lacks_a_piece_fails_as_it_is_built(tmp_path):
    spec = spec_for("impact", "test")
    good = {f.name: getattr(spec, f.name) for f in dataclasses.fields(ModuleSpec)}
    with pytest.raises(TypeError, match="result_units"):
        ModuleSpec(**{k: v for k, v in good.items() if k != "result_units"})
    with pytest.raises(TypeError, match="template .* is not a file"):
        ModuleSpec(**{**good, "template": tmp_path / "none.toml"})
    with pytest.raises(TypeError, match="result_units.runs is 3, not a unit"):
        ModuleSpec(**{**good, "result_units": {"runs": 3}})
    with pytest.raises(TypeError, match="config .* is not a dataclass"):
        ModuleSpec(**{**good, "config": dict})
    with pytest.raises(TypeError, match="checkpoints is not True or False"):
        ModuleSpec(**{**good, "checkpoints": None})


def test_unknown_module_is_bad_input():
    done = main_in_process(["describe", "nosuch"])
    assert done.returncode == 2
    assert "unknown module 'nosuch'" in done.stderr
