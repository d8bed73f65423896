"""``gaussian_mle`` / ``mvn_mle`` on data whose spread is a few units in the last place of their mean.

The right answer is the exact MLE of the floats given (computed in rational arithmetic). The mean is rounded, and
the scatter about the rounded mean exceeds the scatter about the exact one by ``N (mean - rounded)^2``: before the
correction, a variance 2x too large at 1-3 ulps of spread, 5% at 30 ulps, 5e-8 at 1e4 ulps.
"""

from fractions import Fraction

import numpy as np
import pytest

import linbook


def _exact_mle(X):
    """Mean and covariance (divided by N) of the rows of ``X``, in exact rational arithmetic, then rounded."""
    n, d = X.shape
    F = [[Fraction(v) for v in row] for row in X.tolist()]
    mu = [sum(row[j] for row in F) / n for j in range(d)]
    cov = [[float(sum((row[a] - mu[a]) * (row[b] - mu[b]) for row in F) / n) for b in range(d)] for a in range(d)]
    return np.array([float(m) for m in mu]), np.array(cov)


@pytest.mark.parametrize("offset", [1e6, -3e8, 1e15, 7.0, 1e-100])
@pytest.mark.parametrize("ulps", [1, 3, 30, 1e4])
def test_variance_of_data_a_few_ulps_apart_is_exact(offset, ulps):
    rng = np.random.default_rng(int(ulps) + 7)
    x = offset + rng.standard_normal(50) * ulps * np.spacing(offset)
    mean, var = linbook.gaussian_mle(x)
    exact_mean, exact_var = _exact_mle(x[:, None])
    assert exact_var[0, 0] > 0
    np.testing.assert_allclose(var, exact_var[0, 0], rtol=1e-13)
    np.testing.assert_allclose(mean, exact_mean[0], rtol=1e-15)
    _, unbiased = linbook.gaussian_mle(x, unbiased=True)
    np.testing.assert_allclose(unbiased, exact_var[0, 0] * 50 / 49, rtol=1e-13)


@pytest.mark.parametrize("seed", range(4))
def test_covariance_of_offset_columns_is_exact(seed):
    rng = np.random.default_rng(seed)
    offsets = np.array([1e6, -2e9, 3.0])
    X = offsets + rng.standard_normal((30, 3)) @ np.array([[3.0, 1, 0], [0, 2, 1], [0, 0, 1]]) * np.spacing(offsets)
    mean, cov = linbook.mvn_mle(X)
    exact_mean, exact_cov = _exact_mle(X)
    scale = np.sqrt(np.outer(np.diag(exact_cov), np.diag(exact_cov)))
    assert np.max(np.abs(cov - exact_cov) / scale) < 1e-12
    np.testing.assert_allclose(mean, exact_mean, rtol=1e-15)
