import numpy as np
import pytest
from scipy import stats

import linbook
from linbook.gaussian import mahalanobis, mvn_cholesky, mvn_entropy, mvn_logpdf, mvn_sample


def _spd(d, seed=0):
    A = np.random.default_rng(seed).normal(size=(d, d))
    return A @ A.T + d * np.eye(d)


@pytest.mark.parametrize("d", [1, 3, 6])
def test_logpdf_entropy_match_scipy(d):
    rng = np.random.default_rng(d)
    S, mu = _spd(d, d), rng.normal(size=d)
    X = rng.normal(size=(20, d))
    ref = stats.multivariate_normal(mu, S)
    np.testing.assert_allclose(mvn_logpdf(X, mu, S), ref.logpdf(X), rtol=1e-10)
    np.testing.assert_allclose(mvn_entropy(S), ref.entropy(), rtol=1e-12)
    d2 = mahalanobis(X, mu, S)
    np.testing.assert_allclose(d2, np.einsum("ij,ij->i", X - mu, np.linalg.solve(S, (X - mu).T).T), rtol=1e-10)
    assert isinstance(mahalanobis(X[0], mu, S), float)


def test_sampling_moments():
    S, mu = _spd(3), np.array([1.0, -2.0, 0.5])
    X = mvn_sample(mu, S, 200_000, random_state=0)
    np.testing.assert_allclose(X.mean(0), mu, atol=0.05)
    np.testing.assert_allclose(np.cov(X.T), S, rtol=0.03)
    np.testing.assert_array_equal(X[:5], mvn_sample(mu, S, 200_000, random_state=0)[:5])


@pytest.mark.parametrize("bad", [np.zeros((2, 2)), np.array([[1.0, 2.0], [2.0, 1.0]]), np.ones((2, 3)),
                                 np.array([[np.nan, 0], [0, 1.0]])])
def test_bad_covariance(bad):
    with pytest.raises(ValueError):
        mvn_cholesky(bad)


def test_exported():
    assert linbook.mvn_logpdf is mvn_logpdf


@pytest.mark.parametrize("call", [
    lambda: mvn_logpdf(np.array([[np.nan, 0.0]]), np.zeros(2), np.eye(2)),
    lambda: mvn_logpdf(np.ones((3, 3)), np.zeros(2), np.eye(2)),
    lambda: mahalanobis(np.ones((3, 2)), np.zeros(3), np.eye(2)),
    lambda: mahalanobis(np.ones((3, 2)), np.zeros(2), chol=np.zeros((2, 2))),
    lambda: mahalanobis(np.ones((3, 2)), np.zeros(2)),
    lambda: mvn_sample(np.zeros(2), np.eye(2), -1),
    lambda: mvn_sample(np.zeros(3), np.eye(2), 5),
])
def test_bad_points_get_clear_errors(call):
    with pytest.raises(ValueError, match="must|give"):
        call()


def test_far_points_round_to_minus_infinity_not_nan():
    assert mvn_logpdf(np.array([1e300, 1e300]), np.zeros(2), np.eye(2)) == -np.inf
    np.testing.assert_allclose(mvn_logpdf(np.array([3e150, 0.0]), np.zeros(2), np.eye(2)),
                               -0.5 * 9e300 - np.log(2 * np.pi), rtol=1e-12)
