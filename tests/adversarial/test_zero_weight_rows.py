"""A row of weight 0 changes nothing, whatever values it holds.

Appending a row of ``1e300`` (or ``-1e300``, ``1e-300``) with ``sample_weight`` 0 must leave every fit as
it was. Before, such a row still entered the statistics the fits compute before weighting:
``LeastAbsoluteDeviation`` took its column scales and offsets from it (the other rows, divided by 1e300,
became zeros to HiGHS: ``coef_ = [1, 0, 0]``, no warning), and the diagonal Gaussian classifiers
(``DiagonalLDA``, ``GaussianNaiveBayes``, ``NearestShrunkenCentroids``) summed ``0 * inf`` = NaN squared
residuals (NaN probabilities, or a ``ValueError`` about unrepresentable variances).

Deterministic estimators with ``sample_weight``, dense and CSR where they accept it: predictions (or
probabilities, or the transform) agree with the fit without the row to 1e-9 (relative).
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from linbook import (LDA, QDA, RDA, DiagonalLDA, FisherLDA, GaussianNaiveBayes, Lasso, LeastAbsoluteDeviation,
                     LinearRegression, LogisticRegression, NearestShrunkenCentroids, Ridge)

REGRESSORS = [LinearRegression(), Ridge(lam=1.5), Lasso(lam=4.0), LeastAbsoluteDeviation()]
CLASSIFIERS = [LogisticRegression(lam=1.0), LDA(), QDA(), RDA(shrinkage=0.3), DiagonalLDA(), GaussianNaiveBayes(),
               NearestShrunkenCentroids(shrink_threshold=0.2), FisherLDA()]
VALUES = [1e300, -1e300, 1e-300]


def _data(regression, seed=0, n=40, d=3):
    rng = np.random.default_rng(seed)
    if regression:
        X = rng.standard_normal((n, d)) * np.linspace(1.0, 2.5, d) + np.linspace(-1.0, 2.0, d)
        return X, X @ np.linspace(1.0, -0.5, d) + 0.7 + 0.5 * rng.standard_normal(n)
    y = np.arange(n) % 3
    return rng.standard_normal((n, d)) + np.outer(y, np.linspace(1.0, 0.5, d)), y


def _output(model, X):
    for method in ("predict_proba", "predict", "transform"):
        if hasattr(model, method):
            return np.asarray(getattr(model, method)(X), dtype=float)


def _fit(est, X, y, sample_weight=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return clone(est).fit(X, y, sample_weight=sample_weight)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize("est", REGRESSORS + CLASSIFIERS, ids=lambda e: type(e).__name__)
def test_a_row_of_weight_zero_changes_nothing(est, value, sparse):
    regression = est in REGRESSORS
    X, y = _data(regression)
    X_more = np.vstack([X, np.full(X.shape[1], value)])
    y_more = np.r_[y, value if regression else y[0]]
    weights = np.r_[np.ones(len(y)), 0.0]
    if sparse:
        if not regression and est not in CLASSIFIERS[:1]:
            pytest.skip("the Gaussian classifiers take dense X")
        X, X_more = sp.csr_matrix(X), sp.csr_matrix(X_more)
    want = _output(_fit(est, X, y), X)
    got = _output(_fit(est, X_more, y_more, sample_weight=weights), X)
    assert np.all(np.isfinite(got))
    assert np.max(np.abs(got - want)) <= 1e-9 * np.max(np.abs(want))


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize("regression", [False, True], ids=["SGDClassifier", "SGDRegressor"])
def test_a_row_of_weight_zero_changes_no_stochastic_fit(regression, value, sparse):
    """The SGD models took their step sizes and feature scale from every row: a weight-0 row of 1e300 made
    each step ~1e-600 (SGDClassifier learned nothing, its predictions agreed with the fit without the row on
    half the rows; SGDRegressor raised a divergence). The row is left out, so the fit, shuffles included,
    is the one without it."""
    from linbook.online import SGDClassifier, SGDRegressor

    est = SGDRegressor(random_state=0) if regression else SGDClassifier(random_state=0)
    X, y = _data(regression)
    X_more = np.vstack([X, np.full(X.shape[1], value)])
    y_more = np.r_[y, value if regression else y[0]]
    if sparse:
        X, X_more = sp.csr_matrix(X), sp.csr_matrix(X_more)
    want = _output(_fit(est, X, y), X)
    got = _output(_fit(est, X_more, y_more, sample_weight=np.r_[np.ones(len(y)), 0.0]), X)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def _streams():
    from linbook.online import RecursiveLeastSquares, SGDClassifier, SGDRegressor
    return [(RecursiveLeastSquares(prior_precision=0.5), True), (SGDRegressor(random_state=0, shuffle=False), True),
            (SGDClassifier(random_state=0, shuffle=False), False)]


@pytest.mark.parametrize("est, regression", _streams(), ids=["RecursiveLeastSquares", "SGDRegressor", "SGDClassifier"])
def test_a_chunk_of_weight_zero_changes_no_stream(est, regression):
    """A later ``partial_fit`` chunk whose weights are all 0 is valid and changes nothing (as its rows inside
    ``fit`` do). Before, it was refused ("Sample weights must contain at least one non-zero number"), and so
    was a dask collection with one such block (RecursiveLeastSquares.fit), although the in-memory fit of the
    same data was fine."""
    X, y = _data(regression, n=60)
    X[20:40] = 1e300                                 # values a zero weight must hide
    kw = {} if regression else {"classes": np.unique(y)}
    with_chunk, without = clone(est), clone(est)
    with_chunk.partial_fit(X[:20], y[:20], **kw)
    with_chunk.partial_fit(X[20:40], y[20:40], sample_weight=np.zeros(20))
    with_chunk.partial_fit(X[40:], y[40:])
    without.partial_fit(X[:20], y[:20], **kw)
    without.partial_fit(X[40:], y[40:])
    np.testing.assert_allclose(with_chunk.coef_, without.coef_, rtol=1e-12, atol=0)
    np.testing.assert_allclose(with_chunk.intercept_, without.intercept_, rtol=1e-12, atol=0)
    with pytest.raises(ValueError, match="sample_weight"):   # a NaN among the zeros is still bad input
        clone(est).partial_fit(X[:20], y[:20], **kw).partial_fit(X[20:40], y[20:40],
                                                                  sample_weight=np.r_[np.zeros(19), np.nan])


def test_a_dask_block_of_weight_zero_is_fitted_like_in_memory():
    da = pytest.importorskip("dask.array")
    from linbook.online import RecursiveLeastSquares
    X, y = _data(True, n=60)
    w = np.ones(60)
    w[20:40] = 0.0
    ref = RecursiveLeastSquares(prior_precision=0.5).fit(X, y, sample_weight=w)
    got = RecursiveLeastSquares(prior_precision=0.5).fit(da.from_array(X, chunks=(20, -1)), da.from_array(y, chunks=20),
                                                         sample_weight=da.from_array(w, chunks=20))
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got.intercept_, ref.intercept_, rtol=1e-9, atol=1e-12)
    assert got.n_samples_seen_ == ref.n_samples_seen_ == 60
