"""ParaView output: a ``.pvd`` time series of ``.pvtu`` files joining per-rank ``.vtu`` pieces.

Layout (Firedrake/GEOS style)::

    out/<name>.pvd                       collection, rewritten after every frame
    out/<name>/<name>_<frame>.pvtu       one per frame, lists the pieces by relative path
    out/<name>/<name>_<frame>_<rank>.vtu one per rank and frame (written with meshio)

Every rank calls :meth:`VtkSeries.write` collectively with its own piece, possibly empty.
Field names, dtypes and component counts must be the same on every rank.
"""

from __future__ import annotations

from pathlib import Path
from xml.sax.saxutils import quoteattr

import meshio
import numpy as np

_VTK_TYPES = {np.dtype("float64"): "Float64", np.dtype("float32"): "Float32",
              np.dtype("int64"): "Int64", np.dtype("int32"): "Int32",
              np.dtype("uint8"): "UInt8", np.dtype("int8"): "Int8"}


def _components(array: np.ndarray) -> int:
    return 1 if array.ndim == 1 else int(np.prod(array.shape[1:]))


def _vtk_type(array: np.ndarray) -> str:
    return _VTK_TYPES[np.dtype(array.dtype)]


def _flatten(array: np.ndarray) -> np.ndarray:
    array = np.asarray(array)
    if array.dtype == bool:
        array = array.astype(np.uint8)
    if array.ndim > 2:
        array = array.reshape(len(array), -1)
    return array


class VtkSeries:
    """A time series of unstructured-grid frames for ParaView."""

    def __init__(self, comm, out_dir: str | Path, name: str):
        self.comm = comm
        self.out_dir = Path(out_dir)
        self.name = name
        self.piece_dir = self.out_dir / name
        self.frames: list[tuple[float, str]] = []
        if comm.rank == 0:
            self.piece_dir.mkdir(parents=True, exist_ok=True)
        comm.Barrier()

    @property
    def pvd_path(self) -> Path:
        return self.out_dir / f"{self.name}.pvd"

    def write(self, time: float, points: np.ndarray, cells: dict[str, np.ndarray],
              point_data: dict[str, np.ndarray] | None = None,
              cell_data: dict[str, np.ndarray] | None = None) -> None:
        """Write one frame. ``cells`` maps meshio cell types (``"hexahedron"``, ``"line"``,
        ``"vertex"``) to connectivity; ``cell_data`` arrays run over all cells in that order."""
        frame = len(self.frames)
        point_data = {k: _flatten(v) for k, v in (point_data or {}).items()}
        cell_data = {k: _flatten(v) for k, v in (cell_data or {}).items()}
        blocks = [(t, np.asarray(c, dtype=np.int64)) for t, c in cells.items()]
        sizes = np.cumsum([0] + [len(c) for _, c in blocks])
        split = {k: [v[sizes[i]:sizes[i + 1]] for i in range(len(blocks))]
                 for k, v in cell_data.items()}
        piece = f"{self.name}_{frame:05d}_{self.comm.rank}.vtu"
        mesh = meshio.Mesh(np.asarray(points, dtype=np.float64).reshape(-1, 3), blocks,
                           point_data=point_data, cell_data=split)
        meshio.write(self.piece_dir / piece, mesh, file_format="vtu", binary=True)
        self.comm.Barrier()
        if self.comm.rank == 0:
            pvtu = f"{self.name}_{frame:05d}.pvtu"
            self._write_pvtu(self.piece_dir / pvtu, frame, point_data, cell_data)
            self.frames.append((float(time), f"{self.name}/{pvtu}"))
            self._write_pvd()
        else:
            self.frames.append((float(time), ""))
        self.comm.Barrier()

    def _write_pvtu(self, path: Path, frame: int, point_data: dict, cell_data: dict) -> None:
        def arrays(data: dict) -> str:
            return "".join(
                f'      <PDataArray type="{_vtk_type(v)}" Name={quoteattr(k)} '
                f'NumberOfComponents="{_components(v)}"/>\n' for k, v in data.items())
        pieces = "".join(f'    <Piece Source="{self.name}_{frame:05d}_{r}.vtu"/>\n'
                         for r in range(self.comm.size))
        path.write_text(
            '<?xml version="1.0"?>\n'
            '<VTKFile type="PUnstructuredGrid" version="1.0" byte_order="LittleEndian" '
            'header_type="UInt64">\n'
            '  <PUnstructuredGrid GhostLevel="0">\n'
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
