"""Session 32: features offset far from 0, where session 31's fix did not reach.

- Binary ``LDA`` / ``RDA``: ``coef_ = beta_1 - beta_0`` was the difference of two vectors of ~1e12 at an offset of
  1e12 (``Sigma^{-1} mu_c``), 3e-4 off (1e-4 relative); ``intercept_`` was 7e-5 relative off. Both are now formed
  from the centred discriminants (``LDA._binary_discriminant``).
- Least squares on Dask: the blocks' Gram matrices were formed on the raw columns, so the coefficients were 3e-5
  off and the predictions 1.7e-3 at 1e12. The blocks are now measured from the centre of each column's range
  (``linbook._design.range_origin``), read in the first pass, and the fit predicts from it.
- Logistic and probit regression on Dask predicted as ``x^T w + b``: 8e-4 off at 1e12. They now keep the
  in-memory fit's origin.
- ``lam = 0`` fits of a design of lower rank (a duplicated column), in memory and on Dask: the move to the
  least-norm member dropped the origin, 1.1e-4 off at 1e12. The move is now taken from the origin.

Oracle: the same fit on ``X - offset``, which is exact (Sterbenz's lemma).
"""

from fractions import Fraction

import numpy as np
import pytest

import linbook

da = pytest.importorskip("dask.array")

OFFSETS = [1e6, 1e9, 1e12, -1e12]


def _classes(seed=1, n=120, classes=2, duplicate=False):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, n)
    X = rng.standard_normal((n, 3)) + 1.2 * np.eye(classes, 3)[y]
    return (np.c_[X, X[:, 0]] if duplicate else X), y


def _regression(seed=0, n=400):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    return X, X @ [1.0, -2.0, 0.5] + 0.3 * rng.standard_normal(n) + 7.0


def _exact_intercept(reference, shift):
    """``b - shift^T w`` of the fit on ``X - shift``, to the last digit (rational arithmetic)."""
    coef = reference.coef_[0]
    return float(Fraction(reference.intercept_[0]) - sum(Fraction(w) * Fraction(s) for w, s in zip(coef, shift)))


@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("make", [linbook.LDA, lambda: linbook.RDA(shrinkage=0.2)], ids=["LDA", "RDA"])
def test_binary_discriminant_coefficients_on_offset_features(make, seed, offset):
    X0, y = _classes(seed)
    shift = offset * np.array([1.0, -2.0, 0.0])
    X = X0 + shift
    fitted, reference = make().fit(X, y), make().fit(X - shift, y)
    scale = np.abs(reference.coef_).max()
    np.testing.assert_allclose(fitted.coef_, reference.coef_, rtol=0, atol=1e-13 * scale)
    exact = _exact_intercept(reference, shift)
    assert fitted.intercept_[0] == pytest.approx(exact, rel=1e-13, abs=1e-12 * scale)
    np.testing.assert_allclose(fitted.decision_function(X), reference.decision_function(X - shift), rtol=0,
                               atol=1e-12 * scale)


@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("make", [linbook.LinearRegression, lambda: linbook.Ridge(lam=2.0)],
                         ids=["LinearRegression", "Ridge"])
def test_least_squares_on_dask_with_offset_features(make, weighted, offset):
    X0, y = _regression()
    sw = np.random.default_rng(5).uniform(0.5, 2.0, y.size) if weighted else None
    shift = offset * np.array([1.0, 0.0, -3.0])
    X = X0 + shift
    reference = make().fit(X - shift, y, sample_weight=sw)
    fitted = make().fit(da.from_array(X, chunks=100), da.from_array(y, chunks=100),
                        sample_weight=None if sw is None else da.from_array(sw, chunks=100))
    np.testing.assert_allclose(fitted.coef_, reference.coef_, rtol=0, atol=1e-12)
    assert fitted.intercept_ == pytest.approx(reference.intercept_ - float(sum(
        Fraction(w) * Fraction(s) for w, s in zip(reference.coef_, shift))), rel=1e-12, abs=1e-10)
    spread = np.ptp(y)
    np.testing.assert_allclose(fitted.predict(X), reference.predict(X - shift), rtol=0, atol=1e-13 * spread)
    on_blocks = fitted.predict(da.from_array(X, chunks=100)).compute()
    np.testing.assert_allclose(on_blocks, reference.predict(X - shift), rtol=0, atol=1e-13 * spread)


@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("make, classes", [(linbook.LogisticRegression, 2), (linbook.ProbitRegression, 2),
                                           (linbook.LogisticRegression, 3)],
                         ids=["logistic", "probit", "multinomial"])
def test_logistic_on_dask_with_offset_features(make, classes, offset):
    X0, y = _classes(classes=classes)
    shift = offset * np.array([1.0, -2.0, 0.0])
    X = X0 + shift
    reference = make().fit(X - shift, y)
    fitted = make().fit(da.from_array(X, chunks=40), da.from_array(y, chunks=40))
    np.testing.assert_allclose(fitted.predict_proba(X), reference.predict_proba(X - shift), rtol=0, atol=1e-12)


@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("on_dask", [False, True], ids=["memory", "dask"])
@pytest.mark.parametrize("classes", [2, 3])
def test_least_norm_fit_on_offset_features(classes, on_dask, offset):
    """``lam = 0`` with a duplicated column: the least-norm member, predicted from the fit's origin."""
    X0, y = _classes(seed=4, classes=classes, duplicate=True)
    shift = offset * np.array([1.0, -2.0, 0.0, 1.0])
    X = X0 + shift
    reference = linbook.LogisticRegression(lam=0.0).fit(X - shift, y)
    data = (da.from_array(X, chunks=40), da.from_array(y, chunks=40)) if on_dask else (X, y)
    fitted = linbook.LogisticRegression(lam=0.0).fit(*data)
    np.testing.assert_allclose(fitted.coef_, reference.coef_, rtol=0, atol=1e-9)
    np.testing.assert_allclose(fitted.predict_proba(X), reference.predict_proba(X - shift), rtol=0, atol=1e-10)
