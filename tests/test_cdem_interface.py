"""Interface springs: topology, tensile and Mohr-Coulomb failure per spring, no re-bonding."""

import math

import numpy as np
import pytest
from mpi4py import MPI

from solver.case import from_dict
from solver.cdem.config import Config
from solver.cdem.interface import (BROKEN_SHEAR, BROKEN_TENSION, INTACT, interface_step,
                                   interface_tally, sum_slots)
from solver.cdem.model import model_from_mesh
from solver.cdem.tally import value
from solver.cdem.timeloop import TimeLoop
from solver.mesh.build import mesh_from_config
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
    tally = interface_tally()
    broken = interface_step(n.x, n.du, m.packed, breakable, tally)
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
    assert np.isclose(value(tally, "released"), 4 * 0.5 * (m.k_n[0] * steps * lift) ** 2 / m.k_n[0])
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
    assert np.isclose(value(tally, "friction"), 4 * residual * 1e-4, rtol=1e-3)


def test_unbreakable_stage_keeps_springs_intact():
    model = _model(_two_blocks())
    m = model.springs
    for _ in range(100):
        _advance(model, np.array([0.0, 0.0, 1e-5]), breakable=False)
    assert np.all(m.state == INTACT)
    assert np.isclose(m.k_n[0] * m.u_n[0, 0], m.k_n[0] * 1e-3)


def test_weakening_pair_fails_when_its_falling_cohesion_meets_the_shear():
    """A 1 x 1 x 0.5 m block glued to a held base, gravity tilted by 20 deg, no friction:
    its four springs carry the shear tau A, tau = rho g h sin(20 deg) (relaxed unbreakable
    first; the elastic block loads its downslope springs 1.4 times its upslope ones). Their
    cohesion then falls from c0 = 2 tau to 0 over W = 1 s of the breakable stage,
    c(t) = c0 (1 - t / W), so the first spring breaks at t* = W (1 - tau_s / c0), tau_s the
    largest spring shear per area: within the step that reaches it (the relaxation's time
    does not count)."""
    rho, h, theta, weakening = 2500.0, 0.5, math.radians(20.0), 1.0
    tau = rho * 9.81 * h * math.sin(theta)
    cfg = from_dict(Config, {
        "gravity": [9.81 * math.sin(theta), 0.0, -9.81 * math.cos(theta)],
        "mesh": {"boxes": [{"n": [1, 1, 2], "size": [1.0, 1.0, 2 * h],
                            "layer_groups": ["base", "block"]}]},
        "materials": [{"density": rho, "youngs_modulus": 1e9, "tensile_strength": 1e9,
                       "cohesion": 2.0 * tau, "friction_deg": 0.0}],
        "interface": {"pairs": [{"groups": ["block", "base"], "tensile_strength": 1e9,
                                 "cohesion": 0.0, "friction_deg": 0.0,
                                 "weakening_time": weakening}]},
        "boundaries": [{"group": "base"}],
        "stages": [{"kind": "relax", "damping": "local", "breakable": False,
                    "unbalance_tol": 1e-7},
                   {"damping": "local", "duration": 2.0, "stop_on_failure": True}]},
        "test", "", None)
    model = model_from_mesh(MPI.COMM_SELF, cfg, mesh_from_config(cfg.mesh, "test"), "test")
    loop = TimeLoop(MPI.COMM_SELF, model, cfg.gravity, 0.5 * model.dt_limit_local)
    assert loop.run_stage(cfg.stages[0], []) == "converged"
    s = model.springs
    tau_s = np.linalg.norm(s.f_s[0], axis=1).max() / s.area[0]
    assert s.f_s[0, :, 0].sum() == pytest.approx(tau * 4 * s.area[0], rel=1e-6)
    assert tau < tau_s < 2.0 * tau
    assert loop.weakening_clock == 0.0 and s.cohesion[0] == 2.0 * tau
    assert loop.run_stage(cfg.stages[1], []) == "failure"
    expected = weakening * (1.0 - tau_s / (2.0 * tau))
    assert loop.weakening_clock == loop.clock.t_stage
    assert expected - 1e-6 <= loop.weakening_clock < expected + loop.dt + 1e-6
