"""ParaView fidelity, the self-documenting CLI, GeoTIFF terrain and off-screen pictures.

Runs go in-process through ``solver.cli.main`` on tiny cases; files are read back with VTK's
own readers (vtkXMLPUnstructuredGridReader) or pyvista.
"""

from __future__ import annotations

import json
import sys
import tomllib

import numpy as np
import pytest
import pyvista as pv
from mpi4py import MPI
from vtkmodules.vtkFiltersTensor import vtkTensorPrincipalInvariants
from vtkmodules.vtkIOXML import vtkXMLPUnstructuredGridReader
from vtkmodules.vtkCommonCore import vtkLogger

from conftest import CASES, ROOT
from solver.case import from_dict, load_case, plain_data, resolved_data
from solver.cli import main
from solver.io.table import read_columns
from solver.io.toml import dumps
from solver.io.vtk import code_tables
from solver.modules import MODULES, spec_for

vtkLogger.SetStderrVerbosity(vtkLogger.VERBOSITY_ERROR)

SHEAR_RATE = 0.01       # 1/s: top face velocity over the height
SHEAR_TIME = 0.01       # s
G_SHEAR = 4e9           # Pa: E = 1e10, nu = 0.25
SHEAR_CASE = f"""
module = "cdem"
name = "shear"
gravity = [0.0, 0.0, 0.0]

[mesh]
boxes = [{{n = [1, 1, 1], size = [1.0, 1.0, 1.0], group = "rock"}}]

[[materials]]
density = 2600.0
youngs_modulus = 1e10
poisson_ratio = 0.25

[[boundaries]]
box = [-1.0, 2.0, -1.0, 2.0, -0.1, 0.1]

[[boundaries]]
box = [-1.0, 2.0, -1.0, 2.0, 0.9, 1.1]
velocity = [{SHEAR_RATE}, 0.0, 0.0]

[[stages]]
name = "shear"
duration = {SHEAR_TIME}
"""


def _pvtu(folder, series):
    return sorted((folder / series).glob("*.pvtu"))


def _shear_strain(out):
    """gamma = (top velocity / height) x the simulated time (the last step may overshoot)."""
    return SHEAR_RATE * json.loads((out / "summary.json").read_text())["results"]["time"]


def _vtk_read(path):
    reader = vtkXMLPUnstructuredGridReader()
    reader.SetFileName(str(path))
    reader.Update()
    return reader.GetOutput()


@pytest.fixture(scope="module")
def shear_run(tmp_path_factory):
    """One element, every node held: bottom fixed, top moved along x (simple shear)."""
    folder = tmp_path_factory.mktemp("shear")
    case = folder / "shear.toml"
    case.write_text(SHEAR_CASE)
    assert main(["run", str(case), "--out", str(folder / "out"), "--quiet"]) == 0
    return folder / "out"


def test_simple_shear_reads_back_with_vtk_principal_stresses(shear_run):
    """sigma_xz = G gamma only: VTK's principal-invariants filter must see the eigenvalues
    +-tau with the largest along (1, 0, 1)/sqrt(2) (with Voigt order on disk it saw
    sigma_yz, direction (0, 1, 1)/sqrt(2))."""
    grid = _vtk_read(_pvtu(shear_run, "shear")[-1])
    stress = grid.GetCellData().GetArray("stress")
    assert [stress.GetComponentName(i) for i in range(6)] == ["XX", "YY", "ZZ", "XY", "YZ",
                                                              "XZ"]
    assert [grid.GetCellData().GetArray("velocity").GetComponentName(i)
            for i in range(3)] == ["X", "Y", "Z"]
    filt = vtkTensorPrincipalInvariants()
    filt.SetInputData(grid)
    filt.Update()
    out = filt.GetOutput().GetCellData()
    tau = G_SHEAR * _shear_strain(shear_run)
    values = sorted(out.GetArray(f"stress - Sigma {i}").GetValue(0) for i in (1, 2, 3))
    np.testing.assert_allclose(values, [-tau, 0.0, tau], atol=1e-3 * tau)
    largest = max((1, 2, 3), key=lambda i: out.GetArray(f"stress - Sigma {i}").GetValue(0))
    direction = np.array(out.GetArray(f"stress - Sigma {largest} (Vector)").GetTuple3(0))
    # finite-strain terms (gamma = 1e-4) tilt it by O(gamma); the mislabelled axis is 0.7 off
    np.testing.assert_allclose(np.abs(direction), [2 ** -0.5, 0.0, 2 ** -0.5], atol=1e-3)


def test_field_data_tables_and_no_double_warp(shear_run):
    blocks = pv.read(_pvtu(shear_run, "shear")[-1])
    assert code_tables(blocks.field_data.keys()) == {"group_names": {0: "rock"}}
    assert "displacement" in blocks.cell_data and "displacement" not in blocks.point_data
    assert [k for k in blocks.point_data if blocks.point_data[k].ndim == 2] == ["velocity"]
    np.testing.assert_allclose(blocks.point_data["displacement_magnitude"].max(),
                               _shear_strain(shear_run), rtol=1e-9)
    assert not (shear_run / "shear_interfaces.pvd").exists()       # no glued faces
    assert not (shear_run / "shear_interfaces").exists()


def test_describe_lists_list_tables_with_units_and_choices(capsys):
    assert main(["describe", "cdem"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("stages[].tilt_rate [deg/s] = 0.0") for line in lines)
    assert any(line.startswith('stages[].kind [-] = "dynamic" (one of "relax", "dynamic")')
               for line in lines)
    for table in ("materials[]", "boundaries[]", "mesh.boxes[]", "interface.pairs[]"):
        assert any(line.startswith(f"{table}.") for line in lines), table
    assert main(["describe"]) == 0
    listed = capsys.readouterr().out
    assert all(m in listed for m in ("cdem", "pointmass", "impact", "contact_laws"))
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.startswith("solver ")


def test_cases_lists_every_shipped_case(capsys):
    assert main(["cases"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(list(CASES.glob("*.toml")))
    assert any(line.startswith("cases/scilla.toml") and "pointmass" in line for line in lines)


@pytest.mark.parametrize("path", sorted(CASES.glob("*.toml")), ids=lambda p: p.stem)
def test_resolved_case_loads_back_to_the_same_case(path, tmp_path):
    case = load_case(path)
    text = dumps(resolved_data(case))
    data = tomllib.loads(text)
    assert (data.pop("module"), data.pop("name")) == (case.module, case.name)
    again = from_dict(spec_for(case.module, "test").config, data, "resolved", "", tmp_path)
    assert plain_data(again) == plain_data(case.config)


def test_init_template_runs_and_resolved_case_reproduces_summary(tmp_path, capsys):
    """The cdem template, cut short so its relaxation stops unconverged: a warning, exit 0,
    ``"converged": false``; rerunning its case.resolved.toml gives the same results."""
    case = tmp_path / "case.toml"
    assert main(["init", "cdem", "--out", str(case)]) == 0
    assert main(["init", "cdem", "--out", str(case)]) == 2          # never overwrites
    assert case.read_text() == spec_for("cdem", "test").template.read_text()
    args = ["--quiet", "--set", "stages[0].max_steps=20", "--set", "stages[1].duration=0.01"]
    capsys.readouterr()
    assert main(["run", str(case), "--out", str(tmp_path / "a"), *args]) == 0
    err = capsys.readouterr().err
    assert "warning:" in err and "stages[0] (gravity)" in err and "not converged" in err
    first = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert first["converged"] is False and first["results"]["stages"][0]["converged"] is False
    assert first["solver_version"] and first["started"].endswith("+00:00")
    assert first["units"]["max_displacement"] == "m" and first["units"]["energy"] == "J"
    assert set(first["results"]) <= set(first["units"])
    resolved = tmp_path / "a" / "case.resolved.toml"
    assert main(["run", str(resolved), "--out", str(tmp_path / "b"), "--quiet"]) == 0
    second = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert second["results"] == first["results"] and second["steps"] == first["steps"]


def test_template_of_every_module_loads(tmp_path):
    for module in MODULES:
        path = tmp_path / f"{module}.toml"
        path.write_text(spec_for(module, "test").template.read_text())
        assert load_case(path).module == module


# ---------------------------------------------------------------- GeoTIFF terrain

SCILLA_ONE = ["--set", "sweep.keys=[]", "--set", "sweep.runs=[]", "--set", "time.t_end=6.0",
              "--set", "output.every=2.0"]


def _write_geotiff(path, grid, missing=None):
    """``grid`` as a north-up float64 GeoTIFF; nodes where ``missing`` get the nodata value."""
    rasterio = pytest.importorskip("rasterio")
    from rasterio.transform import Affine
    dx, dy = grid.spacing
    nodata = -9999.0
    z = np.where(missing, nodata, grid.z) if missing is not None else grid.z
    z = z[::-1].astype(np.float64)                     # north row first
    with rasterio.open(path, "w", driver="GTiff", width=z.shape[1], height=z.shape[0], count=1,
                       dtype="float64", crs="EPSG:32633", nodata=nodata,
                       transform=Affine(dx, 0.0, grid.xs[0] - dx / 2,
                                        0.0, -dy, grid.ys[-1] + dy / 2)) as dst:
        dst.write(z, 1)


@pytest.fixture(scope="module")
def scilla_runs(tmp_path_factory):
    """The Scilla-like slide (one run) on its ESRI ASCII rasters and on GeoTIFF copies of them
    (UTM 33N; the thickness lens with nodata where it is zero)."""
    from solver.pointmass.terrain import read_grid
    folder = tmp_path_factory.mktemp("scilla")
    terrain = ROOT / "meshes" / "terrain"
    _write_geotiff(folder / "dem.tif", read_grid(str(terrain / "scilla_dem.asc")))
    thickness = read_grid(str(terrain / "scilla_thickness.asc"))
    _write_geotiff(folder / "thickness.tif", thickness, missing=thickness.z == 0.0)
    runs = {}
    for kind, extra in (("asc", []), ("tif", ["--set", f'surface.path="{folder / "dem.tif"}"',
                                              "--set", "grid.thickness_path="
                                              f'"{folder / "thickness.tif"}"'])):
        out = folder / kind
        assert main(["run", str(CASES / "scilla.toml"), "--out", str(out), "--quiet",
                     *SCILLA_ONE, *extra]) == 0
        runs[kind] = out
    return runs


def test_geotiff_case_runs_like_the_ascii_grid(scilla_runs):
    asc, tif = (json.loads((scilla_runs[k] / "summary.json").read_text())["results"]
                for k in ("asc", "tif"))
    assert tif["surface_crs"] == "EPSG:32633" and "surface_crs" not in asc
    np.testing.assert_allclose(tif["final_com"], asc["final_com"], rtol=1e-12)
    assert tif["peak_speed"] == pytest.approx(asc["peak_speed"], rel=1e-12)
    terrain = pv.read(_pvtu(scilla_runs["tif"], "scilla_terrain")[0])
    assert code_tables(terrain.field_data.keys()) == {"crs": {0: "EPSG:32633"}}
    assert (scilla_runs["tif"] / "scilla_sea.pvd").exists()
    history = read_columns(scilla_runs["tif"] / "com.csv")
    assert (scilla_runs["tif"] / "com.csv").read_text().startswith("time [s],com_x [m]")
    assert history["time"][-1] == pytest.approx(6.0)


@pytest.mark.parametrize("dem, message", [
    ("missing_rasterio", "needs rasterio"),
    ("nodata", "nodes have no data"),
])
def test_geotiff_input_errors_are_one_line_exit_2(dem, message, tmp_path, monkeypatch, capsys):
    from solver.pointmass.terrain import read_grid
    path = tmp_path / "dem.tif"
    if dem == "missing_rasterio":
        path.write_bytes(b"")
        monkeypatch.setitem(sys.modules, "rasterio", None)
    else:
        grid = read_grid(str(ROOT / "meshes" / "terrain" / "scilla_dem.asc"))
        missing = np.zeros(grid.z.shape, dtype=bool)
        missing[3, 4] = True
        _write_geotiff(path, grid, missing)
    rc = main(["run", str(CASES / "scilla.toml"), "--out", str(tmp_path / "out"), "--quiet",
               *SCILLA_ONE, "--set", f'surface.path="{path}"'])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1
    assert err[0].startswith("error: ") and "surface.path" in err[0] and message in err[0]
    assert not (tmp_path / "out").exists()


def test_rockfall_reads_the_geotiff_that_describe_lists(tmp_path, capsys):
    """``describe rockfall`` names GeoTIFF for the raster terrain, and one block on a GeoTIFF
    copy of the gully DEM ends where it ends on the ESRI ASCII grid."""
    from solver.pointmass.terrain import read_grid
    assert main(["describe", "rockfall"]) == 0
    path_line = next(line for line in capsys.readouterr().out.splitlines()
                     if line.startswith("terrain.path "))
    assert all(kind in path_line for kind in ("GeoTIFF (.tif", ".asc", ".npy"))
    _write_geotiff(tmp_path / "dem.tif",
                   read_grid(str(ROOT / "meshes" / "terrain" / "gully_dem.asc")))
    one_block = ["--set", "ensemble.vary.aspect_ratio.values=[2.0]",
                 "--set", "ensemble.vary.y.values=[15.0]",
                 "--set", "ensemble.vary.axis_yaw.values=[0.0]", "--set", "output.vtk=false"]
    results = {}
    for kind, extra in (("asc", []), ("tif", ["--set",
                                              f'terrain.path="{tmp_path / "dem.tif"}"'])):
        out = tmp_path / kind
        assert main(["run", str(CASES / "gully_rockfall.toml"), "--out", str(out), "--quiet",
                     *one_block, *extra]) == 0
        results[kind] = json.loads((out / "summary.json").read_text())["results"]
    assert results["tif"]["x_stop_max"] == pytest.approx(results["asc"]["x_stop_max"],
                                                         rel=1e-9)
    assert results["tif"]["n_impacts"] == results["asc"]["n_impacts"]


# ---------------------------------------------------------------- pictures


def _assert_not_blank(png):
    import imageio.v3 as iio
    image = iio.imread(png)[..., :3].astype(float)
    painted = np.any(image < 245, axis=-1).mean()          # the background is white
    assert image.std() > 10.0 and painted > 0.05, (image.std(), painted)


def test_render_cdem_and_pointmass_runs(shear_run, scilla_runs, capsys):
    assert main(["render", str(shear_run), "--field", "stress", "--movie"]) == 0
    _assert_not_blank(shear_run / "render" / "shear_stress_00001.png")
    assert next((shear_run / "render").glob("shear_stress.*")).stat().st_size > 1000
    assert main(["render", str(scilla_runs["tif"]), "--frame", "1"]) == 0
    _assert_not_blank(scilla_runs["tif"] / "render" / "scilla_velocity_00001.png")
    assert main(["render", str(shear_run), "--field", "nope"]) == 2
    assert "no array 'nope'" in capsys.readouterr().err


def test_render_without_pyvista_is_one_line_exit_2(shear_run, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pyvista", None)
    assert main(["render", str(shear_run)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "needs pyvista" in err[0]


@pytest.mark.mpi(min_size=2)
def test_two_ranks_write_one_table_and_joined_pieces(mpi_tmp_path):
    """Two glued elements of two groups on two ranks: the interface face lives on one rank
    (the other writes an empty piece), the group table names both groups."""
    case = mpi_tmp_path / "pair.toml"
    if MPI.COMM_WORLD.rank == 0:
        case.write_text(SHEAR_CASE.replace('group = "rock"', 'layer_groups = ["base", "rock"]')
                        .replace("n = [1, 1, 1], size = [1.0, 1.0, 1.0]",
                                 "n = [1, 1, 2], size = [1.0, 1.0, 2.0]")
                        .replace("0.9, 1.1", "1.9, 2.1"))
    MPI.COMM_WORLD.Barrier()
    assert main(["run", str(case), "--out", str(mpi_tmp_path / "out"), "--quiet"]) == 0
    if MPI.COMM_WORLD.rank == 0:
        out = mpi_tmp_path / "out"
        blocks = pv.read(_pvtu(out, "shear")[-1])
        assert blocks.n_cells == 2 and sorted(set(blocks.cell_data["rank"])) == [0, 1]
        assert code_tables(blocks.field_data.keys()) == {"group_names": {0: "base", 1: "rock"}}
        faces = pv.read(_pvtu(out, "shear_interfaces")[-1])
        assert faces.n_cells == 1
        assert code_tables(faces.field_data.keys())["spring_states"][0] == "intact"
