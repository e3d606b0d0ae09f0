"""What a CDEM case measures: the observer of the time loop chosen by ``analysis.type``.

The observers that check a case against its theory (``pendulum``, ``failure``, ``column``,
``sliding``, ``resting``, ``stack``) are in :mod:`solver.cdem.analyses.checks`; the
``landslide`` observer, from gravity equilibrium to the deposit, in
:mod:`solver.cdem.analyses.landslide`, with its deposit maps, tables and plots in
:mod:`solver.cdem.analyses.deposit`.
"""

from __future__ import annotations

from solver.cdem.analyses.checks import (ColumnObserver, FailureObserver, PendulumObserver,
                                         RestingObserver, SlidingObserver, StackObserver)
from solver.cdem.analyses.landslide import LandslideObserver
from solver.cdem.config import Config
from solver.mesh.hexmesh import HexMesh
from solver.mesh.measures import MeshMeasures

OBSERVERS = {"pendulum": PendulumObserver, "sliding": SlidingObserver,
             "resting": RestingObserver, "stack": StackObserver}
"""The observers set up from the mesh alone, by ``analysis.type``."""


def make_observer(comm, cfg: Config, mesh: HexMesh | None, measures: MeshMeasures | None,
                  where: str, output=None):
    """The observer of the case's ``analysis.type`` (or None), set up from the whole mesh
    and its measures (solver.mesh.measures), which only rank 0 holds (None elsewhere);
    ``output`` = (run folder, case name) for the observers that write tables and plots
    (solver.cdem.analyses.landslide). Collective."""
    kind = cfg.analysis.type
    if kind == "column":
        return ColumnObserver(comm, cfg, mesh)
    if kind == "failure":
        return FailureObserver(comm, cfg, mesh, measures, where)
    if kind == "landslide":
        return LandslideObserver(comm, cfg, mesh, measures, where, output)
    if kind in OBSERVERS:
        return OBSERVERS[kind](comm, cfg, mesh, where)
    return None
