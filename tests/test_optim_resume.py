"""linbook.optim.resume_until_step_is_short: a first-order run whose gradient test passes too early.

Weighted least squares ``f(x) = (1/2) sum_i w_i (a_i'x - b_i)^2`` with one heavy row (weight 1e7)
that the start already fits and light rows (1e-3) that fix the rest of ``x``: with the gradient
test relative to ``sum(w)`` (as a weighted GLM's), L-BFGS stops at iteration 0, "converged".
"""

import numpy as np
import pytest

from linbook import optim

A = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, -1.0]])
B = np.array([0.0, 1.0, 2.0, 0.5])
W = np.array([1e7, 1e-3, 1e-3, 1e-3])
H = A.T @ (W[:, None] * A)
X_STAR = np.linalg.solve(H, A.T @ (W * B))
GSCALE = W.sum()


def fg(x):
    r = A @ x - B
    return 0.5 * float(W @ r**2), A.T @ (W * r)


def newton_step(x):
    return float(np.max(np.abs(np.linalg.solve(H, fg(x)[1]))))


def run_with(method, **kw):
    def run(x0, gtol, max_iter):
        return method(fg, x0, grad=True, gtol=gtol, gscale=GSCALE, max_iter=max_iter, **kw)
    return run


def test_the_gradient_test_alone_stops_at_the_start():
    res = optim.lbfgs(fg, np.zeros(2), grad=True, gtol=1e-8, gscale=GSCALE)
    assert res.converged and res.n_iter == 0
    assert abs(res.x[1] - X_STAR[1]) > 0.5


@pytest.mark.parametrize("method", [optim.lbfgs, optim.bfgs])      # (gradient descent: H's condition is 1e10)
def test_resumes_until_the_newton_step_is_short(method):
    res = optim.resume_until_step_is_short(run_with(method), np.zeros(2), newton_step, step_tol=1e-6,
                                           gtol=1e-8, max_iter=5000)
    assert res.converged
    assert newton_step(res.x) <= 1e-6
    assert np.max(np.abs(res.x - X_STAR)) <= 1e-5
    assert res.path.shape == (res.n_iter + 1, 2)          # the paths of all runs, the start once
    assert np.array_equal(res.path[0], np.zeros(2)) and np.array_equal(res.path[-1], res.x)
    assert res.n_fev >= res.n_iter > 0


def test_a_short_step_at_the_first_result_leaves_it_as_it_is():
    run = run_with(optim.lbfgs)
    plain = run(np.array([0.0, 1.0]), 1e-8, 100)
    res = optim.resume_until_step_is_short(run, np.array([0.0, 1.0]), lambda x: 0.0, step_tol=1e-6, gtol=1e-8,
                                           max_iter=100)
    assert res.converged and res.n_iter == plain.n_iter and res.n_fev == plain.n_fev
    np.testing.assert_array_equal(res.x, plain.x)


def test_a_step_that_cannot_be_judged_keeps_the_runs_verdict():
    res = optim.resume_until_step_is_short(run_with(optim.lbfgs), np.zeros(2), lambda x: float("nan"),
                                           step_tol=1e-6, gtol=1e-8, max_iter=100)
    assert res.converged and res.n_iter == 0


def test_out_of_iterations_with_a_long_step_is_not_converged():
    res = optim.resume_until_step_is_short(run_with(optim.gradient_descent, step="backtracking"), np.zeros(2),
                                           newton_step, step_tol=1e-12, gtol=1e-8, max_iter=3)
    assert not res.converged
    assert res.n_iter <= 3
    assert "Newton step is still long" in res.message or "max_iter" in res.message
