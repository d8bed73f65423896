"""Adversarial cases for linbook.selection's helpers against closed forms (session 27's function fuzz).

* ``hat_diagonal`` divides each column by a power of two near the median of its magnitudes. For an even count
  that median averages the middle two, and their sum overflowed for entries near 1e308: the column was not
  scaled, the QR overflowed to inf, and every leverage came out 0 (they sum to the rank). Right answer: the
  leverages of the same columns at any other scale (the hat matrix does not depend on the units).
* ``kl_divergence`` accepts vectors that sum to 1 to ``np.isclose``; of such a p against q = p it returned
  -1.1e-16 (and ~-1e-6 for a sum 1 - 1e-6): a divergence below 0. Right answer: KL of the normalised vectors.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression

import linbook

from .harness import assert_clear_error


@pytest.mark.parametrize("n", [7, 8, 40], ids=lambda n: f"N{n}")
@pytest.mark.parametrize("scale", [1e300, 1.7e308 / 1.5e8], ids=lambda s: f"x{s:.1e}")
@pytest.mark.parametrize("fit_intercept", [False, True], ids=["no_intercept", "intercept"])
def test_hat_diagonal_of_columns_near_the_largest_double(n, scale, fit_intercept):
    rng = np.random.default_rng(n)
    X = rng.standard_normal((n, 3)) + 1e8        # entries ~1e8, times scale: up to ~1.1e308
    want = linbook.hat_diagonal(X, fit_intercept=fit_intercept)
    got = linbook.hat_diagonal(X * scale, fit_intercept=fit_intercept)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-7)
    assert got.sum() == pytest.approx(3 + fit_intercept, rel=1e-9)


@pytest.mark.parametrize("shortfall", [1e-16, 1e-12, 1e-6], ids=lambda s: f"sum1-{s:g}")
def test_kl_divergence_of_vectors_summing_to_one_within_rounding(shortfall):
    rng = np.random.default_rng(1)
    q = rng.dirichlet(np.ones(4))
    p = q * (1 - shortfall)                     # sums to 1 within np.isclose: accepted as a distribution
    assert linbook.kl_divergence(p, q) == pytest.approx(0.0, abs=1e-15)
    assert linbook.kl_divergence([1 - 1e-16], [1.0]) == 0.0
    r = rng.dirichlet(np.ones(4))
    want = float(np.sum(q * np.log(q / r)))
    assert linbook.kl_divergence(p, r) == pytest.approx(want, rel=1e-12)
    assert linbook.kl_divergence(p, r) >= 0.0


@pytest.mark.parametrize("search", ["forward_selection", "backward_selection"])
@pytest.mark.parametrize("corrupts, kw", [("n_features", {"n_features": 2.7}), ("tol", {"tol": float("nan")})],
                         ids=["n_features2.7", "tolnan"])
def test_wrapper_search_refuses_a_fractional_count_or_a_nan_tol(search, corrupts, kw):
    """n_features=2.7 was cut to 2 in silence; tol=NaN made every comparison False (the forward search returned no
    feature at all). Right answer: a clear error naming the argument."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 4))
    y = X[:, 0] + rng.standard_normal(40)
    with pytest.raises((ValueError, TypeError)) as info:
        getattr(linbook, search)(LinearRegression(), X, y, **kw)
    assert_clear_error(info.value, corrupts)


@pytest.mark.parametrize("offset", [1e6, 1e9, 1e12], ids=lambda c: f"y+{c:g}")
@pytest.mark.parametrize("seed", range(3))
def test_loo_residuals_do_not_depend_on_a_shift_of_y_beside_an_intercept(seed, offset):
    """The intercept absorbs any shift of y, so the leave-one-out residuals are those of y itself. A wide design
    (6 rows, 5 features) under lam = 1e-8 has 1 - h_ii ~ 1e-4: the rounding of y - H y at y ~ 1e9 (eps * 1e9)
    was amplified to residuals 1e-6..1e-3 off. Right answer: the residuals of the unshifted y (to ~1e-9)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((6, 5)) + 1e6
    y = X @ rng.standard_normal(5) * 1e-6 + rng.standard_normal(6)
    y = y - np.median(y)
    shifted = y + offset                     # (shifted - offset is y to its rounding at that offset)
    want = linbook.loocv_ridge(X, shifted - offset, 1e-8, return_residuals=True)[1]
    got = linbook.loocv_ridge(X, shifted, 1e-8, return_residuals=True)[1]
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * np.max(np.abs(want)))
    want = linbook.loocv_least_squares(X[:, :3], shifted - offset, return_residuals=True)[1]
    got = linbook.loocv_least_squares(X[:, :3], shifted, return_residuals=True)[1]
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * np.max(np.abs(want)))
