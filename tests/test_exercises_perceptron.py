"""The self-checks of "The perceptron" exercises: references pass, plausible mistakes fail."""

import numpy as np

import linbook.exercises as ex


def epoch_ok(X, y, w, b, eta):
    w = np.array(w, dtype=float)
    n = 0
    for xi, yi in zip(X, y):
        if yi * (xi @ w + b) <= 0:
            w += eta * yi * xi
            b += eta * yi
            n += 1
    return w, b, n


def epoch_strict(X, y, w, b, eta):          # '< 0' misses the ties at the zero start
    w = np.array(w, dtype=float)
    n = 0
    for xi, yi in zip(X, y):
        if yi * (xi @ w + b) < 0:
            w += eta * yi * xi
            b += eta * yi
            n += 1
    return w, b, n


def epoch_batch(X, y, w, b, eta):           # batch update: not the perceptron
    w = np.array(w, dtype=float)
    m = y * (X @ w + b) <= 0
    return w + eta * (y[m] @ X[m]), b + eta * y[m].sum(), int(m.sum())


def epoch_inplace(X, y, w, b, eta):
    n = 0
    for xi, yi in zip(X, y):
        if yi * (xi @ w + b) <= 0:
            w += eta * yi * xi
            b += eta * yi
            n += 1
    return w, b, n


def test_references_pass_and_mistakes_fail():
    assert ex.check("perceptron.epoch", epoch_ok, verbose=False)
    for bad in (epoch_strict, epoch_batch, epoch_inplace):
        assert not ex.check("perceptron.epoch", bad, verbose=False)
    assert ex.check("perceptron.dual-to-primal", lambda a, X, y: (X.T @ (a * y), float((a * y).sum())), verbose=False)
    assert not ex.check("perceptron.dual-to-primal", lambda a, X, y: (X.T @ a, float(a.sum())), verbose=False)
    ok = lambda X, y, w, b: np.min(y * (X @ w + b)) / np.linalg.norm(w)
    assert ex.check("perceptron.margin", ok, verbose=False)
    assert not ex.check("perceptron.margin", lambda X, y, w, b: np.min(np.abs(X @ w + b)) / np.linalg.norm(w),
                        verbose=False)
    assert not ex.check("perceptron.margin", lambda X, y, w, b: np.min(y * (X @ w + b)), verbose=False)
    assert not ex.check("perceptron.margin",
                        lambda X, y, w, b: np.min(y * (X @ w + b)) / np.linalg.norm(np.r_[w, b]), verbose=False)
