"""Leave-one-out residuals with a row far from the others, against refits in 80-digit arithmetic.

A row 1e4..1e12 times the others is valid input, and its leave-one-out residual is determined by the
other rows (whenever they keep the design's rank). Before:

* its leverage ``h_ii`` was within 1e-10 of 1 from ~1e5 times on, and ``loocv_least_squares`` /
  ``loocv_ridge`` refused the input; at 1e4 times the closed form ``(y_i - yhat_i) / (1 - h_ii)``
  divided the rounding of the numerator by ``1 - h_ii ~ 1e-8`` and returned residuals 1e-6 off, silently;
* with an intercept the columns were centred on their means (``loocv_ridge``) or scaled by their largest
  entries (``loocv_least_squares``), both set by the far row, and the ordinary rows' residuals came out
  1e-4 off once they were accepted.

The oracle refits on the other ``N - 1`` rows by the normal equations in mpmath (exact for these sizes).
"""

import mpmath
import numpy as np
import pytest

import linbook


def _refit_residuals(X, y, lam, fit_intercept):
    """``y_i - yhat_{-i}(x_i)`` by N refits in 80-digit arithmetic (unpenalised intercept)."""
    with mpmath.workdps(80):
        n, d = X.shape
        design = [[mpmath.mpf(float(v)) for v in row] + ([mpmath.mpf(1)] if fit_intercept else []) for row in X]
        out = []
        for i in range(n):
            rows = [design[k] for k in range(n) if k != i]
            A = mpmath.matrix(rows)
            G = A.T * A
            for j in range(d):
                G[j, j] += lam
            w = mpmath.lu_solve(G, A.T * mpmath.matrix([mpmath.mpf(float(y[k])) for k in range(n) if k != i]))
            out.append(float(mpmath.mpf(float(y[i])) - sum(design[i][j] * w[j] for j in range(len(design[i])))))
    return np.array(out)


def _problem(far, seed, n=9, d=2):
    rng = np.random.default_rng(seed)
    X, y = rng.standard_normal((n, d)), rng.standard_normal(n)
    X[0] *= far
    return X, y


CASES = [(far, seed, fit_intercept) for far in (1e4, 1e8, 1e12) for seed in (0, 1) for fit_intercept in (True, False)]


@pytest.mark.parametrize("far, seed, fit_intercept", CASES, ids=lambda v: f"{v:g}" if isinstance(v, float) else str(v))
def test_least_squares_loo_with_a_far_row(far, seed, fit_intercept):
    X, y = _problem(far, seed)
    _, r = linbook.loocv_least_squares(X, y, fit_intercept=fit_intercept, return_residuals=True)
    np.testing.assert_allclose(r, _refit_residuals(X, y, 0.0, fit_intercept), rtol=1e-9)


@pytest.mark.parametrize("lam", [1e-6, 1.0])
@pytest.mark.parametrize("far, seed, fit_intercept", CASES, ids=lambda v: f"{v:g}" if isinstance(v, float) else str(v))
def test_ridge_loo_with_a_far_row(far, seed, fit_intercept, lam):
    X, y = _problem(far, seed)
    _, r = linbook.loocv_ridge(X, y, lam, fit_intercept=fit_intercept, return_residuals=True)
    np.testing.assert_allclose(r, _refit_residuals(X, y, lam, fit_intercept), rtol=1e-9)


def test_a_row_the_others_cannot_predict_is_refused():
    """Without row 0 the design loses rank (its second column is zero elsewhere): no LOO prediction."""
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.standard_normal(6), np.zeros(6)])
    X[0, 1] = 1e6
    y = rng.standard_normal(6)
    with pytest.raises(ValueError, match="row 0 of X .* do not determine its prediction"):
        linbook.loocv_least_squares(X, y, return_residuals=True)
    with pytest.raises(ValueError, match="row 0 of X .* do not determine its prediction"):
        linbook.loocv_ridge(X, y, 0.0, return_residuals=True)
    _, r = linbook.loocv_ridge(X, y, 1.0, return_residuals=True)          # a penalty determines it
    np.testing.assert_allclose(r, _refit_residuals(X, y, 1.0, True), rtol=1e-9)


def test_columns_near_the_largest_double_are_not_an_overflow():
    """A column from -1.7e308 to 1.7e308 beside an intercept: shifting it by its median overflowed to inf and the
    call ended in LAPACK's "array must not contain infs or NaNs". The answers equal those on X / 2^20 (least
    squares and the leverages do not change; ridge with ``lam / 2^40``)."""
    rng = np.random.default_rng(4)
    y = rng.standard_normal(10)
    X = np.column_stack([1.7e308 * np.clip(1 + 0.01 * rng.standard_normal(10), 0, 1), rng.standard_normal(10)])
    X[0, 0] = -1.7e308
    small = np.ldexp(X, -20)
    np.testing.assert_allclose(linbook.loocv_least_squares(X, y), linbook.loocv_least_squares(small, y), rtol=1e-12)
    np.testing.assert_allclose(linbook.hat_diagonal(X, fit_intercept=True),
                               linbook.hat_diagonal(small, fit_intercept=True), rtol=1e-12)
    np.testing.assert_allclose(linbook.loocv_ridge(X, y, 1.0), linbook.loocv_ridge(small, y, 2.0 ** -40), rtol=1e-12)
