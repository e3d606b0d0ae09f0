"""Candidate search: the spatial hash (solver.cdem.contact.detect.find_candidates, the
paper's static cell grid hashed) against a k-d tree (scipy cKDTree) on the same heap.

Both return, for every semi-spring point, the 8 active faces of other, unglued elements
with a bounding-sphere gap |p - c_f| - R_f <= margin with the smallest distance bound
max(|p - c_f| - R_f, |(p - c_f) . n_f| - h_f) (ties by global face id); the script checks
that they agree and prints the time per semi-spring (the renewal's face_frames included
in the hash's time).

    python scripts/bench_search.py [N_ELEMENTS]
"""

from __future__ import annotations

import sys
import time

import numpy as np
from mpi4py import MPI
from scipy.spatial import cKDTree

from solver.bench.scale import heap_config, heap_mesh
from solver.cdem.contact.detect import face_spheres, find_candidates
from solver.cdem.contact.exchange import semi_spring_points
from solver.cdem.contact.frames import face_frames
from solver.cdem.contact.records import N_CANDIDATES
from solver.cdem.model import model_from_mesh


def kd_tree_candidates(points, point_elem, glued, centre, radius, frames, gid, margin):
    """The same candidates from a k-d tree of the active face centres."""
    active = np.nonzero(radius >= 0.0)[0]
    tree = cKDTree(centre[active])
    reach = radius[active].max() + margin
    out = np.full((len(points), N_CANDIDATES), -1, dtype=np.int64)
    for s, near in enumerate(tree.query_ball_point(points, reach)):
        q = active[np.asarray(near, dtype=np.int64)]
        gap = np.linalg.norm(points[s] - centre[q], axis=1) - radius[q]
        target = gid[q // 6]
        ok = ((gap <= margin) & (target != gid[point_elem[s]])
              & ~np.isin(target, glued[point_elem[s]]))
        q, gap = q[ok], gap[ok]
        plane = np.abs(np.einsum("ij,ij->i", points[s] - frames[q, :3], frames[q, 3:6]))
        bound = np.maximum(gap, plane - frames[q, 6])
        q = q[np.lexsort((6 * gid[q // 6] + q % 6, bound))][:N_CANDIDATES]
        out[s, :len(q)] = q
    return out


def main(n_elements: int) -> None:
    comm = MPI.COMM_SELF
    model = model_from_mesh(comm, heap_config(), heap_mesh(n_elements), "bench")
    c = model.contact
    x = model.nodes.x
    c.renew(x, model.nodes.du)
    mesh, springs, margin = c.mesh, c.semi_springs, c.params.margin
    centre = np.zeros((6 * len(mesh.gid), 3))
    radius = np.zeros(6 * len(mesh.gid))
    face_spheres(c.packed_mesh, centre, radius)
    points = np.zeros((len(springs), 3))
    semi_spring_points(x, mesh.base, springs.elem, springs.face, springs.vertex, c.params.alpha,
                       points)
    glued = c.glued[c.own_active]
    grid = np.empty((len(points), N_CANDIDATES), dtype=np.int64)
    face_frames(c.packed_mesh)
    find_candidates(points, springs.elem, glued, centre, radius, mesh.frames, mesh.gid, margin,
                    grid)
    start = time.process_time()
    face_frames(c.packed_mesh)
    find_candidates(points, springs.elem, glued, centre, radius, mesh.frames, mesh.gid, margin,
                    grid)
    t_grid = time.process_time() - start
    start = time.process_time()
    tree = kd_tree_candidates(points, springs.elem, glued, centre, radius, mesh.frames, mesh.gid,
                              margin)
    t_tree = time.process_time() - start
    assert np.array_equal(grid, tree), "the two searches disagree"
    n = len(points)
    print(f"{n} semi-springs, {int((radius >= 0).sum())} active faces: spatial hash "
          f"{t_grid / n * 1e9:.0f} ns, k-d tree {t_tree / n * 1e9:.0f} ns per semi-spring "
          f"(same candidates)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000)
