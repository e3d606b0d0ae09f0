"""Hex8 incremental element kernel: patch test and large rigid rotations (Feng et al. 2014,
Eq. 2)."""

import numpy as np

from solver.cdem.constitutive import lame
from solver.cdem.hex8 import element_step, lumped_masses
from solver.mesh.reference_hex import CORNERS, element_volumes

LAM, MU = lame(2e9, 0.3)


def _step(x_new, du, stress):
    f = np.zeros_like(x_new)
    element_step(x_new, du, stress, f, np.array([LAM]), np.array([MU]), np.zeros(1, np.int64))
    return f


def _rotation(axis, angle):
    k = np.asarray(axis, float) / np.linalg.norm(axis)
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(angle) * kx + (1 - np.cos(angle)) * kx @ kx


def _tensor(v):
    return np.array([[v[0], v[5], v[4]], [v[5], v[1], v[3]], [v[4], v[3], v[2]]])


def test_patch_uniform_strain_is_reproduced_exactly():
    """A linear displacement field on a distorted hex gives the exact stress at every Gauss
    point, and nodal forces that sum to zero."""
    rng = np.random.default_rng(1)
    x0 = 0.5 * CORNERS + rng.uniform(-0.12, 0.12, (8, 3))
    grad = rng.normal(size=(3, 3)) * 1e-4
    du = x0 @ grad.T
    stress = np.zeros((1, 8, 6))
    f = _step(x0 + du, du, stress)
    # gradient of du with respect to the mid-step coordinates x0 + du/2
    lgrad = grad @ np.linalg.inv(np.eye(3) + grad / 2)
    eps = 0.5 * (lgrad + lgrad.T)
    exact = LAM * np.trace(eps) * np.eye(3) + 2 * MU * eps
    for g in range(8):
        np.testing.assert_allclose(_tensor(stress[0, g]), exact, rtol=0, atol=1e-9 * abs(exact).max())
    np.testing.assert_allclose(f.sum(axis=0), 0.0, atol=1e-9 * abs(f).max())


def test_rigid_rotation_of_ninety_degrees_creates_no_stress():
    x0 = 0.5 * CORNERS
    stress = np.zeros((1, 8, 6))
    rot_axis = [1.0, 2.0, 0.5]
    x_old = x0.copy()
    for k in range(1, 201):
        x_new = x0 @ _rotation(rot_axis, np.pi / 2 * k / 200).T
        _step(x_new, x_new - x_old, stress)
        x_old = x_new
    assert np.abs(stress).max() < 1e-6        # Pa, against an E of 2 GPa: round-off only


def test_prestress_rotates_with_the_body():
    """sigma -> R sigma R^T exactly under a finite rigid rotation done in 50 steps."""
    x0 = 0.5 * CORNERS
    s0 = np.array([1e6, -2e6, 3e5, 4e5, -5e5, 6e5])
    stress = np.tile(s0, (1, 8, 1)).astype(float)
    x_old = x0.copy()
    rot = _rotation([0.0, 0.0, 1.0], np.pi / 2)
    for k in range(1, 51):
        x_new = x0 @ _rotation([0.0, 0.0, 1.0], np.pi / 2 * k / 50).T
        _step(x_new, x_new - x_old, stress)
        x_old = x_new
    expected = rot @ _tensor(s0) @ rot.T
    np.testing.assert_allclose(_tensor(stress[0, 3]), expected, atol=1e-6 * 2e6)


def test_volumes_and_lumped_masses_of_a_box():
    x = (0.5 * CORNERS + 0.5) * np.array([2.0, 3.0, 4.0])
    assert np.isclose(element_volumes(x[None])[0], 24.0, rtol=1e-14)
    m = lumped_masses(x[None], np.array([1000.0]))
    np.testing.assert_allclose(m, 24.0 * 1000.0 / 8, rtol=1e-14)
