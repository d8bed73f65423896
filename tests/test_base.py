import numpy as np
import pytest

from linbook.base import encode_labels


def test_encode_labels():
    classes, idx = encode_labels(np.array(["b", "a", "b"]))
    assert classes.tolist() == ["a", "b"] and idx.tolist() == [1, 0, 1]
    with pytest.raises(ValueError, match="at least 2 classes"):
        encode_labels(np.array([1, 1, 1]))
    with pytest.raises(ValueError, match="at most 2 classes"):
        encode_labels(np.array([0, 1, 2]), max_classes=2)
    with pytest.raises(ValueError, match="continuous"):
        encode_labels(np.array([0.5, 1.2, 3.3]))
