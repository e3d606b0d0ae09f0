"""Ellipsoid impact module (Dattola et al. 2023): rheological macro-element impact of an ellipsoid
of revolution on deformable ground and its restitution coefficients.

``geometry`` (footprint, Appendix D corrected), ``rheology`` (equivalent-foundation laws),
``dynamics`` (3-DOF equations of motion, solve_ivp with end events), ``restitution``
(Eqs. 1-6), ``sweeps`` (single impacts and MPI-parallel parametric studies), ``plots``,
``config`` (case schema) and ``run`` (the ``module = "impact"`` entry point).
"""
