"""The contact dashpot against theory: a single stiff element landing flat on a face
rebounds with the restitution of the no-tension linear spring-dashpot (Schwager & Poeschel's
closed form, solver.contact_laws.laws.clamped_restitution), on a held base and, in relative
velocity, on a free heavier slab (the dashpot takes the two bodies' reduced mass)."""

import numpy as np
import pytest
from mpi4py import MPI

from solver.case import from_dict
from solver.cdem.config import Config
from solver.cdem.model import model_from_mesh
from solver.cdem.run import stability_limits, time_steps
from solver.cdem.timeloop import TimeLoop
from solver.contact_laws.laws import clamped_restitution
from solver.mesh.build import mesh_from_config


def _rebound(e_n: float, held_base: bool) -> float:
    """Relative rebound / impact speed of a 1 m cube (E = 1e13 Pa, 1000 times stiffer than
    the contact: at 1e12 the single-element slab's bending under a central load already moves
    e by 10 %) hitting a 2 x 2 x 0.5 m slab (twice its mass; its vertices lie outside the
    cube's face, so only the cube's 4 semi-springs engage) at 1 m/s without gravity."""
    case = {
        "mesh": {"boxes": [
            {"n": [1, 1, 1], "size": [2.0, 2.0, 0.5], "origin": [-1.0, -1.0, -0.5],
             "group": "base"},
            {"n": [1, 1, 1], "size": [1.0, 1.0, 1.0], "origin": [-0.5, -0.5, 1e-3],
             "group": "block"}]},
        "materials": [{"density": 2500.0, "youngs_modulus": 1e13}],
        "contact": {"enabled": True, "normal_stiffness": 1e10, "shear_stiffness": 1e10,
                    "restitution": e_n},
        "boundaries": [{"group": "base"}] if held_base else [],
        "gravity": [0.0, 0.0, 0.0],
        "stages": [{"kind": "dynamic", "max_steps": 20000, "damping": "none"}]}
    cfg = from_dict(Config, case, "restitution", "", None)
    mesh = mesh_from_config(cfg.mesh, "restitution")
    model = model_from_mesh(MPI.COMM_SELF, cfg, mesh, "restitution")
    loop = TimeLoop(MPI.COMM_SELF, model, cfg.gravity,
                    time_steps(cfg, stability_limits(MPI.COMM_SELF, model), "restitution")[0])
    block = np.repeat(model.elements.gid == 1, 8)
    model.nodes.v[block, 2] = -1.0
    touched = []

    def until_released(record) -> bool:
        loaded = record.model.contact_normal_forces().sum() > 0
        touched.append(loaded)
        return any(touched) and not loaded

    assert loop.run_stage(cfg.stages[0], [until_released]) == "observer"
    v, mass = model.nodes.v[:, 2], model.nodes.mass
    velocity = [float((v[sel] * mass[sel]).sum() / mass[sel].sum()) for sel in (block, ~block)]
    return velocity[0] - velocity[1]


@pytest.mark.parametrize("e_n", [0.1, 0.3, 0.6, 0.9])
def test_stiff_element_rebounds_from_a_held_base_with_the_clamped_restitution(e_n):
    """Tolerance 1 %: the step resolves the contact in hundreds of steps (omega dt < 0.01)
    and the elements' own flexibility still takes part."""
    assert _rebound(e_n, held_base=True) == pytest.approx(clamped_restitution(e_n), rel=0.01)


@pytest.mark.parametrize("e_n", [0.1, 0.6])
def test_relative_rebound_from_a_free_slab_uses_the_reduced_mass(e_n):
    assert _rebound(e_n, held_base=False) == pytest.approx(clamped_restitution(e_n), rel=0.01)
