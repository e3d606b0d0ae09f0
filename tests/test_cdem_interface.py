"""Interface springs: topology, tensile and Mohr-Coulomb failure per spring, no re-bonding."""

import math

import numpy as np
from mpi4py import MPI

from solver.case import from_dict
from solver.cdem.config import Config
from solver.cdem.interface import BROKEN_SHEAR, BROKEN_TENSION, INTACT, interface_step, sum_slots
from solver.cdem.model import model_from_mesh
from solver.mesh.hexmesh import HexMesh
from solver.mesh.topology import shared_faces

T, C, PHI = 2e5, 1e5, 30.0


def _two_blocks(n_cols=1):
    """Two unit cubes stacked along z, sharing the face z = 1."""
    pts = np.array([[x, y, z] for z in (0.0, 1.0, 2.0) for y in (0.0, 1.0) for x in (0.0, 1.0)])
    idx = {tuple(p): i for i, p in enumerate(pts)}

    def cube(z):
        c = [(0, 0, z), (1, 0, z), (1, 1, z), (0, 1, z), (0, 0, z + 1), (1, 0, z + 1),
             (1, 1, z + 1), (0, 1, z + 1)]
        return [idx[tuple(map(float, p))] for p in c]

    cells = np.array([cube(0.0), cube(1.0)], dtype=np.int64)
    return HexMesh(pts, cells, np.zeros(2, dtype=np.int64))


def _model(mesh):
    cfg = from_dict(Config, {
        "mesh": {"boxes": [{"n": [1, 1, 1], "size": [1.0, 1.0, 1.0]}]},
        "materials": [{"density": 2000.0, "youngs_modulus": 1e9, "tensile_strength": T,
                       "cohesion": C, "friction_deg": PHI}],
        "interface": {"normal_stiffness": 1e10, "shear_stiffness": 5e9},
        "stages": [{"kind": "relax"}]}, "test", "", None)
    return model_from_mesh(MPI.COMM_SELF, cfg, mesh, "test")


def _advance(model, du_top, breakable=True):
    """Move the upper block rigidly by du_top and update the springs once."""
    n, m = model.nodes, model.springs
    n.du[:] = 0.0
    n.du[8:16] = du_top
    n.x[8:16] += du_top
    tally = np.zeros(2)
    broken = interface_step(n.x, n.du, m.f_slot, m.node_i, m.node_j, m.slot_i, m.slot_j,
                            m.k_n, m.k_s, m.area, m.tensile, m.cohesion, m.tan_phi, m.u_n,
                            m.f_s, m.state, breakable, tally)
    return broken, tally


def _spring_forces(model):
    out = np.zeros_like(model.nodes.x)
    sum_slots(model.springs.f_slot, out)
    return out


def test_shared_faces_of_a_2x2x2_box_and_their_node_pairs():
    n = 3
    idx = lambda i, j, k: (i * n + j) * n + k
    cells = np.array([[idx(i, j, k), idx(i + 1, j, k), idx(i + 1, j + 1, k), idx(i, j + 1, k),
                       idx(i, j, k + 1), idx(i + 1, j, k + 1), idx(i + 1, j + 1, k + 1),
                       idx(i, j + 1, k + 1)] for i in range(2) for j in range(2) for k in range(2)])
    topo = shared_faces(cells)
    assert topo.n_faces == 12
    ga = cells[topo.elem[:, 0][:, None], topo.local_nodes[:, 0]]
    gb = cells[topo.elem[:, 1][:, None], topo.local_nodes[:, 1]]
    np.testing.assert_array_equal(ga, gb)          # coincident node pairs


def test_spring_constants_area_and_tensile_failure_at_the_cutoff():
    """Pulled apart, a spring breaks in tension at min(T, c / tan(phi)) A_s: the tension
    cut-off, or the apex of the Mohr-Coulomb line where the shear strength c A_s + F_n tan(phi)
    reaches zero (here c / tan(phi) = 173 kPa < T = 200 kPa)."""
    cutoff = min(T, C / math.tan(math.radians(PHI))) * 0.25
    model = _model(_two_blocks())
    m = model.springs
    assert m.k_n.shape == (1,) and np.isclose(m.area[0], 0.25)
    assert np.isclose(m.k_n[0], 1e10 * 0.25)
    lift = 1e-7
    steps, force = 0, 0.0
    while not np.any(m.state):
        broken, tally = _advance(model, np.array([0.0, 0.0, lift]))
        steps += 1
        if not broken:
            force = m.k_n[0] * m.u_n[0, 0]
    # the spring breaks in the first step whose force exceeds the cut-off
    assert force <= cutoff < force + m.k_n[0] * lift
    assert np.all(m.state == BROKEN_TENSION) and broken == 4
    assert np.isclose(tally[0], 4 * 0.5 * (m.k_n[0] * steps * lift) ** 2 / m.k_n[0])
    # opened further: no force; closed back below the original gap: compression returns
    _advance(model, np.array([0.0, 0.0, lift]))
    assert np.allclose(_spring_forces(model), 0.0)
    _advance(model, np.array([0.0, 0.0, -(steps + 1) * lift - 1e-6]))
    assert np.all(_spring_forces(model)[8:12, 2] > 0) and np.all(m.state == BROKEN_TENSION)


def test_mohr_coulomb_shear_failure_and_residual_friction():
    model = _model(_two_blocks())
    m = model.springs
    press = -1e-5
    _advance(model, np.array([0.0, 0.0, press]))
    f_n = -m.k_n[0] * press                                  # compression per spring
    strength = C * 0.25 + f_n * math.tan(math.radians(PHI))
    slip = 1e-7
    peak = 0.0
    while not np.any(m.state):
        _advance(model, np.array([slip, 0.0, 0.0]))
        peak = max(peak, np.linalg.norm(m.f_s[0, 0]))
    assert np.all(m.state == BROKEN_SHEAR)
    assert peak <= strength * (1 + 1e-12)
    residual = f_n * math.tan(math.radians(PHI))
    assert np.isclose(np.linalg.norm(m.f_s[0, 0]), residual, rtol=1e-9)
    broken, tally = _advance(model, np.array([1e-4, 0.0, 0.0]))
    assert broken == 0 and np.isclose(np.linalg.norm(m.f_s[0, 0]), residual, rtol=1e-9)
    # the Coulomb slider dissipates cap x slip (less the elastic part of the increment)
    assert np.isclose(tally[1], 4 * residual * 1e-4, rtol=1e-3)


def test_unbreakable_stage_keeps_springs_intact():
    model = _model(_two_blocks())
    m = model.springs
    for _ in range(100):
        _advance(model, np.array([0.0, 0.0, 1e-5]), breakable=False)
    assert np.all(m.state == INTACT)
    assert np.isclose(m.k_n[0] * m.u_n[0, 0], m.k_n[0] * 1e-3)
