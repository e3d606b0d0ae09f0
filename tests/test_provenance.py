"""Which code ran: the checkout's commit, or in a container image (no .git) the commit its
build recorded in ``solver/build_commit.txt``."""

from __future__ import annotations

import shutil
import subprocess
import sys

from conftest import ROOT
from solver.io.summary import BUILD_COMMIT_FILE, git_commit

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def test_a_package_outside_a_checkout_names_the_commit_its_build_recorded(tmp_path):
    """The package copied out of the checkout, as the Dockerfile installs it: a fresh
    interpreter importing it reads the recorded commit; without the file, None."""
    shutil.copytree(ROOT / "solver", tmp_path / "solver",
                    ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc",
                                                  BUILD_COMMIT_FILE))
    probe = [sys.executable, "-c",
             "from solver.io.summary import git_commit; print(git_commit())"]

    def commit_there() -> str:
        proc = subprocess.run(probe, capture_output=True, text=True, cwd=tmp_path,
                              timeout=120)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.strip()

    assert commit_there() == "None"
    (tmp_path / "solver" / BUILD_COMMIT_FILE).write_text(f"{COMMIT}-dirty\n")
    assert commit_there() == f"{COMMIT}-dirty"


def test_a_checkout_names_its_own_commit_before_a_recorded_one(tmp_path):
    """A checkout holding a stale ``build_commit.txt`` gives its HEAD (``-dirty`` once a
    tracked file changes); an empty recorded commit is none."""
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    (tmp_path / "code.py").write_text("x = 1\n")
    for args in (["init", "-q"], ["add", "code.py"], ["commit", "-q", "-m", "one"]):
        subprocess.run([*git, *args], check=True, capture_output=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    (tmp_path / BUILD_COMMIT_FILE).write_text(COMMIT)
    assert git_commit(tmp_path) == head
    (tmp_path / "code.py").write_text("x = 2\n")
    assert git_commit(tmp_path) == f"{head}-dirty"
    (tmp_path / "code.py").unlink()
    shutil.rmtree(tmp_path / ".git")
    assert git_commit(tmp_path) == COMMIT
    (tmp_path / BUILD_COMMIT_FILE).write_text("\n")
    assert git_commit(tmp_path) is None
