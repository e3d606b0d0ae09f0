"""Output folder policy (solver.io.outdir), in-process through ``solver.cli.main``: one run per
folder, ``--overwrite`` replaces a run (never other files), results appear whole, a failed or
interrupted run leaves an earlier complete run as it was, and folder problems are one error
line naming ``--out``."""

from __future__ import annotations

import json
import os
import signal
import threading

import pytest

import solver.cdem.run  # noqa: F401  (imported here, so a signal lands in a run, not an import)
from conftest import CASES
from solver.cli import main

CASE = """module = "pointmass"
name = "slide"
[surface]
kind = "plane"
slope_deg = 30.0
[grid]
kind = "footprint"
footprint = [[-10.0, -10.0], [10.0, -10.0], [10.0, 10.0], [-10.0, 10.0]]
nx = 2
ny = 2
[time]
t_end = 0.4
dt = 0.1
[output]
every = 0.1
plot = false
"""


@pytest.fixture
def case(tmp_path):
    path = tmp_path / "slide.toml"
    path.write_text(CASE)
    return path


def _main(capsys, *args: str) -> tuple[int, list[str]]:
    capsys.readouterr()
    code = main(["run", *map(str, args), "--quiet"])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err.splitlines()


def _tree(folder) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


def _hidden(parent) -> list[str]:
    return [p.name for p in parent.iterdir() if p.name.startswith(".")]


def test_used_folder_is_refused_then_replaced_with_overwrite(case, tmp_path, capsys):
    out = tmp_path / "out"
    assert _main(capsys, case, "--out", out) == (0, [])
    first = _tree(out)
    assert "summary.json" in first and "slide.pvd" in first
    code, lines = _main(capsys, case, "--out", out, "--set", "output.every=0.2")
    assert code == 2 and len(lines) == 1 and "--out" in lines[0] and "another run" in lines[0]
    assert _tree(out) == first
    assert _main(capsys, case, "--out", out, "--set", "output.every=0.2", "--overwrite") \
        == (0, [])
    second = _tree(out)

    def frames(tree):
        return sorted(name for name in tree if name.startswith("slide/") and
                      name.endswith(".vtu"))

    assert len(frames(first)) == 5 and frames(second) == frames(first)[:3]
    assert second["slide.pvd"] != first["slide.pvd"]
    assert _hidden(tmp_path) == []


def test_failed_rerun_keeps_the_complete_run(tmp_path, capsys):
    """The rerun passes the case-file checks and fails in the model checks, after its
    output folder was prepared: the earlier run stays whole, nothing else is left."""
    out = tmp_path / "out"
    column = CASES / "column_gravity.toml"
    assert _main(capsys, column, "--out", out, "--set", "stages[0].max_steps=20")[0] == 0
    first = _tree(out)
    code, lines = _main(capsys, column, "--out", out, "--overwrite",
                        "--set", "boundaries[0].box=[5.0, 6.0, 5.0, 6.0, 5.0, 6.0]")
    assert code == 2 and len(lines) == 1 and "boundaries[0].box" in lines[0]
    assert _tree(out) == first and _hidden(tmp_path) == []


def test_interrupted_rerun_keeps_the_complete_run(case, tmp_path, capsys):
    """SIGINT during the rerun (a real signal, not a mock) ends it with exit code 130 and
    leaves the earlier run untouched."""
    out = tmp_path / "out"
    assert _main(capsys, case, "--out", out) == (0, [])
    first = _tree(out)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        code, _ = _main(capsys, CASES / "column_gravity.toml", "--out", out, "--overwrite",
                        "--set", "stages[0].unbalance_tol=1e-300")
    finally:
        timer.cancel()
    assert code == 130
    assert _tree(out) == first and _hidden(tmp_path) == []


def test_folder_holding_other_files_is_refused_even_with_overwrite(case, tmp_path, capsys):
    out = tmp_path / "notes"
    out.mkdir()
    (out / "thesis.tex").write_text("precious")
    code, lines = _main(capsys, case, "--out", out, "--overwrite")
    assert code == 2 and len(lines) == 1 and "not a solver run" in lines[0]
    assert _tree(out) == {"thesis.tex": b"precious"} and _hidden(tmp_path) == []


def test_empty_existing_folder_takes_the_run(case, tmp_path, capsys):
    out = tmp_path / "empty"
    out.mkdir()
    assert _main(capsys, case, "--out", out) == (0, [])
    assert json.loads((out / "summary.json").read_text())["case"] == "slide"


@pytest.mark.parametrize("where", ["file", "below-a-file", "read-only-filesystem"])
def test_unusable_out_is_one_error_line(where, case, tmp_path, capsys):
    target = tmp_path / "taken"
    target.write_text("not a folder")
    if where == "below-a-file":
        target = target / "out"
    elif where == "read-only-filesystem":
        target = "/sys/solver-out"
        if not os.path.ismount("/sys"):
            pytest.skip("no /sys file system (where no one may create a folder)")
    code, lines = _main(capsys, case, "--out", target)
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: --out: ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["slide.toml", "taken"]
