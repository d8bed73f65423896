"""The arrays of a CSR matrix as the compiled sparse loops take them.

``csr_parts(X)`` returns ``(data, indices, indptr)`` with the column indices viewed as
*unsigned* integers (no copy). numba guards every access ``w[j]`` with a signed index
against negative values (Python's wrap-around); with an unsigned index that test
disappears, which saves 10-15 % of a sparse SGD or perceptron epoch. The indices of a
valid CSR matrix lie in ``[0, n_features)``; that is checked here, once, because an index
outside that range would make the loop read or write outside the weight vector.

The loops need no duplicate entries (a column stored twice in a row): a duplicate counts
twice in a squared row norm (the default step) and in adagrad's sums of squared gradients.
The primal loops (a row's dot product with the weights, a step along the row) do not need
sorted indices: ``summed_csr`` returns the caller's matrix itself when its rows only are
unsorted (a text pipeline's ``diags(s) @ X`` leaves them so), and a canonical copy when a
row repeats a column (scipy's ``sum_duplicates``, which also sorts). The dual perceptron
merges two rows' sorted indices: ``canonical_csr`` returns a matrix sorted too. Either way
the caller's matrix is left as it was. On unsorted rows the kernels sum each row's products
in the stored order, so the answer equals the sorted matrix's to rounding, not bit for bit.
"""

import numpy as np
import scipy.sparse as sp


def canonical_csr(X):
    """``X`` itself when its indices are sorted and unique in every row, else a canonical copy.

    Decided from the indices (not from scipy's cached ``has_canonical_format`` flag,
    which goes stale when the arrays are edited in place).
    """
    if not sp.issparse(X) or X.format != "csr":
        raise TypeError("canonical_csr expects a CSR matrix")
    indices, indptr = X.indices, X.indptr
    nnz = indices.size
    if nnz > 1:
        within_row = np.ones(nnz - 1, dtype=bool)
        row_starts = indptr[1:-1]
        within_row[row_starts[(row_starts > 0) & (row_starts < nnz)] - 1] = False
        # a comparison, not np.diff of int64 copies: no temporaries of 8 bytes per nonzero
        if not np.all((indices[1:] > indices[:-1])[within_row]):
            X = X.copy()
            X.sum_duplicates()               # sums duplicates and sorts the indices
    return X


def summed_csr(X):
    """``X`` itself when no row stores a column twice (its indices in any order), else a canonical copy.

    One compiled pass over the indices (``linbook._kernels.sgd.csr_column_repeats``): no copy
    or sort of an unsorted matrix. Column indices outside ``[0, n_features)`` raise here.
    """
    if not sp.issparse(X) or X.format != "csr":
        raise TypeError("summed_csr expects a CSR matrix")
    from .sgd import csr_column_repeats

    found = csr_column_repeats(X.indices, X.indptr, X.shape[1])
    if found == 2:
        _malformed(X)
    if found == 1:
        X = X.copy()
        X.sum_duplicates()                   # sums duplicates and sorts the indices
    return X


def _malformed(X):
    raise ValueError("X is a malformed sparse matrix: some column indices lie outside "
                     f"[0, {X.shape[1]}). Rebuild it with scipy.sparse.csr_matrix((data, indices, "
                     "indptr), shape=...) and check it with X.check_format(full_check=True).")


def csr_parts(X):
    """``(data, indices viewed unsigned, indptr)`` of CSR ``X``, after checking the column indices.

    ``X`` holds no duplicate entries (``summed_csr`` or ``canonical_csr`` made it so); its
    rows may be unsorted for the primal loops.
    """
    if not sp.issparse(X) or X.format != "csr":
        raise TypeError("csr_parts expects a CSR matrix")
    indices = X.indices
    if indices.size and (indices.min() < 0 or indices.max() >= X.shape[1]):
        _malformed(X)
    unsigned = {4: np.uint32, 8: np.uint64}[indices.dtype.itemsize]
    return X.data, indices.view(unsigned), X.indptr
