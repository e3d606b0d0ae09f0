"""Force kernels of UBO-Inter (Gallotti et al. 2020): elasto-plastic link forces, equivalent
friction, and the sparse linear system of the rigid-body (RB) link forces. Arrays in, arrays out.

Sign convention for every link force: a positive magnitude is repulsive, i.e. the link (i, j)
pushes i along e_ij = (r_i - r_j)/|r_i - r_j| and j along -e_ij (reciprocity, Gallotti et al. 2020
Eq. 1).
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import MatrixRankWarning, spsolve


class SingularRbSystem(Exception):
    """The RB matrix A of Eq. (9) is singular (redundant or degenerate RB links)."""


def ep_factor(w: np.ndarray, w1: float, w2: float, w3: float, k_max: float,
              k_min: float) -> np.ndarray:
    """The rheological factor k(w) of Gallotti et al. 2020 Eq. (5), with w = (l - l0)/l0 the
    relative lengthening of a link of initial length l0 and current length l.

    With alpha = k_min |w1| / w2 (inferred, docs/references.md, Eq. P1: it makes dk/dw
    continuous at w = 0; the paper leaves alpha unnamed) and k > 0 repulsive::

        k = k_max                                  if w <= w1
        k = min(k_max, alpha (-w) / (w - w1))      if w1 < w < 0      (compression)
        k = -k_min w / w2                          if 0 <= w < w2     (elastic tension)
        k = -k_min (w3 - w) / (w3 - w2)            if w2 <= w < w3    (softening)
        k = 0                                      if w >= w3         (no cohesion left)

    The printed Eq. (5) has a pole at w1 and sign slips between branches; this is the
    continuous law its Fig. 3 describes (repulsion saturating at k_max under shortening,
    attraction peaking at k_min at w2 and vanishing at w3).
    """
    alpha = k_min * abs(w1) / w2
    gap = np.where(w > w1, w - w1, 1.0)
    compression = np.where(w > w1, np.minimum(k_max, alpha * (-w) / gap), k_max)
    tension = np.where(w < w2, -k_min * w / w2,
                       np.where(w < w3, -k_min * (w3 - w) / (w3 - w2), 0.0))
    return np.where(w < 0.0, compression, tension)


def link_geometry(r3: np.ndarray, pairs: np.ndarray):
    """Vectors r_ij = r_i - r_j (K, 3), lengths (K,) and unit vectors e_ij (K, 3)."""
    d = r3[pairs[:, 0]] - r3[pairs[:, 1]]
    length = np.sqrt(np.einsum("kc,kc->k", d, d))
    return d, length, d / length[:, None]


def ep_forces(r3: np.ndarray, m: np.ndarray, pairs: np.ndarray, l0: np.ndarray, g: float,
              law: dict) -> tuple[np.ndarray, np.ndarray]:
    """EP magnitudes p_ij = m_i m_j / (m_i + m_j) g k(w) of Gallotti et al. 2020 Eq. (5) and the
    nodal force vectors (N, 3) they apply."""
    _, length, e = link_geometry(r3, pairs)
    mi, mj = m[pairs[:, 0]], m[pairs[:, 1]]
    p = mi * mj / (mi + mj) * g * ep_factor(length / l0 - 1.0, **law)
    return p, scatter_link_forces(len(m), pairs, p[:, None] * e)


def scatter_link_forces(n: int, pairs: np.ndarray, fvec: np.ndarray) -> np.ndarray:
    """Nodal sums of link forces: +fvec on the first node of each pair, -fvec on the second."""
    out = np.zeros((n, 3))
    for c in range(3):
        out[:, c] = (np.bincount(pairs[:, 0], fvec[:, c], minlength=n)
                     - np.bincount(pairs[:, 1], fvec[:, c], minlength=n))
    return out


def equivalent_friction(mu_w: float, rho_r: float, rho_w: float, c_d: float, g: float,
                        speed: np.ndarray, l_v: np.ndarray) -> np.ndarray:
    """Underwater friction with drag, Gallotti et al. 2020, section 4:
    mu_eq = mu_w + 0.5 (rho_r / rho_w) C_d v^2 / (g l_v), as printed there."""
    return mu_w + 0.5 * (rho_r / rho_w) * c_d * speed ** 2 / (g * l_v)


class RbSystem:
    """The linear system A H = C of Gallotti et al. 2020 Eqs. (6)-(9) for the RB magnitudes h_k.

    Each RB link k = (i, j) keeps l_ij^2 = r_ij . r_ij constant (Eq. 6); differentiating twice,
    (a_i - a_j) . r_ij = -v_ij . v_ij (Eq. 7). The acceleration of mass n is affine in the link
    forces acting on it, a_n = a0_n + M_n (sum_l s_ln h_l e_l) / m_n, with s_ln = +1 if n is
    the first node of link l and -1 otherwise, a0_n the acceleration without RB forces and
    M_n x = x - n_n (n_n . x) + c_n d_n (n_n . x): the surface keeps only the tangential part of
    a force, while its normal part changes the reaction and therefore the friction
    -c_n R_n d_n (c_n = mu_n sign(R_n), d_n the direction of motion). Substituting into Eq. (7)
    gives Eq. (8), one row per RB link:

        sum_l [ sum_{n in k} s_kn s_ln (r_k . M_n e_l) / m_n ] h_l = -|v_k|^2 - (a0_i - a0_j) . r_k

    A couples links sharing a mass, so it is sparse; its pattern is fixed and built once. It is
    factorised by scipy's sparse SuperLU, except for systems of at most ``DENSE_MAX`` links
    (e.g. the sphere-cup rings), where the same entries go to a dense LAPACK solve, which is
    several times faster at that size.
    """

    DENSE_MAX = 16

    def __init__(self, pairs: np.ndarray, n_nodes: int):
        self.pairs = pairs
        self.n = n_nodes
        k = len(pairs)
        link = np.concatenate([np.arange(k), np.arange(k)])
        node = np.concatenate([pairs[:, 0], pairs[:, 1]])
        sign = np.concatenate([np.ones(k), -np.ones(k)])
        order = np.argsort(node, kind="stable")
        link, node, sign = link[order], node[order], sign[order]
        rows, cols, nodes, signs = [], [], [], []
        starts = np.searchsorted(node, np.arange(n_nodes + 1))
        for a in range(n_nodes):
            sl = slice(starts[a], starts[a + 1])
            lk, sg = link[sl], sign[sl]
            rows.append(np.repeat(lk, len(lk)))
            cols.append(np.tile(lk, len(lk)))
            signs.append(np.repeat(sg, len(sg)) * np.tile(sg, len(sg)))
            nodes.append(np.full(len(lk) ** 2, a))
        self.row = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
        self.col = np.concatenate(cols) if cols else np.zeros(0, dtype=np.int64)
        self.node = np.concatenate(nodes) if nodes else np.zeros(0, dtype=np.int64)
        self.sign = np.concatenate(signs) if signs else np.zeros(0)
        key = self.col * k + self.row
        unique, self.slot = np.unique(key, return_inverse=True)
        self.indices = (unique % k).astype(np.int32)
        self.indptr = np.searchsorted(unique // k, np.arange(k + 1)).astype(np.int32)
        self.dense_slot = self.indices.astype(np.int64) * k + unique // k

    def matrix(self, r: np.ndarray, e: np.ndarray, nrm: np.ndarray, b: np.ndarray,
               m: np.ndarray) -> sp.csc_matrix | np.ndarray:
        """A of Eq. (9) for link vectors r (K, 3), unit vectors e (K, 3), node normals (N, 3)
        and b_n = c_n d_n - n_n (N, 3) so that M_n x = x + b_n (n_n . x)."""
        rk, el, nn = r[self.row], e[self.col], self.node
        val = self.sign * (np.einsum("ec,ec->e", rk, el)
                           + np.einsum("ec,ec->e", rk, b[nn])
                           * np.einsum("ec,ec->e", nrm[nn], el)) / m[nn]
        data = np.bincount(self.slot, val, minlength=len(self.indices))
        k = len(self.pairs)
        if k <= self.DENSE_MAX:
            dense = np.zeros((k, k))
            dense.ravel()[self.dense_slot] = data
            return dense
        return sp.csc_matrix((data, self.indices, self.indptr), shape=(k, k))

    def solve(self, r3: np.ndarray, v3: np.ndarray, a0: np.ndarray, nrm: np.ndarray,
              b: np.ndarray, m: np.ndarray, check_rank: bool = False
              ) -> tuple[np.ndarray, np.ndarray]:
        """RB magnitudes h (K,) and their nodal force vectors (N, 3); ``check_rank`` also
        verifies (by SVD) that A has full rank, i.e. no RB link is redundant."""
        i, j = self.pairs[:, 0], self.pairs[:, 1]
        r, _, e = link_geometry(r3, self.pairs)
        dv = v3[i] - v3[j]
        rhs = -np.einsum("kc,kc->k", dv, dv) - np.einsum("kc,kc->k", a0[i] - a0[j], r)
        a = self.matrix(r, e, nrm, b, m)
        if check_rank:
            full = a if isinstance(a, np.ndarray) else a.toarray()
            if np.linalg.matrix_rank(full) < len(rhs):
                raise SingularRbSystem()
        if isinstance(a, np.ndarray):
            try:
                h = np.linalg.solve(a, rhs)
            except np.linalg.LinAlgError:
                raise SingularRbSystem() from None
            return h, scatter_link_forces(self.n, self.pairs, h[:, None] * e)
        with warnings.catch_warnings():
            warnings.simplefilter("error", MatrixRankWarning)
            try:
                h = np.atleast_1d(spsolve(a, rhs))
            except (MatrixRankWarning, RuntimeError):
                raise SingularRbSystem() from None
        if not np.all(np.isfinite(h)):
            raise SingularRbSystem()
        return h, scatter_link_forces(self.n, self.pairs, h[:, None] * e)
