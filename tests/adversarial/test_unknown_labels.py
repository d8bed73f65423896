"""Labels a classifier was not fitted on, given to a method that takes labels after ``fit``.

Before, three wordings: the logistic family said "y has labels not seen in fit; the model knows [...]",
the Gaussian classifiers "y contains labels not seen in fit" (no label, no classes, no model), and
``SGDClassifier.partial_fit`` "y contains labels [...] that are not in classes [...]". Now one message from
``linbook.base.class_index``: the model, the unknown labels, ``classes_`` and what to do.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import linbook
from linbook.discriminant import LDA, QDA, DiagonalLDA, GaussianNaiveBayes
from linbook.online import SGDClassifier

from .harness import why_unclear


def _data(n_classes):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3))
    y = np.arange(60) % n_classes
    return X + y[:, None], y


def _message(model, labels, classes):
    return (f"{model}: y has labels {labels} not in classes_ {classes} (the classes the model was fitted on). "
            "Pass y with labels from classes_")


CASES = {
    "LogisticRegression": (linbook.LogisticRegression, 2, "log_likelihood"),
    "LogisticRegression-3": (linbook.LogisticRegression, 3, "log_likelihood"),
    "ProbitRegression": (linbook.ProbitRegression, 2, "log_likelihood"),
    "LDA": (LDA, 3, "log_likelihood"),
    "QDA": (QDA, 3, "log_likelihood"),
    "GaussianNaiveBayes": (GaussianNaiveBayes, 3, "log_likelihood"),
    "DiagonalLDA": (DiagonalLDA, 3, "log_likelihood"),
    "LogisticRegression-gradient": (linbook.LogisticRegression, 2, "nll_gradient"),
}


@pytest.mark.parametrize("name", CASES)
def test_unknown_labels_get_one_message_naming_model_labels_and_classes(name):
    make, k, method = CASES[name]
    X, y = _data(k)
    model = make().fit(X, y)
    bad = y.copy()
    bad[:2] = [7, 9]
    with pytest.raises(ValueError) as err:
        getattr(model, method)(X, bad)
    expected = _message(type(model).__name__, [7, 9], list(range(k)))
    assert str(err.value).startswith(expected), str(err.value)
    assert why_unclear(err.value, "y") is None


def test_partial_fit_with_a_new_class_gets_the_same_message_and_the_stream_cure():
    X, y = _data(2)
    model = SGDClassifier(random_state=0).partial_fit(X[:30], y[:30], classes=[0, 1])
    before = model.coef_.copy()
    bad = y[30:].copy()
    bad[0] = 2
    with pytest.raises(ValueError) as err:
        model.partial_fit(X[30:], bad)
    message = str(err.value)
    assert message.startswith(_message("SGDClassifier", [2], [0, 1])), message
    assert re.search(r"pass every class in `classes` on the first partial_fit call", message)
    np.testing.assert_array_equal(model.coef_, before)      # the failed call changed nothing


def test_string_labels_against_numeric_classes_are_unknown_not_a_type_error():
    X, y = _data(2)
    model = LDA().fit(X, y)
    with pytest.raises(ValueError, match=r"LDA: y has labels \['a', 'b'\] not in classes_ \[0, 1\]"):
        model.log_likelihood(X[:2], np.array(["a", "b"]))
