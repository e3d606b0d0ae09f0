"""``module = "contact_laws"``: the e_t(k_t/k_n, g_t/g_n) map of Becker et al. (2008) with this
package's law.

The map points are handed out over the MPI ranks in chunks (:func:`solver.ensemble.run_ensemble`);
each point is integrated independently, so the map is identical for any number of ranks.
Results: ``e_t_small_gt_numeric`` / ``e_t_small_gt_theory`` (Becker et al. 2008, Eq. 49) and the
first-order correction ``e_t_small_gt_first_order`` (e_n = 1 only); ``max_switches`` over the
map; ``walton_max_abs_error`` over the points that slide throughout (Becker et al. 2008, Eq. 18;
with a dashpot no point does, since F_n jumps to gamma_n g_n at impact and every collision first
sticks); ``coulomb_region_mismatch``, the map points where the integrated regime disagrees with
Becker et al. (2008), Eqs. 45/48 (e_n = 1 only).
"""

from __future__ import annotations

import math

import numpy as np

from solver.case import Case
from solver.contact_laws.config import Config
from solver.contact_laws.laws import dashpot_coefficient
from solver.contact_laws.output import write_csv, write_plot
from solver.contact_laws.restitution import (collide, collide_many, normal_history,
                                             pure_coulomb_theory, small_gt_first_order,
                                             small_gt_limit, walton_e_t)
from solver.context import RunContext, RunOutput
from solver.ensemble import run_ensemble
from solver.errors import written_by_root
from solver.io.table import plot_title
from solver.modules import TEMPLATES, ModuleSpec

RESULT_UNITS = {"e_t_small_gt_numeric": "-", "e_t_small_gt_theory": "-",
                "e_t_small_gt_first_order": "-", "max_switches": "-",
                "walton_max_abs_error": "-", "sliding_throughout_points": "-",
                "coulomb_region_mismatch": "-", "e_n": "-", "points": "-"}

CHUNK = 64


def map_axes(cfg: Config) -> tuple[np.ndarray, np.ndarray]:
    """The k_t/k_n and g_t/g_n values of the map."""
    g = cfg.grid
    space = np.geomspace if g.kt_spacing == "log" else np.linspace
    return (space(g.kt_kn_min, g.kt_kn_max, g.n_kt),
            np.linspace(g.gt_gn_min, g.gt_gn_max, g.n_gt))


def run(case: Case, ctx: RunContext) -> RunOutput:
    cfg: Config = case.config
    c = cfg.contact
    comm = ctx.comm
    gamma_n = dashpot_coefficient(c.e_n, c.k_n, c.m_eff) if c.e_n < 1.0 else 0.0
    alpha = c.alpha_over_meff * c.m_eff
    dt, f_half, f_whole, e_n = normal_history(c.g_n, c.k_n, c.m_eff, gamma_n, cfg.steps)
    omega_n_t_end = dt * cfg.steps * math.sqrt(c.k_n / c.m_eff)

    kt_axis, gt_axis = map_axes(cfg)
    kt_kn, gt_gn = (a.ravel() for a in np.meshgrid(kt_axis, gt_axis, indexing="ij"))
    chunks = [np.arange(start, min(start + CHUNK, kt_kn.size))
              for start in range(0, kt_kn.size, CHUNK)]

    def collide_chunk(_, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return collide_many(gt_gn[idx] * c.g_n, kt_kn[idx] * c.k_n, alpha, c.mu, dt, f_half,
                            f_whole)

    gathered = run_ensemble(comm, chunks, collide_chunk,
                            ctx.progress(len(chunks), label=f"chunks of {CHUNK} collisions"))

    point = collide(c.g_n, cfg.small_gt.gt_gn * c.g_n, c.k_n, cfg.small_gt.kt_kn * c.k_n,
                    c.m_eff, alpha, c.mu, gamma_n, cfg.small_gt.steps)

    def finish() -> dict:
        e_t, switches, starts = (np.concatenate(column) for column in zip(*gathered))
        sliding_throughout = starts & (switches == 0)
        walton = walton_e_t(gt_gn, c.mu, e_n, c.alpha_over_meff)
        results = {
            "e_t_small_gt_numeric": float(point[0]),
            "e_t_small_gt_theory": small_gt_limit(cfg.small_gt.kt_kn, c.alpha_over_meff,
                                                  omega_n_t_end),
            "e_t_small_gt_first_order": (small_gt_first_order(
                cfg.small_gt.gt_gn, cfg.small_gt.kt_kn, c.mu, c.alpha_over_meff, omega_n_t_end)
                if gamma_n == 0.0 else None),
            "max_switches": int(switches.max()),
            "walton_max_abs_error": (float(np.abs(e_t - walton)[sliding_throughout].max())
                                     if sliding_throughout.any() else None),
            "sliding_throughout_points": int(sliding_throughout.sum()),
            "coulomb_region_mismatch": (int((pure_coulomb_theory(gt_gn, kt_kn, c.mu,
                                                                 c.alpha_over_meff)
                                             != sliding_throughout).sum())
                                        if gamma_n == 0.0 else None),
            "e_n": float(e_n),
            "points": int(kt_kn.size),
        }
        if cfg.output.csv:
            write_csv(ctx.out_dir / "e_t_map.csv", kt_kn, gt_gn, e_t, switches, starts)
        if cfg.output.plot:
            shape = (kt_axis.size, gt_axis.size)
            write_plot(ctx.out_dir / "e_t_map.png", kt_axis, gt_axis, e_t.reshape(shape),
                       switches.reshape(shape), cfg.grid.kt_spacing == "log",
                       f"{plot_title(case.name, ['g_t/g_n', 'k_t/k_n'])} (mu = {c.mu:g}, "
                       f"e_n = {e_n:.4g}, alpha/m_eff = {c.alpha_over_meff:.4g})")
        return results

    return RunOutput(steps=int(kt_kn.size),
                     results=written_by_root(comm, finish, ctx.out_dir))


SPEC = ModuleSpec(name="contact_laws", config=Config, run=run,
                  template=TEMPLATES / "contact_laws.toml", result_units=RESULT_UNITS,
                  sweeps_whole_cases=True, checkpoints=False)
