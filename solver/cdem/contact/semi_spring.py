"""Semi-spring geometry: the target face of each semi-spring among its potential targets,
with the overlap, normal, relative increment and share the force law needs (Feng et al.
2014, sections 4.1-4.2 and 5). The reason for each rule, and the test that pins it, is in
docs/contact.md.

Target (:func:`semi_spring_geometry`). A candidate face f of element g takes part when

* (a) the point's plane distance delta = (x_ss - x_f) . n_f lies below the tolerance, its
  projection falls inside the face (two triangles, barycentric test), and a negative
  delta counts only when the point lies inside the element ((x_ss - x_c) . n_c <= tol for
  its six faces, Feng et al. 2014 Eq. 8), each plane test widened by the face's warp;
* (b) f is the element's nearest active face by the signed distance to the bilinear face
  x(xi, eta) (the largest delta over its active faces); where another active face is
  nearer, that face is the target instead, whether a potential target or not.

Among the faces of one body (glued elements, solver.cdem.bodies) the largest delta counts;
between bodies the deepest penetration, or the largest delta where the point is in none
(:func:`_deeper`). In contact when delta < 0; the normal is that of the bilinear face at
the closest point q, and the reaction spreads over the face's four nodes with the
shape-function weights at q.

Facing. A contact forms only on a face turned toward the point's own face (within 60 deg,
N_g . o <= -FACING), and a loaded contact passes to another element only onto such a face
or onto one continuing the face it was on (N_g . n_last >= FACING). Where the nearest face
is turned away, the target is the nearest face turned toward it if the point lies less
than FACING_REACH times its own face's radius below it; otherwise the semi-spring stays
open. Within one element a loaded contact follows the nearest face, but leaves a facing
face for a nearer one turned away only where that became nearer within the step's motion.

Offset. A contact forms with the overlap its approach made: where the point already lay
below the target at the step's start, the depth beyond this step's approach
-(u - u_t) . n is kept as the ``offset`` and the overlap is -delta - offset; the contact
opens where the point comes back to that depth. A loaded contact whose target passes to
another element continues from its last overlap: the offset takes any excess over the
last overlap and this step's approach beyond the tolerance.

Share (Feng et al. 2014, section 5). 1/2 when the semi-spring of the target face at the
same place (the target's vertex nearest to v, within alpha (L_v + L_w) + tol) is in
contact with the own face too, else 1, so that coincident faces carry the contact once.
It is decided when the contact forms and again only when the semi-spring comes to or leaves
a place on a face turned toward its own; the contact then keeps its stored energy (the
overlap becomes delta sqrt(w_old / w_new), the offset takes the difference, the tangential
force scales by the same factor), and where the offset cannot take it the share stays.
Between, the spring constant w K_n stays fixed (Feng et al. 2014, Eq. 13) and the force
derives from the stored energy w K_n delta^2 / 2.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from solver.cdem.contact.frames import (beyond, index_in, inside_element, plane_distance,
                                        semi_spring_point)
from solver.mesh.topology import FACES

#: |bilinear - plane distance| <= WARP_BOUND x warp (_nearest_face).
WARP_BOUND = 16.0
#: Faces turned toward each other within 60 deg: N_g . o <= -FACING.
FACING = 0.5
#: How deep (times the radius of its own face) a semi-spring may lie below the nearest face
#: that faces its own where a face that does not is nearer.
FACING_REACH = 0.1


@njit(cache=True, inline="always")
def _deeper(d, than):
    """Whether a body at signed distance d is the target rather than one at ``than``
    (semi_spring_geometry): a penetration beats no penetration, the deeper penetration
    the shallower, and without penetration the larger distance."""
    if d < 0.0:
        return than >= 0.0 or d < than
    return than >= 0.0 and d > than


@njit(cache=True, inline="always")
def _area(a0, a1, a2, b0, b1, b2, c0, c1, c2, n0, n1, n2):
    """Twice the signed area of triangle a, b, c seen along the normal n."""
    u0, u1, u2 = b0 - a0, b1 - a1, b2 - a2
    v0, v1, v2 = c0 - a0, c1 - a1, c2 - a2
    return (u1 * v2 - u2 * v1) * n0 + (u2 * v0 - u0 * v2) * n1 + (u0 * v1 - u1 * v0) * n2


@njit(cache=True, inline="always")
def _plane_admits(frames, t_elem, fc, p0, p1, p2, tol):
    """The tests of _face_accepts on face fc of contact element t_elem that need only the
    faces' planes: (whether p lies within ``tol`` above the face's plane or, below it,
    inside the element, and projects into the face's circumscribed disk (centre, radius),
    the plane distance delta). The semi-spring search runs them before _face_contact: most
    potential targets fail them, and the full test costs several times more."""
    delta = plane_distance(frames, fc, p0, p1, p2)
    if beyond(frames, fc, p0, p1, p2, tol) > 0.0:
        return False, delta
    if delta < 0.0 and not inside_element(frames, t_elem, p0, p1, p2, tol):
        return False, delta
    if ((p0 - frames[fc, 0]) ** 2 + (p1 - frames[fc, 1]) ** 2 + (p2 - frames[fc, 2]) ** 2
            - delta * delta > (1.0 + 1e-6) * frames[fc, 7]):
        return False, delta
    return True, delta


@njit(cache=True, inline="always")
def _face_accepts(frames, t_x, t_base, t_elem, t_face, p0, p1, p2, tol, admitted=False):
    """Whether face t_face of contact element t_elem (nodes t_x[t_base + a]) may be the
    target of the point p (case (a) of the module docstring; which face of the element is
    the nearest is _face_contact's test): (accepted, plane distance delta, a first guess of the
    point's face coordinates xi, eta from the triangle it projects into). A point whose
    projection lies outside the face's circumscribed disk (centre, radius) is rejected
    before the triangles are tried: the projected face lies within it. ``admitted``: the
    caller ran _plane_admits on the face already, and it passed."""
    fc = 6 * t_elem + t_face
    if admitted:
        delta = plane_distance(frames, fc, p0, p1, p2)
    else:
        admitted, delta = _plane_admits(frames, t_elem, fc, p0, p1, p2, tol)
        if not admitted:
            return False, delta, 0.0, 0.0
    n0, n1, n2 = frames[fc, 3], frames[fc, 4], frames[fc, 5]
    q0 = p0 - delta * n0
    q1 = p1 - delta * n1
    q2 = p2 - delta * n2
    ri = t_base + FACES[t_face, 0]
    for tri in range(2):
        rj = t_base + FACES[t_face, 1 + tri]
        rk = t_base + FACES[t_face, 2 + tri]
        total = _area(t_x[ri, 0], t_x[ri, 1], t_x[ri, 2], t_x[rj, 0], t_x[rj, 1], t_x[rj, 2],
                      t_x[rk, 0], t_x[rk, 1], t_x[rk, 2], n0, n1, n2)
        wi = _area(q0, q1, q2, t_x[rj, 0], t_x[rj, 1], t_x[rj, 2],
                   t_x[rk, 0], t_x[rk, 1], t_x[rk, 2], n0, n1, n2) / total
        wj = _area(t_x[ri, 0], t_x[ri, 1], t_x[ri, 2], q0, q1, q2,
                   t_x[rk, 0], t_x[rk, 1], t_x[rk, 2], n0, n1, n2) / total
        wk = 1.0 - wi - wj
        if wi >= -1e-9 and wj >= -1e-9 and wk >= -1e-9:
            if tri == 0:
                return True, delta, wj + wk - wi, wk - wi - wj
            return True, delta, wj - wi - wk, wj + wk - wi
    return False, delta, 0.0, 0.0


@njit(cache=True, inline="always")
def _bilinear_projection(t_x, t_base, t_face, p0, p1, p2, xi, eta):
    """Closest point q of the bilinear face t_face (nodes A, B, C, D =
    t_x[t_base + FACES[t_face]], q = a + b xi + c eta + d xi eta) to p: Gauss-Newton from
    (xi, eta), exact in one iteration on a parallelogram (two are taken), clamped to the
    face. Returns (xi, eta, q, unit normal q_xi x q_eta), the normal outward (that of
    solver.cdem.hex8.quad_normal at the face centre)."""
    ra, rb = t_base + FACES[t_face, 0], t_base + FACES[t_face, 1]
    rc, rd = t_base + FACES[t_face, 2], t_base + FACES[t_face, 3]
    a0 = 0.25 * (t_x[ra, 0] + t_x[rb, 0] + t_x[rc, 0] + t_x[rd, 0]) - p0
    a1 = 0.25 * (t_x[ra, 1] + t_x[rb, 1] + t_x[rc, 1] + t_x[rd, 1]) - p1
    a2 = 0.25 * (t_x[ra, 2] + t_x[rb, 2] + t_x[rc, 2] + t_x[rd, 2]) - p2
    b0 = 0.25 * (t_x[rb, 0] + t_x[rc, 0] - t_x[ra, 0] - t_x[rd, 0])
    b1 = 0.25 * (t_x[rb, 1] + t_x[rc, 1] - t_x[ra, 1] - t_x[rd, 1])
    b2 = 0.25 * (t_x[rb, 2] + t_x[rc, 2] - t_x[ra, 2] - t_x[rd, 2])
    c0 = 0.25 * (t_x[rc, 0] + t_x[rd, 0] - t_x[ra, 0] - t_x[rb, 0])
    c1 = 0.25 * (t_x[rc, 1] + t_x[rd, 1] - t_x[ra, 1] - t_x[rb, 1])
    c2 = 0.25 * (t_x[rc, 2] + t_x[rd, 2] - t_x[ra, 2] - t_x[rb, 2])
    d0 = 0.25 * (t_x[ra, 0] + t_x[rc, 0] - t_x[rb, 0] - t_x[rd, 0])
    d1 = 0.25 * (t_x[ra, 1] + t_x[rc, 1] - t_x[rb, 1] - t_x[rd, 1])
    d2 = 0.25 * (t_x[ra, 2] + t_x[rc, 2] - t_x[rb, 2] - t_x[rd, 2])
    for _ in range(2):
        t0, t1, t2 = b0 + d0 * eta, b1 + d1 * eta, b2 + d2 * eta
        e0, e1, e2 = c0 + d0 * xi, c1 + d1 * xi, c2 + d2 * xi
        r0 = a0 + b0 * xi + c0 * eta + d0 * xi * eta
        r1 = a1 + b1 * xi + c1 * eta + d1 * xi * eta
        r2 = a2 + b2 * xi + c2 * eta + d2 * xi * eta
        g00 = t0 * t0 + t1 * t1 + t2 * t2
        g01 = t0 * e0 + t1 * e1 + t2 * e2
        g11 = e0 * e0 + e1 * e1 + e2 * e2
        h0 = t0 * r0 + t1 * r1 + t2 * r2
        h1 = e0 * r0 + e1 * r1 + e2 * r2
        det = g00 * g11 - g01 * g01
        xi = min(1.0, max(-1.0, xi - (g11 * h0 - g01 * h1) / det))
        eta = min(1.0, max(-1.0, eta - (g00 * h1 - g01 * h0) / det))
    t0, t1, t2 = b0 + d0 * eta, b1 + d1 * eta, b2 + d2 * eta
    e0, e1, e2 = c0 + d0 * xi, c1 + d1 * xi, c2 + d2 * xi
    n0 = t1 * e2 - t2 * e1
    n1 = t2 * e0 - t0 * e2
    n2 = t0 * e1 - t1 * e0
    inv = 1.0 / math.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
    q0 = a0 + b0 * xi + c0 * eta + d0 * xi * eta + p0
    q1 = a1 + b1 * xi + c1 * eta + d1 * xi * eta + p1
    q2 = a2 + b2 * xi + c2 * eta + d2 * xi * eta + p2
    return xi, eta, q0, q1, q2, n0 * inv, n1 * inv, n2 * inv


@njit(cache=True, inline="always")
def _nearest_face(frames, t_x, t_base, t_elem, active, p0, p1, p2):
    """The active face g of contact element t_elem with the largest signed distance
    (p - q_g) . n_g to its bilinear face (the lowest g of a tie). Only the faces that could
    be the nearest are projected: d_g = (p - q_g) . n_g differs from the plane distance
    z_g by at most h_g + |p - q_g| |n_g - N_g| (z_q within the warp h_g of the plane, N_g
    its normal), and for a point of the element, within a diameter of q_g, with the tilt
    |n_g - N_g| at most about 4 h_g over the face's edge, that is well within WARP_BOUND h_g;
    a face with z_g + WARP_BOUND h_g below the largest z_k - WARP_BOUND h_k (less round-off)
    cannot be the nearest. Where a single face is left, it is the nearest without a
    projection (on flat faces, h = 0, the usual case)."""
    lowest = -np.inf
    for g in range(6):
        if active[t_elem, g]:
            q = 6 * t_elem + g
            lowest = max(lowest, plane_distance(frames, q, p0, p1, p2)
                         - WARP_BOUND * frames[q, 6])
    lowest -= 2e-12 * (abs(p0) + abs(p1) + abs(p2) + 1.0)
    left = 0
    g_near = -1
    for g in range(6):
        q = 6 * t_elem + g
        if active[t_elem, g] and (plane_distance(frames, q, p0, p1, p2)
                                  + WARP_BOUND * frames[q, 6] >= lowest):
            left += 1 << g
            g_near = g
    if left == 1 << g_near:
        return g_near
    nearest = -np.inf
    for g in range(6):
        if not left & (1 << g):
            continue
        _, _, r0, r1, r2, m0, m1, m2 = _bilinear_projection(t_x, t_base, g, p0, p1, p2, 0.0,
                                                            0.0)
        dg = (p0 - r0) * m0 + (p1 - r1) * m1 + (p2 - r2) * m2
        if dg > nearest:
            nearest, g_near = dg, g
    return g_near


@njit(cache=True, inline="always")
def _faces(frames, q, r):
    """Whether faces q and r are turned toward each other (N_q . N_r <= -FACING)."""
    return (frames[q, 3] * frames[r, 3] + frames[q, 4] * frames[r, 4]
            + frames[q, 5] * frames[r, 5]) <= -FACING


@njit(cache=True, inline="always")
def _nearest_facing_face(frames, t_x, t_base, t_elem, active, own, p0, p1, p2):
    """(g, d_g): the active face g of contact element t_elem turned toward face ``own``
    (_faces) with the largest signed distance d_g = (p - q_g) . n_g to its bilinear face
    (-1, -inf where none is)."""
    g_near = -1
    nearest = -np.inf
    for g in range(6):
        if not active[t_elem, g] or not _faces(frames, 6 * t_elem + g, own):
            continue
        _, _, r0, r1, r2, m0, m1, m2 = _bilinear_projection(t_x, t_base, g, p0, p1, p2, 0.0,
                                                            0.0)
        dg = (p0 - r0) * m0 + (p1 - r1) * m1 + (p2 - r2) * m2
        if dg > nearest:
            nearest, g_near = dg, g
    return g_near, nearest


@njit(cache=True, inline="always")
def _relative_step(t_du, t_base, t_face, u0, u1, u2):
    """|u - u_t|: the length of the point's increment u less the mean increment u_t of the
    nodes of face t_face of the element at rows t_base (``t_du``; the semi-spring weights with
    alpha = 1)."""
    m0, m1, m2 = semi_spring_point(t_du, t_base, t_face, 0, 1.0)
    return math.sqrt((u0 - m0) ** 2 + (u1 - m1) ** 2 + (u2 - m2) ** 2)


@njit(cache=True, inline="always")
def _one_face_contact(frames, t_x, t_base, t_elem, t_face, p0, p1, p2, tol, admitted):
    """(accepted by _face_accepts, delta, xi, eta, q, n) of face t_face and the point p."""
    accepted, _, xi, eta = _face_accepts(frames, t_x, t_base, t_elem, t_face, p0, p1, p2, tol,
                                         admitted)
    if not accepted:
        return False, np.inf, xi, eta, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    xi, eta, q0, q1, q2, n0, n1, n2 = _bilinear_projection(t_x, t_base, t_face, p0, p1, p2, xi,
                                                           eta)
    delta = (p0 - q0) * n0 + (p1 - q1) * n1 + (p2 - q2) * n2
    return True, delta, xi, eta, q0, q1, q2, n0, n1, n2


@njit(cache=True, inline="always")
def _face_contact(frames, active, t_x, t_base, t_elem, t_face, p0, p1, p2, tol, admitted):
    """The target face of the point p for the potential target face t_face of contact
    element t_elem: t_face if _face_accepts takes it and p lies within ``tol`` of its
    bilinear face, above it or with t_face the element's nearest active face
    (_nearest_face); where p lies below t_face's bilinear face and another face g of the
    element is nearer, g, if _face_accepts takes it (a point inside an element is in contact
    with its nearest face whichever of the element's faces are potential targets). Returns
    (accepted, the signed distance delta = (p - q) . n, xi, eta, q, n of its closest point
    q on the bilinear face (_bilinear_projection), the face). ``admitted``: t_face passed
    _plane_admits already."""
    accepted, delta, xi, eta, q0, q1, q2, n0, n1, n2 = _one_face_contact(
        frames, t_x, t_base, t_elem, t_face, p0, p1, p2, tol, admitted)
    if accepted and delta < 0.0:
        g = _nearest_face(frames, t_x, t_base, t_elem, active, p0, p1, p2)
        if g != t_face:
            t_face = g
            accepted, delta, xi, eta, q0, q1, q2, n0, n1, n2 = _one_face_contact(
                frames, t_x, t_base, t_elem, g, p0, p1, p2, tol, False)
            accepted = accepted and delta < 0.0
    return accepted and delta <= tol, delta, xi, eta, q0, q1, q2, n0, n1, n2, t_face


@njit(cache=True, inline="always")
def _place(x, t_x, b, t_base, frames, c, f, v, t_elem, t_face, alpha, tol):
    """(at a place, w) of the semi-spring at vertex v of face f of element c with target
    face t_face of element t_elem (nodes t_x[t_base + a]): w the vertex of face t_face
    nearest to v, at a place when it lies within alpha (L_v + L_w) + tol of it (L the
    distance face centre - vertex)."""
    rv = b + FACES[f, v]
    w = 0
    d_min = np.inf
    for k in range(4):
        r = t_base + FACES[t_face, k]
        d2 = ((t_x[r, 0] - x[rv, 0]) ** 2 + (t_x[r, 1] - x[rv, 1]) ** 2
              + (t_x[r, 2] - x[rv, 2]) ** 2)
        if d2 < d_min:
            d_min, w = d2, k
    qf = 6 * c + f
    qt = 6 * t_elem + t_face
    rw = t_base + FACES[t_face, w]
    l_v = math.sqrt((x[rv, 0] - frames[qf, 0]) ** 2 + (x[rv, 1] - frames[qf, 1]) ** 2
                    + (x[rv, 2] - frames[qf, 2]) ** 2)
    l_w = math.sqrt((t_x[rw, 0] - frames[qt, 0]) ** 2 + (t_x[rw, 1] - frames[qt, 1]) ** 2
                    + (t_x[rw, 2] - frames[qt, 2]) ** 2)
    reach = alpha * (l_v + l_w) + tol
    return d_min <= reach * reach, w


@njit(cache=True, inline="always")
def _partner_in_contact(mesh, t_x, b, t_base, c, f, t_elem, t_face, w, params):
    """Whether the semi-spring of face t_face of element t_elem (nodes t_x[t_base + a]) at
    its vertex w is in contact with face f of own element c (nodes mesh.x[b + a]): face f
    accepts its point with a negative distance (the partner's own test)."""
    p0, p1, p2 = semi_spring_point(t_x, t_base, t_face, w, params.alpha)
    accepted, delta, _, _, _, _, _, _, _, _, g = _face_contact(
        mesh.frames, mesh.active, mesh.x, b, c, f, p0, p1, p2, params.tol, False)
    return accepted and delta < 0.0 and g == f


@njit(cache=True)
def semi_spring_geometry(mesh, records, candidates, params):
    """Target face, overlap, normal, slip and share of every semi-spring of ``records``
    (solver.cdem.contact.records.RecordArrays) on the contact elements of ``mesh`` (a
    ContactMesh; all three packed, solver.cdem.packed), with its potential targets
    ``candidates`` (n, N_CANDIDATES; faces 6 c + f of the contact elements, -1 pads) and the
    indentation alpha and tolerance tol of ``params`` (ContactParams) (module docstring): per
    body (mesh.body: each contact element's body, by any numbering) the face of the largest
    signed distance, and of those the deepest contact, or where the point is in contact with no
    body the nearest face within the tolerance. Open semi-springs get overlap 0 and share 0
    (target: the face within the tolerance, or -1); a share above 0 is that of a contact already
    formed and is kept while ``placed`` (whether the semi-spring is at a place) stays the same.
    A forming contact sets ``offset``, its depth beyond this step's approach (module docstring),
    which the overlap leaves out while the contact lasts. A contact forms, or passes to another
    element, only on a face turned toward the point's own face or (passing) continuing the face
    of its last ``normal`` (module docstring). Returns the deepest overlap [m].

    A potential target is passed over where its plane bound (plane distance + WARP_BOUND
    warp, _nearest_face) cannot raise its body's largest delta, and where the point lies
    outside that body (its largest delta >= 0) or the target's element is one the point
    lies inside of (an accepted face with delta < 0, whose element's nearest face is then
    known): a face below the point leads to the element's nearest face, no higher than the
    body's largest delta in either case."""
    mesh, records, params = mesh.value, records.value, params.value
    alpha, tol = params.alpha, params.tol
    x, du, ghost_x, ghost_du, base = mesh.x, mesh.du, mesh.ghost_x, mesh.ghost_du, mesh.base
    n_own, gid, active, body, frames = mesh.n_own, mesh.gid, mesh.active, mesh.body, mesh.frames
    elem, face, vertex, target = records.elem, records.face, records.vertex, records.target
    f_t, overlap, normal, slip = records.f_t, records.overlap, records.normal, records.slip
    own_w, target_node, target_w = records.own_w, records.target_node, records.target_w
    target_elem, share, placed = records.target_elem, records.share, records.placed
    offset = records.offset
    w_other = 0.25 * alpha
    w_vertex = 1.0 - alpha + w_other
    deepest = 0.0
    m = candidates.shape[1]
    b_body = np.empty(m, dtype=np.int64)
    b_face = np.empty(m, dtype=np.int64)
    b_d = np.empty(m)
    b_geo = np.empty((m, 5))
    inside = np.empty(m, dtype=np.int64)
    for s in range(elem.shape[0]):
        c = elem[s]
        b = base[c]
        f = face[s]
        v = vertex[s]
        p0, p1, p2 = semi_spring_point(x, b, f, v, alpha)
        n_bodies = 0
        n_inside = 0
        round_off = 2e-12 * (abs(p0) + abs(p1) + abs(p2) + 1.0)
        for j in range(m):
            fc = candidates[s, j]
            if fc < 0:
                break
            t_elem = fc // 6
            admitted, plane = _plane_admits(frames, t_elem, fc, p0, p1, p2, tol)
            if not admitted:
                continue
            i = index_in(b_body, n_bodies, body[t_elem])
            k = index_in(inside, n_inside, t_elem)
            if ((k < n_inside or (i < n_bodies and b_d[i] >= 0.0))
                    and b_d[i] >= plane + WARP_BOUND * frames[fc, 6] + round_off):
                continue
            t_x = x if t_elem < n_own else ghost_x
            accepted, d, c_xi, c_eta, _, _, _, c_n0, c_n1, c_n2, g = _face_contact(
                frames, active, t_x, base[t_elem], t_elem, fc - 6 * t_elem, p0, p1, p2, tol, True)
            if not accepted:
                continue
            if d < 0.0 and k == n_inside:
                inside[n_inside] = t_elem
                n_inside += 1
            if i == n_bodies:
                n_bodies += 1
                b_body[i] = body[t_elem]
            elif d <= b_d[i]:
                continue
            b_face[i] = 6 * t_elem + g
            b_d[i] = d
            b_geo[i, 0], b_geo[i, 1], b_geo[i, 2], b_geo[i, 3], b_geo[i, 4] = (
                c_xi, c_eta, c_n0, c_n1, c_n2)
        best = -1
        for i in range(n_bodies):
            if best < 0 or _deeper(b_d[i], b_d[best]):
                best = i
        delta = -np.inf
        xi = eta = n0 = n1 = n2 = 0.0
        if best >= 0:
            delta = b_d[best]
            xi, eta, n0, n1, n2 = (b_geo[best, 0], b_geo[best, 1], b_geo[best, 2],
                                   b_geo[best, 3], b_geo[best, 4])
            best = b_face[best]
        last_overlap = overlap[s]
        last_target = target[s]
        last_elem = last_target // 6
        overlap[s] = 0.0
        if best < 0:
            target[s] = -1
            share[s] = 0.0
            placed[s] = False
            continue
        u0, u1, u2 = semi_spring_point(du, b, f, v, alpha)
        t_elem = best // 6
        t_face = best - 6 * t_elem
        t_x = x if t_elem < n_own else ghost_x
        t_du = du if t_elem < n_own else ghost_du
        t_base = base[t_elem]
        own = 6 * c + f
        opens = delta >= 0.0
        if not opens and not _faces(frames, best, own):
            continuing = (frames[best, 3] * normal[s, 0] + frames[best, 4] * normal[s, 1]
                          + frames[best, 5] * normal[s, 2]) >= FACING
            if share[s] == 0.0 or (last_elem != gid[t_elem] and not continuing):
                g, dg = _nearest_facing_face(frames, t_x, t_base, t_elem, active, own, p0,
                                             p1, p2)
                opens = g < 0 or -dg > FACING_REACH * math.sqrt(frames[own, 7])
                if not opens:
                    t_face = g
                    accepted, delta, xi, eta, _, _, _, n0, n1, n2 = _one_face_contact(
                        frames, t_x, t_base, t_elem, g, p0, p1, p2, tol, False)
                    opens = not accepted or delta >= 0.0
            elif (last_elem == gid[t_elem] and last_target % 6 != t_face
                  and _faces(frames, 6 * t_elem + last_target % 6, own)):
                g, dg = _nearest_facing_face(frames, t_x, t_base, t_elem, active, own, p0,
                                             p1, p2)
                if g >= 0 and delta - dg > tol + _relative_step(t_du, t_base, t_face, u0, u1, u2):
                    accepted, d, g_xi, g_eta, _, _, _, g_n0, g_n1, g_n2 = _one_face_contact(
                        frames, t_x, t_base, t_elem, g, p0, p1, p2, tol, False)
                    if accepted and d < 0.0:
                        t_face, delta, xi, eta, n0, n1, n2 = g, d, g_xi, g_eta, g_n0, g_n1, g_n2
        target[s] = 6 * gid[t_elem] + t_face
        if opens:
            share[s] = 0.0
            placed[s] = False
            continue
        weights = (0.25 * (1.0 - xi) * (1.0 - eta), 0.25 * (1.0 + xi) * (1.0 - eta),
                   0.25 * (1.0 + xi) * (1.0 + eta), 0.25 * (1.0 - xi) * (1.0 + eta))
        m0 = m1 = m2 = 0.0
        for k in range(4):
            r = t_base + FACES[t_face, k]
            m0 += weights[k] * t_du[r, 0]
            m1 += weights[k] * t_du[r, 1]
            m2 += weights[k] * t_du[r, 2]
        d0, d1, d2 = u0 - m0, u1 - m1, u2 - m2
        if share[s] == 0.0:
            offset[s] = max(0.0, d0 * n0 + d1 * n1 + d2 * n2 - delta)
        elif last_elem != gid[t_elem]:
            jump = -delta - offset[s] - (last_overlap - (d0 * n0 + d1 * n1 + d2 * n2))
            if jump > tol:
                offset[s] += jump
        if -delta <= offset[s]:
            share[s] = 0.0
            placed[s] = False
            continue
        overlap[s] = -delta - offset[s]
        normal[s, 0] = n0
        normal[s, 1] = n1
        normal[s, 2] = n2
        target_elem[s] = t_elem
        at_place, w = _place(x, t_x, b, t_base, frames, c, f, v, t_elem, t_face, alpha, tol)
        turned = last_elem == gid[t_elem] and last_target != target[s]
        if share[s] == 0.0 or (at_place != placed[s] and not turned
                                       and _faces(frames, 6 * t_elem + t_face, own)):
            decided = 0.5 if at_place and _partner_in_contact(
                mesh, t_x, b, t_base, c, f, t_elem, t_face, w, params) else 1.0
            if share[s] == 0.0:
                share[s] = decided
            elif decided != share[s]:
                kept = overlap[s] * math.sqrt(share[s] / decided)
                if offset[s] + overlap[s] - kept >= 0.0:
                    offset[s] += overlap[s] - kept
                    overlap[s] = kept
                    for k in range(3):
                        f_t[s, k] *= math.sqrt(share[s] / decided)
                    share[s] = decided
        placed[s] = at_place
        deepest = max(deepest, overlap[s])
        for k in range(4):
            own_w[s, k] = w_vertex if k == v else w_other
            target_node[s, k] = 8 * t_elem + FACES[t_face, k]
            target_w[s, k] = weights[k]
        slip[s, 0] = d0
        slip[s, 1] = d1
        slip[s, 2] = d2
    return deepest
