"""Sample weights at the top of float64's range (session 29).

* Weights whose sum overflows (every weight 1e308, or half of them 1e308) reached every fit's weighted sums as
  inf and NaN: the results were an internal LAPACK error (``LinearRegression``: "illegal value in gelsd"),
  "A has a NaN entry" (``Ridge``), a misleading "singular covariance" (LDA, QDA), "about 1enan"
  (``GaussianNaiveBayes``) and silent wrong answers (``Perceptron`` returned ``[[inf, inf]]``,
  ``LeastAbsoluteDeviation`` ``[0, 0]``). :func:`linbook.base.check_sample_weight` now refuses them, naming
  ``sample_weight`` and what to do.
* The perceptron's updates are ``eta s_i y_i x_i``: with weights of 1e305 beside features of 1e4 (or 1e10
  beside features of 1e150) its scores ``w.x`` overflowed and it returned inf / NaN weights silently. It now
  runs on the weights divided by a power of two (the same mistakes, bit for bit) and multiplies back, with a
  clear error only where the weights themselves do not fit in float64.
"""

import warnings

import numpy as np
import pytest
from sklearn.base import clone, is_classifier

import linbook
from linbook.online import RecursiveLeastSquares, SGDClassifier, SGDRegressor

from .harness import assert_clear_error

WEIGHTED = [linbook.LinearRegression(), linbook.Ridge(), linbook.Lasso(lam=0.1), linbook.LeastAbsoluteDeviation(),
            linbook.LogisticRegression(), linbook.ProbitRegression(lam=1.0), linbook.Perceptron(), linbook.LDA(),
            linbook.QDA(), linbook.RDA(shrinkage=0.1), linbook.GaussianNaiveBayes(),
            linbook.BayesianLogisticRegression(), SGDRegressor(), SGDClassifier(), RecursiveLeastSquares()]


def _data(seed=0, n=20, scale=1.0):
    rng = np.random.default_rng(seed)
    X = scale * rng.standard_normal((n, 2))
    y = X @ np.array([1.0, -2.0]) / scale + 0.3 + 0.1 * rng.standard_normal(n)
    return X, y, (X[:, 0] > 0).astype(int)


@pytest.mark.parametrize("weights", ["all 1e308", "half 1e308"])
@pytest.mark.parametrize("est", WEIGHTED, ids=lambda e: repr(e).replace(" ", ""))
def test_weights_whose_sum_overflows_are_refused_clearly(est, weights):
    X, y, labels = _data()
    sw = np.full(20, 1e308) if weights == "all 1e308" else np.r_[np.full(10, 1e308), np.ones(10)]
    model = clone(est)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError) as info:
            model.fit(X, labels if is_classifier(est) else y, sample_weight=sw)
    assert_clear_error(info.value, ("sample_weight",))
    assert not hasattr(model, "coef_") and not hasattr(model, "n_features_in_")


@pytest.mark.parametrize("form", ["primal", "dual", "pocket"])
@pytest.mark.parametrize("power", [-10, 10, 300, 600, 990])
def test_perceptron_weights_scaled_by_a_power_of_two_scale_the_fit_exactly(form, power):
    """``sample_weight * 2^k`` makes the same mistakes and ``2^k`` times the weights (exact: powers of two)."""
    rng = np.random.default_rng(3)
    X = 1e4 * rng.standard_normal((40, 3))
    y = (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int)
    sw = np.exp(rng.uniform(-3, 3, 40))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base = linbook.Perceptron(form=form, random_state=0).fit(X, y, sample_weight=sw)
        scaled = linbook.Perceptron(form=form, random_state=0).fit(X, y, sample_weight=sw * 2.0 ** power)
    factor = 2.0 ** power
    np.testing.assert_array_equal(scaled.coef_, base.coef_ * factor)
    np.testing.assert_array_equal(scaled.intercept_, base.intercept_ * factor)
    assert scaled.n_mistakes_ == base.n_mistakes_
    np.testing.assert_array_equal(scaled.predict(X), base.predict(X))
    if form == "pocket":
        assert scaled.pocket_errors_ == base.pocket_errors_ * factor


@pytest.mark.parametrize("form", ["primal", "dual", "pocket"])
@pytest.mark.parametrize("weight, feature", [(1e10, 1e150), (1e150, 1e75), (1e290, 1.0)])
def test_perceptron_with_large_weights_gives_the_unweighted_decisions(form, weight, feature):
    """Equal weights ``s`` (however large, while ``s`` times the weights fit in float64) give the decisions of
    the unweighted fit on the same data; the run's scores never overflow."""
    X, _, y = _data(seed=4, n=30, scale=feature)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = linbook.Perceptron(form=form, random_state=0).fit(X, y)
        heavy = linbook.Perceptron(form=form, random_state=0).fit(X, y, sample_weight=np.full(30, weight))
    assert np.all(np.isfinite(heavy.coef_)) and np.all(np.isfinite(heavy.intercept_))
    np.testing.assert_array_equal(heavy.predict(X), plain.predict(X))
    np.testing.assert_allclose(heavy.coef_ / weight, plain.coef_, rtol=1e-12)


@pytest.mark.parametrize("form", ["primal", "dual", "pocket"])
def test_perceptron_weights_beyond_float64_are_a_clear_error(form):
    X, _, y = _data(seed=4, n=30, scale=1e4)
    model = linbook.Perceptron(form=form, random_state=0)
    with pytest.raises(ValueError) as info:
        model.fit(X, y, sample_weight=np.full(30, 1e306))
    assert_clear_error(info.value, ("sample_weight",))
    assert not hasattr(model, "coef_")


@pytest.mark.parametrize("est", [linbook.LinearRegression(), linbook.Ridge(), linbook.LogisticRegression(),
                                 linbook.ProbitRegression()], ids=lambda e: type(e).__name__)
def test_dask_weights_whose_sum_overflows_are_refused_clearly(est):
    """The same rule on Dask: the logistic fits said "x0 must be finite", a name no input of ``fit`` has."""
    da = pytest.importorskip("dask.array")
    X, y, labels = _data(n=200)
    target = labels if is_classifier(est) else y
    model = clone(est)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError) as info:
            model.fit(da.from_array(X, chunks=50), da.from_array(target, chunks=50),
                      sample_weight=da.from_array(np.full(200, 1e308), chunks=50))
    assert_clear_error(info.value, ("sample_weight",))
    assert not hasattr(model, "coef_")
