"""The contact law alone: normal spring-dashpot, Cundall-Strack cap, unloading, energy, joints."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from solver.contact_laws.laws import (BROKEN_SHEAR, BROKEN_TENSION, INTACT,
                                      clamped_restitution, cundall_strack_xyz,
                                      damping_ratio_from_restitution, dashpot_coefficient,
                                      joint_spring, normal_force)

Z = np.array([0.0, 0.0, 1.0])


def cundall_strack(f_t, d, normal, k_t, mu, f_n, c):
    """The kernel on 3-vectors: (f_t_new (3,), sliding, dissipated)."""
    f0, f1, f2, sliding, dissipated = cundall_strack_xyz(tuple(f_t), tuple(d), tuple(normal),
                                                         k_t, mu, f_n, c)
    return np.array([f0, f1, f2]), sliding, dissipated


def cs(f_t, d, k_t=100.0, mu=0.5, f_n=10.0, c=0.0, normal=Z):
    return cundall_strack(np.asarray(f_t, float), np.asarray(d, float), normal, k_t, mu, f_n, c)


def joint(overlap, f_t, d, state, k_n=1e6, k_t=1e5, tan_phi=0.5, tension=200.0, cohesion=50.0,
          breakable=True, normal=Z):
    """joint_spring on 3-vectors: (f_n, f_t (3,), state, released, dissipated)."""
    f_n, f0, f1, f2, state, released, dissipated = joint_spring(
        overlap, tuple(np.asarray(f_t, float)), tuple(np.asarray(d, float)), tuple(normal), k_n,
        k_t, tan_phi, tension, cohesion, state, breakable)
    return f_n, np.array([f0, f1, f2]), state, released, dissipated


@pytest.mark.parametrize("e_n", [0.1, 0.5, 0.9, 0.999])
def test_damping_ratio_gives_target_restitution(e_n):
    zeta = damping_ratio_from_restitution(e_n)
    assert math.exp(-math.pi * zeta / math.sqrt(1.0 - zeta ** 2)) == pytest.approx(e_n, rel=1e-12)
    assert dashpot_coefficient(e_n, 4.0, 9.0) == pytest.approx(2.0 * zeta * 6.0, rel=1e-14)


def test_damping_ratio_elastic_is_zero():
    assert damping_ratio_from_restitution(1.0) == 0.0


@pytest.mark.parametrize("e_n", [0.3, 0.8])
def test_clamped_restitution_matches_direct_integration(e_n):
    """The no-tension dashpot ends the contact when k xi + c xi' = 0: integrate m xi'' = -F_n
    with an event on F_n and compare the rebound velocity with the closed form."""
    k, m = 2.0e4, 0.3
    c = dashpot_coefficient(e_n, k, m)

    def rhs(t, y):
        return [y[1], -normal_force(y[0], y[1], k, c, 0.0) / m]

    def force_zero(t, y):
        return k * y[0] + c * y[1]
    force_zero.terminal = True
    force_zero.direction = -1
    sol = solve_ivp(rhs, (0.0, 1.0), [0.0, 1.0], events=force_zero, rtol=1e-11, atol=1e-14,
                    first_step=1e-7)
    realised = -sol.y_events[0][0][1]
    assert realised == pytest.approx(clamped_restitution(e_n), rel=1e-7)
    assert realised > e_n


def test_normal_force_sign_and_no_tension():
    assert normal_force(1e-3, 0.0, 1e6, 0.0, 0.0) == pytest.approx(1e3)
    assert normal_force(1e-3, 0.5, 1e6, 100.0, 0.0) == pytest.approx(1050.0)
    # dashpot pulling at the end of an impact is clamped: F_n >= 0
    assert normal_force(1e-4, -5.0, 1e6, 100.0, 0.0) == 0.0
    assert normal_force(-1e-4, -1.0, 1e6, 100.0, 0.0) == 0.0
    # a bonded joint carries tension down to the cut-off
    assert normal_force(-1e-4, 0.0, 1e6, 0.0, 500.0) == pytest.approx(-100.0)
    assert normal_force(-1e-3, 0.0, 1e6, 0.0, 500.0) == pytest.approx(-500.0)


def test_stick_below_cap_is_elastic_and_opposes_slip():
    f, sliding, diss = cs([0, 0, 0], [0.01, 0.02, 0.0])
    np.testing.assert_allclose(f, [-1.0, -2.0, 0.0])
    assert not sliding and diss == 0.0


def test_coulomb_cap_reached_and_spring_length_reset():
    k_t, mu, f_n = 100.0, 0.5, 10.0
    cap = mu * f_n
    f, sliding, diss = cs([0, 0, 0], [0.2, 0.0, 0.0])     # trial 20 N > 5 N
    np.testing.assert_allclose(f, [-cap, 0, 0])
    assert sliding
    assert diss == pytest.approx(cap * (20.0 - cap) / k_t)
    # further slip in the same direction: stays on the cap, dissipates cap * slip
    f2, sliding, diss = cs(f, [0.1, 0.0, 0.0])
    np.testing.assert_allclose(f2, [-cap, 0, 0])
    assert sliding and diss == pytest.approx(cap * 0.1)
    # reversal unloads elastically from the cap at once (spring length was reset to cap/k_t)
    f3, sliding, diss = cs(f2, [-0.02, 0.0, 0.0])
    np.testing.assert_allclose(f3, [-cap + 2.0, 0, 0])
    assert not sliding and diss == 0.0


def test_cap_in_any_tangent_direction_and_cohesion():
    f, sliding, _ = cs([0, 0, 0], [0.3, -0.4, 0.0], c=2.0)   # trial 50 N, cap 5 + 2
    np.testing.assert_allclose(np.linalg.norm(f), 7.0)
    np.testing.assert_allclose(f / 7.0, [-0.6, 0.8, 0.0])
    assert sliding


def test_normal_slip_component_ignored():
    f, sliding, _ = cs([0, 0, 0], [0.0, 0.0, 5.0])
    np.testing.assert_array_equal(f, [0, 0, 0])
    assert not sliding


def test_unloading_normal_force_drags_the_cap():
    """Falling normal force at zero slip: |F_t| follows mu F_n and the released spring energy
    is dissipated; at F_n = 0 nothing is left."""
    k_t, mu = 100.0, 0.5
    f = np.array([-4.0, 0.0, 0.0])
    stored = 0.5 * f @ f / k_t
    total = 0.0
    for f_n in [8.0, 6.0, 2.0, 0.0]:
        f, sliding, diss = cs(f, [0, 0, 0], f_n=f_n)
        assert np.linalg.norm(f) == pytest.approx(min(4.0, mu * f_n))
        assert sliding == (mu * f_n < 4.0)
        total += diss
    assert np.all(f == 0.0)
    assert total == pytest.approx(stored)


def test_rotation_into_new_tangent_plane_keeps_magnitude():
    n = np.array([0.0, math.sin(0.1), math.cos(0.1)])
    f, sliding, diss = cs([3.0, 4.0, 0.0], [0, 0, 0], normal=n)
    assert np.dot(f, n) == pytest.approx(0.0, abs=1e-14)
    assert np.linalg.norm(f) == pytest.approx(5.0)
    assert not sliding and diss == 0.0


def test_pathological_reversal_under_falling_cap_dissipates_nonnegative():
    """Old force 10 N, the cap falls to 1 N and the slip reverses through zero (trial +1.5 N):
    the radial return gives 1 N opposite, and the booked dissipation stays >= 0."""
    f, sliding, diss = cs([-10.0, 0, 0], [-0.115, 0, 0], k_t=100.0, mu=0.1, f_n=10.0)
    np.testing.assert_allclose(f, [1.0, 0, 0])
    assert sliding and diss == pytest.approx(0.5 * (1.5 ** 2 - 1.0) / 100.0)


def test_random_load_paths_never_create_energy():
    """3D random slips, rotating normal and a varying normal force: every increment's dissipation
    is >= 0, the elastic energy never exceeds the work put in, and work = stored + dissipated
    (midpoint work over small increments, to its discretisation error)."""
    rng = np.random.default_rng(7)
    k_t, mu = 50.0, 0.4
    for path in range(20):
        f = np.zeros(3)
        work = dissipated = 0.0
        steps = 3000
        drift = rng.normal(size=3) * 2e-4
        for i in range(steps):
            angle = 0.3 * math.sin(2 * math.pi * i / steps + path)
            n = np.array([math.sin(angle), 0.0, math.cos(angle)])
            f_n = 5.0 * (1.0 + 0.9 * math.sin(7.0 * math.pi * i / steps + path))
            d = drift * math.cos(3.0 * math.pi * i / steps) + rng.normal(size=3) * 5e-4
            d_t = d - np.dot(d, n) * n
            rotated = f - np.dot(f, n) * n
            if np.linalg.norm(rotated) > 0:
                rotated *= np.linalg.norm(f) / np.linalg.norm(rotated)
            f_new, _, diss = cundall_strack(f, d, n, k_t, mu, f_n, 0.0)
            assert diss >= 0.0
            work += -0.5 * np.dot(rotated + f_new, d_t)
            dissipated += diss
            f = f_new
            stored = 0.5 * np.dot(f, f) / k_t
            assert stored <= work + 1e-9
        assert dissipated > 0.0
        assert work == pytest.approx(stored + dissipated, rel=2e-2)


def test_exact_work_balance_in_one_dimension():
    """In 1D, with the normal force constant within each increment, the law's booking is exact:
    work along the increment (fine elastic-plastic sub-steps under the path's cap) equals the
    change of spring energy plus the dissipation."""
    rng = np.random.default_rng(3)
    k_t, mu = 20.0, 0.5
    f = np.zeros(3)
    slipped = 0
    for _ in range(100):
        f_n = rng.uniform(0.0, 4.0)
        d = np.array([rng.normal() * 0.05, 0.0, 0.0])
        f_new, _, diss = cundall_strack(f, d, Z, k_t, mu, f_n, 0.0)
        # the same increment in 2000 sub-steps: slip under the cap max(|f|, mu F_n), then the
        # cap falls to mu F_n with no slip; work by the midpoint rule of each sub-step
        c1 = max(abs(f[0]), mu * f_n)
        sub, work = f.copy(), 0.0
        for _ in range(2000):
            nxt, _, _ = cundall_strack(sub, d / 2000, Z, k_t, 1.0, c1, 0.0)
            work += -0.5 * (sub[0] + nxt[0]) * d[0] / 2000
            sub = nxt
        end, _, _ = cundall_strack(sub, np.zeros(3), Z, k_t, mu, f_n, 0.0)
        np.testing.assert_allclose(end, f_new, atol=1e-12)
        delta_e = 0.5 * (f_new[0] ** 2 - f[0] ** 2) / k_t
        # one sub-step straddles the stick -> slip transition: midpoint error <= k_t dd^2
        assert work == pytest.approx(delta_e + diss, abs=k_t * (d[0] / 2000) ** 2 + 1e-15)
        slipped += diss > 0.0
        f = f_new
    assert 20 < slipped < 80                     # both sticking and slipping increments


C_A, T_A, TAN_PHI = 50.0, 200.0, 0.5                       # c A, T A [N], tan(phi)


def mohr_coulomb_strength(f_n):
    """Closed form of the intact joint's shear strength [N] at normal force f_n (compression
    positive): c A + f_n tan(phi), down to the cut-off -min(T, c / tan(phi)) A."""
    return C_A + f_n * TAN_PHI


@pytest.mark.parametrize("f_n", [-99.0, -60.0, -20.0, 0.0, 40.0, 300.0])
def test_joint_intact_shear_strength_against_normal_force(f_n):
    """Just under the Mohr-Coulomb line the joint holds its shear force; just over it breaks in
    shear, tension included (a tensile normal force lowers the strength)."""
    s = mohr_coulomb_strength(f_n)
    k_n, k_t = 1e6, 1e5
    for factor, state in [(1.0 - 1e-9, INTACT), (1.0 + 1e-9, BROKEN_SHEAR)]:
        shear = factor * s
        got_n, f_t, got_state, released, _ = joint(f_n / k_n, [0, 0, 0], [-shear / k_t, 0, 0],
                                                   INTACT, k_n=k_n, k_t=k_t, tension=T_A)
        assert got_state == state
        if state == INTACT:
            assert got_n == pytest.approx(f_n, rel=1e-12, abs=1e-9)
            np.testing.assert_allclose(f_t, [shear, 0, 0], rtol=1e-12)
            assert released == 0.0
        else:
            # residual friction only, and a broken joint carries no tension
            residual = max(f_n, 0.0) * TAN_PHI
            assert got_n == pytest.approx(max(f_n, 0.0), abs=1e-9)
            np.testing.assert_allclose(f_t, [residual, 0, 0], rtol=1e-12, atol=1e-12)
            stored = 0.5 * shear ** 2 / k_t + 0.5 * min(f_n, 0.0) ** 2 / k_n
            left = 0.5 * residual ** 2 / k_t
            assert released == pytest.approx(stored - left, rel=1e-9)


@pytest.mark.parametrize("tension, cutoff", [(60.0, 60.0), (200.0, C_A / TAN_PHI)])
def test_joint_tension_cutoff(tension, cutoff):
    """Tensile failure at F_n = -min(T, c / tan(phi)) A with no shear: beyond the apex of the
    Mohr-Coulomb line the joint has no strength left."""
    k_n = 1e6
    for factor, state in [(1.0 - 1e-9, INTACT), (1.0 + 1e-9, BROKEN_TENSION)]:
        f_n, f_t, got, released, _ = joint(-factor * cutoff / k_n, [0, 0, 0], [0, 0, 0],
                                           INTACT, k_n=k_n, tension=tension)
        assert got == state
        if state == BROKEN_TENSION:
            assert f_n == 0.0 and released == pytest.approx(0.5 * cutoff ** 2 / k_n)


def test_joint_not_breakable_keeps_elastic_forces():
    f_n, f_t, state, released, _ = joint(-5e-4, [0, 0, 0], [-1e-2, 0, 0], INTACT,
                                         breakable=False)
    assert (state, released) == (INTACT, 0.0)
    assert f_n == pytest.approx(-500.0)
    np.testing.assert_allclose(f_t, [1000.0, 0, 0])


def test_joint_broken_in_tension_carries_compression_and_friction_only():
    k_n, k_t = 1e6, 1e5
    f_n, f_t, state, _, _ = joint(-1e-5, [3.0, 0, 0], [0, 0, 0], BROKEN_TENSION)
    assert f_n == 0.0 and np.all(f_t == 0.0)
    # closed again: compression, and friction capped at F_n tan(phi) with no cohesion
    f_n, f_t, state, released, diss = joint(1e-4, [0, 0, 0], [-1e-3, 0, 0], state)
    assert (f_n, state, released) == (pytest.approx(100.0), BROKEN_TENSION, 0.0)
    np.testing.assert_allclose(f_t, [50.0, 0, 0])
    assert diss == pytest.approx(50.0 * (100.0 - 50.0) / k_t)
