"""linbook.base's shortcut for plain float64 arrays returns what scikit-learn's validation returns."""

import numpy as np
import pytest

import linbook
from linbook.base import check_sample_weight, validate_fit, validate_predict


def test_plain_arrays_pass_through_and_record_width():
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((20, 3)), rng.standard_normal(20)
    est = linbook.LinearRegression()
    Xv, yv = validate_fit(est, X, y, y_numeric=True)
    assert Xv is X and yv is y and est.n_features_in_ == 3
    np.testing.assert_array_equal(check_sample_weight(None, X), np.ones(20))
    est.fit(X, y)
    assert validate_predict(est, X) is X
    with pytest.raises(ValueError, match="3 features"):
        validate_predict(est, X[:, :2])


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_values_still_rejected(bad):
    rng = np.random.default_rng(1)
    X, y = rng.standard_normal((20, 3)), rng.standard_normal(20)
    Xb = X.copy()
    Xb[7, 2] = bad
    with pytest.raises(ValueError, match="LinearRegression"):
        linbook.LinearRegression().fit(Xb, y)
    yb = y.copy()
    yb[3] = bad
    with pytest.raises(ValueError, match="LinearRegression"):
        linbook.LinearRegression().fit(X, yb)
    m = linbook.LinearRegression().fit(X, y)
    with pytest.raises(ValueError, match="LinearRegression"):
        m.predict(Xb)


def test_feature_names_follow_scikit_learn():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(2)
    X, y = rng.standard_normal((20, 3)), rng.standard_normal(20)
    m = linbook.LinearRegression().fit(pd.DataFrame(X, columns=list("abc")), y)
    with pytest.warns(UserWarning, match="feature names"):     # the shortcut steps aside
        m.predict(X)
    m.fit(X, y)                                                 # refit on an array forgets the names
    assert not hasattr(m, "feature_names_in_")


def test_finite_values_whose_sum_overflows_are_accepted():
    """The one-pass finiteness test sums X; a sum that overflows from finite values (1e308 twice) is
    not a reason to refuse X, while NaN or inf beside such values still is."""
    from linbook.base import _finite

    big = np.array([[1e308, 1e308], [1e308, -1.0]])
    assert _finite(big)
    for bad in (np.nan, np.inf, -np.inf):
        b = big.copy()
        b[1, 1] = bad
        assert not _finite(b)
    X = np.array([[1e308], [1e308], [-1e308], [0.0]])
    m = linbook.LDA().fit(X, np.array([0, 0, 1, 1]))
    np.testing.assert_array_equal(m.predict(X[:2]), [0, 0])


@pytest.mark.parametrize("y", [
    np.array([0, 1, 1, 0]), np.array([3, 3, 3]), np.array([2, 0, 1, 2]), np.array([True, False, True]),
    np.array([5, 7], dtype=np.uint8), np.array([-1, 1, -1], dtype=np.int16), np.array([0.0, 1.0, 1.0]),
    np.array([0.5, 1.0]), np.array(["a", "b"]), np.array([1, 2], dtype=object), [0, 1, 2], np.array([[0], [1]]),
    np.array([[0, 1], [1, 0]]), np.array([], dtype=int),
])
def test_label_type_is_type_of_target(y):
    """The shortcut for 1-D integer and boolean labels answers as scikit-learn's ``type_of_target``."""
    from sklearn.utils.multiclass import type_of_target

    from linbook.base import label_type

    assert label_type(y) == type_of_target(y, input_name="y")


@pytest.mark.parametrize("y, match", [
    (np.array([0.5, 1.5, 2.5, 0.5, 1.5, 2.5]), "continuous"),
    (np.zeros(6, dtype=int), "at least 2 classes"),
    (np.array([0.0, 1.0, np.nan, 0.0, 1.0, 0.0]), "NaN"),
    (np.array([[0, 1]] * 6), "1d array"),
    (np.array([1, "a", 2.0, 1, "a", 2.0], dtype=object), "Unknown label type"),
])
def test_logistic_label_errors_unchanged(y, match):
    X = np.random.default_rng(3).standard_normal((6, 2))
    m = linbook.LogisticRegression()
    with pytest.raises(ValueError, match=match):
        m.fit(X, y)
    assert not hasattr(m, "coef_")
