"""In-process MPI tests (run by `mpiexec -n 2 python -m pytest --only-mpi`): the partitioned
model with its ghost-node halo, and with contact, reproduces the serial model to the last
bit (every sum that feeds the motion is taken in a partition-independent order)."""

import numpy as np
import pytest
from mpi4py import MPI

from solver.case import from_dict
from solver.cdem.config import Config
from solver.cdem.model import build_local_model
from solver.cdem.timeloop import TimeLoop
from solver.mesh.build import mesh_from_config

CASE = {
    "mesh": {"boxes": [{"n": [4, 3, 2], "size": [4.0, 3.0, 2.0]}]},
    "materials": [{"density": 2500.0, "youngs_modulus": 1e8, "poisson_ratio": 0.2,
                   "tensile_strength": 2e3, "cohesion": 4e3, "friction_deg": 30.0}],
    "boundaries": [{"box": [-1e9, 1e9, -1e9, 1e9, -1e-6, 1e-6]},
                   {"box": [3.999, 1e9, -1e9, 1e9, -1e9, 1e9], "velocity": [0.5, 0.0, 0.2]}],
    "stages": [{"kind": "dynamic", "max_steps": 300, "damping": "local"}],
}

# A glued 2x2x2 block, turned 30 deg, drops on a fixed slab of 16 elements: it lands on a
# corner, its interface springs break, pieces bounce and rock on the slab and on each other.
CONTACT_CASE = {
    "mesh": {"boxes": [
        {"n": [4, 4, 1], "size": [2.0, 2.0, 0.25], "origin": [-1.0, -1.0, -0.25],
         "group": "base"},
        {"n": [2, 2, 2], "size": [0.6, 0.6, 0.6], "origin": [-0.3, -0.3, 0.15],
         "group": "block", "rotate_deg": 30.0, "rotate_axis": [1.0, 1.0, 0.0]}]},
    "materials": [{"density": 2500.0, "youngs_modulus": 1e9, "poisson_ratio": 0.25,
                   "tensile_strength": 2e4, "cohesion": 4e4, "friction_deg": 30.0}],
    "contact": {"enabled": True, "friction_deg": 30.0, "restitution": 0.3},
    "boundaries": [{"group": "base"}],
    "stages": [{"kind": "dynamic", "max_steps": 4000, "damping": "none"}],
    "partitioner": "rcb",
}


def _final_positions(comm, case=CASE):
    cfg = from_dict(Config, case, "mpi-test", "", None)
    mesh = mesh_from_config(cfg.mesh, "mpi-test")
    model = build_local_model(comm, cfg, mesh, "mpi-test")
    dt = comm.allreduce(model.dt_limit_local, op=MPI.MIN) * 0.5
    loop = TimeLoop(comm, model, cfg.gravity, dt)
    loop.run_stage(cfg.stages[0], [])
    gid = (8 * model.elem_gid[:, None] + np.arange(8)).ravel()
    x = np.zeros((8 * mesh.n_cells, 3))
    x[gid] = model.x[: model.n_own]
    total = np.zeros_like(x)
    comm.Allreduce(x, total, op=MPI.SUM)
    broken = comm.allreduce(int(np.count_nonzero(model.state)), op=MPI.SUM)
    contact = model.contact.summary() if model.contact is not None else None
    return total, broken, loop.unbalance, contact


@pytest.mark.mpi(min_size=2)
def test_partitioned_run_matches_serial_run():
    comm = MPI.COMM_WORLD
    x_par, broken_par, unb_par, _ = _final_positions(comm)
    x_ser, broken_ser, unb_ser, _ = _final_positions(MPI.COMM_SELF)
    assert broken_ser > 0                       # the pull really breaks springs
    assert broken_par == broken_ser
    assert np.array_equal(x_par, x_ser), np.abs(x_par - x_ser).max()
    assert abs(unb_par - unb_ser) <= 1e-12 * abs(unb_ser)   # a sum over ranks


@pytest.mark.mpi(min_size=2)
def test_partitioned_run_with_contact_and_breakage_matches_serial_run_exactly():
    comm = MPI.COMM_WORLD
    x_par, broken_par, _, contact_par = _final_positions(comm, CONTACT_CASE)
    x_ser, broken_ser, _, contact_ser = _final_positions(MPI.COMM_SELF, CONTACT_CASE)
    assert broken_ser > 0 and contact_ser["renewals"] > 1
    assert {"vertex-face", "edge-face", "face-face", "edge-edge"} <= set(
        contact_ser["types_seen"])
    assert broken_par == broken_ser and contact_par == contact_ser
    assert np.array_equal(x_par, x_ser), np.abs(x_par - x_ser).max()
