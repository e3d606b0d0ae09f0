"""Point-mass slide module: the UBO-Inter model of Gallotti et al. (2020).

N point masses on a grid slide on a surface z = f(x, y) (plane, sphere cup, expression or
terrain elevation raster); grid sides carry rigid-body (RB) forces from a linear solve every
evaluation (Eqs. 6-9), diagonals carry elasto-plastic (EP) forces (Eq. 5); gravity, surface
reaction and basal friction (Eqs. 2-4), buoyancy and water drag underwater (section 4); RK4 in
time.

Layout: config.py (case schema), expression.py / terrain.py (elevation and thickness rasters)
/ surface.py (the surface), grid.py (the masses and links), forces.py (force kernels and the
RB system), dynamics.py (accelerations), integrate.py (RK4), simulate.py (the time loop of one
run), benchmark.py (sphere cup theory), output.py (VTK, CSV, PNG), run.py (entry point: the
runs of a sweep, solver.sweep, shared over the MPI ranks).
"""
