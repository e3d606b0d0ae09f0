"""A write the file system refuses on one rank only ends every rank together with exit code 4
and one line (``mpiexec -n 2 python -m pytest --only-mpi``): a VTK piece of a frame
(solver.io.vtk.VtkSeries writes through solver.errors.write_together) and a piece of an
ensemble's checkpoint (solver.ensemble_checkpoint stops the ranks together and raises the
failure once no run is under way)."""

import pytest
from conftest import CASES
from mpi4py import MPI
from test_disk_full import NO_SPACE, _args, _no_space_on_call, _run_on_all_ranks

from solver.io import checkpoint, vtk

SWEEP = ["run", str(CASES / "pointmass_incline.toml"), "--quiet", "--checkpoint-every", "20",
         "--set", "output.vtk=false", "--set", "output.plot=false",
         "--set", "sweep.friction.mu=[0.1, 0.2, 0.3, 0.4]"]


@pytest.mark.mpi(min_size=2)
def test_no_space_for_a_frame_on_one_rank_ends_both_with_exit_4(tmp_path, monkeypatch,
                                                                 capsys):
    base = MPI.COMM_WORLD.bcast(tmp_path, root=0)
    out = base / "run"
    _no_space_on_call(monkeypatch, vtk, "write_vtu", 2, rank=1)
    codes, lines = _run_on_all_ranks(capsys, _args(out, "--out", str(out), vtk_frames=True))
    assert codes == [4] * MPI.COMM_WORLD.size and len(lines) == 1, lines
    assert NO_SPACE in lines[0] and "MPI_Abort" not in lines[0]


@pytest.mark.mpi(min_size=2)
def test_no_space_for_an_ensemble_checkpoint_on_one_rank_ends_both_with_exit_4(
        tmp_path, monkeypatch, capsys):
    base = MPI.COMM_WORLD.bcast(tmp_path, root=0)
    out = base / "sweep"
    _no_space_on_call(monkeypatch, checkpoint, "_write_piece", 1, rank=1)
    codes, lines = _run_on_all_ranks(capsys, [*SWEEP, "--out", str(out)])
    assert codes == [4] * MPI.COMM_WORLD.size and len(lines) == 1, lines
    assert NO_SPACE in lines[0] and "MPI_Abort" not in lines[0]
