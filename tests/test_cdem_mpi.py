"""In-process MPI tests (run by `mpiexec -n 2 python -m pytest --only-mpi`): the partitioned
model with its ghost-node halo reproduces the serial model step by step."""

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


def _final_positions(comm, steps=300):
    cfg = from_dict(Config, CASE, "mpi-test", "", None)
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
    return total, broken, loop.unbalance


@pytest.mark.mpi(min_size=2)
def test_partitioned_run_matches_serial_run():
    comm = MPI.COMM_WORLD
    x_par, broken_par, unb_par = _final_positions(comm)
    x_ser, broken_ser, unb_ser = _final_positions(MPI.COMM_SELF)
    assert broken_ser > 0                       # the pull really breaks springs
    assert broken_par == broken_ser
    np.testing.assert_allclose(x_par, x_ser, rtol=0, atol=1e-9 * np.abs(x_ser).max())
    assert abs(unb_par - unb_ser) <= 1e-9 * abs(unb_ser)
