"""In-process MPI test (run by `mpiexec -n 2 python -m pytest --only-mpi`): a rockfall ensemble
handed out over the ranks gives the results and tables of the same ensemble on one rank."""

import pytest
from conftest import CASES, same_over_ranks_and_alone

from solver.case import load_case
from solver.rockfall.run import run

OVERRIDES = ["ensemble.vary.aspect_ratio.values=[1.0, 3.0]",
             "ensemble.vary.omega_0.values=[0.0, 5000.0]", "motion.max_impacts=1",
             "output.plots=false", "output.vtk=false", "output.trajectories=false"]
TABLES = ("blocks", "impacts", "jumps", "barriers", "envelopes")


@pytest.mark.mpi(min_size=2)
def test_ensemble_over_ranks_matches_one_rank(tmp_path):
    case = load_case(CASES / "biplanar_rockfall.toml", OVERRIDES)
    same, results = same_over_ranks_and_alone(
        run, case, tmp_path, [f"biplanar_rockfall_{t}.csv" for t in TABLES])
    assert same and results["n_blocks"] == 4 and results["n_impacts"] >= 4
