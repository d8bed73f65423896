"""Self-checks for the exercises of chapter "Optimizers".

Derived in: chapter "Optimizers" § "Exercises".
"""

from __future__ import annotations

import numpy as np

from linbook.exercises import Property, close, exercise
from linbook.numerics import sigmoid
from linbook.optim import bfgs_update_H, lbfgs_two_loop


_close = close


def _spd(rng, d):
    A = rng.normal(size=(d, d))
    return A @ A.T + d * np.eye(d)


def _halving_step(f, g, x, d, c1=1e-4):
    """The step the exercise asks for: the first of t = 1, 1/2, 1/4, ... that satisfies Armijo."""
    t, fx, slope = 1.0, f(x), g(x) @ d
    while f(x + t * d) > fx + c1 * t * slope:
        t *= 0.5
    return t


@exercise("optim.backtracking", "Armijo backtracking line search",
          returns="a step size t (one number in (0, 1])")
def _check_backtracking(fn):
    def f(x):
        return 0.5 * (x[0] ** 2 - x[1]) ** 2 + 0.5 * (x[0] - 1) ** 2

    def g(x):
        return np.array([2 * x[0] * (x[0] ** 2 - x[1]) + x[0] - 1, -(x[0] ** 2 - x[1])])

    rng = np.random.default_rng(0)
    ok_armijo, ok_max, ok_first = True, True, True
    for _ in range(20):
        x = rng.normal(size=2) * 2
        d = -g(x)
        t = float(fn(f, g, x, d))
        ok_armijo &= f(x + t * d) <= f(x) + 1e-4 * t * g(x) @ d + 1e-12
        ok_max &= 0 < t <= 1.0
        # any smaller step also satisfies Armijo here: only the halving sequence pins t down
        ok_first &= t == _halving_step(f, g, x, d)
    yield Property("returned step satisfies the Armijo condition (c1 = 1e-4)", bool(ok_armijo),
                   "halve t until the sufficient-decrease (Armijo) condition holds")
    yield Property("step is in (0, 1]", bool(ok_max), "start from t = 1 and only shrink")
    yield Property("is the first of t = 1, 1/2, 1/4, ... that satisfies Armijo", bool(ok_first),
                   "test t = 1 first, halve t only while the condition fails, and return the first t that passes")
    # f(x + d) < f(x) but not by the Armijo margin: a plain "any decrease" test accepts t = 1
    f1 = lambda x: 0.5 * float(x @ x)   # noqa: E731
    g1 = lambda x: np.asarray(x, float)   # noqa: E731
    x1 = np.array([1.0])
    t = float(fn(f1, g1, x1, np.array([-1.9999])))
    yield Property("rejects a step that decreases f by less than c1 t g'd",
                   f1(x1 + t * np.array([-1.9999])) <= 0.5 - 1e-4 * t * 1.9999 and t < 1.0,
                   "a mere decrease f(x + t d) < f(x) is not enough")
    # the Newton direction of a quadratic: t = 1 reaches the minimum, f drops from 0.5 to 0 > 1e-4
    t = float(fn(f1, g1, np.array([1.0, -2.0]), np.array([-1.0, 2.0])))
    yield Property("accepts the full step t = 1 when it already satisfies Armijo", t == 1.0, "test t = 1 first")


@exercise("optim.bfgs-update-h", "BFGS update of the inverse Hessian",
          returns="the updated H, of shape (D, D)")
def _check_bfgs(fn):
    rng = np.random.default_rng(1)
    d = 5
    H = np.linalg.inv(_spd(rng, d))
    s = rng.normal(size=d)
    A = _spd(rng, d)
    y = A @ s                        # y's > 0
    out = np.asarray(fn(H.copy(), s, y), float)
    yield Property("matches the reference update", _close(out, bfgs_update_H(H, s, y)),
                   "update the inverse directly (not B, then invert it); "
                   "compare each factor with the chapter's inverse update")
    yield Property("secant condition H+ y = s", _close(out @ y, s), "the inverse update must map y to s")
    yield Property("stays symmetric positive definite",
                   _close(out, out.T) and np.linalg.eigvalsh(out).min() > 0)


@exercise("optim.lbfgs-two-loop", "L-BFGS two-loop recursion",
          returns="the product H g, of shape (D,)")
def _check_two_loop(fn):
    rng = np.random.default_rng(2)
    d, m = 6, 4
    A = _spd(rng, d)
    S = [rng.normal(size=d) for _ in range(m)]
    Y = [A @ s for s in S]
    g = rng.normal(size=d)
    ref = lbfgs_two_loop(g, S, Y)
    out = fn(g.copy(), [s.copy() for s in S], [y.copy() for y in Y])
    yield Property("matches H g of the two-loop recursion (gamma = s'y/y'y of the newest pair)",
                   _close(out, ref),
                   "check the order in which each loop visits the pairs and where the initial scaling gamma enters")
    gamma = S[-1] @ Y[-1] / (Y[-1] @ Y[-1])
    Hd = gamma * np.eye(d)
    for s, y in zip(S, Y):
        Hd = bfgs_update_H(Hd, s, y)
    yield Property("equals m dense BFGS updates of gamma I", _close(out, Hd @ g))
    out1 = fn(g.copy(), [S[0]], [Y[0]])
    yield Property("works with a single pair", _close(out1, lbfgs_two_loop(g, [S[0]], [Y[0]])))


@exercise("optim.irls-step", "One IRLS step as weighted least squares with the working response",
          returns="the new w, of shape (D,)")
def _check_irls(fn):
    rng = np.random.default_rng(3)
    X = np.column_stack([np.ones(50), rng.normal(size=(50, 2))])
    y = (rng.random(50) < 0.5).astype(float)
    for w in (np.zeros(3), rng.normal(size=3) * 0.5):
        mu = sigmoid(X @ w)
        s = mu * (1 - mu)
        ref = w - np.linalg.solve(X.T @ (s[:, None] * X), X.T @ (mu - y))
        yield Property("equals the Newton step", _close(fn(X, y, w), ref),
                       "the weights and the working response (8.25) come from the current w; "
                       "solve the weighted least-squares problem for the new w, not for a step")
