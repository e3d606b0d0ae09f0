"""solver: an MPI-parallel CDEM geomechanics solver (blocks, interface springs, contact,
point-mass slides, ellipsoid impacts, rockfall).

Run cases with ``solver run CASE.toml`` (see README.md), or from Python::

    import solver
    run = solver.run_case("cases/pointmass_incline.toml", out="out/incline",
                          overrides={"friction.mu": 0.2}, overwrite=True)
    run.summary["results"]                  # summary.json
    run.tables["com"]                       # com.csv: pandas DataFrame, or numpy record array
    for time, grid in run.frames():         # the case's VTK series, each frame read by pyvista
        ...
    solver.load_run("out/incline")          # the same for a finished run

``run_case`` runs in this process on MPI.COMM_WORLD (or ``comm=``): under ``mpiexec`` every
rank calls it. Bad input raises :class:`InputError` (``.line``: the CLI's one error line).
``code_tables(dataset.field_data.keys())`` gives back the tables that explain the integer
codes of the VTK output (group names, spring and contact states).

Importing the package sets the thread count of numpy's BLAS (OpenBLAS, MKL, OpenMP) to 1
unless the environment already sets it: the solver runs one MPI rank per core, and a
threaded BLAS starts a thread per core in every rank, whose idle threads spin and take the
cores from the other ranks (two ranks on two cores, each making 200 passes over a 32 MB
array with three 843,000-row matrix-vector products every 10th, as the landslide
observer's sums of a production run, took 3.7 times as long with OpenBLAS's default
threads). It acts when the package is imported before numpy, as the ``solver`` command
does.
"""

import importlib
import os

for _blas_threads in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_blas_threads, "1")

_EXPORTS = {"run_case": "solver.api", "load_run": "solver.api",
            "RunFolder": "solver.io.run_folder", "InputError": "solver.errors",
            "code_tables": "solver.io.vtk", "__version__": "solver.version"}
"""Each name of the API and the module that defines it, imported on first use: the
``solver`` command imports nothing heavy (numpy) before it takes care of the signals
(solver.interrupt)."""

__all__ = ["run_case", "load_run", "RunFolder", "InputError", "code_tables", "__version__"]


def __getattr__(name: str):
    """The API name ``name`` from its module (:data:`_EXPORTS`), imported on first use."""
    if name not in _EXPORTS:
        raise AttributeError(f"module 'solver' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
