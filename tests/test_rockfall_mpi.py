"""In-process MPI test (run by `mpiexec -n 2 python -m pytest --only-mpi`): a rockfall ensemble
handed out over the ranks gives the results and tables of the same ensemble on one rank."""

import pytest
from conftest import CASES
from mpi4py import MPI

from solver.case import load_case
from solver.context import RunContext
from solver.rockfall.run import run

OVERRIDES = ["ensemble.vary.aspect_ratio.values=[1.0, 3.0]",
             "ensemble.vary.omega_0.values=[0.0, 5000.0]", "motion.max_impacts=1",
             "output.plots=false", "output.vtk=false", "output.trajectories=false"]
TABLES = ("blocks", "impacts", "jumps", "barriers", "envelopes")


@pytest.mark.mpi(min_size=2)
def test_ensemble_over_ranks_matches_one_rank(tmp_path):
    comm = MPI.COMM_WORLD
    base = comm.bcast(tmp_path, root=0)
    case = load_case(CASES / "biplanar_rockfall.toml", OVERRIDES)
    (base / "all").mkdir(exist_ok=True)
    spread = run(case, RunContext(comm=comm, out_dir=base / "all", quiet=True))
    same = None
    if comm.rank == 0:
        (base / "one").mkdir()
        alone = run(case, RunContext(comm=MPI.COMM_SELF, out_dir=base / "one", quiet=True))
        same = [spread.results == alone.results] + [
            (base / "all" / f"biplanar_rockfall_{t}.csv").read_text()
            == (base / "one" / f"biplanar_rockfall_{t}.csv").read_text() for t in TABLES]
        assert spread.results["n_blocks"] == 4
    assert comm.bcast(same, root=0) == [True] * (1 + len(TABLES))
