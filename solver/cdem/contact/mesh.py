"""The contact elements as the contact kernels read them: one structure, :class:`ContactMesh`.

Contact elements are a rank's own active elements (0 .. n_own - 1, their nodes in the
model's arrays ``x``, ``du`` at rows base[c] + a) followed by the ghost elements received
from neighbours (their nodes in ``ghost_x``, ``ghost_du`` at rows base[c] + a). A contact
node is 8 c + a, a face 6 c + f (f the hexahedron's face, solver.mesh.topology.FACES).

The structure is a namedtuple of arrays, which the kernels take packed
(solver.cdem.packed). The pipeline (solver.cdem.contact.pipeline) builds and packs it when
the contact elements change (a renewal, a glue change), and puts the model's node arrays in
it where they are other arrays than those it holds (:meth:`ContactMesh.on_nodes`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from solver.cdem.contact.frames import FRAME_WIDTH

#: Placeholder node arrays of a mesh not yet put on the model's nodes.
NO_NODES = np.zeros((0, 3))


class ContactMesh(NamedTuple):
    """The contact elements (n_c = own + ghosts) and their nodes.

    x (n_nodes, 3) node coordinates [m] and du (n_nodes + spring ghosts, 3) this step's
    increments [m]: the model's arrays, read for the own elements; ghost_x, ghost_du
    (8 n_ghost, 3) the same of the ghost elements [m]; base (n_c,) the row of each
    element's node 0 in its arrays; n_own the own elements, first among the contact
    elements; gid (n_c,) global element ids and gid_order (n_c,) the order that sorts them;
    active (n_c, 6) the faces that take part in contact (not glued); body (n_c,) the body
    (glued block, solver.cdem.bodies) of each element, an index into the rank's body table;
    frames (6 n_c, FRAME_WIDTH) the face frames (solver.cdem.contact.frames.face_frames:
    centre [m], unit normal, warp [m], squared radius [m2]) and centroid (n_c, 3) each
    element's vertex mean [m], both written by face_frames before each step's geometry.
    """

    x: np.ndarray
    du: np.ndarray
    ghost_x: np.ndarray
    ghost_du: np.ndarray
    base: np.ndarray
    n_own: int
    gid: np.ndarray
    gid_order: np.ndarray
    active: np.ndarray
    body: np.ndarray
    frames: np.ndarray
    centroid: np.ndarray

    @classmethod
    def of(cls, *, base: np.ndarray, n_own: int, gid: np.ndarray, active: np.ndarray,
           body: np.ndarray, frames: np.ndarray, centroid: np.ndarray,
           ghost_x: np.ndarray = NO_NODES, x: np.ndarray = NO_NODES,
           du: np.ndarray = NO_NODES) -> ContactMesh:
        """The mesh of these contact elements (gid_order from gid), without ghosts unless
        ``ghost_x`` is given (their increments start at zero), on the node arrays x, du
        (left out: none yet, :meth:`on_nodes` puts them in)."""
        return cls(x=x, du=du, ghost_x=ghost_x, ghost_du=np.zeros_like(ghost_x), base=base,
                   n_own=n_own, gid=gid, gid_order=np.argsort(gid, kind="stable"),
                   active=active, body=body, frames=frames, centroid=centroid)

    @classmethod
    def empty(cls) -> ContactMesh:
        """No contact elements, on no nodes (a contact before its first glue state)."""
        none = np.zeros(0, dtype=np.int64)
        return cls.of(base=none, n_own=0, gid=none, active=np.zeros((0, 6), dtype=bool),
                      body=none, frames=np.zeros((0, FRAME_WIDTH)), centroid=np.zeros((0, 3)))

    def on_nodes(self, x: np.ndarray, du: np.ndarray) -> ContactMesh:
        """This mesh on the node arrays x, du: itself where it holds them already (the
        model's arrays are the same at every step)."""
        if self.x is x and self.du is du:
            return self
        return self._replace(x=x, du=du)
