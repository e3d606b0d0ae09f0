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

import meshio
import numpy as np
import pytest

from solver.cli import main
from solver.errors import LINE_LIMIT
from solver.resources import available_memory

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

ROCKFALL = """module = "rockfall"
name = "hostile"
[terrain]
kind = "profile"
points = [[0.0, 120.0], [207.8, 0.0], [500.0, 0.0]]
segments = [{x = [0.0, 207.8], ground = "sand"}, {x = [207.8, 500.0], ground = "sand"}]
[grounds.sand]
rolling_resistance = 0.3
[start]
x = 0.0
height = 2.0
speed = 10.0
[motion]
t_end = 1.0
[output]
vtk = false
plots = false
trajectories = false
"""

BASES = {"cdem": CDEM, "pointmass": POINTMASS, "impact": IMPACT, "contact_laws": CONTACT_LAWS,
         "rockfall": ROCKFALL}

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
    _parsing_files(folder)
    return folder


def _parsing_files(folder) -> None:
    """The auxiliary files of the parsing and side-command rows: deep, huge and broken case
    files, folders of broken cases, a mesh with absurd coordinates, a broken run folder."""
    deep = "[" * 100_000 + "]" * 100_000
    (folder / "deep_array.toml").write_text(f'module = "cdem"\nx = {deep}\n')
    (folder / "deep_table.toml").write_text('module = "cdem"\nx = ' + "{a=" * 100_000 + "1"
                                            + "}" * 100_000 + "\n")
    (folder / "nested_33.toml").write_text('module = "cdem"\nx = ' + "[" * 33 + "]" * 33 + "\n")
    (folder / "huge_int.toml").write_text('module = "cdem"\nx = ' + "9" * 5000 + "\n")
    (folder / "list_module.toml").write_text('module = ["cdem"]\n')
    (folder / "table_module.toml").write_text("[module]\nname = 'cdem'\n")
    (folder / "not_utf8.toml").write_bytes(b"module = '\xff\xfe'\n")
    (folder / "big.toml").write_text('module = "cdem"\n# ' + "x" * (17 << 20) + "\n")
    for name, text in (("broken_cases", "module = \n[x\n"), ("binary_cases", None)):
        (folder / name).mkdir()
        path = folder / name / "bad.toml"
        path.write_text(text) if text else path.write_bytes(b"\xff\xfe\x00module")
    (folder / "deep_cases").mkdir()
    (folder / "deep_cases" / "deep.toml").write_text("x = " + deep + "\n")
    points = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
                       [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]], dtype=float)
    meshio.write(folder / "far.vtu", meshio.Mesh(points * 1e300, [("hexahedron",
                                                                   np.arange(8)[None])]))
    _mesh_files(folder)
    (folder / "broken_run").mkdir()
    (folder / "broken_run" / "summary.json").write_text("{not json")
    (folder / "odd_run").mkdir()
    (folder / "odd_run" / "summary.json").write_text('{"case": "../../etc", "module": "cdem"}')


def _mesh_files(folder) -> None:
    """Mesh files too large for this node's memory, found out before meshio reads them:
    Gmsh headers that list 1e15 nodes (format 2, format 4 in text and binary) and a sparse
    file of four times the memory available (no blocks on disk)."""
    start = b"$MeshFormat\n%s\n$EndMeshFormat\n$Nodes\n"
    (folder / "nodes_v2.msh").write_bytes(start % b"2.2 0 8" + b"1000000000000000\n")
    (folder / "nodes_v4.msh").write_bytes(start % b"4.1 0 8"
                                          + b"1 1000000000000000 1 1000000000000000\n")
    (folder / "nodes_v4_binary.msh").write_bytes(
        (start % b"4.1 1 8").replace(b"$End", b"\x01\x00\x00\x00\n$End")
        + np.array([1, 10**15, 1, 10**15], dtype="<u8").tobytes())
    with open(folder / "sparse.vtu", "wb") as sparse:
        sparse.truncate(int(4 * available_memory()))


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


def _refused_line(cases, capsys, module: str, overrides: list[str]) -> str:
    """The one error line of ``solver run`` of the module's case with ``overrides`` (exit 2,
    nothing left in the cases folder)."""
    case = cases / f"{module}.toml"
    out = cases / "out"
    before = sorted(p.name for p in cases.iterdir())
    argv = ["run", str(case), "--out", str(out), "--quiet"]
    for text in overrides:
        argv += ["--set", text.replace("{dir}", str(cases))]
    try:
        code, lines = _run_main(argv, capsys)
        assert code == 2 and len(lines) == 1, lines
        assert sorted(p.name for p in cases.iterdir()) == before
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return lines[0]


@pytest.mark.parametrize("module, overrides, field", HOSTILE,
                         ids=[f"{m}:{' '.join(o)[:60]}" for m, o, _ in HOSTILE])
def test_hostile_case_fails_in_validation(cases, capsys, module, overrides, field):
    line = _refused_line(cases, capsys, module, overrides)
    assert line.startswith(f"error: {cases / module}.toml: ") and field in line, line


@pytest.mark.parametrize("args, field", COMMAND_LINES, ids=[" ".join(a) for a, _ in COMMAND_LINES])
def test_hostile_command_line_is_one_error_line(cases, capsys, args, field):
    before = sorted(p.name for p in cases.iterdir())
    code, lines = _run_main([a.replace("{dir}", str(cases)) for a in args], capsys)
    assert code == 2 and len(lines) == 1, lines
    assert lines[0].startswith("error: ") and field in lines[0], lines[0]
    assert sorted(p.name for p in cases.iterdir()) == before


# Classes of hostile input added with the resource checks, the physical ranges, the parsing
# limits and the side commands (issue 36): (module, --set overrides, text the line must name).
LONG = "n" * 5000
DEEP = "[" * 100_000 + "]" * 100_000
EXPRESSION = ["surface.kind='expression'"]
DYNAMIC = ["stages[0].kind='dynamic'", "output.vtk=true"]

SIZES = [
    # arrays sized by a field: memory (lower bounds, solver.resources) or counts
    ("cdem", ["mesh.boxes[0].n=[100000, 100000, 100000]"], "mesh.boxes[0].n"),
    ("cdem", ["mesh.boxes[0].n=[100000, 100000, 1]"], "mesh.boxes[0].n"),
    ("cdem", ["mesh.boxes[0].n=[1000000000000000000000000000000, 1, 1]"], "mesh.boxes[0].n[0]"),
    ("cdem", ["mesh.boxes[0].n=[1, 1, 9223372036854775807]"], "mesh.boxes[0].n"),
    ("cdem", [("mesh.boxes=[{n = [1, 1, 2], size = [1.0, 1.0, 2.0], group = 'rock'}, "
               "{n = [100000, 100000, 1], size = [1.0, 1.0, 1.0], origin = [5.0, 0.0, 0.0]}]")],
     "mesh.boxes[1].n"),
    ("cdem", ["stages[0].max_steps=100000000000000000000"], "stages[0].max_steps"),
    ("cdem", ["analysis.sample_every=100000000000000000000"], "analysis.sample_every"),
    ("cdem", ["contact.renew_every=100000000000000000000"], "contact.renew_every"),
    # frames: output.every of a dynamic stage (a .pvtu and a .vtu per rank each)
    ("cdem", [*DYNAMIC, "stages[0].duration=1000.0", "stages[0].max_steps=1000000",
              "output.every=1e-12"], "output.every"),
    ("cdem", [*DYNAMIC, "stages[0].duration=100.0", "stages[0].max_steps=10000000",
              "output.every=1e-6"], "output.every"),
    ("cdem", [*DYNAMIC, "stages[0].duration=600.0", "stages[0].max_steps=200000",
              "output.every=1e-300"], "output.every"),
    ("cdem", [*DYNAMIC, "stages[0].duration=1.0", "output.every=1e300"], "output.every"),
    # a mesh file read whole by meshio: the nodes its header lists, or its size
    ("cdem", ["mesh.path='{dir}/nodes_v2.msh'", "mesh.boxes=[]"], "mesh.path"),
    ("cdem", ["mesh.path='{dir}/nodes_v4.msh'", "mesh.boxes=[]"], "mesh.path"),
    ("cdem", ["mesh.path='{dir}/nodes_v4_binary.msh'", "mesh.boxes=[]"], "mesh.path"),
    ("cdem", ["mesh.path='{dir}/sparse.vtu'", "mesh.boxes=[]"], "mesh.path"),
    ("cdem", ["sweep.time.safety=[" + ", ".join(["0.5"] * 400) + "]",
              "sweep.gravity=[" + ", ".join(["[0.0, 0.0, -9.81]"] * 400) + "]"], "sweep"),
    # point masses: quadrature, frames, files
    ("pointmass", ["grid.nx=1000", "grid.ny=1000", "grid.samples_per_cell=256"],
     "grid.samples_per_cell"),
    ("pointmass", ["grid.nx=1000", "grid.ny=1000", "grid.samples_per_cell=11"],
     "grid.samples_per_cell"),
    ("pointmass", ["output.every=1e-12"], "output.every"),
    ("pointmass", ["output.every=1e-300"], "output.every"),
    ("pointmass", ["time.t_end=1000.0", "time.dt=0.001", "output.every=0.001",
                   "output.vtk=true"], "output.every"),
    ("pointmass", ["time.dt=1e-12"], "time.dt"),
    ("pointmass", ["time.scheme='rk4_adaptive'", "time.dt=1e-300", "time.dt_min=1e-300"],
     "time.dt"),
    ("pointmass", ["grid.kind='ring'", "grid.ring_radius=5.0", "grid.n=100000000"], "grid.n"),
    ("pointmass", ["sweep.friction.mu=[" + ", ".join(["0.1"] * 1000) + "]",
                   "sweep.grid.thickness=[" + ", ".join(["1.0"] * 1000) + "]"], "sweep"),
    # rockfall: the ensemble counted before it is expanded, samples, frames, stations
    ("rockfall", ["ensemble.samples=1000000000"], "ensemble.samples"),
    ("rockfall", ["ensemble.samples=100000000000000000000"], "ensemble.samples"),
    ("rockfall", ["ensemble.vary.speed={uniform = [1.0, 2.0]}", "ensemble.samples=10000000"],
     "ensemble.samples"),
    ("rockfall", ["ensemble.vary.speed={values = [" + ", ".join(["1.0"] * 5000) + "]}",
                  "ensemble.samples=1000"], "ensemble.samples"),
    ("rockfall", ["ensemble.vary.speed={values = [" + ", ".join(["1.0"] * 2000) + "]}",
                  "ensemble.vary.omega_0={values = [" + ", ".join(["0.0"] * 2000) + "]}"],
     "ensemble.samples"),
    ("rockfall", ["sweep.start.speed=[" + ", ".join(["1.0"] * 1000) + "]",
                  "ensemble.samples=10000"], "ensemble.samples"),
    ("rockfall", ["output.sample_dt=1e-12"], "output.sample_dt"),
    ("rockfall", ["motion.t_end=86400.0", "output.sample_dt=1e-5"], "output.sample_dt"),
    ("rockfall", ["output.vtk=true", "output.vtk_dt=1e-12"], "output.vtk_dt"),
    ("rockfall", ["output.vtk=true", "motion.t_end=86400.0", "output.vtk_dt=0.1"],
     "output.vtk_dt"),
    ("rockfall", ["output.envelope_spacing=1e-12"], "output.envelope_spacing"),
    ("rockfall", ["output.envelope_spacing=1e-4"], "output.envelope_spacing"),
    ("rockfall", ["output.bins=1000000000000"], "output.bins"),
    ("rockfall", ["motion.max_impacts=1000000000000"], "motion.max_impacts"),
    ("rockfall", ["output.trajectories=true", "ensemble.samples=1000000",
                  "sweep.start.speed=[1.0, 2.0]"], "ensemble.samples"),
    # impact: frames and files of a sweep
    ("impact", ["output.vtk_frames=1000000000000"], "output.vtk_frames"),
    ("impact", ["output.vtk_frames=100000000"], "output.vtk_frames"),
    ("impact", ["output.vtk_in_sweeps=true", "output.vtk_frames=10000",
                "sweep.theta_0=[" + ", ".join(["0.0"] * 300) + "]"], "output.vtk_frames"),
    ("contact_laws", ["grid.n_gt=100000000000000000000"], "grid.n_gt"),
    ("contact_laws", ["small_gt.steps=1000000000000"], "small_gt.steps"),
]

EXTREMES = [
    # rockfall: speeds, heights, spins, gravity, soil, masses, times, angles
    *[("rockfall", [f"{field}={value}"], field) for field, value in [
        ("start.speed", "1e300"), ("start.height", "1e300"), ("start.height", "-1e300"),
        ("start.omega_0", "1e300"), ("start.omega_0", "-1e300"), ("start.x", "1e300"),
        ("start.y", "-1e300"), ("start.azimuth", "1e300"), ("start.theta_0", "1e300"),
        ("start.axis_yaw", "-1e300"), ("start.dip", "1e300"), ("motion.gravity", "1e300"),
        ("motion.gravity", "1e-300"), ("motion.air_density", "1e300"),
        ("motion.drag_coefficient", "1e300"), ("motion.roll_height", "1e300"),
        ("motion.stop_speed", "1e300"), ("motion.t_end", "1e300"), ("block.mass", "1e-300"),
        ("block.mass", "1e300"), ("block.density", "1e-300"), ("block.aspect_ratio", "1e300"),
        ("terrain.width", "1e300"), ("grounds.sand.unit_weight", "1e300"),
        ("grounds.sand.unit_weight", "1e-300"), ("grounds.sand.k_e", "1e300"),
        ("grounds.sand.gamma_v", "1e300"), ("grounds.sand.c_v", "1e300"),
        ("grounds.sand.k_p", "1e-300"), ("grounds.sand.psi", "1e300"),
        ("grounds.sand.eta_t", "1e300"), ("grounds.sand.rho_c0", "1e-300"),
        ("grounds.sand.rolling_resistance", "1e300"), ("impact_solver.atol", "1e300"),
        ("impact_solver.atol", "1e-300"), ("impact_solver.rtol", "1e-300"),
        ("impact_solver.t_max", "1e-300"), ("output.sample_dt", "1e300"),
        ("output.vtk_dt", "1e300")]],
    ("rockfall", ["output.barriers=[1e300]"], "output.barriers[0]"),
    ("rockfall", ["terrain.points=[[0.0, 1e300], [207.8, 0.0], [500.0, 0.0]]"],
     "terrain.points[0][1]"),
    ("rockfall", ["ensemble.vary.speed={values = [1.0, 1e300]}"], "ensemble.vary.speed"),
    ("rockfall", ["ensemble.vary.omega_0={uniform = [0.0, 1e300]}"], "ensemble.vary.omega_0"),
    ("rockfall", ["ensemble.vary.mass={values = [100.0, 1e-6]}"], "ensemble.vary.mass"),
    ("rockfall", ["ensemble.vary.height={normal = [2.0, 1e300]}"], "ensemble.vary.height"),
    # impact
    *[("impact", [f"{field}={value}"], field) for field, value in [
        ("impact.speed", "1e-300"), ("block.mass", "1e-300"), ("soil.unit_weight", "1e300"),
        ("soil.unit_weight", "1e-300"), ("soil.k_e", "1e300"), ("soil.k_e", "1e-300"),
        ("soil.gamma_v", "1e300"), ("soil.c_v", "1e300"), ("soil.c_v", "1e-300"),
        ("soil.k_p", "1e300"), ("soil.psi", "1e-300"), ("soil.s_ef", "1e300"),
        ("soil.eta_n", "1e300"), ("soil.eta_r", "1e300"), ("soil.delta_1", "1e300"),
        ("soil.delta_2", "1e300"), ("soil.alpha_vt", "1e300"), ("soil.alpha_vr", "1e300"),
        ("soil.rho_c0", "1e-300"), ("solver.atol", "1e300"), ("solver.atol", "1e-300"),
        ("solver.rtol", "1e-300"), ("solver.t_max", "1e-300")]],
    ("impact", ["sweep.aspect_ratio=[1.0, 1e300]"], "sweep.aspect_ratio"),
    # cdem
    *[("cdem", [f"{field}={value}"], field) for field, value in [
        ("stages[0].tilt_rate", "1e300"), ("stages[0].tilt_rate", "-1e300"),
        ("stages[0].gravity_ramp", "1e300"), ("stages[0].load_tolerance", "1e300"),
        ("stages[0].unbalance_tol", "1e300"), ("stages[0].viscous_damping", "1e300"),
        ("stages[0].duration", "1e300"), ("interface.stiffness_factor", "1e-300"),
        ("interface.stiffness_factor", "1e300"), ("interface.normal_stiffness", "1e-300"),
        ("interface.shear_stiffness", "1e-300"), ("materials[0].tensile_strength", "1e300"),
        ("materials[0].cohesion", "1e300"), ("analysis.failure_displacement", "1e300"),
        ("analysis.stop_window", "1e300"), ("analysis.map_cell", "1e300"),
        ("analysis.map_cell", "1e-300"), ("mesh.rotate_deg", "1e300"),
        ("mesh.boxes[0].rotate_deg", "-1e300"), ("output.every", "1e300"),
        ("time.dt", "1e300"), ("mesh.boxes[0].size", "[1e-300, 1.0, 1.0]")]],
    ("cdem", ["boundaries[0].velocity=[1e300, 0.0, 0.0]"], "boundaries[0].velocity[0]"),
    ("cdem", ["boundaries[0].velocity=[0.0, 0.0, -1e300]"], "boundaries[0].velocity[2]"),
    ("cdem", ["boundaries[0].box=[-1e300, 1e300, -1.0, 2.0, -0.01, 0.01]"], "boundaries[0].box"),
    ("cdem", ["analysis.pivot=[1e300, 0.0, 0.0]"], "analysis.pivot[0]"),
    ("cdem", ["mesh.rotate_origin=[0.0, 1e300, 0.0]"], "mesh.rotate_origin[1]"),
    ("cdem", ["stages[0].tilt_axis=[1e300, 1.0, 0.0]"], "stages[0].tilt_axis[0]"),
    ("cdem", ["interface.pairs=[{groups = ['rock', 'rock'], normal_stiffness = 1e-300}]"],
     "interface.pairs[0].normal_stiffness"),
    ("cdem", ["interface.pairs=[{groups = ['rock', 'rock'], cohesion = 1e300}]"],
     "interface.pairs[0].cohesion"),
    ("cdem", ["interface.pairs=[{groups = ['rock', 'rock'], weakening_time = 1e300}]"],
     "interface.pairs[0].weakening_time"),
    *[("cdem", ["contact.enabled=true", f"contact.{field}={value}"], f"contact.{field}")
      for field, value in [("normal_stiffness", "1e-300"), ("shear_stiffness", "1e-300"),
                           ("normal_stiffness", "1e300"), ("stiffness_factor", "1e-300"),
                           ("stiffness_factor", "1e300"), ("margin", "1e300"),
                           ("tolerance", "1e-300")]],
    # point masses
    *[("pointmass", [f"{field}={value}"], field) for field, value in [
        ("friction.mu", "1e300"), ("friction.mu_w", "1e300"), ("water.drag_coefficient", "1e300"),
        ("ep.k_max", "1e300"), ("ep.k_min", "1e300"), ("ep.w1", "-1e300"), ("ep.w2", "1e-300"),
        ("ep.w3", "1e300"), ("time.rtol", "1e300"), ("time.atol", "1e300"),
        ("time.stop_speed", "1e300"), ("time.rest_speed", "1e-300"), ("time.stop_after", "1e300"),
        ("surface.dip_direction_deg", "1e300"), ("grid.angle_deg", "-1e300"),
        ("surface.z_sea", "1e300"), ("grid.thickness", "1e-300"), ("gravity", "1e-300")]],
    ("pointmass", ["grid.velocity=[1e300, 0.0]"], "grid.velocity[0]"),
    ("pointmass", ["grid.thickness_values=[1.0, 1e300, 1.0, 1.0]"], "grid.thickness_values[1]"),
    ("pointmass", ["grid.kind='ring'", "grid.ring_radius=5.0", "grid.tangential_speed=1e300"],
     "grid.tangential_speed"),
    ("pointmass", ["grid.kind='ring'", "grid.ring_radius=5.0", "grid.mass=1e-300"],
     "grid.mass"),
    ("pointmass", ["surface.kind='sphere_cup'", "grid.kind='ring'", "grid.colatitude_deg=30.0",
                   "grid.speed_over_escape=1e300"], "grid.speed_over_escape"),
    ("pointmass", [*EXPRESSION, "surface.expression='a * x'", "surface.constants={a = 1e300}"],
     "surface.constants.a"),
    # the contact law's map
    *[("contact_laws", [f"{field}={value}"], field) for field, value in [
        ("contact.mu", "1e300"), ("grid.gt_gn_min", "1e-300"), ("grid.kt_kn_min", "1e-300"),
        ("small_gt.gt_gn", "1e-300")]],
]

WRONG_FIELD = [
    # an expression that is not finite under the masses is the expression's fault
    *[("pointmass", [*EXPRESSION, f"surface.expression='{text}'"], "surface.expression")
      for text in ("sqrt(x - 1e9)", "log(x - 1e9)", "exp(1000 * x)", "x * 1e308 * 1e308",
                   "9 ** 9 ** 9 ** 9", "x / 0", "1 / (x - x)", "sqrt(-1 - x * x)",
                   "cosh(1e4 + x)")],
    ("cdem", ["mesh.path='{dir}/far.vtu'", "mesh.boxes=[]"], "mesh.path"),
]

PARSING = [
    ("cdem", ["gravity=" + DEEP], "--set gravity"),
    ("cdem", ["x={" + "a={" * 5000 + "}" * 5001], "--set x"),
    ("cdem", ["gravity=" + "[" * 40 + "]" * 40], "--set gravity"),
    ("impact", ["sweep.theta_0=" + DEEP], "--set sweep.theta_0"),
    ("rockfall", ["terrain.points=" + "[" * 5000 + "]" * 5000], "--set terrain.points"),
    ("cdem", [".".join(["a"] * 50_000) + "=1"], "--set"),
    ("cdem", ["sweep." + ".".join(["a"] * 40) + "=[1]"], "--set"),
    ("cdem", ["k" * 100_000 + "=1"], "unknown key"),
    ("cdem", ["x=" + "9" * 5000], "--set x"),
    ("cdem", ["materials[0].density=" + "1" * 5000], "--set materials[0].density"),
    ("cdem", ["stages[0].max_steps=" + "1" * 100], "stages[0].max_steps"),
    ("cdem", ["name='" + "n" * 2_000_000 + "'"], "--set"),
    ("cdem", ["module=['cdem']"], "module"),
    ("cdem", ["module=5"], "module"),
    ("cdem", ["module={a = 1}"], "module"),
    ("cdem", ["module=true"], "module"),
    ("cdem", ["stages[\u00b2].duration=1.0"], "stages[\u00b2]"),
    ("cdem", ["stages[\u0663].duration=1.0"], "stages[\u0663]"),
    ("cdem", ["stages[-1].duration=1.0"], "stages[-1]"),
    ("cdem", ["stages[99999999999999999999999].duration=1.0"], "stages[99999999999999999999999]"),
    ("cdem", ["sweep.stages[\u00b2].duration=[1.0]"], "sweep.stages[\u00b2].duration"),
    ("cdem", ["name='" + LONG + "'"], "name"),
    ("cdem", ["name='" + "n" * 300 + "'"], "name"),
    ("cdem", ["name='" + "\u00e9" * 60 + "'"], "name"),
    ("cdem", ["mesh.path='" + LONG + "'", "mesh.boxes=[]"], "mesh.path"),
    ("cdem", ["mesh.path='" + "p" * 300 + ".msh'", "mesh.boxes=[]"], "mesh.path"),
    ("cdem", ["mesh.path='" + "p/" * 2100 + "x.msh'", "mesh.boxes=[]"], "mesh.path"),
    ("cdem", ["materials[0].group='" + LONG + "'"], "materials[0].group"),
    ("pointmass", ["surface.kind='raster'", "surface.path='" + "d" * 300 + ".asc'"],
     "surface.path"),
    ("rockfall", ["terrain.kind='raster'", "terrain.ground='sand'",
                  "terrain.path='" + "d" * 300 + ".asc'"], "terrain.path"),
    ("pointmass", [*EXPRESSION, "surface.expression='" + "+".join(["x"] * 30_000) + "'"],
     "surface.expression"),
    ("pointmass", [*EXPRESSION, "surface.expression='" + "+".join(["x"] * 1500) + "'"],
     "surface.expression"),
    ("pointmass", [*EXPRESSION, "surface.expression='" + "-" * 3000 + "x'"],
     "surface.expression"),
    ("pointmass", [*EXPRESSION, "surface.expression='" + "sin(" * 100 + "x" + ")" * 100 + "'"],
     "surface.expression"),
    ("pointmass", [*EXPRESSION, "surface.expression='" + "*".join(["(x+1)"] * 900) + "'"],
     "surface.expression"),
    ("pointmass", [*EXPRESSION, "surface.expression='" + "(" * 300 + "x" + ")" * 300 + "'"],
     "surface.expression"),
    ("pointmass", [*EXPRESSION, "surface.expression='" + "e" * 100_000 + "'"],
     "surface.expression"),
]

# (arguments after ``solver``, text the line must name); {dir}: the base cases' folder
SIDE_COMMANDS = [
    (["run", "{dir}/deep_array.toml"], "deep_array.toml"),
    (["run", "{dir}/deep_table.toml"], "deep_table.toml"),
    (["run", "{dir}/nested_33.toml"], "nested_33.toml"),
    (["run", "{dir}/huge_int.toml"], "huge_int.toml"),
    (["run", "{dir}/list_module.toml"], "module"),
    (["run", "{dir}/table_module.toml"], "module"),
    (["run", "{dir}/not_utf8.toml"], "not_utf8.toml"),
    (["run", "{dir}/big.toml"], "big.toml"),
    (["run", "{dir}/" + "c" * 5000 + ".toml"], ".toml"),
    (["run", "{dir}/" + "c/" * 2100 + "x.toml"], "x.toml"),
    (["run", "{dir}/cdem.toml", "--out", ""], "--out"),
    (["run", "{dir}/cdem.toml", "--out", "{dir}/" + "o" * 5000], "--out"),
    (["run", "{dir}/cdem.toml", "--out", "{dir}/" + "o/" * 2100], "--out"),
    (["run", "{dir}/cdem.toml", "--restart", ""], "--restart"),
    (["run", "{dir}/cdem.toml", "--restart", "{dir}/" + "r" * 5000], "--restart"),
    (["run", "{dir}/cdem.toml", "--checkpoint-every", "1" * 5000], "--checkpoint-every"),
    (["run", "{dir}/cdem.toml", "--checkpoint-every", "\u00b2"], "--checkpoint-every"),
    (["run", "{dir}/cdem.toml", "--checkpoint-every", "\u00b2s"], "--checkpoint-every"),
    (["run", "{dir}/cdem.toml", "--checkpoint-every", "9" * 400 + "s"], "--checkpoint-every"),
    (["run", "{dir}/cdem.toml", "--set", "x" * 2_000_000 + "=1"], "--set"),
    (["init", "cdem", "--out", "{dir}/no/such/dir/c.toml"], "no/such/dir"),
    (["init", "cdem", "--out", ""], "--out"),
    (["init", "cdem", "--out", "{dir}/" + "c" * 5000 + ".toml"], "--out"),
    (["init", "cdem", "--out", "{dir}/cdem.toml/c.toml"], "--out"),
    (["init", "m" * 5000], "init"),
    (["init", "cdem", "--out", "{dir}/" + "c" * 300 + ".toml"], "--out"),
    (["cases", "{dir}/broken_cases"], "bad.toml"),
    (["cases", "{dir}/binary_cases"], "bad.toml"),
    (["cases", "{dir}/deep_cases"], "deep.toml"),
    (["cases", "{dir}/" + "d" * 5000], "cases"),
    (["cases", ""], "cases"),
    (["describe", "m" * 100_000], "describe"),
    (["describe", ""], "describe"),
    (["render", "{dir}/" + "r" * 5000], "render"),
    (["render", ""], "render"),
    (["render", "{dir}/broken_run"], "summary.json"),
    (["render", "{dir}/odd_run"], "summary.json"),
    (["bench", "--elements", "1000000000000"], "--elements"),
    (["bench", "--elements", "1e12"], "--elements"),
    (["bench", "--heap", "1000000000000"], "--heap"),
    (["bench", "--scale", "1000000000000"], "--scale"),
    (["bench", "--steps", "1000000000000", "--elements", "8"], "--steps"),
    (["bench", "--elements", "9" * 5000], "--elements"),
    (["bench", "--elements", "8", "--steps", "1", "--heap", "8", "--json",
      "{dir}/no/such/x.json"], "--json"),
    (["bench", "--elements", "8", "--steps", "1", "--heap", "8", "--json", ""], "--json"),
]

NEW_ROWS = [*SIZES, *EXTREMES, *WRONG_FIELD, *PARSING]


@pytest.mark.parametrize("module, overrides, field", NEW_ROWS,
                         ids=[f"{m}:{' '.join(o)[:60]}" for m, o, _ in NEW_ROWS])
def test_hostile_size_extreme_or_parse_fails_in_validation(cases, capsys, module, overrides,
                                                           field):
    """Sizes, extreme values, a field blamed wrongly, parsing: one short line naming the
    field, exit 2, nothing left (as :func:`test_hostile_case_fails_in_validation`)."""
    line = _refused_line(cases, capsys, module, overrides)
    assert len(line) <= LINE_LIMIT and field in line, line
    assert line.startswith(("error: --set", f"error: {cases / module}.toml: ")), line


@pytest.mark.parametrize("args, field", SIDE_COMMANDS,
                         ids=[" ".join(a)[:80] for a, _ in SIDE_COMMANDS])
def test_hostile_side_command_is_one_short_error_line(cases, capsys, args, field):
    before = sorted(p.name for p in cases.iterdir())
    code, lines = _run_main([a.replace("{dir}", str(cases)) for a in args], capsys)
    assert code == 2 and len(lines) == 1, lines
    assert lines[0].startswith("error: ") and len(lines[0]) <= LINE_LIMIT, lines[0]
    assert field in lines[0], lines[0]
    assert sorted(p.name for p in cases.iterdir()) == before
