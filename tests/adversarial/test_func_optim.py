"""Adversarial cases for linbook.optim's solvers on quadratics with known minimisers, the objective scaled by
1e-150..1e150 and x by 1..1e8 (session 27's function fuzz).

``f(x) = sf / 2 (x / sx - u*)' H (x / sx - u*)``: the minimiser ``sx u*``, whatever ``sf``. Before,
``nonlinear_cg`` at ``sf = 1e-150`` reported convergence ("line search failed: no decrease at rounding level")
at points 0.4..10 times ``|x0 - x*|`` from the minimiser, or raised ZeroDivisionError: its ``g'g`` and the Wolfe
search's cubic interpolation (``d1 * d1``) squared slopes near 1e-158 into underflow (and near 1e155 into
overflow). Both now work in units of the larger slope (a power of two: the same steps at ordinary scales).
``bfgs`` and ``lbfgs`` at ``sf = 1e150`` stopped, not converged, at their first step: the Wolfe zoom ended once
its bracket was narrower than an absolute 1e-12, and a gradient step's ``t`` there is ~1e-149; the width is now
judged relative to the bracket.
"""

from __future__ import annotations

import numpy as np
import pytest

from linbook import optim


def _quadratic(seed, sx, sf, cond):
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((2, 2)))
    H = (Q * np.array([1.0, 1.0 / cond])) @ Q.T
    ustar = rng.standard_normal(2)

    def fg(x):
        u = x / sx - ustar
        return sf * 0.5 * float(u @ H @ u), sf * (H @ u) / sx

    return fg, sx * ustar, sx * (ustar + rng.standard_normal(2))


@pytest.mark.parametrize("method", ["nonlinear_cg", "bfgs", "lbfgs"])
@pytest.mark.parametrize("sf", [1e-150, 1.0, 1e150], ids=lambda s: f"f{s:g}")
@pytest.mark.parametrize("sx, cond", [(1.0, 1e4), (1e8, 1.0), (1e8, 1e4)], ids=["x1-cond1e4", "x1e8", "x1e8-cond1e4"])
@pytest.mark.parametrize("seed", range(4))
def test_first_order_solvers_reach_the_minimiser_at_every_objective_scale(method, sf, sx, cond, seed):
    fg, xstar, x0 = _quadratic(seed, sx, sf, cond)
    res = getattr(optim, method)(lambda x: fg(x)[0], x0, lambda x: fg(x)[1], max_iter=3000)
    assert res.converged, res.message
    # gtol = 1e-6 of the first gradient: |x - x*| <= 1e-6 cond |x0 - x*| for a quadratic
    assert np.max(np.abs(res.x - xstar)) <= 1e-6 * cond * np.max(np.abs(x0 - xstar)), res.message


def _linear_residual(seed, jac_scale, x_scale):
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((6, 3)) * jac_scale
    xstar = rng.standard_normal(3) * x_scale
    y = M @ xstar
    return (lambda x: M @ x - y), (lambda x: M), xstar


@pytest.mark.parametrize("seed", range(3))
def test_levenberg_marquardt_does_not_take_an_underflowed_objective_for_an_exact_fit(seed):
    """Residuals near 1e-169 at x0 = 0: f = ||r||^2 / 2 underflows to 0, which was read as an exact fit:
    converged=True at x0, the minimiser ~1e-94 away. Right answer: the minimiser, or converged=False."""
    residual, jac, xstar = _linear_residual(seed, 1e-75, 1e-94)
    res = optim.levenberg_marquardt(residual, np.zeros(3), jac)
    if res.converged:
        np.testing.assert_allclose(res.x, xstar, rtol=1e-6, atol=1e-6 * np.max(np.abs(xstar)))


def test_levenberg_marquardt_at_a_tiny_jacobian_scale():
    residual, jac, xstar = _linear_residual(0, 1e-75, 1.0)
    res = optim.levenberg_marquardt(residual, np.zeros(3), jac)
    assert res.converged
    np.testing.assert_allclose(res.x, xstar, rtol=1e-6)


JAC_SCALES = [1e-150, 1e-75, 1e-20, 1e-3, 1.0, 1e3, 1e20, 1e75, 1e150]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("js", JAC_SCALES, ids=lambda s: f"J{s:g}")
def test_levenberg_marquardt_solves_a_linear_least_squares_problem_at_every_jacobian_scale(js, seed):
    """Before, the damping lam I was absolute (lam0 = 1e-3, floor 1e-15, cap 1e16): beside J'J near 1e-40 or
    below every step was below rounding, and the run stopped at x0 (converged=False)."""
    residual, jac, xstar = _linear_residual(seed, js, 1.0)
    res = optim.levenberg_marquardt(residual, np.zeros(3), jac)
    assert res.converged, res.message
    np.testing.assert_allclose(res.x, xstar, rtol=1e-6)


def _scaled_rosenbrock(s):
    """``s r(x)`` with ``r`` Rosenbrock's residual (``||r||^2 / 2 = rosen(x)``): the minimiser (1, 1) at any ``s``."""
    def residual(p):
        return s * np.array([np.sqrt(200) * (p[1] - p[0] ** 2), np.sqrt(2) * (1 - p[0])])

    def jac(p):
        return s * np.array([[-2 * np.sqrt(200) * p[0], np.sqrt(200)], [-np.sqrt(2), 0.0]])

    return residual, jac


@pytest.mark.parametrize("js", JAC_SCALES, ids=lambda s: f"J{s:g}")
@pytest.mark.parametrize("x0", [(-1.2, 1.0), (2.0, -1.0), (0.0, 3.0)], ids=["x0a", "x0b", "x0c"])
def test_levenberg_marquardt_reaches_the_rosenbrock_minimum_at_every_residual_scale(js, x0):
    """A nonlinear problem needs the damping: before, beside J'J of 1e40 or more the largest lam (1e16) left
    the Gauss-Newton step undamped, it raised f, and the run stopped at x0 ("no decrease possible") -- already
    at a residual scale of 1e20."""
    residual, jac = _scaled_rosenbrock(js)
    res = optim.levenberg_marquardt(residual, np.array(x0), jac)
    assert res.converged, res.message
    np.testing.assert_allclose(res.x, [1.0, 1.0], rtol=1e-7)
