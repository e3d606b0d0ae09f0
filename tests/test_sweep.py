"""The one sweep syntax (solver.sweep) of every module, in process through solver.cli.main:
the runs are the Cartesian product of the lists (or the rows of keys and runs), each the case
with those fields set; a module without rows of its own runs each point as a whole case; a bad
sweep of any module stops with one line at the sweep key and exit code 2."""

import json
import re

import pytest

from conftest import CASES, main_in_process
from solver.case import load_case
from solver.cli import main
from solver.impact.sweeps import read_table
from solver.io.table import read_rows
from solver.rockfall.ensemble import expand
from test_hostile_input import CONTACT_LAWS


def _run(case, out, *overrides) -> dict:
    argv = ["run", str(case), "--out", str(out), "--quiet"]
    for text in overrides:
        argv += ["--set", text]
    assert main(argv) == 0
    return json.loads((out / "summary.json").read_text())["results"]


def test_pointmass_dotted_lists_give_the_runs_of_the_same_rows(tmp_path):
    short = ("time.t_end=2.0", "output.vtk=false", "output.plot=false")
    rows = _run(CASES / "sphere_cup.toml", tmp_path / "rows", *short,
                "sweep.keys=['grid.n', 'grid.tangential_speed']",
                "sweep.runs=[[3, 20.0], [3, 55.0], [4, 20.0], [4, 55.0]]")
    dotted = _run(CASES / "sphere_cup.toml", tmp_path / "dotted", *short, "sweep.keys=[]",
                  "sweep.runs=[]", "sweep.grid.n=[3, 4]",
                  "sweep.grid.tangential_speed=[20.0, 55.0]")
    assert dotted["runs"] == rows["runs"]
    assert [r["params"] for r in dotted["runs"]][1] == {"grid.n": 3, "grid.tangential_speed": 55.0}
    assert dotted["n_masses"] == [3, 3, 4, 4]


def test_impact_dotted_field_is_a_table_column_and_sets_the_case(tmp_path):
    common = ("sweep.aspect_ratio=[2.0]", "sweep.theta_0=[]", "sweep.theta_in=[0.0, 20.0]",
              'sweep.plots=["e_n"]', "solver.rtol=1e-6")
    _run(CASES / "impact_angle_sweep.toml", tmp_path / "both", *common,
         "sweep.soil.phi=[30.0, 40.0]")
    _run(CASES / "impact_angle_sweep.toml", tmp_path / "one", *common, "soil.phi=40.0")
    table = (tmp_path / "both" / "impact_angle_sweep_sweep.csv").read_text().splitlines()
    alone = (tmp_path / "one" / "impact_angle_sweep_sweep.csv").read_text().splitlines()
    assert table[0] == "soil.phi [deg]," + alone[0]
    assert [line.split(",", 1)[1] for line in table[3:]] == alone[1:]
    both = read_table(tmp_path / "both" / "impact_angle_sweep_sweep.csv")
    assert [r["soil.phi"] for r in both] == [30.0, 30.0, 40.0, 40.0]
    assert both[0]["max_penetration"] != both[2]["max_penetration"]


def test_rockfall_dotted_grids_are_the_ensemble_grids():
    vary = load_case(CASES / "biplanar_rockfall.toml",
                     ["ensemble.vary={aspect_ratio = {values = [1.0, 3.0]}, "
                      "omega_0 = {values = [0.0, 5000.0]}}"])
    dotted = load_case(CASES / "biplanar_rockfall.toml",
                       ["ensemble.vary={}", "sweep.block.aspect_ratio=[1.0, 3.0]",
                        "sweep.start.omega_0=[0.0, 5000.0]"])
    runs = expand(dotted.config, "case")
    assert runs == expand(vary.config, "case") and len(runs) == 4
    assert dotted.config.varied() == ["aspect_ratio", "omega_0"]
    assert [(r.block.aspect_ratio, r.start.omega_0) for r in runs] == [
        (1.0, 0.0), (1.0, 5000.0), (3.0, 0.0), (3.0, 5000.0)]


# module: (shipped case, a bounded float field f, another float field g)
MODULES = {"cdem": ("cube_rotation.toml", "time.safety", "interface.stiffness_factor"),
           "contact_laws": ("tangential_restitution.toml", "contact.mu", "contact.e_n"),
           "pointmass": ("pointmass_incline.toml", "friction.mu", "gravity"),
           "impact": ("ellipsoid_impact.toml", "soil.phi", "soil.nu"),
           "rockfall": ("biplanar_rockfall.toml", "start.speed", "start.dip")}
MANY = "[" + ", ".join(["0.3"] * 400) + "]"
# (--set overrides ({f}, {g}: the module's fields), where the line points, what it says)
BAD_SWEEPS = [
    (["sweep.nosuch.field=[0.5]"], "sweep.nosuch.field", "names no case field|cannot be swept"),
    (["sweep.keys=['{f}', 'nosuch']", "sweep.runs=[[0.5, 1]]"], "sweep.keys[1]",
     "names no case field|cannot be swept"),
    (["sweep.{f}=[]"], "sweep.{f}", "non-empty list"),
    (["sweep.{f}=0.5"], "sweep.{f}", "non-empty list"),
    (["sweep.{f}=[0.5, nan]"], "sweep.{f}[1]", "finite"),
    (["sweep.{f}=[0.5, inf]"], "sweep.{f}[1]", "finite|must be"),
    (["sweep.{f}=[-1e300]"], "sweep.{f}[0]", "must be"),
    (["sweep.{f}=['text']"], "sweep.{f}[0]", "expected a number"),
    (["sweep.keys=['{f}', '{g}']", "sweep.runs=[[0.5, 0.3], [0.5, nan]]"], "sweep.runs[1][1]",
     "finite"),
    (["sweep.keys=['{f}']"], "sweep", "both keys and runs"),
    (["sweep.keys=['{f}']", "sweep.runs=[[0.5, 0.3]]"], "sweep.runs[0]", "expected 1 values"),
    (["sweep.keys=['{f}']", "sweep.runs=[[0.5]]", "sweep.{g}=[0.3]"], "sweep", "not both"),
    (["sweep.sweep.keys=[['a']]"], "sweep.sweep.keys", "cannot set sweep fields"),
    (["sweep.{f}=" + MANY, "sweep.{g}=" + MANY], "sweep", "160000 runs, more than 100000"),
]


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize("overrides, where, what", BAD_SWEEPS,
                         ids=[f"{i}:{' '.join(o)[:40]}" for i, (o, _, _) in enumerate(BAD_SWEEPS)])
def test_bad_sweep_of_any_module_is_one_line_at_the_sweep_key(tmp_path, module, overrides,
                                                               where, what):
    case, f, g = MODULES[module]
    argv = ["run", str(CASES / case), "--out", str(tmp_path / "out"), "--quiet"]
    for text in overrides:
        argv += ["--set", text.format(f=f, g=g)]
    proc = main_in_process(argv)
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and not proc.stdout, proc.stderr
    head = f"error: {CASES / case}: {where.format(f=f, g=g)}: "
    assert lines[0].startswith(head) and re.search(what, lines[0]), lines[0]
    assert list(tmp_path.iterdir()) == []


def test_an_item_of_a_list_of_tables_is_swept_as_with_set(tmp_path):
    """A quoted key ``"materials[3].density"`` names the fourth [[materials]] table, as with
    --set; an item the case does not have is refused at its key."""
    case = tmp_path / "cube.toml"
    case.write_text((CASES / "cube_rotation.toml").read_text()
                    + '\n[sweep]\n"materials[3].density" = [1.0]\n')
    proc = main_in_process(["run", str(case), "--out", str(tmp_path / "out")])
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == (f"error: {case}: sweep.materials[3].density: no item materials[3] "
                           "(materials has 1)\n")


def test_a_module_without_rows_runs_each_point_as_the_whole_case(tmp_path):
    """contact_laws has no rows of its own: the sweep runs the whole map once per point, in
    runs/run_NNN with its own summary, and each run is the case run alone with the field set
    (the same results to the last bit); one table row per run, one PNG per plotted result."""
    case = tmp_path / "map.toml"
    case.write_text(CONTACT_LAWS)
    swept = _run(case, tmp_path / "swept", "output.csv=true", "sweep.contact.mu=[0.2, 0.5]",
                 "sweep.plots=['e_t_small_gt_numeric', 'max_switches']")
    alone = _run(case, tmp_path / "alone", "output.csv=true", "contact.mu=0.5")
    assert [r["params"] for r in swept["runs"]] == [{"contact.mu": 0.2}, {"contact.mu": 0.5}]
    assert {k: swept["runs"][1][k] for k in alone} == alone
    run = json.loads((tmp_path / "swept" / "runs" / "run_001" / "summary.json").read_text())
    assert run["results"] == alone and run["status"] == "done"
    assert (tmp_path / "swept" / "runs" / "run_001" / "e_t_map.csv").is_file()
    rows = read_rows(tmp_path / "swept" / "hostile_sweep.csv")
    assert [float(r["contact.mu"]) for r in rows] == [0.2, 0.5]
    assert float(rows[1]["e_t_small_gt_numeric"]) == pytest.approx(alone["e_t_small_gt_numeric"],
                                                                   rel=1e-9)   # 10 digits
    head = (tmp_path / "swept" / "hostile_sweep.csv").read_text().splitlines()[0]
    assert head.startswith("run [-],contact.mu [-],status [-],steps [-],wall_s [s],")
    assert (tmp_path / "swept" / "hostile_max_switches.png").stat().st_size > 0


def test_cdem_sweep_sets_an_item_of_a_list_of_tables(tmp_path):
    """A CDEM sweep over ``materials[0].density`` (keys and runs): run i is the case run
    alone with ``--set materials[0].density=...``."""
    args = ("stages[0].duration=0.05", "output.vtk=false")
    swept = _run(CASES / "cube_rotation.toml", tmp_path / "swept", *args,
                 "sweep.keys=['materials[0].density']", "sweep.runs=[[2000.0], [3000.0]]")
    alone = _run(CASES / "cube_rotation.toml", tmp_path / "alone", *args,
                 "materials[0].density=3000.0")
    assert swept["runs"][1]["mass"] == alone["mass"] == 1.5 * swept["runs"][0]["mass"]
    assert {k: swept["runs"][1][k] for k in alone} == alone


def test_render_titles_the_run_it_shows_with_its_swept_values(tmp_path):
    """``solver render`` reads the sweep of case.resolved.toml through the same layer: the run
    that wrote the VTK series (``output.vtk_run``) and its values, also for dotted lists."""
    from solver.io.render import _run_info

    _run(CASES / "pointmass_incline.toml", tmp_path / "lists", "sweep.friction.mu=[0.1, 0.3]",
         "output.vtk_run=1", "output.plot=false")
    assert _run_info(tmp_path / "lists") == ("pointmass_incline", "pointmass", "mu = 0.3")
