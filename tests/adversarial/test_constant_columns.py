"""A constant feature (a column holding one value in every row) gets coefficient 0, not a fit to rounding noise.

With an intercept a constant column is the intercept's direction again: the fit cannot tell them
apart, and the answer of least squares (minimum norm), of the unpenalised logistic and probit fits
and of least absolute deviations is the fit without that column, with coefficient 0 for it. The fits
centre such columns on their mean; a mean summed in floating point is the value only to rounding
(forty rows of 0.1 average to 0.1 + 1.4e-17), so the centred column was rounding noise of ~1e-17,
which the fits then scaled to unit size or counted as a direction of the design. Before,
``LinearRegression`` gave the column of 0.1 a coefficient of 13.4 (``rank_`` one too high), the
logistic and probit fits (dense and sparse) ~1e16, ``LeastAbsoluteDeviation`` up to ~1e17: every
prediction at another value of that feature moved by as much, in silence. The same noise made
``loocv_ridge(lam=0)`` differ from ``loocv_least_squares`` (1.45 against 1.28) and gave
``gaussian_mle`` / ``mvn_mle`` a variance of ~1e-34 for the column instead of 0.

Generators: Gaussian features plus one constant column (0.1, 0.7, 1/3: values whose mean is
inexact), dense and CSR, with and without integer ``sample_weight``. Right answer: the fit on ``X``
without the constant column (its predictions), and a coefficient of (at most rounding of) zero.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import linbook

REGRESSORS = {
    "LinearRegression": lambda: linbook.LinearRegression(),
    "Ridge(lam=0)": lambda: linbook.Ridge(lam=0.0),
    "LeastAbsoluteDeviation": lambda: linbook.LeastAbsoluteDeviation(),
}
CLASSIFIERS = {
    "Logistic-newton": lambda: linbook.LogisticRegression(lam=0.0, solver="newton"),
    "Logistic-lbfgs": lambda: linbook.LogisticRegression(lam=0.0, solver="lbfgs"),
    "Probit": lambda: linbook.ProbitRegression(lam=0.0),
}
VALUES = (0.1, 0.7, 1 / 3)


def _data(seed, classes):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((40, 3))
    t = X @ np.array([1.0, -2.0, 0.5]) + 3 + rng.standard_normal(40)
    if classes == 0:
        return X, t
    noisy = t + 2 * rng.standard_normal(40)      # overlapping classes: the unpenalised fit exists
    return X, (noisy > 3).astype(int) if classes == 2 else np.digitize(noisy, [2.0, 4.0])


def _fit(make, X, y, sw, sparse):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # a ConvergenceWarning would not excuse a wrong answer
        return make().fit(sp.csr_matrix(X) if sparse else X, y, sample_weight=sw)


def _score(est, X):
    return est.decision_function(X) if hasattr(est, "decision_function") else est.predict(X)


def _check(make, X, y, value, weighted, sparse):
    sw = np.random.default_rng(1).integers(1, 4, len(y)).astype(float) if weighted else None
    Xa = np.column_stack([X, np.full(len(y), value)])
    est = _fit(make, Xa, y, sw, sparse)
    ref = _fit(make, X, y, sw, sparse)
    coef = np.asarray(est.coef_).reshape(-1, Xa.shape[1])
    ref_coef = np.asarray(ref.coef_).reshape(-1, X.shape[1])
    assert np.max(np.abs(coef[:, -1])) <= 1e-12 * np.max(np.abs(ref_coef)), f"constant column's coefficient {coef[:, -1]}"
    moved = Xa.copy()
    moved[:, -1] = value + 1.0
    got, want = _score(est, moved), _score(ref, X)
    assert np.max(np.abs(got - want)) <= 1e-7 * np.max(np.abs(want)), "predictions at another value of the constant feature"


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize("name", sorted(REGRESSORS))
def test_regressors_give_a_constant_column_coefficient_zero(name, value, weighted, sparse):
    X, y = _data(0, classes=0)
    _check(REGRESSORS[name], X, y, value, weighted, sparse)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("name", sorted(CLASSIFIERS))
def test_classifiers_give_a_constant_column_coefficient_zero(name, classes, value, weighted, sparse):
    if classes == 3 and name == "Probit":
        pytest.skip("ProbitRegression is binary")
    X, y = _data(0, classes=classes)
    _check(CLASSIFIERS[name], X, y, value, weighted, sparse)


def test_least_squares_rank_ignores_a_constant_column():
    """``rank_`` counts the directions of the centred design: a constant column adds none."""
    X, y = _data(0, classes=0)
    est = linbook.LinearRegression().fit(np.column_stack([X, np.full(len(y), 0.1)]), y)
    assert est.rank_ == 3


def test_rows_all_equal_give_the_mean():
    """Every row the same: no feature says anything; the fit is the (weighted) mean, every coefficient 0."""
    rng = np.random.default_rng(4)
    X = np.tile(rng.uniform(-5, 5, 3), (12, 1))
    y = rng.standard_normal(12)
    ls = linbook.LinearRegression().fit(X, y)
    np.testing.assert_array_equal(ls.coef_, 0.0)
    assert ls.intercept_ == pytest.approx(y.mean(), rel=1e-12)
    lad = linbook.LeastAbsoluteDeviation().fit(X, y)
    np.testing.assert_array_equal(lad.coef_, 0.0)
    assert np.sum(np.abs(y - lad.predict(X))) == pytest.approx(np.sum(np.abs(y - np.median(y))), rel=1e-9)


@pytest.mark.parametrize("value", VALUES)
def test_loocv_ridge_without_penalty_is_least_squares_beside_a_constant_column(value):
    """``loocv_ridge(lam=0)`` is least squares, which a constant column (the intercept's direction) leaves
    unchanged. Before, the centred column of rounding noise counted as a feature: 1.45 against 1.28."""
    X, y = _data(0, classes=0)
    Xa = np.column_stack([X, np.full(len(y), value)])
    want = linbook.loocv_least_squares(X, y)
    assert linbook.loocv_ridge(Xa, y, 0.0) == pytest.approx(want, rel=1e-9)
    assert linbook.loocv_least_squares(Xa, y) == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("value", VALUES)
def test_gaussian_mle_of_a_constant_column_has_zero_variance(value):
    """The MLE of a constant feature is its value with variance (and covariances) exactly 0, so that
    ``mvn_log_likelihood`` refuses the degenerate covariance (the likelihood is unbounded) instead of
    returning a finite number from a variance of ~1e-34."""
    X, _ = _data(0, classes=0)
    Xa = np.column_stack([X, np.full(len(X), value)])
    mean, cov = linbook.mvn_mle(Xa)
    assert mean[-1] == value
    np.testing.assert_array_equal(cov[-1], 0.0)
    np.testing.assert_array_equal(cov[:, -1], 0.0)
    assert linbook.gaussian_mle(np.full(9, value)) == (value, 0.0)
    with pytest.raises(ValueError, match="singular"):
        linbook.mvn_log_likelihood(Xa, mean, cov)


@pytest.mark.parametrize("name", ["LinearRegression", "Ridge(lam=0)", "Logistic-newton", "Logistic-lbfgs", "Probit"])
def test_dask_fits_give_a_constant_column_coefficient_zero_or_a_clear_error(name):
    """The Dask fits centre each row block on its own means and the whole on the combined ones: a constant
    column was rounding noise there too (LinearRegression 1.87, logistic 1.4e16). Logistic and probit now
    give the in-memory answer; least squares on Dask has only the Cholesky path, and the exactly
    singular Gram is now refused with its clear error instead of being fitted."""
    da = pytest.importorskip("dask.array")
    from tests.adversarial.harness import assert_clear_error

    make = {**REGRESSORS, **CLASSIFIERS}[name]
    X, y = _data(0, classes=0 if name in REGRESSORS else 2)
    X, y = np.vstack([X] * 10), np.concatenate([y] * 10)     # 400 rows, four blocks
    Xa = np.column_stack([X, np.full(len(y), 0.1)])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = make().fit(da.from_array(Xa, chunks=(100, 4)), da.from_array(y, chunks=100))
    except ValueError as exc:
        assert name in REGRESSORS, f"refused: {exc}"
        assert_clear_error(exc, "X")
        return
    ref = _fit(make, X, y, None, False)
    moved = Xa.copy()
    moved[:, -1] = 1.1
    got, want = np.asarray(_score(est, moved)), _score(ref, X)
    assert np.max(np.abs(got - want)) <= 1e-7 * np.max(np.abs(want))
