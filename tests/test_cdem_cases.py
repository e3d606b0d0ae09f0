"""CDEM cases through the real CLI, against theory."""

import json
import math
import tomllib

import numpy as np
import pytest
import pyvista as pv

from conftest import CASES, main_in_process, run_case
from solver.cdem.config import Stage
from solver.cdem.timeloop import gravity_at
from solver.io.toml import value_text
from solver.rotation import rotate_about_axis


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


def _preloaded(case: str, preload: float) -> list[str]:
    """Overrides that bring the case's block to rest under ``preload`` (a gravity factor for
    a gravity ramp, a tilt [deg] for a tilting base) ahead of the case's own load stage:
    gravity scaled or turned by it, and a relax stage before the load stage whose implicit
    prestep solves that equilibrium (no dynamic overshoot of a suddenly applied load)."""
    load = tomllib.loads((CASES / f"{case}.toml").read_text())["stages"][0]
    g = np.array([0.0, 0.0, -9.81])
    g = (preload * g if load.get("gravity_ramp") else
         rotate_about_axis(g, np.asarray(load["tilt_axis"], float), math.radians(preload)))
    preload_stage = {"name": "preload", "kind": "relax", "damping": "local",
                     "prestep": "implicit", "max_steps": 1000}   # converged in 2 steps
    return [f"gravity={value_text(g.tolist())}", f"stages={value_text([preload_stage, load])}"]


@pytest.mark.parametrize("case, preload", [("failure_tensile", 3.75), ("failure_shear", 34.0),
                                           ("failure_toppling", 6.0)])
def test_critical_load_at_first_failure_matches_closed_form(case, preload, tmp_path):
    """Load at the first broken spring (the preload, then the case's quasi-static servo
    ramp) within 3 % of the closed form of a rigid block on uniform springs: measured
    0.03 % (tensile), 0.7 % (shear) and 1.3 % (toppling), as when ramping from zero. The
    springs lumped at the nodes give the tilted bases 1 + 2 (dx/b)^2 times the closed form's
    moment of inertia (1.031 and 1.014); with it the critical tilts are 37.55 and 6.60 deg,
    which the runs meet within 0.1 %. The preload, some 8 % below the closed form (gravity
    factor 4.08, tilts 37.2 and 6.51 deg), skips most of the servo's time: from rest its ramp
    grows about as the square of the time, so the last 8 % of the load take a quarter of
    the steps of the whole ramp. A spring broken under the preload would put the first
    failure at the preload, 8 % off, not on the ramp."""
    r = run_case(CASES / f"{case}.toml", tmp_path, *_preloaded(case, preload))["results"]
    assert [s["end"] for s in r["stages"]] == ["converged", "failure"]
    assert r["broken_springs"] > 0
    if case == "failure_tensile":               # the factor multiplies the preloaded gravity
        assert r["critical_numeric"] > 1.0
        reached, theory = preload * r["critical_numeric"], preload * r["critical_theory"]
    else:                                       # the ramp's tilt adds to the preload's
        assert r["critical_numeric"] > 0.0
        reached, theory = preload + r["critical_numeric"], r["critical_theory"]
    assert abs(reached - theory) < 0.03 * theory, (reached, theory)


def test_ramp_reports_the_load_it_applies():
    """The load the failure observer records is the gravity the stage applies at load time
    t: g0 turned about the tilt axis by tilt_rate t and scaled by 1 + gravity_ramp t (the
    failure test above ramps over its last 8 % only)."""
    stage = Stage(tilt_rate=10.0, tilt_axis=(0.0, 1.0, 0.0), gravity_ramp=20.0)
    g, load = gravity_at(np.array([0.0, 0.0, -9.81]), stage, 0.3)
    theta = math.radians(3.0)
    assert load == pytest.approx({"tilt_deg": 3.0, "gravity_factor": 7.0}, rel=1e-12)
    assert g == pytest.approx(7.0 * 9.81 * np.array([-math.sin(theta), 0.0, -math.cos(theta)]),
                              rel=1e-12)


def test_summary_contract(tmp_path):
    s = run_case(CASES / "column_gravity.toml", tmp_path, "stages[0].max_steps=50")
    assert set(s) == {"case", "module", "ranks", "wall_s", "steps", "results", "status",
                      "started", "solver_version", "git_commit", "converged", "peak_rss_mb",
                      "timing", "units"}
    assert s["module"] == "cdem" and s["case"] == "column_gravity" and s["steps"] == 50
    assert s["status"] == "done" and len(s["peak_rss_mb"]) == s["ranks"] == 1
    assert s["peak_rss_mb"][0] > 10.0                 # an interpreter with numpy holds more
    t = s["timing"]
    assert 0.0 < t["steps_s"][0] < s["wall_s"] and t["work_imbalance"] == 1.0
    assert 0.0 <= t["waiting_s"][0] < t["steps_s"][0] and len(t["contact_s"]) == 1
    assert s["converged"] is False                     # the relaxation stopped at max_steps
    json.dumps(s)


def test_summary_names_the_commit_the_run_started_with(tmp_path, monkeypatch):
    """A checkout updated while a run goes on (a production run takes days) must not be the
    one its summary names: the commit is read when the run starts."""
    from solver.cdem.timeloop import TimeLoop
    from solver.io import summary

    stepped = []
    one_step = TimeLoop.one_step
    monkeypatch.setattr(TimeLoop, "one_step",
                        lambda self, *a: stepped.append(1) or one_step(self, *a))
    monkeypatch.setattr(summary, "git_commit",
                        lambda: "checked-out-later" if stepped else "started-with")
    done = main_in_process(["run", str(CASES / "column_gravity.toml"), "--out", str(tmp_path),
                            "--overwrite", "--quiet", "--set", "stages[0].max_steps=5"])
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "summary.json").read_text())["git_commit"] == "started-with"


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
