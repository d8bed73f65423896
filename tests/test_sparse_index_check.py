"""The sparse fits check a CSR matrix's column indices once (``linbook._kernels.csr``): what each layout gives.

``csr_index_check`` tests rows whose indices strictly increase by comparing neighbours and
sends the first row out of order, and every row after it, to a duplicate search; the bounds
come from a sorted row's last index, or from each entry in the search. These tests put each
kind of row where that split could miss it (a repeat in a sorted row, a repeat or a bad index
after an unsorted row, a bad index after a repeat, at either end of a row, negative, equal to
``n_features``, in int64 indices) and ask every sparse-accepting estimator for the canonical
matrix's answer or the clear error, the model left as it was. ``LMS`` is dense-only: sparse
input, well-formed or not, gets scikit-learn's clear TypeError.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone, is_classifier

from linbook.online import LMS, SGDClassifier, SGDRegressor
from linbook.perceptron import Perceptron

ESTIMATORS = [SGDRegressor(random_state=0), SGDRegressor(adagrad=True, random_state=0),
              SGDClassifier(random_state=0), Perceptron(random_state=0), Perceptron(form="dual", random_state=0)]
EMPTY_ROWS = (0, 11, 39)                     # rows without an entry: first, middle, last


def _name(est):
    return repr(est).replace(" ", "")


def _data(n=40, d=7, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * (rng.random((n, d)) < 0.6)
    X[list(EMPTY_ROWS)] = 0.0
    y = X @ rng.standard_normal(d) + 0.5
    return X, y, (y > 0.5).astype(int)


def _target(est, y, labels):
    return labels if is_classifier(est) else y


def _rows(A, edit):
    """A copy of CSR ``A`` whose rows ``edit(i, data, indices)`` rewrites (new arrays per row; scipy checks nothing)."""
    data, indices, indptr = [], [], [0]
    for i in range(A.shape[0]):
        s = slice(A.indptr[i], A.indptr[i + 1])
        row_data, row_indices = edit(i, A.data[s].copy(), A.indices[s].copy())
        data.append(row_data)
        indices.append(row_indices)
        indptr.append(indptr[-1] + row_indices.size)
    B = sp.csr_matrix(A.shape)
    B.data, B.indices = np.concatenate(data), np.concatenate(indices).astype(A.indices.dtype)
    B.indptr = np.array(indptr, dtype=A.indptr.dtype)
    return B


def _reverse(i, data, indices):
    return data[::-1], indices[::-1]


def _split(i, data, indices):
    """Every entry twice with half its value (exact), the row still sorted: j, j, k, k, ..."""
    return np.repeat(data * 0.5, 2), np.repeat(indices, 2)


def _int64(A):
    A = A.copy()
    A.indices, A.indptr = A.indices.astype(np.int64), A.indptr.astype(np.int64)
    return A


def _mixed(A, late):
    """Rows 1-4 reversed, ``late(i, ...)`` on the rows from 20 on (after the unsorted rows), canonical in between."""
    return _rows(A, lambda i, d, j: _reverse(i, d, j) if 1 <= i <= 4 else late(i, d, j) if i >= 20 else (d, j))


#: Layouts of the same matrix: the name, the layout, whether the fit must equal the canonical one bit for bit
#: (a repeat makes a canonical copy; unsorted rows without one are summed in their stored order).
LAYOUTS = {
    "canonical with empty rows, int64 indices": (_int64, True),
    "sorted rows repeating columns": (lambda A: _rows(A, lambda i, d, j: _split(i, d, j) if i >= 20 else (d, j)), True),
    "sorted repeats after unsorted rows": (lambda A: _mixed(A, _split), True),
    "unsorted repeats after unsorted rows": (lambda A: _mixed(A, lambda i, d, j: _reverse(i, *_split(i, d, j))), True),
    "unsorted rows only, int64 indices": (lambda A: _int64(_rows(A, _reverse)), False),
    "repeats, int64 indices": (lambda A: _int64(_rows(A, _split)), True),
}


def test_layouts_store_the_same_matrix():
    X = _data()[0]
    for name, (layout, _) in LAYOUTS.items():
        A = layout(sp.csr_matrix(X))
        np.testing.assert_array_equal(A.toarray(), X, err_msg=name)
        assert A.indices.dtype == (np.int64 if "int64" in name else np.int32), name
        assert A.has_canonical_format == name.startswith("canonical"), name


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("est", ESTIMATORS, ids=_name)
def test_every_index_layout_gives_the_canonical_answer(est, layout):
    X, y, labels = _data()
    t = _target(est, y, labels)
    reference = clone(est).fit(sp.csr_matrix(X), t)
    make, bitwise = LAYOUTS[layout]
    A = make(sp.csr_matrix(X))
    stored = A.indices.copy()
    model = clone(est).fit(A, t)
    check = np.testing.assert_array_equal if bitwise else _close
    check(model.coef_, reference.coef_)
    check(model.intercept_, reference.intercept_)
    np.testing.assert_array_equal(A.indices, stored)         # the caller's matrix is not sorted in place


def _close(got, want):
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def _last_of_row(A, i, value):
    A.indices[A.indptr[i + 1] - 1] = value


def _first_of_row(A, i, value):
    A.indices[A.indptr[i]] = value


#: Malformed matrices: each edits a canonical CSR (int32 indices unless it says int64) in place.
MALFORMED = {
    "== n_features, last of a sorted row": lambda A: _last_of_row(A, 5, A.shape[1]),
    "negative, first of a sorted row": lambda A: _first_of_row(A, 5, -1),
    "negative, last of a sorted row": lambda A: _last_of_row(A, 5, -1),
    "== n_features after an unsorted row": lambda A: (_reverse_in_place(A, 2), _last_of_row(A, 30, A.shape[1])),
    "== n_features after a repeat": lambda A: (_repeat_in_place(A, 2), _last_of_row(A, 30, A.shape[1])),
    "negative, int64 indices, after an unsorted row": lambda A: (_reverse_in_place(A, 2),
                                                                 _first_of_row(A, 30, -(2 ** 40))),
    "2^32 + 1, int64 indices": lambda A: _last_of_row(A, 30, 2 ** 32 + 1),
}


def _reverse_in_place(A, i):
    s = slice(A.indptr[i], A.indptr[i + 1])
    A.indices[s], A.data[s] = A.indices[s][::-1].copy(), A.data[s][::-1].copy()


def _repeat_in_place(A, i):
    A.indices[A.indptr[i] + 1] = A.indices[A.indptr[i]]


def _malformed(X, case):
    A = sp.csr_matrix(X)
    if "int64" in case:
        A = _int64(A)
    MALFORMED[case](A)
    return A


@pytest.mark.parametrize("case", list(MALFORMED))
@pytest.mark.parametrize("est", ESTIMATORS, ids=_name)
def test_malformed_indices_raise_and_leave_the_model_as_it_was(est, case):
    X, y, labels = _data()
    t = _target(est, y, labels)
    model = clone(est).fit(sp.csr_matrix(X), t)
    before = (model.coef_.copy(), np.copy(model.intercept_))
    A = _malformed(X, case)
    message = rf"malformed sparse matrix: some column indices lie outside \[0, {X.shape[1]}\)"
    with pytest.raises(ValueError, match=message):
        model.fit(A, t)
    if hasattr(model, "partial_fit"):
        with pytest.raises(ValueError, match=message):
            model.partial_fit(A, t)
    with pytest.raises(ValueError, match=message):
        model.predict(A)
    np.testing.assert_array_equal(model.coef_, before[0])
    np.testing.assert_array_equal(model.intercept_, before[1])


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")   # no feature separates the classes
@pytest.mark.parametrize("est", ESTIMATORS, ids=_name)
def test_a_matrix_without_entries_fits_like_zeros(est):
    X, y, labels = _data()
    t = _target(est, y, labels)
    empty = sp.csr_matrix(X.shape)
    assert empty.nnz == 0
    model, dense = clone(est).fit(empty, t), clone(est).fit(np.zeros(X.shape), t)
    np.testing.assert_array_equal(model.coef_, 0.0)
    _close(model.intercept_, dense.intercept_)
    (np.testing.assert_array_equal if is_classifier(est) else _close)(model.predict(empty),
                                                                      dense.predict(np.zeros(X.shape)))


@pytest.mark.parametrize("est", ESTIMATORS, ids=_name)
def test_a_matrix_without_rows_gets_the_clear_error(est):
    with pytest.raises(ValueError, match="0 sample"):
        clone(est).fit(sp.csr_matrix((0, 7)), np.zeros(0))


@pytest.mark.parametrize("case", ["well formed", *MALFORMED])
def test_lms_refuses_sparse_input_clearly(case):
    X, y, _ = _data()
    A = sp.csr_matrix(X) if case == "well formed" else _malformed(X, case)
    with pytest.raises(TypeError, match="LMS: Sparse data was passed for X, but dense data is required"):
        LMS().fit(A, y)
