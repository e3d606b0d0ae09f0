"""VTK frames of a CDEM model: blocks (every element with its own 8 nodes, so cracks open
visibly in ParaView), the interface faces with their spring states, and the semi-springs
with their contact forces and states (0 stick, 1 slide, 2 open)."""

from __future__ import annotations

import numpy as np

from solver.cdem.interface import INTACT
from solver.cdem.model import Model
from solver.io.vtk import VtkSeries


class CdemWriter:
    """Writes ``<name>.pvd`` (blocks), ``<name>_interfaces.pvd`` (glued faces) and, with
    contact, ``<name>_contacts.pvd`` (semi-springs as points)."""

    def __init__(self, comm, out_dir, name: str, contact: bool = False):
        self.comm = comm
        self.blocks = VtkSeries(comm, out_dir, name)
        self.faces = VtkSeries(comm, out_dir, f"{name}_interfaces")
        self.contacts = VtkSeries(comm, out_dir, f"{name}_contacts") if contact else None

    def write(self, time: float, m: Model) -> None:
        n, e, s = m.nodes, m.elements, m.springs
        disp = n.x - n.x0
        cells = np.arange(n.n_own, dtype=np.int64).reshape(-1, 8)
        self.blocks.write(
            time, n.x, {"hexahedron": cells},
            point_data={"displacement": disp, "velocity": n.v},
            cell_data={"displacement": disp.reshape(-1, 8, 3).mean(axis=1),
                       "velocity": n.v.reshape(-1, 8, 3).mean(axis=1),
                       "stress": e.stress.mean(axis=1),
                       "group": e.group.astype(np.int64),
                       "block": e.gid.astype(np.int64),
                       "rank": np.full(len(e), self.comm.rank, dtype=np.int64)})
        f_n = s.k_n[:, None] * np.where(s.state == INTACT, s.u_n, np.minimum(s.u_n, 0.0))
        self.faces.write(
            time, n.x, {"quad": s.node_i},
            cell_data={"broken_springs": (s.state != INTACT).sum(axis=1).astype(np.int64),
                       "broken_tension": (s.state == 1).sum(axis=1).astype(np.int64),
                       "broken_shear": (s.state == 2).sum(axis=1).astype(np.int64),
                       "normal_traction": f_n.sum(axis=1) / (4.0 * s.area),
                       "shear_traction": np.linalg.norm(s.f_s.sum(axis=1), axis=1)
                       / (4.0 * s.area),
                       "rank": np.full(len(s), self.comm.rank, dtype=np.int64)})
        if self.contacts is not None:
            c = m.contact
            points = c.semi_spring_positions(n.x)
            self.contacts.write(
                time, points, {"vertex": np.arange(len(points), dtype=np.int64)[:, None]},
                point_data={"normal_force": c.ss.f_n, "tangential_force": c.ss.f_t,
                            "state": c.ss.status.astype(np.int64),
                            "target_face": c.ss.target})
