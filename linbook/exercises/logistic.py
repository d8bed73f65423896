"""Self-checks for the exercises of chapter "Logistic regression".

Derived in: chapter "Logistic regression" § "Exercises".
"""

from __future__ import annotations

from functools import partial

import numpy as np
from scipy.special import log_ndtr

from linbook.exercises import Property, close, exercise, has_shape
from linbook.numerics import log1pexp, sigmoid, softmax


_close = partial(close, rtol=1e-7, atol=1e-9)  # this chapter's default tolerance


def _data(rng, n=30, d=3):
    X = rng.normal(size=(n, d))
    y = (rng.random(n) < 0.5).astype(float)
    return X, y


def _ref_nll_grad_hess(X, y, w):
    z = X @ w
    mu = sigmoid(z)
    nll = float(np.sum(log1pexp(z) - y * z))
    return nll, X.T @ (mu - y), X.T @ ((mu * (1 - mu))[:, None] * X)


@exercise("logreg.nll-grad-hess", "NLL, gradient and Hessian of binary logistic regression",
          returns="(nll, grad, hess): a number, shape (D,), shape (D, D)")
def _check_nll(fn):
    rng = np.random.default_rng(0)
    X, y = _data(rng)
    w = rng.normal(size=3)
    nll, g, H = fn(X, y, w)
    rn, rg, rH = _ref_nll_grad_hess(X, y, w)
    yield Property("NLL matches on random data", _close(nll, rn),
                   "the NLL is a sum over the samples (not a mean) of minus the log-probability of each label")
    yield Property("gradient matches", _close(g, rg),
                   "differentiate the NLL through the sigmoid with the chain rule; one entry per weight")
    yield Property("Hessian matches", _close(H, rH),
                   "differentiate the gradient once more; each sample is weighted by the sigmoid's slope")
    yield Property("Hessian is symmetric positive semi-definite",
                   _close(H, np.transpose(H)) and np.linalg.eigvalsh(np.asarray(H, float)).min() > -1e-10)
    wb = 500.0 * w
    nll, g, H = fn(X, y, wb)
    rn, rg, rH = _ref_nll_grad_hess(X, y, wb)
    # all three: a sigmoid written exp(z) / (1 + exp(z)) gives NaN gradients and Hessians here (inf / inf)
    # while a stable softplus keeps the NLL right, so checking the NLL alone passed it
    ok_nll = _close(nll, rn, rtol=1e-10)
    if not ok_nll:
        hint = "log(1 + exp(z)) overflows for z > 709: rewrite it so that exp never sees a large positive argument"
    else:
        hint = ("the gradient and Hessian must be finite and right here too: compute the sigmoid so that exp "
                "never sees a large positive argument")
    yield Property("finite and exact for huge weights (|z| ~ 1000)", ok_nll and _close(g, rg) and _close(H, rH), hint)


@exercise("logreg.newton-step", "One Newton (IRLS) step for l2-regularised logistic regression",
          returns="the new w, of shape (D,)")
def _check_newton(fn):
    rng = np.random.default_rng(1)
    X, y = _data(rng, n=40, d=4)
    for lam in (0.0, 2.0):
        w = rng.normal(size=4) * 0.3
        _, g, H = _ref_nll_grad_hess(X, y, w)
        ref = w - np.linalg.solve(H + lam * np.eye(4), g + lam * w)
        out = fn(X, y, w, lam)
        yield Property(f"matches the Newton step for lam = {lam:g}", _close(out, ref),
                       "the penalty is part of the objective: does it enter both the gradient "
                       "and the Hessian of your step?")
    w = np.zeros(4)
    out = fn(X, y, w, 1.0)
    _, g, H = _ref_nll_grad_hess(X, y, w)
    yield Property("from w = 0", _close(out, -np.linalg.solve(H + np.eye(4), g)),
                   "at w = 0 every predicted probability is 1/2")


@exercise("logreg.softmax-grad", "Gradient of the multinomial NLL with respect to W (D x C)",
          returns="the gradient, of shape (D, C) like W")
def _check_softmax(fn):
    rng = np.random.default_rng(2)
    n, d, C = 25, 3, 4
    X = rng.normal(size=(n, d))
    yi = rng.integers(0, C, n)
    Y = np.eye(C)[yi]
    W = rng.normal(size=(d, C))
    ref = X.T @ (softmax(X @ W, axis=1) - Y)
    out = fn(X, Y, W)
    yield Property("shape (D, C)", has_shape(out, (d, C)), "one column per class, as W")
    yield Property("matches the gradient on random data", _close(out, ref),
                   "differentiate the NLL with respect to one class's column of W; the softmax couples the classes")
    out = fn(X, Y, 300.0 * W)
    yield Property("finite for large scores", _close(out, X.T @ (softmax(X @ (300.0 * W), axis=1) - Y)),
                   "a sample's softmax does not change when the same constant is subtracted from all its scores")
    yield Property("each row sums to zero over the classes (softmax is shift invariant)",
                   _close(np.sum(out, axis=1), np.zeros(d), atol=1e-8),
                   "each sample's class probabilities sum to one, like its one-hot label")


@exercise("logreg.probit-nll", "Stable probit NLL and gradient",
          returns="(nll, grad): a number and shape (D,)")
def _check_probit(fn):
    rng = np.random.default_rng(3)
    X, y = _data(rng, n=30, d=2)
    t = 2 * y - 1

    def ref(w):
        u = t * (X @ w)
        lp = log_ndtr(u)
        lam = np.exp(-0.5 * u * u - 0.5 * np.log(2 * np.pi) - lp)
        return float(-lp.sum()), -X.T @ (t * lam)

    for scale in (1.0, 40.0):
        w = scale * rng.normal(size=2)
        nll, g = fn(X, y, w)
        rn, rg = ref(w)
        yield Property(f"NLL matches (|w| scale {scale:g})", _close(nll, rn, rtol=1e-9),
                       "compute log Phi without forming Phi (it underflows for large negative arguments); "
                       "one sign covers both labels")
        yield Property(f"gradient matches (|w| scale {scale:g})", _close(g, rg, rtol=1e-7),
                       "the derivative of log Phi is a ratio of two tiny numbers for large negative "
                       "arguments: form it in log space")
