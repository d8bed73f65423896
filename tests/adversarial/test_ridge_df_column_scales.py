"""``Ridge.df_`` with columns in units many decades apart, against the trace in 60-digit arithmetic.

``df_ = tr(G (G + lam I)^{-1})`` for the centred (weighted) Gram matrix ``G``: each direction adds
``e / (e + lam)``. With columns of 1e6 and 1e-2 beside each other the eigenvalues of ``G`` span 1e13 to 1e-4,
and ``eigvalsh`` resolves them only down to ``eps ||G|| ~ 1e-3``: the small columns' share (1.2e-5 here) was
lost, ``df_`` 0.99999999999 where it is 1.0000122527, silently (and with it ``n_params_``, ``aic``, ``bic``).
``df_`` now comes from a solve of the equilibrated equations where they pass the Cholesky path's condition test.
"""

import mpmath
import numpy as np
import pytest

import linbook


def _exact_df(X, lam, fit_intercept, sw):
    with mpmath.workdps(60):
        n, d = X.shape
        W = [mpmath.mpf(float(s)) for s in sw]
        M = [[mpmath.mpf(float(v)) for v in row] for row in X]
        if fit_intercept:
            means = [sum(W[i] * M[i][j] for i in range(n)) / sum(W) for j in range(d)]
            M = [[M[i][j] - means[j] for j in range(d)] for i in range(n)]
        G = mpmath.matrix(d, d)
        for a in range(d):
            for b in range(d):
                G[a, b] = sum(W[i] * M[i][a] * M[i][b] for i in range(n))
        A = G + mpmath.mpf(lam) * mpmath.eye(d)
        return float(sum(mpmath.lu_solve(A, G[:, j])[j] for j in range(d)))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("lam", [0.01, 100.0])
@pytest.mark.parametrize("seed", [0, 1])
def test_df_with_columns_many_decades_apart(seed, lam, fit_intercept, weighted):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((12, 5)) * np.array([1e-5, 1e6, 1e-2, 1e-2, 1e-7])
    y = rng.standard_normal(12)
    sw = 10.0 ** rng.uniform(-2, 2, 12) if weighted else np.ones(12)
    model = linbook.Ridge(lam=lam, fit_intercept=fit_intercept).fit(X, y, sample_weight=sw if weighted else None)
    exact = _exact_df(X, lam, fit_intercept, sw)
    assert model.df_ == pytest.approx(exact, rel=1e-10)
    assert model.n_params_ == pytest.approx(exact + fit_intercept, rel=1e-10)
