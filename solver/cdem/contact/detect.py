"""Contact detection: potential targets of every semi-spring, and which faces a rank needs
from its neighbours to find them.

Potential targets (Feng et al. 2014, section 4.1: a fixed-length array of 8 potential
objects per semi-spring, renewed every 100-1000 steps): the active faces whose bounding
sphere (centre c_f, radius R_f = the largest vertex distance) comes within the search
margin of the semi-spring point p, |p - c_f| - R_f <= margin, of elements other than
the semi-spring's own and not glued to it, the 8 nearest by the lower bound of the
point-face distance

    d_f = max(|p - c_f| - R_f, |(p - c_f) . n_f| - h_f)

(ties by global face id, so that the choice is the same on any partition). n_f is the
normal of the face's two diagonals and h_f its warp (solver.cdem.contact.frames
.face_frames): the bilinear face lies within h_f of the plane through c_f normal to n_f,
so no point of it is nearer p than either term. The sphere gap alone ranks a large face
whose sphere holds p ahead of a small face just below p, even where p is tens of metres
from the large face's plane (the coarse valley floor under the Jiweishan mass); the plane
term puts the large face back by its distance. They are found with a spatial hash
of face centres on several levels of cell size (a face of reach R + margin on the level
whose cells are just larger, so every face within reach sits in the 27 cells around p on
its level; the paper's static cell grid, hashed so that a runout spread over kilometres
needs no dense grid, and layered so that large and small elements can meet;
scripts/bench_search.py compares it with a k-d tree).

Ghost faces, in two levels at every renewal:

1. every rank bounds its active elements by up to 64 boxes (``surface_boxes``) and
   publishes the box that holds them, their number and the largest face radius among its
   elements (``holding_row``; an Allgather of 64 B per rank). With h = Rmax + margin (Rmax
   the largest over all ranks), ranks whose holding boxes come within h of each other
   (``near_holding_boxes``) send each other their boxes, and those whose boxes come within
   h of each other (``boxes_within``) are neighbours, a symmetric relation every rank
   evaluates alike. A box lies in its holding box, so no pair of neighbours is lost to the
   first test, and a rank's work and messages follow the ranks near it rather than the
   rank count;
2. each rank sends each neighbour the bounding boxes of its active elements within
   R_n + margin of the neighbour's boxes (R_n the neighbour's own largest face radius: no
   face of it reaches farther; ``boxes_within``), and gets back the elements with a face
   whose sphere, inflated by the margin, reaches one of them (``faces_near_boxes``): every
   face a neighbour's semi-spring could take as a candidate, since its semi-springs lie in
   those element boxes, and hardly more (one layer of elements along a partition boundary).

Only neighbours exchange cells and elements, so the traffic scales with the partition
boundary, not with the whole surface.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from solver.cdem.contact.frames import plane_distance
from solver.cdem.contact.records import N_CANDIDATES
from solver.mesh.topology import FACES


@njit(cache=True)
def face_spheres(mesh, centre, radius):
    """Centre (mean of the 4 vertices) and radius (largest vertex distance) of every active
    face 6 c + f of the contact elements of ``mesh`` (a ContactMesh, packed:
    solver.cdem.packed), in ``centre`` (6 n_c, 3) and ``radius`` (6 n_c,); inactive faces get
    radius -1."""
    mesh = mesh.value
    x, ghost_x, base, n_own, active = mesh.x, mesh.ghost_x, mesh.base, mesh.n_own, mesh.active
    for c in range(active.shape[0]):
        xs = x if c < n_own else ghost_x
        b = base[c]
        for f in range(6):
            q = 6 * c + f
            if not active[c, f]:
                radius[q] = -1.0
                continue
            c0 = c1 = c2 = 0.0
            for k in range(4):
                r = b + FACES[f, k]
                c0 += 0.25 * xs[r, 0]
                c1 += 0.25 * xs[r, 1]
                c2 += 0.25 * xs[r, 2]
            rad = 0.0
            for k in range(4):
                r = b + FACES[f, k]
                d = math.sqrt((xs[r, 0] - c0) ** 2 + (xs[r, 1] - c1) ** 2 + (xs[r, 2] - c2) ** 2)
                rad = max(rad, d)
            centre[q, 0] = c0
            centre[q, 1] = c1
            centre[q, 2] = c2
            radius[q] = rad


@njit(cache=True)
def element_boxes(x, base, n):
    """Bounding boxes lo, hi (n, 3) of the first n contact elements (8 nodes from base)."""
    lo = np.empty((n, 3))
    hi = np.empty((n, 3))
    for c in range(n):
        for k in range(3):
            lo[c, k] = hi[c, k] = x[base[c], k]
        for a in range(1, 8):
            for k in range(3):
                lo[c, k] = min(lo[c, k], x[base[c] + a, k])
                hi[c, k] = max(hi[c, k], x[base[c] + a, k])
    return lo, hi


@njit(cache=True)
def surface_boxes(lo, hi):
    """At most 64 boxes (m, 6: lo, hi) covering the element boxes lo, hi (n, 3): the
    elements binned by centre on a 4 x 4 x 4 grid over their extent, a box per bin (in bin
    order)."""
    n = lo.shape[0]
    centre = 0.5 * (lo + hi)
    low = np.full(3, np.inf)
    high = np.full(3, -np.inf)
    for i in range(n):
        for k in range(3):
            low[k] = min(low[k], centre[i, k])
            high[k] = max(high[k], centre[i, k])
    boxes = np.empty((64, 6))
    boxes[:, :3] = np.inf
    boxes[:, 3:] = -np.inf
    used = np.zeros(64, dtype=np.bool_)
    for i in range(n):
        b = 0
        for k in range(3):
            span = high[k] - low[k] if high[k] > low[k] else 1.0
            b = 4 * b + min(int(4 * (centre[i, k] - low[k]) / span), 3)
        used[b] = True
        for k in range(3):
            boxes[b, k] = min(boxes[b, k], lo[i, k])
            boxes[b, 3 + k] = max(boxes[b, 3 + k], hi[i, k])
    return boxes[used]


#: Columns of a rank's row in the renewal's Allgather (holding_row): the box that holds
#: its boxes (lo, hi), its largest face radius, its number of boxes.
HOLDING_WIDTH = 8


def holding_row(boxes: np.ndarray, r_max: float) -> np.ndarray:
    """A rank's row of the renewal's Allgather: the box that holds ``boxes`` (m, 6), the
    largest face radius ``r_max`` and m (HOLDING_WIDTH columns; no box: lo +inf, hi -inf)."""
    row = np.empty(HOLDING_WIDTH)
    row[:3] = boxes[:, :3].min(axis=0, initial=np.inf)
    row[3:6] = boxes[:, 3:].max(axis=0, initial=-np.inf)
    row[6] = r_max
    row[7] = len(boxes)
    return row


def near_holding_boxes(table: np.ndarray, me: int, h: float) -> np.ndarray:
    """The ranks (ascending) other than ``me`` whose holding box in ``table`` (p,
    HOLDING_WIDTH: holding_row of every rank) lies within h of mine, both holding boxes
    bounding some box: boxes_within's test, whose squared distance is no larger than that of
    any box of one rank from any box of the other, in floating point too (each step of it
    rises with the per-axis gaps), so the ranks kept include every rank with a box within h
    of one of mine."""
    if table[me, 7] == 0:
        return np.zeros(0, dtype=np.int64)
    near = boxes_within(np.ascontiguousarray(table[:, :3]), np.ascontiguousarray(table[:, 3:6]),
                        np.ascontiguousarray(table[me:me + 1, :6]), h)
    return near[(table[near, 7] > 0) & (near != me)]


@njit(cache=True, inline="always")
def _holding_box(boxes):
    """(lo, hi) of the box that holds all the ``boxes`` (m, 6: lo, hi)."""
    lo = np.full(3, np.inf)
    hi = np.full(3, -np.inf)
    for j in range(boxes.shape[0]):
        for k in range(3):
            lo[k] = min(lo[k], boxes[j, k])
            hi[k] = max(hi[k], boxes[j, 3 + k])
    return lo, hi


@njit(cache=True)
def boxes_within(lo, hi, boxes, reach):
    """Indices of the boxes lo, hi (n, 3) within ``reach`` of any of ``boxes`` (m, 6).
    A box farther than ``reach`` from the box that holds them all is passed over at once."""
    out = np.zeros(lo.shape[0], dtype=np.bool_)
    all_lo, all_hi = _holding_box(boxes)
    for i in range(lo.shape[0]):
        d2 = 0.0
        for k in range(3):
            g = max(all_lo[k] - hi[i, k], lo[i, k] - all_hi[k], 0.0)
            d2 += g * g
        if d2 > reach * reach:
            continue
        for j in range(boxes.shape[0]):
            d2 = 0.0
            for k in range(3):
                g = max(boxes[j, k] - hi[i, k], lo[i, k] - boxes[j, 3 + k], 0.0)
                d2 += g * g
            if d2 <= reach * reach:
                out[i] = True
                break
    return np.nonzero(out)[0]


@njit(cache=True, inline="always")
def _reaches(q, centre, radius, margin, boxes, j):
    """Whether face q's sphere, inflated by the margin, reaches box j."""
    g0 = max(boxes[j, 0] - centre[q, 0], centre[q, 0] - boxes[j, 3], 0.0)
    g1 = max(boxes[j, 1] - centre[q, 1], centre[q, 1] - boxes[j, 4], 0.0)
    g2 = max(boxes[j, 2] - centre[q, 2], centre[q, 2] - boxes[j, 5], 0.0)
    reach = radius[q] + margin
    return g0 * g0 + g1 * g1 + g2 * g2 <= reach * reach


#: The box grid of :func:`faces_near_boxes` holds the boxes, smallest first, as long as
#: they fill at most this many of its cells per box on average (a few large boxes would
#: otherwise fill millions); the others are searched for on the face grid.
BOX_GRID_CELLS = 16


@njit(cache=True)
def faces_near_boxes(centre, radius, n_faces, boxes, first, margin):
    """For each set i of boxes, ``boxes[first[i]:first[i + 1]]`` (m, 6: lo, hi; a set per
    neighbour rank), the own elements (face index // 6) with an active face whose sphere,
    inflated by the margin, reaches one of its boxes: row i of the (n_sets, n_faces // 6)
    mask returned.

    Two grids share the pairs (face, box) between them:
    * the faces on the multi-level grid of ``find_candidates`` (a face of reach R + margin
      on the level whose cell edge h_L is at least its reach): each box looks, on every
      occupied level, at the cells its inflation by h_L covers within the range of cells
      the level's faces occupy (a face centre within reach of the box lies in one of
      them); a box that covers more of those cells than the level has faces tests its
      faces one by one instead. Cells of the largest reach instead would put thousands of
      the sliding mass's small element boxes beside every face where the coarse valley
      floor meets it. Every box meets the faces of the upper levels here, and the boxes
      left off the box grid those of level 0 too;
    * the other boxes on a grid of cell edge (median box extent + margin), smallest first
      while they fill at most BOX_GRID_CELLS cells per box: each face of level 0 (most of
      them: the small faces) looks at the cells its reach covers. On the production
      Jiweishan's partial renewals (about 85,000 active faces, 14,000-15,000
      boxes) this took the search from 34-47 to 21-28 ms.

    Faces whose reach misses the box that holds all the boxes (most of a rank's faces,
    where the boxes come from the far side of its cut) stay off both grids."""
    n_sets = first.shape[0] - 1
    out = np.zeros((n_sets, n_faces // 6), dtype=np.bool_)
    if first[n_sets] == 0:
        return out
    radius = _within_reach(centre, radius, margin, boxes)
    grid = _level_grid(centre, radius, margin)
    if len(grid.members) == 0:
        return out
    box_edge, on_box_grid = _box_grid_cells(boxes, margin)
    _near_on_face_grid(centre, radius, boxes, first, margin, grid, on_box_grid, out)
    _near_on_box_grid(centre, radius, boxes, first, margin, grid.smallest, box_edge,
                      on_box_grid, out)
    return out


@njit(cache=True)
def _within_reach(centre, radius, margin, boxes):
    """The face radii (radius < 0: inactive), with -1 for the faces whose sphere, inflated
    by the margin, does not reach the box that holds all the ``boxes`` (m, 6): those
    faces can reach none of them, and stay off the grids."""
    lo, hi = _holding_box(boxes)
    out = radius.copy()
    for q in range(radius.shape[0]):
        if radius[q] < 0.0:
            continue
        g2 = 0.0
        for k in range(3):
            g = max(lo[k] - centre[q, k], centre[q, k] - hi[k], 0.0)
            g2 += g * g
        reach = radius[q] + margin
        if g2 > reach * reach:
            out[q] = -1.0
    return out


@njit(cache=True)
def _box_grid_cells(boxes, margin):
    """Cell edge of the box grid (median box extent + margin) and which boxes go on it:
    the smallest, as long as they fill at most BOX_GRID_CELLS cells per box (a box of
    extents e_k fills fewer than the product of e_k / edge + 2)."""
    m = boxes.shape[0]
    extent = np.empty(m)
    for j in range(m):
        extent[j] = max(boxes[j, 3] - boxes[j, 0], boxes[j, 4] - boxes[j, 1],
                        boxes[j, 5] - boxes[j, 2])
    box_edge = np.median(extent) + margin
    cells = np.empty(m)
    for j in range(m):
        cells[j] = 1.0
        for k in range(3):
            cells[j] *= (boxes[j, 3 + k] - boxes[j, k]) / box_edge + 2.0
    on_grid = np.zeros(m, dtype=np.bool_)
    filled = 0.0
    for j in np.argsort(cells):
        filled += cells[j]
        if filled > BOX_GRID_CELLS * m:
            break
        on_grid[j] = True
    return box_edge, on_grid


@njit(cache=True)
def _near_on_face_grid(centre, radius, boxes, first, margin, grid, on_box_grid, out):
    """The first grid of :func:`faces_near_boxes` (``grid`` the FaceGrid of the faces):
    every box against the faces of levels above 0, the boxes not ``on_box_grid`` against
    those of level 0 too."""
    origin, edge, smallest, mask, start, members = grid
    lo0, lo1, lo2 = origin[0], origin[1], origin[2]
    on_level = np.zeros(65, dtype=np.int64)
    for i in range(len(members)):
        on_level[_grid_level(radius[members[i]] + margin, smallest) + 1] += 1
    for level in range(64):
        on_level[level + 1] += on_level[level]
    fill = on_level[:-1].copy()
    by_level = np.empty(len(members), dtype=np.int64)
    cell_lo = np.full((64, 3), np.iinfo(np.int64).max)
    cell_hi = np.full((64, 3), np.iinfo(np.int64).min)
    for i in range(len(members)):
        q = members[i]
        level = _grid_level(radius[q] + margin, smallest)
        by_level[fill[level]] = q
        fill[level] += 1
        for k in range(3):
            cell = int(math.floor((centre[q, k] - origin[k]) / edge[level]))
            cell_lo[level, k] = min(cell_lo[level, k], cell)
            cell_hi[level, k] = max(cell_hi[level, k], cell)
    levels = np.nonzero(edge)[0]
    slack = 1.0 + 1e-6
    for i in range(first.shape[0] - 1):
        near = out[i]
        for j in range(first[i], first[i + 1]):
            for level in levels:
                if level == 0 and on_box_grid[j]:
                    continue
                h = edge[level]
                first0 = max(int(math.floor((boxes[j, 0] - lo0) / h - slack)), cell_lo[level, 0])
                first1 = max(int(math.floor((boxes[j, 1] - lo1) / h - slack)), cell_lo[level, 1])
                first2 = max(int(math.floor((boxes[j, 2] - lo2) / h - slack)), cell_lo[level, 2])
                last0 = min(int(math.floor((boxes[j, 3] - lo0) / h + slack)), cell_hi[level, 0])
                last1 = min(int(math.floor((boxes[j, 4] - lo1) / h + slack)), cell_hi[level, 1])
                last2 = min(int(math.floor((boxes[j, 5] - lo2) / h + slack)), cell_hi[level, 2])
                if first0 > last0 or first1 > last1 or first2 > last2:
                    continue
                cells = ((last0 - first0 + 1.0) * (last1 - first1 + 1.0)
                         * (last2 - first2 + 1.0))
                if cells > on_level[level + 1] - on_level[level]:
                    for at in range(on_level[level], on_level[level + 1]):
                        q = by_level[at]
                        if not near[q // 6] and _reaches(q, centre, radius, margin, boxes, j):
                            near[q // 6] = True
                    continue
                for c0 in range(first0, last0 + 1):
                    for c1 in range(first1, last1 + 1):
                        for c2 in range(first2, last2 + 1):
                            b = _level_hash(level, c0, c1, c2, mask)
                            for at in range(start[b], start[b + 1]):
                                q = members[at]
                                if not near[q // 6] and _reaches(q, centre, radius, margin,
                                                                 boxes, j):
                                    near[q // 6] = True


@njit(cache=True)
def _near_on_box_grid(centre, radius, boxes, first, margin, smallest, box_edge, on_box_grid,
                      out):
    """The second grid of :func:`faces_near_boxes`: the ``on_box_grid`` boxes hashed on a
    grid of cell edge ``box_edge`` (each in every cell it overlaps), against the faces of
    level 0, each looking at the cells its reach covers."""
    m = boxes.shape[0]
    set_of = np.empty(m, dtype=np.int64)
    for i in range(first.shape[0] - 1):
        set_of[first[i]:first[i + 1]] = i
    origin = np.empty(3)
    for k in range(3):
        origin[k] = boxes[:, k].min()
    size = 1
    while size < 8 * m:
        size *= 2
    mask = size - 1
    cell_of = np.empty(int(1.01 * BOX_GRID_CELLS * m) + 1, dtype=np.int64)
    box_of = np.empty_like(cell_of)
    n_entries = 0
    for j in range(m):
        if on_box_grid[j]:
            a0, b0, a1, b1, a2, b2 = _cell_range(boxes[j, :3], boxes[j, 3:], origin, box_edge)
            for c0 in range(a0, b0 + 1):
                for c1 in range(a1, b1 + 1):
                    for c2 in range(a2, b2 + 1):
                        cell_of[n_entries] = _cell_hash(c0, c1, c2, mask)
                        box_of[n_entries] = j
                        n_entries += 1
    start = np.zeros(size + 1, dtype=np.int64)
    for k in range(n_entries):
        start[cell_of[k] + 1] += 1
    for b in range(size):
        start[b + 1] += start[b]
    fill = start[:-1].copy()
    entries = np.empty(n_entries, dtype=np.int64)
    for k in range(n_entries):
        entries[fill[cell_of[k]]] = box_of[k]
        fill[cell_of[k]] += 1
    reach_lo = np.empty(3)
    reach_hi = np.empty(3)
    for q in range(radius.shape[0]):
        if radius[q] < 0.0 or _grid_level(radius[q] + margin, smallest) != 0:
            continue
        reach = radius[q] + margin
        for k in range(3):
            reach_lo[k] = centre[q, k] - reach
            reach_hi[k] = centre[q, k] + reach
        a0, b0, a1, b1, a2, b2 = _cell_range(reach_lo, reach_hi, origin, box_edge)
        for c0 in range(a0, b0 + 1):
            for c1 in range(a1, b1 + 1):
                for c2 in range(a2, b2 + 1):
                    b = _cell_hash(c0, c1, c2, mask)
                    for at in range(start[b], start[b + 1]):
                        j = entries[at]
                        i = set_of[j]
                        if not out[i, q // 6] and _reaches(q, centre, radius, margin, boxes, j):
                            out[i, q // 6] = True


@njit(cache=True, inline="always")
def _cell_range(lo, hi, origin, edge):
    """First and last cell along each axis of a grid of cell edge ``edge`` from ``origin``
    that the box lo, hi (3,) overlaps."""
    return (int(math.floor((lo[0] - origin[0]) / edge)),
            int(math.floor((hi[0] - origin[0]) / edge)),
            int(math.floor((lo[1] - origin[1]) / edge)),
            int(math.floor((hi[1] - origin[1]) / edge)),
            int(math.floor((lo[2] - origin[2]) / edge)),
            int(math.floor((hi[2] - origin[2]) / edge)))


@njit(cache=True)
def _cell_hash(i, j, k, mask):
    return ((i * 73856093) ^ (j * 19349663) ^ (k * 83492791)) & mask


@njit(cache=True, inline="always")
def _insert(row, gaps, ids, q, gap, gid, count):
    """Insert face q (distance bound gap, global id) into the sorted candidate row of length
    count; returns the new count (at most N_CANDIDATES)."""
    n = row.shape[0]
    for i in range(count):
        if row[i] == q:
            return count
    pos = count
    while pos > 0 and (gaps[pos - 1] > gap or (gaps[pos - 1] == gap and ids[pos - 1] > gid)):
        pos -= 1
    if pos >= n:
        return count
    last = min(count, n - 1)
    for i in range(last, pos, -1):
        row[i] = row[i - 1]
        gaps[i] = gaps[i - 1]
        ids[i] = ids[i - 1]
    row[pos] = q
    gaps[pos] = gap
    ids[pos] = gid
    return min(count + 1, n)


@njit(cache=True)
def _grid_level(reach, smallest):
    """Level L of a face of reach R + margin on the multi-level grid: the L with
    ``smallest * 2**L <= reach < smallest * 2**(L + 1)``."""
    level = 0
    bound = 2.0 * smallest
    while reach >= bound and level < 62:
        level += 1
        bound *= 2.0
    return level


@njit(cache=True)
def _level_hash(level, i, j, k, mask):
    return (_cell_hash(i, j, k, mask) ^ (level * 2654435761)) & mask


class FaceGrid(NamedTuple):
    """Faces hashed on the multi-level grid of ``find_candidates`` (:func:`_level_grid`):
    origin (3,) the lowest face centre coordinates [m], edge (64,) the cell edge h_L of
    each level [m] (0: empty), smallest the smallest reach r_0 [m], mask the hash mask,
    start (size + 1,) and members (n_active,) the faces of each hash bucket b in
    members[start[b]:start[b + 1]], in face order."""

    origin: np.ndarray
    edge: np.ndarray
    smallest: float
    mask: int
    start: np.ndarray
    members: np.ndarray


@njit(cache=True)
def _level_grid(centre, radius, margin):
    """The FaceGrid of the active faces (radius >= 0)."""
    n_faces = radius.shape[0]
    smallest = np.inf
    origin = np.full(3, np.inf)
    n_active = 0
    for q in range(n_faces):
        if radius[q] >= 0.0:
            n_active += 1
            smallest = min(smallest, radius[q] + margin)
            for k in range(3):
                origin[k] = min(origin[k], centre[q, k])
    edge = np.zeros(64)
    for q in range(n_faces):
        if radius[q] >= 0.0:
            level = _grid_level(radius[q] + margin, smallest)
            edge[level] = max(edge[level], radius[q] + margin)
    size = 1
    while size < 2 * n_active:
        size *= 2
    mask = size - 1
    bucket = np.empty(n_faces, dtype=np.int64)
    start = np.zeros(size + 1, dtype=np.int64)
    for q in range(n_faces):
        if radius[q] >= 0.0:
            level = _grid_level(radius[q] + margin, smallest)
            h = edge[level]
            b = _level_hash(level, int(math.floor((centre[q, 0] - origin[0]) / h)),
                            int(math.floor((centre[q, 1] - origin[1]) / h)),
                            int(math.floor((centre[q, 2] - origin[2]) / h)), mask)
            bucket[q] = b
            start[b + 1] += 1
    for b in range(size):
        start[b + 1] += start[b]
    fill = start[:-1].copy()
    members = np.empty(n_active, dtype=np.int64)
    for q in range(n_faces):
        if radius[q] >= 0.0:
            members[fill[bucket[q]]] = q
            fill[bucket[q]] += 1
    return FaceGrid(origin, edge, smallest, mask, start, members)


@njit(cache=True)
def find_candidates(points, point_elem, glued, centre, radius, frames, gid, margin,
                    candidates):
    """Fill ``candidates`` (n, 8) with the potential target faces of every semi-spring point
    (see the module docstring); -1 pads. point_elem (n,) the contact element of each point,
    glued (n_own, 6) global ids of the elements glued to it (-1 none), centre/radius the
    face spheres (radius < 0: inactive), frames the face planes (centre, normal, warp:
    face_frames), gid (n_elements,) global element ids. Returns the number of candidates
    stored.

    The faces are hashed on a multi-level grid (LAMMPS's multi neighbour binning): a face
    of reach R + margin sits on level L = floor(log2((R + margin) / r_0)) (r_0 the smallest
    reach), whose cells have the edge h_L of the largest reach on it, so a point within
    reach of the face lies in one of the 27 cells around the face centre's cell on that
    level. A point looks at those 27 cells on every occupied level. Cells sized by the
    largest face instead would put thousands of small faces next to each point where coarse
    and fine parts of a mesh meet (the valley floor and the sliding mass of Jiweishan)."""
    origin, edge, _, mask, start, members = _level_grid(centre, radius, margin)
    if len(members) == 0:
        candidates[:] = -1
        return 0
    lo0, lo1, lo2 = origin[0], origin[1], origin[2]
    levels = np.nonzero(edge)[0]
    gaps = np.empty(N_CANDIDATES)
    ids = np.empty(N_CANDIDATES, dtype=np.int64)
    row = np.empty(N_CANDIDATES, dtype=np.int64)
    stored = 0
    for s in range(points.shape[0]):
        p0, p1, p2 = points[s, 0], points[s, 1], points[s, 2]
        own = point_elem[s]
        own_gid = gid[own]
        count = 0
        for level in levels:
            h = edge[level]
            i0 = int(math.floor((p0 - lo0) / h))
            i1 = int(math.floor((p1 - lo1) / h))
            i2 = int(math.floor((p2 - lo2) / h))
            for c0 in range(i0 - 1, i0 + 2):
                for c1 in range(i1 - 1, i1 + 2):
                    for c2 in range(i2 - 1, i2 + 2):
                        b = _level_hash(level, c0, c1, c2, mask)
                        for m in range(start[b], start[b + 1]):
                            q = members[m]
                            d2 = ((p0 - centre[q, 0]) ** 2 + (p1 - centre[q, 1]) ** 2
                                  + (p2 - centre[q, 2]) ** 2)
                            limit = radius[q] + margin
                            if d2 > limit * limit:
                                continue
                            target = gid[q // 6]
                            if target == own_gid:
                                continue
                            gap = math.sqrt(d2) - radius[q]
                            if gap > margin:
                                continue
                            is_glued = False
                            for g in range(6):
                                if glued[own, g] == target:
                                    is_glued = True
                            if is_glued:
                                continue
                            plane = abs(plane_distance(frames, q, p0, p1, p2)) - frames[q, 6]
                            count = _insert(row, gaps, ids, q, max(gap, plane),
                                            6 * target + q % 6, count)
        for j in range(N_CANDIDATES):
            candidates[s, j] = row[j] if j < count else -1
        stored += count
    return stored


@njit(cache=True)
def local_faces(faces, gid):
    """Global face ids 6 g + f (-1 none) as faces 6 c + f of the contact elements with
    global ids ``gid`` (an open-addressing hash of gid, linear in the entries). Returns
    (mapped, whether every one was found)."""
    size = 1
    while size < 2 * gid.shape[0]:
        size *= 2
    mask = size - 1
    slot_gid = np.full(size, -1, dtype=np.int64)
    slot_at = np.empty(size, dtype=np.int64)
    for c in range(gid.shape[0]):
        b = (gid[c] * 2654435761) & mask
        while slot_gid[b] >= 0:
            b = (b + 1) & mask
        slot_gid[b] = gid[c]
        slot_at[b] = c
    out = np.full(faces.shape, -1, dtype=np.int64)
    flat = faces.ravel()
    mapped = out.ravel()
    found = True
    for i in range(flat.shape[0]):
        q = flat[i]
        if q < 0:
            continue
        g = q // 6
        b = (g * 2654435761) & mask
        while slot_gid[b] >= 0 and slot_gid[b] != g:
            b = (b + 1) & mask
        if slot_gid[b] == g:
            mapped[i] = 6 * slot_at[b] + q % 6
        else:
            found = False
    return out, found


@njit(cache=True)
def carried_faces(faces, elem_at, out):
    """Potential targets carried over a change of the contact elements: row i of ``faces``
    (faces 6 c + f, -1 none) goes to row i of ``out``, its face 6 c + f to 6 elem_at[c] + f
    (the records of faces freed since come after those rows, solver.cdem.contact.records,
    and are left as they are). Returns whether every element met has a new index
    (elem_at >= 0)."""
    found = True
    for i in range(faces.shape[0]):
        for k in range(faces.shape[1]):
            q = faces[i, k]
            out[i, k] = -1
            if q < 0:
                continue
            c = elem_at[q // 6]
            if c < 0:
                found = False
            else:
                out[i, k] = 6 * c + q % 6
    return found


@njit(cache=True)
def largest_move(x, x_renewal, base, n_own):
    """The largest move of a node of the own contact elements in any coordinate since the
    last renewal (x_renewal holds their 8 nodes each, in order; nan rows, of elements
    active since, count as not moved)."""
    largest = 0.0
    for c in range(n_own):
        b = base[c]
        for a in range(8):
            for k in range(3):
                move = abs(x[b + a, k] - x_renewal[8 * c + a, k])
                if move > largest:
                    largest = move
    return largest
