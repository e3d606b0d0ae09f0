"""Contact geometry: the target of each semi-spring (a face) and of each semi-edge (an edge)
among its potential targets, with the overlap, normal and relative increment the force law
needs (Feng et al. 2014, sections 3-4).

Contact elements are a rank's own active elements (0 .. n_own - 1, nodes in the model's
arrays ``x``, ``du`` at rows base[c] + a) followed by the ghost elements received from
neighbours (nodes in ``gx``, ``gdu`` at rows base[c] + a). A contact node is 8 c + a.

Semi-spring (Feng et al. 2014 Eq. 3): the vertex v of face f indented into the face,
x_ss = (1 - alpha) x_v + alpha x_c (x_c the face centre, so |x_ss - x_v| = alpha L), i.e.
weights (1 - alpha) + alpha/4 on the vertex and alpha/4 on the other three face nodes. Its
target is the candidate face with

* (a) signed distance delta = (x_ss - x_f) . n_f below the search tolerance and the
  projection x_ss - delta n_f inside the face (two triangles, barycentric test), where a
  negative delta counts only if the semi-spring lies inside the target element
  ((x_ss - x_g) . n_g <= tol for all six faces g, Feng et al. 2014 Eq. 8),
* among the faces of one body (glued elements, solver.cdem.bodies), the largest signed
  distance delta = (x_ss - q) . n to the closest point q of the bilinear face x(xi, eta)
  (its four nodes with the weights of the hexahedron's face shape functions), below the
  tolerance too; between bodies, the smallest negative delta (the body the point lies
  deepest in), or the largest delta where it lies in none; n is the normal of the
  bilinear face at q. In
  contact when delta < 0, overlap -delta, the reaction spread over the four face nodes with
  the shape-function weights. (A projection onto one triangle of the face took its overlap
  from the face's plane and pushed through three nodes; on a warped face the two disagree
  and the contact did work it did not book.) A face with delta < 0 counts only if it is
  the target element's nearest contact-capable face by that same distance (the largest
  delta_g over its active faces g; case (b) of section 4.2: the nearest face of the block,
  and a face glued to another element of the block is none; were it counted, a point
  beside it would lose its target and sink unresisted until an open face became the
  nearest, deep at once); where another active face of the element is nearer, that face
  is the target instead, whether a potential target or not (a point that sank into an
  element whose nearest face was not among its 8 potential targets had no target, and
  became a contact 1.4 m deep at once in the coarse Jiweishan runout when the nearest face
  changed to a potential one). The overlap is then the point's distance to the element's
  boundary, continuous where the nearest face changes. Chosen by the faces' planes, the
  nearest face changed where the planes were equally far but the bilinear faces, each
  within its warp of its plane, were not: the overlap jumped by up to the sum of the two
  warps (the coarse Jiweishan runout: 2 m at once between faces warped by 1.1 and 2.1 m).
  Within a body the largest delta approximates the distance to the body's surface (near
  an edge of the body that surface is a neighbour's face, and an element's own active
  faces can be far: a point just inside it across a glued face is "deep" in it). Between
  bodies it did not: a face of another body the point lay just outside of, within the
  tolerance (the coincident face of the neighbour a block broke from, at the base of the
  fragmenting mass), or in less deep, masked its contact with a body it had sunk into
  (the valley floor): the point sank unresisted and became a contact as deep as it had
  sunk once it left the other face, with a stored energy w K_n delta^2 / 2 no motion paid
  for, or a deep contact vanished with its stored energy when the other face came within
  the tolerance. Level 2 of the Jiweishan resolution study (16 x 6 x 2 cells in the mass)
  formed 3600 semi-spring contacts so, up to 1.8 m deep, with 6.3e11 J, 1.2 % of the
  gravity work (3e11 J vanished the other way). Taking the deepest body, the overlap is
  the largest of the bodies' depths, continuous also where the target passes from one
  body to another (at equal depths).

The tests above that compare a point with a face's plane (above the face, inside the
element, the semi-edge's segment entering the element and its point P inside it) widen the
tolerance of each face by its warp h: the plane through the face centre normal to the two
diagonals has the four vertices at heights +h, -h, +h, -h and the bilinear face at
h xi eta, so the face lies within h of it. On a warped face the overlap (from the bilinear
face) and the tests (from the plane) otherwise disagreed by up to h: a point below the
bilinear face but more than the tolerance above the plane had no target, and became a
contact only once it reached the plane, already as deep as the face's warp there, with a
stored energy w K_n delta^2 / 2 no motion paid for; leaving, it took it away again. A
block landing near a corner of a face warped by 0.35 % of its diagonal gained 160 % of the
gravity work so; in the coarse Jiweishan runout (faces warped by 0.1-0.9 % of their
diagonal) such contacts stored 1.9e12 J on forming, as much again came back on leaving, and
semi-edges whose point P left the element by a face's plane at depth 1.3e12 J.
* its share w of the contact: 1/2 when the semi-spring of the target face at the same place
  (the target's vertex nearest to v, within alpha (L_v + L_w) plus the tolerance) is in
  contact with face f too, else 1. Where two faces meet aligned, each place then holds two
  semi-springs; each carries half the force and half the characteristic area (Feng et al.
  2014, section 5), so coincident faces carry the contact once. The share is decided when
  the contact forms (the first step with an overlap) and again only when the semi-spring
  comes to or leaves a place (the vertex w within reach or not: the faces slid past each
  other); it is 0 while the semi-spring is open. Between, the spring constant w K_n of the
  loaded spring stays fixed (Feng et al. 2014, Eq. 13), and with the overlap delta (the
  distance to the nearest face, continuous where the nearest face changes) the force
  w K_n delta n derives from the stored energy w K_n delta^2 / 2. A share re-decided at
  every step also changed where only the target did, at the same place: where the nearest
  face of the target element turned from its top to its side (the partner is looked for
  on the target face), or where a point over a node of glued elements went from one to the
  other (each holds its own semi-spring at the node, only one of them under the point);
  the stored energy then jumped by (w_new - w_old) K_n delta^2 / 2 that no motion paid for.
  For the same reason the share stays as it is in the step its target turns to another
  face of the same element, and while its target face is not turned toward its own (a
  point of the base near a block's edge, passed to the block's side face as it sank deeper
  than its distance to that side, left the place of the bottom face's semi-spring and
  doubled its stored energy: a cube landing over a node of the base booked 9.6 % of its
  gravity work so). Where the share of a loaded contact does change (it comes to or leaves
  a place), the contact keeps its stored energy: its overlap becomes delta sqrt(w_old /
  w_new), the offset taking the difference, and its tangential force is scaled by the
  same factor; where the offset cannot take it (a contact that formed by approach coming to
  a place, whose overlap would have to grow), the share stays. Two blocks sliding off the
  places of a base meshed under their own vertices otherwise booked 2.6 % of their gravity
  work (every share 1/2 -> 1 after 15 mm, each doubling its contact's stored energy).

A semi-spring contact forms only as its point approaches the target (Feng et al. 2014,
section 4.1: a contact is created once the point comes to the face), with the overlap the
approach made: where the point lay below the target already when the step began (depth
delta_0 = -delta - a, with a = -(u - u_t) . n its approach over the step, u and u_t the
increments of the point and of the target's point under it), the contact keeps that depth
as its offset and its overlap is -delta - offset, the depth gained since it formed; it
opens where the point comes back to that depth. A point comes to lie below a target
without approaching it where it crossed a glued face into an element whose own active
faces are far (a block's internal edge: the element's "depth" then counts metres), where
a face came among its potential targets, a target was renewed or a block broke free while
it lay behind it, or where a block was placed overlapping another. At the depth alone,
each such contact held a stored energy w K_n delta^2 / 2 no motion paid for, which its
spring gave to the blocks in a kick (the Jiweishan resolution study's level 3: up to 24 m
deep, 6.5e12 J on forming, most of it taken back as they vanished a step later; a block
placed 0.022 m into a base broke its interface springs under a load no motion had made).
The offset of a contact that forms by approach from outside the target is 0 (to first
order in the face's turn over the step), so the overlap is its depth, as the paper has it.
A loaded contact whose target moves to another element continues from its last overlap:
where the new target's depth less the offset exceeds the last overlap plus this step's
approach by more than the tolerance, the offset takes the excess. Across the coplanar
faces of glued elements the depth is continuous and the rule does nothing; a semi-spring
whose new candidates (a renewal) hold a body it lies deep in by the element measure (the
nearest active face of an element inside a block, metres away) otherwise jumped to that
depth with the stored energy w K_n delta^2 / 2 (the production Jiweishan runout: 6.1e10 J
at one renewal, most of it taken back over the next steps; an energy error of 1.0e12 J,
3.8 times the gravity work, by step 38,092). Within one element the nearest face changes
continuously (the smaller of two face distances) and the offset is kept as it is.

A semi-spring contact forms only on a face turned toward the point's own face (within 60
deg, N_g . o <= -FACING), and a loaded one passes to another element only onto such a face
or onto a face continuing the one it was on (N_g . n_last >= FACING, the same surface
across the joint of two elements). Where the nearest face of the element the point lies in
is turned away (a face at right angles to its own), the target is the nearest face of the
element that is turned toward it, if the point lies less than FACING_REACH times its own
face's radius below it; otherwise the semi-spring stays open. Its depth there goes into the
offset as for any forming contact. Within one element a loaded contact follows the nearest
face as before, so that a point leaves through a side face continuously (its overlap falls
to 0 as the side comes to within its offset), but it leaves a face turned toward it for a
nearer one turned away only where that became the nearer within the step's motion (the
relative increment of the point, plus the tolerance): a contact formed under the facing
face while the side was nearer otherwise went back to the side at once, opened below its
offset and formed anew on the facing face the step after, each new start storing
w K_n a^2 / 2 (a the step's approach) that no force paid for (at level 2 of the Jiweishan
resolution study, 0.02 % of the gravity work). Without the rule, a point of the bed that a
sliding block passed over entered the block through its front face while still shallower
behind it than below the block's bottom: the front face was the element's nearest, and the
contact pushed the block back with up to the load the point would carry under the bottom,
until the point lay deeper behind the front than below the bottom. Each internal joint of a
sliding mass so held a potential well of 1/2 K delta^2 per point of the bed passing it
(delta the mass's penetration): it cost nothing to a fast mass but held a slow one. The
coarse Jiweishan runout (a conforming mesh: every joint of the mass starts over a bed
vertex) stopped at friction angles 8 deg short of the rigid block's, at distances the
indentation alpha decided (1.1, 1.5, 683, 629 m for alpha 0.005-0.04 at 12 deg), and two
blocks 1 deg steeper than their friction angle stopped within a centimetre. The points of a
resting block's side faces that dip into its base form no contact with the base's top
either (the bottom's own semi-springs carry the block).

Semi-edge (Feng et al. 2014 section 4.3, Eqs. 11-12): the segment joining the semi-springs
of vertices v and v + 1. Only block edges take part (``ridge``: the edge's other face on the
same element is active too; an edge between two coplanar faces of glued elements is not an
edge of the block). Candidate elements the segment does not enter (within the tolerance)
are passed over at once (tested once per semi-edge, however many of their faces are
candidates). For every ridge edge Q0-Q1 of the candidate faces: skip it if
parallel
(|e1 x e2|^2 <= 1e-6 |e1|^2 |e2|^2, Eq. 11); otherwise the closest points P(s), Q(t) of the
two segments, both inside (0.001 < s, t < 0.999: an end point is a vertex, the
semi-springs' business), the normal n = e1 x e2 / |..| turned outward of the target
element, and d = (P - Q) . n (Eq. 12). The edge is a target when d < -tol with P inside the
target element (within the tolerance), and either it is the semi-edge's target of the last
step or the pair came into contact during this step: the gap of the two edges' lines at
the step's start (the nodes at x - du, the same formula) was not below -tol. The
shallowest such edge is taken, overlap -d - tol. The pair must also be a
true edge-edge contact: n within the arc of outward normals of the target edge's two faces
and -n within that of the own edge's (the Gauss-map test of edge pairs; Gregorius, "The
separating axis test between convex polyhedra", GDC 2013). Nearly parallel edges of
coincident faces otherwise meet with a normal in the face plane and a false overlap as deep
as the indentation. P spreads over the face nodes with the semi-springs' weights, the
reaction over Q0, Q1 with (1 - t, t).

A semi-edge contact so forms only as its edges approach each other (Feng et al. 2014,
section 4.1: the contact is created once the block edge approaches the target edge), with
the overlap this step's approach made, and lasts, at any depth, while the pair stays a
contact. A pair that became a contact already deep (an edge crossing that grew shallower
than a depth cut-off, a pair that became a true edge pair or came into the candidates
while crossing) otherwise held a stored energy K_n delta^2 / 2 no motion paid for, which
its spring then gave to the blocks. A cut-off at alpha times the semi-edge's length (a
deeper crossing left to the semi-springs) did exactly that: edges of neighbouring blocks
that broke apart cross at about that depth where their shared nodes were, and every
crossing that came up through the cut-off formed a contact alpha L deep (the coarse
Jiweishan runout: 1.6e12 J created, 0.09e12 J lost where crossings went down through it).

The gap test at the step's start has a hole: lines within the parallel cut of each other
have no gap (+inf), so a pair of edges that turned out of parallel during the step passed
it at any depth (the coarse Jiweishan runout at 10 deg with a sliding-body tensile strength
of 5.5e5 Pa: a pair 63 m deep, 0.82 of the median face size, formed in one step with
5.1e12 N, and the run booked 13 % of the gravity work as error). So a forming semi-edge
also keeps, as the semi-springs do, its depth beyond the tolerance less this step's
approach -(u - u_t) . n as an offset, and its overlap is -d - tol - offset.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from solver.cdem.hex8 import quad_normal
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


EDGE_NEIGHBOURS = _edge_neighbours()


def _entry_order() -> np.ndarray:
    """(6, 6): the faces of a hexahedron in the order _segment_enters tries them for a
    candidate face f: the four faces next to f, then f, then the face opposite."""
    table = np.zeros((6, 6), dtype=np.int64)
    for f in range(6):
        opposite = next(g for g in range(6) if not set(FACES[g]) & set(FACES[f]))
        table[f] = [*EDGE_NEIGHBOURS[f], f, opposite]
    return table


ENTRY_ORDER = _entry_order()
#: How far (as a sine) an edge-edge normal may lie outside the normal arc of either edge.
EDGE_CONE_TOL = 0.05
WARP_BOUND = 16.0      # |bilinear - plane distance| <= WARP_BOUND x warp (_nearest_face)
#: Faces turned toward each other within 60 deg: N_g . o <= -FACING (semi_spring_geometry).
FACING = 0.5
#: How deep (times the radius of its own face) a semi-spring may lie below the nearest face
#: that faces its own where a face that does not is nearer (semi_spring_geometry).
FACING_REACH = 0.1
#: Columns of a face frame (face_frames): centre, unit normal, warp, squared radius.
FRAME_WIDTH = 8


@njit(cache=True)
def face_frames(x, gx, base, n_own, frames, centroid):
    """Centre (vertex mean), unit normal (hex8.quad_normal), warp h and squared radius (the
    largest squared distance centre - vertex) of every face 6 c + f of the contact elements
    in ``frames`` (n_c * 6, FRAME_WIDTH), and each element's vertex mean in ``centroid``
    (n_c, 3). The normal is that of the two diagonals, so the four vertices lie at heights
    +h, -h, +h, -h above the plane (centre, normal) and the bilinear face at h xi eta:
    within h of the plane (module docstring, the tolerance tests)."""
    for c in range(base.shape[0]):
        xs = x if c < n_own else gx
        b = base[c]
        e0 = e1 = e2 = 0.0
        for a in range(8):
            e0 += xs[b + a, 0]
            e1 += xs[b + a, 1]
            e2 += xs[b + a, 2]
        centroid[c, 0] = 0.125 * e0
        centroid[c, 1] = 0.125 * e1
        centroid[c, 2] = 0.125 * e2
        for f in range(6):
            ra, rb, rc, rd = b + FACES[f, 0], b + FACES[f, 1], b + FACES[f, 2], b + FACES[f, 3]
            n0, n1, n2 = quad_normal(xs, ra, rb, rc, rd)
            q = 6 * c + f
            frames[q, 0] = 0.25 * (xs[ra, 0] + xs[rb, 0] + xs[rc, 0] + xs[rd, 0])
            frames[q, 1] = 0.25 * (xs[ra, 1] + xs[rb, 1] + xs[rc, 1] + xs[rd, 1])
            frames[q, 2] = 0.25 * (xs[ra, 2] + xs[rb, 2] + xs[rc, 2] + xs[rd, 2])
            frames[q, 3] = n0
            frames[q, 4] = n1
            frames[q, 5] = n2
            frames[q, 6] = abs((xs[ra, 0] - frames[q, 0]) * n0 + (xs[ra, 1] - frames[q, 1]) * n1
                               + (xs[ra, 2] - frames[q, 2]) * n2)
            radius2 = 0.0
            for r in (ra, rb, rc, rd):
                radius2 = max(radius2, (xs[r, 0] - frames[q, 0]) ** 2
                              + (xs[r, 1] - frames[q, 1]) ** 2 + (xs[r, 2] - frames[q, 2]) ** 2)
            frames[q, 7] = radius2


@njit(cache=True, inline="always")
def plane_distance(frames, q, p0, p1, p2):
    """Signed distance of p from the plane of face q in ``frames`` (face_frames), positive
    outside."""
    return ((p0 - frames[q, 0]) * frames[q, 3] + (p1 - frames[q, 1]) * frames[q, 4]
            + (p2 - frames[q, 2]) * frames[q, 5])


@njit(cache=True, inline="always")
def _beyond(frames, q, p0, p1, p2, tol):
    """Plane distance of p to face q less the tolerance and the face's warp: positive where p
    lies more than ``tol`` outside the bilinear face's side of it."""
    return plane_distance(frames, q, p0, p1, p2) - tol - frames[q, 6]


@njit(cache=True, inline="always")
def _inside_element(frames, c, p0, p1, p2, tol):
    """Whether p lies within ``tol`` of the inside of all six (bilinear) faces of contact
    element c (by their planes, each widened by its warp)."""
    for g in range(6):
        if _beyond(frames, 6 * c + g, p0, p1, p2, tol) > 0.0:
            return False
    return True


@njit(cache=True, inline="always")
def _segment_enters(frames, c, f, a0, a1, a2, e0, e1, e2, tol):
    """Whether some point of the segment a-e lies within ``tol`` of the inside of all six
    faces of contact element c (the segment clipped by the six planes, each widened by its
    warp, is not empty). The faces are tried in ENTRY_ORDER of its candidate face f: where
    a face's plane has the whole segment beyond it, it is one next to f (in a heap of
    blocks, 383,548 of 482,920 tests, none by f or the face opposite); tried 0 to 5, 3.5
    faces came before it on average. The answer does not depend on the order."""
    lo = 0.0
    hi = 1.0
    for i in range(6):
        g = ENTRY_ORDER[f, i]
        da = _beyond(frames, 6 * c + g, a0, a1, a2, tol)
        de = _beyond(frames, 6 * c + g, e0, e1, e2, tol)
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
def _position(items, n, value):
    """Index of ``value`` among the first n entries of ``items``, or n where it is not
    there (the short per-point lists of the searches: bodies, elements)."""
    i = 0
    while i < n and items[i] != value:
        i += 1
    return i


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
def _plane_admits(frames, ct, fc, p0, p1, p2, tol):
    """The tests of _face_accepts on face fc of contact element ct that need only the
    faces' planes: (whether p lies within ``tol`` above the face's plane or, below it,
    inside the element, and projects into the face's circumscribed disk (centre, radius),
    the plane distance delta). The semi-spring search runs them before _face_contact: most
    potential targets fail them, and the full test costs several times more."""
    delta = plane_distance(frames, fc, p0, p1, p2)
    if _beyond(frames, fc, p0, p1, p2, tol) > 0.0:
        return False, delta
    if delta < 0.0 and not _inside_element(frames, ct, p0, p1, p2, tol):
        return False, delta
    if ((p0 - frames[fc, 0]) ** 2 + (p1 - frames[fc, 1]) ** 2 + (p2 - frames[fc, 2]) ** 2
            - delta * delta > (1.0 + 1e-6) * frames[fc, 7]):
        return False, delta
    return True, delta


@njit(cache=True, inline="always")
def _face_accepts(frames, xs, bt, ct, ft, p0, p1, p2, tol, admitted=False):
    """Whether face ft of contact element ct (nodes xs[bt + a]) may be the target of the
    point p (cases (a) and (b) of the module docstring; which face of the element is the
    nearest is _face_contact's test): (accepted, plane distance delta, a first guess of the
    point's face coordinates xi, eta from the triangle it projects into). A point whose
    projection lies outside the face's circumscribed disk (centre, radius) is rejected
    before the triangles are tried: the projected face lies within it. ``admitted``: the
    caller ran _plane_admits on the face already, and it passed."""
    fc = 6 * ct + ft
    if admitted:
        delta = plane_distance(frames, fc, p0, p1, p2)
    else:
        admitted, delta = _plane_admits(frames, ct, fc, p0, p1, p2, tol)
        if not admitted:
            return False, delta, 0.0, 0.0
    n0, n1, n2 = frames[fc, 3], frames[fc, 4], frames[fc, 5]
    q0 = p0 - delta * n0
    q1 = p1 - delta * n1
    q2 = p2 - delta * n2
    ri = bt + FACES[ft, 0]
    for tri in range(2):
        rj = bt + FACES[ft, 1 + tri]
        rk = bt + FACES[ft, 2 + tri]
        total = _area(xs[ri, 0], xs[ri, 1], xs[ri, 2], xs[rj, 0], xs[rj, 1], xs[rj, 2],
                      xs[rk, 0], xs[rk, 1], xs[rk, 2], n0, n1, n2)
        wi = _area(q0, q1, q2, xs[rj, 0], xs[rj, 1], xs[rj, 2],
                   xs[rk, 0], xs[rk, 1], xs[rk, 2], n0, n1, n2) / total
        wj = _area(xs[ri, 0], xs[ri, 1], xs[ri, 2], q0, q1, q2,
                   xs[rk, 0], xs[rk, 1], xs[rk, 2], n0, n1, n2) / total
        wk = 1.0 - wi - wj
        if wi >= -1e-9 and wj >= -1e-9 and wk >= -1e-9:
            if tri == 0:
                return True, delta, wj + wk - wi, wk - wi - wj
            return True, delta, wj - wi - wk, wj + wk - wi
    return False, delta, 0.0, 0.0


@njit(cache=True, inline="always")
def _bilinear_projection(xs, bt, ft, p0, p1, p2, xi, eta):
    """Closest point q of the bilinear face ft (nodes A, B, C, D = xs[bt + FACES[ft]],
    q = a + b xi + c eta + d xi eta) to p: Gauss-Newton from (xi, eta), exact in one
    iteration on a parallelogram (two are taken), clamped to the face. Returns (xi, eta, q,
    unit normal q_xi x q_eta), the normal outward (that of solver.cdem.hex8.quad_normal at
    the face centre)."""
    ra, rb, rc, rd = bt + FACES[ft, 0], bt + FACES[ft, 1], bt + FACES[ft, 2], bt + FACES[ft, 3]
    a0 = 0.25 * (xs[ra, 0] + xs[rb, 0] + xs[rc, 0] + xs[rd, 0]) - p0
    a1 = 0.25 * (xs[ra, 1] + xs[rb, 1] + xs[rc, 1] + xs[rd, 1]) - p1
    a2 = 0.25 * (xs[ra, 2] + xs[rb, 2] + xs[rc, 2] + xs[rd, 2]) - p2
    b0 = 0.25 * (xs[rb, 0] + xs[rc, 0] - xs[ra, 0] - xs[rd, 0])
    b1 = 0.25 * (xs[rb, 1] + xs[rc, 1] - xs[ra, 1] - xs[rd, 1])
    b2 = 0.25 * (xs[rb, 2] + xs[rc, 2] - xs[ra, 2] - xs[rd, 2])
    c0 = 0.25 * (xs[rc, 0] + xs[rd, 0] - xs[ra, 0] - xs[rb, 0])
    c1 = 0.25 * (xs[rc, 1] + xs[rd, 1] - xs[ra, 1] - xs[rb, 1])
    c2 = 0.25 * (xs[rc, 2] + xs[rd, 2] - xs[ra, 2] - xs[rb, 2])
    d0 = 0.25 * (xs[ra, 0] + xs[rc, 0] - xs[rb, 0] - xs[rd, 0])
    d1 = 0.25 * (xs[ra, 1] + xs[rc, 1] - xs[rb, 1] - xs[rd, 1])
    d2 = 0.25 * (xs[ra, 2] + xs[rc, 2] - xs[rb, 2] - xs[rd, 2])
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
def _nearest_face(frames, xs, bt, ct, active, p0, p1, p2):
    """The active face g of contact element ct with the largest signed distance
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
        if active[ct, g]:
            q = 6 * ct + g
            lowest = max(lowest, plane_distance(frames, q, p0, p1, p2)
                         - WARP_BOUND * frames[q, 6])
    lowest -= 2e-12 * (abs(p0) + abs(p1) + abs(p2) + 1.0)
    left = 0
    g_near = -1
    for g in range(6):
        q = 6 * ct + g
        if active[ct, g] and (plane_distance(frames, q, p0, p1, p2)
                              + WARP_BOUND * frames[q, 6] >= lowest):
            left += 1 << g
            g_near = g
    if left == 1 << g_near:
        return g_near
    nearest = -np.inf
    for g in range(6):
        if not left & (1 << g):
            continue
        _, _, r0, r1, r2, m0, m1, m2 = _bilinear_projection(xs, bt, g, p0, p1, p2, 0.0, 0.0)
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
def _nearest_facing_face(frames, xs, bt, ct, active, own, p0, p1, p2):
    """(g, d_g): the active face g of contact element ct turned toward face ``own``
    (_faces) with the largest signed distance d_g = (p - q_g) . n_g to its bilinear face
    (-1, -inf where none is)."""
    g_near = -1
    nearest = -np.inf
    for g in range(6):
        if not active[ct, g] or not _faces(frames, 6 * ct + g, own):
            continue
        _, _, r0, r1, r2, m0, m1, m2 = _bilinear_projection(xs, bt, g, p0, p1, p2, 0.0, 0.0)
        dg = (p0 - r0) * m0 + (p1 - r1) * m1 + (p2 - r2) * m2
        if dg > nearest:
            nearest, g_near = dg, g
    return g_near, nearest


@njit(cache=True, inline="always")
def _relative_step(us, bt, ft, u0, u1, u2):
    """|u - u_ft|: the length of the point's increment u less the mean increment of the nodes
    of face ft of the element at rows bt (``us``; the semi-spring weights with alpha = 1)."""
    m0, m1, m2 = _semi_spring_point(us, bt, ft, 0, 1.0)
    return math.sqrt((u0 - m0) ** 2 + (u1 - m1) ** 2 + (u2 - m2) ** 2)


@njit(cache=True, inline="always")
def _one_face_contact(frames, xs, bt, ct, ft, p0, p1, p2, tol, admitted):
    """(accepted by _face_accepts, delta, xi, eta, q, n) of face ft and the point p."""
    accepted, _, xi, eta = _face_accepts(frames, xs, bt, ct, ft, p0, p1, p2, tol, admitted)
    if not accepted:
        return False, np.inf, xi, eta, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    xi, eta, q0, q1, q2, n0, n1, n2 = _bilinear_projection(xs, bt, ft, p0, p1, p2, xi, eta)
    delta = (p0 - q0) * n0 + (p1 - q1) * n1 + (p2 - q2) * n2
    return True, delta, xi, eta, q0, q1, q2, n0, n1, n2


@njit(cache=True, inline="always")
def _face_contact(frames, active, xs, bt, ct, ft, p0, p1, p2, tol, admitted):
    """The target face of the point p for the potential target face ft of contact element
    ct: ft if _face_accepts takes it and p lies within ``tol`` of its bilinear face, above
    it or with ft the element's nearest active face (_nearest_face); where p lies below
    ft's bilinear face and another face g of the element is nearer, g, if _face_accepts
    takes it (a point inside an element is in contact with its nearest face whichever of
    the element's faces are potential targets). Returns (accepted, the signed distance
    delta = (p - q) . n, xi, eta, q, n of its closest point q on the bilinear face
    (_bilinear_projection), the face). ``admitted``: ft passed _plane_admits already."""
    accepted, delta, xi, eta, q0, q1, q2, n0, n1, n2 = _one_face_contact(
        frames, xs, bt, ct, ft, p0, p1, p2, tol, admitted)
    if accepted and delta < 0.0:
        g = _nearest_face(frames, xs, bt, ct, active, p0, p1, p2)
        if g != ft:
            ft = g
            accepted, delta, xi, eta, q0, q1, q2, n0, n1, n2 = _one_face_contact(
                frames, xs, bt, ct, g, p0, p1, p2, tol, False)
            accepted = accepted and delta < 0.0
    return accepted and delta <= tol, delta, xi, eta, q0, q1, q2, n0, n1, n2, ft


@njit(cache=True, inline="always")
def _semi_spring_point(xs, b, f, v, alpha):
    """Weighted sum of the face-f nodes xs[b + FACES[f]] with the semi-spring weights of
    vertex v (1 - alpha + alpha / 4 on it, alpha / 4 on the others): the semi-spring's
    point, or with increments its increment."""
    w_other = 0.25 * alpha
    w_vertex = 1.0 - alpha + w_other
    p0 = p1 = p2 = 0.0
    for k in range(4):
        w = w_vertex if k == v else w_other
        r = b + FACES[f, k]
        p0 += w * xs[r, 0]
        p1 += w * xs[r, 1]
        p2 += w * xs[r, 2]
    return p0, p1, p2


@njit(cache=True, inline="always")
def _place(x, xs, b, bt, frames, c, f, v, ct, ft, alpha, tol):
    """(at a place, w) of the semi-spring at vertex v of face f of element c with target
    face ft of element ct: w the vertex of face ft nearest to v, at a place when it lies
    within alpha (L_v + L_w) + tol of it (L the distance face centre - vertex)."""
    rv = b + FACES[f, v]
    w = 0
    d_min = np.inf
    for k in range(4):
        r = bt + FACES[ft, k]
        d2 = ((xs[r, 0] - x[rv, 0]) ** 2 + (xs[r, 1] - x[rv, 1]) ** 2
              + (xs[r, 2] - x[rv, 2]) ** 2)
        if d2 < d_min:
            d_min, w = d2, k
    qf = 6 * c + f
    qt = 6 * ct + ft
    rw = bt + FACES[ft, w]
    l_v = math.sqrt((x[rv, 0] - frames[qf, 0]) ** 2 + (x[rv, 1] - frames[qf, 1]) ** 2
                    + (x[rv, 2] - frames[qf, 2]) ** 2)
    l_w = math.sqrt((xs[rw, 0] - frames[qt, 0]) ** 2 + (xs[rw, 1] - frames[qt, 1]) ** 2
                    + (xs[rw, 2] - frames[qt, 2]) ** 2)
    reach = alpha * (l_v + l_w) + tol
    return d_min <= reach * reach, w


@njit(cache=True, inline="always")
def _partner_in_contact(x, xs, b, bt, frames, active, c, f, ct, ft, w, alpha, tol):
    """Whether the semi-spring of face ft of element ct at its vertex w is in contact with
    face f of element c: face f accepts its point with a negative distance (the partner's
    own test)."""
    p0, p1, p2 = _semi_spring_point(xs, bt, ft, w, alpha)
    accepted, delta, _, _, _, _, _, _, _, _, g = _face_contact(frames, active, x, b, c, f, p0,
                                                               p1, p2, tol, False)
    return accepted and delta < 0.0 and g == f


@njit(cache=True)
def semi_spring_geometry(x, du, gx, gdu, base, n_own, gid, active, body, frames, candidates,
                         elem, face, vertex, alpha, tol, target, overlap, normal, slip, own_w,
                         target_node, target_w, target_elem, share, placed, offset, f_t):
    """Target face, overlap, normal, slip and share of every semi-spring (module
    docstring): per body (``body``: each contact element's body, by any numbering) the face of the
    largest signed distance, and of those the deepest contact, or where the point is in
    contact with no body the nearest face within the tolerance. Open semi-springs get
    overlap 0 and share 0 (target: the face within the tolerance, or -1); a share above 0
    is that of a contact already formed and is kept while ``placed`` (whether the
    semi-spring is at a place) stays the same. A forming contact sets ``offset``, its depth
    beyond this step's approach (module docstring), which the overlap leaves out while the
    contact lasts. A contact forms, or passes to another element, only on a face turned
    toward the point's own face or (passing) continuing the face of its last ``normal``
    (module docstring). Returns the deepest overlap [m].

    A potential target is passed over where its plane bound (plane distance + WARP_BOUND
    warp, _nearest_face) cannot raise its body's largest delta, and where the point lies
    outside that body (its largest delta >= 0) or the target's element is one the point
    lies inside of (an accepted face with delta < 0, whose element's nearest face is then
    known): a face below the point leads to the element's nearest face, no higher than the
    body's largest delta in either case."""
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
        p0, p1, p2 = _semi_spring_point(x, b, f, v, alpha)
        n_bodies = 0
        n_inside = 0
        round_off = 2e-12 * (abs(p0) + abs(p1) + abs(p2) + 1.0)
        for j in range(m):
            fc = candidates[s, j]
            if fc < 0:
                break
            ct = fc // 6
            admitted, plane = _plane_admits(frames, ct, fc, p0, p1, p2, tol)
            if not admitted:
                continue
            i = _position(b_body, n_bodies, body[ct])
            k = _position(inside, n_inside, ct)
            if ((k < n_inside or (i < n_bodies and b_d[i] >= 0.0))
                    and b_d[i] >= plane + WARP_BOUND * frames[fc, 6] + round_off):
                continue
            xs = x if ct < n_own else gx
            accepted, d, c_xi, c_eta, _, _, _, c_n0, c_n1, c_n2, g = _face_contact(
                frames, active, xs, base[ct], ct, fc - 6 * ct, p0, p1, p2, tol, True)
            if not accepted:
                continue
            if d < 0.0 and k == n_inside:
                inside[n_inside] = ct
                n_inside += 1
            if i == n_bodies:
                n_bodies += 1
                b_body[i] = body[ct]
            elif d <= b_d[i]:
                continue
            b_face[i] = 6 * ct + g
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
        u0, u1, u2 = _semi_spring_point(du, b, f, v, alpha)
        ct = best // 6
        ft = best - 6 * ct
        xs = x if ct < n_own else gx
        us = du if ct < n_own else gdu
        bt = base[ct]
        own = 6 * c + f
        opens = delta >= 0.0
        if not opens and not _faces(frames, best, own):
            continuing = (frames[best, 3] * normal[s, 0] + frames[best, 4] * normal[s, 1]
                          + frames[best, 5] * normal[s, 2]) >= FACING
            if share[s] == 0.0 or (last_elem != gid[ct] and not continuing):
                g, dg = _nearest_facing_face(frames, xs, bt, ct, active, own, p0, p1, p2)
                opens = g < 0 or -dg > FACING_REACH * math.sqrt(frames[own, 7])
                if not opens:
                    ft = g
                    accepted, delta, xi, eta, _, _, _, n0, n1, n2 = _one_face_contact(
                        frames, xs, bt, ct, g, p0, p1, p2, tol, False)
                    opens = not accepted or delta >= 0.0
            elif (last_elem == gid[ct] and last_target % 6 != ft
                  and _faces(frames, 6 * ct + last_target % 6, own)):
                g, dg = _nearest_facing_face(frames, xs, bt, ct, active, own, p0, p1, p2)
                if g >= 0 and delta - dg > tol + _relative_step(us, bt, ft, u0, u1, u2):
                    accepted, d, g_xi, g_eta, _, _, _, g_n0, g_n1, g_n2 = _one_face_contact(
                        frames, xs, bt, ct, g, p0, p1, p2, tol, False)
                    if accepted and d < 0.0:
                        ft, delta, xi, eta, n0, n1, n2 = g, d, g_xi, g_eta, g_n0, g_n1, g_n2
        target[s] = 6 * gid[ct] + ft
        if opens:
            share[s] = 0.0
            placed[s] = False
            continue
        weights = (0.25 * (1.0 - xi) * (1.0 - eta), 0.25 * (1.0 + xi) * (1.0 - eta),
                   0.25 * (1.0 + xi) * (1.0 + eta), 0.25 * (1.0 - xi) * (1.0 + eta))
        m0 = m1 = m2 = 0.0
        for k in range(4):
            r = bt + FACES[ft, k]
            m0 += weights[k] * us[r, 0]
            m1 += weights[k] * us[r, 1]
            m2 += weights[k] * us[r, 2]
        d0, d1, d2 = u0 - m0, u1 - m1, u2 - m2
        if share[s] == 0.0:
            offset[s] = max(0.0, d0 * n0 + d1 * n1 + d2 * n2 - delta)
        elif last_elem != gid[ct]:
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
        target_elem[s] = ct
        at_place, w = _place(x, xs, b, bt, frames, c, f, v, ct, ft, alpha, tol)
        turned = last_elem == gid[ct] and last_target != target[s]
        if share[s] == 0.0 or (at_place != placed[s] and not turned
                               and _faces(frames, 6 * ct + ft, own)):
            decided = 0.5 if at_place and _partner_in_contact(
                x, xs, b, bt, frames, active, c, f, ct, ft, w, alpha, tol) else 1.0
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
            target_node[s, k] = 8 * ct + FACES[ft, k]
            target_w[s, k] = weights[k]
        slip[s, 0] = d0
        slip[s, 1] = d1
        slip[s, 2] = d2
    return deepest


@njit(cache=True, inline="always")
def _edge_gap(a0, a1, a2, u0, u1, u2, q0, q1, q2, g0, g1, g2, m0, m1, m2):
    """Signed distance between the lines a + s u and q + t g along their common normal
    turned to the side of the unit vector m (+inf where they are parallel): the edge-edge
    gap d of Feng et al. 2014 Eq. 12 without the segments' bounds."""
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
def _held_face(candidates, s, gid, gid_order, held):
    """The face (contact element 6 c + f) of a held target edge (global id ``held``; -1
    none) where it is not among the potential targets of record s and its element is here
    (binary search of ``gid`` by ``gid_order``), else -1."""
    if held < 0:
        return -1
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
def semi_edge_geometry(x, du, gx, gdu, base, n_own, gid, gid_order, active, frames, centroid,
                       candidates, elem, face, vertex, alpha, tol, target, overlap, normal,
                       slip, own_w, target_node, target_w, target_elem, status, offset):
    """Target edge, overlap, normal and slip of every semi-edge (module docstring). A forming
    contact (``status`` OPEN: none loaded the last step) sets ``offset``, its depth beyond
    the tolerance less this step's approach, which the overlap leaves out while the contact
    lasts. A loaded contact also tests its last target's face where that is no longer among
    its potential targets (found by its global id, ``gid_order`` sorting ``gid``): those
    are searched about the edge's first point, and the crossing point of a long edge moves
    away from it (level 2 of the Jiweishan resolution study: 306 loaded contacts vanished so
    with 1.4e10 J). Returns the deepest penetration -d - offset [m]."""
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
        a0, a1, a2 = _semi_spring_point(x, b, f, v0, alpha)
        e0, e1, e2 = _semi_spring_point(x, b, f, v1, alpha)
        u0, u1, u2 = e0 - a0, e1 - a1, e2 - a2
        aa = u0 * u0 + u1 * u1 + u2 * u2
        best = -1
        best_d = -np.inf
        bs = bt = 0.0
        bn0 = bn1 = bn2 = 0.0
        bq0 = bq1 = 0
        n_tested = 0
        extra = _held_face(candidates, s, gid, gid_order, held) if loaded else -1
        for j in range(n_candidates + 1):
            fc = candidates[s, j] if j < n_candidates else extra
            if fc < 0:
                continue
            if (_beyond(frames, fc, a0, a1, a2, tol) > 0.0
                    and _beyond(frames, fc, e0, e1, e2, tol) > 0.0):
                continue
            ct = fc // 6
            i = _position(tested, n_tested, ct)
            if i == n_tested:
                tested[i] = ct
                entered[i] = _segment_enters(frames, ct, fc - 6 * ct, a0, a1, a2, e0, e1, e2,
                                             tol)
                n_tested += 1
            if not entered[i]:
                continue
            ft = fc - 6 * ct
            xs = x if ct < n_own else gx
            base_t = base[ct]
            for jj in range(4):
                if not active[ct, EDGE_NEIGHBOURS[ft, jj]]:
                    continue
                q0 = base_t + FACES[ft, jj]
                q1 = base_t + FACES[ft, (jj + 1) % 4]
                g0 = xs[q1, 0] - xs[q0, 0]
                g1 = xs[q1, 1] - xs[q0, 1]
                g2 = xs[q1, 2] - xs[q0, 2]
                w0 = a0 - xs[q0, 0]
                w1 = a1 - xs[q0, 1]
                w2 = a2 - xs[q0, 2]
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
                if ((xs[q0, 0] - centroid[ct, 0]) * n0 + (xs[q0, 1] - centroid[ct, 1]) * n1
                        + (xs[q0, 2] - centroid[ct, 2]) * n2 < 0.0):
                    n0, n1, n2 = -n0, -n1, -n2
                p0 = a0 + ps * u0
                p1 = a1 + ps * u1
                p2 = a2 + ps * u2
                d = ((p0 - xs[q0, 0] - pt * g0) * n0 + (p1 - xs[q0, 1] - pt * g1) * n1
                     + (p2 - xs[q0, 2] - pt * g2) * n2)
                if d >= -tol or d <= best_d:
                    continue
                if not (_in_edge_cone(frames, 6 * ct + ft, 6 * ct + EDGE_NEIGHBOURS[ft, jj],
                                      n0, n1, n2)
                        and _in_edge_cone(frames, own_f, own_g, -n0, -n1, -n2)):
                    continue
                if not _inside_element(frames, ct, p0, p1, p2, tol):
                    continue
                if 4 * (6 * gid[ct] + ft) + jj != held:
                    us = du if ct < n_own else gdu
                    da0, da1, da2 = _semi_spring_point(du, b, f, v0, alpha)
                    de0, de1, de2 = _semi_spring_point(du, b, f, v1, alpha)
                    if _edge_gap(a0 - da0, a1 - da1, a2 - da2,
                                 u0 - de0 + da0, u1 - de1 + da1, u2 - de2 + da2,
                                 xs[q0, 0] - us[q0, 0], xs[q0, 1] - us[q0, 1],
                                 xs[q0, 2] - us[q0, 2], g0 - us[q1, 0] + us[q0, 0],
                                 g1 - us[q1, 1] + us[q0, 1], g2 - us[q1, 2] + us[q0, 2],
                                 n0, n1, n2) < -tol:
                        continue
                best, best_d = 4 * fc + jj, d
                bs, bt = ps, pt
                bn0, bn1, bn2 = n0, n1, n2
                bq0, bq1 = FACES[ft, jj], FACES[ft, (jj + 1) % 4]
        if best < 0:
            continue
        ct = best // 24
        target[s] = 4 * (6 * gid[ct] + (best // 4) % 6) + best % 4
        us = du if ct < n_own else gdu
        base_t = base[ct]
        for k in range(4):
            w = ((1.0 - bs) * (w_vertex if k == v0 else w_other)
                 + bs * (w_vertex if k == v1 else w_other))
            own_w[s, k] = w
        for k in range(3):
            moved = 0.0
            for m in range(4):
                moved += own_w[s, m] * du[b + FACES[f, m], k]
            slip[s, k] = moved - ((1.0 - bt) * us[base_t + bq0, k] + bt * us[base_t + bq1, k])
        if not loaded:
            offset[s] = max(0.0, slip[s, 0] * bn0 + slip[s, 1] * bn1 + slip[s, 2] * bn2
                            - best_d - tol)
        if -best_d - tol <= offset[s]:
            continue
        overlap[s] = -best_d - tol - offset[s]
        deepest = max(deepest, overlap[s] + tol)
        normal[s, 0] = bn0
        normal[s, 1] = bn1
        normal[s, 2] = bn2
        target_elem[s] = ct
        target_node[s, 0] = 8 * ct + bq0
        target_node[s, 1] = 8 * ct + bq1
        target_node[s, 2] = -1
        target_node[s, 3] = -1
        target_w[s, 0] = 1.0 - bt
        target_w[s, 1] = bt
        target_w[s, 2] = 0.0
        target_w[s, 3] = 0.0
    return deepest
