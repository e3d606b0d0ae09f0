"""The stable step of the explicit central difference, bound per node over what can act.

A node's highest frequency is bounded by the element's own largest frequency plus the
Gershgorin bound of the springs at the node:

    omega_node^2 = omega_el^2 + 2 k_node / m_node,

k_node the stiffness the node carries. Each node of a hex lies on three of its faces
(``NODE_FACES``), and a face holds one of two things at a time:

* glued: the interface spring of that face at the node (K = max(k_n, k_s) A_face / 4,
  solver.cdem.interface);
* active (free, or every spring of the face broken, when the model has contact): no spring.

The contact acts at the nodes of an element with an active face: at each node at most its
three own semi-springs and three semi-springs of elements that press its faces there, each
taken as stiff as the element's stiffest face (K = 6 max_f max(k_n, k_t) A_f / 4, Feng et
al. 2014 section 3), with the dashpot damping ratio of the contact
(solver.cdem.contact.pipeline.ContactParams.node_damping_ratio). Elements all of whose
faces are glued carry no contact.

Without contact a broken spring keeps its residual friction and compression, so the face
stays glued in the bound. A face's springs leave the bound once all four are broken (they
carry nothing from then on: solver.cdem.interface, hand-over), and the contact enters it at
the nodes of an element whose first face turned active, so the bound follows the glue
(``StepControl``). Nodes held in all three directions do not move and set no bound (unless
no node of the model moves: a prescribed motion, where all count). The step of a stage is
``safety`` times the smallest bound over all nodes, under the stage's damping
(:func:`critical_step`): one global value, the minimum over the ranks of bounds that each
element computes from its own data and the glue table alone, so it is the same, to the last
bit, on any number of ranks.

For a step given in the case (``time.dt``), and for the checks before a run, the bound
takes every spring glued and the contact on every element with a face that can open (free,
or glued by breakable springs: ``worst_limits``), which no glue state exceeds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mpi4py import MPI

from solver.cdem.hex8 import thinnest_height
from solver.mesh.topology import FACES

#: The three faces each local node a of a hex lies on (8, 3), in face order.
NODE_FACES = np.array([[f for f in range(6) if a in FACES[f]] for a in range(8)])


def critical_step(omega: np.ndarray, zeta: np.ndarray, alpha: float = 0.0,
                  c: float = 0.0) -> np.ndarray:
    """Largest stable central-difference step of an oscillator of circular frequency omega
    with dashpot damping ratio zeta, under Cundall local damping alpha and mass-proportional
    damping c [1/s] (the time loop's ``local`` and ``viscous`` modes).

    Damping taken with the last half-step velocity (dashpots, mass-proportional damping)
    is stable for dt <= (2 / omega) (sqrt(1 + zeta^2) - zeta) (Belytschko et al. 2000,
    section 6.2), here with zeta + c / (2 omega).

    Local damping (Cundall 1987), F_d = -alpha |F| sign(v^{n-1/2}), scales the force by
    1 - alpha where v has the sign of F and by 1 + alpha where it opposes F. In the mode
    that sets the step limit, x_n = (-1)^n X, v^{n-1/2} = 2 (-1)^n X / dt always opposes
    F_n = -k x_n, so the scheme integrates m a = (1 + alpha) F in every step and grows once
    (1 + alpha) omega^2 dt^2 > 4; with several dofs, M^-1 diag(1 +- alpha) K has no
    eigenvalue above (1 + alpha) times the largest of M^-1 K. So omega and the dashpot
    force grow by sqrt(1 + alpha) and 1 + alpha: omega' = sqrt(1 + alpha) omega,
    zeta' = sqrt(1 + alpha) zeta (derived here; tests/test_stable_step.py checks the limit
    on the time loop's own kernel)."""
    omega = np.sqrt(1.0 + alpha) * omega
    zeta = np.sqrt(1.0 + alpha) * zeta + c / (2.0 * omega)
    return 2.0 / (omega * (np.hypot(1.0, zeta) + zeta))


def element_frequency(density: np.ndarray, lam: np.ndarray, mu: np.ndarray,
                      x_el: np.ndarray) -> np.ndarray:
    """Largest circular frequency of each element alone (n_el,), with its lumped masses:
    omega^2 = 4 max(3K, 2G) / (rho h^2), max(3K, 2G) the largest eigenvalue of the elastic
    [D] (3K = 3 lam + 2 mu), h = solver.cdem.hex8.thinnest_height. For a cube it is the
    largest eigenvalue of the element's stiffness over its masses (the volumetric mode for
    nu >= 0, a shear mode below); boxes, parallelepipeds and distorted elements stay below
    it (tests/test_stable_step.py). The p-wave estimate 2 c_p / h falls short of it by up to
    sqrt(3) (nu -> 0.5)."""
    modulus = np.maximum(3.0 * lam + 2.0 * mu, 2.0 * mu)
    return 2.0 * np.sqrt(modulus / density) / thinnest_height(x_el)


def _face_sum(per_face: np.ndarray) -> np.ndarray:
    """Sum over each node's three faces (n, 6) -> (n, 8), in NODE_FACES order."""
    k0, k1, k2 = (per_face[:, NODE_FACES[:, j]] for j in range(3))
    return (k0 + k1) + k2


@dataclass
class StepBound:
    """What the stable step of a rank's elements (n,) rests on: omega_el2 (n,) the square of
    each element's own largest frequency (:func:`element_frequency`) [1/s2]; node_mass (n, 8)
    [kg]; moving (n, 8) the nodes that set a bound: those not held in all three directions
    (every node, where none in the model moves); spring_k (n, 6) the interface spring a
    node of each face carries while the face is glued (0: no shared face); contact_k (n,)
    the contact stiffness every node of the element carries while any of its faces is
    active (0: none can open) [N/m] (module docstring); zeta the contact dashpots' damping
    ratio at those nodes."""

    omega_el2: np.ndarray
    node_mass: np.ndarray
    moving: np.ndarray
    spring_k: np.ndarray
    contact_k: np.ndarray
    zeta: float

    def _nodes(self, spring_k: np.ndarray, contact: np.ndarray,
               rows) -> tuple[np.ndarray, np.ndarray]:
        """(omega, zeta) of the nodes (len(rows), 8) of the elements ``rows`` whose faces
        carry springs ``spring_k`` (len(rows), 6), with the contact where ``contact``
        (len(rows),)."""
        contact_k = np.where(contact, self.contact_k[rows], 0.0)
        omega = np.sqrt(self.omega_el2[rows][:, None]
                        + 2.0 * (_face_sum(spring_k) + contact_k[:, None])
                        / self.node_mass[rows])
        zeta = np.where(contact_k > 0.0, self.zeta, 0.0)
        return omega, np.repeat(zeta[:, None], 8, axis=1)

    def _glued(self, active: np.ndarray, rows) -> tuple[np.ndarray, np.ndarray]:
        """(omega, zeta) of the nodes of the elements ``rows`` with the active faces
        ``active`` (len(rows), 6): springs on the glued faces, contact where any is active."""
        return self._nodes(np.where(active, 0.0, self.spring_k[rows]), active.any(axis=1),
                           rows)

    def _limits(self, omega: np.ndarray, zeta: np.ndarray, damping, rows) -> np.ndarray:
        step = critical_step(omega, zeta, *damping)
        return np.where(self.moving[rows], step, np.inf).min(axis=1)

    def element_limits(self, active: np.ndarray, damping=(0.0, 0.0),
                       rows=slice(None)) -> np.ndarray:
        """The stable step of each element ``rows`` [s]: the smallest :func:`critical_step`
        of its moving nodes under the stage's ``damping`` (Cundall local alpha,
        mass-proportional c); inf where none moves."""
        return self._limits(*self._glued(active, rows), damping, rows)

    def element_omega(self, active: np.ndarray, rows=slice(None)) -> np.ndarray:
        """The highest frequency of the moving nodes of each element ``rows`` (of all its
        nodes where none moves) [1/s]: what the contact's dashpot masses are capped by
        (solver.cdem.contact.law.stable_dashpot_mass)."""
        omega, _ = self._glued(active, rows)
        moving = self.moving[rows]
        counted = moving | ~moving.any(axis=1)[:, None]
        return np.where(counted, omega, 0.0).max(axis=1)

    def worst_limits(self, damping=(0.0, 0.0)) -> np.ndarray:
        """The stable step of each element with every spring glued and the contact on every
        element with a face that can open: at most the bound of any glue state [s]."""
        rows = slice(None)
        return self._limits(*self._nodes(self.spring_k, self.contact_k > 0.0, rows), damping,
                            rows)


class StepControl:
    """The global step of each stage: ``safety`` times the smallest stable step of all
    elements under the stage's damping and the current glue (adaptive), or the case's
    ``time.dt`` when it gives one (``fixed``). ``set_active`` takes the active faces after
    a glue change and renews the bound of the elements whose faces changed; ``step`` is
    collective (one MIN reduction)."""

    def __init__(self, comm, bound: StepBound, active: np.ndarray, safety: float,
                 fixed: float = 0.0):
        self.comm = comm
        self.bound = bound
        self.active = active.copy()
        self.safety = safety
        self.fixed = fixed
        self.damping = None
        self.limits = np.zeros(0)

    def set_active(self, active: np.ndarray) -> np.ndarray:
        """Take the active faces (n, 6); returns the elements whose faces changed."""
        changed = np.nonzero((active != self.active).any(axis=1))[0]
        self.active[changed] = active[changed]
        if self.damping is not None and len(changed):
            self.limits[changed] = self.bound.element_limits(self.active[changed],
                                                             self.damping, changed)
        return changed

    def element_omega(self, rows=slice(None)) -> np.ndarray:
        """The highest node frequency of the elements ``rows`` under the current glue."""
        return self.bound.element_omega(self.active[rows], rows)

    def step(self, damping: tuple[float, float]) -> float:
        """The step [s] under the stage's ``damping`` and the current glue (collective)."""
        if self.fixed > 0.0:
            return self.fixed
        if damping != self.damping:
            self.damping = damping
            self.limits = self.bound.element_limits(self.active, damping)
        local = np.array([self.limits.min(initial=np.inf)])
        self.comm.Allreduce(MPI.IN_PLACE, local, op=MPI.MIN)
        return self.safety * float(local[0])
