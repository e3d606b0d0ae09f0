"""A checkpoint written by an earlier solver, whose case had fewer fields, restarts on a
solver that adds fields with defaults that keep its behaviour: the run's case.resolved.toml
(written at its first start, never rewritten) resolves to the same case here. Any change of
a value still refuses the restart."""

import json
import shutil
import tomllib

import pytest
from conftest import CASES, main_in_process

from solver.io import checkpoint
from solver.io.toml import dumps

CASE = CASES / "fractured_column.toml"
SETS = ("output.vtk=false", "stages[0].duration=0.003")


def _args(*more: str) -> list[str]:
    return ["run", str(CASE), "--quiet", *more, *(a for o in SETS for a in ("--set", o))]


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A cdem run, finished with its last checkpoint in place."""
    out = tmp_path_factory.mktemp("versions") / "run"
    proc = main_in_process(_args("--out", str(out), "--checkpoint-every", "10"))
    assert proc.returncode == 0, proc.stderr
    return out


def _as_written_by(folder, edit) -> None:
    """Make the run in ``folder`` look written by a solver whose resolved case is
    ``edit(resolved)``: its case.resolved.toml and its checkpoint's case digest."""
    path = folder / "case.resolved.toml"
    resolved = tomllib.loads(path.read_text())
    edit(resolved)
    path.write_text(dumps(resolved, header="as an earlier solver resolved it"))
    manifest_path = folder / "checkpoint" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["case"] = checkpoint.case_digest(tomllib.loads(path.read_text()))
    manifest_path.write_text(json.dumps(checkpoint._sealed(manifest)))


def _without_law_fields(resolved):
    """The case of a solver without the contact-law slot (its fields at their defaults)."""
    contact = resolved["contact"]
    for field in ("normal_law", "tangential_law", "dynamic_friction_deg",
                  "weakening_velocity"):
        del contact[field]


def test_a_checkpoint_of_a_solver_with_fewer_case_fields_restarts(tmp_path, finished):
    folder = tmp_path / "run"
    shutil.copytree(finished, folder)
    _as_written_by(folder, _without_law_fields)
    proc = main_in_process(_args("--restart", str(folder)))
    assert proc.returncode == 0 and not proc.stderr, proc.stderr
    through = json.loads((finished / "summary.json").read_text())
    again = json.loads((folder / "summary.json").read_text())
    assert again["steps"] == through["steps"]
    assert again["results"]["max_displacement"] == through["results"]["max_displacement"]


@pytest.mark.parametrize("edit", [
    pytest.param(lambda r: r["contact"].update(friction_deg=r["contact"]["friction_deg"] + 1),
                 id="a value changed"),
    pytest.param(lambda r: (_without_law_fields(r),
                            r["contact"].update(restitution=r["contact"]["restitution"] / 2)),
                 id="fewer fields and a value changed"),
])
def test_a_checkpoint_of_a_case_resolved_otherwise_is_refused(tmp_path, finished, edit):
    folder = tmp_path / "run"
    shutil.copytree(finished, folder)
    _as_written_by(folder, edit)
    proc = main_in_process(_args("--restart", str(folder)))
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and "another case" in lines[0], lines
