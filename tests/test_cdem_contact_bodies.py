"""Contact physics that does not depend on the mesh, against the single-contact closed forms
(solver.contact_laws.laws: the no-tension linear spring-dashpot's restitution and the time
its force lasts):

* two equal cubes face to face carry the contact once where their semi-springs share a
  place (Feng et al. 2014, section 5): aligned or offset by half a face, they rebound with
  the requested restitution and press on each other with one contact's stiffness k A;
* a stiff glued block of 1, 8 or 64 elements landing flat on a held base or on an equal
  free block rebounds with the requested restitution (the dashpot takes the mass of the
  bodies, shared over their loaded contacts);
* glued bodies are labelled and weighed alike on any partition, and the dashpot cap is the
  stability limit of the explicit step.
"""

import math

import numpy as np
import pytest
from mpi4py import MPI

from solver.case import from_dict
from solver.cdem.bodies import Bodies
from solver.cdem.config import Config
from solver.cdem.contact.law import stable_dashpot_mass
from solver.cdem.model import model_from_mesh
from solver.cdem.run import stability_limits, time_steps
from solver.cdem.timeloop import TimeLoop
from solver.contact_laws.laws import (
    BROKEN_TENSION,
    clamped_restitution,
    damping_ratio_from_restitution,
)
from solver.exact_sum import global_sum
from solver.mesh.build import mesh_from_config

K_AREA = 1e10           # contact stiffness per area [Pa/m]
DENSITY = 2500.0


GAP = 1e-3              # initial gap between the blocks [m]


def _case(e_n: float, n: int, offset: float, held_base: bool, fix_xy: bool,
          youngs_modulus: float) -> dict:
    """A 1 m cube of n^3 glued elements 1 mm above another, shifted by ``offset`` along x,
    without gravity."""
    boundaries = [{"group": "lower"}] if held_base else []
    if fix_xy:
        boundaries += [{"group": g, "fix": ["x", "y"]} for g in ("lower", "upper")]
    return {"mesh": {"boxes": [
        {"n": [n, n, n], "size": [1.0, 1.0, 1.0], "origin": [0.0, 0.0, -1.0],
         "group": "lower"},
        {"n": [n, n, n], "size": [1.0, 1.0, 1.0], "origin": [offset, 0.0, GAP],
         "group": "upper"}]},
        "materials": [{"density": DENSITY, "youngs_modulus": youngs_modulus}],
        "contact": {"enabled": True, "normal_stiffness": K_AREA, "shear_stiffness": K_AREA,
                    "restitution": e_n},
        "boundaries": boundaries, "gravity": [0.0, 0.0, 0.0], "partitioner": "rcb",
        "stages": [{"kind": "dynamic", "max_steps": 20000, "damping": "none"}]}


def _collide(case: dict, comm=MPI.COMM_SELF) -> tuple[float, float]:
    """The upper block meets the lower one at 1 m/s (the lower held, or both free moving
    towards each other): (relative rebound / impact speed, contact stiffness K [N/m]). K is
    the least-squares fit of F = K d + C d' over the steps the contact carries a force F, d
    the approach of the blocks' centres of mass past the initial gap at the start of the
    step and d' its rate over the step before (the fit averages out the blocks' own
    vibration, which moves the force at any one step by up to 5 %)."""
    cfg = from_dict(Config, case, "collide", "", None)
    mesh = mesh_from_config(cfg.mesh, "collide") if comm.rank == 0 else None
    model = model_from_mesh(comm, cfg, mesh, "collide")
    dt = time_steps(cfg, stability_limits(comm, model), "collide")[0]
    loop = TimeLoop(comm, model, cfg.gravity, dt)
    upper = np.repeat(model.elements.group == 1, 8)
    held = case["boundaries"][:1] == [{"group": "lower"}]
    model.nodes.v[upper, 2] = -1.0 if held else -0.5
    model.nodes.v[~upper, 2] = 0.0 if held else 0.5
    mass = model.nodes.mass

    def separation(z: np.ndarray) -> float:
        """Mass-weighted mean of z over the upper block less that over the lower (global)."""
        s = comm.allreduce(np.array([(z * mass)[upper].sum(), mass[upper].sum(),
                                     (z * mass)[~upper].sum(), mass[~upper].sum()]))
        return s[0] / s[1] - s[2] / s[3]

    start = separation(model.nodes.x[:, 2])
    force, approach = [], [0.0, 0.0]

    def until_released(record) -> bool:
        force.append(global_sum(comm, record.model.contact_normal_forces()))
        approach.append(start - separation(model.nodes.x[:, 2]))
        return any(force) and not force[-1] > 0

    assert loop.run_stage(cfg.stages[0], [until_released]) == "observer"
    a = np.array(approach)
    loaded = np.array(force) > 0
    fit = np.column_stack([a[1:-1] - GAP, np.diff(a[:-1]) / dt])[loaded]
    (k, _), *_ = np.linalg.lstsq(fit, np.array(force)[loaded], rcond=None)
    return separation(model.nodes.v[:, 2]), k


@pytest.mark.parametrize("e_n", [0.1, 0.3, 0.6, 0.9])
def test_equal_cubes_face_to_face_rebound_as_one_contact(e_n):
    """Aligned, each place holds a semi-spring of both cubes; offset by half a face (held
    to translation along z so that the off-centre contact does not turn them), each cube
    has two semi-springs in the other's face. Either way the cubes feel one contact of
    stiffness k A (reduced mass M / 2): rebound within 2 % of the closed form (measured
    0.25 % at most), stiffness within 2 % of k A (measured 0.3 to 1.3 % low, aligned and
    offset alike to 0.05 %; with both sides' springs at full share it was twice k A).
    E = 1e13 Pa, 1000 times k A / (1 m): the cubes' own elasticity is out of the way."""
    for offset, fix_xy in ((0.0, False), (0.5, True)):
        rebound, stiffness = _collide(_case(e_n, 1, offset, held_base=False, fix_xy=fix_xy,
                                            youngs_modulus=1e13))
        assert rebound == pytest.approx(clamped_restitution(e_n), rel=0.02), offset
        assert stiffness == pytest.approx(K_AREA * 1.0, rel=0.02), offset  # A = 1 m2


@pytest.mark.mpi(min_size=2)
@pytest.mark.parametrize("e_n", [0.1, 0.3, 0.6, 0.9])
def test_equal_cubes_face_to_face_rebound_as_one_contact_on_two_ranks(e_n):
    """One cube per rank: the halving is found across ranks, and the rebound is that of
    the serial run to the last bit."""
    comm = MPI.COMM_WORLD
    for offset, fix_xy in ((0.0, False), (0.5, True)):
        case = _case(e_n, 1, offset, held_base=False, fix_xy=fix_xy, youngs_modulus=1e13)
        spread = _collide(case, comm)
        assert spread == _collide(case)
        assert spread[0] == pytest.approx(clamped_restitution(e_n), rel=0.02)


@pytest.mark.parametrize("n", [1, 2, 4])
@pytest.mark.parametrize("held_base", [True, False])
def test_glued_block_rebounds_with_the_requested_restitution_on_any_mesh(held_base, n):
    """A 1 m block of n^3 glued elements on a held block or an equal free one, both meshed
    alike, at the most damped e_n of the tests above (the dashpot mass matters most): within
    5 % of the closed form (measured within 1.8 % at e_n 0.1 to 0.9 but for the 4x4x4 block
    on the held base at e_n = 0.1, 3.7 %: a flat landing loads each node's dashpot with
    2 n times the node's mass, and at n = 4 the stability cap trims it; at half the step
    it rebounds 0.8 % high. With a quarter of the element mass in each dashpot, a 4x4x4
    block rebounded 55 % high at e_n = 0.3). E = 1e12 Pa, 100 times k A / (1 m)."""
    e_n = 0.1
    rebound, _ = _collide(_case(e_n, n, 0.0, held_base=held_base, fix_xy=False,
                                youngs_modulus=1e12))
    assert rebound == pytest.approx(clamped_restitution(e_n), rel=0.05)


@pytest.mark.parametrize("viscous", [0.0, 500.0])
def test_dashpot_cap_is_the_stability_limit_of_the_explicit_step(viscous):
    """The dashpot on a node of mass m_node, a spring K and the velocity of the last half
    step, with or without mass-proportional damping c [1/s]: the amplification matrix of
    one central-difference step has spectral radius 1 at the capped dashpot mass and above
    1 just past it."""
    m_node, omega, dt, zeta = 3.0, 2.0e3, 4.0e-4, damping_ratio_from_restitution(0.3)
    cap = stable_dashpot_mass(np.array([m_node]), np.array([omega]), zeta, dt,
                              (0.0, viscous))[0]

    def radius(m):
        gamma = (2.0 * zeta * math.sqrt(m / m_node) * omega + viscous) * dt   # damping dt / m
        w2 = (omega * dt) ** 2
        step = np.array([[1.0 - w2, dt * (1.0 - gamma)], [-w2 / dt, 1.0 - gamma]])
        return np.abs(np.linalg.eigvals(step)).max()

    assert radius(0.999 * cap) <= 1.0 + 1e-12 < radius(1.01 * cap)
    assert radius(0.5 * cap) < 1.0


@pytest.mark.mpi(min_size=2)
def test_glued_bodies_are_labelled_and_weighed_alike_on_any_partition():
    """Two glued blocks side by side (not glued to each other) and a held slab, cut across
    by the partition: each element gets the smallest element id of its block and the
    block's mass, the held slab an infinite one, on 2 ranks as on one; the contact
    stiffnesses sit on the same grid of exact sums (a grid counted over the ranks twice
    once made the loaded stiffness differ in the last bit)."""
    case = {"mesh": {"boxes": [
        {"n": [4, 2, 1], "size": [4.0, 2.0, 1.0], "origin": [0.0, 0.0, -1.0], "group": "slab"},
        {"n": [3, 1, 2], "size": [3.0, 1.0, 2.0], "origin": [0.0, 0.0, 0.0], "group": "a"},
        {"n": [2, 1, 1], "size": [2.0, 1.0, 1.0], "origin": [0.0, 1.0, 0.0], "group": "b"}]},
        "materials": [{"density": DENSITY, "youngs_modulus": 1e9}],
        "contact": {"enabled": True}, "boundaries": [{"group": "slab"}],
        "partitioner": "rcb", "stages": [{"kind": "dynamic", "max_steps": 1}]}

    def bodies(comm) -> tuple[np.ndarray, Bodies, float]:
        cfg = from_dict(Config, case, "bodies", "", None)
        mesh = mesh_from_config(cfg.mesh, "bodies") if comm.rank == 0 else None
        model = model_from_mesh(comm, cfg, mesh, "bodies")
        return model.elements.gid, model.contact.bodies, model.contact.k_grid

    comm = MPI.COMM_WORLD
    gid, mine, k_grid = bodies(comm)
    everyone = np.zeros((16, 2))
    everyone[gid] = np.column_stack([mine.label, mine.mass])
    everyone = comm.allreduce(everyone)
    serial_gid, serial, serial_k_grid = bodies(MPI.COMM_SELF)
    assert k_grid == serial_k_grid
    assert np.array_equal(everyone[serial_gid], np.column_stack([serial.label, serial.mass]))
    assert np.array_equal(serial.label[serial_gid], np.repeat([0, 8, 14], [8, 6, 2]))
    assert np.array_equal(serial.mass[serial_gid],
                          np.repeat([np.inf, 6 * DENSITY, 2 * DENSITY], [8, 6, 2]))


@pytest.mark.mpi(min_size=2)
def test_broken_faces_split_the_bodies_alike_on_any_partition():
    """Two rows of 4 glued elements (ids 0..3 and 4..7 along x), every face between the
    rows broken by hand, and the faces 1|2 and 6|7 too; the partition cuts both rows
    between x = 1 and 2, so a broken face (1|2) and a glued one (5|6) cross ranks. The glue
    table loses exactly the broken faces, and the bodies {0, 1}, {2, 3}, {4, 5, 6}, {7}
    get their smallest id and their mass, on 2 ranks as on one."""
    case = {"mesh": {"boxes": [{"n": [4, 2, 1], "size": [4.0, 2.0, 1.0]}]},
            "materials": [{"density": DENSITY, "youngs_modulus": 1e9}],
            "contact": {"enabled": True}, "partitioner": "rcb",
            "stages": [{"kind": "dynamic", "max_steps": 1}]}
    broken = {(0, 4), (1, 5), (2, 6), (3, 7), (1, 2), (6, 7)}

    def split(comm) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        cfg = from_dict(Config, case, "rows", "", None)
        mesh = mesh_from_config(cfg.mesh, "rows") if comm.rank == 0 else None
        model = model_from_mesh(comm, cfg, mesh, "rows")
        gid, ifc, state = model.elements.gid, model.interfaces, model.springs.state
        for q, (a, _, b) in enumerate(ifc.a_side):
            if (gid[a], b) in broken:
                state[q] = BROKEN_TENSION
        glued = ifc.glued_neighbours(state, len(gid))
        model.contact.set_glue(glued)
        bodies = model.contact.bodies
        table = np.full((8, 6), -1, dtype=np.int64)
        table[gid] = glued
        rows = np.zeros((8, 3))
        rows[gid] = np.column_stack([bodies.label, bodies.mass, np.full(len(gid), comm.rank)])
        comm.Allreduce(MPI.IN_PLACE, table, op=MPI.MAX)
        comm.Allreduce(MPI.IN_PLACE, rows, op=MPI.SUM)
        return table, rows[:, :2], rows[:, 2]

    table, rows, rank = split(MPI.COMM_WORLD)
    serial_table, serial_rows, _ = split(MPI.COMM_SELF)
    assert rank[1] != rank[2] and rank[5] != rank[6]
    assert np.array_equal(table, serial_table) and np.array_equal(rows, serial_rows)
    neighbours = {e: set(serial_table[e][serial_table[e] >= 0]) for e in range(8)}
    assert neighbours == {0: {1}, 1: {0}, 2: {3}, 3: {2}, 4: {5}, 5: {4, 6}, 6: {5}, 7: set()}
    assert np.array_equal(serial_rows[:, 0], [0, 0, 2, 2, 4, 4, 4, 7])
    assert np.array_equal(serial_rows[:, 1], DENSITY * np.array([2, 2, 2, 2, 3, 3, 3, 1]))
