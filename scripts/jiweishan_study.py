"""Studies of the Jiweishan landslide (Feng et al. 2014, section 7), spread over MPI ranks.

    mpiexec -n 2 python scripts/jiweishan_study.py friction [--angles 8 10 12 ...]
    mpiexec -n 2 python scripts/jiweishan_study.py weakening [--static 10] [--dynamic 4 6 8 10]
    mpiexec -n 2 python scripts/jiweishan_study.py cffa [--dacn 14 17 20 23 26] [--dacw 0 3 6 9 12]
    mpiexec -n 2 python scripts/jiweishan_study.py resolution [--levels 1 2 3]

``friction``: the real model (cases/jiweishan.toml) run to its deposit for each friction
angle (every interface and the contact take the same angle, the paper's "inner friction
angle"): sliding distance, runout and fragmentation against the friction angle (Fig. 23).

``weakening``: the same with velocity-weakening contact friction (Lucas et al. 2014),
mu(v) = mu_d + (mu_s - mu_d) / (1 + |v| / v_c): every friction field at the static angle
``--static``, the contact's dynamic angle swept over ``--dynamic`` at the weakening velocity
``--velocity``; sliding distance, runout and fragmentation against the dynamic angle.

``cffa``: the critical failure friction angle of the simple model (cases/jiweishan_simple.toml,
the real geometry at coarse resolution without the runout area) against the two apparent dip
components of the bed (Figs. 24-28): DACN along the sliding direction (north) and DACW across
it (towards the flank wall, west). For each (DACN, DACW) the builder makes the mesh, and the
CFFA is found by bisection on the friction angle: a run fails when its trigger stage moves the
sliding body by ``analysis.failure_displacement``; the bracket [holds, fails] is narrowed
to ``--tolerance`` (0.25 deg) and its midpoint reported. Next to it, the rigid limit-
equilibrium value of the sliding mass on the bed and the wall (:func:`wedge_critical_friction`,
no key body). Slopes of CFFA against DACN (at the fixed DACW) and against DACW (at the fixed
DACN) are least-squares fits.

``resolution``: the real model at resolution levels k = 1, 2, 3, ...: the coarse preset's
mass with every edge cut k times as often (8k x 3k x k cells along, across and through it)
and the valley floor's cells 150/k m: how far the results (sliding distance, runout,
fragmentation, deposit thickness, peak speed, energy error) move as the mesh is refined. The
levels run one after the other, each on all ranks (the finest costs about k^4 times the
coarsest). With ``--checkpoint-every`` the runs checkpoint, and the study run again goes on
where it stopped: levels done are read back, a level stopped by a signal goes on from its
checkpoint. Besides the CSV and ``resolution.png``, ``resolution_results.png`` plots every
result against the element count.

Every friction and CFFA run works on one rank (``MPI.COMM_SELF``,
:func:`solver.ensemble.run_alone`) in its own folder, with its summary (``summary.json``: the
case's results), ParaView series, history and deposit map. The friction study is a sweep of the
case in the syntax of every module (the friction fields as ``sweep.keys``, one row of
``sweep.runs`` per angle; its runs in ``runs/run_NNN``, :func:`solver.ensemble.run_cases`); the
CFFA study hands out the (DACN, DACW) points with :func:`solver.ensemble.run_ensemble`. Rank 0
gathers the rows and writes the study's CSV, PNG and ``study.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import tomllib
from functools import partial
from pathlib import Path

import numpy as np
from mpi4py import MPI

from solver.case import load_case
from solver.ensemble import run_alone, run_cases, run_ensemble
from solver.errors import InputError
from solver.io.progress import Progress
from solver.io.table import plot_title, png_figure, write_rows
from solver.mesh import HexMesh, write_mesh
from solver.parallel import root_only
from solver.sweep import points

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_jiweishan  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PAPER_SLOPES = {"dacn": 0.90, "dacw": -0.19}
FRICTION_COLUMNS = ["friction_deg", "sliding_distance_m", "runout_m", "broken_fraction",
                    "sliding_faces_broken_fraction", "deposit_thickness_max_m",
                    "peak_speed_mps", "failed", "stopped", "runout_time_s", "energy_error",
                    "wall_s"]
RESOLUTION_STAGES = ["equilibrium", "trigger", "runout"]
RESOLUTION_RESULTS = ["sliding_distance_m", "runout_m", "broken_fraction",
                      "deposit_thickness_max_m", "peak_speed_mps", "energy_error",
                      "runout_time_s"]
RESOLUTION_COLUMNS = ["level", "elements", "sliding_elements", "dt_min_s", "dt_max_s",
                      "steps", *(f"steps_{name}" for name in RESOLUTION_STAGES),
                      *RESOLUTION_RESULTS, "wall_s"]
CFFA_COLUMNS = ["dacn_deg", "dacw_deg", "dip_deg", "dip_direction_deg", "cffa_deg",
                "holds_deg", "fails_deg", "wedge_theory_deg", "runs"]
UNITS = {"friction_deg": "deg", "dynamic_friction_deg": "deg", "sliding_distance_m": "m", "runout_m": "m",
         "broken_fraction": "-", "sliding_faces_broken_fraction": "-",
         "deposit_thickness_max_m": "m", "peak_speed_mps": "m/s", "failed": "-",
         "stopped": "-", "runout_time_s": "s", "wall_s": "s", "dacn_deg": "deg",
         "dacw_deg": "deg", "dip_deg": "deg", "dip_direction_deg": "deg", "cffa_deg": "deg",
         "holds_deg": "deg", "fails_deg": "deg", "wedge_theory_deg": "deg", "runs": "-",
         "level": "-", "elements": "-", "sliding_elements": "-", "dt_min_s": "s",
         "dt_max_s": "s", "steps": "-", "energy_error": "-",
         **{f"steps_{name}": "-" for name in RESOLUTION_STAGES}}


def friction_keys(case_path: Path) -> list[str]:
    """The case fields of the friction angle: every material, interface pair and the
    contact."""
    data = tomllib.loads(case_path.read_text())
    keys = [f"materials[{k}].friction_deg" for k in range(len(data.get("materials", [])))]
    pairs = data.get("interface", {}).get("pairs", [])
    keys += [f"interface.pairs[{k}].friction_deg" for k in range(len(pairs))]
    return keys + ["contact.friction_deg"]


def friction_overrides(case_path: Path, phi: float) -> list[str]:
    """``--set`` values giving every friction field the angle ``phi``."""
    return [f"{key}={phi}" for key in friction_keys(case_path)]


def run_case(case_path: Path, out_dir: Path, overrides: list[str]) -> dict:
    """Run a CDEM case on this rank alone into ``out_dir``; its results and wall time."""
    row = run_alone(load_case(case_path, overrides), out_dir)
    if row["status"] != "done":
        raise RuntimeError(f"{out_dir}: the run {row['status']}: {row['results']}")
    return {"wall_s": row["wall_s"], **row["results"]}


def bisect_critical_friction(fails, low: float, high: float, tolerance: float,
                             limit: float = 80.0) -> tuple[float, float, int]:
    """(holds, fails) friction angles [deg] at most ``tolerance`` apart around the critical
    angle of a model that fails below it: ``fails(phi)`` runs the model. The bracket
    [low, high] is widened by its width until low fails and high holds. Returns (angle it
    holds at, angle it fails at, runs)."""
    runs = 0
    width = high - low
    while True:
        runs += 1
        if fails(low) or low <= 0.0:
            break
        low, high = max(low - width, 0.0), low
    while True:
        runs += 1
        if not fails(high) or high >= limit:
            break
        low, high = high, min(high + width, limit)
    while high - low > tolerance:
        mid = 0.5 * (low + high)
        runs += 1
        if fails(mid):
            low = mid
        else:
            high = mid
    return high, low, runs


def wedge_critical_friction(dacn_deg: float, dacw_deg: float) -> float:
    """Critical friction angle [deg] of a rigid block on the bed, pressed against a vertical
    wall along the sliding direction when the bed dips towards it (DACW > 0), the same
    friction on both (limit equilibrium of a wedge): the block slides along the bed-wall
    intersection d, plunging at DACN; with the weight W and the normal reactions N_b, N_w of
    the bed and the wall in the plane normal to d, tan(phi_c) = W sin(DACN) / (N_b + N_w).
    Without wall contact (DACW <= 0) it is the true dip."""
    tn, tw = math.tan(math.radians(dacn_deg)), math.tan(math.radians(dacw_deg))
    if tw <= 0.0:
        return math.degrees(math.atan(math.hypot(tn, tw)))
    d = np.array([0.0, 1.0, -tn]) / math.hypot(1.0, tn)
    gravity = np.array([0.0, 0.0, -1.0])
    across = gravity - (gravity @ d) * d
    n_bed = np.array([-tw, tn, 1.0]) / math.sqrt(1.0 + tw * tw + tn * tn)
    n_wall = np.array([1.0, 0.0, 0.0])
    normal, *_ = np.linalg.lstsq(np.column_stack([n_bed, n_wall]), -across, rcond=None)
    return math.degrees(math.atan2(gravity @ d, normal.sum()))


# -- friction sweep -----------------------------------------------------------------------------

def friction_sweep(comm, case_path: Path, angles: list[float], out: Path, extra: list[str],
                   keys: list[str] | None = None, column: str = "friction_deg"
                   ) -> list[dict] | None:
    """Run the case at every friction angle: the sweep ``keys`` (default: every friction
    field) all take the angle, one row of ``runs`` per angle (ranks take runs as they finish,
    each in ``out/runs/run_NNN``); the rows on rank 0 (None elsewhere), the angle in
    ``column``."""
    keys = keys or friction_keys(case_path)
    case = load_case(case_path, [*extra, f"sweep.keys={keys}",
                                 f"sweep.runs={[[phi] * len(keys) for phi in angles]}"])
    rows = run_cases(comm, case, points(case.config, str(case.path), case.path.parent), out,
                     Progress(comm, len(angles), label="runs"))
    if rows is None:
        return None
    for r in rows:
        if r["status"] != "done":
            raise RuntimeError(f"{out}: run {r['index']} ({r['label']}) {r['status']}")
    return [{column: angles[r["index"]],
             **{k: r["results"][k] for k in FRICTION_COLUMNS[1:-1]}, "wall_s": r["wall_s"]}
            for r in rows]


def plot_distances(path: Path, title: str, x: list[float], xlabel: str, rows: list[dict],
                   log_x: bool = False) -> None:
    """Sliding distance and front runout against ``x``, the broken fraction on a second axis."""
    with png_figure(path) as (_, ax):
        ax.plot(x, [r["sliding_distance_m"] for r in rows], "o-", label="sliding distance")
        ax.plot(x, [r["runout_m"] for r in rows], "s--", label="front runout")
        if log_x:
            ax.set_xscale("log")
            ax.set_xticks(x, [f"{v:g}" for v in x])
            ax.minorticks_off()
        ax.set_xlabel(xlabel)
        ax.set_ylabel("distance [m]")
        ax.grid(alpha=0.3)
        twin = ax.twinx()
        twin.plot(x, [r["broken_fraction"] for r in rows], "^:", color="C3",
                  label="broken fraction")
        twin.set_ylabel("broken fraction of inner interfaces [-]", color="C3")
        twin.set_ylim(0.0, 1.05)
        lines = ax.get_legend_handles_labels()
        more = twin.get_legend_handles_labels()
        ax.legend(lines[0] + more[0], lines[1] + more[1], fontsize=8)
        ax.set_title(title, fontsize=9)


def write_friction(out: Path, name: str, rows: list[dict]) -> None:
    write_rows(out / "friction_sweep.csv", FRICTION_COLUMNS, UNITS, rows)
    plot_distances(out / "friction_sweep.png", plot_title(name, ["friction_deg"]),
                   [r["friction_deg"] for r in rows], "friction angle [deg]", rows)


def weakening_sweep(comm, case_path: Path, static: float, dynamic: list[float],
                    velocity: float, out: Path, extra: list[str]) -> list[dict] | None:
    """Run the case with velocity-weakening contact friction (solver.contact_laws.register
    .VelocityWeakening) at every dynamic angle: every friction field takes the static angle
    ``static``, the contact's friction falls towards ``dynamic`` [deg] as its slip passes
    ``velocity`` [m/s]; the rows on rank 0 (None elsewhere)."""
    weakening = [*friction_overrides(case_path, static), *extra,
                 "contact.tangential_law=velocity_weakening",
                 f"contact.dynamic_friction_deg={static}",
                 f"contact.weakening_velocity={velocity}"]
    return friction_sweep(comm, case_path, dynamic, out, weakening,
                          keys=["contact.dynamic_friction_deg"], column="dynamic_friction_deg")


def write_weakening(out: Path, name: str, rows: list[dict]) -> None:
    write_rows(out / "weakening_sweep.csv", ["dynamic_friction_deg", *FRICTION_COLUMNS[1:]],
               UNITS, rows)
    plot_distances(out / "weakening_sweep.png", plot_title(name, ["dynamic_friction_deg"]),
                   [r["dynamic_friction_deg"] for r in rows],
                   "dynamic friction angle of the contact [deg]", rows)


# -- resolution -------------------------------------------------------------------------------

def level_overrides(level: int) -> list[str]:
    """Builder fields of resolution level k: the coarse preset's cell counts of the mass times
    k, its valley-floor cell divided by k."""
    coarse = make_jiweishan.PRESETS["coarse"]
    return [f"resolution.n_along={coarse.n_along * level}",
            f"resolution.n_across={coarse.n_across * level}",
            f"resolution.n_thick={coarse.n_thick * level}",
            f"resolution.floor_cell_m={coarse.floor_cell_m / level}"]


def build_level_mesh(level: int, mesh: Path) -> HexMesh:
    """Build and write the mesh of resolution level ``level`` to ``mesh``."""
    mesh.parent.mkdir(parents=True, exist_ok=True)
    g = make_jiweishan.load_geometry("coarse", level_overrides(level), None, str(mesh))
    built = make_jiweishan.build(g, str(mesh))
    write_mesh(built, mesh)
    return built


class LevelStopped(Exception):
    """A level's run that did not end done: its exit code (solver run's) and what to do."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


def level_run(comm, case_path: Path, folder: Path, extra: list[str],
              checkpoint_every: str | None, rebalance_above: float | None = None) -> dict:
    """The summary of the level's run in ``folder/run``: one that is done is taken as it is;
    one that a signal stopped (``"status": "interrupted"``, with its checkpoint) goes on
    from its checkpoint; any other is run from the start, checkpointing every
    ``checkpoint_every`` (a step count or a duration: solver run --checkpoint-every) and
    repartitioning by work at a checkpoint where the busiest rank worked more than
    ``rebalance_above`` times the mean (solver run --rebalance-above). Collective; raises
    LevelStopped when the run does not end done."""
    from solver import cli

    run_dir = folder / "run"
    summary_path = run_dir / "summary.json"
    status = comm.bcast(json.loads(summary_path.read_text()).get("status")
                        if comm.rank == 0 and summary_path.is_file() else None, root=0)
    if status != "done":
        sets = sum((["--set", o] for o in [f"mesh.path={folder / 'jiweishan.msh'}", *extra]),
                   [])
        every = ["--checkpoint-every", checkpoint_every] if checkpoint_every else []
        if rebalance_above:
            every += ["--rebalance-above", str(rebalance_above)]
        where = (["--restart", str(run_dir)] if status == "interrupted"
                 else ["--out", str(run_dir), "--overwrite"])
        code = cli.main(["run", str(case_path), *where, "--quiet", *sets, *every])
        if code != 0:
            raise LevelStopped(code, f"{folder}: the run ended with exit code {code}"
                               + ("; run the study again to go on from its checkpoint"
                                  if checkpoint_every else ""))
    return json.loads(summary_path.read_text()) if comm.rank == 0 else {}


def resolution_study(comm, case_path: Path, levels: list[int], out: Path, extra: list[str],
                     checkpoint_every: str | None = None,
                     rebalance_above: float | None = None) -> list[dict] | None:
    """Mesh and run the case at every level, each run on all ranks of ``comm`` in
    ``out/level_K`` (a level already done is read back, one stopped by a signal goes on
    from its checkpoint: :func:`level_run`); the rows on rank 0 (None elsewhere).
    Collective."""
    rows = []
    for level in levels:
        folder = (out / f"level_{level}").resolve()
        mesh = folder / "jiweishan.msh"
        built = root_only(comm, partial(build_level_mesh, level, mesh))
        summary = level_run(comm, case_path, folder, extra, checkpoint_every, rebalance_above)
        if comm.rank == 0:
            r = summary["results"]
            stages = {stage["name"]: stage for stage in r["stages"]}
            sliding = make_jiweishan.volume_summary(built)["sliding_body"][1]
            rows.append({"level": level, "elements": built.n_cells, "sliding_elements": sliding,
                         "dt_min_s": min(stage["dt"][0] for stage in r["stages"]),
                         "dt_max_s": max(stage["dt"][1] for stage in r["stages"]),
                         "steps": summary["steps"],
                         **{f"steps_{name}": stages[name]["steps"]
                            for name in RESOLUTION_STAGES},
                         **{k: r[k] for k in RESOLUTION_RESULTS}, "wall_s": summary["wall_s"]})
            print(f"level {level}: {built.n_cells} elements, sliding distance "
                  f"{r['sliding_distance_m']:.1f} m, runout {r['runout_m']:.1f} m "
                  f"({summary['wall_s']:.0f} s)", file=sys.stderr)
    return rows if comm.rank == 0 else None


def write_resolution(out: Path, name: str, rows: list[dict]) -> None:
    write_rows(out / "resolution.csv", RESOLUTION_COLUMNS, UNITS, rows)
    x = [r["elements"] for r in rows]
    plot_distances(out / "resolution.png", plot_title(name, ["level"]),
                   [r["sliding_elements"] for r in rows], "elements of the sliding body [-]",
                   rows, log_x=True)
    panels = [*RESOLUTION_RESULTS[:-1], "dt_max_s", "steps", "steps_runout"]
    with png_figure(out / "resolution_results.png", 3, 3, figsize=(11.0, 8.5),
                    sharex=True) as (fig, axes):
        for ax, key in zip(axes.ravel(), panels):
            ax.plot(x, [r[key] for r in rows], "o-")
            ax.set_xscale("log")
            ax.set_xticks(x, [f"{v:,}" for v in x], fontsize=7, rotation=45)
            ax.minorticks_off()
            ax.set_ylabel(f"{key} [{UNITS.get(key, '-')}]", fontsize=8)
            ax.grid(alpha=0.3)
        for ax in axes[-1]:
            ax.set_xlabel("elements [-]")
        fig.suptitle(plot_title(name, ["level"]), fontsize=9)


# -- CFFA -------------------------------------------------------------------------------------

def cffa_points(dacn: list[float], dacw: list[float], fixed_dacn: float,
                fixed_dacw: float) -> list[tuple[float, float]]:
    """The (DACN, DACW) points: DACN varied at the fixed DACW, DACW varied at the fixed DACN
    (without repeating a point)."""
    points = [(n, fixed_dacw) for n in dacn] + [(fixed_dacn, w) for w in dacw]
    return list(dict.fromkeys(points))


def critical_friction_at(case_path: Path, out: Path, dacn: float, dacw: float,
                         tolerance: float, geometry: list[str], guess: float = 4.0) -> dict:
    """Mesh the simple model for (DACN, DACW) and bisect its CFFA (runs on this rank),
    from the bracket of +-``guess`` deg around the rigid-wedge value."""
    dip, direction = make_jiweishan.geometry_from_components(dacn, dacw)
    folder = out / f"dacn_{dacn:05.2f}_dacw_{dacw:05.2f}"
    folder.mkdir(parents=True, exist_ok=True)
    mesh = folder / "simple.msh"
    code = make_jiweishan.main(["coarse", "--out", str(mesh), "--set", f"dip_deg={dip}",
                                "--set", f"dip_direction_deg={direction}",
                                "--set", "runout_length_m=0", *sum((["--set", g]
                                                                    for g in geometry), [])])
    if code != 0:
        raise InputError(str(mesh), "the builder refused the geometry (see above)")

    def fails(phi: float) -> bool:
        summary = run_case(case_path, folder / f"phi_{phi:07.4f}",
                           [f"mesh.path={mesh}", *friction_overrides(case_path, phi)])
        return bool(summary["failed"])

    theory = wedge_critical_friction(dacn, dacw)
    holds, fails_at, runs = bisect_critical_friction(fails, theory - guess, theory + guess,
                                                     tolerance)
    return {"dacn_deg": dacn, "dacw_deg": dacw, "dip_deg": dip, "dip_direction_deg": direction,
            "cffa_deg": 0.5 * (holds + fails_at), "holds_deg": holds, "fails_deg": fails_at,
            "wedge_theory_deg": theory, "runs": runs}


def cffa_study(comm, case_path: Path, points: list[tuple[float, float]], out: Path,
               tolerance: float, geometry: list[str]) -> list[dict] | None:
    def bisect_at(_, point: tuple[float, float]) -> dict:
        row = critical_friction_at(case_path, out, *point, tolerance, geometry)
        print(f"rank {comm.rank}: DACN {row['dacn_deg']:g}, DACW {row['dacw_deg']:g}: CFFA "
              f"{row['cffa_deg']:.3f} deg ({row['runs']} runs)", file=sys.stderr)
        return row

    return run_ensemble(comm, points, bisect_at)


def slope(rows: list[dict], x: str, fixed: str, value: float) -> tuple[float, list[dict]]:
    """Least-squares slope of CFFA against ``x`` over the rows with ``fixed`` = value."""
    chosen = sorted((r for r in rows if abs(r[fixed] - value) < 1e-9), key=lambda r: r[x])
    if len(chosen) < 2:
        return math.nan, chosen
    return float(np.polyfit([r[x] for r in chosen], [r["cffa_deg"] for r in chosen], 1)[0]), \
        chosen


def write_cffa(out: Path, name: str, rows: list[dict], fixed_dacn: float,
               fixed_dacw: float) -> dict:
    write_rows(out / "cffa.csv", CFFA_COLUMNS, UNITS, rows)
    slopes = {}
    with png_figure(out / "cffa.png", 1, 2, figsize=(11, 4.4)) as (fig, axes):
        for ax, x, fixed, value, key in ((axes[0], "dacn_deg", "dacw_deg", fixed_dacw, "dacn"),
                                         (axes[1], "dacw_deg", "dacn_deg", fixed_dacn, "dacw")):
            s, chosen = slope(rows, x, fixed, value)
            slopes[key] = s
            xs = [r[x] for r in chosen]
            ax.plot(xs, [r["cffa_deg"] for r in chosen], "o-",
                    label=f"CDEM bisection, slope {s:.3f} (paper {PAPER_SLOPES[key]:+.2f})")
            ax.plot(xs, [r["wedge_theory_deg"] for r in chosen], "k--",
                    label="rigid wedge, no key body")
            ax.set_xlabel(f"{key.upper()} [deg] ({fixed.split('_')[0].upper()} = "
                          f"{value:.2f} deg)")
            ax.set_ylabel("critical failure friction angle [deg]")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
        fig.suptitle(plot_title(name, ["DACN", "DACW"]), fontsize=9)
    return {"slope_dacn": slopes["dacn"], "slope_dacw": slopes["dacw"],
            "paper_slope_dacn": PAPER_SLOPES["dacn"], "paper_slope_dacw": PAPER_SLOPES["dacw"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="study", required=True)
    friction = sub.add_parser("friction", help="runout and fragmentation against friction")
    friction.add_argument("--case", type=Path, default=ROOT / "cases" / "jiweishan.toml")
    friction.add_argument("--angles", type=float, nargs="+",
                          default=[8.0, 10.0, 12.0, 14.0, 16.0, 18.0, 20.0])
    friction.add_argument("--out", type=Path, default=Path("out/jiweishan_friction"))
    friction.add_argument("--set", dest="overrides", action="append", default=[],
                          help="override a case field in every run")
    weakening = sub.add_parser("weakening", help="runout against the dynamic friction of "
                                                 "velocity-weakening contact")
    weakening.add_argument("--case", type=Path, default=ROOT / "cases" / "jiweishan.toml")
    weakening.add_argument("--static", type=float, default=10.0,
                           help="friction angle of every interface and static angle of the "
                                "contact [deg]")
    weakening.add_argument("--dynamic", type=float, nargs="+", default=[4.0, 6.0, 8.0, 10.0],
                           help="dynamic friction angles of the contact [deg]")
    weakening.add_argument("--velocity", type=float, default=5.0,
                           help="weakening velocity v_c [m/s]")
    weakening.add_argument("--out", type=Path, default=Path("out/jiweishan_weakening"))
    weakening.add_argument("--set", dest="overrides", action="append", default=[],
                           help="override a case field in every run")
    cffa = sub.add_parser("cffa", help="critical failure friction angle against DACN, DACW")
    cffa.add_argument("--case", type=Path, default=ROOT / "cases" / "jiweishan_simple.toml")
    cffa.add_argument("--dacn", type=float, nargs="+", default=[14.0, 17.0, 20.0, 23.0, 26.0])
    cffa.add_argument("--dacw", type=float, nargs="+", default=[0.0, 3.0, 6.0, 9.0, 12.0])
    cffa.add_argument("--fixed-dacn", type=float, default=20.0)
    cffa.add_argument("--fixed-dacw", type=float, default=6.0)
    cffa.add_argument("--tolerance", type=float, default=0.25)
    cffa.add_argument("--out", type=Path, default=Path("out/jiweishan_cffa"))
    cffa.add_argument("--geometry", action="append", default=[],
                      help="override a builder field in every mesh, e.g. key_length_m=0")
    resolution = sub.add_parser("resolution", help="results against the mesh resolution")
    resolution.add_argument("--case", type=Path, default=ROOT / "cases" / "jiweishan.toml")
    resolution.add_argument("--levels", type=int, nargs="+", default=[1, 2, 3])
    resolution.add_argument("--out", type=Path, default=Path("out/jiweishan_resolution"))
    resolution.add_argument("--set", dest="overrides", action="append", default=[],
                            help="override a case field in every run")
    resolution.add_argument("--checkpoint-every", metavar="N|DURATION",
                            help="checkpoint each run (a stopped study goes on from there)")
    resolution.add_argument("--rebalance-above", type=float, metavar="RATIO",
                            help="repartition a run by work at a checkpoint where the busiest "
                                 "rank worked more than RATIO times the mean")
    args = parser.parse_args(argv)
    comm = MPI.COMM_WORLD
    start = time.perf_counter()
    try:
        if args.study == "friction":
            rows = friction_sweep(comm, args.case, sorted(args.angles), args.out,
                                  args.overrides)
            extra = {}
            if comm.rank == 0:
                write_friction(args.out, "jiweishan friction sweep", rows)
        elif args.study == "weakening":
            rows = weakening_sweep(comm, args.case, args.static, sorted(args.dynamic),
                                   args.velocity, args.out, args.overrides)
            extra = {"static_friction_deg": args.static, "weakening_velocity_mps": args.velocity}
            if comm.rank == 0:
                write_weakening(args.out, "jiweishan velocity weakening", rows)
        elif args.study == "resolution":
            if min(args.levels) < 1:
                raise InputError("--levels", f"levels are 1, 2, ..., got {min(args.levels)}")
            rows = resolution_study(comm, args.case, sorted(set(args.levels)), args.out,
                                    args.overrides, args.checkpoint_every,
                                    args.rebalance_above)
            extra = {}
            if comm.rank == 0:
                write_resolution(args.out, "jiweishan resolution", rows)
        else:
            points = cffa_points(args.dacn, args.dacw, args.fixed_dacn, args.fixed_dacw)
            rows = cffa_study(comm, args.case, points, args.out, args.tolerance,
                              args.geometry)
            extra = (write_cffa(args.out, "jiweishan CFFA", rows, args.fixed_dacn,
                                args.fixed_dacw) if comm.rank == 0 else {})
    except InputError as exc:
        if comm.rank == 0:
            print(f"error: {exc.where}: {exc.message}", file=sys.stderr)
        return 2
    except LevelStopped as exc:
        if comm.rank == 0:
            print(f"error: {exc}", file=sys.stderr)
        return exc.code
    wall = comm.allreduce(time.perf_counter() - start, op=MPI.MAX)
    if comm.rank == 0:
        study = {"study": args.study, "ranks": comm.size, "wall_s": wall, "rows": rows, **extra}
        (args.out / "study.json").write_text(json.dumps(study, indent=1))
        print(f"wrote {args.out}/study.json ({wall:.0f} s on {comm.size} rank(s))",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
