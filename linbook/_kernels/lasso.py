"""Compiled sweeps of the lasso's cyclic coordinate descent (``linbook.linear.lasso``).

Readable reference: ``_CoordinateDescent.sweep`` (one pass over the coordinates,
``w_j <- S(x_j^T r + a_j w_j, lam_j) / a_j`` with ``S`` the soft threshold), tested equal in
``tests/test_linear.py`` (same iterates to rounding, same number of sweeps)::

    gram_sweep(G, a, lam, w, grad)     == sweep() keeping grad = c - G w   (G exactly symmetric)
    residual_sweep(Z, a, lam, w, r)    == sweep() keeping r = z - Z w      (Z Fortran-ordered)
    sparse_residual_sweep(indptr, indices, x, sx, mu, colsum, s, a, lam, w, r, sr)
                                       == sweep() on the CSC columns of X, returns the new sr

All update ``w`` and ``grad`` (or ``r``) in place, as the readable loop does. The Python loop
costs ~5-10 microseconds a coordinate; these cost the ``O(D)`` (Gram), ``O(N)`` (residual) or
``O(nnz of column j)`` (sparse residual) arithmetic. ``G`` is read by rows: the moments mirror
it, so row ``j`` is column ``j``.
"""

import numpy as np

from . import _cache_load  # noqa: F401  (imports numba: before it, see the module)
from numba import njit

# reassociation lets LLVM vectorise the dot product x_j^T r (it differs from numpy's BLAS dot in
# the last bits only); the loop tests no finiteness, so no isfinite is folded (see ``finite.py``)
_FAST = {"reassoc", "contract", "nsz"}


@njit(cache=True, inline="always")
def soft_threshold(z, t):
    """``sign(z) max(|z| - t, 0)``, as ``linbook.linear.lasso.soft_threshold``."""
    return np.sign(z) * max(abs(z) - t, 0.0)


@njit(cache=True, nogil=True)
def gram_sweep(G, a, lam, w, grad):
    """One sweep with the gradient ``grad = Xc^T r`` kept up to date through ``G``."""
    D = w.shape[0]
    for j in range(D):
        if a[j] <= 0.0:
            continue
        wj = w[j]
        new = soft_threshold(grad[j] + a[j] * wj, lam[j]) / a[j]
        if new != wj:
            w[j] = new
            step = new - wj
            row = G[j]
            for k in range(D):
                grad[k] -= step * row[k]


@njit(cache=True, nogil=True, fastmath=_FAST)
def residual_sweep(Z, a, lam, w, r):
    """One sweep with the residual ``r`` kept up to date, on the centred copy ``Z`` (Fortran order)."""
    N, D = Z.shape
    for j in range(D):
        if a[j] <= 0.0:
            continue
        wj = w[j]
        dot = 0.0
        for i in range(N):
            dot += Z[i, j] * r[i]
        new = soft_threshold(dot + a[j] * wj, lam[j]) / a[j]
        if new != wj:
            w[j] = new
            step = new - wj
            for i in range(N):
                r[i] -= step * Z[i, j]


@njit(cache=True, nogil=True, fastmath=_FAST)
def sparse_residual_sweep(indptr, indices, x, sx, mu, colsum, s, a, lam, w, r, sr):
    """One sweep on the stored entries of the CSC columns (``x``; ``sx = s * x``, the weighted ones),
    centring implicitly: ``r`` is the residual up to a constant, ``sr = sum(s r)``, and
    ``xc_j^T S r = x_j^T S r - mu_j sr``. Column ``j``'s step moves ``r`` on its stored rows only and
    the constant by ``step mu_j``, which is added to ``r`` at the end (``s`` empty: all weights 1).
    Returns the new ``sum(s r)``."""
    D = w.shape[0]
    offset = 0.0
    for j in range(D):
        if a[j] <= 0.0:
            continue
        wj = w[j]
        lo, hi = indptr[j], indptr[j + 1]
        dot = 0.0
        for p in range(lo, hi):
            dot += sx[p] * r[indices[p]]
        new = soft_threshold(dot - mu[j] * sr + a[j] * wj, lam[j]) / a[j]
        if new != wj:
            w[j] = new
            step = new - wj
            for p in range(lo, hi):
                r[indices[p]] -= step * x[p]
            sr -= step * colsum[j]
            offset += step * mu[j]
    weighted = s.shape[0] > 0
    total = 0.0
    for i in range(r.shape[0]):
        r[i] += offset
        total += s[i] * r[i] if weighted else r[i]
    return total
