"""The dotted-key sweep syntax (solver.sweep), in process through solver.cli.main: the runs are
the Cartesian product of the lists, each the case with those fields set."""

import json

from conftest import CASES
from solver.case import load_case
from solver.cli import main
from solver.impact.sweeps import read_table
from solver.rockfall.ensemble import expand


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
    assert list(dotted.config.spreads()) == ["aspect_ratio", "omega_0"]
    assert [(r.block.aspect_ratio, r.start.omega_0) for r in runs] == [
        (1.0, 0.0), (1.0, 5000.0), (3.0, 0.0), (3.0, 5000.0)]
