"""RecursiveLeastSquares with a row 1e8..1e150 times the others (or a weight that large), against the weighted
ridge problem it defines, solved by mpmath at 400 digits.

Before, ``A = alpha I + sum s x x^T`` rounded the ordinary rows' share away beside the far row: ``fit`` refused
the problem ("rank deficient or too ill-conditioned") at every far scale from 1e8 on, and ``partial_fit`` of a
first chunk holding the far row, then single rows, published coefficients 2 % to 1e134 times off (with warnings), or
raised DivergenceError. ``fit`` (and a first ``partial_fit`` chunk) now solves such rows by Householder QR of the
rows sorted by norm; later chunks continue by the recursion from ``P = R^-1 R^-T``. A stream's first rows are
held and solved together until there is a mean and ``2 p`` of them.
"""

from __future__ import annotations

import warnings

import mpmath as mp
import numpy as np
import pytest

from linbook.online import RecursiveLeastSquares


def _exact(X, y, sw, alpha, intercept):
    """The minimiser of (1/2) sum s_i (y_i - w'x_i - b)^2 + (alpha/2) ||w||^2 (b unpenalised), at 400 digits."""
    with mp.workdps(400):
        Z = [[mp.mpf(float(v)) for v in row] + ([mp.mpf(1)] if intercept else []) for row in X]
        p = len(Z[0])
        A, r = mp.matrix(p, p), mp.matrix(p, 1)
        for zi, yi, si in zip(Z, y, sw):
            s, t = mp.mpf(float(si)), mp.mpf(float(yi))
            for j in range(p):
                r[j] += s * zi[j] * t
                for k in range(p):
                    A[j, k] += s * zi[j] * zi[k]
        for j in range(X.shape[1]):
            A[j, j] += mp.mpf(alpha)
        m = mp.lu_solve(A, r)
        return np.array([float(v) for v in m])


def _problem(seed, far, pos, n=30, d=3, weight=False):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = X @ rng.standard_normal(d) + 0.5 + 0.1 * rng.standard_normal(n)
    sw = np.ones(n)
    if weight:
        sw[pos] = far
    else:
        X[pos] *= far
        y[pos] = far * rng.standard_normal()
    return X, y, sw


def _params(model):
    return np.r_[model.coef_, model.intercept_] if model.fit_intercept else model.coef_


FARS = [1e8, 1e20, 1e75, 1e150]


@pytest.mark.parametrize("far", FARS, ids=lambda f: f"far{f:g}")
@pytest.mark.parametrize("pos", [0, 14, 29], ids=["first", "middle", "last"])
@pytest.mark.parametrize("alpha, intercept", [(0.0, True), (0.0, False), (1.0, True), (1.0, False)])
def test_fit_with_a_far_row_is_the_weighted_ridge_minimiser(far, pos, alpha, intercept):
    X, y, sw = _problem(0, far, pos)
    model = RecursiveLeastSquares(prior_precision=alpha, fit_intercept=intercept).fit(X, y)
    np.testing.assert_allclose(_params(model), _exact(X, y, sw, alpha, intercept), rtol=1e-9)


@pytest.mark.parametrize("far", [1e20, 1e75, 1e150], ids=lambda f: f"w{f:g}")
@pytest.mark.parametrize("alpha", [0.0, 1.0])
def test_fit_with_a_far_weight_is_the_weighted_ridge_minimiser(far, alpha):
    X, y, sw = _problem(1, far, 0, weight=True)
    model = RecursiveLeastSquares(prior_precision=alpha).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(_params(model), _exact(X, y, sw, alpha, True), rtol=1e-9)


@pytest.mark.parametrize("far", FARS, ids=lambda f: f"far{f:g}")
@pytest.mark.parametrize("first, chunk", [(1, 1), (2, 1), (1, 3), (4, 1), (5, 5), (20, 1), (10, 7)])
@pytest.mark.parametrize("alpha, intercept", [(0.0, True), (1.0, False)])
def test_a_stream_that_starts_with_the_far_row_reaches_the_minimiser(far, first, chunk, alpha, intercept):
    """A first chunk of the far row alone (or too few rows to fix the model) is held with the next rows until
    there is a mean and 2 p rows; before, the far row became the intercept's shift (every later ``x - c``
    lost its digits) or rounded the next rows away in ``A``."""
    X, y, sw = _problem(2, far, 0)
    model = RecursiveLeastSquares(prior_precision=alpha, fit_intercept=intercept)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)     # "rank deficient so far" while it is
        model.partial_fit(X[:first], y[:first])
        for i in range(first, X.shape[0], chunk):
            model.partial_fit(X[i:i + chunk], y[i:i + chunk])
    assert model.n_samples_seen_ == X.shape[0]
    np.testing.assert_allclose(_params(model), _exact(X, y, sw, alpha, intercept), rtol=1e-9)


def test_the_posterior_covariance_with_a_far_row():
    """``P_ = A^-1``: entries to 1e-9 of its largest (the far row's direction has a variance ~1e-40 of the
    others', below the rounding of the largest entries)."""
    X, y, sw = _problem(3, 1e20, 0)
    P = RecursiveLeastSquares(prior_precision=1.0, fit_intercept=False).fit(X, y).P_
    with mp.workdps(400):
        Z = mp.matrix(X.tolist())
        exact = (Z.T * Z + mp.eye(3)) ** -1
        exact = np.array([[float(exact[i, j]) for j in range(3)] for i in range(3)])
    np.testing.assert_allclose(P, exact, rtol=0, atol=1e-9 * np.abs(exact).max())
