"""Session 30: ``converged`` only at a minimum in linbook.optim, and its building blocks.

* A saddle or maximum reached MID-RUN (not at x0) was called converged by every minimiser: a start on a
  symmetry axis of ``f`` (``x^2 - y^2`` from ``(1, 0)``) keeps the run, and its gradient, on the axis, and the
  gradient test passed at the saddle. Now a run whose final gradient lies in the span of its steps (confined)
  is probed across that span, along the direction of least curvature (``linbook.optim.result._verdict``).
* ``levenberg_marquardt`` started at its minimiser (perturbed by 1e-9) stopped with ``converged=False``: the
  gradient test was relative to a gradient at ``x0`` that was already at rounding level. Now the test is also
  met relative to ``||r||`` (MINPACK's / scipy's cosine test).

Oracles: known minimisers and saddles, scipy.optimize (least_squares, line_search, minimize), numpy.
"""

import warnings

import numpy as np
import pytest
from scipy import optimize

from linbook import optim
from linbook.optim import result as optim_result
from tests.adversarial.test_s29_optim import _minimisers as _s29_minimisers

# -- saddles and maxima reached mid-run --------------------------------------------------------------------


def _rotated(f, g, H, angle):
    """``f(Q x)`` for the rotation ``Q`` by ``angle``: a symmetry axis not along a coordinate."""
    c, s = np.cos(angle), np.sin(angle)
    Q = np.array([[c, -s], [s, c]])
    return (lambda x: f(Q @ x)), (lambda x: Q.T @ g(Q @ x)), (lambda x: Q.T @ H(Q @ x) @ Q)


def _six_dim():
    """A start whose run stays in the first three coordinates and ends at a saddle: across, curvatures
    10, 2 and -0.2 (a minimum lies at x5 = +-sqrt(0.05))."""
    c = np.array([0.0, 0.0, 0.0, 5.0, 1.0, -0.1])

    def f(x):
        return float(np.sum((x[:3] - 1) ** 2) + c[3:] @ x[3:] ** 2 + x[5] ** 4)

    def g(x):
        return np.r_[2 * (x[:3] - 1), 2 * c[3:] * x[3:] + np.r_[0, 0, 4 * x[5] ** 3]]

    def H(x):
        return np.diag(np.r_[2, 2, 2, 2 * c[3:] + np.r_[0, 0, 12 * x[5] ** 2]])
    return f, g, H


MIDRUN_SADDLES = {
    # name: (f, g, H, x0, the stationary non-minimum the run reaches)
    "x^2 - y^2 from (1, 0)": (lambda x: x[0] ** 2 - x[1] ** 2, lambda x: np.array([2 * x[0], -2 * x[1]]),
                              lambda x: np.diag([2.0, -2.0]), [1.0, 0.0]),
    "x^4/4 - x^2/2 + y^2 from (0, 1)": (lambda x: x[0] ** 4 / 4 - x[0] ** 2 / 2 + x[1] ** 2,
                                        lambda x: np.array([x[0] ** 3 - x[0], 2 * x[1]]),
                                        lambda x: np.diag([3 * x[0] ** 2 - 1, 2.0]), [0.0, 1.0]),
    # Hessian positive definite all along the path (Newton takes its full steps), indefinite at the end
    "y^2 + x^2 (y^2 - 1/4) + x^4 from (0, 1)": (
        lambda x: x[1] ** 2 + x[0] ** 2 * (x[1] ** 2 - 0.25) + x[0] ** 4,
        lambda x: np.array([2 * x[0] * (x[1] ** 2 - 0.25) + 4 * x[0] ** 3, 2 * x[1] + 2 * x[0] ** 2 * x[1]]),
        lambda x: np.array([[2 * (x[1] ** 2 - 0.25) + 12 * x[0] ** 2, 4 * x[0] * x[1]],
                            [4 * x[0] * x[1], 2 + 2 * x[0] ** 2]]), [0.0, 1.0]),
    "x^3 + y^2 from (0, 1) (a flat inflection across)": (lambda x: x[0] ** 3 + x[1] ** 2,
                                                         lambda x: np.array([3 * x[0] ** 2, 2 * x[1]]),
                                                         lambda x: np.diag([6 * x[0], 2.0]), [0.0, 1.0]),
    "x y from (1, 1)": (lambda x: x[0] * x[1], lambda x: x[::-1].copy(), lambda x: np.array([[0.0, 1.0], [1.0, 0.0]]),
                        [1.0, 1.0]),
    "x^2 - y^2 rotated by pi/4, from its axis": (*_rotated(lambda z: z[0] ** 2 - z[1] ** 2,
                                                           lambda z: np.array([2 * z[0], -2 * z[1]]),
                                                           lambda z: np.diag([2.0, -2.0]), np.pi / 4),
                                                 [2.0 ** -0.5, -(2.0 ** -0.5)]),
    "six coordinates, one of negative curvature across": (*_six_dim(), [0.0] * 6),
}


def _minimisers(f, g, H):
    """Every minimiser of test_s29_optim, and BFGS in its ``B`` form."""
    return {**_s29_minimisers(f, g, H), "bfgs-B": lambda x0: optim.bfgs(f, x0, g, form="B")}


METHODS = list(_minimisers(None, None, None))


def _run(problem, method, x0=None):
    f, g, H, start = problem[:4]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _minimisers(f, g, H)[method](np.array(start if x0 is None else x0, dtype=float))


def _is_local_minimum(f, x, h=1e-3, n=200):
    """No lower ``f`` on a ring of radius ``h`` around ``x`` (random directions, seeded)."""
    rng = np.random.default_rng(1)
    V = rng.standard_normal((n, x.size))
    V /= np.linalg.norm(V, axis=1)[:, None]
    return min(f(x + h * v) for v in V) >= f(x) - 1e-14 * max(abs(f(x)), 1.0)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("problem", list(MIDRUN_SADDLES))
def test_a_saddle_or_maximum_reached_mid_run_is_not_converged(method, problem):
    f = MIDRUN_SADDLES[problem][0]
    res = _run(MIDRUN_SADDLES[problem], method)
    # the oracle: converged only where no direction lowers f (every one of these runs ends at the
    # saddle, or, for some methods, stops short of it without converging)
    assert not res.converged or _is_local_minimum(f, res.x), (res.x, res.message)


# -- true minima reached on a symmetry axis stay converged, and ordinary runs cost no probe ------------------

def _quadratic_on_axis(cond, d=4):
    """``sum_i lam_i (x_i - 1)^2 / 2`` with ``lam`` from 1 to ``cond``; started at ``(0, 1, ..., 1)`` the run
    stays on the first coordinate (confined), whose minimiser is a true minimum."""
    lam = np.logspace(0, np.log10(cond), d)[::-1]
    return ((lambda x: 0.5 * float(lam @ (x - 1) ** 2)), (lambda x: lam * (x - 1)), (lambda x: np.diag(lam)),
            np.r_[0.0, np.ones(d - 1)])


CONFINED_MINIMA = {
    **{f"quadratic, condition {c:g}, on an axis": _quadratic_on_axis(c) for c in (1.0, 1e3, 1e6, 1e12)},
    # a plateau across: f does not depend on y
    "(x - 1)^2 with a flat y": (lambda x: (x[0] - 1) ** 2, lambda x: np.array([2 * (x[0] - 1), 0.0]),
                                lambda x: np.diag([2.0, 0.0]), np.array([0.0, 3.0])),
    # Rosenbrock on its valley floor's symmetry: 100 (y - x^2)^2 + (1 - x)^2 + (z - 1)^2 from z = 1
    "rosenbrock with a decoupled coordinate": (
        lambda x: 100 * (x[1] - x[0] ** 2) ** 2 + (1 - x[0]) ** 2 + 3 * (x[2] - 1) ** 2,
        lambda x: np.array([-400 * x[0] * (x[1] - x[0] ** 2) - 2 * (1 - x[0]), 200 * (x[1] - x[0] ** 2),
                            6 * (x[2] - 1)]),
        lambda x: np.array([[1200 * x[0] ** 2 - 400 * x[1] + 2, -400 * x[0], 0], [-400 * x[0], 200, 0], [0, 0, 6.0]]),
        np.array([-1.2, 1.0, 1.0])),
}


def _logistic_with_a_duplicated_column():
    """A logistic loss whose design has two equal columns: the run never leaves the span of X' (a confined
    run), and f is flat across it: a minimum."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((60, 2))
    X = np.c_[X, X[:, 0]]
    y = (X[:, 0] + rng.standard_normal(60) > 0).astype(float)
    s = 2 * y - 1

    def f(w):
        return float(np.sum(np.logaddexp(0, -s * (X @ w))) + 0.5 * w[1] ** 2)

    def g(w):
        p = 1 / (1 + np.exp(s * (X @ w)))
        return -X.T @ (s * p) + np.r_[0, w[1], 0]

    def H(w):
        p = 1 / (1 + np.exp(-(X @ w)))
        return (X.T * (p * (1 - p))) @ X + np.diag([0, 1.0, 0])
    return f, g, H, np.zeros(3)


CONFINED_MINIMA["logistic loss with a duplicated column"] = _logistic_with_a_duplicated_column()


@pytest.mark.parametrize("method", ["gradient_descent", "nonlinear_cg", "bfgs", "lbfgs", "newton", "newton_cg"])
@pytest.mark.parametrize("problem", list(CONFINED_MINIMA))
def test_a_true_minimum_reached_on_a_symmetry_axis_stays_converged(method, problem):
    f, g, H, x0 = CONFINED_MINIMA[problem]
    kw = {"max_iter": 100000} if method == "gradient_descent" else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = {"gradient_descent": lambda: optim.gradient_descent(f, x0, g, **kw)}.get(
            method, lambda: _minimisers(f, g, H)[method](x0.copy()))()
    ref = optimize.minimize(f, x0, jac=g, method="BFGS", options={"gtol": 1e-12})
    if res.message.startswith("max_iter"):
        pytest.skip("gradient descent is slow at this condition (not the point here)")
    assert res.converged, res.message
    # gradient descent stops (converged: its relative gradient test) 8.5e-7 from x* along the stiff axis of
    # condition 1e12, f = 0.36 from a start of 5e11: what its gtol means (linbook.optim.result)
    if not (method == "gradient_descent" and "1e+12" in problem):
        assert res.fun <= ref.fun + 1e-6 * max(1.0, abs(ref.fun))


def _counting(f):
    calls = [0]

    def counted(x):
        calls[0] += 1
        return f(x)
    return counted, calls


@pytest.mark.parametrize("method", ["gradient_descent", "nonlinear_cg", "bfgs", "lbfgs", "newton", "newton_cg"])
@pytest.mark.parametrize("problem", ["generic quadratic", "rosenbrock", "confined quadratic"])
def test_the_probe_costs_no_evaluation_on_an_unconfined_run_and_a_few_on_a_confined_one(method, problem,
                                                                                       monkeypatch):
    if problem == "generic quadratic":
        rng = np.random.default_rng(0)
        Q, _ = np.linalg.qr(rng.standard_normal((6, 6)))
        A = (Q * np.logspace(0, 3, 6)) @ Q.T
        b = rng.standard_normal(6)
        f, g, H, x0 = (lambda x: 0.5 * x @ A @ x - b @ x), (lambda x: A @ x - b), (lambda x: A), np.zeros(6)
    elif problem == "rosenbrock":
        f, g, H, x0 = CONFINED_MINIMA["rosenbrock with a decoupled coordinate"]
        x0 = np.array([-1.2, 1.0, 0.0])           # z moves too: not confined
    else:
        f, g, H, x0 = _quadratic_on_axis(1e3)
    counts = []
    for probe in (True, False):
        if not probe:
            monkeypatch.setattr(optim_result, "_explored_basis", lambda *args: None)
        fc, calls = _counting(f)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = _minimisers(fc, g, H)[method](x0.copy())
        counts.append(calls[0])
        assert res.converged or res.message.startswith("max_iter"), res.message
    extra = counts[0] - counts[1]
    # confined: Lanczos steps and one six-point probe (Newton: none, its Hessian at x is positive definite)
    assert extra == 0 if problem != "confined quadratic" else 0 <= extra <= 6 + optim_result._LANCZOS_STEPS
    assert extra > 0 or problem != "confined quadratic" or method == "newton"


# -- Levenberg-Marquardt started at its minimiser ---------------------------------------------------------

def _least_squares_problem(seed, rs):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(8, 3))
    b = rng.normal(size=8)

    def res_(x):
        return A @ x - b + 0.1 * np.r_[x[0] ** 2, np.sin(x[1]), np.zeros(6)]

    def jac_(x):
        J = A.copy()
        J[0, 0] += 0.2 * x[0]
        J[1, 1] += 0.1 * np.cos(x[1])
        return J
    x = optimize.least_squares(res_, np.zeros(3), jac_, method="lm", xtol=1e-15, ftol=1e-15, gtol=1e-15).x
    for _ in range(5):             # Gauss-Newton by lstsq to machine precision (scipy stops ~1e-8 short of it)
        x = x - np.linalg.lstsq(jac_(x), res_(x), rcond=None)[0]
    return (lambda x: rs * res_(x)), (lambda x: rs * jac_(x)), x, 0.5 * float(res_(x) @ res_(x))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("rs", [1.0, 1e-150, 1e150])
@pytest.mark.parametrize("perturbation", [1e-7, 1e-8, 1e-9, 1e-10, 1e-12, 0.0])
def test_levenberg_marquardt_started_at_its_minimiser_is_converged(seed, rs, perturbation):
    residual, jac, x_star, cost = _least_squares_problem(seed, rs)
    x0 = x_star + perturbation * np.array([1.0, -0.7, 0.4])
    assert optimize.least_squares(residual, x0, jac, method="lm").success     # scipy calls it converged too
    res = optim.levenberg_marquardt(residual, x0, jac)
    assert res.converged, res.message
    # f = ||r||^2 / 2 tells x from x* only to ~1e-8 (its change is below f's rounding nearer)
    np.testing.assert_allclose(res.x, x_star, rtol=0, atol=1e-7)
    np.testing.assert_allclose(res.fun / rs ** 2, cost, rtol=1e-14)


@pytest.mark.parametrize("rs", [1.0, 1e-150, 1e150])
def test_levenberg_marquardt_from_afar_still_reaches_scipys_minimiser(rs):
    # the cosine test must not stop a run far from the minimiser: a zero-residual problem (r -> 0, cosine O(1))
    def residual(x):
        return rs * np.array([10 * (x[1] - x[0] ** 2), 1 - x[0]])

    def jac(x):
        return rs * np.array([[-20 * x[0], 10.0], [-1.0, 0.0]])
    res = optim.levenberg_marquardt(residual, np.array([-1.2, 1.0]), jac)
    assert res.converged, res.message
    np.testing.assert_allclose(res.x, [1.0, 1.0], rtol=1e-8)


# -- building blocks: the BFGS updates and the two-loop recursion at extreme scales --------------------------

S0, Y0 = np.array([1.0, 2.0, -0.5]), np.array([2.0, 1.0, 0.5])      # s'y = 3.75 > 0


@pytest.mark.parametrize("a,c", [(1.0, 1.0), (1e155, 1e155), (1e-160, 1e-160), (1e-200, 1e200), (1e200, 1e-200),
                                 (1e-100, 1e100), (1e100, 1e-100)])
@pytest.mark.parametrize("form", ["B", "H"])
def test_bfgs_updates_at_extreme_scales_keep_the_secant_condition_or_say_they_overflow(a, c, form):
    s, y = a * S0, c * Y0
    # B's new term y y' / y's has entries ~ c / a; H's s s' / y's ~ a / c: beyond float64 past 1e308
    beyond = (c / a if form == "B" else a / c) > 1e300
    update = optim.bfgs_update_B if form == "B" else optim.bfgs_update_H
    if beyond:
        with pytest.raises(ValueError, match="beyond float64"):
            update(np.eye(3), s, y)
        return
    M = update(np.eye(3), s, y)
    assert np.all(np.isfinite(M))
    np.testing.assert_allclose(M, M.T, rtol=1e-14, atol=0)
    # the secant condition B s = y (H y = s), to the rounding of M's entries: in units of S0 and Y0
    u, v, k = (S0, Y0, c / a) if form == "B" else (Y0, S0, a / c)
    M, k = M / max(k, 1.0), k / max(k, 1.0)     # (entries near 1e200 would overflow the norms)
    assert np.linalg.norm(M @ u - k * v) <= 1e-12 * (np.linalg.norm(M) * np.linalg.norm(u) + k * np.linalg.norm(v))


def _pairs(seed=0, m=3, d=4):
    rng = np.random.default_rng(seed)
    S = [rng.standard_normal(d) for _ in range(m)]
    return S, [s + 0.3 * rng.standard_normal(d) for s in S], rng.standard_normal(d)


@pytest.mark.parametrize("a,c", [(1e155, 1e155), (1e-155, 1e-155), (1e200, 1.0), (1.0, 1e-200), (1e-170, 1e170)])
def test_lbfgs_two_loop_is_exact_under_scaling_of_its_pairs(a, c):
    # H g is a / c times H g of the unscaled pairs (gamma = s'y / y'y and rho s s' scale so): oracle, the unscaled
    # two-loop, itself checked against bfgs_update_H below. s'y of pairs near 1e155 overflowed: "beyond float64"
    S, Y, g = _pairs()
    ref = optim.lbfgs_two_loop(g, S, Y)
    got = optim.lbfgs_two_loop(g, [a * s for s in S], [c * y for y in Y])
    np.testing.assert_allclose(got, (a / c) * ref, rtol=1e-14)


def test_lbfgs_two_loop_with_an_overflowing_answer_says_so():
    S, Y, g = _pairs()
    with pytest.raises(ValueError, match="beyond float64"):
        optim.lbfgs_two_loop(g, [1e200 * s for s in S], [1e-200 * y for y in Y])


def test_lbfgs_two_loop_small_memories_against_the_bfgs_update():
    S, Y, g = _pairs()
    np.testing.assert_array_equal(optim.lbfgs_two_loop(g, [], []), g)
    np.testing.assert_allclose(optim.lbfgs_two_loop(g, [], [], gamma=2.5), 2.5 * g, rtol=1e-15)
    gamma = S[-1] @ Y[-1] / (Y[-1] @ Y[-1])
    np.testing.assert_allclose(optim.lbfgs_two_loop(g, S[-1:], Y[-1:]),
                               optim.bfgs_update_H(gamma * np.eye(4), S[-1], Y[-1]) @ g, rtol=1e-12)
    H = gamma * np.eye(4)
    for s, y in zip(S, Y):
        H = optim.bfgs_update_H(H, s, y)
    np.testing.assert_allclose(optim.lbfgs_two_loop(g, S, Y), H @ g, rtol=1e-12)
    # a pair with s'y = 0 (or below rounding) is skipped, as by the update
    flat = [np.array([1.0, 0, 0, 0]), np.array([0.0, 1, 0, 0])]
    np.testing.assert_allclose(optim.lbfgs_two_loop(g, [flat[0], *S], [flat[1], *Y]),
                               optim.lbfgs_two_loop(g, S, Y), rtol=1e-15)


# -- building blocks: linear conjugate gradients ----------------------------------------------------------

def test_conjugate_gradient_on_a_singular_a_without_a_solution_says_singular():
    with pytest.raises(ValueError, match="singular"):
        optim.conjugate_gradient(np.diag([1.0, 2.0, 0.0]), np.ones(3))


def test_conjugate_gradient_on_a_singular_consistent_system_gives_the_least_norm_solution():
    rng = np.random.default_rng(4)
    Z = rng.standard_normal((5, 3))
    A = Z @ Z.T                                    # rank 3 of 5, positive semi-definite
    b = A @ rng.standard_normal(5)
    res = optim.conjugate_gradient(A, b)
    assert res.converged
    np.testing.assert_allclose(res.x, np.linalg.lstsq(A, b, rcond=None)[0], rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("cond", [1.0, 1e6, 1e10, 1e13])
def test_conjugate_gradient_on_ill_conditioned_spd_matrices_is_not_refused(cond):
    rng = np.random.default_rng(5)
    Q, _ = np.linalg.qr(rng.standard_normal((6, 6)))
    A = (Q * np.logspace(0, np.log10(cond), 6)) @ Q.T
    A = (A + A.T) / 2
    b = rng.standard_normal(6)
    res = optim.conjugate_gradient(A, b, tol=1e-12, max_iter=2000)
    # CG's true residual stalls near eps * cond (its recurrence drifts from it), not at tol
    np.testing.assert_allclose(A @ res.x, b, rtol=0, atol=max(1e-10, 1e-14 * cond) * np.linalg.norm(b))


# -- building blocks: the line searches against their own conditions and scipy ------------------------------

def _quadratic(cond, seed=0, d=8):
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    A = (Q * np.logspace(0, np.log10(cond), d)) @ Q.T
    A = (A + A.T) / 2
    b = rng.standard_normal(d)
    return (lambda x: 0.5 * x @ A @ x - b @ x), (lambda x: A @ x - b), np.zeros(d)


@pytest.mark.parametrize("cond,t0", [(1.0, 1.0), (1e3, 1.0), (1e6, 1.0), (1e9, 1.0), (1.0, 1e-3), (1e6, 1e-3),
                                     (1e9, 1e-3), (1.0, 1e3), (1e6, 1e3)])
def test_wolfe_line_search_returns_a_strong_wolfe_step(cond, t0):
    f, g, x = _quadratic(cond)
    d = -g(x)
    t, f_new, g_new, _ = optim.wolfe_line_search(lambda z: (f(z), g(z)), x, f(x), g(x), d, t0=t0, c1=1e-4, c2=0.9)
    assert t > 0
    slope = g(x) @ d
    assert f_new == f(x + t * d) and f_new <= f(x) + 1e-4 * t * slope
    assert abs(g_new @ d) <= 0.9 * abs(slope)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # scipy's search gives up beyond condition 1e3 or so
        ref = optimize.line_search(f, g, x, d, g(x), f(x), c1=1e-4, c2=0.9, amax=1e12)
    if ref[0] is not None:       # scipy's step satisfies the same conditions; both lower f by more than c1 t g'd
        assert f_new <= f(x) and ref[3] <= f(x)


@pytest.mark.xfail(strict=True, reason="known: the zoom bisects while the cubic's minimiser lies in the outer 10% "
                   "of the bracket, and 30 trials do not reach a step 1e-11 of the way in (clamping instead "
                   "lets bfgs move, and its relative gtol then passes 100% off: see linbook.optim.result)")
@pytest.mark.parametrize("cond,t0", [(1e12, 1.0), (1e9, 1e3)])
def test_wolfe_line_search_whose_step_is_1e_12_of_t0(cond, t0):
    f, g, x = _quadratic(cond)
    t = optim.wolfe_line_search(lambda z: (f(z), g(z)), x, f(x), g(x), -g(x), t0=t0)[0]
    assert t > 0


@pytest.mark.parametrize("t0,shrink", [(1.0, 0.5), (10.0, 0.1), (1e-3, 0.9)])
def test_backtracking_returns_the_first_armijo_step(t0, shrink):
    f, g, x = _quadratic(1e4, seed=2)
    d = -g(x)
    slope = g(x) @ d
    t, f_new, _, n = optim.backtracking(lambda z: (f(z), g(z)), x, f(x), g(x), d, t0=t0, shrink=shrink)
    want = t0
    while not (f(x + want * d) <= f(x) + 1e-4 * want * slope and f(x + want * d) < f(x)):
        want *= shrink
    assert t == want and f_new == f(x + want * d)


# -- the result record: n_fev counts every evaluation, path ends at x ---------------------------------------

@pytest.mark.parametrize("start", ["generic", "confined"])
@pytest.mark.parametrize("method", METHODS)
def test_the_result_fields_match_the_calls_and_the_point(method, start):
    def f(x):
        return float((x - 1) @ (x - 1) + x[0] ** 4)

    def g(x):
        return 2 * (x - 1) + np.r_[4 * x[0] ** 3, 0.0]

    def H(x):
        return 2 * np.eye(2) + np.diag([12 * x[0] ** 2, 0.0])
    fc, calls = _counting(f)
    x0 = np.zeros(2) if start == "generic" else np.array([0.0, 1.0])
    res = _minimisers(fc, g, H)[method](x0)
    assert res.converged, res.message
    assert res.n_fev == calls[0]
    assert res.path.shape == (res.n_iter + 1, 2) and np.array_equal(res.path[-1], res.x)
    assert res.fun == f(res.x) and np.allclose(res.grad, g(res.x), rtol=0, atol=1e-300)


def test_resume_until_step_is_short_counts_iterations_over_all_runs_in_its_message():
    # weights 1e7 and 1e-3 under a fixed gscale: the first run passes its gradient test with the light
    # coordinate far off, the resumed one runs out of the budget; the message said the last run's count (2 of 3)
    w = np.array([1e7, 1e-3])

    def run(x, gtol, max_iter):
        return optim.lbfgs(lambda z: 0.5 * float(w @ (z - 1) ** 2), x, lambda z: w * (z - 1), gtol=gtol, gscale=1e7,
                           max_iter=max_iter)
    res = optim.resume_until_step_is_short(run, np.zeros(2), lambda x: float(np.max(np.abs(x - 1))), step_tol=1e-8,
                                           max_iter=3)
    assert not res.converged and res.n_iter == 3 and res.path.shape == (4, 2)
    assert res.message.startswith("max_iter reached: 3 iterations"), res.message
    full = optim.resume_until_step_is_short(run, np.zeros(2), lambda x: float(np.max(np.abs(x - 1))), step_tol=1e-8)
    assert full.converged and np.allclose(full.x, 1.0, rtol=0, atol=1e-8)
