"""Rockfall module: ellipsoidal blocks on a slope profile or a DEM, every ground impact
resolved by the ellipsoid-impact module (HyStone-type simulation, Agliardi & Crosta 2003, with
the impact model of Dattola et al. 2023), stochastic ensembles over MPI ranks.

Layout: config.py (case schema), terrain.py (2-D profile, 3-D raster shared with the point-mass
module), body.py (block geometry, inertia, torque-free rotation), flight.py (free flight and
exact ground contact), bounce.py (impact in the local n-t frame), rolling.py (rolling, sliding,
arrest), trajectory.py (the phase machine of one block), ensemble.py (runs and release states),
statistics.py (fits and envelopes), output.py (CSV, PNG, VTK), run.py (entry point).
"""
