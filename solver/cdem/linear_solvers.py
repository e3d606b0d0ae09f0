"""Distributed sparse symmetric positive definite solves for the implicit prestep.

A :class:`LocalSystem` is one rank's share of K du = r: the rows it contributes (its own
unknowns and the ghost rows its interface springs reach, summed over ranks by the solver),
the contiguous range of unknowns it owns, which of them are held (du = 0), and their
coordinates (for the rigid-body near null space of the multigrid preconditioner).

Backends (conjugate gradients with algebraic multigrid):

* ``petsc``: PETSc's KSP CG with GAMG (smoothed aggregation) on a matrix distributed by the
  same partition as the model (petsc4py; Balay et al., PETSc users manual). KSP options
  take the prefix ``prestep_`` (``PETSC_OPTIONS="-prestep_pc_type hypre"``).
* ``scipy``: pyamg's smoothed aggregation as the preconditioner of its CG (Bell, Olson &
  Schroder, PyAMG). It runs on rank 0: on several ranks the system is gathered there.

Held unknowns are removed symmetrically (zero row and column, unit diagonal). A relative
shift ``shift`` of the diagonal, K + shift diag(K), keeps K regular when the holds leave a
rigid-body mode free (a column on a roller base turns freely about its axis); the caller's
outer iteration removes the error it makes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from solver.cdem.stiffness import rigid_body_modes
from solver.errors import InputError

#: Upper bound of the stored entries per row: the 24 of the element and 3 springs (one per
#: face at the node) of 3 entries each, of which at most these 9 may lie on another rank.
ROW_ENTRIES = (33, 9)
MAX_ITERATIONS = 2000


@dataclass
class LocalSystem:
    """This rank's contributions as a CSR matrix (indptr, indices, values) over its local
    unknowns, whose global ids are dof; offset, n_local: the unknowns this rank owns,
    offset .. offset + n_local - 1, of n_global (its first n_local local unknowns); held
    (n_local,) bool; coords (n_local / 3, 3) [m] of the owned nodes."""

    dof: np.ndarray
    indptr: np.ndarray
    indices: np.ndarray
    values: np.ndarray
    offset: int
    n_local: int
    n_global: int
    held: np.ndarray
    coords: np.ndarray


def default_backend() -> str:
    """``petsc`` when petsc4py and its PETSc import, else ``scipy``."""
    try:
        from petsc4py import PETSc  # noqa: F401
    except ImportError:
        return "scipy"
    return "petsc"


class PetscSolver:
    """CG + GAMG on a PETSc AIJ matrix (block size 3) with the rigid-body near null space."""

    def __init__(self, comm, system: LocalSystem, rtol: float, shift: float, where: str):
        from petsc4py import PETSc

        self.where = where
        self.n_global = system.n_global
        n, big_n = system.n_local, system.n_global
        ints = PETSc.IntType
        a = PETSc.Mat().createAIJ(size=((n, big_n), (n, big_n)), bsize=3, nnz=ROW_ENTRIES,
                                  comm=comm)
        a.setOption(PETSc.Mat.Option.NEW_NONZERO_ALLOCATION_ERR, False)
        dof = system.dof.astype(ints)
        a.setValuesIJV(system.indptr.astype(ints), dof[system.indices], system.values,
                       addv=PETSc.InsertMode.ADD_VALUES, rowmap=dof)
        a.assemble()
        diagonal = a.getDiagonal()
        diagonal.scale(shift)
        a.setDiagonal(diagonal, addv=PETSc.InsertMode.ADD_VALUES)
        held = (system.offset + np.nonzero(system.held)[0]).astype(ints)
        a.zeroRowsColumns(held, diag=1.0)
        coords = PETSc.Vec().createWithArray(np.ascontiguousarray(system.coords).ravel(),
                                             size=(n, big_n), bsize=3, comm=comm)
        a.setNearNullSpace(PETSc.NullSpace().createRigidBody(coords))
        ksp = PETSc.KSP().create(comm=comm)
        ksp.setOptionsPrefix("prestep_")
        ksp.setOperators(a)
        ksp.setType("cg")
        ksp.getPC().setType("gamg")
        ksp.setTolerances(rtol=rtol, atol=0.0, max_it=MAX_ITERATIONS)
        ksp.setFromOptions()
        self.name = f"petsc {ksp.getType()} + {ksp.getPC().getType()}"
        self.matrix, self.ksp = a, ksp
        self.b, self.x = a.createVecLeft(), a.createVecRight()

    def solve(self, rhs: np.ndarray) -> tuple[np.ndarray, int]:
        """du (n_local,) and the CG iterations."""
        self.b.array[:] = rhs
        self.x.set(0.0)
        self.ksp.solve(self.b, self.x)
        reason = self.ksp.getConvergedReason()
        if reason < 0:
            raise InputError(self.where, f"the linear solve failed ({self.name}, "
                                         f"KSPConvergedReason {reason})")
        return self.x.array.copy(), self.ksp.getIterationNumber()


class ScipySolver:
    """pyamg smoothed aggregation + CG on rank 0; the other ranks send their rows there."""

    name = "pyamg cg + smoothed aggregation"

    def __init__(self, comm, system: LocalSystem, rtol: float, shift: float, where: str):
        import pyamg

        self.comm = comm
        self.rtol = rtol
        self.where = where
        self.n_global = system.n_global
        rows = np.repeat(system.dof, np.diff(system.indptr))
        parts = comm.gather((rows, system.dof[system.indices], system.values, system.held,
                             system.coords), root=0)
        self.counts = comm.gather(system.n_local, root=0)
        self.ml = None
        if comm.rank != 0:
            return
        rows, cols, values, held, coords = (np.concatenate(p) for p in zip(*parts))
        big_n = system.n_global
        k = sp.csr_matrix((values, (rows, cols)), shape=(big_n, big_n))
        k = k + sp.diags(shift * k.diagonal())
        free = sp.diags((~held).astype(float))
        k = (free @ k @ free + sp.diags(held.astype(float))).tobsr(blocksize=(3, 3))
        modes = rigid_body_modes(coords)
        modes[held] = 0.0
        self.ml = pyamg.smoothed_aggregation_solver(k, B=modes, symmetry="symmetric")

    def solve(self, rhs: np.ndarray) -> tuple[np.ndarray, int]:
        """du (n_local,) and the CG iterations."""
        parts = self.comm.gather(rhs, root=0)
        chunks, iterations, error = None, 0, None
        if self.comm.rank == 0:
            b = np.concatenate(parts)
            residuals = []
            u = self.ml.solve(b, tol=self.rtol, maxiter=MAX_ITERATIONS, accel="cg",
                              residuals=residuals)
            iterations = len(residuals) - 1
            if residuals[-1] > self.rtol * max(residuals[0], 1e-300):
                error = (f"the linear solve did not converge ({self.name}: relative residual "
                         f"{residuals[-1] / residuals[0]:.2e} after {iterations} iterations)")
            chunks = np.split(u, np.cumsum(self.counts)[:-1])
        error = self.comm.bcast(error, root=0)
        if error is not None:
            raise InputError(self.where, error)
        return self.comm.scatter(chunks, root=0), self.comm.bcast(iterations, root=0)


SOLVERS = {"petsc": PetscSolver, "scipy": ScipySolver}
