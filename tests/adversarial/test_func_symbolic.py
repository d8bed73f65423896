"""Adversarial cases for ``numeric_grad`` / ``numeric_hessian`` against analytic derivatives, x from 1e-150 to 1e150.

Before (session 27's function fuzz), both stepped every coordinate by a fixed 1e-6: at ``|x|`` near 1e150
``x + h == x`` and the gradient came out 0; near 1e8 the step was ~100 ulps of ``x`` and the gradient 1-10 % off;
for ``log`` at ``x ~ 1e-8`` the step left the domain and gave NaN. Now they take the steps of ``check_gradient``
(relative to ``|x_j|``, ``max |x|`` and 1, with Richardson estimates): the analytic values to ~1e-8.
"""

from __future__ import annotations

import numpy as np
import pytest

from linbook.symbolic import numeric_grad, numeric_hessian

SCALES = (1e-150, 1e-8, 1e-3, 1.0, 1e3, 1e8, 1e150)


def _functions(s):
    """(f, gradient, Hessian) with the minimiser's scale ``s``: a quadratic in x / s, sum log x, sum sin(x / s)."""
    return {
        "quadratic": (lambda v: float(np.sum((v / s) ** 2)), lambda v: 2 * v / s ** 2,
                      lambda v: 2 * np.eye(v.size) / s ** 2),
        "log": (lambda v: float(np.sum(np.log(v))), lambda v: 1 / v, lambda v: np.diag(-1 / v ** 2)),
        "sin": (lambda v: float(np.sum(np.sin(v / s))), lambda v: np.cos(v / s) / s,
                lambda v: np.diag(-np.sin(v / s) / s ** 2)),
    }


@pytest.mark.parametrize("name", ["quadratic", "log", "sin"])
@pytest.mark.parametrize("s", SCALES, ids=lambda s: f"x{s:g}")
def test_numeric_derivatives_at_every_scale(s, name):
    f, grad, hess = _functions(s)[name]
    x = s * np.array([1.3, 1.7, 2.9])
    np.testing.assert_allclose(numeric_grad(f, x), grad(x), rtol=1e-7)
    np.testing.assert_allclose(numeric_hessian(grad, x), hess(x), rtol=1e-7, atol=1e-7 * np.max(np.abs(hess(x))))


def test_numeric_grad_keeps_the_shape_of_x_and_refuses_a_non_finite_point():
    assert numeric_grad(lambda v: v ** 3, 2.0) == pytest.approx(12.0, rel=1e-9)
    M = np.arange(1.0, 7.0).reshape(2, 3)
    np.testing.assert_allclose(numeric_grad(lambda v: float(np.sum(v ** 2)), M), 2 * M, rtol=1e-9)
    with pytest.raises(ValueError, match="f.x. is nan"):
        numeric_grad(lambda v: float(np.sum(np.log(v))), np.array([-1.0, 1.0]))


@pytest.mark.parametrize("name", ["quadratic", "log", "sin"])
@pytest.mark.parametrize("s", SCALES, ids=lambda s: f"x{s:g}")
def test_check_hessian_accepts_a_right_hessian_at_every_scale(s, name):
    """The off-diagonal entries of a separable function's Hessian difference to exactly 0 (error inf); they held
    the step walk to its largest steps, where 1 / x at x ~ 1e-150 (stepped past 0) or sin(x / 1e-150) is noise
    whose differences gave a small, confident, wrong second derivative: a right Hessian was refused."""
    from linbook.symbolic import check_gradient, check_hessian
    f, grad, hess = _functions(s)[name]
    x = s * np.array([1.3, 1.7, 2.9])
    check_gradient(f, grad, x)
    check_hessian(grad, hess, x)
