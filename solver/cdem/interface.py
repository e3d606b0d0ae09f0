"""Interface springs gluing neighbouring CDEM blocks, and their failure.

Topology (Feng et al. 2014, section 2, Fig. 3): every shared quadrilateral face of two
elements A and B becomes 4 spring pairs, one at each pair of coincident nodes (i in A, j in
B). A spring pair is a normal spring and a tangential (shear) spring acting along the current
unit normal n of A's face, n = (x_c - x_a) x (x_d - x_b) / |...| for face nodes a, b, c, d
(outward from A).

Characteristic area and stiffness (Feng et al. 2014, Eqs. 4-5 and section 5):
* a spring's area is A_s = A_face / 4. Feng et al. (2014) place two coincident semi-springs at
  each node of a continuous grid (one of A pointing into B's face, one of B into A's), each with
  half the force and half the area (A_face / 8); their sum is the single spring used here, so
  the per-spring criteria below are the paper's, with its halving rule already applied;
* normal and shear stiffness per unit area (3DEC-like, Itasca "block contact
  compute-stiffness"): k_n = beta * max_side (K + 4G/3) / h, k_s = beta * max_side G / h,
  h = V_element / A_face the element size normal to the face, beta the case's
  ``stiffness_factor`` (default 10); or k_n, k_s given directly in the case. Spring
  constants K_n = k_n A_s, K_s = k_s A_s.

Incremental force law (Feng et al. 2014, Eq. 13), with du_rel = du_j - du_i the step's
relative displacement of B's node with respect to A's: the spring's normal opening
u_n += du_rel . n is stored (opening positive); the spring itself is the rock-joint kernel
:func:`solver.contact_laws.laws.joint_spring`, called in that package's convention
(compression positive): overlap -u_n, slip increment du_i - du_j of A with respect to B,
normal -n (from B to A). So F_n = K_n (-u_n) (compression positive; a broken spring carries
compression only, so a gap closes where it opened), and the shear force F_s on A is rotated
into the current tangent plane and incremented by -K_s times the tangential slip (Cundall and
Strack 1979, as 3DEC does). Forces on the nodes: f_i += -F_n n + F_s, f_j -= -F_n n + F_s.
Each node lies on 3 faces of its element and so carries at most 3 springs; each spring writes
its force into the node's slot for that face (``SLOT``), and the node force is the sum of its
3 slots in slot order. The sum is then the same, bit for bit, however the springs are split
across ranks.

Failure per spring (Feng et al. 2014, Eq. 14: maximum tensile stress and Mohr-Coulomb; joint
equations J1-J4 of docs/references.md): tensile failure when the tension exceeds T A_s,
shear failure when |F_s| > c A_s + F_n tan(phi) with the signed normal force (a tension lowers
the shear strength; why, in :func:`~solver.contact_laws.laws.joint_spring`). A broken spring
never re-bonds: T = c = 0 for ever, and it keeps only the residual friction
|F_s| <= max(F_n, 0) tan(phi) (Cundall-Strack slider), the 3DEC joint convention. The energy
released at breakage and the friction work are added to the dissipation tally.

Hand-over to contact (``handover``, when the model has contact): a face whose four springs
have all broken is no longer glued, and the semi-spring contact resolves it from then on
(solver.cdem.contact). Its springs then carry nothing: the step their face breaks through,
their stored energy is added to the breakage tally and their opening and shear force are
set to zero. Node pairs of a broken face part by anything up to the runout of a landslide,
and a spring between them would still push on both nodes with whatever normal opening it
integrated along the way (a residual joint holds only while its nodes stay together).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver.cdem.hex8 import quad_normal
from solver.cdem.tally import record as tally_record
from solver.cdem.tally import zeroed
from solver.contact_laws.laws import BROKEN_SHEAR, BROKEN_TENSION, INTACT, joint_spring
from solver.exact_sum import add, normalize
from solver.mesh.topology import FACES

__all__ = ["BROKEN_SHEAR", "BROKEN_TENSION", "INTACT", "INTERFACE_ENERGY", "SLOT",
           "interface_energy", "interface_step", "interface_tally", "sum_slots"]

#: The interface springs' energy tally [J] (solver.cdem.tally; numba adds to its fields by
#: name): released the energy the springs held when they broke, friction the work of the
#: broken springs' residual friction, both since the stage's reference.
INTERFACE_ENERGY = tally_record("released", "friction")


def interface_tally() -> np.void:
    """A zeroed INTERFACE_ENERGY tally."""
    return zeroed(INTERFACE_ENERGY)


def _slot_table() -> np.ndarray:
    """(8, 6): the slot (0..2) of face f among the three faces of local node a (-1: a is not
    on f), faces taken in increasing order."""
    table = np.full((8, 6), -1, dtype=np.int64)
    for a in range(8):
        faces = [f for f in range(6) if a in FACES[f]]
        for slot, f in enumerate(faces):
            table[a, f] = slot
    return table


SLOT = _slot_table()


@njit(cache=True)
def interface_step(x, du, springs, breakable, tally, handover=False):
    """Advance all interface springs one step and write their forces into springs.f_slot.

    x, du: (n_nodes, 3) coordinates and step increments; ``springs`` the SpringArrays of
    solver.cdem.state.InterfaceSprings, packed (solver.cdem.packed): f_slot (n_nodes, 3, 3) the
    force of each node's spring of slot 0..2, overwritten for the springs given; node_i, node_j
    (n_faces, 4) node indices on the A and B side (A's face order, so node_i[:, 0..3] are the
    face corners a, b, c, d); slot_i, slot_j (n_faces, 4) the slot of the spring at each of
    those nodes (``SLOT``); k_n, k_s, area, tensile, cohesion, tan_phi (n_faces,) per-spring
    stiffness [N/m], area [m2] and strength of each face's springs; u_n (n_faces, 4), f_s
    (n_faces, 4, 3), state (n_faces, 4): spring state, updated. breakable: whether the failure
    criteria apply this stage; tally: an INTERFACE_ENERGY record, incremented by the energy
    released by breakage and dissipated by friction [J]; handover: the springs of a face
    whose four springs are broken carry nothing (the contact has it; module docstring).
    Returns the springs broken now."""
    springs = springs.value
    node_i, node_j, slot_i, slot_j = springs.node_i, springs.node_j, springs.slot_i, springs.slot_j
    k_n, k_s, area = springs.k_n, springs.k_s, springs.area
    tensile, cohesion, tan_phi = springs.tensile, springs.cohesion, springs.tan_phi
    u_n, f_s, state, f_slot = springs.u_n, springs.f_s, springs.state, springs.f_slot
    n_broken = 0
    for q in range(node_i.shape[0]):
        if handover and _face_broken(state, q):
            _release(q, springs, tally)
            continue
        n0, n1, n2 = quad_normal(x, node_i[q, 0], node_i[q, 1], node_i[q, 2], node_i[q, 3])
        kn = k_n[q]
        ks = k_s[q]
        for k in range(4):
            i = node_i[q, k]
            j = node_j[q, k]
            r0 = du[j, 0] - du[i, 0]
            r1 = du[j, 1] - du[i, 1]
            r2 = du[j, 2] - du[i, 2]
            dn = r0 * n0 + r1 * n1 + r2 * n2
            un = u_n[q, k] + dn
            u_n[q, k] = un
            fn, s0, s1, s2, st, released, dissipated = joint_spring(
                -un, (f_s[q, k, 0], f_s[q, k, 1], f_s[q, k, 2]), (-r0, -r1, -r2),
                (-n0, -n1, -n2), kn, ks, tan_phi[q], tensile[q] * area[q],
                cohesion[q] * area[q], state[q, k], breakable)
            if st != state[q, k]:
                state[q, k] = st
                n_broken += 1
            add(tally.released, released)
            add(tally.friction, dissipated)
            f_s[q, k, 0] = s0
            f_s[q, k, 1] = s1
            f_s[q, k, 2] = s2
            t0 = s0 - fn * n0
            t1 = s1 - fn * n1
            t2 = s2 - fn * n2
            a = slot_i[q, k]
            b = slot_j[q, k]
            f_slot[i, a, 0] = t0
            f_slot[i, a, 1] = t1
            f_slot[i, a, 2] = t2
            f_slot[j, b, 0] = -t0
            f_slot[j, b, 1] = -t1
            f_slot[j, b, 2] = -t2
    normalize(tally.released)
    normalize(tally.friction)
    return n_broken


@njit(cache=True, inline="always")
def _face_broken(state, q):
    return (state[q, 0] != INTACT and state[q, 1] != INTACT and state[q, 2] != INTACT
            and state[q, 3] != INTACT)


@njit(cache=True)
def _release(q, springs, tally):
    """Zero the springs of broken face q (of SpringArrays ``springs``) and their forces,
    booking what they still stored (nothing after the first call)."""
    node_i, node_j, slot_i, slot_j = springs.node_i, springs.node_j, springs.slot_i, springs.slot_j
    k_n, k_s, u_n, f_s, f_slot = springs.k_n, springs.k_s, springs.u_n, springs.f_s, springs.f_slot
    for k in range(4):
        un = min(u_n[q, k], 0.0)
        mag2 = f_s[q, k, 0] ** 2 + f_s[q, k, 1] ** 2 + f_s[q, k, 2] ** 2
        add(tally.released, 0.5 * k_n[q] * un * un + 0.5 * mag2 / k_s[q])
        u_n[q, k] = 0.0
        for c in range(3):
            f_s[q, k, c] = 0.0
            f_slot[node_i[q, k], slot_i[q, k], c] = 0.0
            f_slot[node_j[q, k], slot_j[q, k], c] = 0.0


@njit(cache=True)
def glued_faces(state, glued):
    """glued[q, 0] = 1.0 where face q (state (m, 4)) still has an intact spring, else 0.0:
    the column the glue exchange sends (its rows after m are the ghost faces, left as
    they are)."""
    for q in range(state.shape[0]):
        if _face_broken(state, q):
            glued[q, 0] = 0.0
        else:
            glued[q, 0] = 1.0


@njit(cache=True)
def glue_table(glued, a_side, b_local, b_remote, out):
    """The element glued across each face of the own elements, out (n_el, 6): A's side of
    every glued owned face (a_side: local element, face, B's global id), B's side where B
    is here too (b_local: local element, face, A's global id, row of the owned face), and
    B's side of the glued faces owned elsewhere (b_remote, rows m.. of ``glued``, from the
    glue exchange); -1 elsewhere."""
    out[:] = -1
    m = a_side.shape[0]
    for q in range(m):
        if glued[q, 0] > 0.0:
            out[a_side[q, 0], a_side[q, 1]] = a_side[q, 2]
    for i in range(b_local.shape[0]):
        if glued[b_local[i, 3], 0] > 0.0:
            out[b_local[i, 0], b_local[i, 1]] = b_local[i, 2]
    for i in range(b_remote.shape[0]):
        if glued[m + i, 0] > 0.0:
            out[b_remote[i, 0], b_remote[i, 1]] = b_remote[i, 2]


def sum_slots(f_slot: np.ndarray, out: np.ndarray) -> None:
    """out = (slot 0 + slot 1) + slot 2 per node, in that order (len(out) rows)."""
    n = len(out)
    np.add(f_slot[:n, 0], f_slot[:n, 1], out=out)
    out += f_slot[:n, 2]


@njit(cache=True)
def interface_energy(k_n, k_s, u_n, f_s, state, acc):
    """acc += the elastic energy stored in the interface springs, 1/2 F_n^2/K_n + 1/2
    |F_s|^2/K_s, face by face (an exact-sum accumulator, solver.exact_sum; normalized)."""
    for q in range(u_n.shape[0]):
        face = 0.0
        for k in range(4):
            un = u_n[q, k]
            if state[q, k] != INTACT and un > 0.0:
                un = 0.0
            s = f_s[q, k, 0] ** 2 + f_s[q, k, 1] ** 2 + f_s[q, k, 2] ** 2
            face += 0.5 * k_n[q] * un * un + 0.5 * s / k_s[q]
        add(acc, face)
    normalize(acc)
