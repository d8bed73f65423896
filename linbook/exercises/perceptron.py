"""Self-checks for the exercises of the chapter "The perceptron".

Derived in: chapter "The perceptron" § "Exercises".
"""

from __future__ import annotations

import numpy as np

from . import Property, close, exercise, has_shape, is_tuple


def _ref_epoch(X, y, w, b, eta):
    w = np.array(w, dtype=float)
    n = 0
    for xi, yi in zip(X, y):
        if yi * (xi @ w + b) <= 0:
            w = w + eta * yi * xi
            b = b + eta * yi
            n += 1
    return w, b, n


def _data(seed, n=25, d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X @ rng.normal(size=d) + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


@exercise("perceptron.epoch", "One epoch of the primal perceptron",
          returns="(w, b, n_updates): w of shape (D,), b a number, n_updates an integer")
def _epoch(fn):
    X, y = _data(0)
    w0 = np.zeros(3)
    out = fn.shared(X.copy(), y.copy(), w0, 0.0, 1.0)   # w0 itself: the last property watches it
    yield Property("returns (w, b, n_updates)", is_tuple(out, 3), "return the three values as a tuple")
    w, b, n = out
    rw, rb, rn = _ref_epoch(X, y, np.zeros(3), 0.0, 1.0)
    yield Property("w has one entry per feature", has_shape(w, (3,)), "w must have shape (D,)")
    yield Property("counts the updates", int(n) == rn,
                   "a point with y (w.x + b) <= 0 (zero included) is a mistake")
    yield Property("matches the textbook pass from w = 0", close(w, rw, rtol=1e-5, atol=1e-8) and close(b, rb, rtol=1e-5, atol=1e-8),
                   "update right after each mistake, before looking at the next sample; "
                   "check the updates of both w and b")
    yield Property("does not modify the input w", np.all(w0 == 0), "copy w before updating it")
    rng = np.random.default_rng(1)
    ws, bs = rng.normal(size=3), 0.4
    w, b, n = fn(X, y, ws.copy(), bs, 0.3)
    rw, rb, rn = _ref_epoch(X, y, ws, bs, 0.3)
    yield Property("matches from a non-zero start with eta = 0.3", close(w, rw, rtol=1e-5, atol=1e-8) and close(b, rb, rtol=1e-5, atol=1e-8) and n == rn,
                   "the learning rate scales the updates of both w and b")


@exercise("perceptron.dual-to-primal", "Primal weights from the dual coefficients",
          returns="(w, b): w of shape (D,), b a number")
def _dual(fn):
    X, y = _data(2, n=15, d=4)
    alpha = np.abs(np.random.default_rng(3).normal(size=15)).round(1)
    w, b = fn(alpha.copy(), X.copy(), y.copy())
    yield Property("w matches the primal weights", close(w, X.T @ (alpha * y), rtol=1e-5, atol=1e-8),
                   "alpha_i counts (eta times) the updates made on sample i: what did each of them add to w?")
    yield Property("b matches the primal bias", close(b, float(np.sum(alpha * y)), rtol=1e-5, atol=1e-8),
                   "what did each of those updates add to b?")


@exercise("perceptron.margin", "Geometric margin of a hyperplane on a data set",
          returns="one number")
def _margin(fn):
    X, y = _data(4)
    rng = np.random.default_rng(5)
    w, b = rng.normal(size=3), 0.2
    ref = np.min(y * (X @ w + b)) / np.linalg.norm(w)
    out = float(fn(X, y, w.copy(), b))
    yield Property("matches min_i y_i (w.x_i + b) / ||w||", close(out, ref, rtol=1e-5, atol=1e-8),
                   "signed distances, divided by the Euclidean norm of w (without b)")
    out2 = float(fn(X, y, 3.0 * w, 3.0 * b))
    yield Property("is invariant to rescaling (w, b)", close(out2, ref, rtol=1e-5, atol=1e-8), "divide by ||w||")
    Xs = np.array([[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0]])
    ys = np.array([-1.0, 1.0])
    yield Property("is negative when points are misclassified",
                   float(fn(Xs, ys, np.array([1.0, 0, 0]), 0.0)) < 0, "keep the sign: y_i (w.x_i + b), no absolute value")
