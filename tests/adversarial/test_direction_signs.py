"""Directions from an eigen- or singular value decomposition have a documented sign (and order).

LAPACK returns an eigenvector with whichever sign its arithmetic reaches, so before session 23
``FisherLDA.scalings_`` and ``RDA.components_`` could differ in sign between BLAS/LAPACK builds,
CPUs and equivalent inputs (rows permuted, classes relabelled: 4 of 300 random fits flipped a
column), and ``RDA.components_`` came in increasing eigenvalue order from the eigen-decomposition
(``N >= D``) but decreasing from the SVD (``N < D``). linbook's one convention
(``linbook.numerics._orient_columns``): each direction's entry of largest magnitude is positive,
the first of them when several tie to a relative ``SIGN_TIE_RTOL``.
"""

import warnings

import numpy as np
import pytest

import linbook
from linbook.numerics import SIGN_TIE_RTOL, _orient_columns


def _lead(V):
    """The convention in plain numpy: for each column, the first entry tied with the largest magnitude."""
    out = []
    for v in V.T:
        top = np.abs(v).max()
        out.append(v[[k for k in range(v.size) if abs(v[k]) >= top * (1 - SIGN_TIE_RTOL)][0]])
    return np.array(out)


def _random_problems(n, seed=0):
    rng = np.random.default_rng(seed)
    while n:
        D, C = int(rng.integers(1, 7)), int(rng.integers(2, 6))
        N = D + C + int(rng.integers(4, 50))
        y = np.arange(N) % C
        X = (rng.standard_normal((N, D)) + 1.5 * rng.standard_normal((C, D))[y]) * rng.choice([1e-3, 1.0, 1e3], D)
        n -= 1
        yield rng, X, y, C


def test_orient_columns_is_the_convention():
    rng = np.random.default_rng(1)
    V = rng.standard_normal((5, 40))
    V[:, :3] = [[1, -1, 0], [-1, 1, 0], [0.5, 0.5, 0], [0, 0, 0], [0, 0, 0]]   # exact ties and a zero column
    V[1, 3] = -V[0, 3] * (1 + SIGN_TIE_RTOL / 10)                           # a tie up to rounding
    got = _orient_columns(V)
    np.testing.assert_array_equal(np.abs(got), np.abs(V))
    assert np.all(_lead(got)[[0, 1, 3]] > 0) and np.all(_lead(got)[4:] > 0)
    np.testing.assert_array_equal(got[:, 2], 0.0)
    np.testing.assert_array_equal(got[:, :2], [[1, 1], [-1, -1], [0.5, -0.5], [0, 0], [0, 0]])
    np.testing.assert_array_equal(_orient_columns(-V), got)


def test_fisher_lda_scalings_follow_the_convention_and_ignore_row_order_and_labels():
    for rng, X, y, C in _random_problems(150):
        model = linbook.FisherLDA().fit(X, y)
        W = model.scalings_
        assert np.all(_lead(W) > 0), W
        p = rng.permutation(len(y))
        other = linbook.FisherLDA().fit(X[p], np.array(["c%d" % (C - 1 - k) for k in y[p]]))
        np.testing.assert_allclose(other.scalings_, W, rtol=1e-6, atol=1e-9 * np.abs(W).max())
        np.testing.assert_allclose(other.transform(X), model.transform(X), rtol=1e-6,
                                   atol=1e-9 * np.abs(model.transform(X)).max())


def test_fisher_lda_a_tied_direction_has_a_positive_first_entry():
    """Data symmetric under ``(a, b) -> (-b, -a)``: the direction is ``(1, -1)`` up to scale, whose two entries tie
    exactly in exact arithmetic and to rounding in floating point; the first is positive, for every row order."""
    rng = np.random.default_rng(2)
    Z = rng.standard_normal((30, 2)) * [1.0, 0.3]
    Z = np.vstack([Z, -Z[:, ::-1]])
    X = np.vstack([Z + [1.0, -1.0], -(Z + [1.0, -1.0])])
    y = np.repeat([0, 1], len(Z))
    first = linbook.FisherLDA().fit(X, y).scalings_
    assert first[0, 0] > 0 and np.isclose(first[1, 0], -first[0, 0], rtol=1e-9)
    for _ in range(20):
        p = rng.permutation(len(y))
        np.testing.assert_allclose(linbook.FisherLDA().fit(X[p], y[p]).scalings_, first, rtol=1e-9)


def test_fisher_lda_constant_columns_do_not_decide_the_sign():
    rng = np.random.default_rng(3)
    y = np.arange(60) % 3
    X = rng.standard_normal((60, 3)) + 2.0 * rng.standard_normal((3, 3))[y]
    got = linbook.FisherLDA().fit(np.insert(X, [0, 2], 5.0, axis=1), y).scalings_
    want = linbook.FisherLDA().fit(X, y).scalings_
    np.testing.assert_array_equal(got[[0, 3]], 0.0)
    np.testing.assert_allclose(np.delete(got, [0, 3], axis=0), want, rtol=1e-10)


@pytest.mark.parametrize("wide", [False, True])
def test_rda_components_follow_the_convention_in_decreasing_eigenvalue_order(wide):
    """``N >= D`` takes the eigen-decomposition of the pooled correlation, ``N < D`` the SVD of the residuals:
    both give its eigenvectors by decreasing eigenvalue, each with a positive largest entry."""
    for rng, X, y, C in _random_problems(40, seed=4 + wide):
        if wide:
            X = np.hstack([X, rng.standard_normal((X.shape[0], X.shape[0] + 2 - X.shape[1]))])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = linbook.RDA(shrinkage=0.4).fit(X, y)
        V = model.components_.T
        assert (X.shape[0] < X.shape[1]) == wide
        assert np.all(_lead(V) > 0)
        R = X - np.array([X[y == c].mean(0) for c in range(C)])[y]
        corr = np.corrcoef(R.T) if X.shape[1] > 1 else np.ones((1, 1))
        e = np.einsum("ij,jk,ki->i", V.T, corr, V)                     # the Rayleigh quotients
        assert np.all(np.diff(e) <= 1e-9 * e[0]), e
        np.testing.assert_allclose(corr @ V, V * e, atol=1e-8 * e[0])
