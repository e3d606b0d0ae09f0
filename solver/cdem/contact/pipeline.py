"""A rank's contact: detect -> geometry -> law -> exchange, on arrays, with ghost faces.

The pipeline holds the contact state of the rank's own active faces (semi-springs and
semi-edges, :mod:`records`), the ghost elements it received from neighbouring ranks and
their potential targets. It takes the node coordinates and increments of the rank's own
elements and returns node forces; it holds no reference to the model.

Per step (all ranks, in this order):

1. ``refresh_ghosts(du)``: ghost node increments from their owners (neighbour exchange),
   ghost coordinates advanced by them (the owner's x += du, repeated bit for bit);
2. ``needs_renewal(x)``: whether an own node moved more than half the search margin since
   the last renewal; the time loop reduces this flag over all ranks with its step sums;
3. ``geometry(x, du, dt, moved)``: the dashpot work of the last step's forces over this
   step's increments, at the nodes they acted on (``law``); renewal when a node moved
   anywhere or after ``renew_every`` steps, a partial renewal after the active faces
   changed (``detect``); contact geometry (``geometry``);
4. ``forces()``: forces (``law``); node shares, those of ghost nodes sent back to their
   owners, and the ordered sums of every own node's shares (``exchange``). Returns
   (rows, forces). The time loop computes the element forces between 3 and 4.

A renewal exchanges per-rank boxes (Allgather of at most 64 boxes per rank), recomputes the
neighbour ranks and sends each neighbour the elements it needs (``detect``); between
renewals only ghost increments and node shares cross ranks, and only between neighbours.

When springs break, the faces they held become active, and the two elements they joined
are no longer glued, so every active face of either may become a target of the other's
semi-springs: all active faces of an element that lost glue are fresh. The next step
renews the ghosts (they carry the fresh flags) but searches potential targets only for the
semi-springs on fresh faces and for those within reach of a fresh face; every other
semi-spring keeps its targets, which no fresh face could join, until the next renewal. A
fragmenting mass breaks springs at almost every step, and a full search at each would cost
many element steps. Which semi-springs are searched depends on the global state only, so
the targets are the same on any partition.

The glue change itself touches what changed: the records of the faces that turned active
are appended (the node shares' ordered sums sort what comes out of key order, ``exchange``),
the elements that became active go in at their places in element order, the bodies come
from one union-find pass
(solver.cdem.bodies), and the kept potential targets wait, as faces of the old contact
elements, for the partial renewal to map them onto the new ones.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from mpi4py import MPI

from solver.cdem.bodies import Bodies, exact_grid, on_grid
from solver.cdem.contact.detect import (box_distance, boxes_within, carried_faces,
                                        element_boxes, face_spheres, faces_near_boxes,
                                        find_candidates, local_faces, moved_beyond,
                                        surface_boxes)
from solver.cdem.contact.exchange import (EDGE_EDGE, EDGE_FACE, FACE_FACE, GHOST_WIDTH,
                                          VERTEX_FACE, BodySums, GhostElements, ShareBuffers,
                                          contact_types, count_loaded, ghost_rows, node_shares,
                                          ordered_sums, semi_spring_points, unpack_ghosts)
from solver.cdem.contact.frames import FRAME_WIDTH, face_frames
from solver.cdem.contact.semi_edge import semi_edge_geometry
from solver.cdem.contact.semi_spring import semi_spring_geometry
from solver.cdem.contact.law import (book_carried_dashpot, contact_law, loaded_stiffness,
                                     stable_dashpot_mass)
from solver.cdem.contact.records import (N_CANDIDATES, SEMI_EDGE, SEMI_SPRING, ContactRecords,
                                         GrowingRows, open_rows, renumber_target_nodes)
from solver.cdem.halo import Halo, Neighbours, Traffic
from solver.contact_laws.laws import SLIP, STICK, damping_ratio_from_restitution
from solver.contact_laws.register import LawChoice, kernel_laws

#: Ghosts that hold every kept potential target come from a search KEPT_REACH times the
#: margin wide. A target was within the margin of its semi-spring when found, at the last
#: renewal or at a partial one after it; since the last renewal no node moved more than
#: half the margin in any coordinate (sqrt(3)/2 margin in all), so since the target was
#: found the point and the face's nodes each moved at most sqrt(3) margin: the gap grew
#: by at most 2 sqrt(3) margin, to under 4.5 margins.
KEPT_REACH = 5.0

TYPE_NAMES = ((FACE_FACE, "face-face"), (EDGE_FACE, "edge-face"), (VERTEX_FACE, "vertex-face"),
              (EDGE_EDGE, "edge-edge"))


@dataclass
class ContactParams:
    """alpha the indentation (Feng et al. 2014 Eq. 3); tol, margin the search tolerance and
    margin [m]; mu the friction coefficient (velocity_weakening: the static one);
    damping_ratio zeta of the normal dashpot; renew_every the steps between renewals; size
    the median face size [m] they scale; laws the chosen contact laws (by id, with their
    further parameters: solver.contact_laws.register)."""

    alpha: float
    tol: float
    margin: float
    mu: float
    damping_ratio: float
    renew_every: int
    size: float
    laws: LawChoice

    @property
    def node_damping_ratio(self) -> float:
        """Damping ratio of a semi-spring's dashpot on its vertex node alone when it carries
        a quarter of a single element's mass, c / (2 sqrt(K m_node)) = zeta sqrt(m / m_node)
        = zeta sqrt(2) (m_node = M / 8): what the stable step assumes; heavier shares are
        capped at the step's limit (solver.cdem.contact.law.stable_dashpot_mass)."""
        return self.damping_ratio * math.sqrt(2.0)

    @classmethod
    def from_config(cls, c, size: float) -> ContactParams:
        return cls(alpha=c.indentation, tol=c.tolerance * size, margin=c.margin * size,
                   mu=math.tan(math.radians(c.friction_deg)),
                   damping_ratio=damping_ratio_from_restitution(c.restitution),
                   renew_every=c.renew_every, size=size, laws=kernel_laws(c))


@dataclass
class ContactElements:
    """What the contact needs of the rank's own elements (n,): gid global ids; face_area
    (n, 6) initial face areas [m2]; k_n, k_t (n, 6) contact stiffness per unit area of each
    face [Pa/m]; node_mass the smallest node mass [kg] and omega the highest node frequency
    of the stable-step bound [1/s] (solver.cdem.stable_step) of each element; bodies:
    glue state (n, 6) -> solver.cdem.bodies.Bodies of the own elements (collective)."""

    gid: np.ndarray
    face_area: np.ndarray
    k_n: np.ndarray
    k_t: np.ndarray
    node_mass: np.ndarray
    omega: np.ndarray
    bodies: Callable[[np.ndarray], Bodies]

    @staticmethod
    def stable_stiffness(k_n: np.ndarray, k_t: np.ndarray, face_area: np.ndarray) -> np.ndarray:
        """Contact stiffness a node of each element (per-area stiffness and face areas (n,
        6)) may carry at most (3 own semi-springs + 3 targets), (n,)."""
        return 6.0 * (np.maximum(k_n, k_t) * face_area / 4.0).max(axis=1)


class Contact:
    """Semi-spring and semi-edge contact of one rank (module docstring)."""

    def __init__(self, comm, params: ContactParams, own: ContactElements,
                 glued: np.ndarray):
        self.comm = comm
        self.p = params
        self.own = own
        self.tally = np.zeros(3)
        self.renewals = 0
        self.checks = 0
        self.steps = 0
        self.max_overlap = 0.0
        self.types_seen: set[str] = set()
        self.steps_since_renewal = 0
        self.traffic = Traffic()
        self.renewal_traffic = Traffic()
        self.neighbours = Neighbours(comm, [], self.traffic)
        self.ghost_halo = None
        self.n_own = 0
        self.gdu = np.zeros((0, 3))
        self.carry_halo, self.carry_gdu = None, np.zeros((0, 3))
        self.geometry_known = False
        self.n_ghosts = 0
        self.ghost_rank = np.zeros(0, dtype=np.int64)
        self.ghost_owner_base = np.zeros(0, dtype=np.int64)
        self.shares = ShareBuffers(8 * len(own.gid))
        self.ss = None
        self.se = None
        self.scratch = {"candidates": GrowingRows((N_CANDIDATES,), np.int64),
                        "frames": GrowingRows((FRAME_WIDTH,)), "centroid": GrowingRows((3,)),
                        "centre": GrowingRows((3,)), "radius": GrowingRows()}
        self.x_renewal = None
        self.pending = None
        self.glued = None
        largest = float(np.max(own.k_n * own.face_area, initial=0.0))
        self.k_grid = 2.0 * exact_grid(comm, largest, 8 * 6 * len(own.gid))
        self.body_sums = BodySums(comm, self.traffic, self.renewal_traffic)
        self.stepping = None
        self.set_glue(glued)

    # -- active faces ----------------------------------------------------------------------
    def set_glue(self, glued: np.ndarray) -> None:
        """Take the glue state (n_own, 6): the global id of the element glued across each
        face (-1: none, the face is active); glue only breaks. The faces that turned active
        get their records; records of faces that stay active keep their state and their
        potential targets (mapped to the new contact elements by the partial renewal at
        the next step), their elements their positions at the last renewal. Called after a
        step's contact forces, so no earlier glue change is still pending."""
        was_active = (self.glued < 0 if self.ss is not None
                      else np.zeros(glued.shape, dtype=bool))
        active = glued < 0
        if np.any(was_active & ~active):
            raise RuntimeError("a face that was free is glued again")
        elem_new, face_new = np.nonzero(active & ~was_active)
        if self.ss is None:
            self.own_active = np.zeros(0, dtype=np.int64)
            self.ss, self.se = ContactRecords.empty(SEMI_SPRING), ContactRecords.empty(SEMI_EDGE)
        old_active = self.own_active
        joining = np.unique(elem_new[~was_active[elem_new].any(axis=1)])
        at_elem = np.searchsorted(old_active, joining)
        self.own_active = np.insert(old_active, at_elem, joining)
        renumber = (np.arange(len(old_active)) + np.searchsorted(joining, old_active)
                    if len(joining) else None)
        key = (4 * (6 * self.own.gid[elem_new] + face_new)[:, None] + np.arange(4)).ravel()
        order = np.argsort(key, kind="stable")
        key = key[order]
        face_of = np.repeat(6 * elem_new + face_new, 4)[order]
        elem = np.searchsorted(self.own_active, face_of // 6)
        area = self.own.face_area.ravel()[face_of] / 4.0
        k_n = on_grid(self.own.k_n.ravel()[face_of] * area, self.k_grid)
        k_t = self.own.k_t.ravel()[face_of] * area
        self._renumber_targets(renumber, len(joining))
        self.ss.insert(key, elem, k_n, k_t, renumber)
        self.se.insert(key, elem, 2.0 * k_n, 2.0 * k_t, renumber)
        self.glued = glued
        self.bodies = self.own.bodies(glued)
        self.own_rows = self._own_element_rows()
        self.fresh = np.zeros_like(active)
        if self.x_renewal is not None:
            self.pending = (self.candidates, self.gid)
            if len(joining):
                x_renewal = np.empty((len(self.own_active), 24))
                x_renewal[:len(old_active)] = self.x_renewal.reshape(-1, 24)
                open_rows(x_renewal, len(old_active), at_elem)
                x_renewal[at_elem + np.arange(len(joining))] = np.nan
                self.x_renewal = x_renewal.reshape(-1, 3)
            self.fresh[elem_new] = active[elem_new]
        self.candidates = np.zeros((0, N_CANDIDATES), dtype=np.int64)
        self.carry_halo, self.carry_gdu = self.ghost_halo, np.zeros_like(self.gdu)
        self._drop_ghosts()

    def _renumber_targets(self, renumber: np.ndarray | None, joining: int) -> None:
        """The last step's target nodes (8 c + a) of the records, on the contact elements
        after a glue change: own ones by ``renumber`` (old -> new index; None: no element
        joined, nothing moves), the ghosts after the ``joining`` own elements more (their
        increments come through the old halo for one step, :meth:`refresh_ghosts`)."""
        if renumber is None:
            return
        for rec in (self.ss, self.se):
            renumber_target_nodes(rec.target_node, self.n_own, renumber, joining)

    def _own_element_rows(self) -> np.ndarray:
        """The ghost-row fields (solver.cdem.contact.exchange.ghost_rows) of the own active
        elements, but for their coordinates (they change with the glue only)."""
        own, b = self.own_active, self.bodies
        return np.column_stack([self.own.gid[own], b.label[own], b.owner[own], b.mass[own],
                                self.own.node_mass[own], self.own.omega[own]])

    def _drop_ghosts(self) -> None:
        """Contact elements: the own active ones alone, as the glue left them; no ghost
        halo."""
        self.ghost_halo = None
        self._set_elements(unpack_ghosts(np.zeros((0, GHOST_WIDTH))))

    def _set_elements(self, ghosts: GhostElements) -> None:
        """Contact elements: own active ones, then the ghosts; the bodies they belong to.
        Their face frames and centroids are left unset, in the scratch arrays, until
        :meth:`_face_frames`, which every renewal and step runs before reading them."""
        own = self.own_active
        self.n_own = len(own)
        mine = self.own_rows
        self.gid = np.concatenate([self.own.gid[own], ghosts.gid])
        self.gid_order = np.argsort(self.gid, kind="stable")
        self.active = np.concatenate([self.glued[own] < 0, ghosts.active])
        self.fresh_faces = np.concatenate([self.fresh[own], ghosts.fresh])
        self.base = np.concatenate([8 * own, 8 * np.arange(len(ghosts.gid))]).astype(np.int64)
        self.gx = np.ascontiguousarray(ghosts.x)
        self.gdu = np.zeros_like(self.gx)
        self.frames = self.scratch["frames"].rows(6 * len(self.gid))
        self.centroid = self.scratch["centroid"].rows(len(self.gid))
        label = np.concatenate([mine[:, 1], ghosts.label]).astype(np.int64)
        owner = np.concatenate([mine[:, 2], ghosts.owner]).astype(np.int64)
        self.node_mass = np.concatenate([mine[:, 4], ghosts.node_mass])
        self.omega = np.concatenate([mine[:, 5], ghosts.omega])
        self.body_labels, first, self.body_of = np.unique(label, return_index=True,
                                                          return_inverse=True)
        self.body_mass = np.concatenate([mine[:, 3], ghosts.body_mass])[first]
        self.body_sum = np.zeros(len(first))
        self.body_owner = owner[first]
        self.stepping = None

    # -- per step --------------------------------------------------------------------------
    def refresh_ghosts(self, du: np.ndarray) -> None:
        """Ghost increments from their owners; ghost coordinates advanced by them. After a
        glue change (no ghosts until the partial renewal), the increments of the ghosts
        before it, for the dashpot work of the last step's forces."""
        if self.ghost_halo is not None:
            self.ghost_halo.forward(du, into=self.gdu)
            self.gx += self.gdu
        elif self.carry_halo is not None:
            self.carry_halo.forward(du, into=self.carry_gdu)

    def needs_renewal(self, x: np.ndarray) -> bool:
        """Whether an own node moved more than half the margin since the last renewal
        (elements active since then hold NaN positions and count as not moved)."""
        if self.x_renewal is None:
            return True
        return moved_beyond(x, self.x_renewal, self.base, self.n_own, 0.5 * self.p.margin)

    def _own_rows(self) -> np.ndarray:
        return (8 * self.own_active[:, None] + np.arange(8)).ravel()

    def geometry(self, x: np.ndarray, du: np.ndarray, dt: float, damping: tuple[float, float],
                 moved_anywhere: bool) -> None:
        """This step's renewal, if due, and contact geometry: the rank's own work up to the
        exchange that :meth:`forces` starts with (collective only when it renews). ``dt``
        and ``damping`` (the stage's Cundall local alpha and mass-proportional c) set the
        cap of the dashpot masses."""
        gdu = self.gdu if self.carry_halo is None else self.carry_gdu
        for rec in (self.ss, self.se):
            book_carried_dashpot(du, gdu, self.base, self.n_own, rec.elem, rec.face, rec.own_w,
                                 rec.target_node, rec.target_w, rec.normal, rec.dashpot, dt,
                                 self.geometry_known, self.tally)
        self.carry_halo, self.carry_gdu = None, np.zeros((0, 3))
        if moved_anywhere or self.steps_since_renewal >= self.p.renew_every:
            self.renew(x, du)
        elif self.pending is not None:
            self.renew_fresh(x, du)
        else:
            self._face_frames(x)
        self.steps_since_renewal += 1
        p = self.p
        ss, se = self.ss, self.se
        deepest = semi_spring_geometry(
            x, du, self.gx, self.gdu, self.base, self.n_own, self.gid, self.active,
            self.body_of, self.frames, self.candidates, ss.elem, ss.face, ss.vertex, p.alpha,
            p.tol, ss.target, ss.overlap, ss.normal, ss.slip, ss.own_w, ss.target_node,
            ss.target_w, ss.target_elem, ss.share, ss.placed, ss.offset, ss.f_t)
        edge_deepest = semi_edge_geometry(
            x, du, self.gx, self.gdu, self.base, self.n_own, self.gid, self.gid_order,
            self.active, self.frames, self.centroid, self.candidates, se.elem, se.face,
            se.vertex, p.alpha, p.tol, se.target, se.overlap, se.normal, se.slip, se.own_w,
            se.target_node, se.target_w, se.target_elem, se.status, se.offset)
        if (dt, damping) != self.stepping:
            self.stepping = (dt, damping)
            self.stable_mass = stable_dashpot_mass(self.node_mass, self.omega,
                                                   p.damping_ratio, dt, damping)
        self.max_overlap = max(self.max_overlap, deepest, edge_deepest)
        self.geometry_known = True

    def forces(self) -> tuple[np.ndarray, np.ndarray]:
        """Contact forces of this step, after :meth:`geometry`: (own node rows, forces
        (n, 3)) to add (collective)."""
        p, ss, se, dt = self.p, self.ss, self.se, self.stepping[0]
        self.body_sum[:] = 0.0
        for rec in (ss, se):
            loaded_stiffness(rec.overlap, rec.elem, rec.target_elem, rec.share, rec.k_n,
                             self.body_of, self.body_sum)
        self.body_sums.total(self.body_sum)
        stored = 0.0
        for rec in (ss, se):
            _, energy = contact_law(rec.overlap, rec.normal, rec.slip, rec.elem,
                                    rec.target_elem, rec.share, rec.k_n, rec.k_t,
                                    p.damping_ratio, self.body_of, self.body_mass,
                                    self.body_sum, self.stable_mass, p.mu, dt, rec.f_t, rec.f_n,
                                    rec.status, rec.dashpot, rec.force, self.tally, p.laws)
            stored += energy
        self.tally[2] = stored
        self.steps += 1
        if self.steps % 10 == 0:
            self.types_seen |= self.contact_types()
        return self._node_forces()

    def _node_forces(self) -> tuple[np.ndarray, np.ndarray]:
        ss, se, buf = self.ss, self.se, self.shares
        buf.reserve(count_loaded(ss.force, se.force))
        n_local, n_ghost = node_shares(
            ss.key, ss.face, ss.elem, self.base, self.n_own, ss.force, ss.own_w,
            ss.target_node, ss.target_w, se.force, se.own_w, se.target_node, se.target_w,
            buf.rows, buf.keys, buf.values, buf.ghost_nodes, buf.ghost_keys, buf.ghost_values)
        node = buf.ghost_nodes[:n_ghost]
        ghost = node // 8 - self.n_own
        dest = self.ghost_rank[ghost]
        order = np.argsort(dest, kind="stable")
        send = np.column_stack([self.ghost_owner_base[ghost] + node % 8,
                                buf.ghost_keys[:n_ghost], buf.ghost_values[:n_ghost]])[order]
        counts = np.array([np.count_nonzero(dest == r) for r in self.neighbours.ranks],
                          dtype=np.int64)
        received, _ = self.neighbours.exchange(send, counts)
        m = n_local + len(received)
        if m > len(buf.rows):
            buf.grow(m, keep=n_local)
        buf.rows[n_local:m] = received[:, 0]
        buf.keys[n_local:m] = received[:, 1]
        buf.values[n_local:m] = received[:, 2:]
        n_rows = ordered_sums(buf.rows[:m], buf.keys[:m], buf.values[:m], buf.head, buf.first,
                              buf.last_key, buf.nxt, buf.touched, buf.chain, buf.out)
        return buf.touched[:n_rows], buf.out[:n_rows]

    # -- renewal ---------------------------------------------------------------------------
    def renew(self, x: np.ndarray, du: np.ndarray) -> None:
        """New ghosts (coordinates and this step's increments) and potential targets
        (collective over the communicator)."""
        self.renewals += 1
        self.steps_since_renewal = 0
        self._exchange_ghosts(x, du, self.p.margin)
        self._face_frames(x)
        centre, radius = self._face_spheres(x)
        points = self.semi_spring_positions(x)
        self.candidates = self.scratch["candidates"].rows(len(self.ss))
        self.checks += find_candidates(points, self.ss.elem, self.glued[self.own_active],
                                       centre, radius, self.frames, self.gid, self.p.margin,
                                       self.candidates)
        self.x_renewal = x[self._own_rows()].copy()
        self._settle()

    def renew_fresh(self, x: np.ndarray, du: np.ndarray) -> None:
        """The partial renewal after springs broke (module docstring; collective): new
        ghosts, from a search with KEPT_REACH times the margin so that every kept target is
        among them, and new potential targets for the semi-springs on fresh faces and those
        within reach of one."""
        self.renewals += 1
        self._exchange_ghosts(x, du, KEPT_REACH * self.p.margin)
        self.candidates = self._carried_candidates()
        self._face_frames(x)
        centre, radius = self._face_spheres(x)
        glued = self.glued[self.own_active]
        ss = self.ss
        search = self.fresh_faces[ss.elem, ss.face]
        search[self._near_fresh(x, glued, centre, radius)] = True
        search = np.nonzero(search)[0]
        found = np.empty((len(search), N_CANDIDATES), dtype=np.int64)
        self.checks += find_candidates(self.semi_spring_positions(x, search), ss.elem[search],
                                       glued, centre, radius, self.frames, self.gid,
                                       self.p.margin, found)
        self.candidates[search] = found
        new = np.nonzero(np.isnan(self.x_renewal[:, 0]))[0]
        self.x_renewal[new] = x[8 * self.own_active[new // 8] + new % 8]
        self._settle()

    def _near_fresh(self, x: np.ndarray, glued: np.ndarray, centre: np.ndarray,
                    radius: np.ndarray) -> np.ndarray:
        """The semi-springs (indices) that would take a fresh face as a potential target.
        Only those of the own elements whose box meets the boxes around the fresh faces'
        reach (surface_boxes of the cubes about their spheres grown by the margin, and a
        hundredth of the margin more for the rounding of the points inside their element's
        box) are searched: a semi-spring point within reach of a face lies in that face's
        cube."""
        fresh = self.fresh_faces.ravel()
        reach = (radius[fresh] + self.p.margin)[:, None]
        around = surface_boxes(centre[fresh] - reach, centre[fresh] + reach)
        lo, hi = element_boxes(x, self.base, self.n_own)
        near_elem = np.zeros(self.n_own, dtype=bool)
        near_elem[boxes_within(lo, hi, around, 0.01 * self.p.margin)] = True
        rows = np.nonzero(near_elem[self.ss.elem])[0]
        found = np.empty((len(rows), N_CANDIDATES), dtype=np.int64)
        find_candidates(self.semi_spring_positions(x, rows), self.ss.elem[rows], glued, centre,
                        np.where(fresh, radius, -1.0), self.frames, self.gid, self.p.margin,
                        found)
        return rows[found[:, 0] >= 0]

    def _face_frames(self, x: np.ndarray) -> None:
        """Face planes (centre, normal, warp) and element centroids of the contact elements
        (solver.cdem.contact.frames.face_frames), for this step's geometry and, at a
        renewal, the ranking of the potential targets."""
        face_frames(x, self.gx, self.base, self.n_own, self.frames, self.centroid)

    def _face_spheres(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Face spheres (centre, radius; -1 inactive) of the contact elements, in the
        scratch arrays (the next call overwrites them; an inactive face's centre is left
        unset)."""
        centre = self.scratch["centre"].rows(6 * len(self.gid))
        radius = self.scratch["radius"].rows(6 * len(self.gid))
        face_spheres(x, self.gx, self.base, self.n_own, self.active, centre, radius)
        return centre, radius

    def _settle(self) -> None:
        """After a renewal: no face is fresh, no target waits to be mapped."""
        self.pending = None
        self.fresh[:] = False
        self.fresh_faces[:] = False

    def _global_faces(self, faces: np.ndarray, gid: np.ndarray) -> np.ndarray:
        """Potential targets per record as global face ids 6 g + f (-1 none), from
        ``faces`` (6 c + f, c an index into ``gid``) of the first records (those of faces
        freed since have none; solver.cdem.contact.detect.carried_faces)."""
        out = np.full((len(self.ss), N_CANDIDATES), -1, dtype=np.int64)
        carried_faces(faces, gid, out)
        return out

    def _carried_candidates(self) -> np.ndarray:
        """The potential targets kept across a glue change, as faces of the contact
        elements now here (every one must be an own or ghost element here), mapped in
        place; none for the records of the faces that turned active."""
        faces, gid = self.pending
        mapped, _ = local_faces(6 * gid[:, None], self.gid)
        out = self.scratch["candidates"].rows(len(self.ss))
        kept = out[:len(faces)]
        if not np.may_share_memory(kept, faces):
            kept[:] = faces
        if not carried_faces(kept, np.where(mapped >= 0, mapped // 6, -1).ravel(), kept):
            raise RuntimeError("a kept potential target has no ghost here")
        out[len(faces):] = -1
        return out

    def _exchange_ghosts(self, x: np.ndarray, du: np.ndarray, margin: float) -> None:
        """Ghost elements from the neighbours: those with a face within ``margin`` of this
        rank's search cells, with their coordinates and this step's increments; the
        pattern of the bodies' sums. Without ghosts (no ghost halo), the contact elements
        are the own ones as set_glue or restore left them."""
        if self.ghost_halo is not None:
            self._drop_ghosts()
        chosen = self._ghosts_for_neighbours(x, margin)
        own = self.own_active
        fields = self.own_rows
        send = [ghost_rows(fields[c], 8 * own[c], x[8 * own[c][:, None] + np.arange(8)],
                           self.active[c], self.fresh_faces[c]) for c in chosen]
        payload = np.concatenate(send) if send else np.zeros((0, GHOST_WIDTH))
        received, per_rank = self.neighbours.exchange(
            payload, np.array([len(c) for c in chosen], dtype=np.int64))
        ghosts = unpack_ghosts(received)
        ranks = self.neighbours.ranks
        self.ghost_rank = np.repeat(np.array(ranks, dtype=np.int64), per_rank)
        self.ghost_owner_base = ghosts.owner_base
        first = np.concatenate([[0], np.cumsum(per_rank)])
        self.ghost_halo = Halo(
            self.neighbours, {r: (8 * own[c][:, None] + np.arange(8)).ravel()
                              for r, c in zip(ranks, chosen)},
            {r: np.arange(8 * first[i], 8 * first[i + 1]) for i, r in enumerate(ranks)})
        self._set_elements(ghosts)
        self.body_sums.renew(self.body_labels, self.body_owner)
        self.ghost_halo.forward(du, into=self.gdu)

    def _ghosts_for_neighbours(self, x: np.ndarray, margin: float) -> list[np.ndarray]:
        """The neighbour ranks (renewed), and for each the own active elements (indices)
        it needs as ghosts: the two levels of solver.cdem.contact.detect."""
        centre = self.scratch["centre"].rows(6 * self.n_own)
        radius = self.scratch["radius"].rows(6 * self.n_own)
        face_spheres(x, self.gx, self.base, self.n_own, self.active, centre, radius)
        lo, hi = element_boxes(x, self.base, self.n_own)
        boxes = surface_boxes(lo, hi)
        everyone = self.comm.allgather((boxes, float(radius.max(initial=0.0))))
        self.renewal_traffic.add((self.comm.size - 1) * (boxes.nbytes + 8),
                                 sum(b.nbytes + 8 for b, _ in everyone) - boxes.nbytes - 8)
        h = max(r_max for _, r_max in everyone) + margin
        ranks = [r for r, (b, _) in enumerate(everyone)
                 if r != self.comm.rank and len(b) and len(boxes)
                 and box_distance(boxes, b).min() <= h]
        if self.comm.allreduce(ranks != self.neighbours.ranks, op=MPI.LOR):
            self.neighbours.free()
            self.neighbours = Neighbours(self.comm, ranks, self.traffic)
        near = [np.hstack([lo, hi])[boxes_within(lo, hi, everyone[r][0],
                                                 everyone[r][1] + margin)]
                for r in self.neighbours.ranks]
        theirs, per_rank = self.neighbours.exchange(
            np.concatenate(near) if near else np.zeros((0, 6)),
            np.array([len(b) for b in near], dtype=np.int64))
        first = np.concatenate([[0], np.cumsum(per_rank)])
        near_each = faces_near_boxes(centre, radius, len(radius), theirs, first, margin)
        return [np.nonzero(near)[0] for near in near_each]

    # -- checkpoint ------------------------------------------------------------------------
    def state(self) -> tuple[dict, dict]:
        """(tables, scalars) that let :meth:`restore` continue bit for bit: the records'
        history keyed by record key (with the offsets, and the semi-springs' shares, places,
        overlaps and normals), their potential targets as global face ids, the positions at the last
        renewal keyed by element id (and the fresh faces, when a partial renewal is
        pending); the counters (global values where the summary reduces them, see
        :meth:`restore`)."""
        pending = self.pending is not None
        faces = (self._global_faces(*self.pending) if pending
                 else self._global_faces(self.candidates, self.gid))
        tables = {name: {"keys": rec.key, "target": rec.target, "f_t": rec.f_t,
                         "dashpot": rec.dashpot, "f_n": rec.f_n, "status": rec.status}
                  for name, rec in (("semi_springs", self.ss), ("semi_edges", self.se))}
        tables["semi_springs"]["candidates"] = faces
        tables["semi_springs"]["share"] = self.ss.share
        tables["semi_springs"]["placed"] = self.ss.placed
        tables["semi_springs"]["offset"] = self.ss.offset
        tables["semi_springs"]["overlap"] = self.ss.overlap
        tables["semi_springs"]["normal"] = self.ss.normal
        tables["semi_edges"]["offset"] = self.se.offset
        keys = self.own.gid[self.own_active]
        renewed = self.x_renewal is not None
        tables["renewal"] = {"keys": keys, "x": (self.x_renewal.reshape(-1, 8, 3) if renewed
                                                 else np.zeros((len(keys), 8, 3)))}
        if pending:
            tables["renewal"]["fresh"] = self.fresh[self.own_active]
        scalars = {"renewed": renewed, "pending": pending, "renewals": self.renewals,
                   "steps": self.steps,
                   "steps_since_renewal": self.steps_since_renewal,
                   "checks": self.comm.allreduce(self.checks),
                   "max_overlap": self.comm.allreduce(self.max_overlap, op=MPI.MAX),
                   "types_seen": sorted(set().union(*self.comm.allgather(self.types_seen))),
                   "tally": [self.comm.allreduce(float(v)) for v in self.tally[:2]]}
        return tables, scalars

    def restore(self, x: np.ndarray, du: np.ndarray, tables: dict, scalars: dict) -> None:
        """Continue from :meth:`state` (after ``set_glue`` with the restored glue state, on
        any partition). Ghosts come from a search with KEPT_REACH times the margin, so that
        every kept potential target is among them (collective)."""
        for name, rec in (("semi_springs", self.ss), ("semi_edges", self.se)):
            for field in ("target", "f_t", "dashpot", "f_n", "status"):
                getattr(rec, field)[:] = tables[name][field]
        self.ss.share[:] = tables["semi_springs"]["share"]
        self.ss.placed[:] = tables["semi_springs"]["placed"]
        self.ss.offset[:] = tables["semi_springs"]["offset"]
        self.ss.overlap[:] = tables["semi_springs"]["overlap"]
        self.ss.normal[:] = tables["semi_springs"]["normal"]
        self.se.offset[:] = tables["semi_edges"]["offset"]
        faces = tables["semi_springs"]["candidates"]
        gid = np.unique(faces[faces >= 0] // 6)
        self.pending = (np.where(faces >= 0, 6 * np.searchsorted(gid, faces // 6) + faces % 6,
                                 -1), gid)
        if scalars.get("pending"):
            self.fresh[self.own_active] = tables["renewal"]["fresh"]
            self._drop_ghosts()
        else:
            self._exchange_ghosts(x, du, KEPT_REACH * self.p.margin)
            self.candidates = self._carried_candidates()
            self.pending = None
        self.x_renewal = (tables["renewal"]["x"].reshape(-1, 3).copy() if scalars["renewed"]
                          else None)
        self.renewals = scalars["renewals"]
        self.steps = scalars["steps"]
        self.steps_since_renewal = scalars["steps_since_renewal"]
        self.max_overlap = scalars["max_overlap"]
        self.types_seen = set(scalars["types_seen"])
        first = self.comm.rank == 0
        self.checks = scalars["checks"] if first else 0
        self.tally[:2] = scalars["tally"] if first else 0.0

    # -- reporting -------------------------------------------------------------------------
    def contact_types(self) -> set[str]:
        """Traditional contact types of the compressed contacts (see exchange.contact_types)."""
        seen = contact_types(self.ss.target, self.ss.f_n, self.se.target, self.se.f_n)
        return {name for bit, name in TYPE_NAMES if seen & bit}

    def summary(self) -> dict:
        """Counts over all ranks: semi-springs, contacts in compression, sticking, sliding,
        target renewals and candidates found at renewals, contact types, penetration (the
        deepest overlap a contact carried so far, a semi-spring's offset left out, over the
        median face size)."""
        ss, se = self.ss, self.se
        local = np.array([len(ss), np.count_nonzero(ss.f_n > 0),
                          np.count_nonzero(ss.status == STICK),
                          np.count_nonzero(ss.status == SLIP), self.checks,
                          np.count_nonzero(se.f_n > 0)], dtype=np.int64)
        total = np.empty_like(local)
        self.comm.Allreduce(local, total, op=MPI.SUM)
        return {"semi_springs": int(total[0]), "in_compression": int(total[1]),
                "sticking": int(total[2]), "sliding": int(total[3]),
                "renewals": self.renewals, "candidate_checks": int(total[4]),
                "types_seen": sorted(set().union(*self.comm.allgather(self.types_seen))),
                "semi_edges_in_compression": int(total[5]),
                "max_penetration_ratio": self.comm.allreduce(self.max_overlap, op=MPI.MAX)
                / self.p.size}

    def semi_spring_positions(self, x: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """Positions (n, 3) of the semi-springs (those in ``rows``, or all)."""
        ss = self.ss
        at = slice(None) if rows is None else rows
        points = np.zeros((len(ss.elem[at]), 3))
        semi_spring_points(x, self.base, ss.elem[at], ss.face[at], ss.vertex[at], self.p.alpha,
                           points)
        return points

    def nbytes(self) -> int:
        """Bytes of the arrays the contact holds (records, candidates, contact elements)."""
        arrays = [*(rows.store for rows in self.scratch.values()), self.gid, self.active,
                  self.base, self.gx, self.gdu, self.glued, self.node_mass, self.omega,
                  self.body_of, self.body_labels, self.body_mass, self.body_sum]
        return self.ss.nbytes() + self.se.nbytes() + int(sum(a.nbytes for a in arrays))
