"""The README's two commands are the ones CI and users run."""

import re

from conftest import ROOT


def _commands():
    return re.findall(r"```bash\n(.+?)\n```", (ROOT / "README.md").read_text())


def test_ci_runs_the_readme_test_command():
    demo, tests = _commands()[:2]
    assert "pytest" in tests and "--only-mpi" in tests and "mpiexec -n 2" in tests
    assert tests in (ROOT / ".ci" / "run").read_text()
    assert "solver run cases/" in demo and "mpiexec -n 2" in demo


def test_readme_cases_exist():
    text = (ROOT / "README.md").read_text()
    cases = text[text.index("## Cases"):text.index("## Layout")]
    for name in re.findall(r"\| `(\w+)`(?:, `(\w+)`)*(?:, `(\w+)`)* \|", cases):
        for n in filter(None, name):
            assert (ROOT / "cases" / f"{n}.toml").exists(), n


def test_readme_case_example_is_the_cdem_template_and_runs(tmp_path):
    from conftest import run_case
    from solver.modules import spec_for
    text = re.findall(r"```toml\n(.+?)\n```", (ROOT / "README.md").read_text(), re.S)[0]
    assert text + "\n" == spec_for("cdem", "test").template.read_text()
    case = tmp_path / "my_block.toml"
    case.write_text(text)
    summary = run_case(case, tmp_path / "out", "output.vtk=false")
    assert summary["results"]["stages"][0]["end"] == "converged"
    assert summary["results"]["stages"][1]["end"] == "failure"
    assert summary["converged"] is True


def test_readme_units_table_covers_every_vtk_array():
    from solver.io.vtk import UNITS
    text = (ROOT / "README.md").read_text()
    table = text[text.index("Units of the arrays"):text.index("## Writing a case")]
    listed = {}
    for row in table.splitlines()[4:]:
        cells = [c.strip() for c in row.strip("|").split("|")]
        for names, unit in zip(cells[::2], cells[1::2]):
            listed.update({n: unit for n in re.findall(r"`(\w+)`", names)})
    assert listed == UNITS
