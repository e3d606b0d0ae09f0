"""Hexahedral meshes: reading any meshio format, structured generators, checks.

Everything downstream starts from :class:`HexMesh` (VTK node order, positive Jacobian).
"""

from solver.mesh.checks import check_hex_mesh
from solver.mesh.generate import box, grid, slab_rotation, stack, tilted_slab, write_mesh
from solver.mesh.hexmesh import HexMesh
from solver.mesh.read import read_hex_mesh
from solver.mesh.reference_hex import element_volumes

__all__ = ["HexMesh", "box", "check_hex_mesh", "element_volumes", "grid", "read_hex_mesh",
           "slab_rotation", "stack", "tilted_slab", "write_mesh"]
