"""Session 29: linbook.optim reports ``converged`` only at an optimum.

* ``levenberg_marquardt`` damped with ``lam I`` (relative to the largest ``|J_ij|``): with one huge and one
  tiny Jacobian column the tiny column's coordinate never moved, and the run stopped with
  ``converged=True`` at the wrong point (x * scales = [-0.054, -3.5e-25] against scipy's [0.069, -0.379],
  columns 1e8 and 1e-8). Now Marquardt's scaling ``D^2 = diag(J'J)`` (running max, as MINPACK).
* A zero gradient that is not a minimum: ``levenberg_marquardt`` on ``x^3 - 1`` from 0 (``J = 0``) and every
  minimiser started exactly at a saddle or a maximum said ``converged=True`` ("x0 is stationary").
  The rule (``linbook.optim.result._lower_by_curvature``): probe ``f`` along the directions of least or
  unknown curvature; LM moves on from a lower point, the others report ``converged=False``.

Oracles: scipy.optimize.least_squares (method="lm", tight tolerances) and known minimisers.
"""

import warnings

import numpy as np
import pytest
from scipy import optimize

from linbook import optim

# -- Marquardt's column scaling ----------------------------------------------------------------------------


def _two_scale_problem(s1, s2, rs, seed):
    """A nonlinear least-squares problem in ``z = x * [s1, s2]`` (so the oracle is one well-scaled problem),
    residuals times ``rs``."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(6, 2))
    b = rng.normal(size=6)
    scales = np.array([s1, s2])

    def res_z(z):
        return A @ z - b + 0.3 * np.array([0, 0, 0, 0, 1, 0]) * z[0] ** 2 + 0.2 * np.array([0, 0, 0, 0, 0, 1]) * np.sin(z[1])

    def jac_z(z):
        J = A.copy()
        J[4, 0] += 0.6 * z[0]
        J[5, 1] += 0.2 * np.cos(z[1])
        return J

    ref = optimize.least_squares(res_z, np.zeros(2), jac_z, method="lm", xtol=1e-15, ftol=1e-15, gtol=1e-15)

    def residual(x):
        return rs * res_z(x * scales)

    def jac(x):
        return rs * jac_z(x * scales) * scales
    return residual, jac, scales, ref


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("s1,s2", [(1e8, 1e-8), (1e50, 1e-50), (1e150, 1e-150), (1e-150, 1e150), (1.0, 1e-12)])
@pytest.mark.parametrize("rs", [1.0, 1e-150, 1e150])
def test_levenberg_marquardt_with_one_huge_and_one_tiny_column_reaches_scipys_minimiser(s1, s2, rs, seed):
    residual, jac, scales, ref = _two_scale_problem(s1, s2, rs, seed)
    res = optim.levenberg_marquardt(residual, np.zeros(2), jac)
    assert res.converged, res.message
    # gtol = 1e-10 of the scaled gradient leaves x to ~1e-8 of its size where the minimum is shallow
    np.testing.assert_allclose(res.x * scales, ref.x, rtol=0, atol=1e-6 * np.max(np.abs(ref.x)))
    np.testing.assert_allclose(res.fun / rs ** 2, ref.cost, rtol=1e-12)


@pytest.mark.parametrize("s", [1e-100, 1.0, 1e100])
def test_levenberg_marquardt_on_a_badly_scaled_rosenbrock(s):
    # rosenbrock in z = x * [s, 1/s]: the minimiser is x = [1/s, s]
    def residual(x):
        z = x * [s, 1 / s]
        return np.array([10 * (z[1] - z[0] ** 2), 1 - z[0]])

    def jac(x):
        z = x * [s, 1 / s]
        return np.array([[-20 * z[0] * s, 10 / s], [-s, 0.0]])
    res = optim.levenberg_marquardt(residual, np.array([-1.2 / s, 1.0 * s]), jac)
    assert res.converged, res.message
    np.testing.assert_allclose(res.x * [s, 1 / s], [1.0, 1.0], rtol=1e-8)


# -- a zero gradient that is not a minimum ------------------------------------------------------------------

@pytest.mark.parametrize("rs", [1.0, 1e-200, 1e100])
def test_levenberg_marquardt_at_a_zero_jacobian_that_is_not_a_minimum_moves_on_to_the_root(rs):
    res = optim.levenberg_marquardt(lambda x: rs * (x ** 3 - 1), np.zeros(1), lambda x: np.diag(rs * 3 * x ** 2))
    assert res.converged, res.message
    np.testing.assert_allclose(res.x, [1.0], rtol=1e-8)


def test_levenberg_marquardt_at_a_maximum_with_a_full_rank_jacobian():
    # f = (x^2 + (1 - x^2)^2) / 2 has a maximum at 0 (J'r = 0 there, J = [1, 0]') and minima at +-1/sqrt(2)
    res = optim.levenberg_marquardt(lambda x: np.array([x[0], 1 - x[0] ** 2]), np.zeros(1),
                                    lambda x: np.array([[1.0], [-2 * x[0]]]))
    assert res.converged, res.message
    np.testing.assert_allclose(np.abs(res.x), [2 ** -0.5], rtol=1e-8)


def test_levenberg_marquardt_on_a_flat_plateau_is_a_minimum():
    res = optim.levenberg_marquardt(lambda x: np.array([1.0, 2.0]), np.zeros(1), lambda x: np.zeros((2, 1)))
    assert res.converged and res.fun == 2.5


SADDLES = {
    "x^2 - y^2": (lambda x: x[0] ** 2 - x[1] ** 2, lambda x: np.array([2 * x[0], -2 * x[1]]),
                  lambda x: np.diag([2.0, -2.0]), np.zeros(2)),
    "x y": (lambda x: x[0] * x[1], lambda x: x[::-1].copy(), lambda x: np.array([[0.0, 1.0], [1.0, 0.0]]),
            np.zeros(2)),
    "-|x|^2": (lambda x: -(x @ x), lambda x: -2 * x, lambda x: -2 * np.eye(2), np.zeros(2)),
    "x^3 + y^2": (lambda x: x[0] ** 3 + x[1] ** 2, lambda x: np.array([3 * x[0] ** 2, 2 * x[1]]),
                  lambda x: np.diag([6 * x[0], 2.0]), np.zeros(2)),
    "1e-200 (shifted saddle)": (lambda x: 1e-200 * ((x[0] - 5) ** 2 - (x[1] - 5) ** 2),
                                lambda x: 1e-200 * np.array([2 * (x[0] - 5), -2 * (x[1] - 5)]),
                                lambda x: 1e-200 * np.diag([2.0, -2.0]), np.array([5.0, 5.0])),
}


def _minimisers(f, g, H):
    return {
        "gradient_descent": lambda x0: optim.gradient_descent(f, x0, g),
        "momentum": lambda x0: optim.momentum(f, x0, g),
        "nonlinear_cg": lambda x0: optim.nonlinear_cg(f, x0, g),
        "newton": lambda x0: optim.newton(f, x0, g, H),
        "truncated_newton": lambda x0: optim.truncated_newton(f, x0, g, lambda x, v: H(x) @ v),
        "newton_cg": lambda x0: optim.newton_cg(lambda x: (f(x), g(x), (lambda v: H(x) @ v, None)), x0),
        "bfgs": lambda x0: optim.bfgs(f, x0, g),
        "lbfgs": lambda x0: optim.lbfgs(f, x0, g),
    }


METHODS = list(_minimisers(None, None, None))


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("problem", list(SADDLES))
def test_no_minimiser_calls_a_saddle_or_maximum_start_converged(method, problem):
    f, g, H, x0 = SADDLES[problem]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = _minimisers(f, g, H)[method](x0.copy())
    assert not res.converged, res.message
    assert "not a minimum" in res.message


@pytest.mark.parametrize("method", METHODS)
def test_a_flat_plateau_start_is_still_converged(method):
    res = _minimisers(lambda x: 3.0, lambda x: np.zeros(2), lambda x: np.zeros((2, 2)))[method](np.array([1.0, 2.0]))
    assert res.converged and res.fun == 3.0 and np.array_equal(res.x, [1.0, 2.0])


@pytest.mark.parametrize("method", METHODS)
def test_a_minimum_start_is_still_converged(method):
    res = _minimisers(lambda x: (x - 1) @ (x - 1), lambda x: 2 * (x - 1), lambda x: 2 * np.eye(2))[method](np.ones(2))
    assert res.converged and np.array_equal(res.x, [1.0, 1.0])


def test_a_local_minimum_start_next_to_a_deeper_basin_is_still_converged():
    # f = (x - 1)^2 ((x + 1)^2 - 1/2): x = 1 is a local minimum (f = 0, f'' = 7), x = -1 has f = -2. The
    # probe looks at x0's own curvature and must not call the local minimum "not a minimum"
    def f(x):
        return float((x[0] - 1) ** 2 * ((x[0] + 1) ** 2 - 0.5))

    def g(x):
        return np.array([2 * (x[0] - 1) * ((x[0] + 1) ** 2 - 0.5) + 2 * (x[0] - 1) ** 2 * (x[0] + 1)])

    def H(x):
        a = x[0]
        return np.array([[2 * ((a + 1) ** 2 - 0.5) + 8 * (a - 1) * (a + 1) + 2 * (a - 1) ** 2]])
    assert f(np.array([-1.0])) == -2.0 and g(np.ones(1))[0] == 0.0
    for method, run in _minimisers(f, g, H).items():
        res = run(np.ones(1))
        assert res.converged and res.x[0] == 1.0, (method, res.message)


@pytest.mark.parametrize("method", ["bfgs", "lbfgs", "nonlinear_cg"])
@pytest.mark.parametrize("s", [1e-200, 1e-250, 1e-300])
def test_wolfe_methods_on_an_objective_of_tiny_scale_reach_the_minimiser(method, s):
    # g'd of a gradient and direction of 1e-200 underflowed to 0 in the Wolfe search: "line search failed" at x0
    A = np.array([[3.0, 1.0], [1.0, 2.0]])
    res = getattr(optim, method)(lambda x: s * ((x - 1) @ A @ (x - 1)), np.zeros(2), lambda x: s * 2 * A @ (x - 1))
    assert res.converged, res.message
    np.testing.assert_allclose(res.x, [1.0, 1.0], rtol=1e-5)
