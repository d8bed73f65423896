"""Degenerate designs: N = D, N = D + 1, N = 2, duplicated rows and columns, a column of ones, a zero
column, exactly collinear columns, every row the same; a right answer or a clear error naming X.

Right answers: least squares' fitted values are the projection of ``y`` on the span of ``[1, X]``
(``numpy.linalg.lstsq``), its coefficients scikit-learn's minimum-norm ones; the leverages are the
diagonal of that projection; leave-one-out residuals are refits without each row. Where a row's
leverage is 1 its leave-one-out prediction is not determined: the error must name ``X`` (it said
"sample 0 has leverage h_ii = 1 ...; use fewer features", naming no input).
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression as SkLinearRegression

import linbook
from tests.adversarial.harness import assert_clear_error


def _designs(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((12, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + 3 + 0.3 * rng.standard_normal(12)
    return {
        "N=D": (X[:3], y[:3]), "N=D+1": (X[:4], y[:4]), "N=2": (X[:2, :2], y[:2]),
        "dup-rows": (np.vstack([X, X[:4]]), np.r_[y, y[:4]]),
        "dup-col": (np.column_stack([X, X[:, 1]]), y),
        "ones-col": (np.column_stack([np.ones(12), X]), y),
        "zero-col": (np.column_stack([X, np.zeros(12)]), y),
        "collinear": (np.column_stack([X, 2 * X[:, 0] - X[:, 2]]), y),
        "y-linear": (X, X @ np.array([1.0, -2.0, 0.5]) + 3),
    }


def _projection(X, y):
    A = np.column_stack([np.ones(len(y)), X])
    return A @ np.linalg.lstsq(A, y, rcond=None)[0]


@pytest.mark.parametrize("name", sorted(_designs()))
def test_least_squares_fits_the_projection(name):
    X, y = _designs()[name]
    est = linbook.LinearRegression().fit(X, y)
    scale = np.max(np.abs(y))
    np.testing.assert_allclose(est.predict(X), _projection(X, y), rtol=0, atol=1e-9 * scale)
    np.testing.assert_allclose(est.coef_, SkLinearRegression().fit(X, y).coef_, rtol=0, atol=1e-8 * scale)


@pytest.mark.parametrize("name", sorted(_designs()))
def test_leverages_are_the_projection_diagonal(name):
    X, _ = _designs()[name]
    A = np.column_stack([np.ones(len(X)), X])
    U, s, _ = np.linalg.svd(A, full_matrices=False)
    rank = int(np.sum(s > 1e-10 * s[0]))
    np.testing.assert_allclose(linbook.hat_diagonal(X, fit_intercept=True), np.sum(U[:, :rank] ** 2, axis=1),
                               rtol=0, atol=1e-10)


@pytest.mark.parametrize("call", ["loocv_least_squares", "loocv_ridge(lam=0)"])
@pytest.mark.parametrize("name", ["N=D", "N=D+1", "N=2"])
def test_leverage_one_is_a_clear_error_about_X(name, call):
    X, y = _designs()[name]
    with pytest.raises(ValueError) as info:
        if call == "loocv_least_squares":
            linbook.loocv_least_squares(X, y)
        else:
            linbook.loocv_ridge(X, y, 0.0)
    assert_clear_error(info.value, "X")
