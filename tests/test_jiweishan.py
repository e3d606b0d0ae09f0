"""The Jiweishan landslide case (Feng et al. 2014, section 7): the geometry builder, gravity
equilibrium of the coarse case, the hand-over of broken interfaces to contact, and the CFFA
bisection against the rigid-wedge formula."""

import importlib.util
import json
import math
import sys
import tomllib

import numpy as np
import pytest
import pyvista as pv

from conftest import CASES, ROOT
from solver.cli import main as solver_main
from solver.io.vtk import code_tables
from solver.mesh import element_volumes, read_hex_mesh


def _script(name: str):
    """A module of scripts/, imported once (dataclasses need it in sys.modules)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture(scope="module")
def builder():
    return _script("make_jiweishan")


@pytest.mark.parametrize("override, message", [
    ("thickness_m=-5", "thickness_m: must be > 0"),
    ("dip_deg=95", "dip_deg: must be < 90"),
    ("length_m=inf", "length_m: must be a finite number"),
    ("width_m=nan", "width_m: must be a finite number"),
    ("key_length_m=800", "key_length_m: 800 m leaves no sliding body"),
    ("resolution.n_along=0", "resolution.n_along: must be >= 1"),
    ("resolution.n_thick=400", "resolution: element"),
    ("sliding_azimuth_deg=180", "sliding_azimuth_deg: the bed rises"),
])
def test_builder_refuses_impossible_geometry(builder, tmp_path, capsys, override, message):
    out = tmp_path / "m.msh"
    assert builder.main(["coarse", "--out", str(out), "--set", override]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {out}: ") and message in err[0], err
    assert not out.exists()


def test_builder_meshes_are_current_and_hold_the_stated_mass(builder, tmp_path):
    """The committed meshes are what the builder writes; the mass holds the volume of its
    tapered shape, V = L cos(DACN)/n_z * integral of width x thickness along the slope."""
    for name, extra in (("jiweishan_coarse", []),
                        ("jiweishan_simple", ["--set", "runout_length_m=0"])):
        out = tmp_path / f"{name}.msh"
        assert builder.main(["coarse", "--out", str(out), *extra]) == 0
        assert out.read_text() == (ROOT / "meshes" / f"{name}.msh").read_text(), name
    mesh = read_hex_mesh(str(ROOT / "meshes" / "jiweishan_coarse.msh"))
    assert mesh.group_names == {1: "bedrock", 2: "key_body", 3: "sliding_body"}
    g = builder.load_geometry("coarse", [], None, "test")
    dacn, dacw = builder.dip_components(g)
    assert dacn == pytest.approx(math.degrees(math.atan(math.tan(math.radians(21.0))
                                                        * math.cos(math.radians(15.0)))))
    assert dacw == pytest.approx(math.degrees(math.atan(math.tan(math.radians(21.0))
                                                        * math.sin(math.radians(15.0)))))
    tn, tw = math.tan(math.radians(dacn)), math.tan(math.radians(dacw))
    slope = math.sqrt(1 + tn * tn + tw * tw) / math.sqrt(1 + tn * tn)
    mean = (150 * 30 + (260 * 30 + 150 * 60) / 2 + 260 * 60) / 3   # integral of w t du
    volume = element_volumes(mesh.points[mesh.cells])[mesh.groups > 1].sum()
    assert volume == pytest.approx(780 * slope * mean, rel=1e-9)


def test_coarse_case_reaches_equilibrium_with_the_weight_on_its_bed(tmp_path):
    """Relaxed with intact interfaces to an unbalance ratio below 1e-5, the bed's reaction on
    the mass (spring forces at the held nodes) equals its weight (rho g V from the mesh)."""
    out = tmp_path / "run"
    assert solver_main(["run", str(CASES / "jiweishan.toml"), "--out", str(out), "--quiet",
                        "--set", "stages[1].duration=0.05", "--set", "output.every=0"]) == 0
    r = json.loads((out / "summary.json").read_text())["results"]
    assert r["stages"][0]["end"] == "converged" and r["equilibrium_unbalance_ratio"] < 1e-5
    assert r["equilibrium_broken_springs"] == 0
    mesh = read_hex_mesh(str(ROOT / "meshes" / "jiweishan_coarse.msh"))
    mass = element_volumes(mesh.points[mesh.cells])[mesh.groups > 1].sum() * 2650.0
    assert r["weight_N"] == pytest.approx(mass * 9.81, rel=1e-9)
    assert r["base_reaction_rel_error"] < 0.01
    reader = pv.get_reader(str(out / "jiweishan.pvd"))
    grid = reader.read()[0]
    assert code_tables(grid.field_data.keys()) == {
        "group_names": {1: "bedrock", 2: "key_body", 3: "sliding_body"}}
    assert set(np.unique(grid.cell_data["group"])) == {1, 2, 3}
    for name in ("landslide_history.csv", "landslide_history.png", "deposit_map.csv",
                 "deposit_map.png"):
        assert (out / name).stat().st_size > 0, name


def test_broken_face_hands_over_to_contact():
    """With contact, a face whose four springs broke carries no force however its nodes
    move afterwards; without contact the broken springs stay a compression-only joint."""
    from test_cdem_interface import _advance, _model, _spring_forces, _two_blocks

    from solver.cdem.interface import interface_step, interface_tally

    for handover in (False, True):
        model = _model(_two_blocks())
        n, m = model.nodes, model.springs
        tally = interface_tally()
        _advance(model, np.array([0.0, 0.0, 1e-3]))             # tension: all four break
        assert np.all(m.state != 0)
        n.du[:] = 0.0
        n.du[8:16] = [0.0, 0.0, -5e-3]                          # pushed back into the base
        n.x[8:16] += n.du[8:16]
        for _ in range(2):
            interface_step(n.x, n.du, m.packed, True, tally, handover)
        pushed = np.abs(_spring_forces(model)).max()
        assert (pushed == 0.0) if handover else (pushed > 0.0)


def test_rigid_block_on_the_bed_slides_at_the_wedge_angle(tmp_path):
    """One element on the model's bed against the flank wall, no key body: the bisected CFFA
    (0.25 deg, from +-1 deg around the theory, widened if the model fails or holds at both
    ends) lies within 0.5 deg of the rigid-wedge limit equilibrium."""
    study = _script("jiweishan_study")
    dacn, dacw = 20.34, 5.67
    row = study.critical_friction_at(
        CASES / "jiweishan_simple.toml", tmp_path, dacn, dacw, 0.25,
        ["key_length_m=0", "resolution.n_along=1", "resolution.n_across=1",
         "resolution.n_thick=1"], guess=1.0)
    assert row["fails_deg"] < row["holds_deg"] <= row["fails_deg"] + 0.25
    assert abs(row["cffa_deg"] - study.wedge_critical_friction(dacn, dacw)) < 0.5
    assert study.wedge_critical_friction(dacn, dacw) < dacn       # the wall holds some


def test_resolution_study_refines_every_edge_of_the_mass_and_tables_each_run(builder, tmp_path):
    """Level k cuts each of the mass's edges k times as often (k^3 times the elements of the
    sliding body) and the valley floor's cells k times smaller; the study's row of a level
    carries its run's results and its steps per stage (level 1, stages cut short); run
    again, the study reads a level that is done back instead of running it."""
    study = _script("jiweishan_study")
    sliding = []
    for level in (1, 2, 3):
        g = builder.load_geometry("coarse", study.level_overrides(level), None, "test")
        mesh = builder.build(g, "test")
        sliding.append(builder.volume_summary(mesh)["sliding_body"][1])
        assert g.resolution.floor_cell_m == 150.0 / level
    assert sliding == [21, 21 * 8, 21 * 27]
    out = tmp_path / "study"
    assert study.main(["resolution", "--levels", "1", "--out", str(out),
                       "--set", "stages[1].duration=0.05", "--set", "stages[2].duration=0.05",
                       "--set", "output.every=0"]) == 0
    summary = json.loads((out / "level_1" / "run" / "summary.json").read_text())
    row = json.loads((out / "study.json").read_text())["rows"][0]
    assert row["elements"] == 224 and row["sliding_elements"] == 21
    assert row["steps"] == summary["steps"] and row["wall_s"] == summary["wall_s"]
    for key in ("sliding_distance_m", "runout_m", "broken_fraction", "energy_error"):
        assert row[key] == summary["results"][key], key
    assert row["steps"] == sum(row[f"steps_{name}"] for name in study.RESOLUTION_STAGES)
    assert row["dt_min_s"] <= row["dt_max_s"]
    assert (out / "resolution.csv").read_text().count("\n") == 2
    assert (out / "resolution.png").stat().st_size > 0
    assert (out / "resolution_results.png").stat().st_size > 0
    done = (out / "level_1" / "run" / "summary.json").stat().st_mtime_ns
    assert study.main(["resolution", "--levels", "1", "--out", str(out)]) == 0
    assert (out / "level_1" / "run" / "summary.json").stat().st_mtime_ns == done
    assert study.main(["resolution", "--levels", "0", "--out", str(out)]) == 2


def test_weakening_study_runs_the_case_with_velocity_weakening_contact_friction(tmp_path):
    """Every friction field at the static angle, the contact's law velocity weakening with
    the dynamic angle of the row and the weakening velocity asked for (stages cut short)."""
    study = _script("jiweishan_study")
    out = tmp_path / "weakening"
    assert study.main(["weakening", "--static", "12", "--dynamic", "6", "--velocity", "3",
                       "--out", str(out), "--set", "stages[1].duration=0.05",
                       "--set", "stages[2].duration=0.05", "--set", "output.every=0"]) == 0
    row = json.loads((out / "study.json").read_text())["rows"][0]
    assert row["dynamic_friction_deg"] == 6.0
    resolved = tomllib.loads(next(out.glob("runs/run_000/case.resolved.toml")).read_text())
    contact = resolved["contact"]
    assert contact["tangential_law"] == "velocity_weakening"
    assert (contact["friction_deg"], contact["dynamic_friction_deg"],
            contact["weakening_velocity"]) == (12.0, 6.0, 3.0)
    assert all(pair["friction_deg"] == 12.0 for pair in resolved["interface"]["pairs"])
    assert (out / "weakening_sweep.csv").read_text().count("\n") == 2


def test_progress_lines_show_what_ends_the_trigger_and_the_runout(tmp_path, capsys,
                                                                  monkeypatch):
    """The trigger stage's lines give how far the sliding body has moved (it ends at
    analysis.failure_displacement), the runout's its speed (as the history records it) and
    its kinetic energy as a fraction of the peak (it ends below analysis.stop_fraction)."""
    from solver.io.progress import Progress

    monkeypatch.setattr(Progress, "EVERY_S", 0.0)
    out = tmp_path / "run"
    assert solver_main(["run", str(CASES / "jiweishan.toml"), "--out", str(out),
                        "--set", "stages[0].max_steps=20", "--set", "stages[1].duration=0.1",
                        "--set", "stages[2].duration=0.1", "--set", "output.every=0",
                        "--set", "analysis.failure_displacement=1e-4"]) == 0
    lines = capsys.readouterr().err.splitlines()
    trigger = [ln for ln in lines if ln.startswith("trigger:") and "moved_m=" in ln]
    runout = [ln for ln in lines if ln.startswith("runout:") and "speed_mps=" in ln]
    assert trigger and runout
    moved = float(trigger[-1].split("moved_m=")[1].split()[0])
    assert 1e-4 < moved < 1e-2
    history = np.loadtxt(out / "landslide_history.csv", delimiter=",", skiprows=1, ndmin=2)
    speed = float(runout[-1].split("speed_mps=")[1].split()[0])
    assert speed == pytest.approx(history[-1, 4], rel=1e-3)
    assert all(0.0 < float(ln.split("kinetic_of_peak=")[1].split()[0]) <= 1.0
               for ln in runout)
