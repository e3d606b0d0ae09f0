"""One record type for both contact kinds of Feng et al. (2014): semi-springs and semi-edges.

Every vertex v of every contact-capable (active) face f of a block element g carries one
semi-spring and one semi-edge (the edge from vertex v to v + 1 of the face): 24 of each per
fully exposed hexahedron (Feng et al. 2014, section 3). Both are records of
:class:`ContactRecords`, keyed by ``4 (6 g + f) + v``, which orders them the same way on
any partition; the pair (key, kind) is a contact's place in the global order in which node
forces are summed.

Characteristic areas (Feng et al. 2014, Eqs. 4-5): A_SS = A_face / 4 for a semi-spring,
A_SE = A_SS,v + A_SS,v+1 = A_face / 2 for a semi-edge; spring constants K = k A with the
per-area stiffness k of the face (the normal one on the grid of exact sums,
solver.cdem.bodies, so that a body's loaded stiffness is the same summed in any order).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from solver.contact_laws.laws import OPEN

SEMI_SPRING, SEMI_EDGE = 0, 1
N_CANDIDATES = 8


@dataclass
class ContactRecords:
    """Semi-springs (kind 0) or semi-edges (kind 1) of this rank's active faces.

    Identity: key (n,) increasing global keys; elem (n,) the contact element (an own active
    element) carrying it; face (n,) its local face 0..5; vertex (n,) 0..3.
    Law constants: k_n, k_t (n,) [N/m].
    State carried from step to step: target (n,) global id of the target (face 6 g + f,
    edge 4 (6 g + f) + j; -1 none); f_t (n, 3) tangential force; dashpot (n, 2) last dashpot
    force and overlap rate; f_n (n,) normal force; status (n,) STICK / SLIP / OPEN; share
    (n,) the part of the contact the record carries, decided when its contact forms or it
    comes to or leaves a place, and kept between (solver.cdem.contact.geometry): for a
    semi-spring 1/2 where another semi-spring sits at the same place in contact with the
    carrying face (Feng et al. 2014, section 5), else 1, and 0 while open; 1 for a
    semi-edge; placed (n,) whether the semi-spring is at a place (a vertex of its target
    face within reach of its own).
    Geometry of this step (written by solver.cdem.contact.geometry): overlap (n,) > 0 in
    contact; normal (n, 3) unit normal out of the target;
    slip (n, 3) relative displacement increment; own_w (n, 4) weights of the carrying
    face's nodes; target_node (n, 4) contact nodes 8 c + a of the target (-1 unused) and
    their weights target_w (n, 4); target_elem (n,) target contact element. Output of the
    law: force (n, 3) on the carrying face (its reaction on the target).
    """

    kind: int
    key: np.ndarray
    elem: np.ndarray
    face: np.ndarray
    vertex: np.ndarray
    k_n: np.ndarray
    k_t: np.ndarray
    target: np.ndarray
    f_t: np.ndarray
    dashpot: np.ndarray
    f_n: np.ndarray
    status: np.ndarray
    overlap: np.ndarray
    normal: np.ndarray
    slip: np.ndarray
    own_w: np.ndarray
    target_node: np.ndarray
    target_w: np.ndarray
    target_elem: np.ndarray
    share: np.ndarray
    placed: np.ndarray
    force: np.ndarray

    def __len__(self) -> int:
        return len(self.key)

    @classmethod
    def build(cls, kind: int, key: np.ndarray, elem: np.ndarray, k_n: np.ndarray,
              k_t: np.ndarray, previous: ContactRecords | None = None) -> ContactRecords:
        """Records for the given keys, carrying target, tangential force, dashpot state,
        share and place from ``previous`` where a key was already there (a face that stays
        active keeps its contact history when others break free)."""
        n = len(key)
        rec = cls(kind=kind, key=key, elem=elem, face=(key // 4) % 6, vertex=key % 4,
                  k_n=k_n, k_t=k_t,
                  target=np.full(n, -1, dtype=np.int64), f_t=np.zeros((n, 3)),
                  dashpot=np.zeros((n, 2)), f_n=np.zeros(n),
                  status=np.full(n, OPEN, dtype=np.int64), overlap=np.zeros(n),
                  normal=np.zeros((n, 3)), slip=np.zeros((n, 3)),
                  own_w=np.zeros((n, 4)), target_node=np.full((n, 4), -1, dtype=np.int64),
                  target_w=np.zeros((n, 4)), target_elem=np.full(n, -1, dtype=np.int64),
                  share=np.full(n, 0.0 if kind == SEMI_SPRING else 1.0),
                  placed=np.zeros(n, dtype=bool), force=np.zeros((n, 3)))
        if previous is not None and len(previous) and n:
            at = np.minimum(np.searchsorted(previous.key, key), len(previous) - 1)
            kept = previous.key[at] == key
            for name in ("target", "f_t", "dashpot", "share", "placed"):
                getattr(rec, name)[kept] = getattr(previous, name)[at[kept]]
        return rec

    def nbytes(self) -> int:
        return int(sum(getattr(self, f.name).nbytes for f in fields(self)
                       if isinstance(getattr(self, f.name), np.ndarray)))
