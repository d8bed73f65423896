"""Ridge and LinearRegression on sparse X by conjugate gradients on X itself (``solver_ == "cg"``).

CG runs first while its iterations cost less than forming the ``D x D`` Gram matrix
(``linbook.linear._base.sparse_cg_solve``); its answer must equal the Gram path's (the dense fit,
by Cholesky or SVD) and its statistics (``df_``, ``rank_``, ``singular_``) too, computed on access
from the Gram matrix it never needed during the fit.
"""

import numpy as np
import pytest
import scipy.sparse as sps
from sklearn.base import clone

from linbook.linear import LinearRegression, Ridge


def sparse_data(n=4000, d=800, density=0.01, seed=0):
    rng = np.random.default_rng(seed)
    X = sps.random(n, d, density=density, format="csr", random_state=seed, data_rvs=rng.standard_normal)
    y = X @ rng.standard_normal(d) + 1.5 + 0.3 * rng.standard_normal(n)
    return X, y


def weights(n, seed=1):
    w = np.random.default_rng(seed).uniform(0.2, 3.0, n)
    w[::7] = 0.0                                     # rows of weight 0 are left out
    return w


MODELS = [Ridge(lam=2.0), Ridge(lam=0.0), LinearRegression()]


@pytest.mark.parametrize("est", MODELS, ids=["ridge", "ridge-lam0", "ols"])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_cg_fit_equals_the_dense_fit(est, fit_intercept, weighted, fmt):
    X, y = sparse_data()
    X = X.asformat(fmt)
    sw = weights(X.shape[0]) if weighted else None
    est = clone(est).set_params(fit_intercept=fit_intercept)
    a = clone(est).fit(X, y, sample_weight=sw)
    b = clone(est).fit(X.toarray(), y, sample_weight=sw)
    assert a.solver_ == "cg"
    assert b.solver_ != "cg"
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-10, atol=1e-12 * np.max(np.abs(b.coef_)))
    assert a.intercept_ == pytest.approx(b.intercept_, rel=1e-10, abs=1e-12)
    assert a.sigma2_ == pytest.approx(b.sigma2_, rel=1e-10)


@pytest.mark.parametrize("weighted", [False, True])
def test_statistics_after_cg_equal_the_gram_paths(weighted):
    X, y = sparse_data(seed=2)
    sw = weights(X.shape[0]) if weighted else None
    a, b = Ridge(lam=3.0).fit(X, y, sample_weight=sw), Ridge(lam=3.0).fit(X.toarray(), y, sample_weight=sw)
    assert a.solver_ == "cg"
    assert a.df_ == pytest.approx(b.df_, rel=1e-10)
    assert a.bic(X, y) == pytest.approx(b.bic(X.toarray(), y), rel=1e-10)
    a, b = LinearRegression().fit(X, y, sample_weight=sw), LinearRegression().fit(X.toarray(), y, sample_weight=sw)
    assert a.solver_ == "cg"
    assert a.rank_ == b.rank_ == X.shape[1]
    np.testing.assert_allclose(a.singular_, b.singular_, rtol=1e-8)
    assert a.aic(X, y) == pytest.approx(b.aic(X.toarray(), y), rel=1e-10)


def test_statistics_after_cg_come_from_the_training_x_not_a_later_change():
    X, y = sparse_data(seed=3)
    ridge, ols = Ridge(lam=1.0).fit(X, y), LinearRegression().fit(X, y)
    df, sv = Ridge(lam=1.0).fit(X.toarray(), y).df_, LinearRegression().fit(X.toarray(), y).singular_
    X.data *= 3.0                                    # the caller changes its matrix after fit
    X.data[: X.nnz // 2] = 0.0
    assert ridge.df_ == pytest.approx(df, rel=1e-10)
    np.testing.assert_allclose(ols.singular_, sv, rtol=1e-8)


def test_rank_deficient_least_squares_by_cg_is_the_minimum_norm_solution():
    X, y = sparse_data(seed=4)
    X = sps.hstack([X, X[:, :5], X[:, 5:6] * 2.0], format="csr")    # duplicated and proportional columns
    a = LinearRegression().fit(X, y)
    assert a.solver_ == "cg"
    Xc = X.toarray() - X.toarray().mean(axis=0)
    w = np.linalg.lstsq(Xc, y - y.mean(), rcond=None)[0]            # the minimum-norm minimiser
    np.testing.assert_allclose(a.coef_, w, rtol=1e-8, atol=1e-10 * np.max(np.abs(w)))
    assert a.rank_ is None                          # as after LSQR: the Cholesky check fails
    with pytest.raises(AttributeError, match="rank"):
        a.n_params_


def test_cg_gives_way_to_the_gram_where_it_would_cost_more():
    X, y = sparse_data(seed=5)
    rng = np.random.default_rng(5)
    # two nearly equal columns: cond(X) ~ 1e5, CG would need far more iterations than the Gram costs
    near = X[:, :1] + sps.csr_matrix(1e-5 * rng.standard_normal((X.shape[0], 1)))
    X = sps.hstack([X, near], format="csr")
    for est in (Ridge(lam=1e-9), LinearRegression()):
        a, b = clone(est).fit(X, y), clone(est).fit(X.toarray(), y)
        assert a.solver_ in ("cholesky", "lsqr")         # as the dense fit takes the SVD, not Cholesky
        np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-6, atol=1e-9 * np.max(np.abs(b.coef_)))
    tiny = sps.random(200, 5, density=0.3, format="csr", random_state=0)    # the Gram is cheaper outright
    assert Ridge().fit(tiny, np.arange(200.0)).solver_ == "cholesky"


def test_a_column_whose_mean_dominates_is_centred_exactly_by_the_gram():
    X, y = sparse_data(seed=6)
    rng = np.random.default_rng(6)
    offset = sps.csr_matrix((1e6 + rng.standard_normal(X.shape[0]))[:, None])  # mean 1e6, spread 1
    X = sps.hstack([X, offset], format="csr")
    y = y + 0.5 * (offset.toarray().ravel() - 1e6)
    for est in (Ridge(lam=1.0), LinearRegression()):
        a, b = clone(est).fit(X, y), clone(est).fit(X.toarray(), y)
        assert a.solver_ != "cg"
        np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-9, atol=1e-12 * np.max(np.abs(b.coef_)))


@pytest.mark.parametrize("s", [2.0 ** -300, 2.0 ** 300])
def test_cg_path_under_extreme_feature_scales(s):
    X, y = sparse_data(seed=7)
    lam = 2.0
    a = Ridge(lam=lam * s * s).fit(X * s, y)        # (X s, lam s^2) is (X, lam) divided by s
    b = Ridge(lam=lam).fit(X, y)
    assert a.solver_ == b.solver_ == "cg"
    np.testing.assert_allclose(a.coef_ * s, b.coef_, rtol=1e-10, atol=1e-12 * np.max(np.abs(b.coef_)))
    scales = 2.0 ** np.random.default_rng(7).integers(-330, 330, X.shape[1])   # each column its own
    a, b = LinearRegression().fit(X @ sps.diags(scales), y), LinearRegression().fit(X, y)
    np.testing.assert_allclose(a.coef_ * scales, b.coef_, rtol=1e-9, atol=1e-11 * np.max(np.abs(b.coef_)))


@pytest.mark.parametrize("n", [300, 20_000])          # one piece, and row chunks on the threads
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_normal_matvec_equals_the_operator_applied_twice(n, weighted, fit_intercept):
    from linbook.linear._base import moments

    rng = np.random.default_rng(8)
    X = sps.random(n, 40, density=0.1, format="csr", random_state=8, data_rvs=rng.standard_normal)
    X = X @ sps.diags(2.0 ** rng.integers(-200, 200, 40))
    sw = rng.uniform(0, 3, n) if weighted else None
    mom = moments(Ridge(fit_intercept=fit_intercept), X, rng.standard_normal(n), sw, gram=False, common_scale=False)
    A, _ = mom.operator()
    pen, p = rng.uniform(0, 1, 40), rng.standard_normal(40)
    expected = A.rmatvec(A.matvec(p)) + pen * p
    np.testing.assert_allclose(mom.normal_matvec(pen)(p), expected, rtol=1e-12, atol=1e-12 * np.max(np.abs(expected)))
    Z, _ = mom.design()                             # the centred, weighted, scaled X, dense
    np.testing.assert_allclose(mom.gram_diagonal()[0], np.einsum("ij,ij->j", Z, Z), rtol=1e-9)


def test_a_column_of_zeros_keeps_the_conjugate_gradients():
    """A column with no stored entry has a zero diagonal in ``G``: the equilibrated backward-error test must
    leave its equation (0 = 0) unscaled, not divide by 0 and send the fit to LSQR (7x slower)."""
    rng = np.random.default_rng(0)
    X = sps.random(30_000, 1500, density=0.005, format="csc", random_state=0, data_rvs=rng.standard_normal)
    with_zeros = sps.hstack([X[:, :7], sps.csc_matrix((30_000, 1)), X[:, 7:]]).tocsr()
    y = X @ rng.standard_normal(1500) + rng.standard_normal(30_000)
    for model in (LinearRegression(), Ridge(lam=1.0)):
        model.fit(with_zeros, y)
        assert model.solver_ == "cg" and model.coef_[7] == 0.0
        without = clone(model).fit(X.tocsr(), y)
        np.testing.assert_allclose(np.delete(model.coef_, 7), without.coef_, rtol=1e-8, atol=1e-10)
