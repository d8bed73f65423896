"""Ridge's iterative solvers on sparse ``X`` (conjugate gradients, LSQR) give the dense fit, down to ``lam = 1e-300``.

Three defects on wide sparse ``X`` with a tiny penalty (all fixed):

* CG is preconditioned by the penalty when ``D > N``; at ``lam = 1e-300`` its reciprocal overflowed, CG
  stopped before its first step with a vector of ~1e300s, and the acceptance test compared ``inf <= inf``:
  predictions off by 1e300, no warning.
* LSQR damps each (scaled) column by its own ``sqrt(pen_j)``; a damping below the rounding of ``X v``
  leaves LSQR at the minimum-norm ``v``, and ``v`` is scaled per column, so the coefficients are those
  of another problem (norm 71 where the ridge limit, the minimum-norm interpolant, has 1.45). One
  uniform damping on ``X Q^(1/2)`` alone would lose a column of 1e200 beside ordinary ones (LSQR then
  stops before resolving the ordinary columns); fixed by a second step that keeps LSQR's fit and moves
  within it to the least ``||w||`` (``linbook.linear.ridge._least_norm_in_fit_class``).
* ``df_`` after LSQR solved with ``G + diag(pen)``: ``LinAlgError`` (singular) for wide ``X`` and such ``lam``.

Oracle: the same model on the dense array (its ``N x N`` Cholesky or SVD). Columns of very different
largest entries (one column holds a single entry of 5e-4) make the per-column scales differ.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import linbook.linear.ridge as ridge_module
from linbook import Ridge

LAMS = [1e-300, 1e-200, 1e-30, 1e-3]


def _data(seed=0, n=60, d=400):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.04, format="lil", random_state=rng, data_rvs=rng.standard_normal)
    X[:, 5] = 0.0
    X[7, 5] = 5e-4                          # a column with one small stored entry
    X = X.tocsr()
    y = X @ np.r_[rng.standard_normal(10), np.zeros(d - 10)] + 0.3 + 0.5 * rng.standard_normal(n)
    weights = rng.integers(0, 4, n).astype(float)      # rows of weight 0 among them
    return X, y, weights


def _fits(X, y, lam, sample_weight):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return (Ridge(lam=lam).fit(X, y, sample_weight=sample_weight),
                Ridge(lam=lam).fit(X.toarray(), y, sample_weight=sample_weight))


def _assert_same_fit(sparse_fit, dense_fit, X):
    scale = np.max(np.abs(dense_fit.coef_))
    assert np.all(np.isfinite(sparse_fit.coef_)), sparse_fit.solver_
    assert np.max(np.abs(sparse_fit.coef_ - dense_fit.coef_)) <= 1e-6 * scale, sparse_fit.solver_
    assert abs(sparse_fit.intercept_ - dense_fit.intercept_) <= 1e-6 * max(scale, abs(dense_fit.intercept_))
    p = dense_fit.predict(X)
    assert np.max(np.abs(sparse_fit.predict(X) - p)) <= 1e-6 * np.max(np.abs(p))
    assert sparse_fit.df_ == pytest.approx(dense_fit.df_, rel=1e-6), sparse_fit.solver_


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("lam", [1e-30, 1e-3])
def test_sparse_ridge_by_cg_gives_the_dense_fit(lam, weighted):
    X, y, weights = _data()
    sparse_fit, dense_fit = _fits(X, y, lam, weights if weighted else None)
    assert sparse_fit.solver_ == "cg"
    _assert_same_fit(sparse_fit, dense_fit, X)


@pytest.mark.parametrize("lam", [1e-300, 1e-200])
def test_cg_that_overflowed_is_not_accepted(lam):
    """Before: ``solver_ == "cg"`` with predictions of ~1e300. Now CG declines and LSQR solves: the
    predictions (unique on the training rows: every row has weight 1) and ``df_`` are the dense fit's."""
    X, y, _ = _data()
    sparse_fit, dense_fit = _fits(X, y, lam, None)
    p = dense_fit.predict(X)
    assert np.max(np.abs(sparse_fit.predict(X) - p)) <= 1e-6 * np.max(np.abs(p)), sparse_fit.solver_
    assert sparse_fit.df_ == pytest.approx(dense_fit.df_, rel=1e-6)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("lam", LAMS)
def test_df_after_lsqr_with_a_tiny_penalty(lam, weighted, monkeypatch):
    """CG not started (its budget 0): the Gram's Cholesky fails for these ``lam``, and LSQR solves; ``df_``
    raised LinAlgError (a solve with the singular ``G + diag(pen)``)."""
    monkeypatch.setattr(ridge_module, "sparse_cg_budget", lambda X: 0)
    X, y, weights = _data(seed=1)
    sparse_fit, dense_fit = _fits(X, y, lam, weights if weighted else None)
    assert sparse_fit.df_ == pytest.approx(dense_fit.df_, rel=1e-6), sparse_fit.solver_


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("lam", [1e-300, 1e-30])
def test_lsqr_with_a_tiny_penalty_reaches_the_ridge_limit(lam, weighted, monkeypatch):
    monkeypatch.setattr(ridge_module, "sparse_cg_budget", lambda X: 0)
    X, y, weights = _data(seed=1)
    sparse_fit, dense_fit = _fits(X, y, lam, weights if weighted else None)
    assert sparse_fit.solver_ == "lsqr"
    _assert_same_fit(sparse_fit, dense_fit, X)
