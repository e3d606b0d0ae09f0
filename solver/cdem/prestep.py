"""Implicit gravity prestep of a relax stage (``prestep = "implicit"``), the role of the
elastic prestep of implicit codes (PyLith's, for instance) before the explicit march.

With every interface spring intact, the equilibrium of the CDEM model under gravity is a
linear elastic problem: the hex8 stiffness plus the interface springs as penalty links
between the split nodes (solver.cdem.stiffness), the held dofs as constraints. The prestep
solves it by Newton's method with that stiffness, K, kept fixed:

    r = F_int + F_spring + F_contact + m g   (the unbalanced nodal force, held dofs 0)
    K du = r,   then the state advances by du through the explicit kernels themselves:
    element stresses and forces by solver.cdem.hex8.element_step and spring forces by
    solver.cdem.interface.interface_step (failure criteria off),

until the unbalance ratio (the time loop's: sum |r| / sum (|F_int| + |F_spring| + |m g|)
over the free dofs) is below PRECISION times the stage's ``unbalance_tol``. The first
correction is the linear elastic solution; the next ones remove what the kernels' large-
rotation update adds to it (terms of the order of the strain), so the state left behind is
the equilibrium of the very model the time loop marches, and the relaxation that follows
starts converged unless something fails.

The failure criteria are not applied during the solve: the first step of the stage applies
them to the gravity state (so an overloaded spring breaks there and the relaxation goes on
from the broken state); the prestep reports how many springs that will break
(``overloaded_springs``), from a dry run of the spring kernel on a copy of their state.

Energy: the nodes end at rest. The work of gravity over du goes into the tally, and what of
it is not stored as strain energy is booked as damping, as the damped relaxation it replaces
would have dissipated it.
"""

from __future__ import annotations

import dataclasses
import sys
import time

import numpy as np
import scipy.sparse as sp
from mpi4py import MPI

from solver import exact_sum
from solver.cdem.config import Stage
from solver.cdem.hex8 import element_step
from solver.cdem.interface import INTACT, interface_step, interface_tally, sum_slots
from solver.cdem.linear_solvers import SOLVERS, LocalSystem, default_backend
from solver.cdem.stiffness import element_stiffness, face_normals, spring_stiffness
from solver.cdem.timeloop import TimeLoop, gravity_at
from solver.errors import InputError
from solver.exact_sum import global_sums

#: The prestep stops at an unbalance ratio below PRECISION x the stage's unbalance_tol.
PRECISION = 1e-3
#: Relative residual of each linear solve.
RTOL = 1e-6
#: Relative diagonal shift of K (see solver.cdem.linear_solvers).
SHIFT = 1e-8
NEWTON_MAX = 8


def implicit_prestep(comm, loop: TimeLoop, stage: Stage, where: str,
                     backend: str | None = None) -> dict:
    """Bring ``loop``'s model to gravity equilibrium before ``stage`` (collective); returns
    what it did for the stage's results. ``backend``: ``petsc`` or ``scipy`` (default:
    petsc when petsc4py imports)."""
    clock = [time.perf_counter()]
    seconds = dict.fromkeys(["assembly", "solver_setup", "solves", "state_updates"], 0.0)

    def lap(phase: str) -> None:
        now = time.perf_counter()
        seconds[phase] += now - clock[0]
        clock[0] = now

    model = loop.m
    g = gravity_at(loop.g0, stage, 0.0)[0]
    backend = backend or default_backend()
    system = assemble(comm, model)
    if backend == "scipy" and comm.size > 1 and comm.rank == 0:
        print(f"warning: {where}: petsc4py is not installed: the implicit system "
              f"({system.n_global} unknowns) is gathered to rank 0 and solved there",
              file=sys.stderr)
    lap("assembly")
    solver = SOLVERS[backend](comm, system, RTOL, SHIFT, where)
    del system
    lap("solver_setup")
    before = _stored(loop) + loop.energies.kinetic
    model.nodes.v[:] = 0.0
    work = exact_sum.accumulator()
    iterations = []
    target = PRECISION * stage.unbalance_tol
    residual, ratio = unbalanced_force(comm, model, g)
    while ratio >= target and len(iterations) < NEWTON_MAX:
        lap("state_updates")
        du, its = solver.solve(residual.ravel())
        lap("solves")
        du = du.reshape(-1, 3)
        exact_sum.add_all(work, (model.nodes.mass[:, None] * g * du).ravel())
        advance(model, du, loop.tally)
        iterations.append(its)
        residual, ratio = unbalanced_force(comm, model, g)
    if ratio >= target:
        raise InputError(where, f"no equilibrium found (unbalance ratio {ratio:.2e} after "
                                f"{len(iterations)} solves): every block must be glued to a "
                                f"held one; relax without the prestep")
    work = float(exact_sum.value(exact_sum.total(comm, work)))
    e = loop.energies
    e.gravity_work += work
    e.damping += work + before - _stored(loop)
    e.kinetic = 0.0
    overloaded = overloaded_springs(comm, model)
    lap("state_updates")
    seconds = {k: comm.allreduce(v, op=MPI.MAX) for k, v in seconds.items()}
    return {"solver": solver.name, "unknowns": solver.n_global,
            "linear_iterations": iterations, "unbalance_ratio": ratio,
            "overloaded_springs": overloaded, "wall_s": sum(seconds.values()),
            "seconds": seconds}


def _stored(loop: TimeLoop) -> float:
    e = loop.update_stored_energy()
    return e.strain + e.spring + e.spring_dissipated


def assemble(comm, model) -> LocalSystem:
    """This rank's share of K (elements and intact springs at the current coordinates): the
    own rows of its elements and the rows of the ghost B nodes its springs reach, in the
    global numbering where rank p owns a contiguous range of 3 x 8 x (its elements) unknowns
    in its node-row order."""
    n, e, s = model.nodes, model.elements, model.springs
    n_own, n_all = n.n_own, len(n.du)
    node_offset = comm.exscan(n_own) or 0
    numbers = 3.0 * (node_offset + np.arange(n_all))[:, None] + np.arange(3)
    model.interfaces.du_halo.forward(numbers)
    k_el = element_stiffness(n.x.reshape(-1, 8, 3), e.lam, e.mu)
    size = 3 * n_all
    local = sp.bsr_matrix((k_el, np.arange(len(k_el)), np.arange(len(k_el) + 1)),
                          shape=(3 * n_own, 3 * n_own)).tocsr()
    del k_el
    local.resize((size, size))
    q, k = np.nonzero(s.state == INTACT)
    stiff = spring_stiffness(face_normals(n.x, s.node_i), s.k_n, s.k_s)[q]
    i, j = s.node_i[q, k], s.node_j[q, k]
    rows, cols, values = [], [], []
    for a, b, sign in ((i, i, 1.0), (j, j, 1.0), (i, j, -1.0), (j, i, -1.0)):
        rows.append(np.repeat(3 * a[:, None] + np.arange(3), 3, axis=1).ravel())
        cols.append(np.tile(3 * b[:, None] + np.arange(3), (1, 3)).ravel())
        values.append(sign * stiff.ravel())
    local += sp.csr_matrix((np.concatenate(values), (np.concatenate(rows),
                                                    np.concatenate(cols))), shape=(size, size))
    return LocalSystem(dof=numbers.astype(np.int64).ravel(), indptr=local.indptr,
                       indices=local.indices, values=local.data, offset=3 * node_offset,
                       n_local=3 * n_own, n_global=3 * comm.allreduce(n_own, op=MPI.SUM),
                       held=n.fixed.ravel().copy(), coords=n.x.copy())


def unbalanced_force(comm, model, g: np.ndarray) -> tuple[np.ndarray, float]:
    """The unbalanced nodal force (n_own, 3), zero on held dofs, and the global unbalance
    ratio of solver.cdem.timeloop (sum over free dofs of |F| over |F_int| + |F_spring| +
    |m g|)."""
    n = model.nodes
    spring = np.empty_like(n.f_contact)
    sum_slots(model.springs.f_slot, spring)
    spring += n.f_contact
    weight = n.mass[:, None] * g
    force = n.f_int + spring + weight
    free = ~n.fixed
    sums = global_sums(comm, [np.abs(force[free]),
                              (np.abs(n.f_int) + np.abs(spring) + np.abs(weight))[free]])
    force[n.fixed] = 0.0
    return force, sums[0] / sums[1] if sums[1] > 0 else 0.0


def advance(model, du: np.ndarray, tally: np.void) -> None:
    """Move the own nodes by du (n_own, 3) and update element stresses and forces and the
    spring forces through the explicit kernels (no failure), as one quasi-static step;
    ``tally``: the interface springs' energy record (solver.cdem.interface.INTERFACE_ENERGY)."""
    n, e, s, ifc = model.nodes, model.elements, model.springs, model.interfaces
    n.du[:n.n_own] = du
    n.x += du
    element_step(n.x, n.du, e.stress, n.f_int, e.lam, e.mu, e.model)
    ifc.du_halo.forward(n.du)
    interface_step(n.x, n.du, s.packed, False, tally)
    ifc.slot_halo.reverse_set(s.f_slot.reshape(-1, 3))
    if model.contact is not None:
        model.contact.refresh_ghosts(n.du)


def overloaded_springs(comm, model) -> int:
    """Intact springs whose force exceeds their strength (tensile or Mohr-Coulomb), by the
    spring kernel on a copy of their state with a zero step (global count)."""
    n, s = model.nodes, model.springs
    zero = np.zeros_like(n.du)
    trial = dataclasses.replace(s, f_slot=s.f_slot.copy(), u_n=s.u_n.copy(), f_s=s.f_s.copy(),
                                state=s.state.copy())
    broken = interface_step(n.x, zero, trial.packed, True, interface_tally())
    return comm.allreduce(int(broken), op=MPI.SUM)
