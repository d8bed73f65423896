"""linbook.optim against scipy.optimize on standard functions."""

import inspect

import numpy as np
import pytest
import scipy.optimize as so

from linbook import optim
import linbook
from linbook.numerics import log1pexp, sigmoid


def rosen(x):
    return so.rosen(x), so.rosen_der(x)


def quad_problem(d=6, seed=0, cond=100.0):
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    A = Q @ np.diag(np.logspace(0, np.log10(cond), d)) @ Q.T
    b = rng.normal(size=d)
    return A, b


def logistic_problem(seed=0, n=200, d=4, lam=0.5):
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), rng.normal(size=(n, d - 1))])
    y = (rng.random(n) < sigmoid(X @ rng.normal(size=d))).astype(float)

    def fg(w):
        z = X @ w
        return np.sum(log1pexp(z) - y * z) + 0.5 * lam * w @ w, X.T @ (sigmoid(z) - y) + lam * w

    def hess(w):
        mu = sigmoid(X @ w)
        return X.T @ ((mu * (1 - mu))[:, None] * X) + lam * np.eye(d)

    ref = so.minimize(fg, np.zeros(d), jac=True, hess=hess, method="trust-exact", options={"gtol": 1e-12}).x
    return X, y, lam, fg, hess, ref


X0_ROSEN = np.array([-1.2, 1.0])


@pytest.mark.parametrize("method", ["bfgs_H", "bfgs_B", "lbfgs", "newton", "nonlinear_cg", "truncated_newton"])
def test_rosenbrock(method):
    if method.startswith("bfgs"):
        r = optim.bfgs(rosen, X0_ROSEN, grad=True, form=method[-1], gtol=1e-9)
    elif method == "lbfgs":
        r = optim.lbfgs(rosen, X0_ROSEN, grad=True, gtol=1e-9)
    elif method == "newton":
        r = optim.newton(rosen, X0_ROSEN, grad=True, hess=so.rosen_hess, gtol=1e-10)
    elif method == "nonlinear_cg":
        r = optim.nonlinear_cg(rosen, X0_ROSEN, grad=True, gtol=1e-8, max_iter=5000)
    else:
        r = optim.truncated_newton(rosen, X0_ROSEN, grad=True, hessp=so.rosen_hess_prod, gtol=1e-10)
    ref = so.minimize(rosen, X0_ROSEN, jac=True, method="BFGS", options={"gtol": 1e-10}).x
    assert r.converged, r.message
    np.testing.assert_allclose(r.x, ref, atol=1e-6)
    np.testing.assert_allclose(r.x, [1.0, 1.0], atol=1e-6)
    assert r.path.shape == (r.n_iter + 1, 2)
    np.testing.assert_array_equal(r.path[0], X0_ROSEN)
    np.testing.assert_allclose(r.path[-1], r.x)


def test_rosenbrock_5d_lbfgs_vs_scipy():
    x0 = np.array([1.3, 0.7, 0.8, 1.9, 1.2])
    r = optim.lbfgs(rosen, x0, grad=True, gtol=1e-10)
    ref = so.minimize(rosen, x0, jac=True, method="L-BFGS-B", options={"gtol": 1e-12, "ftol": 0}).x
    np.testing.assert_allclose(r.x, ref, atol=1e-6)


def test_bfgs_B_and_H_same_iterates():
    A, b = quad_problem(d=5, cond=20)
    fg = lambda x: (0.5 * x @ A @ x - b @ x, A @ x - b)   # noqa: E731
    rH = optim.bfgs(fg, np.zeros(5), grad=True, form="H", gtol=1e-12)
    rB = optim.bfgs(fg, np.zeros(5), grad=True, form="B", gtol=1e-12)
    k = min(len(rH.path), len(rB.path))
    np.testing.assert_allclose(rH.path[:k], rB.path[:k], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(rH.x, np.linalg.solve(A, b), rtol=1e-8)


def test_gradient_descent_variants_on_quadratic():
    A, b = quad_problem(d=4, cond=10)
    fg = lambda x: (0.5 * x @ A @ x - b @ x, A @ x - b)   # noqa: E731
    xs = np.linalg.solve(A, b)
    L = np.linalg.eigvalsh(A).max()
    r1 = optim.gradient_descent(fg, np.zeros(4), grad=True, step=1.0 / L, gtol=1e-10, max_iter=10000)
    r2 = optim.gradient_descent(fg, np.zeros(4), grad=True, step="backtracking", gtol=1e-10, max_iter=10000)
    r3 = optim.gradient_descent(fg, np.zeros(4), grad=True, step="exact", hess=A, gtol=1e-10, max_iter=10000)
    g0 = np.max(np.abs(b))
    lmin = np.linalg.eigvalsh(A).min()
    for r in (r1, r2, r3):
        assert r.converged
        # stopping rule: max|g| <= gtol * max|g0| (1e3 gtol if the line search hits rounding),
        # so the error is at most that over the smallest eigenvalue of A
        np.testing.assert_allclose(r.x, xs, rtol=0, atol=1e3 * 1e-10 * g0 / lmin * 2)
    # exact line search: successive gradients (directions) are orthogonal
    P = r3.path
    G = (P[1:] - P[:-1])[:10]          # early steps (late ones are at rounding level)
    cos = np.sum(G[1:] * G[:-1], axis=1)
    assert np.max(np.abs(cos) / (np.linalg.norm(G[1:], axis=1) * np.linalg.norm(G[:-1], axis=1))) < 1e-8
    # too large a fixed step diverges and is reported, not hidden
    r4 = optim.gradient_descent(fg, np.zeros(4), grad=True, step=2.5 / L, max_iter=2000)
    assert not r4.converged and "diverged" in r4.message


def test_momentum_and_cg():
    A, b = quad_problem(d=8, cond=100)
    fg = lambda x: (0.5 * x @ A @ x - b @ x, A @ x - b)   # noqa: E731
    xs = np.linalg.solve(A, b)
    ev = np.linalg.eigvalsh(A)
    kappa = ev[-1] / ev[0]
    lr = 4 / (np.sqrt(ev[-1]) + np.sqrt(ev[0])) ** 2
    beta = ((np.sqrt(kappa) - 1) / (np.sqrt(kappa) + 1)) ** 2
    rm = optim.momentum(fg, np.zeros(8), grad=True, lr=lr, beta=beta, gtol=1e-10, max_iter=5000)
    rg = optim.gradient_descent(fg, np.zeros(8), grad=True, step=2 / (ev[0] + ev[-1]), gtol=1e-10, max_iter=50000)
    assert rm.converged and rg.converged and rm.n_iter < rg.n_iter / 3
    np.testing.assert_allclose(rm.x, xs, rtol=1e-8)
    rc = optim.conjugate_gradient(A, b, tol=1e-13)
    assert rc.converged and rc.n_iter <= 8 + 2
    np.testing.assert_allclose(rc.x, xs, rtol=1e-10)
    from scipy.sparse.linalg import cg
    tol = "rtol" if "rtol" in inspect.signature(cg).parameters else "tol"   # rtol from scipy 1.12 (tol before)
    ref, info = cg(A, b, **{tol: 1e-13})
    np.testing.assert_allclose(rc.x, ref, rtol=1e-8)
    with pytest.raises(ValueError, match="positive definite"):
        optim.conjugate_gradient(-A, b)


@pytest.mark.parametrize("method", ["newton", "bfgs", "lbfgs", "gd", "irls", "nonlinear_cg"])
def test_logistic_nll(method):
    X, y, lam, fg, hess, ref = logistic_problem()
    d = X.shape[1]
    if method == "newton":
        r = optim.newton(fg, np.zeros(d), grad=True, hess=hess, gtol=1e-10)
    elif method == "bfgs":
        r = optim.bfgs(fg, np.zeros(d), grad=True, gtol=1e-9)
    elif method == "lbfgs":
        r = optim.lbfgs(fg, np.zeros(d), grad=True, gtol=1e-9)
    elif method == "gd":
        r = optim.gradient_descent(fg, np.zeros(d), grad=True, gtol=1e-9, max_iter=20000)
    elif method == "nonlinear_cg":
        r = optim.nonlinear_cg(fg, np.zeros(d), grad=True, gtol=1e-9)
    else:
        r = linbook.irls(X, y, lam=lam, tol=1e-12)
    assert r.converged
    np.testing.assert_allclose(r.x, ref, rtol=1e-7, atol=1e-9)
    assert r.fun == pytest.approx(fg(ref)[0], rel=1e-12)


def test_newton_nonconvex_direction_fix():
    f = lambda x: (x[0] ** 4 / 4 - x[0] ** 2 + x[1] ** 2, np.array([x[0] ** 3 - 2 * x[0], 2 * x[1]]))  # noqa: E731
    h = lambda x: np.diag([3 * x[0] ** 2 - 2, 2.0])   # noqa: E731
    r = optim.newton(f, [0.3, 1.0], grad=True, hess=h)   # Hessian indefinite at the start
    assert r.converged
    np.testing.assert_allclose(np.abs(r.x), [np.sqrt(2), 0], atol=1e-8)
    assert np.all(np.diff([f(p)[0] for p in r.path]) <= 1e-15)


def test_levenberg_marquardt_vs_scipy():
    rng = np.random.default_rng(5)
    t = np.linspace(0, 4, 40)
    yv = 2.5 * np.exp(-1.3 * t) + 0.5 + 0.01 * rng.normal(size=t.size)
    res = lambda p: p[0] * np.exp(-p[1] * t) + p[2] - yv   # noqa: E731
    jac = lambda p: np.column_stack([np.exp(-p[1] * t), -p[0] * t * np.exp(-p[1] * t), np.ones_like(t)])  # noqa: E731
    r = optim.levenberg_marquardt(res, [1.0, 0.1, 0.0], jac)
    ref = so.least_squares(res, [1.0, 0.1, 0.0], jac=jac, method="lm", xtol=1e-15, ftol=1e-15, gtol=1e-15).x
    assert r.converged
    np.testing.assert_allclose(r.x, ref, rtol=1e-7)


def test_bfgs_updates():
    rng = np.random.default_rng(0)
    d = 4
    M = rng.normal(size=(d, d))
    B = M @ M.T + np.eye(d)
    s = rng.normal(size=d)
    y = (M @ M.T + 2 * np.eye(d)) @ s
    Bn = optim.bfgs_update_B(B, s, y)
    Hn = optim.bfgs_update_H(np.linalg.inv(B), s, y)
    np.testing.assert_allclose(Bn @ s, y)
    np.testing.assert_allclose(Hn @ y, s)
    np.testing.assert_allclose(Hn @ Bn, np.eye(d), atol=1e-10)
    assert np.linalg.eigvalsh(Bn).min() > 0


def test_bad_input():
    with pytest.raises(ValueError):
        optim.gradient_descent(rosen, [np.nan, 1.0], grad=True)
    with pytest.raises(ValueError, match="exact"):
        optim.gradient_descent(rosen, X0_ROSEN, grad=True, step="exact")
    with pytest.raises(ValueError):
        optim.newton(rosen, X0_ROSEN, grad=True)
    with pytest.raises(ValueError):
        optim.momentum(rosen, X0_ROSEN, grad=True, beta=1.5)
    with pytest.raises(ValueError, match="labels"):
        linbook.irls(np.ones((3, 1)), [0, 2, 1])


@pytest.mark.parametrize("call, name", [
    (lambda: optim.gradient_descent(rosen, X0_ROSEN, grad=True, step=-0.1), "step"),
    (lambda: optim.gradient_descent(rosen, X0_ROSEN, grad=True, step="newton"), "step"),
    (lambda: optim.gradient_descent(rosen, X0_ROSEN, grad=True, c1=0.0), "c1"),
    (lambda: optim.gradient_descent(rosen, X0_ROSEN, grad=True, shrink=1.0), "shrink"),
    (lambda: optim.momentum(rosen, X0_ROSEN, grad=True, beta=1.0), "beta"),
    (lambda: optim.momentum(rosen, X0_ROSEN, grad=True, lr=0.0), "lr"),
    (lambda: optim.bfgs(rosen, X0_ROSEN, grad=True, form="C"), "form"),
    (lambda: optim.backtracking(rosen, np.ones(2), 1.0, np.ones(2), -np.ones(2), t0=np.inf), "t0"),
    (lambda: optim.backtracking(rosen, np.ones(2), 1.0, np.ones(2), -np.ones(2), max_halvings=2.5), "max_halvings"),
    (lambda: optim.wolfe_line_search(rosen, np.ones(2), 1.0, np.ones(2), -np.ones(2), c1=0.5, c2=0.5), "c2"),
    (lambda: optim.wolfe_line_search(rosen, np.ones(2), 1.0, np.ones(2), -np.ones(2), c2=None), "c2"),
])
def test_bad_constants_get_the_one_constraint_wording(call, name):
    """Every optimizer constant is checked by base.check_param_values: one wording, naming the
    parameter and the function, ending with what to set."""
    with pytest.raises(ValueError, match=rf"The '{name}' parameter of \w+ must be .* Set {name} to "):
        call()


# ------------------------------------------------------------------ stopping rules and failures
def _solvers():
    """Every optim method that takes an objective, as (name, call(fun_fg, x0))."""
    hess = lambda x: np.eye(x.size)            # noqa: E731
    return {
        "gradient_descent": lambda fg, x0: optim.gradient_descent(fg, x0, grad=True),
        "gd_fixed": lambda fg, x0: optim.gradient_descent(fg, x0, grad=True, step=0.1),
        "momentum": lambda fg, x0: optim.momentum(fg, x0, grad=True),
        "nonlinear_cg": lambda fg, x0: optim.nonlinear_cg(fg, x0, grad=True),
        "newton": lambda fg, x0: optim.newton(fg, x0, grad=True, hess=hess),
        "truncated_newton": lambda fg, x0: optim.truncated_newton(fg, x0, grad=True, hessp=lambda x, v: v),
        "bfgs": lambda fg, x0: optim.bfgs(fg, x0, grad=True),
        "lbfgs": lambda fg, x0: optim.lbfgs(fg, x0, grad=True),
    }


# A fixed step (gd_fixed, momentum) or a backtracking search from t = 1 (gradient_descent)
# has units, so those methods are not scale-free by design and are not scanned.
SCALE_FREE = [name for name in _solvers() if name not in ("gradient_descent", "gd_fixed", "momentum")]


@pytest.mark.parametrize("name", SCALE_FREE)
def test_scale_invariant_stopping(name):
    """f(x) and 1e-10 f(x / 1e-6): the same iterates, mapped (relative tests)."""
    A, b = quad_problem(d=3, cond=5)
    fg = lambda x: (0.5 * x @ A @ x - b @ x, A @ x - b)          # noqa: E731
    s, k = 1e-6, 1e-10
    fgs = lambda u: tuple(np.asarray(v) * k * (1 if i == 0 else s) for i, v in enumerate(fg(u * s)))  # noqa: E731
    if name in ("newton", "truncated_newton"):
        r1 = (optim.newton(fg, np.zeros(3), grad=True, hess=lambda x: A) if name == "newton" else
              optim.truncated_newton(fg, np.zeros(3), grad=True, hessp=lambda x, v: A @ v))
        r2 = (optim.newton(fgs, np.zeros(3), grad=True, hess=lambda x: k * s * s * A) if name == "newton" else
              optim.truncated_newton(fgs, np.zeros(3), grad=True, hessp=lambda x, v: k * s * s * A @ v))
    else:
        # quasi-Newton / CG: the first step 1/|g|_1 is free of the units of f (not of x)
        s = 1.0
        fgs = lambda u: (k * fg(u)[0], k * fg(u)[1])          # noqa: E731
        r1 = _solvers()[name](fg, np.zeros(3))
        r2 = _solvers()[name](fgs, np.zeros(3))
    assert r1.converged and r2.converged
    assert r1.n_iter == r2.n_iter
    np.testing.assert_allclose(r2.x * s, r1.x, rtol=1e-6)


@pytest.mark.parametrize("name", list(_solvers()))
def test_nan_objective_at_start_stops_at_once(name):
    fg = lambda x: (np.nan, np.ones_like(x))        # noqa: E731
    r = _solvers()[name](fg, np.ones(2))
    assert not r.converged and r.n_iter == 0 and "not finite" in r.message


@pytest.mark.parametrize("name", list(_solvers()))
def test_nan_objective_after_start_stops_with_message(name):
    """f is NaN everywhere but at x0 (and its gradient points away): stop, say so, never 'max_iter'."""
    x0 = np.array([1.0, 2.0])

    def fg(x):
        if np.array_equal(x, x0):
            return 1.0, np.array([1.0, -1.0])
        return np.nan, np.full(2, np.nan)

    r = _solvers()[name](fg, x0)
    assert not r.converged
    assert "max_iter" not in r.message and ("finite" in r.message or "diverged" in r.message)
    assert r.n_fev < 200


def test_max_iter_message_counts_iterations():
    r = optim.lbfgs(rosen, X0_ROSEN, grad=True, max_iter=3)
    assert not r.converged and r.n_iter == 3 and "3 iterations" in r.message
    r = optim.gradient_descent(lambda x: (float(x @ x), 2 * x), np.zeros(2), grad=True)
    assert r.converged and r.n_iter == 0 and "zero" in r.message


def test_bfgs_updates_skip_negative_curvature():
    B = np.diag([1.0, 2.0])
    s, y = np.array([1.0, 0.0]), np.array([-1.0, 0.5])          # s'y < 0
    np.testing.assert_array_equal(optim.bfgs_update_B(B, s, y), B)
    np.testing.assert_array_equal(optim.bfgs_update_H(np.linalg.inv(B), s, y), np.linalg.inv(B))
    assert np.linalg.eigvalsh(optim.bfgs_update_B(B, s, -y)).min() > 0 or s @ -y <= 0
    S, Y = [s, np.array([0.0, 1.0])], [y, np.array([0.0, 3.0])]
    r = optim.lbfgs_two_loop(np.ones(2), S, Y)
    np.testing.assert_allclose(r, optim.lbfgs_two_loop(np.ones(2), S[1:], Y[1:]))
    with pytest.raises(ValueError, match="finite"):
        optim.bfgs_update_B(B, np.array([np.nan, 0.0]), y)


def test_irls_duplicated_columns_and_separable():
    from linbook.base import SeparableDataWarning
    X, y, lam, fg, hess, ref = logistic_problem()
    Xd = np.column_stack([X, X[:, 1]])                  # duplicated column: X'SX singular
    r = linbook.irls(Xd, y, tol=1e-12)
    assert r.converged
    w = r.x
    np.testing.assert_allclose(np.r_[w[:1], w[1] + w[-1], w[2:-1]],
                               linbook.irls(X, y, tol=1e-12).x, rtol=1e-7)
    Xs = np.column_stack([np.ones(40), np.r_[np.linspace(-2, -0.1, 20), np.linspace(0.1, 2, 20)]])
    ys = np.r_[np.zeros(20), np.ones(20)]
    with pytest.warns(SeparableDataWarning, match="lam > 0"):
        r = linbook.irls(Xs, ys)
    assert not r.converged and "separable" in r.message and np.all(np.isfinite(r.x))
    assert linbook.irls(Xs, ys, lam=1.0).converged


def test_newton_hess_true_protocol_equals_callable():
    X, y, lam, fg, hess, ref = logistic_problem()
    fgh = lambda w: (*fg(w), hess(w))             # noqa: E731
    r1 = optim.newton(fg, np.zeros(4), grad=True, hess=hess, gtol=1e-12)
    r2 = optim.newton(fgh, np.zeros(4), grad=True, hess=True, gtol=1e-12)
    np.testing.assert_array_equal(r1.path, r2.path)
    with pytest.raises(ValueError, match="hess"):
        optim.newton(fg, np.zeros(4), grad=True)


def test_newton_chord_method_reaches_the_same_optimum_with_fewer_hessians():
    """``fun_grad`` turns on Hessian reuse: same minimiser (the stopping test is the exact
    gradient), fewer Hessian evaluations, and still Newton's answer when nothing contracts."""
    X, y, lam, fg, hess, ref = logistic_problem()
    n_hess = []

    def fgh(w):
        n_hess.append(1)
        return (*fg(w), hess(w))

    plain = optim.newton(fgh, np.zeros(4), grad=True, hess=True, gtol=1e-10)
    hessians_plain = len(n_hess)
    n_hess.clear()
    chord = optim.newton(fgh, np.zeros(4), grad=True, hess=True, gtol=1e-10, fun_grad=fg)
    assert plain.converged and chord.converged
    assert len(n_hess) < hessians_plain
    np.testing.assert_allclose(chord.x, ref, rtol=1e-7)
    np.testing.assert_allclose(plain.x, ref, rtol=1e-7)
    assert chord.n_fev > len(n_hess)                         # the gradient-only evaluations count too


def test_newton_chord_method_refreshes_a_hessian_that_stops_contracting():
    """A deliberately poor 'Hessian' (its diagonal only) contracts the gradient by less than
    CHORD_CONTRACTION per step: the chord method must then ask for a fresh one every step, and
    still converge (each direction is a descent direction)."""
    from linbook.optim.newton import CHORD_CONTRACTION

    rng = np.random.default_rng(0)
    A = rng.normal(size=(6, 6))
    Q = A @ A.T + 0.5 * np.eye(6)
    b = rng.normal(size=6)
    calls = []

    def fgh(x):
        calls.append(1)
        return 0.5 * x @ Q @ x - b @ x, Q @ x - b, np.diag(np.diag(Q))

    res = optim.newton(fgh, np.zeros(6), grad=True, hess=True, gtol=1e-10, max_iter=5000,
                       fun_grad=lambda x: (0.5 * x @ Q @ x - b @ x, Q @ x - b))
    assert res.converged
    np.testing.assert_allclose(res.x, np.linalg.solve(Q, b), rtol=1e-6)
    steps = len(res.path) - 1
    assert 0.25 == CHORD_CONTRACTION
    assert len(calls) > steps / 2                              # mostly fresh Hessians


@pytest.mark.parametrize("bad", [{"lam": -1.0}, {"lam": float("nan")}, {"max_iter": 0}, {"tol": -1.0}])
def test_irls_arguments_in_the_one_wording(bad):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 2))
    y = (X[:, 0] > 0).astype(float)
    name = next(iter(bad))
    with pytest.raises(ValueError, match=rf"The '{name}' parameter of irls must be .* Set {name} to "):
        linbook.irls(X, y, **bad)


def test_newton_xtol_judges_the_full_step_not_the_one_the_line_search_shrank():
    """Where the gradient is not finite near the optimum, the line search shrinks every step: ``t d`` fell
    below ``xtol`` 0.25 from the optimum, and ``newton`` said converged ("step below xtol") with ``|g| = 0.5``.
    The xtol test now looks at Newton's full step ``d``."""
    from linbook import optim

    target = np.full(4, 1.2)

    def grad(x):
        return x - target if np.linalg.norm(x - target) > 0.5 else np.full(4, np.inf)

    res = optim.newton(lambda x: 0.5 * np.sum((x - target) ** 2), np.zeros(4), grad, lambda x: np.eye(4))
    assert not res.converged
    assert np.abs(res.x - target).max() > 0.1          # where it stopped: not the optimum, and it says so
    done = optim.newton(lambda x: 0.5 * np.sum((x - target) ** 2), np.zeros(4), lambda x: x - target,
                        lambda x: np.eye(4))
    assert done.converged and np.allclose(done.x, target)
