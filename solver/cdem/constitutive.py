"""Constitutive laws of the block elements: the hook the element kernel calls.

``stress_increment(model, lam, mu, de_xx, de_yy, de_zz, de_yz, de_xz, de_xy)`` returns the
Voigt stress increment for the tensorial strain increment (shear components are
eps_ij = (L_ij + L_ji)/2, not engineering strains). Model ids:

* ``ELASTIC = 0``: linear isotropic elasticity, d sigma = lam tr(d eps) I + 2 mu d eps
  (the [D] of Feng et al. 2014 Eq. 2).

A new law gets a new id, a branch here and an entry in :data:`MODELS`; laws with internal
variables (plasticity, damage) would add their state array to the kernel's arguments.
"""

from __future__ import annotations

from numba import njit

ELASTIC = 0
MODELS = {"elastic": ELASTIC}


@njit(cache=True, inline="always")
def stress_increment(model, lam, mu, exx, eyy, ezz, eyz, exz, exy):
    """Voigt stress increment (xx, yy, zz, yz, xz, xy) of model ``model``."""
    tr = lam * (exx + eyy + ezz)
    return (tr + 2.0 * mu * exx, tr + 2.0 * mu * eyy, tr + 2.0 * mu * ezz,
            2.0 * mu * eyz, 2.0 * mu * exz, 2.0 * mu * exy)


def lame(youngs_modulus: float, poisson_ratio: float) -> tuple[float, float]:
    """Lame constants (lam, mu) from E and nu."""
    mu = youngs_modulus / (2.0 * (1.0 + poisson_ratio))
    lam = youngs_modulus * poisson_ratio / ((1.0 + poisson_ratio) * (1.0 - 2.0 * poisson_ratio))
    return lam, mu
