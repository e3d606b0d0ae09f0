"""VTK frames of a CDEM model: blocks (every element with its own 8 nodes, so cracks open
visibly in ParaView), the interface faces with their spring states, and the semi-springs
with their contact forces and states (0 stick, 1 slide, 2 open).

Points are the deformed positions; the displacement is cell data (and its magnitude point
data), so ParaView's Warp By Vector has no point vector that would move the nodes twice.
Stress is written in VTK's tensor order (solver.io.vtk). Field data: ``group_names``,
``spring_states``, ``contact_states``.
"""

from __future__ import annotations

import numpy as np

from solver.cdem.interface import BROKEN_SHEAR, BROKEN_TENSION, INTACT
from solver.cdem.model import Model
from solver.cdem.state import InterfaceSprings
from solver.contact_laws.laws import OPEN, SLIP, STICK
from solver.io.vtk import VtkSeries, voigt_to_vtk

SPRING_STATES = {INTACT: "intact", BROKEN_TENSION: "broken in tension",
                 BROKEN_SHEAR: "broken in shear"}
CONTACT_STATES = {STICK: "stick", SLIP: "slide", OPEN: "open"}


class CdemWriter:
    """Writes ``<name>.pvd`` (blocks), ``<name>_interfaces.pvd`` (glued faces; only when the
    model has interfaces) and, with contact, ``<name>_contacts.pvd`` (semi-springs as points).
    ``group_names`` maps group ids to names for the ``group_names`` field-data table."""

    def __init__(self, comm, out_dir, name: str, contact: bool = False,
                 group_names: dict[int, str] | None = None):
        self.comm = comm
        self.out_dir = out_dir
        self.name = name
        self.group_names = dict(group_names or {})
        self.blocks = None
        self.faces = None
        self.contacts = (VtkSeries(comm, out_dir, f"{name}_contacts",
                                   {"contact_states": CONTACT_STATES})
                         if contact else None)

    def _open(self, m: Model) -> None:
        """The block series (its group table) and, if any rank has interface faces, theirs."""
        groups = np.unique(np.concatenate(self.comm.allgather(np.unique(m.elements.group))))
        names = [self.group_names.get(int(g), str(int(g))) for g in groups]
        self.blocks = VtkSeries(self.comm, self.out_dir, self.name,
                                {"group_names": dict(zip(groups.tolist(), names))})
        if self.comm.allreduce(len(m.springs)) > 0:
            self.faces = VtkSeries(self.comm, self.out_dir, f"{self.name}_interfaces",
                                   {"spring_states": SPRING_STATES})

    def state(self) -> dict:
        """The frames written so far, per series (rank 0 has the file names)."""
        return {name: series.frames for name, series in self._series().items()}

    def restore(self, state: dict, m: Model) -> None:
        """Continue the series of a checkpoint (collective)."""
        if self.blocks is None:
            self._open(m)
        for name, series in self._series().items():
            series.restore(state.get(name, []))

    def last_time(self) -> float | None:
        """Time of the last frame written (None before the first)."""
        return self.blocks.frames[-1][0] if self.blocks is not None and self.blocks.frames \
            else None

    def _series(self) -> dict:
        return {name: series for name, series in
                (("blocks", self.blocks), ("faces", self.faces), ("contacts", self.contacts))
                if series is not None}

    def write(self, time: float, m: Model) -> None:
        if self.blocks is None:
            self._open(m)
        n, e = m.nodes, m.elements
        disp = n.x - n.x0
        cells = np.arange(n.n_own, dtype=np.int64).reshape(-1, 8)
        self.blocks.write(
            time, n.x, {"hexahedron": cells},
            point_data={"displacement_magnitude": np.linalg.norm(disp, axis=1),
                        "velocity": n.v},
            cell_data={"displacement": disp.reshape(-1, 8, 3).mean(axis=1),
                       "velocity": n.v.reshape(-1, 8, 3).mean(axis=1),
                       "stress": voigt_to_vtk(e.stress.mean(axis=1)),
                       "group": e.group.astype(np.int64),
                       "block": e.gid.astype(np.int64),
                       "rank": np.full(len(e), self.comm.rank, dtype=np.int64)})
        if self.faces is not None:
            self._write_faces(time, n.x, m.springs)
        if self.contacts is not None:
            springs = m.contact.semi_springs
            points = m.contact.semi_spring_positions(n.x)
            self.contacts.write(
                time, points, {"vertex": np.arange(len(points), dtype=np.int64)[:, None]},
                point_data={"normal_force": springs.f_n, "tangential_force": springs.f_t,
                            "state": springs.status.astype(np.int64),
                            "target_face": springs.target})

    def _write_faces(self, time: float, x: np.ndarray, s: InterfaceSprings) -> None:
        f_n = s.k_n[:, None] * np.where(s.state == INTACT, s.u_n, np.minimum(s.u_n, 0.0))
        self.faces.write(
            time, x, {"quad": s.node_i},
            cell_data={"broken_springs": (s.state != INTACT).sum(axis=1).astype(np.int64),
                       "broken_tension": (s.state == BROKEN_TENSION).sum(axis=1)
                       .astype(np.int64),
                       "broken_shear": (s.state == BROKEN_SHEAR).sum(axis=1).astype(np.int64),
                       "normal_traction": f_n.sum(axis=1) / (4.0 * s.area),
                       "shear_traction": np.linalg.norm(s.f_s.sum(axis=1), axis=1)
                       / (4.0 * s.area),
                       "rank": np.full(len(s), self.comm.rank, dtype=np.int64)})
