"""VTK frames of a CDEM model: blocks (every element with its own 8 nodes, so cracks open
visibly in ParaView), the interface faces with their spring states, and the semi-springs
with their contact forces and states (0 stick, 1 slide, 2 open)."""

from __future__ import annotations

import numpy as np

from solver.cdem.interface import INTACT
from solver.cdem.model import LocalModel
from solver.io.vtk import VtkSeries


class CdemWriter:
    """Writes ``<name>.pvd`` (blocks), ``<name>_interfaces.pvd`` (glued faces) and, with
    contact, ``<name>_contacts.pvd`` (semi-springs as points)."""

    def __init__(self, comm, out_dir, name: str, contact: bool = False):
        self.comm = comm
        self.blocks = VtkSeries(comm, out_dir, name)
        self.faces = VtkSeries(comm, out_dir, f"{name}_interfaces")
        self.contacts = VtkSeries(comm, out_dir, f"{name}_contacts") if contact else None

    def write(self, time: float, m: LocalModel) -> None:
        n = m.n_own
        x = m.x[:n]
        disp = x - m.x0
        cells = np.arange(n, dtype=np.int64).reshape(-1, 8)
        self.blocks.write(
            time, x, {"hexahedron": cells},
            point_data={"displacement": disp, "velocity": m.v[:n]},
            cell_data={"displacement": disp.reshape(-1, 8, 3).mean(axis=1),
                       "velocity": m.v[:n].reshape(-1, 8, 3).mean(axis=1),
                       "stress": m.stress.mean(axis=1),
                       "group": m.group.astype(np.int64),
                       "block": m.elem_gid.astype(np.int64),
                       "rank": np.full(m.n_el, self.comm.rank, dtype=np.int64)})
        f_n = m.k_n[:, None] * np.where(m.state == INTACT, m.u_n, np.minimum(m.u_n, 0.0))
        self.faces.write(
            time, x, {"quad": m.node_i},
            cell_data={"broken_springs": (m.state != INTACT).sum(axis=1).astype(np.int64),
                       "broken_tension": (m.state == 1).sum(axis=1).astype(np.int64),
                       "broken_shear": (m.state == 2).sum(axis=1).astype(np.int64),
                       "normal_traction": f_n.sum(axis=1) / (4.0 * m.area),
                       "shear_traction": np.linalg.norm(m.f_s.sum(axis=1), axis=1)
                       / (4.0 * m.area),
                       "rank": np.full(len(m.node_i), self.comm.rank, dtype=np.int64)})
        if self.contacts is not None:
            c = m.contact
            c.gather()
            points = c.semi_spring_positions()
            self.contacts.write(
                time, points, {"vertex": np.arange(len(points), dtype=np.int64)[:, None]},
                point_data={"normal_force": c.f_n, "tangential_force": c.f_t,
                            "state": c.status.astype(np.int64),
                            "target_face": c.target_faces()})
