"""Class scores of every row, in row blocks: linear (LDA) and quadratic (QDA).

Readable references (tested equal in ``tests/test_kernels_scatter.py``)::

    linear_scores(X, B, b)                                   == X @ B.T + b
    row_argmax(s)                                            == np.argmax(s, axis=1)
    row_softmax(s)                                           == numerics.softmax(s, axis=1)
    diagonal_log_density(X, inv_scale, mu, prec, const)[i, c]
        == -1/2 sum_{j: x_ij observed} ((x_ij * inv_scale_j - mu_cj)^2 prec_cj + const_cj)
    class_sq_distances(X, inv_scale, center, W, offsets)[i, c]
        == || (x_i * inv_scale - center) @ whiten[c] - offsets[c] ||**2
        == (z_i - m_c)^T Sigma_c^{-1} (z_i - m_c)

with ``whiten[c] = L_c^{-T}`` (``Sigma_c = L_c L_c^T``), ``z = x * inv_scale``,
``offsets[c] = (m_c - center) @ L_c^{-T}`` and ``W = stack_whitening(whiten)``: the C
whitening matrices side by side, so a block of rows is whitened for all classes by a
single GEMM (a triangular solve per class would do half the flops but runs slower in
BLAS). Rows are centred first so that no digits cancel for data far from the origin.
``diagonal_log_density`` is one pass over X (a numba loop on large inputs), never
expanding the square, and skips missing (NaN) entries: that drops their factors.
Both return an (N, C) array in column-major order (the softmax over the classes of a
row is then vectorised over rows), computed on row chunks, one per core
(``threads.map_row_chunks``).
"""

from __future__ import annotations

import numpy as np

from . import scatter
from ..numerics import softmax
from .threads import map_row_chunks

__all__ = ["linear_scores", "row_argmax", "row_softmax", "diagonal_log_density", "stack_whitening", "class_sq_distances"]


def linear_scores(X, B, b):
    """``X @ B.T + b``, shape (N, C), column-major."""
    out = np.empty((X.shape[0], B.shape[0]), order="F")

    def scores(i, j):
        # written as out^T = B X^T: that product is column-major already (no strided copy) and BLAS's wide
        # form (1e6 x 20 rows, 10 classes: 30 ms against 53 ms for X B^T copied into place)
        np.matmul(B, X[i:j].T, out=out[i:j].T)
        out[i:j] += b

    map_row_chunks(scores, X.shape[0])
    return out


def row_argmax(s):
    """``np.argmax(s, axis=1)``: the first column holding each row's largest score.

    For column-major ``s`` (the class scores above) one column at a time: the rows whose maximum
    has not appeared up to column ``c`` add one to their index. A handful of vectorised passes
    over contiguous columns, where ``np.argmax`` over a row of a few classes pays a call per row
    (1e6 x 10: ~20 ms against ~65 ms). A row whose maximum is NaN takes ``np.argmax``'s answer.
    """
    if not s.flags.f_contiguous or s.shape[1] < 2:
        return np.argmax(s, axis=1)
    top = s.max(axis=1)
    first = np.zeros(s.shape[0], dtype=np.int32)     # (int32: half the memory traffic of intp)
    not_yet = np.ones(s.shape[0], dtype=bool)
    for c in range(s.shape[1] - 1):
        not_yet &= s[:, c] != top
        first += not_yet
    nan_rows = np.isnan(top)
    if nan_rows.any():
        first[nan_rows] = np.argmax(s[nan_rows], axis=1)
    return first


def row_softmax(s):
    """``numerics.softmax(s, axis=1)``, the same numbers, computed in place in ``s`` (which it returns) on row
    chunks, one per core.

    The posterior of a Gaussian classifier on 1e6 rows and 10 classes is 1e7 exponentials (~0.1 s on one core)
    and four passes over the scores; the readable ``softmax`` makes three (N, C) temporaries and runs on one
    core. Rows whose maximum is not finite (``+inf``, ``-inf``, NaN) go to ``softmax`` itself, which knows their
    limits and errors.
    """
    if s.dtype != np.float64 or s.ndim != 2 or s.shape[0] == 0:
        return softmax(s, axis=1)
    top = s.max(axis=1, keepdims=True)
    if not np.isfinite(top).all():
        return softmax(s, axis=1)

    def rows(i, j):
        part = s[i:j]
        with np.errstate(under="ignore", over="ignore"):       # -1e308 - 1e308: -inf, probability 0 (softmax's)
            part -= top[i:j]
            np.exp(part, out=part)
        part /= part.sum(axis=1, keepdims=True)

    map_row_chunks(rows, s.shape[0])
    return s


def diagonal_log_density(X, inv_scale, mu, prec, const):
    """Diagonal-Gaussian log-densities up to the terms in ``const``, shape (N, C), column-major."""
    N = X.shape[0]
    C = mu.shape[0]
    out = np.empty((N, C), order="F")
    if X.size >= scatter.NUMBA_MIN_SIZE:
        from ._scores_nb import diagonal_log_density as loop
        X = np.ascontiguousarray(X)
        args = [np.ascontiguousarray(a, dtype=float) for a in (inv_scale, mu, prec, const)]
        work = np.empty((N, C))
        map_row_chunks(lambda a, b: loop(X, *args, work, a, b), N)
        out[:] = work
        return out
    Z = X * inv_scale
    T = (Z[:, None, :] - mu) ** 2 * prec + const
    out[:] = -0.5 * np.where(np.isnan(T), 0.0, T).sum(axis=2)
    return out


def stack_whitening(whiten):
    """(C, D, D) whitening matrices -> the (D, C D) matrix ``[W_1 ... W_C]``."""
    C, D, _ = whiten.shape
    return np.ascontiguousarray(whiten.transpose(1, 0, 2).reshape(D, C * D))


def class_sq_distances(X, inv_scale, center, stacked, offsets, block_size=None):
    """Squared whitened distances, shape (N, C), column-major; see the module docstring."""
    N, D = X.shape
    C = offsets.shape[0]
    off = offsets.reshape(1, C * D)
    step = block_size or max(64, (1 << 17) // (C * D))    # ~1 MB of products per block (in L2)
    out = np.empty((N, C), order="F")

    def distances(a, b):
        for i in range(a, b, step):
            j = min(i + step, b)
            Z = np.multiply(X[i:j], inv_scale, order="C")
            Z -= center
            G = Z @ stacked
            G -= off
            G = G.reshape(j - i, C, D)
            out[i:j] = np.einsum("icd,icd->ic", G, G)

    map_row_chunks(distances, N)
    return out
