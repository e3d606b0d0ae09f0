"""solver: an MPI-parallel CDEM geomechanics solver (blocks, interface springs, contact,
point-mass slides, ellipsoid impacts, rockfall).

Run cases with ``solver run CASE.toml``; see README.md.
"""

__version__ = "0.1.0"
