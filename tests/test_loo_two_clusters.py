"""Leave-one-out on designs whose rows form two clusters far apart in magnitude, against refits in exact arithmetic.

Half the rows 1e6..1e14 times the others is valid input. Where one cluster alone determines the fit (a tall
design: the large rows have as many rows as coefficients) the closed form and the refits stay accurate. Where
neither does (near-square: some directions come from the large rows, others from the small ones), the QR's
rounding in the large rows reached the small ones and the residuals came out 1e-8 to O(1) off, silently (session
21 left them "1e-5 off"; session 28 added a ``LinbookWarning``). Since session 29 such designs get every residual
by a refit on the raw design, rows sorted largest first (right to 3e-13 here), and no warning; least squares at
1e14 apart is still refused by the rank test (which is not row-graded) where the other rows look rank-deficient:
a clear error (since session 30 the rank test is row-graded and they are answered). ``hat_diagonal`` kept the
warning until session 30, which gives it the row-graded QR of the refits. The "weighted" variant
scales the large rows' targets with them (weighted least squares with two weights, written as row scaling by
``sqrt(w)``).

The oracle refits on the other ``N - 1`` rows by the (penalised) normal equations in 100-digit mpmath: exact for
these sizes (the refit's solution is a rational function of the inputs, far from singular here).
"""

import warnings

import mpmath
import numpy as np
import pytest

import linbook


def _refit_residuals(X, y, lam, fit_intercept):
    """``y_i - yhat_{-i}(x_i)`` by N refits in 100-digit arithmetic (unpenalised intercept)."""
    with mpmath.workdps(100):
        n, d = X.shape
        design = [[mpmath.mpf(float(v)) for v in row] + ([mpmath.mpf(1)] if fit_intercept else []) for row in X]
        target = [mpmath.mpf(float(v)) for v in y]
        out = []
        for i in range(n):
            A = mpmath.matrix([design[k] for k in range(n) if k != i])
            G = A.T * A
            for j in range(d):
                G[j, j] += lam
            w = mpmath.lu_solve(G, A.T * mpmath.matrix([target[k] for k in range(n) if k != i]))
            out.append(float(target[i] - sum(design[i][j] * w[j] for j in range(len(design[i])))))
    return np.array(out)


SHAPES = {"tall": (12, 3, 6), "near-square": (10, 8, 7), "near-square-b": (13, 10, 8)}   # (N, D, large rows)


def _problem(ratio, shape, weighted, seed=0):
    n, d, k = SHAPES[shape]
    rng = np.random.default_rng(seed)
    X, y = rng.standard_normal((n, d)), rng.standard_normal(n)
    large = rng.permutation(n)[:k]
    X[large] *= ratio
    if weighted:
        y[large] *= ratio
    return X, y


def _loo(X, y, lam, fit_intercept):
    """The residuals (None for a refusal), and whether a LinbookWarning about groups of rows was issued."""
    r = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if lam is None:
                r = linbook.loocv_least_squares(X, y, fit_intercept=fit_intercept, return_residuals=True)[1]
            else:
                r = linbook.loocv_ridge(X, y, lam, fit_intercept=fit_intercept, return_residuals=True)[1]
        except ValueError as error:           # a refusal (the rank test is not row-graded): with the warning only
            assert "do not determine its prediction" in str(error)
    warned = any(issubclass(w.category, linbook.base.LinbookWarning) and "groups" in str(w.message) for w in caught)
    return r, warned


CASES = [(ratio, shape, lam, fit_intercept, weighted)
         for ratio in (1e6, 1e10, 1e14) for shape in SHAPES for lam in (None, 1e-6, 1e2)
         for fit_intercept in (True, False) for weighted in (False, True)]


@pytest.mark.parametrize("ratio, shape, lam, fit_intercept, weighted", CASES,
                         ids=lambda v: f"{v:g}" if isinstance(v, float) else str(v))
def test_two_clusters_are_right(ratio, shape, lam, fit_intercept, weighted):
    """Right to 1e-9 and nothing said (before: up to O(1) off, with a warning); least squares (``lam`` None) may be
    refused with a clear error."""
    X, y = _problem(ratio, shape, weighted)
    r, warned = _loo(X, y, lam, fit_intercept)
    expected = _refit_residuals(X, y, 0.0 if lam is None else lam, fit_intercept)
    assert not warned
    if r is None:
        assert lam is None, "a refusal of a penalised fit (the penalty determines every prediction)"
        return
    np.testing.assert_allclose(r, expected, rtol=1e-9)


def test_hat_diagonal_of_two_clusters_is_accurate_without_a_warning():
    """The leverages of a near-square two-cluster design (rows 1e6..1e14 apart) came with a warning and were up to
    0.74 off (1e14 apart); since session 30 they come from the row-graded QR of the leave-one-out refits: within
    1e-13 of exact arithmetic, and no warning. A tall one, one far row and ordinary data stay as they were."""
    far = np.random.default_rng(1).standard_normal((9, 2))
    far[0] *= 1e12
    designs = [_problem(ratio, shape, False)[0] for ratio in (1e6, 1e14) for shape in SHAPES]
    for X in designs + [far, np.random.default_rng(2).standard_normal((6, 5))]:
        for fit_intercept in (True, False):
            with warnings.catch_warnings():
                warnings.simplefilter("error", linbook.base.LinbookWarning)
                h = linbook.hat_diagonal(X, fit_intercept=fit_intercept)
            np.testing.assert_allclose(h, _leverages(X, fit_intercept), rtol=0, atol=1e-13)


def _leverages(X, fit_intercept):
    """``h_ii = x_i^T (X^T X)^{-1} x_i`` in 100-digit arithmetic (``X`` of full column rank)."""
    with mpmath.workdps(100):
        rows = [[mpmath.mpf(float(v)) for v in row] + [mpmath.mpf(1)] * int(fit_intercept) for row in X]
        A = mpmath.matrix(rows)
        G = A.T * A
        return np.array([float((mpmath.matrix(r).T * mpmath.lu_solve(G, mpmath.matrix(r)))[0]) for r in rows])
