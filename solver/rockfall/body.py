"""The block: a rigid prolate spheroid (semi-axis H along its symmetry axis a, R across it).

Sizes from the mass (Dattola et al. 2023, Eq. 7; docs/references.md, Eq. G1):
``R = (3 m / (4 pi rho A_r))^(1/3)``, ``H = A_r R``
(:func:`solver.impact.geometry.block_size`).

* Shape matrix: the block is ``{x : (x - c)^T M^-1 (x - c) <= 1}`` with
  ``M = R^2 1 + (H^2 - R^2) a a^T``; its support point in the unit direction d is
  ``c + M d / sqrt(d^T M d)`` and its support distance ``sqrt(d^T M d)`` (for d at angle alpha to
  a this is ``r_y(alpha) = sqrt(H^2 cos^2 alpha + R^2 sin^2 alpha)``, Eq. 16 of that paper).
* Inertia tensor: ``I = I_perp (1 - a a^T) + I_axial a a^T`` with ``I_perp = m (H^2 + R^2)/5``
  and ``I_axial = 2 m R^2 / 5`` (solid spheroid).
* Torque-free motion of an axisymmetric body (Landau & Lifshitz, Mechanics, Sect. 33): the
  angular momentum L is constant and the symmetry axis precesses about it at the rate
  ``|L| / I_perp``: ``a(t) = Rot(L/|L|, |L| t / I_perp) a(0)``; the angular velocity is
  ``omega = L / I_perp + (1/I_axial - 1/I_perp) (L . a) a``. Exact, no time stepping.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from solver.impact import geometry
from solver.rotation import rotate_about_axis


@dataclass(frozen=True)
class Shape:
    """Mass, semi-axes and principal inertias of a block."""

    mass: float
    semi_h: float
    semi_r: float

    @classmethod
    def from_block(cls, mass: float, density: float, aspect_ratio: float) -> "Shape":
        radius, semi_h = geometry.block_size(mass, density, aspect_ratio)
        return cls(float(mass), float(semi_h), float(radius))

    @property
    def inertia_perp(self) -> float:
        return float(geometry.inertia(self.mass, self.semi_h, self.semi_r))

    @property
    def inertia_axial(self) -> float:
        return 0.4 * self.mass * self.semi_r ** 2

    @property
    def frontal_area(self) -> float:
        """Cross-section of the sphere of equal volume, ``pi (R^2 H)^(2/3)``."""
        return math.pi * (self.semi_r ** 2 * self.semi_h) ** (2.0 / 3.0)

    def matrix(self, axis: np.ndarray) -> np.ndarray:
        """``M = R^2 1 + (H^2 - R^2) a a^T``."""
        return (self.semi_r ** 2 * np.eye(3)
                + (self.semi_h ** 2 - self.semi_r ** 2) * np.outer(axis, axis))

    def support(self, axis: np.ndarray, direction: np.ndarray) -> np.ndarray:
        """Offset from the centre of the block's farthest point along unit ``direction``."""
        md = self.matrix(axis) @ direction
        return md / math.sqrt(float(direction @ md))

    def inertia(self, axis: np.ndarray) -> np.ndarray:
        aa = np.outer(axis, axis)
        return self.inertia_perp * (np.eye(3) - aa) + self.inertia_axial * aa

    def inverse_inertia(self, axis: np.ndarray) -> np.ndarray:
        aa = np.outer(axis, axis)
        return (np.eye(3) - aa) / self.inertia_perp + aa / self.inertia_axial

    def kinetic_energy(self, velocity: np.ndarray, omega: np.ndarray,
                       axis: np.ndarray) -> float:
        return 0.5 * self.mass * float(velocity @ velocity) + 0.5 * float(
            omega @ self.inertia(axis) @ omega)


def unit(vector: np.ndarray) -> np.ndarray:
    return vector / np.linalg.norm(vector)


class FreeRotation:
    """Torque-free rotation of the block from axis ``a0`` and angular velocity ``omega0``."""

    def __init__(self, shape: Shape, axis: np.ndarray, omega: np.ndarray):
        self.shape = shape
        self.axis0 = axis
        self.momentum = shape.inertia(axis) @ omega
        size = float(np.linalg.norm(self.momentum))
        self.rate = size / shape.inertia_perp
        self.direction = self.momentum / size if size > 0.0 else np.zeros(3)
        self.spin_speed = float(np.linalg.norm(omega))

    def at(self, tau: float) -> tuple[np.ndarray, np.ndarray]:
        """Axis and angular velocity ``tau`` seconds later."""
        axis = (rotate_about_axis(self.axis0, self.direction, self.rate * tau)
                if self.rate > 0.0 else self.axis0)
        s = self.shape
        omega = (self.momentum / s.inertia_perp
                 + (1.0 / s.inertia_axial - 1.0 / s.inertia_perp)
                 * float(self.momentum @ axis) * axis)
        return axis, omega
