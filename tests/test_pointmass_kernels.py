"""Unit tests of the point-mass kernels: surfaces, derivatives, rasters, EP law, RB solve."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from solver.errors import InputError
from solver.pointmass.terrain import Grid2D, read_grid, write_asc
from solver.pointmass.expression import compile_expression
from solver.pointmass.forces import RbSystem, ep_factor, scatter_link_forces
from solver.pointmass.surface import Raster, SphereCup

RNG = np.random.default_rng(7)
ROOT_DIR = Path(__file__).resolve().parents[1]


def test_expression_derivatives_are_exact_against_sphere_cup():
    cup = SphereCup(100.0)
    expr = compile_expression("R - sqrt(R**2 - x**2 - y**2)", {"R": 100.0}, "t")
    x, y = RNG.uniform(-60, 60, 50), RNG.uniform(-60, 60, 50)
    for a, b in zip(expr(x, y), cup.eval(x, y)):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)


def test_expression_derivatives_match_finite_differences():
    f = compile_expression("0.3*sin(x/40)*exp(-y/200) + x*y/1e4 + tanh(y/50)**3 + 2**(x/100)",
                           {}, "t")
    x, y = RNG.uniform(-100, 100, 20), RNG.uniform(-100, 100, 20)
    h = 1e-3
    val, fx, fy, fxx, fxy, fyy = f(x, y)
    np.testing.assert_allclose(fx, (f(x + h, y)[0] - f(x - h, y)[0]) / (2 * h), atol=1e-8)
    np.testing.assert_allclose(fy, (f(x, y + h)[0] - f(x, y - h)[0]) / (2 * h), atol=1e-8)
    np.testing.assert_allclose(fxx, (f(x + h, y)[1] - f(x - h, y)[1]) / (2 * h), atol=1e-8)
    np.testing.assert_allclose(fxy, (f(x, y + h)[1] - f(x, y - h)[1]) / (2 * h), atol=1e-8)
    np.testing.assert_allclose(fyy, (f(x, y + h)[2] - f(x, y - h)[2]) / (2 * h), atol=1e-8)


@pytest.mark.parametrize("text", ["x +", "__import__('os')", "x.real", "foo(x)", "x if y else 1"])
def test_expression_rejects_unsafe_or_bad_input(text):
    with pytest.raises(InputError):
        compile_expression(text, {}, "surface.expression")


def test_raster_spline_reproduces_a_cubic_and_asc_round_trip(tmp_path):
    xs, ys = np.arange(0.0, 501.0, 50.0), np.arange(100.0, 701.0, 50.0)
    X, Y = np.meshgrid(xs, ys)

    def f(x, y):
        return 1e-6 * x ** 3 - 2e-4 * x * y + 3e-3 * y ** 2 + 0.1 * x

    write_asc(tmp_path / "dem.asc", Grid2D(xs, ys, f(X, Y)), fmt="%.12g")
    grid = read_grid(str(tmp_path / "dem.asc"))
    np.testing.assert_allclose(grid.xs, xs)
    np.testing.assert_allclose(grid.ys, ys)
    np.save(tmp_path / "dem.npy", f(X, Y))
    npy = read_grid(str(tmp_path / "dem.npy"), origin=(0.0, 100.0), spacing=(50.0, 50.0))
    np.testing.assert_allclose(npy.z, grid.z, rtol=1e-10)
    surf = Raster(grid)
    x, y = RNG.uniform(20, 480, 30), RNG.uniform(120, 680, 30)
    val, fx, fy, fxx, fxy, fyy = surf.eval(x, y)
    np.testing.assert_allclose(val, f(x, y), rtol=1e-9, atol=1e-8)
    np.testing.assert_allclose(fx, 3e-6 * x ** 2 - 2e-4 * y + 0.1, atol=1e-9)
    np.testing.assert_allclose(fy, -2e-4 * x + 6e-3 * y, atol=1e-9)
    np.testing.assert_allclose(fxx, 6e-6 * x, atol=1e-9)
    np.testing.assert_allclose(fxy, -2e-4, atol=1e-9)
    np.testing.assert_allclose(fyy, 6e-3, atol=1e-9)
    assert surf.outside(np.array([-1.0, 10.0]), np.array([200.0, 701.0])).all()


def test_asc_nodata_is_an_input_error(tmp_path):
    p = tmp_path / "bad.asc"
    rows = "\n".join(" ".join(["1"] * 5) for _ in range(4)) + "\n-9999 1 1 1 1\n"
    p.write_text("ncols 5\nnrows 5\nxllcorner 0\nyllcorner 0\ncellsize 10\n"
                 "NODATA_value -9999\n" + rows)
    with pytest.raises(InputError, match="no data"):
        read_grid(str(p), where="surface.path")


def test_ep_law_branches_and_continuity():
    law = dict(w1=-0.5, w2=0.5, w3=1.0, k_max=10.0, k_min=1.0)
    k = lambda w: float(ep_factor(np.array([w]), **law)[0])  # noqa: E731
    assert k(0.0) == 0.0
    assert k(-0.25) == pytest.approx(1.0 * 0.25 / 0.25)       # alpha = k_min |w1| / w2 = 1
    assert k(-0.49) == 10.0 and k(-0.8) == 10.0                # saturated repulsion
    assert k(0.25) == pytest.approx(-0.5) and k(0.5) == pytest.approx(-1.0)
    assert k(0.75) == pytest.approx(-0.5) and k(1.0) == 0.0 and k(3.0) == 0.0
    w = np.linspace(-0.45, 0.999, 20001)
    assert np.max(np.abs(np.diff(ep_factor(w, **law)))) < 0.05  # no jumps (a sign slip is 2)


def test_rb_system_two_masses_on_a_line_give_centripetal_tension():
    """Two masses of 2 kg and 1 kg spinning about their CoM on a frictionless plane with the
    link length L = 3 m and angular speed w: the link tension is m_red w^2 L (gravity is
    normal to the plane)."""
    w, length = 0.7, 3.0
    r3 = np.array([[1.0, 0.0, 0.0], [-2.0, 0.0, 0.0]])
    v3 = np.array([[0.0, w * 1.0, 0.0], [0.0, -w * 2.0, 0.0]])
    m = np.array([2.0, 1.0])
    nrm = np.tile([0.0, 0.0, 1.0], (2, 1))
    rb = RbSystem(np.array([[0, 1]]), 2)
    h, f = rb.solve(r3, v3, np.zeros((2, 3)), nrm, -nrm, m, check_rank=True)
    m_red = 2.0 / 3.0
    assert h[0] == pytest.approx(-m_red * w ** 2 * length, rel=1e-13)
    np.testing.assert_allclose(f.sum(axis=0), 0.0, atol=1e-13)
    np.testing.assert_allclose(scatter_link_forces(2, np.array([[0, 1]]),
                                                   np.array([[1.0, 2.0, 3.0]])),
                               [[1, 2, 3], [-1, -2, -3]])


def test_sphere_cup_theory_formula_matches_eq_12_for_three_masses():
    from solver.pointmass.benchmark import ring_force_theory
    theta, v0, m, g, rs = math.radians(64.0), 20.0, 5.0, 9.81, 100.0
    eq12 = m * g / math.sqrt(3.0) * (math.tan(theta) - v0 ** 2 / (rs * g * math.sin(theta)))
    assert ring_force_theory(3, m, g, rs, theta, v0) == pytest.approx(eq12, rel=1e-14)


def _footprint_case(**grid):
    from solver.case import from_dict
    from solver.pointmass.config import Config
    data = {"surface": {"kind": "plane", "slope_deg": 10.0},
            "grid": {"kind": "footprint",
                     "footprint": [[0.0, 0.0], [400.0, 0.0], [400.0, 200.0], [0.0, 200.0]],
                     "nx": 4, "ny": 2, "density": 2000.0, **grid}}
    return from_dict(Config, data, "t.toml", "", ROOT_DIR)


def test_footprint_grid_masses_follow_thickness_list_and_raster(tmp_path):
    from solver.pointmass.grid import build_body
    from solver.pointmass.surface import Plane
    plane = Plane(10.0, 0.0, 0.0)
    values = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
    body = build_body(_footprint_case(thickness_values=values), plane, "t.toml")
    np.testing.assert_allclose(body.m, 2000.0 * 100.0 * 100.0 * np.array(values), rtol=1e-12)
    np.testing.assert_allclose(body.xy[:4, 0], [50.0, 150.0, 250.0, 350.0], rtol=1e-12)
    assert len(body.sides) == 3 * 2 + 4 and len(body.diagonals) == 2 * 3
    assert len(body.rb) == 10 and len(body.ep) == 6
    # a thickness raster t = x / 100 (.npy, origin/spacing), rescaled to a volume
    xs = np.arange(-50.0, 451.0, 25.0)
    np.save(tmp_path / "t.npy", np.tile(xs / 100.0, (13, 1)))
    body = build_body(_footprint_case(thickness_path=str(tmp_path / "t.npy"),
                                      thickness_origin=[-50.0, -50.0],
                                      thickness_spacing=[25.0, 25.0], volume=1e5),
                      plane, "t.toml")
    assert body.m.sum() == pytest.approx(2000.0 * 1e5, rel=1e-12)
    # CoM of t = x/100 over [0, 400]: int x^2 / int x = (2/3) 400
    com = (body.m[:, None] * body.xy).sum(axis=0) / body.m.sum()
    assert com[0] == pytest.approx(800.0 / 3.0, rel=1e-3)
    assert com[1] == pytest.approx(100.0, rel=1e-12)
