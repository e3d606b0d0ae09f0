"""Strong and weak scaling of the fragmented heap (``solver bench --scale``), and a cost model.

    python scripts/scaling.py --strong 20000 --ranks 1 2 4 8 16 --repeat 2 --json strong.json
    python scripts/scaling.py --weak 2500 --ranks 1 2 4 8 --repeat 2 --json weak.json
    python scripts/scaling.py --model strong.json weak.json      # refit from saved points

A point is one ``mpiexec -n p python -m solver.cli bench --scale N --steps S --json F`` run
from this checkout: N fixed (``--strong N``) or N = p x N_PER_RANK (``--weak N_PER_RANK``),
with one numba, OpenMP and BLAS thread per rank. The mpiexec is the one next to this Python
(or ``--mpiexec``); Open MPI's gets ``--oversubscribe`` when p exceeds the usable cores,
MPICH's (the ``mpich`` wheel's) runs oversubscribed as it is. With ``--repeat K`` each point
runs K times and keeps the run of least work (below), the one least disturbed by other jobs
on the host; the point lists every run's T and W.

Per rank and step (solver.bench.scale): ``step_s`` the wall time of the step,
``waiting_s`` the part of it in the exchanges (neighbour collectives, reductions),
``busy_s = step_s - waiting_s``, ``cpu_s`` the process's CPU time; the counts (elements E,
contact records R, ghost elements G, neighbour ranks, messages and bytes per step) and the
peak RSS. MPI waits by polling, so a rank that shares a core gets the same share of it while
busy as while waiting; its work, the CPU time of its busy part, is

    work_s = busy_s x cpu_s / step_s

without the time the rank waited for a core (other jobs still slow the core itself, through
the shared caches and memory bandwidth). On p ranks over fewer cores, ``step_s``,
``busy_s`` and ``waiting_s`` are wall times of time-shared cores and measure nothing of the
solver: only ``work_s``, the counts and the memory do.

Per point of N elements on p ranks, T(p) = the largest step_s over the ranks and W(p) = the
largest work_s. With p0 the smallest rank count of the same series, the parallel efficiency
is the element-steps per second and rank against p0's,

    efficiency = [N(p) / (p T(p))] / [N(p0) / (p0 T(p0))]

which is p0 T(p0) / (p T(p)) for strong scaling (N fixed) and T(p0) / T(p) for weak scaling
(N = p n; the heap rounds its side, so N is its real element count). ``efficiency`` takes the
wall times: it means something only while p does not exceed the idle cores;
``work_efficiency`` takes W for T: the imbalance and the ghosts' work, not the exchanges.

Cost model, per rank and step: the work (:func:`fit_model`, fitted to work_s over every rank
of every point by least squares on the relative error, no coefficient below zero)

    work = d + a E + b R + c G

with d the step's fixed cost (the heap has R close to 47 E on every rank, so the fit
separates a from b only weakly: a + rho b is what it determines), and the exchanges over a
network of latency L and bandwidth B (:func:`project`)

    comm = messages L + bytes / B + 2 ceil(log2 p) L

(one latency per neighbour message, as if they went one after the other; the step's two
reductions by recursive doubling). The projection runs a mesh of N elements, balanced by
work, on p ranks: E = N / p, R = rho E (rho the heap's records per element, or given),
G = k_G E^(2/3) and bytes = k_B E^(2/3) (the surface law; k_G and k_B the largest ratios
over the ranks of the point with the most ranks, the nearest to the interior parts of a
large partition), messages = m min(p - 1, 26) (m the measured messages per neighbour and
step; an interior part of a 3D partition has at most 26 neighbours), and its strong-scaling
efficiency T(1) / (p T(p)) with T = work + comm + renewals.

Renewals (none among the timed steps): a fragmenting mass renews its contact search at a
fraction phi of its steps (``--renewals-per-step``; 0.40 in the Jiweishan level-7 runout,
where springs break at most steps and each break brings a partial renewal). Per renewal,

    renewal = (RENEWAL_NEIGHBOUR_MESSAGES n + RENEWAL_COLLECTIVES ceil(log2 p)) L
              + (2 G w + 64 p + 8 p ceil(log2 p) + SURFACE_BOXES 48 n) / B + search(p)

with n the neighbours, G w the ghost rows (w = 8 GHOST_WIDTH bytes each) twice over (a
partial renewal gathers its ghosts from up to KEPT_REACH times the margin), the Allgather of
one 64-byte row per rank, the Alltoall of one count per rank (at most its bytes in each of
Bruck's log2 p rounds), the surface boxes sent to the ranks near by holding box, and
search(p) the rank's own neighbour search timed here on p simulated parts of N / p cubes
(scripts/bench_renewal_ranks.py). The renewal's work per element (the candidate search, the
ghost rows) is left out: it divides over the ranks as the step's work does, so leaving it
out lowers the efficiencies.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from bench_renewal_ranks import measure
from scipy.optimize import nnls

from solver.cdem.contact.exchange import GHOST_WIDTH

ROOT = Path(__file__).resolve().parents[1]
THREADS = {"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
MAX_NEIGHBOURS = 26
REDUCTIONS_PER_STEP = 2          # solver.cdem.timeloop.TimeLoop.one_step's two allreduces
#: Messages to each neighbour per renewal (solver.cdem.contact.pipeline.Contact
#: ._exchange_ghosts): the surface boxes' Alltoallv, the near boxes' counts and rows, the
#: ghost rows' counts and rows, the ghosts' first increments, the body sums' labels.
RENEWAL_NEIGHBOUR_MESSAGES = 7
#: Collectives per renewal, ceil(log2 p) latencies each: the allreduce of the largest move
#: (the ghosts' reach), the Allgather of holding rows, the allreduce of changed neighbours,
#: the body sums' two allreduces and Alltoall of counts.
RENEWAL_COLLECTIVES = 6
SURFACE_BOXES = 64               # solver.cdem.contact.detect.surface_boxes, at most


def usable_cores() -> int:
    return len(os.sched_getaffinity(0))


def host_info(mpiexec: str) -> dict:
    """CPU model, cores, load, git commit of this checkout and the MPI launcher."""
    cpuinfo = Path("/proc/cpuinfo")
    models = [line.split(":", 1)[1].strip() for line in
              (cpuinfo.read_text().splitlines() if cpuinfo.exists() else [])
              if line.startswith("model name")]
    git = ["git", "-C", str(ROOT)]
    head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    dirty = subprocess.run([*git, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return {"cpu": models[0] if models else "unknown", "cores": os.cpu_count(),
            "usable_cores": usable_cores(), "load_average": os.getloadavg(),
            "git_commit": (head or "unknown") + ("-dirty" if dirty else ""),
            "mpiexec": mpiexec, "mpi": mpi_version(mpiexec).splitlines()[0:2]}


def mpi_version(mpiexec: str) -> str:
    return subprocess.run([mpiexec, "--version"], capture_output=True, text=True).stdout


def launch(mpiexec: str, ranks: int) -> list[str]:
    """mpiexec -n ranks, with --oversubscribe where Open MPI needs it."""
    cmd = [mpiexec, "-n", str(ranks)]
    version = mpi_version(mpiexec)
    if ranks > usable_cores() and ("Open MPI" in version or "OpenRTE" in version):
        cmd.append("--oversubscribe")
    return cmd


def run_point(mpiexec: str, mode: str, ranks: int, n_elements: int, steps: int) -> dict:
    """One bench run on ``ranks`` ranks; the point with its per-rank rows (work_s added)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "bench.json"
        cmd = [*launch(mpiexec, ranks), sys.executable, "-m", "solver.cli", "bench",
               "--scale", str(n_elements), "--steps", str(steps), "--json", str(out)]
        load = os.getloadavg()[0]
        proc = subprocess.run(cmd, cwd=ROOT, env=dict(os.environ, **THREADS),
                              capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"error: {' '.join(cmd)} failed:\n{proc.stderr[-4000:]}")
        bench = json.loads(out.read_text())
    rows = bench["per_rank"]
    for r in rows:
        r["work_s"] = r["busy_s"] * r["cpu_s"] / r["step_s"]
    return {"mode": mode, "ranks": ranks, "elements": bench["elements"], "steps": steps,
            "renewals": bench["renewals"], "oversubscribed": ranks > usable_cores(),
            "load_average_before": load, "time_s": max(r["step_s"] for r in rows),
            "work_s": max(r["work_s"] for r in rows), "per_rank": rows}


def run_best(mpiexec: str, mode: str, ranks: int, n_elements: int, steps: int,
             repeat: int) -> dict:
    """The run of least work_s of ``repeat`` runs of a point, with every run's T and W."""
    runs = [run_point(mpiexec, mode, ranks, n_elements, steps) for _ in range(repeat)]
    best = min(runs, key=lambda p: p["work_s"])
    best["runs"] = [{k: r[k] for k in ("time_s", "work_s", "load_average_before")}
                    for r in runs]
    return best


def add_efficiencies(points: list[dict]) -> None:
    """``efficiency`` and ``work_efficiency`` of each point against the smallest rank count
    of its series (module docstring)."""
    for mode in {p["mode"] for p in points}:
        series = [p for p in points if p["mode"] == mode]
        base = min(series, key=lambda p: p["ranks"])
        for p in series:
            scale = p["elements"] * base["ranks"] / (base["elements"] * p["ranks"])
            p["efficiency"] = scale * base["time_s"] / p["time_s"]
            p["work_efficiency"] = scale * base["work_s"] / p["work_s"]


def _features(elements, records, ghosts) -> np.ndarray:
    return np.column_stack([np.ones_like(elements, dtype=float), elements, records, ghosts])


def fit_model(points: list[dict]) -> dict:
    """Non-negative least squares (scipy.optimize.nnls) of work_s = d + a E + b R + c G over
    every rank row, each row divided by its work_s (so that small and large ranks count
    alike); standard errors of the coefficients left free, from the residuals (0 for those
    held at zero). Also the surface-law constants k_G = max G / E^(2/3) and k_B = max bytes
    sent / E^(2/3) over the ranks of the point with the most ranks (the largest such),
    the messages per neighbour and step m, and rho = R / E of the largest heap."""
    rows = [r for p in points for r in p["per_rank"]]
    e, rec, g = (np.array([r[k] for r in rows], dtype=float)
                 for k in ("elements", "records", "ghosts"))
    work = np.array([r["work_s"] for r in rows])
    x = _features(e, rec, g) / work[:, None]
    coef, _ = nnls(x, np.ones(len(rows)))
    free = coef > 0
    s2 = float(np.sum((x @ coef - 1.0) ** 2)) / max(len(rows) - int(free.sum()), 1)
    stderr = np.zeros(len(coef))
    stderr[free] = np.sqrt(np.diag(s2 * np.linalg.pinv(x[:, free].T @ x[:, free])))
    shared = [r for r in rows if r["neighbours"] > 0]
    largest = max(points, key=lambda p: p["elements"])
    widest = max(points, key=lambda p: (p["ranks"], p["elements"]))["per_rank"]
    model = {"d": coef[0], "a": coef[1], "b": coef[2], "c": coef[3],
             "stderr": dict(zip("dabc", stderr.tolist())), "rows": len(rows),
             "records_per_element": sum(r["records"] for r in largest["per_rank"])
             / largest["elements"]}
    if shared:
        model["k_ghosts"] = max(r["ghosts"] / r["elements"] ** (2 / 3) for r in widest)
        model["k_bytes"] = max(r["bytes_sent_per_step"] / r["elements"] ** (2 / 3)
                               for r in widest)
        model["messages_per_neighbour"] = (sum(r["messages_per_step"] for r in shared)
                                           / sum(r["neighbours"] for r in shared))
    return {k: float(v) if isinstance(v, np.floating) else v for k, v in model.items()}


def predict_work(model: dict, elements, records, ghosts) -> np.ndarray:
    coef = np.array([model[k] for k in "dabc"])
    return _features(np.atleast_1d(np.asarray(elements, dtype=float)),
                     np.atleast_1d(records), np.atleast_1d(ghosts)) @ coef


def check_model(model: dict, points: list[dict]) -> list[dict]:
    """Per point: the measured largest work_s over its ranks against the model's."""
    out = []
    for p in points:
        rows = p["per_rank"]
        predicted = predict_work(model, [r["elements"] for r in rows],
                                 [r["records"] for r in rows], [r["ghosts"] for r in rows])
        out.append({"mode": p["mode"], "ranks": p["ranks"], "elements": p["elements"],
                    "measured_s": p["work_s"], "predicted_s": float(predicted.max()),
                    "relative_error": float(predicted.max()) / p["work_s"] - 1.0})
    return out


def renewal_comm(p: int, neighbours: int, ghosts: float, latency: float,
                 bandwidth: float) -> float:
    """The exchanges of one renewal on p ranks (module docstring), without the search."""
    rounds = math.ceil(math.log2(p))
    sent = (2 * ghosts * GHOST_WIDTH * 8 + 64 * p + 8 * p * rounds
            + SURFACE_BOXES * 48 * neighbours)
    return ((RENEWAL_NEIGHBOUR_MESSAGES * neighbours + RENEWAL_COLLECTIVES * rounds) * latency
            + sent / bandwidth)


def project(model: dict, n_elements: int, ranks: list[int], latency: float,
            bandwidth: float, records_per_element: float, renewals_per_step: float,
            ghost_factor: float = 1.0, search=None) -> list:
    """Projected step of ``n_elements`` balanced over each rank count (module docstring);
    ``ghost_factor`` scales the ghosts and bytes of the surface law; ``search(p, e)`` the
    seconds of one rank's neighbour search at a renewal (0 where not given)."""
    rho = records_per_element
    alone = float(predict_work(model, n_elements, rho * n_elements, 0.0)[0])
    out = []
    for p in ranks:
        e = n_elements / p
        surface = 0.0 if p == 1 else ghost_factor * e ** (2 / 3)
        ghosts, sent = model["k_ghosts"] * surface, model["k_bytes"] * surface
        neighbours = min(p - 1, MAX_NEIGHBOURS)
        messages = model["messages_per_neighbour"] * neighbours
        work = float(predict_work(model, e, rho * e, ghosts)[0])
        comm = ((messages + REDUCTIONS_PER_STEP * math.ceil(math.log2(p))) * latency
                + sent / bandwidth)
        searched = search(p, e) if search and p > 1 else 0.0
        renewal = renewals_per_step * (renewal_comm(p, neighbours, ghosts, latency, bandwidth)
                                       + searched) if p > 1 else 0.0
        out.append({"ranks": p, "elements": e, "records": rho * e, "ghosts": ghosts,
                    "bytes_per_step": sent, "messages_per_step": messages, "work_s": work,
                    "comm_s": comm, "search_s": searched, "renewal_s": renewal,
                    "efficiency": alone / (p * (work + comm + renewal)),
                    "efficiency_without_renewals": alone / (p * (work + comm))})
    return out


@functools.lru_cache
def neighbour_search_s(p: int, elements_per_rank: float) -> float:
    """One rank's neighbour search at a renewal on p parts (scripts/bench_renewal_ranks.py),
    timed here."""
    return measure(p, max(1, round(elements_per_rank)), repeat=3)["holding_ms"] * 1e-3


def markdown(header: list[str], rows: list[list]) -> str:
    def cell(v):
        return f"{v:.3g}" if isinstance(v, float) else str(v)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def points_table(points: list[dict]) -> str:
    def top(p, key):
        return max(r[key] for r in p["per_rank"])
    return markdown(
        ["mode", "ranks", "elements", "oversubscribed", "step s (max)", "waiting s (max)",
         "work s (max)", "work s, all runs", "efficiency", "work efficiency", "ghosts (max)",
         "neighbours (max)", "messages/step (max)", "bytes sent/step (max)",
         "peak RSS MB (max)", "CPU", "commit"],
        [[p["mode"], p["ranks"], p["elements"], "yes" if p["oversubscribed"] else "no",
          p["time_s"], top(p, "waiting_s"), p["work_s"],
          "-".join(f"{w:.3g}" for w in sorted(r["work_s"] for r in p["runs"])),
          p["efficiency"], p["work_efficiency"], top(p, "ghosts"), top(p, "neighbours"),
          top(p, "messages_per_step"), top(p, "bytes_sent_per_step"), top(p, "peak_rss_mb"),
          p["cpu"], p["git_commit"]] for p in points])


def ranks_table(points: list[dict]) -> str:
    keys = ["elements", "records", "ghosts", "neighbours", "step_s", "waiting_s", "busy_s",
            "cpu_s", "work_s", "messages_per_step", "bytes_sent_per_step",
            "bytes_received_per_step", "peak_rss_mb"]
    return markdown(["mode", "ranks", "rank", *keys],
                    [[p["mode"], p["ranks"], r["rank"], *(r[k] for k in keys)]
                     for p in points for r in p["per_rank"]])


def model_report(model: dict, points: list[dict], args) -> str:
    err = model["stderr"]
    lines = [f"cost model, fitted to {model['rows']} rank rows: work [s/step] = d + a E + b R "
             "+ c G",
             *(f"  {k} = {model[k]:.3g} +- {err[k]:.2g}" if model[k] > 0 else
               f"  {k} = 0 (held at zero: the fit would go below it)" for k in "dabc"), "",
             markdown(["mode", "ranks", "elements", "measured work s", "predicted work s",
                       "relative error"],
                      [[c["mode"], c["ranks"], c["elements"], c["measured_s"],
                        c["predicted_s"], f"{100 * c['relative_error']:+.0f} %"]
                       for c in check_model(model, points)])]
    if "k_ghosts" not in model:
        return "\n".join(lines + ["", "no point on several ranks: no projection"])
    rho = args.records_per_element or model["records_per_element"]
    runs = [project(model, args.project_elements, args.project_ranks, args.latency,
                    args.bandwidth, rho, args.renewals_per_step, ghost_factor=f,
                    search=neighbour_search_s) for f in (1.0, 2.0)]
    lines += ["", f"surface law: ghosts = {model['k_ghosts']:.3g} E^(2/3), bytes sent = "
              f"{model['k_bytes']:.3g} E^(2/3) per step; "
              f"{model['messages_per_neighbour']:.3g} messages per neighbour and step",
              f"projection: {args.project_elements} elements, {rho:.3g} records per element, "
              f"L = {args.latency * 1e6:.3g} us, B = {args.bandwidth / 1e9:.3g} GB/s, "
              f"{args.renewals_per_step:.3g} renewals per step", "",
              markdown(["ranks", "elements/rank", "records/rank", "ghosts/rank",
                        "bytes/step", "messages/step", "work s", "exchange s",
                        "neighbour search s", "renewals s/step", "efficiency",
                        "efficiency without renewals", "efficiency, ghosts x2"],
                       [[r["ranks"], round(r["elements"]), round(r["records"]),
                         round(r["ghosts"]), round(r["bytes_per_step"]),
                         round(r["messages_per_step"]), r["work_s"], r["comm_s"],
                         r["search_s"], r["renewal_s"], r["efficiency"],
                         r["efficiency_without_renewals"], two["efficiency"]]
                        for r, two in zip(*runs)])]
    return "\n".join(lines)


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4, 8])
    ap.add_argument("--strong", type=int, metavar="N", help="strong scaling: N elements")
    ap.add_argument("--weak", type=int, metavar="N_PER_RANK",
                    help="weak scaling: N_PER_RANK elements per rank")
    ap.add_argument("--steps", type=int, default=20, help="timed steps per point")
    ap.add_argument("--repeat", type=int, default=1, help="runs per point; the least work "
                                                          "is kept")
    ap.add_argument("--mpiexec", default=str(Path(sys.executable).parent / "mpiexec"))
    ap.add_argument("--json", default="scaling.json", help="where to write the points")
    ap.add_argument("--model", nargs="+", metavar="JSON",
                    help="instead of measuring: fit and project from these saved points")
    ap.add_argument("--latency", type=float, default=1.5e-6, help="network latency [s]")
    ap.add_argument("--bandwidth", type=float, default=12e9, help="network bandwidth [B/s]")
    ap.add_argument("--project-elements", type=int, default=210_794)
    ap.add_argument("--project-ranks", type=int, nargs="+", default=[16, 64, 256, 1024])
    ap.add_argument("--renewals-per-step", type=float, default=0.40,
                    help="renewals per step of the projected run (default: the Jiweishan "
                         "level-7 runout's)")
    ap.add_argument("--records-per-element", type=float,
                    help="contact records per element of the projected mesh (default: the "
                         "largest measured heap's)")
    args = ap.parse_args(argv)
    if not args.model and not (args.strong or args.weak):
        ap.error("give --strong N and/or --weak N_PER_RANK, or --model JSON ...")
    return args


def main(argv=None) -> int:
    args = parse(argv)
    if args.model:
        points = [p for f in args.model for p in json.loads(Path(f).read_text())["points"]]
    else:
        host = host_info(args.mpiexec)
        series = [("strong", args.strong, 0), ("weak", 0, args.weak)]
        points = [dict(run_best(args.mpiexec, mode, p, fixed or p * per_rank, args.steps,
                                args.repeat), cpu=host["cpu"], git_commit=host["git_commit"])
                  for mode, fixed, per_rank in series if fixed or per_rank
                  for p in sorted(args.ranks)]
        add_efficiencies(points)
    model = fit_model(points)
    if not args.model:
        Path(args.json).write_text(json.dumps({"host": host, "points": points, "model": model},
                                              indent=2))
    print(points_table(points), "", ranks_table(points), "", model_report(model, points, args),
          sep="\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
