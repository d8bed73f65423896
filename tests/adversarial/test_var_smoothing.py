"""``GaussianNaiveBayes(var_smoothing)`` adds ``var_smoothing * max_j Var(x_j)`` to every variance (scikit-learn's
definition, kept): a column whose variance is far below that is drowned. Before session 23 its class differences
were erased silently (a column in units of 1e-6 beside one in units of 1e3: accuracy 0.55 where that column alone
gives 0.84); now ``fit`` warns, naming the columns of ``X`` and the fix. The rule (class docstring): the column's
class means differ by the one-way F-test at level 1e-3 with its own variances, and not even at 0.05 once the
smoothing is added.
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_iris, load_wine
from sklearn.naive_bayes import GaussianNB

import linbook
from linbook.base import LinbookWarning


def _data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    X = np.c_[rng.standard_normal(n) * 1e3, (rng.standard_normal(n) + 2.0 * y) * 1e-6, rng.standard_normal(n)]
    return X, y


def _drowned(X, y, **params):
    """The columns named by the drowning warning of a fit (None: no such warning)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = linbook.GaussianNaiveBayes(**params).fit(X, y)
    found = [str(w.message) for w in caught if "drowns" in str(w.message)]
    assert all(issubclass(w.category, LinbookWarning) for w in caught if "drowns" in str(w.message))
    return model, (found[0] if found else None)


def test_a_separating_column_drowned_by_the_smoothing_is_named():
    X, y = _data()
    model, message = _drowned(X, y)
    assert message is not None, "no warning: the 1e-6 column's class difference was erased silently"
    assert "column(s) [1] of X" in message and "var_smoothing" in message
    assert "Rescale the columns of X" in message and "lower var_smoothing" in message
    # the definition is kept: the fit is scikit-learn's
    np.testing.assert_allclose(model.predict_proba(X), GaussianNB().fit(X, y).predict_proba(X), atol=1e-9)


def test_the_named_column_counts_columns_of_X_past_a_constant_one():
    X, y = _data()
    X = np.insert(X, 0, 3.0, axis=1)            # a constant column (ignored, with its own warning) before
    _, message = _drowned(X, y)
    assert message is not None and "column(s) [2] of X" in message


@pytest.mark.parametrize("case", ["rescaled", "noise", "separated within", "smoothing 0", "tiny smoothing"])
def test_no_warning_where_the_smoothing_hides_nothing(case):
    X, y = _data()
    params = {}
    if case == "rescaled":                       # the fix the message gives
        X = (X - X.mean(0)) / X.std(0)
    elif case == "noise":                        # a tiny column whose classes do not differ anyway
        X[:, 1] = np.random.default_rng(5).standard_normal(len(y)) * 1e-6
    elif case == "separated within":             # constant within each class: the smoothing is what makes it defined
        X[:, 1] = 1e-2 * y
    elif case == "smoothing 0":
        params = {"var_smoothing": 0.0}
    else:
        params = {"var_smoothing": 1e-20}
    assert _drowned(X, y, **params)[1] is None


@pytest.mark.parametrize("load", [load_iris, load_wine, load_breast_cancer])
def test_no_warning_on_classic_data_at_the_default(load):
    X, y = load(return_X_y=True)
    assert _drowned(X, y)[1] is None


def test_a_large_smoothing_names_the_columns_it_drowns():
    X, y = load_wine(return_X_y=True)
    _, message = _drowned(X, y, var_smoothing=0.1)
    assert message is not None and "column(s) [" in message
    assert _drowned(X, y)[1] is None
