"""Session 29: least squares on sparse X by LSQR at small scales, against numpy's lstsq on the unscaled problem.

SciPy's LSQR stops once ``||A^T r|| <= atol (||A|| ||r|| + eps)``: the ``eps`` is absolute, and for features or
targets far below 1 the product ``||A|| ||r||`` falls under it, so LSQR stopped after a few iterations. Ridge
(lam = 0) on sparse 8 x 8 features of ~1e-30 with spread sample weights returned fitted values 0.7 of y's spread
off, silently, where the same features at 1 were right to 1e-10. ``lsqr_solve`` now divides the operator and the
target by powers of two near their norms (exact) first. The problems are the same ones exactly rescaled by powers
of two; the oracle is lstsq on the unscaled, weighted problem.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sps

import linbook
from tests.test_loo_two_clusters import _refit_residuals   # N refits in 100-digit arithmetic


def _problem(seed, n, d, weight_spread):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = X @ rng.standard_normal(d) + 0.5 * rng.standard_normal(n)
    w = np.exp(weight_spread * rng.standard_normal(n))
    return X, y, w


def _lstsq_fit(X, y, w, fit_intercept):
    A = np.column_stack([X, np.ones(len(y))]) if fit_intercept else X
    coef = np.linalg.lstsq(A * np.sqrt(w)[:, None], y * np.sqrt(w), rcond=None)[0]
    return A @ coef


CASES = [(seed, shape, spread, x_exp, y_exp, fit_intercept)
         for seed in (0, 1) for shape in ((8, 8), (30, 5)) for spread in (0.0, 6.0)
         for x_exp, y_exp in ((-100, 0), (-300, 0), (-400, 200), (0, -300), (300, -300))
         for fit_intercept in (True, False)]


@pytest.mark.parametrize("model", ["Ridge", "LinearRegression"])
@pytest.mark.parametrize("seed, shape, spread, x_exp, y_exp, fit_intercept", CASES)
def test_sparse_least_squares_at_small_scales(model, seed, shape, spread, x_exp, y_exp, fit_intercept):
    if shape == (8, 8) and fit_intercept:
        shape = (9, 8)                   # (the unweighted fit is then unique: 9 rows, 9 coefficients)
    X, y, w = _problem(seed, *shape, spread)
    expected = _lstsq_fit(X, y, w, fit_intercept)
    Xs = sps.csr_matrix(X * 2.0 ** x_exp)
    est = linbook.Ridge(lam=0.0, fit_intercept=fit_intercept) if model == "Ridge" else \
        linbook.LinearRegression(fit_intercept=fit_intercept)
    with warnings.catch_warnings():
        warnings.simplefilter("error")           # a warning would not be silent: here none is due
        est.fit(Xs, y * 2.0 ** y_exp, sample_weight=w)
    fitted = est.predict(Xs) / 2.0 ** y_exp
    np.testing.assert_allclose(fitted, expected, rtol=0, atol=1e-8 * np.std(y))


# -- leave-one-out on two groups of rows far apart (the known defect "leave-one-out on two clusters is only warned")


TWO_GROUPS = [(ratio, shape, lam, fit_intercept, seed)
              for ratio in (1e6, 1e12) for shape in ((10, 8, 7), (13, 10, 8), (7, 5, 3))
              for lam in (0.0, 1e-6, 1e2) for fit_intercept in (True, False) for seed in (4,)]


@pytest.mark.parametrize("ratio, shape, lam, fit_intercept, seed", TWO_GROUPS,
                         ids=lambda v: f"{v:g}" if isinstance(v, float) else str(v))
def test_leave_one_out_on_two_groups_of_rows(ratio, shape, lam, fit_intercept, seed):
    """Some rows ``ratio`` times the others, neither group determining the fit: every residual by a refit on the
    raw design, rows sorted largest first (before: up to O(1) off beside a warning)."""
    n, d, k = shape
    rng = np.random.default_rng(seed)
    X, y = rng.standard_normal((n, d)), rng.standard_normal(n)
    X[rng.permutation(n)[:k]] *= ratio
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        if lam == 0:
            r = linbook.loocv_least_squares(X, y, fit_intercept=fit_intercept, return_residuals=True)[1]
        else:
            r = linbook.loocv_ridge(X, y, lam, fit_intercept=fit_intercept, return_residuals=True)[1]
    np.testing.assert_allclose(r, _refit_residuals(X, y, lam, fit_intercept), rtol=1e-9)


FAR_PAIRS = [(seed, n, d, ratio, lam, fit_intercept)
             for seed in (0, 1, 2) for n, d in ((4, 2), (8, 3)) for ratio in (1e12, 1e20)
             for lam in (1e-6, 1.0) for fit_intercept in (True, False)]


@pytest.mark.parametrize("seed, n, d, ratio, lam, fit_intercept", FAR_PAIRS,
                         ids=lambda v: f"{v:g}" if isinstance(v, float) else str(v))
def test_ridge_leave_one_out_with_two_far_rows(seed, n, d, ratio, lam, fit_intercept):
    """Two rows ``ratio`` times the others in a tall design: without one of them the other far row fixes one
    direction and the small rows (with the penalty) the rest, so the left-out far row's prediction is ~``ratio``.
    The refit of such a row (leverage near 1) dropped that direction as "dependent" (its ``R_kk`` ~ the small rows,
    below the far row's rounding) and returned the in-sample residual, ~1 instead of ~1e20, silently."""
    rng = np.random.default_rng(seed)
    X, y = rng.standard_normal((n, d)), rng.standard_normal(n)
    X[:2] *= ratio
    r = linbook.loocv_ridge(X, y, lam, fit_intercept=fit_intercept, return_residuals=True)[1]
    expected = _refit_residuals(X, y, lam, fit_intercept)
    np.testing.assert_allclose(r[:2], expected[:2], rtol=1e-7)          # the far rows
    np.testing.assert_allclose(r[2:], expected[2:], rtol=1e-7)
