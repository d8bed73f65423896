"""Session 29: Lasso's ``converged_`` is true only at the optimum, whatever ``y``'s offset.

The old stopping rule was "duality gap <= tol ||yc||^2". Without an intercept, ``y ~ 1e6..1e14 + signal`` makes
``||yc||^2`` far larger than the objective the fit attains (``X w`` absorbs the offset), so that bound allowed
objectives thousands of times the minimum with ``converged_ = True`` (8 x 10 at 1e8: 5658 x scikit-learn's).
The rule is now relative to the objective ``P``, with a floor at what rounding leaves ``P`` undetermined, and the
gap is recomputed from an exactly rounded residual where the descent's own is noise.

Oracle: scikit-learn's ``Lasso`` at tol 1e-14 / max_iter 1e6 (its objective is ours / sum(s)), and for
``lam = 0`` numpy's ``lstsq``. The objectives are evaluated here in double-double (error-free products and
sums), so the comparison is not itself swamped by the offset.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sps
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Lasso as SkLasso

import linbook

EPS = np.finfo(float).eps


def _residual(X, y, w):
    """``y - X w`` rounded once: Dekker products and Knuth sums, column by column (an oracle independent of
    linbook's, which works on the scaled problem)."""
    def split(a):
        c = 134217729.0 * a
        hi = c - (c - a)
        return hi, a - hi

    hi, lo = y.astype(float).copy(), np.zeros(len(y))
    for j in range(X.shape[1]):
        a, b = X[:, j], -w[j]
        p = a * b
        (ah, al), (bh, bl) = split(a), split(np.full_like(a, b))
        e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
        s = hi + p
        bb = s - hi
        lo += (hi - (s - bb)) + (p - bb) + e
        hi = s
    return hi + lo


def _objective(X, y, w, lam, sw):
    r = _residual(X, y, w)
    return 0.5 * float(sw @ (r * r)) + lam * float(np.abs(w).sum())


def _floor(X, y, w, lam, sw):
    """What rounding of ``w`` and of the residual leaves ``P`` undetermined (the documented floor)."""
    s = np.sqrt(sw)
    r = s * _residual(X, y, w)
    norms = np.linalg.norm(s[:, None] * X, axis=0)
    scale = np.linalg.norm(s * y) + float(np.abs(w) @ norms)
    return 8 * EPS * (lam * np.abs(w).sum() + np.linalg.norm(r) * scale)


def _problem(seed, offset):
    """Random problems with no intercept whose ``y`` holds ``offset`` that ``X w`` can absorb: a constant column,
    columns with means 0.5..2, or plain Gaussian columns (wide ones interpolate it)."""
    rng = np.random.default_rng(seed)
    n, d = rng.choice([8, 30, 100]), rng.choice([2, 4, 10])
    X = rng.standard_normal((n, d))
    if seed % 3 == 0:
        X[:, 0] = 1.0
    elif seed % 3 == 1:
        X += rng.uniform(0.5, 2.0, d)
    y = X @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n) + offset
    lam = 10.0 ** rng.uniform(-6, 1)
    return X, y, lam


def _fit(X, y, lam, sw, sparse, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = linbook.Lasso(lam=lam, fit_intercept=False, **kw).fit(sps.csr_matrix(X) if sparse else X, y,
                                                                    sample_weight=sw)
    warned = any(issubclass(w.category, ConvergenceWarning) for w in caught)
    return m, warned


def _sklearn(X, y, lam, sw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return SkLasso(alpha=lam / sw.sum(), fit_intercept=False, tol=1e-14, max_iter=10 ** 6).fit(
            X, y, sample_weight=sw).coef_


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("offset", [1e6, 1e8, 1e10, 1e12, 1e14])
def test_converged_only_at_the_minimum_with_an_offset_y(offset, sparse, weighted):
    """Over 30 problems per configuration: where ``converged_`` is true the objective is within
    ``max(1e-8 P, floor)`` of the better of linbook's and scikit-learn's; where it is false a
    ``ConvergenceWarning`` was given. Old main: converged with objectives up to 5658 x the minimum."""
    bad = []
    for seed in range(30):
        X, y, lam = _problem(seed, offset)
        sw = np.random.default_rng(seed + 1000).uniform(0.2, 5.0, len(y)) if weighted else np.ones(len(y))
        m, warned = _fit(X, y, lam, sw if weighted else None, sparse)
        assert m.converged_ != warned, "converged_ and the ConvergenceWarning disagree"
        if not m.converged_:
            continue
        p_lin = _objective(X, y, m.coef_, lam, sw)
        p_best = min(p_lin, _objective(X, y, _sklearn(X, y, lam, sw), lam, sw))
        allowed = max(1e-8 * p_best, _floor(X, y, m.coef_, lam, sw))
        if p_lin - p_best > allowed:
            bad.append((seed, p_lin, p_best, allowed))
    assert not bad, f"converged_ = True away from the minimum (seed, P, best P, allowed): {bad}"


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("offset", [1e8, 1e12])
def test_wide_problem_with_offset_reaches_the_minimum(offset, sparse):
    """The finding: 8 x 10 Gaussian X, no intercept, ``y ~ offset + signal``, a small penalty. Old main stopped
    after its first sweeps with converged_ = True at an objective thousands of times the minimum."""
    rng = np.random.default_rng(50)
    X = rng.standard_normal((8, 10))
    y = X @ rng.standard_normal(10) + 0.3 * rng.standard_normal(8) + offset
    lam = 1.26e-6 * offset / 1e8
    sw = np.ones(8)
    m, warned = _fit(X, y, lam, None, sparse, max_iter=100000)
    p_lin = _objective(X, y, m.coef_, lam, sw)
    p_best = min(p_lin, _objective(X, y, _sklearn(X, y, lam, sw), lam, sw))
    assert m.converged_ and not warned
    assert p_lin - p_best <= max(1e-8 * p_best, _floor(X, y, m.coef_, lam, sw))
    assert 0.0 <= m.dual_gap_ <= max(m.tol, _floor(X, y, m.coef_, lam, sw) / p_lin)


@pytest.mark.parametrize("offset", [1e6, 1e10, 1e14])
def test_least_squares_branch_with_an_offset_y(offset):
    """``lam = 0``: the normal equations are tested relative to the residual (not ``||yc||``); the objective
    equals ``lstsq``'s to its floor."""
    rng = np.random.default_rng(7)
    X = rng.standard_normal((40, 3))
    X[:, 0] = 1.0
    y = X @ rng.standard_normal(3) + 0.3 * rng.standard_normal(40) + offset
    sw = np.ones(40)
    m, warned = _fit(X, y, 0.0, None, False)
    w_ref = np.linalg.lstsq(X, y, rcond=None)[0]
    p_lin, p_ref = _objective(X, y, m.coef_, 0.0, sw), _objective(X, y, w_ref, 0.0, sw)
    assert m.converged_ and not warned
    assert p_lin - min(p_lin, p_ref) <= max(1e-8 * p_ref, _floor(X, y, m.coef_, 0.0, sw))


def test_dual_gap_is_relative_to_the_objective():
    """``dual_gap_`` is the gap over ``P`` (the stopping rule's scale): after one sweep of an ordinary problem
    with ``y ~ 1e6`` and no intercept it is the duality gap there (computed here from the double-double
    residual) divided by the objective, not by ``||yc||^2`` (old main: 1e-8 of it)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 5))
    X[:, 1] = X[:, 0] + 0.01 * X[:, 1]
    y = X @ np.ones(5) + rng.standard_normal(200) + 1e6
    lam = 1.0
    with pytest.warns(ConvergenceWarning, match="relative duality gap"):
        m = linbook.Lasso(lam=lam, max_iter=1, fit_intercept=False).fit(X, y)
    w = m.coef_
    r = _residual(X, y, w)
    g = X.T @ r
    alpha = min(1.0, lam / np.abs(g).max())
    P = 0.5 * (r @ r) + lam * np.abs(w).sum()
    gap = 0.5 * (1 - alpha) ** 2 * (r @ r) + lam * np.abs(w).sum() - alpha * (w @ g)
    assert gap > 1e-6 * P            # (a point the rule must reject)
    np.testing.assert_allclose(m.dual_gap_, gap / P, rtol=1e-3)
    # the gap of any point bounds its distance to the minimum: P - P* <= dual_gap_ P
    best = linbook.Lasso(lam=lam, fit_intercept=False, max_iter=100000).fit(X, y)
    assert P - _objective(X, y, best.coef_, lam, np.ones(200)) <= m.dual_gap_ * P * (1 + 1e-9)
