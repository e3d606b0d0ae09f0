"""The implicit gravity prestep (solver.cdem.prestep): its stiffness against the explicit
kernel, the gravity column against rho g h, the relaxation it saves, a weak interface it
must not hide, and the same equilibrium on 1 and 2 ranks with scipy and with PETSc (the MPI
tests run under `mpiexec -n 2 python -m pytest --only-mpi`)."""

import importlib.util
import json

import numpy as np
import pytest
from mpi4py import MPI

from conftest import CASES
from solver.case import from_dict, load_case
from solver.cdem.config import Config
from solver.cdem.hex8 import element_step
from solver.cdem.model import model_from_mesh
from solver.cdem.prestep import RTOL, implicit_prestep
from solver.cdem.stiffness import element_stiffness, rigid_body_modes
from solver.cdem.timeloop import ModelView, TimeLoop
from solver.cli import main
from solver.mesh.build import mesh_from_config

NO_PETSC = pytest.mark.skipif(importlib.util.find_spec("petsc4py") is None,
                              reason="petsc4py is not installed")
BACKENDS = ["scipy", pytest.param("petsc", marks=NO_PETSC)]


def _distorted_hex(seed=3):
    corners = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
                        [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]], dtype=float)
    return corners * [2.0, 1.5, 1.0] + 0.15 * np.random.default_rng(seed).random((8, 3))


def test_element_stiffness_is_the_tangent_of_the_explicit_kernel():
    """-f_int of one small kernel step from zero stress equals K du to first order, and the
    six rigid-body modes carry no force."""
    x0 = _distorted_hex()
    lam, mu = np.array([4e9]), np.array([3e9])
    k = element_stiffness(x0[None], lam, mu)[0]
    assert np.allclose(k, k.T, rtol=0, atol=1e-6 * np.abs(k).max())
    assert np.abs(k @ rigid_body_modes(x0)).max() < 1e-6 * np.abs(k).max()
    du = 1e-7 * np.random.default_rng(1).standard_normal((8, 3))
    f_int = np.zeros((8, 3))
    element_step(x0 + du, du, np.zeros((1, 8, 6)), f_int, lam, mu, np.zeros(1, np.int64))
    expected = -(k @ du.ravel()).reshape(8, 3)
    assert np.abs(f_int - expected).max() < 1e-5 * np.abs(expected).max()


def _loop(comm, case: dict | str):
    cfg = load_case(case).config if not isinstance(case, dict) else from_dict(
        Config, case, "prestep-test", "", None)
    mesh = mesh_from_config(cfg.mesh, "prestep-test") if comm.rank == 0 else None
    model = model_from_mesh(comm, cfg, mesh, "prestep-test")
    dt = cfg.time.safety * comm.allreduce(model.dt_limit_local, op=MPI.MIN)
    return cfg, model, TimeLoop(comm, model, cfg.gravity, dt)


def test_gravity_column_is_at_rho_g_h_before_relaxation_and_relaxes_at_once():
    """Base stress from the reactions of the held base dofs equals rho g h within 1e-6 right
    after the prestep; the relaxation then converges in under 5% of the steps it takes
    alone, and the energy balance still closes."""
    comm = MPI.COMM_SELF
    cfg, model, loop = _loop(comm, CASES / "column_gravity.toml")
    stage = cfg.stages[0]
    report = implicit_prestep(comm, loop, stage, "column", backend="scipy")
    view = ModelView(model)
    held = view.fixed[:, 2]
    reaction = -(view.f_int + view.spring_forces() + view.mass[:, None] * loop.g0)[held, 2]
    rho_g_h, base_area = 2500.0 * 9.81 * 10.0, 1.0
    assert abs(reaction.sum() / base_area - rho_g_h) < 1e-6 * rho_g_h
    assert report["overloaded_springs"] == 0
    assert loop.run_stage(stage, []) == "converged"
    with_prestep = loop.step
    energies = loop.update_stored_energy()
    assert abs(energies.error()) < 1e-9 * energies.gravity_work
    _, _, alone = _loop(comm, CASES / "column_gravity.toml")
    assert alone.run_stage(stage, []) == "converged"
    assert with_prestep < 0.05 * alone.step, (with_prestep, alone.step)


def _hanging_block(tmp_path, tensile_strength):
    """A 1 m cube glued under a held 1 m slab: the gravity state pulls its springs with
    rho g h = 24.5 kPa."""
    text = (CASES / "failure_tensile.toml").read_text().split("[[stages]]")[0]
    text = text.replace("tensile_strength = 1e5", f"tensile_strength = {tensile_strength}")
    text += ('[[stages]]\nname = "gravity"\nkind = "relax"\ndamping = "local"\n'
             'prestep = "implicit"\nmax_steps = 300\n')
    case = tmp_path / "hanging.toml"
    case.write_text(text)
    out = tmp_path / "out"
    assert main(["run", str(case), "--out", str(out), "--quiet",
                 "--set", "output.vtk=false"]) == 0
    return json.loads((out / "summary.json").read_text())["results"]


@pytest.mark.parametrize("strength, breaks", [(1.2e4, True), (5e4, False)])
def test_weak_interface_overloaded_by_gravity_breaks_in_the_polish(tmp_path, strength,
                                                                  breaks):
    """T below the 24.5 kPa the hanging cube pulls with: the prestep reports the overloaded
    springs and the relaxation breaks them (the cube falls, no convergence); above it the
    state stays glued and converges at once."""
    r = _hanging_block(tmp_path, strength)
    stage = r["stages"][0]
    glued_face_springs = 16 * 4
    assert stage["prestep"]["overloaded_springs"] == (glued_face_springs if breaks else 0)
    assert r["broken_springs"] == (glued_face_springs if breaks else 0)
    assert stage["converged"] is not breaks
    if not breaks:
        assert stage["steps"] == 2


def _prestep_displacements(comm, backend):
    cfg, model, loop = _loop(comm, SLOPE)
    report = implicit_prestep(comm, loop, cfg.stages[0], "slope", backend=backend)
    n = model.nodes
    gid = (8 * model.elements.gid[:, None] + np.arange(8)).ravel()
    u = np.zeros((8 * model.n_cells_global, 3))
    u[gid] = n.x - n.x0
    total = np.zeros_like(u)
    comm.Allreduce(u, total, op=MPI.SUM)
    return total, report


# A 6 x 3 x 3 block on a held base under a tilted gravity, its top layer glued to the rest by
# a weaker, softer interface: springs cross the partition boundary.
SLOPE = {
    "mesh": {"boxes": [{"n": [6, 3, 3], "size": [6.0, 3.0, 3.0],
                        "layer_groups": ["rock", "rock", "cap"]}]},
    "materials": [{"density": 2600.0, "youngs_modulus": 2e9, "poisson_ratio": 0.25}],
    "interface": {"pairs": [{"groups": ["rock", "cap"], "tensile_strength": 1e5,
                             "cohesion": 1e5, "normal_stiffness": 5e9,
                             "shear_stiffness": 2e9}]},
    "boundaries": [{"box": [-1e9, 1e9, -1e9, 1e9, -1e-6, 1e-6]}],
    "gravity": [3.0, 0.0, -9.3],
    "stages": [{"kind": "relax", "damping": "local", "prestep": "implicit"}],
}


@pytest.mark.mpi(min_size=2)
@pytest.mark.parametrize("backend", BACKENDS)
def test_prestep_on_two_ranks_matches_one_rank(backend):
    """The partitioned prestep (PETSc distributed; scipy gathered to rank 0) reaches the
    same equilibrium as one rank: the unbalance ratio below the prestep's target (1e-3 x
    1e-5) and the displacements within a few times the linear solves' relative tolerance
    RTOL of each other (a partition changes GAMG's aggregates, so its iterates)."""
    comm = MPI.COMM_WORLD
    u_par, report = _prestep_displacements(comm, backend)
    same = None
    if comm.rank == 0:
        u_one, _ = _prestep_displacements(MPI.COMM_SELF, backend)
        scale = np.abs(u_one).max()
        same = np.abs(u_par - u_one).max() / scale
    same = comm.bcast(same, root=0)
    assert report["unbalance_ratio"] < 1e-8
    assert same < 5 * RTOL, same


@NO_PETSC
def test_petsc_and_pyamg_reach_the_same_equilibrium():
    comm = MPI.COMM_SELF
    u, report = _prestep_displacements(comm, "petsc")
    reference, _ = _prestep_displacements(comm, "scipy")
    assert report["solver"] == "petsc cg + gamg"
    assert np.abs(u - reference).max() < 5 * RTOL * np.abs(reference).max()


@pytest.mark.parametrize("stage, words", [
    ('kind = "dynamic"\nduration = 1.0\nprestep = "implicit"', ["stages[0].prestep", "relax"]),
    ('kind = "relax"\nprestep = "implicit"', ["stages[0].prestep", "no equilibrium"]),
])
def test_bad_prestep(tmp_path, capsys, stage, words):
    """A prestep on a dynamic stage, or on a block held by nothing: one line, exit 2."""
    case = tmp_path / "case.toml"
    case.write_text('module = "cdem"\n[mesh]\nboxes = [{n = [1, 1, 1], size = [1, 1, 1]}]\n'
                    '[[materials]]\ndensity = 2500.0\nyoungs_modulus = 1e9\n'
                    f'[[stages]]\n{stage}\n')
    out = tmp_path / "out"
    assert main(["run", str(case), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ")
    assert all(w in err[0] for w in words), err
    assert not out.exists()
