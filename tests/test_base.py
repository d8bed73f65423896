import numpy as np
import pytest
from sklearn.base import BaseEstimator

from linbook.base import encode_labels, validate_data, validate_X


class _Fitted(BaseEstimator):
    def __init__(self):
        self.n_features_in_ = 3
        self.coef_ = np.zeros(3)

    def fit(self, X, y=None):
        return self


def test_validate_data_rejects_bad_input():
    X = np.ones((4, 2))
    with pytest.raises(ValueError, match="NaN"):
        validate_data(np.array([[np.nan, 1.0]] * 3), [0, 1, 0])
    with pytest.raises(ValueError, match="infinity"):
        validate_data(np.array([[np.inf, 1.0]] * 3), [0, 1, 0])
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        validate_data(X, [0, 1])
    with pytest.raises(ValueError, match="2D array"):
        validate_data(np.ones(4), [0, 1, 0, 1])
    Xv, yv = validate_data(X, [1, 2, 3, 4], y_numeric=True)
    assert Xv.dtype == np.float64 and yv.dtype == np.float64


def test_validate_X_width():
    with pytest.raises(ValueError, match="3 features"):
        validate_X(_Fitted(), np.ones((2, 2)))
    assert validate_X(_Fitted(), np.ones((2, 3))).shape == (2, 3)


def test_encode_labels():
    classes, idx = encode_labels(np.array(["b", "a", "b"]))
    assert classes.tolist() == ["a", "b"] and idx.tolist() == [1, 0, 1]
    with pytest.raises(ValueError, match="at least 2 classes"):
        encode_labels(np.array([1, 1, 1]))
    with pytest.raises(ValueError, match="at most 2 classes"):
        encode_labels(np.array([0, 1, 2]), max_classes=2)
    with pytest.raises(ValueError, match="continuous"):
        encode_labels(np.array([0.5, 1.2, 3.3]))
