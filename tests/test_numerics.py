"""Stable primitives: exact to float64 against mpmath, warning-free at |z| = 1000 and inf."""

import warnings

import mpmath
import numpy as np
import pytest

from linbook.numerics import log1pexp, log_sigmoid, log_softmax, logsumexp, sigmoid, softmax

mpmath.mp.dps = 50
Z = np.array([-1000.0, -745.0, -40.0, -20.0, -1.0, -1e-8, 0.0, 1e-8, 1.0, 20.0, 40.0, 745.0, 1000.0])


def _ref(f, z):
    return np.array([float(f(mpmath.mpf(float(v)))) for v in z])


@pytest.fixture(autouse=True)
def _no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's RuntimeWarnings (overflow, invalid, divide) become errors
        yield


def test_sigmoid_exact():
    ref = _ref(lambda t: 1 / (1 + mpmath.exp(-t)), Z)
    np.testing.assert_allclose(sigmoid(Z), ref, rtol=4e-16, atol=1e-320)  # atol: subnormals at z = -745


def test_log1pexp_exact():
    ref = _ref(lambda t: mpmath.log(1 + mpmath.exp(t)), Z)
    np.testing.assert_allclose(log1pexp(Z), ref, rtol=4e-16, atol=1e-320)  # atol: subnormals at z = -745


def test_log_sigmoid_exact():
    ref = _ref(lambda t: -mpmath.log(1 + mpmath.exp(-t)), Z)
    np.testing.assert_allclose(log_sigmoid(Z), ref, rtol=4e-16, atol=1e-320)  # atol: subnormals at z = -745


def test_infinities():
    assert sigmoid(np.inf) == 1.0 and sigmoid(-np.inf) == 0.0
    assert log1pexp(-np.inf) == 0.0 and log1pexp(np.inf) == np.inf
    assert log_sigmoid(np.inf) == 0.0 and log_sigmoid(-np.inf) == -np.inf


def test_scalar_in_scalar_out():
    assert isinstance(sigmoid(0.0), float)
    assert sigmoid(0.0) == 0.5


def test_logsumexp_and_softmax():
    a = np.array([[1000.0, 1000.0, -1000.0], [-1000.0, -1001.0, -1002.0], [0.0, 1.0, 2.0]])
    ref = np.array([float(mpmath.log(sum(mpmath.exp(mpmath.mpf(v)) for v in row))) for row in a])
    np.testing.assert_allclose(logsumexp(a, axis=1), ref, rtol=4e-16)
    p = softmax(a, axis=1)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-15)
    np.testing.assert_allclose(np.exp(log_softmax(a, axis=1)), p, rtol=1e-14)
    assert logsumexp(np.array([-np.inf, -np.inf])) == -np.inf
    assert np.isclose(logsumexp(np.array([1.0, 2.0])), np.log(np.e + np.e**2))
    assert logsumexp(a, axis=0, keepdims=True).shape == (1, 3)


def test_softmax_limits_at_infinity():
    a = np.array([[0.0, np.inf, np.inf], [1.0, 2.0, -np.inf]])
    np.testing.assert_array_equal(softmax(a, axis=1)[0], [0.0, 0.5, 0.5])
    np.testing.assert_array_equal(log_softmax(a, axis=1)[0], [-np.inf, -np.log(2), -np.log(2)])
    np.testing.assert_allclose(softmax(a, axis=1)[1], [1 / (1 + np.e), np.e / (1 + np.e), 0.0], rtol=1e-15)
    np.testing.assert_array_equal(logsumexp(a, axis=1)[:1], [np.inf])
    with pytest.raises(ValueError, match="entirely -inf"):
        softmax(np.array([-np.inf, -np.inf]))
    with pytest.raises(ValueError, match="entirely -inf"):
        log_softmax(np.array([[0.0], [-np.inf]]), axis=1)
    # near the end of the float range: no overflow, exact
    assert logsumexp(np.array([1e308, -1e308])) == 1e308
    np.testing.assert_array_equal(softmax(np.array([1e308, -1e308])), [1.0, 0.0])


def test_equilibrated_solve_vector_and_matrix_right_hand_sides():
    """The one equilibrated Cholesky solves A x = b for a vector and for each column of a matrix,
    also when the diagonal of A spans many orders of magnitude (where a wrong-axis scaling shows)."""
    from linbook._kernels.cholesky import equilibrated_cholesky, equilibrated_solve

    rng = np.random.default_rng(3)
    M = rng.standard_normal((5, 5))
    scale = np.array([1e-3, 1.0, 1e2, 1e4, 1.0])
    A = scale[:, None] * (M @ M.T + 5 * np.eye(5)) * scale[None, :]
    B = rng.standard_normal((5, 3))
    factor = equilibrated_cholesky(A)
    np.testing.assert_allclose(A @ equilibrated_solve(factor, B[:, 0]), B[:, 0], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(A @ equilibrated_solve(factor, B), B, rtol=1e-9, atol=1e-9)
