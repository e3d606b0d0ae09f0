"""8-node hexahedron kernels: incremental large-rotation element forces (seed 002, Eq. 2).

Every CDEM block element owns its 8 nodes, so element ``e`` uses nodes ``8e .. 8e+7`` of the
flat node arrays and the kernels are pure streams (no gather, no scatter conflicts).

Incremental method with [B] renewed every step (seed 002 section 2, Eq. 2), at each of the
2x2x2 Gauss points i, with nodal increments {du} = v^{n+1/2} dt:

* strain-increment gradient in the mid-step configuration x^{n+1/2} = x^{n+1} - du/2:
  L = d(du)/dx_mid = dJ . J_mid^-1, with J = dx/dxi and dJ = d(du)/dxi;
* {d eps} = sym(L), incremental spin dW = skew(L);
* old stress rotated objectively with the Hughes-Winget rotation
  R = (I - dW/2)^-1 (I + dW/2) = I + 2 (A + A^2) / (1 + |a|^2)  (A = dW/2, a its axial vector),
  so sigma_o -> R sigma_o R^T; for a rigid rotation the mid-point L is exactly skew
  (Cayley transform of the rotation) and R is exactly the step's rotation: no spurious stress;
* {sigma_n} = R {sigma_o} R^T + [D]{d eps}  (constitutive hook: solver.cdem.constitutive);
* {F}_e = - sum_i [B]_i^T {sigma_n}_i w_i J_i, with [B] from the end-of-step coordinates x^{n+1}.

Tension is positive. Stress is stored per Gauss point in Voigt order (xx, yy, zz, yz, xz, xy).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver.cdem.constitutive import stress_increment

#: VTK/meshio corner order in reference coordinates.
CORNERS = np.array([[-1, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1],
                    [-1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1]], dtype=np.float64)

#: The six faces as local node lists, ordered so that (c - a) x (d - b) points outward.
FACES = np.array([[0, 3, 2, 1], [4, 5, 6, 7], [0, 1, 5, 4],
                  [1, 2, 6, 5], [2, 3, 7, 6], [3, 0, 4, 7]], dtype=np.int64)


def gauss_points() -> np.ndarray:
    """2x2x2 Gauss points (8, 3) in the corner order; all weights are 1."""
    return CORNERS / np.sqrt(3.0)


def shape_derivatives(xi: np.ndarray) -> np.ndarray:
    """dN_a/dxi_k (n, 8, 3) of the trilinear shape functions N_a = prod(1 + xi_k c_ak)/8."""
    xi = np.atleast_2d(xi)
    f = 1.0 + xi[:, None, :] * CORNERS[None, :, :]
    d = np.empty((len(xi), 8, 3))
    d[..., 0] = CORNERS[:, 0] * f[..., 1] * f[..., 2] / 8.0
    d[..., 1] = CORNERS[:, 1] * f[..., 0] * f[..., 2] / 8.0
    d[..., 2] = CORNERS[:, 2] * f[..., 0] * f[..., 1] / 8.0
    return d


def shape_values(xi: np.ndarray) -> np.ndarray:
    """N_a (n, 8) at reference points xi (n, 3)."""
    xi = np.atleast_2d(xi)
    return np.prod(1.0 + xi[:, None, :] * CORNERS[None, :, :], axis=2) / 8.0


DNDXI = shape_derivatives(gauss_points())


def element_volumes(x: np.ndarray) -> np.ndarray:
    """Volume of each element from its (n_el, 8, 3) corner coordinates (2x2x2 Gauss)."""
    jac = np.einsum("eak,gal->egkl", x, DNDXI)
    return np.linalg.det(jac).sum(axis=1)


def thinnest_height(x: np.ndarray, chunk: int = 65536) -> np.ndarray:
    """Smallest local height of each element (n_el,) from its (n_el, 8, 3) corners:
    h = min over the 2x2x2 Gauss points of 2 / sqrt(lambda_max(G)), G = J^-T J^-1 the metric
    of the reference coordinates (G_ij = grad xi_i . grad xi_j, xi in [-1, 1]). For a box it
    is the shortest edge; for a parallelepiped, at most its smallest face-to-face distance."""
    out = np.empty(len(x))
    for start in range(0, len(x), chunk):
        jac = np.einsum("eak,gal->egkl", x[start:start + chunk], DNDXI)
        inv = np.linalg.inv(jac)
        metric = np.einsum("egik,egjk->egij", inv, inv)
        out[start:start + chunk] = 2.0 / np.sqrt(np.linalg.eigvalsh(metric)[..., -1].max(axis=1))
    return out


def lumped_masses(x: np.ndarray, density: np.ndarray) -> np.ndarray:
    """Row-sum lumped nodal masses (n_el, 8): m_a = rho * integral N_a dV (2x2x2 Gauss)."""
    jac = np.einsum("eak,gal->egkl", x, DNDXI)
    det = np.linalg.det(jac)
    n = shape_values(gauss_points())
    return density[:, None] * np.einsum("eg,ga->ea", det, n)


@njit(cache=True)
def quad_normal(x, a, b, c, d):
    """Unit normal (x_c - x_a) x (x_d - x_b) / |...| of the quadrilateral a, b, c, d."""
    e0 = x[c, 0] - x[a, 0]
    e1 = x[c, 1] - x[a, 1]
    e2 = x[c, 2] - x[a, 2]
    g0 = x[d, 0] - x[b, 0]
    g1 = x[d, 1] - x[b, 1]
    g2 = x[d, 2] - x[b, 2]
    n0 = e1 * g2 - e2 * g1
    n1 = e2 * g0 - e0 * g2
    n2 = e0 * g1 - e1 * g0
    inv = 1.0 / np.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
    return n0 * inv, n1 * inv, n2 * inv


@njit(cache=True, fastmath=True, inline="always")
def _det_inv(j00, j01, j02, j10, j11, j12, j20, j21, j22):
    c00 = j11 * j22 - j12 * j21
    c01 = j02 * j21 - j01 * j22
    c02 = j01 * j12 - j02 * j11
    c10 = j12 * j20 - j10 * j22
    c11 = j00 * j22 - j02 * j20
    c12 = j02 * j10 - j00 * j12
    c20 = j10 * j21 - j11 * j20
    c21 = j01 * j20 - j00 * j21
    c22 = j00 * j11 - j01 * j10
    det = j00 * c00 + j01 * c10 + j02 * c20
    r = 1.0 / det
    return det, c00 * r, c01 * r, c02 * r, c10 * r, c11 * r, c12 * r, c20 * r, c21 * r, c22 * r


@njit(cache=True, fastmath=True)
def element_step(x, du, stress, f_int, lam, mu, model, dndxi):
    """Update Gauss-point stresses and element nodal forces of all elements (seed 002 Eq. 2).

    x: (8*n_el, 3) end-of-step coordinates x^{n+1}; du: (8*n_el, 3) step increments;
    stress: (n_el, 8, 6) Voigt stresses, updated in place; f_int: (8*n_el, 3) overwritten
    with the internal nodal forces; lam, mu: (n_el,) Lame constants; model: (n_el,)
    constitutive model ids; dndxi: (8, 8, 3) reference shape derivatives at the Gauss points.
    """
    n_el = stress.shape[0]
    for e in range(n_el):
        base = 8 * e
        for a in range(8):
            f_int[base + a, 0] = 0.0
            f_int[base + a, 1] = 0.0
            f_int[base + a, 2] = 0.0
        for g in range(8):
            j00 = j01 = j02 = j10 = j11 = j12 = j20 = j21 = j22 = 0.0
            d00 = d01 = d02 = d10 = d11 = d12 = d20 = d21 = d22 = 0.0
            for a in range(8):
                n0 = dndxi[g, a, 0]
                n1 = dndxi[g, a, 1]
                n2 = dndxi[g, a, 2]
                xa0 = x[base + a, 0]
                xa1 = x[base + a, 1]
                xa2 = x[base + a, 2]
                ua0 = du[base + a, 0]
                ua1 = du[base + a, 1]
                ua2 = du[base + a, 2]
                j00 += xa0 * n0
                j01 += xa0 * n1
                j02 += xa0 * n2
                j10 += xa1 * n0
                j11 += xa1 * n1
                j12 += xa1 * n2
                j20 += xa2 * n0
                j21 += xa2 * n1
                j22 += xa2 * n2
                d00 += ua0 * n0
                d01 += ua0 * n1
                d02 += ua0 * n2
                d10 += ua1 * n0
                d11 += ua1 * n1
                d12 += ua1 * n2
                d20 += ua2 * n0
                d21 += ua2 * n1
                d22 += ua2 * n2
            _, m00, m01, m02, m10, m11, m12, m20, m21, m22 = _det_inv(
                j00 - 0.5 * d00, j01 - 0.5 * d01, j02 - 0.5 * d02,
                j10 - 0.5 * d10, j11 - 0.5 * d11, j12 - 0.5 * d12,
                j20 - 0.5 * d20, j21 - 0.5 * d21, j22 - 0.5 * d22)
            l00 = d00 * m00 + d01 * m10 + d02 * m20
            l01 = d00 * m01 + d01 * m11 + d02 * m21
            l02 = d00 * m02 + d01 * m12 + d02 * m22
            l10 = d10 * m00 + d11 * m10 + d12 * m20
            l11 = d10 * m01 + d11 * m11 + d12 * m21
            l12 = d10 * m02 + d11 * m12 + d12 * m22
            l20 = d20 * m00 + d21 * m10 + d22 * m20
            l21 = d20 * m01 + d21 * m11 + d22 * m21
            l22 = d20 * m02 + d21 * m12 + d22 * m22
            # half spin A = dW/2 as axial vector a: A v = a x v
            a0 = 0.25 * (l21 - l12)
            a1 = 0.25 * (l02 - l20)
            a2 = 0.25 * (l10 - l01)
            s = stress[e, g]
            sxx, syy, szz, syz, sxz, sxy = s[0], s[1], s[2], s[3], s[4], s[5]
            aa = a0 * a0 + a1 * a1 + a2 * a2
            if aa > 0.0:
                c = 2.0 / (1.0 + aa)
                # R = I + c (A + A^2), A = [[0,-a2,a1],[a2,0,-a0],[-a1,a0,0]]
                r00 = 1.0 + c * (-(a1 * a1 + a2 * a2))
                r11 = 1.0 + c * (-(a0 * a0 + a2 * a2))
                r22 = 1.0 + c * (-(a0 * a0 + a1 * a1))
                r01 = c * (-a2 + a0 * a1)
                r10 = c * (a2 + a0 * a1)
                r02 = c * (a1 + a0 * a2)
                r20 = c * (-a1 + a0 * a2)
                r12 = c * (-a0 + a1 * a2)
                r21 = c * (a0 + a1 * a2)
                # T = R S
                t00 = r00 * sxx + r01 * sxy + r02 * sxz
                t01 = r00 * sxy + r01 * syy + r02 * syz
                t02 = r00 * sxz + r01 * syz + r02 * szz
                t10 = r10 * sxx + r11 * sxy + r12 * sxz
                t11 = r10 * sxy + r11 * syy + r12 * syz
                t12 = r10 * sxz + r11 * syz + r12 * szz
                t20 = r20 * sxx + r21 * sxy + r22 * sxz
                t21 = r20 * sxy + r21 * syy + r22 * syz
                t22 = r20 * sxz + r21 * syz + r22 * szz
                # S' = T R^T
                sxx = t00 * r00 + t01 * r01 + t02 * r02
                syy = t10 * r10 + t11 * r11 + t12 * r12
                szz = t20 * r20 + t21 * r21 + t22 * r22
                syz = t10 * r20 + t11 * r21 + t12 * r22
                sxz = t00 * r20 + t01 * r21 + t02 * r22
                sxy = t00 * r10 + t01 * r11 + t02 * r12
            dsxx, dsyy, dszz, dsyz, dsxz, dsxy = stress_increment(
                model[e], lam[e], mu[e], l00, l11, l22,
                0.5 * (l12 + l21), 0.5 * (l02 + l20), 0.5 * (l01 + l10))
            sxx += dsxx
            syy += dsyy
            szz += dszz
            syz += dsyz
            sxz += dsxz
            sxy += dsxy
            s[0] = sxx
            s[1] = syy
            s[2] = szz
            s[3] = syz
            s[4] = sxz
            s[5] = sxy
            det, m00, m01, m02, m10, m11, m12, m20, m21, m22 = _det_inv(
                j00, j01, j02, j10, j11, j12, j20, j21, j22)
            for a in range(8):
                n0 = dndxi[g, a, 0]
                n1 = dndxi[g, a, 1]
                n2 = dndxi[g, a, 2]
                b0 = (n0 * m00 + n1 * m10 + n2 * m20) * det
                b1 = (n0 * m01 + n1 * m11 + n2 * m21) * det
                b2 = (n0 * m02 + n1 * m12 + n2 * m22) * det
                f_int[base + a, 0] -= sxx * b0 + sxy * b1 + sxz * b2
                f_int[base + a, 1] -= sxy * b0 + syy * b1 + syz * b2
                f_int[base + a, 2] -= sxz * b0 + syz * b1 + szz * b2


@njit(cache=True)
def strain_energy(x, stress, lam, mu, dndxi):
    """Elastic strain energy sum_i 1/2 sigma : C^-1 : sigma w_i J_i of all elements."""
    total = 0.0
    n_el = stress.shape[0]
    for e in range(n_el):
        base = 8 * e
        bulk = lam[e] + 2.0 * mu[e] / 3.0
        for g in range(8):
            j00 = j01 = j02 = j10 = j11 = j12 = j20 = j21 = j22 = 0.0
            for a in range(8):
                j00 += x[base + a, 0] * dndxi[g, a, 0]
                j01 += x[base + a, 0] * dndxi[g, a, 1]
                j02 += x[base + a, 0] * dndxi[g, a, 2]
                j10 += x[base + a, 1] * dndxi[g, a, 0]
                j11 += x[base + a, 1] * dndxi[g, a, 1]
                j12 += x[base + a, 1] * dndxi[g, a, 2]
                j20 += x[base + a, 2] * dndxi[g, a, 0]
                j21 += x[base + a, 2] * dndxi[g, a, 1]
                j22 += x[base + a, 2] * dndxi[g, a, 2]
            det = (j00 * (j11 * j22 - j12 * j21) - j01 * (j10 * j22 - j12 * j20)
                   + j02 * (j10 * j21 - j11 * j20))
            s = stress[e, g]
            p = (s[0] + s[1] + s[2]) / 3.0
            dev2 = ((s[0] - p) ** 2 + (s[1] - p) ** 2 + (s[2] - p) ** 2
                    + 2.0 * (s[3] ** 2 + s[4] ** 2 + s[5] ** 2))
            total += 0.5 * (p * p / bulk + dev2 / (2.0 * mu[e])) * det
    return total
