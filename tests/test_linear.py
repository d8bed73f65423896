"""linbook.linear against scikit-learn, statsmodels and scipy (tolerances stated per test)."""

import warnings

import numpy as np
import pytest
import statsmodels.api as sm
from sklearn import linear_model as sk
from sklearn.base import clone
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import linbook
from sklearn.exceptions import ConvergenceWarning
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


def lasso_objective(X, y, w, b, lam, sw=None):
    r = y - X @ w - b
    return 0.5 * (r @ r if sw is None else sw @ (r * r)) + lam * np.abs(w).sum()


@pytest.mark.parametrize("shape", [(80, 6), (25, 40), (500, 8)])
@pytest.mark.parametrize("frac", [0.05, 0.3, 0.9])
def test_lasso_matches_sklearn(shape, frac):
    X, y = data(*shape, seed=6)
    n = X.shape[0]
    Xc, yc = X - X.mean(0), y - y.mean()
    lam = frac * np.abs(Xc.T @ yc).max()
    tol = 1e-13
    a = Lasso(lam=lam, tol=tol, max_iter=100000).fit(X, y)
    b = sk.Lasso(alpha=lam / n, tol=1e-14, max_iter=200000).fit(X, y)
    # dual_gap_ is relative to the objective P (session 29; before, to ||yc||^2)
    assert a.converged_ and 0.0 <= a.dual_gap_ <= tol
    # the stopping rule bounds the objective gap by tol P; both solvers reach the same minimum value
    fa, fb = (lasso_objective(X, y, m.coef_, m.intercept_, lam) for m in (a, b))
    assert fa <= fb + tol * fa + 64 * np.finfo(float).eps * fb
    if n > X.shape[1]:
        # strong convexity: ||w - w*||^2 <= 2 gap / lambda_min(Xc^T Xc)
        bound = np.sqrt(2 * tol * (yc @ yc) / np.linalg.eigvalsh(Xc.T @ Xc)[0])
        assert np.max(np.abs(a.coef_ - b.coef_)) <= 2 * bound + 1e-12


def test_lasso_zero_above_lam_max_and_ols_at_zero():
    X, y = data(50, 5, seed=7)
    lam_max = np.abs((X - X.mean(0)).T @ (y - y.mean())).max()
    assert np.all(Lasso(lam=lam_max * 1.0001).fit(X, y).coef_ == 0)
    assert np.any(Lasso(lam=lam_max * 0.99).fit(X, y).coef_ != 0)
    a = Lasso(lam=0.0, tol=1e-12, max_iter=100000).fit(X, y)
    assert a.converged_
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


# ---------------------------------------------------------------- solvers and their fallbacks
def test_solver_choice_and_fallbacks():
    X, y = data(200, 5, seed=10)
    assert LinearRegression().fit(X, y).solver_ == "cholesky"
    assert Ridge().fit(X, y).solver_ == "cholesky"
    # collinear columns: the Gram matrix is singular -> SVD least squares, minimum norm
    Xd = np.column_stack([X, X[:, 0] - X[:, 1]])
    m = LinearRegression().fit(Xd, y)
    assert m.solver_ == "gelsd" and m.rank_ == 5
    Xc, yc = Xd - Xd.mean(0), y - y.mean()
    np.testing.assert_allclose(m.coef_, np.linalg.pinv(Xc) @ yc, atol=1e-10)
    # cond(Xc) ~ 1e6 (> 1e4): normal equations would lose half the digits -> gelsd, exact answer
    Xi = X.copy()
    Xi[:, 4] = X[:, 3] + 1e-6 * X[:, 4]
    m = LinearRegression().fit(Xi, y)
    assert m.solver_ == "gelsd" and m.rank_ == 5
    Xc = Xi - Xi.mean(0)
    # (scikit-learn truncates this rank-5 matrix to rank 4 and so misses the minimiser)
    np.testing.assert_allclose(m.coef_, np.linalg.lstsq(Xc, y - y.mean(), rcond=None)[0], rtol=1e-8)
    # wide data: ridge solves the N x N form by Cholesky
    Xw, yw = data(10, 30, seed=11)
    assert Ridge().fit(Xw, yw).solver_ == "cholesky"


def test_ols_singular_values_and_rank_on_fast_path():
    X, y = data(100, 4, seed=12)
    m = LinearRegression().fit(X, y)
    np.testing.assert_allclose(m.singular_, np.linalg.svd(X - X.mean(0), compute_uv=False), rtol=1e-10)
    assert m.rank_ == 4 and m.n_params_ == 5


def test_fit_does_not_copy_X():
    import tracemalloc
    X, y = data(100_000, 20, seed=13)
    for est in (LinearRegression(), Ridge(lam=2.0)):
        tracemalloc.start()
        est.fit(X, y)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert peak < 0.5 * X.nbytes, f"{est}: peak {peak / X.nbytes:.2f} x X"


def test_ridge_df_is_trace_of_hat_matrix():
    X, y = data(50, 6, seed=14)
    lam = 7.0
    m = Ridge(lam=lam).fit(X, y)
    Xc = X - X.mean(0)
    H = Xc @ np.linalg.solve(Xc.T @ Xc + lam * np.eye(6), Xc.T)
    assert m.df_ == pytest.approx(np.trace(H), rel=1e-10)
    assert m.n_params_ == pytest.approx(np.trace(H) + 1, rel=1e-10)
    Xw, yw = data(10, 30, seed=15)
    mw = Ridge(lam=lam).fit(Xw, yw)
    Xc = Xw - Xw.mean(0)
    H = Xc @ np.linalg.solve(Xc.T @ Xc + lam * np.eye(30), Xc.T)
    assert mw.df_ == pytest.approx(np.trace(H), rel=1e-8)


# ---------------------------------------------------------------- sample weights
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_sample_weight_matches_sklearn_and_statsmodels(fit_intercept):
    X, y = data(120, 4, seed=16)
    sw = np.random.default_rng(16).uniform(0.1, 3.0, 120)
    a = LinearRegression(fit_intercept=fit_intercept).fit(X, y, sample_weight=sw)
    b = sk.LinearRegression(fit_intercept=fit_intercept).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-9, atol=1e-10)
    assert a.intercept_ == pytest.approx(b.intercept_, abs=1e-9)
    r = sm.WLS(y, sm.add_constant(X) if fit_intercept else X, weights=sw).fit()
    assert a.log_likelihood(X, y, sample_weight=sw) == pytest.approx(r.llf, rel=1e-10)
    assert a.aic(X, y, sample_weight=sw) == pytest.approx(r.aic, rel=1e-10)
    assert a.bic(X, y, sample_weight=sw) == pytest.approx(r.bic, rel=1e-10)
    a = Ridge(lam=3.0, fit_intercept=fit_intercept).fit(X, y, sample_weight=sw)
    b = sk.Ridge(alpha=3.0, fit_intercept=fit_intercept).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-9, atol=1e-10)
    assert a.intercept_ == pytest.approx(b.intercept_, abs=1e-9)
    lam = 40.0
    a = Lasso(lam=lam, fit_intercept=fit_intercept, tol=1e-13, max_iter=100000).fit(X, y, sample_weight=sw)
    b = sk.Lasso(alpha=lam / sw.sum(), fit_intercept=fit_intercept, tol=1e-14,
                 max_iter=200000).fit(X, y, sample_weight=sw)
    f = lambda m: lasso_objective(X, y, m.coef_, m.intercept_, lam, sw)  # noqa: E731
    assert a.converged_ and f(a) <= f(b) + 1e-13 * np.sum(sw * y * y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("Est", [LinearRegression, Ridge, Lasso, LeastAbsoluteDeviation])
def test_integer_weights_equal_repeated_rows(Est):
    X, y = data(30, 3, seed=17)
    k = np.random.default_rng(17).integers(0, 4, 30)
    k[0] = 1
    a = Est().fit(X, y, sample_weight=k.astype(float))
    b = Est().fit(np.repeat(X, k, axis=0), np.repeat(y, k))
    if Est is LeastAbsoluteDeviation:     # the LAD minimiser need not be unique: compare objectives
        obj = lambda m: k @ np.abs(y - m.predict(X))  # noqa: E731
        assert obj(a) == pytest.approx(obj(b), rel=1e-9)
        r = sk.QuantileRegressor(quantile=0.5, alpha=0.0).fit(X, y, sample_weight=k)
        assert obj(a) <= obj(r) * (1 + 1e-9)
    else:
        np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-6, atol=1e-8)


def test_bad_sample_weight():
    X, y = data(20, 3)
    for bad in (-np.ones(20), np.zeros(20), np.ones(19), np.full(20, np.nan)):
        with pytest.raises(ValueError):
            Ridge().fit(X, y, sample_weight=bad)


# ---------------------------------------------------------------- sparse input
@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_sparse_equals_dense(fmt, fit_intercept, monkeypatch):
    import scipy.sparse as sps
    rng = np.random.default_rng(18)
    Xs = sps.random(300, 8, density=0.3, format=fmt, random_state=18, data_rvs=rng.standard_normal)
    y = Xs @ rng.standard_normal(8) + 2.0 + 0.1 * rng.standard_normal(300)
    sw = rng.uniform(0.5, 2, 300)
    X = Xs.toarray()
    for est in (LinearRegression(fit_intercept=fit_intercept), Ridge(lam=2.0, fit_intercept=fit_intercept)):
        a, b = clone(est).fit(Xs, y, sample_weight=sw), clone(est).fit(X, y, sample_weight=sw)
        np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-9, atol=1e-10)
        assert a.intercept_ == pytest.approx(b.intercept_, abs=1e-9)
        np.testing.assert_allclose(a.predict(Xs), b.predict(X), rtol=1e-9, atol=1e-9)
    # many columns: CG, or (where it does not converge in its iterations) LSQR, on the implicitly
    # centred operator (X is never densified)
    from linbook.linear import _base, _moments
    monkeypatch.setattr(_moments, "MAX_GRAM_FEATURES", 4)
    for solver in ("cg", "lsqr"):
        if solver == "lsqr":
            monkeypatch.setattr(_base, "_CG_MAX_ITER_WITHOUT_GRAM", 0)
        for est in (LinearRegression(fit_intercept=fit_intercept), Ridge(lam=2.0, fit_intercept=fit_intercept)):
            a, b = clone(est).fit(Xs, y, sample_weight=sw), clone(est).fit(X, y, sample_weight=sw)
            assert a.solver_ == solver
            np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-7, atol=1e-8)
            assert a.intercept_ == pytest.approx(b.intercept_, abs=1e-7)


# ---------------------------------------------------------------- scaling (docstring promises)
@pytest.mark.parametrize("s", [1e-300, 1e-150, 1e-12, 1e12, 1e150, 1e300])
def test_scale_equivariance(s):
    X, y = data(40, 3, seed=19)
    a, b = LinearRegression().fit(X * s, y), LinearRegression().fit(X, y)
    np.testing.assert_allclose(a.coef_ * s, b.coef_, rtol=1e-12)
    assert a.intercept_ == pytest.approx(b.intercept_, rel=1e-12)
    # Ridge: (X s, lam) is (X, lam / s^2) divided by s, where lam / s^2 is representable;
    # otherwise the penalty swamps the data and the fit says so
    with np.errstate(over="ignore", under="ignore"):
        ref_lam = 1.5 / np.float64(s) ** 2
    if np.isfinite(ref_lam) and ref_lam > 0:
        r = Ridge(lam=1.5).fit(X * s, y)
        np.testing.assert_allclose(r.coef_ * s, Ridge(lam=ref_lam).fit(X, y).coef_, rtol=1e-10)
    elif s < 1:
        with pytest.raises(ValueError, match="penalty swamps"):
            Ridge(lam=1.5).fit(X * s, y)
    # Lasso: (X s, lam) is (X, lam / s) divided by s
    la = Lasso(lam=5.0 * min(s, 1e300)).fit(X * s, y)
    lb = Lasso(lam=5.0).fit(X, y)
    np.testing.assert_allclose(la.coef_ * s, lb.coef_, rtol=1e-7, atol=1e-9)
    # LAD: same objective value as the unscaled optimum
    l1, l0 = LeastAbsoluteDeviation().fit(X * s, y), LeastAbsoluteDeviation().fit(X, y)
    obj = lambda w, b: np.abs(y - X @ w - b).sum()  # noqa: E731
    assert obj(l1.coef_ * s, l1.intercept_) == pytest.approx(obj(l0.coef_, l0.intercept_), rel=1e-9)


@pytest.mark.parametrize("c", [1e-300, 1e-12, 1e12, 1e300])
def test_target_scaling_and_finite_criteria(c):
    X, y = data(40, 3, seed=20)
    for Est in (LinearRegression, LeastAbsoluteDeviation):
        a, b = Est().fit(X, y * c), Est().fit(X, y)
        np.testing.assert_allclose(a.coef_ / c, b.coef_, rtol=1e-9)
        # log L shifts by -N log c (a change of units): AIC by +2 N log c
        assert a.aic(X, y * c) == pytest.approx(b.aic(X, y) + 2 * 40 * np.log(c), rel=1e-10)
    a, b = Lasso(lam=3.0 * c).fit(X, y * c), Lasso(lam=3.0).fit(X, y)
    np.testing.assert_allclose(a.coef_ / c, b.coef_, rtol=1e-7, atol=1e-9)


# ---------------------------------------------------------------- lasso stopping rule
def test_lasso_converged_only_at_optimum_and_kkt():
    X, y = data(100, 8, seed=21)
    Xc, yc = X - X.mean(0), y - y.mean()
    lam = 0.2 * np.abs(Xc.T @ yc).max()
    m = Lasso(lam=lam, tol=1e-12).fit(X, y)
    assert m.converged_
    g = Xc.T @ (yc - Xc @ m.coef_)
    nz = m.coef_ != 0
    scale = np.sqrt(1e-12 * (yc @ yc) * np.max(np.sum(Xc ** 2, 0))) * 10   # from the gap bound
    np.testing.assert_allclose(g[nz], lam * np.sign(m.coef_[nz]), atol=scale)
    assert np.all(np.abs(g[~nz]) <= lam + scale)
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        m1 = Lasso(lam=lam * 0.01, max_iter=1, tol=1e-12).fit(X, y)
    assert not m1.converged_ and m1.n_iter_ == 1


# ---------------------------------------------------------------- scikit-learn contract
def test_feature_names_and_predict_does_not_write():
    pd = pytest.importorskip("pandas")
    X, y = data(40, 3, seed=22)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    for est in (LinearRegression(), Ridge(), Lasso(), LeastAbsoluteDeviation()):
        est.fit(df, y)
        assert list(est.feature_names_in_) == ["a", "b", "c"]
        before = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in vars(est).items()}
        est.predict(df)
        est.log_likelihood(df, y)
        assert set(vars(est)) == set(before)
        with pytest.warns(UserWarning, match="feature names"):
            est.predict(df[["c", "b", "a"]].to_numpy())
        with pytest.raises(ValueError, match="feature names"):
            est.predict(df[["c", "b", "a"]])


def test_not_fitted():
    from sklearn.exceptions import NotFittedError
    X, _ = data(5, 2)
    for est in (LinearRegression(), Ridge(), Lasso(), LeastAbsoluteDeviation()):
        with pytest.raises(NotFittedError):
            est.predict(X)


def test_lad_lp_failure_is_a_clear_error(monkeypatch):
    from types import SimpleNamespace
    from linbook.linear import lad
    monkeypatch.setattr(lad, "linprog", lambda *a, **k: SimpleNamespace(status=4, x=None, message="Numerical difficulties"))
    X, y = data(20, 2)
    with pytest.raises(ValueError, match="linear programme.*failed.*standardise"):
        LeastAbsoluteDeviation().fit(X, y)


def test_lad_small_features_optimal():
    # raw HiGHS ignores matrix entries below 1e-9: unscaled, these fits were suboptimal
    rng = np.random.default_rng(23)
    X = rng.uniform(-2, 2, (60, 2))
    y = X @ [1.0, -0.5] + 0.7 + rng.laplace(0, 0.5, 60)
    for s in (1e-12, 1e-10, 1e-8):
        m = LeastAbsoluteDeviation().fit(X * s, y)
        q = sk.QuantileRegressor(quantile=0.5, alpha=0.0).fit(X, y)
        obj = np.abs(y - m.predict(X * s)).sum()
        assert obj <= np.abs(y - q.predict(X)).sum() * (1 + 1e-9)


def test_lasso_sparse_equals_dense():
    import scipy.sparse as sps
    X, y = data(120, 5, seed=24)
    X[np.abs(X) < 1.0] = 0.0
    a = Lasso(lam=20.0, tol=1e-13).fit(sps.csr_matrix(X), y)
    b = Lasso(lam=20.0, tol=1e-13).fit(X, y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-9, atol=1e-10)


def test_lasso_correlated_features_converge_by_default():
    from sklearn.datasets import load_diabetes
    X, y = load_diabetes(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    lam = 1e-4 * np.abs(X.T @ (y - y.mean())).max()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        m = Lasso(lam=lam).fit(X, y)
    assert m.converged_ and m.n_iter_ < 1000
    r = sk.Lasso(alpha=lam / len(y), tol=1e-14, max_iter=10**6).fit(X, y)
    f = lambda w, b: lasso_objective(X, y, w, b, lam)  # noqa: E731
    assert f(m.coef_, m.intercept_) <= f(r.coef_, r.intercept_) + 1e-10 * np.sum((y - y.mean()) ** 2)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("lam", [1e-6, 1.0, 1e3])
def test_wide_ridge_n_by_n_form_equals_the_d_by_d_solution(lam, fit_intercept, weighted):
    """N < D: Ridge solves Xc^T (Xc Xc^T + lam I)^-1 yc (N x N); the same w as the SVD of the centred X,
    and df_ = sum s^2 / (s^2 + lam). Small lam too: centring leaves Xc Xc^T singular along the weights'
    direction, which must not send the fit to the fallback."""
    X, y = data(40, 300, seed=31)
    sw = np.exp(np.random.default_rng(2).uniform(np.log(1e-3), np.log(1e3), 40)) if weighted else np.ones(40)
    m = Ridge(lam=lam, fit_intercept=fit_intercept).fit(X, y, sample_weight=sw if weighted else None)
    assert m.solver_ == "cholesky"
    xm = sw @ X / sw.sum() if fit_intercept else np.zeros(300)
    ym = sw @ y / sw.sum() if fit_intercept else 0.0
    r = np.sqrt(sw)
    U, s, Vt = np.linalg.svd((X - xm) * r[:, None], full_matrices=False)
    w = Vt.T @ (s / (s ** 2 + lam) * (U.T @ ((y - ym) * r)))
    np.testing.assert_allclose(m.coef_, w, rtol=0, atol=1e-9 * np.abs(w).max())
    np.testing.assert_allclose(m.intercept_, ym - xm @ w, rtol=1e-9, atol=1e-9)
    keep = s > s.max() * 300 * np.finfo(float).eps
    np.testing.assert_allclose(m.df_, np.sum(s[keep] ** 2 / (s[keep] ** 2 + lam)), rtol=1e-8)


def test_wide_ridge_forms_no_d_by_d_matrix():
    """30 x 3000: the fit's temporaries stay near the size of X (0.7 MB); a D x D array would be 72 MB.
    (The fit with one scale per column solved the stacked (N + D) x D least-squares problem: 73 MB and
    minutes at 200 x 5000.)"""
    import tracemalloc
    X, y = data(30, 3000, seed=32)
    Ridge(lam=1.0).fit(X, y)            # imports and caches outside the measurement
    tracemalloc.start()
    try:
        Ridge(lam=1.0).fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * X.nbytes


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_wide_least_squares_n_by_n_form_is_the_minimum_norm_solution(fit_intercept, weighted):
    """N < D: LinearRegression (and Ridge(lam=0)'s answer) is Xc^T (Xc Xc^T)^-1 yc, the minimum-norm
    minimiser, by the N x N Cholesky shared with Ridge; rank_ and singular_ as the SVD's (N values).
    Centring's null direction must not send the fit to the SVD fallback."""
    X, y = data(40, 300, seed=33)
    sw = np.exp(np.random.default_rng(3).uniform(np.log(1e-3), np.log(1e3), 40)) if weighted else np.ones(40)
    m = LinearRegression(fit_intercept=fit_intercept).fit(X, y, sample_weight=sw if weighted else None)
    assert m.solver_ == "cholesky" and m.rank_ == 40 - fit_intercept
    xm = sw @ X / sw.sum() if fit_intercept else np.zeros(300)
    ym = sw @ y / sw.sum() if fit_intercept else 0.0
    r = np.sqrt(sw)
    U, s, Vt = np.linalg.svd((X - xm) * r[:, None], full_matrices=False)
    keep = s > s.max() * 300 * np.finfo(float).eps
    w = Vt[keep].T @ ((U[:, keep].T @ ((y - ym) * r)) / s[keep])
    np.testing.assert_allclose(m.coef_, w, rtol=0, atol=1e-9 * np.abs(w).max())
    np.testing.assert_allclose(m.intercept_, ym - xm @ w, rtol=1e-9, atol=1e-9)
    assert m.singular_.shape == (40,)
    np.testing.assert_allclose(m.singular_[keep], s[keep], rtol=1e-8)
    np.testing.assert_allclose(Ridge(lam=0.0, fit_intercept=fit_intercept).fit(X, y, sample_weight=sw).coef_, w,
                               rtol=0, atol=1e-9 * np.abs(w).max())


def test_wide_least_squares_falls_back_to_gelsd_on_dependent_rows():
    """Two equal rows: Xc Xc^T is singular beyond centring's direction; the SVD's minimum-norm answer."""
    X, y = data(20, 60, seed=34)
    X[7], y[7] = X[3], y[3]
    m = LinearRegression().fit(X, y)
    assert m.solver_ == "gelsd" and m.rank_ == 18
    Xc = X - X.mean(0)
    np.testing.assert_allclose(m.coef_, np.linalg.lstsq(Xc, y - y.mean(), rcond=None)[0], rtol=0,
                               atol=1e-9 * np.abs(m.coef_).max())
    assert m.singular_.shape == (20,)


def test_wide_least_squares_forms_no_d_by_d_matrix():
    """30 x 3000 with features of size ~1e3 (a common scale other than 1): temporaries near the size of X
    (0.7 MB); singular_ on the old fallback formed Z^T Z, 72 MB."""
    import tracemalloc
    X, y = data(30, 3000, seed=35)
    X *= 1e3
    LinearRegression().fit(X, y).singular_
    tracemalloc.start()
    try:
        LinearRegression().fit(X, y).singular_
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * X.nbytes


@pytest.mark.parametrize("s", [1e-300, 1e300])
def test_wide_X_scale_equivariance(s):
    X, y = data(10, 30, seed=25)
    b = LinearRegression().fit(X, y)
    for est, ref in ((LinearRegression(), b), (Ridge(lam=0.0), b), (Lasso(lam=20.0 * s), Lasso(lam=20.0).fit(X, y))):
        a = est.fit(X * s, y)
        np.testing.assert_allclose(a.coef_ * s, ref.coef_, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("lam", [1e-3, 1.0])
def test_wide_X_with_one_huge_column_fits_the_others(lam):
    """Fewer rows than columns, one column of 1e200: a scale common to all columns left the others
    1e-200 in scaled units, and Ridge and Lasso fitted them as zero (converged)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((4, 5))
    y = X[:, 1] - 2 * X[:, 2] + 0.5 * X[:, 3]
    X[:, 0] *= 1e200
    Xc, yc = X - X.mean(0), y - y.mean()
    c = np.abs(Xc).max(0)                                # the oracle on unit-scale columns
    ridge = np.linalg.lstsq(np.vstack([Xc / c, np.diag(np.sqrt(lam) / c)]), np.r_[yc, np.zeros(5)], rcond=None)[0] / c
    np.testing.assert_allclose(Ridge(lam=lam).fit(X, y).coef_, ridge, rtol=1e-10)
    lasso = Lasso(lam=0.0).fit(X, y)
    np.testing.assert_allclose(X @ lasso.coef_ + lasso.intercept_, y, rtol=0, atol=1e-8)


@pytest.mark.parametrize("est", [LinearRegression(), Ridge(lam=1e-300), Lasso(lam=0.0)], ids=repr)
def test_coefficients_below_the_float_range_are_an_error(est):
    """y of 1e-150 on x of 1e200: the slope, ~2e-350, is not a float64. It became 0 with an intercept
    computed from the unrounded value (worse than predicting mean(y)); now an error as for overflow."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal(20) + 3.0
    y = (2.0 * x + 0.01 * rng.standard_normal(20)) * 1e-150
    with pytest.raises(ValueError, match="coefficients underflow float64.*Rescale y"):
        est.fit((x * 1e200)[:, None], y)
    np.testing.assert_allclose(clone(est).fit(x[:, None], y).coef_, [2e-150], rtol=1e-2)   # in range: fine


def test_lad_with_weights_over_nine_decades_interpolates_when_it_can():
    """4 rows, 5 columns: an exact fit exists. Centring on the weighted means put every column on the heavy
    row, leaving the other rows entries near 1e-9 that HiGHS drops; the fit was worse than a constant."""
    X = np.array([[-1.0, -0.97865434, 0.0, 0.31958833, 0.19122456],
                  [-1.0, 0.82090875, 1.0, -1.39630136, -0.41790255],
                  [-1.0, 0.51818660, 0.0, -0.87567371, -1.15643489],
                  [3.0, -1.41584850, 0.0, -0.28828220, 1.00169651]])
    y = np.array([-0.17759045, -2.30018132, -1.61989618, 3.13508430])
    sw = np.array([1.7376e3, 2.0874e-1, 5.6247e5, 2.1826e-4])
    m = LeastAbsoluteDeviation().fit(X, y, sample_weight=sw)
    assert np.sum(sw * np.abs(y - m.predict(X))) <= 1e-8 * np.sum(sw * np.abs(y))


@pytest.mark.parametrize("offset", [0.0, 5.0, 1e6])
def test_centring_is_accurate_for_large_means(offset):
    # means far from zero make X^T X - N m m^T cancel; the Gram is then centred block by block
    rng = np.random.default_rng(26)
    X = rng.standard_normal((500, 4)) + offset
    y = X @ [1.0, -1.0, 0.5, 2.0] + rng.standard_normal(500)
    Xc, yc = X - X.mean(0), y - y.mean()
    ref = np.linalg.lstsq(Xc, yc, rcond=None)[0]
    np.testing.assert_allclose(LinearRegression().fit(X, y).coef_, ref, rtol=1e-9)
    ref_r = np.linalg.solve(Xc.T @ Xc + 3.0 * np.eye(4), Xc.T @ yc)
    np.testing.assert_allclose(Ridge(lam=3.0).fit(X, y).coef_, ref_r, rtol=1e-9)


def test_weighted_aic_only_where_defined():
    X, y = data(30, 2, seed=27)
    w = np.ones(30)
    assert np.isfinite(LinearRegression().fit(X, y).aic(X, y, sample_weight=w))
    with pytest.raises(ValueError, match="takes no sample_weight"):
        LeastAbsoluteDeviation().fit(X, y).aic(X, y, sample_weight=w)


def test_lad_feature_offset_only_moves_the_intercept():
    """LAD with an intercept is translation invariant; at an offset of 1e8 HiGHS failed."""
    rng = np.random.default_rng(9)
    X = rng.normal(size=(300, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + rng.laplace(size=300)
    ref = linbook.LeastAbsoluteDeviation().fit(X, y)
    Xo = X.copy()
    Xo[:, 1] += 1e8
    m = linbook.LeastAbsoluteDeviation().fit(Xo, y)
    np.testing.assert_allclose(m.coef_, ref.coef_, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(m.predict(Xo), ref.predict(X), atol=1e-5)


def test_lasso_polishes_only_supports_within_the_rank(monkeypatch):
    """A wide fit at small lam passes through supports larger than rank(Xc) = N - 1, where G_AA is
    singular: no polish is tried there (each was a k x k solve, 93 % of a 500 x 5000 fit). Small
    problems polish whenever the signs allow (the period is one sweep)."""
    from linbook.linear import lasso as lasso_module

    sizes = []
    real = lasso_module._polish

    def recording(GA, *args):
        sizes.append(GA.shape[0])
        return real(GA, *args)

    monkeypatch.setattr(lasso_module, "_polish", recording)
    X, y = data(20, 200, seed=36)
    lam = 1e-3 * np.max(np.abs((X - X.mean(0)).T @ (y - y.mean())))
    m = Lasso(lam=lam, max_iter=20000).fit(X, y)
    assert m.converged_ and 0 < np.count_nonzero(m.coef_) <= 19
    assert sizes and max(sizes) <= 19
    mom = lasso_module.moments(m, X, y, None, gram=False, common_scale=False)
    cd = lasso_module._CoordinateDescent(mom, np.full(200, lam), "residual")
    assert cd.polish_period(19) == 1


# ---------------------------------------------------------------- the exactly centred Gram, in row chunks
@pytest.mark.parametrize("case", ["weighted", "offsets", "scaled"])
def test_dense_gram_in_row_chunks_equals_the_readable_centred_gram(case):
    """``Moments``' blockwise, chunked Gram (>= 2 chunks of several blocks) equals ``Xc^T W Xc`` in numpy."""
    from linbook.linear._moments import Moments
    rng = np.random.default_rng(31)
    n, d = 30_000, 40                 # 3 blocks of rows, 2 chunks on a 2-core machine
    X = rng.standard_normal((n, d))
    sw = np.exp(rng.uniform(np.log(1e-3), np.log(1e3), n)) if case == "weighted" else None
    if case == "offsets":
        X += 1e3 * rng.standard_normal(d)      # means far beyond the spread: exact centring, no rank-one update
    if case == "scaled":
        X[:, :3] *= 1e200                     # the raw Gram overflows: columns scaled by powers of two
    y = X[:, 3:8] @ rng.standard_normal(5) + rng.standard_normal(n)
    mo = Moments(X, y, sw, True)
    w = np.ones(n) if sw is None else sw
    Xs = X / mo.x_scale
    Xc = Xs - (w @ Xs) / w.sum()
    yc = y - (w @ y) / w.sum()
    G, c = Xc.T @ (w[:, None] * Xc), Xc.T @ (w * yc)
    assert np.array_equal(mo.G, mo.G.T)
    np.testing.assert_allclose(mo.G, G, rtol=1e-10, atol=1e-10 * np.max(np.abs(np.diag(G))))
    np.testing.assert_allclose(mo.c, c, rtol=1e-9, atol=1e-9 * np.max(np.abs(c)))


def test_dense_gram_blocks_run_with_one_blas_thread(monkeypatch):
    """The exactly centred Gram's many small block products run with one BLAS thread per chunk: BLAS's own
    threads synchronise in every small call, and on a busy machine a weighted 200,000 x 50 Ridge fit
    took 1-1.4 s that way (0.06-0.09 s on one thread)."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from linbook.linear import _moments
    seen = []
    rows = _moments._rows

    def spy(X, i, j):
        seen.append(max(m["num_threads"] for m in threadpoolctl.threadpool_info() if m["user_api"] == "blas"))
        return rows(X, i, j)
    monkeypatch.setattr(_moments, "_rows", spy)
    rng = np.random.default_rng(32)
    X = rng.standard_normal((20_000, 30))
    Ridge(lam=1.0).fit(X, X[:, 0] + rng.standard_normal(20_000), sample_weight=rng.uniform(0.1, 10, 20_000))
    assert seen and max(seen) == 1


def test_lasso_gap_is_never_negative_and_its_warning_names_the_failed_test():
    """Session 18: with lam = 0 (or below rounding) an unconverged fit reported dual_gap_ = -0.032 and warned
    "relative duality gap -3.2e-02 > tol": the dual point was infeasible, so that number bounded nothing."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 5))
    X[:, 1] = X[:, 0] + 0.01 * X[:, 1]
    y = X @ np.ones(5) + rng.standard_normal(200)
    for lam in (0.0, 1e-300):
        with pytest.warns(ConvergenceWarning, match="normal equations") as record:
            m = linbook.Lasso(lam=lam, max_iter=1).fit(X, y)
        assert "duality gap -" not in str(record[0].message)
        assert m.dual_gap_ == np.inf and not m.converged_
        m = linbook.Lasso(lam=lam).fit(X, y)
        assert m.converged_ and 0.0 <= m.dual_gap_ <= m.tol
    with pytest.warns(ConvergenceWarning, match="relative duality gap 9"):      # gap / P (before s29: gap / ||yc||^2)
        assert linbook.Lasso(lam=1.0, max_iter=1).fit(X, y).dual_gap_ > 0
