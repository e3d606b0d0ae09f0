"""A friction sweep of the simple Jiweishan model through the Python API.

Each run gives every friction angle of ``cases/jiweishan_simple.toml`` (its materials, its
interface pairs and the contact) one value; the plot shows how far the sliding body's centre
of mass moved (``sliding_distance_m``) against that angle. The case's trigger stage ends
once the body has moved 1 m (the mass fails), so a run that fails shows about 1 m (the
horizontal part of that travel) and one that holds much less: the step between them is the
case's critical friction.

    python docs/examples/friction_sweep.py                  # 12 to 24 deg: 7 runs, 1-2 min
    mpiexec -n 2 python docs/examples/friction_sweep.py     # every run on both ranks
    python docs/examples/friction_sweep.py --angles 12 24 --trigger-s 2 --out out/quick

Writes ``OUT/phi_<angle>/`` (one run folder each) and ``OUT/friction_sweep.png``.
"""

from __future__ import annotations

import argparse
import tomllib
from pathlib import Path

import solver

CASE = Path(__file__).resolve().parents[2] / "cases" / "jiweishan_simple.toml"


def friction_fields(case: Path) -> list[str]:
    """The case fields that hold a friction angle, as ``run_case`` overrides name them."""
    data = tomllib.loads(case.read_text())
    fields = [f"materials[{k}].friction_deg" for k in range(len(data["materials"]))]
    fields += [f"interface.pairs[{k}].friction_deg"
               for k in range(len(data["interface"]["pairs"]))]
    return fields + ["contact.friction_deg"]


def sweep(angles: list[float], out: Path, trigger_s: float | None = None) -> list[dict]:
    """One run per friction angle (all ranks together); per run the angle, the sliding
    distance and whether the mass failed."""
    fields = friction_fields(CASE)
    rows = []
    for phi in angles:
        overrides = {field: phi for field in fields}
        if trigger_s is not None:
            overrides["stages[1].duration"] = trigger_s
        run = solver.run_case(CASE, out=out / f"phi_{phi:g}", overrides=overrides,
                              overwrite=True)
        rows.append({"friction_deg": phi, "sliding_distance_m": run.results["sliding_distance_m"],
                     "failed": run.results["failed"]})
    return rows


def plot(rows: list[dict], path: Path) -> None:
    """Sliding distance against the friction angle; the runs that failed filled."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    ax.plot([r["friction_deg"] for r in rows], [r["sliding_distance_m"] for r in rows], "-",
            color="C0")
    for failed, style in ((True, "o"), (False, "s")):
        chosen = [r for r in rows if r["failed"] == failed]
        ax.plot([r["friction_deg"] for r in chosen], [r["sliding_distance_m"] for r in chosen],
                style, color="C0", fillstyle="full" if failed else "none",
                label="failed" if failed else "held")
    ax.set_xlabel("friction angle [deg]")
    ax.set_ylabel("sliding distance of the sliding body [m]")
    ax.set_title("jiweishan_simple: sliding distance against friction", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--angles", type=float, nargs="+",
                        default=[12.0, 14.0, 16.0, 18.0, 20.0, 22.0, 24.0],
                        help="friction angles [deg]")
    parser.add_argument("--trigger-s", type=float,
                        help="the trigger stage's duration [s] (the case's: 10 s)")
    parser.add_argument("--out", type=Path, default=Path("out/friction_sweep"),
                        help="folder of the runs and the plot")
    args = parser.parse_args(argv)
    rows = sweep(args.angles, args.out, args.trigger_s)
    from mpi4py import MPI
    if MPI.COMM_WORLD.rank == 0:
        plot(rows, args.out / "friction_sweep.png")
        for r in rows:
            print(f"{r['friction_deg']:5.1f} deg  {r['sliding_distance_m']:7.3f} m  "
                  f"{'failed' if r['failed'] else 'held'}")
    return rows


if __name__ == "__main__":
    main()
