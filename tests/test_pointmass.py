"""Point-mass slide module (UBO-Inter, Gallotti et al. 2020) through the real CLI."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import pyvista as pv

from conftest import CASES, ROOT, main_in_process, run_case
from solver.io.table import read_columns
from solver.io.vtk import code_tables

G = 9.81
DEM = ROOT / "meshes" / "terrain" / "scilla_dem.asc"


def _history(path):
    return read_columns(path)


def test_sphere_cup_rb_forces_distances_and_energy_match_theory(tmp_path):
    """Gallotti et al. 2020, section 3: Eq. (12.2) below the escape speed (repulsive), the
    escape speed itself (forces vanish) and Eq. (13) for N = 4 in tension. Over 15 s the
    slowest ring turns 190 deg, so the masses of every ring (120 or 90 deg apart) pass every
    azimuth of the cup; the case runs the paper's 300 s, over which the round-off errors
    grow linearly (force 8.6e-12 at 15 s, 3.5e-11 at 60 s, 1.7e-10 at 300 s), inside the
    same bounds."""
    out = run_case(CASES / "sphere_cup.toml", tmp_path / "cup",
                   "sweep.runs=[[3, 20.0, 0.0], [3, 0.0, 1.0], [4, 55.0, 0.0]]",
                   "time.t_end=15.0", "output.vtk=false", "output.plot=false")
    res = out["results"]
    runs = res["runs"]
    assert [r["final_time"] for r in runs] == [15.0] * 3
    assert runs[0]["force_theory"] > 0.0 > runs[2]["force_theory"]
    assert runs[1]["escape"] and "force_rel_error_max" not in runs[1]
    assert res["force_rel_error_max"] < 1e-8
    assert res["escape_force_over_weight_max"] < 1e-8
    assert res["reaction_rel_error_max"] < 1e-8
    assert res["distance_rel_error_max"] < 1e-10
    assert res["energy_rel_drift"] < 1e-8
    # the ring keeps spinning on its circle: the CoM stays on the axis at the circle's height
    z_circle = 100.0 * (1.0 - math.cos(math.radians(64.0)))
    for r in runs:
        assert r["final_com"][2] == pytest.approx(z_circle, rel=1e-9)
        assert math.hypot(*r["final_com"][:2]) < 1e-6


def test_block_on_incline_accelerates_at_g_sin_minus_mu_cos(tmp_path):
    out = run_case(CASES / "pointmass_incline.toml", tmp_path / "inc")["results"]
    theory = G * (math.sin(math.radians(30.0)) - 0.3 * math.cos(math.radians(30.0)))
    assert out["final_com_speed"] / out["final_time"] == pytest.approx(theory, rel=1e-12)
    travel = 0.5 * theory * out["final_time"] ** 2
    assert out["com_travel"] == pytest.approx(travel * math.cos(math.radians(30.0)), rel=1e-12)
    assert out["mass_total"] == pytest.approx(2500.0 * 10.0 * 300.0 * 300.0, rel=1e-12)
    np.testing.assert_allclose(out["initial_com"], [0.0, 0.0, 0.0], atol=1e-9)
    assert out["distance_rel_error_max"] < 1e-12
    # the same plane given as an expression z = f(x, y) gives the same motion
    expr = run_case(CASES / "pointmass_incline.toml", tmp_path / "expr",
                    "surface.kind='expression'", "surface.expression='-tan(pi/6)*x'",
                    "output.vtk=false")["results"]
    assert expr["final_com_speed"] == pytest.approx(out["final_com_speed"], rel=1e-12)
    # VTK: masses as vertices with velocity and mass, sides (RB) and diagonals (EP) as lines
    pvd = ET.parse(tmp_path / "inc" / "pointmass_incline.pvd").getroot()
    files = [d.get("file") for d in pvd.iter("DataSet")]
    assert len(files) == 11
    last = pv.read(tmp_path / "inc" / files[-1])
    assert last.n_points == 9
    assert np.count_nonzero(last.celltypes == pv.CellType.LINE) == 12 + 8
    speed = np.linalg.norm(last.point_data["velocity"], axis=1)
    np.testing.assert_allclose(speed, out["final_com_speed"], rtol=1e-12)
    np.testing.assert_allclose(last.point_data["mass"].sum(), out["mass_total"], rtol=1e-12)
    assert set(np.unique(last.cell_data["link_type"])) == {0.0, 1.0, 2.0}
    assert code_tables(last.field_data.keys())["link_types"][1] == "RB link"
    assert (tmp_path / "inc" / "com_speed.png").stat().st_size > 1000


def test_shoreline_crossing_switches_to_buoyant_mass_and_drag(tmp_path):
    run_case(CASES / "pointmass_shoreline.toml", tmp_path / "sh", "time.t_end=24.0")
    h = _history(tmp_path / "sh" / "com.csv")
    t, v, wet = h["time"], h["com_speed"], h["underwater_fraction"]
    slope = math.radians(20.0)
    alpha = 1.0 - 1030.0 / 2200.0
    dvdt = (v[2:] - v[:-2]) / (t[2:] - t[:-2])
    tc, vc, wc = t[1:-1], v[1:-1], wet[1:-1]
    crossing = t[np.argmax(wet > 0)]
    assert 10.0 < crossing < 23.0 and wet[-1] == 1.0 and wet[0] == 0.0
    land = (wc == 0) & (tc < crossing - 0.05)
    sea = (wc == 1) & (tc > crossing + 0.05)
    assert land.sum() > 100 and sea.sum() > 100
    a_land = G * (math.sin(slope) - 0.2 * math.cos(slope))
    np.testing.assert_allclose(dvdt[land], a_land, rtol=1e-7)
    mu_eq = 0.04 + 0.5 * (2200.0 / 1030.0) * 1.0 * vc[sea] ** 2 / (G * 100.0)
    a_sea = alpha * G * (math.sin(slope) - mu_eq * math.cos(slope))
    np.testing.assert_allclose(dvdt[sea], a_sea, rtol=1e-5, atol=1e-6)
    assert np.all(a_sea < a_land)
    # final speed against the closed form: on land v = a_land t up to the shoreline (plan
    # x = 0, 200 m away), then dv/dt = A - B v^2 whose solution above the terminal speed
    # v_t = sqrt(A / B) is v = v_t coth(sqrt(A B) (t - t_c) + acoth(v_c / v_t))
    s_c = 200.0 / math.cos(slope)
    t_c = math.sqrt(2.0 * s_c / a_land)
    v_c = a_land * t_c
    big_a = alpha * G * (math.sin(slope) - 0.04 * math.cos(slope))
    big_b = alpha * G * math.cos(slope) * 0.5 * (2200.0 / 1030.0) / (G * 100.0)
    v_t = math.sqrt(big_a / big_b)
    exact = v_t / math.tanh(math.sqrt(big_a * big_b) * (24.0 - t_c) + math.atanh(v_t / v_c))
    fixed = run_case(CASES / "pointmass_shoreline.toml", tmp_path / "f", "time.t_end=24.0",
                     "output.every=1.0")["results"]
    adaptive = run_case(CASES / "pointmass_shoreline.toml", tmp_path / "a", "time.t_end=24.0",
                        "output.every=1.0", "time.scheme='rk4_adaptive'", "time.dt=1.0",
                        "time.rtol=1e-10", "time.atol=1e-10")["results"]
    assert adaptive["steps"] < fixed["steps"]
    # the fixed step straddles the switch (first-order error there); adaptive steps resolve it
    assert fixed["final_com_speed"] == pytest.approx(exact, rel=1e-3)
    assert adaptive["final_com_speed"] == pytest.approx(exact, rel=1e-7)


def test_stop_criterion_ends_a_decelerating_slide(tmp_path):
    """A block launched downhill at 10 m/s on a 10 deg plane with mu = 0.5 decelerates at
    g (mu cos - sin) and stops when every mass is slower than stop_speed."""
    out = run_case(CASES / "pointmass_incline.toml", tmp_path / "st", "surface.slope_deg=10.0",
                   "friction.mu=0.5", "grid.velocity=[10.0, 0.0]", "time.stop_speed=0.1",
                   "time.stop_after=0.0", "output.vtk=false")["results"]
    decel = G * (0.5 * math.cos(math.radians(10.0)) - math.sin(math.radians(10.0)))
    v0 = 10.0 / math.cos(math.radians(10.0))          # plan speed 10 m/s along the dip
    assert out["stop_reason"] == "stopped"
    assert out["stop_time"] == pytest.approx((v0 - 0.1) / decel, abs=0.05)
    assert out["final_com_speed"] < 0.1


def test_scilla_like_slide_runs_on_the_dem(tmp_path):
    out = run_case(CASES / "scilla.toml", tmp_path / "sc", "sweep.runs=[[3, 3]]",
                   "time.t_end=30.0")["results"]
    assert out["n_masses"] == 9
    assert out["mass_total"] == pytest.approx(2200.0 * 6.4e6, rel=1e-12)
    assert out["peak_speed"] > 10.0 and 0.0 < out["peak_time"] <= 30.0
    assert out["final_com"][1] > out["initial_com"][1] + 100.0   # it ran downhill (north)
    assert out["final_com"][2] < out["initial_com"][2]
    assert out["distance_rel_error_max"] < 1e-4
    h = _history(tmp_path / "sc" / "com.csv")
    assert h["underwater_fraction"][0] == 0.0 and h["underwater_fraction"][-1] > 0.0


def test_sweep_on_two_ranks_gives_the_same_table(tmp_path):
    args = ("sweep.runs=[[3, 3], [4, 3], [3, 4]]", "time.t_end=8.0", "output.vtk_run=2")
    one = run_case(CASES / "scilla.toml", tmp_path / "r1", *args)["results"]["runs"]
    two = run_case(CASES / "scilla.toml", tmp_path / "r2", *args, ranks=2)
    assert two["ranks"] == 2
    assert two["results"]["runs"] == one
    assert [r["n_masses"] for r in one] == [9, 12, 12]
    # every grid carries the whole slide: same total mass and (to the sampling) the same CoM
    for r in one:
        assert r["mass_total"] == pytest.approx(2200.0 * 6.4e6, rel=1e-12)
        np.testing.assert_allclose(r["initial_com"][:2], one[0]["initial_com"][:2], atol=2.0)
    assert (tmp_path / "r2" / "scilla.pvd").exists()
    assert (tmp_path / "r2" / "runs" / "run_001.csv").exists()


def _bad_case(tmp_path, footprint, nx=1, ny=1):
    case = tmp_path / "bad.toml"
    case.write_text(f"""module = "pointmass"
[surface]
kind = "raster"
path = "{DEM}"
[grid]
kind = "footprint"
footprint = {footprint}
nx = {nx}
ny = {ny}
[time]
t_end = 1.0
""")
    return case


@pytest.mark.parametrize("what", ["outside", "tiny", "overconstrained", "sweep", "drag"])
def test_bad_input_is_one_line_and_exit_2(tmp_path, what):
    out = tmp_path / "o"
    if what == "outside":
        case = _bad_case(tmp_path, [[3800, 100], [4400, 100], [4400, 700], [3800, 700]], 3, 3)
        args, expect = [], "outside the surface"
    elif what == "tiny":
        case = _bad_case(tmp_path, [[2000, 1000], [2030, 1000], [2030, 1030], [2000, 1030]])
        args, expect = [], "below the DEM spacing"
    elif what == "overconstrained":
        case, args, expect = CASES / "scilla.toml", ["links.diagonals='rb'"], "over-constrained"
    elif what == "sweep":
        case, args, expect = CASES / "scilla.toml", ["sweep.runs=[[3, 0]]"], "sweep.runs[0]"
    else:
        case, args, expect = CASES / "pointmass_shoreline.toml", ["water.drag_length=0.0"], \
            "drag_length"
    cmd = ["run", str(case), "--out", str(out), "--quiet"]
    for a in args:
        cmd += ["--set", a]
    proc = main_in_process(cmd)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and expect in lines[0], lines
    assert not (out / "summary.json").exists()


def test_run_stops_cleanly_when_a_mass_leaves_the_surface(tmp_path):
    """z = -tan(30) x + 0 sqrt(250 - x) is undefined beyond x = 250: the front masses (plan
    x = 100) get there after a plan travel of 150 m and the run ends there with its results."""
    out = run_case(CASES / "pointmass_incline.toml", tmp_path / "edge",
                   "surface.kind='expression'", "surface.expression='-tan(pi/6)*x + 0*sqrt(250-x)'",
                   "time.t_end=20.0", "output.vtk=false")["results"]
    a = G * (math.sin(math.radians(30.0)) - 0.3 * math.cos(math.radians(30.0)))
    t_edge = math.sqrt(2.0 * 150.0 / math.cos(math.radians(30.0)) / a)
    assert out["stop_reason"] == "left_surface"
    assert t_edge - 0.1 < out["final_time"] < t_edge
