"""linbook.linear against scikit-learn, statsmodels and scipy (tolerances stated per test)."""

import numpy as np
import pytest
import statsmodels.api as sm
from sklearn import linear_model as sk
from sklearn.base import clone
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import linbook
from linbook.linear import Lasso, LeastAbsoluteDeviation, LinearRegression, Ridge


def data(n=60, d=4, seed=0, noise=0.5):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * rng.uniform(0.5, 3, d) + rng.normal(0, 2, d)
    y = X @ rng.standard_normal(d) + 1.5 + noise * rng.standard_normal(n)
    return X, y


@pytest.mark.parametrize("shape", [(60, 4), (200, 30), (12, 40)])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_ols_matches_sklearn(shape, fit_intercept):
    X, y = data(*shape)
    a = LinearRegression(fit_intercept=fit_intercept).fit(X, y)
    b = sk.LinearRegression(fit_intercept=fit_intercept).fit(X, y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-8, atol=1e-8)
    assert abs(a.intercept_ - b.intercept_) < 1e-8
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-8, atol=1e-8)


def test_ols_rank_deficient_minimum_norm():
    rng = np.random.default_rng(1)
    Z = rng.standard_normal((30, 3))
    X = np.column_stack([Z, Z[:, 0] + Z[:, 1]])          # collinear column
    y = Z @ [1.0, -2.0, 0.5] + 0.1 * rng.standard_normal(30)
    m = LinearRegression().fit(X, y)
    assert m.rank_ == 3 and m.singular_.shape == (4,)
    Xc, yc = X - X.mean(0), y - y.mean()
    np.testing.assert_allclose(m.coef_, np.linalg.pinv(Xc) @ yc, atol=1e-10)
    # any other minimiser (add a null-space vector) has the same RSS but a larger norm
    null = np.array([1.0, 1.0, 0.0, -1.0])
    other = m.coef_ + 0.3 * null
    np.testing.assert_allclose(Xc @ other, Xc @ m.coef_, atol=1e-10)
    assert np.linalg.norm(other) > np.linalg.norm(m.coef_)


def test_ols_likelihood_matches_statsmodels():
    X, y = data(80, 3, seed=2)
    m = LinearRegression().fit(X, y)
    r = sm.OLS(y, sm.add_constant(X)).fit()
    assert m.log_likelihood(X, y) == pytest.approx(r.llf, rel=1e-10)
    assert m.aic(X, y) == pytest.approx(r.aic, rel=1e-10)
    assert m.bic(X, y) == pytest.approx(r.bic, rel=1e-10)
    m0 = LinearRegression(fit_intercept=False).fit(X, y)
    r0 = sm.OLS(y, X).fit()
    assert m0.log_likelihood(X, y) == pytest.approx(r0.llf, rel=1e-10)
    assert m0.aic(X, y) == pytest.approx(r0.aic, rel=1e-10)


@pytest.mark.parametrize("shape", [(60, 4), (15, 50), (300, 10)])
@pytest.mark.parametrize("lam", [1e-3, 1.0, 50.0])
def test_ridge_matches_sklearn(shape, lam):
    X, y = data(*shape, seed=3)
    for fi in (True, False):
        a = Ridge(lam=lam, fit_intercept=fi).fit(X, y)
        b = sk.Ridge(alpha=lam, fit_intercept=fi, solver="svd").fit(X, y)
        np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-8, atol=1e-8)
        assert abs(a.intercept_ - b.intercept_) < 1e-8


def test_ridge_objective_is_minimised():
    X, y = data(40, 5, seed=4)
    lam = 3.0
    m = Ridge(lam=lam).fit(X, y)
    w, b = m.coef_, m.intercept_
    r = y - X @ w - b
    # gradient of 1/2||r||^2 + lam/2 ||w||^2 vanishes; intercept unpenalised
    np.testing.assert_allclose(-X.T @ r + lam * w, 0, atol=1e-8)
    assert abs(r.sum()) < 1e-8


def test_ridge_lam_zero_is_minimum_norm_least_squares():
    X, y = data(10, 25, seed=5)
    a = Ridge(lam=0.0).fit(X, y)
    b = LinearRegression().fit(X, y)
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-8)


@pytest.mark.parametrize("shape", [(80, 6), (25, 40), (500, 8)])
@pytest.mark.parametrize("frac", [0.05, 0.3, 0.9])
def test_lasso_matches_sklearn(shape, frac):
    X, y = data(*shape, seed=6)
    n = X.shape[0]
    lam_max = np.abs((X - X.mean(0)).T @ (y - y.mean())).max()
    lam = frac * lam_max
    a = Lasso(lam=lam, tol=1e-14, max_iter=100000).fit(X, y)
    b = sk.Lasso(alpha=lam / n, tol=1e-14, max_iter=200000).fit(X, y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-8, atol=1e-8)
    assert abs(a.intercept_ - b.intercept_) < 1e-7
    assert a.dual_gap_ >= -1e-8


def test_lasso_zero_above_lam_max_and_ols_at_zero():
    X, y = data(50, 5, seed=7)
    lam_max = np.abs((X - X.mean(0)).T @ (y - y.mean())).max()
    assert np.all(Lasso(lam=lam_max * 1.0001).fit(X, y).coef_ == 0)
    assert np.any(Lasso(lam=lam_max * 0.99).fit(X, y).coef_ != 0)
    a = Lasso(lam=0.0, tol=1e-14, max_iter=100000).fit(X, y)
    np.testing.assert_allclose(a.coef_, LinearRegression().fit(X, y).coef_, atol=1e-7)


def test_lad_matches_quantreg_and_is_optimal():
    rng = np.random.default_rng(8)
    X = rng.uniform(-2, 2, (101, 2))
    y = X @ [1.0, -0.5] + 0.7 + rng.laplace(0, 0.5, 101)
    m = LeastAbsoluteDeviation().fit(X, y)
    q = sm.QuantReg(y, sm.add_constant(X)).fit(q=0.5, max_iter=5000, p_tol=1e-10)
    obj = lambda w, b: np.abs(y - X @ w - b).sum()
    assert obj(m.coef_, m.intercept_) <= obj(q.params[1:], q.params[0]) + 1e-8
    np.testing.assert_allclose(m.coef_, q.params[1:], atol=1e-3)
    # sklearn's QuantileRegressor (also an LP) gives the same objective value
    r = sk.QuantileRegressor(quantile=0.5, alpha=0.0, solver="highs").fit(X, y)
    assert obj(m.coef_, m.intercept_) == pytest.approx(obj(r.coef_, r.intercept_), rel=1e-9)
    # Laplace log-likelihood at the ML scale b = mean|r|: -N (log 2b + 1)
    b = np.mean(np.abs(y - m.predict(X)))
    assert m.log_likelihood(X, y) == pytest.approx(-101 * (np.log(2 * b) + 1), rel=1e-12)
    assert m.n_params_ == 3


@pytest.mark.parametrize("Est", [LinearRegression, Ridge, Lasso, LeastAbsoluteDeviation])
def test_bad_input(Est):
    X, y = data(20, 3)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError):
        Est().fit(Xn, y)
    yi = y.copy()
    yi[1] = np.inf
    with pytest.raises(ValueError):
        Est().fit(X, yi)
    with pytest.raises(ValueError):
        Est().fit(X, y[:-1])
    with pytest.raises(ValueError):
        Est().fit(X[:, 0], y)           # 1-D X
    m = Est().fit(X, y)
    with pytest.raises(ValueError):
        m.predict(X[:, :2])             # wrong width


def test_bad_parameters():
    X, y = data(20, 3)
    with pytest.raises(ValueError):
        Ridge(lam=-1).fit(X, y)
    with pytest.raises(ValueError):
        Lasso(lam=np.nan).fit(X, y)
    with pytest.raises(ValueError):
        Lasso(max_iter=0).fit(X, y)
    with pytest.raises(ValueError):
        LinearRegression(fit_intercept="yes").fit(X, y)


@pytest.mark.parametrize("est", [LinearRegression(), Ridge(lam=2.0), Lasso(lam=1.0),
                                 LeastAbsoluteDeviation()])
def test_sklearn_plumbing(est):
    X, y = data(60, 3, seed=9)
    c = clone(est)
    assert c.get_params() == est.get_params()
    pipe = make_pipeline(StandardScaler(), c)
    scores = cross_val_score(pipe, X, y, cv=3)
    assert scores.shape == (3,) and np.all(scores > 0.5)
    assert np.isfinite(c.fit(X, y).aic(X, y))


def test_exported():
    for name in ("LinearRegression", "Ridge", "Lasso", "LeastAbsoluteDeviation"):
        assert getattr(linbook, name) is getattr(linbook.linear, name)
