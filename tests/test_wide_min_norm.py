"""LinearRegression on wide X (N < D) with one column 2**60 .. 1e200 times the others: the minimum-norm fit.

Every least-squares minimiser interpolates, and the minimum-norm one is ``w = Xc^T (Xc Xc^T)^+ yc`` in the
columns' own units (``Xc``, ``yc`` centred beside an intercept). Before, ``gelsd`` (the SVD, resolving singular
values only down to ``max(N, D) eps s_max``) kept one direction: a rank-one fit with training residuals ~9 and a
warning. The oracle is that formula in 500-digit mpmath (the equations kept: the first ``N - 1`` after centring,
which implies the last).
"""

import warnings

import mpmath
import numpy as np
import pytest

import linbook


def _min_norm(X, y, fit_intercept):
    with mpmath.workdps(500):
        n, d = X.shape
        A = mpmath.matrix([[mpmath.mpf(float(v)) for v in row] for row in X])
        b = mpmath.matrix([mpmath.mpf(float(v)) for v in y])
        if fit_intercept:
            for j in range(d):
                mean = sum(A[i, j] for i in range(n)) / n
                for i in range(n):
                    A[i, j] -= mean
            mean = sum(b) / n
            for i in range(n):
                b[i] -= mean
            A = mpmath.matrix([[A[i, j] for j in range(d)] for i in range(n - 1)])
            b = mpmath.matrix([b[i] for i in range(n - 1)])
        w = A.T * mpmath.lu_solve(A * A.T, b)
        return np.array([float(v) for v in w])


def _wide(c, column, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((10, 25)) + rng.standard_normal(25)
    y = rng.standard_normal(10)
    X[:, column] *= c
    return X, y


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("c", [2.0 ** 60, 1e100, 1e200])
@pytest.mark.parametrize("column, seed", [(0, 0), (7, 1)])
def test_wide_one_column_scaled_gives_the_minimum_norm_fit(c, column, seed, fit_intercept):
    X, y = _wide(c, column, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("error", linbook.base.LinbookWarning)
        model = linbook.LinearRegression(fit_intercept=fit_intercept).fit(X, y)
    np.testing.assert_allclose(model.coef_, _min_norm(X, y, fit_intercept), rtol=1e-10)
    np.testing.assert_allclose(model.predict(X), y, rtol=0, atol=1e-12 * np.abs(y).max())
