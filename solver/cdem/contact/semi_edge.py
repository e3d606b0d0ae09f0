"""Semi-edge geometry: the target edge of each semi-edge among the edges of its potential
target faces, with the overlap, normal and relative increment the force law needs (Feng et
al. 2014, section 4.3, Eqs. 11-12). The reason for each rule, and the test that pins it, is
in docs/contact.md.

A semi-edge is the segment joining the semi-springs of vertices v and v + 1 of a face. Only
block edges take part: the edge's other face on the same element is active too (an edge
between two coplanar faces of glued elements is not an edge of the block). Candidate
elements the segment does not enter (within the tolerance, each plane widened by its warp)
are passed over, tested once per semi-edge however many of their faces are candidates.

For every block edge Q0-Q1 of the candidate faces (:func:`semi_edge_geometry`): skip it if
parallel (|e1 x e2|^2 <= 1e-6 |e1|^2 |e2|^2, Eq. 11); otherwise take the closest points
P(s), Q(t) of the two segments, both inside (0.001 < s, t < 0.999: an end point is a
vertex, the semi-springs' business), the normal n = e1 x e2 / |..| turned outward of the
target element, and d = (P - Q) . n (Eq. 12). The edge is a target when

* d < -tol with P inside the target element (within the tolerance);
* n lies within the arc of outward normals of the target edge's two faces, and -n within
  that of the own edge's (the Gauss-map test of edge pairs, Gregorius 2013), so that
  nearly parallel edges of coincident faces do not meet with a normal in the face plane;
* it is the semi-edge's target of the last step, or the pair came into contact during
  this step: the gap of the two edges' lines at the step's start (the nodes at x - du)
  was not below -tol.

The shallowest such edge is taken. A forming contact keeps its depth beyond the tolerance
less this step's approach -(u - u_t) . n as its ``offset``, and the overlap is
-d - tol - offset: the contact forms with the overlap its approach made and lasts, at any
depth, while the pair stays a contact. P spreads over the own face's nodes with the
semi-springs' weights, the reaction over Q0, Q1 with (1 - t, t).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from solver.cdem.contact.frames import beyond, index_in, inside_element, semi_spring_point
from solver.contact_laws.laws import OPEN
from solver.mesh.topology import FACES


def _edge_neighbours() -> np.ndarray:
    """(6, 4): the other face of the hexahedron sharing edge j (nodes j, j+1) of face f."""
    table = np.zeros((6, 4), dtype=np.int64)
    for f in range(6):
        for j in range(4):
            edge = {FACES[f, j], FACES[f, (j + 1) % 4]}
            table[f, j] = next(g for g in range(6) if g != f and edge <= set(FACES[g]))
    return table


def _entry_order() -> np.ndarray:
    """(6, 6): the faces of a hexahedron in the order _segment_enters tries them for a
    candidate face f: the four faces next to f, then f, then the face opposite."""
    table = np.zeros((6, 6), dtype=np.int64)
    for f in range(6):
        opposite = next(g for g in range(6) if not set(FACES[g]) & set(FACES[f]))
        table[f] = [*EDGE_NEIGHBOURS[f], f, opposite]
    return table


EDGE_NEIGHBOURS = _edge_neighbours()
ENTRY_ORDER = _entry_order()
#: How far (as a sine) an edge-edge normal may lie outside the normal arc of either edge.
EDGE_CONE_TOL = 0.05


@njit(cache=True, inline="always")
def _segment_enters(frames, c, f, a0, a1, a2, e0, e1, e2, tol):
    """Whether some point of the segment a-e lies within ``tol`` of the inside of all six
    faces of contact element c (the segment clipped by the six planes, each widened by its
    warp, is not empty). The faces are tried in ENTRY_ORDER of its candidate face f: where
    a face's plane has the whole segment beyond it, it is most often one next to f, so
    the test ends early. The answer does not depend on the order."""
    lo = 0.0
    hi = 1.0
    for i in range(6):
        g = ENTRY_ORDER[f, i]
        da = beyond(frames, 6 * c + g, a0, a1, a2, tol)
        de = beyond(frames, 6 * c + g, e0, e1, e2, tol)
        if da > 0.0 and de > 0.0:
            return False
        if da > 0.0:
            lo = max(lo, da / (da - de))
        elif de > 0.0:
            hi = min(hi, da / (da - de))
    return lo <= hi


@njit(cache=True, inline="always")
def _in_edge_cone(frames, qa, qb, m0, m1, m2):
    """Whether the unit direction m (normal to the edge) lies within EDGE_CONE_TOL of the arc
    of outward normals a, b of the two faces qa, qb meeting at a convex edge: m = la a + lb b
    with la, lb >= 0 (Gauss map of the edge), i.e. m.a - (a.b) m.b and m.b - (a.b) m.a
    both >= -EDGE_CONE_TOL."""
    a0, a1, a2 = frames[qa, 3], frames[qa, 4], frames[qa, 5]
    b0, b1, b2 = frames[qb, 3], frames[qb, 4], frames[qb, 5]
    ab = a0 * b0 + a1 * b1 + a2 * b2
    ma = m0 * a0 + m1 * a1 + m2 * a2
    mb = m0 * b0 + m1 * b1 + m2 * b2
    return ma - ab * mb >= -EDGE_CONE_TOL and mb - ab * ma >= -EDGE_CONE_TOL


@njit(cache=True, inline="always")
def _edge_gap(a, u, q, g, m):
    """Signed distance between the lines a + s u and q + t g along their common normal
    turned to the side of the unit vector m (+inf where they are parallel): the edge-edge
    gap d of Feng et al. 2014 Eq. 12 without the segments' bounds. Each argument is a
    3-tuple (x, y, z)."""
    a0, a1, a2 = a
    u0, u1, u2 = u
    q0, q1, q2 = q
    g0, g1, g2 = g
    m0, m1, m2 = m
    n0 = u1 * g2 - u2 * g1
    n1 = u2 * g0 - u0 * g2
    n2 = u0 * g1 - u1 * g0
    nn = n0 * n0 + n1 * n1 + n2 * n2
    if nn <= 1e-6 * (u0 * u0 + u1 * u1 + u2 * u2) * (g0 * g0 + g1 * g1 + g2 * g2):
        return np.inf
    if n0 * m0 + n1 * m1 + n2 * m2 < 0.0:
        n0, n1, n2 = -n0, -n1, -n2
    return ((a0 - q0) * n0 + (a1 - q1) * n1 + (a2 - q2) * n2) / math.sqrt(nn)


@njit(cache=True, inline="always")
def _held_face(candidates, s, mesh, held):
    """The face (contact element 6 c + f) of a held target edge (global id ``held``; -1
    none) where it is not among the potential targets of record s and its element is here
    (binary search of mesh.gid by mesh.gid_order), else -1."""
    if held < 0:
        return -1
    gid, gid_order = mesh.gid, mesh.gid_order
    held_face = held // 4
    for j in range(candidates.shape[1]):
        fc = candidates[s, j]
        if fc < 0:
            break
        if 6 * gid[fc // 6] + fc % 6 == held_face:
            return -1
    g = held_face // 6
    lo, hi = 0, gid_order.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if gid[gid_order[mid]] < g:
            lo = mid + 1
        else:
            hi = mid
    if lo < gid_order.shape[0] and gid[gid_order[lo]] == g:
        return 6 * gid_order[lo] + held_face % 6
    return -1


@njit(cache=True)
def semi_edge_geometry(mesh, records, candidates, params):
    """Target edge, overlap, normal and slip of every semi-edge of ``records``
    (solver.cdem.contact.records.RecordArrays) on the contact elements of ``mesh`` (a
    ContactMesh; all three packed, solver.cdem.packed), among the edges of its potential target
    faces ``candidates`` (n, N_CANDIDATES; faces 6 c + f of the contact elements, -1 pads), with
    the indentation alpha and tolerance tol of ``params`` (ContactParams) (module docstring). A
    forming contact (``status`` OPEN: none loaded the last step) sets ``offset``, its depth
    beyond the tolerance less this step's approach, which the overlap leaves out while the
    contact lasts. A loaded contact also tests its last target's face where that is no longer
    among its potential targets (found by its global id, mesh.gid_order sorting mesh.gid): those
    are searched about the edge's first point, and the crossing point of a long edge moves away
    from it. Returns the deepest penetration -d - offset [m]."""
    mesh, records, params = mesh.value, records.value, params.value
    alpha, tol = params.alpha, params.tol
    x, du, ghost_x, ghost_du, base = mesh.x, mesh.du, mesh.ghost_x, mesh.ghost_du, mesh.base
    n_own, gid, active, frames = mesh.n_own, mesh.gid, mesh.active, mesh.frames
    centroid = mesh.centroid
    elem, face, vertex, target = records.elem, records.face, records.vertex, records.target
    status, overlap, normal, slip = records.status, records.overlap, records.normal, records.slip
    own_w, target_node, target_w = records.own_w, records.target_node, records.target_w
    target_elem, offset = records.target_elem, records.offset
    w_other = 0.25 * alpha
    w_vertex = 1.0 - alpha + w_other
    deepest = 0.0
    n_candidates = candidates.shape[1]
    tested = np.empty(n_candidates + 1, dtype=np.int64)
    entered = np.empty(n_candidates + 1, dtype=np.bool_)
    for s in range(elem.shape[0]):
        c = elem[s]
        f = face[s]
        v0 = vertex[s]
        held = target[s]
        loaded = status[s] != OPEN
        overlap[s] = 0.0
        target[s] = -1
        if not active[c, EDGE_NEIGHBOURS[f, v0]]:
            continue
        own_f = 6 * c + f
        own_g = 6 * c + EDGE_NEIGHBOURS[f, v0]
        v1 = (v0 + 1) % 4
        b = base[c]
        a0, a1, a2 = semi_spring_point(x, b, f, v0, alpha)
        e0, e1, e2 = semi_spring_point(x, b, f, v1, alpha)
        u0, u1, u2 = e0 - a0, e1 - a1, e2 - a2
        aa = u0 * u0 + u1 * u1 + u2 * u2
        best = -1
        best_d = -np.inf
        bs = bt = 0.0
        bn0 = bn1 = bn2 = 0.0
        bq0 = bq1 = 0
        n_tested = 0
        extra = _held_face(candidates, s, mesh, held) if loaded else -1
        for j in range(n_candidates + 1):
            fc = candidates[s, j] if j < n_candidates else extra
            if fc < 0:
                continue
            if (beyond(frames, fc, a0, a1, a2, tol) > 0.0
                    and beyond(frames, fc, e0, e1, e2, tol) > 0.0):
                continue
            t_elem = fc // 6
            i = index_in(tested, n_tested, t_elem)
            if i == n_tested:
                tested[i] = t_elem
                entered[i] = _segment_enters(frames, t_elem, fc - 6 * t_elem, a0, a1, a2, e0, e1,
                                             e2, tol)
                n_tested += 1
            if not entered[i]:
                continue
            t_face = fc - 6 * t_elem
            t_x = x if t_elem < n_own else ghost_x
            t_base = base[t_elem]
            for jj in range(4):
                if not active[t_elem, EDGE_NEIGHBOURS[t_face, jj]]:
                    continue
                q0 = t_base + FACES[t_face, jj]
                q1 = t_base + FACES[t_face, (jj + 1) % 4]
                g0 = t_x[q1, 0] - t_x[q0, 0]
                g1 = t_x[q1, 1] - t_x[q0, 1]
                g2 = t_x[q1, 2] - t_x[q0, 2]
                w0 = a0 - t_x[q0, 0]
                w1 = a1 - t_x[q0, 1]
                w2 = a2 - t_x[q0, 2]
                bb = u0 * g0 + u1 * g1 + u2 * g2
                cc = g0 * g0 + g1 * g1 + g2 * g2
                dd = u0 * w0 + u1 * w1 + u2 * w2
                ee = g0 * w0 + g1 * w1 + g2 * w2
                den = aa * cc - bb * bb
                if den <= 1e-6 * aa * cc:
                    continue
                ps = (bb * ee - cc * dd) / den
                if ps <= 1e-3 or ps >= 1.0 - 1e-3:
                    continue
                pt = (aa * ee - bb * dd) / den
                if pt <= 1e-3 or pt >= 1.0 - 1e-3:
                    continue
                n0 = u1 * g2 - u2 * g1
                n1 = u2 * g0 - u0 * g2
                n2 = u0 * g1 - u1 * g0
                inv = 1.0 / math.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
                n0 *= inv
                n1 *= inv
                n2 *= inv
                if ((t_x[q0, 0] - centroid[t_elem, 0]) * n0
                        + (t_x[q0, 1] - centroid[t_elem, 1]) * n1
                        + (t_x[q0, 2] - centroid[t_elem, 2]) * n2 < 0.0):
                    n0, n1, n2 = -n0, -n1, -n2
                p0 = a0 + ps * u0
                p1 = a1 + ps * u1
                p2 = a2 + ps * u2
                d = ((p0 - t_x[q0, 0] - pt * g0) * n0 + (p1 - t_x[q0, 1] - pt * g1) * n1
                     + (p2 - t_x[q0, 2] - pt * g2) * n2)
                if d >= -tol or d <= best_d:
                    continue
                if not (_in_edge_cone(frames, 6 * t_elem + t_face,
                                      6 * t_elem + EDGE_NEIGHBOURS[t_face, jj], n0, n1, n2)
                        and _in_edge_cone(frames, own_f, own_g, -n0, -n1, -n2)):
                    continue
                if not inside_element(frames, t_elem, p0, p1, p2, tol):
                    continue
                if 4 * (6 * gid[t_elem] + t_face) + jj != held:
                    t_du = du if t_elem < n_own else ghost_du
                    da0, da1, da2 = semi_spring_point(du, b, f, v0, alpha)
                    de0, de1, de2 = semi_spring_point(du, b, f, v1, alpha)
                    if _edge_gap((a0 - da0, a1 - da1, a2 - da2),
                                 (u0 - de0 + da0, u1 - de1 + da1, u2 - de2 + da2),
                                 (t_x[q0, 0] - t_du[q0, 0], t_x[q0, 1] - t_du[q0, 1],
                                  t_x[q0, 2] - t_du[q0, 2]),
                                 (g0 - t_du[q1, 0] + t_du[q0, 0], g1 - t_du[q1, 1] + t_du[q0, 1],
                                  g2 - t_du[q1, 2] + t_du[q0, 2]),
                                 (n0, n1, n2)) < -tol:
                        continue
                best, best_d = 4 * fc + jj, d
                bs, bt = ps, pt
                bn0, bn1, bn2 = n0, n1, n2
                bq0, bq1 = FACES[t_face, jj], FACES[t_face, (jj + 1) % 4]
        if best < 0:
            continue
        t_elem = best // 24
        target[s] = 4 * (6 * gid[t_elem] + (best // 4) % 6) + best % 4
        t_du = du if t_elem < n_own else ghost_du
        t_base = base[t_elem]
        for k in range(4):
            w = ((1.0 - bs) * (w_vertex if k == v0 else w_other)
                 + bs * (w_vertex if k == v1 else w_other))
            own_w[s, k] = w
        for k in range(3):
            moved = 0.0
            for m in range(4):
                moved += own_w[s, m] * du[b + FACES[f, m], k]
            slip[s, k] = moved - ((1.0 - bt) * t_du[t_base + bq0, k]
                                          + bt * t_du[t_base + bq1, k])
        if not loaded:
            offset[s] = max(0.0, slip[s, 0] * bn0 + slip[s, 1] * bn1
                                    + slip[s, 2] * bn2 - best_d - tol)
        if -best_d - tol <= offset[s]:
            continue
        overlap[s] = -best_d - tol - offset[s]
        deepest = max(deepest, overlap[s] + tol)
        normal[s, 0] = bn0
        normal[s, 1] = bn1
        normal[s, 2] = bn2
        target_elem[s] = t_elem
        target_node[s, 0] = 8 * t_elem + bq0
        target_node[s, 1] = 8 * t_elem + bq1
        target_node[s, 2] = -1
        target_node[s, 3] = -1
        target_w[s, 0] = 1.0 - bt
        target_w[s, 1] = bt
        target_w[s, 2] = 0.0
        target_w[s, 3] = 0.0
    return deepest
