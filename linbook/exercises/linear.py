"""Self-checks for the exercises of the chapter "Linear regression".

Derived in: chapter "Linear regression" § "Exercises".
"""

from __future__ import annotations

from functools import partial

import numpy as np

from . import Property, close, exercise, has_shape


def _ref_ls(X, y):
    xm, ym = X.mean(axis=0), y.mean()
    w = np.linalg.pinv(X - xm) @ (y - ym)
    return w, ym - xm @ w


def _ref_ridge(X, y, lam):
    xm, ym = X.mean(axis=0), y.mean()
    Xc = X - xm
    w = np.linalg.solve(Xc.T @ Xc + lam * np.eye(X.shape[1]), Xc.T @ (y - ym))
    return w, ym - xm @ w


_close = partial(close, rtol=1e-7, atol=1e-7)  # this chapter's default tolerance


@exercise("linear.least-squares", "Least squares with an intercept, minimum norm",
          returns="(w, b): w of shape (D,), b a number")
def _least_squares(fn):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3)) + 2.0
    y = X @ [1.0, -1.0, 2.0] + 0.5 + 0.1 * rng.normal(size=30)
    w, b = fn(X.copy(), y.copy())
    rw, rb = _ref_ls(X, y)
    yield Property("returns (w, b) with w of shape (D,)", has_shape(w, (3,)), "w should have one entry per column of X")
    yield Property("matches least squares on full-rank data", _close(w, rw) and _close(b, rb),
                   "at the minimiser the residual is orthogonal to every column of X and sums to zero")
    Xw = rng.normal(size=(5, 9))
    yw = rng.normal(size=5)
    w, b = fn(Xw.copy(), yw.copy())
    rw, rb = _ref_ls(Xw, yw)
    fits = _close(Xw @ np.asarray(w) + b, yw, 1e-6)
    yield Property("fits D > N data exactly", fits, "with more features than samples the residual can be zero")
    yield Property("returns the minimum-norm solution when D > N", _close(w, rw, 1e-6),
                   "many w fit exactly; pick the one of smallest norm (no component in the null space of X)")


@exercise("linear.ridge", "Ridge regression with an unpenalised intercept",
          returns="(w, b): w of shape (D,), b a number")
def _ridge(fn):
    rng = np.random.default_rng(1)
    for n, d, lam in [(40, 3, 2.0), (8, 20, 0.5), (50, 5, 1e-3)]:
        X = rng.normal(size=(n, d)) + 1.0
        y = X @ rng.normal(size=d) + 3.0 + 0.2 * rng.normal(size=n)
        w, b = fn(X.copy(), y.copy(), lam)
        rw, rb = _ref_ridge(X, y, lam)
        yield Property(f"matches the ridge minimiser (N={n}, D={d}, lam={lam})", _close(w, rw) and _close(b, rb),
                       "objective is 1/2||y - Xw - b||^2 + lam/2 ||w||^2; is the intercept penalised, "
                       "or is lam doubled?")


# (a, lam) pairs for the lasso update: lam != 1/a and a != 1, 2 in most, so that a function that ignores a or
# lam, or swaps the roles of 1/a and lam, differs from the minimiser (one pair with lam = 1/a let both pass)
_LASSO_PAIRS = [(2.0, 0.5), (5.0, 0.3), (0.5, 1.5), (3.0, 2.0), (0.25, 0.1)]
# z in units of lam: both sides of the threshold, and |z| = lam exactly (the minimiser is 0 there)
_LASSO_Z = np.array([-3.0, -1.2, -1.0, -0.4, 0.0, 0.4, 1.0, 1.4, 2.5, 6.0])


def _soft(z, a, lam):
    return np.sign(z) * np.maximum(np.abs(z) - lam, 0.0) / a


def _lasso_objective_ok(fn, rng, a, lam):
    """Whether fn(z, a, lam) is a minimiser of a/2 w^2 - z w + lam |w| on random z: no small move lowers it."""
    zz = rng.normal(size=50) * 3 * lam
    obj = lambda wv: 0.5 * a * wv**2 - zz * wv + lam * np.abs(wv)   # noqa: E731
    o = np.asarray(fn(zz, a, lam), dtype=float)
    tol = 1e-12 * max(1.0, float(np.max(zz**2)) / a)   # rounding of the objective, in its own units
    return o.shape == zz.shape and all(np.all(obj(o) <= obj(o + d) + tol) for d in (-1e-3 * lam, 1e-3 * lam))


@exercise("linear.lasso-coordinate", "The lasso's coordinate update (soft thresholding)",
          returns="an array of the same shape as z")
def _lasso_coordinate(fn):
    ok_shape = ok_zero = ok_match = True
    for a, lam in _LASSO_PAIRS:
        z = lam * _LASSO_Z
        out = np.asarray(fn(z, a, lam), dtype=float)
        ok_shape = ok_shape and has_shape(out, z.shape)
        ok_zero = ok_zero and out.shape == z.shape and bool(np.all(out[np.abs(z) <= lam] == 0))
        ok_match = ok_match and close(out, _soft(z, a, lam), rtol=1e-5, atol=1e-8)
    yield Property("returns one value per z", ok_shape, "apply the update elementwise")
    yield Property("is exactly zero when |z| <= lam", ok_zero,
                   "the minimiser is 0 whenever 0 is in the subdifferential (checked for several a and lam)")
    yield Property("matches the minimiser for |z| > lam", ok_match,
                   "away from zero the objective is differentiable: set its derivative to zero on each side "
                   "(checked for several a and lam: where does each of them enter?)")
    rng = np.random.default_rng(2)
    ok = all(_lasso_objective_ok(fn, rng, a, lam) for a, lam in _LASSO_PAIRS)
    yield Property("is a minimiser of a/2 w^2 - z w + lam|w| on random z", ok,
                   "a small move in either direction should not lower the objective")
