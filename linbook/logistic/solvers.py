"""Solver choice and the call into :mod:`linbook.optim`.

The solvers minimise a loss object with the contract of ``logistic_loss``
(:mod:`linbook.logistic._scaled`: the chapter's loss in standardised coordinates); ``X``
never comes here.

``solver="auto"`` (the rule, with ``p`` the number of free parameters: ``D + 1``
binary, ``(C - 1)(D + 1)`` multinomial):

* binary dense ``X`` with ``p > 48`` and ``N p >= 1e6``: L-BFGS (about ten gradient passes
  cost less than Newton's Hessians there);
* otherwise binary, ``p <= 300``, or dense ``X`` with ``p <= 1000`` and ``N >= 100 p``: Newton/IRLS
  (its ``N p^2`` Hessian is one blocked SYRK pass over ``X``; ~5-10 steps; insensitive to
  correlated features);
* multinomial: Newton only while the Hessian is cheap, ``N p^2 <= 1e8`` (e.g. iris);
* binary sparse ``X`` with ``p > 300`` and at most 1 % non-zeros: Newton-CG (:mod:`linbook.optim.newton_cg`: Newton's system
  solved by Jacobi-preconditioned CG from products ``H v``; never forms ``H``);
* otherwise (many classes, ``D`` comparable to ``N``): L-BFGS.

On large binary fits (``p >= 64`` and ``N p^2 >= 1e8``, where a Hessian pass costs four or
more gradient passes) Newton reuses the factor of its last Hessian while the steps keep
shrinking the gradient fourfold (the chord method), and forms Hessians in single precision
while they are well conditioned; the stopping rule is unchanged.

Derived in: chapter "Optimizers" § "IRLS".
"""

from __future__ import annotations

import contextlib

import numpy as np

from .. import optim
from ..optim.newton_cg import conjugate_gradient_step, newton_cg
from .._kernels.cholesky import equilibrated_cholesky, equilibrated_solve
from .._kernels.threads import single_threaded_blas

SOLVERS = ("auto", "irls", "newton", "newton-cg", "lbfgs", "bfgs", "gd")
DEFAULT_MAX_ITER = {"newton": 100, "newton-cg": 200, "lbfgs": 5000, "bfgs": 2000, "gd": 20000}


def choose_solver(solver, n, d, n_classes, fit_intercept, sparse, density=None):
    """The solver that ``LogisticRegression(solver=solver)`` uses for ``n`` samples, ``d`` features,
    ``n_classes`` classes (``"auto"``: the rule in the module docstring; ``"irls"`` is ``"newton"``);
    ``density``: the fraction of non-zeros of sparse ``X`` (``None``: not known).

    Derived in: chapter "Optimizers" § "IRLS".
    """
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}; got {solver!r}. Set solver to one of them.")
    if solver == "irls":
        return "newton"        # IRLS is Newton's method for a GLM: one driver
    if solver == "newton-cg" and n_classes > 2:
        raise ValueError(f"solver='newton-cg' fits two classes; y has {n_classes}. Set solver to 'newton' or "
                         "'lbfgs' (or 'auto') for the multinomial model.")
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
    if n_classes == 2 and sparse and density is not None and density <= NEWTON_CG_MAX_DENSITY:
        return "newton-cg"
    return "lbfgs"


# Newton-CG for sparse binary X. First measured (issue 22) on 100k x 50k Zipf text: 1.4-3.3 s against
# L-BFGS's 9-9.5 s at densities 1e-4 and 3e-4, a tie at 1e-3 on that one sample (so the limit was
# 5e-4). Session 12, nine Zipf problems at densities 1e-3 to 1e-2 (20k-100k rows, 5k-50k columns,
# two seeds): L-BFGS needed 42 to 270 steps as the conditioning moved, Newton-CG 8 to 15. Newton-CG
# took 0.13x to 1.5x L-BFGS's time (geometric mean 0.52x); in 7 of the 9 it stopped at a 10-300x
# smaller gradient, in 2 at a 1.5-1.8x larger one (both sides passed tol 1e-8). L-BFGS's worst case
# was 7.9x Newton-CG's time (50k x 10k at 1e-3). The limit is now 1 %, the densest measured; denser
# "sparse" X keeps L-BFGS.
NEWTON_CG_MAX_DENSITY = 1e-2

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


def minimise(solver, loss, theta0, *, max_iter, tol, callback=None, reuse_hessian=False):
    """Minimise ``loss`` from ``theta0`` with the chosen :mod:`linbook.optim` method.

    ``loss(theta) -> (F, g, H)`` (as :func:`linbook.logistic.logistic_regression.logistic_loss`;
    ``None`` for the first-order methods), ``loss.value_and_gradient(theta) -> (F, g)``;
    ``tol`` is on ``max |g| / loss.gscale`` and on Newton's next step (``loss.zscale``; the first-order
    methods: where ``loss.weights_differ``). ``solver="newton"`` is :func:`linbook.optim.newton`, the one
    Newton driver (``reuse_hessian``: its chord method, ``fun_grad=``).
    """
    # The gradient test is relative to sum(sample_weight): heavy rows that the start already fits
    # make it pass with the light rows' coefficients far off (weights 1e7 and 1e-3: stopped at
    # iteration 0). A loss with a Hessian gives ``zscale`` (how far a unit step moves a linear
    # predictor); Newton then stops only where its next step moves no predictor by more than
    # sqrt(tol), a test that the weights cannot meet for it. The polishing step then takes that
    # error to ~tol. Newton has the test on every fit: it reuses the Hessian it evaluates.
    zscale = getattr(loss, "zscale", None)
    if solver != "newton":
        return _first_order(solver, loss, theta0, max_iter, tol, callback)
    # scale-free: sample weights of 1e300 or 1e-300 are harmless; single-threaded BLAS when every pass,
    # the Hessian's too, runs in row chunks (BinaryLoss says why)
    serial = getattr(loss, "hessian_by_rows", False)
    with single_threaded_blas() if serial else contextlib.nullcontext():
        return optim.newton(loss, theta0, grad=True, hess=True, xtol=0.0, callback=callback, polish=True,
                            fun_grad=loss.value_and_gradient if reuse_hessian else None,
                            step_tol=None if zscale is None else np.sqrt(tol),
                            step_scale=1.0 if zscale is None else zscale,
                            max_iter=max_iter, gtol=tol, gscale=loss.gscale)


def _first_order(solver, loss, theta0, max_iter, tol, callback):
    """:func:`minimise` with L-BFGS, BFGS, gradient descent or Newton-CG."""
    if solver == "newton-cg" and not hasattr(loss, "with_hessian_product"):
        raise ValueError("solver='newton-cg' needs in-memory X with two classes (it is not written for dask "
                         "collections). Set solver to 'newton' or 'lbfgs'.")
    # The objective grows with the sample weights; quasi-Newton and gradient steps square the
    # gradient (g'g, y's), which overflows for weights near 1e300 and underflows near 1e-300 (both
    # stopped at the start with a wrong answer). Minimise F / unit instead, unit = the power of two
    # nearest the gradient's own scale (proportional to sum(sample_weight)): same minimiser, same
    # stopping test, exact division. Scales within 1e+-100 square safely and are left as they are.
    unit = float(np.max(loss.gscale))
    unit = 1.0 if 1e-100 <= unit <= 1e100 else float(2.0 ** np.round(np.log2(unit)))

    def fg_in_units(theta):
        f, g = loss.value_and_gradient(theta)
        return f / unit, g / unit

    method = {"lbfgs": optim.lbfgs, "bfgs": optim.bfgs}.get(solver)
    # single-threaded BLAS for the solver's vector algebra (the two-loop recursion's dot products)
    # when the loss spreads its own passes over the cores (BinaryLoss: dense row chunks, sparse
    # products are serial anyway): multi-threaded BLAS synchronises inside each small call, and on
    # a busy machine a 15,000-long dot product took 10 ms (sparse 30k x 15k: 0.7 s a two-loop
    # recursion). The multinomial loss's large GEMMs keep BLAS's own threads.
    serial = getattr(loss, "parallel_by_rows", False)

    def run(x0, gtol, max_iter):
        kw = dict(max_iter=max_iter, gtol=gtol, gscale=loss.gscale / unit)
        with single_threaded_blas() if serial else contextlib.nullcontext():
            if solver == "newton-cg":
                return newton_cg(_hessian_product_in_units(loss, unit), x0, callback=callback, **kw)
            if method is not None:
                return method(fg_in_units, x0, grad=True, **kw)
            return optim.gradient_descent(fg_in_units, x0, grad=True, step="backtracking", **kw)

    if getattr(loss, "zscale", None) is None or not getattr(loss, "weights_differ", False):
        return _in_units(run(theta0, tol, max_iter), unit)
    # Newton's step test for the first-order methods (optim.resume_until_step_is_short) where the weights
    # are not all equal. Equal weights (none, all ones, all 1e300) leave the gradient test relative to
    # the number of rows, which no few rows can dominate, while the check's Hessian (or CG on Hessian
    # products) at the result costs a good part of a whole fit: forced on the unweighted default (L-BFGS)
    # fits of the `make bench BENCH=logistic` data it made them 1.16x (1e5 x 50), 1.33x (200k x 100),
    # 1.51x (multinomial 100k x 50, 10 classes, lam=0) and 1.82x (5000 x 2000, CG products) as long
    # (medians of 3, same iterations) and never resumed.

    def newton_step(theta):        # how far Newton's next step moves a linear predictor
        return _newton_step_size(loss, theta, hessian_products=solver == "newton-cg")

    res = optim.resume_until_step_is_short(run, theta0, newton_step, step_tol=np.sqrt(tol), gtol=tol,
                                           max_iter=max_iter)
    return _in_units(res, unit)


#: Above this many parameters the step check never forms the Hessian (its ``p^2`` numbers: 8 MB here,
#: 20 GB for sparse text with 50,000 features): Hessian products where the loss has them, else no check.
_DENSE_CHECK_MAX = 1000


def _newton_step_size(loss, theta, hessian_products=False):
    """``max_j |(H^{-1} g)_j| * zscale_j`` at ``theta`` (how far Newton's next step moves a linear
    predictor); ``nan`` where ``H`` is not positive definite, or too large to form and the loss has
    no Hessian products (multinomial with over ``_DENSE_CHECK_MAX`` parameters: not judged)."""
    if theta.size > _DENSE_CHECK_MAX:
        hessian_products = hessian_products or hasattr(loss, "with_hessian_product")
        if not hessian_products:
            return float("nan")
    if hessian_products:                               # never forms H (Newton-CG's sparse fits)
        _, g, (hessp, diag) = loss.with_hessian_product(theta)
        # CG on H d = -g / |g|: its p'Hp squares g, which overflows for weights near 1e200
        gmax = float(np.max(np.abs(g), initial=0.0))
        if not 0.0 < gmax < np.inf:
            return 0.0 if gmax == 0.0 else float("nan")
        d = gmax * conjugate_gradient_step(hessp, g / gmax, 1e-10, 10 * g.size, diag)
    else:
        _, g, H = loss(theta)
        factor = equilibrated_cholesky(H)              # Newton's own factorisation (units-free; None: not PD)
        if factor is None:
            return float("nan")
        d = equilibrated_solve(factor, g)
    return float(np.max(np.abs(d) * loss.zscale, initial=0.0))


def _in_units(res, unit):
    """The result of minimising ``F / unit`` as one of minimising ``F``."""
    res.fun = res.fun * unit
    res.grad = None if res.grad is None else res.grad * unit
    return res


def _hessian_product_in_units(loss, unit):
    """``loss.with_hessian_product`` of ``F / unit``: ``(F, g, (hessp, diag H))``, each divided by ``unit``."""
    def fgh(theta):
        f, g, (hessp, diag) = loss.with_hessian_product(theta)
        return f / unit, g / unit, (lambda u: hessp(u) / unit, None if diag is None else diag / unit)

    return fgh


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
