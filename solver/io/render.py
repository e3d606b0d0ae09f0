"""``solver render OUT``: PNG snapshots (and a movie) of a run's VTK output, off screen.

For a cluster user without a display: the run's main series ``<case>.pvd`` (blocks, point
masses, the impacting ellipsoid) coloured by a field with a scalar bar and its unit, drawn
with the run's static surfaces (``<case>_terrain``, ``<case>_sea``, ``<case>_ground``) and,
for CDEM runs, without the interface and contact series. Needs the ``render`` extra
(pyvista, vtk; imageio for movies): ``pip install 'solver[render]'``. Writes
``OUT/render/<case>_<field>_<frame>.png`` and, with ``movie``, ``<case>_<field>.mp4`` (when
imageio-ffmpeg is installed) or ``.gif``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from solver.case import check_name, load_case
from solver.errors import InputError
from solver.io.table import plot_title
from solver.io.vtk import UNITS
from solver.sweep import points

CONTEXT = {"terrain": dict(color="tan", opacity=1.0), "sea": dict(color="steelblue", opacity=0.35),
           "ground": dict(color="burlywood", opacity=0.8)}
PREFERRED = ("displacement", "velocity", "depth_below_ground")
WINDOW = (1280, 860)
MOVIE_WINDOW = (800, 540)   # software rendering: about 0.3 s per 1280 x 860 frame
SCALAR_BAR = dict(vertical=True, position_x=0.86, position_y=0.2, height=0.6, width=0.06,
                  title_font_size=16, label_font_size=14, fmt="%.3g")


def _pyvista():
    try:
        from vtkmodules.vtkCommonCore import vtkLogger

        import pyvista
    except ImportError:
        raise InputError("solver render", "needs pyvista (pip install 'solver[render]')") from None
    vtkLogger.SetStderrVerbosity(vtkLogger.VERBOSITY_ERROR)
    pyvista.OFF_SCREEN = True
    return pyvista


def _run_info(out: Path) -> tuple[str, str, str]:
    """Case name, module, and the swept inputs of the run shown (from case.resolved.toml)."""
    summary = out / "summary.json"
    if not summary.is_file():
        raise InputError(str(out), "not a run folder (no summary.json)")
    try:
        info = json.loads(summary.read_text())
        check_name(info["case"], str(summary))
        module = str(info["module"])
    except (ValueError, TypeError, KeyError):
        raise InputError(str(summary), "not the summary of a run (no case and module "
                                       "names)") from None
    swept = ""
    resolved = out / "case.resolved.toml"
    if resolved.is_file():
        config = load_case(resolved).config
        runs = points(config, str(resolved), out)
        if len(runs) > 1:
            shown = runs[getattr(config.output, "vtk_run", 0)]
            swept = ", ".join(f"{k.split('.')[-1]} = {v}" for k, v in shown.values.items())
    return info["case"], module, swept


def _frame_index(frame: str, count: int, where: str) -> int:
    if frame == "last":
        return count - 1
    try:
        k = int(frame)
    except ValueError:
        raise InputError(where, f"--frame: expected an integer or 'last', got {frame!r}") from None
    if not -count <= k < count:
        raise InputError(where, f"--frame: {k} is out of range (the series has {count} frames)")
    return k % count


def _pick_field(mesh, field: str | None, where: str) -> tuple[str, str]:
    """``(name, "point" | "cell")`` of the field to colour by."""
    names = {**{k: "cell" for k in mesh.cell_data}, **{k: "point" for k in mesh.point_data}}
    if field is None:
        field = next((f for f in PREFERRED if f in names), next(iter(names), None))
        if field is None:
            raise InputError(where, "the series has no arrays to colour by")
    if field not in names:
        raise InputError(where, f"--field: no array {field!r} (arrays: {', '.join(names)})")
    return field, names[field]


def _scalars(mesh, field: str, where: str) -> np.ndarray:
    """The field itself, a vector's magnitude, or a symmetric tensor's von Mises value
    sqrt(((s1 - s2)^2 + (s2 - s3)^2 + (s3 - s1)^2) / 2 + 3 (s12^2 + s23^2 + s13^2))."""
    data = np.asarray(mesh.point_data[field] if where == "point" else mesh.cell_data[field],
                      dtype=float)
    if data.ndim == 1:
        return data
    if data.shape[1] == 6:
        xx, yy, zz, xy, yz, xz = data.T
        return np.sqrt(0.5 * ((xx - yy) ** 2 + (yy - zz) ** 2 + (zz - xx) ** 2)
                       + 3.0 * (xy ** 2 + yz ** 2 + xz ** 2))
    return np.linalg.norm(data, axis=1)


def render(out: Path, field: str | None = None, frame: str = "last",
           movie: bool = False) -> list[Path]:
    """Render the run in ``out``; returns the files written."""
    pv = _pyvista()
    case, module, swept = _run_info(out)
    series = out / f"{case}.pvd"
    if not series.is_file():
        raise InputError(str(out), f"no VTK series {series.name} (output.vtk off, or a module "
                                   "without VTK output)")
    reader = pv.get_reader(str(series))
    times = list(reader.time_values)
    if not times:
        raise InputError(str(series), "the series has no frames")
    k = _frame_index(frame, len(times), str(out))
    reader.set_active_time_value(times[k])
    mesh = reader.read()[0]
    name, where = _pick_field(mesh, field, str(out))
    context = {kind: pv.read(next((out / f"{case}_{kind}").glob("*.pvtu")))
               for kind in CONTEXT if (out / f"{case}_{kind}.pvd").is_file()}
    target = out / "render"
    target.mkdir(exist_ok=True)
    label = f"{name}{_reduction(mesh, name, where)} [{UNITS.get(name, '?')}]"
    plotter = pv.Plotter(off_screen=True, window_size=WINDOW)
    clim = _range([_scalars(mesh, name, where)])
    _draw(plotter, mesh, name, where, clim, label, module, context)
    _title(plotter, case, swept, name, times[k])
    png = target / f"{case}_{name}_{k:05d}.png"
    plotter.screenshot(str(png))
    written = [png]
    if movie:
        written.append(_movie(pv, reader, times, target, case, swept, module, name, where,
                              label, context))
    plotter.close()
    return written


def _reduction(mesh, name: str, where: str) -> str:
    """How _scalars turns the array into one value per point or cell, for the bar title."""
    data = mesh.point_data[name] if where == "point" else mesh.cell_data[name]
    if data.ndim == 1:
        return ""
    return " von Mises" if data.shape[1] == 6 else " magnitude"


def _range(values: list[np.ndarray]) -> tuple[float, float]:
    finite = np.concatenate([v[np.isfinite(v)] for v in values] + [np.zeros(0)])
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    pad = 0.01 * max(abs(lo), abs(hi)) or 0.5
    return (lo, hi) if hi - lo > 1e-6 * pad else (lo - pad, hi + pad)


def _draw(plotter, mesh, name, where, clim, label, module, context, view=True) -> None:
    for kind, surface in context.items():
        plotter.add_mesh(surface, show_scalar_bar=False, smooth_shading=kind == "terrain",
                         render=False, **CONTEXT[kind])
    style = {}
    if module == "pointmass":
        style = dict(render_points_as_spheres=True, point_size=14, line_width=3)
    scalars = _scalars(mesh, name, where)
    plotter.add_mesh(mesh, scalars=scalars, preference=where, clim=clim, cmap="viridis",
                     show_edges=module == "cdem", scalar_bar_args=SCALAR_BAR | {"title": label},
                     render=False, **style)
    if view:
        if module == "impact":
            plotter.view_xz(render=False)
            plotter.camera.elevation = 20.0
        else:
            plotter.view_isometric(render=False)
        plotter.add_axes()


def _title(plotter, case: str, swept: str, name: str, time: float) -> None:
    text = plot_title(case, {"run": swept} if swept else None)
    plotter.add_text(f"{text}\n{name} at t = {time:.4g} s", font_size=11, position="upper_edge",
                     render=False)


def _movie(pv, reader, times, target, case, swept, module, name, where, label,
           context) -> Path:
    try:
        import imageio  # noqa: F401
    except ImportError:
        raise InputError("solver render", "--movie needs imageio "
                                          "(pip install 'solver[render]')") from None
    frames = []
    for t in times:
        reader.set_active_time_value(t)
        frames.append(reader.read()[0])
    clim = _range([_scalars(m, name, where) for m in frames])
    try:
        import imageio_ffmpeg  # noqa: F401
        path = target / f"{case}_{name}.mp4"
    except ImportError:
        path = target / f"{case}_{name}.gif"
    plotter = pv.Plotter(off_screen=True, window_size=MOVIE_WINDOW)
    plotter.open_movie(str(path)) if path.suffix == ".mp4" else plotter.open_gif(str(path))
    for i, (t, mesh) in enumerate(zip(times, frames)):
        plotter.clear_actors()
        _draw(plotter, mesh, name, where, clim, label, module, context, view=i == 0)
        _title(plotter, case, swept, name, t)
        plotter.write_frame()
    plotter.close()
    return path
