"""Compiled loops of :mod:`linbook._kernels.scatter` (one read of ``X`` each, NaN skipped).

Each function is the loop written out; the numpy expression it equals is in
``scatter``'s module docstring. Compiled on first use and cached on disk.
"""

import numpy as np

from . import _cache_load  # noqa: F401  (imports numba: before it, see the module)
from numba import njit


@njit(cache=True, nogil=True)
def column_range(X, w):
    N, D = X.shape
    lo = np.full(D, np.inf)
    hi = np.full(D, -np.inf)
    for i in range(N):
        if w[i] > 0.0:
            for j in range(D):
                v = X[i, j]
                if v < lo[j]:          # False for NaN: a missing entry is skipped
                    lo[j] = v
                if v > hi[j]:
                    hi[j] = v
    return lo, hi


@njit(cache=True, nogil=True)
def class_sums(X, y, n_classes, w, inv_scale):
    N, D = X.shape
    sums = np.zeros((n_classes, D))
    counts = np.zeros((n_classes, D))
    for i in range(N):
        c = y[i]
        wi = w[i]
        for j in range(D):
            v = X[i, j]
            if v == v:
                sums[c, j] += wi * (v * inv_scale[j])
                counts[c, j] += wi
    return sums, counts


@njit(cache=True, nogil=True)
def class_square_sums(X, y, means, w, inv_scale):
    N, D = X.shape
    out = np.zeros(means.shape)
    for i in range(N):
        c = y[i]
        wi = w[i]
        for j in range(D):
            r = X[i, j] * inv_scale[j] - means[c, j]
            if r == r:
                out[c, j] += wi * (r * r)
    return out
