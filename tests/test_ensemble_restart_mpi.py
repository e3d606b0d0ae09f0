"""In-process MPI test (run by `mpiexec -n 2 python -m pytest --only-mpi`): a point-mass sweep
on two or more ranks, stopped by SIGTERM sent to rank 1 alone, stops on all ranks with a
checkpoint of both runs under way; a restart on one rank ends with the results and files of
the sweep run through on one rank."""

import os
import signal
import threading
import time

import pytest
from conftest import CASES
from mpi4py import MPI

from solver import interrupt
from solver.case import load_case
from solver.context import RunContext
from solver.io.checkpoint import read_manifest
from solver.pointmass.run import run

OVERRIDES = ["sweep.runs=[[3, 20.0, 0.0], [4, 55.0, 0.0]]", "time.t_end=8.0",
             "output.plot=false"]


def _files(out):
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and "checkpoint" not in p.parts}


def _signal_self_once(path):
    """SIGTERM to this process as soon as ``path`` exists."""
    def watch():
        while not path.exists():
            time.sleep(0.001)
        os.kill(os.getpid(), signal.SIGTERM)
    threading.Thread(target=watch, daemon=True).start()


@pytest.mark.mpi(min_size=2)
def test_sweep_stopped_on_two_ranks_restarts_on_one(mpi_tmp_path):
    comm = MPI.COMM_WORLD
    case = load_case(CASES / "sphere_cup.toml", OVERRIDES)
    cut, through = mpi_tmp_path / "cut", mpi_tmp_path / "through"
    if comm.rank == 0:
        cut.mkdir()
    comm.Barrier()
    if comm.rank == 1:
        _signal_self_once(cut / "checkpoint" / "manifest.json")
    with interrupt.catching_signals(), pytest.raises(interrupt.Interrupted) as stopped:
        run(case, RunContext(comm=comm, out_dir=cut, quiet=True, checkpoint_steps=50))
    assert stopped.value.signum == signal.SIGTERM      # on rank 0 too, which got no signal
    manifest = read_manifest(cut / "checkpoint")
    assert manifest["ranks"] == comm.size and not manifest["done"]
    assert [entry[0] for entry in manifest["flight"]] == [0, 1]        # the sweep's 2 runs
    assert all(entry[1] > 0 for entry in manifest["flight"])
    same = None
    if comm.rank == 0:
        through.mkdir()
        expected = run(case, RunContext(comm=MPI.COMM_SELF, out_dir=through, quiet=True))
        resumed = run(case, RunContext(comm=MPI.COMM_SELF, out_dir=cut, quiet=True,
                                       checkpoint_steps=50, restart=True))
        same = resumed.results == expected.results and _files(cut) == _files(through)
    assert comm.bcast(same, root=0)
