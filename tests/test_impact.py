"""Ellipsoid impact module (issue 5): geometry, impact physics, restitution, sweeps, CLI."""

from __future__ import annotations

import math

import numpy as np
import pytest
import pyvista as pv
from conftest import CASES, main_in_process, run_case
from scipy.integrate import trapezoid
from scipy.optimize import minimize

from solver.impact import geometry
from solver.impact.config import Config
from solver.impact.restitution import energetic_coefficient, rolling_velocity, vijayakumar
from solver.impact.rheology import SoilLaw, foundation
from solver.impact.sweeps import make_setup
from solver.impact.sweeps import read_table, run_impact
from solver.io.table import read_columns

# ---------------------------------------------------------------- geometry (Appendix D)


def _inside(x, centre, alpha, h, r):
    """Independent ellipsoid: axes from the rotation of (n, t) by alpha, w unchanged."""
    axis_h = np.array([math.cos(alpha), -math.sin(alpha), 0.0])
    axis_r = np.array([math.sin(alpha), math.cos(alpha), 0.0])
    d = np.asarray(x) - centre
    return 1.0 - (d @ axis_h / h) ** 2 - (d @ axis_r / r) ** 2 - (d[2] / r) ** 2


def _surface(centre, alpha, h, r, n=300):
    a, b = np.meshgrid(np.linspace(0, np.pi, n), np.linspace(0, 2 * np.pi, 2 * n))
    body = np.stack([h * np.cos(a), r * np.sin(a) * np.cos(b), r * np.sin(a) * np.sin(b)], -1)
    rot = np.array([[math.cos(alpha), math.sin(alpha), 0], [-math.sin(alpha), math.cos(alpha), 0],
                    [0, 0, 1]])
    return body.reshape(-1, 3) @ rot.T + centre


def _extreme(objective, start, constraints):
    """Maximise a linear objective over the convex set by SLSQP from a sampled start."""
    res = minimize(lambda x: -objective @ x, start, jac=lambda x: -objective, method="SLSQP",
                   constraints=constraints, options={"ftol": 1e-16, "maxiter": 500})
    return float(objective @ res.x)


def numerical_footprint(h, r, theta0, u_n, u_t, theta):
    """Footprint by dense sampling of the surface + SLSQP refinement, no closed forms."""
    top = _surface(np.zeros(3), theta0, h, r)
    r_y0 = _extreme(np.array([1.0, 0, 0]), top[np.argmax(top[:, 0])],
                    [{"type": "ineq", "fun": lambda x: _inside(x, np.zeros(3), theta0, h, r)}])
    centre = np.array([u_n - r_y0, u_t, 0.0])
    alpha = theta0 + theta
    pts = _surface(centre, alpha, h, r)
    body = {"type": "ineq", "fun": lambda x: _inside(x, centre, alpha, h, r)}
    below = {"type": "ineq", "fun": lambda x: x[0]}
    sub = pts[pts[:, 0] >= 0.0]
    out = {"u_D": _extreme(np.array([1.0, 0, 0]), pts[np.argmax(pts[:, 0])], [body])}
    t2 = _extreme(np.array([0, 1.0, 0]), sub[np.argmax(sub[:, 1])], [body, below])
    t1 = -_extreme(np.array([0, -1.0, 0]), sub[np.argmin(sub[:, 1])], [body, below])
    w2 = _extreme(np.array([0, 0, 1.0]), sub[np.argmax(sub[:, 2])], [body, below])
    sampled = {"B_t": np.ptp(sub[:, 1]), "B_w": 2 * np.max(sub[:, 2])}
    out.update(B_t=t2 - t1, B_w=2 * w2, r_t=0.5 * (t1 + t2) - u_t, r_n=r_y0 - u_n)
    return out, sampled


def test_footprint_matches_numerical_intersection():
    rng = np.random.default_rng(5)
    worst = {k: 0.0 for k in ("B_t", "B_w", "r_t", "u_D", "r_n")}
    checked = 0
    while checked < 25:
        ar = rng.uniform(1.0, 4.0)
        r, h = (float(v) for v in geometry.block_size(100.0, 2600.0, ar))
        theta0, theta = rng.uniform(0, np.pi), rng.uniform(-0.3, 0.3)
        u_n, u_t = rng.uniform(0.02, 0.8) * r, rng.uniform(-0.1, 0.1)
        closed = geometry.footprint(h, r, theta0, u_n, u_t, theta)
        if closed["u_D"] < 0.05 * r:
            continue
        numeric, sampled = numerical_footprint(h, r, theta0, u_n, u_t, theta)
        for key in ("B_t", "B_w", "u_D", "r_n"):
            worst[key] = max(worst[key], abs(closed[key] - numeric[key]) / abs(numeric[key]))
        worst["r_t"] = max(worst["r_t"], abs(closed["r_t"] - numeric["r_t"]) / r)
        assert abs(closed["B_t"] - sampled["B_t"]) < 0.05 * closed["B_t"]
        assert abs(closed["B_w"] - sampled["B_w"]) < 0.05 * closed["B_w"]
        checked += 1
    assert max(worst.values()) < 1e-6, worst


def test_sphere_closed_forms_and_onset_tangency():
    r = 0.2
    u = np.linspace(0.001, 0.35, 40)
    f = geometry.footprint(r, r, 0.7, u, 0.0, 0.0)
    exact = 2 * np.sqrt(2 * r * np.minimum(u, r) - np.minimum(u, r) ** 2)
    np.testing.assert_allclose(f["B_t"], exact, rtol=1e-12)
    np.testing.assert_allclose(f["B_w"], exact, rtol=1e-12)
    np.testing.assert_allclose(f["r_t"], 0.0, atol=1e-14)
    np.testing.assert_allclose(f["u_D"], u, rtol=1e-12)
    onset = geometry.footprint(0.4, 0.2, np.linspace(0, np.pi, 13), 0.0, 0.0, 0.0)
    np.testing.assert_allclose(onset["a_t"], 0.0, atol=1e-7)
    assert geometry.shape_factor(1.0, 1.0) == pytest.approx(0.957 * math.exp(0.0394))


# ---------------------------------------------------------------- single impacts (in-process)


def _impact(**values):
    cfg = Config()
    inputs = (values.get("aspect_ratio", 1.0), values.get("theta_0", 0.0),
              values.get("theta_in", 0.0), values.get("omega_0", 0.0))
    return run_impact(cfg, inputs)


def test_sphere_vertical_impact_gains_no_rotation_and_contact_equals_apparent():
    row, history = _impact(aspect_ratio=1.0)
    assert row["end"] == "bounce"
    assert np.max(np.abs(history.y[5])) < 1e-9
    assert row["e_n"] > 0.0
    assert row["e_contact"] == pytest.approx(row["e_n"], abs=1e-12)
    assert row["e_vijayakumar"] == pytest.approx(row["e_contact"], abs=1e-12)
    assert row["energy_closure"] < 1e-6


def test_spinning_sphere_contact_equals_apparent():
    row, _ = _impact(aspect_ratio=1.0, omega_0=1000.0)
    assert row["e_contact"] == pytest.approx(row["e_n"], abs=1e-9)
    assert row["e_vijayakumar"] == pytest.approx(row["e_contact"], abs=1e-12)
    assert row["e_energy_formula"] == pytest.approx(row["e_energy"], abs=1e-6)


def test_rotation_change_peaks_at_intermediate_aspect_ratio():
    rotation = [_impact(aspect_ratio=ar, theta_0=45.0)[0]["rotation"] for ar in (1.5, 2.5, 4.0)]
    assert rotation[1] > rotation[0] and rotation[1] > rotation[2]


def test_normal_dashpot_is_lysmers_analog_at_the_small_strain_modulus():
    """Lysmer and Richart (1966): a rigid circular footing of radius r0 and mass m on a
    half-space has K = 4 G r0 / (1 - nu), C = 3.4 r0^2 sqrt(rho G) / (1 - nu) and the damping
    ratio 0.425 / sqrt(B_z), B_z = (1 - nu) m / (4 rho r0^3). With the dashpot at the far field's
    modulus G_0 = g0_ratio G (Eq. I4) the ratio is 0.425 sqrt(G_0 / G) / sqrt(B_z)."""
    cfg = Config()
    law = SoilLaw.from_config(cfg.soil, 9.81)
    for r0, u in ((0.1, 0.02), (0.2, 0.05)):
        fnd = foundation(law, 2 * r0, 2 * r0, 0.0, u, float(geometry.shape_factor(1.0, 1.0)),
                         0.4)
        k_n, c_n = fnd.stiffness[0], fnd.damping[0]
        g = (1 - law.nu) * k_n / (4 * r0)
        assert c_n == pytest.approx(3.4 * r0 ** 2 * math.sqrt(law.rho_s * g * cfg.soil.g0_ratio)
                                    / (1 - law.nu), rel=1e-12)
        b_z = (1 - law.nu) * 100.0 / (4 * law.rho_s * r0 ** 3)
        zeta = c_n / (2 * math.sqrt(k_n * 100.0))
        assert zeta == pytest.approx(0.425 * math.sqrt(cfg.soil.g0_ratio / b_z), rel=1e-12)


def test_rolling_sphere_tangential_restitution_tends_to_the_rolling_limit():
    """e_t read once the toppled block rolls (Eq. R3): without spin it is the rolling limit
    1 - 1/(1 + m r^2/I) (5/7 for a sphere on its radius). At theta_in = 70 deg the soil moment's
    impulse is below 0.5 % of the angular momentum m v_t0 r_n about the contact, the only
    term the limit leaves out besides the sinking of the contact during the impact: e_t is the
    limit on the final arm r_n to 1 %."""
    assert rolling_velocity(100.0, 0.4 * 100.0 * 0.2 ** 2, 0.2, 1.0, 0.0) == pytest.approx(5 / 7)
    row, history = _impact(aspect_ratio=1.0, theta_in=70.0)
    setup = make_setup(Config(), 1.0, 0.0, 70.0, 0.0)
    assert row["end"] == "topple"
    arm = history.derived["r_n"][-1]
    v_t0 = setup.initial_velocity[1]
    moment = trapezoid(history.derived["M"], history.t)
    assert abs(moment) < 5e-3 * 100.0 * v_t0 * arm
    limit = 1.0 - 1.0 / (1.0 + 100.0 * arm ** 2 / setup.inertia)
    assert row["e_t"] == pytest.approx(limit, rel=1e-2)


def test_apparent_restitution_tends_to_vijayakumar_on_stiff_ground():
    """Where the assumptions of Vijayakumar et al. (2012, Eq. R2) hold (rigid ground, a normal
    impulse only: k_E large, no visco-plastic flow, a frictionless slider, no gravity), the
    model's apparent e_n, with its own contact coefficient, converges to the rigid-body value
    as the ground stiffens: the gap shrinks with each tenfold k_E and ends below 0.01."""
    for omega in (0.0, 1000.0):
        gaps = []
        for k_e in (5e4, 5e5, 5e6):
            cfg = Config()
            cfg.soil.k_e, cfg.soil.gamma_v, cfg.soil.phi_b = k_e, 1e-6, 0.01
            cfg.impact.gravity = 0.0
            row, _ = run_impact(cfg, (2.0, 30.0, 0.0, omega))
            gaps.append(abs(row["e_n"] - row["e_vijayakumar"]))
        assert gaps[0] > gaps[1] > gaps[2] and gaps[2] < 0.01, gaps


def test_vijayakumar_formula_limits():
    e_star = np.array([0.2, 0.5, 0.8])
    np.testing.assert_allclose(vijayakumar(e_star, 100.0, 1.754, 0.0, 30.0, 14.0), e_star)
    r, h = (float(v) for v in geometry.block_size(100.0, 2600.0, 2.0))
    arm = float(geometry.lowest_point_offset(h, r, math.radians(30.0)))
    inertia = float(geometry.inertia(100.0, h, r))
    np.testing.assert_allclose(vijayakumar(e_star, 100.0, inertia, arm, 0.0, 14.0),
                               [-0.210, -0.013, 0.185], atol=1e-3)


def test_theta0_symmetry_about_90_degrees():
    a, ha = _impact(aspect_ratio=2.0, theta_0=30.0)
    b, hb = _impact(aspect_ratio=2.0, theta_0=150.0)
    assert abs(a["rotation"]) > 1e-3
    assert b["e_n"] == pytest.approx(a["e_n"], rel=1e-6, abs=1e-9)
    assert b["max_penetration"] == pytest.approx(a["max_penetration"], rel=1e-6)
    assert b["rotation"] == pytest.approx(-a["rotation"], rel=1e-6)
    assert a["energy_closure"] < 1e-6 and b["energy_closure"] < 1e-6


# ---------------------------------------------------------------- sweep (CLI) and trends


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    out = tmp_path_factory.mktemp("impact_sweep")
    summary = run_case(CASES / "impact_angle_sweep.toml", out, "sweep.aspect_ratio=[1.0, 2.0, 4.0]",
                       "sweep.theta_in=[0.0, 20.0]", 'sweep.plots=["e_n"]')
    rows = read_table(out / summary["results"]["table"])
    assert summary["results"]["n_impacts"] == len(rows) == 12
    assert (out / "impact_angle_sweep_e_n.png").stat().st_size > 0
    return {(r["aspect_ratio"], r["theta_0"], r["theta_in"]): r for r in rows}


@pytest.fixture(scope="module")
def sweep_histories():
    """Vertical impacts along the major and minor axes, with their histories."""
    return {(ar, th): _impact(aspect_ratio=ar, theta_0=th) for ar in (2.0, 4.0)
            for th in (0.0, 90.0)}


def test_energetic_coefficient_and_energy_balance_on_sweep(sweep):
    for row in sweep.values():
        assert row["e_energy"] <= 1.0
        assert row["e_energy_formula"] == pytest.approx(row["e_energy"], abs=1e-6)
        assert row["energy_closure"] < 1e-6
    assert energetic_coefficient(0.5, 0.0, 0.0, 0.0, 0.0) == pytest.approx(0.5)


def test_major_axis_penetrates_more_than_minor(sweep):
    for ar in (2.0, 4.0):
        assert sweep[(ar, 0.0, 0.0)]["max_penetration"] > sweep[(ar, 90.0, 0.0)]["max_penetration"]


def test_major_axis_penetration_grows_with_aspect_ratio(sweep):
    depth = [sweep[(ar, 0.0, 0.0)]["max_penetration"] for ar in (1.0, 2.0, 4.0)]
    assert depth[0] < depth[1] < depth[2]


def test_minor_axis_footprint_grows_with_aspect_ratio_at_every_depth():
    """Why Fig. 5a's minor-axis trend cannot hold (docs/references.md, Sect. 2.8): at equal
    mass the minor-axis footprint area pi (H/R)(2 R u - u^2) grows with A_r for u < 4R/3, and so
    does every resistance of a footing; the block, which does not rotate, meets a stiffer and
    stronger ground at every depth."""
    depths = np.linspace(0.01, 0.12, 12)
    areas = []
    for ar in (1.0, 2.0, 4.0):
        r, h = (float(v) for v in geometry.block_size(100.0, 2600.0, ar))
        f = geometry.footprint(h, r, math.pi / 2, depths, 0.0, 0.0)
        areas.append(f["area"])
        np.testing.assert_allclose(f["area"], math.pi * h / r * (2 * r * depths - depths ** 2),
                                   rtol=1e-12)
    assert np.all(areas[0] < areas[1]) and np.all(areas[1] < areas[2])


def test_minor_axis_penetration_falls_with_aspect_ratio(sweep):
    """Dattola et al. (2023), Conclusions: "An opposite trend was observed for blocks with
    horizontal long axis" (penetration falls with A_r). Their Sect. 3.1 (Fig. 5a) says it
    grows; that cannot hold (test above; docs/references.md, Sect. 2.8)."""
    depth = [sweep[(ar, 90.0, 0.0)]["max_penetration"] for ar in (1.0, 2.0, 4.0)]
    assert depth[0] > depth[1] > depth[2]


def test_major_axis_impacts_last_longer_by_impulse_momentum(sweep_histories):
    """Dattola et al. (2023), abstract: major-axis impacts last "ca 50%" shorter than
    minor-axis ones; their Conclusions have the major axis penetrate more with lower forces.
    By the impulse-momentum theorem the contact lasts T = m v_n0 (1 + e_n) / (<N> - m g): the
    lower mean force of the deeper major-axis impact makes it last longer unless the two pulse
    shapes differ by more than the force ratio (docs/references.md, Sect. 2.8). The theorem
    holds on the integrated history (tolerance: the trapezoid rule on the solver's steps)."""
    for ar in (2.0, 4.0):
        major, minor = sweep_histories[(ar, 0.0)], sweep_histories[(ar, 90.0)]
        for row, history in (major, minor):
            impulse = trapezoid(history.derived["N"], history.t)
            expected = 100.0 * 14.0 * (1.0 + row["e_n"]) + 100.0 * 9.81 * row["duration"]
            assert impulse == pytest.approx(expected, rel=2e-3)
        assert major[0]["duration"] > minor[0]["duration"]
        assert major[0]["max_force"] < minor[0]["max_force"]


def test_inclined_major_axis_normal_restitution_falls_with_aspect_ratio(sweep):
    e_n = [sweep[(ar, 0.0, 20.0)]["e_n"] for ar in (1.0, 2.0, 4.0)]
    assert e_n[0] > e_n[1] > e_n[2]


def test_inclined_major_axis_tangential_restitution_grows_with_aspect_ratio(sweep):
    """Dattola et al. (2023), Fig. 9b, with e_t read once the toppled block rolls (Eq. R3)."""
    e_t = [sweep[(ar, 0.0, 20.0)]["e_t"] for ar in (1.0, 2.0, 4.0)]
    assert e_t[0] < e_t[1] < e_t[2]


def test_max_force_decreases_with_aspect_ratio_major_axis(sweep):
    forces = [sweep[(ar, 0.0, 0.0)]["max_force"] for ar in (1.0, 2.0, 4.0)]
    assert forces[0] > forces[1] > forces[2]


def test_max_force_rises_with_aspect_ratio_minor_axis(sweep):
    """Dattola et al. (2023), Conclusions: the opposite of the major axis' falling force for
    blocks with horizontal long axis. Their Fig. 5b text says it falls; that cannot hold (the
    footprint test above; docs/references.md, Sect. 2.8)."""
    forces = [sweep[(ar, 90.0, 0.0)]["max_force"] for ar in (1.0, 2.0, 4.0)]
    assert forces[0] < forces[1] < forces[2]


def test_normal_restitution_major_above_sphere_above_minor(sweep):
    """Dattola et al. (2023), Fig. 8a, with the normal dashpot radiating at the far field's
    small-strain modulus (docs/references.md, Eq. I4)."""
    sphere = sweep[(1.0, 0.0, 0.0)]["e_n"]
    for ar in (2.0, 4.0):
        assert sweep[(ar, 0.0, 0.0)]["e_n"] > sphere > sweep[(ar, 90.0, 0.0)]["e_n"]


@pytest.mark.parametrize("gamma_v", [1.70, 0.85])
def test_normal_restitution_trend_with_alternative_viscous_sets(gamma_v):
    """The paper's alternative sets c_v = 0.5, gamma_v = 1.70 / 0.85 (supplementary material)."""
    cfg = Config()
    cfg.soil.c_v, cfg.soil.gamma_v = 0.5, gamma_v
    e_n = {(ar, th): run_impact(cfg, (ar, th, 0.0, 0.0))[0]["e_n"]
           for ar, th in ((1.0, 0.0), (2.0, 0.0), (2.0, 90.0))}
    assert e_n[(2.0, 0.0)] > e_n[(1.0, 0.0)] > e_n[(2.0, 90.0)]


def test_normal_restitution_negative_for_elongated_block_at_low_angle(sweep):
    assert sweep[(4.0, 0.0, 20.0)]["e_n"] < 0.0
    assert sweep[(4.0, 0.0, 20.0)]["e_contact"] > 0.0
    assert sweep[(1.0, 0.0, 20.0)]["e_n"] > 0.0


# ---------------------------------------------------------------- case, MPI, bad input


def test_single_impact_case_writes_results(tmp_path):
    results = run_case(CASES / "ellipsoid_impact.toml", tmp_path)["results"]
    for key in ("max_penetration", "max_force", "duration", "e_n", "e_t", "e_contact",
                "e_energy", "rot_ratio_max"):
        assert isinstance(results[key], float) and math.isfinite(results[key]), key
    assert 0.0 < results["e_energy"] <= 1.0
    assert (tmp_path / "ellipsoid_impact_histories.png").exists()
    history = read_columns(tmp_path / "ellipsoid_impact_history.csv")
    assert (tmp_path / "ellipsoid_impact_history.csv").read_text().startswith("t [s],u_n [m]")
    # VTK: the deepest node of the drawn ellipsoid is the sinking u_D of Eq. (38), computed
    # from the interpolated state by geometry.footprint (mesh chord error < 1 % of R)
    reader = pv.get_reader(str(tmp_path / "ellipsoid_impact.pvd"))
    h, r = results["semi_axis_h"], results["semi_axis_r"]
    for t in reader.time_values[::7]:
        reader.set_active_time_value(t)
        depth = reader.read()[0].point_data["depth_below_ground"].max()
        state = [np.interp(t, history["t"], history[k]) for k in ("u_n", "u_t", "theta")]
        u_d = geometry.footprint(h, r, 0.0, *state)["u_D"]
        assert abs(depth - u_d) < 0.01 * r, (t, depth, u_d)
    assert (tmp_path / "ellipsoid_impact_ground.pvd").exists()


def test_sweep_same_table_on_two_ranks(tmp_path):
    overrides = ("sweep.aspect_ratio=[1.5, 3.0]", "sweep.theta_0=[20.0]",
                 "sweep.theta_in=[0.0, 30.0]", 'sweep.plots=["e_n"]')
    one = run_case(CASES / "impact_angle_sweep.toml", tmp_path / "one", *overrides)
    two = run_case(CASES / "impact_angle_sweep.toml", tmp_path / "two", *overrides, ranks=2)
    assert two["ranks"] == 2
    table = one["results"]["table"]
    assert (tmp_path / "one" / table).read_text() == (tmp_path / "two" / table).read_text()


@pytest.mark.parametrize("override, field", [
    ("block.aspect_ratio=0.0", "block.aspect_ratio"),
    ("block.mass=-5.0", "block.mass"),
    ("impact.theta_in=120.0", "impact.theta_in"),
    ("impact.speed=-14.0", "impact.speed"),
    ("sweep.aspect_ratio=[2.0, -1.0]", "sweep.aspect_ratio"),
])
def test_bad_input_exits_2(override, field, tmp_path):
    proc = main_in_process(["run", str(CASES / "ellipsoid_impact.toml"), "--set", override,
                            "--quiet", "--out", str(tmp_path / "out")])
    assert proc.returncode == 2, proc.stderr
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith("error:") and field in line and "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()
