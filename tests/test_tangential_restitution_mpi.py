"""In-process MPI test (run by `mpiexec -n 2 python -m pytest --only-mpi`): the e_t map spread
over the ranks equals the map computed by one rank."""

import pytest

from solver.case import load_case
from solver.contact_laws.run import run
from conftest import CASES, same_over_ranks_and_alone

OVERRIDES = ["grid.n_gt=24", "grid.n_kt=7", "steps=1000", "small_gt.steps=20000",
             "output.plot=false"]


@pytest.mark.mpi(min_size=2)
def test_map_over_ranks_matches_one_rank(tmp_path):
    case = load_case(CASES / "tangential_restitution.toml", OVERRIDES)
    same, _ = same_over_ranks_and_alone(run, case, tmp_path, ["e_t_map.csv"])
    assert same
