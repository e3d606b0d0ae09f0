"""Checkpoint and restart of the CDEM engine: a run restarted from its checkpoint ends in the
same state, to the last bit, as the run that went through; also on another rank count."""

import dataclasses
import json

import numpy as np
import pytest
from mpi4py import MPI

from solver.case import from_dict
from solver import exact_sum
from solver.cdem import checkpoint, tally
from solver.cdem.config import Config
from solver.cdem.model import model_from_mesh
from solver.cdem.timeloop import Checkpointing, TimeLoop
from solver.errors import InputError
from solver.mesh.build import mesh_from_config

from test_cdem_mpi import CONTACT_CASE

STEPS, AT = 700, 400            # the block lands, springs break, pieces move by step 400


def _positions(comm, model, n_cells):
    gid = (8 * model.elements.gid[:, None] + np.arange(8)).ravel()
    x = np.zeros((8 * n_cells, 3))
    x[gid] = model.nodes.x
    comm.Allreduce(MPI.IN_PLACE, x, op=MPI.SUM)
    return x


def _run(comm, out, restart=False, digest="case-a", at=AT, case=CONTACT_CASE, balanced=False):
    """Run ``case`` to STEPS; with a checkpoint at step ``at`` into ``out``, or restarting
    from it, ``balanced``: on the partition by the checkpoint's work. Returns the final
    positions, the model and the loop."""
    cfg = from_dict(Config, case, "checkpoint-test", "", None)
    mesh = mesh_from_config(cfg.mesh, "checkpoint-test")
    work = (checkpoint.element_work(out, digest, mesh.n_cells, "checkpoint-test")
            if balanced and comm.rank == 0 else None)
    model = model_from_mesh(comm, cfg, mesh, "checkpoint-test", work)
    loop = TimeLoop(comm, model, cfg.gravity,
                    0.5 * comm.allreduce(model.dt_limit_local, op=MPI.MIN))
    clock = None
    if restart:
        clock = checkpoint.load(comm, out, digest, loop, [], "checkpoint-test")["clock"]
    else:
        loop.checkpoint = Checkpointing(
            lambda: loop.step == at and checkpoint.save(comm, out, digest, loop, 0, [], {}),
            every_steps=1 if at != AT else AT)
    loop.run_stage(dataclasses.replace(cfg.stages[0], max_steps=STEPS), [], clock=clock)
    return _positions(comm, model, mesh.n_cells), model, loop


def _steps_after_a_break() -> list[int]:
    """The steps after which springs had just broken: the contact's partial renewal of the
    fresh faces is still to come when a checkpoint is written there."""
    cfg = from_dict(Config, CONTACT_CASE, "checkpoint-test", "", None)
    model = model_from_mesh(MPI.COMM_SELF, cfg, mesh_from_config(cfg.mesh, "checkpoint-test"),
                            "checkpoint-test")
    loop = TimeLoop(MPI.COMM_SELF, model, cfg.gravity, 0.5 * model.dt_limit_local)
    steps = []
    loop.checkpoint = Checkpointing(
        lambda: model.contact.pending is not None and steps.append(loop.step),
        every_steps=1)
    loop.run_stage(dataclasses.replace(cfg.stages[0], max_steps=STEPS), [])
    return steps


@pytest.mark.parametrize("after_break", [False, True], ids=["step 400", "after a break"])
def test_restart_continues_to_the_last_bit(tmp_path, after_break):
    at = AT
    if after_break:
        at = _steps_after_a_break()[-1]
    x_through, model, loop = _run(MPI.COMM_SELF, tmp_path, at=at)
    x_restart, restarted, again = _run(MPI.COMM_SELF, tmp_path, restart=True, at=at)
    assert np.count_nonzero(model.springs.state) > 0 and model.contact.renewals > 2
    assert np.array_equal(x_restart, x_through)
    assert again.step == loop.step == STEPS
    assert restarted.contact.summary() == model.contact.summary()
    through, restored = (dataclasses.asdict(run.update_stored_energy()) for run in (loop, again))
    assert restored == through


def test_restart_in_the_middle_of_a_weakening_continues_to_the_last_bit(tmp_path):
    """The block's own interfaces lose their strength over twice the 700 steps (a weakening
    pair): the checkpoint at step 400 carries the time the ramp has run, so the restart
    breaks the same springs at the same steps."""
    case = {**CONTACT_CASE, "interface": {"pairs": [
        {"groups": ["block", "block"], "tensile_strength": 0.0, "cohesion": 0.0,
         "friction_deg": 30.0, "weakening_time": 0.03}]}}
    x_through, model, loop = _run(MPI.COMM_SELF, tmp_path, case=case)
    x_restart, restarted, again = _run(MPI.COMM_SELF, tmp_path, restart=True, case=case)
    assert 0.0 < restarted.springs.cohesion.min() < 0.6 * model.springs.cohesion.max()
    assert np.array_equal(restarted.springs.state, model.springs.state)
    assert np.array_equal(x_restart, x_through)
    assert again.weakening_clock == loop.weakening_clock


def test_element_work_counts_the_records_of_each_element(tmp_path):
    cfg = from_dict(Config, CONTACT_CASE, "checkpoint-test", "", None)
    mesh = mesh_from_config(cfg.mesh, "checkpoint-test")
    model = model_from_mesh(MPI.COMM_SELF, cfg, mesh, "checkpoint-test")
    loop = TimeLoop(MPI.COMM_SELF, model, cfg.gravity, 0.5 * model.dt_limit_local)
    loop.run_stage(dataclasses.replace(cfg.stages[0], max_steps=AT), [])
    checkpoint.save(MPI.COMM_SELF, tmp_path, "case-a", loop, 0, [], {})
    work = checkpoint.element_work(tmp_path, "case-a", mesh.n_cells, "checkpoint-test")
    c = model.contact
    records = np.concatenate([c.own.gid[c.semi_springs.elem], c.own.gid[c.semi_edges.elem]])
    targets = np.count_nonzero(c.candidates >= 0, axis=1)
    assert np.count_nonzero(model.springs.state) > 0 and targets.sum() > 0
    expected = (checkpoint.ELEMENT_WORK
                + checkpoint.RECORD_WORK * np.bincount(records, minlength=len(work))
                + checkpoint.CANDIDATE_WORK * np.bincount(c.own.gid[c.semi_springs.elem],
                                                          weights=targets,
                                                          minlength=len(work)))
    assert np.array_equal(work, expected)


def test_restart_refuses_a_checkpoint_of_another_case(tmp_path):
    _run(MPI.COMM_SELF, tmp_path)
    with pytest.raises(InputError, match="another case"):
        _run(MPI.COMM_SELF, tmp_path, restart=True, digest="case-b")


def test_restart_refuses_a_checkpoint_of_another_format(tmp_path):
    """A checkpoint written by a solver whose tables differ (version 1 had no semi-spring
    offsets and no version field, and its manifest no checksums) is refused with a clear
    error, not read into a state it does not fill."""
    _run(MPI.COMM_SELF, tmp_path)
    path = tmp_path / "checkpoint" / "manifest.json"
    manifest = json.loads(path.read_text())
    assert manifest["tables"] == checkpoint.TABLES
    for written_later in ("tables", "checksum", "files"):
        del manifest[written_later]
    path.write_text(json.dumps(dict(manifest, format=1)))
    with pytest.raises(InputError, match="another version of the solver"):
        _run(MPI.COMM_SELF, tmp_path, restart=True)


@pytest.mark.mpi(min_size=2)
@pytest.mark.parametrize("after_break", [False, True], ids=["step 400", "after a break"])
def test_restart_on_another_rank_count_continues_to_the_last_bit(mpi_tmp_path, after_break):
    comm = MPI.COMM_WORLD
    at = _steps_after_a_break()[-1] if after_break else AT
    x_parallel, _, loop = _run(comm, mpi_tmp_path / "parallel", at=at)
    x_from_parallel, _, again = _run(MPI.COMM_SELF, mpi_tmp_path / "parallel", restart=True,
                                     at=at)
    assert np.array_equal(x_from_parallel, x_parallel)
    released = tally.totals(comm, loop.tally, ["released"])["released"]
    assert tally.value(again.tally, "released") == exact_sum.value(released) > 0
    through, restored = (dataclasses.asdict(run.update_stored_energy()) for run in (loop, again))
    assert restored == through
    if comm.rank == 0:
        _run(MPI.COMM_SELF, mpi_tmp_path / "serial", at=at)
    comm.Barrier()
    x_from_serial, _, _ = _run(comm, mpi_tmp_path / "serial", restart=True, at=at)
    assert np.array_equal(x_from_serial, x_parallel)


@pytest.mark.mpi(min_size=2)
def test_restart_on_the_partition_by_work_continues_to_the_last_bit(mpi_tmp_path):
    """At step 400 the block's pieces carry 48 contact records each, the slab's elements 16
    to 32: METIS by element count gives one rank far more records than the other."""
    comm = MPI.COMM_WORLD
    metis = dict(CONTACT_CASE, partitioner="metis")
    x_through, _, _ = _run(comm, mpi_tmp_path, case=metis)
    _, plain, _ = _run(comm, mpi_tmp_path, restart=True, case=metis)
    x_balanced, balanced, _ = _run(comm, mpi_tmp_path, restart=True, case=metis, balanced=True)
    work = checkpoint.element_work(mpi_tmp_path, "case-a", 24, "checkpoint-test")
    most = {name: comm.allreduce(int(work[m.elements.gid].sum()), op=MPI.MAX)
            for name, m in (("plain", plain), ("balanced", balanced))}
    assert most["balanced"] <= work.sum() / comm.size + work.max() < most["plain"]
    assert np.array_equal(x_balanced, x_through)


@pytest.mark.mpi(min_size=2)
@pytest.mark.parametrize("partitioner, n_ranks, keep, kept", [
    ("rcb", 0, True, True),           # as written, even work: kept
    ("rcb", 0, False, False),         # a rebalance: always by the work
    ("rcb", 1, True, False),          # another rank count
    ("metis", 0, True, False),        # by element count, one rank far more records
])
def test_a_restart_keeps_the_checkpoints_partition_where_its_work_is_even(
        mpi_tmp_path, partitioner, n_ranks, keep, kept):
    """solver.cdem.checkpoint.restart_partition: the partition the run had, each element on
    the rank that wrote it, where the restart has as many ranks and their work is within
    KEEP_PARTITION_BELOW of even; else the work per element to partition by."""
    comm = MPI.COMM_WORLD
    _, model, _ = _run(comm, mpi_tmp_path, case=dict(CONTACT_CASE, partitioner=partitioner))
    written = np.zeros(24, dtype=np.int64)
    written[model.elements.gid] = comm.rank
    written = comm.allreduce(written, op=MPI.SUM)
    parts, work = checkpoint.restart_partition(mpi_tmp_path, "case-a", 24, comm.size + n_ranks,
                                               "checkpoint-test", keep=keep)
    per_rank = np.bincount(written, weights=checkpoint.element_work(
        mpi_tmp_path, "case-a", 24, "checkpoint-test"))
    even = per_rank.max() <= checkpoint.KEEP_PARTITION_BELOW * per_rank.mean()
    if kept:
        assert even and np.array_equal(parts, written) and work is None
    else:
        assert parts is None and work is not None
        assert even or partitioner == "metis"


@pytest.mark.mpi(min_size=2)
@pytest.mark.parametrize("partitioner", ["rcb", "metis"],
                         ids=["partition kept", "partitioned anew by the work"])
def test_a_restart_gives_the_energy_figures_to_the_last_bit(mpi_tmp_path, capsys, partitioner):
    """On 2 ranks, a run that checkpoints at step 400 and the restart from that checkpoint
    end with the same summary energy figures, to the last bit, whether the restart keeps
    the partition (RCB, even work) or partitions anew by the work (METIS by element count,
    uneven): the tallies are exact sums (springs broken, contacts sliding and damped before
    the checkpoint), and the loaded dashpots' work of the last step's forces is booked with
    the last step's weights and target nodes the checkpoint keeps."""
    from solver.cli import main
    from solver.io.toml import dumps

    comm = MPI.COMM_WORLD
    case = mpi_tmp_path / "contact.toml"
    if comm.rank == 0:
        case.write_text(dumps({"module": "cdem", "name": "contact", **CONTACT_CASE,
                               "partitioner": partitioner, "output": {"vtk": False}}))
    comm.Barrier()
    out, steps = mpi_tmp_path / "run", ["--set", f"stages[0].max_steps={STEPS}"]
    capsys.readouterr()
    assert main(["run", str(case), "--out", str(out), "--quiet", "--checkpoint-every", str(AT),
                 *steps]) == 0
    through = json.loads((out / "summary.json").read_text())["results"]
    assert main(["run", str(case), "--restart", str(out), "--quiet", *steps]) == 0
    restarted = json.loads((out / "summary.json").read_text())["results"]
    assert capsys.readouterr().err == ""
    assert through["broken_springs"] > 0 and through["contact"]["sliding"] > 0
    assert restarted["energy"] == through["energy"]
    assert restarted["energy_error"] == through["energy_error"]
