"""A full disk is a documented outcome. A write the file system refuses (made here to fail
with OSError(ENOSPC) where the solver writes: a checkpoint's array file or manifest, a VTK
frame, the summary, the rename that publishes the finished run) ends the run on every rank
with one line naming the path and the errno, and exit code 4. The last complete checkpoint
stays, in the run's hidden folder, from which ``--restart`` finishes into the folder the run
was given; a run with no checkpoint to keep leaves no folder. On 2 ranks (``mpiexec -n 2
python -m pytest --only-mpi``) the rank that failed and the one that did not stop
together."""

import errno
import json
import os

import pytest
from conftest import CASES, main_in_process
from mpi4py import MPI

from solver.cli import main
from solver.io import checkpoint, summary, vtk

CASE = str(CASES / "fractured_column.toml")
SETS = ("stages[0].duration=0.003",)
NO_SPACE = os.strerror(errno.ENOSPC)


def _args(out, *more: str, vtk_frames: bool = False) -> list[str]:
    sets = (*SETS, f"output.vtk={str(vtk_frames).lower()}")
    return ["run", CASE, "--quiet", *more, *(a for o in sets for a in ("--set", o))]


def _no_space_on_call(monkeypatch, module, name: str, call: int, rank: int = 0,
                      written_first: bool = True) -> None:
    """Make ``module.name`` raise OSError(ENOSPC) at its ``call``-th call on ``rank``
    (1-based), naming the file it was to write; ``written_first``: after writing it (a
    piece whose last file did not fit), else before."""
    real = getattr(module, name)
    calls = []

    def no_space(path, *args, **kwargs):
        calls.append(path)
        if len(calls) != call or MPI.COMM_WORLD.rank != rank:
            return real(path, *args, **kwargs)
        if written_first:
            real(path, *args, **kwargs)
        raise OSError(errno.ENOSPC, NO_SPACE, str(path))

    monkeypatch.setattr(module, name, no_space)


def _checkpoint_step(folder) -> int:
    return json.loads((folder / "checkpoint" / "manifest.json").read_text())["step"]


@pytest.mark.parametrize("module, name, call, written_first, vtk_frames, kept_step", [
    pytest.param(checkpoint, "_write_piece", 1, True, False, None, id="first checkpoint"),
    pytest.param(checkpoint, "_write_piece", 2, True, False, 10, id="second checkpoint"),
    pytest.param(checkpoint, "_publish", 2, False, False, 10, id="second manifest"),
    pytest.param(vtk, "write_vtu", 4, True, True, 30, id="frame after the checkpoints"),
    pytest.param(summary, "write_summary", 1, False, False, 30, id="summary"),
])
def test_no_space_keeps_the_last_checkpoint_and_exits_4(tmp_path, monkeypatch, module, name,
                                                        call, written_first, vtk_frames,
                                                        kept_step):
    out = tmp_path / "run"
    _no_space_on_call(monkeypatch, module, name, call, written_first=written_first)
    proc = main_in_process(_args(out, "--out", str(out), "--checkpoint-every", "10",
                                 vtk_frames=vtk_frames))
    lines = proc.stderr.splitlines()
    assert proc.returncode == 4 and len(lines) == 1, proc.stderr
    assert f"{NO_SPACE} (ENOSPC, errno 28)" in lines[0] and "Traceback" not in lines[0]
    parts = list(tmp_path.iterdir())
    if kept_step is None:
        assert parts == [] and "nothing was published" in lines[0]
        return
    assert len(parts) == 1 and parts[0].name.startswith(".run.part-"), parts
    assert f"kept in {parts[0]}" in lines[0] and f"--restart {parts[0]}" in lines[0]
    assert not (parts[0] / "checkpoint.partial").exists()
    assert _checkpoint_step(parts[0]) == kept_step
    monkeypatch.undo()
    resumed = main_in_process(_args(out, "--restart", str(parts[0]), vtk_frames=vtk_frames))
    assert resumed.returncode == 0, resumed.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["run"]
    assert json.loads((out / "summary.json").read_text())["status"] == "done"


@pytest.mark.parametrize("error_number, earlier", [(errno.ENOSPC, False), (errno.EIO, True)],
                         ids=["ENOSPC", "EIO over an earlier run"])
def test_a_refused_publication_keeps_the_finished_run_and_exits_4(tmp_path, monkeypatch,
                                                                 error_number, earlier):
    """The rename of the finished run onto its folder fails: one line naming the path and
    the errno, exit 4, the finished run with its last checkpoint kept in the hidden folder,
    and an earlier run in the folder left as it was."""
    out = tmp_path / "run"
    if earlier:
        assert main_in_process(_args(out, "--out", str(out))).returncode == 0
    before = (out / "summary.json").read_bytes() if earlier else None
    real = os.replace

    def refused(source, target):
        if os.path.basename(source).startswith(".run.part-"):          # the folder itself
            raise OSError(error_number, os.strerror(error_number), str(source), str(target))
        real(source, target)

    monkeypatch.setattr(os, "replace", refused)
    proc = main_in_process(_args(out, "--out", str(out), "--checkpoint-every", "10",
                                 *(["--overwrite"] if earlier else [])))
    lines = proc.stderr.splitlines()
    assert proc.returncode == 4 and len(lines) == 1, proc.stderr
    code = errno.errorcode[error_number]
    assert lines[0].startswith(f"error: {out}: cannot write: ") and "Traceback" not in lines[0]
    assert f"({code}, errno {error_number})" in lines[0]
    parts = list(tmp_path.glob(".run.part-*"))
    assert len(parts) == 1 and f"kept in {parts[0]}" in lines[0], lines[0]
    assert _checkpoint_step(parts[0]) == 30
    assert json.loads((parts[0] / "summary.json").read_text())["status"] == "done"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [parts[0].name, *(["run"] if earlier else [])])
    if earlier:
        assert (out / "summary.json").read_bytes() == before


def test_no_space_in_a_restart_keeps_its_folder(tmp_path, monkeypatch):
    """A restart in place that cannot write its summary leaves the folder with the
    checkpoint it went on from."""
    out = tmp_path / "run"
    assert main_in_process(_args(out, "--out", str(out), "--checkpoint-every", "10")
                           ).returncode == 0
    step = _checkpoint_step(out)
    _no_space_on_call(monkeypatch, summary, "write_summary", 1, written_first=False)
    proc = main_in_process(_args(out, "--restart", str(out)))
    assert proc.returncode == 4 and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert f"kept in {out}" in proc.stderr and _checkpoint_step(out) == step


def _run_on_all_ranks(capsys, args: list[str]) -> tuple[list[int], list[str]]:
    """Every rank's exit code and the stderr lines of all ranks (on every rank)."""
    capsys.readouterr()
    code = main(args)
    comm = MPI.COMM_WORLD
    lines = comm.allgather(capsys.readouterr().err.splitlines())
    return comm.allgather(code), [line for rank in lines for line in rank]


@pytest.mark.mpi(min_size=2)
@pytest.mark.parametrize("name, rank", [
    pytest.param("_write_piece", 1, id="rank 1 array file"),
    pytest.param("_publish", 0, id="rank 0 manifest"),
])
def test_no_space_on_one_rank_stops_both_and_keeps_the_checkpoint(tmp_path, monkeypatch,
                                                                  capsys, name, rank):
    comm = MPI.COMM_WORLD
    base = comm.bcast(tmp_path, root=0)
    out = base / "run"
    _no_space_on_call(monkeypatch, checkpoint, name, 2, rank=rank,
                      written_first=name == "_write_piece")
    codes, lines = _run_on_all_ranks(capsys, _args(out, "--out", str(out),
                                                   "--checkpoint-every", "10"))
    assert codes == [4] * comm.size and len(lines) == 1, lines
    assert "(ENOSPC, errno 28)" in lines[0] and "MPI_Abort" not in lines[0]
    comm.Barrier()
    parts = list(base.iterdir())
    assert len(parts) == 1 and parts[0].name.startswith(".run.part-"), parts
    assert _checkpoint_step(parts[0]) == 10
    assert sorted(p.name for p in (parts[0] / "checkpoint").iterdir()) == [
        "manifest.json", "rank0", "rank1"]
    monkeypatch.undo()
    codes, lines = _run_on_all_ranks(capsys, _args(out, "--restart", str(parts[0])))
    assert codes == [0] * comm.size and lines == [], lines
    assert [p.name for p in base.iterdir()] == ["run"]
