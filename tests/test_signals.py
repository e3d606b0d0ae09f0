"""Signals at any moment, on ``mpiexec -n 2``: SIGTERM ends the command with exit code 143
and SIGINT with 130, from start-up on, without a traceback or MPI noise on stderr
(solver.interrupt); a run whose loops search or integrate without end still stops at once.

Start-up: the signal goes to mpiexec once both ranks have begun to start MPI (mpi4py's
library is mapped), before the case is read. Mid-run: a second or two into the run (its
output folder exists), on a case without checkpoints (the impact sweep: the ranks end at
once, and rank 0 removes the hidden folder the run began) and on rockfall blocks that roll
with chattering friction (the loops poll for the signal)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import ROOT, solver_cmd

NOISE = ("Traceback", "MPI_Abort", "BAD TERMINATION", "application called")

ROCKFALL = """module = "rockfall"
name = "chatter"
[terrain]
kind = "profile"
points = [[0.0, 120.0], [171.4, 0.0], [500.0, 0.0]]
segments = [{x = [0.0, 171.4], ground = "sand"}, {x = [171.4, 500.0], ground = "sand"}]
[grounds.sand]
rolling_resistance = 0.3
[start]
x = 0.0
height = 2.0
speed = 15.0
theta_0 = 30.0
[ensemble]
samples = 4
[output]
vtk = false
plots = false
trajectories = false
"""

IMPACT_SWEEP = ("run", str(ROOT / "cases" / "impact_orientation_sweep.toml"))


def _ranks(parent: int) -> list[int]:
    """The pids of the processes below ``parent`` that run Python (the ranks)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, pending = [], [parent]
    while pending:
        pid = pending.pop()
        for child in children.get(pid, []):
            pending.append(child)
            try:
                if "python" in Path(f"/proc/{child}/cmdline").read_bytes().decode():
                    found.append(child)
            except OSError:
                pass
    return found


def _started_mpi(pid: int) -> bool:
    try:
        return "mpi4py/MPI" in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


def _signalled(args, signum: int, ready, tmp_path, timeout: float = 120.0):
    """Run ``solver ARGS`` on 2 ranks, send ``signum`` to mpiexec once ``ready(ranks)``;
    returns the exit code, the seconds from the signal to the exit and stderr."""
    env = dict(os.environ, OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
    proc = subprocess.Popen([*solver_cmd(2), *args], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    deadline = time.monotonic() + timeout
    while True:
        ranks = _ranks(proc.pid)
        if len(ranks) == 2 and ready(ranks):
            break
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.01)
    proc.send_signal(signum)
    sent = time.monotonic()
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    return proc.returncode, time.monotonic() - sent, err


def _running(folder: Path, seconds: float):
    """Ready once the run's output folder (``.o.part-*`` in ``folder``: the run is under way)
    has existed for ``seconds``."""
    seen = []

    def ready(_ranks) -> bool:
        if not seen and list(folder.glob(".o.part-*")):
            seen.append(time.monotonic())
        return bool(seen) and time.monotonic() - seen[0] > seconds

    return ready


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_at_start_up_ends_both_ranks_with_its_code(tmp_path, signum):
    code, seconds, err = _signalled([*IMPACT_SWEEP, "--out", "o", "--quiet"], signum,
                                    lambda ranks: all(map(_started_mpi, ranks)), tmp_path)
    assert code == 128 + signum and seconds < 10, err
    assert not any(noise in err for noise in NOISE), err
    assert not (tmp_path / "o").exists()


def test_sigterm_mid_run_without_checkpoints_ends_both_ranks_at_once(tmp_path):
    code, seconds, err = _signalled([*IMPACT_SWEEP, "--out", "o", "--quiet"], signal.SIGTERM,
                                    _running(tmp_path, 1.0), tmp_path)
    assert code == 143 and seconds < 10, err
    assert not any(noise in err for noise in NOISE), err
    assert not (tmp_path / "o").exists() and not list(tmp_path.glob(".o.part-*"))


def test_sigterm_stops_a_block_whose_rolling_integration_chatters(tmp_path):
    (tmp_path / "chatter.toml").write_text(ROCKFALL)
    code, seconds, err = _signalled(["run", "chatter.toml", "--out", "o", "--quiet"],
                                    signal.SIGTERM, _running(tmp_path, 1.5), tmp_path)
    assert code == 143 and seconds < 10, err
    assert not any(noise in err for noise in NOISE), err
    assert "interrupted" in (tmp_path / "o" / "summary.json").read_text()
