"""The reference 8-node hexahedron [-1, 1]^3: corner order, trilinear shape functions, the
2x2x2 Gauss rule, Jacobian determinants and element volumes.

One module for the mesh checks (solver.mesh.checks) and the CDEM element (solver.cdem.hex8).
Corners are in VTK/meshio order: bottom face 0-1-2-3 counter-clockwise seen from +z, top face
4-5-6-7 above it. N_a(xi) = prod_k (1 + xi_k c_ak) / 8 with c_a the corner a; the Gauss points
are c_a / sqrt(3), weights 1, in corner order; J = dx/dxi, so a parallelepiped has
det J = V / 8.
"""

from __future__ import annotations

import numpy as np

#: VTK/meshio corner order in reference coordinates.
CORNERS = np.array([[-1, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1],
                    [-1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1]], dtype=np.float64)

_CHUNK = 65536


def gauss_points() -> np.ndarray:
    """2x2x2 Gauss points (8, 3) in the corner order; all weights are 1."""
    return CORNERS / np.sqrt(3.0)


def shape_values(xi: np.ndarray) -> np.ndarray:
    """N_a (n, 8) at reference points xi (n, 3)."""
    xi = np.atleast_2d(xi)
    return np.prod(1.0 + xi[:, None, :] * CORNERS[None, :, :], axis=2) / 8.0


def shape_derivatives(xi: np.ndarray) -> np.ndarray:
    """dN_a/dxi_k (n, 8, 3) of the trilinear shape functions at reference points xi (n, 3)."""
    xi = np.atleast_2d(xi)
    f = 1.0 + xi[:, None, :] * CORNERS[None, :, :]
    d = np.empty((len(xi), 8, 3))
    d[..., 0] = CORNERS[:, 0] * f[..., 1] * f[..., 2] / 8.0
    d[..., 1] = CORNERS[:, 1] * f[..., 0] * f[..., 2] / 8.0
    d[..., 2] = CORNERS[:, 2] * f[..., 0] * f[..., 1] / 8.0
    return d


#: dN_a/dxi_k at the 2x2x2 Gauss points, (8, 8, 3).
DNDXI = shape_derivatives(gauss_points())


def jacobians(x: np.ndarray, dndxi: np.ndarray = DNDXI) -> np.ndarray:
    """J = dx/dxi (n, p, 3, 3) of each element, from its corner coordinates x (n, 8, 3), at the
    p reference points whose shape gradients are dndxi (p, 8, 3) (default: the Gauss points).

    Evaluated element by element (einsum, no BLAS blocking), so an element's J does not depend on
    how many elements are passed with it: the volumes, and all that derives from them, are the
    same bit for bit however the mesh is split across ranks."""
    return np.einsum("eak,gal->egkl", x, dndxi)


def element_volumes(x: np.ndarray) -> np.ndarray:
    """Volume of each element (n,) from its corner coordinates x (n, 8, 3), e.g.
    ``mesh.points[mesh.cells]``: 2x2x2 Gauss quadrature, exact for trilinear hexes."""
    out = np.empty(len(x))
    for start in range(0, len(x), _CHUNK):
        out[start:start + _CHUNK] = np.linalg.det(jacobians(x[start:start + _CHUNK])).sum(axis=1)
    return out
