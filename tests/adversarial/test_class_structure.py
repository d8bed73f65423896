"""Classes at the edges: labels that cannot be sorted, a class whose rows all have weight 0.

* Labels numpy cannot sort together (``None`` beside strings, in an object ``y``) raised numpy's bare
  "'<' not supported between instances of 'NoneType' and 'str'": naming no input, and for the models
  that add advice to validation errors followed by "Pass X as a finite numeric 2-D array", which
  blamed ``X``. Every classifier must now name ``y`` and say what to do.
* A class whose rows all have ``sample_weight`` 0: every classifier either refuses it with a clear
  error (its intercept has no finite optimum: ``LogisticRegression``, the Gaussian classifiers) or keeps
  it in ``classes_`` as scikit-learn does (``classes_ == np.unique(y)``). ``SGDClassifier`` dropped the
  rows before reading the labels: ``classes_`` lost the class, ``predict_proba`` a column, in silence.
* The scikit-learn message for a DataFrame whose columns differ from those of ``fit`` now names ``X``.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.utils import get_tags

from tests.adversarial.harness import assert_clear_error, public_estimators

CLASSIFIERS = [cls for cls in public_estimators() if get_tags(cls()).estimator_type == "classifier"
               or cls.__name__ == "FisherLDA"]
WEIGHTED = [cls for cls in CLASSIFIERS if "sample_weight" in inspect.signature(cls.fit).parameters]
_PARAMS = {"RDA": {"shrinkage": 0.3}, "NearestShrunkenCentroids": {"shrink_threshold": 0.2}}


def _make(cls, **params):
    est = cls(**{**_PARAMS.get(cls.__name__, {}), **params})
    if "random_state" in est.get_params():
        est.set_params(random_state=0)
    return est


def _data(n_classes, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(60) % n_classes
    X = rng.standard_normal((60, 3)) + np.outer(y, [1.0, 0.5, -0.5])
    return X, y


def _fit(est, X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y, **kw)


def test_the_lists_hold_the_classifiers():
    names = {cls.__name__ for cls in CLASSIFIERS}
    assert {"LogisticRegression", "QDA", "Perceptron", "SGDClassifier", "FisherLDA"} <= names
    assert "SGDClassifier" in {cls.__name__ for cls in WEIGHTED}


@pytest.mark.parametrize("labels", [["a", "b", None], ["a", "b", 1.5]], ids=["None", "str-and-float"])
@pytest.mark.parametrize("cls", CLASSIFIERS, ids=lambda c: c.__name__)
def test_labels_that_cannot_be_sorted_get_a_clear_error_naming_y(cls, labels):
    X, y = _data(2)
    y = np.array(labels[:2], dtype=object)[y]
    y[3] = labels[2]
    with pytest.raises((ValueError, TypeError)) as info:
        _fit(_make(cls), X, y)
    assert_clear_error(info.value, "y")
    assert "Pass X" not in str(info.value)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("cls", WEIGHTED, ids=lambda c: c.__name__)
def test_a_class_of_weight_zero_is_kept_or_refused_never_dropped(cls, n_classes):
    X, y = _data(n_classes)
    sw = np.where(y == n_classes - 1, 0.0, 1.0)
    try:
        est = _fit(_make(cls), X, y, sample_weight=sw)
    except (ValueError, TypeError) as exc:
        assert_clear_error(exc, ("y", "sample_weight"))
        return
    assert est.classes_.tolist() == list(range(n_classes))
    if hasattr(est, "predict_proba"):
        P = est.predict_proba(X)
        assert P.shape == (X.shape[0], n_classes) and np.all(np.isfinite(P))


def test_sgd_without_intercept_keeps_a_class_of_weight_zero_and_fits_the_others():
    from linbook.online import SGDClassifier

    X, y = _data(3)
    sw = np.where(y == 2, 0.0, 1.0)
    est = _fit(SGDClassifier(fit_intercept=False, random_state=0), X, y, sample_weight=sw)
    assert est.classes_.tolist() == [0, 1, 2]
    assert est.predict_proba(X).shape == (60, 3)
    # the rows of weight 0 are left out, as in any weighted fit: relabelled, they change nothing
    y2 = y.copy()
    y2[y == 2] = 0
    est2 = _fit(SGDClassifier(fit_intercept=False, random_state=0), X, np.r_[y2[:-1], 2], sample_weight=sw)
    assert est2.classes_.tolist() == [0, 1, 2]
    np.testing.assert_array_equal(est.coef_, est2.coef_)


@pytest.mark.parametrize("cls", CLASSIFIERS[:3] + WEIGHTED[-1:], ids=lambda c: c.__name__)
def test_a_frame_with_other_columns_at_predict_names_X(cls):
    X, y = _data(2)
    est = _fit(_make(cls), pd.DataFrame(X, columns=["a", "b", "c"]), y)
    method = est.predict if hasattr(est, "predict") else est.transform
    for frame in (pd.DataFrame(X[:, ::-1], columns=["c", "b", "a"]), pd.DataFrame(X, columns=["a", "b", "z"])):
        with pytest.raises(ValueError) as info:
            method(frame)
        assert_clear_error(info.value, "X")


def test_a_first_partial_fit_without_classes_says_to_pass_them():
    from linbook.online import SGDClassifier

    X, y = _data(3)
    with pytest.raises(ValueError) as info:
        SGDClassifier(random_state=0).partial_fit(X, y)
    assert_clear_error(info.value, "classes")


def test_shrunken_centroids_with_a_class_of_weight_1e_300():
    """Beside a class of total weight ~1e-299, ``1/n_c - 1/n`` and ``mu_c - m`` of the heavy class cancelled
    to 0 (spread 0, offset 0, d = 0/0): the fit refused with "deviations_ is not representable". Both are
    ordinary small numbers; for two classes ``d_c = +-(mu_1 - mu_0)/S sqrt(n_0 n_1 / n)``, so as the light
    class's weight ``w`` shrinks every ``d`` scales as ``sqrt(w)``: ``d(1e-300) = 1e-135 d(1e-30)``."""
    from linbook import NearestShrunkenCentroids

    X, y = _data(2)
    deviations = []
    for w in (1e-30, 1e-300):
        est = _fit(NearestShrunkenCentroids(), X, y, sample_weight=np.where(y == 1, w, 1.0))
        P = est.predict_proba(X)
        assert np.all(np.isfinite(P)) and np.allclose(P.sum(axis=1), 1.0)
        deviations.append(est.deviations_)
    np.testing.assert_allclose(deviations[1], 1e-135 * deviations[0], rtol=1e-9)
