"""Explicit fourth-order Runge-Kutta steps (Gallotti et al. 2020, section 2), fixed or adaptive.

The adaptive variant uses step doubling: one step of h and two of h/2 give the estimate
err = |y_half - y_full| / 15 of the local error of the two half steps (RK4 is fourth order),
which are kept; the step is accepted when max(err / (atol + rtol |y|)) <= 1 and the next step is
h * min(2, max(0.2, 0.9 * ratio^(-1/5))).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

Rhs = Callable[[np.ndarray], np.ndarray]


def rk4_step(rhs: Rhs, y: np.ndarray, h: float) -> np.ndarray:
    """One classical RK4 step of the autonomous system y' = rhs(y)."""
    k1 = rhs(y)
    k2 = rhs(y + 0.5 * h * k1)
    k3 = rhs(y + 0.5 * h * k2)
    k4 = rhs(y + h * k3)
    return y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


class StepTooSmall(Exception):
    """The adaptive step fell below dt_min."""


def rk4_adaptive_step(rhs: Rhs, y: np.ndarray, h: float, rtol: float, atol: float,
                      h_min: float) -> tuple[np.ndarray, float, float]:
    """Advance by an accepted step; returns (y_new, step taken, suggested next step)."""
    while True:
        full = rk4_step(rhs, y, h)
        half = rk4_step(rhs, rk4_step(rhs, y, 0.5 * h), 0.5 * h)
        err = np.abs(half - full) / 15.0
        ratio = float(np.max(err / (atol + rtol * np.abs(half))))
        grow = 2.0 if ratio == 0.0 else min(2.0, max(0.2, 0.9 * ratio ** -0.2))
        if ratio <= 1.0:
            return half, h, h * grow
        h *= grow
        if h < h_min:
            raise StepTooSmall()
