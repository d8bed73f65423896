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


@pytest.mark.parametrize("bad", [-1, 30])
def test_csr_parts_rejects_column_indices_out_of_range(bad):
    X, _ = _data(1)
    X.indices[5] = bad                       # a malformed matrix scipy does not check on its own
    with pytest.raises(ValueError, match="malformed sparse matrix"):
        csr_parts(X)


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
    G = csr_gram(data, indices, indptr, s, d)
    dense = X.toarray()                                   # toarray sums the duplicates
    expected = dense.T @ ((s if weighted else np.ones(n))[:, None] * dense)
    np.testing.assert_allclose(G, expected, rtol=1e-13, atol=1e-13 * np.abs(expected).max())
    np.testing.assert_array_equal(G, G.T)
