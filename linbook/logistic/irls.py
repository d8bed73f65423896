"""Iteratively reweighted least squares: Newton's method on the logistic loss.

Derived in: chapter "Optimizers" § "IRLS".
"""

from __future__ import annotations

import warnings

import numpy as np

from ..base import NON_NEGATIVE, POSITIVE_INT, SeparableDataWarning, check_param_values
from ..optim.newton import newton
from ..numerics import _power_of_two_scale
from ..optim.result import _x0, real_array
from .logistic_regression import logistic_loss
from .separation import separable

__all__ = ["irls"]

#: Columns whose largest |x| lies within 2^-64 .. 2^64 are used as they are; beyond, every column is scaled.
_SAFE_COLUMN = 2.0 ** 64


def irls(X, y, w0=None, *, lam=0.0, max_iter=100, tol=1e-10):
    """Iteratively reweighted least squares for logistic regression (Algorithm 8.2 of MLAPP).

    Minimises ``NLL(w) + (lam/2) ||w||^2`` with ``NLL(w) = sum_i [log(1 + exp(w'x_i)) - y_i w'x_i]``
    for ``y_i`` in {0, 1} (no separate intercept: add a column of ones to ``X`` and note
    that ``lam`` then penalises it too). Each step solves the weighted least-squares problem

    ``w_new = argmin sum_i s_i (z_i - w'x_i)^2 + lam ||w||^2``, with weights
    ``s_i = mu_i (1 - mu_i)`` and working response ``z_i = w'x_i + (y_i - mu_i) / s_i``,

    i.e. ``w_new = (X'SX + lam I)^{-1} X'S z``, which is exactly the Newton step
    ``w - H^{-1} g`` with ``g = X'(mu - y) + lam w`` and ``H = X'SX + lam I``
    (``linbook.logistic.logistic_regression.logistic_loss``). It is run by :func:`linbook.optim.newton`
    (Cholesky with a ridge fallback, backtracking), so duplicated columns do not break it.
    Stops when the gradient falls below ``tol`` times its size at ``w0``, or a step below
    ``tol * |w|``. Columns of ``X`` far from 1 (largest ``|x|`` beyond ``2^+-64``) are first
    divided by powers of two (Newton's iterates do not depend on the units of the columns; the
    Hessian's squares of columns near 1e+-154 would over- or underflow).

    Returns
    -------
    OptimizeResult
        ``fun`` is the penalised NLL. On (quasi-)separable data with ``lam = 0`` (no finite MLE:
        one class only, a single sample, ...) ``converged`` is False, the message says so and a
        ``SeparableDataWarning`` is given.

    Derived in: chapter "Optimizers" § "IRLS".
    """
    X, y, w = _irls_inputs(X, y, w0, lam, max_iter, tol)
    s, r = _column_units(X, lam)
    Xs = X / s
    u0 = w * s
    if not np.all(np.isfinite(u0)):
        raise ValueError("irls: w0 times the scale of the columns of X overflows (the scores X @ w0 are beyond "
                         "float64); start nearer the data's scale, e.g. w0=None (zeros)")

    def loss(u):
        F, g, H = logistic_loss(u, Xs, y)
        return F + 0.5 * float(np.sum(r * u * u)), g + r * u, H + np.diag(r)

    res = newton(loss, u0, grad=True, hess=True, max_iter=max_iter, gtol=tol, xtol=tol)
    res.x, res.path = res.x / s, res.path / s
    res.grad = None if res.grad is None else res.grad * s
    if lam == 0 and np.isfinite(res.fun) and separable(Xs, 2 * y - 1, fit_intercept=False):
        res.converged = False
        res.message = ("the classes are (quasi-)separable, so the maximum-likelihood estimate "
                       "does not exist (||w|| grows without bound); set lam > 0")
        warnings.warn("irls: " + res.message, SeparableDataWarning, stacklevel=2)
    return res


def _irls_inputs(X, y, w0, lam, max_iter, tol):
    """``(X, y, w0)`` checked, or a clear error naming the input."""
    X = real_array(X, "X")
    y = real_array(y, "y").ravel()
    if X.ndim != 2 or X.shape[0] != y.size:
        raise ValueError("irls: pass X of shape (N, D) and y of shape (N,), with the same N")
    if X.shape[0] == 0:
        raise ValueError("irls: X and y have no rows; pass at least one sample")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
        raise ValueError("irls: X and y must be finite (remove or impute NaN/inf)")
    if not np.all(np.isin(y, (0.0, 1.0))):
        raise ValueError("irls needs labels y in {0, 1}: encode y as 0/1 first")
    check_param_values("irls", {"lam": [NON_NEGATIVE], "max_iter": [POSITIVE_INT], "tol": [NON_NEGATIVE]},
                       {"lam": lam, "max_iter": max_iter, "tol": tol})
    w = np.zeros(X.shape[1]) if w0 is None else _x0(w0, "w0")
    if w.shape != (X.shape[1],):
        raise ValueError(f"irls: w0 has {w.size} entries for the {X.shape[1]} columns of X; pass one per column")
    return X, y, w


def _column_units(X, lam):
    """``(s, r)``: powers of two ``s_j`` to divide the columns of ``X`` by (all 1 while every column's largest
    ``|x|`` is within ``2^+-64``) and the penalty ``r_j = lam / s_j^2`` of the scaled coefficients ``u = s w``.
    Why: ``X'SX`` squares the columns, so columns near 1e-154 gave a zero Hessian and a "converged" fit far from
    the optimum, and columns near 1e154 an infinite one. A column whose ``lam / s_j^2`` would leave the normal
    range keeps ``s_j = 1`` (there the penalty, not the data, sets the Hessian's scale)."""
    m = np.max(np.abs(X), axis=0, initial=0.0)
    if np.all((m == 0) | ((m >= 1.0 / _SAFE_COLUMN) & (m <= _SAFE_COLUMN))):
        return np.ones(X.shape[1]), np.full(X.shape[1], float(lam))
    s = _power_of_two_scale(m, normal=True)
    with np.errstate(over="ignore", under="ignore"):
        r = lam / s / s
    keep = (lam > 0) & ~((r >= np.finfo(float).tiny) & np.isfinite(r))
    s = np.where(keep, 1.0, s)
    return s, np.where(keep, float(lam), r)
