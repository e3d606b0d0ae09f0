"""8-node hexahedron kernels: incremental large-rotation element forces (Feng et al. 2014,
Eq. 2); reference element, shape functions and volumes: solver.mesh.reference_hex.

Every CDEM block element owns its 8 nodes, so element ``e`` uses nodes ``8e .. 8e+7`` of the
flat node arrays and the kernels are pure streams (no gather, no scatter conflicts).

Incremental method with [B] renewed every step (Feng et al. 2014, section 2, Eq. 2), at each of the
2x2x2 Gauss points i, with nodal increments {du} = v^{n+1/2} dt:

* strain-increment gradient in the mid-step configuration x^{n+1/2} = x^{n+1} - du/2:
  L = d(du)/dx_mid = dJ . J_mid^-1, with J = dx/dxi and dJ = d(du)/dxi;
* {d eps} = sym(L), incremental spin dW = skew(L);
* old stress rotated objectively with the Hughes-Winget rotation
  R = (I - dW/2)^-1 (I + dW/2) = I + 2 (A + A^2) / (1 + |a|^2)  (A = dW/2, a its axial vector),
  so sigma_o -> R sigma_o R^T; for a rigid rotation the mid-point L is exactly skew
  (Cayley transform of the rotation) and R is exactly the step's rotation: no spurious stress;
* {sigma_n} = R {sigma_o} R^T + [D]{d eps}  (constitutive hook: solver.cdem.constitutive);
* {F}_e = - sum_i [B]_i^T {sigma_n}_i w_i J_i, with [B] from the end-of-step coordinates x^{n+1}
  (evaluated in the modal form described in :func:`element_step`).

Tension is positive. Stress is stored per Gauss point in Voigt order (xx, yy, zz, yz, xz, xy).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver.cdem.constitutive import stress_increment
from solver.exact_sum import add, normalize
from solver.mesh.reference_hex import (CORNERS, element_volumes, gauss_points, jacobians,
                                       shape_values)

__all__ = ["element_step", "element_volumes", "lumped_masses", "quad_normal", "strain_energy",
           "thinnest_height"]

def thinnest_height(x: np.ndarray, chunk: int = 65536) -> np.ndarray:
    """Smallest local height of each element (n_el,) from its (n_el, 8, 3) corners:
    h = min over the 2x2x2 Gauss points of 2 / sqrt(lambda_max(G)), G = J^-T J^-1 the metric
    of the reference coordinates (G_ij = grad xi_i . grad xi_j, xi in [-1, 1]). For a box it
    is the shortest edge; for a parallelepiped, at most its smallest face-to-face distance."""
    out = np.empty(len(x))
    for start in range(0, len(x), chunk):
        jac = jacobians(x[start:start + chunk])
        inv = np.linalg.inv(jac)
        metric = np.einsum("egik,egjk->egij", inv, inv)
        out[start:start + chunk] = 2.0 / np.sqrt(np.linalg.eigvalsh(metric)[..., -1].max(axis=1))
    return out


def lumped_masses(x: np.ndarray, density: np.ndarray) -> np.ndarray:
    """Row-sum lumped nodal masses (n_el, 8): m_a = rho * integral N_a dV (2x2x2 Gauss)."""
    jac = jacobians(x)
    det = np.linalg.det(jac)
    n = shape_values(gauss_points())
    return density[:, None] * np.einsum("eg,ga->ea", det, n)


@njit(cache=True, inline="always")
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


#: Lanes: elements updated together, their temporaries side by side (lane-major scratch).
LANES = 8
#: Rows of the lane-major scratch: modal coordinates (0-23), modal increments (24-47),
#: modal forces (48-71), Gauss-point stresses (72-119), lam and mu (120, 121).
_X, _D, _F, _S, _LAM = 0, 24, 48, 72, 120


@njit(cache=True, fastmath=True, inline="always")
def _modes(src, base, off, lane, t):
    """Modal components (1, xi, eta, zeta, xi eta, xi zeta, eta zeta, xi eta zeta) / 8 of the
    8 nodal vectors src[base .. base + 7], into scratch rows off + 3 m + i."""
    for i in range(3):
        v0, v1, v2, v3 = src[base, i], src[base + 1, i], src[base + 2, i], src[base + 3, i]
        v4, v5, v6, v7 = src[base + 4, i], src[base + 5, i], src[base + 6, i], src[base + 7, i]
        a0, a1, a2, a3 = v0 + v1, v2 + v3, v4 + v5, v6 + v7
        b0, b1, b2, b3 = v1 - v0, v2 - v3, v5 - v4, v6 - v7
        t[off + i, lane] = 0.125 * (a0 + a1 + a2 + a3)
        t[off + 3 + i, lane] = 0.125 * (b0 + b1 + b2 + b3)
        t[off + 6 + i, lane] = 0.125 * (a1 - a0 + a3 - a2)
        t[off + 9 + i, lane] = 0.125 * (a2 + a3 - a0 - a1)
        t[off + 12 + i, lane] = 0.125 * (b1 - b0 + b3 - b2)
        t[off + 15 + i, lane] = 0.125 * (b2 + b3 - b0 - b1)
        t[off + 18 + i, lane] = 0.125 * (a0 - a1 - a2 + a3)
        t[off + 21 + i, lane] = 0.125 * (b0 - b1 - b2 + b3)


@njit(cache=True, fastmath=True, error_model="numpy")
def element_step(x, du, stress, f_int, lam, mu, model):
    """Update Gauss-point stresses and element nodal forces of all elements (Feng et al.
    2014, Eq. 2; see the module docstring).

    x: (8*n_el, 3) end-of-step coordinates x^{n+1}; du: (8*n_el, 3) step increments;
    stress: (n_el, 8, 6) Voigt stresses, updated in place; f_int: (8*n_el, 3) overwritten
    with the internal nodal forces; lam, mu: (n_el,) Lame constants; model: (n_el,)
    constitutive model ids.

    Modal form of the trilinear map: x(xi) = sum_m h_m(xi) X_m with the 8 Walsh-Hadamard
    modes h = (1, xi, eta, zeta, xi eta, xi zeta, eta zeta, xi eta zeta) and
    X_m = (1/8) sum_a h_m(xi_a) x_a, so dx/dxi = X_xi + eta X_xieta + zeta X_xizeta
    + eta zeta X_xietazeta (and alike for eta, zeta) costs 3 products per entry. The nodal
    forces f_a = -sum_i sum_k dN_a/dxi_k(xi_i) P_i[:, k], P_i = sigma_i adj(J_i)^T
    (adj(J) = J^-1 det J, unit Gauss weights), gather per mode in the same way,
    f_a = -(1/8) sum_m h_m(xi_a) F_m, with F_xi = sum_i P_i[:, 0],
    F_xieta = sum_i (eta_i P_i[:, 0] + xi_i P_i[:, 1]), ..., and the constant mode
    carrying no force (sum_a f_a = 0). Elements are taken LANES at a time with their
    temporaries in lane-major scratch rows. The Gauss-point loop runs over all LANES lanes,
    a constant trip count the compiler turns into SIMD vectors with no scalar remainder, so
    every element takes the same instructions wherever it sits in its group (the last bit
    does not depend on the partition); a short last group repeats its last element in the
    spare lanes and writes back only its own.
    """
    n_el = stress.shape[0]
    t = np.empty((122, LANES))
    g = 0.5773502691896258
    for e0 in range(0, n_el, LANES):
        nl = min(LANES, n_el - e0)
        for lane in range(LANES):
            e = e0 + min(lane, nl - 1)
            _modes(x, 8 * e, _X, lane, t)
            _modes(du, 8 * e, _D, lane, t)
            t[_LAM, lane] = lam[e]
            t[_LAM + 1, lane] = mu[e]
            for q in range(8):
                for k in range(6):
                    t[_S + 6 * q + k, lane] = stress[e, q, k]
            for r in range(_F, _F + 24):
                t[r, lane] = 0.0
        for q in range(8):
            sx = g * CORNERS[q, 0]
            sy = g * CORNERS[q, 1]
            sz = g * CORNERS[q, 2]
            s_ = _S + 6 * q
            for lane in range(LANES):
                j00 = t[3, lane] + sy * t[12, lane] + sz * t[15, lane] + sy * sz * t[21, lane]
                j10 = t[4, lane] + sy * t[13, lane] + sz * t[16, lane] + sy * sz * t[22, lane]
                j20 = t[5, lane] + sy * t[14, lane] + sz * t[17, lane] + sy * sz * t[23, lane]
                j01 = t[6, lane] + sx * t[12, lane] + sz * t[18, lane] + sx * sz * t[21, lane]
                j11 = t[7, lane] + sx * t[13, lane] + sz * t[19, lane] + sx * sz * t[22, lane]
                j21 = t[8, lane] + sx * t[14, lane] + sz * t[20, lane] + sx * sz * t[23, lane]
                j02 = t[9, lane] + sx * t[15, lane] + sy * t[18, lane] + sx * sy * t[21, lane]
                j12 = t[10, lane] + sx * t[16, lane] + sy * t[19, lane] + sx * sy * t[22, lane]
                j22 = t[11, lane] + sx * t[17, lane] + sy * t[20, lane] + sx * sy * t[23, lane]
                d00 = t[27, lane] + sy * t[36, lane] + sz * t[39, lane] + sy * sz * t[45, lane]
                d10 = t[28, lane] + sy * t[37, lane] + sz * t[40, lane] + sy * sz * t[46, lane]
                d20 = t[29, lane] + sy * t[38, lane] + sz * t[41, lane] + sy * sz * t[47, lane]
                d01 = t[30, lane] + sx * t[36, lane] + sz * t[42, lane] + sx * sz * t[45, lane]
                d11 = t[31, lane] + sx * t[37, lane] + sz * t[43, lane] + sx * sz * t[46, lane]
                d21 = t[32, lane] + sx * t[38, lane] + sz * t[44, lane] + sx * sz * t[47, lane]
                d02 = t[33, lane] + sx * t[39, lane] + sy * t[42, lane] + sx * sy * t[45, lane]
                d12 = t[34, lane] + sx * t[40, lane] + sy * t[43, lane] + sx * sy * t[46, lane]
                d22 = t[35, lane] + sx * t[41, lane] + sy * t[44, lane] + sx * sy * t[47, lane]
                # L = dJ . J_mid^-1, J_mid = J - dJ / 2
                h00, h01, h02 = j00 - 0.5 * d00, j01 - 0.5 * d01, j02 - 0.5 * d02
                h10, h11, h12 = j10 - 0.5 * d10, j11 - 0.5 * d11, j12 - 0.5 * d12
                h20, h21, h22 = j20 - 0.5 * d20, j21 - 0.5 * d21, j22 - 0.5 * d22
                c00 = h11 * h22 - h12 * h21
                c01 = h02 * h21 - h01 * h22
                c02 = h01 * h12 - h02 * h11
                c10 = h12 * h20 - h10 * h22
                c11 = h00 * h22 - h02 * h20
                c12 = h02 * h10 - h00 * h12
                c20 = h10 * h21 - h11 * h20
                c21 = h01 * h20 - h00 * h21
                c22 = h00 * h11 - h01 * h10
                r = 1.0 / (h00 * c00 + h01 * c10 + h02 * c20)
                l00 = (d00 * c00 + d01 * c10 + d02 * c20) * r
                l01 = (d00 * c01 + d01 * c11 + d02 * c21) * r
                l02 = (d00 * c02 + d01 * c12 + d02 * c22) * r
                l10 = (d10 * c00 + d11 * c10 + d12 * c20) * r
                l11 = (d10 * c01 + d11 * c11 + d12 * c21) * r
                l12 = (d10 * c02 + d11 * c12 + d12 * c22) * r
                l20 = (d20 * c00 + d21 * c10 + d22 * c20) * r
                l21 = (d20 * c01 + d21 * c11 + d22 * c21) * r
                l22 = (d20 * c02 + d21 * c12 + d22 * c22) * r
                # Hughes-Winget rotation R = I + c (A + A^2), A v = a x v, a the axial
                # vector of the half spin dW/2
                a0 = 0.25 * (l21 - l12)
                a1 = 0.25 * (l02 - l20)
                a2 = 0.25 * (l10 - l01)
                c = 2.0 / (1.0 + a0 * a0 + a1 * a1 + a2 * a2)
                r00 = 1.0 - c * (a1 * a1 + a2 * a2)
                r11 = 1.0 - c * (a0 * a0 + a2 * a2)
                r22 = 1.0 - c * (a0 * a0 + a1 * a1)
                r01 = c * (-a2 + a0 * a1)
                r10 = c * (a2 + a0 * a1)
                r02 = c * (a1 + a0 * a2)
                r20 = c * (-a1 + a0 * a2)
                r12 = c * (-a0 + a1 * a2)
                r21 = c * (a0 + a1 * a2)
                sxx, syy, szz = t[s_, lane], t[s_ + 1, lane], t[s_ + 2, lane]
                syz, sxz, sxy = t[s_ + 3, lane], t[s_ + 4, lane], t[s_ + 5, lane]
                t00 = r00 * sxx + r01 * sxy + r02 * sxz
                t01 = r00 * sxy + r01 * syy + r02 * syz
                t02 = r00 * sxz + r01 * syz + r02 * szz
                t10 = r10 * sxx + r11 * sxy + r12 * sxz
                t11 = r10 * sxy + r11 * syy + r12 * syz
                t12 = r10 * sxz + r11 * syz + r12 * szz
                t20 = r20 * sxx + r21 * sxy + r22 * sxz
                t21 = r20 * sxy + r21 * syy + r22 * syz
                t22 = r20 * sxz + r21 * syz + r22 * szz
                kind = model[e0 + min(lane, nl - 1)]
                dxx, dyy, dzz, dyz, dxz, dxy = stress_increment(
                    kind, t[_LAM, lane], t[_LAM + 1, lane], l00, l11, l22,
                    0.5 * (l12 + l21), 0.5 * (l02 + l20), 0.5 * (l01 + l10))
                sxx = t00 * r00 + t01 * r01 + t02 * r02 + dxx
                syy = t10 * r10 + t11 * r11 + t12 * r12 + dyy
                szz = t20 * r20 + t21 * r21 + t22 * r22 + dzz
                syz = t10 * r20 + t11 * r21 + t12 * r22 + dyz
                sxz = t00 * r20 + t01 * r21 + t02 * r22 + dxz
                sxy = t00 * r10 + t01 * r11 + t02 * r12 + dxy
                t[s_, lane], t[s_ + 1, lane], t[s_ + 2, lane] = sxx, syy, szz
                t[s_ + 3, lane], t[s_ + 4, lane], t[s_ + 5, lane] = syz, sxz, sxy
                # P = sigma adj(J)^T with the end-of-step J
                q00 = j11 * j22 - j12 * j21
                q01 = j02 * j21 - j01 * j22
                q02 = j01 * j12 - j02 * j11
                q10 = j12 * j20 - j10 * j22
                q11 = j00 * j22 - j02 * j20
                q12 = j02 * j10 - j00 * j12
                q20 = j10 * j21 - j11 * j20
                q21 = j01 * j20 - j00 * j21
                q22 = j00 * j11 - j01 * j10
                p00 = sxx * q00 + sxy * q01 + sxz * q02
                p01 = sxx * q10 + sxy * q11 + sxz * q12
                p02 = sxx * q20 + sxy * q21 + sxz * q22
                p10 = sxy * q00 + syy * q01 + syz * q02
                p11 = sxy * q10 + syy * q11 + syz * q12
                p12 = sxy * q20 + syy * q21 + syz * q22
                p20 = sxz * q00 + syz * q01 + szz * q02
                p21 = sxz * q10 + syz * q11 + szz * q12
                p22 = sxz * q20 + syz * q21 + szz * q22
                t[51, lane] += p00
                t[52, lane] += p10
                t[53, lane] += p20
                t[54, lane] += p01
                t[55, lane] += p11
                t[56, lane] += p21
                t[57, lane] += p02
                t[58, lane] += p12
                t[59, lane] += p22
                t[60, lane] += sy * p00 + sx * p01
                t[61, lane] += sy * p10 + sx * p11
                t[62, lane] += sy * p20 + sx * p21
                t[63, lane] += sz * p00 + sx * p02
                t[64, lane] += sz * p10 + sx * p12
                t[65, lane] += sz * p20 + sx * p22
                t[66, lane] += sz * p01 + sy * p02
                t[67, lane] += sz * p11 + sy * p12
                t[68, lane] += sz * p21 + sy * p22
                t[69, lane] += sy * sz * p00 + sx * sz * p01 + sx * sy * p02
                t[70, lane] += sy * sz * p10 + sx * sz * p11 + sx * sy * p12
                t[71, lane] += sy * sz * p20 + sx * sz * p21 + sx * sy * p22
        for lane in range(nl):
            e = e0 + lane
            for q in range(8):
                for k in range(6):
                    stress[e, q, k] = t[_S + 6 * q + k, lane]
            for i in range(3):
                fx, fy, fz = t[51 + i, lane], t[54 + i, lane], t[57 + i, lane]
                fxy, fxz, fyz, fxyz = t[60 + i, lane], t[63 + i, lane], t[66 + i, lane], \
                    t[69 + i, lane]
                for a in range(8):
                    cx, cy, cz = CORNERS[a, 0], CORNERS[a, 1], CORNERS[a, 2]
                    f_int[8 * e + a, i] = -0.125 * (cx * fx + cy * fy + cz * fz + cx * cy * fxy
                                                    + cx * cz * fxz + cy * cz * fyz
                                                    + cx * cy * cz * fxyz)


@njit(cache=True)
def strain_energy(x, stress, lam, mu, dndxi, acc):
    """acc += the elastic strain energy sum_i 1/2 sigma : C^-1 : sigma w_i J_i of all
    elements, element by element (an exact-sum accumulator, solver.exact_sum; normalized)."""
    n_el = stress.shape[0]
    for e in range(n_el):
        total = 0.0
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
        add(acc, total)
    normalize(acc)
