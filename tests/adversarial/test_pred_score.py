"""``score`` of every public estimator: ``y`` and ``sample_weight`` checked as ``fit`` checks them.

Found by the session-27 prediction fuzz: ``score`` handed ``sample_weight`` to scikit-learn's metrics
unchecked. Negative weights were scored without a word; weights of 1e308 made R^2 NaN and weights of
5e-324 made it 1 (the weighted sums over- and underflowed); an all-zero, NaN or misshaped
``sample_weight``, and a ``y`` of the wrong length or with NaN, gave errors naming no input or saying
nothing to do (a ``ZeroDivisionError`` for weights summing to 0).
"""

import warnings

import numpy as np
import pytest
from sklearn.base import clone, is_regressor

from tests.adversarial.harness import assert_clear_error
from tests.test_sklearn_contract import ESTIMATORS

SCORED = [e for e in ESTIMATORS if hasattr(e, "score")]
_BINARY_ONLY = ("Perceptron", "ProbitRegression", "BayesianLogisticRegression")


def _fitted(estimator):
    """The fit of ``estimator`` on small data (one per estimator: ``score`` does not change the model)."""
    key = repr(estimator)
    if key not in _FITS:
        _FITS[key] = _fit(estimator)
    return _FITS[key]


_FITS = {}


def _fit(estimator):
    rng = np.random.default_rng(0)
    if is_regressor(estimator):
        X = rng.standard_normal((40, 3))
        y = X @ np.array([1.0, -2.0, 0.5]) + 0.3 * rng.standard_normal(40)
    else:
        C = 2 if type(estimator).__name__ in _BINARY_ONLY else 3
        y = np.arange(60) % C
        X = rng.standard_normal((60, 3)) + 1.5 * rng.standard_normal((C, 3))[y]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return clone(estimator).fit(X, y), X, y


def _score(model, X, y, sample_weight=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.score(X, y, sample_weight=sample_weight)


@pytest.mark.parametrize("c", [1e308, 1e300, 1e-300, 5e-324])
@pytest.mark.parametrize("estimator", SCORED, ids=repr)
def test_weights_of_any_common_scale_give_the_unweighted_score(estimator, c):
    """Equal weights ``c`` are no weights at all: R^2 and accuracy are ratios of weighted sums."""
    model, X, y = _fitted(estimator)
    assert _score(model, X, y, np.full(len(y), c)) == pytest.approx(_score(model, X, y), rel=1e-12)


@pytest.mark.parametrize("estimator", SCORED, ids=repr)
def test_scaled_weights_give_the_weighted_score(estimator):
    """Weights times 1e300 or 1e-300 give the score of the weights themselves (and it is the weighted
    accuracy or R^2 by hand)."""
    model, X, y = _fitted(estimator)
    w = np.linspace(0.5, 2.0, len(y))
    yhat = model.predict(X)
    if is_regressor(model):
        want = 1 - w @ (y - yhat) ** 2 / (w @ (y - np.average(y, weights=w)) ** 2)
    else:
        want = w @ (yhat == y) / w.sum()
    for c in (1.0, 1e300, 1e-300):
        assert _score(model, X, y, w * c) == pytest.approx(want, rel=1e-12)


BAD_WEIGHTS = {
    "negative": lambda n: np.r_[-1.0, np.ones(n - 1)],
    "all zero": lambda n: np.zeros(n),
    "NaN": lambda n: np.r_[np.nan, np.ones(n - 1)],
    "inf": lambda n: np.r_[np.inf, np.ones(n - 1)],
    "one short": lambda n: np.ones(n - 1),
    "2-D": lambda n: np.ones((n, 1)),
    "sum 0": lambda n: np.r_[1.0, -1.0, np.zeros(n - 2)],
}


@pytest.mark.parametrize("bad", list(BAD_WEIGHTS))
@pytest.mark.parametrize("estimator", SCORED, ids=repr)
def test_bad_sample_weight_is_a_clear_error(estimator, bad):
    model, X, y = _fitted(estimator)
    with pytest.raises((ValueError, TypeError)) as info:
        _score(model, X, y, BAD_WEIGHTS[bad](len(y)))
    assert_clear_error(info.value, "sample_weight")


@pytest.mark.parametrize("estimator", SCORED, ids=repr)
def test_y_of_the_wrong_length_is_a_clear_error(estimator):
    model, X, y = _fitted(estimator)
    with pytest.raises(ValueError) as info:
        _score(model, X, y[:-1])
    assert_clear_error(info.value, "y")


@pytest.mark.parametrize("bad", [np.nan, np.inf])
@pytest.mark.parametrize("estimator", [e for e in SCORED if is_regressor(e)], ids=repr)
def test_a_target_that_is_not_finite_is_a_clear_error(estimator, bad):
    model, X, y = _fitted(estimator)
    y = y.copy()
    y[3] = bad
    with pytest.raises(ValueError) as info:
        _score(model, X, y)
    assert_clear_error(info.value, "y")
