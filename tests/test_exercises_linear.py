"""The self-checks of the "Linear regression" exercises: references pass, plausible mistakes fail."""

import numpy as np
import pytest

import linbook.exercises as ex


def ls_ok(X, y):
    xm, ym = X.mean(0), y.mean()
    w = np.linalg.lstsq(X - xm, y - ym, rcond=None)[0]
    return w, ym - xm @ w


def ls_no_intercept(X, y):
    return np.linalg.lstsq(X, y, rcond=None)[0], 0.0


def ls_not_min_norm(X, y):
    w, b = ls_ok(X, y)
    if X.shape[1] > X.shape[0]:
        w = w + np.linalg.svd(X - X.mean(0))[2][-1]
        b = y.mean() - X.mean(0) @ w
    return w, b


def ridge_ok(X, y, lam):
    xm, ym = X.mean(0), y.mean()
    Xc = X - xm
    w = np.linalg.solve(Xc.T @ Xc + lam * np.eye(X.shape[1]), Xc.T @ (y - ym))
    return w, ym - xm @ w


def ridge_double_lam(X, y, lam):
    return ridge_ok(X, y, 2 * lam)


def ridge_penalised_intercept(X, y, lam):
    Xh = np.column_stack([X, np.ones(len(y))])
    v = np.linalg.solve(Xh.T @ Xh + lam * np.eye(Xh.shape[1]), Xh.T @ y)
    return v[:-1], v[-1]


def soft_ok(z, a, lam):
    return np.sign(z) * np.maximum(np.abs(z) - lam, 0.0) / a


def soft_no_a(z, a, lam):
    return np.sign(z) * np.maximum(np.abs(z) - lam, 0.0)


def soft_hard(z, a, lam):
    return np.where(np.abs(z) > lam, z / a, 0.0)


def test_registered():
    keys = ex.available()
    for k in ("linear.least-squares", "linear.ridge", "linear.lasso-coordinate"):
        assert k in keys


def test_references_pass():
    assert ex.check("linear.least-squares", ls_ok, verbose=False)
    assert ex.check("linear.ridge", ridge_ok, verbose=False)
    assert ex.check("linear.lasso-coordinate", soft_ok, verbose=False)


def test_wrong_answers_fail():
    assert not ex.check("linear.least-squares", ls_no_intercept, verbose=False)
    assert not ex.check("linear.least-squares", ls_not_min_norm, verbose=False)
    assert not ex.check("linear.ridge", ridge_double_lam, verbose=False)
    assert not ex.check("linear.ridge", ridge_penalised_intercept, verbose=False)
    assert not ex.check("linear.lasso-coordinate", soft_no_a, verbose=False)
    assert not ex.check("linear.lasso-coordinate", soft_hard, verbose=False)
    r = ex.check("linear.ridge", lambda X, y, lam: 1 / 0, verbose=False)
    assert not r


# --- lasso-coordinate at several (a, lam): one pair with lam = 1/a let functions confusing them pass --------
def soft_fixed_args(z, a, lam):          # ignores a and lam: right at (a, lam) = (2, 0.5) only
    return np.sign(z) * np.maximum(np.abs(z) - 0.5, 0) / 2


def soft_swapped(z, a, lam):             # 1/a as the threshold, lam as the factor: right whenever lam = 1/a
    return np.sign(z) * np.maximum(np.abs(z) - 1 / a, 0) * lam


def soft_threshold_over_a(z, a, lam):    # divides by a before thresholding: the threshold becomes a lam
    return np.sign(z) * np.maximum(np.abs(z) / a - lam, 0.0)


@pytest.mark.parametrize("fn", [soft_fixed_args, soft_swapped, soft_threshold_over_a], ids=lambda f: f.__name__)
def test_lasso_rejects_functions_that_ignore_or_confuse_a_and_lam(fn):
    r = ex.check("linear.lasso-coordinate", fn, verbose=False)
    assert not r
    assert "matches the minimiser for |z| > lam" in {p.name for p in r.properties if not p.passed}


@pytest.mark.parametrize("fn", [
    soft_ok,
    lambda z, a, lam: (np.sign(z) * np.maximum(np.abs(z) - lam, 0.0) / a).tolist(),              # a list
    lambda z, a, lam: (np.sign(z) * np.maximum(np.abs(z) - lam, 0.0) / a).astype(np.float32),    # float32
    lambda z, a, lam: np.where(z > lam, (z - lam) / a, np.where(z < -lam, (z + lam) / a, 0.0)),  # by cases
    lambda z, a, lam: np.array([max(abs(v) - lam, 0.0) * np.sign(v) / a for v in z]),           # a loop
], ids=["reference", "list", "float32", "cases", "loop"])
def test_lasso_accepts_right_answers(fn):
    r = ex.check("linear.lasso-coordinate", fn, verbose=False)
    assert r, r.report()
