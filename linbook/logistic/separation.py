"""Exact tests for (quasi-)separation, the case where no finite maximum-likelihood fit exists.

Albert and Anderson (1984): the logistic / probit MLE exists iff the classes are not
(quasi-)completely separated. Each test is a linear program (HiGHS) over the
column-scaled features, so its verdict does not depend on the units of ``X``.

Derived in: chapter "Logistic regression" § "Separable data and l2 regularisation".
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.optimize
import scipy.sparse

from .._kernels.csr import divide_columns
from ..base import SeparableDataWarning
from .._design import typical_magnitudes
from ..numerics import _power_of_two_scale

__all__ = ["separable", "separable_multinomial", "warn_separable"]


def _scaled_rows(X, col_scale, weights):
    if weights is not None:
        keep = np.flatnonzero(weights > 0)       # zero-weight samples do not constrain the fit
        X = X[keep]
    else:
        keep = None
    if col_scale is not None:
        X = divide_columns(X, col_scale) if scipy.sparse.issparse(X) else X / col_scale
    if not scipy.sparse.issparse(X) and X.size:
        X = X / _typical_size(X)
    return X, keep


def _typical_size(X):
    """Each column's typical size (``linbook._design.typical_magnitudes``: a power of two near its median non-zero
    ``|entry|``). The LP's box ``|v_j| <= 1`` weighs the columns by their units; units set by a few far rows (a
    root-mean-square that one row 1e34 times the others decides) shrink every other row's share of each margin
    below HiGHS's tolerance."""
    mag = np.abs(X)
    return typical_magnitudes(mag.max(axis=0), list(mag.T), 2.0 ** 500)


def _unit_rows(A):
    """``A`` with each row divided by a power of two near its largest ``|entry|`` (rows of zeros as they are).

    Dividing a constraint ``a_i'v >= 0`` by a positive number changes no solution, nor the sign of the optimum,
    but it puts every constraint on the scale of HiGHS's feasibility tolerance (1e-7): a row 1e34 times the
    others (columns scaled) left the others' margins ~1e-34, inside the tolerance whatever ``v``, and the test
    called non-separable data separable (the fit then stopped with all but the far row's coefficients ~0)."""
    if scipy.sparse.issparse(A):
        top = abs(A).max(axis=1).toarray().ravel()
        return scipy.sparse.diags(1.0 / _power_of_two_scale(top, normal=True)) @ A
    return A / _power_of_two_scale(np.abs(A).max(axis=1), normal=True)[:, None]


def _linprog(c, A_ub, n_vars):
    try:
        res = scipy.optimize.linprog(c, A_ub=A_ub, b_ub=np.zeros(A_ub.shape[0]), bounds=(-1, 1),
                                     method="highs")
    except ValueError as exc:     # HiGHS refuses the problem (e.g. it is too large)
        raise ValueError(f"the separability test (a linear program) failed: {exc}. Set lam > 0 "
                         "to get a finite fit without the test") from exc
    return res


def separable(X, t, fit_intercept=True, *, col_scale=None, weights=None):
    """Is there ``v != 0`` with ``t_i (x_i'v + c) >= 0`` for every sample (t_i = +-1)?

    The LP maximises ``sum_i t_i (x_i'v + c)`` under these constraints and
    ``|v|, |c| <= 1``; a positive optimum means (quasi-)separation.
    """
    X, keep = _scaled_rows(X, col_scale, weights)
    t = np.asarray(t, dtype=float) if keep is None else np.asarray(t, dtype=float)[keep]
    if scipy.sparse.issparse(X):
        A = scipy.sparse.csr_matrix(X.multiply(t[:, None]))
        if fit_intercept:
            A = scipy.sparse.hstack([scipy.sparse.csr_matrix(t[:, None]), A]).tocsr()
        A = scipy.sparse.csr_matrix(_unit_rows(A))
        col_sum = np.asarray(A.sum(0)).ravel()
        scale = abs(A).sum()
    else:
        A = X * t[:, None]
        if fit_intercept:
            A = np.column_stack([t, A])
        A = _unit_rows(A)
        col_sum = A.sum(0)
        scale = np.abs(A).sum()
    res = _linprog(-col_sum, -A, A.shape[1])
    return bool(res.status == 0 and -res.fun > 1e-7 * max(scale / A.shape[1], 1e-300))


def separable_multinomial(X, yidx, n_classes, fit_intercept=True, *, col_scale=None, weights=None):
    """Multinomial version: is there ``V != 0`` with ``(v_{y_i} - v_k)'x~_i >= 0`` for all i, k?"""
    X, keep = _scaled_rows(X, col_scale, weights)
    yidx = yidx if keep is None else yidx[keep]
    if scipy.sparse.issparse(X):
        X = X.toarray() if X.shape[0] * X.shape[1] <= 5e7 else None
        if X is None:
            raise ValueError("the separability test needs a dense copy of this large sparse X; "
                             "set lam > 0 (the default) to fit without the test")
    n = X.shape[0]
    C = n_classes
    Xt = np.column_stack([np.ones(n), X]) if fit_intercept else X
    p = Xt.shape[1]
    rows, cols, vals = [], [], []
    r = 0
    ii = np.arange(n)
    for k in range(C):
        idx = ii[yidx != k]
        m = idx.size
        rr = np.repeat(np.arange(r, r + m), p)
        jj = np.tile(np.arange(p), m)
        rows += [rr, rr]                                   # -(v_y - v_k)'x <= 0
        cols += [(yidx[idx] * p)[:, None].repeat(p, 1).ravel() + jj, k * p + jj]
        vals += [-Xt[idx].ravel(), Xt[idx].ravel()]
        r += m
    A = scipy.sparse.csr_matrix(_unit_rows(scipy.sparse.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(r, C * p))))
    c = np.asarray(A.sum(0)).ravel()      # minimise the sum of -(margins)
    res = _linprog(c, A, C * p)
    scale = abs(A).sum() / (C * p)
    return bool(res.status == 0 and -res.fun > 1e-7 * max(scale, 1e-300))


def warn_separable(model):
    """Warn that the unregularised MLE does not exist, and say what to do."""
    warnings.warn(
        f"{model}: the classes are (quasi-)separable, so the unregularised maximum-likelihood "
        "estimate does not exist: ||w|| grows without bound and the fitted probabilities "
        "saturate at 0 and 1. The returned coefficients are the last finite iterate. "
        "Set lam > 0 (l2 regularisation, a Gaussian prior) to get a unique finite fit.",
        SeparableDataWarning, stacklevel=5)
