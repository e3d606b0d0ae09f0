"""Ensemble statistics: distribution fits and envelopes along the slope. Arrays in, dicts out.

* Exponential fit of the jump heights (the shape Dattola et al. (2023) report for their
  Fig. 12): maximum likelihood, ``lambda = 1 / mean``.
* Normal fits of e_n and e_t (its Fig. 14): maximum likelihood mean and standard deviation.
* Each fit carries the Kolmogorov-Smirnov p-value against the fitted law (indicative only: the
  parameters come from the same data, which makes the test lenient).
* Envelopes at a station x_s: every block whose path crosses the plane ``x = x_s`` contributes
  its largest kinetic energy, speed and height of the centre above the ground over its
  crossings (linear interpolation between trajectory samples); the envelope is their mean and
  95th and 99th percentiles (numpy's linear percentile) over the blocks that reach x_s.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

X, HEIGHT, ENERGY = 1, 14, 15
VELOCITY = slice(7, 10)


def exponential_fit(values) -> dict:
    """``n``, ``mean``, ``lambda`` (1/mean) and ``ks_pvalue`` of positive samples."""
    v = np.asarray(values, float)
    if len(v) == 0 or not np.mean(v) > 0.0:
        return {"n": int(len(v)), "mean": None, "lambda": None, "ks_pvalue": None}
    mean = float(np.mean(v))
    return {"n": int(len(v)), "mean": mean, "lambda": 1.0 / mean,
            "ks_pvalue": float(stats.kstest(v, "expon", args=(0.0, mean)).pvalue)}


def normal_fit(values) -> dict:
    """``n``, ``mean``, ``std`` (maximum likelihood, ddof = 0) and ``ks_pvalue``."""
    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    if len(v) == 0:
        return {"n": 0, "mean": None, "std": None, "ks_pvalue": None}
    mean, std = float(np.mean(v)), float(np.std(v))
    p = float(stats.kstest(v, "norm", args=(mean, std)).pvalue) if std > 0.0 else None
    return {"n": int(len(v)), "mean": mean, "std": std, "ks_pvalue": p}


def envelope(values) -> dict:
    """``mean``, ``p95``, ``p99`` and ``max`` of a sample (None when empty)."""
    v = np.asarray(values, float)
    if len(v) == 0:
        return {"mean": None, "p95": None, "p99": None, "max": None}
    p95, p99 = np.percentile(v, [95.0, 99.0])
    return {"mean": float(np.mean(v)), "p95": float(p95), "p99": float(p99),
            "max": float(np.max(v))}


def crossing(samples: np.ndarray, x_s: float):
    """Largest (height, energy, speed) over the crossings of ``x = x_s`` by one trajectory, or
    None if it never gets there."""
    x = samples[:, X]
    side = x - x_s
    i = np.nonzero((side[:-1] * side[1:] <= 0.0) & (x[:-1] != x[1:]))[0]
    if len(i) == 0:
        return None
    f = (x_s - x[i]) / (x[i + 1] - x[i])
    speed = np.linalg.norm(samples[:, VELOCITY], axis=1)
    out = []
    for column in (samples[:, HEIGHT], samples[:, ENERGY], speed):
        out.append(float(np.max(column[i] + f * (column[i + 1] - column[i]))))
    return tuple(out)


def station_envelopes(trajectories: list[np.ndarray], stations) -> list[dict]:
    """Envelopes of passing height [m], kinetic energy [J] and speed [m/s] at each station."""
    rows = []
    for x_s in stations:
        hits = [c for c in (crossing(s, x_s) for s in trajectories) if c is not None]
        row = {"x": float(x_s), "reached": len(hits),
               "fraction": len(hits) / len(trajectories) if trajectories else 0.0}
        for k, name in enumerate(("height", "energy", "speed")):
            row.update({f"{name}_{key}": value
                        for key, value in envelope([h[k] for h in hits]).items()})
        rows.append(row)
    return rows
