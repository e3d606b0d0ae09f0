"""ParaView output: a ``.pvd`` time series of ``.pvtu`` files joining per-rank ``.vtu`` pieces.

Layout (Firedrake/GEOS style)::

    out/<name>.pvd                       collection, rewritten after every frame
    out/<name>/<name>_<frame>.pvtu       one per frame: array list, field data, piece paths
    out/<name>/<name>_<frame>_<rank>.vtu one per rank and frame (binary, zlib)

Every rank calls :meth:`VtkSeries.write` collectively with its own piece, possibly empty.
Field names, dtypes and component counts must be the same on every rank.

Conventions ParaView relies on (VTK's ``vtkXMLPUnstructuredGridWriter`` writes the same):

* three-component arrays are vectors with components named X, Y, Z;
* six-component arrays are symmetric tensors in VTK order XX, YY, ZZ, XY, YZ, XZ, named so
  (``vtkTensorPrincipalInvariants`` and the Tensor Glyph filter read that order); convert a
  Voigt-ordered array with :func:`voigt_to_vtk` first;
* tables that explain integer codes (group names, state codes) and run constants such as a
  CRS are field data in every piece (VTK's parallel reader takes field data from the pieces)
  and in the ``.pvtu``: one one-value Int64 array per entry, named ``"<table> <code>: <label>"``
  and holding the code (``group_names 1: rock`` = 1), so that ParaView shows the names
  (Spreadsheet view, Field Data) and meshio, which reads no VTK string array, reads them too;
  :func:`code_tables` turns the names back into tables;
* points are the current (deformed) positions; no point array holds a displacement, so
  ParaView's Warp By Vector never moves the nodes a second time. Units: :data:`UNITS`.
"""

from __future__ import annotations

import base64
import re
import zlib
from collections.abc import Iterable
from pathlib import Path
from xml.sax.saxutils import quoteattr

import numpy as np

from solver.errors import write_together

VECTOR_COMPONENTS = ("X", "Y", "Z")
TENSOR_COMPONENTS = ("XX", "YY", "ZZ", "XY", "YZ", "XZ")
VOIGT_TO_VTK = (0, 1, 2, 5, 3, 4)
"""Voigt order (xx, yy, zz, yz, xz, xy) -> VTK order (XX, YY, ZZ, XY, YZ, XZ)."""

UNITS = {
    "displacement": "m", "displacement_magnitude": "m", "velocity": "m/s",
    "stress": "Pa", "group": "-", "block": "-", "rank": "-", "broken_springs": "-",
    "broken_tension": "-", "broken_shear": "-", "normal_traction": "Pa", "shear_traction": "Pa",
    "normal_force": "N", "tangential_force": "N", "state": "-", "target_face": "-",
    "mass": "kg", "reaction": "N", "underwater": "-", "rb_force": "N", "ep_force": "N",
    "link_type": "-", "elevation": "m", "depth_below_ground": "m",
}
"""Unit of every array the solver writes (SI; the README's units table)."""

_CELL_TYPES = {"vertex": 1, "line": 3, "triangle": 5, "quad": 9, "hexahedron": 12}
_VTK_TYPES = {np.dtype("float64"): "Float64", np.dtype("float32"): "Float32",
              np.dtype("int64"): "Int64", np.dtype("int32"): "Int32",
              np.dtype("uint8"): "UInt8", np.dtype("int8"): "Int8"}
_BLOCK = 32768


def voigt_to_vtk(voigt: np.ndarray) -> np.ndarray:
    """Symmetric tensors ``(..., 6)`` from Voigt order (xx, yy, zz, yz, xz, xy) to VTK order
    (XX, YY, ZZ, XY, YZ, XZ)."""
    return np.asarray(voigt)[..., VOIGT_TO_VTK]


def component_names(n_components: int) -> tuple[str, ...]:
    """Names ParaView shows for the components of an array (none for scalars)."""
    return {3: VECTOR_COMPONENTS, 6: TENSOR_COMPONENTS}.get(n_components, ())


def table_entry_name(table: str, code: int, label: str) -> str:
    """The field-data array name of one entry of a code table: ``"group_names 1: rock"``."""
    return f"{table} {int(code)}: {label}"


_ENTRY = re.compile(r"(\S+) (-?\d+): (.*)", re.DOTALL)


def code_tables(array_names: Iterable[str]) -> dict[str, dict[int, str]]:
    """The code tables held in field-data array names (those of any reader: pyvista's
    ``field_data.keys()``, meshio's ``field_data``, VTK's ``GetArrayName``):
    ``{"group_names": {0: "base", 1: "rock"}, ...}``; other names are left out."""
    tables: dict[str, dict[int, str]] = {}
    for name in array_names:
        entry = _ENTRY.fullmatch(name)
        if entry:
            tables.setdefault(entry[1], {})[int(entry[2])] = entry[3]
    return {table: dict(sorted(codes.items())) for table, codes in tables.items()}


def _flatten(array: np.ndarray) -> np.ndarray:
    array = np.asarray(array)
    if array.dtype == bool:
        array = array.astype(np.uint8)
    if array.ndim > 2:
        array = array.reshape(len(array), -1)
    return np.ascontiguousarray(array)


def _components(array: np.ndarray) -> int:
    return 1 if array.ndim == 1 else int(array.shape[1])


def _array_attributes(name: str, array: np.ndarray) -> str:
    n = _components(array)
    names = "".join(f' ComponentName{i}="{c}"' for i, c in enumerate(component_names(n)))
    return (f'type="{_VTK_TYPES[array.dtype]}" Name={quoteattr(name)} '
            f'NumberOfComponents="{n}"{names}')


def _encode(array: np.ndarray) -> str:
    """VTK inline binary with the zlib compressor: a UInt64 header [blocks, block size, last
    block size, compressed sizes...] then the compressed blocks, each part base64-encoded."""
    raw = array.tobytes()
    blocks = [raw[i:i + _BLOCK] for i in range(0, len(raw), _BLOCK)]
    packed = [zlib.compress(b) for b in blocks]
    last = len(blocks[-1]) if blocks else 0
    header = np.array([len(blocks), _BLOCK, last, *map(len, packed)], dtype="<u8")
    return (base64.b64encode(header.tobytes()).decode()
            + base64.b64encode(b"".join(packed)).decode())


def _data_array(name: str, array: np.ndarray, indent: str, tuples: str = "") -> str:
    return (f'{indent}<DataArray {_array_attributes(name, array)}{tuples} format="binary">'
            f'{_encode(array)}</DataArray>\n')


def _field_data(tables: dict[str, dict[int, str]], indent: str) -> str:
    """Every entry of every code table as a one-value Int64 array named after the entry
    (field data needs its ``NumberOfTuples``)."""
    arrays = "".join(_data_array(table_entry_name(table, code, label),
                                 np.array([code], dtype=np.int64), indent + "  ",
                                 ' NumberOfTuples="1"')
                     for table, codes in tables.items() for code, label in sorted(codes.items()))
    return f"{indent}<FieldData>\n{arrays}{indent}</FieldData>\n" if arrays else ""


def write_vtu(path: Path, points: np.ndarray, cells: dict[str, np.ndarray],
              point_data: dict[str, np.ndarray], cell_data: dict[str, np.ndarray],
              field_data: dict[str, dict[int, str]] | None = None) -> None:
    """One unstructured-grid piece. ``cells`` maps ``vertex``, ``line``, ``triangle``,
    ``quad`` or ``hexahedron`` to connectivity; ``cell_data`` arrays run over all cells in
    that order; ``field_data`` holds code tables (name -> {code: label})."""
    points = np.ascontiguousarray(np.asarray(points, dtype=np.float64).reshape(-1, 3))
    blocks = [(kind, np.asarray(c, dtype=np.int64)) for kind, c in cells.items()]
    blocks = [(kind, c if c.ndim == 2 else c[:, None]) for kind, c in blocks]
    connectivity = np.concatenate([c.ravel() for _, c in blocks] or [np.zeros(0, np.int64)])
    sizes = np.concatenate([np.full(len(c), c.shape[1], dtype=np.int64) for _, c in blocks]
                           or [np.zeros(0, np.int64)])
    types = np.concatenate([np.full(len(c), _CELL_TYPES[kind], dtype=np.uint8)
                            for kind, c in blocks] or [np.zeros(0, np.uint8)])
    ind = "        "

    def section(tag: str, data: dict) -> str:
        return (f"      <{tag}>\n" + "".join(_data_array(k, _flatten(v), ind)
                                             for k, v in data.items()) + f"      </{tag}>\n")

    text = (
        '<?xml version="1.0"?>\n'
        '<VTKFile type="UnstructuredGrid" version="1.0" byte_order="LittleEndian" '
        'header_type="UInt64" compressor="vtkZLibDataCompressor">\n'
        '  <UnstructuredGrid>\n' + _field_data(field_data or {}, "    ")
        + f'    <Piece NumberOfPoints="{len(points)}" NumberOfCells="{len(types)}">\n'
        + section("PointData", point_data) + section("CellData", cell_data)
        + '      <Points>\n' + _data_array("Points", points, ind) + '      </Points>\n'
        '      <Cells>\n' + _data_array("connectivity", connectivity, ind)
        + _data_array("offsets", np.cumsum(sizes), ind) + _data_array("types", types, ind)
        + '      </Cells>\n    </Piece>\n  </UnstructuredGrid>\n</VTKFile>\n')
    Path(path).write_text(text)


class VtkSeries:
    """A time series of unstructured-grid frames for ParaView.

    ``field_data`` (name -> {code: label}) goes into every frame: the tables that explain
    integer codes, run constants such as a CRS (``{"crs": {0: "EPSG:32633"}}``).
    """

    def __init__(self, comm, out_dir: str | Path, name: str,
                 field_data: dict[str, dict[int, str]] | None = None):
        self.comm = comm
        self.out_dir = Path(out_dir)
        self.name = name
        self.field_data = dict(field_data or {})
        self.piece_dir = self.out_dir / name
        self.frames: list[tuple[float, str]] = []
        write_together(comm, (lambda: self.piece_dir.mkdir(parents=True, exist_ok=True))
                       if comm.rank == 0 else None, self.piece_dir)

    @property
    def pvd_path(self) -> Path:
        return self.out_dir / f"{self.name}.pvd"

    def write(self, time: float, points: np.ndarray, cells: dict[str, np.ndarray],
              point_data: dict[str, np.ndarray] | None = None,
              cell_data: dict[str, np.ndarray] | None = None) -> None:
        """Write one frame (collective). ``cells`` and ``cell_data`` as in :func:`write_vtu`.
        A write the file system refuses on any rank raises solver.errors.OutputFailed on
        every rank (:func:`solver.errors.write_together`)."""
        frame = len(self.frames)
        point_data = {k: _flatten(v) for k, v in (point_data or {}).items()}
        cell_data = {k: _flatten(v) for k, v in (cell_data or {}).items()}
        piece = self.piece_dir / f"{self.name}_{frame:05d}_{self.comm.rank}.vtu"
        write_together(self.comm, lambda: write_vtu(piece, points, cells, point_data,
                                                    cell_data, self.field_data), piece)
        pvtu = f"{self.name}_{frame:05d}.pvtu"
        self.frames.append((float(time), f"{self.name}/{pvtu}" if self.comm.rank == 0 else ""))

        def write_index() -> None:
            self._write_pvtu(self.piece_dir / pvtu, frame, point_data, cell_data)
            self._write_pvd()

        write_together(self.comm, write_index if self.comm.rank == 0 else None, self.pvd_path)

    def restore(self, frames: list[tuple[float, str]]) -> None:
        """Continue after ``frames`` (a restart): later frames of an interrupted run are
        removed, so the series has neither gaps nor duplicates (collective)."""
        self.frames = [(float(t), f if self.comm.rank == 0 else "") for t, f in frames]

        def trim() -> None:
            for path in self.piece_dir.glob(f"{self.name}_*"):
                if int(path.stem.split("_")[-2 if path.suffix == ".vtu" else -1]) >= len(frames):
                    path.unlink()
            self._write_pvd()

        write_together(self.comm, trim if self.comm.rank == 0 else None, self.pvd_path)

    def _write_pvtu(self, path: Path, frame: int, point_data: dict, cell_data: dict) -> None:
        def arrays(data: dict) -> str:
            return "".join(f"      <PDataArray {_array_attributes(k, v)}/>\n"
                           for k, v in data.items())
        pieces = "".join(f'    <Piece Source="{self.name}_{frame:05d}_{r}.vtu"/>\n'
                         for r in range(self.comm.size))
        path.write_text(
            '<?xml version="1.0"?>\n'
            '<VTKFile type="PUnstructuredGrid" version="1.0" byte_order="LittleEndian" '
            'header_type="UInt64" compressor="vtkZLibDataCompressor">\n'
            '  <PUnstructuredGrid GhostLevel="0">\n'
            f'{_field_data(self.field_data, "    ")}'
            '    <PPoints>\n      <PDataArray type="Float64" NumberOfComponents="3"/>\n'
            '    </PPoints>\n'
            f'    <PPointData>\n{arrays(point_data)}    </PPointData>\n'
            f'    <PCellData>\n{arrays(cell_data)}    </PCellData>\n'
            f'{pieces}  </PUnstructuredGrid>\n</VTKFile>\n')

    def _write_pvd(self) -> None:
        entries = "".join(f'    <DataSet timestep="{t:.9g}" part="0" file="{f}"/>\n'
                          for t, f in self.frames)
        tmp = self.pvd_path.with_suffix(".pvd.tmp")
        tmp.write_text('<?xml version="1.0"?>\n'
                       '<VTKFile type="Collection" version="1.0" byte_order="LittleEndian">\n'
                       f'  <Collection>\n{entries}  </Collection>\n</VTKFile>\n')
        tmp.replace(self.pvd_path)
