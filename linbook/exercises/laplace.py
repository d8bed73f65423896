"""Self-checks for the exercises of chapter "Laplace approximation, BIC and Bayesian logistic regression"."""

from __future__ import annotations

import numpy as np

from linbook.exercises import Property, close, exercise
from linbook.laplace import laplace_approximation, moderated_sigmoid
from linbook.numerics import log1pexp, sigmoid


_close = close


@exercise("laplace.log-evidence", "Laplace estimate of log Z",
          returns="log Z (one number)")
def _log_evidence(fn):
    rng = np.random.default_rng(0)
    # exact for Gaussian energies, with a constant offset and a non-zero mode
    ok = True
    for m in (1, 2, 3):
        B = rng.normal(size=(m, m))
        A = B @ B.T + m * np.eye(m)
        mu, c = rng.normal(size=m), float(rng.normal())
        E = lambda z, A=A, mu=mu, c=c: c + 0.5 * (z - mu) @ A @ (z - mu)
        G = lambda z, A=A, mu=mu: A @ (z - mu)
        H = lambda z, A=A: A
        exact = -c + 0.5 * m * np.log(2 * np.pi) - 0.5 * np.linalg.slogdet(A)[1]
        ok &= _close(fn(E, G, H, np.zeros(m)), exact, 1e-8)
    yield Property("exact for Gaussian energies (M = 1, 2, 3)", ok,
                   "for a quadratic energy the Laplace estimate is exact: compare with the Gaussian integral "
                   "in M dimensions (the 2 pi and the determinant)")
    # a skewed logistic posterior: must equal the reference (same mode, same Hessian)
    X = rng.normal(size=(25, 2))
    t = (X @ [1.0, -1.0] + rng.logistic(size=25) > 0).astype(float)
    E = lambda w: float(np.sum(log1pexp(X @ w) - t * (X @ w)) + 0.5 * w @ w)
    G = lambda w: X.T @ (sigmoid(X @ w) - t) + w
    H = lambda w: X.T @ ((sigmoid(X @ w) * (1 - sigmoid(X @ w)))[:, None] * X) + np.eye(2)
    ref = laplace_approximation(E, G, H, np.zeros(2)).log_evidence
    yield Property("matches the reference on a logistic-regression posterior (start away from the mode)",
                   _close(fn(E, G, H, np.array([3.0, 3.0])), ref, 1e-6),
                   "is the mode found (gradient zero) before the Hessian is evaluated?")


@exercise("laplace.moderated-output", "Probit approximation sigm(kappa(var) mu)",
          returns="an array of the same shape as mu")
def _moderated(fn):
    rng = np.random.default_rng(1)
    mu, var = rng.normal(0, 3, 50), rng.uniform(0, 20, 50)
    yield Property("matches sigm(kappa(var) mu) on random inputs", _close(fn(mu, var), moderated_sigmoid(mu, var), 1e-10),
                   "kappa(var) comes from matching the probit to the sigmoid: check where pi/8 and the variance enter")
    yield Property("reduces to sigm(mu) when var = 0", _close(fn(mu, np.zeros(50)), sigmoid(mu), 1e-12),
                   "with no uncertainty the predictive is the plug-in")
    big = np.array([800.0, -800.0])
    out = np.asarray(fn(big, np.zeros(2)), dtype=float)
    yield Property("finite for large |mu|", bool(np.all(np.isfinite(out))) and _close(out, [1.0, 0.0], 1e-12),
                   "use a numerically stable sigmoid")


@exercise("laplace.loo-predictive", "Leave-one-out predictive from posterior draws",
          returns="one probability per column of lik, shape (N,)")
def _loo(fn):
    rng = np.random.default_rng(2)
    lik = rng.uniform(0.05, 1.0, size=(400, 7))
    ref = 1.0 / np.mean(1.0 / lik, axis=0)
    yield Property("matches the leave-one-out predictive on random input", _close(fn(lik), ref, 1e-10),
                   "the arithmetic mean over draws is the full-data predictive: "
                   "how does leaving sample i out reweight each draw?")
    tiny = np.exp(-rng.uniform(712, 725, size=(50, 3)))   # 1/lik overflows float64
    logref = np.log(50) - np.logaddexp.reduce(-np.log(tiny), axis=0)
    out = np.asarray(fn(tiny), dtype=float)
    yield Property("no overflow for likelihoods near 1e-312 (log space)",
                   bool(np.all(np.isfinite(out)) and np.all(out >= 0)) and _close(np.log(np.maximum(out, 1e-320)), logref, 1e-6),
                   "1/lik overflows here: work with log lik throughout (log-sum-exp)")
