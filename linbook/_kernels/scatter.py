"""Class statistics of a labelled data matrix in one pass each: ranges, sums, scatter.

Readable references (what each function returns, up to rounding; ``Y`` is the one-hot
matrix of the labels ``y``, ``w`` the sample weights, ``o`` the mask of observed
(non-NaN) entries and ``Xs = X * inv_scale`` with NaN read as 0)::

    column_range(X, w)                       == (min, max) over the rows with w > 0, NaN skipped
    class_sums(X, y, C, w, inv_scale)        == (Y.T @ (w * Xs), Y.T @ (w * o))
    class_square_sums(X, y, M, w, inv_scale) == Y.T @ (w * o * (Xs - M[y]) ** 2)
    within_scatter(X, y, M, inv_scale, w)    == R.T @ diag(w) @ R,   R = Xs - M[y]
                 (..., rows=idx)             == the same sum over the rows ``idx`` only

The scales are powers of two (``numerics._power_of_two_scale(m, normal=True)`` of the
columns' largest ``|x|``), so ``X * inv_scale`` is exact: it changes no digit of the
answer, it only keeps ``x**2`` from overflowing for features of size 1e300 (or from
losing digits for features of size 1e-300). ``within_scatter`` reads ``X`` in row blocks
of about 0.5 MB and accumulates ``R_b.T @ R_b`` with BLAS ``syrk`` (half the flops of a
general product, symmetric by construction), one thread per core on contiguous row
chunks (``threads.map_row_chunks``). The three elementwise passes run as numba
loops on large inputs (one read of ``X``, no temporaries) and as the numpy expressions
above on small ones (no compilation for classroom-sized data).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg.blas import dsyrk

from .threads import map_row_chunks

__all__ = ["column_range", "class_sums", "class_square_sums", "within_scatter"]

#: inputs with at least this many entries use the compiled loops
NUMBA_MIN_SIZE = 1 << 18


def _use_numba(X):
    return X.size >= NUMBA_MIN_SIZE


def _weights(w, n):
    return np.ones(n) if w is None else np.ascontiguousarray(w, dtype=np.float64)


def _nb():
    from . import _scatter_nb   # imports numba: only when a large input needs it
    return _scatter_nb


def column_range(X, w=None):
    """Smallest and largest entry of each column over the rows with positive weight (NaN skipped).

    A column with no observed entry gets ``(inf, -inf)``.
    """
    if _use_numba(X):
        return _nb().column_range(np.ascontiguousarray(X), _weights(w, X.shape[0]))
    Xp = X if w is None else X[np.asarray(w) > 0]
    with np.errstate(invalid="ignore"):
        lo = np.fmin.reduce(Xp, axis=0, initial=np.inf)
        hi = np.fmax.reduce(Xp, axis=0, initial=-np.inf)
    return lo, hi


def class_sums(X, y, n_classes, w=None, inv_scale=None):
    """Weighted class sums of ``X * inv_scale`` and weighted counts of the observed entries.

    Returns
    -------
    sums, counts : ndarray, shape (n_classes, D)
    """
    inv = np.ones(X.shape[1]) if inv_scale is None else np.asarray(inv_scale, dtype=float)
    if _use_numba(X):
        return _nb().class_sums(np.ascontiguousarray(X), np.ascontiguousarray(y, dtype=np.intp),
                                int(n_classes), _weights(w, X.shape[0]), inv)
    Y = np.zeros((X.shape[0], n_classes))
    Y[np.arange(X.shape[0]), y] = 1.0 if w is None else w
    obs = ~np.isnan(X)
    Xs = np.where(obs, X * inv, 0.0)
    return Y.T @ Xs, Y.T @ obs.astype(float)


def class_square_sums(X, y, means, w=None, inv_scale=None):
    """Weighted class sums of squared residuals ``(x_ij * inv_scale_j - means[y_i, j])**2`` (NaN skipped)."""
    means = np.asarray(means, dtype=float)
    inv = np.ones(X.shape[1]) if inv_scale is None else np.asarray(inv_scale, dtype=float)
    if _use_numba(X):
        return _nb().class_square_sums(np.ascontiguousarray(X), np.ascontiguousarray(y, dtype=np.intp),
                                       np.ascontiguousarray(means), _weights(w, X.shape[0]), inv)
    R = X * inv - means[y]
    R = np.where(np.isnan(R), 0.0, R)
    Y = np.zeros((X.shape[0], means.shape[0]))
    Y[np.arange(X.shape[0]), y] = 1.0 if w is None else w
    return Y.T @ (R * R)


def within_scatter(X, y, means, inv_scale=None, w=None, rows=None, block_size=None):
    """Within-class scatter ``sum_i w_i (x_i s^-1 - m_{y_i})(x_i s^-1 - m_{y_i})^T`` by blocked ``syrk``.

    Parameters
    ----------
    X : ndarray, shape (N, D), finite
    y : ndarray of int, shape (N,)
        Class index of each row.
    means : ndarray, shape (C, D)
        Class means in the scaled units.
    inv_scale : ndarray, shape (D,), optional
        Column multipliers (powers of two).
    w : ndarray, shape (N,), optional
        Non-negative sample weights.
    rows : ndarray of int, optional
        Sum over these rows only (e.g. the rows of one class).
    block_size : int, optional
        Rows per block (default: about 0.5 MB of float64).

    Returns
    -------
    S : ndarray, shape (D, D), symmetric
    """
    N, D = X.shape
    means = np.asarray(means, dtype=float)
    n = N if rows is None else len(rows)
    step = block_size or max(256, (1 << 16) // max(D, 1))

    def scatter(a, b):                          # rows a..b of the (selected) rows, block by block
        S = np.zeros((D, D), order="F")
        for i in range(a, b, step):
            idx = slice(i, min(i + step, b)) if rows is None else rows[i:min(i + step, b)]
            R = (np.multiply(X[idx], inv_scale, order="C") if inv_scale is not None
                 else np.array(X[idx], dtype=float, order="C"))
            R -= means[y[idx]]
            if w is not None:
                R *= np.sqrt(w[idx])[:, None]
            # R is C-contiguous (b, D): R.T is an F-contiguous (D, b) view, so syrk(trans=0)
            # adds R.T @ R to the upper triangle of S in place, without copying R.
            S = dsyrk(1.0, R.T, beta=1.0, c=S, trans=0, lower=0, overwrite_c=1)
        return S

    S = sum(map_row_chunks(scatter, n))
    iu = np.triu_indices(D, 1)
    S.T[iu] = S[iu]
    return np.ascontiguousarray(S)
