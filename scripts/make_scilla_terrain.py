"""Generate the synthetic Scilla-like topo-bathymetry and slide thickness of cases/scilla.toml.

Not the real 1783 Scilla terrain (Gallotti et al. 2020, section 4 used SRTM + GEBCO + nautical
charts, which we do not ship): a smooth synthetic stand-in of the same size and character, 4.0 x 4.5
km on a 50 m grid, x east, y north, sea level z = 0 at y = Y_SHORE. Along y the downhill gradient is

    G(d) = G_far + (G_main(d) - G_far) E(d),   d = y - Y_SHORE,
    G_main(d) = G_up + (G_slope - G_up) sigma((d - D_TOP) / 50 m),
    E(d) = (1 - tanh((d - 500 m) / 350 m)) / 2,

i.e. a 6 deg upland, a 33 deg coastal slope from D_TOP to the shore that keeps about 31 deg where
it enters the sea and flattens offshore to 0.5 deg beyond ~1.5 km; z(d) = -int_0^d G. Across
the slope a shallow valley, VALLEY_DEPTH (1 - exp(-((x - 2000 m) / 900 m)^2)), channels the slide.

The slide thickness is a smooth lens over the footprint polygon FOOTPRINT (area 1.4 km^2);
cases/scilla.toml rescales it to the 6.4e6 m^3 of Gallotti et al. 2020.

Run: ``python scripts/make_scilla_terrain.py`` (writes meshes/terrain/scilla_dem.asc and
meshes/terrain/scilla_thickness.asc and prints the footprint vertices).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from solver.pointmass.terrain import Grid2D, write_asc  # noqa: E402

SPACING = 50.0
WIDTH, LENGTH = 4000.0, 4500.0
Y_SHORE = 1700.0
D_TOP = -900.0
G_UP, G_SLOPE, G_FAR = (math.tan(math.radians(a)) for a in (6.0, 33.0, 0.5))
VALLEY_DEPTH = 60.0
AREA = 1.4e6
# footprint shape in (x, d = y - Y_SHORE), scaled below to AREA about its centroid
SHAPE = [(1250.0, -880.0), (2700.0, -860.0), (2950.0, -600.0), (2850.0, -120.0),
         (2500.0, -30.0), (1450.0, -40.0), (1100.0, -300.0), (1050.0, -650.0)]


def gradient(d: np.ndarray) -> np.ndarray:
    sigma = 1.0 / (1.0 + np.exp(-(d - D_TOP) / 50.0))
    main = G_UP + (G_SLOPE - G_UP) * sigma
    decay = 0.5 * (1.0 - np.tanh((d - 500.0) / 350.0))
    return G_FAR + (main - G_FAR) * decay


def profile(d: np.ndarray) -> np.ndarray:
    """z(d) = -int_0^d G, by the trapezoid rule on a 0.5 m grid."""
    fine = np.arange(-Y_SHORE - 10.0, LENGTH - Y_SHORE + 10.0, 0.5)
    g = gradient(fine)
    z = -np.concatenate([[0.0], np.cumsum(0.5 * (g[1:] + g[:-1]) * np.diff(fine))])
    z -= np.interp(0.0, fine, z)
    return np.interp(d, fine, z)


def polygon_area(p: np.ndarray) -> float:
    x, y = p[:, 0], p[:, 1]
    return 0.5 * abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))


def footprint() -> np.ndarray:
    p = np.array(SHAPE)
    p[:, 1] += Y_SHORE
    c = p.mean(axis=0)
    return c + (p - c) * math.sqrt(AREA / polygon_area(p))


def main() -> None:
    xs = np.arange(0.0, WIDTH + 0.5 * SPACING, SPACING)
    ys = np.arange(0.0, LENGTH + 0.5 * SPACING, SPACING)
    X, Y = np.meshgrid(xs, ys)
    z = profile(Y - Y_SHORE) + VALLEY_DEPTH * (1.0 - np.exp(-((X - 2000.0) / 900.0) ** 2))
    out = ROOT / "meshes" / "terrain"
    out.mkdir(parents=True, exist_ok=True)
    write_asc(out / "scilla_dem.asc", Grid2D(xs, ys, z), fmt="%.3f")
    poly = footprint()
    c = poly.mean(axis=0)
    half = (poly.max(axis=0) - poly.min(axis=0)) / 2.0
    lens = 1.0 - ((X - c[0]) / half[0]) ** 2 - ((Y - c[1]) / half[1]) ** 2
    thickness = 12.0 * np.sqrt(np.clip(lens, 0.0, None)) + 1.0
    write_asc(out / "scilla_thickness.asc", Grid2D(xs, ys, thickness), fmt="%.3f")
    print("footprint = [" + ", ".join(f"[{x:.1f}, {y:.1f}]" for x, y in poly) + "]")
    print(f"footprint area {polygon_area(poly):.6g} m2; z range {z.min():.1f} .. {z.max():.1f} m")


if __name__ == "__main__":
    main()
