"""Renamed public parameters keep working for one release (linbook.base.renamed_param /
renamed_kwargs): the old name gives the same fit as the new one, with a FutureWarning naming
the new one; both at once is an error; clone/get_params keep the old name. CHANGELOG.md lists
each rename."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone

import linbook
from linbook.online import RecursiveLeastSquares, SGDClassifier, SGDRegressor, learning_rate_schedule

RNG = np.random.default_rng(0)
X = RNG.standard_normal((80, 3))
Y_CLASS = (X[:, 0] + 0.5 * RNG.standard_normal(80) > 0).astype(int)
Y_REAL = X @ np.array([1.0, -2.0, 0.5]) + 0.1 * RNG.standard_normal(80)

# (make the estimator with the old name, with the new name, target, fitted attribute compared)
ESTIMATORS = {
    "BayesianLogisticRegression(prior_var)": (
        lambda: linbook.BayesianLogisticRegression(prior_var=4.0),
        lambda: linbook.BayesianLogisticRegression(prior_precision=0.25), Y_CLASS, "posterior_mean_"),
    "RDA(lam)": (lambda: linbook.RDA(lam=0.3), lambda: linbook.RDA(shrinkage=0.3), Y_CLASS, "covariance_"),
    "NearestShrunkenCentroids(shrink)": (
        lambda: linbook.NearestShrunkenCentroids(shrink=0.4),
        lambda: linbook.NearestShrunkenCentroids(shrink_threshold=0.4), Y_CLASS, "centroids_"),
    "RecursiveLeastSquares(alpha)": (
        lambda: RecursiveLeastSquares(alpha=2.0),
        lambda: RecursiveLeastSquares(prior_precision=2.0), Y_REAL, "coef_"),
    # alpha was scikit-learn's per-sample penalty share: lam = alpha * n_samples
    "SGDRegressor(alpha)": (
        lambda: SGDRegressor(alpha=0.01, random_state=0),
        lambda: SGDRegressor(lam=0.01 * 80, random_state=0), Y_REAL, "coef_"),
    "SGDClassifier(alpha)": (
        lambda: SGDClassifier(alpha=0.01, random_state=0),
        lambda: SGDClassifier(lam=0.01 * 80, random_state=0), Y_CLASS, "coef_"),
}


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_old_name_fits_as_the_new_one_with_a_future_warning(name):
    make_old, make_new, y, attr = ESTIMATORS[name]
    new_name = name.split("(")[0]
    with pytest.warns(FutureWarning, match="renamed") as record:
        old = make_old().fit(X, y)
    assert any(new_name in str(w.message) for w in record)
    new = make_new().fit(X, y)
    np.testing.assert_allclose(getattr(old, attr), getattr(new, attr), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_old_name_survives_clone_and_get_params(name):
    make_old, _, y, attr = ESTIMATORS[name]
    est = make_old()
    old_param = name.split("(")[1].rstrip(")")
    copy = clone(est)
    assert copy.get_params()[old_param] == est.get_params()[old_param] != "deprecated"
    with pytest.warns(FutureWarning):
        np.testing.assert_allclose(getattr(copy.fit(X, y), attr), getattr(est.fit(X, y), attr))


def test_new_names_alone_warn_nothing():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        for _, make_new, y, _ in ESTIMATORS.values():
            make_new().fit(X, y)


@pytest.mark.parametrize("make", [
    lambda: linbook.RDA(shrinkage=0.2, lam=0.3),
    lambda: linbook.BayesianLogisticRegression(prior_precision=1.0, prior_var=4.0),
    lambda: RecursiveLeastSquares(prior_precision=1.0, alpha=2.0),
])
def test_both_names_is_an_error(make):
    y = Y_REAL if isinstance(make(), RecursiveLeastSquares) else Y_CLASS
    with pytest.raises(ValueError, match="only"):
        make().fit(X, y)


def test_removed_block_size_is_ignored_with_a_warning():
    with pytest.warns(FutureWarning, match="block_size.*no effect"):
        a = RecursiveLeastSquares(block_size=16).fit(X, Y_REAL)
    np.testing.assert_array_equal(a.coef_, RecursiveLeastSquares().fit(X, Y_REAL).coef_)


def test_rda_covariance_method_is_the_attribute():
    rda = linbook.RDA(shrinkage=0.3).fit(X, Y_CLASS)
    with pytest.warns(FutureWarning, match="covariance_"):
        np.testing.assert_array_equal(rda.covariance(), rda.covariance_)


def test_renamed_function_keywords():
    with pytest.warns(FutureWarning, match="'lam'"):
        old = linbook.loocv_ridge(X, Y_REAL, alpha=2.0)
    assert old == linbook.loocv_ridge(X, Y_REAL, lam=2.0)
    with pytest.warns(FutureWarning, match="'lam_n'"):
        old = learning_rate_schedule(np.arange(1, 5), "optimal", alpha=0.1)
    np.testing.assert_array_equal(old, learning_rate_schedule(np.arange(1, 5), "optimal", lam_n=0.1))
    with pytest.raises(TypeError, match="only"):
        linbook.loocv_ridge(X, Y_REAL, lam=1.0, alpha=2.0)


def test_sgd_alpha_in_partial_fit_is_the_per_sample_share():
    chunk = slice(0, 20)
    with pytest.warns(FutureWarning):
        old = SGDRegressor(alpha=0.05, eta0=0.01).partial_fit(X[chunk], Y_REAL[chunk])
    new = SGDRegressor(lam=0.05 * 20, eta0=0.01).partial_fit(X[chunk], Y_REAL[chunk])
    np.testing.assert_allclose(old.coef_, new.coef_, rtol=1e-12)
