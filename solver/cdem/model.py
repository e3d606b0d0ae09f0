"""Build one rank's part of a CDEM model from a hex mesh and the case.

CDEM split (seed 002 section 2): every element becomes a block with its own 8 nodes (local
node ``8e + a`` of local element e), and every face shared by two elements becomes four
interface spring pairs (solver.cdem.interface). Elements are partitioned across ranks; springs
are owned by the rank of their A element and reach B nodes on other ranks through ghosts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from solver.cdem.config import Config, Material
from solver.cdem.constitutive import MODELS, lame
from solver.cdem.halo import NodeHalo
from solver.cdem.hex8 import element_volumes, lumped_masses, thinnest_height
from solver.cdem.interface import INTACT, SLOT, face_areas, shared_faces
from solver.errors import InputError
from solver.mesh.hexmesh import HexMesh
from solver.mesh.partition import partition_elements


@dataclass
class ElementMaterials:
    """Per-element material arrays of the whole mesh (every rank holds them)."""

    density: np.ndarray
    lam: np.ndarray
    mu: np.ndarray
    model: np.ndarray
    tensile: np.ndarray
    cohesion: np.ndarray
    tan_phi: np.ndarray


def _group_ids(mesh: HexMesh, label: str, where: str) -> np.ndarray:
    """Group ids a material/boundary label refers to (a name, an id, or 'all')."""
    present = np.unique(mesh.groups)
    if label == "all":
        return present
    by_name = [gid for gid, name in mesh.group_names.items() if name == label]
    if by_name:
        return np.array(by_name)
    if label.lstrip("-").isdigit() and int(label) in present:
        return np.array([int(label)])
    known = sorted({*mesh.group_names.values(), *map(str, present)})
    raise InputError(where, f"no group {label!r} in the mesh (groups: {', '.join(known)})")


def element_materials(mesh: HexMesh, materials: list[Material], where: str) -> ElementMaterials:
    """Assign each element the last material entry that names its group."""
    n = mesh.n_cells
    chosen = np.full(n, -1)
    for k, mat in enumerate(materials):
        ids = _group_ids(mesh, mat.group, f"{where}: materials[{k}].group")
        chosen[np.isin(mesh.groups, ids)] = k
    if np.any(chosen < 0):
        missing = sorted(set(mesh.groups[chosen < 0].tolist()))
        raise InputError(f"{where}: materials", f"groups {missing} have no material")

    def field(fn):
        return np.array([fn(materials[k]) for k in range(len(materials))])[chosen]

    lam_mu = np.array([lame(m.youngs_modulus, m.poisson_ratio) for m in materials])[chosen]
    return ElementMaterials(
        density=field(lambda m: m.density).astype(float), lam=lam_mu[:, 0].copy(),
        mu=lam_mu[:, 1].copy(), model=field(lambda m: MODELS[m.model]).astype(np.int64),
        tensile=field(lambda m: m.tensile_strength).astype(float),
        cohesion=field(lambda m: m.cohesion).astype(float),
        tan_phi=field(lambda m: math.tan(math.radians(m.friction_deg))).astype(float))


@dataclass
class LocalModel:
    """One rank's blocks, interface springs, boundary conditions and state."""

    elem_gid: np.ndarray        # (n_el,) global element ids
    group: np.ndarray           # (n_el,) group ids
    x0: np.ndarray              # (8 n_el, 3) initial coordinates
    x: np.ndarray               # (n_nodes, 3) current coordinates (own + ghost rows)
    v: np.ndarray               # (n_nodes, 3) velocities v^{n-1/2}
    du: np.ndarray              # (n_nodes, 3) step increments
    f_int: np.ndarray           # (n_nodes, 3) element forces
    f_spr: np.ndarray           # (8 n_el, 3) interface spring (and contact) forces
    f_slot: np.ndarray          # (n_nodes, 3, 3) spring force of each node's 3 face slots
    mass: np.ndarray            # (8 n_el,) lumped masses
    lam: np.ndarray
    mu: np.ndarray
    density: np.ndarray
    model: np.ndarray
    stress: np.ndarray          # (n_el, 8, 6)
    fixed: np.ndarray           # (8 n_el, 3) held dofs
    held_velocity: np.ndarray   # (8 n_el, 3)
    node_i: np.ndarray          # (n_faces, 4) A-side nodes
    node_j: np.ndarray          # (n_faces, 4) B-side nodes (own or ghost rows)
    slot_i: np.ndarray          # (n_faces, 4) slot of each spring at its A node
    slot_j: np.ndarray          # (n_faces, 4) slot of each spring at its B node
    face_gid: np.ndarray        # (n_faces,) global interface face ids
    k_n: np.ndarray
    k_s: np.ndarray
    area: np.ndarray
    tensile: np.ndarray
    cohesion: np.ndarray
    tan_phi: np.ndarray
    u_n: np.ndarray
    f_s: np.ndarray
    state: np.ndarray
    halo: NodeHalo              # du of B nodes, owner -> ghost
    slot_halo: NodeHalo         # spring forces of ghost B slots, ghost -> owner
    n_faces_global: int
    dt_limit_local: float
    contact: object = None      # solver.cdem.contact.ContactSet when contact is enabled

    @property
    def n_el(self) -> int:
        return len(self.elem_gid)

    @property
    def n_own(self) -> int:
        return 8 * len(self.elem_gid)


def _boundary_masks(cfg: Config, mesh: HexMesh, x0: np.ndarray, groups: np.ndarray,
                    where: str) -> tuple[np.ndarray, np.ndarray]:
    fixed = np.zeros(x0.shape, dtype=bool)
    vel = np.zeros(x0.shape)
    node_group = np.repeat(groups, 8)
    for k, bc in enumerate(cfg.boundaries):
        b = bc.box
        sel = ((x0[:, 0] >= b[0]) & (x0[:, 0] <= b[1]) & (x0[:, 1] >= b[2])
               & (x0[:, 1] <= b[3]) & (x0[:, 2] >= b[4]) & (x0[:, 2] <= b[5]))
        if bc.group:
            sel &= np.isin(node_group, _group_ids(mesh, bc.group,
                                                  f"{where}: boundaries[{k}].group"))
        for comp in bc.fix:
            c = "xyz".index(comp)
            fixed[sel, c] = True
            vel[sel, c] = bc.velocity[c]
    return fixed, vel


def spring_stiffness(cfg: Config, mesh: HexMesh, mats: ElementMaterials, volumes: np.ndarray,
                     elem: np.ndarray, face_area: np.ndarray,
                     where: str) -> tuple[np.ndarray, np.ndarray]:
    """Per-area stiffness k_n, k_s [Pa/m] of each interface face (see solver.cdem.interface):
    from beta and the elements, or the case's values, or an ``interface.pairs`` entry's."""
    ic = cfg.interface
    h = volumes[elem] / face_area[:, None]                      # (n, 2)
    p_modulus = mats.lam + 2.0 * mats.mu                        # K + 4G/3
    k_n = ic.stiffness_factor * np.max(p_modulus[elem] / h, axis=1)
    k_s = ic.stiffness_factor * np.max(mats.mu[elem] / h, axis=1)
    if ic.normal_stiffness > 0:
        k_n = np.full(len(elem), ic.normal_stiffness)
    if ic.shear_stiffness > 0:
        k_s = np.full(len(elem), ic.shear_stiffness)
    for k, pair in enumerate(ic.pairs):
        sel = _pair_faces(mesh, pair, elem, f"{where}: interface.pairs[{k}].groups")
        if pair.normal_stiffness > 0:
            k_n[sel] = pair.normal_stiffness
        if pair.shear_stiffness > 0:
            k_s[sel] = pair.shear_stiffness
    return k_n, k_s


def _pair_faces(mesh: HexMesh, pair, elem: np.ndarray, where: str) -> np.ndarray:
    """Faces whose two elements lie one in each group of an interface pair."""
    ga, gb = mesh.groups[elem[:, 0]], mesh.groups[elem[:, 1]]
    g1, g2 = (_group_ids(mesh, g, where) for g in pair.groups)
    return (np.isin(ga, g1) & np.isin(gb, g2)) | (np.isin(ga, g2) & np.isin(gb, g1))


def interface_strength(cfg: Config, mesh: HexMesh, mats: ElementMaterials, elem: np.ndarray,
                       where: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """T, c, tan(phi) per face: the group's own values inside a group, the weaker of the two
    groups across groups, unless an ``interface.pairs`` entry names the two groups."""
    a, b = elem[:, 0], elem[:, 1]
    tensile = np.minimum(mats.tensile[a], mats.tensile[b])
    cohesion = np.minimum(mats.cohesion[a], mats.cohesion[b])
    tan_phi = np.minimum(mats.tan_phi[a], mats.tan_phi[b])
    for k, pair in enumerate(cfg.interface.pairs):
        sel = _pair_faces(mesh, pair, elem, f"{where}: interface.pairs[{k}].groups")
        tensile[sel] = pair.tensile_strength
        cohesion[sel] = pair.cohesion
        tan_phi[sel] = math.tan(math.radians(pair.friction_deg))
    return tensile, cohesion, tan_phi


def node_spring_stiffness(topo, spring_k: np.ndarray, g2l: np.ndarray,
                          n_own: int) -> np.ndarray:
    """Spring stiffness max(K_n, K_s) a node carries, summed over its slots (n_own,): every
    spring at my nodes, mine or owned by another rank, in the same order on any partition."""
    k_slot = np.zeros((n_own, 3))
    for side in (0, 1):
        local = g2l[topo.elem[:, side]]
        mine = local >= 0
        rows = 8 * local[mine][:, None] + topo.local_nodes[mine, side]
        k_slot[rows, SLOT[topo.local_nodes[mine, side], topo.face[mine, side][:, None]]] = \
            spring_k[mine][:, None]
    return (k_slot[:, 0] + k_slot[:, 1]) + k_slot[:, 2]


def critical_step(omega: np.ndarray, zeta: np.ndarray, alpha: float = 0.0,
                  c: float = 0.0) -> np.ndarray:
    """Largest stable central-difference step of an oscillator of circular frequency omega
    with dashpot damping ratio zeta, under Cundall local damping alpha and mass-proportional
    damping c [1/s] (the time loop's ``local`` and ``viscous`` modes).

    Damping taken with the last half-step velocity (dashpots, mass-proportional damping)
    is stable for dt <= (2 / omega) (sqrt(1 + zeta^2) - zeta) (Belytschko, Liu & Moran,
    Nonlinear Finite Elements, section 6.2), here with zeta + c / (2 omega).

    Local damping (Cundall 1987), F_d = -alpha |F| sign(v^{n-1/2}), scales the force by
    1 - alpha where v has the sign of F and by 1 + alpha where it opposes F. In the mode
    that sets the step limit, x_n = (-1)^n X, v^{n-1/2} = 2 (-1)^n X / dt always opposes
    F_n = -k x_n, so the scheme integrates m a = (1 + alpha) F in every step and grows once
    (1 + alpha) omega^2 dt^2 > 4; with several dofs, M^-1 diag(1 +- alpha) K has no
    eigenvalue above (1 + alpha) times the largest of M^-1 K. So omega and the dashpot
    force grow by sqrt(1 + alpha) and 1 + alpha: omega' = sqrt(1 + alpha) omega,
    zeta' = sqrt(1 + alpha) zeta (derived here; tests/test_stable_step.py checks the limit
    on the time loop's own kernel)."""
    omega = np.sqrt(1.0 + alpha) * omega
    zeta = np.sqrt(1.0 + alpha) * zeta + c / (2.0 * omega)
    return 2.0 / (omega * (np.hypot(1.0, zeta) + zeta))


def element_frequency(mats: ElementMaterials, x_el: np.ndarray) -> np.ndarray:
    """Largest circular frequency of each element alone (n_el,), with its lumped masses:
    omega^2 = 4 max(3K, 2G) / (rho h^2), max(3K, 2G) the largest eigenvalue of the elastic
    [D] (3K = 3 lam + 2 mu), h = solver.cdem.hex8.thinnest_height. For a cube it is the
    largest eigenvalue of the element's stiffness over its masses (the volumetric mode for
    nu >= 0, a shear mode below); boxes, parallelepipeds and distorted elements stay below
    it (tests/test_stable_step.py). The p-wave estimate 2 c_p / h falls short of it by up to
    sqrt(3) (nu -> 0.5)."""
    modulus = np.maximum(3.0 * mats.lam + 2.0 * mats.mu, 2.0 * mats.mu)
    return 2.0 * np.sqrt(modulus / mats.density) / thinnest_height(x_el)


def stable_dt(mats: ElementMaterials, x_el: np.ndarray, mass: np.ndarray, k_node: np.ndarray,
              zeta_node: np.ndarray, damping=((0.0, 0.0),)) -> np.ndarray:
    """Stable central-difference step per element (n_el,), bound per node:
    omega^2 <= omega_el^2 + 2 k_node / m_node (the element's own largest frequency,
    :func:`element_frequency`, plus the Gershgorin bound of the springs at the node), k_node
    the spring (and contact) stiffness the node may carry and zeta_node the damping ratio of
    its contact dashpots; the smallest :func:`critical_step` over the stages' ``damping``
    pairs (Cundall local alpha, mass-proportional c)."""
    omega_el = element_frequency(mats, x_el)
    omega = np.sqrt(np.repeat(omega_el ** 2, 8) + 2.0 * k_node / mass)
    dt_node = np.min([critical_step(omega, zeta_node, alpha, c) for alpha, c in damping],
                     axis=0)
    return dt_node.reshape(-1, 8).min(axis=1)


def build_local_model(comm, cfg: Config, mesh: HexMesh, where: str) -> LocalModel:
    """Partition the mesh, split it into blocks and springs, keep this rank's part."""
    mats = element_materials(mesh, cfg.materials, where)
    x_all = mesh.points[mesh.cells]                                 # (n_el, 8, 3)
    volumes = element_volumes(x_all)
    topo = shared_faces(mesh.cells)
    centroids = x_all.mean(axis=1)
    parts = None
    if comm.rank == 0:
        parts = partition_elements(comm.size, centroids, topo.elem, cfg.partitioner)
    parts = comm.bcast(parts, root=0)
    rank = comm.rank
    mine = np.nonzero(parts == rank)[0]
    g2l = np.full(mesh.n_cells, -1, dtype=np.int64)
    g2l[mine] = np.arange(len(mine))
    n_own = 8 * len(mine)

    owner_a = parts[topo.elem[:, 0]]
    owner_b = parts[topo.elem[:, 1]]
    owned = np.nonzero(owner_a == rank)[0]
    ea, eb = topo.elem[owned, 0], topo.elem[owned, 1]
    node_i = 8 * g2l[ea][:, None] + topo.local_nodes[owned, 0]
    gid_b = 8 * eb[:, None] + topo.local_nodes[owned, 1]            # global node ids
    remote = owner_b[owned] != rank
    ghost_gids = np.unique(gid_b[remote])
    node_j = np.where(remote[:, None], 0, 8 * g2l[eb][:, None] + topo.local_nodes[owned, 1])
    if len(ghost_gids):
        slots = n_own + np.searchsorted(ghost_gids, gid_b)
        node_j = np.where(remote[:, None], slots, node_j)
    slot_i = SLOT[topo.local_nodes[owned, 0], topo.face[owned, 0][:, None]]
    slot_j = SLOT[topo.local_nodes[owned, 1], topo.face[owned, 1][:, None]]
    recv, send, slot_recv, slot_send = {}, {}, {}, {}
    for r in np.unique(parts[ghost_gids // 8]) if len(ghost_gids) else []:
        recv[int(r)] = n_own + np.nonzero(parts[ghost_gids // 8] == r)[0]
        sel = remote & (owner_b[owned] == r)
        keys = 3 * gid_b[sel] + slot_j[sel]
        rows = 3 * node_j[sel] + slot_j[sel]
        slot_recv[int(r)] = rows.ravel()[np.argsort(keys.ravel())]
    into_me = np.nonzero((owner_b == rank) & (owner_a != rank))[0]
    for r in np.unique(owner_a[into_me]):
        sel = into_me[owner_a[into_me] == r]
        gid = 8 * topo.elem[sel, 1][:, None] + topo.local_nodes[sel, 1]
        gids = np.unique(gid)
        send[int(r)] = 8 * g2l[gids // 8] + gids % 8
        slot = SLOT[topo.local_nodes[sel, 1], topo.face[sel, 1][:, None]]
        rows = 3 * (8 * g2l[gid // 8] + gid % 8) + slot
        slot_send[int(r)] = rows.ravel()[np.argsort((3 * gid + slot).ravel())]
    halo = NodeHalo(comm, send, recv)
    slot_halo = NodeHalo(comm, slot_send, slot_recv)

    n_nodes = n_own + len(ghost_gids)
    x0 = x_all[mine].reshape(-1, 3).copy()
    x = np.zeros((n_nodes, 3))
    x[:n_own] = x0
    mass = lumped_masses(x_all[mine], mats.density[mine]).ravel()
    face_a = face_areas(mesh.points[mesh.cells[topo.elem[:, 0][:, None],
                                               topo.local_nodes[:, 0]]])
    k_area_n, k_area_s = spring_stiffness(cfg, mesh, mats, volumes, topo.elem, face_a, where)
    tensile, cohesion, tan_phi = interface_strength(cfg, mesh, mats, topo.elem, where)
    area = face_a[owned] / 4.0
    k_n = k_area_n[owned] * area
    k_s = k_area_s[owned] * area
    fixed, held = _boundary_masks(cfg, mesh, x0, mesh.groups[mine], where)
    n_f = len(owned)
    model = LocalModel(
        elem_gid=mine, group=mesh.groups[mine], x0=x0, x=x, v=np.zeros((n_nodes, 3)),
        du=np.zeros((n_nodes, 3)), f_int=np.zeros((n_nodes, 3)), f_spr=np.zeros((n_own, 3)),
        f_slot=np.zeros((n_nodes, 3, 3)),
        mass=mass, lam=mats.lam[mine], mu=mats.mu[mine], density=mats.density[mine],
        model=mats.model[mine], stress=np.zeros((len(mine), 8, 6)), fixed=fixed,
        held_velocity=held, node_i=node_i.astype(np.int64), node_j=node_j.astype(np.int64),
        slot_i=slot_i, slot_j=slot_j,
        face_gid=owned, k_n=k_n, k_s=k_s, area=area, tensile=tensile[owned],
        cohesion=cohesion[owned], tan_phi=tan_phi[owned], u_n=np.zeros((n_f, 4)),
        f_s=np.zeros((n_f, 4, 3)), state=np.full((n_f, 4), INTACT, dtype=np.uint8), halo=halo,
        slot_halo=slot_halo,
        n_faces_global=topo.n_faces, dt_limit_local=np.inf)
    k_node = node_spring_stiffness(topo, np.maximum(k_area_n, k_area_s) * face_a / 4.0, g2l,
                                   n_own)
    zeta_node = np.zeros(n_own)
    if cfg.contact.enabled:
        from solver.cdem.contact import ContactSet
        model.contact = ContactSet(comm, cfg, mesh, model, topo, parts, mats, volumes)
        model.contact.update_glue()
        surface = model.contact.surface_elems
        on_me = parts[surface] == rank
        rows = (8 * g2l[surface[on_me]][:, None] + np.arange(8)).ravel()
        k_node[rows] += np.repeat(model.contact.stable_stiffness()[on_me], 8)
        zeta_node[rows] = model.contact.node_damping_ratio()
    dt_el = stable_dt(_sub(mats, mine), x_all[mine], mass, k_node, zeta_node,
                      [stage.damping_terms for stage in cfg.stages])
    model.dt_limit_local = float(dt_el.min()) if len(dt_el) else np.inf
    return model


def _sub(mats: ElementMaterials, idx: np.ndarray) -> ElementMaterials:
    return ElementMaterials(*(getattr(mats, f)[idx] for f in ElementMaterials.__dataclass_fields__))
