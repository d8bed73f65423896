"""``n_params_`` of the GLM classifiers: the rank of the design with ``lam = 0``, as statsmodels counts.

The likelihood depends on the coefficients only through ``X w + b``: collinear or constant columns add no
parameter, and AIC/BIC charged one for each (2 per redundant column, silently) until the fits counted the
rank (session 18).
"""

import warnings

import numpy as np
import pytest
import scipy.sparse
import statsmodels.api as sm

import linbook


def _collinear(n=300, seed=0):
    """Four columns of rank 3 (the last is the sum of the first two), binary and three-class labels."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    X = np.c_[X, X[:, 0] + X[:, 1]]
    z = X[:, 0] - X[:, 2]
    y = (rng.random(n) < 1 / (1 + np.exp(-z))).astype(float)
    y3 = np.digitize(z + rng.standard_normal(n), [-1.0, 1.0]).astype(float)
    return X, y, y3


def test_collinear_columns_count_once_as_statsmodels_logit():
    X, y, _ = _collinear()
    m = linbook.LogisticRegression(lam=0).fit(X, y)
    ref = sm.Logit(y, sm.add_constant(X)).fit(disp=0)
    assert m.n_params_ == ref.df_model + 1 == 4
    np.testing.assert_allclose(m.aic(X, y), ref.aic, rtol=1e-9)
    np.testing.assert_allclose(m.bic(X, y), ref.bic, rtol=1e-9)


def test_collinear_columns_multinomial_as_mnlogit():
    X, _, y3 = _collinear()
    m = linbook.LogisticRegression(lam=0).fit(X, y3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # statsmodels cannot invert its singular Hessian (only its bse)
        ref = sm.MNLogit(y3, sm.add_constant(X)).fit(disp=0, method="bfgs", maxiter=5000, gtol=1e-10)
    assert m.n_params_ == (ref.df_model + 2) == 2 * 4       # df_model of MNLogit: K (rank - 1)
    np.testing.assert_allclose(m.aic(X, y3), ref.aic, rtol=1e-7)


def test_probit_collinear_as_statsmodels():
    X, y, _ = _collinear()
    m = linbook.ProbitRegression().fit(X, y)
    ref = sm.Probit(y, sm.add_constant(X)).fit(disp=0)
    assert m.n_params_ == ref.df_model + 1
    np.testing.assert_allclose(m.aic(X, y), ref.aic, rtol=1e-9)


@pytest.mark.parametrize("sparse", [False, True])
def test_constant_column_is_the_intercept(sparse):
    X, y, _ = _collinear()
    X = np.c_[X[:, :3], np.full(X.shape[0], 2.5)]
    Xs = scipy.sparse.csr_matrix(X) if sparse else X
    assert linbook.LogisticRegression(lam=0).fit(Xs, y).n_params_ == 4
    assert linbook.LogisticRegression(lam=0, fit_intercept=False).fit(Xs, y).n_params_ == 4


def test_full_rank_and_penalised_fits_count_every_coefficient():
    X, y, y3 = _collinear()
    full = X[:, :3]
    assert linbook.LogisticRegression(lam=0).fit(full, y).n_params_ == 4
    assert linbook.LogisticRegression(lam=0, fit_intercept=False).fit(full, y).n_params_ == 3
    assert linbook.LogisticRegression(lam=1.0).fit(X, y).n_params_ == 5        # the penalty fixes all five
    assert linbook.LogisticRegression(lam=1.0).fit(X, y3).n_params_ == 10


def test_rank_is_over_rows_of_positive_weight_whatever_their_size():
    X, y, _ = _collinear()
    X = X[:, :3].copy()
    sw = np.ones(X.shape[0])
    sw[:5] = 0.0
    X_only_dropped = np.c_[X, np.r_[np.ones(5), np.zeros(X.shape[0] - 5)]]    # nonzero only in weight-0 rows
    assert linbook.LogisticRegression(lam=0).fit(X_only_dropped, y, sample_weight=sw).n_params_ == 4
    sw[:5] = 1e-300                                          # tiny, but these rows span the fifth direction
    assert linbook.LogisticRegression(lam=0).fit(X_only_dropped, y, sample_weight=sw).n_params_ == 5


def test_column_scales_do_not_decide_the_rank():
    X, y, _ = _collinear()
    X = X[:, :3] * np.array([1e-150, 1.0, 1e150])
    assert linbook.LogisticRegression(lam=0).fit(X, y).n_params_ == 4


def test_wide_design_has_at_most_n_parameters():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((6, 20))
    y = np.r_[np.zeros(3), np.ones(3)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", linbook.SeparableDataWarning)
        assert linbook.LogisticRegression(lam=0).fit(X, y).n_params_ == 6
        assert linbook.LogisticRegression(lam=0).fit(scipy.sparse.csr_matrix(X), y).n_params_ == 6


def test_refit_on_another_design_recounts():
    X, y, _ = _collinear()
    m = linbook.LogisticRegression(lam=0).fit(X, y)
    assert m.n_params_ == 4
    assert m.fit(X[:, :2], y).n_params_ == 3


def test_rank_of_wide_sparse_is_an_error_not_a_guess():
    rng = np.random.default_rng(2)
    X = scipy.sparse.random(400, 5000, density=0.002, format="csr", random_state=2)
    y = (rng.random(400) < 0.5).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = linbook.LogisticRegression(lam=0, max_iter=5).fit(X, y)
    with pytest.raises(AttributeError, match="rank of the design"):
        m.n_params_
    assert linbook.LogisticRegression(lam=1.0).fit(X, y).n_params_ == 5001


def test_dask_counts_the_rank_as_in_memory():
    da = pytest.importorskip("dask.array")
    X, y, y3 = _collinear()
    X = np.c_[X, np.full(X.shape[0], 1e6)]                   # a constant column beside the sum: rank 4 of 6
    sw = np.r_[np.zeros(10), np.ones(X.shape[0] - 10)]
    for labels in (y, y3):
        for kw in ({}, {"fit_intercept": False}):
            mem = linbook.LogisticRegression(lam=0, **kw).fit(X, labels, sample_weight=sw)
            lazy = linbook.LogisticRegression(lam=0, **kw).fit(da.from_array(X, chunks=100),
                                                               da.from_array(labels, chunks=100),
                                                               sample_weight=da.from_array(sw, chunks=100))
            assert lazy.n_params_ == mem.n_params_
    assert mem.n_params_ == 4 * 2 and linbook.LogisticRegression(lam=0).fit(X, y).n_params_ == 4


# ------------------------------------------------------------------ the least-norm MLE of a collinear design
NULL = np.array([1.0, 1.0, 0.0, -1.0]) / np.sqrt(3.0)      # X @ NULL = 0 for _collinear's X


def _least_norm_from_reduced(model, X, y, **kw):
    """The expected coefficients: the fit on the three independent columns, spread along NULL to least norm."""
    reduced = model(lam=0, **kw).fit(X[:, :3], y)
    a = reduced.coef_
    t = (a[:, 0] + a[:, 1]) / 3.0                          # argmin_t (a0 - t)^2 + (a1 - t)^2 + t^2
    return np.column_stack([a[:, 0] - t, a[:, 1] - t, a[:, 2], t]), reduced.intercept_


@pytest.mark.parametrize("solver", ["newton", "lbfgs", "bfgs", "newton-cg"])
def test_every_solver_returns_the_least_norm_mle(solver):
    X, y, _ = _collinear()
    m = linbook.LogisticRegression(lam=0, solver=solver, tol=1e-10).fit(X, y)
    W, b = _least_norm_from_reduced(linbook.LogisticRegression, X, y, tol=1e-10)
    np.testing.assert_allclose(m.coef_, W, atol=1e-6)
    np.testing.assert_allclose(m.intercept_, b, atol=1e-6)
    assert abs(float(m.coef_[0] @ NULL)) < 1e-9


@pytest.mark.parametrize("solver", ["newton", "lbfgs"])
def test_multinomial_and_probit_least_norm(solver):
    X, y, y3 = _collinear()
    m = linbook.LogisticRegression(lam=0, solver=solver, tol=1e-10).fit(X, y3)
    assert np.max(np.abs(m.coef_ @ NULL)) < 1e-9
    W, b = _least_norm_from_reduced(linbook.LogisticRegression, X, y3, tol=1e-10)
    np.testing.assert_allclose(m.coef_, W, atol=1e-6)
    np.testing.assert_allclose(m.intercept_, b, atol=1e-6)
    p = linbook.ProbitRegression(solver=solver, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(p.coef_, _least_norm_from_reduced(linbook.ProbitRegression, X, y, tol=1e-10)[0],
                               atol=1e-6)


def test_least_norm_with_offsets_and_weights_keeps_the_scores():
    X, y, _ = _collinear()
    X = X + np.array([50.0, -7.0, 3.0, 43.0])               # offset columns (centred inside); still x3 = x0 + x1
    sw = np.random.default_rng(3).uniform(0.0, 2.0, X.shape[0])
    sw[:7] = 0.0
    plain = linbook.LogisticRegression(lam=0, solver="lbfgs", tol=1e-10).fit(X, y, sample_weight=sw)
    newton = linbook.LogisticRegression(lam=0, tol=1e-10).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(plain.coef_, newton.coef_, atol=1e-6)
    np.testing.assert_allclose(plain.intercept_, newton.intercept_, atol=1e-5)
    assert abs(float(newton.coef_[0] @ NULL)) < 1e-9
    reduced = linbook.LogisticRegression(lam=0, tol=1e-10).fit(X[:, :3], y, sample_weight=sw)
    np.testing.assert_allclose(newton.decision_function(X), reduced.decision_function(X[:, :3]), atol=1e-6)


def test_dask_returns_the_in_memory_least_norm_fit():
    da = pytest.importorskip("dask.array")
    X, y, y3 = _collinear()
    X = X + np.array([50.0, -7.0, 3.0, 43.0])
    sw = np.r_[np.zeros(10), np.ones(X.shape[0] - 10)]
    for labels in (y, y3):
        mem = linbook.LogisticRegression(lam=0, tol=1e-10).fit(X, labels, sample_weight=sw)
        lazy = linbook.LogisticRegression(lam=0, tol=1e-10).fit(
            da.from_array(X, chunks=100), da.from_array(labels, chunks=100), sample_weight=da.from_array(sw, chunks=100))
        np.testing.assert_allclose(lazy.coef_, mem.coef_, atol=1e-6)
        np.testing.assert_allclose(lazy.intercept_, mem.intercept_, atol=1e-5)
        assert np.max(np.abs(lazy.coef_ @ NULL)) < 1e-9
    p_mem = linbook.ProbitRegression(tol=1e-10).fit(X, y)
    p_lazy = linbook.ProbitRegression(tol=1e-10).fit(da.from_array(X, chunks=100), da.from_array(y, chunks=100))
    np.testing.assert_allclose(p_lazy.coef_, p_mem.coef_, atol=1e-6)


@pytest.mark.parametrize("scales", [[1e300, 1.0, 1e-300, 1.0], [1e150, 1e150, 1.0, 1e150], [1e-12] * 4, [1e-300] * 4])
@pytest.mark.parametrize("solver", ["newton", "lbfgs"])
def test_least_norm_move_keeps_the_scores_whatever_the_column_scales(scales, solver):
    """Session 18 review: the least-norm move first projected on a row-space basis in the units of X, which
    lost the small columns beside 1e150 ones (probabilities 0.8 off); then a null-space basis whose rounding
    on a 1e-300 column became its largest entry (a coefficient erased). The move must never change a score."""
    X, y, _ = _collinear()
    Xs = X * np.array(scales)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = linbook.LogisticRegression(lam=0, solver=solver).fit(Xs, y)
    plain = linbook.LogisticRegression(lam=0, tol=1e-12).fit(X[:, :3], y)
    assert m.n_params_ == 4
    np.testing.assert_allclose(m.predict_proba(Xs), plain.predict_proba(X[:, :3]), atol=1e-7)
