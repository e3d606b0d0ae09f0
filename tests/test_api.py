"""The Python API (solver.run_case, solver.load_run): real runs in this process, read back
as the CLI wrote them; bad input as one exception with the CLI's line."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

import solver
from conftest import CASES, main_in_process, run_cli
from solver.io.table import read_columns

SHORT_SLIDE = {"stages[1].tilt_rate": 1500.0, "stages[1].duration": 0.02,
               "stages[2].duration": 0.05}
"""sliding_block tilted in 0.02 s and measured over 0.05 s of sliding (8,600 steps)."""


def test_run_case_runs_sliding_block_and_reads_its_frames(tmp_path):
    run = solver.run_case(CASES / "sliding_block.toml", out=tmp_path / "slide",
                          overrides=SHORT_SLIDE)
    assert run.summary["status"] == "done" and run.summary["module"] == "cdem"
    assert run.summary == json.loads((tmp_path / "slide" / "summary.json").read_text())
    assert run.results["acceleration_numeric"] == pytest.approx(
        run.results["acceleration_theory"], rel=1e-4)
    assert run.series == ["sliding_block", "sliding_block_contacts",
                          "sliding_block_interfaces"]
    frames = run.frames()
    assert frames.times[0] == 0.0 and frames.times[-1] == pytest.approx(run.results["time"])
    time, grid = frames[-1]
    assert time == frames.times[-1] and grid.n_cells == 16 + 4
    assert solver.code_tables(grid.field_data.keys()) == {"group_names": {0: "base",
                                                                          1: "block"}}
    assert grid.cell_data["stress"].shape == (20, 6)
    assert len(list(run.frames("sliding_block_contacts"))) == len(frames)
    with pytest.raises(solver.InputError, match="no VTK series 'nope'"):
        run.frames("nope")


def test_a_sweep_through_the_api_gives_its_table(tmp_path, monkeypatch):
    """sliding_block at two friction angles as one swept case: the sweep table (a numpy
    record array without pandas) holds each run's acceleration, at its theory."""
    monkeypatch.setitem(sys.modules, "pandas", None)
    run = solver.run_case(CASES / "sliding_block.toml", out=tmp_path / "sweep",
                          overrides={**SHORT_SLIDE, "sweep.contact.friction_deg": [15.0, 20.0]})
    table = run.tables["sliding_block_sweep"]
    assert isinstance(table, np.recarray)
    np.testing.assert_array_equal(table["contact.friction_deg"], [15.0, 20.0])
    np.testing.assert_allclose(table["acceleration_numeric"], table["acceleration_theory"],
                               rtol=1e-4)
    assert table["acceleration_theory"][0] > table["acceleration_theory"][1]
    assert list(table["status"]) == ["done", "done"]
    assert run.tables.units("sliding_block_sweep")["acceleration_numeric"] == "m/s2"
    first = solver.load_run(tmp_path / "sweep" / "runs" / "run_000")
    assert first.results["acceleration_numeric"] == pytest.approx(table["acceleration_numeric"][0],
                                                                 rel=1e-9)  # CSV: 10 digits


def test_load_run_of_a_cli_run_gives_its_summary_and_tables(tmp_path):
    """The incline of point masses run by the ``solver`` command in its own process, read
    back; ``run_case`` of the same case in this process gives the same results."""
    proc = run_cli(["run", str(CASES / "pointmass_incline.toml"), "--out",
                    str(tmp_path / "cli"), "--quiet"])
    assert proc.returncode == 0, proc.stderr
    run = solver.load_run(tmp_path / "cli")
    assert run.summary == json.loads((tmp_path / "cli" / "summary.json").read_text())
    assert list(run.tables) == ["com"]
    columns = read_columns(tmp_path / "cli" / "com.csv")
    for name, values in columns.items():
        np.testing.assert_array_equal(np.asarray(run.tables["com"][name], dtype=float), values)
    assert run.tables.units("com")["com_speed"] == "m/s"
    assert len(run.frames()) == len(columns["time"])
    again = solver.run_case(CASES / "pointmass_incline.toml", out=tmp_path / "api")
    assert again.results == run.results


def test_tables_are_pandas_frames_where_pandas_is_installed(tmp_path):
    pandas = pytest.importorskip("pandas")
    run = solver.run_case(CASES / "pointmass_incline.toml", out=tmp_path / "run",
                          overrides=["time.t_end=1.0"])
    table = run.tables["com"]
    assert isinstance(table, pandas.DataFrame) and list(table)[:2] == ["time", "com_x"]


@pytest.mark.parametrize("case, overrides, where", [
    (CASES / "sliding_block.toml", {"stages[0].max_steps": -1}, "stages[0].max_steps"),
    (CASES / "sliding_block.toml", ["contact.nope=1"], "contact.nope"),
    (CASES / "missing.toml", None, "case file not found"),
])
def test_bad_input_raises_the_api_error_with_the_cli_line(case, overrides, where, tmp_path):
    """The same bad case through ``solver run`` and through ``run_case``: one error line,
    the same; no folder is left."""
    sets = solver.api.override_lines(overrides)
    cli = main_in_process(["run", str(case), "--out", str(tmp_path / "cli"), "--quiet",
                           *(arg for line in sets for arg in ("--set", line))])
    assert cli.returncode == 2
    with pytest.raises(solver.InputError) as raised:
        solver.run_case(case, out=tmp_path / "api", overrides=overrides)
    assert cli.stderr.strip() == raised.value.line and where in raised.value.line
    assert not (tmp_path / "api").exists() and not (tmp_path / "cli").exists()


def test_a_case_given_as_a_dict_runs_and_its_mistakes_name_it(tmp_path):
    case = {"module": "pointmass", **_tables(CASES / "pointmass_incline.toml")}
    run = solver.run_case(case, out=tmp_path / "run", overrides={"time.t_end": 1.0})
    assert run.summary["case"] == "case" and run.results["final_com_speed"] > 0.0
    case["time"]["t_end"] = float("nan")
    with pytest.raises(solver.InputError) as raised:
        solver.run_case(case, out=tmp_path / "bad")
    assert raised.value.line.startswith("error: <dict>: time.t_end: ")
    with pytest.raises(solver.InputError, match="not the folder of a finished run"):
        solver.load_run(tmp_path)
    with pytest.raises(solver.InputError, match="overrides: time.t_end"):
        solver.run_case(case, out=tmp_path / "bad", overrides={"time.t_end": object()})


def _tables(path):
    """A case file's tables without its module and name."""
    import tomllib
    data = tomllib.loads(path.read_text())
    del data["module"], data["name"]
    return data
