"""Linear stiffness of the CDEM model at its current configuration: the tangent of the
implicit prestep (solver.cdem.prestep).

Element (small-strain hex8, 2x2x2 Gauss, unit weights; Zienkiewicz & Taylor, The Finite
Element Method, vol. 1, ch. 6): with G_a = dN_a/dx at a Gauss point of Jacobian J,

    K_(a i)(b j) = sum_g det J_g (lam G_ai G_bj + mu G_aj G_bi + mu delta_ij G_a . G_b),

which is [B]^T [D] [B] det J written by index for isotropic [D]. Every CDEM element owns its
8 nodes (Feng et al. 2014), so the element blocks do not overlap.

Interface spring pair between node i (A side) and node j (B side) with A's unit face normal
n (solver.cdem.interface): the force on i is f_i = S (u_j - u_i) with
S = K_n n n^T + K_s (I - n n^T), so it adds S to the (i, i) and (j, j) blocks and -S to
(i, j) and (j, i).
"""

from __future__ import annotations

import numpy as np

from solver.mesh.reference_hex import DNDXI, jacobians

#: Elements per batch of the element-stiffness evaluation (bounds its temporaries).
BATCH = 4096


def element_stiffness(x_el: np.ndarray, lam: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """(n_el, 24, 24) stiffness of the elements with corners x_el (n_el, 8, 3) [m] and Lame
    constants lam, mu (n_el,) [Pa]; rows and columns ordered 3 a + i."""
    n_el = len(x_el)
    out = np.empty((n_el, 24, 24))
    for s in range(0, n_el, BATCH):
        x = x_el[s:s + BATCH]
        jac = jacobians(x)                                          # dx_k / dxi_l
        det = np.linalg.det(jac)
        grad = np.einsum("gal,eglk->egak", DNDXI, np.linalg.inv(jac))   # dN_a / dx_k
        w_lam = det * lam[s:s + BATCH, None]
        w_mu = det * mu[s:s + BATCH, None]
        k = np.einsum("eg,egai,egbj->eaibj", w_lam, grad, grad)
        k += np.einsum("eg,egaj,egbi->eaibj", w_mu, grad, grad)
        dot = np.einsum("eg,egak,egbk->eab", w_mu, grad, grad)
        k += dot[:, :, None, :, None] * np.eye(3)[None, None, :, None, :]
        out[s:s + BATCH] = k.reshape(-1, 24, 24)
    return out


def face_normals(x: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """(m, 3) unit normals (x_c - x_a) x (x_d - x_b) / |...| of the quadrilaterals whose
    node rows are corners (m, 4) = a, b, c, d (the normal the spring kernel uses)."""
    p = x[corners]
    n = np.cross(p[:, 2] - p[:, 0], p[:, 3] - p[:, 1])
    return n / np.linalg.norm(n, axis=1, keepdims=True)


def spring_stiffness(normal: np.ndarray, k_n: np.ndarray, k_s: np.ndarray) -> np.ndarray:
    """(m, 3, 3) S = K_n n n^T + K_s (I - n n^T) of the springs with unit normals (m, 3) and
    constants k_n, k_s (m,) [N/m]."""
    nn = normal[:, :, None] * normal[:, None, :]
    return k_n[:, None, None] * nn + k_s[:, None, None] * (np.eye(3) - nn)


def rigid_body_modes(x: np.ndarray) -> np.ndarray:
    """(3 n, 6) translations and infinitesimal rotations about the centroid of the points
    x (n, 3): the near null space of an elastic stiffness (unnormalised)."""
    c = x - x.mean(axis=0) if len(x) else x
    modes = np.zeros((len(x), 3, 6))
    modes[:, 0, 0] = modes[:, 1, 1] = modes[:, 2, 2] = 1.0
    modes[:, 0, 3], modes[:, 1, 3] = -c[:, 1], c[:, 0]
    modes[:, 1, 4], modes[:, 2, 4] = -c[:, 2], c[:, 1]
    modes[:, 0, 5], modes[:, 2, 5] = c[:, 2], -c[:, 0]
    return modes.reshape(-1, 6)

