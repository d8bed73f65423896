"""Logistic regression: linbook's IRLS / L-BFGS against scikit-learn, same optimum.

Targets (issue 4): binary IRLS 200k x 100 <= 0.6 x sklearn newton-cholesky, extra memory
< 5 % of X; badly conditioned data >= 10x faster than sklearn lbfgs; multinomial
100k x 50, 10 classes <= 0.6 x sklearn lbfgs; a 10^6 x 100 binary fit completes.
Both sides are run to (nearly) the same optimum; ``compare`` prints the final penalised
objective of each and the largest coefficient difference.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
from sklearn.linear_model import LogisticRegression as SKLogReg

import linbook
from benchmarks.run import Case


def _binary(n, d, seed=0, conditioned=False):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    if conditioned:
        # correlated features (rho = 0.9) scaled from 0.1 to 10
        X = np.sqrt(0.9) * rng.standard_normal((n, 1)) + np.sqrt(0.1) * X
        X *= np.logspace(-1, 1, d)
        w = rng.standard_normal(d) / np.logspace(-1, 1, d) / np.sqrt(d)
    else:
        w = 2 * rng.standard_normal(d) / np.sqrt(d)
    y = (rng.random(n) < linbook.sigmoid(X @ w + 0.5)).astype(float)
    return X, y


def _objective(X, y, coef, intercept, lam):
    """Penalised summed NLL (binary or multinomial, symmetric penalty) of any fitted coefficients."""
    A = X @ coef.T + intercept
    if coef.shape[0] == 1:
        z = A[:, 0]
        nll = np.sum(linbook.log1pexp(z) - y * z)
    else:
        yi = y.astype(int)
        nll = np.sum(linbook.logsumexp(A, axis=1) - A[np.arange(len(yi)), yi])
    return nll + 0.5 * lam * np.sum(coef ** 2)


def _grad_norm(X, y, coef, intercept, lam):
    """max |gradient| of the penalised binary objective (0 at the exact optimum)."""
    r = linbook.sigmoid(X @ coef[0] + intercept[0]) - y
    return max(np.max(np.abs(X.T @ r + lam * coef[0])), abs(r.sum()))


def _quality(lam):
    def compare(data, lin, ref):
        X, y = data
        f1 = _objective(X, y, lin.coef_, lin.intercept_, lam)
        f2 = _objective(X, y, ref.coef_, ref.intercept_, lam)
        diff = np.max(np.abs(lin.coef_ - ref.coef_))
        g1 = _grad_norm(X, y, lin.coef_, lin.intercept_, lam)
        g2 = _grad_norm(X, y, ref.coef_, ref.intercept_, lam)
        return (f"obj linbook {f1:.10g} vs ref {f2:.10g}; max|coef diff| {diff:.1e}; "
                f"max|grad| {g1:.1e} vs {g2:.1e}")
    return compare


def _with_memory(lam):
    base = _quality(lam)

    def compare(data, lin, ref):
        X, y = data
        tracemalloc.start()
        linbook.LogisticRegression(lam=lam).fit(X, y)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return base(data, lin, ref) + f"; linbook extra memory {100 * peak / X.nbytes:.1f}% of X"
    return compare


def _multi(n=100_000, d=50, C=10, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    W = rng.standard_normal((C, d)) / np.sqrt(d)
    P = linbook.softmax(X @ W.T * 2, axis=1)
    u = rng.random((n, 1))
    y = (u > np.cumsum(P, axis=1)).sum(1).astype(float)
    return X, y


def _lin_multi(data):
    # Same BLAS threading and the same tol (1e-7, on the gradient of the mean loss) as the
    # reference; the quality column shows both reach the same objective to 10 digits.
    return linbook.LogisticRegression(lam=1.0, solver="lbfgs", tol=1e-7).fit(*data)


def _ref_multi(data):
    return SKLogReg(C=1.0, solver="lbfgs", tol=1e-7, max_iter=10_000).fit(*data)


def _multi_quality(data, lin, ref):
    X, y = data
    # sklearn's intercepts are free up to a shift: compare centred
    ref_b = ref.intercept_ - ref.intercept_.mean()
    f1 = _objective(X, y, lin.coef_, lin.intercept_, 1.0)
    f2 = _objective(X, y, ref.coef_, ref_b, 1.0)
    diff = np.max(np.abs(lin.coef_ - ref.coef_))
    return (f"obj linbook {f1:.10g} vs ref {f2:.10g}; max|coef diff| {diff:.1e}; "
            f"iterations {lin.n_iter_} vs {int(np.max(ref.n_iter_))}")


CASES = [
    Case("logistic binary IRLS 200k x 100",
         setup=lambda: _binary(200_000, 100),
         linbook=lambda data: linbook.LogisticRegression(lam=1.0).fit(*data),
         reference=lambda data: SKLogReg(C=1.0, solver="newton-cholesky", tol=1e-8).fit(*data),
         reference_name="sklearn newton-cholesky", target=0.6, compare=_with_memory(1.0)),
    Case("logistic ill-conditioned IRLS 50k x 40",
         setup=lambda: _binary(50_000, 40, conditioned=True),
         linbook=lambda data: linbook.LogisticRegression(lam=1e-2).fit(*data),
         reference=lambda data: SKLogReg(C=1e2, solver="lbfgs", tol=1e-10, max_iter=100_000).fit(*data),
         reference_name="sklearn lbfgs", target=0.1, compare=_quality(1e-2), repeat=2),
    Case("logistic multinomial L-BFGS 100k x 50, 10 classes",
         setup=_multi, linbook=_lin_multi, reference=_ref_multi,
         reference_name="sklearn lbfgs", target=0.6, compare=_multi_quality, repeat=2),
    Case("logistic binary IRLS 1e6 x 100 (completes)",
         setup=lambda: _binary(1_000_000, 100, seed=1),
         linbook=lambda data: linbook.LogisticRegression(lam=1.0).fit(*data),
         reference=lambda data: SKLogReg(C=1.0, solver="newton-cholesky", tol=1e-8).fit(*data),
         reference_name="sklearn newton-cholesky", target=None, compare=_quality(1.0), repeat=1),
]
