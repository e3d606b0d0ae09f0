"""The mesh a case asks for: read from a file or generated from boxes, then placed."""

from __future__ import annotations

import math
import os

import numpy as np

from solver.errors import InputError
from solver.mesh.checks import check_elements, check_finite
from solver.mesh.generate import BYTES_PER_ELEMENT, box, separate_blocks
from solver.mesh.hexmesh import HexMesh
from solver.mesh.read import memory_to_read, read_hex_mesh
from solver.resources import need_memory
from solver.rotation import rotate_about_axis


def _box_mesh(spec, names: dict[str, int]) -> HexMesh:
    """One generated box; ``layer_groups`` name the group of each element layer along z;
    ``rotate_deg`` turns it rigidly about its centre; ``separate`` gives every element its
    own nodes."""
    mesh = (separate_blocks if spec.separate else box)(*spec.n, size=spec.size,
                                                       origin=spec.origin)
    labels = spec.layer_groups or [spec.group] * spec.n[2]
    z_c = mesh.points[mesh.cells][:, :, 2].mean(axis=1)
    layer = np.clip(((z_c - spec.origin[2]) / (spec.size[2] / spec.n[2])).astype(int), 0,
                    spec.n[2] - 1)
    ids = np.array([names.setdefault(label, len(names)) for label in labels])
    points = mesh.points
    if spec.rotate_deg:
        centre = np.asarray(spec.origin) + 0.5 * np.asarray(spec.size)
        points = rotate(points, spec.rotate_deg, spec.rotate_axis, centre)
    return HexMesh(points, mesh.cells, ids[layer])


def concatenate(meshes: list[HexMesh], names: dict[str, int]) -> HexMesh:
    """Separate bodies side by side (no nodes merged: they touch, they are not glued)."""
    offsets = np.cumsum([0] + [len(m.points) for m in meshes])
    return HexMesh(points=np.concatenate([m.points for m in meshes]),
                   cells=np.concatenate([m.cells + o for m, o in zip(meshes, offsets)]),
                   groups=np.concatenate([m.groups for m in meshes]),
                   group_names={i: n for n, i in names.items()})


def rotate(points: np.ndarray, angle_deg: float, axis, origin) -> np.ndarray:
    """Rigid rotation of points by angle_deg about the axis through origin."""
    k = np.asarray(axis, float) / np.linalg.norm(axis)
    r = rotate_about_axis(points - np.asarray(origin, float), k, math.radians(angle_deg))
    return r + np.asarray(origin, float)


def mesh_from_config(cfg, where: str) -> HexMesh:
    """HexMesh of a ``[mesh]`` table (solver.cdem.config.MeshConfig); ``where`` names the
    table (``case.toml: mesh``). Generated boxes pass the coordinate and element checks of
    read meshes (solver.mesh.checks; touching boxes share positions, not nodes), so a box
    too small or too large for float64 is an error; a box whose mesh would not fit in this
    node's memory is refused before it is built, a file before it is read (solver.resources,
    solver.mesh.read.memory_to_read)."""
    if cfg.path:
        if not os.path.isfile(cfg.path):
            raise InputError(f"{where}.path", f"mesh file not found: {cfg.path}")
        need_memory(f"{where}.path", *memory_to_read(cfg.path))
        try:
            mesh = read_hex_mesh(cfg.path)
        except InputError as exc:
            raise InputError(f"{where}.path", f"{exc.where}: {exc.message}") from None
    else:
        for i, spec in enumerate(cfg.boxes):
            need_memory(f"{where}.boxes[{i}].n", spec.elements * BYTES_PER_ELEMENT,
                        f"{spec.elements:.3g} elements")
        names: dict[str, int] = {}
        mesh = concatenate([_box_mesh(b, names) for b in cfg.boxes], names)
        check_finite(mesh, f"{where}.boxes")
        check_elements(mesh, f"{where}.boxes")
    if cfg.rotate_deg:
        mesh = HexMesh(rotate(mesh.points, cfg.rotate_deg, cfg.rotate_axis, cfg.rotate_origin),
                       mesh.cells, mesh.groups, mesh.group_names)
    return mesh
