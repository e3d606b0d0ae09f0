"""The worked examples in docs/examples run, at their smallest size."""

from __future__ import annotations

import importlib.util

from conftest import ROOT


def _example(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "docs" / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_friction_sweep_example_plots_sliding_distance_against_friction(tmp_path):
    """Two angles and a 2 s trigger: at 12 deg the mass fails (about 1 m), at 24 deg it
    holds; the plot is written."""
    rows = _example("friction_sweep").main(["--angles", "12", "24", "--trigger-s", "2",
                                            "--out", str(tmp_path)])
    assert [r["friction_deg"] for r in rows] == [12.0, 24.0]
    assert [r["failed"] for r in rows] == [True, False]
    assert rows[0]["sliding_distance_m"] > 0.5 > 0.1 > rows[1]["sliding_distance_m"]
    assert (tmp_path / "friction_sweep.png").stat().st_size > 10_000
    assert (tmp_path / "phi_12" / "summary.json").exists()
