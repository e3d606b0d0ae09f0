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

A renewal publishes each rank's holding box (an Allgather of 64 B per rank), exchanges the
boxes of up to 64 per rank between ranks whose holding boxes are near, recomputes the
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
from typing import NamedTuple

import numpy as np
from mpi4py import MPI

from solver.cdem import tally
from solver.cdem.bodies import Bodies
from solver.cdem.contact.detect import (HOLDING_WIDTH, boxes_within,
                                        carried_faces, element_boxes, face_spheres,
                                        faces_near_boxes, find_candidates, holding_row,
                                        largest_move, local_faces, near_holding_boxes,
                                        surface_boxes)
from solver.cdem.contact.exchange import (EDGE_EDGE, EDGE_FACE, FACE_FACE, GHOST_WIDTH,
                                          VERTEX_FACE, BodySums, GhostElements, ShareBuffers,
                                          contact_types, count_loaded, ghost_rows, node_shares,
                                          ordered_sums, semi_spring_points, unpack_ghosts)
from solver.cdem.contact.frames import FRAME_WIDTH, face_frames
from solver.cdem.contact.law import (DISSIPATED, DashpotBodies, book_carried_dashpot,
                                     contact_law, energy_tally, loaded_stiffness,
                                     stable_dashpot_mass)
from solver.cdem.contact.mesh import ContactMesh
from solver.cdem.contact.semi_edge import semi_edge_geometry
from solver.cdem.contact.semi_spring import semi_spring_geometry
from solver.cdem.contact.records import (N_CANDIDATES, SEMI_EDGE, SEMI_SPRING, ContactRecords,
                                         GrowingRows, open_rows, renumber_target_nodes)
from solver.cdem.halo import Halo, Neighbours, Traffic, to_ranks
from solver.cdem.packed import pack
from solver.contact_laws.laws import SLIP, STICK, damping_ratio_from_restitution
from solver.contact_laws.register import LawChoice, kernel_laws
from solver.exact_sum import exact_grid, on_grid

#: Ghosts that hold every kept potential target come from a search kept_reach wide, at
#: most KEPT_REACH times the margin. A target was within the margin of its semi-spring
#: when found, at the last renewal or at a partial one after it. If since the last renewal
#: no node moved more than D in any coordinate (sqrt(3) D in all; D at most half the
#: margin, or a renewal is due), then since the target was found the point and the face's
#: nodes each moved at most 2 sqrt(3) D: the gap grew by at most 4 sqrt(3) D (6.9 D), to
#: under 4.5 margins.
KEPT_REACH = 5.0


def kept_reach(margin: float, moved: float) -> float:
    """The reach of the ghosts of a partial renewal: margin + 8 D, D (``moved``) the largest
    move of any node in any coordinate since the last renewal (the bound of KEPT_REACH with
    its room, 8 D against 6.9 D; KEPT_REACH margins at D = margin / 2)."""
    return margin + (KEPT_REACH - 1.0) * min(1.0, 2.0 * moved / margin) * margin


#: The checkpoint tables of the loaded records (dashpot force not zero) of each kind: last
#: step's weights, target nodes (global) and normal, which the first step after a restart
#: books their dashpots' work with.
LOADED = {"semi_springs": "loaded_semi_springs", "semi_edges": "loaded_semi_edges"}

TYPE_NAMES = ((FACE_FACE, "face-face"), (EDGE_FACE, "edge-face"), (VERTEX_FACE, "vertex-face"),
              (EDGE_EDGE, "edge-edge"))


class ContactParams(NamedTuple):
    """alpha the indentation (Feng et al. 2014 Eq. 3); tol, margin the search tolerance and
    margin [m]; mu the friction coefficient (velocity_weakening: the static one);
    damping_ratio zeta of the normal dashpot; renew_every the steps between renewals; size
    the median face size [m] they scale; laws the chosen contact laws (by id, with their
    further parameters: solver.contact_laws.register). A namedtuple: the kernels take it
    as it is."""

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
        self.params, self.packed_params = params, pack(params)
        self.own = own
        self.energy = energy_tally()
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
        self._end_carry()
        self.geometry_known = False
        self.ghost_rank = np.zeros(0, dtype=np.int64)
        self.ghost_owner_base = np.zeros(0, dtype=np.int64)
        self.shares = ShareBuffers(8 * len(own.gid))
        self.semi_springs = None
        self.semi_edges = None
        self.mesh, self.packed_mesh = None, None
        self._set_mesh(ContactMesh.empty())
        self.scratch = {"candidates": GrowingRows((N_CANDIDATES,), np.int64),
                        "frames": GrowingRows((FRAME_WIDTH,)), "centroid": GrowingRows((3,)),
                        "centre": GrowingRows((3,)), "radius": GrowingRows()}
        self.x_renewal = None
        self.moved = 0.5 * params.margin
        self.pending = None
        self.glued = None
        largest = float(np.max(own.k_n * own.face_area, initial=0.0))
        self.k_grid = 2.0 * exact_grid(comm, largest, 8 * 6 * len(own.gid))
        self.body_sums = BodySums(comm, self.traffic, self.renewal_traffic)
        self.stepping = None
        self.set_glue(glued)

    # -- active faces ----------------------------------------------------------------------
    def set_glue(self, glued: np.ndarray, changed: np.ndarray | None = None,
                 omega: np.ndarray | None = None) -> None:
        """Take the glue state (n_own, 6): the global id of the element glued across each
        face (-1: none, the face is active); glue only breaks. ``changed``: own elements
        whose highest node frequency of the stable-step bound changed with the glue, and
        ``omega`` their new frequencies [1/s], which cap their dashpot masses (None: kept).
        The faces that turned active get their records; records of faces that stay active
        keep their state and their potential targets (mapped to the new contact elements by
        the partial renewal at the next step), their elements their positions at the last
        renewal. Called after a step's contact forces, so no earlier glue change is still
        pending."""
        if changed is not None:
            self.own.omega[changed] = omega
        was_active = (self.glued < 0 if self.semi_springs is not None
                      else np.zeros(glued.shape, dtype=bool))
        active = glued < 0
        if np.any(was_active & ~active):
            raise RuntimeError("a face that was free is glued again")
        elem_new, face_new = np.nonzero(active & ~was_active)
        if self.semi_springs is None:
            self.own_active = np.zeros(0, dtype=np.int64)
            self.semi_springs = ContactRecords.empty(SEMI_SPRING)
            self.semi_edges = ContactRecords.empty(SEMI_EDGE)
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
        self.semi_springs.insert(key, elem, k_n, k_t, renumber)
        self.semi_edges.insert(key, elem, 2.0 * k_n, 2.0 * k_t, renumber)
        self.glued = glued
        self.bodies = self.own.bodies(glued)
        self.own_rows = self._own_element_rows()
        self.fresh = np.zeros_like(active)
        if self.x_renewal is not None:
            self.pending = (self.candidates, self.mesh.gid)
            if len(joining):
                x_renewal = np.empty((len(self.own_active), 24))
                x_renewal[:len(old_active)] = self.x_renewal.reshape(-1, 24)
                open_rows(x_renewal, len(old_active), at_elem)
                x_renewal[at_elem + np.arange(len(joining))] = np.nan
                self.x_renewal = x_renewal.reshape(-1, 3)
            self.fresh[elem_new] = active[elem_new]
        self.candidates = np.zeros((0, N_CANDIDATES), dtype=np.int64)
        self._carry_ghosts()

    def _carry_ghosts(self) -> None:
        """Drop the ghosts, keeping their halo for one step: the next step's increments of
        the nodes the last step's forces acted on, for their dashpots' work
        (book_carried_dashpot)."""
        self.carry_halo = self.ghost_halo
        self.carried_ghost_du = np.zeros_like(self.mesh.ghost_du)
        self.carried_ghost_gid = self.mesh.gid[self.mesh.n_own:]
        self._drop_ghosts()

    def _end_carry(self) -> None:
        """No carried ghosts (the step that booked their dashpots' work is done)."""
        self.carry_halo, self.carried_ghost_du = None, np.zeros((0, 3))
        self.carried_ghost_gid = np.zeros(0, dtype=np.int64)

    def _renumber_targets(self, renumber: np.ndarray | None, joining: int) -> None:
        """The last step's target nodes (8 c + a) of the records, on the contact elements
        after a glue change: own ones by ``renumber`` (old -> new index; None: no element
        joined, nothing moves), the ghosts after the ``joining`` own elements more (their
        increments come through the old halo for one step, :meth:`refresh_ghosts`)."""
        if renumber is None:
            return
        for rec in (self.semi_springs, self.semi_edges):
            renumber_target_nodes(rec.target_node, self.mesh.n_own, renumber, joining)

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
        """Contact elements (the mesh): own active ones, then the ghosts, on the node
        arrays the mesh had; the bodies they belong to. Their face frames and centroids are
        left unset, in the scratch arrays, until face_frames, which every renewal and step
        runs before reading them."""
        own = self.own_active
        mine = self.own_rows
        gid = np.concatenate([self.own.gid[own], ghosts.gid])
        self.fresh_faces = np.concatenate([self.fresh[own], ghosts.fresh])
        label = np.concatenate([mine[:, 1], ghosts.label]).astype(np.int64)
        owner = np.concatenate([mine[:, 2], ghosts.owner]).astype(np.int64)
        self.node_mass = np.concatenate([mine[:, 4], ghosts.node_mass])
        self.omega = np.concatenate([mine[:, 5], ghosts.omega])
        self.body_labels, first, body = np.unique(label, return_index=True,
                                                  return_inverse=True)
        self.body_mass = np.concatenate([mine[:, 3], ghosts.body_mass])[first]
        self.body_stiffness = np.zeros(len(first))
        self.body_owner = owner[first]
        self._set_mesh(ContactMesh.of(
            base=np.concatenate([8 * own, 8 * np.arange(len(ghosts.gid))]).astype(np.int64),
            n_own=len(own), gid=gid, active=np.concatenate([self.glued[own] < 0, ghosts.active]),
            body=body, frames=self.scratch["frames"].rows(6 * len(gid)),
            centroid=self.scratch["centroid"].rows(len(gid)),
            ghost_x=np.ascontiguousarray(ghosts.x), x=self.mesh.x, du=self.mesh.du))
        self.stepping = None

    def _set_mesh(self, mesh: ContactMesh) -> None:
        """Take ``mesh`` as the contact elements, and pack it for the kernels where it is
        another mesh than the last (solver.cdem.packed)."""
        if mesh is not self.mesh:
            self.mesh, self.packed_mesh = mesh, pack(mesh)

    # -- per step --------------------------------------------------------------------------
    def refresh_ghosts(self, du: np.ndarray) -> None:
        """Ghost increments from their owners; ghost coordinates advanced by them. After a
        glue change (no ghosts until the partial renewal), the increments of the ghosts
        before it, for the dashpot work of the last step's forces."""
        mesh = self.mesh
        if self.ghost_halo is not None:
            self.ghost_halo.forward(du, into=mesh.ghost_du)
            np.add(mesh.ghost_x, mesh.ghost_du, out=mesh.ghost_x)
        elif self.carry_halo is not None:
            self.carry_halo.forward(du, into=self.carried_ghost_du)

    def needs_renewal(self, x: np.ndarray) -> bool:
        """Whether an own node moved more than half the margin since the last renewal
        (elements active since then hold NaN positions and count as not moved); the
        largest move since the renewal is kept for the next partial renewal's reach."""
        if self.x_renewal is None:
            return True
        move = largest_move(x, self.x_renewal, self.mesh.base, self.mesh.n_own)
        self.moved = max(self.moved, move)
        return move > 0.5 * self.params.margin

    def _own_rows(self) -> np.ndarray:
        return (8 * self.own_active[:, None] + np.arange(8)).ravel()

    def geometry(self, x: np.ndarray, du: np.ndarray, dt: float, damping: tuple[float, float],
                 moved_anywhere: bool) -> None:
        """This step's renewal, if due, and contact geometry: the rank's own work up to the
        exchange that :meth:`forces` starts with (collective only when it renews). ``dt``
        and ``damping`` (the stage's Cundall local alpha and mass-proportional c) set the
        cap of the dashpot masses."""
        self._set_mesh(self.mesh.on_nodes(x, du))
        mesh = self.packed_mesh
        if self.carry_halo is not None:
            mesh = pack(self.mesh._replace(ghost_du=self.carried_ghost_du))
        for rec in (self.semi_springs, self.semi_edges):
            book_carried_dashpot(mesh, rec.packed, dt, self.geometry_known, self.energy)
        self._end_carry()
        if moved_anywhere or self.steps_since_renewal >= self.params.renew_every:
            self.renew(x, du)
        elif self.pending is not None:
            self.renew_fresh(x, du)
        else:
            face_frames(self.packed_mesh)
        self.steps_since_renewal += 1
        deepest = semi_spring_geometry(self.packed_mesh, self.semi_springs.packed,
                                       self.candidates, self.packed_params)
        edge_deepest = semi_edge_geometry(self.packed_mesh, self.semi_edges.packed,
                                          self.candidates, self.packed_params)
        if (dt, damping) != self.stepping:
            self.stepping = (dt, damping)
            self.dashpot_bodies = pack(DashpotBodies(
                of=self.mesh.body, mass=self.body_mass, stiffness=self.body_stiffness,
                stable_mass=stable_dashpot_mass(self.node_mass, self.omega,
                                                self.params.damping_ratio, dt, damping)))
        self.max_overlap = max(self.max_overlap, deepest, edge_deepest)
        self.geometry_known = True

    def forces(self) -> tuple[np.ndarray, np.ndarray]:
        """Contact forces of this step, after :meth:`geometry`: (own node rows, forces
        (n, 3)) to add (collective)."""
        records = (self.semi_springs, self.semi_edges)
        self.body_stiffness[:] = 0.0
        for rec in records:
            loaded_stiffness(rec.overlap, rec.elem, rec.target_elem, rec.share, rec.k_n,
                             self.mesh.body, self.body_stiffness)
        self.body_sums.total(self.body_stiffness)
        self.energy["stored"][:] = 0
        for rec in records:
            contact_law(rec.packed, self.dashpot_bodies, self.packed_params, self.stepping[0],
                        self.energy)
        self.steps += 1
        if self.steps % 10 == 0:
            self.types_seen |= self.contact_types()
        return self._node_forces()

    def _node_forces(self) -> tuple[np.ndarray, np.ndarray]:
        springs, edges, buf = self.semi_springs, self.semi_edges, self.shares
        buf.reserve(count_loaded(springs.force, edges.force))
        n_local, n_ghost = node_shares(self.packed_mesh, springs.packed, edges.packed, buf.local,
                                       buf.ghost)
        node = buf.ghost.node[:n_ghost]
        ghost = node // 8 - self.mesh.n_own
        dest = self.ghost_rank[ghost]
        order = np.argsort(dest, kind="stable")
        send = np.column_stack([self.ghost_owner_base[ghost] + node % 8,
                                buf.ghost.key[:n_ghost], buf.ghost.value[:n_ghost]])[order]
        counts = np.array([np.count_nonzero(dest == r) for r in self.neighbours.ranks],
                          dtype=np.int64)
        received, _ = self.neighbours.exchange(send, counts)
        m = n_local + len(received)
        if m > len(buf.local.node):
            buf.grow(m, keep=n_local)
        local = buf.local
        local.node[n_local:m] = received[:, 0]
        local.key[n_local:m] = received[:, 1]
        local.value[n_local:m] = received[:, 2:]
        n_rows = ordered_sums(local.node[:m], local.key[:m], local.value[:m], buf.head,
                              buf.first, buf.last_key, buf.nxt, buf.touched, buf.chain, buf.out)
        return buf.touched[:n_rows], buf.out[:n_rows]

    # -- renewal ---------------------------------------------------------------------------
    def renew(self, x: np.ndarray, du: np.ndarray) -> None:
        """New ghosts (coordinates and this step's increments) and potential targets
        (collective over the communicator)."""
        self._set_mesh(self.mesh.on_nodes(x, du))
        self.renewals += 1
        self.steps_since_renewal = 0
        self.moved = 0.0
        self._exchange_ghosts(x, du, self.params.margin)
        face_frames(self.packed_mesh)
        centre, radius = self._face_spheres()
        points = self.semi_spring_positions(x)
        self.candidates = self.scratch["candidates"].rows(len(self.semi_springs))
        self.checks += find_candidates(points, self.semi_springs.elem,
                                       self.glued[self.own_active], centre, radius,
                                       self.mesh.frames, self.mesh.gid, self.params.margin,
                                       self.candidates)
        self.x_renewal = x[self._own_rows()].copy()
        self._settle()

    def renew_fresh(self, x: np.ndarray, du: np.ndarray) -> None:
        """The partial renewal after springs broke (module docstring; collective): new
        ghosts, from a search kept_reach wide (the largest move since the last renewal over
        all ranks) so that every kept target is among them, and new potential targets for
        the semi-springs on fresh faces and those within reach of one."""
        self._set_mesh(self.mesh.on_nodes(x, du))
        self.renewals += 1
        moved = self.comm.allreduce(self.moved, op=MPI.MAX)
        self._exchange_ghosts(x, du, kept_reach(self.params.margin, moved))
        self.candidates = self._carried_candidates()
        face_frames(self.packed_mesh)
        centre, radius = self._face_spheres()
        glued = self.glued[self.own_active]
        springs = self.semi_springs
        search = self.fresh_faces[springs.elem, springs.face]
        search[self._near_fresh(x, glued, centre, radius)] = True
        search = np.nonzero(search)[0]
        found = np.empty((len(search), N_CANDIDATES), dtype=np.int64)
        self.checks += find_candidates(self.semi_spring_positions(x, search), springs.elem[search],
                                       glued, centre, radius, self.mesh.frames, self.mesh.gid,
                                       self.params.margin, found)
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
        reach = (radius[fresh] + self.params.margin)[:, None]
        around = surface_boxes(centre[fresh] - reach, centre[fresh] + reach)
        lo, hi = element_boxes(x, self.mesh.base, self.mesh.n_own)
        near_elem = np.zeros(self.mesh.n_own, dtype=bool)
        near_elem[boxes_within(lo, hi, around, 0.01 * self.params.margin)] = True
        rows = np.nonzero(near_elem[self.semi_springs.elem])[0]
        found = np.empty((len(rows), N_CANDIDATES), dtype=np.int64)
        find_candidates(self.semi_spring_positions(x, rows), self.semi_springs.elem[rows], glued,
                        centre, np.where(fresh, radius, -1.0), self.mesh.frames, self.mesh.gid,
                        self.params.margin, found)
        return rows[found[:, 0] >= 0]

    def _face_spheres(self) -> tuple[np.ndarray, np.ndarray]:
        """Face spheres (centre, radius; -1 inactive) of the contact elements, in the
        scratch arrays (the next call overwrites them; an inactive face's centre is left
        unset)."""
        centre = self.scratch["centre"].rows(6 * len(self.mesh.gid))
        radius = self.scratch["radius"].rows(6 * len(self.mesh.gid))
        face_spheres(self.packed_mesh, centre, radius)
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
        out = np.full((len(self.semi_springs), N_CANDIDATES), -1, dtype=np.int64)
        carried_faces(faces, gid, out)
        return out

    def _carried_candidates(self) -> np.ndarray:
        """The potential targets kept across a glue change, as faces of the contact
        elements now here (every one must be an own or ghost element here), mapped in
        place; none for the records of the faces that turned active."""
        faces, gid = self.pending
        mapped, _ = local_faces(6 * gid[:, None], self.mesh.gid)
        out = self.scratch["candidates"].rows(len(self.semi_springs))
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
                           self.mesh.active[c], self.fresh_faces[c]) for c in chosen]
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
        self.ghost_halo.forward(du, into=self.mesh.ghost_du)

    def _ghosts_for_neighbours(self, x: np.ndarray, margin: float) -> list[np.ndarray]:
        """The neighbour ranks (renewed), and for each the own active elements (indices)
        it needs as ghosts: the two levels of solver.cdem.contact.detect."""
        centre = self.scratch["centre"].rows(6 * self.mesh.n_own)
        radius = self.scratch["radius"].rows(6 * self.mesh.n_own)
        face_spheres(self.packed_mesh, centre, radius)
        lo, hi = element_boxes(x, self.mesh.base, self.mesh.n_own)
        boxes = surface_boxes(lo, hi)
        table = np.empty((self.comm.size, HOLDING_WIDTH))
        self.comm.Allgather(holding_row(boxes, float(radius.max(initial=0.0))), table)
        self.renewal_traffic.add((self.comm.size - 1) * table[0].nbytes,
                                 (self.comm.size - 1) * table[0].nbytes)
        h = float(table[:, 6].max()) + margin
        near_ranks = near_holding_boxes(table, self.comm.rank, h)
        their_boxes = self._boxes_of(near_ranks, boxes, table[:, 7].astype(np.int64))
        box_lo, box_hi = np.ascontiguousarray(boxes[:, :3]), np.ascontiguousarray(boxes[:, 3:])
        ranks = [int(r) for r in near_ranks
                 if len(boxes_within(box_lo, box_hi, their_boxes[r], h))]
        if self.comm.allreduce(ranks != self.neighbours.ranks, op=MPI.LOR):
            self.neighbours.free()
            self.neighbours = Neighbours(self.comm, ranks, self.traffic)
        near = [np.hstack([lo, hi])[boxes_within(lo, hi, their_boxes[r], table[r, 6] + margin)]
                for r in self.neighbours.ranks]
        theirs, per_rank = self.neighbours.exchange(
            np.concatenate(near) if near else np.zeros((0, 6)),
            np.array([len(b) for b in near], dtype=np.int64))
        first = np.concatenate([[0], np.cumsum(per_rank)])
        near_each = faces_near_boxes(centre, radius, len(radius), theirs, first, margin)
        return [np.nonzero(near)[0] for near in near_each]

    def _boxes_of(self, ranks: np.ndarray, boxes: np.ndarray,
                  counts: np.ndarray) -> dict[int, np.ndarray]:
        """The boxes of each of ``ranks`` (ascending; counts: every rank's number of
        boxes), which get mine in return: one Alltoallv in which only these pairs send (the
        relation near_holding_boxes draws is symmetric; collective)."""
        send_counts = np.zeros(self.comm.size, dtype=np.int64)
        send_counts[ranks] = len(boxes)
        recv_counts = np.zeros(self.comm.size, dtype=np.int64)
        recv_counts[ranks] = counts[ranks]
        send = np.tile(boxes, (len(ranks), 1))
        received = to_ranks(self.comm, send, send_counts, recv_counts)
        self.renewal_traffic.add(send.nbytes, received.nbytes)
        first = np.concatenate([[0], np.cumsum(recv_counts[ranks])])
        return {int(r): received[first[i]:first[i + 1]] for i, r in enumerate(ranks)}

    # -- checkpoint ------------------------------------------------------------------------
    def state(self) -> tuple[dict, dict]:
        """(tables, scalars) that let :meth:`restore` continue bit for bit: the records'
        history keyed by record key (with the offsets, the semi-springs' shares, places,
        overlaps and normals, and in the tables LOADED the loaded records' normals and last
        step's weights and target nodes as global nodes), their potential targets as global
        face ids, the positions at the last renewal keyed by element id (and the fresh
        faces, when a partial renewal is pending); the counters (global values where the
        summary reduces them, see :meth:`restore`) and the dissipated energies by name
        (DISSIPATED, exact global sums, solver.cdem.tally)."""
        pending = self.pending is not None
        faces = (self._global_faces(*self.pending) if pending
                 else self._global_faces(self.candidates, self.mesh.gid))
        tables = {name: {"keys": rec.key, "target": rec.target, "f_t": rec.f_t,
                         "dashpot": rec.dashpot, "f_n": rec.f_n, "status": rec.status}
                  for name, rec in (("semi_springs", self.semi_springs),
                                    ("semi_edges", self.semi_edges))}
        tables["semi_springs"]["candidates"] = faces
        tables["semi_springs"]["share"] = self.semi_springs.share
        tables["semi_springs"]["placed"] = self.semi_springs.placed
        tables["semi_springs"]["offset"] = self.semi_springs.offset
        tables["semi_springs"]["overlap"] = self.semi_springs.overlap
        tables["semi_springs"]["normal"] = self.semi_springs.normal
        tables["semi_edges"]["offset"] = self.semi_edges.offset
        for name, rec in (("semi_springs", self.semi_springs), ("semi_edges", self.semi_edges)):
            loaded = rec.dashpot[:, 0] != 0.0
            tables[LOADED[name]] = {"keys": rec.key[loaded], "normal": rec.normal[loaded],
                                    "own_w": rec.own_w[loaded],
                                    "target_w": rec.target_w[loaded],
                                    "target_node": self._global_nodes(rec.target_node[loaded])}
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
                   "tally": tally.to_checkpoint(self.comm, self.energy, DISSIPATED)}
        return tables, scalars

    def _global_nodes(self, nodes: np.ndarray) -> np.ndarray:
        """Contact nodes 8 c + a (-1: none) as global nodes 8 (element id) + a (-1); after
        a glue change the ghosts are the carried ones."""
        gid = self.mesh.gid
        if self.carry_halo is not None:
            gid = np.concatenate([gid[:self.mesh.n_own], self.carried_ghost_gid])
        out = np.full_like(nodes, -1)
        used = nodes >= 0
        out[used] = 8 * gid[nodes[used] // 8] + nodes[used] % 8
        return out

    def _contact_nodes(self, nodes: np.ndarray) -> np.ndarray | None:
        """Global nodes 8 (element id) + a (-1: none) as contact nodes 8 c + a; None where
        one is not among the contact elements."""
        used = nodes >= 0
        faces, found = local_faces(np.where(used, 6 * (nodes // 8), -1), self.mesh.gid)
        if not found:
            return None
        return np.where(used, 8 * (faces // 6) + nodes % 8, -1)

    def _restore_step_geometry(self, tables: dict) -> bool:
        """Last step's weights, target nodes and normals of the loaded records (the tables
        LOADED, in the order of their keys among the records), which the first step books
        their dashpots' work with (book_carried_dashpot); whether every loaded record's
        target is among the contact elements."""
        for name, rec in (("semi_springs", self.semi_springs), ("semi_edges", self.semi_edges)):
            table = tables.get(LOADED[name])
            if table is None:
                return False
            loaded = rec.dashpot[:, 0] != 0.0
            nodes = self._contact_nodes(table["target_node"])
            if nodes is None:
                return False
            rec.target_node[loaded] = nodes
            rec.own_w[loaded] = table["own_w"]
            rec.target_w[loaded] = table["target_w"]
            rec.normal[loaded] = table["normal"]
        return True

    def restore(self, x: np.ndarray, du: np.ndarray, tables: dict, scalars: dict) -> None:
        """Continue from :meth:`state` (after ``set_glue`` with the restored glue state, on
        any partition). Ghosts come from a search with KEPT_REACH times the margin, so that
        every kept potential target is among them (collective); with them the loaded
        records take back last step's geometry, so that the first step books their
        dashpots' work as the run that went through does (after a glue change in the step
        before the checkpoint, through the ghosts' halo kept for that step)."""
        self._set_mesh(self.mesh.on_nodes(x, du))
        for name, rec in (("semi_springs", self.semi_springs), ("semi_edges", self.semi_edges)):
            for field in ("target", "f_t", "dashpot", "f_n", "status"):
                getattr(rec, field)[:] = tables[name][field]
        self.semi_springs.share[:] = tables["semi_springs"]["share"]
        self.semi_springs.placed[:] = tables["semi_springs"]["placed"]
        self.semi_springs.offset[:] = tables["semi_springs"]["offset"]
        self.semi_springs.overlap[:] = tables["semi_springs"]["overlap"]
        self.semi_springs.normal[:] = tables["semi_springs"]["normal"]
        self.semi_edges.offset[:] = tables["semi_edges"]["offset"]
        faces = tables["semi_springs"]["candidates"]
        gid = np.unique(faces[faces >= 0] // 6)
        self.pending = (np.where(faces >= 0, 6 * np.searchsorted(gid, faces // 6) + faces % 6,
                                 -1), gid)
        self._exchange_ghosts(x, du, KEPT_REACH * self.params.margin)
        self.geometry_known = self._restore_step_geometry(tables)
        if scalars.get("pending"):
            self.fresh[self.own_active] = tables["renewal"]["fresh"]
            self._carry_ghosts()
        else:
            self.candidates = self._carried_candidates()
            self.pending = None
        self.x_renewal = (tables["renewal"]["x"].reshape(-1, 3).copy() if scalars["renewed"]
                          else None)
        self.renewals = scalars["renewals"]
        self.steps = scalars["steps"]
        self.steps_since_renewal = scalars["steps_since_renewal"]
        self.moved = 0.5 * self.params.margin      # not kept: the bound that always holds
        self.max_overlap = scalars["max_overlap"]
        self.types_seen = set(scalars["types_seen"])
        self.checks = scalars["checks"] if self.comm.rank == 0 else 0
        tally.restore(self.comm, self.energy, scalars["tally"], DISSIPATED)

    # -- reporting -------------------------------------------------------------------------
    def contact_types(self) -> set[str]:
        """Traditional contact types of the compressed contacts (see exchange.contact_types)."""
        springs, edges = self.semi_springs, self.semi_edges
        seen = contact_types(springs.target, springs.f_n, edges.target, edges.f_n)
        return {name for bit, name in TYPE_NAMES if seen & bit}

    def summary(self) -> dict:
        """Counts over all ranks: semi-springs, contacts in compression, sticking, sliding,
        target renewals and candidates found at renewals, contact types, penetration (the
        deepest overlap a contact carried so far, a semi-spring's offset left out, over the
        median face size)."""
        springs, edges = self.semi_springs, self.semi_edges
        local = np.array([len(springs), np.count_nonzero(springs.f_n > 0),
                          np.count_nonzero(springs.status == STICK),
                          np.count_nonzero(springs.status == SLIP), self.checks,
                          np.count_nonzero(edges.f_n > 0)], dtype=np.int64)
        total = np.empty_like(local)
        self.comm.Allreduce(local, total, op=MPI.SUM)
        return {"semi_springs": int(total[0]), "in_compression": int(total[1]),
                "sticking": int(total[2]), "sliding": int(total[3]),
                "renewals": self.renewals, "candidate_checks": int(total[4]),
                "types_seen": sorted(set().union(*self.comm.allgather(self.types_seen))),
                "semi_edges_in_compression": int(total[5]),
                "max_penetration_ratio": self.comm.allreduce(self.max_overlap, op=MPI.MAX)
                / self.params.size}

    def semi_spring_positions(self, x: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """Positions (n, 3) of the semi-springs (those in ``rows``, or all)."""
        springs = self.semi_springs
        at = slice(None) if rows is None else rows
        points = np.zeros((len(springs.elem[at]), 3))
        semi_spring_points(x, self.mesh.base, springs.elem[at], springs.face[at],
                           springs.vertex[at], self.params.alpha, points)
        return points

    def nbytes(self) -> int:
        """Bytes of the arrays the contact holds (records, candidates, contact elements)."""
        mesh = self.mesh
        arrays = [*(rows.store for rows in self.scratch.values()), mesh.gid, mesh.active,
                  mesh.base, mesh.ghost_x, mesh.ghost_du, self.glued, self.node_mass,
                  self.omega, mesh.body, self.body_labels, self.body_mass, self.body_stiffness]
        return (self.semi_springs.nbytes() + self.semi_edges.nbytes()
                + int(sum(a.nbytes for a in arrays)))
