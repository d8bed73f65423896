"""RecursiveLeastSquares with a far row (or a far chunk, or a far weight) at any position of a stream, against the
weighted ridge minimiser at 400 digits (mpmath, the helper of test_rls_far_rows).

Before session 29, a row far larger than those before it (its ``s z_j^2`` above 1e4 times their ``A_jj``) that
arrived after the first rows were released went into ``A + s z z^T``, which holds the earlier rows' share only to
the far row's rounding: with one feature and an intercept, a row 1e20 times the others gave an intercept ~600
times too large, 1e57 off at 1e75, silently (83 of 1008 streams of the first sweep). Four equal far rows in one
chunk were not seen by the one-row test of ``fit`` (an intercept 1e45 off), and LAPACK's QR without row
interchanges lost the intercept beside rows of 1e150 and a weight of 1e147. Now such a chunk, and every later one,
is absorbed by Householder QR (column pivoting, row interchanges) of a square root of ``A`` and the rows; where a
direction is decided by rounding (equal columns beside far rows) it warns.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from linbook.online import RecursiveLeastSquares

from .test_rls_far_rows import _exact


def _problem(seed, far, pos, n=60, d=1, kind="row", k=1):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = X @ rng.standard_normal(d) + 0.5 + 0.1 * rng.standard_normal(n)
    sw = rng.uniform(0.5, 2.0, n)
    if kind == "row":
        X[pos:pos + k] *= far
        y[pos:pos + k] = far * rng.standard_normal(k)
    else:
        sw[pos] = far
    return X, y, sw


def _stream(model, X, y, sw, chunks):
    with warnings.catch_warnings():
        warnings.simplefilter("error")             # no warning: the answer is the minimiser
        warnings.filterwarnings("ignore", "The design seen so far")    # the first rows alone: rank deficient
        if chunks == "fit":
            return model.fit(X, y, sample_weight=sw)
        if chunks == "fit+":                       # fit, then the rest in one chunk
            model.fit(X[:20], y[:20], sample_weight=sw[:20])
            return model.partial_fit(X[20:], y[20:], sample_weight=sw[20:])
        i = k = 0
        while i < len(y):
            c = chunks[k % len(chunks)]
            model.partial_fit(X[i:i + c], y[i:i + c], sample_weight=sw[i:i + c])
            i, k = i + c, k + 1
    return model


def _params(model):
    return np.r_[model.coef_, model.intercept_] if model.fit_intercept else model.coef_


CHUNKS = [(1,), (7,), (3, 1, 10), (25, 35), "fit+"]


@pytest.mark.parametrize("far", [1e8, 1e20, 1e75, 1e150], ids=lambda f: f"far{f:g}")
@pytest.mark.parametrize("pos", [25, 59], ids=["middle", "last"])
@pytest.mark.parametrize("d", [1, 3])
@pytest.mark.parametrize("alpha, intercept", [(0.0, True), (0.7, True), (0.7, False)])
@pytest.mark.parametrize("chunks", CHUNKS, ids=str)
def test_a_far_row_after_the_first_rows_gives_the_minimiser(far, pos, d, alpha, intercept, chunks):
    X, y, sw = _problem(pos + d, far, pos, d=d)
    model = _stream(RecursiveLeastSquares(prior_precision=alpha, fit_intercept=intercept), X, y, sw, chunks)
    np.testing.assert_allclose(_params(model), _exact(X, y, sw, alpha, intercept), rtol=1e-9)
    assert model.n_samples_seen_ == len(y)


@pytest.mark.parametrize("far", [1e8, 1e40, 1e75], ids=lambda f: f"w{f:g}")
@pytest.mark.parametrize("pos", [0, 25, 59], ids=["first", "middle", "last"])
@pytest.mark.parametrize("chunks", CHUNKS + ["fit"], ids=str)
def test_a_far_weight_anywhere_gives_the_minimiser(far, pos, chunks):
    X, y, sw = _problem(7, far, pos, d=3, kind="w")
    model = _stream(RecursiveLeastSquares(prior_precision=0.7, fit_intercept=False), X, y, sw, chunks)
    np.testing.assert_allclose(_params(model), _exact(X, y, sw, 0.7, False), rtol=1e-9)


@pytest.mark.parametrize("far", [1e20, 1e93], ids=lambda f: f"far{f:g}")
@pytest.mark.parametrize("pos", [0, 18, 40], ids=["first", "middle", "late"])
@pytest.mark.parametrize("chunks", [(1,), (7,), (100,), "fit"], ids=str)
def test_a_far_chunk_of_four_equal_rows_gives_the_minimiser(far, pos, chunks):
    """Four far rows together: none holds its column alone, so the old one-row test of a first chunk missed
    them (``fit``: intercept 8.5e76 for 4.5e31 at 1e93)."""
    X, y, sw = _problem(92, far, pos, n=51, d=4, k=4)
    model = _stream(RecursiveLeastSquares(prior_precision=0.7), X, y, sw, chunks)
    np.testing.assert_allclose(_params(model), _exact(X, y, sw, 0.7, True), rtol=1e-9)


def test_far_rows_and_a_far_weight_in_other_columns_keep_the_intercept():
    """Three rows 1e150 times the others in ``x`` (they cannot all be fitted) and a row of weight 2.8e147, large
    only in the intercept's column: the intercept (456) comes from the far rows' residual over that weight.
    LAPACK's QR (no row interchanges) reflected the far residual onto the pivot's row and gave 2.5."""
    rng = np.random.default_rng(202)
    X = rng.standard_normal((33, 2))
    y = X @ rng.standard_normal(2) + 0.5 + 0.1 * rng.standard_normal(33)
    sw = rng.uniform(0.5, 2.0, 33)
    sw[6] = 2.8e147
    X[11:14] *= 9e149
    y[11:14] = 9e149 * rng.standard_normal(3)
    expected = _exact(X, y, sw, 0.0, True)
    assert abs(expected[-1]) > 100                  # the far rows' share of the intercept is not negligible
    for chunks in ["fit", (100,), (7,)]:
        model = _stream(RecursiveLeastSquares(), X, y, sw, chunks)
        np.testing.assert_allclose(_params(model), expected, rtol=1e-9)


@pytest.mark.parametrize("chunks", [(1,), (100,)], ids=str)
def test_the_posterior_covariance_after_a_late_far_row(chunks):
    """``P_ = A^-1`` from the square root, entries to 1e-9 of its largest (oracle: mpmath)."""
    import mpmath as mp

    X, y, sw = _problem(3, 1e20, 40, d=2)
    model = _stream(RecursiveLeastSquares(prior_precision=1.0, fit_intercept=False), X, y, sw, chunks)
    with mp.workdps(400):
        Z = mp.matrix(X.tolist())
        S = mp.diag([mp.mpf(float(s)) for s in sw])
        exact = (Z.T * S * Z + mp.eye(2)) ** -1
        exact = np.array([[float(exact[i, j]) for j in range(2)] for i in range(2)])
    np.testing.assert_allclose(model.P_, exact, rtol=0, atol=1e-9 * np.abs(exact).max())


def test_equal_columns_beside_far_rows_warn_that_the_split_is_rounding():
    """Two equal columns and a prior: the prior splits their weight evenly; beside rows 1e42 times the others
    (and a weight of 8e53) that split is decided by the rounding of the far rows' difference of the two columns,
    and no order of the rows recovers it. Before: coefficients 3 % off (or a DivergenceError), silently; now a
    warning saying so (or the right answer)."""
    rng = np.random.default_rng(237)
    X = rng.standard_normal((74, 3))
    X[:, 2] = X[:, 0]
    y = X @ rng.standard_normal(3) + 0.5 + 0.1 * rng.standard_normal(74)
    sw = rng.uniform(0.5, 2.0, 74)
    sw[4] = 7.9e53
    X[34:39] *= 2.5e42
    y[34:39] = 2.5e42 * rng.standard_normal(5)
    expected = _exact(X, y, sw, 0.7, True)
    model = RecursiveLeastSquares(prior_precision=0.7)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(0, 74, 7):
            model.partial_fit(X[i:i + 7], y[i:i + 7], sample_weight=sw[i:i + 7])
    right = np.allclose(_params(model), expected, rtol=1e-8)
    assert right or any("decided by rounding" in str(w.message) for w in caught)


def test_an_ordinary_stream_stays_on_the_normal_equations():
    """The square root is for far rows only: 1e4 x 10 in chunks of 100 keeps the fast route (and its answer)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((10_000, 10))
    y = X @ rng.standard_normal(10) + rng.standard_normal(10_000)
    model = RecursiveLeastSquares()
    for i in range(0, 10_000, 100):
        model.partial_fit(X[i:i + 100], y[i:i + 100])
    assert model._root is None
    Z = np.column_stack([X, np.ones(10_000)])
    np.testing.assert_allclose(_params(model), np.linalg.lstsq(Z, y, rcond=None)[0], rtol=1e-10, atol=1e-12)
