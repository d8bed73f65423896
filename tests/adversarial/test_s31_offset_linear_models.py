"""Session 31: the linear models and the logistic fits on features offset far from 0.

``x^T w + b`` with ``b ~ -o^T w`` rounds at ``eps |o^T w|``: at an offset of 1e12 the predictions of
``LinearRegression``, ``Ridge``, ``Lasso`` and ``LeastAbsoluteDeviation`` were 1.6e-4 to 4e-4 off (5e-7 at 1e9), the
probabilities of ``LogisticRegression`` and ``ProbitRegression`` 2e-4, against the same fit on ``X - offset``, which
is exact (Sterbenz). The least-squares coefficients were also 3e-8 off: the centred columns kept the rounding of
their mean, and the Gram matrix its square. The fits now predict from the offset columns' means
(``linbook._predictor.predict_scores(..., origin=...)``); ``RecursiveLeastSquares`` predicts from its own shift.
Oracle: the fit on the exactly shifted features.
"""

import numpy as np
import pytest

import linbook

OFFSETS = [1e6, 1e9, 1e12, -1e12]


def _regression(seed=0, n=60):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    return X, X @ [1.0, -2.0, 0.5] + 0.3 * rng.standard_normal(n) + 7.0


def _classes(seed=1, n=90, classes=2):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, n)
    return rng.standard_normal((n, 3)) + 1.2 * np.eye(classes, 3)[y], y


@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("make", [linbook.LinearRegression, lambda: linbook.Ridge(lam=1.0),
                                  lambda: linbook.Lasso(lam=0.5), linbook.LeastAbsoluteDeviation],
                         ids=["LinearRegression", "Ridge", "Lasso", "LeastAbsoluteDeviation"])
def test_regression_on_offset_features(make, offset):
    X0, y = _regression()
    shift = offset * np.array([1.0, 0.0, -3.0])
    X = X0 + shift
    fitted, reference = make().fit(X, y), make().fit(X - shift, y)
    np.testing.assert_allclose(fitted.coef_, reference.coef_, rtol=0, atol=1e-12)
    spread = np.ptp(y)
    np.testing.assert_allclose(fitted.predict(X), reference.predict(X - shift), rtol=0, atol=1e-13 * spread)
    assert fitted.score(X, y) == pytest.approx(reference.score(X - shift, y), abs=1e-13)


@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("make, classes", [(linbook.LogisticRegression, 2), (linbook.ProbitRegression, 2),
                                           (linbook.LogisticRegression, 3), (lambda: linbook.LogisticRegression(lam=1.0), 3)],
                         ids=["logistic", "probit", "multinomial", "multinomial-ridge"])
def test_classifiers_on_offset_features(make, classes, offset):
    X0, y = _classes(classes=classes)
    shift = offset * np.array([1.0, -2.0, 0.0])
    X = X0 + shift
    fitted, reference = make().fit(X, y), make().fit(X - shift, y)
    np.testing.assert_allclose(fitted.predict_proba(X), reference.predict_proba(X - shift), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(fitted.predict(X), reference.predict(X - shift))


def test_refit_on_unshifted_data_forgets_the_origin():
    """A second fit on data near 0 predicts from 0 again (the origin belongs to the fit that made it)."""
    X0, y = _regression(seed=2)
    model = linbook.LinearRegression().fit(X0 + 1e12, y)
    model.fit(X0, y)
    np.testing.assert_allclose(model.predict(X0), linbook.LinearRegression().fit(X0, y).predict(X0), rtol=0,
                               atol=1e-13)


def test_sparse_rows_at_predict_take_the_plain_formula():
    """Sparse ``X`` at predict: ``X - o`` would be dense, so ``x^T w + b`` as before (same answer to its rounding)."""
    import scipy.sparse as sps

    X0, y = _regression(seed=3)
    X = X0 + 1e3
    model = linbook.LinearRegression().fit(X, y)
    np.testing.assert_allclose(model.predict(sps.csr_matrix(X)), model.predict(X), rtol=0, atol=1e-9)


@pytest.mark.parametrize("offset", OFFSETS)
def test_recursive_least_squares_on_offset_features(offset):
    """RLS keeps its posterior mean in columns shifted by the first chunk's medians ``c``; it predicted as
    ``x^T w + (b_c - w^T c)``, 2e-4 off at 1e12 (2e-7 at 1e9). Now from ``c``, in chunks too."""
    from linbook.online import RecursiveLeastSquares

    X0, y = _regression(seed=4, n=80)
    shift = offset * np.array([1.0, 0.0, -3.0])
    X = X0 + shift
    reference = RecursiveLeastSquares().fit(X - shift, y)
    fitted = RecursiveLeastSquares()
    for rows in np.array_split(np.arange(80), 4):
        fitted.partial_fit(X[rows], y[rows])
    np.testing.assert_allclose(fitted.predict(X), reference.predict(X - shift), rtol=0, atol=1e-12 * np.ptp(y))
