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
    for name in re.findall(r"\| `(\w+)`(?:, `(\w+)`)*(?:, `(\w+)`)* \|", (ROOT / "README.md").read_text()):
        for n in filter(None, name):
            assert (ROOT / "cases" / f"{n}.toml").exists(), n


def test_readme_case_example_runs(tmp_path):
    from conftest import run_case
    text = re.findall(r"```toml\n(.+?)\n```", (ROOT / "README.md").read_text(), re.S)[0]
    case = tmp_path / "my_block.toml"
    case.write_text(text)
    summary = run_case(case, tmp_path / "out", "output.vtk=false")
    assert summary["results"]["stages"][0]["end"] == "converged"
    assert summary["results"]["stages"][1]["end"] == "failure"
