"""A landslide from gravity equilibrium to its deposit (``analysis.type = "landslide"``):
the Jiweishan case of Feng et al. (2014), section 7.

The mass is every element outside ``analysis.bed_group`` (the held bedrock); the sliding
body is ``analysis.block_group``. The observer follows the stages by name:

* every relax stage, at its last step (gravity equilibrium): the reaction of the held bed
  on the mass, R = -sum over held nodes of their spring and contact forces, against the
  weight W = |g| sum rho V of the mass; and the friction angle the mass-bed interfaces
  mobilise, phi_mob = atan(|sum F_s| / sum max(-F_n, 0)) over their springs (shear forces
  on the mass, compression negative), ``mobilised_friction_deg`` (for a block on a plane of
  dip theta, sum F_s = W sin(theta) and sum F_n = -W cos(theta), so phi_mob = theta). It is
  the friction the bed mobilises with its springs intact, not the critical friction at
  which the mass fails, which a friction study's bisection gives (the coarse Jiweishan
  case: 22.1 deg mobilised, failure between 18 and 19 deg);
* ``analysis.trigger_stage``: the stage where the interfaces' failure criteria apply with
  the bed's reduced strength; it ends as soon as the sliding body's centre of mass has moved
  ``failure_displacement`` from x0 (the positions at the last displacement reset, the end
  of the equilibrium): the mass has failed; otherwise it runs its duration (the mass holds);
* ``analysis.runout_stage``: ends at once when the mass held; otherwise when the kinetic
  energy of the mass has stayed below ``stop_fraction`` of its peak for ``stop_window``
  seconds (the mass has stopped).

Every ``sample_every`` steps of the trigger and runout stages one reduction gives the
centre of mass of the sliding body and its velocity, the kinetic energy of the mass and the
broken fraction of the mass's inner interfaces (springs between two mass elements); they
are the time histories (CSV and PNG).

Results at the end: ``sliding_distance_m`` the horizontal travel of the sliding body's
centre of mass from x0 (``com_drop_m`` its drop); ``runout_m`` the advance of the mass's
front along the horizontal direction of that travel (the farthest node beyond the farthest
node of x0); ``broken_fraction`` of the inner interfaces (``sliding_faces_broken_fraction``
for the mass-bed ones); ``deposit_thickness_max_m`` from the plan-view deposit map
(solver.cdem.analyses.deposit); ``peak_speed_mps`` the largest sampled speed of the sliding body's
centre of mass; ``mobilised_friction_deg`` above; ``lost_elements`` the mass elements that
ended below every initial node (they fell off the modelled ground and the results miss
them).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from mpi4py import MPI

from solver.cdem.analyses import deposit
from solver.cdem.config import Config
from solver.cdem.interface import INTACT
from solver.cdem.model import MaterialTable, group_ids
from solver.errors import InputError, write_together
from solver.exact_sum import global_sums
from solver.mesh.hexmesh import HexMesh
from solver.mesh.measures import MeshMeasures
from solver.parallel import on_root


def _setup(mesh: HexMesh, measures: MeshMeasures, cfg: Config, where: str) -> dict:
    """What the observer needs of the whole mesh and its measures (on rank 0): group ids,
    the weight of the mass, the global ids of the mass-bed faces (with +1 where their A
    element is in the mass, -1 where it is in the bed) and of the mass's inner faces, the
    map cell."""
    a = cfg.analysis
    present = np.unique(mesh.groups)
    bed = group_ids(a.bed_group, present, mesh.group_names, f"{where}: analysis.bed_group")
    block = group_ids(a.block_group, present, mesh.group_names,
                      f"{where}: analysis.block_group")
    in_mass = ~np.isin(mesh.groups, bed)
    if not in_mass.any():
        raise InputError(f"{where}: analysis.bed_group", "every element is in the bed: no mass")
    table = MaterialTable.build(cfg.materials, present, mesh.group_names, where)
    density = table.density[table.row(mesh.groups)]
    side = in_mass[measures.topology.elem]
    sliding = np.nonzero(side[:, 0] != side[:, 1])[0]
    inner = np.nonzero(side[:, 0] & side[:, 1])[0]
    plan = np.ptp(mesh.points[mesh.cells[in_mass]][:, :, :2], axis=1).max(axis=1)
    if a.map_cell > 0:
        _check_map_cells(mesh.points[np.unique(mesh.cells[in_mass])][:, :2], a.map_cell,
                         f"{where}: analysis.map_cell")
    weight = np.linalg.norm(cfg.gravity) * (density * measures.volumes)[in_mass].sum()
    return {"bed": bed, "block": block, "weight": float(weight),
            "sliding": sliding, "sliding_sign": np.where(side[sliding, 0], 1.0, -1.0),
            "inner": inner,
            "map_cell": a.map_cell if a.map_cell > 0 else 0.5 * float(np.median(plan))}


MAX_MAP_CELLS = 1e8
"""Most cells of the deposit map (0.8 GB per map array)."""


def _check_map_cells(plan_points: np.ndarray, cell: float, where: str) -> None:
    """The deposit map over the mass as it starts, at least, has at most MAX_MAP_CELLS cells
    of edge ``cell``."""
    cells = math.prod(float(np.ptp(plan_points[:, k])) / cell + 1.0 for k in range(2))
    if cells > MAX_MAP_CELLS:
        raise InputError(where, f"{cell:g} m cells make a deposit map of over {cells:.3g} "
                                f"cells over the mass as it starts, more than "
                                f"{MAX_MAP_CELLS:g}")


class LandslideObserver:
    """See the module docstring. ``output`` = (run folder, case name) for the tables and
    plots rank 0 writes at the end (none without it)."""

    def __init__(self, comm, cfg: Config, mesh: HexMesh | None, measures: MeshMeasures | None,
                 where: str, output: tuple[Path, str] | None = None):
        a = cfg.analysis
        names = [s.name for s in cfg.stages]
        for field in ("trigger_stage", "runout_stage"):
            if getattr(a, field) not in names:
                raise InputError(f"{where}: analysis.{field}", f"no stage named "
                                 f"{getattr(a, field)!r} (stages: {', '.join(names)})")
        self.comm = comm
        self.cfg = cfg
        self.output = output
        self.setup = on_root(comm, lambda: _setup(mesh, measures, cfg, where))
        self.view = None
        self.rows: list[list[float]] = []
        self.failed = False
        self.stopped = False
        self.peak_kinetic = 0.0
        self.metrics = {}
        self.low_since = None
        self.runout_time = 0.0
        self.equilibrium: dict = {}

    # -- per-rank selections, made at the first record ----------------------------------------
    def _select(self, view) -> None:
        s = self.setup
        self.view = view
        self.mass_nodes = np.repeat(~np.isin(view.group, s["bed"]), 8)
        self.block_nodes = np.repeat(np.isin(view.group, s["block"]), 8)
        self.mass_elements = np.nonzero(~np.isin(view.group, s["bed"]))[0]
        face = view.spring_face_gid
        self.inner_rows = np.nonzero(np.isin(face, s["inner"]))[0]
        self.sliding_rows = np.nonzero(np.isin(face, s["sliding"]))[0]
        self.sliding_sign = s["sliding_sign"][np.searchsorted(s["sliding"],
                                                              face[self.sliding_rows])]

    # -- the time loop's calls ----------------------------------------------------------------
    def __call__(self, record) -> bool:
        if self.view is None:
            self._select(record.model)
        stage = record.stage
        a = self.cfg.analysis
        if stage.kind == "relax":
            steps = round(record.stage_time / record.dt)
            if (record.unbalance < stage.unbalance_tol or steps >= stage.max_steps
                    or record.stage_time >= stage.duration - 0.5 * record.dt):
                self.equilibrium = self._equilibrium(record)
            return False
        if stage.name not in (a.trigger_stage, a.runout_stage):
            return False
        if stage.name == a.runout_stage and not self.failed:
            return True
        if record.step % a.sample_every:
            return False
        row, displacement = self._sample(record.time)
        self.rows.append(row)
        if stage.name == a.trigger_stage:
            self.failed = self.failed or displacement > a.failure_displacement
            self.metrics = {"moved_m": displacement}
            return self.failed
        self.runout_time = record.stage_time
        stopped = self._stopped(record.time, row[5])
        self.metrics = {"speed_mps": row[4],
                        "kinetic_of_peak": row[5] / self.peak_kinetic if self.peak_kinetic else 1.0}
        return stopped

    def progress_metrics(self) -> dict:
        """For the progress line: in the trigger stage, how far the sliding body's centre of
        mass has moved [m] (the stage ends at ``analysis.failure_displacement``); in the
        runout, its speed [m/s] and the kinetic energy as a fraction of its peak (the run
        ends once it stays below ``analysis.stop_fraction``)."""
        return self.metrics

    def _sample(self, time: float) -> tuple[list[float], float]:
        """One history row (global sums) and the sliding body's centre-of-mass travel."""
        v = self.view
        m = v.mass
        mb = m * self.block_nodes
        broken = np.count_nonzero(v.spring_state[self.inner_rows] != INTACT)
        total = global_sums(self.comm, [
            mb, 0.5 * m * self.mass_nodes * np.einsum("ij,ij->i", v.v, v.v),
            *(mb * v.x.T), *(mb * v.v.T), *(mb * v.x0.T), [broken]])
        com, vel, com0 = total[2:5] / total[0], total[5:8] / total[0], total[8:11] / total[0]
        n_inner = 4 * len(self.setup["inner"])
        fraction = total[11] / n_inner if n_inner else 0.0
        row = [time, *com, float(np.linalg.norm(vel)), float(total[1]), fraction]
        return row, float(np.linalg.norm(com - com0))

    def _stopped(self, time: float, kinetic: float) -> bool:
        a = self.cfg.analysis
        self.peak_kinetic = max(self.peak_kinetic, kinetic)
        if kinetic >= a.stop_fraction * self.peak_kinetic:
            self.low_since = None
            return False
        if self.low_since is None:
            self.low_since = time
        self.stopped = time - self.low_since >= a.stop_window - 1e-9
        return self.stopped

    def _equilibrium(self, record) -> dict:
        """Reaction of the bed on the mass against its weight, and the mobilised friction of
        the mass-bed interfaces (global sums; collective)."""
        v = record.model
        held = v.fixed.all(axis=1)
        rows = self.sliding_rows
        normal = v.spring_k_n[rows, None] * v.spring_u_n[rows]
        total = global_sums(self.comm, [
            *v.spring_forces()[held].T, *(self.sliding_sign[:, None, None]
                                          * v.spring_f_s[rows]).reshape(-1, 3).T,
            np.maximum(-normal, 0.0), [np.count_nonzero(v.spring_state != INTACT)]])
        up = -np.asarray(record.gravity) / np.linalg.norm(record.gravity)
        reaction = float(-total[:3] @ up)
        weight = self.setup["weight"]
        return {"base_reaction_N": reaction, "weight_N": weight,
                "base_reaction_rel_error": abs(reaction - weight) / weight,
                "equilibrium_unbalance_ratio": record.unbalance,
                "equilibrium_broken_springs": int(total[7]),
                "mobilised_friction_deg": math.degrees(math.atan2(np.linalg.norm(total[3:6]),
                                                                 total[6]))}

    # -- checkpoints --------------------------------------------------------------------------
    def state(self) -> dict:
        return {"rows": self.rows, "failed": self.failed, "stopped": self.stopped,
                "peak_kinetic": self.peak_kinetic, "low_since": self.low_since,
                "runout_time": self.runout_time, "equilibrium": self.equilibrium}

    def restore(self, state: dict, rows: dict) -> None:
        self.rows = [list(r) for r in state["rows"]]
        for key in ("failed", "stopped", "peak_kinetic", "low_since", "runout_time",
                    "equilibrium"):
            setattr(self, key, state[key])

    # -- results ------------------------------------------------------------------------------
    def results(self) -> dict:
        """The run's landslide results (collective); rank 0 writes the history and the
        deposit map into the run folder."""
        row, _ = self._sample(self.rows[-1][0] if self.rows else 0.0)
        v = self.view
        mb = v.mass * self.block_nodes
        total = global_sums(self.comm, [*(mb * v.x.T), *(mb * v.x0.T), mb])
        travel = (total[:3] - total[3:6]) / total[6]
        distance = float(np.linalg.norm(travel[:2]))
        runout = self._front_advance(travel)
        grid, maps = self._deposit()
        out = {"sliding_distance_m": distance, "com_drop_m": float(-travel[2]),
               "lost_elements": self._lost(),
               "runout_m": runout, "broken_fraction": row[6],
               "sliding_faces_broken_fraction": self._sliding_broken(),
               "deposit_thickness_max_m": float(np.max(maps["thickness"]))
               if maps is not None else math.nan,
               "peak_speed_mps": max((r[4] for r in self.rows), default=0.0),
               "peak_kinetic_energy_J": self.peak_kinetic, "failed": self.failed,
               "stopped": self.stopped, "runout_time_s": self.runout_time,
               "map_cell_m": self.setup["map_cell"]}
        for key in ("mobilised_friction_deg", "base_reaction_N", "weight_N",
                    "base_reaction_rel_error", "equilibrium_unbalance_ratio",
                    "equilibrium_broken_springs"):
            out[key] = self.equilibrium.get(key, math.nan)
        out["deposit_thickness_max_m"] = self.comm.bcast(out["deposit_thickness_max_m"], root=0)
        write_together(self.comm, (lambda: self._write(grid, maps))
                       if self.comm.rank == 0 and self.output is not None else None,
                       self.output[0] if self.output is not None else None)
        return out

    def _front_advance(self, travel: np.ndarray) -> float:
        """Advance of the farthest mass node along the horizontal travel direction."""
        length = float(np.linalg.norm(travel[:2]))
        if length == 0.0:
            return 0.0
        d = np.array([travel[0], travel[1], 0.0]) / length
        v = self.view
        rows = self.mass_nodes
        local = np.array([(v.x[rows] @ d).max(initial=-np.inf),
                          (v.x0[rows] @ d).max(initial=-np.inf)])
        total = np.empty_like(local)
        self.comm.Allreduce(local, total, op=MPI.MAX)
        return float(total[0] - total[1])

    def _lost(self) -> int:
        """Mass elements whose centroid ended below every initial node (they left the
        modelled ground; the results then miss them)."""
        v = self.view
        lowest = self.comm.allreduce(float(v.x0[:, 2].min(initial=np.inf)), op=MPI.MIN)
        z = v.x.reshape(-1, 8, 3)[self.mass_elements, :, 2].mean(axis=1)
        return self.comm.allreduce(int(np.count_nonzero(z < lowest)))

    def _sliding_broken(self) -> float:
        local = np.count_nonzero(self.view.spring_state[self.sliding_rows] != INTACT)
        n = 4 * len(self.setup["sliding"])
        return self.comm.allreduce(int(local)) / n if n else 0.0

    def _deposit(self):
        """The deposit map (on rank 0; None elsewhere) from every rank's mass elements."""
        v = self.view
        x_el = v.x.reshape(-1, 8, 3)[self.mass_elements]
        x0_el = v.x0.reshape(-1, 8, 3)[self.mass_elements]
        both = np.concatenate([x_el, x0_el]).reshape(-1, 3)[:, :2]
        lo = np.empty(2)
        hi = np.empty(2)
        self.comm.Allreduce(both.min(axis=0, initial=np.inf), lo, op=MPI.MIN)
        self.comm.Allreduce(both.max(axis=0, initial=-np.inf), hi, op=MPI.MAX)
        cell = self.setup["map_cell"]
        grid = deposit.PlanGrid.covering(lo, hi, cell)
        plan = np.ptp(x_el[..., :2], axis=1).max(initial=cell)
        n = int(np.clip(math.ceil(2.0 * plan / cell), 2, 4))
        n = self.comm.allreduce(n, op=MPI.MAX)
        sums = deposit.deposit_sums(self.comm, grid, x_el, x0_el, n)
        total = np.empty_like(sums) if self.comm.rank == 0 else None
        self.comm.Reduce(sums, total, op=MPI.SUM, root=0)
        return grid, (deposit.maps_from_sums(grid, total) if self.comm.rank == 0 else None)

    def _write(self, grid, maps) -> None:
        folder, name = self.output
        phi = self.cfg.contact.friction_deg
        title = f"{name} (contact friction {phi:g} deg)"
        deposit.write_history(folder / "landslide_history.csv", self.rows)
        deposit.write_map_table(folder / "deposit_map.csv", grid, maps)
        deposit.plot_map(folder / "deposit_map.png", grid, maps, f"{title}: deposit")
        if self.rows:
            deposit.plot_history(folder / "landslide_history.png", self.rows, title)
