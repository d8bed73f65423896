"""``linbook.datasets.make_*`` with bad arguments (session 24's sweep): each is a clear ``ValueError`` /
``TypeError`` naming the argument, never a silent odd output or numpy's error from deep inside.

Before: a bool size was taken as 1, a fractional or string ``n_per_class`` was truncated or read as a
number, seeds of the wrong type raised numpy's "SeedSequence expects int ...", strings for numbers raised
"could not convert string to float", and shapes that do not fit raised numpy's broadcasting errors.
"""

import numpy as np
import pytest

from adversarial.harness import assert_clear_error
from linbook import datasets

BASE = {
    "make_gaussian_classes": dict(n_per_class=5, means=[[0.0, 0.0], [1.0, 1.0]], covs=np.eye(2), random_state=0),
    "make_separable": dict(n_samples=5, n_features=2, random_state=0),
    "make_regression": dict(n_samples=5, n_features=2, random_state=0),
}

BAD = [
    ("make_gaussian_classes", "n_per_class", 2.5), ("make_gaussian_classes", "n_per_class", True),
    ("make_gaussian_classes", "n_per_class", "5"), ("make_gaussian_classes", "n_per_class", [5, 2.5]),
    ("make_gaussian_classes", "n_per_class", [1, 2, 3]), ("make_gaussian_classes", "means", "a"),
    ("make_gaussian_classes", "means", np.zeros((2, 2, 2))), ("make_gaussian_classes", "covs", np.eye(3)),
    ("make_separable", "n_samples", True), ("make_separable", "n_features", True),
    ("make_separable", "margin", "a"), ("make_separable", "radius", "a"), ("make_separable", "labels", 5),
    ("make_separable", "b", "a"), ("make_regression", "n_samples", True), ("make_regression", "n_features", True),
    ("make_regression", "scale", "a"), ("make_regression", "intercept", [1.0, 2.0]),
] + [(name, "random_state", seed) for name in BASE
     for seed in ["a", 1.5, -1, True, np.random.RandomState(0)]]


@pytest.mark.parametrize("name, arg, value", BAD, ids=[f"{n}-{a}-{type(v).__name__}-{v if np.ndim(v) == 0 and not callable(v) else np.shape(v)}"[:70]
                                                 for n, a, v in BAD])
def test_a_bad_argument_is_a_clear_error_naming_it(name, arg, value):
    with pytest.raises((ValueError, TypeError)) as info:
        getattr(datasets, name)(**dict(BASE[name], **{arg: value}))
    assert_clear_error(info.value, arg)


@pytest.mark.parametrize("name", BASE)
def test_valid_arguments_keep_their_samples(name):
    """Integer-valued floats for n_per_class, numpy integers and Generators still work as before."""
    out = getattr(datasets, name)(**BASE[name])
    same = getattr(datasets, name)(**dict(BASE[name], random_state=np.random.default_rng(0)))
    for a, b in zip(out, same):
        np.testing.assert_array_equal(a, b)
    X, y = datasets.make_gaussian_classes(np.int64(3), [[0.0], [1.0]], [[1.0]], random_state=0)
    assert X.shape == (6, 1) and np.bincount(y).tolist() == [3, 3]
    X, y = datasets.make_gaussian_classes([2.0, 4], [[0.0], [1.0]], [[1.0]], random_state=0)
    assert np.bincount(y).tolist() == [2, 4]
    X, y = datasets.make_gaussian_classes(10, [[0.0], [1.0]], [[1.0]], priors=[0.5, 0.5], random_state=0)
    assert X.shape == (10, 1)
