"""Output folder policy on 2 ranks, in-process (run by `mpiexec -n 2 python -m pytest
--only-mpi`): folder errors are one line from rank 0 and exit code 2 on every rank (no
traceback, no MPI_Abort); a run's pieces from both ranks appear together, and a failed rerun
keeps the earlier run."""

import pytest
from mpi4py import MPI

from conftest import CASES
from solver.cli import main

COLUMN = str(CASES / "column_gravity.toml")


def _run(capsys, *args: str) -> tuple[int, list[str]]:
    """Exit code on this rank and the stderr lines of all ranks (on every rank)."""
    capsys.readouterr()
    code = main(["run", *map(str, args), "--quiet"])
    lines = MPI.COMM_WORLD.allgather(capsys.readouterr().err.splitlines())
    return code, [line for rank in lines for line in rank]


def _listing(folder) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.mpi(min_size=2)
def test_out_naming_a_file_is_one_line_on_every_rank(tmp_path, capsys):
    comm = MPI.COMM_WORLD
    base = comm.bcast(tmp_path, root=0)
    if comm.rank == 0:
        (base / "taken").write_text("not a folder")
    comm.Barrier()
    code, lines = _run(capsys, COLUMN, "--out", base / "taken")
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: --out: ")
    assert "Traceback" not in lines[0]


@pytest.mark.mpi(min_size=2)
def test_two_rank_run_appears_whole_and_a_failed_rerun_keeps_it(tmp_path, capsys):
    comm = MPI.COMM_WORLD
    base = comm.bcast(tmp_path, root=0)
    out = base / "out"
    code, lines = _run(capsys, COLUMN, "--out", out, "--set", "stages[0].max_steps=20")
    assert code == 0 and all("not converged" in line for line in lines)
    first = _listing(out)
    assert "column_gravity/column_gravity_00000_1.vtu" in first and "summary.json" in first
    code, lines = _run(capsys, COLUMN, "--out", out, "--overwrite",
                       "--set", "boundaries[0].box=[5.0, 6.0, 5.0, 6.0, 5.0, 6.0]")
    assert code == 2 and len(lines) == 1 and "boundaries[0].box" in lines[0]
    comm.Barrier()
    assert _listing(out) == first
    assert [p.name for p in base.iterdir()] == ["out"]
