"""Observers of the time loop that check a CDEM case against its theory.

* ``pendulum``: a body pinned on an axis swinging under gravity, against the rigid-body ODE
  I psi'' = axis . (r_c(psi) x M g) (solved with scipy solve_ivp), I and r_c from the mesh's
  exact rigid-body mass distribution (2x2x2 Gauss integration of rho |r_perp|^2).
* ``failure``: the load (tilt angle or gravity factor) at the first broken spring, against the
  closed form for a rigid block glued on uniform springs (see :func:`failure_theory`).
* ``column``: a gravity-loaded column relaxed to equilibrium; element stresses against
  sigma_zz = -rho g (H - z).
* ``sliding``: a block on a fixed base (contact only) in the last stage, its acceleration
  against a = g (sin(theta) - cos(theta) tan(phi)).
* ``resting``: a block dropped on a fixed base comes to rest; the sum of the contact normal
  forces against its weight m |g|.
* ``stack``: blocks on a tilting platform; the tilt at which a block has moved more than
  ``failure_displacement`` during the last stage (no closed form).
"""

from __future__ import annotations

import math

import numpy as np
from mpi4py import MPI
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

from solver.cdem.config import Config
from solver.cdem.model import MaterialTable, group_ids
from solver.exact_sum import global_sum, global_sums
from solver.mesh.hexmesh import HexMesh
from solver.mesh.reference_hex import gauss_points, jacobians, shape_values
from solver.mesh.measures import MeshMeasures
from solver.mesh.topology import FACES, face_areas
from solver.parallel import on_root
from solver.rotation import rotate_about_axis


def _densities(mesh: HexMesh, cfg: Config, where: str) -> np.ndarray:
    table = MaterialTable.build(cfg.materials, np.unique(mesh.groups), mesh.group_names, where)
    return table.density[table.row(mesh.groups)]


def _block_ids(mesh: HexMesh, cfg: Config, where: str) -> np.ndarray:
    return group_ids(cfg.analysis.block_group, np.unique(mesh.groups), mesh.group_names,
                     f"{where}: analysis.block_group")


def rigid_body_properties(mesh: HexMesh, density: np.ndarray, pivot, axis):
    """Mass M, centre of mass and moment of inertia about the axis through ``pivot``, by
    2x2x2 Gauss integration over the mesh (exact for box elements)."""
    x = mesh.points[mesh.cells]
    jac = jacobians(x)
    w = np.linalg.det(jac) * density[:, None]                      # (n_el, 8) rho dV
    xg = np.einsum("ga,eak->egk", shape_values(gauss_points()), x)  # Gauss point positions
    mass = w.sum()
    com = np.einsum("eg,egk->k", w, xg) / mass
    r = xg - pivot
    r_perp = r - np.einsum("egk,k->eg", r, axis)[..., None] * axis
    inertia = np.einsum("eg,eg->", w, np.einsum("egk,egk->eg", r_perp, r_perp))
    return mass, com, inertia


def _block_mass(mesh: HexMesh, cfg: Config, where: str) -> float:
    in_block = np.isin(mesh.groups, _block_ids(mesh, cfg, where))
    mass, _, _ = rigid_body_properties(
        HexMesh(mesh.points, mesh.cells[in_block], mesh.groups[in_block]),
        _densities(mesh, cfg, where)[in_block], np.zeros(3), np.array([0.0, 0.0, 1.0]))
    return float(mass)


def pendulum_angle_ode(times: np.ndarray, mass: float, inertia: float, r_c0: np.ndarray,
                       axis: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Rotation angle psi(t) of a rigid body about a fixed axis, from rest:
    I psi'' = axis . (R(psi) r_c0 x M g)."""
    def rhs(_, y):
        torque = axis @ np.cross(rotate_about_axis(r_c0, axis, y[0]), mass * g)
        return [y[1], torque / inertia]

    sol = solve_ivp(rhs, (0.0, float(times[-1])), [0.0, 0.0], t_eval=times, rtol=1e-11,
                    atol=1e-13, method="DOP853")
    return sol.y[0]


class PendulumObserver:
    """Samples the rotation angle of the centre of mass about the pinned axis."""

    def __init__(self, comm, cfg: Config, mesh: HexMesh | None, where: str):
        a = cfg.analysis
        self.comm = comm
        self.axis = np.asarray(a.axis, float) / np.linalg.norm(a.axis)
        self.pivot = np.asarray(a.pivot, float)
        self.mass, self.com0, self.inertia = on_root(comm, lambda: rigid_body_properties(
            mesh, _densities(mesh, cfg, where), self.pivot, self.axis))
        self.g = np.asarray(cfg.gravity, float)
        self.every = a.sample_every
        self.times, self.angles, self.balance, self.kinetic = [0.0], [0.0], [0.0], [0.0]
        self.r0 = self._perp(self.com0 - self.pivot)

    def _perp(self, r):
        return r - (r @ self.axis) * self.axis

    def __call__(self, record) -> None:
        if record.step % self.every:
            return
        m = record.model
        s = global_sums(self.comm, [*(m.mass * m.x.T), m.mass])
        r = self._perp(s[:3] / s[3] - self.pivot)
        angle = math.atan2(self.axis @ np.cross(self.r0, r), self.r0 @ r)
        prev = self.angles[-1]
        angle += 2 * math.pi * round((prev - angle) / (2 * math.pi))
        energies = record.energies()
        self.times.append(record.time)
        self.angles.append(angle)
        self.balance.append(energies.error())
        self.kinetic.append(energies.kinetic)

    def state(self) -> dict:
        return {"times": self.times, "angles": self.angles, "balance": self.balance,
                "kinetic": self.kinetic}

    def restore(self, state: dict, rows: dict) -> None:
        self.times, self.angles = state["times"], state["angles"]
        self.balance, self.kinetic = state["balance"], state["kinetic"]

    def results(self) -> dict:
        t = np.array(self.times)
        psi = np.array(self.angles)
        theory = pendulum_angle_ode(t, self.mass, self.inertia, self.com0 - self.pivot,
                                    self.axis, self.g)
        swept = float(np.ptp(theory))
        scale = max(max(self.kinetic), 1e-300)
        return {"angle_error_max": float(np.max(np.abs(psi - theory))),
                "swept_angle": swept,
                "angle_error_rel": float(np.max(np.abs(psi - theory)) / swept),
                "final_angle_numeric": float(psi[-1]), "final_angle_theory": float(theory[-1]),
                "energy_drift": float(np.max(np.abs(self.balance)) / scale),
                "inertia_about_axis": self.inertia, "mass": self.mass}


def _block_geometry(mesh: HexMesh, measures: MeshMeasures, cfg: Config, where: str):
    """Mass, size and base contact area of the failure-test block (its group): the area of
    the interface faces between it and the rest of the mesh."""
    in_block = np.isin(mesh.groups, _block_ids(mesh, cfg, where))
    pts = mesh.points[mesh.cells[in_block]].reshape(-1, 3)
    topo = measures.topology
    cross = in_block[topo.elem[:, 0]] != in_block[topo.elem[:, 1]]
    quads = mesh.points[mesh.cells[topo.elem[cross, 0][:, None], topo.local_nodes[cross, 0]]]
    return _block_mass(mesh, cfg, where), np.ptp(pts, axis=0), face_areas(quads).sum()


def failure_theory(cfg: Config, mesh: HexMesh, measures: MeshMeasures, where: str) -> float:
    """Closed-form critical load of a rigid block glued by uniform springs to its base.

    The block (mass M, width b along x, depth d along y, height h along z, base area
    A = b d) sits on (or hangs from) a base; gravity |g| is turned by the tilt angle theta
    about y, or scaled by the factor lambda. Spring tractions of a rigid block on uniform
    springs are linear over the base: normal compression sigma(x) = N/A + M_o x / I with
    I = d b^3 / 12, M_o = S h / 2 the overturning moment of the downslope force S at the
    centre-of-mass height, and uniform shear tau = S/A. The first spring to break is at the
    upslope heel x = -b/2:

    * ``tensile`` (hanging block, gravity ramp): lambda M |g| / A = T, lambda = T A/(M|g|);
    * ``shear`` (tilt): S/A = c + (N/A - M_o b / (2 I)) tan(phi),
      N = M|g| cos(theta), S = M|g| sin(theta)  (Mohr-Coulomb at the heel);
    * ``toppling`` (tilt): N/A - M_o b / (2 I) = -T  (tension cut-off at the heel).
    Returns lambda for ``tensile``, theta in degrees otherwise.
    """
    a = cfg.analysis
    mass, (b, d, h), area = _block_geometry(mesh, measures, cfg, where)
    g = float(np.linalg.norm(cfg.gravity))
    weak = cfg.interface.pairs[0] if cfg.interface.pairs else None
    T = weak.tensile_strength if weak else cfg.materials[0].tensile_strength
    c = weak.cohesion if weak else cfg.materials[0].cohesion
    tan_phi = math.tan(math.radians(weak.friction_deg if weak else
                                    cfg.materials[0].friction_deg))
    if a.mode == "tensile":
        return T * area / (mass * g)
    inertia = d * b ** 3 / 12.0

    def heel(theta):
        n, s = mass * g * math.cos(theta), mass * g * math.sin(theta)
        sigma_heel = n / area - s * h / 2.0 * (b / 2.0) / inertia
        if a.mode == "shear":
            return s / area - c - sigma_heel * tan_phi
        return sigma_heel + T

    return math.degrees(brentq(heel, 1e-9, math.pi / 2 - 1e-9, xtol=1e-14))


class FailureObserver:
    """Records the load at the first broken spring."""

    def __init__(self, comm, cfg: Config, mesh: HexMesh | None, measures: MeshMeasures | None,
                 where: str):
        self.cfg = cfg
        self.theory = on_root(comm, lambda: failure_theory(cfg, mesh, measures, where))
        self.critical = None

    def __call__(self, record) -> None:
        if self.critical is None and record.new_broken > 0:
            key = "gravity_factor" if self.cfg.analysis.mode == "tensile" else "tilt_deg"
            self.critical = record.load[key]

    def state(self) -> dict:
        return {"critical": self.critical}

    def restore(self, state: dict, rows: dict) -> None:
        self.critical = state["critical"]

    def results(self) -> dict:
        numeric = self.critical if self.critical is not None else math.nan
        return {"critical_numeric": numeric, "critical_theory": self.theory,
                "rel_error": abs(numeric - self.theory) / abs(self.theory)}


def _column_geometry(mesh: HexMesh) -> tuple[float, float, float]:
    """Top and bottom height of the mesh and the area of the element faces on its base."""
    top, bottom = float(mesh.points[:, 2].max()), float(mesh.points[:, 2].min())
    quads = mesh.points[mesh.cells][:, FACES]                        # (n_el, 6, 4, 3)
    tol = 1e-9 * max(top - bottom, 1.0)
    on_base = np.all(np.abs(quads[..., 2] - bottom) < tol, axis=2)
    return top, bottom, float(face_areas(quads[on_base]).sum())


class _LastRecord:
    """An observer whose results read the last step's record alone: it keeps nothing across
    a checkpoint (the next step's record is what the results read)."""

    last = None

    def __call__(self, record) -> None:
        self.last = record

    def state(self) -> dict:
        return {}

    def restore(self, state: dict, rows: dict) -> None:
        """Nothing kept: the next step's record is what the results read."""


class ColumnObserver(_LastRecord):
    """A relaxed gravity column against sigma_zz = -rho g (H - z): the base stress from the
    reactions of the held base dofs over the base area, and every element's mean stress
    (the constant-strain value of a hex8 column, exact at its centroid height z_c)."""

    def __init__(self, comm, cfg: Config, mesh: HexMesh | None):
        self.comm = comm
        self.g = np.asarray(cfg.gravity, float)
        self.top, self.bottom, self.base_area = on_root(comm, lambda: _column_geometry(mesh))

    def results(self) -> dict:
        m = self.last.model
        held = m.fixed[:, 2] & (np.abs(m.x0[:, 2] - self.bottom) < 1e-9)
        reaction = -(m.f_int[:, 2] + m.spring_forces()[:, 2] + m.mass * self.g[2])[held]
        z_c = m.x.reshape(-1, 8, 3)[:, :, 2].mean(axis=1)
        numeric = m.stress[:, :, 2].mean(axis=1)
        theory = -m.density * np.linalg.norm(self.g) * (self.top - z_c)
        err = float(np.max(np.abs(numeric - theory) / np.abs(theory))) if len(z_c) else 0.0
        err = self.comm.allreduce(err, op=MPI.MAX)
        base = -global_sum(self.comm, reaction) / self.base_area
        rho = self.comm.allreduce(float(m.density.max()) if len(z_c) else 0.0, op=MPI.MAX)
        theory_base = -rho * np.linalg.norm(self.g) * (self.top - self.bottom)
        return {"base_stress_numeric": base, "base_stress_theory": theory_base,
                "rel_error": abs(base - theory_base) / abs(theory_base),
                "stress_rel_error_max": err, "unbalance_ratio": self.last.unbalance}


def _block_extent(mesh: HexMesh, cfg: Config, where: str) -> tuple[np.ndarray, float]:
    ids = _block_ids(mesh, cfg, where)
    pts = mesh.points[mesh.cells[np.isin(mesh.groups, ids)]].reshape(-1, 3)
    return ids, float(np.ptp(pts, axis=0).max())


class SlidingObserver:
    """Velocity of the block's centre of mass along the slope during the last stage.

    The base's plane is z = const and the tilt turns gravity, so theta is the angle between
    gravity and -z, the downslope direction the tangential part of g, and
    a = |g| (sin(theta) - cos(theta) tan(phi)) while it slides (0 if tan(phi) >= tan(theta)).
    The numeric acceleration is the least-squares slope of the downslope velocity over the
    second half of the stage (after the tilt transients have passed).
    """

    def __init__(self, comm, cfg: Config, mesh: HexMesh | None, where: str):
        self.comm = comm
        self.cfg = cfg
        self.ids, self.size = on_root(comm, lambda: _block_extent(mesh, cfg, where))
        self.samples = []
        self.g = None

    def __call__(self, record) -> None:
        if record.stage is not self.cfg.stages[-1] or record.step % self.cfg.analysis.sample_every:
            return
        m = record.model
        w = m.mass * np.repeat(np.isin(m.group, self.ids), 8)
        s = global_sums(self.comm, [*(w * m.v.T), *(w * m.x.T), w])
        if self.g is None:
            self.g = record.gravity
        self.samples.append((record.stage_time, s[:3] / s[6], s[3:6] / s[6]))

    def state(self) -> dict:
        return {"g": None if self.g is None else np.asarray(self.g).tolist(),
                "samples": [(t, v.tolist(), x.tolist()) for t, v, x in self.samples]}

    def restore(self, state: dict, rows: dict) -> None:
        self.g = None if state["g"] is None else np.asarray(state["g"])
        self.samples = [(t, np.asarray(v), np.asarray(x)) for t, v, x in state["samples"]]

    def results(self) -> dict:
        g = np.asarray(self.g, float)
        theta = math.acos(-g[2] / np.linalg.norm(g))
        downslope = g - g[2] * np.array([0.0, 0.0, 1.0])
        downslope /= np.linalg.norm(downslope)
        tan_phi = math.tan(math.radians(self.cfg.contact.friction_deg))
        theory = max(np.linalg.norm(g) * (math.sin(theta) - math.cos(theta) * tan_phi), 0.0)
        t = np.array([p[0] for p in self.samples])
        v = np.array([p[1] @ downslope for p in self.samples])
        x = np.array([p[2] for p in self.samples])
        late = t >= 0.5 * t[-1]
        numeric = float(np.polyfit(t[late], v[late], 1)[0])
        moved = float(np.linalg.norm(x - x[0], axis=1).max()) / self.size
        return {"acceleration_numeric": numeric, "acceleration_theory": theory,
                "rel_error": abs(numeric - theory) / theory if theory > 0 else math.nan,
                "tilt_deg": math.degrees(theta), "displacement_ratio": moved}


class RestingObserver(_LastRecord):
    """Sum of all contact normal forces at the end (every semi-spring in compression pushes
    the block and the base apart along the vertical face normals) against the block weight."""

    def __init__(self, comm, cfg: Config, mesh: HexMesh | None, where: str):
        self.comm = comm
        self.cfg = cfg
        self.mass = on_root(comm, lambda: _block_mass(mesh, cfg, where))

    def results(self) -> dict:
        total = global_sum(self.comm, self.last.model.contact_normal_forces())
        weight = self.mass * float(np.linalg.norm(self.cfg.gravity))
        return {"contact_normal_force_sum": total, "weight": weight,
                "rel_error": abs(total - weight) / weight,
                "unbalance_ratio": self.last.unbalance}


class StackObserver:
    """Largest block-node displacement during the last stage; stops it at failure."""

    ELEMENT_FIELDS = ("start",)

    def __init__(self, comm, cfg: Config, mesh: HexMesh | None, where: str):
        self.comm = comm
        self.cfg = cfg
        self.ids = on_root(comm, lambda: _block_ids(mesh, cfg, where))
        self.rows = None
        self.start = None
        self.restored_start = None
        self.failure_angle = math.nan
        self.moved = 0.0

    def __call__(self, record) -> bool:
        if record.stage is not self.cfg.stages[-1]:
            return False
        m = record.model
        if self.rows is None:
            self.rows = np.nonzero(np.repeat(np.isin(m.group, self.ids), 8))[0]
        x = m.x[self.rows]
        if self.restored_start is not None:
            self.start, self.restored_start = self.restored_start[self.rows], None
        if self.start is None:
            self.start = x.copy()
        if record.step % self.cfg.analysis.sample_every:
            return False
        local = float(np.linalg.norm(x - self.start, axis=1).max()) if len(x) else 0.0
        self.moved = self.comm.allreduce(local, op=MPI.MAX)
        if self.moved > self.cfg.analysis.failure_displacement:
            self.failure_angle = record.load["tilt_deg"]
            return True
        return False

    def state(self) -> dict:
        return {"failure_angle": self.failure_angle, "moved": self.moved,
                "started": self.start is not None}

    def element_state(self, view) -> dict:
        """The block nodes' positions at the start of the last stage, (n_el, 8, 3)."""
        full = np.zeros_like(view.x)
        if self.start is not None:
            full[np.nonzero(np.repeat(np.isin(view.group, self.ids), 8))[0]] = self.start
        return {"start": full.reshape(-1, 8, 3)}

    def restore(self, state: dict, rows: dict) -> None:
        self.failure_angle, self.moved = state["failure_angle"], state["moved"]
        self.restored_start = rows["start"].reshape(-1, 3) if state["started"] else None

    def results(self) -> dict:
        return {"failure_angle_deg": self.failure_angle, "max_block_displacement": self.moved}

