"""Non-canonical sparse input gives the answer of the canonical matrix, and the caller's matrix is untouched.

A CSR matrix may hold its column indices unsorted within a row, or the same entry
twice (its value is the sum). Generators below build such matrices from a dense X:
rows with reversed indices, every entry split into two equal halves (exact in floating
point, so the canonical matrix is X bit for bit), explicit zeros, and COO with
duplicates. Every sparse-accepting estimator must fit the same model as on canonical
CSR and predict the same, and must not sort or merge the caller's matrix in place.
A matrix with duplicates is summed into a canonical copy, and the dual perceptron sorts:
the kernels see the canonical arrays, so the fit is equal to the last bit. The primal
loops take unsorted rows (without duplicates) as they are, without a copy: each row's
dot product then sums in the stored order, so the fit equals the canonical one to
rounding (1e-12), not bit for bit.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone, is_classifier

from linbook.online import SGDClassifier, SGDRegressor
from linbook.perceptron import Perceptron

ESTIMATORS = [SGDRegressor(random_state=0), SGDRegressor(batch_size=4, lam=1.0, random_state=0),
              SGDRegressor(adagrad=True, random_state=0), SGDClassifier(random_state=0),
              SGDClassifier(loss="perceptron", random_state=0), Perceptron(random_state=0),
              Perceptron(form="dual", random_state=0), Perceptron(form="pocket", max_iter=20, random_state=0)]


def _name(est):
    return repr(est).replace(" ", "")


def _data(n=60, d=6, seed=0, density=0.5):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * (rng.random((n, d)) < density)
    y = X @ rng.standard_normal(d) + 0.5
    return X, y, (y > 0.5).astype(int)


def _reversed_rows(X):
    return _reverse(sp.csr_matrix(X))


def _split_entries(X):
    """Every stored entry twice, each with half the value (row by row, in CSR form)."""
    A = sp.csr_matrix(X)
    counts = np.diff(A.indptr)
    data = np.repeat(A.data * 0.5, 2)
    indices = np.repeat(A.indices, 2)
    indptr = np.concatenate([[0], np.cumsum(2 * counts)])
    return sp.csr_matrix((data, indices, indptr), shape=A.shape)


def _split_and_reversed(X):
    return _reverse(_split_entries(X))


def _reverse(A):
    data, indices = A.data.copy(), A.indices.copy()
    for i in range(A.shape[0]):
        s = slice(A.indptr[i], A.indptr[i + 1])
        data[s], indices[s] = data[s][::-1], indices[s][::-1]
    return sp.csr_matrix((data, indices, A.indptr.copy()), shape=A.shape)


def _explicit_zeros(X):
    """Unsorted rows with an explicit zero stored in every row."""
    A = sp.lil_matrix(X)
    for i in range(X.shape[0]):
        zero_cols = np.flatnonzero(X[i] == 0)
        if zero_cols.size:
            A[i, zero_cols[0]] = 1.0
    A = sp.csr_matrix(A)
    A.data[A.data == 1.0] = 0.0
    return _reverse(A)


def _coo_duplicates(X):
    A = sp.coo_matrix(X)
    return sp.coo_matrix((np.r_[A.data * 0.5, A.data * 0.5], (np.r_[A.row, A.row], np.r_[A.col, A.col])),
                         shape=A.shape)


#: The variants whose rows the primal kernels read unsorted (no duplicates: no canonical copy).
UNSORTED_ONLY = {"reversed indices", "explicit zeros, unsorted"}

VARIANTS = {"reversed indices": _reversed_rows, "duplicates": _split_entries,
            "duplicates, unsorted": _split_and_reversed, "explicit zeros, unsorted": _explicit_zeros,
            "coo with duplicates": _coo_duplicates}


def test_generators_build_what_they_say():
    X = _data()[0]
    for name, make in VARIANTS.items():
        A = make(X)
        np.testing.assert_array_equal(A.toarray(), X, err_msg=name)
        if A.format == "csr":
            assert not A.has_canonical_format, name


def _cases():
    for est in ESTIMATORS:
        for variant in VARIANTS:
            yield pytest.param(est, variant, id=f"{_name(est)}-{variant}")


@pytest.mark.parametrize("est, variant", list(_cases()))
def test_non_canonical_sparse_gives_the_canonical_answer(est, variant):
    X, y, labels = _data()
    t = labels if is_classifier(est) else y
    reference = clone(est).fit(sp.csr_matrix(X), t)
    A = VARIANTS[variant](X)
    stored = (A.data.copy(), getattr(A, "indices", getattr(A, "col", None)).copy())
    model = clone(est).fit(A, t)
    _assert_same_fit(model, reference, bitwise=variant not in UNSORTED_ONLY or getattr(est, "form", "") == "dual")
    if is_classifier(est):
        np.testing.assert_array_equal(model.predict(A), reference.predict(sp.csr_matrix(X)))
    else:
        np.testing.assert_allclose(model.predict(A), reference.predict(sp.csr_matrix(X)), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(A.data, stored[0])        # the caller's matrix is not canonicalised in place
    np.testing.assert_array_equal(getattr(A, "indices", getattr(A, "col", None)), stored[1])


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("est", [e for e in ESTIMATORS if isinstance(e, (SGDRegressor, SGDClassifier))], ids=_name)
def test_non_canonical_chunks_stream_like_canonical_ones(est, variant):
    X, y, labels = _data(seed=1)
    t = labels if is_classifier(est) else y
    kwargs = {"classes": [0, 1]} if is_classifier(est) else {}
    reference, model = clone(est), clone(est)
    for rows in (slice(0, 30), slice(30, 60)):
        reference.partial_fit(sp.csr_matrix(X[rows]), t[rows], **kwargs)
        model.partial_fit(VARIANTS[variant](X[rows]), t[rows], **kwargs)
    _assert_same_fit(model, reference, bitwise=variant not in UNSORTED_ONLY)


def _assert_same_fit(model, reference, *, bitwise):
    """Equal to the last bit (the kernels saw the same arrays), or to rounding (rows summed in another order)."""
    if bitwise:
        np.testing.assert_array_equal(model.coef_, reference.coef_)
        np.testing.assert_array_equal(model.intercept_, reference.intercept_)
    else:
        np.testing.assert_allclose(model.coef_, reference.coef_, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(model.intercept_, reference.intercept_, rtol=1e-12, atol=1e-14)


def test_unsorted_rows_are_not_copied_and_duplicates_are_summed():
    """What the primal kernels receive: the caller's unsorted matrix itself; a summed copy when a row repeats a
    column (scipy's canonical format); the dual perceptron's sorted copy."""
    from linbook._kernels.csr import canonical_csr, summed_csr

    X = _data()[0]
    unsorted = _reversed_rows(X)
    assert summed_csr(unsorted) is unsorted
    assert not np.array_equal(canonical_csr(unsorted).indices, unsorted.indices)
    for make in (_split_entries, _split_and_reversed):
        A = make(X)
        summed = summed_csr(A)
        assert summed is not A and summed.nnz == np.count_nonzero(X)
        np.testing.assert_array_equal(summed.toarray(), X)
        np.testing.assert_array_equal(summed.indices, sp.csr_matrix(X).indices)
