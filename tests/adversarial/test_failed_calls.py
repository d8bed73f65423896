"""A training call that raises leaves the estimator exactly as it was before the call.

Every ``partial_fit`` estimator is fed a good chunk, then a chunk that raises half-way
through (a divergence found at its 26th row, after 25 updates were made) or at the
start (labels outside ``classes``), then another good chunk. After the failure every
attribute must equal its value before the failed call (same keys, same contents), and
the next good chunk must give the model of a stream that never saw the bad chunk.
The same holds for a failed first call (nothing fitted is left behind) and for ``fit``.
"""

import copy
import inspect
import warnings

import numpy as np
import pytest
from sklearn.base import clone, is_classifier
from sklearn.utils import get_tags

from linbook.online import LMS, OnlineGradientDescent, RecursiveLeastSquares, SGDClassifier, SGDRegressor

from .harness import assert_clear_error, public_estimators

# each with a constant step large enough that the bad chunk diverges inside the update loop
STREAMERS = [SGDRegressor(eta0=1.0, average=False), SGDRegressor(eta0=0.5, batch_size=4),
             LMS(eta0=1.0), OnlineGradientDescent(eta0=1.0), RecursiveLeastSquares(),
             SGDClassifier(eta0=1.0, random_state=0),
             SGDClassifier(eta0=1.0, loss="perceptron", average=False, random_state=0)]


def _name(est):
    return repr(est).replace(" ", "")


def _chunks(seed=0, n=50):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + 0.3
    return X, y, (y > 0).astype(int)


def _call(est, X, t, sample_weight=None):
    kwargs = {"classes": [0, 1]} if is_classifier(est) else {}
    if sample_weight is not None:
        kwargs["sample_weight"] = sample_weight
    return est.partial_fit(X, t, **kwargs)


def _diverging_chunk(est, seed):
    """A chunk whose second half makes the update overflow (after the first half was applied)."""
    X, y, labels = _chunks(seed)
    if is_classifier(est):                    # bounded gradient: overflow through the weights
        sw = np.ones(len(labels))
        sw[25:] = 1e300
        return X * 1e5, labels, sw
    X, y = X.copy(), y.copy()
    if isinstance(est, RecursiveLeastSquares):  # exact least squares: broken by x^T P x (or X^T X) overflowing
        X[25:] *= 1e160                          # (rows of 1e150 are now fitted, the columns being centred)
        return X, y, None
    # eta ||x||^2 >> 2: the residual grows ~1e60-fold a step, and overflows within the chunk in any units (targets
    # of 1e200 alone no longer do: the fits run on targets near 1, ``schedules.target_units``)
    X[25:] *= 1e30
    y[25:] *= 1e200
    return X, y, None


def _snapshot(est):
    return copy.deepcopy(est.__dict__)


def _assert_same_state(before, after):
    assert sorted(after) == sorted(before), f"attributes changed: {set(after) ^ set(before)}"
    for key, value in before.items():
        other = after[key]
        if isinstance(value, np.ndarray):
            assert isinstance(other, np.ndarray) and other.shape == value.shape, key
            np.testing.assert_array_equal(other, value, err_msg=key)
        elif isinstance(value, (float, int, bool, str, type(None))):
            assert other == value or (value != value and other != other), key


def _raise_clearly(call):
    with pytest.raises((ValueError, TypeError)) as info:
        call()
    assert_clear_error(info.value, ("X", "y", "eta0"))


@pytest.fixture(params=["numpy loops", "compiled loops"])
def one_kind_of_loop(request):
    """Every step of the test in one kind of loop. Why: the process's numpy budget
    (``linbook._kernels.numpy_budget``) hands the steps to the compiled loops once spent, and those agree
    with the numpy ones to rounding, not to the bit; the stream and its clean twin below would otherwise
    run in different loops whenever earlier tests had left the budget near its end (3e-15 apart)."""
    from linbook._kernels import numpy_budget

    saved = numpy_budget.numpy_steps_left[0]
    numpy_budget.numpy_steps_left[0] = 10 ** 12 if request.param == "numpy loops" else 0
    yield
    numpy_budget.numpy_steps_left[0] = saved


@pytest.mark.parametrize("est", STREAMERS, ids=_name)
def test_chunk_that_diverges_half_way_leaves_no_trace(est, one_kind_of_loop):
    X1, y1, l1 = _chunks(1)
    X3, y3, l3 = _chunks(3)
    pick = (lambda y, lab: lab) if is_classifier(est) else (lambda y, lab: y)
    model = _call(clone(est), X1, pick(y1, l1))
    before = _snapshot(model)
    Xb, tb, swb = _diverging_chunk(est, 2)
    _raise_clearly(lambda: _call(model, Xb, tb, swb))
    _assert_same_state(before, model.__dict__)
    _call(model, X3, pick(y3, l3))
    clean = _call(_call(clone(est), X1, pick(y1, l1)), X3, pick(y3, l3))
    _assert_same_state(_snapshot(clean), model.__dict__)


@pytest.mark.parametrize("est", STREAMERS, ids=_name)
def test_failed_first_call_fits_nothing(est):
    X, y, labels = _chunks(1)
    bad_target = np.where(np.arange(len(y)) == 40, 7, labels) if is_classifier(est) else y
    Xb = X if is_classifier(est) else np.where(np.arange(len(y))[:, None] == 40, np.nan, X)
    model = clone(est)
    before = _snapshot(model)
    _raise_clearly(lambda: _call(model, Xb, bad_target))
    _assert_same_state(before, model.__dict__)


@pytest.mark.parametrize("est", STREAMERS, ids=_name)
def test_failed_fit_keeps_the_previous_fit(est):
    X1, y1, l1 = _chunks(1)
    pick = (lambda y, lab: lab) if is_classifier(est) else (lambda y, lab: y)
    model = clone(est).fit(X1, pick(y1, l1))
    before = _snapshot(model)
    Xb, tb, swb = _diverging_chunk(est, 2)
    kwargs = {} if swb is None else {"sample_weight": swb}
    _raise_clearly(lambda: model.fit(Xb, tb, **kwargs))
    _assert_same_state(before, model.__dict__)


# ------------------------------------------------------------------ every estimator's fit
def _fit_problem(cls):
    """``(estimator, X, y)``: a problem every estimator of its kind fits (as in test_aliasing.py)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    est = cls()
    if "random_state" in est.get_params():
        est.set_params(random_state=0)
    tags = get_tags(est)
    if tags.estimator_type == "regressor":
        return est, X, X @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.normal(size=40)
    return est, X, (np.tile([0.0, 1.0], 20) if tags.target_tags.required else None)


def _failing_refits(est, X, y):
    """Refits that pass validation (which records n_features_in_ and feature_names_in_ for the new X)
    and fail later: one class only, a column so large its squares overflow, weights all zero, each with
    two columns; and a DataFrame with named columns with one class, or a NaN in y."""
    import pandas as pd

    X2 = X[:, :2]
    one_class = None if y is None else (np.zeros_like(y) if is_classifier(est) else y)
    huge = X2.copy()
    huge[:, 0] *= 1e306
    named = pd.DataFrame(X2, columns=["a", "b"])
    calls = [(X2, one_class, {}), (huge, y, {}), (named, one_class, {})]
    if y is not None:                                  # scikit-learn records the names, then rejects y
        calls.append((named, np.where(np.arange(len(y)) == 3, np.nan, y), {}))
    if "sample_weight" in inspect.signature(est.fit).parameters:
        calls.append((X2, y, {"sample_weight": np.zeros(len(X2))}))
    return calls


@pytest.mark.parametrize("cls", public_estimators(), ids=lambda cls: cls.__name__)
def test_a_fit_that_raises_keeps_the_previous_fit(cls):
    """A refit that raises after validation leaves the previous fit exactly as it was, and usable (it
    used to keep the new n_features_in_ / feature_names_in_, so the model refused its own data)."""
    est, X, y = _fit_problem(cls)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
        before = _snapshot(est)
        def output():
            return est.predict(X) if hasattr(est, "predict") else est.transform(X)

        expected, raised = output(), 0
        for Xb, yb, kwargs in _failing_refits(est, X, y):
            try:
                est.fit(Xb, yb, **kwargs)
            except (ValueError, TypeError):
                raised += 1
                _assert_same_state(before, est.__dict__)
            else:                                    # fitted: start again from the first fit
                est.fit(X, y)
                before, expected = _snapshot(est), output()
        got = output()
    assert raised > 0, "no refit raised: the test exercised nothing"
    np.testing.assert_array_equal(got, expected)


def test_beta_bernoulli_fit_that_raises_keeps_the_posterior():
    from linbook import BetaBernoulli

    model = BetaBernoulli(a=2.0, b=3.0).fit([1, 0, 1, 1])
    before = _snapshot(model)
    with pytest.raises(ValueError):
        model.fit([1, 0, 2])                         # not a 0/1 outcome
    _assert_same_state(before, model.__dict__)
