"""Rockfall module (issue 12): free flight, rolling, first impacts, terrains, outputs, bad input.

Every physics check is against a closed form or an independent calculation; ensembles are tiny.
"""

from __future__ import annotations

import json
import math

import meshio
import numpy as np
import pytest
from conftest import CASES
from scipy import stats
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

from solver.case import load_case
from solver.cli import main
from solver.impact.config import Config as ImpactConfig
from solver.impact.sweeps import run_impact
from solver.rockfall import statistics
from solver.rockfall.body import FreeRotation, Shape
from solver.rockfall.bounce import next_phase
from solver.rockfall.config import Motion
from solver.rockfall.ensemble import expand
from solver.rockfall.flight import first_contact, make_path
from solver.rockfall.terrain import build_terrain
from solver.rockfall.trajectory import BlockSimulation

G = 9.81
TAN30 = math.tan(math.radians(30.0))


def _case(tmp_path, terrain: str, start: str, extra: str = "", name: str = "rf"):
    path = tmp_path / f"{name}.toml"
    path.write_text(f'module = "rockfall"\n[terrain]\n{terrain}\n[start]\n{start}\n'
                    f'[grounds.sand]\nrolling_resistance = 0.0\n{extra}\n')
    return path


def _profile(points, ground="sand"):
    x0, x1 = points[0][0], points[-1][0]
    return (f'kind = "profile"\npoints = {points}\n'
            f'segments = [{{x = [{x0}, {x1}], ground = "{ground}"}}]')


def _simulate(path, *overrides):
    """Build the case and run each of its blocks in process."""
    case = load_case(path, list(overrides))
    cfg = case.config
    names = list(cfg.grounds)
    terrain = build_terrain(cfg.terrain, names, str(path))
    sim = BlockSimulation(cfg, terrain, names, str(path))
    return [sim.run(spec) for spec in expand(cfg, str(path))], sim


# ---------------------------------------------------------------- free flight


def test_free_flight_is_the_parabola_and_the_spin_is_uniform(tmp_path):
    """A 2 s flight far above flat ground: centre on the closed-form parabola and major axis
    turned by omega t about +y, to 1e-9 relative (the run ends by its time limit)."""
    path = _case(tmp_path, _profile([[-500.0, 0.0], [500.0, 0.0]]),
                 "x = 0.0\nheight = 100.0\nspeed = 20.0\ndip = -30.0\ntheta_0 = 20.0\n"
                 "omega_0 = 3000.0", "[block]\naspect_ratio = 2.0\n[motion]\nt_end = 2.0")
    (run,), _ = _simulate(path)
    assert run.end == "time_limit" and run.impacts == []
    s = run.samples
    t = s[:, 0]
    v0 = 20.0 * np.array([math.cos(math.radians(30.0)), math.sin(math.radians(30.0))])
    centre = np.column_stack([v0[0] * t, 100.0 + v0[1] * t - 0.5 * G * t * t])
    np.testing.assert_allclose(s[:, [1, 3]], centre, rtol=1e-9, atol=1e-9 * 100.0)
    np.testing.assert_array_equal(s[:, 2], 0.0)
    angle = math.radians(20.0) + math.radians(3000.0) * t
    np.testing.assert_allclose(s[:, [4, 6]], np.column_stack([np.sin(angle), np.cos(angle)]),
                               atol=1e-9)
    np.testing.assert_allclose(s[:, 11], math.radians(3000.0), rtol=1e-12)
    assert t[-1] == pytest.approx(2.0, abs=1e-12)


def test_air_drag_fall_matches_the_closed_form(tmp_path):
    """Vertical fall from rest with quadratic drag: z = z0 - (v_T^2/g) ln cosh(g t / v_T)."""
    path = _case(tmp_path, _profile([[-50.0, 0.0], [50.0, 0.0]]), "x = 0.0\nheight = 500.0",
                 "[motion]\nt_end = 6.0\nair_density = 1.2\ndrag_coefficient = 0.5")
    (run,), sim = _simulate(path)
    shape = sim.shape(expand(sim.cfg, "")[0])
    k = 0.5 * 1.2 * 0.5 * shape.frontal_area / shape.mass
    v_term = math.sqrt(G / k)
    t = run.samples[:, 0]
    z = 500.0 - v_term ** 2 / G * np.log(np.cosh(G * t / v_term))
    np.testing.assert_allclose(run.samples[:, 3], z, rtol=1e-9)
    np.testing.assert_allclose(run.samples[:, 9], -v_term * np.tanh(G * t / v_term), rtol=1e-8,
                               atol=1e-9)


def test_torque_free_precession_matches_integrated_euler_equations():
    """Closed-form precession of the axis vs dL/dt = 0, da/dt = omega x a integrated by
    solve_ivp with omega = I(a)^-1 L."""
    shape = Shape.from_block(100.0, 2600.0, 3.0)
    axis = np.array([0.3, 0.4, math.sqrt(1 - 0.25)])
    omega = np.array([20.0, -35.0, 12.0])
    rotation = FreeRotation(shape, axis, omega)
    momentum = shape.inertia(axis) @ omega

    def rhs(_t, a):
        return np.cross(shape.inverse_inertia(a / np.linalg.norm(a)) @ momentum, a)

    sol = solve_ivp(rhs, (0.0, 1.5), axis, method="DOP853", rtol=1e-12, atol=1e-13)
    a_end, w_end = rotation.at(1.5)
    np.testing.assert_allclose(a_end, sol.y[:, -1], atol=1e-9)
    np.testing.assert_allclose(w_end, shape.inverse_inertia(a_end) @ momentum, rtol=1e-12)


# ---------------------------------------------------------------- rolling and sliding


def test_rolling_sphere_accelerates_at_five_sevenths_g_sin_beta(tmp_path):
    points = [[0.0, 100.0], [200.0, 100.0 - 200.0 * TAN30]]
    path = _case(tmp_path, _profile(points), "x = 20.0\non_ground = true",
                 "[motion]\nt_end = 4.0")
    (run,), sim = _simulate(path)
    s = run.samples
    rolling = s[:, 13] == 2
    assert rolling.all() and run.impacts == []
    t = s[:, 0]
    travel = 0.5 * 5.0 / 7.0 * G * 0.5 * t * t
    np.testing.assert_allclose(s[:, 1] - 20.0, travel * math.cos(math.radians(30.0)),
                               rtol=1e-9, atol=1e-12)
    speed = np.linalg.norm(s[:, 7:10], axis=1)
    np.testing.assert_allclose(speed, 5.0 / 7.0 * G * 0.5 * t, rtol=1e-9, atol=1e-12)
    radius = run.summary["semi_r"]
    np.testing.assert_allclose(np.linalg.norm(s[:, 10:13], axis=1), speed / radius, rtol=1e-9,
                               atol=1e-12)


def test_rolling_resistance_stops_the_block_at_the_closed_form_distance(tmp_path):
    """Flat ground, rolling from the start: d = (1 + 2/5)(v0^2 - v_stop^2) / (2 mu_r g)."""
    shape = Shape.from_block(100.0, 2600.0, 1.0)
    spin = math.degrees(5.0 / shape.semi_r)
    path = _case(tmp_path, _profile([[0.0, 0.0], [100.0, 0.0]]),
                 f"x = 10.0\non_ground = true\nspeed = 5.0\nomega_0 = {spin!r}",
                 "[motion]\nstop_speed = 0.1")
    (run,), _ = _simulate(path, "grounds.sand.rolling_resistance=0.3")
    assert run.end == "arrested"
    expected = 1.4 * (25.0 - 0.01) / (2.0 * 0.3 * G)
    assert run.summary["x_stop"] - 10.0 == pytest.approx(expected, rel=1e-9)


def test_sliding_sphere_starts_rolling_at_five_sevenths_of_its_speed(tmp_path):
    """Launched without spin on flat ground (mu_s = tan phi_b): it slides until
    t* = 2 v0 / (7 mu_s g), then rolls on at 5 v0 / 7."""
    mu_s = math.tan(math.radians(30.0))
    t_star = 2.0 * 5.0 / (7.0 * mu_s * G)
    path = _case(tmp_path, _profile([[0.0, 0.0], [100.0, 0.0]]),
                 "x = 10.0\non_ground = true\nspeed = 5.0", f"[motion]\nt_end = {2 * t_star!r}")
    (run,), _ = _simulate(path)
    s = run.samples
    sliding = s[:, 0] < t_star - 1e-9
    assert (s[sliding, 13] == 3).all() and (s[s[:, 0] > t_star + 1e-9, 13] == 2).all()
    t = s[sliding, 0]
    np.testing.assert_allclose(s[sliding, 1] - 10.0, 5.0 * t - 0.5 * mu_s * G * t * t,
                               rtol=1e-9, atol=1e-12)
    assert np.linalg.norm(s[-1, 7:10]) == pytest.approx(5.0 * 5.0 / 7.0, rel=1e-9)


# ---------------------------------------------------------------- first impacts


def _landing_time(start, velocity, axis, omega_y, shape, line_point, normal):
    """Independent: first root of n.(c(t) - p) - r_y(angle of a(t) to n) on a fine grid."""
    def gap(t):
        t = np.asarray(t, float)
        c = (start[:, None] + velocity[:, None] * t
             + 0.5 * np.array([0.0, 0.0, -G])[:, None] * t * t)
        angle = omega_y * t
        cos_a = ((axis[0] * np.cos(angle) + axis[2] * np.sin(angle)) * normal[0]
                 + (-axis[0] * np.sin(angle) + axis[2] * np.cos(angle)) * normal[2])
        r_y = np.sqrt((shape.semi_h * cos_a) ** 2 + shape.semi_r ** 2 * (1.0 - cos_a ** 2))
        return normal @ (c - line_point[:, None]) - r_y

    times = np.linspace(0.0, 6.0, 60001)
    k = int(np.argmax(gap(times) <= 0.0))
    return brentq(lambda t: float(gap([t])[0]), times[k - 1], times[k], xtol=1e-14)


def test_first_impact_of_every_block_is_at_the_analytic_landing_point():
    """The 63 blocks of the bi-planar case: the engine's first contact against an independent
    root of the closed-form gap to the 30 deg slope line, to 1e-9 relative in time."""
    case = load_case(CASES / "biplanar_rockfall.toml")
    cfg = case.config
    names = list(cfg.grounds)
    terrain = build_terrain(cfg.terrain, names, "")
    sim = BlockSimulation(cfg, terrain, names, "")
    (x0, z0), (x1, z1) = cfg.terrain.points[:2]
    normal = np.array([z0 - z1, 0.0, x1 - x0]) / math.hypot(z0 - z1, x1 - x0)
    crest = np.array([x0, 0.0, z0])
    assert math.degrees(math.atan2(normal[0], normal[2])) == pytest.approx(30.0, abs=1e-7)
    specs = expand(cfg, "")
    assert len(specs) == 63
    for spec in specs:
        shape = sim.shape(spec)
        centre, velocity, axis, omega = sim.release(spec)
        end = first_contact(make_path(shape, centre, velocity, axis, omega, cfg.motion, 100.0,
                                      -10.0), terrain, shape, 100.0, False, G)
        expected = _landing_time(centre, velocity, axis, omega[1], shape, crest, normal)
        assert end.reason == "contact" and end.tau == pytest.approx(expected, rel=1e-9)
        assert end.contact.normal == pytest.approx(normal, abs=1e-15)
        landing = centre + velocity * expected + 0.5 * np.array([0, 0, -G]) * expected ** 2
        foot = end.contact.point
        assert float(normal @ (foot - crest)) == pytest.approx(0.0, abs=1e-9)
        assert np.linalg.norm(landing - foot) <= shape.semi_h * (1 + 1e-9)


def test_first_impact_is_the_impact_module_in_the_slope_frame(tmp_path):
    """The first impact of a spinning A_r = 2 block on the 30 deg slope equals a direct call of
    the impact module with theta_in, theta_0 and omega_0 worked out here by hand."""
    (run,), sim = _simulate(CASES / "biplanar_rockfall.toml", "ensemble.vary={}",
                            "block.aspect_ratio=2.0", "start.omega_0=4000.0",
                            "motion.max_impacts=1", "output.trajectories=false")
    first = run.impacts[0]
    spec = expand(sim.cfg, "")[0]
    centre, velocity, axis, omega = sim.release(spec)
    t_hit = first["t"]
    v = velocity + np.array([0.0, 0.0, -G]) * t_hit
    beta = math.radians(30.0)
    into = np.array([-math.sin(beta), 0.0, -math.cos(beta)])
    down = np.array([math.cos(beta), 0.0, -math.sin(beta)])
    theta_in = math.degrees(math.atan2(float(v @ down), float(v @ into)))
    tilt = math.radians(30.0) + math.radians(4000.0) * t_hit
    lower = np.array([math.sin(tilt), 0.0, math.cos(tilt)])
    lower = lower if lower @ into >= 0 else -lower
    theta_0 = math.degrees(math.atan2(-float(lower @ down), float(lower @ into)))
    cfg = ImpactConfig()
    cfg.block.aspect_ratio = 2.0
    cfg.impact.speed = float(np.linalg.norm(v))
    cfg.impact.slope = 30.0
    row, _ = run_impact(cfg, (2.0, theta_0, theta_in, 4000.0))
    assert first["theta_in"] == pytest.approx(theta_in, rel=1e-9)
    assert first["theta_0"] == pytest.approx(theta_0, rel=1e-9)
    for key in ("e_n", "e_t", "max_force", "max_penetration"):
        assert first[key] == pytest.approx(row[key], rel=1e-6), key


def test_next_phase_after_an_impact():
    """A bounce flies if its rebound clears roll_height normal to the ground, u^2 >= 2 g cos h;
    a topple rolls (HyStone) unless after_topple = "rebound"; a block still in contact rolls."""
    motion = Motion(roll_height=0.05)
    u = math.sqrt(2.0 * G * math.cos(0.5) * 0.05)
    assert next_phase("bounce", 1.001 * u, 0.5, motion) == "bounce"
    assert next_phase("bounce", 0.999 * u, 0.5, motion) == "roll"
    assert next_phase("bounce", -3.0, 0.5, motion) == "roll"
    assert next_phase("topple", 5.0, 0.5, motion) == "roll"
    assert next_phase("topple", 5.0, 0.5, Motion(after_topple="rebound")) == "bounce"
    assert next_phase("stop", 5.0, 0.5, Motion(after_topple="rebound")) == "roll"


# ---------------------------------------------------------------- terrains


def test_planar_raster_gives_the_trajectories_of_the_profile(tmp_path):
    """The same A_r = 2 spinning block on a 30 deg plane given as a 2-D profile and as a
    bicubic DEM: flight, impact and rolling agree to 1e-6 m."""
    xs = np.arange(0.0, 205.0, 5.0)
    ys = np.arange(-30.0, 35.0, 5.0)
    plane = 120.0 - TAN30 * xs
    np.save(tmp_path / "plane.npy", np.tile(plane, (len(ys), 1)))
    common = ("x = 10.0\nheight = 3.0\nspeed = 12.0\ndip = 5.0\ntheta_0 = 30.0\n"
              "omega_0 = 2000.0")
    extra = "[block]\naspect_ratio = 2.0\n[motion]\nt_end = 4.0\nmax_impacts = 2"
    profile = _case(tmp_path, _profile([[0.0, 120.0], [200.0, 120.0 - 200.0 * TAN30]]),
                    common, extra, name="profile")
    raster = _case(tmp_path, f'kind = "raster"\npath = "plane.npy"\norigin = [0.0, -30.0]\n'
                   f'spacing = [5.0, 5.0]\nground = "sand"', common, extra, name="raster")
    (a,), _ = _simulate(profile, "grounds.sand.rolling_resistance=0.3")
    (b,), _ = _simulate(raster, "grounds.sand.rolling_resistance=0.3")
    assert len(a.impacts) >= 1 and a.end == b.end
    assert a.samples.shape == b.samples.shape
    np.testing.assert_allclose(b.samples[:, :4], a.samples[:, :4], atol=1e-6)
    np.testing.assert_allclose(b.samples[:, 7:13], a.samples[:, 7:13], atol=1e-6)
    assert [i["e_n"] for i in b.impacts] == pytest.approx([i["e_n"] for i in a.impacts],
                                                          rel=1e-6)


def test_blocks_follow_the_gully(tmp_path):
    """Released 15 m off the gully axis on both flanks, the blocks turn into the gully and stay
    inside it (|y| < its half-width of 14 m) from x = 60 m on, crossing its axis; the two
    flanks mirror (to 1 mm: the adaptive steps are not mirror images)."""
    runs, _ = _simulate(CASES / "gully_rockfall.toml", "ensemble.vary.aspect_ratio.values=[2.0]",
                        "ensemble.vary.axis_yaw.values=[0.0]", "motion.t_end=9.0")
    assert len(runs) == 2
    for run in runs:
        s = run.samples
        downstream = s[:, 1] > 60.0
        assert downstream.any() and np.max(np.abs(s[downstream, 2])) < 14.0
        assert np.min(s[downstream, 2]) < 0.0 < np.max(s[downstream, 2])
    left, right = runs
    np.testing.assert_allclose(left.samples[:, 2], -right.samples[:, 2], atol=1e-3)


# ---------------------------------------------------------------- statistics


def test_fits_and_envelopes_against_scipy_and_hand_values():
    rng = np.random.default_rng(3)
    heights = rng.exponential(0.7, 400)
    fit = statistics.exponential_fit(heights)
    _, scale = stats.expon.fit(heights, floc=0.0)
    assert fit["lambda"] == pytest.approx(1.0 / scale, rel=1e-12) and fit["ks_pvalue"] > 0.01
    values = rng.normal(0.67, 0.2, 300)
    normal = statistics.normal_fit(np.append(values, np.nan))
    assert normal["n"] == 300 and normal["mean"] == pytest.approx(np.mean(values))
    assert normal["std"] == pytest.approx(np.std(values))
    t = np.linspace(0.0, 10.0, 11)
    samples = np.zeros((11, 16))
    samples[:, 1], samples[:, 14], samples[:, 15] = 4.0 * t, 1.0 + t, 100.0 * t
    samples[:, 7] = 4.0
    height, energy, speed = statistics.crossing(samples, 10.0)
    assert (height, energy, speed) == pytest.approx((3.5, 250.0, 4.0))
    env = statistics.envelope(np.arange(101.0))
    assert (env["mean"], env["p95"], env["p99"]) == pytest.approx((50.0, 95.0, 99.0))


# ---------------------------------------------------------------- the case through the CLI


def test_biplanar_case_writes_tables_plots_and_vtk(tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["run", str(CASES / "biplanar_rockfall.toml"), "--out", str(out), "--quiet",
            "--set", "ensemble.vary.aspect_ratio.values=[1.0, 2.0]",
            "--set", "ensemble.vary.omega_0.values=[0.0]", "--set", "output.vtk_dt=10.0"]
    assert main(argv) == 0
    summary = json.loads((out / "summary.json").read_text())
    res = summary["results"]
    assert summary["module"] == "rockfall" and res["n_blocks"] == 2
    for key in ("runout_mean", "bounce_height_fit_lambda", "e_n_mean", "e_t_mean",
                "stopped_fraction"):
        assert key in res
    assert res["stopped_fraction"] == 1.0 and 400.0 < res["x_stop_min"] <= res["x_stop_max"]
    assert len(res["barriers"]) == 6 and res["barriers"][0]["reached"] == 2
    impacts = (out / "biplanar_rockfall_impacts.csv").read_text().splitlines()
    assert len(impacts) == 1 + res["n_impacts"]
    for png in ("trajectories", "bounce_heights", "restitution", "envelopes", "runout"):
        assert (out / f"biplanar_rockfall_{png}.png").stat().st_size > 10_000
    lines = meshio.read(out / "biplanar_rockfall_trajectories" /
                        "biplanar_rockfall_trajectories_00000_0.vtu")
    block0 = np.loadtxt(out / "trajectories" / "block_0000.csv", delimiter=",", skiprows=1)
    block1 = np.loadtxt(out / "trajectories" / "block_0001.csv", delimiter=",", skiprows=1)
    assert len(lines.points) == len(block0) + len(block1)
    assert len(lines.cells_dict["line"]) == len(lines.points) - 2
    np.testing.assert_allclose(lines.points[:len(block0)], block0[:, 1:4])
    terrain = meshio.read(out / "biplanar_rockfall_terrain" /
                          "biplanar_rockfall_terrain_00000_0.vtu")
    assert len(terrain.cells_dict["quad"]) == 2
    frames = (out / "biplanar_rockfall.pvd").read_text().count("<DataSet")
    assert frames == math.ceil(max(block0[-1, 0], block1[-1, 0]) / 10.0) + 1


# ---------------------------------------------------------------- bad input


BASE = {"terrain": _profile([[0.0, 50.0], [100.0, 0.0], [150.0, 0.0]]),
        "start": "x = 5.0\nheight = 3.0\nspeed = 5.0"}
BAD = [
    ("points = [[0.0, 50.0], [100.0, 0.0], [90.0, 0.0]]", "", "not a function of x"),
    ('segments = [{x = [0.0, 100.0], ground = "sand"}, {x = [90.0, 150.0], ground = "sand"}]',
     "", "overlapping segments"),
    ("points = [[0.0, nan], [100.0, 0.0], [150.0, 0.0]]", "", "finite"),
    ("", "[start]\nheight = 0.1", "starts below the ground"),
    ("", "[block]\naspect_ratio = -1.0", "must be > 0"),
    ("", "[block]\nmass = -100.0", "must be > 0"),
    ("", "[ensemble.vary]\naspect_ratio = {values = [1.0, -2.0]}", "run 1"),
    ("", "[sweep]\nblock.aspect_ratio = [1.0, -2.0]", "sweep.block.aspect_ratio[1]: must be > 0"),
    ("", "[sweep]\nstart.mass = [1.0]", "cannot be swept"),
    ("", "[sweep]\nstart.speed = [1.0, nan]", "sweep.start.speed[1]"),
    ("", "[sweep]\nstart.x = [1.0]\n[ensemble.vary]\nx = {values = [2.0]}", "give one"),
    ("", "[grounds.rock]\nphi_b = 95.0", "must be < 90"),
    ('segments = [{x = [0.0, 150.0], ground = "mud"}]', "", "unknown ground set"),
    ("", "[output]\nbarriers = [500.0]", "off the terrain"),
    ("raster", "", "no data"),
]


@pytest.mark.parametrize("terrain_change, extra, expect", BAD,
                         ids=[b[2].split()[0] + str(i) for i, b in enumerate(BAD)])
def test_bad_input_stops_with_one_line_and_exit_2(tmp_path, capsys, terrain_change, extra,
                                                  expect):
    terrain = BASE["terrain"]
    if terrain_change == "raster":
        z = np.tile(50.0 - 0.5 * np.arange(0.0, 150.0, 5.0), (8, 1))
        z[4, 10] = np.nan
        np.save(tmp_path / "holes.npy", z)
        terrain = ('kind = "raster"\npath = "holes.npy"\nspacing = [5.0, 5.0]\n'
                   'origin = [0.0, -20.0]\nground = "sand"')
    elif terrain_change:
        key = terrain_change.split(" = ")[0]
        terrain = "\n".join(line for line in terrain.splitlines()
                            if not line.startswith(key)) + "\n" + terrain_change
    start = BASE["start"]
    if extra.startswith("[start]"):
        start = start.replace("height = 3.0", extra.split("\n", 1)[1])
        extra = ""
    path = _case(tmp_path, terrain, start, extra)
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--quiet"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and expect in lines[0], lines
    assert not out.exists()


@pytest.mark.parametrize("samples, warned", [(1, False), (10_000, True)])
def test_trajectories_that_might_not_fit_are_warned_about_not_refused(samples, warned, capsys):
    """Blocks x samples to motion.t_end (16 float64 columns each) against the node's memory:
    a warning line, never a refusal (most blocks stop long before motion.t_end)."""
    from solver.rockfall.run import _warn_trajectories
    case = load_case(CASES / "biplanar_rockfall.toml", [f"ensemble.samples={samples}"])
    _warn_trajectories(case.config, "case.toml")
    err = capsys.readouterr().err
    assert (err.startswith("warning: case.toml: output.sample_dt: the trajectories of")
            and err.count("\n") == 1) if warned else err == ""
