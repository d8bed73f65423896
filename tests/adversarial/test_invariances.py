"""Exact symmetries: a transformation of the data whose effect on the fit the maths fixes.

No oracle is needed: the fit on the transformed data must be the fit on the original data,
transformed back. Each case below is a defect the session-22 fuzzing of these symmetries
found (row and column permutations, relabelled classes, shifted and scaled columns, scaled
targets and weights, duplicated and all-zero columns, other containers), kept so that it
stays fixed.
"""

import warnings

import numpy as np
import pytest

import linbook


def _fit(est, X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y, **kw)


def _classes(n, d, C, seed=3):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % C
    return rng.standard_normal((n, d)) + 1.2 * rng.standard_normal((C, d))[y], y


@pytest.mark.parametrize("position", [0, 1, 3])
def test_fisher_lda_an_all_zero_column_changes_nothing(position):
    """Ten classes in three features and one all-zero column: the constant column adds no direction, so the
    projection is the one without it (three components, not four). Before, ``n_components`` defaulted to
    ``min(C - 1, D) = 4`` counting the zero column, and fit failed with numpy's "shape mismatch: value array of
    shape (3,3) could not be broadcast" (naming no input)."""
    X, y = _classes(200, 3, 10)
    X0 = np.insert(X, position, 0.0, axis=1)
    got = _fit(linbook.FisherLDA(), X0, y)
    want = _fit(linbook.FisherLDA(), X, y)
    assert got.scalings_.shape == (4, 3)
    np.testing.assert_array_equal(got.scalings_[position], 0.0)
    np.testing.assert_allclose(np.abs(got.transform(X0)), np.abs(want.transform(X)), rtol=1e-10, atol=1e-12)


def test_fisher_lda_n_components_beyond_the_varying_columns_is_a_clear_error():
    X, y = _classes(200, 3, 10)
    with pytest.raises(ValueError, match=r"n_components.*3 varying columns of X.*Set n_components"):
        linbook.FisherLDA(n_components=4).fit(np.insert(X, 0, 7.0, axis=1), y)


def _wide(c):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((10, 25)) + rng.standard_normal(25)
    y = X @ rng.standard_normal(25) + 0.7 + 0.3 * rng.standard_normal(10)
    Xc = X.copy()
    Xc[:, 0] *= c
    return X, y, Xc


@pytest.mark.parametrize("c", [2.0 ** 60, 1e100])
def test_linear_regression_wide_one_column_scaled_is_solved_by_lq(c):
    """The same wide fit: the SVD keeps one of the 9 directions (it warned, session 22, and returned the
    rank-one fit); now the QR of X^T (``solver_ == "lq"``) keeps all 9, with nothing to warn about. The
    unscaled X and a genuinely rank-deficient wide X (four columns repeated seven times) stay as they were."""
    X, y, Xc = _wide(c)
    with warnings.catch_warnings():
        warnings.simplefilter("error", linbook.base.LinbookWarning)
        scaled = linbook.LinearRegression().fit(Xc, y)
        linbook.LinearRegression().fit(X, y)
        deficient = linbook.LinearRegression().fit(np.tile(X[:, :4], (1, 7)), y)
    assert (scaled.solver_, scaled.rank_) == ("lq", 9)
    assert (deficient.solver_, deficient.rank_) == ("gelsd", 4)


@pytest.mark.parametrize("c", [2.0 ** 60, 1e100])
def test_linear_regression_wide_one_column_scaled_still_interpolates(c):
    """N = 10 rows, D = 25 columns: every least-squares minimiser interpolates y, whatever the column
    scales, so the fitted values on the training rows are y (to rounding) for X and for X with column 0
    times c."""
    X, y, Xc = _wide(c)
    plain = _fit(linbook.LinearRegression(), X, y)
    np.testing.assert_allclose(plain.predict(X), y, rtol=0, atol=1e-9 * np.abs(y).max())
    scaled = _fit(linbook.LinearRegression(), Xc, y)
    np.testing.assert_allclose(scaled.predict(Xc), y, rtol=0, atol=1e-9 * np.abs(y).max())
