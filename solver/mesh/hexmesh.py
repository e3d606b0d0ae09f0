"""The in-memory hexahedral mesh every CDEM stage starts from."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class HexMesh:
    """Nodes and 8-node hexahedra in VTK/meshio node order.

    points: (n_nodes, 3) float64 coordinates [m].
    cells: (n_cells, 8) int64 node indices, VTK order (bottom face 0-1-2-3 counter-clockwise
        seen from above, top face 4-5-6-7 above it), positive Jacobian.
    groups: (n_cells,) int64 material group id of each cell (0 when the file has none).
    group_names: group id -> name (physical group / cell set name), possibly empty.
    """

    points: np.ndarray
    cells: np.ndarray
    groups: np.ndarray
    group_names: dict[int, str] = field(default_factory=dict)

    @property
    def n_cells(self) -> int:
        return len(self.cells)
