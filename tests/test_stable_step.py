"""The stable step holds with every damping mode.

* On the time loop's own node kernel (solver.cdem.timeloop.node_step), a spring-mass
  oscillator (with a dashpot taken at the last half-step velocity, as the contact dashpots
  are) stays bounded at 0.99 times solver.cdem.stable_step.critical_step and grows without bound at
  1.01 times it, for no damping, Cundall local damping and mass-proportional damping: the
  limit is sharp, not only safe.
* The element's own largest frequency (solver.cdem.stable_step.element_frequency) against the
  eigenvalues of the stiffness the element kernel produces (finite differences of
  solver.cdem.hex8.element_step) over its lumped masses: equal for a cube, above for boxes,
  plates, skewed and distorted elements, for -1 < nu < 0.5.
* The gravity column that blew up with local damping at 0.8 of the former limit runs at
  safety 1.0 with every damping mode and stays within twice its static compression; so does
  the same column with soft interfaces (the element term sets the step) and nu = 0.45.
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from mpi4py import MPI

from conftest import CASES
from solver import exact_sum
from solver.case import from_dict
from solver.cdem.config import Config
from solver.cdem.constitutive import lame
from solver.cdem.hex8 import element_step, lumped_masses
from solver.cdem.model import model_from_mesh
from solver.cdem.stable_step import critical_step, element_frequency
from solver.cdem.state import Nodes
from solver.cdem.timeloop import DAMPING, STEP_SUMS, TimeLoop, node_step
from solver.cli import main
from solver.mesh.build import mesh_from_config


def _peak(dt: float, mode: str, alpha: float, c: float, zeta: float, steps: int = 4000) -> float:
    """Largest |x| of x'' = -x - 2 zeta x' (dashpot on the last half-step velocity) under the
    kernel's damping, from x = 1 at rest (k = m = 1)."""
    x = np.array([[1.0, 0.0, 0.0]])
    n = Nodes(x0=x.copy(), x=x, v=np.zeros((1, 3)), du=np.zeros((1, 3)), f_int=np.zeros((1, 3)),
              f_contact=np.zeros((1, 3)), mass=np.ones(1), fixed=np.zeros((1, 3), dtype=bool),
              held_velocity=np.zeros((1, 3)))
    f_int, f_dashpot, v, sums = n.f_int, n.f_contact, n.v, exact_sum.accumulator(STEP_SUMS)
    peak = 1.0
    for _ in range(steps):
        f_int[0, 0] = -x[0, 0]
        f_dashpot[0, 0] = -2.0 * zeta * v[0, 0]
        node_step(n.packed, np.zeros((1, 3, 3)), np.zeros(3), dt, dt, DAMPING[mode], alpha, c,
                  sums)
        peak = max(peak, abs(x[0, 0]))
        if not peak < 1e6:
            break
    return peak


@pytest.mark.parametrize("mode, alpha, c, zeta", [
    ("none", 0.0, 0.0, 0.0), ("none", 0.0, 0.0, 0.5),
    ("local", 0.3, 0.0, 0.0), ("local", 0.8, 0.0, 0.0), ("local", 0.95, 0.0, 0.0),
    ("local", 0.8, 0.0, 0.5),
    ("viscous", 0.0, 0.2, 0.0), ("viscous", 0.0, 3.0, 0.0), ("viscous", 0.0, 1.0, 0.5)])
def test_critical_step_is_the_kernels_stability_limit(mode, alpha, c, zeta):
    limit = float(critical_step(np.array(1.0), np.array(zeta), alpha, c))
    assert _peak(0.99 * limit, mode, alpha, c, zeta) < 1e3
    assert _peak(1.01 * limit, mode, alpha, c, zeta) >= 1e6


CUBE = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
                 [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]], dtype=float)
SHAPES = {"cube": CUBE, "box": CUBE * [0.3, 1.0, 2.5], "plate": CUBE * [1.0, 1.0, 0.1],
          "skewed": CUBE @ np.array([[1.0, 0.7, 0.0], [0.0, 1.0, -0.5], [0.3, 0.0, 1.0]]).T,
          "distorted": CUBE + np.random.default_rng(7).uniform(-0.2, 0.2, (8, 3))}


def _largest_eigenvalue(x: np.ndarray, lam: float, mu: float) -> float:
    """Largest eigenvalue of M^-1/2 K M^-1/2 of one element (rho = 1), K by finite
    differences of the element kernel's internal forces."""
    eps = 1e-7
    k = np.zeros((24, 24))
    for j in range(24):
        du = np.zeros((8, 3))
        du.flat[j] = eps
        force = np.zeros((8, 3))
        element_step(x + du, du, np.zeros((1, 8, 6)), force, np.array([lam]), np.array([mu]),
                     np.zeros(1, dtype=np.int64))
        k[:, j] = -force.ravel() / eps
    scale = np.repeat(1.0 / np.sqrt(lumped_masses(x[None], np.ones(1))[0]), 3)
    return float(np.linalg.eigvalsh(0.5 * (k + k.T) * np.outer(scale, scale))[-1])


@pytest.mark.parametrize("nu", [-0.5, 0.0, 0.25, 0.45])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_element_frequency_bounds_the_element_kernel(shape, nu):
    """Tolerance 1e-5: the finite-difference stiffness (the kernel is incremental and
    geometrically nonlinear; a 1e-7 step perturbs it at that order)."""
    lam, mu = lame(1.0, nu)
    bound = float(element_frequency(np.ones(1), np.array([lam]), np.array([mu]),
                                    SHAPES[shape][None])[0]) ** 2
    exact = _largest_eigenvalue(SHAPES[shape], lam, mu)
    if shape == "cube":
        assert exact == pytest.approx(bound, rel=1e-5)
    else:
        assert exact <= bound * (1.0 + 1e-5)


COLUMN_STAGES = {
    "local": ["stages[0].max_steps=20000"],
    "viscous": ["stages[0].kind='dynamic'", "stages[0].damping='viscous'",
                "stages[0].viscous_damping=5000.0", "stages[0].max_steps=3000"],
    "none": ["stages[0].kind='dynamic'", "stages[0].damping='none'",
             "stages[0].max_steps=3000"]}


@pytest.mark.parametrize("springs", [[], ["interface.stiffness_factor=0.01",
                                          "materials[0].poisson_ratio=0.45"]],
                         ids=["stiff-interfaces", "soft-interfaces"])
@pytest.mark.parametrize("damping", list(COLUMN_STAGES))
def test_gravity_column_at_safety_one_with_every_damping_mode(damping, springs, tmp_path,
                                                              capsys):
    """Roller-based 10 m column (E = 1e9 Pa, rho = 2500 kg/m3): static top settlement
    rho g H^2 / (2 (K + 4G/3)) (1.02 mm at nu = 0.25, plus the soft interfaces' share
    rho g H^2 / (2 beta (K + 4G/3)) with beta = 0.01); from rest it never exceeds twice that.
    Local damping relaxes it to sigma_zz = -rho g (H - z) (as at the default safety); the viscous
    c = 5000 1/s is about half critical at the column's highest frequency."""
    args = ["run", str(CASES / "column_gravity.toml"), "--out", str(tmp_path / "out"),
            "--quiet", "--set", "time.safety=1.0"]
    for text in COLUMN_STAGES[damping] + springs:
        args += ["--set", text]
    assert main(args) == 0, capsys.readouterr().err
    r = json.loads((tmp_path / "out" / "summary.json").read_text())["results"]
    nu, beta = (0.45, 0.01) if springs else (0.25, 10.0)
    modulus = 1e9 * (1.0 - nu) / ((1.0 + nu) * (1.0 - 2.0 * nu))
    static = 2500.0 * 9.81 * 10.0 ** 2 / (2.0 * modulus) * (1.0 + 1.0 / beta)
    assert math.isfinite(r["energy"]["kinetic"]) and r["max_displacement"] < 2.05 * static
    if damping == "local":
        assert r["stages"][0]["end"] == "converged"
        assert r["rel_error"] < 1e-3


def test_step_inside_the_former_limit_is_refused_with_local_damping(tmp_path, capsys):
    """4.0e-4 s was inside the former limit 4.35e-4 s and blew up under local damping
    (alpha = 0.8): the undamped limit with the element's own largest frequency is 4.23e-4 s,
    and 4.23e-4 / sqrt(1.8) = 3.15e-4 s with local damping."""
    args = ["run", str(CASES / "column_gravity.toml"), "--out", str(tmp_path / "out"),
            "--quiet", "--set", "time.dt=4.0e-4"]
    assert main(args) == 2
    line = capsys.readouterr().err.strip()
    assert "time.dt" in line and "3.150e-04" in line
    assert not (tmp_path / "out").exists()


def test_each_stage_steps_at_its_own_limit(tmp_path, capsys):
    """The column relaxed under local damping (alpha = 0.8), then left undamped: without
    contact dashpots the limit is 2 / (sqrt(1 + alpha) omega), so the undamped stage steps
    sqrt(1.8) times longer than the relaxation; at safety 1.0 it stays at rest (an unstable
    step grows without bound within its 3,000 steps)."""
    case = tmp_path / "column.toml"
    case.write_text((CASES / "column_gravity.toml").read_text() + "\n".join([
        "", "[[stages]]", "name = 'free'", "kind = 'dynamic'", "damping = 'none'",
        "max_steps = 3000", ""]))
    args = ["run", str(case), "--out", str(tmp_path / "out"), "--quiet",
            "--set", "time.safety=1.0", "--set", "stages[0].max_steps=20000"]
    assert main(args) == 0, capsys.readouterr().err
    r = json.loads((tmp_path / "out" / "summary.json").read_text())["results"]
    relax, free = r["stages"]
    assert relax["end"] == "converged" and free["steps"] == 3000
    assert relax["dt"][0] == relax["dt"][1] and free["dt"][0] == free["dt"][1]
    assert free["dt"][0] / relax["dt"][0] == pytest.approx(math.sqrt(1.8), rel=1e-12)
    static = 2500.0 * 9.81 * 10.0 ** 2 / (2.0 * 1.2e9) * 1.1
    assert math.isfinite(r["energy"]["kinetic"]) and r["max_displacement"] < 2.05 * static


def test_free_fall_stays_exact_across_a_step_change(tmp_path):
    """A free 2 x 2 x 2 block under gravity, 40 steps of 1e-4 s, then 30 of 2.5e-4 s: the
    central difference with the mean of the two steps at the change is exact for a constant
    acceleration, so every node follows z = z0 - g (t^2 + dt_1 t) / 2 (the start from rest
    takes v^{1/2} = -g dt_1, an initial speed of -g dt_1 / 2). With the new step alone at the
    change the block would be g (2.5e-4 - 1e-4) / 2 x 7.5 ms = 5.5e-6 m off."""
    case = {"gravity": [0.0, 0.0, -9.81],
            "mesh": {"boxes": [{"n": [2, 2, 2], "size": [2.0, 2.0, 2.0], "group": "rock"}]},
            "materials": [{"density": 2500.0, "youngs_modulus": 1e9, "poisson_ratio": 0.25}],
            "stages": [{"name": "fall", "kind": "dynamic", "damping": "none", "max_steps": 40}]}
    cfg = from_dict(Config, case, "fall", "", None)
    model = model_from_mesh(MPI.COMM_SELF, cfg, mesh_from_config(cfg.mesh, "fall"), "fall")
    z0 = model.nodes.x[:, 2].copy()
    dt_1, dt_2 = 1e-4, 2.5e-4
    loop = TimeLoop(MPI.COMM_SELF, model, cfg.gravity, dt_1)
    loop.run_stage(cfg.stages[0], [])
    loop.set_step(dt_2)
    loop.run_stage(dataclasses.replace(cfg.stages[0], max_steps=30), [])
    t = 40 * dt_1 + 30 * dt_2
    fall = 0.5 * 9.81 * (t * t + dt_1 * t)
    assert np.abs(model.nodes.x[:, 2] - (z0 - fall)).max() < 1e-12


def test_progress_lines_show_the_energy_balance_as_the_run_goes(tmp_path, capsys,
                                                                monkeypatch):
    """The undamped column, 300 steps: every progress line carries ``energy_error``, ``-``
    until step 100 and then taken every 100 steps; the line of the last step gives the
    summary's energy_error (the same balance at the same step)."""
    from solver.io.progress import Progress

    monkeypatch.setattr(Progress, "EVERY_S", 0.0)
    args = ["run", str(CASES / "column_gravity.toml"), "--out", str(tmp_path / "out")]
    for text in COLUMN_STAGES["none"][:2] + ["stages[0].max_steps=300"]:
        args += ["--set", text]
    assert main(args) == 0
    lines = [ln for ln in capsys.readouterr().err.splitlines() if "step=" in ln]
    shown = [ln.split("energy_error=")[1].split()[0] for ln in lines]
    assert len(shown) == 300 and shown[:99] == ["-"] * 99
    values = [float(v) for v in shown[99:]]
    assert values[-1] > 0.0
    assert values[1:100] == values[:1] * 99 and values[100] != values[0]
    last = json.loads((tmp_path / "out" / "summary.json").read_text())["results"]
    assert values[-1] == pytest.approx(last["energy_error"], rel=1e-3)
