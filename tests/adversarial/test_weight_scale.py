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


# Found by the session-26 fuzz: weights times 1e18 stopped with "the line search stalled away from the mode",
# since the Newton decrement that tol reads in nats grows with the weights' scale (fixed in session 27: the
# mode search runs on E / c, c a power of 4 near the weights' mean).
@pytest.mark.parametrize("c", [1e-200, 1e-18, 3.0, 1e18, 1e200])
def test_bayesian_logistic_weights_times_c_is_the_prior_divided_by_c(c):
    from linbook import BayesianLogisticRegression
    from linbook.logistic.logistic_regression import logistic_loss

    X, y, w = _data(0)
    if abs(np.log10(c)) < 50:     # (the reference's prior 1e-202 would put a separable mode ~465 Newton steps out)
        y = (X @ np.array([1.0, -2.0, 0.5]) > 0).astype(int)        # separable: the mode is set by the prior
    alpha = 0.01
    scaled = BayesianLogisticRegression(prior_precision=alpha).fit(X, y, sample_weight=w * c)
    reference = BayesianLogisticRegression(prior_precision=alpha / c).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(scaled.posterior_mean_, reference.posterior_mean_, rtol=1e-6)
    # A = c A_ref: the covariance is the reference's over c
    np.testing.assert_allclose(scaled.posterior_cov_ * c, reference.posterior_cov_, rtol=1e-5)
    # the evidence is the Laplace formula of the energy as written, with the weights as passed
    Phi = np.hstack([np.ones((40, 1)), X])
    m = Phi.shape[1]
    E, _, H = logistic_loss(scaled.posterior_mean_, Phi, y.astype(float), alpha, sample_weight=w * c)
    E += 0.5 * m * (np.log(2 * np.pi) - np.log(alpha))
    log_det = np.linalg.slogdet(H)[1]
    expected = -E + 0.5 * m * np.log(2 * np.pi) - 0.5 * log_det
    np.testing.assert_allclose(scaled.log_evidence_, expected, rtol=1e-8, atol=1e-8)
    np.testing.assert_array_equal(scaled.predict(X), reference.predict(X))


def test_bayesian_logistic_weights_beyond_float64_precision_give_a_clear_error():
    """Weights summing near 1e308 put the posterior precision beyond float64: an error naming the weights."""
    from linbook import BayesianLogisticRegression

    X, y, w = _data(1)
    model = BayesianLogisticRegression()
    with pytest.raises(ValueError, match="sample_weight"):
        model.fit(X, y, sample_weight=w * 1e307)
    assert not hasattr(model, "posterior_mean_")
