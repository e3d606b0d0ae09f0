"""Hostile input, table-driven and in-process (``solver.cli.main``): every row must stop in
validation with exit code 2 and one stderr line ``error: <case file>: <field>: ...`` that
names the field, with no traceback, no numerical warning and nothing left in the output's
folder.

The rows are classes, not a list of known crashes: non-finite and absurd numbers in every
module's schema, zero axes, self-crossing polygons, unresolved references, boundaries that
select nothing, derived quantities (stable step, steps per stage, strain under self-weight,
integrator stability) out of range, malformed files and command lines.
"""

from __future__ import annotations

import shutil
import warnings

import numpy as np
import pytest

from solver.cli import main

CDEM = """module = "cdem"
name = "hostile"
[mesh]
boxes = [{n = [1, 1, 2], size = [1.0, 1.0, 2.0], group = "rock"}]
[[materials]]
density = 2500.0
youngs_modulus = 1e9
[[boundaries]]
box = [-1.0, 2.0, -1.0, 2.0, -0.01, 0.01]
[[stages]]
name = "relax"
kind = "relax"
damping = "local"
max_steps = 5
[output]
vtk = false
"""

POINTMASS = """module = "pointmass"
name = "hostile"
[surface]
kind = "plane"
slope_deg = 30.0
[grid]
kind = "footprint"
footprint = [[-10.0, -10.0], [10.0, -10.0], [10.0, 10.0], [-10.0, 10.0]]
nx = 2
ny = 2
thickness = 2.0
[friction]
mu = 0.3
[time]
t_end = 0.2
dt = 0.1
[output]
every = 0.1
vtk = false
plot = false
"""

IMPACT = """module = "impact"
name = "hostile"
[solver]
t_max = 0.001
"""

CONTACT_LAWS = """module = "contact_laws"
name = "hostile"
steps = 100
[grid]
n_gt = 2
n_kt = 2
[small_gt]
steps = 1000
[output]
csv = false
plot = false
"""

BASES = {"cdem": CDEM, "pointmass": POINTMASS, "impact": IMPACT, "contact_laws": CONTACT_LAWS}

BOW_TIE = "grid.footprint=[[0.0, 0.0], [10.0, 10.0], [10.0, 0.0], [0.0, 10.0]]"
PAIR = 'interface.pairs=[{{groups = ["rock", "rock"], {}}}]'
RASTER = "surface.kind='raster'"

# (module, --set overrides ({dir}: the folder of the base cases), text the line must name)
HOSTILE = [
    # cdem: non-finite and absurd numbers
    ("cdem", ["gravity=[nan, 0.0, 0.0]"], "gravity[0]"),
    ("cdem", ["gravity=[0.0, 0.0, inf]"], "gravity[2]"),
    ("cdem", ["gravity=[0.0, 0.0, -1e300]"], "gravity"),
    ("cdem", ["materials[0].density=nan"], "materials[0].density"),
    ("cdem", ["materials[0].density=inf"], "materials[0].density"),
    ("cdem", ["materials[0].density=1e-300"], "materials[0].density"),
    ("cdem", ["materials[0].density=1e300"], "materials[0].density"),
    ("cdem", ["materials[0].youngs_modulus=inf"], "materials[0].youngs_modulus"),
    ("cdem", ["materials[0].youngs_modulus=1e300"], "materials[0].youngs_modulus"),
    ("cdem", ["materials[0].youngs_modulus=1e-300"], "materials[0]"),
    ("cdem", ["materials[0].youngs_modulus=-1e9"], "materials[0].youngs_modulus"),
    ("cdem", ["materials[0].poisson_ratio=0.5"], "materials[0].poisson_ratio"),
    ("cdem", ["materials[0].poisson_ratio=-1.0"], "materials[0].poisson_ratio"),
    ("cdem", ["materials[0].poisson_ratio=nan"], "materials[0].poisson_ratio"),
    ("cdem", ["materials[0].friction_deg=nan"], "materials[0].friction_deg"),
    ("cdem", ["materials[0].friction_deg=90.0"], "materials[0].friction_deg"),
    ("cdem", ["materials[0].tensile_strength=nan"], "materials[0].tensile_strength"),
    ("cdem", ["materials[0].cohesion=-1.0"], "materials[0].cohesion"),
    ("cdem", ["materials[0].model='plastic'"], "materials[0].model"),
    ("cdem", ["mesh.rotate_deg=inf"], "mesh.rotate_deg"),
    ("cdem", ["mesh.rotate_axis=[0.0, 0.0, 0.0]"], "mesh.rotate_axis"),
    ("cdem", ["mesh.rotate_origin=[nan, 0.0, 0.0]"], "mesh.rotate_origin[0]"),
    ("cdem", ["mesh.boxes[0].size=[1e300, 1.0, 1.0]"], "mesh.boxes[0].size"),
    ("cdem", ["mesh.boxes[0].size=[1e-300, 1.0, 1.0]"], "mesh.boxes"),
    ("cdem", ["mesh.boxes[0].size=[0.0, 1.0, 1.0]"], "mesh.boxes[0].size"),
    ("cdem", ["mesh.boxes[0].origin=[nan, 0.0, 0.0]"], "mesh.boxes[0].origin[0]"),
    ("cdem", ["mesh.boxes[0].origin=[1e300, 0.0, 0.0]"], "mesh.boxes[0].origin"),
    ("cdem", ["mesh.boxes[0].rotate_axis=[0.0, 0.0, 0.0]"], "mesh.boxes[0].rotate_axis"),
    ("cdem", ["mesh.boxes[0].rotate_deg=nan"], "mesh.boxes[0].rotate_deg"),
    ("cdem", ["mesh.boxes[0].n=[0, 1, 1]"], "mesh.boxes[0].n"),
    ("cdem", ["mesh.path=''", "mesh.boxes=[]"], "mesh.path"),
    ("cdem", ["mesh.path='nosuch.msh'", "mesh.boxes=[]"], "mesh.path"),
    ("cdem", ["mesh.path='{dir}/junk.msh'", "mesh.boxes=[]"], "junk.msh"),
    ("cdem", ["mesh.path='{dir}/cdem.toml'"], "mesh.path"),
    # cdem: interfaces, references and boundaries
    ("cdem", ["interface.stiffness_factor=1e30"], "interface.stiffness_factor"),
    ("cdem", ["interface.stiffness_factor=nan"], "interface.stiffness_factor"),
    ("cdem", ["interface.normal_stiffness=1e300"], "interface.normal_stiffness"),
    ("cdem", ["interface.shear_stiffness=inf"], "interface.shear_stiffness"),
    ("cdem", [PAIR.format("normal_stiffness = 1e300")], "interface.pairs[0].normal_stiffness"),
    ("cdem", [PAIR.format("tensile_strength = nan")], "interface.pairs[0].tensile_strength"),
    ("cdem", ['interface.pairs=[{groups = ["rock", "nosuch"]}]'],
     "interface.pairs[0].groups[1]"),
    ("cdem", ["materials[0].group='granite'"], "materials[0].group"),
    ("cdem", ["boundaries[0].box=[5.0, 6.0, 5.0, 6.0, 5.0, 6.0]"], "boundaries[0].box"),
    ("cdem", ["boundaries[0].box=[nan, 1.0, 0.0, 1.0, 0.0, 1.0]"], "boundaries[0].box[0]"),
    ("cdem", ["boundaries[0].box=[1.0, 0.0, 0.0, 1.0, 0.0, 1.0]"], "boundaries[0].box"),
    ("cdem", ["boundaries[0].group='nosuch'"], "boundaries[0].group"),
    ("cdem", ["boundaries[0].fix=[]"], "boundaries[0].fix"),
    ("cdem", ["boundaries[0].velocity=[nan, 0.0, 0.0]"], "boundaries[0].velocity[0]"),
    ("cdem", ["boundaries[0].velocity=[inf, 0.0, 0.0]"], "boundaries[0].velocity[0]"),
    ("cdem", ["analysis.type='failure'", "analysis.block_group='nosuch'"],
     "analysis.block_group"),
    ("cdem", ["analysis.type='stack'", "analysis.block_group='nosuch'"], "analysis.block_group"),
    ("cdem", ["analysis.type='pendulum'", "analysis.axis=[0.0, 0.0, 0.0]"], "analysis.axis"),
    ("cdem", ["analysis.pivot=[nan, 0.0, 0.0]"], "analysis.pivot[0]"),
    ("cdem", ["analysis.failure_displacement=inf"], "analysis.failure_displacement"),
    # cdem: stages and time step
    ("cdem", ["stages[0].duration=nan"], "stages[0].duration"),
    ("cdem", ["stages[0].duration=-1.0"], "stages[0].duration"),
    ("cdem", ["stages[0].kind='dynamic'", "stages[0].duration=1e300"], "stages[0].duration"),
    ("cdem", ["stages[0].kind='dynamic'", "stages[0].duration=1e-300"], "stages[0].duration"),
    ("cdem", ["stages[0].tilt_rate=nan"], "stages[0].tilt_rate"),
    ("cdem", ["stages[0].tilt_axis=[0.0, 0.0, 0.0]"], "stages[0].tilt_axis"),
    ("cdem", ["stages[0].gravity_ramp=inf"], "stages[0].gravity_ramp"),
    ("cdem", ["stages[0].local_damping=1.0"], "stages[0].local_damping"),
    ("cdem", ["stages[0].local_damping=nan"], "stages[0].local_damping"),
    ("cdem", ["stages[0].damping='viscous'", "stages[0].viscous_damping=1e300"],
     "stages[0].viscous_damping"),
    ("cdem", ["stages[0].unbalance_tol=nan"], "stages[0].unbalance_tol"),
    ("cdem", ["stages[0].load_tolerance=inf"], "stages[0].load_tolerance"),
    ("cdem", ["stages[0].max_steps=0"], "stages[0].max_steps"),
    ("cdem", ["stages=[]"], "stages"),
    ("cdem", ["materials=[]"], "materials"),
    ("cdem", ["time.dt=1e-300"], "time.dt"),
    ("cdem", ["time.dt=nan"], "time.dt"),
    ("cdem", ["time.dt=1.0"], "time.dt"),
    ("cdem", ["time.safety=0.0"], "time.safety"),
    ("cdem", ["time.safety=inf"], "time.safety"),
    ("cdem", ["output.every=nan"], "output.every"),
    # cdem: contact
    ("cdem", ["contact.enabled=true", "contact.normal_stiffness=1e300"],
     "contact.normal_stiffness"),
    ("cdem", ["contact.friction_deg=nan"], "contact.friction_deg"),
    ("cdem", ["contact.tolerance=0.5"], "contact.tolerance"),
    ("cdem", ["contact.restitution=0.0"], "contact.restitution"),
    ("cdem", ["contact.margin=inf"], "contact.margin"),
    # cdem: names and types
    ("cdem", ["name='../x'"], "name"),
    ("cdem", ["name=''"], "name"),
    ("cdem", ["name='a/b'"], "name"),
    ("cdem", ["name=5"], "name"),
    ("cdem", ["partitioner='nosuch'"], "partitioner"),
    ("cdem", ["foo=1"], "foo"),
    ("cdem", ["gravity='down'"], "gravity"),
    # pointmass
    ("pointmass", ["surface.z_sea=nan"], "surface.z_sea"),
    ("pointmass", ["surface.slope_deg=nan"], "surface.slope_deg"),
    ("pointmass", ["surface.slope_deg=90.0"], "surface.slope_deg"),
    ("pointmass", ["surface.dip_direction_deg=inf"], "surface.dip_direction_deg"),
    ("pointmass", ["surface.z0=1e300"], "surface.z0"),
    ("pointmass", ["surface.kind='sphere_cup'", "surface.radius=0.0"], "surface.radius"),
    ("pointmass", [RASTER], "surface.path"),
    ("pointmass", [RASTER, "surface.path='{dir}/negative_cell.asc'"], "surface.path"),
    ("pointmass", [RASTER, "surface.path='{dir}/nan_header.asc'"], "surface.path"),
    ("pointmass", [RASTER, "surface.path='{dir}/missing.asc'"], "surface.path"),
    ("pointmass", [RASTER, "surface.path='{dir}/dem.npy'"], "surface.spacing"),
    ("pointmass", [RASTER, "surface.path='{dir}/dem.npy'", "surface.spacing=[nan, 1.0]"],
     "surface.spacing[0]"),
    ("pointmass", ["surface.kind='expression'", "surface.expression='x +* y'"],
     "surface.expression"),
    ("pointmass", ["surface.kind='expression'", "surface.expression='__import__(\"os\")'"],
     "surface.expression"),
    ("pointmass", ["surface.kind='expression'", "surface.expression='a * x'",
                   "surface.constants={a = nan}"], "surface.constants.a"),
    ("pointmass", ["grid.velocity=[nan, 0.0]"], "grid.velocity[0]"),
    ("pointmass", ["grid.velocity=[inf, 0.0]"], "grid.velocity[0]"),
    ("pointmass", [BOW_TIE], "grid.footprint"),
    ("pointmass", ["grid.footprint=[[0.0, 0.0], [1.0, 1.0]]"], "grid.footprint"),
    ("pointmass", ["grid.footprint=[[0.0, 0.0], [nan, 0.0], [1.0, 1.0]]"],
     "grid.footprint[1][0]"),
    ("pointmass", ["grid.footprint=[[0.0, 0.0], [1e300, 0.0], [1.0, 1.0]]"],
     "grid.footprint[1]"),
    ("pointmass", ["grid.footprint=[[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]"], "grid.footprint"),
    ("pointmass", ["grid.nx=0"], "grid.nx"),
    ("pointmass", ["grid.nx=100000"], "grid.nx"),
    ("pointmass", ["grid.density=nan"], "grid.density"),
    ("pointmass", ["grid.density=1e300"], "grid.density"),
    ("pointmass", ["grid.thickness=inf"], "grid.thickness"),
    ("pointmass", ["grid.thickness_values=[1.0, nan, 1.0, 1.0]"], "grid.thickness_values[1]"),
    ("pointmass", ["grid.volume=nan"], "grid.volume"),
    ("pointmass", ["grid.angle_deg=nan"], "grid.angle_deg"),
    ("pointmass", ["grid.samples_per_cell=1"], "grid.samples_per_cell"),
    ("pointmass", ["grid.kind='ring'"], "grid"),
    ("pointmass", ["grid.kind='ring'", "grid.ring_radius=5.0", "grid.mass=1e300"], "grid.mass"),
    ("pointmass", ["friction.mu=nan"], "friction.mu"),
    ("pointmass", ["friction.mu=-0.1"], "friction.mu"),
    ("pointmass", ["water.density=0.0"], "water.density"),
    ("pointmass", ["water.drag_coefficient=inf"], "water.drag_coefficient"),
    ("pointmass", ["ep.w1=0.1"], "ep.w1"),
    ("pointmass", ["ep.w3=0.2"], "ep.w3"),
    ("pointmass", ["ep.k_max=nan"], "ep.k_max"),
    ("pointmass", ["time.t_end=inf"], "time.t_end"),
    ("pointmass", ["time.dt=1e-300"], "time.dt"),
    ("pointmass", ["time.dt=nan"], "time.dt"),
    ("pointmass", ["time.t_end=1e300"], "time.dt"),
    ("pointmass", ["time.scheme='rk4_adaptive'", "time.dt_min=1.0"], "time.dt_min"),
    ("pointmass", ["time.rtol=0.0"], "time.rtol"),
    ("pointmass", ["output.every=1e-300"], "output.every"),
    ("pointmass", ["output.every=nan"], "output.every"),
    ("pointmass", ["gravity=nan"], "gravity"),
    ("pointmass", ["gravity=1e300"], "gravity"),
    ("pointmass", ["sweep.keys=['grid.nx']", "sweep.runs=[[2.5]]"], "sweep.runs[0][0]"),
    ("pointmass", ["links.sides='rigid'"], "links.sides"),
    # impact
    ("impact", ["block.aspect_ratio=inf"], "block.aspect_ratio"),
    ("impact", ["block.aspect_ratio=nan"], "block.aspect_ratio"),
    ("impact", ["block.aspect_ratio=1e300"], "block.aspect_ratio"),
    ("impact", ["block.aspect_ratio=0.5"], "block.aspect_ratio"),
    ("impact", ["block.mass=1e300"], "block.mass"),
    ("impact", ["block.mass=nan"], "block.mass"),
    ("impact", ["block.mass=0.0"], "block.mass"),
    ("impact", ["block.density=1e-300"], "block.density"),
    ("impact", ["impact.omega_0=nan"], "impact.omega_0"),
    ("impact", ["impact.omega_0=1e300"], "impact.omega_0"),
    ("impact", ["impact.omega_0=-inf"], "impact.omega_0"),
    ("impact", ["impact.speed=nan"], "impact.speed"),
    ("impact", ["impact.speed=1e300"], "impact.speed"),
    ("impact", ["impact.theta_in=nan"], "impact.theta_in"),
    ("impact", ["impact.theta_in=90.0"], "impact.theta_in"),
    ("impact", ["impact.theta_0=inf"], "impact.theta_0"),
    ("impact", ["impact.theta_0=1e300"], "impact.theta_0"),
    ("impact", ["impact.slope=nan"], "impact.slope"),
    ("impact", ["impact.gravity=-9.81"], "impact.gravity"),
    ("impact", ["impact.gravity=nan"], "impact.gravity"),
    ("impact", ["block.aspect_ratio=2.0", "impact.theta_0=45.0", "impact.omega_0=20000.0"],
     "impact.omega_0"),
    ("impact", ["soil.nu=-1.0"], "soil.nu"),
    ("impact", ["soil.phi=nan"], "soil.phi"),
    ("impact", ["soil.k_e=inf"], "soil.k_e"),
    ("impact", ["soil.n_e=3.0"], "soil.n_e"),
    ("impact", ["soil.beta=1.0"], "soil.beta"),
    ("impact", ["soil.rho_c0=0.0"], "soil.rho_c0"),
    ("impact", ["soil.gamma_v=nan"], "soil.gamma_v"),
    ("impact", ["solver.rtol=nan"], "solver.rtol"),
    ("impact", ["solver.atol=0.0"], "solver.atol"),
    ("impact", ["solver.t_max=1e300"], "solver.t_max"),
    ("impact", ["solver.method='Euler'"], "solver.method"),
    ("impact", ["sweep.aspect_ratio=[1.0, nan]"], "sweep.aspect_ratio[1]"),
    ("impact", ["sweep.omega_0=[1e300]"], "sweep.omega_0"),
    ("impact", ["sweep.theta_0=[nan]"], "sweep.theta_0[0]"),
    ("impact", ["sweep.theta_in=[95.0]"], "sweep.theta_in"),
    ("impact", ["sweep.plots=['nosuch']"], "sweep.plots"),
    ("impact", ["sweep.x='mass'"], "sweep.x"),
    ("impact", ["sweep.theta_0=[0.0]", "sweep.impact.theta_0=[1.0]"], "sweep.impact.theta_0"),
    ("impact", ["sweep.theta_0=[" + ", ".join(["0.0"] * 400) + "]",
                "sweep.omega_0=[" + ", ".join(["0.0"] * 400) + "]"], "sweep"),
    # contact_laws
    ("contact_laws", ["contact.mu=nan"], "contact.mu"),
    ("contact_laws", ["contact.mu=-1.0"], "contact.mu"),
    ("contact_laws", ["contact.e_n=0.0"], "contact.e_n"),
    ("contact_laws", ["contact.e_n=nan"], "contact.e_n"),
    ("contact_laws", ["contact.alpha_over_meff=2.0"], "contact.alpha_over_meff"),
    ("contact_laws", ["contact.k_n=inf"], "contact.k_n"),
    ("contact_laws", ["contact.k_n=1e300"], "contact.k_n"),
    ("contact_laws", ["contact.m_eff=1e-300"], "contact.m_eff"),
    ("contact_laws", ["contact.g_n=nan"], "contact.g_n"),
    ("contact_laws", ["grid.gt_gn_min=nan"], "grid.gt_gn_min"),
    ("contact_laws", ["grid.gt_gn_max=0.001"], "grid.gt_gn_max"),
    ("contact_laws", ["grid.n_gt=1"], "grid.n_gt"),
    ("contact_laws", ["grid.n_gt=10000", "grid.n_kt=10000"], "grid.n_gt"),
    ("contact_laws", ["grid.kt_kn_max=1e300"], "grid.kt_kn_max"),
    ("contact_laws", ["grid.kt_kn_max=1e5"], "grid.kt_kn_max"),
    ("contact_laws", ["grid.kt_spacing='cubic'"], "grid.kt_spacing"),
    ("contact_laws", ["small_gt.gt_gn=inf"], "small_gt.gt_gn"),
    ("contact_laws", ["small_gt.kt_kn=nan"], "small_gt.kt_kn"),
    ("contact_laws", ["small_gt.steps=10"], "small_gt.steps"),
    ("contact_laws", ["steps=1000000000000"], "steps"),
    ("contact_laws", ["steps=0.5"], "steps"),
    ("contact_laws", ["output.csv='yes'"], "output.csv"),
]

# (arguments after ``solver``, text the line must name); {dir}: the base cases' folder
COMMAND_LINES = [
    (["bench", "--elements", "-5"], "--elements"),
    (["bench", "--steps", "0"], "--steps"),
    (["bench", "--elements", "many"], "--elements"),
    (["run"], "case"),
    (["run", "{dir}/cdem.toml", "--set", "nokey"], "--set"),
    (["run", "{dir}/cdem.toml", "--set", "a..b=1"], "--set"),
    (["run", "{dir}/cdem.toml", "--set", "stages[7].duration=1.0"], "stages[7]"),
    (["run", "{dir}/cdem.toml", "--set", "sweep.time.safety=[0.5]", "--checkpoint-every", "9"],
     "a cdem sweep runs whole cases"),
    (["run", "{dir}/cdem.toml", "--checkpoint-every", "9", "--rebalance-above", "0.5"],
     "--rebalance-above"),
    (["run", "{dir}/cdem.toml", "--checkpoint-every", "9", "--rebalance-above", "nan"],
     "--rebalance-above"),
    (["run", "{dir}/cdem.toml", "--checkpoint-every", "9", "--rebalance-above", "inf"],
     "--rebalance-above"),
    (["run", "{dir}/cdem.toml", "--rebalance-above", "1.2"], "--rebalance-above"),
    (["run", "{dir}/pointmass.toml", "--checkpoint-every", "9", "--rebalance-above", "1.2"],
     "--rebalance-above"),
    (["run", "{dir}/nosuch.toml"], "nosuch.toml"),
    (["run", "{dir}/broken.toml"], "broken.toml"),
    (["run", "{dir}/unknown_module.toml"], "module"),
    (["run", "{dir}/no_module.toml"], "module"),
    (["describe", "nosuch"], "nosuch"),
    (["frobnicate"], "frobnicate"),
]


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    """The base cases and the bad auxiliary files the rows point to."""
    folder = tmp_path_factory.mktemp("hostile")
    for module, text in BASES.items():
        (folder / f"{module}.toml").write_text(text)
    header = "ncols 4\nnrows 4\nxllcenter 0\nyllcenter 0\ncellsize {}\n"
    rows = "".join("0 0 0 0\n" for _ in range(4))
    (folder / "negative_cell.asc").write_text(header.format("-5.0") + rows)
    (folder / "nan_header.asc").write_text(header.format("nan") + rows)
    np.save(folder / "dem.npy", np.zeros((5, 5)))
    (folder / "junk.msh").write_text("this is not a mesh\n")
    (folder / "broken.toml").write_text('module = "cdem"\n[mesh\n')
    (folder / "unknown_module.toml").write_text('module = "nosuch"\n')
    (folder / "no_module.toml").write_text('name = "x"\n')
    return folder


def _run_main(argv: list[str], capsys) -> tuple[int, list[str]]:
    """Exit code and stderr lines of one in-process run; a numerical warning (overflow,
    invalid value) fails the row."""
    capsys.readouterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        code = main(argv)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and not captured.out
    return code, captured.err.splitlines()


@pytest.mark.parametrize("module, overrides, field", HOSTILE,
                         ids=[f"{m}:{' '.join(o)[:60]}" for m, o, _ in HOSTILE])
def test_hostile_case_fails_in_validation(cases, capsys, module, overrides, field):
    case = cases / f"{module}.toml"
    out = cases / "out"
    before = sorted(p.name for p in cases.iterdir())
    argv = ["run", str(case), "--out", str(out), "--quiet"]
    for text in overrides:
        argv += ["--set", text.replace("{dir}", str(cases))]
    try:
        code, lines = _run_main(argv, capsys)
        assert code == 2 and len(lines) == 1, lines
        assert lines[0].startswith(f"error: {case}: ") and field in lines[0], lines[0]
        assert sorted(p.name for p in cases.iterdir()) == before
    finally:
        shutil.rmtree(out, ignore_errors=True)


@pytest.mark.parametrize("args, field", COMMAND_LINES, ids=[" ".join(a) for a, _ in COMMAND_LINES])
def test_hostile_command_line_is_one_error_line(cases, capsys, args, field):
    before = sorted(p.name for p in cases.iterdir())
    code, lines = _run_main([a.replace("{dir}", str(cases)) for a in args], capsys)
    assert code == 2 and len(lines) == 1, lines
    assert lines[0].startswith("error: ") and field in lines[0], lines[0]
    assert sorted(p.name for p in cases.iterdir()) == before
