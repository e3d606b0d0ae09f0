"""In-process MPI test (run by `mpiexec -n 2 python -m pytest --only-mpi`): the e_t map spread
over the ranks equals the map computed by one rank."""

import pytest
from mpi4py import MPI

from solver.case import load_case
from solver.contact_laws.run import run
from solver.context import RunContext
from conftest import CASES

OVERRIDES = ["grid.n_gt=24", "grid.n_kt=7", "steps=1000", "small_gt.steps=20000",
             "output.plot=false"]


@pytest.mark.mpi(min_size=2)
def test_map_over_ranks_matches_one_rank(tmp_path):
    comm = MPI.COMM_WORLD
    base = comm.bcast(tmp_path, root=0)
    case = load_case(CASES / "tangential_restitution.toml", OVERRIDES)
    (base / "all").mkdir(exist_ok=True)
    spread = run(case, RunContext(comm=comm, out_dir=base / "all", quiet=True))
    same = None
    if comm.rank == 0:
        (base / "one").mkdir()
        alone = run(case, RunContext(comm=MPI.COMM_SELF, out_dir=base / "one", quiet=True))
        same = (spread.results == alone.results,
                (base / "all" / "e_t_map.csv").read_text()
                == (base / "one" / "e_t_map.csv").read_text())
    assert comm.bcast(same, root=0) == (True, True)
