"""Contact detection and node-force kernels against brute-force references."""

import numpy as np
import pytest

from solver.cdem.contact.detect import (HOLDING_WIDTH, _box_grid_cells, boxes_within,
                                        element_boxes, face_spheres,
                                        faces_near_boxes, find_candidates, holding_row,
                                        local_faces, near_holding_boxes, surface_boxes)
from solver.cdem.contact.exchange import UNSORTED, ShareBuffers, ordered_sums
from solver.cdem.contact.frames import FRAME_WIDTH, face_frames
from solver.cdem.contact.law import (DashpotBodies, book_carried_dashpot, contact_law,
                                     energy_tally)
from solver.cdem.contact.mesh import ContactMesh
from solver.cdem.contact.pipeline import KEPT_REACH, ContactParams, kept_reach
from solver.cdem.contact.records import (N_CANDIDATES, SEMI_EDGE, SEMI_SPRING, ContactRecords,
                                         GrowingRows, renumber_target_nodes)
from solver.cdem.contact.semi_edge import semi_edge_geometry
from solver.cdem.contact.semi_spring import (_bilinear_projection, _face_accepts, _nearest_face,
                                             semi_spring_geometry)
from solver.cdem.packed import pack
from solver.cdem.tally import value as tally_value
from solver.contact_laws.laws import OPEN, STICK
from solver.contact_laws.register import DEFAULT_LAWS
from solver.mesh.topology import FACES

RNG = np.random.default_rng(7)


def _mesh(x, n, du=None, active=None, body=None):
    """The ContactMesh of n own elements (element c at rows 8 c of x, global id c, its own
    body unless ``body`` says otherwise), its frames written by face_frames."""
    gid = np.arange(n)
    mesh = ContactMesh.of(x=x, du=np.zeros_like(x) if du is None else du, base=8 * gid,
                          n_own=n, gid=gid,
                          active=np.ones((n, 6), dtype=bool) if active is None else active,
                          body=gid if body is None else body,
                          frames=np.zeros((6 * n, FRAME_WIDTH)), centroid=np.zeros((n, 3)))
    face_frames(pack(mesh))
    return mesh


def _params(alpha=0.01, tol=1e-4, mu=0.0, damping_ratio=0.0):
    """ContactParams packed for the kernels (the search margin, renewal and size unused)."""
    return pack(ContactParams(alpha=alpha, tol=tol, margin=0.0, mu=mu,
                              damping_ratio=damping_ratio, renew_every=1, size=1.0,
                              laws=DEFAULT_LAWS))


def _records(kind, elem, key=(0,), **state):
    """Records of one kind as the pipeline makes them (ContactRecords.insert: keys
    4 (6 g + f) + v, carried by contact element ``elem``, unit spring constants), with the
    fields named in ``state`` set."""
    key = np.asarray(key)
    rec = ContactRecords.empty(kind)
    rec.insert(key, np.full(len(key), elem), np.ones(len(key)), np.ones(len(key)))
    for name, value in state.items():
        getattr(rec, name)[:] = value
    return rec


def _spheres(n_elements):
    centre = RNG.random((6 * n_elements, 3)) * 4.0
    radius = RNG.random(6 * n_elements) * 0.4 + 0.1
    radius[RNG.random(6 * n_elements) < 0.2] = -1.0            # inactive faces
    return centre, radius


def _planes(centre, radius):
    """Face frames (centre, unit normal, warp up to a fifth of the radius) about the sphere
    centres."""
    normal = RNG.normal(size=centre.shape)
    normal /= np.linalg.norm(normal, axis=1)[:, None]
    warp = RNG.random(len(radius)) * 0.2 * np.abs(radius)
    return np.column_stack([centre, normal, warp])


def _distance_bound(p, frames, radius):
    """Lower bound of the distance from p to each face: max(sphere gap, plane distance less
    the warp)."""
    gap = np.linalg.norm(p - frames[:, :3], axis=1) - radius
    plane = np.abs(np.einsum("ij,ij->i", p - frames[:, :3], frames[:, 3:6])) - frames[:, 6]
    return gap, np.maximum(gap, plane)


@pytest.mark.parametrize("large", [0.0, 0.1], ids=["one size", "sizes 1:40"])
def test_candidates_are_the_nearest_faces_by_distance_bound_within_the_margin(large):
    """Brute force against the hash: the faces whose sphere comes within the margin, the 8
    nearest by the distance bound max(sphere gap, plane distance - warp), ties by global
    face id; with a tenth of the faces up to 40 times larger, the faces spread over several
    levels of the grid."""
    n_el, margin = 60, 0.3
    centre, radius = _spheres(n_el)
    big = RNG.random(len(radius)) < large
    radius[big] = RNG.random(np.count_nonzero(big)) * 3.5 + 0.5
    frames = _planes(centre, radius)
    gid = RNG.permutation(1000)[:n_el]
    points = RNG.random((400, 3)) * 4.0
    point_elem = RNG.integers(0, 20, len(points))
    glued = np.full((20, 6), -1)
    glued[:, 0] = gid[RNG.integers(0, n_el, 20)]
    candidates = np.empty((len(points), N_CANDIDATES), dtype=np.int64)
    stored = find_candidates(points, point_elem, glued, centre, radius, frames, gid, margin,
                             candidates)
    total = 0
    for s, p in enumerate(points):
        gap, bound = _distance_bound(p, frames, radius)
        face_gid = 6 * gid[np.arange(len(gap)) // 6] + np.arange(len(gap)) % 6
        target = gid[np.arange(len(gap)) // 6]
        ok = ((radius >= 0) & (gap <= margin) & (target != gid[point_elem[s]])
              & ~np.isin(target, glued[point_elem[s]]))
        q = np.nonzero(ok)[0]
        q = q[np.lexsort((face_gid[q], bound[q]))][:N_CANDIDATES]
        expected = np.full(N_CANDIDATES, -1)
        expected[:len(q)] = q
        np.testing.assert_array_equal(candidates[s], expected)
        total += len(q)
    assert stored == total > 0


def _box(lo, hi):
    """The 8 nodes of an axis-aligned hexahedron (solver.mesh.topology node order)."""
    unit = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
                     [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]], dtype=float)
    return np.asarray(lo) + unit * (np.asarray(hi) - np.asarray(lo))


def test_a_near_small_face_ranks_ahead_of_large_faces_whose_spheres_hold_the_point():
    """A semi-spring 5 cm above the top face (2 m wide, sphere gap -1.05 m) of a small
    block, over four coarse valley-floor elements (400 x 400 x 50 m, stacked under the
    block): the spheres (R = 283 m) of their top and bottom faces hold the point, 20 to
    220 m from their planes, eight faces with sphere gaps from -263 to -63 m. Ranked by
    the sphere gap they filled the 8 potential targets and the face under the point was
    none (the coarse Jiweishan runout: points sank unresisted until a renewal brought the
    face in, and formed contacts 1.4-1.6 m deep). By the distance bound it comes first
    (0.05 m) and the coarse faces follow by their plane distances; brute force over the
    faces agrees."""
    blocks = [_box([-1, -1, 18], [1, 1, 20]), _box([-1, -1, 20.05], [1, 1, 22.05])]
    floor = [_box([-200, -200, -50 * (k + 1)], [200, 200, -50 * k]) for k in range(4)]
    x = np.vstack(blocks + floor)
    n = len(x) // 8
    mesh = _mesh(x, n)
    gid, frames = mesh.gid, mesh.frames
    centre, radius = np.zeros((6 * n, 3)), np.zeros(6 * n)
    face_spheres(pack(mesh), centre, radius)
    point = np.array([[0.3, 0.2, 20.05]])
    margin = 0.5
    candidates = np.empty((1, N_CANDIDATES), dtype=np.int64)
    find_candidates(point, np.array([1]), np.full((2, 6), -1), centre, radius, frames, gid,
                    margin, candidates)
    gap, bound = _distance_bound(point[0], frames, radius)
    assert gap[1] == pytest.approx(np.sqrt(0.1325) - np.sqrt(2.0))
    assert np.count_nonzero(gap[12:] < gap[1]) == 8
    assert candidates[0, 0] == 1 and bound[1] == pytest.approx(0.05)
    ok = (gap <= margin) & (np.arange(6 * n) // 6 != 1)
    q = np.nonzero(ok)[0]
    expected = q[np.lexsort((q, bound[q]))][:N_CANDIDATES]
    np.testing.assert_array_equal(candidates[0, :len(expected)], expected)


def _faces_reaching(centre, radius, boxes, margin):
    gap = np.maximum(0, np.maximum(boxes[None, :, :3] - centre[:, None],
                                   centre[:, None] - boxes[None, :, 3:]))
    reach = (np.linalg.norm(gap, axis=2) <= (radius + margin)[:, None]).any(axis=1)
    return np.unique(np.nonzero(reach & (radius >= 0))[0] // 6)


def test_faces_near_boxes_are_all_faces_whose_reach_meets_a_box_of_each_set():
    """One set of boxes per neighbour rank (one of them empty), one grid of the faces."""
    margin = 0.2
    centre, radius = _spheres(40)
    lo = RNG.random((15, 3)) * 4.0
    boxes = np.hstack([lo, lo + RNG.random((15, 3)) * 0.6])
    first = np.array([0, 5, 5, 11, 15])
    near = faces_near_boxes(centre, radius, len(radius), boxes, first, margin)
    assert near.shape == (4, 40)
    for i in range(4):
        chosen = np.nonzero(near[i])[0]
        expected = _faces_reaching(centre, radius, boxes[first[i]:first[i + 1]], margin)
        np.testing.assert_array_equal(chosen, expected)
        assert (0 < len(chosen) < 40) == (i != 1)


def test_faces_near_boxes_over_faces_and_boxes_of_sizes_a_thousand_fold_apart():
    """Small faces beside large ones (several grid levels) and boxes from a hundredth of the
    smallest reach to twice the largest (boxes that cover more cells of a level than it has
    faces test them one by one), about a coordinate origin far from zero."""
    margin = 0.05
    centre, radius = _spheres(400)
    centre = centre * 100.0 + 3.0e5
    radius = np.where(radius < 0, radius, radius * 10.0 ** RNG.uniform(-1, 2, len(radius)))
    lo = RNG.random((300, 3)) * 400.0 + 3.0e5
    boxes = np.hstack([lo, lo + RNG.random((300, 3)) * 10.0 ** RNG.uniform(-3, 2, (300, 1))])
    chosen = np.nonzero(faces_near_boxes(centre, radius, len(radius), boxes,
                                         np.array([0, len(boxes)]), margin)[0])[0]
    expected = _faces_reaching(centre, radius, boxes, margin)
    _, on_box_grid = _box_grid_cells(boxes, margin)
    assert 0 < np.count_nonzero(on_box_grid) < len(boxes)     # both grids take boxes
    np.testing.assert_array_equal(chosen, expected)
    assert 0.1 < len(chosen) / 400 < 0.9
    near = boxes_within(lo[:5], lo[:5] + 0.1, boxes[5:], 0.3)
    distance = np.linalg.norm(np.maximum(0, np.maximum(boxes[None, 5:, :3] - lo[:5, None] - 0.1,
                                                       lo[:5, None] - boxes[None, 5:, 3:])),
                              axis=2)
    np.testing.assert_array_equal(near, np.nonzero((distance <= 0.3).any(axis=1))[0])


@pytest.mark.parametrize("corner", [0.0, 3.4])
def test_faces_and_boxes_far_from_all_boxes_are_left_out_exactly(corner):
    """Boxes in one corner of the faces' extent (the cut between two ranks): the faces and
    element boxes beyond reach of the box holding them all are passed over at once, and
    the answers are still those of the test of every pair."""
    margin = 0.2
    centre, radius = _spheres(60)
    lo = corner + RNG.random((12, 3)) * 0.5
    boxes = np.hstack([lo, lo + RNG.random((12, 3)) * 0.3])
    near = faces_near_boxes(centre, radius, len(radius), boxes, np.array([0, 7, 12]), margin)
    for i, (a, b) in enumerate([(0, 7), (7, 12)]):
        expected = _faces_reaching(centre, radius, boxes[a:b], margin)
        np.testing.assert_array_equal(np.nonzero(near[i])[0], expected)
        assert 0 < len(expected) < 30
    elem_lo = RNG.random((200, 3)) * 4.0
    elem_hi = elem_lo + 0.2
    gap = np.maximum(0, np.maximum(boxes[None, :, :3] - elem_hi[:, None],
                                   elem_lo[:, None] - boxes[None, :, 3:]))
    expected = np.nonzero((np.linalg.norm(gap, axis=2) <= 0.4).any(axis=1))[0]
    np.testing.assert_array_equal(boxes_within(elem_lo, elem_hi, boxes, 0.4), expected)
    assert 0 < len(expected) < 100


def test_growing_rows_keep_their_values_and_their_array():
    """Rows asked for again keep their values, in the same array while it has room; it
    grows by a quarter, keeping them, when it runs out."""
    rows = GrowingRows((2,), np.int64)
    first = rows.rows(8)                                  # room for 8 + 8 // 4 = 10
    first[:] = np.arange(16).reshape(8, 2)
    fewer, all_ten = rows.rows(5), rows.rows(10)
    assert np.shares_memory(first, fewer) and np.shares_memory(first, all_ten)
    assert fewer.shape == (5, 2) and len(rows.store) == 10
    more = rows.rows(11)                                  # room for 11 + 2 = 13
    assert not np.shares_memory(first, more) and len(rows.store) == 13
    np.testing.assert_array_equal(more[:8], np.arange(16).reshape(8, 2))


def test_target_nodes_follow_their_elements_when_own_elements_join():
    """Three own contact elements, two of them joined by two more (new indices 0, 2, 4 ->
    renumber 0 -> 0, 1 -> 2, 2 -> 4) and two ghosts after them (3, 4 -> 5, 6): every node
    8 c + a keeps its a, an unused slot stays -1."""
    nodes = np.array([[8 * 0 + 3, 8 * 1 + 7, -1, -1],
                      [8 * 2 + 0, 8 * 3 + 5, 8 * 4 + 1, -1]])
    renumber_target_nodes(nodes, 3, np.array([0, 2, 4]), 2)
    np.testing.assert_array_equal(nodes, [[8 * 0 + 3, 8 * 2 + 7, -1, -1],
                                          [8 * 4 + 0, 8 * 5 + 5, 8 * 6 + 1, -1]])


@pytest.mark.parametrize("arrival", ["shuffled", "own in order, received shuffled"])
def test_ordered_sums_add_every_rows_shares_in_key_order(arrival):
    """Every row's shares summed in key order, (0 + v_1) + v_2 ..., to the last bit: shares
    in any order, and a rank's own shares in key order followed by shares received from
    other ranks (the running sums of rows whose shares all come in order, the sort for the
    rest)."""
    m = 3000
    rows = RNG.integers(0, 200, m)
    keys = RNG.permutation(10 * m)[:m]
    if arrival != "shuffled":
        own = 2600
        keys[:own] = np.sort(keys[:own])
    values = RNG.normal(size=(m, 3)) * 10.0 ** RNG.integers(-8, 8, (m, 1))
    buf = ShareBuffers(200)
    buf.grow(m)
    n = ordered_sums(rows, keys, values, buf.head, buf.first, buf.last_key, buf.nxt, buf.touched,
                     buf.chain, buf.out)
    assert n == len(np.unique(rows)) and np.all(buf.head == -1)
    for r, total in zip(buf.touched[:n], buf.out[:n]):
        mine = np.nonzero(rows == r)[0]
        expected = np.zeros(3)
        for i in mine[np.argsort(keys[mine])]:
            expected = expected + values[i]
        assert np.array_equal(total, expected)
    if arrival != "shuffled":
        assert 0 < np.count_nonzero(buf.last_key[:n] == UNSORTED) < n


def test_surface_boxes_are_the_unions_of_the_element_boxes_binned_by_centre():
    """Element boxes (element_boxes of hexahedra) binned on a 4 x 4 x 4 grid over the
    extent of their centres: one box per occupied bin, in bin order, the union of its
    elements' boxes."""
    x = RNG.random((8 * 500, 3)) * [30.0, 10.0, 1.0] + np.repeat(RNG.random((500, 3)), 8, 0)
    lo, hi = element_boxes(x, 8 * np.arange(500), 500)
    assert np.array_equal(lo, x.reshape(-1, 8, 3).min(axis=1))
    assert np.array_equal(hi, x.reshape(-1, 8, 3).max(axis=1))
    centre = 0.5 * (lo + hi)
    low, high = centre.min(axis=0), centre.max(axis=0)
    cell = np.minimum((4 * (centre - low) / (high - low)).astype(int), 3)
    bins = (cell[:, 0] * 4 + cell[:, 1]) * 4 + cell[:, 2]
    expected = [np.r_[lo[bins == b].min(axis=0), hi[bins == b].max(axis=0)]
                for b in np.unique(bins)]
    assert np.array_equal(surface_boxes(lo, hi), np.array(expected))
    assert surface_boxes(lo[:0], hi[:0]).shape == (0, 6)


def box_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance between every box of a (m, 6) and every box of b (k, 6), (m, k)."""
    gap = np.maximum(0.0, np.maximum(a[:, None, :3] - b[None, :, 3:],
                                     b[None, :, :3] - a[:, None, 3:]))
    return np.sqrt((gap ** 2).sum(axis=2))


@pytest.mark.parametrize("ranks, spread, h", [(2, 3.0, 0.5), (9, 6.0, 0.7), (40, 20.0, 1.5),
                                               (40, 0.5, 0.0), (120, 40.0, 2.0)])
def test_ranks_near_by_holding_box_include_every_rank_near_by_its_boxes(ranks, spread, h):
    """The renewal's first test (near_holding_boxes on holding_row of every rank) keeps
    every rank whose boxes meet the rank's own within h (boxes_within, the box distance),
    on clusters of boxes touching at their corners and faces (distance 0 and h exactly) and
    on ranks with no box, and it is symmetric."""
    rng = np.random.default_rng(ranks)
    sets = []
    for r in range(ranks):
        n = 0 if r % 7 == 3 else int(rng.integers(1, 65))
        lo = np.round(rng.random((n, 3)) * spread, 1) + np.round(rng.random(3) * spread, 1)
        sets.append(np.hstack([lo, lo + np.round(rng.random((n, 3)) + 0.1, 1)]))
    table = np.array([holding_row(b, float(r)) for r, b in enumerate(sets)])
    assert table.shape == (ranks, HOLDING_WIDTH)
    near = {}
    for me in range(ranks):
        kept = near_holding_boxes(table, me, h)
        assert np.all(np.diff(kept) > 0) and me not in kept
        lo, hi = sets[me][:, :3].copy(), sets[me][:, 3:].copy()
        meets = [len(boxes_within(lo, hi, sets[r], h)) > 0 for r in range(ranks)]
        wanted = {r for r in range(ranks) if r != me and meets[r]}
        for r in range(ranks):
            if len(sets[r]) and len(sets[me]):
                gap = box_distance(sets[me], sets[r]).min()
                if abs(gap - h) > 1e-9:
                    assert meets[r] == (gap < h)
        assert wanted <= set(kept.tolist())
        assert all(len(sets[r]) for r in kept)
        assert len(sets[me]) or len(kept) == 0
        near[me] = set(kept.tolist())
    assert all(me in near[r] for me in near for r in near[me])


@pytest.mark.parametrize("margin", [1e-3, 0.25, 13.6])
def test_the_ghosts_of_a_partial_renewal_reach_past_every_kept_targets_drift(margin):
    """kept_reach covers the margin plus the gap's largest growth since a target was found,
    4 sqrt(3) D for nodes that moved at most D in any coordinate since the renewal; it is
    the margin alone without motion and KEPT_REACH margins at D = margin / 2, the most
    before a renewal is due."""
    moves = np.linspace(0.0, 0.5 * margin, 101)
    reach = np.array([kept_reach(margin, d) for d in moves])
    assert reach[0] == margin and np.isclose(reach[-1], KEPT_REACH * margin, rtol=1e-15)
    assert np.all(np.diff(reach) > 0.0)
    assert np.all(reach >= margin + 4.0 * np.sqrt(3.0) * moves)


def test_global_faces_map_back_to_the_contact_elements_holding_them():
    gid = RNG.permutation(5000)[:300]
    local = RNG.integers(-1, 6 * len(gid), (400, N_CANDIDATES))
    faces = np.where(local >= 0, 6 * gid[np.maximum(local, 0) // 6] + local % 6, -1)
    mapped, found = local_faces(faces, gid)
    assert found and np.array_equal(mapped, local)
    faces[3, 2] = 6 * 5001 + 1                       # an element held nowhere here
    assert not local_faces(faces, gid)[1]


def test_partial_renewal_searches_every_semi_spring_a_broken_spring_concerns():
    """The coarse Jiweishan mass breaks up in its trigger stage (its flat elements put
    faces that a broken spring made eligible far from the spring's own faces). At every
    partial renewal, a semi-spring whose potential targets differ between the glue state
    before and after the springs broke (faces that became active, elements no longer glued
    to its own) gets the targets of a full search; the others may keep theirs."""
    import dataclasses

    from mpi4py import MPI

    from conftest import CASES
    from solver.case import load_case
    from solver.cdem.contact.pipeline import Contact
    from solver.cdem.model import model_from_mesh
    from solver.cdem.timeloop import TimeLoop
    from solver.mesh.build import mesh_from_config

    case = load_case(CASES / "jiweishan.toml", [])
    cfg = case.config
    model = model_from_mesh(MPI.COMM_SELF, cfg, mesh_from_config(cfg.mesh, "partial"),
                            "partial")
    c = model.contact
    set_glue, renew_fresh = c.set_glue, c.renew_fresh
    before = {}
    changed = []

    def remembering_set_glue(glued):
        before["glued"] = c.glued.copy()
        kept = {name: getattr(c.semi_springs, name).copy() for name in ("key", "target", "f_t")}
        kept["faces"] = c.state()[0]["semi_springs"]["candidates"]
        kept["x"] = dict(zip(c.own.gid[c.own_active], c.x_renewal.reshape(-1, 24)))
        kept["last_targets"] = _last_target_nodes(c)
        set_glue(glued)
        _same_as_built_afresh(c, Contact(MPI.COMM_SELF, c.params, c.own, glued), kept)

    def checked_renewal(x, du):
        renew_fresh(x, du)
        centre = np.zeros((6 * len(c.mesh.gid), 3))
        radius = np.zeros(6 * len(c.mesh.gid))
        face_spheres(c.packed_mesh, centre, radius)
        points = c.semi_spring_positions(x)
        old_glued = before["glued"][c.own_active]
        old_radius = np.where((old_glued < 0).ravel(), radius, -1.0)
        rows = {}
        for name, glued, r in (("now", c.glued[c.own_active], radius),
                               ("before", old_glued, old_radius)):
            rows[name] = np.empty_like(c.candidates)
            find_candidates(points, c.semi_springs.elem, glued, centre, r, c.mesh.frames,
                            c.mesh.gid, c.params.margin, rows[name])
        concerned = np.any(rows["now"] != rows["before"], axis=1)
        assert np.array_equal(c.candidates[concerned], rows["now"][concerned])
        changed.append(np.count_nonzero(concerned))

    c.set_glue, c.renew_fresh = remembering_set_glue, checked_renewal
    loop = TimeLoop(MPI.COMM_SELF, model, cfg.gravity, model.dt_limit_local * cfg.time.safety)
    loop.run_stage(cfg.stages[0], [])
    loop.run_stage(dataclasses.replace(cfg.stages[1], max_steps=300), [])
    assert len(changed) > 5 and sum(changed) > 0


def _last_target_nodes(c):
    """Per record kind, the last step's target nodes (global element id, node 0..7, as
    8 g + a) of the records whose dashpot's work is still to be booked."""
    nodes = []
    for rec in (c.semi_springs, c.semi_edges):
        node = rec.target_node[rec.dashpot[:, 0] != 0.0]
        nodes.append(np.where(node >= 0, 8 * c.mesh.gid[node // 8] + node % 8, -1))
    return nodes


def _same_as_built_afresh(c, afresh, kept):
    """A glue change updates the contact in place to what a contact built for the new glue
    state holds, record by record (keyed: the records of faces freed later come after the
    others), with the history of the faces that stayed active carried by key: their
    targets, tangential forces, potential targets (global face ids), elements' positions
    at the last renewal (new elements: NaN) and the nodes the loaded records' last forces
    acted on (the next step books their dashpots' work there), on the renumbered contact
    elements. The old records keep their rows."""
    n_kept = len(kept["key"])
    assert np.array_equal(c.semi_springs.key[:n_kept], kept["key"])
    mine_in_key_order = np.argsort(c.semi_springs.key, kind="stable")
    for name in ("key", "elem", "face", "vertex", "k_n", "k_t"):
        for mine, theirs in ((c.semi_springs, afresh.semi_springs),
                             (c.semi_edges, afresh.semi_edges)):
            assert np.array_equal(getattr(mine, name)[mine_in_key_order],
                                  getattr(theirs, name)), name
    assert np.array_equal(c.semi_edges.key, c.semi_springs.key)
    assert np.array_equal(c.own_active, afresh.own_active)
    old = np.arange(len(c.semi_springs)) < n_kept
    assert np.array_equal(c.semi_springs.target[old], kept["target"])
    assert np.array_equal(c.semi_springs.f_t[old], kept["f_t"])
    assert np.all(c.semi_springs.target[~old] == -1) and not c.semi_springs.f_t[~old].any()
    faces = c.state()[0]["semi_springs"]["candidates"]
    assert np.array_equal(faces[old], kept["faces"]) and np.all(faces[~old] == -1)
    nan = np.full(24, np.nan)
    x_renewal = np.array([kept["x"].get(g, nan) for g in c.own.gid[c.own_active]])
    assert np.array_equal(c.x_renewal.reshape(-1, 24), x_renewal, equal_nan=True)
    for now, then in zip(_last_target_nodes(c), kept["last_targets"]):
        assert np.array_equal(now, then)


def test_glue_broken_around_inner_elements_updates_records_bodies_and_renewal_in_place():
    """A glued 3x3x5 block on a held slab: the glue around the lowest of its three inner
    elements, then around the highest, is taken away by hand between steps (the springs
    stay unbreakable, so no other change comes). The inner elements join the contact
    elements in place: the records, potential targets and renewal positions equal those of
    a contact built afresh for the new glue state, with the history carried; the bodies are
    the connected components of the remaining glue (scipy), each labelled by its smallest
    element id."""
    from mpi4py import MPI
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    from solver.case import from_dict
    from solver.cdem.config import Config
    from solver.cdem.contact.pipeline import Contact
    from solver.cdem.model import model_from_mesh
    from solver.cdem.timeloop import TimeLoop
    from solver.mesh.build import mesh_from_config

    case = {"mesh": {"boxes": [
        {"n": [2, 2, 1], "size": [2.0, 2.0, 0.5], "origin": [-1.0, -1.0, -0.5],
         "group": "base"},
        {"n": [3, 3, 5], "size": [0.9, 0.9, 1.5], "origin": [-0.45, -0.45, 0.0],
         "group": "block"}]},
        "materials": [{"density": 2500.0, "youngs_modulus": 1e9, "tensile_strength": 1e6,
                       "cohesion": 1e6}],
        "contact": {"enabled": True}, "boundaries": [{"group": "base"}],
        "stages": [{"kind": "dynamic", "max_steps": 10, "breakable": False}]}
    cfg = from_dict(Config, case, "inner", "", None)
    model = model_from_mesh(MPI.COMM_SELF, cfg, mesh_from_config(cfg.mesh, "inner"), "inner")
    c, gid = model.contact, model.elements.gid
    loop = TimeLoop(MPI.COMM_SELF, model, cfg.gravity, 0.5 * model.dt_limit_local)
    g = np.asarray(cfg.gravity)
    centre = model.nodes.x.reshape(-1, 8, 3).mean(axis=1) - [0.0, 0.0, 0.45]
    loop.one_step(g, cfg.stages[0])
    glued = c.glued.copy()
    for near in ([0.0, 0.0, 0.0], [0.0, 0.0, 0.6]):
        e = np.argmin(np.linalg.norm(centre - near, axis=1))
        assert e not in c.own_active
        glued[np.isin(glued, gid[e])] = -1
        glued[e] = -1
        kept = {name: getattr(c.semi_springs, name).copy() for name in ("key", "target", "f_t")}
        kept["faces"] = c.state()[0]["semi_springs"]["candidates"]
        kept["x"] = dict(zip(gid[c.own_active], c.x_renewal.reshape(-1, 24)))
        kept["last_targets"] = _last_target_nodes(c)
        assert len(kept["last_targets"][0]) > 0
        c.set_glue(glued.copy())
        assert e in c.own_active
        _same_as_built_afresh(c, Contact(MPI.COMM_SELF, c.params, c.own, glued), kept)
        a, f = np.nonzero(glued >= 0)
        n = len(gid)
        graph = coo_matrix((np.ones(len(a)), (a, np.searchsorted(gid, glued[a, f]))), (n, n))
        comp = connected_components(graph, directed=False)[1]
        held = model.nodes.fixed.reshape(n, 24).all(axis=1)
        for k in np.unique(comp):
            members = comp == k
            assert np.all(c.bodies.label[members] == gid[members].min())
            mass = np.inf if held[members].any() else c.own.bodies.mass[members].sum()
            assert np.all(c.bodies.mass[members] == mass)
        loop.one_step(g, cfg.stages[0])
        assert c.pending is None


def _warped_hexahedron(h):
    """The unit cube with its top face warped to z = 1 + h xi eta and its side face y = 0
    to y = -h s t (s, t its face coordinates): near their common edge, at x = 1/4, the top
    face bulges out by h/2 and the side face in by h/2 from their planes."""
    x = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
                  [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]], dtype=float)
    x[[4, 5, 6, 7], 2] += h * np.array([1.0, -1.0, 1.0, -1.0])
    x[[0, 1, 5, 4], 1] += h * np.array([-1.0, 1.0, -1.0, 1.0])
    return x


def _distance_to_bilinear_face(x, p):
    """Distance from p to the bilinear face with corners x (4, 3) by nested sampling of
    its face coordinates (each level 100 x 100 cells around the last level's closest
    sample)."""
    lo, hi = np.array([-1.0, -1.0]), np.array([1.0, 1.0])
    for _ in range(4):
        xi, eta = np.meshgrid(np.linspace(lo[0], hi[0], 101), np.linspace(lo[1], hi[1], 101),
                              indexing="ij")
        weights = [(1 - xi) * (1 - eta), (1 + xi) * (1 - eta), (1 + xi) * (1 + eta),
                   (1 - xi) * (1 + eta)]
        q = sum(0.25 * w[..., None] * corner for w, corner in zip(weights, x))
        distance = np.linalg.norm(q - p, axis=-1)
        i, j = np.unravel_index(distance.argmin(), distance.shape)
        step = (hi - lo) / 100.0
        at = np.array([xi[i, j], eta[i, j]])
        lo, hi = np.maximum(at - 2.0 * step, -1.0), np.minimum(at + 2.0 * step, 1.0)
    return distance.min()


@pytest.mark.parametrize("potential", [range(6), [0]])
def test_overlap_inside_an_element_is_the_distance_to_its_nearest_bilinear_face(potential):
    """A semi-spring inside an element with warped faces (h = 0.05 on a unit cube) is in
    contact with the element's nearest face by the distance to the bilinear faces, the
    measure of the overlap, so that the overlap is the point's distance to the element's
    boundary (brute force) and continuous where the nearest face changes. The nearest face
    was chosen by the faces' planes: between the lines where the planes and where the
    bilinear faces are equally far, the overlap was that to the farther face, 0.041 m too
    deep, and jumped by as much on the line of the planes (the coarse Jiweishan runout: 2 m
    at once on faces warped by 2 m, 1.3e12 J from nothing); measured 2e-11 m. The same
    with only the element's far bottom face among the potential targets: the point is in
    contact with the nearest face all the same. It had no target while the nearest face was
    not a potential one (the 8 potential targets of a point among large faces), sank
    unresisted and became a contact deep at once when it was (coarse Jiweishan: 1.4 m)."""
    alpha = 0.01
    target = _warped_hexahedron(0.05)
    cube = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
                     [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]], dtype=float)
    candidates = np.full((1, N_CANDIDATES), -1, dtype=np.int64)
    candidates[0, :len(potential)] = potential
    weights = np.full(4, 0.25 * alpha)
    weights[0] += 1.0 - alpha
    error = []
    for t in np.linspace(0.0, 1.0, 41):
        x = np.vstack([target, 0.02 * cube + [0.25, 0.02 + 0.08 * t, 0.9 + 0.07 * t]])
        springs = _records(SEMI_SPRING, 1, target=0, share=1.0)
        semi_spring_geometry(pack(_mesh(x, 2)), springs.packed, candidates, _params(alpha, 1e-4))
        point = weights @ x[8 + FACES[0]]
        depth = min(_distance_to_bilinear_face(target[FACES[f]], point) for f in range(6))
        error.append(abs(springs.overlap[0] - depth))
    assert max(error) < 1e-6


def test_nearest_face_projects_only_the_faces_that_can_be_nearest():
    """The nearest face of points inside distorted hexahedra (vertices moved by up to 0.2, 2
    or 15 % of the edge, the largest warp over 10 % of it) with some faces glued: as
    projecting the point onto every active face and taking the largest signed distance
    (lowest face of a tie), although the faces whose plane distance is far below another's,
    by the faces' warps, are not projected."""
    cube = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
                     [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]], dtype=float)
    checked, warp = 0, 0.0
    for _ in range(300):
        x = cube + RNG.choice([0.002, 0.02, 0.15]) * RNG.uniform(-1.0, 1.0, cube.shape)
        active = np.ones((1, 6), dtype=bool)
        active[0, RNG.choice(6, RNG.integers(0, 3), replace=False)] = False
        frames = _mesh(x, 1).frames
        warp = max(warp, frames[:, 6].max())
        for w in RNG.dirichlet(np.ones(8), 5):
            p = w @ x
            distance = np.full(6, -np.inf)
            for g in np.flatnonzero(active[0]):
                _, _, *q_n = _bilinear_projection(x, 0, g, *p, 0.0, 0.0)
                distance[g] = (p - q_n[:3]) @ q_n[3:]
            assert _nearest_face(frames, x, 0, 0, active, *p) == np.argmax(distance)
            checked += 1
    assert checked == 1500 and warp > 0.1


def test_a_face_accepts_exactly_the_points_that_project_into_its_two_triangles():
    """Points within the tolerance above faces of distorted hexahedra (vertices moved by up
    to 0.2, 2 or 15 % of the edge), spread over and around each face (face coordinates up
    to 1.3, many at its corners and edges): accepted exactly where the projection onto the
    face's plane falls into the triangle A, B, C or A, C, D, as computed here, although
    points whose projection lies outside the face's circumscribed disk are rejected before
    the triangles are tried."""
    cube = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
                     [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]], dtype=float)
    tol = 1e-3
    corners = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
    accepted_count = checked = 0
    for _ in range(50):
        x = cube + RNG.choice([0.002, 0.02, 0.15]) * RNG.uniform(-1.0, 1.0, cube.shape)
        frames = _mesh(x, 1).frames
        for f in range(6):
            centre, normal = frames[f, :3], frames[f, 3:6]
            a, b, c, d = x[FACES[f]]
            for xi, eta in np.vstack([RNG.uniform(-1.3, 1.3, (8, 2)),
                                      RNG.choice(corners, (4, 2)) * (1.0 + 1e-10)]):
                on_face = 0.25 * ((1 - xi) * (1 - eta) * a + (1 + xi) * (1 - eta) * b
                                  + (1 + xi) * (1 + eta) * c + (1 - xi) * (1 + eta) * d)
                height = (on_face - centre) @ normal
                p = on_face + (RNG.uniform(0.0, tol) - height) * normal
                q = p - ((p - centre) @ normal) * normal
                inside = False
                for tri in ((a, b, c), (a, c, d)):
                    area = np.cross(tri[1] - tri[0], tri[2] - tri[0]) @ normal
                    w = [np.cross(tri[(k + 1) % 3] - q, tri[(k + 2) % 3] - q) @ normal / area
                         for k in range(3)]
                    inside |= min(w) >= -1e-9
                accepted = _face_accepts(frames, x, 0, 0, f, *p, tol)[0]
                assert accepted == inside, (xi, eta)
                accepted_count += accepted
                checked += 1
    assert checked == 3600 and 0.3 < accepted_count / checked < 0.8


def _edge_overlaps(heights, turns=None, alpha=0.01, tol=1e-4, dropped_from=None,
                   order=np.arange(6)):
    """Overlaps (n_heights, 24) of the semi-edges of a unit cube turned 45 deg about y,
    its lowest edge (along y, over x = 1/2) crossing the top edge along x at y = 1 of a
    unit cube below at the given depths under it, and turned by ``turns`` [deg] about the
    vertical through the crossing (0 by default; 90 lays the two edges parallel), carried
    from position to position with each move's increments; the records' status as the
    law leaves it (loaded where the overlap is above 0). The potential targets: the lower
    cube's faces in ``order``; from position ``dropped_from`` on, none."""
    unit = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
                     [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]], dtype=float)
    turn = np.sqrt(0.5) * np.array([[1.0, 0.0, 1.0], [0.0, np.sqrt(2.0), 0.0], [-1.0, 0.0, 1.0]])
    own = (unit - 0.5) @ turn.T
    own -= [own[:, 0].mean() - 0.5, -1.0, own[:, 2].min() - 1.0]
    turns = np.zeros(len(heights)) if turns is None else np.radians(turns)
    candidates = np.full((24, N_CANDIDATES), -1, dtype=np.int64)
    candidates[:, :6] = order
    edges = _records(SEMI_EDGE, 1, key=np.arange(24))
    overlaps = []
    last = None
    for i, (z, a) in enumerate(zip(heights, turns)):
        if i == dropped_from:
            candidates[:] = -1
        spin = np.array([[np.cos(a), -np.sin(a), 0.0], [np.sin(a), np.cos(a), 0.0],
                         [0.0, 0.0, 1.0]])
        x = np.vstack([unit, (own - [0.5, 1.0, 0.0]) @ spin.T + [0.5, 1.0, z]])
        du = x - last if last is not None else np.zeros_like(x)
        last = x
        semi_edge_geometry(pack(_mesh(x, 2, du)), edges.packed, candidates, _params(alpha, tol))
        edges.status[:] = np.where(edges.overlap > 0.0, STICK, OPEN)
        overlaps.append(edges.overlap.copy())
    return np.array(overlaps)


def test_a_loaded_semi_edge_keeps_its_target_where_it_drops_out_of_the_potential_targets():
    """The potential targets of a semi-edge are searched about its edge's first point, and
    the crossing point of a long edge moves away from it: a renewal can drop the face of a
    loaded contact's target. The contact goes on, its target found by its global id: the
    crossing edges going down 0.02 m and back up, the potential targets taken away once the
    contact is 0.0044 m deep, the overlaps are those kept with them, to the end of the
    contact; no other contact forms. (Level 2 of the Jiweishan resolution study: 306
    loaded contacts vanished so, with 1.4e10 J.)"""
    path = np.concatenate([np.linspace(0.005, -0.02, 26), np.linspace(-0.02, 0.005, 26)[1:]])
    kept = _edge_overlaps(path)
    dropped = _edge_overlaps(path, dropped_from=14)
    assert kept[13].max() > 0.004 and kept[-1].max() == 0.0
    assert np.array_equal(dropped, kept)


def test_semi_edge_overlaps_do_not_hang_on_the_order_of_the_potential_targets():
    """The crossing edges going down 0.02 m and back up give the same overlaps, to the last
    bit, whatever the order of the lower cube's faces among the potential targets (a
    counter of them, overwritten by a loop over a loaded record's nodes, once left the
    records after it only the first three)."""
    path = np.concatenate([np.linspace(0.005, -0.02, 26), np.linspace(-0.02, 0.005, 26)[1:]])
    forward = _edge_overlaps(path)
    assert np.count_nonzero(forward.max(axis=0)) >= 2
    for order in (np.arange(6)[::-1], np.array([3, 0, 5, 1, 4, 2])):
        assert np.array_equal(_edge_overlaps(path, order=order), forward)


def test_semi_edge_contact_forms_and_ends_only_through_the_edges_motion():
    """An edge-edge contact is loaded only by the edges' approach: along a path down past
    three indentations alpha L and back, no semi-edge's overlap changes by more than the
    move (it forms at the surface, deepens and comes back), and an edge crossing that
    starts deep and comes up forms no contact. A cut-off at the depth alpha L made and
    ended contacts there 0.0089 m deep at once (the coarse Jiweishan runout: contacts of
    edges that came up through it stored 1.6e12 J no motion paid for); measured 2e-16 m."""
    down_up = np.concatenate([np.linspace(0.005, -0.03, 71), np.linspace(-0.03, 0.005, 71)[1:]])
    overlaps = _edge_overlaps(down_up)
    assert overlaps.max() > 0.025                   # an edge contact deeper than 2.5 alpha L
    excess = np.abs(np.diff(overlaps, axis=0)) - np.abs(np.diff(down_up))[:, None]
    assert excess.max() < 1e-12
    assert _edge_overlaps(np.linspace(-0.03, 0.005, 71)).max() == 0.0


def test_edges_turning_out_of_parallel_while_crossing_deep_form_no_deep_contact():
    """The two edges lie parallel 0.02 m apart, the upper one below the other's level
    (a crossing the line gap cannot see: parallel lines have none), and turn to cross in
    one step without approaching: the pair forms with the overlap its approach made, about
    none, not 0.02 m. Without the offset it formed 0.016 m deep (the coarse Jiweishan
    runout: a pair 63 m deep, 5.1e12 N at once)."""
    overlaps = _edge_overlaps([-0.02, -0.02, -0.02], turns=[90.0, 45.0, 45.0])
    assert overlaps.max() < 1e-3
    deepening = _edge_overlaps([-0.02, -0.02, -0.021], turns=[90.0, 45.0, 45.0])
    assert deepening[-1].max() == pytest.approx(0.001, abs=2e-4)


class _FloorScene:
    """A floor block F (x -1 to 3, y -1 to 2, top z = 0), a unit block ``other`` (lower
    corner ``corner``) and a 0.01 m block whose semi-spring (vertex 0 of face 0) lies at
    ``point``, each its own body; ``contact(potential, target, overlap)`` runs the
    semi-spring kernel on it, loaded on ``target`` with ``overlap`` the step before, and
    returns its (target, overlap)."""

    alpha, tol = 0.01, 1e-4

    def __init__(self, corner, point):
        unit = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
                         [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]], dtype=float)
        weights = np.full(4, 0.25 * self.alpha)
        weights[0] += 1.0 - self.alpha
        block = 0.01 * unit
        block += np.asarray(point) - weights @ block[FACES[0]]
        self.x = np.vstack([unit * [4.0, 3.0, 1.0] + [-1.0, -1.0, -1.0], unit + corner, block])
        self.point = weights @ self.x[16 + FACES[0]]
        mesh = _mesh(self.x, 3)
        self.mesh, self.frames = pack(mesh), mesh.frames
        self.top = int(np.argmax(self.frames[0:6, 5]))

    def contact(self, potential, target, overlap=0.0):
        candidates = np.full((1, N_CANDIDATES), -1, dtype=np.int64)
        candidates[0, :len(potential)] = potential
        springs = _records(SEMI_SPRING, 2, target=target, overlap=overlap, share=1.0)
        semi_spring_geometry(self.mesh, springs.packed, candidates,
                             _params(self.alpha, self.tol))
        return springs.target[0], springs.overlap[0]


def test_a_face_within_the_tolerance_does_not_mask_a_body_the_point_has_sunk_into():
    """A semi-spring point 0.1 m deep in a floor block F and 5e-5 m (under the tolerance,
    1e-4) outside the side face of another block C, each its own body: the target is F's
    top face with the overlap 0.1, the point's depth in F. Taking the largest signed
    distance over all candidates chose C's face, open: the point sank into the floor
    unresisted and became a contact as deep as it had sunk once it left C's face, with
    energy no motion paid for (the Jiweishan resolution study, level 2: 3,600 such contacts,
    up to 1.8 m deep, 1.2 % of the gravity work)."""
    scene = _FloorScene([1.0, 0.0, -0.5], [1.0 - 5e-5, 0.5, -0.1])
    top = scene.top
    facing = 6 + int(np.argmin(scene.frames[6:12, 3]))
    assert scene.contact([facing], top) == (facing, 0.0)          # C's face alone: open
    for potential in ([facing, top], [top, facing]):
        target, overlap = scene.contact(potential, top)
        assert target == top and abs(overlap + scene.point[2]) < 1e-12


def test_a_loaded_contact_moving_to_another_element_continues_from_its_overlap():
    """A semi-spring point 0.01 m deep in a floor block F, loaded there, gets among its
    potential targets (a renewal) a block B it lies 0.41 m deep in by B's nearest face. B is
    the deeper body and becomes the target, but the contact goes on with its overlap 0.01 m
    (no approach this step): the offset takes the other 0.40 m. Jumping to 0.41 m stored
    K delta^2 / 2 no motion paid for (the production Jiweishan runout: 6.1e10 J at one
    renewal). With F alone the overlap stays 0.01 m."""
    scene = _FloorScene([0.5, 0.0, -0.6], [1.0, 0.5, -0.01])
    target, overlap = scene.contact([scene.top], scene.top, 0.01)
    assert target // 6 == 0 and overlap == pytest.approx(0.01, abs=1e-12)
    target, overlap = scene.contact([scene.top, *range(6, 12)], scene.top, 0.01)
    assert target // 6 == 1 and overlap == pytest.approx(0.01, abs=1e-12)


def _semi_spring_overlaps(path, drift=(0.0, 0.0, 0.0), alpha=0.01, tol=1e-4, f2_top=False):
    """(overlap, retargeted) of one semi-spring (vertex 0 of face 0 of a 0.01 m block) whose
    point moves along ``path`` (x, y, z per step, from (1, 0.5, 0)) over a base of two glued
    elements, F1 (x -1 to 3, its top z = 0 active) and F2 (x 3-7, its top active where
    ``f2_top``, else glued to something above: its nearest active face, the side y = -1,
    is 1.5 m from the point); everything drifts by ``drift`` per step besides, and each
    node's motion in the step is its increment; the records' state carried over."""
    unit = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
                     [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]], dtype=float)
    base_x = np.vstack([unit * [4.0, 3.0, 3.0] + [-1.0, -1.0, -3.0],
                        unit * [4.0, 3.5, 3.0] + [3.0, -1.0, -3.0]])
    weights = np.full(4, 0.25 * alpha)
    weights[0] += 1.0 - alpha
    block = 0.01 * unit
    block += np.array([1.0, 0.5, 0.0]) - weights @ block[FACES[0]]
    frames = _mesh(np.vstack([base_x, block]), 3).frames
    top = int(np.argmax(frames[0:6, 5]))
    active = np.ones((3, 6), dtype=bool)
    active[1, top] = f2_top
    active[1, int(np.argmin(frames[6:12, 3]))] = False
    candidates = np.full((1, N_CANDIDATES), -1, dtype=np.int64)
    candidates[0, :7] = [top, 6, 7, 8, 9, 10, 11]
    springs = _records(SEMI_SPRING, 2)
    overlaps, retargeted, last = [], [], np.zeros((24, 3))
    for i, move in enumerate(path):
        x = np.vstack([base_x, block + move]) + i * np.asarray(drift)
        du = x - last if i else np.zeros_like(x)
        last = x
        held = springs.target[0]
        semi_spring_geometry(pack(_mesh(x, 3, du, active, body=np.array([0, 0, 1]))),
                             springs.packed, candidates, _params(alpha, tol))
        overlaps.append(springs.overlap[0])
        retargeted.append(springs.target[0] != held and springs.overlap[0] > 0.0)
    return np.array(overlaps), np.array(retargeted)


@pytest.mark.parametrize("drift", [(0.0, 0.0, 0.0), (0.003, -0.002, 0.005)])
def test_semi_spring_contact_is_loaded_only_by_the_points_approach(drift):
    """A semi-spring's overlap is its depth below the target less its depth when the contact
    formed beyond that step's approach: from above, down 0.03 m and back, the overlap is the
    depth (the contact forms at the surface); starting 0.5 m deep (a point that came into a
    body through a glued face, or behind a face that became a target only then) and going
    down 0.01 m a step, it is 0.01, 0.02, ..., the contact opens where it formed and forms
    again as the point goes down anew. At the depth alone, such contacts formed up to 24 m
    deep in the Jiweishan resolution study's level 3, 6.5e12 J no motion paid for, given
    back as they vanished. The same under a drift of the whole scene (the approach is the
    point's relative to the target). Sliding in contact across the glued face into F2, the
    geometry marks the step whose target is another than the last step's, and the contact
    goes on at its overlap on F2's top; where F2's top is glued (F2 has no face turned
    toward the point's own), it opens there."""
    down_up = np.concatenate([np.linspace(0.005, -0.03, 71), np.linspace(-0.03, 0.005, 71)[1:]])
    overlap, _ = _semi_spring_overlaps(
        np.column_stack([np.zeros_like(down_up), np.zeros_like(down_up), down_up]), drift)
    assert np.allclose(overlap, np.maximum(-down_up, 0.0), rtol=0, atol=1e-12)
    deep = [-0.5, -0.51, -0.52, -0.53, -0.52, -0.508, -0.502, -0.499, -0.49, -0.495, -0.5]
    expected = [0.0, 0.01, 0.02, 0.03, 0.02, 0.008, 0.002, 0.0, 0.0, 0.005, 0.01]
    overlap, _ = _semi_spring_overlaps(
        np.column_stack([np.zeros(len(deep)), np.zeros(len(deep)), deep]), drift)
    assert np.allclose(overlap, expected, rtol=0, atol=1e-12)
    across = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, -0.01], [1.0, 0.0, -0.01],
                       [1.9, 0.0, -0.01], [2.1, 0.0, -0.01], [2.1, 0.005, -0.01],
                       [2.1, 0.0, -0.01]])
    overlap, retargeted = _semi_spring_overlaps(across, drift, f2_top=True)
    assert np.allclose(overlap, [0.0] + [0.01] * 6, rtol=0, atol=1e-12)
    assert retargeted.tolist() == [False, False, False, False, True, False, False]
    overlap, _ = _semi_spring_overlaps(across, drift)
    assert np.allclose(overlap, [0.0, 0.01, 0.01, 0.01, 0.0, 0.0, 0.0], rtol=0, atol=1e-12)


def _entering(path, carrier=0.5, alpha=0.01, tol=1e-4):
    """(overlap, normal) per step of the semi-spring at vertex 0 of the bottom face (normal
    -z) of a ``carrier`` m block whose point moves along ``path`` (its positions) through a
    unit block T (x, y 0 to 1, z -1 to 0, its own body, every face active); each node's
    motion in the step is its increment, the record's state carried over."""
    unit = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
                     [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]], dtype=float)
    weights = np.full(4, 0.25 * alpha)
    weights[0] += 1.0 - alpha
    block = carrier * unit
    block -= weights @ block[FACES[0]]
    candidates = np.full((1, N_CANDIDATES), -1, dtype=np.int64)
    candidates[0, :6] = np.arange(6)
    springs = _records(SEMI_SPRING, 1)
    overlaps, normals, last = [], [], None
    for point in path:
        x = np.vstack([unit - [0.0, 0.0, 1.0], block + point])
        du = x - last if last is not None else np.zeros_like(x)
        last = x
        semi_spring_geometry(pack(_mesh(x, 2, du)), springs.packed, candidates, _params(alpha, tol))
        overlaps.append(springs.overlap[0])
        normals.append(springs.normal[0].copy())
    return np.array(overlaps), np.array(normals)


def test_a_point_entering_through_a_side_at_right_angles_loads_only_below_the_facing_face():
    """The snag of the coarse Jiweishan runout (CHANGELOG.md): a point of a face with normal -z
    entering a block T 0.02 m below T's top through T's side x = 1 lay nearer the side than
    the top, so its contact formed on the side and pushed T back along x (up to 0.02 m deep)
    before the top became T's nearest face. A contact forms only on a face turned toward the
    point's own (T's top), with the point's depth there as its offset: nothing loads while
    the point moves in along x (on the side it loaded 0.009 m at 0.99), the sinking 0.005 m
    that follows loads it 0.005 m along +z, and the point that goes back out leaves through
    the side continuously (0.003, 0.001 m, then open). A point that sinks 1 mm a step while
    it moves in stays on the top, loaded 1, 2, 3 mm: the side, still nearer than the top, is
    taken only where it became the nearer within the step's motion (the contact went back
    to the side, opened below its offset and formed anew on the top, 1, 0, 1 mm, storing
    K a^2 / 2 no force paid for at every new start)."""
    path = [(1.01, 0.5, -0.02), (1.001, 0.5, -0.02), (0.999, 0.5, -0.02), (0.99, 0.5, -0.02),
            (0.97, 0.5, -0.02), (0.97, 0.5, -0.025), (0.977, 0.5, -0.025),
            (0.979, 0.5, -0.025), (0.981, 0.5, -0.025)]
    overlap, normal = _entering(path)
    assert np.allclose(overlap, [0.0] * 5 + [0.005, 0.003, 0.001, 0.0], rtol=0, atol=1e-12)
    assert np.allclose(normal[5], [0.0, 0.0, 1.0]) and np.allclose(normal[6:8], [1.0, 0.0, 0.0])
    sinking = [(1.01, 0.5, -0.02), (0.999, 0.5, -0.02), (0.995, 0.5, -0.021),
               (0.99, 0.5, -0.022), (0.985, 0.5, -0.023)]
    overlap, normal = _entering(sinking)
    assert np.allclose(overlap, [0.0, 0.0, 0.001, 0.002, 0.003], rtol=0, atol=1e-12)
    assert np.allclose(normal[2:], [0.0, 0.0, 1.0])


@pytest.mark.parametrize("ghost", [False, True])
def test_a_dashpot_force_is_booked_over_the_increments_of_the_nodes_it_acted_on(ghost):
    """The leapfrog's kinetic energy changes by F^n . (du_n + du_{n+1}) / 2: a contact's
    dashpot force of one step acts on its nodes over that step's increment and the next.
    The law books it half at this step's overlap rate; the next step books the other half
    at that step's increments of the same nodes, with the same weights, along the same
    normal (book_carried_dashpot), whatever the geometry then finds, and the law books
    nothing more where the contact opens. Checked against the work the dashpot's node
    forces take from the blocks over random increments, the target an own element or a
    ghost (increments at row 8 (c - n_own) + a). (Booked at the mean of the two steps'
    rates, and at the last rate alone where the target changed or the contact opened, it
    missed F_d (r_next - r_last) dt / 2 at each such event.)"""
    dt, k_n, rate = 1e-3, 1e6, 2.0
    normal = np.array([[0.0, 0.0, 1.0]])
    rec = _records(SEMI_SPRING, 0, overlap=1e-3, normal=normal, slip=[0.0, 0.0, -rate * dt],
                   target_elem=1, share=1.0, k_n=k_n, k_t=k_n)
    bodies = pack(DashpotBodies(of=np.array([0, 1]), mass=np.full(2, 1e3),
                                stiffness=np.full(2, k_n), stable_mass=np.full(2, np.inf)))
    params, energy = _params(mu=0.5, damping_ratio=0.3), energy_tally()
    contact_law(rec.packed, bodies, params, dt, energy)
    damping_force = rec.dashpot[0, 0]
    assert damping_force > 0.0 and tally_value(energy, "dashpot") == pytest.approx(
        0.5 * damping_force * rate * dt, rel=1e-12)
    own_w = np.array([[0.7, 0.1, 0.1, 0.1]])
    target_w = np.array([[0.4, 0.3, 0.2, 0.1]])
    target_node = 8 + FACES[5][None, :]
    rec.own_w[:], rec.target_node[:], rec.target_w[:] = own_w, target_node, target_w
    du = RNG.normal(0.0, 1e-3, (24, 3))
    n_own = 1 if ghost else 3
    base = np.array([0, 8, 16]) if not ghost else np.array([0, 0, 8])
    node_force = np.zeros((24, 3))
    node_force[FACES[0]] += own_w[0][:, None] * damping_force * normal
    node_force[8 + FACES[5]] -= target_w[0][:, None] * damping_force * normal
    dissipated = -0.5 * np.sum(node_force * du)             # the work the blocks lose
    own_du, ghost_du = (du[:8], du[8:]) if ghost else (du, np.zeros((0, 3)))
    mesh = ContactMesh.of(base=base, n_own=n_own, gid=np.arange(3),
                          active=np.ones((3, 6), dtype=bool), body=np.arange(3),
                          frames=np.zeros((18, FRAME_WIDTH)), centroid=np.zeros((3, 3)),
                          ghost_x=np.zeros_like(ghost_du), du=own_du)
    mesh.ghost_du[:] = ghost_du
    first = tally_value(energy, "dashpot")
    book_carried_dashpot(pack(mesh), rec.packed, dt, True, energy)
    assert tally_value(energy, "dashpot") - first == pytest.approx(dissipated, rel=1e-12)
    booked = tally_value(energy, "dashpot")
    rec.overlap[:] = 0.0
    contact_law(rec.packed, bodies, params, dt, energy)
    assert tally_value(energy, "dashpot") == booked
    assert not rec.dashpot.any() and rec.status[0] == OPEN
