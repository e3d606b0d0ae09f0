"""solver: an MPI-parallel CDEM geomechanics solver (blocks, interface springs, contact,
point-mass slides, ellipsoid impacts, rockfall).

Run cases with ``solver run CASE.toml``; see README.md.

Importing the package sets the thread count of numpy's BLAS (OpenBLAS, MKL, OpenMP) to 1
unless the environment already sets it: the solver runs one MPI rank per core, and a
threaded BLAS starts a thread per core in every rank, whose idle threads spin and take the
cores from the other ranks (two ranks on two cores, each making 200 passes over a 32 MB
array with three 843,000-row matrix-vector products every 10th, as the landslide
observer's sums of a production run, took 3.7 times as long with OpenBLAS's default
threads). It acts when the package is imported before numpy, as the ``solver`` command
does.
"""

import os

for _blas_threads in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_blas_threads, "1")

__version__ = "0.1.0"
