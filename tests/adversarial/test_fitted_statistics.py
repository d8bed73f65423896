"""The least-squares models' fitted statistics: ``sigma2_``, ``log_likelihood``, ``aic`` at the edges of ``y``.

``sigma2_`` is the maximum-likelihood noise variance ``sum_i s_i r_i^2 / N``, floored at ``(eps max|y|)^2``
(an exact fit: residuals below the resolution of ``y`` carry no information). Two defects:

* The floor was ``(eps y_scale)^2``, and ``y_scale`` (the power of two ``y`` is divided by inside the fit)
  is 1 for every ``|y|`` within 1e+-100: the floor was ``eps^2 ~ 4.9e-32`` for all of them. For ``y`` of
  size 1e-20 (noise 3e-21) ``sigma2_`` came out 6.6e9 times too large and ``log_likelihood`` 432 nats too
  low (AIC, BIC with it), in silence; from ``y ~ 1e-8`` down to 1e-99 every noise variance was swallowed.
* A row of ``sample_weight`` 0 still set ``y``'s scale: with ``y = 1e300`` in that row the floor became
  ``(eps 2^996)^2``, ``sigma2_`` was ``inf`` and ``log_likelihood`` ~26000 nats off (the coefficients right).
  Such rows are now left out of the least-squares fits, as out of LAD and the Gaussian classifiers.

Right answers from scale equivariance: ``y -> s y`` maps ``sigma2_ -> s^2 sigma2_`` and the log-likelihood
``-> ll - N log|s|``; and a row of weight 0 changes nothing.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from linbook import Lasso, LinearRegression, Ridge

MODELS = [LinearRegression(), Ridge(lam=1e-9), LinearRegression(fit_intercept=False)]


def _data(seed=0, n=40):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3)) + np.linspace(-1.0, 2.0, 3)
    return X, X @ np.array([1.0, 2.0, 3.0]) + 1.0 + 0.3 * rng.standard_normal(n)


def _fit(model, X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return type(model)(**model.get_params()).fit(X, y, **kw)


@pytest.mark.parametrize("scale", [1e-8, 1e-20, 1e-60, 1e-99, 1e8, 1e60])
@pytest.mark.parametrize("model", MODELS, ids=repr)
def test_noise_variance_and_likelihood_follow_the_scale_of_y(model, scale):
    X, y = _data()
    ref = _fit(model, X, y)
    est = _fit(model, X, y * scale)
    np.testing.assert_allclose(est.sigma2_, ref.sigma2_ * scale ** 2, rtol=1e-9)
    n = y.size
    np.testing.assert_allclose(est.log_likelihood(X, y * scale), ref.log_likelihood(X, y) - n * np.log(scale),
                               rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(est.aic(X, y * scale), ref.aic(X, y) + 2 * n * np.log(scale), rtol=1e-12, atol=1e-8)


def test_the_floor_of_an_exact_fit_is_eps_max_abs_y():
    """An exact fit's residuals are rounding, a few ``eps max|y|`` (how many depends on the BLAS kernel: 2.6 under
    OpenBLAS Prescott), so ``sigma2_`` is between the floor and 100 times it; the old floor, ``eps^2`` for ``y``
    of 1e-30, was 1e57 times that."""
    X, _ = _data()
    for scale in (1e-30, 1.0, 1e30):
        y = scale * (X @ np.array([1.0, 2.0, 3.0]) + 1.0)
        est = _fit(LinearRegression(), X, y)
        floor = (np.finfo(float).eps * np.max(np.abs(y))) ** 2
        assert floor <= est.sigma2_ <= 100 * floor, (scale, est.sigma2_, floor)


@pytest.mark.parametrize("value", [1e300, -1e300, 1e120])
@pytest.mark.parametrize("model", MODELS + [Lasso(lam=0.1)], ids=repr)
def test_a_row_of_weight_zero_changes_no_statistic(model, value):
    X, y = _data(1)
    ref = _fit(model, X, y, sample_weight=np.ones(y.size))
    est = _fit(model, np.vstack([X, np.ones(3)]), np.r_[y, value], sample_weight=np.r_[np.ones(y.size), 0.0])
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(est.sigma2_, ref.sigma2_, rtol=1e-9)
    np.testing.assert_allclose(est.log_likelihood(X, y), ref.log_likelihood(X, y), rtol=1e-12)
    np.testing.assert_allclose(est.bic(X, y), ref.bic(X, y), rtol=1e-12)
