"""Session 30: one or two rows far larger than the others (1e5..1e100 times) in the dense least-squares, ridge and
logistic fits.

Before: ``LinearRegression`` and ``Ridge`` rounded the ordinary rows' share away (in ``X^T X`` and in the centred
copy given to the SVD): with far rows of 1e3..1e140 and weights up to 1e250, 64 and 47 of 100 random problems were
silently wrong (fitted values of the ordinary rows off by up to 89 of y's spread). ``LogisticRegression(lam=0)``
with one row 1e5..1e40 times the others: 7 of 40 silently wrong and 19 of 40 wrongly called separable.
Oracles: the normal equations at 400 digits (mpmath); for the logistic fits the same fit without the far row, which
the far row (classified right there with a margin above 1e4) does not move.
"""

import warnings

import mpmath as mp
import numpy as np
import pytest
import sklearn.linear_model as sk

from linbook import LinearRegression, LogisticRegression, Ridge
from linbook.logistic.separation import separable
from linbook.optim.line_search import _flat_step


def _normal_equations(X, y, sw, lam, intercept):
    """The weighted ridge solution ``[b, w]`` (or ``w``) from the normal equations in 400-digit arithmetic."""
    mp.mp.dps = 400
    A = np.column_stack([np.ones(len(y)), X]) if intercept else X
    p = A.shape[1]
    G, r = mp.matrix(p, p), mp.matrix(p, 1)
    for i in range(len(y)):
        s, row, yi = mp.mpf(float(sw[i])), [mp.mpf(float(v)) for v in A[i]], mp.mpf(float(y[i]))
        for a in range(p):
            r[a] += s * row[a] * yi
            for b in range(p):
                G[a, b] += s * row[a] * row[b]
    for a in range(int(intercept), p):
        G[a, a] += lam
    return np.array([float(v) for v in mp.lu_solve(G, r)])


def _far_problem(seed, low, high, far_weight=False):
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(8, 30)), int(rng.integers(1, 4))
    X = rng.standard_normal((n, p))
    y = X @ rng.standard_normal(p) + 1.0 + 0.1 * rng.standard_normal(n)
    far = rng.choice(n, int(rng.integers(1, 3)), replace=False)
    for k in far:
        X[k] *= 10.0 ** rng.uniform(low, high)
        y[k] *= 10.0 ** rng.uniform(0, 3)
    sw = rng.uniform(0.5, 2.0, n)
    if far_weight:
        sw[rng.integers(n)] *= 10.0 ** rng.uniform(20, 250)
    return X, y, sw, far, bool(rng.random() < 0.7)


@pytest.mark.parametrize("model", ["LinearRegression", "Ridge"])
@pytest.mark.parametrize("seed, low, high, far_weight", [
    (0, 16, 100, False), (1, 16, 100, False), (4, 16, 100, False), (14, 16, 100, False), (27, 16, 100, False),
    (9, 5, 12, False), (14, 5, 12, False), (3, 3, 140, True), (5, 3, 140, True), (8, 3, 140, True)])
def test_far_rows_keep_the_other_rows_digits(model, seed, low, high, far_weight):
    X, y, sw, far, intercept = _far_problem(seed, low, high, far_weight)
    lam = 0.0 if model == "LinearRegression" else 1.0
    fit = (LinearRegression(fit_intercept=intercept) if lam == 0 else Ridge(lam=lam, fit_intercept=intercept))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit.fit(X, y, sample_weight=sw)
    expected = _normal_equations(X, y, sw, lam, intercept)
    got = np.r_[fit.intercept_, fit.coef_] if intercept else fit.coef_
    A = np.column_stack([np.ones(len(y)), X]) if intercept else X
    ordinary = np.setdiff1d(np.arange(len(y)), far)
    assert np.max(np.abs(A[ordinary] @ (got - expected))) <= 1e-8 * np.std(y[ordinary])
    # the far rows' own fitted values, to their own scale
    for k in far:
        assert abs(A[k] @ got - A[k] @ expected) <= 1e-8 * max(abs(y[k]), np.abs(A[k]).max() * np.abs(got).max())


def test_far_rows_with_dependent_columns_warn():
    """Far rows beside exactly dependent columns (no row-by-row full rank): the SVD's answer, with a warning."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 2))
    X = np.column_stack([X, 3.0 * X[:, 0]])
    X[4] *= 1e30
    y = X[:, :2] @ [1.0, -2.0] + 0.1 * rng.standard_normal(30)
    with pytest.warns(UserWarning, match="span more than 1e.08 in squared size and its columns are"):
        LinearRegression().fit(X, y)


def _far_logistic(seed, low=5.0, high=40.0):
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(20, 50)), int(rng.integers(1, 3))
    X = rng.standard_normal((n, p))
    y = (X @ rng.standard_normal(p) + 0.8 * rng.standard_normal(n) > 0).astype(int)
    k = int(rng.integers(n))
    X[k] *= 10.0 ** rng.uniform(low, high)
    return X, y, k


@pytest.mark.parametrize("seed", [0, 2, 3, 5, 6, 8, 9, 12, 14, 15])
def test_logistic_with_a_far_row_is_the_fit_without_it(seed):
    X, y, k = _far_logistic(seed)
    ordinary = np.setdiff1d(np.arange(len(y)), [k])
    oracle = sk.LogisticRegression(C=np.inf, tol=1e-12, max_iter=100_000).fit(X[ordinary], y[ordinary])
    margin = (2 * y[k] - 1) * (X[k] @ oracle.coef_.ravel() + oracle.intercept_[0])
    assert margin > 1e4               # the far row is classified right: it does not move the optimum
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit = LogisticRegression(lam=0.0).fit(X, y)
    assert fit.converged_
    np.testing.assert_allclose(fit.predict_proba(X[ordinary])[:, 1], oracle.predict_proba(X[ordinary])[:, 1],
                               rtol=0, atol=1e-6)


@pytest.mark.parametrize("seed", [4, 7, 18, 19])
def test_logistic_stuck_beside_a_far_row_says_so(seed):
    """Newton cannot see the other rows' curvature below the far row's (lost to rounding in any coordinates) until
    that row's margin passes ~175; where it stops short, the fit must not claim convergence (seed 4 did, with every
    coefficient ~1e-33). Seeds 7, 18, 19 stop short with a warning (known defect: no right answer yet)."""
    X, y, k = _far_logistic(seed)
    ordinary = np.setdiff1d(np.arange(len(y)), [k])
    oracle = sk.LogisticRegression(C=np.inf, tol=1e-12, max_iter=100_000).fit(X[ordinary], y[ordinary])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = LogisticRegression(lam=0.0).fit(X, y)
    right = np.max(np.abs(fit.predict_proba(X[ordinary])[:, 1] - oracle.predict_proba(X[ordinary])[:, 1])) <= 1e-6
    assert right or not fit.converged_


@pytest.mark.parametrize("scale", [1e5, 1e20, 1e34, 1e100])
def test_separation_test_is_not_fooled_by_a_far_row(scale):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((40, 2))
    t = np.where(X @ [1.0, -1.0] + 0.8 * rng.standard_normal(40) > 0, 1.0, -1.0)
    X[7] *= scale
    rms = np.sqrt(np.mean(X ** 2, axis=0))            # the units the fit passes: the far row's
    assert not separable(X, t, True, col_scale=rms)
    assert separable(X, np.where(X @ [1.0, -1.0] > 0, 1.0, -1.0), True, col_scale=rms)


def test_flat_step_doubles_while_the_slope_falls():
    """f = 1e20 + exp(-x / 100): flat to rounding, slope still negative: the step doubles (10 times)."""
    def fg(x):
        return np.array(1e20 + np.exp(-x[0] / 100)), np.array([-np.exp(-x[0] / 100) / 100])
    x = np.array([5.0])
    f, g = fg(x)
    t, new = _flat_step(fg, x, f, g, np.array([1.0]), np.ones(1))
    assert t == 2.0 ** 10 and new is not None
    # a slope that turns: f = 1 + (x - 1)^2 * 1e-20 from 0 along d = 1.5 stops at the first step
    def bowl(x):
        return np.array(1.0 + 1e-20 * (x[0] - 1.0) ** 2), np.array([2e-20 * (x[0] - 1.0)])
    f, g = bowl(np.zeros(1))
    t, new = _flat_step(bowl, np.zeros(1), f, g, np.array([1.5]), np.ones(1))
    assert t == 1.0 and new is not None


def _far_classes(seed, multinomial):
    """The sweep's problem ``seed``: 20..60 rows, 1..3 features, one row 1e5..1e60 times the others."""
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(20, 60)), int(rng.integers(1, 4))
    X = rng.standard_normal((n, p))
    n_classes = int(rng.integers(2, 4)) if multinomial else 2
    score = X @ rng.standard_normal(p) + 0.8 * rng.standard_normal(n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    k = int(rng.integers(n))
    X[k] *= 10.0 ** rng.uniform(5, 60)
    return X, y, k, 0.0 if rng.random() < 0.6 else 1.0


_MULTINOMIAL_LEFT = {23}     # a multinomial fit (lam = 1) still called converged off the optimum (known defect, session 30)


@pytest.mark.parametrize("model, seed", [(m, s) for m in ("ProbitRegression", "LogisticRegression") for s in range(40)
                                         if not (m == "LogisticRegression" and s in _MULTINOMIAL_LEFT)]
                         + [pytest.param("LogisticRegression", s, marks=pytest.mark.xfail(
                             strict=True, reason="known defect: multinomial fit beside a far row")) for s in
                             sorted(_MULTINOMIAL_LEFT)])
def test_converged_beside_a_far_row_means_the_optimum(model, seed):
    """Where the fit without the far row classifies it right with certainty, that fit is the optimum; a fit with
    the far row that says it converged must be it (on old main 14 of 51 such fits were called converged off it)."""
    from linbook import ProbitRegression
    Model = ProbitRegression if model == "ProbitRegression" else LogisticRegression
    X, y, k, lam = _far_classes(seed, multinomial=model == "LogisticRegression")
    ordinary = np.setdiff1d(np.arange(len(y)), [k])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        without = Model(lam=lam).fit(X[ordinary], y[ordinary])
        if without.predict_proba(X[k:k + 1])[0, y[k]] < 1 - 1e-12:
            pytest.skip("the far row is not classified right with certainty: no oracle")
        fit = Model(lam=lam).fit(X, y)
    if fit.converged_:
        np.testing.assert_allclose(fit.predict_proba(X[ordinary]), without.predict_proba(X[ordinary]), rtol=0, atol=1e-6)
