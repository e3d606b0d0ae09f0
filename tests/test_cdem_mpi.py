"""In-process MPI tests (run by `mpiexec -n 2 python -m pytest --only-mpi`): the partitioned
model with its ghost-node halo, and with contact and ghost faces, reproduces the serial
model to the last bit (every sum that feeds the motion is taken in a partition-independent
order); ranks that share no contact exchange nothing; arrays held per rank shrink with the
rank count."""

import time

import numpy as np
import pytest
from mpi4py import MPI

from conftest import CASES
from solver.case import from_dict
from solver.cdem.config import Config
from solver.cdem.model import build_model, model_from_mesh
from solver.cdem.run import _work_imbalance
from solver.cdem.timeloop import TimeLoop
from solver.mesh.build import mesh_from_config
from solver.mesh.distribute import distribute
from solver.mesh.measures import measure
from solver.parallel import global_median

CASE = {
    "mesh": {"boxes": [{"n": [4, 3, 2], "size": [4.0, 3.0, 2.0]}]},
    "materials": [{"density": 2500.0, "youngs_modulus": 1e8, "poisson_ratio": 0.2,
                   "tensile_strength": 2e3, "cohesion": 4e3, "friction_deg": 30.0}],
    "boundaries": [{"box": [-1e9, 1e9, -1e9, 1e9, -1e-6, 1e-6]},
                   {"box": [3.999, 1e9, -1e9, 1e9, -1e9, 1e9], "velocity": [0.5, 0.0, 0.2]}],
    "stages": [{"kind": "dynamic", "max_steps": 300, "damping": "local"}],
}

# A glued 2x2x2 block, turned 30 deg, drops from 3 mm on a fixed slab of 16 elements under
# 400 m/s^2 (so that it lands within 300 steps): it lands on a corner, its interface springs
# break, pieces bounce and rock on the slab and on each other.
CONTACT_CASE = {
    "gravity": [0.0, 0.0, -400.0],
    "mesh": {"boxes": [
        {"n": [4, 4, 1], "size": [2.0, 2.0, 0.25], "origin": [-1.0, -1.0, -0.25],
         "group": "base"},
        {"n": [2, 2, 2], "size": [0.6, 0.6, 0.6], "origin": [-0.3, -0.3, 0.175],
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
    model = model_from_mesh(comm, cfg, mesh, "mpi-test")
    dt = comm.allreduce(model.dt_limit_local, op=MPI.MIN) * 0.5
    loop = TimeLoop(comm, model, cfg.gravity, dt)
    loop.run_stage(cfg.stages[0], [])
    gid = (8 * model.elements.gid[:, None] + np.arange(8)).ravel()
    x = np.zeros((8 * mesh.n_cells, 3))
    x[gid] = model.nodes.x
    total = np.zeros_like(x)
    comm.Allreduce(x, total, op=MPI.SUM)
    broken = comm.allreduce(int(np.count_nonzero(model.springs.state)), op=MPI.SUM)
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


# A column of 2 x 2 x 4 separate blocks sliding and toppling on a slab under gravity tilted
# 45 deg: contacts between blocks of different ranks open and close, and blocks travel
# over the slab across the partition.
HEAP_CASE = {
    "mesh": {"boxes": [
        {"n": [6, 4, 1], "size": [3.0, 2.0, 0.25], "origin": [-1.0, -1.0, -0.25],
         "group": "base"},
        {"n": [2, 2, 4], "size": [0.5, 0.5, 1.0], "origin": [-0.25, -0.25, 0.0],
         "group": "column", "separate": True}]},
    "materials": [{"density": 2600.0, "youngs_modulus": 5e8, "poisson_ratio": 0.25}],
    "contact": {"enabled": True, "friction_deg": 20.0, "restitution": 0.3},
    "boundaries": [{"group": "base"}],
    "gravity": [6.94, 0.0, -6.94],
    "stages": [{"kind": "dynamic", "max_steps": 6000, "damping": "none"}],
    "partitioner": "rcb",
}


def _heap_run(comm, case):
    cfg = from_dict(Config, case, "mpi-test", "", None)
    mesh = mesh_from_config(cfg.mesh, "mpi-test")
    model = model_from_mesh(comm, cfg, mesh, "mpi-test")
    dt = comm.allreduce(model.dt_limit_local, op=MPI.MIN) * 0.5
    loop = TimeLoop(comm, model, cfg.gravity, dt)
    ghosts = []

    def watch(record):
        c = model.contact
        if record.step % 100 == 0:
            ghosts.append(frozenset(c.mesh.gid[c.mesh.n_own:].tolist()))

    loop.run_stage(cfg.stages[0], [watch])
    gid = (8 * model.elements.gid[:, None] + np.arange(8)).ravel()
    x = np.zeros((8 * mesh.n_cells, 3))
    x[gid] = model.nodes.x
    comm.Allreduce(MPI.IN_PLACE, x, op=MPI.SUM)
    return x, model, ghosts


@pytest.mark.mpi(min_size=2)
def test_fragmented_heap_moves_the_same_to_the_last_bit_with_ghost_contacts():
    comm = MPI.COMM_WORLD
    x_par, model, ghosts = _heap_run(comm, HEAP_CASE)
    x_ser, serial, _ = _heap_run(MPI.COMM_SELF, HEAP_CASE)
    assert np.abs(x_ser - x_par).max() == 0.0, np.abs(x_ser - x_par).max()
    assert np.linalg.norm(serial.nodes.x - serial.nodes.x0, axis=1).max() > 0.1  # it moved
    assert model.contact.summary() == serial.contact.summary()
    assert comm.allreduce(model.contact.traffic.sent) > 0         # shares crossed ranks
    assert comm.allreduce(len(set(ghosts)) > 1, op=MPI.LOR)        # the ghost set changed


@pytest.mark.mpi(min_size=2)
def test_piles_on_separate_ranks_exchange_no_contact_bytes():
    comm = MPI.COMM_WORLD
    piles = [{"n": [2, 2, 3], "size": [0.5, 0.5, 0.75], "origin": [100.0 * k, 0.0, 0.0],
              "group": f"pile{k}", "separate": True} for k in range(comm.size)]
    bases = [{"n": [3, 3, 1], "size": [1.5, 1.5, 0.25], "origin": [100.0 * k - 0.5, -0.5, -0.25],
              "group": "base"} for k in range(comm.size)]
    case = dict(HEAP_CASE, mesh={"boxes": bases + piles},
                stages=[{"kind": "dynamic", "max_steps": 300, "damping": "none"}])
    cfg = from_dict(Config, case, "mpi-test", "", None)
    model = model_from_mesh(comm, cfg, mesh_from_config(cfg.mesh, "mpi-test"), "mpi-test")
    loop = TimeLoop(comm, model, cfg.gravity, 0.5 * comm.allreduce(model.dt_limit_local,
                                                                  op=MPI.MIN))
    loop.one_step(np.asarray(cfg.gravity), cfg.stages[0])
    contact = model.contact
    before = (contact.traffic.sent, contact.traffic.received)
    loop.run_stage(cfg.stages[0], [])
    assert contact.renewals > 1 and contact.neighbours.ranks == []
    assert (contact.traffic.sent, contact.traffic.received) == before == (0, 0)
    assert comm.allreduce(int(np.count_nonzero(contact.semi_springs.f_n > 0))) > 0


def _slow_contact_forces_on_rank_1(monkeypatch, comm):
    """Rank 1 spends 20 ms more per step in its contact forces, after the contact
    geometry, elements and springs."""
    from solver.cdem.contact.pipeline import Contact

    forces = Contact.forces

    def slow_on_rank_1(self):
        if comm.rank == 1:
            time.sleep(0.02)
        return forces(self)

    monkeypatch.setattr(Contact, "forces", slow_on_rank_1)


@pytest.mark.mpi(min_size=2)
def test_work_imbalance_counts_a_slow_rank_and_not_the_others_wait(monkeypatch):
    """The measure ``--rebalance-above`` acts on: rank 1 spends 20 ms more per step in its
    contact forces (after the contact geometry, elements and springs, where a measure of
    the time between the step's exchanges did not look); the other ranks wait for it in the
    exchanges, which is not work. Its 0.4 s over 20 steps make it the busiest by far."""
    comm = MPI.COMM_WORLD
    cfg = from_dict(Config, CONTACT_CASE, "mpi-test", "", None)
    model = model_from_mesh(comm, cfg, mesh_from_config(cfg.mesh, "mpi-test"), "mpi-test")
    loop = TimeLoop(comm, model, cfg.gravity, 0.5 * comm.allreduce(model.dt_limit_local,
                                                                  op=MPI.MIN))
    g, stage = np.asarray(cfg.gravity), cfg.stages[0]
    loop.one_step(g, stage)
    _slow_contact_forces_on_rank_1(monkeypatch, comm)
    loop.busy_seconds = 0.0
    for _ in range(20):
        loop.one_step(g, stage)
    busy = comm.allgather(loop.busy_seconds)
    assert busy[1] > 0.4 and max(busy[:1] + busy[2:]) < 0.2, busy
    assert _work_imbalance(comm, loop) > 1.5 and loop.busy_seconds == 0.0


@pytest.mark.mpi(min_size=2)
def test_summary_says_where_each_ranks_time_went(tmp_path, monkeypatch):
    """summary.json's ``timing``: rank 1, 20 ms slower per step in its contact forces,
    is the busiest by far (``work_imbalance``), the other ranks wait for it in the
    exchanges (``waiting_s``), and every rank's steps fit in the run's wall time."""
    import json

    from solver.cli import main

    comm = MPI.COMM_WORLD
    out = comm.bcast(tmp_path, root=0) / "out"
    _slow_contact_forces_on_rank_1(monkeypatch, comm)
    case = str(CASES / "fractured_column.toml")
    assert main(["run", case, "--out", str(out), "--quiet", "--set", "output.vtk=false",
                 "--set", "stages[0].max_steps=20"]) == 0
    comm.Barrier()
    s = json.loads((out / "summary.json").read_text())
    t = s["timing"]
    assert len(t["steps_s"]) == len(t["waiting_s"]) == len(t["contact_s"]) == comm.size
    assert max(t["steps_s"]) < s["wall_s"] and t["work_imbalance"] > 1.5
    assert t["steps_s"][1] - t["waiting_s"][1] > 0.4
    assert min(t["waiting_s"][:1] + t["waiting_s"][2:]) > 0.3


@pytest.mark.mpi(min_size=2)
def test_arrays_held_per_rank_shrink_with_the_rank_count():
    """Each of 2 ranks holds about half the serial model (no array sized by the mesh)."""
    comm = MPI.COMM_WORLD
    case = dict(CASE, mesh={"boxes": [{"n": [6, 6, 8], "size": [3.0, 3.0, 4.0]}]},
                contact={"enabled": True})
    cfg = from_dict(Config, case, "mpi-test", "", None)
    mesh = mesh_from_config(cfg.mesh, "mpi-test")
    measures = measure(mesh, "mpi-test")
    part = distribute(comm, mesh, measures, cfg.partitioner)
    serial_part = distribute(MPI.COMM_SELF, mesh, measures, cfg.partitioner)
    model = build_model(comm, cfg, part, "mpi-test")
    serial = build_model(MPI.COMM_SELF, cfg, serial_part, "mpi-test")
    share = 1.0 / comm.size
    assert comm.allreduce(part.nbytes(), op=MPI.MAX) < 1.2 * share * serial_part.nbytes()
    assert comm.allreduce(model.nbytes(), op=MPI.MAX) < 1.2 * share * serial.nbytes()


@pytest.mark.mpi(min_size=2)
def test_global_median_is_the_median_of_all_values():
    comm = MPI.COMM_WORLD
    values = np.random.default_rng(comm.rank).random(5 + 3 * comm.rank) * 10.0
    everything = np.concatenate(comm.allgather(values))
    assert global_median(comm, values) == np.median(everything)
    assert global_median(comm, values[: 1 if comm.rank == 0 else 0]) == \
        np.median(np.concatenate(comm.allgather(values[: 1 if comm.rank == 0 else 0])))
