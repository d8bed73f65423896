"""Self-checks of chapter "Logistic regression": reference solutions pass, plausible mistakes fail."""

import numpy as np
import pytest
from scipy.special import log_ndtr

import linbook.exercises as ex
from linbook.numerics import log1pexp, sigmoid, softmax


def nll_grad_hess(X, y, w):
    z = X @ w
    mu = sigmoid(z)
    return np.sum(log1pexp(z) - y * z), X.T @ (mu - y), X.T @ ((mu * (1 - mu))[:, None] * X)


def nll_grad_hess_naive(X, y, w):       # overflows for large z
    z = X @ w
    with np.errstate(all="ignore"):
        mu = 1 / (1 + np.exp(-z))
        nll = np.sum(np.log(1 + np.exp(z)) - y * z)
    return nll, X.T @ (mu - y), X.T @ ((mu * (1 - mu))[:, None] * X)


def nll_grad_hess_sign(X, y, w):         # gradient with the wrong sign
    f, g, H = nll_grad_hess(X, y, w)
    return f, -g, H


def newton_step(X, y, w, lam):
    _, g, H = nll_grad_hess(X, y, w)
    return w - np.linalg.solve(H + lam * np.eye(len(w)), g + lam * w)


def newton_step_factor2(X, y, w, lam):   # the note's (8.30)-(8.32) mix: penalty lam w'w, gradient 2 lam w, Hessian lam I
    _, g, H = nll_grad_hess(X, y, w)
    return w - np.linalg.solve(H + lam * np.eye(len(w)), g + 2 * lam * w)


def softmax_grad(X, Y, W):
    return X.T @ (softmax(X @ W, axis=1) - Y)


def softmax_grad_naive(X, Y, W):
    with np.errstate(all="ignore"):
        E = np.exp(X @ W)
        return X.T @ (E / E.sum(1, keepdims=True) - Y)


def probit_nll(X, y, w):
    t = 2 * y - 1
    u = t * (X @ w)
    lp = log_ndtr(u)
    lam = np.exp(-0.5 * u * u - 0.5 * np.log(2 * np.pi) - lp)
    return -lp.sum(), -X.T @ (t * lam)


def probit_nll_naive(X, y, w):
    from scipy.stats import norm
    t = 2 * y - 1
    u = t * (X @ w)
    with np.errstate(all="ignore"):
        return -np.log(norm.cdf(u)).sum(), -X.T @ (t * norm.pdf(u) / norm.cdf(u))


def test_references_pass():
    assert ex.check("logreg.nll-grad-hess", nll_grad_hess, verbose=False)
    assert ex.check("logreg.newton-step", newton_step, verbose=False)
    assert ex.check("logreg.softmax-grad", softmax_grad, verbose=False)
    assert ex.check("logreg.probit-nll", probit_nll, verbose=False)


def test_mistakes_fail():
    assert not ex.check("logreg.nll-grad-hess", nll_grad_hess_naive, verbose=False)
    assert not ex.check("logreg.nll-grad-hess", nll_grad_hess_sign, verbose=False)
    assert not ex.check("logreg.newton-step", newton_step_factor2, verbose=False)
    assert not ex.check("logreg.softmax-grad", softmax_grad_naive, verbose=False)
    assert not ex.check("logreg.probit-nll", probit_nll_naive, verbose=False)
    assert not ex.check("logreg.newton-step", lambda X, y, w, lam: 1 / 0, verbose=False)


# --- nll-grad-hess at huge weights: the gradient and Hessian too, not only the NLL --------------------------
def nll_stable_grad_naive(X, y, w):      # a stable softplus, but the sigmoid as exp(z) / (1 + exp(z)): NaN there
    z = X @ w
    with np.errstate(all="ignore"):
        mu = np.exp(z) / (1 + np.exp(z))
    return float(np.sum(log1pexp(z) - y * z)), X.T @ (mu - y), X.T @ ((mu * (1 - mu))[:, None] * X)


def test_huge_weights_check_the_gradient_and_hessian():
    r = ex.check("logreg.nll-grad-hess", nll_stable_grad_naive, verbose=False)
    failed = {p.name: p.hint for p in r.properties if not p.passed}
    assert list(failed) == ["finite and exact for huge weights (|z| ~ 1000)"]
    assert "gradient and Hessian" in failed["finite and exact for huge weights (|z| ~ 1000)"]


def nll_tanh(X, y, w):                    # the sigmoid and its slope through tanh / cosh: stable, another form
    z = X @ w
    with np.errstate(over="ignore"):
        s = 0.25 / np.cosh(z / 2) ** 2
    return float(np.sum(np.logaddexp(0, z) - y * z)), X.T @ (0.5 * (1 + np.tanh(z / 2)) - y), X.T @ (s[:, None] * X)


def nll_expit_both_sides(X, y, w):        # slope sigma(z) sigma(-z): exact where 1 - sigma(z) rounds to 0
    from scipy.special import expit
    z = X @ w
    s = expit(z) * expit(-z)
    return np.sum(log1pexp(z) - y * z), (X.T @ (expit(z) - y)).tolist(), X.T @ (s[:, None] * X)


@pytest.mark.parametrize("fn", [nll_grad_hess, nll_tanh, nll_expit_both_sides], ids=lambda f: f.__name__)
def test_huge_weights_accept_stable_forms(fn):
    r = ex.check("logreg.nll-grad-hess", fn, verbose=False)
    assert r, r.report()
