"""A finished run read back from its folder: ``summary.json``, the CSV tables and the VTK
series, what solver.run_case and solver.load_run return.

Nothing is read before it is asked for, except the summary: a table when it is first
looked up, a frame when it is indexed (pyvista reads it).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from solver.errors import InputError
from solver.io.table import read_table, read_units


class Tables(Mapping):
    """The CSV tables of a run folder, keyed by their path in it without ``.csv``
    (``"com"``, ``"trajectories/block_0000"``, ``"runs/run_000/landslide_history"``); each is
    read on first lookup (:func:`solver.io.table.read_table`)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.paths = {path.relative_to(folder).with_suffix("").as_posix(): path
                      for path in sorted(folder.rglob("*.csv"))}
        self.read: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self.read:
            self.read[name] = read_table(self._path(name))
        return self.read[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.paths)

    def __len__(self) -> int:
        return len(self.paths)

    def __repr__(self) -> str:
        return f"Tables({list(self.paths)})"

    def units(self, name: str) -> dict[str, str]:
        """Column -> unit of the table ``name``, from its header."""
        return read_units(self._path(name))

    def _path(self, name: str) -> Path:
        if name not in self.paths:
            raise KeyError(f"{name!r}: no such table in {self.folder} "
                           f"(tables: {', '.join(self.paths) or 'none'})")
        return self.paths[name]


class Frames(Sequence):
    """The frames of one ``.pvd`` series: ``frames[k]`` is ``(time, dataset)``, the dataset
    read by pyvista when indexed; ``times`` lists them all without reading any."""

    def __init__(self, pvd: Path):
        self.pvd = pvd
        root = ET.parse(pvd).getroot()
        self.entries = [(float(d.get("timestep")), pvd.parent / d.get("file"))
                        for d in root.iter("DataSet")]

    @property
    def times(self) -> list[float]:
        return [t for t, _ in self.entries]

    def __len__(self) -> int:
        return len(self.entries)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[k] for k in range(*index.indices(len(self)))]
        time, path = self.entries[index]
        return time, _pyvista().read(path)


def _pyvista():
    try:
        import pyvista
    except ImportError:
        raise InputError("frames", "needs pyvista (pip install 'solver[render]')") from None
    return pyvista


class RunFolder:
    """A finished run: ``summary`` (the ``summary.json`` dict), ``results`` (its results),
    ``tables`` (:class:`Tables`), ``series`` (the names of its VTK series) and
    :meth:`frames`. A folder without ``summary.json`` raises InputError."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        path = self.folder / "summary.json"
        if not path.is_file():
            raise InputError(str(self.folder), "not the folder of a finished run "
                                               "(no summary.json)")
        self.summary: dict[str, Any] = json.loads(path.read_text())
        self.tables = Tables(self.folder)

    @property
    def results(self) -> dict[str, Any]:
        return self.summary["results"]

    @property
    def series(self) -> list[str]:
        """The VTK series (``.pvd`` files without the suffix), the case's own first."""
        names = sorted(p.stem for p in self.folder.glob("*.pvd"))
        return sorted(names, key=lambda n: n != self.summary["case"])

    def frames(self, series: str | None = None) -> Frames:
        """The frames of ``series`` (default: the case's own, ``<case>.pvd``) as
        (time, pyvista dataset) pairs, each read when indexed or iterated over."""
        name = series or self.summary["case"]
        pvd = self.folder / f"{name}.pvd"
        if not pvd.is_file():
            raise InputError(str(self.folder), f"no VTK series {name!r} (series: "
                                               f"{', '.join(self.series) or 'none'})")
        return Frames(pvd)

    def __repr__(self) -> str:
        return (f"RunFolder({str(self.folder)!r}: {self.summary['module']} "
                f"{self.summary['case']!r}, {self.summary['status']})")
