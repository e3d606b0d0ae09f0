"""In-process MPI tests (run by `mpiexec -n 2 python -m pytest --only-mpi`) of the ensemble
layer: rows in point order whoever ran them, the lowest failing point's error on every rank,
and the progress line on rank 0."""

import io
import time

import pytest
from mpi4py import MPI

from solver.ensemble import run_ensemble
from solver.errors import InputError
from solver.io.progress import Progress


@pytest.mark.mpi(min_size=2)
def test_rows_come_back_in_point_order_from_all_ranks():
    comm = MPI.COMM_WORLD
    points = [float(i) for i in range(23)]

    def fn(index, point):
        time.sleep(0.01)
        return index, point * point, comm.rank

    rows = run_ensemble(comm, points, fn)
    ranks = comm.bcast(None if rows is None else {r[2] for r in rows}, root=0)
    if comm.rank == 0:
        assert [r[:2] for r in rows] == [(i, p * p) for i, p in enumerate(points)]
    else:
        assert rows is None
    assert len(ranks) > 1


@pytest.mark.mpi(min_size=2)
def test_a_failing_point_raises_its_error_on_every_rank():
    def fn(index, point):
        if point in (7, 12):
            raise InputError("case.toml: sweep", f"point {index} fails")
        return point

    with pytest.raises(InputError) as raised:
        run_ensemble(MPI.COMM_WORLD, list(range(20)), fn)
    assert str(raised.value) == "case.toml: sweep: point 7 fails"


@pytest.mark.mpi(min_size=2)
def test_progress_line_counts_the_runs_on_rank_zero():
    comm = MPI.COMM_WORLD
    stream = io.StringIO()
    progress = Progress(comm, 9, label="runs", every_s=0.0, stream=stream)
    run_ensemble(comm, list(range(9)), lambda i, p: p, progress)
    lines = stream.getvalue().splitlines()
    if comm.rank == 0:
        assert lines[-1].startswith("runs 9/9")
        assert all(line.startswith("runs ") for line in lines)
    else:
        assert lines == []
