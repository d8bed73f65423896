"""Self-checks for the exercises of the chapter "Online learning and stochastic optimisation".

Derived in: chapter "Online learning and stochastic optimisation" § "Exercises".
"""

from __future__ import annotations

from functools import partial

import numpy as np

from . import Property, close, exercise, has_shape, is_tuple


_close = partial(close, rtol=1e-10, atol=1e-10)  # this chapter's default tolerance


@exercise("online.polyak-average", "Recursive Polyak-Ruppert average (8.80)-(8.81)",
          returns="the new average, of shape (D,)")
def _polyak(fn):
    rng = np.random.default_rng(0)
    thetas = rng.standard_normal((25, 3))
    bar = np.zeros(3)
    shape_ok = True
    for k in range(1, 26):
        bar = fn(bar.copy(), thetas[k - 1].copy(), k)
        shape_ok = has_shape(bar, (3,))
        if not shape_ok:
            break
        bar = np.asarray(bar, dtype=float)
    yield Property("returns the new average, of the same shape as the old one", shape_ok, "return an array of shape (D,)")
    if not shape_ok:
        return   # a wrong shape fed back in would only compound
    yield Property("running it over 25 iterates gives their mean", _close(bar, thetas.mean(axis=0)),
                   "after k updates the result must equal the plain average of the k iterates (8.80)")
    first = np.asarray(fn(np.full(3, 7.0), thetas[0], 1), dtype=float)
    yield Property("k = 1 returns the first iterate, whatever the old average",
                   _close(first, thetas[0]), "the average of a single iterate is that iterate")
    # the check's own arrays (fn.shared), not the copies every other call gets: this property watches them
    old, theta = np.array([1.0, -2.0, 0.5]), thetas[1].copy()
    yield Property("does not modify its inputs in place", (fn.shared(old, theta, 3) is not None) and
                   _close(old, [1.0, -2.0, 0.5]) and _close(theta, thetas[1]),
                   "return a new array instead of updating theta_bar in place")


@exercise("online.rls-step", "One recursive-least-squares (Sherman-Morrison) update",
          returns="(m, P): shapes (D,) and (D, D)")
def _rls(fn):
    rng = np.random.default_rng(1)
    D, N, lam = 3, 40, 0.5
    X = rng.standard_normal((N, D))
    y = X @ rng.standard_normal(D) + 0.1 * rng.standard_normal(N)
    m, P = np.zeros(D), np.eye(D) / lam
    one = fn(m.copy(), P.copy(), X[0].copy(), float(y[0]))
    yield Property("returns a pair (m, P) of shapes (D,) and (D, D)",
                   is_tuple(one, 2) and has_shape(one[0], (D,)) and has_shape(one[1], (D, D)),
                   "return (new_mean, new_P)")
    for i in range(N):
        out = fn(m, P, X[i], float(y[i]))
        if not (is_tuple(out, 2) and has_shape(out[0], (D,)) and has_shape(out[1], (D, D))):
            yield Property(f"returns (m, P) of shapes (D,) and (D, D) at step {i + 1}", False, "return (new_mean, new_P)")
            return   # a wrong shape fed back in would only compound
        m, P = np.asarray(out[0], float), np.asarray(out[1], float)
    ridge = np.linalg.solve(X.T @ X + lam * np.eye(D), X.T @ y)
    yield Property("after all samples the mean equals the batch ridge solution (prior precision 0.5)",
                   _close(m, ridge, 1e-8),
                   "after all samples the recursion must reproduce the batch ridge fit: check the gain vector")
    yield Property("P is the inverse of the accumulated precision",
                   _close(P, np.linalg.inv(X.T @ X + lam * np.eye(D)), 1e-8),
                   "P is the inverse of the accumulated precision: apply the Sherman-Morrison identity "
                   "and check its denominator")
    yield Property("P stays symmetric", _close(P, P.T, 1e-10),
                   "a symmetric update subtracts a symmetric rank-one matrix")


@exercise("online.adagrad-step", "One adagrad step (8.84)-(8.85)",
          returns="(theta, s), both of shape (D,)")
def _adagrad(fn):
    rng = np.random.default_rng(2)
    theta, s = rng.standard_normal(4), rng.random(4)
    g, eta, tau0 = rng.standard_normal(4), 0.3, 1e-3
    out = fn(theta.copy(), g.copy(), s.copy(), eta, tau0)
    ok_shape = is_tuple(out, 2)
    yield Property("returns a pair (theta, s)", ok_shape, "return (theta_new, s_new)")
    if not ok_shape:
        return
    s_new = s + g ** 2
    yield Property("accumulates squared gradients (8.85)", _close(out[1], s_new),
                   "check what (8.85) adds to s, coordinate by coordinate")
    yield Property("steps with the updated accumulator (8.84)",
                   _close(out[0], theta - eta * g / (tau0 + np.sqrt(s_new))),
                   "update s first, then take the step (8.84) with the updated s")
    t2, s2 = fn(np.zeros(2), np.array([1e-3, 1e3]), np.zeros(2), 1.0, 0.0)
    yield Property("first step moves every coordinate by eta, whatever its gradient scale",
                   _close(np.abs(t2), [1.0, 1.0]),
                   "the step is normalised coordinate by coordinate by the size of the accumulated gradients")
