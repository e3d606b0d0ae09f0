"""An output folder the user cannot write (a container's mount owned by another uid) stops
the run with one line and exit code 2, before anything is computed."""

import shutil
import subprocess
import sys

import pytest

from conftest import CASES, ROOT


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs util-linux unshare")
def test_unwritable_output_folder_is_one_line_error(tmp_path):
    """In a new user namespace the process is not privileged (root loses its override), so
    a read-only folder stays read-only for it, as a foreign mount does in a container."""
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    proc = subprocess.run(
        ["unshare", "--user", sys.executable, "-m", "solver.cli", "run",
         str(CASES / "column_gravity.toml"), "--out", str(locked / "out"), "--quiet"],
        capture_output=True, text=True, cwd=ROOT, timeout=120)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"error: --out: cannot write the output folder {locked / 'out'}: "
                               "Permission denied for uid")
    assert list(locked.iterdir()) == []
