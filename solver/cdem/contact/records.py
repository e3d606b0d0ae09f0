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

from collections import namedtuple
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from solver.cdem.packed import Packed, pack
from solver.contact_laws.laws import OPEN

SEMI_SPRING, SEMI_EDGE = 0, 1
N_CANDIDATES = 8

#: Per record field: (trailing shape, dtype, value of a new record).
_FIELDS = {"key": ((), np.int64, 0), "elem": ((), np.int64, 0), "face": ((), np.int64, 0),
           "vertex": ((), np.int64, 0), "k_n": ((), float, 0.0), "k_t": ((), float, 0.0),
           "target": ((), np.int64, -1), "f_t": ((3,), float, 0.0),
           "dashpot": ((2,), float, 0.0), "f_n": ((), float, 0.0),
           "status": ((), np.int64, OPEN), "overlap": ((), float, 0.0),
           "normal": ((3,), float, 0.0), "slip": ((3,), float, 0.0),
           "own_w": ((4,), float, 0.0), "target_node": ((4,), np.int64, -1),
           "target_w": ((4,), float, 0.0), "target_elem": ((), np.int64, -1),
           "share": ((), float, 1.0), "placed": ((), np.bool_, False), "offset": ((), float, 0.0),
           "force": ((3,), float, 0.0)}
#: The geometry of the step: written for every record in contact before the law reads it,
#: so :meth:`ContactRecords.insert` does not set it for new records (it keeps the other
#: records' rows: the next step books their dashpots' work at them,
#: solver.cdem.contact.law.book_carried_dashpot).
STEP_GEOMETRY = frozenset({"slip", "own_w", "target_node", "target_w", "target_elem"})
#: The arrays of a ContactRecords, one field per _FIELDS entry (what each holds, and its
#: unit: ContactRecords), as the kernels take them (packed: ContactRecords.packed).
RecordArrays = namedtuple("RecordArrays", tuple(_FIELDS))


@njit(cache=True)
def open_rows(rows, n, at):
    """Open a gap before each of the first n rows of ``rows`` (2-d, room for n + len(at))
    named in ``at`` (non-decreasing): old row i moves down by the number of entries of
    ``at`` not above i, so that the j-th gap is row at[j] + j. Rows before at[0] stay."""
    i = n - 1
    for j in range(at.shape[0] - 1, -1, -1):
        while i >= at[j]:
            for k in range(rows.shape[1]):
                rows[i + j + 1, k] = rows[i, k]
            i -= 1


@njit(cache=True)
def renumber_target_nodes(target_node, n_own, renumber, joining):
    """Target nodes 8 c + a (-1: none) after a glue change brought ``joining`` own elements
    in among the contact elements: an own element c < n_own becomes renumber[c] (old ->
    new index), a ghost c >= n_own moves up to c + joining."""
    for r in range(target_node.shape[0]):
        for k in range(target_node.shape[1]):
            node = target_node[r, k]
            if node >= 0:
                c = node // 8
                c = renumber[c] if c < n_own else c + joining
                target_node[r, k] = 8 * c + node % 8



class GrowingRows:
    """The first n rows of an array asked for again and again, n changing a little each
    time (the contact records, the contact elements' face frames, their potential
    targets): the array keeps room to spare and its rows, and grows by a quarter when it
    runs out. A fresh array at every step that breaks springs pays its page faults each
    time: 5.3 ms to make and fill 50 MB, against 1.3 ms to fill it again."""

    def __init__(self, tail: tuple = (), dtype=float):
        self.store = np.zeros((0,) + tail, dtype=dtype)

    def rows(self, n: int) -> np.ndarray:
        """Rows 0..n-1, those asked for before with their values, the others unset."""
        if len(self.store) < n:
            grown = np.empty((n + n // 4,) + self.store.shape[1:], dtype=self.store.dtype)
            grown[:len(self.store)] = self.store
            self.store = grown
        return self.store[:n]

@dataclass
class ContactRecords:
    """Semi-springs (kind 0) or semi-edges (kind 1) of this rank's active faces.

    Identity: key (n,) global keys, in the order the faces turned active (those of one
    :meth:`insert` increasing, a face's four records consecutive); elem (n,) the contact
    element (an own active element) carrying it; face (n,) its local face 0..5; vertex (n,)
    0..3. Nothing that moves the blocks depends on the order of the records.
    Law constants: k_n, k_t (n,) [N/m].
    State carried from step to step: target (n,) global id of the target (face 6 g + f,
    edge 4 (6 g + f) + j; -1 none); f_t (n, 3) tangential force; dashpot (n, 2) last dashpot
    force and overlap rate; f_n (n,) normal force; status (n,) STICK / SLIP / OPEN; share
    (n,) the part of the contact the record carries, decided when its contact forms or it
    comes to or leaves a place, and kept between (solver.cdem.contact.semi_spring): for a
    semi-spring 1/2 where another semi-spring sits at the same place in contact with the
    carrying face (Feng et al. 2014, section 5), else 1, and 0 while open; 1 for a
    semi-edge; placed (n,) whether the semi-spring is at a place (a vertex of its target
    face within reach of its own); offset (n,) a record's depth below its target (a
    semi-edge's beyond the tolerance) when its contact formed less that step's approach,
    subtracted from its depth while the contact lasts; overlap (n,) > 0 in contact, the
    last step's when the step begins (a semi-spring contact that moves to another element
    continues from it).
    normal (n, 3) unit normal out of the target, written while in contact and kept after
    (where a semi-spring's contact passes to another element, the face it was on decides
    whether it may go on).
    Geometry of this step (written by solver.cdem.contact.semi_spring and .semi_edge): slip
    (n, 3) relative displacement increment; own_w (n, 4) weights of the carrying face's
    nodes; target_node (n, 4) contact nodes 8 c + a of the target (-1 unused) and their
    weights target_w (n, 4); target_elem (n,) target contact element; the next step reads
    the nodes and weights of the records then still loaded. Output of the law: force (n, 3)
    on the carrying face (its reaction on the target).
    packed: these arrays as a RecordArrays, packed for the kernels (solver.cdem.packed), made
    anew by :meth:`insert` (the only method that puts other arrays in their place).
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
    offset: np.ndarray
    force: np.ndarray
    packed: Packed = field(init=False, repr=False)
    _store: dict = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._pack()

    def __len__(self) -> int:
        return len(self.key)

    def _pack(self) -> None:
        self.packed = pack(RecordArrays(*(getattr(self, name) for name in _FIELDS)))

    @classmethod
    def empty(cls, kind: int) -> ContactRecords:
        """No records (:meth:`insert` adds them)."""
        rows = {name: np.zeros((0,) + tail, dtype=dtype) for name, (tail, dtype, _)
                in _FIELDS.items()}
        return cls(kind=kind, **rows)

    def insert(self, key: np.ndarray, elem: np.ndarray, k_n: np.ndarray, k_t: np.ndarray,
               renumber: np.ndarray | None = None) -> None:
        """Add the records of new keys (increasing, none of them here yet) after the others.
        The others keep their rows and their history (target, tangential force, dashpot
        state, share and place; a face that stays active keeps its contact history when
        others break free), their contact elements renumbered by ``renumber`` (old -> new
        index) where given, and their last step's normal force and status (what the summary
        counts). The arrays have room to spare, and it grows by a quarter when it runs out:
        nothing moves but the new rows written. The geometry of the step (STEP_GEOMETRY) of
        the new rows is written before it is read."""
        n, m = len(self), len(key)
        if renumber is not None:
            self.elem[:] = renumber[self.elem]
        for name, (tail, dtype, _) in _FIELDS.items():
            store = self._store.setdefault(name, GrowingRows(tail, dtype))
            setattr(self, name, store.rows(n + m))
        new = slice(n, n + m)
        for name, (_, _, start) in _FIELDS.items():
            if name not in STEP_GEOMETRY:
                getattr(self, name)[new] = start
        if self.kind == SEMI_SPRING:
            self.share[new] = 0.0
        self.key[new] = key
        self.elem[new] = elem
        self.face[new] = (key // 4) % 6
        self.vertex[new] = key % 4
        self.k_n[new] = k_n
        self.k_t[new] = k_t
        self._pack()

    def nbytes(self) -> int:
        """Bytes of the record arrays, their room to spare included."""
        return int(sum(self._store[name].store.nbytes if name in self._store
                       else getattr(self, name).nbytes for name in _FIELDS))
