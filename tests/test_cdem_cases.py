"""CDEM cases through the real CLI, against theory (design.md section 5)."""

import json

import numpy as np
import pytest
import pyvista as pv

from conftest import CASES, run_case


def test_cube_rotation_follows_the_rigid_pendulum(tmp_path):
    """Near-rigid cube pinned on an edge: angle within 1% of the swept angle of the ODE."""
    r = run_case(CASES / "cube_rotation.toml", tmp_path)["results"]
    assert r["swept_angle"] > 2.5                       # it really swings through the bottom
    assert r["angle_error_max"] < 0.01 * r["swept_angle"]
    assert r["energy_drift"] < 1e-3


def test_cube_rotation_output_opens_in_paraview_readers(tmp_path):
    run_case(CASES / "cube_rotation.toml", tmp_path, "stages[0].duration=0.5",
             "output.every=0.25")
    reader = pv.get_reader(str(tmp_path / "cube_rotation.pvd"))
    assert len(reader.time_values) >= 3
    reader.set_active_time_value(reader.time_values[-1])
    grid = reader.read()[0]
    assert grid.n_cells == 64 and grid.n_points == 512
    for name in ("displacement", "velocity", "stress", "group", "block", "rank"):
        assert name in grid.cell_data
    assert np.abs(grid.cell_data["velocity"]).max() > 0.1
    faces = pv.read(sorted((tmp_path / "cube_rotation_interfaces").glob("*.pvtu"))[-1])
    assert "broken_springs" in faces.cell_data
    assert faces.n_cells == 112                        # shared faces of an 8x1x8 grid
    piece = pv.read(sorted((tmp_path / "cube_rotation").glob("*_0.vtu"))[-1])
    assert set(piece.celltypes) == {pv.CellType.HEXAHEDRON} and "stress" in piece.cell_data


def test_dynamic_relaxation_of_a_gravity_column(tmp_path):
    r = run_case(CASES / "column_gravity.toml", tmp_path)["results"]
    assert r["unbalance_ratio"] < 1e-5
    assert r["stages"][0]["end"] == "converged"
    assert r["rel_error"] < 0.01                       # base stress vs rho g h
    assert r["stress_rel_error_max"] < 0.01            # every element vs rho g (H - z_c)


@pytest.mark.parametrize("case", ["failure_tensile", "failure_shear", "failure_toppling"])
def test_critical_load_at_first_failure_matches_closed_form(case, tmp_path):
    r = run_case(CASES / f"{case}.toml", tmp_path)["results"]
    assert r["broken_springs"] > 0
    assert r["rel_error"] < 0.03, r


def test_same_results_on_1_2_and_4_ranks(tmp_path):
    args = ("stages[0].duration=0.6", "output.every=0.3")
    base = run_case(CASES / "cube_rotation.toml", tmp_path / "r1", *args)["results"]
    for ranks in (2, 4):
        other = run_case(CASES / "cube_rotation.toml", tmp_path / f"r{ranks}", *args,
                         ranks=ranks)
        assert other["ranks"] == ranks
        _assert_close(base, other["results"])


def _assert_close(a, b, rel=1e-9):
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _assert_close(a[k], b[k], rel)
    elif isinstance(a, list):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _assert_close(x, y, rel)
    elif isinstance(a, float):
        assert abs(a - b) <= rel * max(abs(a), abs(b), 1e-300) or abs(a - b) < 1e-12, (a, b)
    else:
        assert a == b


def test_summary_contract(tmp_path):
    s = run_case(CASES / "column_gravity.toml", tmp_path, "stages[0].max_steps=50")
    assert set(s) == {"case", "module", "ranks", "wall_s", "steps", "results", "status",
                      "started", "solver_version", "git_commit", "converged", "units"}
    assert s["module"] == "cdem" and s["case"] == "column_gravity" and s["steps"] == 50
    assert s["status"] == "done"
    assert s["converged"] is False                     # the relaxation stopped at max_steps
    json.dumps(s)


def test_bench_reports_its_figures(tmp_path):
    from conftest import run_cli
    out = tmp_path / "bench.json"
    proc = run_cli(["bench", "--elements", "512", "--steps", "3", "--heap", "100", "--json",
                    str(out)], ranks=2)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    assert report["serial"]["element_steps_per_s_per_rank"] > 0
    assert 0 < report["parallel_efficiency"]
    assert all(r["contact_updates_per_s"] > 0 for r in report["contact"]["per_rank"])
    assert "of triad" in proc.stdout and "contact updates/s" in proc.stdout
    proc = run_cli(["bench", "--scale", "60", "--steps", "3", "--json", str(out)], ranks=2)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(out.read_text())["per_rank"]
    assert [r["rank"] for r in rows] == [0, 1]
    assert all(r["bytes_sent_per_step"] > 0 and r["rss_beyond_fixed_mb"] >= 0 for r in rows)
    assert "bytes_sent_per_step" in proc.stdout
