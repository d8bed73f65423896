"""Truncated Newton (linbook.optim.newton_cg): its CG step, its fits against Newton's method and scipy."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize

import linbook
from linbook.logistic.logistic_regression import logistic_loss
from linbook.optim import newton
from linbook.optim.newton_cg import conjugate_gradient_step, lanczos_condition, newton_cg


def _spd(d, seed, cond=1e4):
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    return (Q * np.logspace(0, np.log10(cond), d)) @ Q.T


@pytest.mark.parametrize("preconditioned", [False, True])
def test_cg_step_solves_the_newton_system(preconditioned):
    """With a tight forcing term the step is H^{-1}(-g) (residual within eta ||g||)."""
    H = _spd(30, 0)
    g = np.random.default_rng(1).standard_normal(30)
    diag = np.diag(H) if preconditioned else None
    d = conjugate_gradient_step(lambda v: H @ v, g, 1e-12, 500, diag)
    assert np.linalg.norm(H @ d + g) <= 1e-10 * np.linalg.norm(g)
    np.testing.assert_allclose(d, np.linalg.solve(H, -g), rtol=1e-8)


@pytest.mark.parametrize("preconditioned", [False, True])
@pytest.mark.parametrize("cond", [10.0, 1e4, 1e9])
def test_lanczos_condition_is_the_condition_number_cg_saw(preconditioned, cond):
    """Ritz values from CG's alpha, beta reach the extreme eigenvalues of M^-1 H as CG converges."""
    H = _spd(25, 4, cond=cond)
    if preconditioned:                                   # badly scaled; the Jacobi preconditioner undoes it
        scale = 2.0 ** np.random.default_rng(5).integers(-20, 20, 25)
        H = H * np.outer(scale, scale)
    g = np.random.default_rng(6).standard_normal(25)
    diag = np.diag(H) if preconditioned else None
    steps = {"alpha": [], "beta": []}
    conjugate_gradient_step(lambda v: H @ v, g, 1e-15, 25, diag, steps=steps)
    r = 1.0 / np.sqrt(np.diag(H)) if preconditioned else np.ones(25)
    eig = np.linalg.eigvalsh(H * np.outer(r, r))       # M^-1 H is similar to M^-1/2 H M^-1/2
    expected = eig[-1] / eig[0]
    # a lower bound, sharp once CG has converged (exact arithmetic: after D steps)
    assert lanczos_condition(steps) <= expected * (1 + 1e-6)
    assert lanczos_condition(steps) >= expected * (0.5 if cond < 1e9 else 1e-3)


def test_cg_step_on_negative_curvature_is_a_descent_direction():
    H = np.diag([2.0, 1.0, -1.0])
    for g in (np.array([1.0, 1.0, 1.0]), np.array([0.0, 0.0, 1.0])):
        d = conjugate_gradient_step(lambda v: H @ v, g, 1e-12, 50)
        assert float(g @ d) < 0


def test_quadratic_and_rosenbrock_minima():
    A, b = _spd(20, 2, cond=1e3), np.random.default_rng(3).standard_normal(20)
    res = newton_cg(lambda x: (0.5 * x @ A @ x + b @ x, A @ x + b, (lambda v: A @ v, np.diag(A))), np.zeros(20),
                    gtol=1e-12)
    assert res.converged
    np.testing.assert_allclose(res.x, np.linalg.solve(A, -b), rtol=1e-9)

    def rosen(x):
        return (scipy.optimize.rosen(x), scipy.optimize.rosen_der(x),
                (lambda v: scipy.optimize.rosen_hess_prod(x, v), None))

    res = newton_cg(rosen, np.array([-1.2, 1.0]), gtol=1e-10, max_iter=500)   # (4-D has a second minimum)
    assert res.converged
    np.testing.assert_allclose(res.x, np.ones(2), atol=1e-7)


def test_logistic_fit_equals_newton_and_stops_honestly():
    """On the chapter's logistic loss (breast cancer, standardised, lam = 1): Newton-CG's minimiser is Newton's;
    a non-finite start and a callback stop are not convergence."""
    X, y = linbook.datasets.load("breast_cancer")[:2]
    X = (X - X.mean(0)) / X.std(0)
    y = (np.asarray(y) == np.unique(y)[1]).astype(float)
    Xt = np.column_stack([np.ones(len(y)), X])
    r = np.r_[0.0, np.ones(X.shape[1])]

    def with_product(w):
        f, g, H = logistic_loss(w, Xt, y, 1.0, penalised=r)
        return f, g, (lambda v: H @ v, np.diag(H))

    res = newton_cg(with_product, np.zeros(Xt.shape[1]), gtol=1e-10, gscale=len(y))
    ref = newton(lambda w: logistic_loss(w, Xt, y, 1.0, penalised=r), np.zeros(Xt.shape[1]), grad=True, hess=True,
                 gtol=1e-12, gscale=len(y))
    assert res.converged and ref.converged
    np.testing.assert_allclose(res.x, ref.x, rtol=1e-7, atol=1e-9)
    bad = newton_cg(lambda w: (np.nan, w, (lambda v: v, None)), np.ones(3))
    assert not bad.converged and bad.n_iter == 0
    stopped = newton_cg(with_product, np.zeros(Xt.shape[1]), gtol=1e-10, gscale=len(y), callback=lambda *a: True)
    assert not stopped.converged and stopped.n_iter == 1
