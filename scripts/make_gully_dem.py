"""Generate the synthetic gully DEM of cases/gully_rockfall.toml.

A 30 deg planar slope running down towards +x, with a smooth toe onto a flat runout zone, cut
by a gully along y = 0::

    z(x, y) = tan(30 deg) L log(1 + exp((X_TOE - x) / L)) - D exp(-(y / W)^2)

(L = 15 m rounds the toe at X_TOE = 110 m; the gully is D = 6 m deep with a half-width
W = 14 m). 300 x 120 m on a 2 m grid, x in [0, 300], y in [-60, 60].

Run: ``python scripts/make_gully_dem.py`` (writes meshes/terrain/gully_dem.asc).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from solver.pointmass.terrain import Grid2D, write_asc  # noqa: E402

SPACING = 2.0
X_TOE, TOE_LENGTH = 110.0, 15.0
DEPTH, HALF_WIDTH = 6.0, 14.0
SLOPE = math.tan(math.radians(30.0))


def elevation(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    toe = TOE_LENGTH * np.logaddexp(0.0, (X_TOE - x) / TOE_LENGTH)
    return SLOPE * toe - DEPTH * np.exp(-(y / HALF_WIDTH) ** 2)


def main() -> None:
    xs = np.arange(0.0, 300.0 + 0.5 * SPACING, SPACING)
    ys = np.arange(-60.0, 60.0 + 0.5 * SPACING, SPACING)
    gx, gy = np.meshgrid(xs, ys)
    path = ROOT / "meshes" / "terrain" / "gully_dem.asc"
    write_asc(path, Grid2D(xs, ys, elevation(gx, gy)))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
