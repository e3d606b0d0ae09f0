"""Every VTK file of a short run of each module reads back in meshio, pyvista and VTK.

meshio reads ``.vtu`` pieces (it has no reader for ``.pvtu`` or ``.pvd``), VTK reads the
pieces and the ``.pvtu`` frames (``.pvd`` is ParaView's collection format, which VTK has no
reader for), pyvista reads all three. Each reader must give the same arrays with the same
names and component counts, the code tables named in the field data, and (VTK) the
components named X, Y, Z or XX, YY, ZZ, XY, YZ, XZ.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import meshio
import numpy as np
import pytest
import pyvista as pv
from vtkmodules.vtkCommonCore import vtkLogger
from vtkmodules.vtkIOXML import vtkXMLPUnstructuredGridReader, vtkXMLUnstructuredGridReader

from conftest import CASES, main_in_process, run_case
from solver.io.vtk import code_tables, component_names

vtkLogger.SetStderrVerbosity(vtkLogger.VERBOSITY_ERROR)

ROCK_POINTS = {"time": 1, "axis": 3, "velocity": 3, "omega": 3, "speed": 1, "phase": 1,
               "height": 1, "energy": 1, "block": 1, "semi_axes": 3}
SERIES = {
    "cdem": {
        "my_block": ({"displacement_magnitude": 1, "velocity": 3},
                     {"displacement": 3, "velocity": 3, "stress": 6, "group": 1, "block": 1,
                      "rank": 1},
                     {"group_names": {0: "base", 1: "block"}}),
        "my_block_interfaces": ({}, {"broken_springs": 1, "broken_tension": 1,
                                     "broken_shear": 1, "normal_traction": 1,
                                     "shear_traction": 1, "rank": 1},
                                {"spring_states": {0: "intact", 1: "broken in tension",
                                                   2: "broken in shear"}}),
        "my_block_contacts": ({"normal_force": 1, "tangential_force": 3, "state": 1,
                               "target_face": 1}, {},
                              {"contact_states": {0: "stick", 1: "slide", 2: "open"}}),
    },
    "pointmass": {
        "scilla": ({"velocity": 3, "mass": 1, "reaction": 1, "underwater": 1},
                   {"rb_force": 1, "ep_force": 1, "link_type": 1},
                   {"link_types": {0: "mass (vertex cell)", 1: "RB link", 2: "EP link"}}),
        "scilla_terrain": ({"elevation": 1}, {}, {}),
        "scilla_sea": ({"elevation": 1}, {}, {}),
    },
    "impact": {
        "ellipsoid_impact": ({"velocity": 3, "depth_below_ground": 1}, {}, {}),
        "ellipsoid_impact_ground": ({}, {}, {}),
    },
    "rockfall": {
        "gully_rockfall": (ROCK_POINTS, {}, {}),
        "gully_rockfall_terrain": ({}, {"ground": 1}, {}),
        "gully_rockfall_trajectories": (ROCK_POINTS, {"block": 1}, {}),
    },
}
"""Per module, per series: point arrays and cell arrays (name -> components), code tables."""


@pytest.fixture(scope="module", params=sorted(SERIES))
def run(request, tmp_path_factory):
    """(module, output folder) of a short run: cdem with contact and interfaces (the init
    template), the Scilla slide with its sea, one impact, one rockfall block."""
    module = request.param
    folder = tmp_path_factory.mktemp(module)
    if module == "cdem":
        case = folder / "case.toml"
        assert main_in_process(["init", "cdem", "--out", str(case)]).returncode == 0
        run_case(case, folder / "out", "contact.enabled=true", "stages[0].max_steps=20",
                 "stages[1].duration=0.01", "output.every=0.005")
    elif module == "pointmass":
        run_case(CASES / "scilla.toml", folder / "out", "sweep.keys=[]", "sweep.runs=[]",
                 "time.t_end=2.0", "output.every=1.0")
    elif module == "impact":
        run_case(CASES / "ellipsoid_impact.toml", folder / "out", "output.vtk_frames=3")
    else:
        run_case(CASES / "gully_rockfall.toml", folder / "out",
                 "ensemble.vary.aspect_ratio.values=[2.0]", "ensemble.vary.y.values=[15.0]",
                 "ensemble.vary.axis_yaw.values=[0.0]", "output.vtk_dt=3.0")
    return module, folder / "out"


def _frames(pvd):
    """(time, .pvtu path) of every frame a ``.pvd`` lists."""
    return [(float(d.get("timestep")), pvd.parent / d.get("file"))
            for d in ET.parse(pvd).getroot().iter("DataSet")]


def _pieces(pvtu):
    return [pvtu.parent / p.get("Source") for p in ET.parse(pvtu).getroot().iter("Piece")]


def _components(array) -> int:
    return 1 if np.ndim(array) == 1 else int(np.shape(array)[1])


def _vtk(reader_class, path):
    reader = reader_class()
    reader.SetFileName(str(path))
    reader.Update()
    return reader.GetOutput()


def _vtk_arrays(data) -> dict[str, tuple[int, tuple[str, ...]]]:
    """name -> (components, component names) of a vtkPointData/vtkCellData."""
    out = {}
    for i in range(data.GetNumberOfArrays()):
        array = data.GetArray(i)
        n = array.GetNumberOfComponents()
        names = tuple(array.GetComponentName(k) for k in range(n)) if n > 1 else ()
        out[array.GetName()] = (n, names)
    return out


def _vtk_field_names(grid) -> list[str]:
    field = grid.GetFieldData()
    return [field.GetArrayName(i) for i in range(field.GetNumberOfArrays())]


def _expect_vtk(grid, points, cells, tables):
    for data, expected in ((grid.GetPointData(), points), (grid.GetCellData(), cells)):
        assert _vtk_arrays(data) == {k: (n, component_names(n)) for k, n in expected.items()}
    assert code_tables(_vtk_field_names(grid)) == tables


def _expect_pyvista(grid, points, cells, tables):
    assert {k: _components(grid.point_data[k]) for k in grid.point_data.keys()} == points
    assert {k: _components(grid.cell_data[k]) for k in grid.cell_data.keys()} == cells
    assert code_tables(grid.field_data.keys()) == tables


def _all_series(module, out):
    series = {p.stem: p for p in out.glob("*.pvd")}
    assert sorted(series) == sorted(SERIES[module])
    return series


def test_pieces_read_alike_in_meshio_pyvista_and_vtk(run):
    """Every ``.vtu``: meshio, pyvista and VTK see the same points, arrays, components and
    values, and the code tables in the field data."""
    module, out = run
    for name, pvd in _all_series(module, out).items():
        points, cells, tables = SERIES[module][name]
        for _, pvtu in _frames(pvd):
            for piece in _pieces(pvtu):
                mesh = meshio.read(piece)
                grid = pv.read(piece)
                _expect_pyvista(grid, points, cells, tables)
                _expect_vtk(_vtk(vtkXMLUnstructuredGridReader, piece), points, cells, tables)
                np.testing.assert_array_equal(mesh.points, grid.points)
                assert sum(len(block.data) for block in mesh.cells) == grid.n_cells
                for key, array in mesh.point_data.items():
                    assert _components(array) == points[key]
                    np.testing.assert_array_equal(np.reshape(array, np.shape(
                        grid.point_data[key])), grid.point_data[key])
                for key, blocks in mesh.cell_data.items():
                    array = np.concatenate(blocks)
                    assert _components(array) == cells[key]
                    np.testing.assert_array_equal(np.reshape(array, np.shape(
                        grid.cell_data[key])), grid.cell_data[key])
                assert set(mesh.point_data) == set(points) and set(mesh.cell_data) == set(cells)
                assert code_tables(mesh.field_data) == tables
                for key, value in mesh.field_data.items():
                    assert int(np.ravel(value)[0]) == int(key.split(" ")[1].rstrip(":"))


def test_series_and_frames_read_in_pyvista_and_vtk(run):
    """Every ``.pvd`` in pyvista (its times, every frame) and every ``.pvtu`` it lists in
    VTK's parallel reader and in pyvista, with the pieces' arrays and tables."""
    module, out = run
    for name, pvd in _all_series(module, out).items():
        points, cells, tables = SERIES[module][name]
        frames = _frames(pvd)
        reader = pv.get_reader(str(pvd))
        assert reader.time_values == pytest.approx([t for t, _ in frames], rel=1e-9)
        for k, (_, pvtu) in enumerate(frames):
            reader.set_active_time_point(k)
            _expect_pyvista(reader.read()[0], points, cells, tables)
            _expect_pyvista(pv.read(pvtu), points, cells, tables)
            _expect_vtk(_vtk(vtkXMLPUnstructuredGridReader, pvtu), points, cells, tables)


def test_code_tables_come_back_from_field_data_names():
    assert code_tables(["group_names 0: base", "group_names 12: key: body", "crs 0: EPSG:32633",
                        "other"]) == {"group_names": {0: "base", 12: "key: body"},
                                      "crs": {0: "EPSG:32633"}}
