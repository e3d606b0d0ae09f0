"""Clean interruption and restart through the command line: a signal to ``mpiexec -n 2``
stops every rank at the same step boundary with a final checkpoint and an interrupted
summary; ``--restart`` on one rank then ends where the uninterrupted run ends, bit for bit,
with an unbroken output series."""

import json
import os
import signal
import subprocess
import time

import numpy as np
import pytest
import pyvista as pv

from conftest import CASES, ROOT, run_case, run_cli, solver_cmd
from solver.cli import main

ARGS = ("stages[0].duration=0.1", "output.every=0.025")


def _final_blocks(out):
    reader = pv.get_reader(str(out / "fractured_column.pvd"))
    reader.set_active_time_value(reader.time_values[-1])
    frame = reader.read()[0]
    order = np.argsort(frame.cell_data["block"], kind="stable")
    return frame.points.reshape(-1, 8, 3)[order], reader.time_values


def _interrupt(out, signum):
    """Run on 2 ranks, signal mpiexec once the first checkpoint exists (SIGKILL: to its
    whole process group, ranks included, as a lost node or a hard kill would); returns the
    exit code and the seconds from the signal to the exit."""
    cmd = [*solver_cmd(2), "run", str(CASES / "fractured_column.toml"), "--out", str(out),
           "--quiet", "--checkpoint-every", "300"]
    for o in ARGS:
        cmd += ["--set", o]
    env = dict(os.environ, OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            start_new_session=signum == signal.SIGKILL)
    deadline = time.monotonic() + 300
    while not list(out.parent.glob(f".{out.name}.part-*/checkpoint/manifest.json")):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    if signum == signal.SIGKILL:
        os.killpg(proc.pid, signum)
    else:
        proc.send_signal(signum)
    sent = time.monotonic()
    _, err = proc.communicate(timeout=60)
    return proc.returncode, time.monotonic() - sent, err


@pytest.fixture(scope="module")
def through(tmp_path_factory):
    """The run through on one rank: its summary and its output folder."""
    out = tmp_path_factory.mktemp("through")
    return run_case(CASES / "fractured_column.toml", out, *ARGS), out


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_signal_stops_all_ranks_and_the_restart_ends_as_the_run_through(signum, tmp_path,
                                                                         through):
    code, seconds, err = _interrupt(tmp_path / "cut", signum)
    assert code == 128 + signum and seconds < 10, err[-2000:]
    summary = json.loads((tmp_path / "cut" / "summary.json").read_text())
    stopped = json.loads((tmp_path / "cut" / "checkpoint" / "manifest.json").read_text())
    assert summary["status"] == "interrupted" and summary["steps"] == stopped["step"] > 0
    if signum != signal.SIGTERM:
        return
    through, through_out = through
    proc = run_cli(["run", str(CASES / "fractured_column.toml"), "--restart",
                    str(tmp_path / "cut"), "--quiet", *sum((["--set", o] for o in ARGS), [])])
    assert proc.returncode == 0, proc.stderr[-2000:]
    resumed = json.loads((tmp_path / "cut" / "summary.json").read_text())
    assert resumed["status"] == "done" and resumed["steps"] == through["steps"]
    for key in ("max_displacement", "contact", "stages"):
        assert resumed["results"][key] == through["results"][key], key
    x_cut, times_cut = _final_blocks(tmp_path / "cut")
    x_through, times_through = _final_blocks(through_out)
    assert np.array_equal(x_cut, x_through)
    assert np.array_equal(times_cut, times_through)            # no gaps, no duplicates


def test_a_killed_run_goes_on_from_its_part_folder_as_the_run_through(tmp_path, through):
    """A run killed outright (SIGKILL to every process) leaves no summary and its folder as
    the hidden part folder, with the last checkpoint and the frames written since; the
    README's ``--restart`` of that folder ends where the run through ends, bit for bit,
    with an unbroken output series, in the folder the run was given."""
    code, _, err = _interrupt(tmp_path / "cut", signal.SIGKILL)
    parts = list(tmp_path.glob(".cut.part-*"))
    assert code == -signal.SIGKILL and not (tmp_path / "cut").exists() and len(parts) == 1
    through, through_out = through
    proc = run_cli(["run", str(CASES / "fractured_column.toml"), "--restart", str(parts[0]),
                    "--quiet", *sum((["--set", o] for o in ARGS), [])])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert [p.name for p in tmp_path.iterdir()] == ["cut"]
    resumed = json.loads((tmp_path / "cut" / "summary.json").read_text())
    assert resumed["status"] == "done" and resumed["steps"] == through["steps"]
    for key in ("max_displacement", "contact", "stages"):
        assert resumed["results"][key] == through["results"][key], key
    x_cut, times_cut = _final_blocks(tmp_path / "cut")
    x_through, times_through = _final_blocks(through_out)
    assert np.array_equal(x_cut, x_through)
    assert np.array_equal(times_cut, times_through)            # no gaps, no duplicates


def test_rebalancing_at_every_checkpoint_keeps_the_motion(tmp_path, through):
    """``--rebalance-above 1`` ends the model at every checkpoint and goes on partitioned by
    the work: on 2 ranks the run ends where the run through on one rank ends, bit for bit,
    with an unbroken output series."""
    through, through_out = through
    proc = run_cli(["run", str(CASES / "fractured_column.toml"), "--out", str(tmp_path / "bal"),
                    "--checkpoint-every", "600", "--rebalance-above", "1",
                    *[a for o in ARGS for a in ("--set", o)]], ranks=2)
    assert proc.returncode == 0, proc.stderr[-2000:]
    balanced = json.loads((tmp_path / "bal" / "summary.json").read_text())
    rebalances = balanced["results"]["rebalances"]
    assert [r["step"] for r in rebalances] == list(range(600, through["steps"], 600))
    assert proc.stderr.count("rebalance after step") == len(rebalances)
    assert balanced["steps"] == through["steps"]
    for key in ("max_displacement", "contact"):
        assert balanced["results"][key] == through["results"][key], key
    x_balanced, times_balanced = _final_blocks(tmp_path / "bal")
    x_through, times_through = _final_blocks(through_out)
    assert np.array_equal(x_balanced, x_through)
    assert np.array_equal(times_balanced, times_through)


def test_restart_with_a_changed_case_is_refused(tmp_path, capsys):
    case = str(CASES / "fractured_column.toml")
    base = ["run", case, "--quiet", "--set", "output.vtk=false"]
    assert main([*base, "--out", str(tmp_path), "--checkpoint-every", "10",
                 "--set", "stages[0].duration=0.003"]) == 0
    capsys.readouterr()
    written = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert main([*base, "--restart", str(tmp_path), "--set", "stages[0].duration=0.004"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "another case" in lines[0], lines
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == written


def test_a_diverging_run_stops_at_once_with_exit_3(tmp_path, capsys, monkeypatch):
    """Three times the stable step: the column's highest mode grows by a large factor per
    step; the guard stops the run at the step the state stops being finite, or earlier."""
    from solver.cdem import run as cdem_run

    class ThreeTimes(cdem_run.StepControl):
        def step(self, damping):
            return 3.0 * super().step(damping)

    monkeypatch.setattr(cdem_run, "StepControl", ThreeTimes)
    code = main(["run", str(CASES / "column_gravity.toml"), "--out", str(tmp_path), "--quiet"])
    lines = capsys.readouterr().err.strip().splitlines()
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert code == 3 and summary["status"] == "diverged", lines
    assert len(lines) == 1 and "diverged" in lines[0] and "worst element" in lines[0]
    assert summary["steps"] < 2000


def test_a_restarted_stage_gives_its_eta_by_the_pace_since_the_restart(monkeypatch):
    """A stage restarted at 5 of 10 s that reaches 6 s in 4 s of wall time has 16 s to go
    (not the 4 s of the pace from 0)."""
    import io

    from mpi4py import MPI

    from solver.io import progress

    clock = iter([100.0, 104.0])
    monkeypatch.setattr(progress.time, "perf_counter", lambda: next(clock))
    stream = io.StringIO()
    line = progress.Progress(MPI.COMM_SELF, 10.0, label="runout:", stream=stream,
                             start_at=5.0)
    line.update(6.0)
    assert stream.getvalue().strip().endswith("elapsed 4.0 s  ETA 16.0 s")
