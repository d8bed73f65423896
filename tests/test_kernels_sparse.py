"""Sparse kernels: the specialised SGD loop equals the general one, the CSR Gram equals
scipy's product, and the CSR plumbing rejects malformed matrices.

``linbook._kernels.sgd_sparse._epoch_one_output`` (one output, one sample per step, plain
steps) is a faster copy of ``_epoch_general`` restricted to that case; both perform the same
floating-point operations in the same order, so their results are compared exactly, over
every loss, schedule, penalty, averaging start, intercept and sample weighting, for several
epochs (the scale ``a`` and the lazy average carry across samples). The estimator-level tests
in tests/test_online.py compare both against the readable ``sgd_per_sample``.
"""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from linbook._kernels.csr import csr_parts
from linbook._kernels.sgd_sparse import _epoch_general, _epoch_one_output


def _data(loss, seed=0, n=120, d=30):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.2, format="csr", random_state=seed, data_rvs=rng.standard_normal)
    X.data[:3] = 0.0                         # explicit zeros are legal CSR entries
    y = rng.standard_normal(n) if loss == 0 else (rng.random(n) < 0.5).astype(float)
    return X, y


CASES = list(itertools.product([0, 1, 2], [0, 1, 2], [0.0, 0.3], [0, 1, 40], [True, False], [False, True]))


@pytest.mark.parametrize("loss,schedule,lam_n,avg_start,fit_intercept,weighted", CASES)
def test_one_output_loop_equals_general_loop(loss, schedule, lam_n, avg_start, fit_intercept, weighted):
    if schedule == 2 and lam_n == 0.0:
        pytest.skip("the 'optimal' schedule needs lam > 0")
    X, y = _data(loss)
    n, d = X.shape
    rng = np.random.default_rng(1)
    sw = rng.uniform(0.2, 2.0, n) if weighted else np.ones(n)
    eta0, tau0, kappa, b_ratio = 0.05, 1.0, 0.6, 0.3   # not powers of 2: reassociation shows
    w, b, wbar, bbar, state1 = np.zeros(d), np.zeros(1), np.zeros(d), np.zeros(1), np.zeros(2)
    W, B, Wbar, Bbar, state2 = np.zeros((1, d)), np.zeros(1), np.zeros((1, d)), np.zeros(1), np.zeros(2)
    for epoch in range(3):
        order = rng.permutation(n)
        out1 = _epoch_one_output(*csr_parts(X), y, sw, order, w, b, wbar, bbar, state1, loss, schedule, eta0,
                                 tau0, kappa, lam_n, b_ratio, fit_intercept, avg_start)
        out2 = _epoch_general(*csr_parts(X), y, sw, order, 1, W, B, np.zeros((1, d)), np.zeros(1), Wbar, Bbar,
                              state2, loss, schedule, eta0, tau0, kappa, lam_n, b_ratio, fit_intercept, False,
                              1e-8, avg_start)
        assert out1 == out2
        np.testing.assert_array_equal(w, W[0])
        np.testing.assert_array_equal(wbar, Wbar[0])
        np.testing.assert_array_equal(b, B)
        np.testing.assert_array_equal(bbar, Bbar)
        np.testing.assert_array_equal(state1, state2)
    assert np.any(w != 0.0)                  # the loops moved


def test_one_output_loop_reports_divergence_like_general():
    X, y = _data(0)
    n, d = X.shape
    y = y * 1e300
    order = np.arange(n)
    args = (0, 0, 1e3, 1.0, 0.6, 0.0, 1.0, True)
    out1 = _epoch_one_output(*csr_parts(X), y, np.ones(n), order, np.zeros(d), np.zeros(1), np.zeros(d),
                             np.zeros(1), np.zeros(2), *args, 1)
    out2 = _epoch_general(*csr_parts(X), y, np.ones(n), order, 1, np.zeros((1, d)), np.zeros(1),
                          np.zeros((1, d)), np.zeros(1), np.zeros((1, d)), np.zeros(1), np.zeros(2), *args,
                          False, 1e-8, 1)
    assert out1[1] == out2[1] >= 0           # both stop at the same sample, with a non-finite loss


def test_csr_parts_views_indices_unsigned_without_copy():
    X, _ = _data(1)
    _, indices, _ = csr_parts(X)
    assert indices.dtype.kind == "u" and np.shares_memory(indices, X.indices)
    np.testing.assert_array_equal(indices, X.indices)


# (rows of one CSR matrix, its width, csr_index_check's answer): each row's stored column indices
INDEX_CASES = {
    "canonical, with empty rows": ([[], [0, 2, 5], [], [1], []], 6, "CANONICAL"),
    "last column is in range": ([[0, 5], [5]], 6, "CANONICAL"),
    "no rows": ([], 6, "CANONICAL"),
    "only empty rows": ([[], [], []], 6, "CANONICAL"),
    "one row out of order": ([[0, 2], [5, 2, 0], [1, 3]], 6, "UNSORTED"),
    "same column in two rows after an unsorted row": ([[3, 1], [1, 3], [3, 1]], 6, "UNSORTED"),
    "sorted row repeating a column": ([[0, 1], [0, 2, 2, 5]], 6, "REPEATS"),
    "unsorted row repeating a column": ([[5, 2, 5]], 6, "REPEATS"),
    "sorted repeat after an unsorted row": ([[3, 1], [0, 4, 4]], 6, "REPEATS"),
    "== n_features, last of a sorted row": ([[0, 1], [2, 6]], 6, "OUT_OF_RANGE"),
    "== n_features, first row": ([[6]], 6, "OUT_OF_RANGE"),
    "negative, last of a row": ([[1, 3, -1]], 6, "OUT_OF_RANGE"),
    "negative, first of a row": ([[-1, 2, 3]], 6, "OUT_OF_RANGE"),
    "== n_features after an unsorted row": ([[3, 1], [2, 6], [0]], 6, "OUT_OF_RANGE"),
    "out of range after a repeat": ([[2, 2], [1], [0, 7]], 6, "OUT_OF_RANGE"),
    "out of range after an unsorted repeat": ([[2, 1, 2], [6, 0]], 6, "OUT_OF_RANGE"),
}


def _csr_from_rows(rows, n_cols, index_dtype):
    """A CSR matrix storing exactly these column indices (scipy checks none of them), indices of ``index_dtype``."""
    indices = np.array([j for row in rows for j in row], dtype=index_dtype)
    indptr = np.concatenate([[0], np.cumsum([len(row) for row in rows])]).astype(index_dtype)
    X = sp.csr_matrix((len(rows), n_cols))
    X.data, X.indices, X.indptr = np.ones(indices.size), indices, indptr
    return X


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("case", list(INDEX_CASES))
def test_csr_index_check_answers(case, index_dtype):
    from linbook._kernels import sgd
    from linbook._kernels.csr import _unsigned, canonical_csr, summed_csr

    rows, n_cols, want = INDEX_CASES[case]
    X = _csr_from_rows(rows, n_cols, index_dtype)
    assert X.indices.dtype == index_dtype
    indices = _unsigned(X.indices)
    assert sgd.csr_index_check(indices, X.indptr, indices.dtype.type(n_cols)) == getattr(sgd, want)
    if want == "OUT_OF_RANGE":               # what the fits see: a ValueError naming the range
        for prepare in (summed_csr, canonical_csr):
            with pytest.raises(ValueError, match=rf"malformed sparse matrix.*\[0, {n_cols}\)"):
                prepare(X)
        return
    assert (summed_csr(X) is X) == (want != "REPEATS")
    assert (canonical_csr(X) is X) == (want == "CANONICAL")
    assert canonical_csr(X).has_canonical_format


def test_csr_row_stats_sums_each_row_in_stored_order():
    """The largest squared row norm, bit for bit the sequential sum of the row as stored, and the nonzeros
    (explicit zeros and empty rows included in the matrix, not in the count)."""
    from linbook._kernels.sgd import csr_row_stats

    X, _ = _data(1)
    X = _permuted_rows(X)
    X.indptr[5:9] = X.indptr[5]              # rows 5-7 empty, row 8 takes their entries
    sequential = []
    for i in range(X.shape[0]):
        s = 0.0
        for v in X.data[X.indptr[i]:X.indptr[i + 1]]:
            s += v * v
        sequential.append(s)
    top, nnz = csr_row_stats(X.data, X.indptr)
    assert top == max(sequential) and nnz == np.count_nonzero(X.data) == X.nnz - 3


@pytest.mark.parametrize("weighted", [False, True])
def test_csr_gram_equals_scipy_product_with_duplicates_and_unsorted_indices(weighted):
    from linbook._kernels.sparse_gram import csr_gram

    rng = np.random.default_rng(3)
    n, d = 60, 9
    nnz_per_row = rng.integers(0, 6, n)                  # some empty rows
    indptr = np.r_[0, np.cumsum(nnz_per_row)].astype(np.int32)
    indices = rng.integers(0, d, indptr[-1]).astype(np.int32)   # unsorted, with repeats
    data = rng.standard_normal(indptr[-1])
    X = sp.csr_matrix((data, indices, indptr), shape=(n, d))
    assert not X.has_canonical_format
    s = rng.uniform(0.1, 3.0, n) if weighted else np.empty(0)
    G = csr_gram(X, s)
    dense = X.toarray()                                   # toarray sums the duplicates
    expected = dense.T @ ((s if weighted else np.ones(n))[:, None] * dense)
    np.testing.assert_allclose(G, expected, rtol=1e-13, atol=1e-13 * np.abs(expected).max())
    np.testing.assert_array_equal(G, G.T)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("canonical", [False, True])
def test_csr_gram_has_the_same_bits_for_every_band_width(weighted, canonical):
    """The Gram kernel fills ``G`` a band of rows per pass over ``X``: every band width adds the same products
    in the same order (row by row) as one pass, so the bits are the same, and equal to the row-by-row sums
    ``G[j, k] += (s_i x_ij) x_ik`` (``j <= k``) written out in Python."""
    from linbook._kernels.sparse_gram import _mirror_upper, _upper_gram, csr_gram

    rng = np.random.default_rng(5)
    n, d = 200, 23
    indptr = np.r_[0, np.cumsum(rng.integers(0, 9, n))].astype(np.int32)
    indices = rng.integers(0, d, indptr[-1]).astype(np.int32)
    X = sp.csr_matrix((rng.standard_normal(indptr[-1]) * 10.0 ** rng.integers(-8, 8, indptr[-1]), indices, indptr),
                      shape=(n, d))
    if canonical:
        X.sum_duplicates()
    X.sort_indices()
    s = rng.uniform(0.1, 3.0, n) * 10.0 ** rng.integers(-5, 5, n) if weighted else np.empty(0)
    grams = []
    for band in (1, 2, 5, 7, d):
        G = _upper_gram(X.data, X.indices, X.indptr, s, d, band)
        _mirror_upper(G)
        grams.append(G)
    for G in grams[1:] + [csr_gram(X, s)]:
        np.testing.assert_array_equal(G, grams[0])
    if canonical:                      # the sums written out (a duplicated entry pairs with its twin twice)
        ref = np.zeros((d, d))
        for i in range(n):
            lo, hi = X.indptr[i], X.indptr[i + 1]
            for p in range(lo, hi):
                a = X.data[p] * s[i] if weighted else X.data[p]
                for q in range(p, hi):
                    j, k = X.indices[p], X.indices[q]
                    ref[j, k] += a * X.data[q]
        ref = np.triu(ref) + np.triu(ref, 1).T
        np.testing.assert_array_equal(grams[0], ref)
    np.testing.assert_array_equal(grams[0], grams[0].T)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_moments_sparse_gram_is_the_same_by_scipy_and_by_the_compiled_kernel(weighted, fit_intercept, monkeypatch):
    """While the numpy budget lasts the Gram of small sparse X comes from scipy's product, then from
    ``csr_gram``: the same matrix (duplicates and unsorted indices included), exactly symmetric."""
    from linbook.linear import _moments

    rng = np.random.default_rng(4)
    n, d = 80, 7
    indptr = np.r_[0, np.cumsum(rng.integers(0, 6, n))].astype(np.int32)
    indices = rng.integers(0, d, indptr[-1]).astype(np.int32)
    X = sp.csr_matrix((rng.standard_normal(indptr[-1]) + 0.5, indices, indptr), shape=(n, d))
    sw = rng.uniform(0.1, 3.0, n) if weighted else None
    y = rng.standard_normal(n)
    grams = []
    for by_scipy in (True, False):
        monkeypatch.setattr(_moments, "numpy_pass", lambda steps, by_scipy=by_scipy: by_scipy)
        grams.append(_moments.Moments(X, y, sw, fit_intercept).G)
    np.testing.assert_allclose(grams[0], grams[1], rtol=1e-13, atol=1e-13 * np.abs(grams[1]).max())
    for G in grams:
        np.testing.assert_array_equal(G, G.T)


# ------------------------------------------------------------------ unsorted rows

def _permuted_rows(X, seed=3):
    """``X`` with each row's entries (data and indices together) in a random order: the same matrix, unsorted."""
    rng = np.random.default_rng(seed)
    data, indices = X.data.copy(), X.indices.copy()
    for i in range(X.shape[0]):
        s = slice(X.indptr[i], X.indptr[i + 1])
        p = rng.permutation(s.stop - s.start)
        data[s], indices[s] = data[s][p], indices[s][p]
    U = sp.csr_matrix((data, indices, X.indptr.copy()), shape=X.shape)
    assert not np.array_equal(U.indices, X.indices)
    np.testing.assert_array_equal(U.toarray(), X.toarray())
    return U


@pytest.mark.parametrize("batch,adagrad,lam_n,outputs", [(1, False, 0.0, 1), (1, False, 0.3, 1), (8, False, 0.3, 1),
                                                         (1, True, 0.0, 1), (4, True, 0.3, 1), (1, False, 0.3, 3),
                                                         (8, False, 0.0, 3)])
def test_sgd_loops_on_unsorted_rows_equal_sorted_to_rounding(batch, adagrad, lam_n, outputs):
    """A row's dot product and its step need no order: the same fit, each row summed in another order."""
    X, y = _data(1 if outputs == 1 else 0, n=200)
    if outputs > 1:
        y = np.digitize(y, [-0.5, 0.5]).astype(float)
    U = _permuted_rows(X)
    n, d = X.shape
    results = []
    for A in (X, U):
        W, B, G2W, G2b = np.zeros((outputs, d)), np.zeros(outputs), np.zeros((outputs, d)), np.zeros(outputs)
        Wbar, Bbar, state = np.zeros((outputs, d)), np.zeros(outputs), np.zeros(2)
        rng, totals = np.random.default_rng(1), []
        for epoch in range(3):
            order = rng.permutation(n)
            if outputs == 1 and batch == 1 and not adagrad:
                totals.append(_epoch_one_output(*csr_parts(A), y, np.ones(n), order, W[0], B, Wbar[0], Bbar, state,
                                                1, 0, 0.05, 1.0, 0.6, lam_n, 0.3, True, 40))
            else:
                totals.append(_epoch_general(*csr_parts(A), y, np.ones(n), order, batch, W, B, G2W, G2b, Wbar, Bbar,
                                             state, 1, 0, 0.05, 1.0, 0.6, lam_n, 0.3, True, adagrad, 1e-8, 40))
        results.append((W, B, Wbar, Bbar, np.array(totals)))
    assert np.any(results[0][0] != 0.0)
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_perceptron_primal_and_pocket_on_unsorted_rows():
    from linbook._kernels.perceptron import pocket_epoch, primal_epoch

    X, y = _data(1, n=200)
    t = np.where(y > 0, 1.0, -1.0)
    U = _permuted_rows(X)
    order = np.random.default_rng(2).permutation(X.shape[0])
    out = []
    for A in (X, U):
        w, b, updates = np.zeros(X.shape[1]), np.zeros(1), np.empty(X.shape[0], dtype=np.int64)
        mistakes = primal_epoch(np.empty((0, 0)), *csr_parts(A), t, order, w, b, 1.0, 1.0, updates)
        pw, pb, pu = np.zeros(X.shape[1]), np.zeros(1), np.empty(X.shape[0], dtype=np.int64)
        best_w, best = np.zeros(X.shape[1]), np.array([X.shape[0] + 1.0, 0.0, 0.0, 0.0])
        pocket = pocket_epoch(np.empty((0, 0)), *csr_parts(A), t, order, pw, pb, 1.0, 1.0, pu, best_w, best)
        out.append((mistakes, updates[:mistakes].copy(), w, b, pocket, best_w, best))
    assert out[0][0] == out[1][0] and np.array_equal(out[0][1], out[1][1]) and out[0][4] == out[1][4]
    for got, want in zip(out[1][2:], out[0][2:]):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def _layouts(X):
    """``X`` (canonical CSR) as the fits may receive it: canonical, unsorted rows, every entry split into
    two halves (duplicates), CSC and COO."""
    unsorted = X.copy()
    for i in range(X.shape[0]):
        lo, hi = X.indptr[i], X.indptr[i + 1]
        unsorted.indices[lo:hi], unsorted.data[lo:hi] = X.indices[lo:hi][::-1], X.data[lo:hi][::-1]
    split = sp.csr_matrix((np.repeat(X.data / 2, 2), np.repeat(X.indices, 2), 2 * X.indptr), shape=X.shape)
    return {"canonical": X, "unsorted rows": unsorted, "duplicates": split, "csc": X.tocsc(), "coo": X.tocoo()}


@pytest.mark.parametrize("layout", ["canonical", "unsorted rows", "duplicates", "csc", "coo"])
def test_divide_columns_divides_each_entry_by_its_column_scale(layout):
    """``divide_columns(X, c)`` is the dense ``X / c`` as canonical CSR, for every layout, scales from
    subnormal to huge (``X @ diags(1 / c)`` gave ``inf`` for the subnormal one), the caller's ``X`` as it was."""
    from linbook._kernels.csr import divide_columns

    X, _ = _data(0, n=40, d=7)
    scale = np.array([1e-310, 3e-300, 0.7, 1.0, 3.0, 1e150, 1e300])
    X = sp.csr_matrix(X @ sp.diags(scale))    # the columns at those sizes (no entry overflows)
    X.sum_duplicates()                        # canonical (the product's rows may be unsorted)
    given = _layouts(X)[layout]
    before = given.copy()
    out = divide_columns(given, scale)
    assert out.format == "csr" and out.has_canonical_format
    # 1e-12: halving a subnormal entry (the duplicates layout) rounds at ~1e-14
    np.testing.assert_allclose(out.toarray(), given.toarray() / scale, rtol=1e-12, atol=0)
    assert np.all(np.isfinite(out.data))
    assert (given != before).nnz == 0 and given.format == before.format
    assert not np.shares_memory(out.data, given.data)
    assert not np.shares_memory(out.indices, getattr(given, "indices", given.data))
