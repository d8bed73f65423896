"""Self-checks of chapter "Optimizers": reference solutions pass, plausible mistakes fail."""

import numpy as np

import linbook.exercises as ex
from linbook.numerics import sigmoid


def backtracking(f, g, x, d, c1=1e-4):
    t, fx, slope = 1.0, f(x), g(x) @ d
    while f(x + t * d) > fx + c1 * t * slope:
        t *= 0.5
    return t


def backtracking_no_armijo(f, g, x, d):     # accepts any decrease
    t = 1.0
    while f(x + t * d) > f(x):
        t *= 0.5
    return t


def bfgs_h(H, s, y):
    rho = 1 / (y @ s)
    I = np.eye(len(s))
    return (I - rho * np.outer(s, y)) @ H @ (I - rho * np.outer(y, s)) + rho * np.outer(s, s)


def bfgs_h_note(H, s, y):                  # the note's (8.29) with s s' in the first factor
    rho = 1 / (y @ s)
    I = np.eye(len(s))
    return (I - rho * np.outer(s, s)) @ H @ (I - rho * np.outer(y, s)) + rho * np.outer(s, s)


def two_loop(g, S, Y):
    q = g.copy()
    a = []
    for s, y in reversed(list(zip(S, Y))):
        al = (s @ q) / (y @ s)
        a.append(al)
        q -= al * y
    r = (S[-1] @ Y[-1]) / (Y[-1] @ Y[-1]) * q
    for (s, y), al in zip(zip(S, Y), reversed(a)):
        b = (y @ r) / (y @ s)
        r += (al - b) * s
    return r


def two_loop_wrong_order(g, S, Y):
    q = g.copy()
    a = []
    for s, y in zip(S, Y):                 # oldest first in the first loop: wrong
        al = (s @ q) / (y @ s)
        a.append(al)
        q -= al * y
    r = (S[-1] @ Y[-1]) / (Y[-1] @ Y[-1]) * q
    for (s, y), al in zip(zip(S, Y), a):
        r += (al - (y @ r) / (y @ s)) * s
    return r


def irls_step(X, y, w):
    mu = sigmoid(X @ w)
    s = mu * (1 - mu)
    z = X @ w + (y - mu) / s
    return np.linalg.solve(X.T @ (s[:, None] * X), X.T @ (s * z))


def irls_step_unweighted(X, y, w):
    mu = sigmoid(X @ w)
    s = mu * (1 - mu)
    z = X @ w + (y - mu) / s
    return np.linalg.lstsq(X, z, rcond=None)[0]


def test_references_pass():
    assert ex.check("optim.backtracking", backtracking, verbose=False)
    assert ex.check("optim.bfgs-update-h", bfgs_h, verbose=False)
    assert ex.check("optim.lbfgs-two-loop", two_loop, verbose=False)
    assert ex.check("optim.irls-step", irls_step, verbose=False)


def test_mistakes_fail():
    assert not ex.check("optim.backtracking", backtracking_no_armijo, verbose=False)
    assert not ex.check("optim.bfgs-update-h", bfgs_h_note, verbose=False)
    assert not ex.check("optim.lbfgs-two-loop", two_loop_wrong_order, verbose=False)
    assert not ex.check("optim.irls-step", irls_step_unweighted, verbose=False)
