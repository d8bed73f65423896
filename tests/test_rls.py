"""RecursiveLeastSquares: the chunked (Woodbury) update against the row-by-row recursion and the batch solution."""

import numpy as np
import pytest
from sklearn.linear_model import Ridge

import linbook.online.rls as rls
from linbook.base import DivergenceError
from linbook.online import RecursiveLeastSquares


def data(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * rng.uniform(0.5, 3.0, d)
    y = X @ rng.standard_normal(d) + 2.0 + 0.3 * rng.standard_normal(n)
    s = rng.uniform(0.0, 2.0, n)
    s[::7] = 0.0                                         # zero weights leave rows out
    return X, y, s


def stream(model, X, y, s, chunk):
    """The first 100 rows (enough to pin the 41 parameters down without a prior), then chunks."""
    model.partial_fit(X[:100], y[:100], sample_weight=s[:100])
    for i in range(100, len(y), chunk):
        model.partial_fit(X[i:i + chunk], y[i:i + chunk], sample_weight=s[i:i + chunk])
    return model


@pytest.mark.parametrize("chunk", [3, 17, 40, 100])
@pytest.mark.parametrize("prior_precision", [0.0, 0.5])
def test_woodbury_chunks_equal_rank_one_recursion_and_batch(monkeypatch, chunk, prior_precision):
    X, y, s = data(600, 40, seed=chunk)                 # 41 parameters: the Woodbury path
    blocks = stream(RecursiveLeastSquares(prior_precision=prior_precision), X, y, s, chunk)
    monkeypatch.setattr(rls, "_WOODBURY_MIN_PARAMS", 10 ** 9)
    rows = stream(RecursiveLeastSquares(prior_precision=prior_precision), X, y, s, chunk)
    np.testing.assert_allclose(blocks.coef_, rows.coef_, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(blocks.intercept_, rows.intercept_, rtol=1e-9)
    np.testing.assert_allclose(blocks.P_, rows.P_, rtol=1e-7, atol=1e-12)
    batch = Ridge(alpha=prior_precision, solver="cholesky").fit(X, y, sample_weight=s) if prior_precision \
        else Ridge(alpha=0.0, solver="svd").fit(X, y, sample_weight=s)
    np.testing.assert_allclose(blocks.coef_, batch.coef_, rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(blocks.intercept_, batch.intercept_, rtol=1e-8)


def test_woodbury_block_is_the_rank_one_step_for_one_row():
    rng = np.random.default_rng(3)
    B = rng.standard_normal((5, 5))
    P, m = B @ B.T + np.eye(5), rng.standard_normal(5)
    x, y, s = rng.standard_normal(5), 0.7, 1.5
    P1, m1 = rls._woodbury(P, m, x[None, :], np.array([y]), np.array([s]))
    d = 1 / s + x @ P @ x                                # the docstring's Sherman-Morrison step
    k = P @ x / d
    np.testing.assert_allclose(m1, m + k * (y - x @ m), rtol=1e-12)
    np.testing.assert_allclose(P1, P - np.outer(k, x @ P), rtol=1e-12, atol=1e-14)


def test_failed_chunk_leaves_the_model_as_it_was():
    X, y, s = data(300, 40, seed=4)
    m = RecursiveLeastSquares().partial_fit(X[:200], y[:200])
    before = (m.coef_.copy(), m.P_.copy(), m.n_samples_seen_, m._P.copy(), m._m.copy())
    with pytest.raises(ValueError):
        m.partial_fit(np.where(np.arange(40) == 3, np.nan, X[200:260]), y[200:260])
    with pytest.raises(DivergenceError):                 # a row of norm ~1e200 breaks P's definiteness
        m.partial_fit(X[200:260] * 1e200, y[200:260])
    np.testing.assert_array_equal(m.coef_, before[0])
    np.testing.assert_array_equal(m.P_, before[1])
    assert m.n_samples_seen_ == before[2]
    np.testing.assert_array_equal(m._P, before[3])
    np.testing.assert_array_equal(m._m, before[4])
    m.partial_fit(X[200:], y[200:])                      # and it continues from there
    np.testing.assert_allclose(m.coef_, RecursiveLeastSquares().fit(X, y).coef_, rtol=1e-9, atol=1e-10)


def test_later_chunks_are_still_checked():
    X, y, _ = data(100, 3, seed=5)
    m = RecursiveLeastSquares().partial_fit(X[:50], y[:50])
    with pytest.raises(ValueError, match="features"):
        m.partial_fit(X[50:, :2], y[50:])
    bad = X[50:].copy()
    bad[4, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        m.partial_fit(bad, y[50:])
    with pytest.raises(ValueError, match="NaN"):
        m.partial_fit(X[50:], np.where(np.arange(50) == 2, np.nan, y[50:]))
