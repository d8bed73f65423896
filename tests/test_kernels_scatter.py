"""linbook._kernels.scatter / scores / threads: each kernel equals its readable reference."""

import numpy as np
import pytest
from scipy import linalg

from linbook._kernels import scatter, scores, threads
from linbook.numerics import _power_of_two_scale


def _data(n=500, d=7, c=3, seed=0, nan=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.1, 10, d) + rng.normal(size=d) * 5
    y = rng.integers(0, c, n)
    w = rng.uniform(0, 3, n)
    w[rng.random(n) < 0.1] = 0.0
    if nan:
        X[rng.random(X.shape) < 0.1] = np.nan
    return X, y, w


def _onehot(y, c, w):
    Y = np.zeros((len(y), c))
    Y[np.arange(len(y)), y] = w
    return Y


@pytest.fixture(params=["numpy", "numba"])
def path(request, monkeypatch):
    """Run each kernel through its numpy expression and through its compiled loop."""
    monkeypatch.setattr(scatter, "NUMBA_MIN_SIZE", 1 << 62 if request.param == "numpy" else 0)
    return request.param


@pytest.fixture(autouse=True)
def two_cores(monkeypatch):
    """Inputs of >= 8192 rows then run as two threaded chunks, on any machine."""
    monkeypatch.setattr(threads, "_n_cores", lambda: 2)


@pytest.mark.parametrize("nan", [False, True])
def test_class_sums_and_square_sums_equal_textbook(path, nan):
    X, y, w = _data(nan=nan)
    inv = 1.0 / _power_of_two_scale(np.nanmax(np.abs(X), axis=0), normal=True)
    obs = ~np.isnan(X)
    Xs = np.where(obs, X * inv, 0.0)
    sums, counts = scatter.class_sums(X, y, 3, w, inv)
    np.testing.assert_allclose(sums, _onehot(y, 3, w).T @ Xs, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(counts, _onehot(y, 3, w).T @ obs, rtol=1e-12)
    M = sums / counts
    ss = scatter.class_square_sums(X, y, M, w, inv)
    ref = np.array([[np.nansum(w[y == c] * (X[y == c, j] * inv[j] - M[c, j]) ** 2) for j in range(7)]
                    for c in range(3)])
    np.testing.assert_allclose(ss, ref, rtol=1e-11)
    lo, hi = scatter.column_range(X, w)
    np.testing.assert_array_equal(lo, np.nanmin(X[w > 0], axis=0))
    np.testing.assert_array_equal(hi, np.nanmax(X[w > 0], axis=0))


def test_column_range_of_a_column_never_observed(path):
    X = np.ones((40, 2))
    X[:, 1] = np.nan
    lo, hi = scatter.column_range(X)
    assert lo[1] == np.inf and hi[1] == -np.inf and lo[0] == hi[0] == 1.0


def test_power_of_two_scale_is_exact_and_bounds_the_data():
    m = np.array([0.0, 1e-300, 3e-12, 1.0, 1.5, 7e250, 1.7e308])
    s = _power_of_two_scale(m, normal=True)          # the discriminant models' scales
    assert s[0] == 1.0
    np.testing.assert_array_equal(np.log2(s), np.round(np.log2(s)))        # powers of two: exact scaling
    assert np.all(m[1:-1] / s[1:-1] < 1) and np.all(m[1:-1] / s[1:-1] >= 0.5)
    assert m[-1] / s[-1] < 4                                   # exponent clipped near the float64 limit
    assert np.all(np.isfinite(1.0 / s)) and np.all(np.isfinite(s))


@pytest.mark.parametrize("weighted", [False, True])
def test_within_scatter_is_the_pooled_scatter_of_the_textbook(weighted):
    X, y, w = _data(n=9000, d=6)
    w = w if weighted else None
    ww = np.ones(len(y)) if w is None else w
    M = np.array([np.average(X[y == c], axis=0, weights=ww[y == c]) for c in range(3)])
    # textbook: S = sum_c sum_{i in c} w_i (x_i - mu_c)(x_i - mu_c)^T
    ref = sum(((X[y == c] - M[c]) * ww[y == c, None]).T @ (X[y == c] - M[c]) for c in range(3))
    S = scatter.within_scatter(X, y, M, None, w, block_size=257)
    np.testing.assert_allclose(S, ref, rtol=1e-10, atol=1e-10 * np.abs(ref).max())
    assert np.array_equal(S, S.T)
    rows = np.flatnonzero(y == 1)
    S1 = scatter.within_scatter(X, y, M, None, w, rows=rows, block_size=100)
    ref1 = ((X[rows] - M[1]) * ww[rows, None]).T @ (X[rows] - M[1])
    np.testing.assert_allclose(S1, ref1, rtol=1e-10, atol=1e-10 * np.abs(ref1).max())


def test_within_scatter_in_scaled_units_does_not_overflow():
    X, y, _ = _data(n=400, d=4)
    M = np.array([X[y == c].mean(0) for c in range(3)])
    ref = scatter.within_scatter(X, y, M)
    s = _power_of_two_scale(np.abs(X * 1e300).max(0), normal=True)
    S = scatter.within_scatter(X * 1e300, y, M * 1e300 / s, 1.0 / s)
    t = s / 1e300
    np.testing.assert_allclose(S * t[:, None] * t, ref, rtol=1e-12)


def test_scores_kernels_equal_their_references():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(20_000, 5)) * 3 + 100.0
    B, b = rng.normal(size=(4, 5)), rng.normal(size=4)
    np.testing.assert_allclose(scores.linear_scores(X, B, b), X @ B.T + b, rtol=1e-12)
    covs = [a @ a.T + np.eye(5) for a in rng.normal(size=(4, 5, 5))]
    means = rng.normal(size=(4, 5)) + 100.0
    Ls = np.array([linalg.cholesky(S, lower=True) for S in covs])
    whiten = np.array([linalg.solve_triangular(L, np.eye(5), lower=True).T for L in Ls])
    center = means.mean(0)
    inv = np.full(5, 0.5)
    Zm = [X * inv - m for m in means]
    ref = np.column_stack([np.einsum("ij,ij->i", Z, np.linalg.solve(S, Z.T).T) for Z, S in zip(Zm, covs)])
    D2 = scores.class_sq_distances(X, inv, center, scores.stack_whitening(whiten),
                                   np.einsum("cd,cde->ce", means - center, whiten), block_size=999)
    np.testing.assert_allclose(D2, ref, rtol=1e-9)


@pytest.mark.parametrize("order", ["F", "C"])
@pytest.mark.parametrize("n_classes", [1, 2, 3, 10])
def test_row_argmax_is_numpys_argmax(order, n_classes):
    """Ties go to the first column, a NaN to the first NaN (numpy's rule), and any layout or size."""
    rng = np.random.default_rng(n_classes)
    s = rng.integers(-3, 3, size=(4000, n_classes)).astype(float)      # many ties
    s[::17] = -np.inf
    s[5::19, -1] = np.inf
    s[7::23, n_classes // 2] = np.nan
    s[11::29] = np.nan
    s = np.asfortranarray(s) if order == "F" else np.ascontiguousarray(s)
    np.testing.assert_array_equal(scores.row_argmax(s), np.argmax(s, axis=1))
    assert scores.row_argmax(s[:0]).shape == (0,)


@pytest.mark.parametrize("order", ["F", "C"])
@pytest.mark.parametrize("n_rows", [0, 1, 500, 20000])
def test_row_softmax_is_the_readable_softmax_in_place(order, n_rows):
    """The same numbers as ``numerics.softmax`` to the last bit, in place, on one chunk or several; rows whose
    maximum is not finite take softmax's limits (``+inf``) and error (a row all ``-inf``)."""
    from linbook.numerics import softmax
    rng = np.random.default_rng(n_rows)
    s = 40.0 * rng.standard_normal((n_rows, 7))
    s[::13, 2] = -np.inf
    s[::31, 4] = -1e308
    s = np.asfortranarray(s) if order == "F" else np.ascontiguousarray(s)
    expected = softmax(s, axis=1)
    work = s.copy(order="K")
    out = scores.row_softmax(work)
    np.testing.assert_array_equal(out, expected)
    assert n_rows == 0 or out is work
    if n_rows:
        s[n_rows // 2, 3] = np.inf
        np.testing.assert_array_equal(scores.row_softmax(s.copy(order="K")), softmax(s, axis=1))
        s[n_rows // 2] = -np.inf
        with pytest.raises(ValueError, match="entirely -inf"):
            scores.row_softmax(s)


@pytest.mark.parametrize("nan", [False, True])
def test_diagonal_log_density_equals_the_sum_over_observed_features(path, nan):
    X, y, _ = _data(n=9000, d=6, nan=nan)
    rng = np.random.default_rng(5)
    inv, mu = np.full(6, 0.25), rng.normal(size=(3, 6))
    prec, const = rng.uniform(0.5, 2.0, (3, 6)), rng.normal(size=(3, 6))
    terms = (X[:, None, :] * inv - mu) ** 2 * prec + const            # (N, C, D); NaN where x_ij is missing
    ref = -0.5 * np.nansum(terms, axis=2)
    np.testing.assert_allclose(scores.diagonal_log_density(X, inv, mu, prec, const), ref, rtol=1e-12, atol=1e-12)


def test_map_row_chunks_covers_the_rows_in_order():
    parts = threads.map_row_chunks(lambda a, b: (a, b), 100_000, min_rows=1000)
    assert parts[0][0] == 0 and parts[-1][1] == 100_000
    assert all(p[1] == q[0] for p, q in zip(parts, parts[1:]))
    assert threads.map_row_chunks(lambda a, b: (a, b), 10) == [(0, 10)]
    assert threads.map_row_chunks(lambda a, b: (a, b), 100_000, parallel=False) == [(0, 100_000)]


def test_blas_threads_are_restored_after_concurrent_calls():
    from concurrent.futures import ThreadPoolExecutor as Pool
    from threadpoolctl import threadpool_info

    def blas_threads():
        return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]

    before = blas_threads()
    X = np.random.default_rng(0).normal(size=(20_000, 4))
    with Pool(4) as pool:
        list(pool.map(lambda _: scores.linear_scores(X, np.ones((2, 4)), np.zeros(2)), range(8)))
    assert blas_threads() == before


def test_row_chunks_products_equal_scipys():
    """``RowChunks``: ``X @ V`` the same numbers as one scipy call, ``X^T S`` the chunks' sums in order."""
    import scipy.sparse

    X = scipy.sparse.random(40_000, 300, density=0.05, format="csr", random_state=0,
                            data_rvs=np.random.default_rng(0).standard_normal)
    chunks = threads.RowChunks(X)
    assert chunks.chunked and chunks.chunked_tdot and len(chunks.blocks) == 8
    rng = np.random.default_rng(1)
    V, S, u = rng.standard_normal((300, 7)), rng.standard_normal((40_000, 7)), rng.standard_normal(300)
    assert np.array_equal(chunks.dot(V), X @ V) and np.array_equal(chunks.dot(V.T.copy().T), X @ V)
    assert np.array_equal(chunks.dot(u), X @ u)
    parts = [X[a:b].T @ S[a:b] for a, b in threads.map_row_chunks(lambda a, b: (a, b), 40_000)]
    assert np.array_equal(chunks.tdot(S), sum(parts[1:], parts[0]))
    np.testing.assert_allclose(chunks.tdot(S), X.T @ S, rtol=1e-12, atol=1e-12 * np.abs(X.T @ S).max())
    assert np.array_equal(X.toarray(), scipy.sparse.vstack([chunks.blocks[a] for a in sorted(chunks.blocks)]).toarray())
    ij = rng.integers(0, 20_000, (2, 600_000))
    wide = scipy.sparse.csr_matrix((rng.standard_normal(600_000), (ij[0], ij[1])), shape=(20_000, 20_000))
    wide_chunks = threads.RowChunks(wide)         # X^T S in one call: too few entries per column in a chunk
    assert wide_chunks.chunked and not wide_chunks.chunked_tdot
    v, s = rng.standard_normal(20_000), rng.standard_normal(20_000)
    assert np.array_equal(wide_chunks.tdot(s), wide.T @ s) and np.array_equal(wide_chunks.dot(v), wide @ v)
    for small in (X[:1000], X.tocsc(), X.toarray()):        # one call: too few entries, not CSR, dense
        one = threads.RowChunks(small)
        assert not one.chunked and np.array_equal(one.dot(V), small @ V)
        assert np.array_equal(one.tdot(S[:small.shape[0]]), small.T @ S[:small.shape[0]])


def test_row_chunks_wide_tdot_sums_chunks_where_entries_per_column_suffice():
    """``X^T S`` with ``S`` of several columns (a multinomial Hessian product) runs in chunks from 32 stored
    entries per column in a chunk, one vector from 128: the choice is the shapes', and the result is the
    chunks' sums in order, equal to one call within rounding."""
    import scipy.sparse

    rng = np.random.default_rng(2)
    X = scipy.sparse.random(40_000, 2000, density=0.008, format="csr", random_state=2,
                            data_rvs=rng.standard_normal)          # 40 entries per column in each of 8 chunks
    chunks = threads.RowChunks(X)
    assert chunks.chunked and chunks.chunked_wide_tdot and not chunks.chunked_tdot
    S, s = rng.standard_normal((40_000, threads.TDOT_WIDE_COLUMNS)), rng.standard_normal(40_000)
    parts = [X[a:b].T @ S[a:b] for a, b in threads.map_row_chunks(lambda a, b: (a, b), 40_000)]
    assert np.array_equal(chunks.tdot(S), sum(parts[1:], parts[0]))
    np.testing.assert_allclose(chunks.tdot(S), X.T @ S, rtol=1e-12, atol=1e-12 * np.abs(X.T @ S).max())
    assert np.array_equal(chunks.tdot(s), X.T @ s)                     # one vector: one call
    narrow = S[:, :threads.TDOT_WIDE_COLUMNS - 1]
    assert np.array_equal(chunks.tdot(narrow), X.T @ narrow)


def test_a_sparse_logistic_fit_cuts_its_rows_once(monkeypatch):
    """A fit's passes over sparse ``X`` reuse the row chunks cut once (cutting costs ~0.5 ms a chunk), with the
    same coefficients as chunks cut at every pass."""
    import scipy.sparse

    import linbook
    from linbook.logistic import _scaled

    X = scipy.sparse.random(40_000, 300, density=0.05, format="csr", random_state=3,
                            data_rvs=np.random.default_rng(3).standard_normal)
    y = (X @ np.random.default_rng(4).standard_normal(300) > 0).astype(int)
    cuts = []
    monkeypatch.setattr(_scaled, "RowChunks", lambda Xk: cuts.append(1) or threads.RowChunks(Xk))
    once = linbook.LogisticRegression(solver="newton-cg").fit(X, y)
    assert len(cuts) == 1
    monkeypatch.setattr(_scaled, "RowChunks", threads.RowChunks)
    from linbook._kernels import hessian
    # the passes cutting their own chunks, as before
    monkeypatch.setattr(_scaled, "binary_pass", lambda *a, row_chunks=None, **k: hessian.binary_pass(*a, **k))
    every = linbook.LogisticRegression(solver="newton-cg").fit(X, y)
    assert np.array_equal(once.coef_, every.coef_) and once.intercept_ == every.intercept_
