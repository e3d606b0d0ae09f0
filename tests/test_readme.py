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
