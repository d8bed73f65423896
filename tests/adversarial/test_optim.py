"""Adversarial cases for linbook.optim: NaN/inf objectives stop at once with a clear message,
non-positive curvature never breaks BFGS, bad inputs get clear errors."""

from __future__ import annotations

import numpy as np
import pytest

from linbook import optim
from tests.adversarial.harness import answer_or_clear_error, assert_clear_error

_EYE = lambda x: np.eye(x.size)      # noqa: E731

METHODS = {
    "gradient_descent": lambda fg, x0, **kw: optim.gradient_descent(fg, x0, grad=True, **kw),
    "gd_fixed_step": lambda fg, x0, **kw: optim.gradient_descent(fg, x0, grad=True, step=0.5, **kw),
    "momentum": lambda fg, x0, **kw: optim.momentum(fg, x0, grad=True, **kw),
    "nonlinear_cg": lambda fg, x0, **kw: optim.nonlinear_cg(fg, x0, grad=True, **kw),
    "newton": lambda fg, x0, **kw: optim.newton(fg, x0, grad=True, hess=_EYE, **kw),
    "newton_no_ls": lambda fg, x0, **kw: optim.newton(fg, x0, grad=True, hess=_EYE, line_search=False, **kw),
    "truncated_newton": lambda fg, x0, **kw: optim.truncated_newton(fg, x0, grad=True, hessp=lambda x, v: v, **kw),
    "bfgs_H": lambda fg, x0, **kw: optim.bfgs(fg, x0, grad=True, **kw),
    "bfgs_B": lambda fg, x0, **kw: optim.bfgs(fg, x0, grad=True, form="B", **kw),
    "lbfgs": lambda fg, x0, **kw: optim.lbfgs(fg, x0, grad=True, **kw),
}


def _objectives():
    x0 = np.array([0.5, -1.0])
    return {
        "nan at start": lambda x: (np.nan, np.ones_like(x)),
        "inf at start": lambda x: (np.inf, np.ones_like(x)),
        "nan gradient at start": lambda x: (1.0, np.array([np.nan, 1.0])),
        "nan away from x0": lambda x: ((1.0, np.array([1.0, -1.0])) if np.array_equal(x, x0)
                                       else (np.nan, np.full(2, np.nan))),
        "inf gradient away from x0": lambda x: ((float(x @ x), 2 * x) if np.array_equal(x, x0)
                                                else (float(x @ x), np.full(2, np.inf))),
        # finite objective that overflows to inf beyond |x| > 3: a line search must back off
        "overflow beyond a radius": lambda x: ((float(np.sum((x - 2.5) ** 2)), 2 * (x - 2.5))
                                               if np.max(np.abs(x)) <= 3 else (np.inf, np.full(2, np.inf))),
        "unbounded below, overflows": lambda x: (float(-np.exp(10 * np.sum(x))),
                                                 np.full(2, -10 * np.exp(10 * np.sum(x)))),
    }, x0


@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize("case", list(_objectives()[0]))
def test_nonfinite_objectives_stop_with_message(method, case):
    funcs, x0 = _objectives()
    r = answer_or_clear_error(lambda: METHODS[method](funcs[case], x0.copy(), max_iter=500), corrupts="fun")
    if r is None:
        return
    if case == "overflow beyond a radius":
        # the minimum (2.5, 2.5) is inside the finite region: methods with a line search get it
        if method in ("gd_fixed_step", "momentum", "newton_no_ls"):
            assert r.converged or "finite" in r.message or "diverged" in r.message
        else:
            assert r.converged, r.message
            np.testing.assert_allclose(r.x, [2.5, 2.5], rtol=1e-4)
        return
    assert not r.converged, f"{case}: converged_ reported at a non-finite objective ({r.message})"
    assert "max_iter" not in r.message, f"ran on to max_iter instead of stopping: {r.message}"
    assert any(w in r.message for w in ("finite", "diverged", "unbounded")), r.message
    assert r.n_fev <= 200, f"{r.n_fev} evaluations before stopping"


@pytest.mark.parametrize("method", list(METHODS))
def test_bad_x0_clear_error(method):
    fg = lambda x: (float(x @ x), 2 * x)     # noqa: E731
    for x0 in ([np.nan, 1.0], [np.inf, 0.0]):
        with pytest.raises(ValueError) as exc:
            METHODS[method](fg, np.array(x0))
        assert_clear_error(exc.value, "x0")


@pytest.mark.parametrize("method", list(METHODS))
def test_wrong_gradient_shape_clear_error(method):
    fg = lambda x: (float(x @ x), np.ones(3))     # noqa: E731
    assert answer_or_clear_error(lambda: METHODS[method](fg, np.zeros(2)), corrupts=("fun", "grad")) is None


@pytest.mark.parametrize("form", ["B", "H"])
def test_bfgs_updates_non_positive_curvature(form):
    rng = np.random.default_rng(0)
    for _ in range(50):
        M = rng.normal(size=(4, 4))
        B = M @ M.T + np.eye(4)
        s, y = rng.normal(size=4), rng.normal(size=4)
        if s @ y > 0:
            y = -y
        upd = optim.bfgs_update_B(B, s, y) if form == "B" else optim.bfgs_update_H(B, s, y)
        assert np.all(np.isfinite(upd))
        assert np.linalg.eigvalsh(upd).min() > 0          # still positive definite
    zero = optim.bfgs_update_B(np.eye(2), np.zeros(2), np.zeros(2))
    np.testing.assert_array_equal(zero, np.eye(2))


def test_bfgs_on_nonconvex_stays_descent():
    """Without a Wolfe search s'y can be negative; with it, BFGS on a non-convex f still descends."""
    f = lambda x: (float(np.sum(np.cos(x)) + 0.01 * x @ x), -np.sin(x) + 0.02 * x)   # noqa: E731
    for form in ("H", "B"):
        r = optim.bfgs(f, np.array([0.1, 3.0, -2.0]), grad=True, form=form, gtol=1e-10)
        assert r.converged
        fs = [f(p)[0] for p in r.path]
        assert np.all(np.diff(fs) <= 1e-12)


def test_levenberg_marquardt_and_cg_nonfinite():
    r = optim.levenberg_marquardt(lambda p: np.array([np.nan, 1.0]), [0.0], lambda p: np.ones((2, 1)))
    assert not r.converged and "not finite" in r.message
    with pytest.raises(ValueError, match="finite"):
        optim.conjugate_gradient(np.array([[np.nan, 0], [0, 1.0]]), np.ones(2))
    with pytest.raises(ValueError, match="finite"):
        optim.conjugate_gradient(np.eye(2), np.array([np.inf, 1.0]))


@pytest.mark.parametrize("bad", ["nan X", "labels", "shape", "lam"])
def test_irls_bad_input(bad):
    X = np.column_stack([np.ones(20), np.linspace(-1, 1, 20)])
    y = (np.arange(20) % 3 == 0).astype(float)
    kw, corrupts = {}, "y"
    if bad == "nan X":
        corrupts = "X"
        X = X.copy()
        X[0, 1] = np.nan
    elif bad == "labels":
        y = y + 1
    elif bad == "shape":
        y = y[:-1]
    else:
        kw, corrupts = {"lam": -1.0}, "lam"
    assert answer_or_clear_error(lambda: optim.irls(X, y, **kw), corrupts=corrupts) is None


@pytest.mark.parametrize("a", [1e-140, 1e-160])
def test_lbfgs_on_a_tiny_objective_reaches_the_minimiser(a):
    """L-BFGS's first scaling ``s'y / y'y`` with gradient differences near 1e-160: ``y'y`` underflows to 0.

    ``f(x) = a/2 (x - x*)' A (x - x*)`` has the minimiser ``x*`` for every ``a > 0`` (``gscale=a`` makes the
    gradient test relative). Before, ``1 / (rho y'y)`` raised ZeroDivisionError from inside the two-loop
    recursion (seen through LogisticRegression(solver="lbfgs", lam=1) with sample weights of 1e-100). Below
    ~1e-165 ``g'd`` itself underflows and the line search reports that f cannot resolve a decrease."""
    A = np.diag([1.0, 3.0, 10.0])
    x_star = np.array([1.0, -2.0, 0.5])
    res = optim.lbfgs(lambda x: (0.5 * a * (x - x_star) @ A @ (x - x_star), a * A @ (x - x_star)),
                      np.zeros(3), grad=True, gtol=1e-10, gscale=a)
    assert res.converged
    np.testing.assert_allclose(res.x, x_star, rtol=0, atol=1e-9)
