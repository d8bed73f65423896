"""The fast path of the binary GLM fit computes the chapter's step: ``logistic_loss`` (the
objective, gradient and Hessian in numpy) against the private kernel path, and
LogisticRegression / irls / the Laplace approximation against the textbook Newton loop."""

from __future__ import annotations

import numpy as np
import pytest

import linbook
from linbook.logistic import binary, solvers
from linbook.logistic.logistic_regression import logistic_loss
from linbook.optim import newton


def _data(name):
    if name == "breast_cancer":            # chapter 4's real data, standardised
        X, y = linbook.datasets.load("breast_cancer")[:2]
        return (X - X.mean(0)) / X.std(0), (np.asarray(y) == np.unique(y)[1]).astype(float)
    n, d, seed = {"small": (40, 2, 0), "tall": (5000, 8, 1), "wide": (300, 120, 2)}[name]
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * np.logspace(-1, 1, d)
    y = (rng.random(n) < linbook.sigmoid(X @ rng.standard_normal(d) / np.sqrt(d))).astype(float)
    return X, y


def _readable(theta, X, y, lam, a=None):
    Xt = np.column_stack([np.ones(len(y)), X])
    return logistic_loss(theta, Xt, y, lam, sample_weight=a, penalised=np.r_[0.0, np.ones(X.shape[1])])


@pytest.mark.parametrize("name", ["breast_cancer", "small", "tall", "wide"])
@pytest.mark.parametrize("single", [False, True])
def test_kernel_objective_equals_logistic_loss(name, single):
    """F, g, H of the private path (standardised coordinates v = c w) are logistic_loss's, to 1e-10
    (the single-precision Hessian, used only for the chord method, to its own 1e-5)."""
    X, y = _data(name)
    rng = np.random.default_rng(5)
    a = rng.uniform(0.5, 2.0, len(y))
    lam = 0.7
    c, _ = solvers.column_scales(X, a, lam)
    fgh, _ = binary.binary_objective(X, 2 * y - 1, a, binary.logit_terms, lam, c, True,
                                     approximate_hessian=single)
    theta = np.r_[0.3, rng.standard_normal(X.shape[1]) / np.sqrt(X.shape[1]) / c]   # [b, w]
    F, g, H = _readable(theta, X, y, lam, a)
    Fk, gk, Hk = fgh(np.r_[theta[0], c * theta[1:]])
    scale = np.r_[1.0, c]                              # dF/dw = dF/dv * c, H_w = D H_v D
    assert Fk == pytest.approx(F, rel=1e-12)
    np.testing.assert_allclose(gk * scale, g, rtol=1e-10, atol=1e-10 * np.abs(g).max())
    tol = 1e-5 if single else 1e-10
    np.testing.assert_allclose(Hk * np.outer(scale, scale), H, rtol=tol, atol=tol * np.abs(H).max())


def _textbook_newton(X, y, lam, a=None, steps=30):
    """The chapter's loop: theta <- theta - H^{-1} g with logistic_loss, full steps."""
    theta = np.zeros(X.shape[1] + 1)
    for _ in range(steps):
        _, g, H = _readable(theta, X, y, lam, a)
        theta = theta - np.linalg.solve(H, g)
    return theta


@pytest.mark.parametrize("name", ["breast_cancer", "small", "tall", "wide"])
@pytest.mark.parametrize("solver", ["newton", "lbfgs"])
def test_logistic_regression_is_the_textbook_newton_fit(name, solver):
    X, y = _data(name)
    a = np.random.default_rng(3).uniform(0.5, 2.0, len(y))
    theta = _textbook_newton(X, y, 1.0, a)
    m = linbook.LogisticRegression(lam=1.0, solver=solver, tol=1e-12, max_iter=100_000).fit(X, y, sample_weight=a)
    # the fit stops where its line search can no longer see F decrease (|g| ~ 1e-7 on 40 samples),
    # so the coefficients agree to ~1e-8, not to the 1e-10 of each step's F, g and H above
    np.testing.assert_allclose(np.r_[m.intercept_, m.coef_[0]], theta, rtol=1e-7, atol=1e-9)


def test_logistic_loss_against_finite_differences():
    X, y = _data("small")
    w = np.array([0.2, -0.5, 0.9])
    _, g, H = _readable(w, X, y, 0.5)
    eps = 1e-6
    for j in range(3):
        e = np.eye(3)[j] * eps
        assert (_readable(w + e, X, y, 0.5)[0] - _readable(w - e, X, y, 0.5)[0]) / (2 * eps) == \
            pytest.approx(g[j], rel=1e-6)
        np.testing.assert_allclose((_readable(w + e, X, y, 0.5)[1] - _readable(w - e, X, y, 0.5)[1]) / (2 * eps),
                                   H[:, j], rtol=1e-6, atol=1e-8)


def test_irls_is_the_textbook_newton_fit_and_old_name_warns():
    X, y = _data("small")
    Xt = np.column_stack([np.ones(len(y)), X])
    theta = _textbook_newton(X, y, 0.0)
    np.testing.assert_allclose(linbook.irls(Xt, y, tol=1e-13).x, theta, rtol=1e-10)
    with pytest.warns(FutureWarning, match="linbook.irls"):
        old = linbook.optim.irls
    assert old is linbook.irls


def test_newton_decrement_stop():
    """decrement_tol stops at g'H^{-1}g/2 <= tol: a quadratic stops after one step."""
    A = np.array([[3.0, 1.0], [1.0, 2.0]])

    def fgh(x):
        return 0.5 * x @ A @ x, A @ x, A

    res = newton(fgh, np.ones(2), grad=True, hess=True, gtol=0.0, xtol=0.0, decrement_tol=1e-20)
    assert res.converged and res.n_iter == 1 and "decrement" in res.message
    np.testing.assert_allclose(res.x, 0.0, atol=1e-15)


def test_bayesian_logistic_mode_is_the_textbook_newton_fit():
    """The Laplace mode of BayesianLogisticRegression is the MAP point of the penalised loss
    (the intercept penalised too), found by the one Newton driver."""
    X, y = _data("small")
    Xt = np.column_stack([np.ones(len(y)), X])
    m = linbook.BayesianLogisticRegression(prior_precision=0.5).fit(X, y)
    theta = np.zeros(3)
    for _ in range(30):
        _, g, H = logistic_loss(theta, Xt, y, 0.5)
        theta = theta - np.linalg.solve(H, g)
    # tol = 1e-14 on the decrement g'A^{-1}g/2 bounds the error in the A-norm by ~1.4e-7
    np.testing.assert_allclose(m.posterior_mean_, theta, rtol=1e-8)
