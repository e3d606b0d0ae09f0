"""Shared test helpers: run the real CLI (serially or under mpiexec) and read its outputs."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# One thread for BLAS and numba, as in the subprocesses below: the in-process runs then sum in
# the same order as the runs under mpiexec, to the last bit.
os.environ.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", NUMBA_NUM_THREADS="1")

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "cases"
BIN = Path(sys.executable).parent


def mpiexec() -> str:
    """The mpiexec that belongs to this environment's MPI (the mpich wheel's, in the venv)."""
    local = BIN / "mpiexec"
    return str(local) if local.exists() else shutil.which("mpiexec")


def solver_cmd(ranks: int = 1) -> list[str]:
    cmd = [sys.executable, "-m", "solver.cli"]
    return cmd if ranks == 1 else [mpiexec(), "-n", str(ranks), *cmd]


def run_cli(args: list[str], ranks: int = 1, timeout: float = 900,
            cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
    return subprocess.run([*solver_cmd(ranks), *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=cwd or ROOT)


def main_in_process(args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``solver.cli.main(args)`` in this process (no interpreter start, the numba kernels
    already loaded), with its exit code and output as a finished subprocess would give."""
    from solver.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
            contextlib.chdir(cwd or ROOT):
        code = main(list(args))
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def run_case(case: str | Path, out: Path, *overrides: str, ranks: int = 1,
             timeout: float = 900) -> dict:
    """Run a case through the CLI (in this process on one rank, under mpiexec on more) and
    return its summary.json; fail with its stderr."""
    args = ["run", str(case), "--out", str(out), "--quiet"]
    for o in overrides:
        args += ["--set", o]
    proc = (main_in_process(args) if ranks == 1 else
            run_cli(args, ranks=ranks, timeout=timeout))
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads((out / "summary.json").read_text())


@pytest.fixture
def cli():
    return run_cli


def same_over_ranks_and_alone(run, case, tmp_path, files) -> tuple[bool, dict]:
    """Run ``case`` with the module's ``run`` over COMM_WORLD and, on rank 0, over COMM_SELF.
    Returns (on every rank) whether the results and the named output files agree, and the
    results of the spread run."""
    from mpi4py import MPI

    from solver.context import RunContext

    comm = MPI.COMM_WORLD
    base = comm.bcast(tmp_path, root=0)
    (base / "all").mkdir(exist_ok=True)
    spread = run(case, RunContext(comm=comm, out_dir=base / "all", quiet=True))
    same = None
    if comm.rank == 0:
        (base / "one").mkdir()
        alone = run(case, RunContext(comm=MPI.COMM_SELF, out_dir=base / "one", quiet=True))
        same = spread.results == alone.results and all(
            (base / "all" / f).read_text() == (base / "one" / f).read_text() for f in files)
    return comm.bcast(same, root=0), spread.results
