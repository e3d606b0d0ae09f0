"""Checkpoints are data: the manifest holds a checksum of every array file and of itself, and
a restart refuses any damage (a changed byte in a file's header or data, a truncated, empty
or deleted file, manifest or rank folder) with one line naming the file and exit code 2,
leaving the run's folder byte for byte as it was. A refused restart of another case changes
nothing either, and a restart of the hidden ``.X.part-*`` folder a killed run left finishes
into ``X``."""

import json
import shutil

import pytest
from conftest import CASES, main_in_process

COLUMN = (CASES / "fractured_column.toml",
          ("output.vtk=false", "stages[0].duration=0.003"), "10")
CUP = (CASES / "sphere_cup.toml",
       ("sweep.runs=[[3, 20.0, 0.0]]", "time.t_end=1.0", "output.plot=false",
        "output.vtk=false"), "50")
RUNS = {"cdem": COLUMN, "pointmass": CUP}

#: A byte in the text of a .npy header (after the magic string, version and header length).
HEADER_BYTE = 20


def _args(run: str, *more: str, sets: tuple[str, ...] = ()) -> list[str]:
    case, overrides, _ = RUNS[run]
    return ["run", str(case), "--quiet", *more,
            *(a for o in (*overrides, *sets) for a in ("--set", o))]


def _flip(offset: int):
    def flip(path):
        data = bytearray(path.read_bytes())
        data[offset] ^= 0xFF
        path.write_bytes(bytes(data))
    return flip


def _truncate(path):
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _empty(path):
    path.write_bytes(b"")


def _delete(path):
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink()


def _change_ranks(path):
    """One digit of the manifest's rank count changed: still valid JSON, another layout."""
    text = path.read_text()
    changed = text.replace('"ranks": 1,', '"ranks": 0,', 1)
    assert changed != text and len(changed) == len(text)
    path.write_text(changed)


ARRAY_DAMAGE = {"header byte": _flip(HEADER_BYTE), "data byte": _flip(-1),
                "truncated": _truncate, "emptied": _empty, "deleted": _delete}
ARRAY_FILES = [("cdem", "rank0/elements.keys.npy"), ("cdem", "rank0/elements.stress.npy"),
               ("cdem", "rank0/springs.state.npy"), ("cdem", "rank0/semi_springs.placed.npy"),
               ("cdem", "rank0/semi_edges.f_t.npy"), ("cdem", "rank0/renewal.x.npy"),
               ("pointmass", "rank0/flight.history.rows.npy"),
               ("pointmass", "rank0/flight.y.keys.npy")]
DAMAGES = [pytest.param(run, name, damage, id=f"{run}-{name}-{how}")
           for run, name in ARRAY_FILES for how, damage in ARRAY_DAMAGE.items()] + [
    pytest.param(run, "manifest.json", damage, id=f"{run}-manifest-{how}")
    for run in RUNS for how, damage in (("ranks digit", _change_ranks),
                                        ("middle byte", _flip(200)), ("truncated", _truncate),
                                        ("emptied", _empty), ("deleted", _delete))] + [
    pytest.param(run, "rank0", _delete, id=f"{run}-rank folder deleted") for run in RUNS]


def _snapshot(folder) -> dict:
    """Every file and folder under ``folder``, with the bytes of each file."""
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() else None
            for p in sorted(folder.rglob("*"))}


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A cdem and a point-mass run, each finished with its last checkpoint in place."""
    base = tmp_path_factory.mktemp("checkpointed")
    for run, (_, _, every) in RUNS.items():
        proc = main_in_process(_args(run, "--out", str(base / run), "--checkpoint-every", every))
        assert proc.returncode == 0, proc.stderr
    return base


@pytest.mark.parametrize("run, name, damage", DAMAGES)
def test_damage_is_refused_in_one_line_naming_the_file(tmp_path, finished, run, name, damage):
    folder = tmp_path / "run"
    shutil.copytree(finished / run, folder)
    damaged = folder / "checkpoint" / name
    damage(damaged)
    before = _snapshot(tmp_path)
    proc = main_in_process(_args(run, "--restart", str(folder)))
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"error: {damaged}: ") and "Traceback" not in proc.stderr
    assert _snapshot(tmp_path) == before


def test_the_intact_copy_restarts(tmp_path, finished):
    """The copies above differ from a restartable folder only by their damage."""
    for run in RUNS:
        shutil.copytree(finished / run, tmp_path / run)
        proc = main_in_process(_args(run, "--restart", str(tmp_path / run)))
        assert proc.returncode == 0 and not proc.stderr, proc.stderr


def test_a_restart_of_another_case_changes_nothing(tmp_path, finished):
    folder = tmp_path / "run"
    shutil.copytree(finished / "cdem", folder)
    before = _snapshot(tmp_path)
    proc = main_in_process(_args("cdem", "--restart", str(folder),
                                 sets=("stages[0].duration=0.004",)))
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and "another case" in lines[0], lines
    assert _snapshot(tmp_path) == before


def test_a_restart_of_a_part_folder_finishes_into_the_named_folder(tmp_path, finished):
    """The hidden folder a killed run leaves (no summary yet) goes on from its checkpoint
    and, complete, takes the name the run was given; a refused restart of it keeps it."""
    part = tmp_path / ".cut.part-4242-0123abcd"
    shutil.copytree(finished / "cdem", part)
    (part / "summary.json").unlink()
    through = json.loads((finished / "cdem" / "summary.json").read_text())
    refused = main_in_process(_args("cdem", "--restart", str(part),
                                    sets=("stages[0].duration=0.004",)))
    assert refused.returncode == 2 and sorted(p.name for p in tmp_path.iterdir()) == [part.name]
    proc = main_in_process(_args("cdem", "--restart", str(part)))
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cut"]
    summary = json.loads((tmp_path / "cut" / "summary.json").read_text())
    assert summary["status"] == "done" and summary["steps"] == through["steps"]
    assert summary["results"]["max_displacement"] == through["results"]["max_displacement"]


def test_a_checkpoint_without_checksums_restarts_with_a_warning(tmp_path, finished):
    """A checkpoint an earlier solver wrote (format 1: no checksums) is read unverified."""
    folder = tmp_path / "run"
    shutil.copytree(finished / "pointmass", folder)
    path = folder / "checkpoint" / "manifest.json"
    manifest = json.loads(path.read_text())
    del manifest["checksum"], manifest["files"]
    path.write_text(json.dumps(dict(manifest, format=1)))
    proc = main_in_process(_args("pointmass", "--restart", str(folder)))
    lines = proc.stderr.splitlines()
    assert proc.returncode == 0 and len(lines) == 1, proc.stderr
    assert lines[0].startswith("warning: ") and "without checksums" in lines[0]


def test_a_checkpoint_is_on_the_disk_before_it_is_put_in_place(tmp_path, monkeypatch):
    """Every array file, each rank's folder, the manifest and the partial folder are flushed
    (fsync) before the rename that makes the partial folder ``checkpoint``, and the run
    folder after it: a power loss cannot leave a ``checkpoint`` of empty files."""
    import os

    import numpy as np
    from mpi4py import MPI

    from solver.io import checkpoint

    synced = []
    real_fsync, real_rename = os.fsync, os.rename

    def fsync(descriptor):
        synced.append(os.readlink(f"/proc/self/fd/{descriptor}"))
        real_fsync(descriptor)

    def rename(source, target):
        synced.append(("rename", str(source), str(target)))
        real_rename(source, target)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "rename", rename)
    tables = {"t": {"keys": np.arange(3), "a": np.ones((3, 2))}}
    for _ in range(2):                                  # the second replaces the first
        synced.clear()
        checkpoint.write(MPI.COMM_SELF, tmp_path, {"case": "c"}, tables)
    partial, final = tmp_path / checkpoint.PARTIAL, tmp_path / checkpoint.CHECKPOINT
    put = synced.index(("rename", str(partial), str(final)))
    before = synced[:put]
    assert {str(partial / "rank0" / f"t.{f}.npy") for f in ("keys", "a")} <= set(before)
    assert str(partial / "rank0") in before and str(partial) in before
    assert before.index(str(partial / f"{checkpoint.MANIFEST}.tmp")) < before.index(str(partial))
    assert synced[put + 1:] == [str(tmp_path)]
