"""Contact laws shared by the CDEM contacts and the restitution analysis.

``laws``: numba kernels (linear spring-dashpot normal force, Cundall-Strack tangential spring
with the Coulomb cap, brittle Mohr-Coulomb rock joint); ``restitution``: one oblique collision
integrated with them (Becker et al. 2008); ``run``: the ``module = "contact_laws"`` case (the e_t
map).
"""
