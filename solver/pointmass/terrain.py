"""Terrain rasters (elevation models and thickness maps): GeoTIFF, ESRI ASCII grids and plain
.npy arrays.

A grid is returned as node coordinates ``xs`` (ascending, length nx), ``ys`` (ascending,
length ny), values ``z[iy, ix]`` and the coordinate reference system ``crs`` (``""`` when
the file has none).

* GeoTIFF (``.tif``, ``.tiff``; needs the optional ``rasterio``, ``pip install
  'solver[gis]'``): band 1 of a north-up raster (no rotation terms in the geotransform); the
  values sit at the pixel centres, GDAL's convention for both PixelIsArea and PixelIsPoint
  files. Pixels equal to the nodata value or masked are "no data". The CRS is kept as
  ``EPSG:nnnn`` when it has an EPSG code, else as WKT.
* ESRI ASCII (``.asc``): header ``ncols, nrows, xllcorner|xllcenter, yllcorner|yllcenter,
  cellsize [, nodata_value]``, then nrows rows of values, the first row being the northernmost.
  With ``*llcorner`` the values sit at cell centres ``xll + (i + 1/2) cellsize``.
* ``.npy``: a 2-D array ``z[iy, ix]`` whose node ``[0, 0]`` is at ``origin`` and whose rows
  advance by ``spacing[1]`` along +y and columns by ``spacing[0]`` along +x.

No-data nodes (NODATA, masked pixels, NaN) are an error in an elevation model (the surface
must be defined everywhere on it: fill or crop the raster first) and take the value ``fill``
in a thickness map (0 m: no slide material there).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from solver.errors import InputError


@dataclass
class Grid2D:
    """Values ``z[iy, ix]`` on nodes ``xs`` x ``ys``."""

    xs: np.ndarray
    ys: np.ndarray
    z: np.ndarray
    crs: str = ""

    @property
    def spacing(self) -> tuple[float, float]:
        return float(self.xs[1] - self.xs[0]), float(self.ys[1] - self.ys[0])


def read_grid(path: str, origin=(0.0, 0.0), spacing=(0.0, 0.0), where: str = "",
              fill: float | None = None) -> Grid2D:
    """Read a GeoTIFF, ``.asc`` or ``.npy`` grid; bad files raise InputError naming ``where``.
    No-data nodes are an error, or take the value ``fill`` when it is given."""
    p = Path(path)
    if not p.is_file():
        raise InputError(where, f"raster file not found: {path}")
    if p.suffix.lower() == ".npy":
        try:
            z = np.load(p, allow_pickle=False)
        except (ValueError, OSError) as exc:
            raise InputError(where, f"cannot read {path} ({exc})") from None
        if z.ndim != 2:
            raise InputError(where, f"{path}: expected a 2-D array, got shape {z.shape}")
        xs = origin[0] + spacing[0] * np.arange(z.shape[1])
        ys = origin[1] + spacing[1] * np.arange(z.shape[0])
        grid = Grid2D(xs, ys, np.asarray(z, dtype=float))
    elif p.suffix.lower() == ".asc":
        grid = _read_asc(p, where)
    elif p.suffix.lower() in (".tif", ".tiff"):
        grid = _read_geotiff(p, where)
    else:
        raise InputError(where, f"{path}: unknown raster format (use .tif, .asc or .npy)")
    if min(grid.z.shape) < 4:
        raise InputError(where, f"{path}: a raster needs at least 4 x 4 nodes, got "
                                f"{grid.z.shape[1]} x {grid.z.shape[0]}")
    missing = ~np.isfinite(grid.z)
    if missing.any() and fill is not None:
        grid.z[missing] = fill
    elif missing.any():
        iy, ix = np.nonzero(missing)
        raise InputError(where, f"{path}: {missing.sum()} nodes have no data (NaN or NODATA) in "
                                f"x {grid.xs[ix.min()]:.6g}..{grid.xs[ix.max()]:.6g}, "
                                f"y {grid.ys[iy.min()]:.6g}..{grid.ys[iy.max()]:.6g}; "
                                "fill them or crop the raster first")
    return grid


def _read_geotiff(p: Path, where: str) -> Grid2D:
    try:
        import rasterio
    except ImportError:
        raise InputError(where, f"{p}: reading GeoTIFF needs rasterio "
                                "(pip install 'solver[gis]')") from None
    try:
        with rasterio.open(p) as src:
            z = src.read(1, masked=True).astype(float).filled(np.nan)
            t = src.transform
            crs = "" if src.crs is None else src.crs.to_string()
    except rasterio.errors.RasterioError as exc:
        raise InputError(where, f"cannot read GeoTIFF {p} ({exc})") from None
    if t.b != 0.0 or t.d != 0.0:
        raise InputError(where, f"{p}: the raster is rotated or sheared; warp it north-up first")
    xs = t.c + t.a * (np.arange(z.shape[1]) + 0.5)
    ys = t.f + t.e * (np.arange(z.shape[0]) + 0.5)
    if t.a < 0.0:
        xs, z = xs[::-1], z[:, ::-1]
    if t.e < 0.0:
        ys, z = ys[::-1], z[::-1]
    return Grid2D(xs, ys, np.ascontiguousarray(z), crs)


def _read_asc(p: Path, where: str) -> Grid2D:
    header: dict[str, float] = {}
    try:
        with p.open() as fh:
            while len(header) < 6:
                pos = fh.tell()
                line = fh.readline()
                parts = line.split()
                if len(parts) != 2 or parts[0][0].isdigit() or parts[0][0] in "+-.":
                    fh.seek(pos)
                    break
                header[parts[0].lower()] = float(parts[1])
            data = np.loadtxt(fh, dtype=float, ndmin=2)
    except (ValueError, OSError, UnicodeDecodeError) as exc:
        raise InputError(where, f"cannot read ESRI ASCII grid {p} ({exc})") from None
    for key in ("ncols", "nrows", "cellsize"):
        if key not in header:
            raise InputError(where, f"{p}: ESRI ASCII header lacks {key}")
    if not all(math.isfinite(header[k]) and header[k] == round(header[k]) > 0
               for k in ("ncols", "nrows")):
        raise InputError(where, f"{p}: ncols and nrows must be positive integers")
    ncols, nrows, cs = int(header["ncols"]), int(header["nrows"]), header["cellsize"]
    if not (math.isfinite(cs) and cs > 0.0):
        raise InputError(where, f"{p}: cellsize must be a positive number, got {cs:g}")
    corners = [v for k, v in header.items() if k.startswith(("xll", "yll"))]
    if not all(map(math.isfinite, corners)):
        raise InputError(where, f"{p}: the xll/yll coordinates must be finite numbers")
    if data.shape != (nrows, ncols):
        raise InputError(where, f"{p}: header says {nrows} x {ncols} values, file has "
                                f"{data.shape[0]} x {data.shape[1]}")
    if "xllcenter" in header and "yllcenter" in header:
        x0, y0 = header["xllcenter"], header["yllcenter"]
    elif "xllcorner" in header and "yllcorner" in header:
        x0, y0 = header["xllcorner"] + 0.5 * cs, header["yllcorner"] + 0.5 * cs
    else:
        raise InputError(where, f"{p}: ESRI ASCII header needs xll/yll corner or center")
    z = data[::-1].copy()
    if "nodata_value" in header:
        z[z == header["nodata_value"]] = np.nan
    return Grid2D(x0 + cs * np.arange(ncols), y0 + cs * np.arange(nrows), z)


def write_asc(path: str | Path, grid: Grid2D, fmt: str = "%.4f") -> None:
    """Write ``grid`` (square cells) as an ESRI ASCII grid with node-centred coordinates."""
    dx, dy = grid.spacing
    if not np.isclose(dx, dy):
        raise ValueError("ESRI ASCII grids need square cells")
    with Path(path).open("w") as fh:
        fh.write(f"ncols {grid.z.shape[1]}\nnrows {grid.z.shape[0]}\n"
                 f"xllcenter {grid.xs[0]:.6f}\nyllcenter {grid.ys[0]:.6f}\n"
                 f"cellsize {dx:.6f}\nnodata_value -9999\n")
        np.savetxt(fh, grid.z[::-1], fmt=fmt)
