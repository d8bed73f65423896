import numpy as np
import pytest

from linbook import datasets


def test_gaussian_classes_seeded_and_shaped():
    X1, y1 = datasets.make_gaussian_classes(50, [[0, 0], [2, 2]], np.eye(2), random_state=3)
    X2, y2 = datasets.make_gaussian_classes(50, [[0, 0], [2, 2]], np.eye(2), random_state=3)
    assert X1.shape == (100, 2) and np.array_equal(X1, X2) and np.array_equal(y1, y2)
    assert np.bincount(y1).tolist() == [50, 50]
    with pytest.raises(ValueError):
        datasets.make_gaussian_classes(5, [[0, 0], [1, 1]], np.eye(3))


def test_separable_margin():
    X, y, w = datasets.make_separable(300, 3, margin=0.2, random_state=0)
    d = X @ w
    assert np.all(np.sign(d) == y) and np.min(np.abs(d)) >= 0.2 - 1e-12


def test_regression_noise_laws():
    for noise in ("gaussian", "laplace", "student-t", "none"):
        X, y, coef = datasets.make_regression(200, 2, noise=noise, random_state=1)
        assert X.shape == (200, 2) and y.shape == (200,)
    X, y, coef = datasets.make_regression(50, 2, noise="none", coef=[1.0, -2.0], intercept=0.5, random_state=0)
    np.testing.assert_allclose(y, X @ [1.0, -2.0] + 0.5)
    with pytest.raises(ValueError):
        datasets.make_regression(10, noise="cauchy")


def test_rng_policy():
    g = np.random.default_rng(1)
    assert datasets.as_rng(g) is g
    with pytest.raises(TypeError):
        datasets.as_rng(np.random.RandomState(0))
