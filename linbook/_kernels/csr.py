"""The arrays of a CSR matrix as the compiled sparse loops take them.

The loops need column indices in ``[0, n_features)`` (an index outside it would make a loop
read or write outside the weight vector) and no duplicate entries (a column stored twice in
a row counts twice in a squared row norm, the default step, and in adagrad's sums of squared
gradients). ``summed_csr`` and ``canonical_csr`` establish both, once per fit, in one compiled
read of the indices (``linbook._kernels.sgd.csr_index_check``: a row whose indices strictly
increase is checked by comparing neighbours, only rows out of order pay for a duplicate
search); ``csr_parts`` then hands the arrays to the loops without checking them again, so a
matrix must come to it through one of the two.

The primal loops (a row's dot product with the weights, a step along the row) do not need
sorted indices: ``summed_csr`` returns the caller's matrix itself when its rows only are
unsorted (a text pipeline's ``diags(s) @ X`` leaves them so), and a canonical copy when a
row repeats a column (scipy's ``sum_duplicates``, which also sorts). The dual perceptron
merges two rows' sorted indices: ``canonical_csr`` returns a matrix sorted too. Either way
the caller's matrix is left as it was. On unsorted rows the kernels sum each row's products
in the stored order, so the answer equals the sorted matrix's to rounding, not bit for bit.
Both decide from the indices themselves, not from scipy's cached ``has_canonical_format``
flag, which goes stale when the arrays are edited in place.

``divide_columns`` is the one column scaling of a sparse matrix in linbook (the fits' standardised
coordinates ``X / c``): each stored entry divided by its column's scale.
"""

import numpy as np
import scipy.sparse as sp


def canonical_csr(X):
    """``X`` itself when its indices are sorted and unique in every row, else a canonical copy.

    Column indices outside ``[0, n_features)`` raise ``ValueError``.
    """
    from .sgd import CANONICAL

    if _index_check(X, "canonical_csr") != CANONICAL:
        X = X.copy()
        X.sum_duplicates()                   # sums duplicates and sorts the indices
    return X


def summed_csr(X):
    """``X`` itself when no row stores a column twice (its indices in any order), else a canonical copy.

    Column indices outside ``[0, n_features)`` raise ``ValueError``.
    """
    from .sgd import REPEATS

    if _index_check(X, "summed_csr") == REPEATS:
        X = X.copy()
        X.sum_duplicates()                   # sums duplicates and sorts the indices
    return X


def _index_check(X, caller):
    """``linbook._kernels.sgd.csr_index_check`` of CSR ``X``; raises when an index is out of range."""
    if not sp.issparse(X) or X.format != "csr":
        raise TypeError(f"{caller} expects a CSR matrix")
    from .sgd import OUT_OF_RANGE, csr_index_check

    indices = _unsigned(X.indices)
    status = csr_index_check(indices, X.indptr, indices.dtype.type(X.shape[1]))
    if status == OUT_OF_RANGE:
        raise ValueError("X is a malformed sparse matrix: some column indices lie outside "
                         f"[0, {X.shape[1]}). Rebuild it with scipy.sparse.csr_matrix((data, indices, "
                         "indptr), shape=...) and check it with X.check_format(full_check=True).")
    return status


def _unsigned(indices):
    """The column indices viewed as unsigned integers of the same width (no copy).

    numba guards every access ``w[j]`` with a signed index against negative values (Python's
    wrap-around); with an unsigned index that test disappears, which saves 10-15 % of a sparse
    SGD or perceptron epoch.
    """
    return indices.view({4: np.uint32, 8: np.uint64}[indices.dtype.itemsize])


def csr_parts(X):
    """``(data, indices viewed unsigned, indptr)`` of CSR ``X`` for the compiled loops.

    ``X`` comes from ``summed_csr`` or ``canonical_csr`` in the same call (they checked its
    column indices and removed duplicates; nothing is checked again here); its rows may be
    unsorted for the primal loops.
    """
    if not sp.issparse(X) or X.format != "csr":
        raise TypeError("csr_parts expects a CSR matrix")
    return X.data, _unsigned(X.indices), X.indptr


def divide_columns(X, scale):
    """``X / scale`` (column ``j`` divided by ``scale[j]``) of sparse ``X``, as a new CSR matrix.

    Each stored entry is divided by its column's scale, ``data / scale[indices]``: never densified,
    and never multiplied by the reciprocal ``1 / scale``, which overflows to ``inf`` for a subnormal
    scale (a column whose largest ``|x|`` is 1e-310) and loses digits for a tiny one, so that
    ``X @ diags(1 / scale)`` turned such a column into ``inf`` and the fit diverged. ``X`` may be
    CSR, canonical or not, CSC or any other scipy format; it is left as it was (the copy owns its
    arrays). A column stored twice in a row is summed (and the indices sorted), as the product
    did, so that per-entry operations on the copy (its squares) see each entry once. The scales
    are finite and positive where a column stores an entry (the callers' maxima and powers of two).
    """
    scale = np.asarray(scale, dtype=float)
    out = X.tocsr(copy=True)                 # CSR with its own arrays (from CSC etc.: the conversion's)
    out.data = out.data / scale[out.indices]
    out.sum_duplicates()                     # checks the fresh copy's indices (no stale flag)
    return out
