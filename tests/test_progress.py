"""Progress lines that mean what they say: no energy balance before it is defined, no ETA
before a few seconds of work have been timed."""

from __future__ import annotations

import io

from mpi4py import MPI

from conftest import CASES, main_in_process
from solver.io import progress


def test_first_line_of_a_cdem_run_has_no_energy_error_and_no_eta(monkeypatch, tmp_path):
    """cube_rotation, a line at every step: ``energy_error=-`` until step 100 (at step 1 the
    balance read 0.4999), a number from then on; the first line's ETA is ``-``."""
    monkeypatch.setattr(progress.Progress, "EVERY_S", 0.0)
    proc = main_in_process(["run", str(CASES / "cube_rotation.toml"), "--out", str(tmp_path),
                            "--set", "stages[0].duration=0.02", "--set", "output.every=0"])
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("swing:")]
    errors = [line.split("energy_error=")[1].split()[0] for line in lines]
    steps = [int(line.split("step=")[1].split()[0]) for line in lines]
    assert steps[:2] == [1, 2] and steps[-1] > 100
    assert all(e == "-" for e, s in zip(errors, steps) if s < 100)
    assert all(float(e) < 1e-2 for e, s in zip(errors, steps) if s >= 100)
    assert lines[0].endswith("ETA -")


def test_eta_waits_for_a_few_seconds_of_timed_work(monkeypatch):
    """Lines at 1 s and 4 s of a 10 s job, 1 s and 4 s done: no ETA, then 6 s at that pace;
    an undefined metric reads ``-``."""
    clock = iter([100.0, 101.0, 104.0])
    monkeypatch.setattr(progress.time, "perf_counter", lambda: next(clock))
    stream = io.StringIO()
    line = progress.Progress(MPI.COMM_SELF, 10.0, label="stage:", stream=stream)
    line.update(1.0, force=True, balance=None, ratio=0.5)
    line.update(4.0, force=True, balance=1e-5, ratio=0.25)
    first, second = stream.getvalue().splitlines()
    assert first == "stage: 1/10  balance=-  ratio=0.5  elapsed 1.0 s  ETA -"
    assert second == "stage: 4/10  balance=1e-05  ratio=0.25  elapsed 4.0 s  ETA 6.0 s"
