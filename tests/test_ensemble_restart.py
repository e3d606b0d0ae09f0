"""Checkpoint and restart of the point-mass and rockfall modules through the command line, in
process: a run stopped by SIGTERM (a real signal) ends with an interrupted summary and a
last checkpoint, and ``--restart`` ends where the uninterrupted run ends, to the last bit: the
same results, tables and VTK files (the series goes on without gaps or duplicates)."""

import json
import os
import signal
import threading
import time

import pytest
from conftest import CASES, main_in_process

from solver.ensemble_checkpoint import EnsembleCheckpoint

SPHERE_CUP = ("sweep.runs=[[3, 20.0, 0.0], [3, 55.0, 0.0]]", "time.t_end=4.0",
              "output.vtk_run=1", "output.plot=false")
BIPLANAR = ("ensemble.vary.aspect_ratio.values=[1.0]",
            "ensemble.vary.omega_0.values=[0.0, 2500.0]", "motion.t_end=2.5",
            "output.plots=false", "output.vtk=false", "impact_solver.rtol=1e-5",
            "impact_solver.atol=1e-8")


def _args(case, overrides, *more):
    return ["run", str(case), "--quiet", *more, *(a for o in overrides for a in ("--set", o))]


def _stopped_when(args, ready):
    """``main_in_process(args)``, sent SIGTERM as soon as ``ready()`` (a late signal, after
    the run, is ignored)."""
    previous = signal.signal(signal.SIGTERM, lambda *_: None)
    over = threading.Event()

    def watch():
        while not over.is_set():
            if ready():
                os.kill(os.getpid(), signal.SIGTERM)
                return
            time.sleep(0.001)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        return main_in_process(args)
    finally:
        over.set()
        watcher.join()
        signal.signal(signal.SIGTERM, previous)


def _files(out):
    """Every output file but the run's own records, with its bytes."""
    skip = {"summary.json", "case.resolved.toml"}
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and p.name not in skip and "checkpoint" not in p.parts}


@pytest.mark.parametrize("case, overrides, trigger, every", [
    # stopped in run 1 (the one with VTK frames, after its third), after run 0 finished
    (CASES / "sphere_cup.toml", SPHERE_CUP, "sphere_cup/sphere_cup_00002.pvtu", "200"),
    # stopped in a block after the first one finished
    (CASES / "biplanar_rockfall.toml", BIPLANAR, "checkpoint/rank0/done.samples.keys.npy", "1"),
], ids=["pointmass", "rockfall"])
def test_stopped_run_restarts_to_the_uninterrupted_results(case, overrides, trigger, every,
                                                           tmp_path, monkeypatch):
    through, cut = tmp_path / "through", tmp_path / "cut"
    assert main_in_process(_args(case, overrides, "--out", str(through))).returncode == 0
    proc = _stopped_when(_args(case, overrides, "--out", str(cut), "--checkpoint-every", every),
                         lambda: any(tmp_path.glob(f".cut.part-*/{trigger}")))
    assert proc.returncode == 143, proc.stderr[-2000:]
    stopped = json.loads((cut / "summary.json").read_text())
    manifest = json.loads((cut / "checkpoint" / "manifest.json").read_text())
    assert stopped["status"] == "interrupted" and manifest["done"]
    assert 0 < stopped["results"]["runs_done"] < stopped["results"]["runs"]
    first_frames = {p: p.stat().st_mtime_ns for p in cut.glob(f"{case.stem}/*_00000_0.vtu")}
    ran, resumed_from = [], {}
    call, resumed = EnsembleCheckpoint.call, EnsembleCheckpoint.resumed

    def spy_call(self, fn, index, point):
        ran.append(index)
        return call(self, fn, index, point)

    def spy_resumed(self, index):
        record = resumed(self, index)
        resumed_from[index] = record.steps if record is not None else 0
        return record

    monkeypatch.setattr(EnsembleCheckpoint, "call", spy_call)
    monkeypatch.setattr(EnsembleCheckpoint, "resumed", spy_resumed)
    proc = main_in_process(_args(case, overrides, "--restart", str(cut)))
    assert proc.returncode == 0, proc.stderr[-2000:]
    # only the unfinished runs ran again, those under way from where they stood
    assert sorted(ran) == sorted(set(range(stopped["results"]["runs"]))
                                 - {entry[0] for entry in manifest["done"]})
    if case.stem == "sphere_cup":
        assert resumed_from == {entry[0]: entry[1] for entry in manifest["flight"]}
        assert all(steps > 0 for steps in resumed_from.values()) and resumed_from
        assert first_frames and all(p.stat().st_mtime_ns == t for p, t in first_frames.items())
    resumed = json.loads((cut / "summary.json").read_text())
    expected = json.loads((through / "summary.json").read_text())
    assert resumed["status"] == "done" and resumed["steps"] == expected["steps"]
    assert resumed["results"] == expected["results"]
    assert _files(cut) == _files(through)


@pytest.mark.parametrize("case, overrides, change", [
    (CASES / "pointmass_incline.toml", ("time.t_end=1.0", "output.vtk=false",
                                        "output.plot=false"), "time.t_end=2.0"),
    (CASES / "biplanar_rockfall.toml", (*BIPLANAR, "motion.t_end=1.0"), "motion.t_end=1.1"),
], ids=["pointmass", "rockfall"])
def test_restart_with_a_changed_case_is_refused(case, overrides, change, tmp_path):
    out = tmp_path / "out"
    done = main_in_process(_args(case, overrides, "--out", str(out), "--checkpoint-every", "1"))
    assert done.returncode == 0 and (out / "checkpoint" / "manifest.json").is_file()
    proc = main_in_process(_args(case, (*overrides, change), "--restart", str(out)))
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and "another case" in lines[0], lines
