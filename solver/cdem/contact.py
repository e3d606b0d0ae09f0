"""Semi-spring contact between blocks (seed 002 sections 3-5), forces by solver.contact_laws.

Semi-springs (seed 002 Eq. 3-4): every vertex v of every contact-capable face of a block is
indented into that face, x_ss = (1 - alpha) x_v + alpha x_c (x_c the face centre, so
|x_ss - x_v| = alpha L, alpha = 1 % by default): 24 per hexahedron, each with the
characteristic area A_SS = A_face / 4. A face is contact-capable when it is on the boundary
of the mesh or when all four interface springs glued to it have broken; semi-springs of glued
faces, and contacts between two elements still glued by an intact spring, are skipped.

Detection (seed 002 section 4): a fixed-length array of 8 potential target faces per
semi-spring, renewed every ``renew_every`` steps and at once when any surface node has moved
more than half the search margin since the last renewal (so no contact is ever missed: two
points approach each other by at most the margin between renewals). The candidates are the
faces whose bounding spheres are nearest, among the face centres within (largest face
circumradius + margin), found with a k-d tree on the face centres (scipy cKDTree, in place
of the paper's static cell grid). Each step a semi-spring
takes as its target the candidate face with

* (a) signed distance delta = (x_ss - x_f) . n_f below the search tolerance and the
  projection x_ss - delta n_f inside the face (two triangles, barycentric test), where a
  negative delta is accepted only if the semi-spring lies inside the target element
  ((x_ss - x_g) . n_g <= tol for all six faces g, seed 002 Eq. 8) and the face is the
  element's nearest one (the largest delta_g; seed 002 case (b)),
* and, among those, the largest delta (the nearest face).

Forces (seed 002 Eq. 13): penalty springs in the target face's frame, K_n = k_n A_SS,
K_t = k_t A_SS: the normal force of solver.contact_laws.laws.normal_force on the overlap
-delta (no tension; dashpot c_n = 2 zeta(e_n) sqrt(K_n m), m = m_a m_b / (m_a + m_b) with
m_a, m_b a quarter of the masses of the semi-spring's and the target's elements, a held
element counting as infinitely heavy: a single stiff element landing flat on a face of a
fixed base, 4 semi-springs carrying its mass, rebounds with the restitution of
solver.contact_laws.laws.clamped_restitution(e_n); a face backed by a deeper block of glued
elements has more mass per semi-spring and rebounds higher) and the incremental
Cundall-Strack tangential spring with the Coulomb cap mu F_n (cundall_strack_xyz) on the relative
displacement increment of the semi-spring point and its projection. The force on the
semi-spring goes to its face's nodes with the weights of x_ss ((1 - alpha) + alpha/4 on the
vertex, alpha/4 on the others), its reaction to the target face's nodes with the barycentric
weights of the projection. The tangential spring is kept when the target changes (it is
rotated into the new tangent plane; a semi-spring sliding across the boundary of two
coplanar faces keeps its history) and reset when the contact opens.

Across MPI ranks: surface elements are numbered in global element order on every rank, and
the nodes of all contact-capable elements are gathered on every rank each step
(Allgatherv), so every rank evaluates its own semi-springs against any target and finds the
same candidates, targets and forces the serial run finds. Each loaded contact hands its
force to at most 8 nodes (4 of its face, up to 4 of the target); these node shares are sent
to the ranks owning the nodes (Alltoallv) and added there in the global order of the
contacts (``ContactSet.node_shares``), so the summed node forces, and with them the whole
run, are the same to the last bit on any number of ranks. The gather's traffic grows with
the whole contact surface, not with the partition boundary.
"""

from __future__ import annotations

import math

import numpy as np
from mpi4py import MPI
from numba import njit
from scipy.spatial import cKDTree

from solver.cdem.hex8 import FACES, quad_normal
from solver.cdem.interface import face_areas
from solver.contact_laws.laws import (OPEN, SLIP, STICK, cundall_strack_xyz,
                                      damping_ratio_from_restitution, normal_force)

N_CANDIDATES = 8


def _edge_neighbours() -> np.ndarray:
    """(6, 4): the other face of the hexahedron sharing edge j (nodes j, j+1) of face f."""
    table = np.zeros((6, 4), dtype=np.int64)
    for f in range(6):
        for j in range(4):
            edge = {FACES[f, j], FACES[f, (j + 1) % 4]}
            table[f, j] = next(g for g in range(6) if g != f and edge <= set(FACES[g]))
    return table


EDGE_NEIGHBOURS = _edge_neighbours()


@njit(cache=True)
def _face_frame(x, nodes):
    """Centroid and unit normal of the quad with the given node rows."""
    a, b, c, d = nodes[0], nodes[1], nodes[2], nodes[3]
    n0, n1, n2 = quad_normal(x, a, b, c, d)
    c0 = 0.25 * (x[a, 0] + x[b, 0] + x[c, 0] + x[d, 0])
    c1 = 0.25 * (x[a, 1] + x[b, 1] + x[c, 1] + x[d, 1])
    c2 = 0.25 * (x[a, 2] + x[b, 2] + x[c, 2] + x[d, 2])
    return c0, c1, c2, n0, n1, n2


@njit(cache=True)
def _open(s, target_id, target, f_t, f_n_out, status, force, dashpot, dt, tally):
    """Contact s carries no force: its tangential spring is reset (Cundall-Strack), and the
    work of its last dashpot force, which acted over this step, is booked at its last rate."""
    if dashpot[s, 0] != 0.0:
        tally[1] += dashpot[s, 0] * dashpot[s, 1] * dt
        dashpot[s, 0] = 0.0
        dashpot[s, 1] = 0.0
    target[s] = target_id
    force[s, 0] = 0.0
    force[s, 1] = 0.0
    force[s, 2] = 0.0
    f_t[s, 0] = 0.0
    f_t[s, 1] = 0.0
    f_t[s, 2] = 0.0
    f_n_out[s] = 0.0
    status[s] = OPEN


@njit(cache=True)
def _effective_mass(m_a, m_b):
    """Reduced mass of two bodies; a held one (inf) leaves the other's, two held ones 0."""
    if math.isinf(m_a):
        return 0.0 if math.isinf(m_b) else m_b
    if math.isinf(m_b):
        return m_a
    return m_a * m_b / (m_a + m_b)


@njit(cache=True)
def _penalty(s, overlap, d0, d1, d2, n0, n1, n2, k_n, k_t, c_n, mu, dt, f_t, f_n_out, status,
             force, dashpot, tally):
    """Normal spring-dashpot (dashpot c_n [N s/m]) and Cundall-Strack forces of contact s on
    its overlap and the relative increment d (solver.contact_laws); writes ``force[s]``, the
    force on the semi-spring side, and updates f_t, f_n_out, status, the friction and
    dashpot tallies and ``dashpot`` (n, 2), the contact's dashpot force (F_n - k_n delta:
    the dashpot, or minus the spring while the no-tension clamp holds) and overlap rate of
    this step. A force computed now acts over the next step, so its work is booked then, at
    the mean of this step's and the next step's rates (the kinetic energy the
    central-difference update takes from the bodies). Returns the contact's stored elastic
    energy."""
    rate = -(d0 * n0 + d1 * n1 + d2 * n2) / dt
    fn = normal_force(overlap, rate, k_n[s], c_n, 0.0)
    s0, s1, s2, sliding, dissipated = cundall_strack_xyz(
        f_t[s, 0], f_t[s, 1], f_t[s, 2], d0, d1, d2, n0, n1, n2, k_t[s], mu, fn, 0.0)
    f_t[s, 0] = s0
    f_t[s, 1] = s1
    f_t[s, 2] = s2
    f_n_out[s] = fn
    status[s] = SLIP if sliding else STICK
    tally[0] += dissipated
    tally[1] += dashpot[s, 0] * 0.5 * (dashpot[s, 1] + rate) * dt
    dashpot[s, 0] = fn - k_n[s] * overlap
    dashpot[s, 1] = rate
    force[s, 0] = fn * n0 + s0
    force[s, 1] = fn * n1 + s1
    force[s, 2] = fn * n2 + s2
    return 0.5 * k_n[s] * overlap * overlap + 0.5 * (s0 * s0 + s1 * s1 + s2 * s2) / k_t[s]


@njit(cache=True)
def _barycentric(x, i, j, k, p0, p1, p2, n0, n1, n2):
    """Barycentric weights of point p in triangle (i, j, k), measured in the plane normal n."""
    def area(a0, a1, a2, b0, b1, b2, c0, c1, c2):
        u0, u1, u2 = b0 - a0, b1 - a1, b2 - a2
        v0, v1, v2 = c0 - a0, c1 - a1, c2 - a2
        return (u1 * v2 - u2 * v1) * n0 + (u2 * v0 - u0 * v2) * n1 + (u0 * v1 - u1 * v0) * n2

    total = area(x[i, 0], x[i, 1], x[i, 2], x[j, 0], x[j, 1], x[j, 2], x[k, 0], x[k, 1], x[k, 2])
    wi = area(p0, p1, p2, x[j, 0], x[j, 1], x[j, 2], x[k, 0], x[k, 1], x[k, 2]) / total
    wj = area(x[i, 0], x[i, 1], x[i, 2], p0, p1, p2, x[k, 0], x[k, 1], x[k, 2]) / total
    return wi, wj, 1.0 - wi - wj


@njit(cache=True)
def contact_step(x, du, face_nodes, ss_face, ss_vertex, candidates, alpha,
                 k_n, k_t, c_unit, mass, mu, tol, dt, target, f_t, f_n_out, status, dashpot,
                 tally, force, own_w, target_nodes, target_w):
    """Semi-spring -> target-face contact forces of all semi-springs (see module docstring).

    x, du: (n_nodes, 3) surface-node coordinates and step increments;
    face_nodes (n_faces, 4) node rows of every surface face (outward order; faces 6k..6k+5
    belong to surface element k); ss_face, ss_vertex (n_ss,) the semi-spring's face and vertex
    (0..3); candidates (n_ss, 8) potential target faces (-1: none); k_n, k_t (n_ss,)
    spring constants [N/m]; c_unit (n_ss,) the dashpot per square root of effective mass
    2 zeta sqrt(K_n) and mass (n_surface,) a quarter of each surface element's mass [kg]
    (inf: held), c_n = c_unit sqrt(m_a m_b / (m_a + m_b)); mu friction coefficient; tol
    search tolerance [m]; target (n_ss,) current target face, f_t (n_ss, 3) tangential force,
    dashpot (n_ss, 2) last dashpot force and rate (see ``_penalty``), all updated;
    f_n_out, status (n_ss,) written; tally (3,) += friction, dashpot dissipation [J] and stored
    contact energy [J] (the last overwritten). Written per semi-spring: ``force`` (n_ss, 3) on
    the semi-spring (zero when open), which its face's nodes take with the weights ``own_w``
    (n_ss, 4) and the nodes ``target_nodes`` (n_ss, 4; -1: unused) of the target with minus
    the weights ``target_w`` (n_ss, 4). Returns the contacts in compression and
    the deepest overlap [m]. The dashpot term is the work of F_n - k_n delta
    (the dashpot force, or minus the spring force while the no-tension clamp holds), so the
    stored 1/2 k_n delta^2 of a separating clamped contact is booked as dissipated.
    """
    n_active = 0
    deepest = 0.0
    stored = 0.0
    for s in range(ss_face.shape[0]):
        own = face_nodes[ss_face[s]]
        v = own[ss_vertex[s]]
        w_other = 0.25 * alpha
        w_vertex = 1.0 - alpha + w_other
        p0 = w_vertex * x[v, 0]
        p1 = w_vertex * x[v, 1]
        p2 = w_vertex * x[v, 2]
        u0 = w_vertex * du[v, 0]
        u1 = w_vertex * du[v, 1]
        u2 = w_vertex * du[v, 2]
        for k in range(4):
            if k != ss_vertex[s]:
                q = own[k]
                p0 += w_other * x[q, 0]
                p1 += w_other * x[q, 1]
                p2 += w_other * x[q, 2]
                u0 += w_other * du[q, 0]
                u1 += w_other * du[q, 1]
                u2 += w_other * du[q, 2]
        best = -1
        best_delta = -np.inf
        bw0 = bw1 = bw2 = 0.0
        bt = 0
        bn0 = bn1 = bn2 = 0.0
        for c in range(candidates.shape[1]):
            fc = candidates[s, c]
            if fc < 0:
                continue
            nodes = face_nodes[fc]
            c0, c1, c2, n0, n1, n2 = _face_frame(x, nodes)
            delta = (p0 - c0) * n0 + (p1 - c1) * n1 + (p2 - c2) * n2
            if delta > tol or delta <= best_delta:
                continue
            if delta < 0.0:
                base = 6 * (fc // 6)
                nearest = -np.inf
                g_near = -1
                for g in range(6):
                    gc0, gc1, gc2, gn0, gn1, gn2 = _face_frame(x, face_nodes[base + g])
                    dg = (p0 - gc0) * gn0 + (p1 - gc1) * gn1 + (p2 - gc2) * gn2
                    if dg > nearest:
                        nearest, g_near = dg, g
                if nearest > tol or base + g_near != fc:
                    continue
            q0 = p0 - delta * n0
            q1 = p1 - delta * n1
            q2 = p2 - delta * n2
            for tri in range(2):
                i, j, kk = nodes[0], nodes[1 + tri], nodes[2 + tri]
                wi, wj, wk = _barycentric(x, i, j, kk, q0, q1, q2, n0, n1, n2)
                eps = -1e-9
                if wi >= eps and wj >= eps and wk >= eps:
                    best, best_delta = fc, delta
                    bw0, bw1, bw2, bt = wi, wj, wk, tri
                    bn0, bn1, bn2 = n0, n1, n2
                    break
        if best < 0 or best_delta >= 0.0:
            _open(s, best, target, f_t, f_n_out, status, force, dashpot, dt, tally)
            continue
        target[s] = best
        nodes = face_nodes[best]
        ti, tj, tk = nodes[0], nodes[1 + bt], nodes[2 + bt]
        d0 = u0 - (bw0 * du[ti, 0] + bw1 * du[tj, 0] + bw2 * du[tk, 0])
        d1 = u1 - (bw0 * du[ti, 1] + bw1 * du[tj, 1] + bw2 * du[tk, 1])
        d2 = u2 - (bw0 * du[ti, 2] + bw1 * du[tj, 2] + bw2 * du[tk, 2])
        overlap = -best_delta
        deepest = max(deepest, overlap)
        c_n = c_unit[s] * math.sqrt(_effective_mass(mass[ss_face[s] // 6], mass[best // 6]))
        stored += _penalty(s, overlap, d0, d1, d2, bn0, bn1, bn2, k_n, k_t, c_n, mu, dt, f_t,
                           f_n_out, status, force, dashpot, tally)
        if f_n_out[s] > 0.0:
            n_active += 1
        for k in range(4):
            own_w[s, k] = w_vertex if k == ss_vertex[s] else w_other
        target_nodes[s, 0] = ti
        target_nodes[s, 1] = tj
        target_nodes[s, 2] = tk
        target_nodes[s, 3] = -1
        target_w[s, 0] = bw0
        target_w[s, 1] = bw1
        target_w[s, 2] = bw2
        target_w[s, 3] = 0.0
    tally[2] = stored
    return n_active, deepest


@njit(cache=True)
def _semi_spring_weights(alpha, vertex, out, scale):
    """out[k] += scale * weight of face node k in the semi-spring of ``vertex``."""
    for k in range(4):
        out[k] += scale * (0.25 * alpha + (1.0 - alpha if k == vertex else 0.0))


@njit(cache=True)
def semi_edge_step(x, du, face_nodes, ridge, ss_face, ss_vertex, candidates, alpha, k_n, k_t,
                   c_unit, mass, mu, tol, dt, target, f_t, f_n_out, status, dashpot, tally, force,
                   own_w, target_nodes, target_w):
    """Semi-edge -> target-edge contact forces (seed 002 section 4.3, Eqs. 11-12).

    Semi-edge s joins the semi-springs of vertices v and v+1 of face ss_face[s] (v =
    ss_vertex[s]); its characteristic area is the sum of theirs (seed 002 Eq. 5). Only block
    edges take part: ``ridge`` (n_faces, 4) marks face edges whose other face on the same
    element is also contact-capable (an edge between two coplanar faces of neighbouring
    glued elements is not an edge of the block, and semi-springs already carry a flat
    contact). For every ridge edge Q0-Q1 of the semi-spring's candidate faces: skip it if
    parallel
    (|e1 x e2|^2 <= 1e-6 |e1|^2 |e2|^2, Eq. 11); otherwise take the closest points P(s), Q(t)
    of the two segments, both inside (0.001 < s, t < 0.999: an end point is a vertex, the
    semi-springs' business, and a semi-edge lying in a face shared by two touching blocks
    meets the other block's edges only at their end points), the normal n = e1 x e2 / |..|
    turned outward of the target element, and the signed distance d = (P - Q) . n (Eq. 12).
    The edge is a target when d < 0 with the point P(s) inside the target element (within
    the search tolerance: at a crossing P lies on the planes of the edge's faces) and the
    depth -d below alpha times the semi-edge's length, about the semi-springs'
    indentation (deeper penetrations belong to the semi-springs, and a deeper "crossing" is
    with an edge on the far side of the element); the shallowest such edge is taken. Forces
    as in :func:`contact_step`: P(s) spreads over the
    face nodes with the semi-springs' weights, the reaction over Q0, Q1 with (1 - t, t).
    Arguments, outputs and return values as in :func:`contact_step`, per semi-edge.
    """
    n_active = 0
    deepest = 0.0
    stored = 0.0
    wa = np.zeros(4)
    wb = np.zeros(4)
    for s in range(ss_face.shape[0]):
        if not ridge[ss_face[s], ss_vertex[s]]:
            _open(s, -1, target, f_t, f_n_out, status, force, dashpot, dt, tally)
            continue
        own = face_nodes[ss_face[s]]
        v0 = ss_vertex[s]
        v1 = (v0 + 1) % 4
        wa[:] = 0.0
        wb[:] = 0.0
        _semi_spring_weights(alpha, v0, wa, 1.0)
        _semi_spring_weights(alpha, v1, wb, 1.0)
        a0 = a1 = a2 = b0 = b1 = b2 = 0.0
        for k in range(4):
            q = own[k]
            a0 += wa[k] * x[q, 0]
            a1 += wa[k] * x[q, 1]
            a2 += wa[k] * x[q, 2]
            b0 += wb[k] * x[q, 0]
            b1 += wb[k] * x[q, 1]
            b2 += wb[k] * x[q, 2]
        u0, u1, u2 = b0 - a0, b1 - a1, b2 - a2
        best = -1
        best_d = -np.inf
        bs = bt = 0.0
        bn0 = bn1 = bn2 = 0.0
        bq0 = bq1 = 0
        for c in range(candidates.shape[1]):
            fc = candidates[s, c]
            if fc < 0:
                continue
            nodes = face_nodes[fc]
            base = 6 * (fc // 6)
            cx = cy = cz = 0.0
            for g in range(6):
                for k in range(4):
                    cx += x[face_nodes[base + g, k], 0] / 24.0
                    cy += x[face_nodes[base + g, k], 1] / 24.0
                    cz += x[face_nodes[base + g, k], 2] / 24.0
            for j in range(4):
                if not ridge[fc, j]:
                    continue
                q0 = nodes[j]
                q1 = nodes[(j + 1) % 4]
                e0 = x[q1, 0] - x[q0, 0]
                e1 = x[q1, 1] - x[q0, 1]
                e2 = x[q1, 2] - x[q0, 2]
                w0 = a0 - x[q0, 0]
                w1 = a1 - x[q0, 1]
                w2 = a2 - x[q0, 2]
                aa = u0 * u0 + u1 * u1 + u2 * u2
                bb = u0 * e0 + u1 * e1 + u2 * e2
                cc = e0 * e0 + e1 * e1 + e2 * e2
                dd = u0 * w0 + u1 * w1 + u2 * w2
                ee = e0 * w0 + e1 * w1 + e2 * w2
                den = aa * cc - bb * bb
                if den <= 1e-6 * aa * cc:
                    continue
                ps = (bb * ee - cc * dd) / den
                pt = (aa * ee - bb * dd) / den
                if ps <= 1e-3 or ps >= 1.0 - 1e-3 or pt <= 1e-3 or pt >= 1.0 - 1e-3:
                    continue
                n0 = u1 * e2 - u2 * e1
                n1 = u2 * e0 - u0 * e2
                n2 = u0 * e1 - u1 * e0
                inv = 1.0 / math.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
                n0 *= inv
                n1 *= inv
                n2 *= inv
                if (x[q0, 0] - cx) * n0 + (x[q0, 1] - cy) * n1 + (x[q0, 2] - cz) * n2 < 0.0:
                    n0, n1, n2 = -n0, -n1, -n2
                p0 = a0 + ps * u0
                p1 = a1 + ps * u1
                p2 = a2 + ps * u2
                d = ((p0 - x[q0, 0] - pt * e0) * n0 + (p1 - x[q0, 1] - pt * e1) * n1
                     + (p2 - x[q0, 2] - pt * e2) * n2)
                if d >= -tol or d <= best_d or -d > alpha * math.sqrt(aa):
                    continue
                inside = True
                for g in range(6):
                    gc0, gc1, gc2, gn0, gn1, gn2 = _face_frame(x, face_nodes[base + g])
                    if (p0 - gc0) * gn0 + (p1 - gc1) * gn1 + (p2 - gc2) * gn2 > tol:
                        inside = False
                        break
                if not inside:
                    continue
                best, best_d = 4 * fc + j, d
                bs, bt = ps, pt
                bn0, bn1, bn2 = n0, n1, n2
                bq0, bq1 = q0, q1
        if best < 0:
            _open(s, best, target, f_t, f_n_out, status, force, dashpot, dt, tally)
            continue
        target[s] = best
        d0 = d1 = d2 = 0.0
        for k in range(4):
            w = (1.0 - bs) * wa[k] + bs * wb[k]
            q = own[k]
            d0 += w * du[q, 0]
            d1 += w * du[q, 1]
            d2 += w * du[q, 2]
        d0 -= (1.0 - bt) * du[bq0, 0] + bt * du[bq1, 0]
        d1 -= (1.0 - bt) * du[bq0, 1] + bt * du[bq1, 1]
        d2 -= (1.0 - bt) * du[bq0, 2] + bt * du[bq1, 2]
        overlap = -best_d - tol
        deepest = max(deepest, -best_d)
        c_n = c_unit[s] * math.sqrt(_effective_mass(mass[ss_face[s] // 6], mass[best // 24]))
        stored += _penalty(s, overlap, d0, d1, d2, bn0, bn1, bn2, k_n, k_t, c_n, mu, dt, f_t,
                           f_n_out, status, force, dashpot, tally)
        if f_n_out[s] > 0.0:
            n_active += 1
        for k in range(4):
            own_w[s, k] = (1.0 - bs) * wa[k] + bs * wb[k]
        target_nodes[s, 0] = bq0
        target_nodes[s, 1] = bq1
        target_nodes[s, 2] = -1
        target_nodes[s, 3] = -1
        target_w[s, 0] = 1.0 - bt
        target_w[s, 1] = bt
        target_w[s, 2] = 0.0
        target_w[s, 3] = 0.0
    tally[2] += stored
    return n_active, deepest


@njit(cache=True)
def add_in_order(f, rows, shares):
    """f[rows[r]] += shares[r] for r = 0, 1, ... in that order."""
    for r in range(rows.shape[0]):
        for c in range(3):
            f[rows[r], c] += shares[r, c]


class ContactSet:
    """Semi-springs of this rank's contact-capable elements and their potential targets.

    Surface elements (every element with a boundary face or a breakable shared face) are
    numbered by (owner rank, element id); surface node 8k + a is node a of surface element k,
    face 6k + f its face f. Every rank holds the coordinates of all surface nodes.
    """

    def __init__(self, comm, cfg, mesh, model, topo, parts, mats, volumes):
        self.comm = comm
        self.cfg = cfg.contact
        self.model = model
        n_el = mesh.n_cells
        boundary = np.ones((n_el, 6), dtype=bool)
        boundary[topo.elem[:, 0], topo.face[:, 0]] = False
        boundary[topo.elem[:, 1], topo.face[:, 1]] = False
        breakable = ~np.isinf(model_strength(cfg, mesh, mats, topo))
        capable = boundary.any(axis=1)
        capable[topo.elem[breakable].ravel()] = True
        self.surface_elems = np.nonzero(capable)[0]
        k_of = np.full(n_el, -1)
        k_of[self.surface_elems] = np.arange(len(self.surface_elems))
        self.n_surface = len(self.surface_elems)
        surface_part = parts[self.surface_elems]
        self.node_owner = np.repeat(surface_part, 8)
        counts = np.bincount(surface_part, minlength=comm.size)
        self.counts = 8 * 3 * counts
        self.offsets = np.concatenate([[0], np.cumsum(self.counts)[:-1]])
        by_rank = np.argsort(surface_part, kind="stable")
        self.rank_order_nodes = (8 * by_rank[:, None] + np.arange(8)).ravel()
        rank = comm.rank
        g2l = np.full(n_el, -1)
        g2l[model.elem_gid] = np.arange(model.n_el)
        mine = self.surface_elems[surface_part == rank]
        self.own_rows = (8 * g2l[mine][:, None] + np.arange(8)).ravel()
        self.row_of_node = np.full(8 * self.n_surface, -1, dtype=np.int64)
        self.row_of_node[(8 * k_of[mine][:, None] + np.arange(8)).ravel()] = self.own_rows
        self.face_nodes = (8 * np.arange(self.n_surface)[:, None, None]
                           + FACES[None]).reshape(-1, 4)
        self.boundary = boundary[self.surface_elems].ravel()
        self.shared_a = 6 * k_of[topo.elem[:, 0]] + topo.face[:, 0]
        self.shared_b = 6 * k_of[topo.elem[:, 1]] + topo.face[:, 1]
        self.pair_a, self.pair_b = topo.elem[:, 0], topo.elem[:, 1]
        self.n_el_global = n_el
        self.mine_k = k_of[mine]
        x_surf = mesh.points[mesh.cells[self.surface_elems]]
        quads = x_surf[:, FACES].reshape(-1, 4, 3)
        self.face_area0 = face_areas(quads)
        h = (volumes[self.surface_elems][:, None] / self.face_area0.reshape(-1, 6)).ravel()
        p_mod = (mats.lam + 2 * mats.mu)[self.surface_elems].repeat(6)
        shear = mats.mu[self.surface_elems].repeat(6)
        c = self.cfg
        self.kn_area = (np.full(len(h), c.normal_stiffness) if c.normal_stiffness > 0
                        else c.stiffness_factor * p_mod / h)
        self.kt_area = (np.full(len(h), c.shear_stiffness) if c.shear_stiffness > 0
                        else c.stiffness_factor * shear / h)
        held = np.zeros(self.n_surface, dtype=np.int32)
        held[k_of[mine]] = model.fixed[self.own_rows].reshape(-1, 24).all(axis=1)
        comm.Allreduce(MPI.IN_PLACE, held, op=MPI.MAX)
        self.dashpot_mass = np.where(held.astype(bool), np.inf, mats.density[self.surface_elems]
                                     * volumes[self.surface_elems] / 4.0)
        self.mu = math.tan(math.radians(c.friction_deg))
        self.damping_ratio = damping_ratio_from_restitution(c.restitution)
        self.size = float(np.median(np.sqrt(self.face_area0))) if self.n_surface else 0.0
        self.tol = c.tolerance * self.size
        self.margin = c.margin * self.size
        self.x = np.zeros((8 * self.n_surface, 3))
        self.du = np.zeros_like(self.x)
        self.gathered = np.zeros_like(self.x)
        self.glued = np.ones(len(topo.elem), dtype=bool)
        self.ss_keys = np.zeros(0, dtype=np.int64)
        self._set_semi_springs(np.zeros(0, dtype=np.int64))
        self.tally = np.zeros(3)
        self.steps_since_renewal = 0
        self.x_renewal = None
        self.renewals = 0
        self.checks = 0
        self.max_overlap = 0.0
        self.steps = 0
        self.types_seen: set[str] = set()

    # -- topology changes ------------------------------------------------------------------
    def update_glue(self) -> None:
        """Which shared faces are still glued (any intact spring), from their owners."""
        m = self.model
        local = np.zeros(len(self.glued), dtype=np.int32)
        local[m.face_gid] = (m.state == 0).any(axis=1)
        total = np.empty_like(local)
        self.comm.Allreduce(local, total, op=MPI.MAX)
        glued = total.astype(bool)
        if not np.array_equal(glued, self.glued) or not len(self.ss_keys):
            self.glued = glued
            active = self.boundary.copy()
            loose = ~glued
            active[self.shared_a[loose]] = True
            active[self.shared_b[loose]] = True
            self.active = active
            neighbour = 6 * (np.arange(len(active)) // 6)[:, None] \
                + EDGE_NEIGHBOURS[np.arange(len(active)) % 6]
            self.ridge = active[:, None] & active[neighbour]
            self.glued_keys = np.sort(np.concatenate([
                self.pair_a[glued] * self.n_el_global + self.pair_b[glued],
                self.pair_b[glued] * self.n_el_global + self.pair_a[glued]]))
            faces = (6 * self.mine_k[:, None] + np.arange(6)).ravel()
            faces = faces[active[faces]]
            self._set_semi_springs(faces)
            self.x_renewal = None

    def _set_semi_springs(self, faces: np.ndarray) -> None:
        keys = (4 * faces[:, None] + np.arange(4)).ravel()
        old = {int(k): i for i, k in enumerate(self.ss_keys)}
        n = len(keys)
        target = np.full(n, -1, dtype=np.int64)
        f_t = np.zeros((n, 3))
        se_target = np.full(n, -1, dtype=np.int64)
        se_f_t = np.zeros((n, 3))
        dashpot = np.zeros((n, 2))
        se_dashpot = np.zeros((n, 2))
        for i, k in enumerate(keys):
            j = old.get(int(k))
            if j is not None:
                target[i], f_t[i], dashpot[i] = self.target[j], self.f_t[j], self.dashpot[j]
                se_target[i], se_f_t[i] = self.se_target[j], self.se_f_t[j]
                se_dashpot[i] = self.se_dashpot[j]
        self.ss_keys = keys
        self.ss_face = keys // 4
        self.ss_vertex = keys % 4
        area = self.face_area0[self.ss_face] / 4.0
        self.k_n = self.kn_area[self.ss_face] * area
        self.k_t = self.kt_area[self.ss_face] * area
        self.c_unit = 2.0 * self.damping_ratio * np.sqrt(self.k_n)
        self.target = target
        self.f_t = f_t
        self.f_n = np.zeros(n)
        self.status = np.full(n, OPEN, dtype=np.int64)
        self.dashpot = dashpot
        self.candidates = np.full((n, N_CANDIDATES), -1, dtype=np.int64)
        self.se_k_n, self.se_k_t, self.se_c_unit = 2.0 * self.k_n, 2.0 * self.k_t, 2.0 * self.c_unit
        self.se_target = se_target
        self.se_f_t = se_f_t
        self.se_f_n = np.zeros(n)
        self.se_status = np.full(n, OPEN, dtype=np.int64)
        self.se_dashpot = se_dashpot
        self.loads = [(np.zeros((n, 3)), np.zeros((n, 4)), np.full((n, 4), -1, dtype=np.int64),
                       np.zeros((n, 4))) for _ in ("semi-springs", "semi-edges")]

    # -- per step --------------------------------------------------------------------------
    def gather(self) -> None:
        """Surface-node coordinates and increments of all ranks, on every rank, in the global
        order of the surface elements."""
        m = self.model
        if self.comm.size == 1:
            np.take(m.x, self.own_rows, axis=0, out=self.x)
            np.take(m.du, self.own_rows, axis=0, out=self.du)
            return
        for values, full in ((m.x, self.x), (m.du, self.du)):
            self.comm.Allgatherv(values[self.own_rows],
                                 [self.gathered, (self.counts, self.offsets), MPI.DOUBLE])
            full[self.rank_order_nodes] = self.gathered

    def semi_spring_positions(self) -> np.ndarray:
        a = self.cfg.indentation
        nodes = self.face_nodes[self.ss_face]
        vertex = self.x[nodes[np.arange(len(nodes)), self.ss_vertex]]
        return (1.0 - a) * vertex + a * self.x[nodes].mean(axis=1)

    def renew(self) -> None:
        """Refill the 8 potential targets of every semi-spring (nearest active face centres
        within the largest circumradius plus the margin, other elements not glued to it)."""
        self.renewals += 1
        faces = np.nonzero(self.active)[0]
        self.candidates[:] = -1
        self.x_renewal = self.x.copy()
        self.steps_since_renewal = 0
        if not len(faces) or not len(self.ss_face):
            return
        quads = self.x[self.face_nodes[faces]]
        centres = quads.mean(axis=1)
        radius = np.linalg.norm(quads - centres[:, None], axis=2).max() + self.margin
        circum = np.linalg.norm(quads - centres[:, None], axis=2).max(axis=1)
        tree = cKDTree(centres)
        k = min(len(faces), 8 * N_CANDIDATES)
        dist, idx = tree.query(self.semi_spring_positions(), k=k, distance_upper_bound=radius)
        dist, idx = np.atleast_2d(dist), np.atleast_2d(idx)
        ok = np.isfinite(dist)
        idx = np.minimum(idx, len(faces) - 1)
        # rank by the distance to each face's bounding sphere, so that large faces whose
        # centre is far away still come first when the point is over them
        gap = np.where(ok, dist - circum[idx], np.inf)
        order = np.argsort(gap, axis=1, kind="stable")
        idx = np.take_along_axis(idx, order, axis=1)
        ok = np.take_along_axis(ok, order, axis=1)
        cand = np.where(ok, faces[idx], -1)
        elem_s = self.surface_elems[self.ss_face // 6][:, None]
        elem_t = np.where(ok, self.surface_elems[np.maximum(cand, 0) // 6], -1)
        ok &= elem_t != elem_s
        ok &= ~np.isin(elem_s * self.n_el_global + elem_t, self.glued_keys)
        for i in range(len(cand)):
            chosen = cand[i][ok[i]][:N_CANDIDATES]
            self.candidates[i, : len(chosen)] = chosen
        self.checks += int(ok.sum())

    def step(self, dt: float) -> int:
        """Contact forces of this step, added to the model's spring-force rows."""
        self.gather()
        moved = (0.0 if self.x_renewal is None
                 else float(np.abs(self.x - self.x_renewal).max(initial=0.0)))
        if (self.x_renewal is None or self.steps_since_renewal >= self.cfg.renew_every
                or moved > 0.5 * self.margin):
            self.renew()
        self.steps_since_renewal += 1
        active, deepest = contact_step(self.x, self.du, self.face_nodes, self.ss_face,
                              self.ss_vertex, self.candidates, self.cfg.indentation, self.k_n,
                              self.k_t, self.c_unit, self.dashpot_mass, self.mu, self.tol, dt,
                              self.target, self.f_t, self.f_n, self.status, self.dashpot,
                              self.tally, *self.loads[0])
        edges, edge_deepest = semi_edge_step(
            self.x, self.du, self.face_nodes, self.ridge, self.ss_face, self.ss_vertex,
            self.candidates, self.cfg.indentation, self.se_k_n, self.se_k_t, self.se_c_unit,
            self.dashpot_mass, self.mu, self.tol, dt, self.se_target, self.se_f_t, self.se_f_n,
            self.se_status, self.se_dashpot, self.tally, *self.loads[1])
        self.max_overlap = max(self.max_overlap, deepest, edge_deepest)
        self.steps += 1
        if self.steps % 10 == 0:
            self.types_seen |= self.contact_types()
        nodes, keys, shares = self.exchange(*self.node_shares())
        order = np.lexsort((keys, nodes))
        add_in_order(self.model.f_spr, self.row_of_node[nodes[order]], shares[order])
        return active + edges

    def node_shares(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Surface node, order key and force of every node's share of every loaded contact
        of this rank. Key 2 (4 face + vertex) + kind (0 semi-spring, 1 semi-edge) is the
        contact's place in the global order (faces numbered by global element), the same
        on any partition; a contact loads a node at most once."""
        nodes, keys, shares = [], [], []
        for kind, (force, own_w, target_nodes, target_w) in enumerate(self.loads):
            a = np.nonzero(np.any(force != 0.0, axis=1))[0]
            node = np.concatenate([self.face_nodes[self.ss_face[a]], target_nodes[a]], axis=1)
            weight = np.concatenate([own_w[a], -target_w[a]], axis=1)
            used = node >= 0
            nodes.append(node[used])
            keys.append(np.broadcast_to((2 * self.ss_keys[a] + kind)[:, None], node.shape)[used])
            shares.append((weight[:, :, None] * force[a][:, None, :])[used])
        return np.concatenate(nodes), np.concatenate(keys), np.concatenate(shares)

    def exchange(self, nodes, keys, shares) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Send every node share to the rank that owns the node (Alltoallv)."""
        size = self.comm.size
        if size == 1:
            return nodes, keys, shares
        dest = self.node_owner[nodes]
        order = np.argsort(dest, kind="stable")
        send = np.column_stack([nodes, keys, shares])[order]
        send_counts = 5 * np.bincount(dest, minlength=size)
        recv_counts = np.empty_like(send_counts)
        self.comm.Alltoall(send_counts, recv_counts)
        recv = np.empty((int(recv_counts.sum()) // 5, 5))
        self.comm.Alltoallv([send, (send_counts, None), MPI.DOUBLE],
                            [recv, (recv_counts, None), MPI.DOUBLE])
        return recv[:, 0].astype(np.int64), recv[:, 1].astype(np.int64), recv[:, 2:]

    def contact_types(self) -> set[str]:
        """Traditional contact types of this rank's compressed contacts, per pair (own face,
        target element) with n semi-springs and m semi-edges in compression: face-face for
        n + m >= 3 (a face held at three or more points, also over the target's edge
        without a vertex inside), edge-face for n = 2, vertex-face for n = 1, edge-edge for
        semi-edges alone (n = 0)."""
        stride = 8 * self.n_surface
        ss = self.f_n > 0
        se = self.se_f_n > 0
        keys_ss = self.ss_face[ss] * stride + self.target[ss] // 6
        keys_se = self.ss_face[se] * stride + self.se_target[se] // 24
        types = set()
        for key in np.union1d(keys_ss, keys_se):
            n = int(np.count_nonzero(keys_ss == key))
            m = int(np.count_nonzero(keys_se == key))
            if n + m >= 3:
                types.add("face-face")
            elif n == 2:
                types.add("edge-face")
            elif n == 1:
                types.add("vertex-face")
            else:
                types.add("edge-edge")
        return types

    def target_faces(self) -> np.ndarray:
        """Each semi-spring's target face as 6 (global element id) + local face, -1 if none."""
        t = self.target
        return np.where(t >= 0, 6 * self.surface_elems[np.maximum(t, 0) // 6] + t % 6, -1)

    def summary(self) -> dict:
        """Counts over all ranks: semi-springs, contacts in compression, sticking, sliding,
        target renewals and candidate checks made at renewals."""
        local = np.array([len(self.ss_face), np.count_nonzero(self.f_n > 0),
                          np.count_nonzero(self.status == STICK),
                          np.count_nonzero(self.status == SLIP), self.checks], dtype=np.int64)
        total = np.empty_like(local)
        self.comm.Allreduce(local, total, op=MPI.SUM)
        return {"semi_springs": int(total[0]), "in_compression": int(total[1]),
                "sticking": int(total[2]), "sliding": int(total[3]),
                "renewals": self.renewals, "candidate_checks": int(total[4]),
                "types_seen": sorted(set().union(*self.comm.allgather(self.types_seen))),
                "semi_edges_in_compression": self.comm.allreduce(
                    int(np.count_nonzero(self.se_f_n > 0)), op=MPI.SUM),
                "max_penetration_ratio": self.comm.allreduce(self.max_overlap, op=MPI.MAX)
                / self.size}

    def stable_stiffness(self) -> np.ndarray:
        """Contact stiffness a node may carry at most (3 own semi-springs + 3 targets)."""
        k = np.maximum(self.kn_area, self.kt_area) * self.face_area0 / 4.0
        per_elem = k.reshape(-1, 6).max(axis=1) if len(k) else k
        return 6.0 * per_elem

    def node_damping_ratio(self) -> float:
        """Damping ratio of a semi-spring's dashpot on its vertex node alone,
        c / (2 sqrt(k m_node)) = zeta sqrt(m_eff / m_node) = zeta sqrt(2) (m_node = M / 8)."""
        return self.damping_ratio * math.sqrt(2.0)


def model_strength(cfg, mesh, mats, topo) -> np.ndarray:
    """Tensile strength of every shared face (inf: never breaks, never becomes a contact)."""
    from solver.cdem.model import interface_strength
    tensile, cohesion, _ = interface_strength(cfg, mesh, mats, topo.elem, "contact")
    return np.where(np.isinf(tensile) & np.isinf(cohesion), np.inf, tensile)
