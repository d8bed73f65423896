"""Self-checks for the exercises of the chapter "Estimation: MLE, MAP and Bayes".

Derived in: chapter "Estimation: MLE, MAP and Bayes" § "Exercises".
"""

from __future__ import annotations

from functools import partial

import numpy as np

from linbook.exercises import Property, close, exercise, has_shape, is_tuple


_close = partial(close, rtol=1e-8, atol=1e-8)  # this chapter's default tolerance


@exercise("estimation.gaussian-mle", "Maximum-likelihood mean and covariance of a Gaussian",
          returns="(mean, cov): mean of shape (D,), cov of shape (D, D)")
def _gaussian_mle(fn):
    """``fn(X) -> (mean (D,), cov (D, D))`` for ``X`` of shape (N, D)."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(20, 3)) @ np.array([[1.0, 0, 0], [0.4, 1.2, 0], [-0.3, 0.2, 0.7]]) + [1, -2, 0.5]
    out = fn(X.copy())
    yield Property("returns a pair (mean, cov)", is_tuple(out, 2), "return (mean, cov)")
    m, S = np.asarray(out[0], dtype=float), np.asarray(out[1], dtype=float)
    ref_m = X.mean(0)
    R = X - ref_m
    ref_S = R.T @ R / X.shape[0]
    yield Property("returns a mean of shape (D,) and a covariance of shape (D, D)",
                   has_shape(m, (3,)) and has_shape(S, (3, 3)),
                   f"got shapes {m.shape} and {S.shape} for X of shape (20, 3)")
    yield Property("the mean is the sample mean", _close(m.ravel(), ref_m) if m.size == 3 else False,
                   "set the derivative of the log-likelihood with respect to mu to zero")
    ok_shape = S.shape == (3, 3)
    yield Property("the covariance is symmetric", ok_shape and _close(S, S.T), "")
    if ok_shape and _close(S * (X.shape[0] - 1) / X.shape[0], ref_S):
        hint = "you divide by N - 1: that is the unbiased estimate, not the maximiser of the likelihood"
    else:
        hint = "differentiate the log-likelihood with respect to the covariance (the trace trick) and solve"
    yield Property("the covariance maximises the likelihood", ok_shape and _close(S, ref_S), hint)
    X1 = rng.normal(size=(7, 1))
    m1, S1 = fn(X1.copy())
    S1 = np.asarray(S1, dtype=float)
    yield Property("works for D = 1 (returns a 1x1 covariance)",
                   S1.shape == (1, 1) and _close(S1.ravel(), [np.var(X1)]) and _close(np.ravel(m1), [X1.mean()]),
                   f"for X of shape (7, 1) the covariance must have shape (1, 1); got {S1.shape} "
                   "(np.cov drops dimensions for a single variable)")


@exercise("estimation.beta-bernoulli-predictive", "Posterior predictive of the beta-Bernoulli model",
          returns="a probability (one number)")
def _beta_bernoulli_predictive(fn):
    """``fn(x, a, b) -> p(x_new = 1 | x)`` under the prior Beta(a, b)."""
    rng = np.random.default_rng(12)
    cases = [(rng.binomial(1, 0.3, size=n), a, b) for n, a, b in [(10, 1.0, 1.0), (25, 2.0, 5.0), (3, 0.5, 0.5)]]
    good = all(abs(float(fn(x.copy(), a, b)) - (a + x.sum()) / (a + b + x.size)) < 1e-10 for x, a, b in cases)
    yield Property("matches the exact predictive on random data", good,
                   "average the probability of a 1 over the posterior of theta (not the prior, not one value of theta)")
    p0 = float(fn(np.zeros(5), 1.0, 1.0))
    yield Property("never predicts probability 0 after only zeros", 0 < p0 < 1 and abs(p0 - 1 / 7) < 1e-10,
                   "a plug-in of the MLE or of the MAP gives 0 here; the predictive averages over theta")
    pe = float(fn(np.array([], dtype=float), 2.0, 3.0))
    yield Property("with no data it is the prior mean", abs(pe - 0.4) < 1e-10,
                   "with N = 0 the posterior is the prior")
    big = (np.arange(10000) % 4 == 0).astype(float)
    yield Property("approaches the fraction of ones as N grows", abs(float(fn(big, 3.0, 3.0)) - 0.25) < 1e-3, "")


@exercise("estimation.ridge-map", "MAP linear regression with a Gaussian prior",
          returns="w_MAP of shape (D,)")
def _ridge_map(fn):
    """``fn(X, y, noise_var, prior_var) -> w_MAP``."""
    rng = np.random.default_rng(13)
    for n, d, s2, t2 in [(30, 3, 0.5, 0.2), (12, 5, 2.0, 1.0), (50, 2, 0.1, 4.0)]:
        X = rng.normal(size=(n, d))
        y = X @ rng.normal(size=d) + np.sqrt(s2) * rng.normal(size=n)
        w = fn(X.copy(), y.copy(), s2, t2)
        ref = np.linalg.solve(X.T @ X + (s2 / t2) * np.eye(d), X.T @ y)
        ok = _close(w, ref, 1e-6)
        if not ok:
            hint = "write down -log p(w | y) with both variances and set its gradient to zero"
            for lam in (1 / t2, 1 / (2 * t2), s2 / (2 * t2), 2 * s2 / t2, 0.0):
                if _close(w, np.linalg.solve(X.T @ X + lam * np.eye(d), X.T @ y), 1e-6):
                    hint = "your penalty has the wrong strength: check the factor 1/2 and the noise variance"
            yield Property(f"maximises the posterior (N={n}, D={d})", ok, hint)
            return
    yield Property("maximises the posterior on random problems", True)
    X = rng.normal(size=(20, 3))
    y = X @ [1.0, 2.0, 3.0]
    w = fn(X, y, 1.0, 1e8)
    yield Property("a very wide prior gives the least-squares fit", _close(w, [1.0, 2.0, 3.0], 1e-5),
                   "as prior_var grows the penalty must vanish")
