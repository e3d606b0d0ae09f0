"""The Python API under mpiexec (run by `mpiexec -n 2 python -m pytest --only-mpi`): every
rank calls ``run_case`` and gets the run the case gives on one rank."""

import pytest
from mpi4py import MPI

import solver
from conftest import CASES
from test_api import SHORT_SLIDE

MOTION = ("time", "max_displacement", "acceleration_numeric", "tilt_deg", "unbalance_ratio",
          "stages")
"""The results of the motion, the same to the last bit on any number of ranks (the energy
tallies are sums over the ranks: the same to round-off)."""
SHORTER_SLIDE = {**SHORT_SLIDE, "stages[2].duration": 0.01}


@pytest.mark.mpi(min_size=2)
def test_two_ranks_calling_run_case_give_the_one_rank_results(mpi_tmp_path):
    comm = MPI.COMM_WORLD
    spread = solver.run_case(CASES / "sliding_block.toml", out=mpi_tmp_path / "ranks",
                             overrides=SHORTER_SLIDE)
    assert spread.summary["ranks"] == comm.size
    assert spread.summary == solver.load_run(mpi_tmp_path / "ranks").summary
    same = None
    if comm.rank == 0:
        alone = solver.run_case(CASES / "sliding_block.toml", out=mpi_tmp_path / "alone",
                                overrides=SHORTER_SLIDE, comm=MPI.COMM_SELF)
        assert alone.summary["ranks"] == 1
        same = ({k: spread.results[k] for k in MOTION} == {k: alone.results[k] for k in MOTION}
                and spread.results["energy"] == pytest.approx(alone.results["energy"],
                                                              rel=1e-12, abs=1e-12)
                and spread.summary["steps"] == alone.summary["steps"]
                and spread.frames()[-1][1].n_cells == alone.frames()[-1][1].n_cells)
    assert comm.bcast(same, root=0)
