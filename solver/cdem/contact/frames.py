"""Face frames and the point tests the contact geometry shares (Feng et al. 2014, section 4).

The contact elements, their nodes and their frames are one structure,
solver.cdem.contact.mesh.ContactMesh (a contact node is 8 c + a, a face 6 c + f).

A face's frame (:func:`face_frames`) is its centre, the unit normal of its two diagonals,
its warp h and its squared radius. The four vertices lie at heights +h, -h, +h, -h above
the plane (centre, normal) and the bilinear face at h xi eta, so the face lies within h of
its plane: every test that compares a point with a face's plane widens the tolerance by
the face's warp (:func:`beyond`), so that a point below the bilinear face is never taken
for one above it (docs/contact.md, "Warped faces").

The semi-spring point of vertex v of face f (Feng et al. 2014, Eq. 3) is
x_ss = (1 - alpha) x_v + alpha x_c, x_c the face centre: weights 1 - alpha + alpha / 4 on
the vertex and alpha / 4 on the other three face nodes (:func:`semi_spring_point`).
"""

from __future__ import annotations

from numba import njit

from solver.cdem.hex8 import quad_normal
from solver.mesh.topology import FACES

#: Columns of a face frame (face_frames): centre, unit normal, warp, squared radius.
FRAME_WIDTH = 8


@njit(cache=True)
def face_frames(mesh):
    """Centre (vertex mean), unit normal (hex8.quad_normal), warp h and squared radius (the
    largest squared distance centre - vertex) of every face 6 c + f of the contact elements
    of ``mesh`` (a ContactMesh, packed: solver.cdem.packed) in its ``frames`` (n_c * 6,
    FRAME_WIDTH), and each
    element's vertex mean in its ``centroid`` (n_c, 3). The normal is that of the two
    diagonals, so the four vertices lie at heights +h, -h, +h, -h above the plane (centre,
    normal) and the bilinear face at h xi eta: within h of the plane (module docstring)."""
    mesh = mesh.value
    x, ghost_x, base, n_own = mesh.x, mesh.ghost_x, mesh.base, mesh.n_own
    frames, centroid = mesh.frames, mesh.centroid
    for c in range(base.shape[0]):
        xs = x if c < n_own else ghost_x
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
def beyond(frames, q, p0, p1, p2, tol):
    """Plane distance of p to face q less the tolerance and the face's warp: positive where p
    lies more than ``tol`` outside the bilinear face's side of it."""
    return plane_distance(frames, q, p0, p1, p2) - tol - frames[q, 6]


@njit(cache=True, inline="always")
def inside_element(frames, c, p0, p1, p2, tol):
    """Whether p lies within ``tol`` of the inside of all six (bilinear) faces of contact
    element c (by their planes, each widened by its warp)."""
    for g in range(6):
        if beyond(frames, 6 * c + g, p0, p1, p2, tol) > 0.0:
            return False
    return True


@njit(cache=True, inline="always")
def semi_spring_point(xs, b, f, v, alpha):
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
def index_in(items, n, value):
    """Index of ``value`` among the first n entries of ``items``, or n where it is not
    there (the short per-point lists of the searches: bodies, elements)."""
    i = 0
    while i < n and items[i] != value:
        i += 1
    return i
