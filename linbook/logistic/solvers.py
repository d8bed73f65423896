"""Solver choice, standardised coordinates and the call into :mod:`linbook.optim`.

Every solver works in *standardised coordinates*: coefficient ``j`` is ``v_j = c_j w_j``
with ``c_j`` the root-mean-square of feature ``j``, so ``X w = (X / c) v``. The
objective is the same; only the units change. Then the stopping rule
``max |gradient| <= tol * sum(sample_weight)`` (the gradient of the *mean* NLL, in units
of standardised features) gives the same answer, mapped back, whatever the units of
``X``: ``coef(X * s) = coef(X) / s``. Newton's direction is unit-free anyway; the
first-order methods are also far better conditioned this way.

``solver="auto"`` (the rule, with ``p`` the number of free parameters: ``D + 1``
binary, ``(C - 1)(D + 1)`` multinomial):

* ``p <= 300``, or dense ``X`` with ``p <= 1000`` and ``N >= 100 p``: Newton/IRLS (its
  ``N p^2`` Hessian costs a few passes over ``X`` and it converges in ~10 steps);
* otherwise (many classes, ``D`` comparable to ``N``, wide sparse ``X``): L-BFGS.

Derived in: chapter "Optimizers" § "IRLS".
"""

from __future__ import annotations

import numpy as np
import scipy.sparse

from .. import optim
from .._kernels.hessian import block_rows

SOLVERS = ("auto", "irls", "newton", "lbfgs", "bfgs", "gd")
DEFAULT_MAX_ITER = {"newton": 100, "lbfgs": 5000, "bfgs": 2000, "gd": 20000}


def choose_solver(solver, n, d, n_classes, fit_intercept, sparse):
    """The solver ``solver="auto"`` stands for (rule in the module docstring)."""
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}; got {solver!r}")
    if solver == "irls":
        return "newton"        # IRLS is Newton's method for a GLM: one driver
    if solver != "auto":
        return solver
    p = (d + int(fit_intercept)) * (1 if n_classes == 2 else n_classes - 1)
    if p <= 300 or (not sparse and p <= 1000 and n >= 100 * p):
        return "newton"
    return "lbfgs"


def column_scale(X, weights=None):
    """Weighted root-mean-square of each column (1 for an all-zero column).

    Computed without overflow or underflow for features from 1e-300 to 1e300.
    """
    n, d = X.shape
    a = np.ones(n) if weights is None else weights
    sw = a.sum()
    if scipy.sparse.issparse(X):
        X = scipy.sparse.csc_matrix(X)
        m = np.asarray(abs(X).max(axis=0).todense()).ravel()
        m = np.where(m > 0, m, 1.0)
        Xm = X @ scipy.sparse.diags(1.0 / m)
        ms = np.asarray(Xm.multiply(Xm).T @ a).ravel() / sw
        c = m * np.sqrt(ms)
    else:
        with np.errstate(over="ignore", under="ignore"):
            ss = np.zeros(d)
            for i, j in block_rows(n, d):
                Xb = X[i:j]
                ss += a[i:j] @ (Xb * Xb)
            c = np.sqrt(ss / sw)
        bad = ~np.isfinite(c) | (c < 1e-150)
        if np.any(bad):      # rescale by the column maximum first (1e300 or 1e-300 features)
            Xb = X[:, bad]
            m = np.max(np.abs(Xb), axis=0)
            m = np.where(m > 0, m, 1.0)
            c[bad] = m * np.sqrt(a @ ((Xb / m) ** 2) / sw)
    return np.where(c > 0, c, 1.0)


def scaled_design(X, c):
    """``(X_k, c_k)`` for the kernels: sparse ``X`` is scaled once (its copy is ``nnz``
    long); dense ``X`` is scaled block by block inside the kernels (no copy of ``X``)."""
    if scipy.sparse.issparse(X):
        return (X @ scipy.sparse.diags(1.0 / c)).tocsr(), None
    return X, c


def minimise(solver, fgh, fg, theta0, *, max_iter, tol, gscale, callback=None):
    """Run the chosen :mod:`linbook.optim` method; ``tol`` is on ``max |g| / gscale``."""
    kw = dict(max_iter=max_iter, gtol=tol, gscale=gscale)
    if solver == "newton":
        return optim.newton(fgh, theta0, grad=True, hess=True, xtol=0.0, callback=callback,
                            polish=True, **kw)
    if solver == "lbfgs":
        return optim.lbfgs(fg, theta0, grad=True, **kw)
    if solver == "bfgs":
        return optim.bfgs(fg, theta0, grad=True, **kw)
    return optim.gradient_descent(fg, theta0, grad=True, step="backtracking", **kw)


class SeparationWatch:
    """Newton callback: when steps stop shrinking (no quadratic convergence) run the exact
    separation test once, and stop the iteration if the data are separable."""

    def __init__(self, test):
        self.test = test
        self.steps = []
        self.prev = None
        self.separable = False
        self.tested = False

    def __call__(self, x, f, g):
        if self.prev is not None:
            self.steps.append(np.linalg.norm(x - self.prev))
        self.prev = x.copy()
        s = self.steps
        if (not self.tested and len(s) >= 4 and s[-1] >= 0.5 * s[-2] and s[-2] >= 0.5 * s[-3]):
            self.tested = True
            self.separable = self.test()
        return self.separable
