"""Rigid rotation of vectors about an axis (Rodrigues' formula)."""

from __future__ import annotations

import math

import numpy as np


def rotate_about_axis(v: np.ndarray, unit_axis: np.ndarray, angle: float) -> np.ndarray:
    """v (..., 3) turned by ``angle`` [rad] about the unit vector ``unit_axis`` (right hand):
    v cos(a) + (k x v) sin(a) + k (k . v) (1 - cos(a))."""
    v = np.asarray(v, dtype=float)
    k = np.asarray(unit_axis, dtype=float)
    c = math.cos(angle)
    return v * c + np.cross(k, v) * math.sin(angle) + k * (v @ k)[..., None] * (1.0 - c)
