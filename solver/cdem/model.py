"""Build one rank's CDEM model from its share of the mesh (solver.mesh.distribute.MeshPart).

CDEM split (Feng et al. 2014, section 2): every element becomes a block with its own 8 nodes,
and every face shared by two elements becomes four interface spring pairs
(solver.cdem.interface). Springs are owned by the rank of their A element (the lower global
id) and reach B nodes on other ranks through ghost rows; nothing here is sized by the whole
mesh.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from dataclasses import dataclass

import numpy as np
from mpi4py import MPI

from solver.cdem.bodies import GluedBodies
from solver.cdem.config import Config, Material
from solver.cdem.constitutive import MODELS, lame
from solver.cdem.contact import Contact, ContactElements, ContactParams
from solver.cdem.halo import Halo, Neighbours
from solver.cdem.hex8 import element_volumes, lumped_masses
from solver.cdem.interface import INTACT, SLOT, glue_table, glued_faces
from solver.cdem.stable_step import StepBound, element_frequency
from solver.cdem.state import Elements, InterfaceSprings, Nodes, StrengthRamp
from solver.errors import InputError
from solver.exact_sum import exact_grid, on_grid
from solver.mesh.distribute import MeshPart, distribute
from solver.mesh.hexmesh import HexMesh
from solver.mesh.measures import measure
from solver.mesh.topology import FACES, face_areas
from solver.parallel import global_median, root_only


def group_ids(label: str, present: np.ndarray, names: dict[int, str], where: str) -> np.ndarray:
    """Group ids a material/boundary label refers to (a name, an id, or 'all'), among the
    ``present`` ids of the whole mesh."""
    if label == "all":
        return present
    by_name = [gid for gid, name in names.items() if name == label]
    if by_name:
        return np.array(by_name)
    if label.lstrip("-").isascii() and label.lstrip("-").isdigit() and int(label) in present:
        return np.array([int(label)])
    known = sorted({*names.values(), *map(str, present)})
    raise InputError(where, f"no group {label!r} in the mesh (groups: {', '.join(known)})")


@dataclass
class MaterialTable:
    """Material constants per mesh group id: ``of(groups)`` picks them for elements."""

    ids: np.ndarray
    density: np.ndarray
    lam: np.ndarray
    mu: np.ndarray
    model: np.ndarray
    tensile: np.ndarray
    cohesion: np.ndarray
    tan_phi: np.ndarray

    @classmethod
    def build(cls, materials: list[Material], present: np.ndarray, names: dict[int, str],
              where: str) -> MaterialTable:
        """Each group takes the last material entry that names it."""
        chosen = np.full(len(present), -1)
        for k, mat in enumerate(materials):
            ids = group_ids(mat.group, present, names, f"{where}: materials[{k}].group")
            chosen[np.isin(present, ids)] = k
        if np.any(chosen < 0):
            raise InputError(f"{where}: materials",
                             f"groups {present[chosen < 0].tolist()} have no material")
        mats = [materials[k] for k in chosen]
        lam_mu = np.array([lame(m.youngs_modulus, m.poisson_ratio) for m in mats])
        return cls(ids=present, density=np.array([m.density for m in mats], dtype=float),
                   lam=lam_mu[:, 0].copy(), mu=lam_mu[:, 1].copy(),
                   model=np.array([MODELS[m.model] for m in mats], dtype=np.int64),
                   tensile=np.array([m.tensile_strength for m in mats], dtype=float),
                   cohesion=np.array([m.cohesion for m in mats], dtype=float),
                   tan_phi=np.array([math.tan(math.radians(m.friction_deg)) for m in mats]))

    def row(self, groups: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.ids, groups)


@dataclass
class Interfaces:
    """Glue between this rank's elements and their neighbours, and the neighbour exchanges
    of the interface springs: ``du`` forward to ghost B nodes, ghost spring-force slots back
    to their owners, and (after breakage) the glue state of cross-rank faces to B's rank.

    own_face (m,) owned faces with a B element here: local element b, face fb (B side) and
    A's global id; b_face: the faces whose A is on another rank, with local element,
    face and A's global id; a_side (m, 3): local element, face and B's global id of every
    owned face."""

    neighbours: Neighbours
    du_halo: Halo
    slot_halo: Halo
    glue_halo: Halo
    a_side: np.ndarray
    b_local: np.ndarray
    b_remote: np.ndarray

    def glued_neighbours(self, state: np.ndarray, n_el: int) -> np.ndarray:
        """(n_el, 6) global id of the element glued across each face (-1: none, free or
        every spring broken). Collective (neighbour exchange)."""
        glued = np.zeros((len(state) + len(self.b_remote), 1))
        glued_faces(state, glued)
        self.glue_halo.forward(glued)
        out = np.empty((n_el, 6), dtype=np.int64)
        glue_table(glued, self.a_side, self.b_local, self.b_remote, out)
        return out


@dataclass
class Model:
    """One rank's model: nodes, elements, interface springs and their exchanges, contact;
    the stable-step bound of its elements and their faces active at the start (n_el, 6;
    solver.cdem.stable_step), and the stable step of each stage with every spring glued and
    the contact on every element with a face that can open (``stage_dt_limits_local``)."""

    nodes: Nodes
    elements: Elements
    springs: InterfaceSprings
    interfaces: Interfaces
    contact: Contact | None
    strength_ramp: StrengthRamp | None
    step_bound: StepBound
    active_faces: np.ndarray
    stage_dt_limits_local: tuple[float, ...]
    n_cells_global: int
    n_faces_global: int

    @property
    def dt_limit_local(self) -> float:
        """The smallest stable step of this rank's elements over the stages, with every
        spring glued and the contact on every element with a face that can open [s]."""
        return min(self.stage_dt_limits_local)

    def nbytes(self) -> int:
        """Bytes of the state arrays this rank holds."""
        total = self.nodes.nbytes() + self.elements.nbytes() + self.springs.nbytes()
        return total + (self.contact.nbytes() if self.contact is not None else 0)


def _boundary_masks(cfg: Config, part: MeshPart, x0: np.ndarray,
                    where: str) -> tuple[np.ndarray, np.ndarray]:
    fixed = np.zeros(x0.shape, dtype=bool)
    vel = np.zeros(x0.shape)
    node_group = np.repeat(part.groups, 8)
    for k, bc in enumerate(cfg.boundaries):
        b = bc.box
        sel = ((x0[:, 0] >= b[0]) & (x0[:, 0] <= b[1]) & (x0[:, 1] >= b[2])
               & (x0[:, 1] <= b[3]) & (x0[:, 2] >= b[4]) & (x0[:, 2] <= b[5]))
        if bc.group:
            sel &= np.isin(node_group, group_ids(bc.group, part.group_ids, part.group_names,
                                                 f"{where}: boundaries[{k}].group"))
        for comp in bc.fix:
            c = "xyz".index(comp)
            fixed[sel, c] = True
            vel[sel, c] = bc.velocity[c]
    return fixed, vel


def _pair_faces(pair, groups: np.ndarray, part: MeshPart, where: str) -> np.ndarray:
    """Faces whose two elements lie one in each group of an interface pair."""
    g1, g2 = (group_ids(g, part.group_ids, part.group_names, where) for g in pair.groups)
    ga, gb = groups[:, 0], groups[:, 1]
    return (np.isin(ga, g1) & np.isin(gb, g2)) | (np.isin(ga, g2) & np.isin(gb, g1))


def spring_stiffness(cfg: Config, mats: MaterialTable, part: MeshPart,
                     where: str) -> tuple[np.ndarray, np.ndarray]:
    """Per-area stiffness k_n, k_s [Pa/m] of each shared face (see solver.cdem.interface):
    from beta and the two elements, or the case's values, or an ``interface.pairs``
    entry's."""
    ic = cfg.interface
    f = part.faces
    row = mats.row(f.group)
    h = f.volume / f.area[:, None]                                # (m, 2)
    p_modulus = mats.lam[row] + 2.0 * mats.mu[row]                 # K + 4G/3
    k_n = ic.stiffness_factor * np.max(p_modulus / h, axis=1)
    k_s = ic.stiffness_factor * np.max(mats.mu[row] / h, axis=1)
    if ic.normal_stiffness > 0:
        k_n = np.full(len(f), ic.normal_stiffness)
    if ic.shear_stiffness > 0:
        k_s = np.full(len(f), ic.shear_stiffness)
    for k, pair in enumerate(ic.pairs):
        sel = _pair_faces(pair, f.group, part, f"{where}: interface.pairs[{k}].groups")
        if pair.normal_stiffness > 0:
            k_n[sel] = pair.normal_stiffness
        if pair.shear_stiffness > 0:
            k_s[sel] = pair.shear_stiffness
    return k_n, k_s


def interface_strength(cfg: Config, mats: MaterialTable, part: MeshPart,
                       where: str) -> tuple[np.ndarray, ...]:
    """T, c, tan(phi) per shared face: the group's own values inside a group, the weaker of
    the two groups across groups, unless an ``interface.pairs`` entry names the two; and
    the ramp of the pairs with a ``weakening_time``: their values (3, m) and that time
    (m,; 0 on faces without one), from which their faces fall, starting at the groups'
    values."""
    row = mats.row(part.faces.group)
    groups = np.stack([mats.tensile[row].min(axis=1), mats.cohesion[row].min(axis=1),
                       mats.tan_phi[row].min(axis=1)])
    strength = groups.copy()
    weakened = np.zeros_like(strength)
    weakening = np.zeros(len(row))
    for k, pair in enumerate(cfg.interface.pairs):
        at = f"{where}: interface.pairs[{k}]"
        sel = _pair_faces(pair, part.faces.group, part, f"{at}.groups")
        values = np.array([pair.tensile_strength, pair.cohesion,
                           math.tan(math.radians(pair.friction_deg))])[:, None]
        weakening[sel] = pair.weakening_time
        if pair.weakening_time > 0.0:
            _check_weakening(pair, mats, part, f"{at}.weakening_time")
            strength[:, sel] = groups[:, sel]
            weakened[:, sel] = values
        else:
            strength[:, sel] = values
    return (*strength, weakened, weakening)


def _check_weakening(pair, mats: MaterialTable, part: MeshPart, where: str) -> None:
    """A pair's strength can fall only between finite values: the pair's own tensile
    strength and cohesion, and those of the weaker of its two groups (the same test on
    every rank)."""
    for name in ("tensile_strength", "cohesion"):
        if not math.isfinite(getattr(pair, name)):
            raise InputError(where, f"the pair's {name} is infinite: a strength can only "
                             "fall to a finite value")
    g1, g2 = (mats.row(group_ids(g, part.group_ids, part.group_names, where))
              for g in pair.groups)
    for name, values in (("tensile_strength", mats.tensile), ("cohesion", mats.cohesion)):
        weaker = np.minimum(values[g1][:, None], values[g2][None, :])
        if not np.all(np.isfinite(weaker)):
            raise InputError(where, f"groups {pair.groups[0]!r} and {pair.groups[1]!r} have "
                             f"no finite {name} to fall from: give one of their materials "
                             "a finite value")


def _interfaces(comm, part: MeshPart, n_own: int):
    """Spring node rows and slots, ghost rows and the neighbour exchanges (see
    :class:`Interfaces`)."""
    rank = comm.rank
    f = part.faces
    local = np.searchsorted(part.elem_gid, f.elem)                 # valid where owned here
    mine = f.owner == rank
    owned = np.nonzero(mine[:, 0])[0]
    remote_b = owned[~mine[owned, 1]]
    gid_b = 8 * f.elem[:, 1][:, None] + f.local_nodes[:, 1]          # global node ids
    ghost_gids = np.unique(gid_b[remote_b])
    node_i = 8 * local[owned, 0][:, None] + f.local_nodes[owned, 0]
    node_j = np.where(mine[owned, 1][:, None],
                      8 * local[owned, 1][:, None] + f.local_nodes[owned, 1],
                      n_own + np.searchsorted(ghost_gids, gid_b[owned]))
    slot = SLOT[f.local_nodes, f.local_face[:, :, None]]            # (m, 2, 4)
    into_me = np.nonzero(mine[:, 1] & ~mine[:, 0])[0]
    ranks = sorted(set(f.owner[remote_b, 1].tolist()) | set(f.owner[into_me, 0].tolist()))
    neighbours = Neighbours(comm, ranks)
    du_send, du_recv, slot_send, slot_recv, glue_send, glue_recv = ({} for _ in range(6))
    row_of_owned = np.full(len(f), -1)
    row_of_owned[owned] = np.arange(len(owned))
    for r in ranks:
        out = remote_b[f.owner[remote_b, 1] == r]
        du_recv[r] = n_own + np.searchsorted(ghost_gids, np.unique(gid_b[out]))
        keys = 3 * gid_b[out] + slot[out, 1]
        rows = 3 * node_j[row_of_owned[out]] + slot[out, 1]
        slot_recv[r] = rows.ravel()[np.argsort(keys.ravel())]
        glue_send[r] = row_of_owned[out]
        inn = into_me[f.owner[into_me, 0] == r]
        gids = np.unique(gid_b[inn])
        du_send[r] = 8 * np.searchsorted(part.elem_gid, gids // 8) + gids % 8
        rows = 3 * (8 * local[inn, 1][:, None] + f.local_nodes[inn, 1]) + slot[inn, 1]
        slot_send[r] = rows.ravel()[np.argsort((3 * gid_b[inn] + slot[inn, 1]).ravel())]
        glue_recv[r] = len(owned) + np.searchsorted(into_me, inn)
    a_side = np.column_stack([local[owned, 0], f.local_face[owned, 0], f.elem[owned, 1]])
    both = np.nonzero(mine[owned, 1])[0]
    b_local = np.column_stack([local[owned[both], 1], f.local_face[owned[both], 1],
                               f.elem[owned[both], 0], both])
    b_remote = np.column_stack([local[into_me, 1], f.local_face[into_me, 1],
                                f.elem[into_me, 0]])
    interfaces = Interfaces(neighbours=neighbours, du_halo=Halo(neighbours, du_send, du_recv),
                            slot_halo=Halo(neighbours, slot_send, slot_recv),
                            glue_halo=Halo(neighbours, glue_send, glue_recv, width=1),
                            a_side=a_side.astype(np.int64), b_local=b_local.astype(np.int64),
                            b_remote=b_remote.astype(np.int64))
    return interfaces, owned, node_i, node_j, slot[owned, 0], slot[owned, 1], len(ghost_gids)


def _moving_nodes(comm, fixed: np.ndarray) -> np.ndarray:
    """The nodes (n_el, 8) that bound the stable step: those not held in all three
    directions, or all where none of the model's nodes moves (collective)."""
    moving = ~fixed.all(axis=1).reshape(-1, 8)
    return moving if comm.allreduce(bool(moving.any()), op=MPI.LOR) else ~moving


def face_spring_stiffness(part: MeshPart, spring_k: np.ndarray, rank: int) -> np.ndarray:
    """The interface spring stiffness each node of each face of my elements carries (n_el,
    6) [N/m]: that of the shared face's springs (``spring_k``, per shared face), mine or
    owned by another rank; 0 for a face shared with no element."""
    f = part.faces
    out = np.zeros((part.n_el, 6))
    for side in (0, 1):
        here = f.owner[:, side] == rank
        out[np.searchsorted(part.elem_gid, f.elem[here, side]), f.local_face[here, side]] = \
            spring_k[here]
    return out


def own_weight_depth(density: np.ndarray, volumes: np.ndarray, face_area: np.ndarray,
                     k_n: np.ndarray, coords: np.ndarray, gravity: float,
                     alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """How deep each element (n,) sinks into a contact under its own weight alone, lying on
    its broadest face f: delta = rho |g| V / (A_f k_n,f) [m], and the depth the semi-spring
    model takes: alpha L_f / 2, half the semi-springs' indentation alpha L from the face's
    vertices (Feng et al. 2014, Eq. 3; L the mean distance of the face's vertices from its
    centre; coords (n, 8, 3) the element nodes). Deeper, a corner semi-spring lies nearer a
    side of the face it rests on than that face: where that side is free and flush with
    the element's own (a base as wide as the block), the side takes the point and the
    corner carries nothing (README, Contact stiffness). Any block presses at least this
    deep, whatever lies on it."""
    broadest = np.argmax(face_area, axis=1)
    rows = np.arange(len(volumes))
    depth = density * gravity * volumes / (face_area[rows, broadest] * k_n[rows, broadest])
    corners = coords[rows[:, None], FACES[broadest]]
    half_diagonal = np.linalg.norm(corners - corners.mean(axis=1, keepdims=True),
                                   axis=2).mean(axis=1)
    return depth, 0.5 * alpha * half_diagonal


def _warn_soft_contact(comm, depth: np.ndarray, limit: np.ndarray, where: str) -> None:
    """One warning on rank 0 where any element's own weight sinks it deeper than the
    semi-spring model takes (own_weight_depth)."""
    worst = int(np.argmax(depth / limit)) if len(depth) else -1
    local = (float(depth[worst] / limit[worst]), float(depth[worst]), float(limit[worst])) \
        if worst >= 0 else (0.0, 0.0, 0.0)
    ratio, deep, take = max(comm.allgather(local))
    if comm.rank == 0 and ratio > 1.0:
        print(f"warning: {where}: contact: an element's own weight sinks it {deep:.3g} m into "
              f"a contact, deeper than alpha L / 2 = {take:.3g} m (half the semi-springs' "
              "indentation from its face's vertices): where a block rests on a base as wide "
              "as it is, its corner semi-springs slip to the base's sides and carry nothing; "
              "raise contact.normal_stiffness (or stiffness_factor) or contact.indentation",
              file=sys.stderr)


def _contact(comm, cfg: Config, part: MeshPart, mats: MaterialTable, volumes: np.ndarray,
             mass: np.ndarray, fixed: np.ndarray, interfaces: Interfaces, state: np.ndarray,
             breakable: np.ndarray, bound: StepBound,
             where: str) -> tuple[Contact, StepBound, np.ndarray]:
    """The contact of this rank's elements, the stable-step bound with the contact's
    stiffness and dashpots on the elements with a face that can open (a free one, or one
    glued by breakable springs: ``breakable`` per face of the part; solver.cdem.stable_step),
    and the faces active at the start (n_el, 6).
    The search tolerance and margin scale with the median face size of the elements with
    such a face; the dashpot masses come from the glued bodies (solver.cdem.bodies) and are
    capped at the element's stable share under the stage's step and damping
    (solver.cdem.contact.law). Warns where an element's own weight sinks it deeper than the
    semi-spring model takes (own_weight_depth)."""
    c = cfg.contact
    row = mats.row(part.groups)
    face_area = face_areas(part.coords[:, FACES].reshape(-1, 4, 3)).reshape(-1, 6)
    h = volumes[:, None] / face_area
    k_n = (np.full(h.shape, c.normal_stiffness) if c.normal_stiffness > 0
           else c.stiffness_factor * (mats.lam + 2 * mats.mu)[row][:, None] / h)
    k_t = (np.full(h.shape, c.shear_stiffness) if c.shear_stiffness > 0
           else c.stiffness_factor * mats.mu[row][:, None] / h)
    glued = interfaces.glued_neighbours(state, part.n_el)
    active = glued < 0
    capable = active.any(axis=1)
    f = part.faces
    for side in (0, 1):
        here = (f.owner[:, side] == comm.rank) & breakable
        capable[np.searchsorted(part.elem_gid, f.elem[here, side])] = True
    params = ContactParams.from_config(c, global_median(comm, np.sqrt(face_area[capable])
                                                        .ravel()))
    bound = dataclasses.replace(bound, zeta=params.node_damping_ratio, contact_k=np.where(
        capable, ContactElements.stable_stiffness(k_n, k_t, face_area), 0.0))
    held = fixed.reshape(-1, 24).all(axis=1)
    free = capable & ~held
    depth, limit = own_weight_depth(mats.density[row][free], volumes[free], face_area[free],
                                    k_n[free], part.coords[free],
                                    float(np.linalg.norm(cfg.gravity)), c.indentation)
    _warn_soft_contact(comm, depth, limit, where)
    node_mass = mass.reshape(-1, 8)
    elem_mass = node_mass.sum(axis=1)
    bodies = GluedBodies(comm, interfaces.glue_halo, interfaces.a_side, interfaces.b_remote,
                         gid=part.elem_gid, held=held,
                         mass=on_grid(elem_mass, exact_grid(comm, elem_mass.max(initial=0.0),
                                                            part.n_el)))
    own = ContactElements(gid=part.elem_gid, face_area=face_area, k_n=k_n, k_t=k_t,
                          node_mass=np.where(held, np.inf, node_mass.min(axis=1)),
                          omega=bound.element_omega(active), bodies=bodies)
    return Contact(comm, params, own, glued), bound, active


def build_model(comm, cfg: Config, part: MeshPart, where: str) -> Model:
    """This rank's model from its MeshPart (collective)."""
    mats = MaterialTable.build(cfg.materials, part.group_ids, part.group_names, where)
    row = mats.row(part.groups)
    n_el = part.n_el
    n_own = 8 * n_el
    x0 = part.coords.reshape(-1, 3).copy()
    volumes = element_volumes(part.coords)
    mass = lumped_masses(part.coords, mats.density[row]).ravel()
    fixed, held = _boundary_masks(cfg, part, x0, where)
    interfaces, owned, node_i, node_j, slot_i, slot_j, n_ghost = _interfaces(comm, part,
                                                                             n_own)
    k_area_n, k_area_s = spring_stiffness(cfg, mats, part, where)
    tensile, cohesion, tan_phi, weakened, weakening = interface_strength(cfg, mats, part,
                                                                         where)
    area = part.faces.area / 4.0
    n_f = len(owned)
    springs = InterfaceSprings(
        face_gid=part.faces.gid[owned], node_i=node_i.astype(np.int32),
        node_j=node_j.astype(np.int32), slot_i=slot_i.astype(np.int8),
        slot_j=slot_j.astype(np.int8),
        k_n=(k_area_n * area)[owned], k_s=(k_area_s * area)[owned], area=area[owned],
        tensile=tensile[owned], cohesion=cohesion[owned], tan_phi=tan_phi[owned],
        u_n=np.zeros((n_f, 4)), f_s=np.zeros((n_f, 4, 3)),
        state=np.full((n_f, 4), INTACT, dtype=np.uint8),
        f_slot=np.zeros((n_own + n_ghost, 3, 3)))
    nodes = Nodes(x0=x0, x=x0.copy(), v=np.zeros((n_own, 3)), du=np.zeros((n_own + n_ghost, 3)),
                  f_int=np.zeros((n_own, 3)), f_contact=np.zeros((n_own, 3)), mass=mass,
                  fixed=fixed, held_velocity=held)
    elements = Elements(gid=part.elem_gid, group=part.groups, density=mats.density[row],
                        lam=mats.lam[row], mu=mats.mu[row], model=mats.model[row],
                        stress=np.zeros((n_el, 8, 6)))
    bound = StepBound(
        omega_el2=element_frequency(elements.density, elements.lam, elements.mu,
                                    part.coords) ** 2,
        node_mass=mass.reshape(-1, 8), moving=_moving_nodes(comm, fixed),
        spring_k=face_spring_stiffness(part, np.maximum(k_area_n, k_area_s) * area, comm.rank),
        contact_k=np.zeros(n_el), zeta=0.0)
    active = np.zeros((n_el, 6), dtype=bool)
    contact = None
    if cfg.contact.enabled:
        breakable = ~(np.isinf(tensile) & np.isinf(cohesion))
        contact, bound, active = _contact(comm, cfg, part, mats, volumes, mass, fixed,
                                          interfaces, springs.state, breakable, bound, where)
    ramped = np.nonzero(weakening[owned] > 0.0)[0]
    strength_ramp = (StrengthRamp(faces=ramped, start=np.stack([tensile, cohesion,
                                                                tan_phi])[:, owned[ramped]],
                                  end=weakened[:, owned[ramped]],
                                  duration=weakening[owned[ramped]])
                     if len(ramped) else None)
    damping = [stage.damping_terms for stage in cfg.stages]
    limits = {pair: float(bound.worst_limits(pair).min(initial=np.inf)) for pair in set(damping)}
    return Model(nodes=nodes, elements=elements, springs=springs, interfaces=interfaces,
                 contact=contact, strength_ramp=strength_ramp, step_bound=bound,
                 active_faces=active,
                 stage_dt_limits_local=tuple(limits[pair] for pair in damping),
                 n_cells_global=part.n_cells, n_faces_global=part.n_faces)


def model_from_mesh(comm, cfg: Config, mesh: HexMesh | None, where: str,
                    work: np.ndarray | None = None) -> Model:
    """Partition ``mesh`` (needed on rank 0 only) over comm, by the elements' ``work`` (on
    rank 0; None: the same for all), and build this rank's model."""
    measures = root_only(comm, lambda: measure(mesh, where))
    return build_model(comm, cfg, distribute(comm, mesh, measures, cfg.partitioner, work), where)
