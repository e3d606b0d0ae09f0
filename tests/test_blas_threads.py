"""Importing the package keeps numpy's BLAS to one thread per MPI rank (solver/__init__.py),
unless the environment sets the thread count."""

import os
import subprocess
import sys

import pytest

BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS")


@pytest.mark.parametrize(("preset", "expected"), [({}, ["1", "1", "1"]),
                                                  ({"OPENBLAS_NUM_THREADS": "3"}, ["3", "1", "1"])])
def test_blas_runs_one_thread_per_rank_unless_the_environment_sets_it(preset, expected):
    env = {k: v for k, v in os.environ.items() if k not in BLAS_THREADS} | preset
    probe = f"import os, solver; print(*(os.environ[k] for k in {BLAS_THREADS}))"
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == expected
