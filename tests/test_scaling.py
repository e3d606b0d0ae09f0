"""scripts/scaling.py on a small heap at 1 and 2 ranks (it launches mpiexec itself, so it runs
in the serial pass): both points in its JSON with a finite, positive efficiency, per-rank
rows with their traffic, and bytes exchanged on 2 ranks. Nothing is asserted on timing."""

import json
import math
import subprocess
import sys

from conftest import ROOT, mpiexec


def test_scaling_harness_writes_both_points(tmp_path):
    out = tmp_path / "scaling.json"
    proc = subprocess.run([sys.executable, "scripts/scaling.py", "--strong", "300", "--ranks",
                           "1", "2", "--steps", "3", "--mpiexec", mpiexec(), "--json",
                           str(out)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = json.loads(out.read_text())
    points = report["points"]
    assert [(p["mode"], p["ranks"]) for p in points] == [("strong", 1), ("strong", 2)]
    for p in points:
        for key in ("efficiency", "work_efficiency"):
            assert math.isfinite(p[key]) and p[key] > 0   # a timing on a shared machine
        assert [r["rank"] for r in p["per_rank"]] == list(range(p["ranks"]))
        for r in p["per_rank"]:
            assert {"bytes_sent_per_step", "bytes_received_per_step", "messages_per_step",
                    "ghosts", "neighbours", "waiting_s", "work_s", "peak_rss_mb"} <= r.keys()
    two = points[1]["per_rank"]
    assert all(r["bytes_sent_per_step"] > 0 and r["messages_per_step"] > 0 for r in two)
    assert report["host"]["cores"] >= 1 and report["host"]["git_commit"]
    assert "| strong | 2 |" in proc.stdout and "relative error" in proc.stdout
    assert "renewals s/step" in proc.stdout
