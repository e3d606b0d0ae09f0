"""Rigid rotation of vectors about an axis (Rodrigues' formula) and the cross product it uses."""

from __future__ import annotations

import math

import numpy as np


def cross(a, b) -> np.ndarray:
    """``a x b`` of two 3-vectors, or row by row of (..., 3) arrays. Written out for two single
    vectors: numpy's cross costs ten times more there (the rockfall module calls it per
    sample)."""
    if np.ndim(a) == 1 and np.ndim(b) == 1:
        return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                         a[0] * b[1] - a[1] * b[0]])
    return np.cross(a, b)


def rotate_about_axis(v: np.ndarray, unit_axis: np.ndarray, angle: float) -> np.ndarray:
    """v (..., 3) turned by ``angle`` [rad] about the unit vector ``unit_axis`` (right hand):
    v cos(a) + (k x v) sin(a) + k (k . v) (1 - cos(a))."""
    v = np.asarray(v, dtype=float)
    k = np.asarray(unit_axis, dtype=float)
    c = math.cos(angle)
    return v * c + cross(k, v) * math.sin(angle) + k * (v @ k)[..., None] * (1.0 - c)
