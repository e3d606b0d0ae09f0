"""The state of one rank's part of a CDEM model, as small typed parts.

Every block element owns its 8 nodes (Feng et al. 2014, section 2): node row 8 e + a is node
a of local element e. Interface springs reach the B-side nodes of faces whose B element is
on another rank through ghost rows appended after the own rows of ``du`` and ``f_slot``.

The kernels take a part's arrays as one namedtuple (NodeArrays, SpringArrays: the part's
fields under the same names), packed (solver.cdem.packed): the part's ``packed``. A part's
arrays are written in place, never replaced, so it is packed once, when made.
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass, field, fields

import numpy as np

from solver.cdem.packed import Packed, pack


def _nbytes(part) -> int:
    return int(sum(getattr(part, f.name).nbytes for f in fields(part)
                   if isinstance(getattr(part, f.name), np.ndarray)))


@dataclass
class Nodes:
    """x0, x (n, 3) initial and current coordinates; v (n, 3) velocities v^{n-1/2};
    du (n + ghosts, 3) step increments; f_int (n, 3) element forces; f_contact (n, 3) contact
    forces of the last step; mass (n,) lumped masses; fixed (n, 3) held dofs and
    held_velocity (n, 3) their prescribed velocities. The interface spring forces are in the
    springs' slots (InterfaceSprings.f_slot). packed: these arrays as a NodeArrays, packed
    for the kernels."""

    x0: np.ndarray
    x: np.ndarray
    v: np.ndarray
    du: np.ndarray
    f_int: np.ndarray
    f_contact: np.ndarray
    mass: np.ndarray
    fixed: np.ndarray
    held_velocity: np.ndarray
    packed: Packed = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.packed = pack(NodeArrays(*(getattr(self, name) for name in NodeArrays._fields)))

    @property
    def n_own(self) -> int:
        return len(self.x)

    nbytes = _nbytes


@dataclass
class Elements:
    """gid (n_el,) global ids; group (n_el,) group ids; density, lam, mu (n_el,) material;
    model (n_el,) constitutive model ids; stress (n_el, 8, 6) Gauss-point stresses in Voigt
    order (xx, yy, zz, yz, xz, xy), tension positive."""

    gid: np.ndarray
    group: np.ndarray
    density: np.ndarray
    lam: np.ndarray
    mu: np.ndarray
    model: np.ndarray
    stress: np.ndarray

    def __len__(self) -> int:
        return len(self.gid)

    nbytes = _nbytes


@dataclass
class InterfaceSprings:
    """The interface springs this rank owns (faces whose A element is here), 4 per face:
    face_gid (m,) global face ids; node_i, node_j (m, 4) A and B node rows (B: own or ghost
    rows of ``du``; int32, 4 bytes less a node than int64 in the step's traffic); slot_i,
    slot_j (m, 4) the springs' slots at those nodes (0..2, int8); k_n, k_s (m,)
    spring constants [N/m]; area (m,) spring area [m2]; tensile, cohesion, tan_phi (m,)
    strength; u_n (m, 4) normal opening, f_s (m, 4, 3) shear force, state (m, 4) INTACT /
    BROKEN_*; f_slot (n + ghosts, 3, 3) the spring force in each node's three face slots.
    packed: these arrays as a SpringArrays, packed for the kernels."""

    face_gid: np.ndarray
    node_i: np.ndarray
    node_j: np.ndarray
    slot_i: np.ndarray
    slot_j: np.ndarray
    k_n: np.ndarray
    k_s: np.ndarray
    area: np.ndarray
    tensile: np.ndarray
    cohesion: np.ndarray
    tan_phi: np.ndarray
    u_n: np.ndarray
    f_s: np.ndarray
    state: np.ndarray
    f_slot: np.ndarray
    packed: Packed = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.packed = pack(SpringArrays(*(getattr(self, name) for name in SpringArrays._fields)))

    def __len__(self) -> int:
        return len(self.face_gid)

    nbytes = _nbytes


def _array_fields(part: type) -> list[str]:
    return [f.name for f in fields(part) if f.init]


#: The arrays of Nodes and of InterfaceSprings (what each holds, and its unit: the part's
#: docstring) as the kernels take them.
NodeArrays = namedtuple("NodeArrays", _array_fields(Nodes))
SpringArrays = namedtuple("SpringArrays", _array_fields(InterfaceSprings))


@dataclass
class StrengthRamp:
    """Interface faces whose strength falls with the time spent in breakable stages
    (``interface.pairs[].weakening_time``, a trigger by strength reduction): faces (k,) rows
    of InterfaceSprings; start, end (3, k) their T [Pa], c [Pa] and tan(phi) before and
    after; duration (k,) [s]."""

    faces: np.ndarray
    start: np.ndarray
    end: np.ndarray
    duration: np.ndarray

    def apply(self, t: float, springs: InterfaceSprings) -> None:
        """Set the faces' strength t seconds into the breakable stages, falling linearly:
        (1 - f) start + f end with f = min(t / duration, 1) (exactly the start at 0 and the
        end from the duration on)."""
        f = np.minimum(t / self.duration, 1.0)
        values = (1.0 - f) * self.start + f * self.end
        springs.tensile[self.faces] = values[0]
        springs.cohesion[self.faces] = values[1]
        springs.tan_phi[self.faces] = values[2]
