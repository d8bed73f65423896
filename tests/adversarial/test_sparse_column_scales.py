"""One column of any size: sparse ``X`` gives the dense fit, or the same clear error.

The fits scale the columns of sparse ``X`` by dividing each stored entry by its column's
scale (``linbook._kernels.csr.divide_columns``). They used to multiply by the reciprocal,
``X @ diags(1 / c)``, which is ``inf`` for a column whose largest entry is subnormal (1e-310):
Lasso and LogisticRegression then raised "diverged, scale the features" where the dense fit
of the same data has the answer (that column's coefficient ~0 under the penalty). And the
logistic fits scaled a sparse column by its largest entry alone, so that a column of 1e-200
made the penalty's curvature ``lam / c^2`` overflow: the fit stopped at ``w = 0``.

Every estimator that accepts sparse ``X``, on one data set with one column multiplied by each
of 1e-310 .. 1e300: the dense and the CSR fit predict the same to 1e-6 (relative; the two
paths round differently, and the iterative fits stop at a tolerance), or both raise the same
exception type. (L-BFGS is left out: on a column of 1e-50 or less its stopping rule, in the
column's max-abs units, cannot be met, dense or sparse, and it runs to ``max_iter``.)
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone, is_classifier

from linbook import Lasso, LeastAbsoluteDeviation, LinearRegression, LogisticRegression, ProbitRegression, Ridge
from linbook.online import SGDClassifier, SGDRegressor
from linbook.perceptron import Perceptron

SCALES = [1e-310, 1e-300, 1e-150, 1.0, 1e150, 1e300]
ESTIMATORS = [LinearRegression(), Ridge(lam=1.0), Lasso(lam=1.0), LeastAbsoluteDeviation(),
              LogisticRegression(lam=1.0), LogisticRegression(lam=1.0, solver="newton-cg"), ProbitRegression(lam=1.0),
              SGDRegressor(random_state=0), SGDClassifier(random_state=0), Perceptron(random_state=0)]
# the multinomial model: LogisticRegression on three classes
MULTINOMIAL = [LogisticRegression(lam=1.0)]     # solver "auto": Newton on this data


def _data(scale, n=60, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * (rng.random((n, d)) < 0.5)
    z = X @ rng.standard_normal(d)
    y_real = z + 0.3 * rng.standard_normal(n)
    y_binary = (z + 0.5 * rng.standard_normal(n) > 0).astype(int)
    y_three = np.digitize(z, np.quantile(z, [1 / 3, 2 / 3]))
    X[:, 2] *= scale
    return X, y_real, y_binary, y_three


def _outcome(est, X, y):
    """``(predictions, None)`` of a fit on ``X``, or ``(None, exception type)``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = clone(est).fit(X, y)
    except Exception as exc:          # noqa: BLE001 (the dense and sparse fits must raise the same)
        return None, type(exc)
    values = model.predict_proba(X) if hasattr(model, "predict_proba") else model.predict(X)
    return np.asarray(values, dtype=float), None


def _assert_agree(est, X, y):
    dense, dense_error = _outcome(est, X, y)
    sparse, sparse_error = _outcome(est, sp.csr_matrix(X), y)
    assert dense_error == sparse_error, f"dense raised {dense_error}, sparse {sparse_error}"
    if dense_error is None:
        assert np.all(np.isfinite(sparse))
        np.testing.assert_allclose(sparse, dense, rtol=1e-6, atol=1e-6 * np.max(np.abs(dense)))


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("est", ESTIMATORS, ids=repr)
def test_sparse_fit_equals_dense_whatever_one_column_scale(est, scale):
    X, y_real, y_binary, _ = _data(scale)
    _assert_agree(est, X, y_binary if is_classifier(est) else y_real)


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("est", MULTINOMIAL, ids=repr)
def test_sparse_multinomial_equals_dense_whatever_one_column_scale(est, scale):
    X, _, _, y_three = _data(scale)
    _assert_agree(est, X, y_three)


def test_tiny_sparse_column_gets_its_penalised_coefficient():
    """Not only agreement: the penalised fit exists and the tiny column's coefficient is ~0 in its
    units (the penalty dominates a column of 1e-310), the others those of the fit without it."""
    X, _, y_binary, _ = _data(1e-310)
    fit = LogisticRegression(lam=1.0).fit(sp.csr_matrix(X), y_binary)
    reference = LogisticRegression(lam=1.0).fit(np.delete(X, 2, axis=1), y_binary)
    assert abs(fit.coef_[0, 2]) < 1e-300
    np.testing.assert_allclose(np.delete(fit.coef_[0], 2), reference.coef_[0], rtol=1e-6, atol=1e-8)



@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("noise", [0.0, 1e-3])
@pytest.mark.parametrize("k", [4, 6])
@pytest.mark.parametrize("seed", [2, 5, 9])
def test_sparse_least_squares_on_nearly_collinear_columns_of_different_scales(seed, k, noise, fit_intercept):
    """Sparse ``LinearRegression`` past its Cholesky test runs LSQR, whose stopping tests are relative to
    ``||X||``, i.e. to the largest column. Two columns at correlation ``1 - 1e-2k`` beside columns of norms
    from 1e-5 to 1e7: LSQR on ``X`` itself stopped with the fitted values up to 6 % of ``||y||`` off the
    least-squares fit (no warning). Right answer: the fitted values of ``numpy.linalg.lstsq`` on the
    column-equilibrated dense design (backward stable; that design's condition number is at most ~3e6, so
    both agree to ~1e-9 of ``||y||`` under any BLAS)."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((40, 4))
    X = Z.copy()
    X[:, 1] = Z[:, 0] + 10.0 ** -k * Z[:, 1]
    X *= 10.0 ** rng.integers(-6, 7, 4)
    y = X @ (rng.standard_normal(4) / np.linalg.norm(X, axis=0)) + 0.5 + noise * rng.standard_normal(40)
    design = np.c_[X, np.ones(40)] if fit_intercept else X
    norms = np.linalg.norm(design, axis=0)
    fitted = design @ (np.linalg.lstsq(design / norms, y, rcond=None)[0] / norms)
    model = LinearRegression(fit_intercept=fit_intercept).fit(sp.csr_matrix(X), y)
    assert model.solver_ == "lsqr"
    np.testing.assert_allclose(model.predict(X), fitted, rtol=0, atol=1e-8 * np.linalg.norm(y))


def _wide_sparse_columns_apart(d, seed, n=300):
    """Sparse ``X`` (about 8 entries a row) whose columns take turns at 1e-8, 1e8 and 1, and ``y``."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=8.0 / d, random_state=rng, format="lil")
    X[np.arange(n), rng.integers(0, d, n)] = 1.0                 # no empty row
    X = X.tocsr()
    X.data = X.data * 0 + rng.standard_normal(X.data.size) + 2.0
    X = (X @ sp.diags(np.resize([1e-8, 1e8, 1.0], d))).tocsr()
    return X, 3.0 * rng.standard_normal(n) + 5.0, rng


def _ridge_objective(X, y, sw, lam, model):
    r = y - X @ model.coef_ - model.intercept_
    return 0.5 * float(np.sum(sw * r * r)) + 0.5 * lam * float(model.coef_ @ model.coef_)


@pytest.mark.parametrize("route", ["cg", "lsqr"])
@pytest.mark.parametrize("weights", ["some zero", "three decades"])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("seed", [0, 4])
def test_sparse_ridge_with_columns_scaled_apart_reaches_the_dense_minimum(seed, fit_intercept, weights, route,
                                                                        monkeypatch):
    """Ridge(lam=1e6) on wide sparse ``X`` whose columns are 1e-8, 1e8 and 1 (the penalty per scaled column then
    spans 1e-11 to 1e25): the objective of the CSR fit equals the dense fit's (SVD / kernel Cholesky), relative
    1e-9 (both were 1e-16 apart once fixed; the minimum is well determined, the coefficients are not).

    It was 1e-3 to 1e-2 above, without a warning: conjugate gradients counted on a backward error measured in
    the units of the largest diagonal entry of ``G + P`` (the 1e25 penalty), which passed the other equations
    unsolved to 2e-3 ("cg"); and LSQR on the unequilibrated damped operator stopped early ("lsqr": sparse ``X``
    too wide for the Gram matrix, here with that limit lowered to 100 columns)."""
    from linbook.linear import _moments

    if route == "lsqr":
        monkeypatch.setattr(_moments, "MAX_GRAM_FEATURES", 100)
    X, y, rng = _wide_sparse_columns_apart(500, seed)
    if weights == "some zero":
        sw = rng.uniform(0.5, 2.0, y.size) * (rng.random(y.size) > 0.2)
    else:
        sw = 10.0 ** rng.uniform(-3, 3, y.size)
    lam = 1e6
    sparse_fit = Ridge(lam=lam, fit_intercept=fit_intercept).fit(X, y, sample_weight=sw)
    dense_fit = Ridge(lam=lam, fit_intercept=fit_intercept).fit(X.toarray(), y, sample_weight=sw)
    assert sparse_fit.solver_ in ("cg", "cholesky", "lsqr")
    sparse_objective = _ridge_objective(X, y, sw, lam, sparse_fit)
    dense_objective = _ridge_objective(X, y, sw, lam, dense_fit)
    assert sparse_objective <= dense_objective * (1 + 1e-9), (sparse_fit.solver_, sparse_objective, dense_objective)
