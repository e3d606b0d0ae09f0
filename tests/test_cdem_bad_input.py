"""Bad input ends with one clear error line naming file and field, exit code 2."""

import meshio
import numpy as np
import pytest

from conftest import CASES, main_in_process

HEX = np.array([[0, 1, 2, 3, 4, 5, 6, 7]])
CUBE = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
                 [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]], dtype=float)

CASE = """module = "cdem"
[mesh]
path = "{mesh}"
[[materials]]
density = 2500.0
youngs_modulus = 1e9
[[stages]]
kind = "relax"
max_steps = 10
"""


def _expect_error(proc, *words):
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ") and "Traceback" not in proc.stderr
    for w in words:
        assert w in lines[0], lines[0]


def _run(tmp_path, text, *extra):
    case = tmp_path / "case.toml"
    case.write_text(text)
    out = tmp_path / "out"
    proc = main_in_process(["run", str(case), "--out", str(out), "--quiet", *extra])
    assert not (out / "summary.json").exists()
    return proc


def _mesh_case(tmp_path, points, cells, cell_type="hexahedron", name="m.vtu"):
    path = tmp_path / name
    meshio.write(path, meshio.Mesh(points, [(cell_type, cells)]))
    return CASE.format(mesh=path)


def test_unknown_key(tmp_path):
    text = _mesh_case(tmp_path, CUBE, HEX).replace("[[stages]]", "[[stages]]\nspeed = 3")
    _expect_error(_run(tmp_path, text), "case.toml", "stages[0].speed", "unknown key")


def test_wrong_type(tmp_path):
    text = _mesh_case(tmp_path, CUBE, HEX).replace("1e9", '"stiff"')
    _expect_error(_run(tmp_path, text), "materials[0].youngs_modulus", "expected a number")


def test_missing_required_field(tmp_path):
    text = _mesh_case(tmp_path, CUBE, HEX).replace("density = 2500.0\n", "")
    _expect_error(_run(tmp_path, text), "materials[0].density", "missing required field")


def test_bad_override(tmp_path):
    _expect_error(_run(tmp_path, _mesh_case(tmp_path, CUBE, HEX), "--set", "time.safety=7"),
                  "time.safety", "<= 1")


def test_missing_case_file(tmp_path):
    proc = main_in_process(["run", str(tmp_path / "nope.toml")])
    _expect_error(proc, "nope.toml", "not found")


def test_non_hex_cells(tmp_path):
    tet = np.array([[0, 1, 3, 4]])
    _expect_error(_run(tmp_path, _mesh_case(tmp_path, CUBE, tet, "tetra")), "m.vtu", "tetra")


def test_nan_coordinates(tmp_path):
    pts = CUBE.copy()
    pts[5, 1] = np.nan
    _expect_error(_run(tmp_path, _mesh_case(tmp_path, pts, HEX)), "m.vtu")


def test_inverted_element(tmp_path):
    inverted = HEX[:, [4, 5, 6, 7, 0, 1, 2, 3]]
    _expect_error(_run(tmp_path, _mesh_case(tmp_path, CUBE, inverted)), "m.vtu", "inverted")


def test_zero_volume_element(tmp_path):
    flat = CUBE.copy()
    flat[4:, 2] = 0.0
    _expect_error(_run(tmp_path, _mesh_case(tmp_path, flat, HEX)), "m.vtu")


def test_duplicate_nodes(tmp_path):
    top = CUBE[4:] + [0.0, 0.0, 1.0]
    pts = np.vstack([CUBE, top, CUBE[4:5]])              # node 12 duplicates node 4
    cells = np.array([[0, 1, 2, 3, 4, 5, 6, 7], [12, 5, 6, 7, 8, 9, 10, 11]])
    _expect_error(_run(tmp_path, _mesh_case(tmp_path, pts, cells)), "m.vtu", "duplicate")


def test_unreadable_mesh(tmp_path):
    bad = tmp_path / "broken.msh"
    bad.write_text("this is not a mesh\n")
    _expect_error(_run(tmp_path, CASE.format(mesh=bad)), "broken.msh")


def test_time_step_above_stability_limit(tmp_path):
    text = _mesh_case(tmp_path, CUBE, HEX) + "[time]\ndt = 1.0\n"
    _expect_error(_run(tmp_path, text), "time.dt", "stability limit")


@pytest.mark.parametrize("field", ["boundaries[0].group", "materials[0].group"])
def test_unknown_group(tmp_path, field):
    text = _mesh_case(tmp_path, CUBE, HEX)
    if field.startswith("boundaries"):
        text += '[[boundaries]]\ngroup = "granite"\n'
    else:
        text = text.replace("density = 2500.0", 'density = 2500.0\ngroup = "granite"')
    _expect_error(_run(tmp_path, text), field, "granite")


def test_case_files_in_cases_folder_all_load():
    from solver.case import load_case
    for path in sorted(CASES.glob("*.toml")):
        assert load_case(path).name


@pytest.mark.parametrize("strength, pair", [("tensile_strength", ""), ("cohesion", ""),
                                            ("tensile_strength", "tensile_strength = inf, "),
                                            ("cohesion", "cohesion = inf, ")])
def test_weakening_between_infinite_strengths(tmp_path, strength, pair):
    """A pair's strength can fall only between finite values: groups with none to fall
    from, and a pair with none to fall to, are refused."""
    finite = ({"tensile_strength": "cohesion = 1e5", "cohesion": "tensile_strength = 1e5"}
              [strength] if not pair else "tensile_strength = 1e5\ncohesion = 1e5")
    text = f"""module = "cdem"
[mesh]
boxes = [{{n = [1, 1, 2], size = [1.0, 1.0, 1.0], layer_groups = ["base", "block"]}}]
[[materials]]
density = 2500.0
youngs_modulus = 1e9
{finite}
[interface]
pairs = [{{groups = ["block", "base"], {pair}weakening_time = 1.0}}]
[[stages]]
kind = "relax"
max_steps = 10
"""
    _expect_error(_run(tmp_path, text), "interface.pairs[0].weakening_time", strength)
