"""Tangential restitution of the linear dashpot + Cundall-Strack law against Becker et al. 2008."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import CASES, main_in_process, run_case

from solver.contact_laws.laws import dashpot_coefficient
from solver.contact_laws.output import read_csv
from solver.contact_laws.restitution import (collide, collide_many, convergence_error,
                                             normal_history, pure_coulomb_theory,
                                             small_gt_first_order, small_gt_limit, walton_e_t)

A = 2.0 / 7.0          # alpha / m_eff, homogeneous spheres
MU = 0.3
CASE = CASES / "tangential_restitution.toml"
SMALL_MAP = ["grid.n_gt=30", "grid.n_kt=10", "steps=2000", "small_gt.steps=100000"]


@pytest.fixture(scope="module")
def undamped():
    """Normal history of an undamped collision, g_n = k_n = m_eff = 1, 8000 steps."""
    return normal_history(1.0, 1.0, 1.0, 0.0, 8000)[:3]


def test_pure_coulomb_regime_matches_walton():
    """Large g_t/g_n, gamma_n = 0: sliding throughout, e_t = 1 - mu (1 + e_n)(m_eff/alpha) g_n/g_t
    (Walton; Becker et al. 2008 Eq. 18)."""
    dt, f_half, f_whole, e_n = normal_history(1.0, 1.0, 1.0, 0.0, 4000)
    gt = np.array([2.2, 3.0, 5.0, 10.0, 3.0, 6.0])
    kt = np.array([0.5, 0.5, 1.0, 2.0, 5.0, 0.1])
    e_t, switches, starts = collide_many(gt, kt, A, MU, dt, f_half, f_whole)
    assert e_n == pytest.approx(1.0, abs=1e-12)
    assert np.all(starts) and np.all(switches == 0)
    np.testing.assert_allclose(e_t, walton_e_t(gt, MU, e_n, A), atol=1e-6)


@pytest.mark.parametrize("e_n", [0.9, 0.6])
def test_damped_sliding_exceeds_walton_by_initial_stick(e_n):
    """With a dashpot F_n jumps to gamma_n g_n at impact while the tangential spring starts at
    zero, so every collision sticks for tau ~ mu gamma_n g_n / (k_t g_t) before sliding (one
    switch). The missing impulse ~ cap tau / 2 raises e_t above Walton's closed form (with the
    realised e_n) by ~ mu^2 gamma_n^2 g_n^2 / (2 k_t alpha g_t^2): checked to 10 % where
    tau << t_c."""
    gamma = dashpot_coefficient(e_n, 1.0, 1.0)
    dt, f_half, f_whole, e_real = normal_history(1.0, 1.0, 1.0, gamma, 8000)
    gt = np.array([5.0, 10.0, 3.0])
    kt = np.array([1.0, 2.0, 5.0])
    e_t, switches, starts = collide_many(gt, kt, A, MU, dt, f_half, f_whole)
    assert not starts.any() and np.all(switches == 1)
    excess = e_t - walton_e_t(gt, MU, e_real, A)
    np.testing.assert_allclose(excess, MU ** 2 * gamma ** 2 / (2 * kt * A * gt ** 2), rtol=0.1)


def test_sliding_region_matches_eqs_45_48(undamped):
    """Where the integration slides throughout is exactly where Eqs. 45 and 48 predict it."""
    kt, gt = (a.ravel() for a in np.meshgrid(np.geomspace(0.05, 20.0, 25),
                                             np.linspace(0.01, 2.5, 60), indexing="ij"))
    _, switches, starts = collide_many(gt, kt, A, MU, *undamped)
    numeric = starts & (switches == 0)
    assert numeric.sum() > 100
    np.testing.assert_array_equal(numeric, pure_coulomb_theory(gt, kt, MU, A))


@pytest.mark.parametrize("kt_kn", [0.2, 0.5, 1.0, 1.5])
def test_small_gt_limit_eq49(kt_kn):
    """e_t -> cos(omega_t t_c) (Eq. 49). The deviation is first order in g_t/g_n: the final
    Coulomb phase lasts ~ g_t/g_n (see small_gt_first_order), bounded by
    (k_t/k_n)(g_t/g_n)/(2 mu). Tolerance: that bound (+5 %); the first-order formula must
    explain the deviation to 2 %, and a 10x smaller g_t must give a ~10x smaller deviation."""
    theory = small_gt_limit(kt_kn, A, math.pi)
    deviations = []
    for gt_gn in (3e-3, 3e-4):
        e_t = collide(1.0, gt_gn, 1.0, kt_kn, 1.0, A, MU, 0.0, 400_000)[0]
        deviation = e_t - theory
        assert abs(deviation) <= 1.05 * kt_kn * gt_gn / (2 * MU)
        first = small_gt_first_order(gt_gn, kt_kn, MU, A, math.pi) - theory
        assert deviation == pytest.approx(first, rel=0.02)
        deviations.append(deviation)
    assert deviations[1] / deviations[0] == pytest.approx(0.1, rel=0.05)


@pytest.mark.xfail(strict=True, reason="measured: e_t - cos(omega_t t_c) is first order in g_t/g_n "
                   "(k_t/k_n = 1: -7.86e-4 at g_t/g_n = 3e-3, -7.80e-5 at 3e-4, ratio 0.099); "
                   "Becker et al. 2008 calls the neglected correction O((g_t/g_n)^2)")
def test_small_gt_deviation_is_second_order():
    """Becker et al. 2008 (before Eq. 49) neglects an O((g_t/g_n)^2) correction to cos(omega_n t_0).
    The final Coulomb phase, whose length Becker et al. (2008) say is proportional to g_t/g_n, gives
    a first-order term (see small_gt_first_order)."""
    theory = small_gt_limit(1.0, A, math.pi)
    dev = [collide(1.0, g, 1.0, 1.0, 1.0, A, MU, 0.0, 400_000)[0] - theory for g in (3e-3, 3e-4)]
    assert abs(dev[1] / dev[0]) < 0.02


def test_velocity_scaling_changes_nothing():
    """Scaling g_n and g_t by 100 leaves e_t and the regime sequence unchanged (Sec. III.3.4)."""
    gt = np.linspace(0.01, 2.5, 40)
    kt = np.full_like(gt, 3.0)
    slow = collide_many(gt, kt, A, MU, *normal_history(1.0, 1.0, 1.0, 0.0, 2000)[:3])
    fast = collide_many(100.0 * gt, kt, A, MU, *normal_history(100.0, 1.0, 1.0, 0.0, 2000)[:3])
    np.testing.assert_allclose(fast[0], slow[0], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(fast[1], slow[1])
    np.testing.assert_array_equal(fast[2], slow[2])


@pytest.mark.parametrize("m", [1, 2, 3])
def test_plateaus_at_commensurate_frequencies(m, undamped):
    """omega_t = m omega_n, i.e. k_t/k_n = (alpha/m_eff) m^2: e_t = (-1)^m and no switch for
    g_t/g_n < mu k_n/k_t (Becker et al. 2008 Figs. 8-9, boundary from Eq. 45); just above that
    boundary the plateau ends."""
    kt = A * m * m
    bound = MU / kt
    gt = bound * np.array([0.01, 0.3, 0.7, 0.98])
    e_t, switches, starts = collide_many(gt, np.full_like(gt, kt), A, MU, *undamped)
    np.testing.assert_allclose(e_t, (-1.0) ** m, atol=1e-9)
    assert not starts.any() and np.all(switches == 0)
    above = collide_many(np.array([1.2 * bound]), np.array([kt]), A, MU, *undamped)
    assert abs(above[0][0]) < 0.999 and above[2][0]


def test_at_most_eight_switches_in_paper_region(undamped):
    """k_t/k_n up to 20 (omega_t/omega_n up to 8.4) at mu = 0.3: the switch count peaks at 8
    (Becker et al. 2008 Sec. III.3.5, Fig. 7e) and never exceeds it."""
    gt = np.linspace(0.2, 1.6, 400)
    counts = []
    for kt in (12.0, 20.0):
        counts.append(collide_many(gt, np.full_like(gt, kt), A, MU, *undamped)[1].max())
    assert max(counts) == 8


@pytest.mark.parametrize("gt_gn, kt_kn", [(0.7, 20.0), (0.3, 1.0), (0.05, 5.0)])
def test_integration_self_convergence(gt_gn, kt_kn):
    """|e_t(N) - e_t(2N)| at the case's N = 4000 steps, including multi-switch points."""
    assert convergence_error(gt_gn, kt_kn, MU, A, 4000) < 5e-6


def test_case_runs_and_writes_map(tmp_path):
    summary = run_case(CASE, tmp_path, *SMALL_MAP)
    r = summary["results"]
    assert summary["steps"] == 300
    assert r["max_switches"] <= 8
    assert r["coulomb_region_mismatch"] == 0
    assert r["sliding_throughout_points"] > 0 and r["walton_max_abs_error"] < 1e-6
    assert abs(r["e_t_small_gt_numeric"] - r["e_t_small_gt_theory"]) <= 1.0 * 3e-4 / (2 * 0.3)
    assert r["e_t_small_gt_numeric"] == pytest.approx(r["e_t_small_gt_first_order"], abs=2e-6)
    table = read_csv(tmp_path / "e_t_map.csv")
    assert table["e_t"].size == 300 and np.all(np.abs(table["e_t"]) <= 1.0 + 1e-9)
    assert (tmp_path / "e_t_map.png").stat().st_size > 10_000


def test_two_ranks_give_the_same_map(tmp_path):
    one = run_case(CASE, tmp_path / "one", *SMALL_MAP, "output.plot=false")
    two = run_case(CASE, tmp_path / "two", *SMALL_MAP, "output.plot=false", ranks=2)
    assert two["ranks"] == 2
    assert one["results"] == two["results"]
    assert ((tmp_path / "one" / "e_t_map.csv").read_text()
            == (tmp_path / "two" / "e_t_map.csv").read_text())


@pytest.mark.parametrize("override, field", [("grid.gt_gn_max=0.001", "grid.gt_gn_max"),
                                             ("contact.e_n=1.5", "contact.e_n"),
                                             ("grid.kt_spacing='cubic'", "grid.kt_spacing")])
def test_bad_input_is_one_error_line(tmp_path, override, field):
    proc = main_in_process(["run", str(CASE), "--out", str(tmp_path / "bad"), "--quiet",
                            "--set", override])
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and field in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "bad").exists()
