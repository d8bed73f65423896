"""Iteratively reweighted least squares: Newton's method on the logistic loss.

Derived in: chapter "Optimizers" § "IRLS".
"""

from __future__ import annotations

import warnings

import numpy as np

from ..base import NON_NEGATIVE, POSITIVE_INT, SeparableDataWarning, check_param_values
from ..optim.newton import newton
from ..optim.result import _x0, real_array
from .logistic_regression import logistic_loss
from .separation import separable

__all__ = ["irls"]

_SATURATED = 25.0        # a margin above this means p(y_i | x_i) > 1 - 1.4e-11


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
    ``tol * |w|``.

    Returns
    -------
    OptimizeResult
        ``fun`` is the penalised NLL. On separable data with ``lam = 0`` (no finite MLE)
        ``converged`` is False, the message says so and a ``SeparableDataWarning`` is given.

    Derived in: chapter "Optimizers" § "IRLS".
    """
    X = real_array(X, "X")
    y = real_array(y, "y").ravel()
    if X.ndim != 2 or X.shape[0] != y.size:
        raise ValueError("irls: pass X of shape (N, D) and y of shape (N,), with the same N")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
        raise ValueError("irls: X and y must be finite (remove or impute NaN/inf)")
    if not np.all(np.isin(y, (0.0, 1.0))):
        raise ValueError("irls needs labels y in {0, 1}: encode y as 0/1 first")
    check_param_values("irls", {"lam": [NON_NEGATIVE], "max_iter": [POSITIVE_INT], "tol": [NON_NEGATIVE]},
                       {"lam": lam, "max_iter": max_iter, "tol": tol})
    w = np.zeros(X.shape[1]) if w0 is None else _x0(w0, "w0")
    if w.shape != (X.shape[1],):
        raise ValueError(f"irls: w0 has {w.size} entries for the {X.shape[1]} columns of X; pass one per column")

    res = newton(lambda w: logistic_loss(w, X, y, lam), w, grad=True, hess=True, max_iter=max_iter,
                 gtol=tol, xtol=tol)
    saturated = np.any((2 * y - 1) * (X @ res.x) > _SATURATED)
    if lam == 0 and np.isfinite(res.fun) and (saturated or not res.converged):
        if separable(X, 2 * y - 1, fit_intercept=False):
            res.converged = False
            res.message = ("the classes are (quasi-)separable, so the maximum-likelihood estimate "
                           "does not exist (||w|| grows without bound); set lam > 0")
            warnings.warn("irls: " + res.message, SeparableDataWarning, stacklevel=2)
    return res
