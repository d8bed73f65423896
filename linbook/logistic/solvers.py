"""Solver choice, standardised coordinates and the call into :mod:`linbook.optim`.

Every solver works in *standardised coordinates*: coefficient ``j`` is ``v_j = c_j w_j``
with ``c_j`` the root-mean-square of feature ``j`` (dense ``X``; its largest ``|x_ij|``
for sparse ``X``), so ``X w = (X / c) v`` (the
objective is the same; only the units change, and the first-order methods are far
better conditioned). The stopping rule is in *max-abs units* ``m_j = max_i |x_ij|``:
``max_j |dF/dw_j| / m_j <= tol * sum(sample_weight)``, the gradient of the *mean* NLL with
respect to the coefficients of max-abs-scaled features (so a rare sparse feature is not
held to a stricter test). Both are unit-free: ``coef(X * s) = coef(X) / s``, whatever
``s``. Newton's direction is unit-free anyway.

``solver="auto"`` (the rule, with ``p`` the number of free parameters: ``D + 1``
binary, ``(C - 1)(D + 1)`` multinomial):

* binary dense ``X`` with ``p > 48`` and ``N p >= 1e6``: L-BFGS (about ten gradient passes
  cost less than Newton's Hessians there);
* otherwise binary, ``p <= 300``, or dense ``X`` with ``p <= 1000`` and ``N >= 100 p``: Newton/IRLS
  (its ``N p^2`` Hessian is one blocked SYRK pass over ``X``; ~5-10 steps; insensitive to
  correlated features);
* multinomial: Newton only while the Hessian is cheap, ``N p^2 <= 1e8`` (e.g. iris);
* otherwise (many classes, ``D`` comparable to ``N``, wide sparse ``X``): L-BFGS.

On large binary fits (``p >= 64`` and ``N p^2 >= 1e8``, where a Hessian pass costs four or
more gradient passes) Newton reuses the factor of its last Hessian while the steps keep
shrinking the gradient fourfold (the chord method), and forms Hessians in single precision
while they are well conditioned; the stopping rule is unchanged.

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
        raise ValueError(f"solver must be one of {SOLVERS}; got {solver!r}. Set solver to one of them.")
    if solver == "irls":
        return "newton"        # IRLS is Newton's method for a GLM: one driver
    if solver != "auto":
        return solver
    p = (d + int(fit_intercept)) * (1 if n_classes == 2 else n_classes - 1)
    if n_classes == 2 and not sparse and p > 48 and n * p >= 1e6:
        # measured (issue 22): from ~50 features and a million numbers, L-BFGS's ~10 gradient passes
        # cost less than Newton's Hessians (1e5 x 50: 0.5x Newton's CPU time, 200k x 100: 0.65-0.9x);
        # below, Newton is as fast and does not depend on the conditioning (50k x 40 correlated: 0.6x L-BFGS)
        return "lbfgs"
    if n_classes > 2:
        # the (C-1)^2 blocks of the softmax Hessian cost far more than the binary SYRK
        return "newton" if n * p * p <= 1e8 else "lbfgs"
    if p <= 300 or (not sparse and p <= 1000 and n >= 100 * p):
        return "newton"
    return "lbfgs"


def column_scales(X, weights=None, lam=0.0):
    """``(c, m)``: the preconditioner ``c`` and
    largest absolute value ``m`` over the samples with positive weight (the units of the
    stopping rule, as scikit-learn's ``MaxAbsScaler``: a rare sparse feature counts by
    its size, not by how rarely it occurs). ``c_j^2 = mean_a(x_j^2) + 4 lam / sum(a)`` is
    the diagonal of the penalised Hessian at the start (curvature 1/4 per sample) over
    that of the intercept: a Jacobi preconditioner, the root-mean-square of the feature
    when the data dominate, a constant when the penalty does (dense ``X``, as
    ``StandardScaler``). Sparse ``X`` uses ``c = m`` (as ``MaxAbsScaler``). One pass over
    ``X``; no overflow or underflow for features of 1e-300 to 1e300."""
    n, d = X.shape
    a = np.ones(n) if weights is None else weights
    sw = a.sum()
    Xp = X[np.flatnonzero(a > 0)] if np.any(a == 0) else X
    if scipy.sparse.issparse(X):
        Xp = scipy.sparse.csr_matrix(Xp)
        m = np.asarray(abs(Xp).max(axis=0).todense()).ravel() if Xp.nnz else np.zeros(d)
        m = np.where(m > 0, m, 1.0)
        # sparse: max-abs scaling (as MaxAbsScaler); the root-mean-square of a rare feature
        # is tiny, and dividing by it makes L-BFGS crawl on penalty-dominated text data
        return m, m
    m, ss = np.zeros(d), np.zeros(d)
    with np.errstate(over="ignore", under="ignore"):
        for i, j in block_rows(n, d):
            Xb = X[i:j]
            ss += a[i:j] @ (Xb * Xb)
            if Xp is X:
                np.maximum(m, np.max(np.abs(Xb), axis=0), out=m)
        if Xp is not X:
            m = np.max(np.abs(Xp), axis=0)
        m = np.where(m > 0, m, 1.0)
        c = np.sqrt(ss / sw)
    bad = ~np.isfinite(c) | ((c < 1e-150) & (m > 0))
    if np.any(bad):           # 1e300 or 1e-300 features: divide by the column maximum first
        Xb = X[:, bad] / m[bad]
        c[bad] = m[bad] * np.sqrt(a @ (Xb * Xb) / sw)
    return _jacobi(c, lam, sw), m


def _jacobi(rms, lam, sw):
    # sqrt(rms^2 + 4 lam / sw) without squaring rms: its square under- or overflows for
    # features below 1e-154 or above 1e154 (then c was 1 and Newton could not move)
    c = np.hypot(rms, np.sqrt(4.0 * lam / sw))
    c = np.where(np.isfinite(c), c, rms)
    return np.where(c > 0, c, 1.0)


def gradient_scale(X, weights, c, m, fit_intercept, n_rows=1):
    """Per-coordinate scale of the stopping rule in the coordinates ``v = c w``.

    ``|dF/dw_j| / m_j <= tol * sum(a)`` (max-abs units ``m_j``) is, for ``dF/dv_j =
    (dF/dw_j) / c_j``, ``|dF/dv_j| <= tol * sum(a) * m_j / c_j``; the intercept's scale
    is ``sum(a)``. ``n_rows`` repeats it for each class of a multinomial model.
    """
    n_eff = float(X.shape[0] if weights is None else weights.sum())
    row = np.r_[np.ones(int(fit_intercept)), m / c]
    # tiny weights under a penalty (sum 1e-298, c ~ sqrt(lam / sum)) can underflow the product
    return np.maximum(n_eff * np.tile(row, n_rows), np.finfo(float).tiny)


def scaled_design(X, c):
    """``(X_k, c_k)`` for the kernels: sparse ``X`` is scaled once (its copy is ``nnz``
    long); dense ``X`` is scaled block by block inside the kernels (no copy of ``X``)."""
    if scipy.sparse.issparse(X):
        return (X @ scipy.sparse.diags(1.0 / c)).tocsr(), None
    return X, c


# Newton reuses Hessians (the chord method, ``optim.newton(fun_grad=...)``) when a Hessian
# pass over the data costs several gradient passes and dominates the fit: ``p`` parameters
# at least CHORD_MIN_PARAMS (the SYRK's N p^2 / 2 multiply-adds against the gradient's 2 N p:
# 4.3x a gradient pass at p = 101, 1.3x at p = 11) and N p^2 at least CHORD_MIN_WORK.
# Otherwise every step gets a fresh Hessian and the polishing step squares the final error
# (small fits then agree with statsmodels to ~1e-10).
CHORD_MIN_PARAMS = 64
CHORD_MIN_WORK = 1e8


def reuse_hessian(n_samples, n_params):
    """Should Newton reuse Hessians (and form them in single precision)? See :data:`CHORD_MIN_PARAMS`."""
    return n_params >= CHORD_MIN_PARAMS and n_samples * n_params ** 2 >= CHORD_MIN_WORK


def minimise(solver, fgh, fg, theta0, *, max_iter, tol, gscale, callback=None, reuse_hessian=False):
    """Run the chosen :mod:`linbook.optim` method; ``tol`` is on ``max |g| / gscale``.

    ``reuse_hessian``: Newton's chord method (``optim.newton(fun_grad=fg)``)."""
    kw = dict(max_iter=max_iter, gtol=tol, gscale=gscale)
    if solver == "newton":                 # scale-free: sample weights of 1e300 or 1e-300 are harmless
        return optim.newton(fgh, theta0, grad=True, hess=True, xtol=0.0, callback=callback, polish=True,
                            fun_grad=fg if reuse_hessian else None, **kw)
    # The objective grows with the sample weights; quasi-Newton and gradient steps square the
    # gradient (g'g, y's), which overflows for weights near 1e300 and underflows near 1e-300 (both
    # stopped at the start with a wrong answer). Minimise F / unit instead, unit = the power of two
    # nearest the gradient's own scale (proportional to sum(sample_weight)): same minimiser, same
    # stopping test, exact division. Scales within 1e+-100 square safely and are left as they are.
    unit = float(np.max(gscale))
    unit = 1.0 if 1e-100 <= unit <= 1e100 else float(2.0 ** np.round(np.log2(unit)))

    def fg_in_units(theta):
        f, g = fg(theta)
        return f / unit, g / unit

    kw["gscale"] = gscale / unit
    if solver == "lbfgs":
        res = optim.lbfgs(fg_in_units, theta0, grad=True, **kw)
    elif solver == "bfgs":
        res = optim.bfgs(fg_in_units, theta0, grad=True, **kw)
    else:
        res = optim.gradient_descent(fg_in_units, theta0, grad=True, step="backtracking", **kw)
    res.fun = res.fun * unit
    res.grad = None if res.grad is None else res.grad * unit
    return res


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
