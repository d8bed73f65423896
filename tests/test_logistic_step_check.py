"""The weighted first-order fits' Newton-step check by CG (issue 22): CG stops once a sound bound decides
whether Newton's step is longer than the tolerance, and decides as CG to a 1e-10 residual does."""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse
from sklearn.exceptions import ConvergenceWarning
import pytest

import linbook
from linbook import optim
from linbook.logistic import solvers
from linbook.logistic._scaled import BinaryLoss
from linbook.logistic.binary import logit_terms, probit_terms

STEP_TOL = 1e-4          # sqrt of the default tol


class _CountingProducts:
    """The loss, counting its Hessian products."""

    def __init__(self, loss):
        self.loss, self.products = loss, 0

    def __getattr__(self, name):
        return getattr(self.loss, name)

    def with_hessian_product(self, theta):
        f, g, (hessp, diag) = self.loss.with_hessian_product(theta)

        def counted(u):
            self.products += 1
            return hessp(u)

        return f, g, (counted, diag)


def _weighted_loss(n, d, lam, correlation, seed, fit_intercept=True, terms=logit_terms):
    """A binary loss with sample weights over six decades (1e-3 .. 1e3), columns correlated as asked."""
    rng = np.random.default_rng(seed)
    X = np.sqrt(correlation) * rng.standard_normal((n, 1)) + np.sqrt(1 - correlation) * rng.standard_normal((n, d))
    X *= np.logspace(-1, 1, d)                            # columns in their own units
    z = X @ (rng.standard_normal(d) / np.logspace(-1, 1, d) / np.sqrt(d)) + 0.3
    y = (rng.random(n) < 1 / (1 + np.exp(-z))).astype(float)
    sw = np.exp(rng.uniform(np.log(1e-3), np.log(1e3), n))
    link = "probit" if terms is probit_terms else "logit"
    return BinaryLoss(X, y, sw, lam, fit_intercept, terms, link=link), rng


def _exact_step(loss, theta):
    """max_j |(H^{-1} g)_j| zscale_j from the formed Hessian (and H's condition number)."""
    _, g, H = loss(theta)
    return float(np.max(np.abs(np.linalg.solve(H, g)) * loss.zscale)), float(np.linalg.cond(H))


def _point_with_step(loss, rng, target):
    """A point near the optimum whose exact Newton step is ``target`` long (to 1e-6, by bisection)."""
    p = loss.zscale.size
    opt = optim.newton(loss, np.zeros(p), grad=True, hess=True, gtol=1e-14, gscale=loss.gscale, max_iter=200)
    v = rng.standard_normal(p) / loss.zscale
    lo, hi = 0.0, 1e-3
    while _exact_step(loss, opt.x + hi * v)[0] < target:
        hi *= 2
    while hi - lo > 1e-6 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _exact_step(loss, opt.x + mid * v)[0] < target else (lo, mid)
    return opt.x + hi * v if _exact_step(loss, opt.x + hi * v)[0] > target else opt.x + lo * v


_PROBLEMS = {      # the "ill conditioned" ones: H's condition number 2e4 to 5e4 at the test points
    "well conditioned": dict(n=300, d=150, lam=1.0, correlation=0.0, seed=1),
    "ill conditioned": dict(n=300, d=150, lam=1.0, correlation=0.9, seed=1),
    "wide, ill conditioned": dict(n=200, d=200, lam=0.1, correlation=0.5, seed=2),
    "no intercept": dict(n=300, d=150, lam=1.0, correlation=0.9, seed=3, fit_intercept=False),
    "probit": dict(n=300, d=150, lam=1.0, correlation=0.9, seed=4, terms=probit_terms),
}


@pytest.mark.parametrize("name", list(_PROBLEMS))
def test_the_early_decision_is_the_full_cgs(name):
    """Steps 3 % above and below the tolerance (and 3x, 1/3x): CG stopped by the bounds says long or short
    as CG to 1e-10 and the formed Hessian do, and needs fewer products (old code: every check ran CG to
    1e-10, the products below)."""
    loss, rng = _weighted_loss(**_PROBLEMS[name])
    conds = []
    for factor in (1 / 3, 0.97, 1.03, 3.0):
        theta = _point_with_step(loss, rng, factor * STEP_TOL)
        exact, cond = _exact_step(loss, theta)
        conds.append(cond)
        early, full = _CountingProducts(loss), _CountingProducts(loss)
        early_step = solvers._newton_step_size(early, theta, hessian_products=True, step_tol=STEP_TOL)
        full_step = solvers._newton_step_size(full, theta, hessian_products=True)
        assert (early_step > STEP_TOL) == (full_step > STEP_TOL) == (exact > STEP_TOL) == (factor > 1), factor
        assert early.products < full.products, (factor, early.products, full.products)
        if factor in (1 / 3, 3.0):          # far from the tolerance the bounds decide well before 1e-10
            assert early.products <= 0.5 * full.products, (factor, early.products, full.products)
    if name.startswith("ill") or name.startswith("wide"):
        assert min(conds) > 1e4                # the case is what it says


@pytest.mark.parametrize("name", list(_PROBLEMS))
def test_the_error_bounds_hold(name):
    """|d*_j - d_j| zscale_j <= E_j(r) for any d (residual r = -g - H d): the bound's H0 (intercept column and
    the penalty) is below the loss's Hessian."""
    loss, rng = _weighted_loss(**_PROBLEMS[name])
    theta = rng.standard_normal(loss.zscale.size) * 0.1 / loss.zscale
    _, g, H = loss(theta)
    bound = solvers._cg_error_bounds(loss, loss.with_hessian_product(theta)[2][0])
    d_star = np.linalg.solve(H, -g)
    for scale in (1e-8, 1e-3, 1.0):
        d = d_star + scale * rng.standard_normal(d_star.size) * np.abs(d_star).max()
        err = np.abs(d_star - d) * loss.zscale
        assert np.all(err <= bound(-g - H @ d) * (1 + 1e-8)), scale


def test_without_a_penalty_there_are_no_bounds():
    """lam = 0: no lower bound on H, so CG runs to its 1e-10 residual as before."""
    loss, rng = _weighted_loss(n=300, d=10, lam=0.0, correlation=0.0, seed=5)
    assert solvers._cg_error_bounds(loss, loss.with_hessian_product(np.zeros(11))[2][0]) is None
    theta = _point_with_step(loss, rng, 3 * STEP_TOL)
    early, full = _CountingProducts(loss), _CountingProducts(loss)
    assert (solvers._newton_step_size(early, theta, hessian_products=True, step_tol=STEP_TOL)
            == solvers._newton_step_size(full, theta, hessian_products=True))
    assert early.products == full.products


def test_a_wide_weighted_lbfgs_fit_still_reaches_the_optimum(monkeypatch):
    """1,101 parameters (the check by CG): L-BFGS alone stops where Newton's step is long; the fit resumes
    and ends at scikit-learn's optimum at tight tolerance (objective and probabilities)."""
    from sklearn.linear_model import LogisticRegression as SKLogReg

    rng = np.random.default_rng(6)
    X = rng.standard_normal((1500, 1100))
    y = (rng.random(1500) < 1 / (1 + np.exp(-(X @ (2 * rng.standard_normal(1100) / np.sqrt(1100)) + 0.5)))) * 1.0
    sw = np.exp(rng.uniform(np.log(1e-3), np.log(1e3), 1500))
    steps = []
    size = solvers._newton_step_size
    monkeypatch.setattr(solvers, "_newton_step_size", lambda *a, **k: steps.append(size(*a, **k)) or steps[-1])
    m = linbook.LogisticRegression().fit(X, y, sample_weight=sw)
    assert m.solver_ == "lbfgs" and m.converged_
    assert steps[0] > STEP_TOL >= steps[-1]             # resumed at least once, ended short
    ref = SKLogReg(C=1.0, solver="newton-cholesky", tol=1e-12, max_iter=100).fit(X, y, sample_weight=sw)

    def objective(coef, intercept):
        z = X @ coef + intercept
        return sw @ (np.logaddexp(0, z) - y * z) + 0.5 * coef @ coef

    best = objective(ref.coef_[0], ref.intercept_[0])
    assert objective(m.coef_[0], m.intercept_[0]) <= best * (1 + 1e-9)
    np.testing.assert_allclose(m.predict_proba(X)[:, 1], ref.predict_proba(X)[:, 1], atol=1e-4)


@pytest.mark.parametrize("solver", ["gd", "lbfgs"])
def test_a_stall_at_rounding_counts_only_where_newtons_step_is_short(solver, monkeypatch):
    """An unweighted first-order fit whose line search reports no decrease (optim accepts that at
    1000 gtol) is checked by Newton's step: from a stall claimed far from the optimum Newton's method
    finishes (the reference's answer, after more than the stalled run's 3 steps)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 3))
    y = (X @ [1.0, -2.0, 0.5] + rng.standard_normal(300) > 0).astype(int)
    reference = linbook.LogisticRegression(lam=1.0, solver="newton").fit(X, y)
    real = {"gd": optim.gradient_descent, "lbfgs": optim.lbfgs}[solver]

    stalled = []

    def stalls_early(fg, x0, **kw):          # the real method for 3 steps, then a claimed stall there
        res = real(fg, x0, **{**kw, "max_iter": 3})
        res.converged, res.message = True, optim.result.MSG_NO_DECREASE
        stalled.append(real(fg, x0, **kw).x - res.x)               # how far the stall is from the optimum
        return res

    monkeypatch.setattr(optim, "gradient_descent" if solver == "gd" else "lbfgs", stalls_early)
    early = linbook.LogisticRegression(lam=1.0, solver=solver).fit(X, y)
    assert np.abs(stalled[0]).max() > 1e-3                          # the premise: the stall is far off
    assert early.converged_ and early.n_iter_ > 3
    np.testing.assert_allclose(early.coef_, reference.coef_, rtol=0, atol=1e-6)

    def stalls_at_the_end(fg, x0, **kw):     # the real run, its convergence restated as a stall
        res = real(fg, x0, **kw)
        res.message = optim.result.MSG_NO_DECREASE
        return res

    monkeypatch.setattr(optim, "gradient_descent" if solver == "gd" else "lbfgs", stalls_at_the_end)
    late = linbook.LogisticRegression(lam=1.0, solver=solver).fit(X, y)
    assert late.converged_


def test_the_multinomial_loss_gets_no_bounds_and_its_step_is_the_exact_one():
    """The bounds are proven for the binary loss's H = S + diag(0, lam / c^2) only: the multinomial loss
    (C - 1 intercepts, the penalty kron(I - 1/C, diag(lam / c^2))) gets None under a penalty too (newton-cg's
    fits use this loss at lam = 0, where no bound exists anyway), and its step check is CG to its 1e-10
    residual on the multinomial Hessian products: the length the formed Hessian gives."""
    from linbook.logistic import multinomial
    from linbook.logistic._scaled import ScaledColumns

    rng = np.random.default_rng(2)
    X, y, sw = rng.standard_normal((300, 5)), rng.integers(0, 4, 300), rng.uniform(0.1, 10.0, 300)
    cols = ScaledColumns(X, sw, 1.0, True)
    fgh, fg, products = multinomial._reduced_objective(cols.Xk, cols.ck, cols.c, y, sw, 4, 1.0, True)
    loss = multinomial._Loss(fgh, fg, cols.gradient_scale(3), cols.predictor_scale(3), uneven_rows=True,
                             hessian_product=products)
    theta = 0.1 * rng.standard_normal(18)
    assert solvers._cg_error_bounds(loss, products(theta)[2][0]) is None
    _, g, H = fgh(theta)
    exact = float(np.max(np.abs(np.linalg.solve(H, g)) * loss.zscale))
    got = solvers._newton_step_size(loss, theta, hessian_products=True, step_tol=STEP_TOL)
    assert got == pytest.approx(exact, rel=1e-6)


def _far_row_design(scale=1e6):
    """60 x 3 Gaussian rows and one more, ``scale`` times the first (plus 1e-3 noise): the far row sets every
    column's max-abs unit, and the others enter the gradient test at ``1 / scale``."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3))
    X[-1] = scale * X[0] + 1e-3 * rng.standard_normal(3)
    Xs = (X - X.mean(0)) / X.std(0)
    y = (Xs @ np.linspace(1, -0.5, 3) + rng.standard_normal(60) > 0).astype(int)
    return X, y


@pytest.mark.parametrize("solver", ["newton-cg", "lbfgs", "bfgs"])
def test_a_far_row_does_not_let_the_first_order_methods_stop_early(solver):
    """Session 18 (s18fuzz): without weights the first-order methods skipped Newton's step test, and a row 1e6
    times the others let them meet the gradient test with probabilities 1e-3 .. 1e-2 off, converged_ true."""
    X, y = _far_row_design()
    exact = linbook.LogisticRegression(lam=1e-3, solver="newton", fit_intercept=False, tol=1e-14).fit(X, y)
    fit = linbook.LogisticRegression(lam=1e-3, solver=solver, fit_intercept=False).fit(X, y)
    assert fit.converged_
    assert np.max(np.abs(fit.predict_proba(X) - exact.predict_proba(X))) < 1e-6
    probit = linbook.ProbitRegression(lam=1e-3, solver=solver, fit_intercept=False).fit(X, y)
    probit_exact = linbook.ProbitRegression(lam=1e-3, solver="newton", fit_intercept=False, tol=1e-14).fit(X, y)
    assert np.max(np.abs(probit.predict_proba(X) - probit_exact.predict_proba(X))) < 1e-6


def test_uneven_rows_flags_far_rows_and_weights_only():
    from linbook.logistic._scaled import ScaledColumns, uneven_rows
    X, _ = _far_row_design()
    rng = np.random.default_rng(1)
    for data, expected in [(X, True), (X[:-1], False), (rng.standard_normal((100_000, 1)), False),
                           (rng.lognormal(0.0, 1.0, (5000, 4)), False),
                           (scipy.sparse.random(2000, 300, density=0.01, format="csr", random_state=1), False)]:
        cols = ScaledColumns(data, None, 1.0, True)
        assert uneven_rows(cols.X, None, cols.m) is expected
    cols = ScaledColumns(X[:-1], None, 1.0, True)
    assert uneven_rows(cols.X, np.r_[np.ones(58), 2.0], cols.m)


@pytest.mark.parametrize("solver", ["newton-cg", "lbfgs", "bfgs"])
@pytest.mark.parametrize("lam", [1e-3, 1.0])
def test_multinomial_far_row_is_right(solver, lam):
    """The binary model's far row (above), with three classes. With ``lam > 0`` these solvers ran in the
    symmetric parameters, which have no step test: converged_ with probabilities 5e-6 .. 7.6e-4 off
    (session 18's strict xfail)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((90, 3))
    X[-1] = 1e6 * X[0] + 1e-3 * rng.standard_normal(3)
    Xs = (X - X.mean(0)) / X.std(0)
    y = np.digitize(Xs @ np.linspace(1, -0.5, 3) + rng.standard_normal(90), [-0.5, 0.5])
    exact = linbook.LogisticRegression(lam=lam, solver="newton", fit_intercept=False, tol=1e-14).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = linbook.LogisticRegression(lam=lam, solver=solver, fit_intercept=False).fit(X, y)
    error = np.max(np.abs(fit.predict_proba(X) - exact.predict_proba(X)))
    assert fit.converged_ and error < 1e-6, error


def _softmax_objective(fit, X, y, sw, lam):
    A = X @ fit.coef_.T + fit.intercept_
    m = A.max(axis=1, keepdims=True)
    nll = m[:, 0] + np.log(np.exp(A - m).sum(axis=1)) - A[np.arange(len(y)), y]
    return sw @ nll + 0.5 * lam * np.sum(fit.coef_ ** 2)


@pytest.mark.parametrize("solver", ["newton-cg", "lbfgs", "bfgs"])
@pytest.mark.parametrize("seed", [6, 7, 8])
@pytest.mark.parametrize("n_classes", [3, 4])
@pytest.mark.parametrize("lam", [1e-2, 1.0])
def test_multinomial_weights_over_ten_decades(solver, seed, n_classes, lam):
    """5 % of the rows weigh 1e7, the rest 1e-3, columns of scale 1 and 1e3: the first-order solvers met the
    gradient test (relative to the sum of the weights, so set by the heavy rows) with the light rows unfitted,
    objective up to 150 above Newton's, converged_ true (31 of these 36 fits before session 19). Now each is
    checked by Newton's step in the reduced parameters, and Newton's method finishes where it is long."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((300, 4)) * np.array([1.0, 1e3, 1.0, 1e3])
    y = rng.integers(0, n_classes, 300)
    sw = np.where(rng.random(300) < 0.05, 1e7, 1e-3)
    newton = linbook.LogisticRegression(lam=lam, solver="newton").fit(X, y, sample_weight=sw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = linbook.LogisticRegression(lam=lam, solver=solver).fit(X, y, sample_weight=sw)
    best = _softmax_objective(newton, X, y, sw, lam)
    assert fit.converged_
    assert _softmax_objective(fit, X, y, sw, lam) <= best + 1e-6 * abs(best)
