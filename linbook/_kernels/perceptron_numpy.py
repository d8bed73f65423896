"""One epoch of the primal perceptron in numpy, with block matrix-vector products (no compiled code).

Readable reference (``linbook.perceptron.perceptron_reference``'s loop; tested equal, update for update
and bit for bit, in ``tests/test_perceptron.py``)::

    updated = primal_epoch(X, t, order, w, b, eta, eta_b)
    ==
    updated = []
    for i in order:
        if t[i] * (X[i] @ w + b[0]) <= 0:        # a mistake
            w += eta * t[i] * X[i]
            b += eta_b * t[i]
            updated.append(i)

with ``t_i = s_i y_i`` (sample weights ``s_i > 0``) and ``eta_b = eta c^2`` (0 without intercept).

That loop makes a few numpy calls on ``d`` numbers per sample. Here one product scores a block of
rows, ``z_i . (w, b)`` with ``z_i = sign(t_i) (x_i, 1)``, against the current weights, and the loop
jumps to the first row of the block that may be a mistake (exact: the rows before it see the same
weights), updates, and scores again from the next row. The block starts small after a mistake and
grows 4 times with every block without one. The updates are the reference's numbers: ``U`` holds
``eta t_i x_i`` and ``eta_b t_i``, each rounded once as the reference rounds it.

A block score may differ from ``X[i] @ w + b`` in the last bits (another summation order), which
matters only within rounding of 0. Any order's score is within ``gamma_{d+1} sum_j |x_ij w_j| +
|b|) <= (d + 1) u R ||(w, b)||`` of the exact value (``R`` the largest ``||(x_i, 1)||``), so with
``beta = 4 (d + 2) eps R B`` (``B >= ||(w, b)||``, a bound kept by the triangle inequality) plus a
floor for underflow, a block score above ``beta`` is surely no mistake and one below ``-beta``
surely one; a score in between (the exact ties of integer data, a zero ``w``) is decided by the
reference's test itself. Rows of weight below ``1e-30`` (whose product with a tiny score could
underflow to 0) and weights whose scores could overflow always go to the reference's test.
"""

from __future__ import annotations

import math

import numpy as np

_EPS = float(np.finfo(np.float64).eps)
_FLOOR = 1e-290       # scores below it may have underflowed: the reference's test decides
_TINY_WEIGHT = 1e-30  # |t_i| below it: t_i * score may underflow to 0, so the reference's test decides
_LARGEST = 1e300      # R ||(w, b)|| above it: the block scores may overflow, the reference's test decides


def primal_epoch(X, t, order, w, b, eta, eta_b):
    """One epoch in ``order``, updating ``w`` and ``b`` (length 1) in place; the list of updated samples."""
    d = X.shape[1]
    with np.errstate(over="ignore"):            # rows never updated may overflow: inf bounds send all to the test
        Z, U = _visited_rows(X, t, order, eta, eta_b)
        norms = np.sqrt(np.einsum("ij,ij->i", U, U)).tolist()       # ||u_i||, for the bound B
        R = math.sqrt(float(np.max(np.einsum("ij,ij->i", X, X), initial=0.0)) + 1.0)
    first = max(4, min(64, 512 // (d + 1)))                         # rows scored after a mistake
    most = max(first, 65536 // (d + 1))
    wb = np.concatenate([w, b])
    bound = math.sqrt(float(wb @ wb))                               # B >= ||(w, b)||
    beta, size, pos, n, updated = _band(R, bound, d), first, 0, order.size, []
    while pos < n:
        m = Z[pos:pos + size].dot(wb)                               # (ndarray.dot: less overhead than @)
        clear = m > beta
        k = int(clear.argmin())                                     # the first row that may be a mistake
        if clear[k]:
            pos, size = pos + m.size, min(4 * size, most)
            continue
        pos += k + 1
        i = order[pos - 1]
        if m[k] < -beta or t[i] * (X[i] @ wb[:d] + wb[d]) <= 0:
            wb += U[pos - 1]                                        # w += eta t_i x_i, b += eta_b t_i
            updated.append(i)
            bound = (bound + norms[pos - 1]) * (1.0 + 4 * _EPS)     # ||a + u|| <= ||a|| + ||u||, rounded up
            beta, size = _band(R, bound, d), first
    w[:], b[0] = wb[:d], wb[d]
    return updated


def _visited_rows(X, t, order, eta, eta_b):
    """``Z`` (rows ``sign(t_i) (x_i, 1)``, 0 for weights below ``_TINY_WEIGHT``) and ``U`` (rows
    ``(eta t_i x_i, eta_b t_i)``), in visiting order."""
    n, d = order.size, X.shape[1]
    Xo, to = X[order], t[order]
    Z, U = np.empty((n, d + 1)), np.empty((n, d + 1))
    sigma = np.sign(to) * (np.abs(to) >= _TINY_WEIGHT)
    np.multiply(Xo, sigma[:, None], out=Z[:, :d])
    Z[:, d] = sigma
    np.multiply(Xo, (eta * to)[:, None], out=U[:, :d])             # (eta t_i) x_ij, as the reference
    U[:, d] = eta_b * to
    return Z, U


def _band(R, bound, d):
    """``beta``: block scores above it are surely no mistake, below ``-beta`` surely one."""
    scale = R * bound
    return 4 * (d + 2) * _EPS * scale + _FLOOR if scale < _LARGEST else math.inf
