"""Frequency weights of any finite size: the discriminant models read ``sample_weight`` as counts.

The pooled variance divides by N - C (N the sum of the weights), so the fit depends on the weights'
scale only through N / (N - C): two scales far above C (1e100 and 1e300) must give the same model.
Found by the session-26 state/weights fuzz: NearestShrunkenCentroids formed counts * N, which
overflows for weights ~1e300 (the sum itself finite), and then blamed the features' size.
"""

import numpy as np
import pytest

from linbook import LDA, QDA, RDA, DiagonalLDA, GaussianNaiveBayes, NearestShrunkenCentroids

MODELS = [NearestShrunkenCentroids, DiagonalLDA, GaussianNaiveBayes, LDA, QDA, RDA]


def _data(seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((40, 3))
    y = (X[:, 0] + rng.standard_normal(40) > 0).astype(int)
    w = rng.integers(1, 4, 40).astype(float)
    return X, y, w


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_huge_frequency_weights_give_the_model_of_large_ones(model, seed):
    X, y, w = _data(seed)
    reference = model().fit(X, y, sample_weight=w * 1e100)
    huge = model().fit(X, y, sample_weight=w * 1e300)
    np.testing.assert_allclose(huge.predict_proba(X), reference.predict_proba(X), rtol=1e-10, atol=1e-14)
    np.testing.assert_array_equal(huge.predict(X), reference.predict(X))


@pytest.mark.xfail(strict=True, reason="BayesianLogisticRegression: weights times 1e18 with prior_precision 0.01 is "
                   "the objective of weights times 1 with prior_precision 1e-20 (times 1e18), which fits; the scaled "
                   "one stops with 'the line search stalled away from the mode' (an error about E, grad and hess the "
                   "user never wrote). Fix: normalise sample_weight to mean 1 and alpha with it inside fit, mapping "
                   "the covariance and log evidence back; not done in session 26 (time).")
def test_bayesian_logistic_weights_times_c_is_the_prior_divided_by_c():
    from linbook import BayesianLogisticRegression

    X, y, w = _data(0)
    y = (X @ np.array([1.0, -2.0, 0.5]) > 0).astype(int)        # separable: the mode is set by the prior
    c = 1e18
    scaled = BayesianLogisticRegression(prior_precision=0.01).fit(X, y, sample_weight=w * c)
    reference = BayesianLogisticRegression(prior_precision=0.01 / c).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(scaled.posterior_mean_, reference.posterior_mean_, rtol=1e-6)
