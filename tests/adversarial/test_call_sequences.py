"""Call sequences on one streaming estimator: ``set_params`` between ``partial_fit`` calls.

scikit-learn's streams validate their parameters on every ``partial_fit`` call; linbook's checked them
only on the first, so a bad value set mid-stream went on silently (``SGDRegressor`` with ``lam=-1``
took steps with a negative penalty, ``RecursiveLeastSquares`` with ``noise_variance=-1`` reported a
negative covariance), and a parameter that shapes the stream's state (``fit_intercept``) failed deep
inside numpy ("matmul: ... size 3 is different from 4") or was ignored (``prior_precision``, read only
when the stream starts). Now a bad value is refused with scikit-learn's wording, naming the parameter,
and leaves the model as it was; a changed ``fit_intercept`` / ``prior_precision`` is refused, and
setting it back continues the stream as if nothing had happened.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from sklearn.base import clone, is_classifier

from linbook.online import LMS, OnlineGradientDescent, RecursiveLeastSquares, SGDClassifier, SGDRegressor

from .harness import assert_clear_error

SGD_BAD = {"lam": -1.0, "average": -1, "adagrad": "yes", "adagrad_tau0": -1.0, "fit_intercept": "yes",
           "max_iter": 0, "n_iter_no_change": 0, "shuffle": "yes", "tol": -1.0}
CASES = ([(SGDRegressor(eta0=0.05, random_state=0), p, v) for p, v in SGD_BAD.items()]
         + [(SGDClassifier(eta0=0.1, random_state=0), p, v) for p, v in SGD_BAD.items()]
         + [(LMS(eta0=0.05), p, v) for p, v in {"max_iter": 0, "n_iter_no_change": 0, "shuffle": "yes",
                                                "tol": -1.0}.items()]
         + [(RecursiveLeastSquares(), "noise_variance", -1.0), (OnlineGradientDescent(eta0=0.05), "loss", "hinge")])


def _data(seed=0, n=40):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + 0.3 + 0.1 * rng.normal(size=n)
    return X, y, (y > 0.3).astype(int)


def _stream(est, chunks):
    X, y, labels = _data()
    target = labels if is_classifier(est) else y
    for i, (start, stop) in enumerate(chunks):
        kwargs = {"classes": [0, 1]} if is_classifier(est) and i == 0 else {}
        est.partial_fit(X[start:stop], target[start:stop], **kwargs)
    return est


def _assert_same_state(before, after, skip=()):
    assert sorted(after) == sorted(before)
    for key, value in before.items():
        if key in skip:
            continue
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(after[key], value, err_msg=key)
        elif isinstance(value, (float, int, bool, str, type(None))):
            assert after[key] == value, key


def _ids(case):
    est, p, v = case
    return f"{type(est).__name__}-{p}={v!r}"


@pytest.mark.parametrize("est, param, bad", CASES, ids=[_ids(c) for c in CASES])
def test_bad_value_set_mid_stream_is_refused_and_changes_nothing(est, param, bad):
    model = _stream(clone(est), [(0, 20)])
    good = getattr(model, param)
    before = copy.deepcopy(vars(model))
    model.set_params(**{param: bad})
    with pytest.raises(ValueError) as info:
        model.partial_fit(*_chunk(20, 30, is_classifier(model)))
    assert_clear_error(info.value, (param,))
    _assert_same_state(before, vars(model), skip=(param,))
    # the good value back: the stream goes on as one that never saw the bad value
    model.set_params(**{param: good}).partial_fit(*_chunk(20, 40, is_classifier(model)))
    clean = _stream(clone(est), [(0, 20), (20, 40)])
    np.testing.assert_array_equal(model.coef_, clean.coef_)


def _chunk(start, stop, labels):
    X, y, lab = _data()
    return X[start:stop], (lab if labels else y)[start:stop]


@pytest.mark.parametrize("est, param, other", [
    (RecursiveLeastSquares(), "fit_intercept", False), (LMS(eta0=0.05), "fit_intercept", False),
    (RecursiveLeastSquares(), "prior_precision", 2.0), (RecursiveLeastSquares(prior_precision=1.0), "prior_precision", 0.0)],
    ids=["RLS-fit_intercept", "LMS-fit_intercept", "RLS-prior_precision", "RLS-prior_precision-to-0"])
def test_a_parameter_that_shapes_the_stream_cannot_change_mid_stream(est, param, other):
    """It failed inside numpy (fit_intercept) or was silently ignored (prior_precision: the prior is the
    stream's start); the exact batch fit of the whole stream is the oracle once it is set back."""
    model = _stream(clone(est), [(0, 20)])
    good = getattr(model, param)
    before = copy.deepcopy(vars(model))
    model.set_params(**{param: other})
    with pytest.raises(ValueError) as info:
        model.partial_fit(*_chunk(20, 40, False))
    assert_clear_error(info.value, (param,))
    assert "fit" in str(info.value)
    _assert_same_state(before, vars(model), skip=(param,))
    model.set_params(**{param: good}).partial_fit(*_chunk(20, 40, False))
    clean = _stream(clone(est), [(0, 20), (20, 40)])
    np.testing.assert_allclose(model.coef_, clean.coef_, rtol=1e-12)


def test_a_new_stream_after_fit_takes_the_new_value():
    """fit starts a new stream: the changed fit_intercept is the new stream's, equal to a fresh fit."""
    X, y, _ = _data()
    model = RecursiveLeastSquares().fit(X[:20], y[:20]).set_params(fit_intercept=False).fit(X, y)
    fresh = RecursiveLeastSquares(fit_intercept=False).fit(X, y)
    np.testing.assert_allclose(model.coef_, fresh.coef_, rtol=1e-12)
    assert model.intercept_ == fresh.intercept_ == 0.0


def test_rls_covariance_reads_a_checked_noise_variance():
    """covariance_ = noise_variance * P_ reads noise_variance when asked: a bad value set after the fit is
    refused (it returned a negative "covariance"), a good one scales P_."""
    X, y, _ = _data()
    model = RecursiveLeastSquares().fit(X, y)
    model.set_params(noise_variance=-1.0)
    with pytest.raises(ValueError) as info:
        model.covariance_
    assert_clear_error(info.value, ("noise_variance",))
    model.set_params(noise_variance=2.5)
    np.testing.assert_array_equal(model.covariance_, 2.5 * model.P_)


# ------------------------------------------------------------------ a failing refit or chunk: y of strings
def _regressors():
    from sklearn.utils import get_tags

    from .harness import public_estimators

    return [cls for cls in public_estimators() if get_tags(cls()).estimator_type == "regressor"]


@pytest.mark.parametrize("cls", _regressors(), ids=lambda cls: cls.__name__)
def test_regression_on_string_targets_names_y_and_keeps_the_fit(cls):
    """A refit (and a later partial_fit chunk) with y of strings: numpy's "could not convert string to
    float" named neither y nor what to do; the error now does, and the previous fit is kept."""
    X, y, _ = _data()
    est = cls(lam=0.1) if cls.__name__ == "Lasso" else cls()
    labels = np.where(y > 0, "high", "low")
    calls = [est.fit] + ([est.partial_fit] if hasattr(est, "partial_fit") else [])
    for call in calls:
        model = clone(est).fit(X, y)
        before, expected = copy.deepcopy(vars(model)), model.predict(X)
        with pytest.raises(ValueError) as info:
            getattr(model, call.__name__)(X, labels)
        assert_clear_error(info.value, ("y",))
        assert "numeric" in str(info.value)
        _assert_same_state(before, vars(model))
        np.testing.assert_array_equal(model.predict(X), expected)
