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
