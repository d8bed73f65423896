"""Plumbing shared by the streaming estimators: chunk validation, divergence, progress."""

from __future__ import annotations

import sys

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import validate_data as _sk_validate_data

from ..base import DivergenceError, validate_fit

CURE = "scale the features (e.g. StandardScaler), lower eta0 (or use eta0='auto')"


def validate_chunk(est, X, y, *, first, y_numeric, accept_sparse=False):
    """Validate one chunk of a stream.

    The first chunk (or ``fit``) goes through ``linbook.base.validate_fit``, which records
    ``n_features_in_`` / ``feature_names_in_``; later chunks are checked against them
    (same width, same column names), as scikit-learn's ``partial_fit`` does.
    Sparse ``X`` comes back as CSR with sorted indices.
    """
    if y is None:
        raise ValueError(f"{type(est).__name__} requires y to be passed, but the target y is None.")
    sparse = ["csr", "csc", "coo"] if accept_sparse else False
    if first:
        X, y = validate_fit(est, X, y, y_numeric=y_numeric, accept_sparse=sparse)
    else:
        X, y = _sk_validate_data(est, X, y, reset=False, dtype=np.float64, accept_sparse=sparse,
                                 y_numeric=y_numeric)
        if y_numeric:
            y = np.asarray(y, dtype=np.float64)
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        if not X.has_sorted_indices:
            X = X.sorted_indices()
    return X, y


def row_sq_norms(X):
    """``||x_i||^2`` of every row (dense or CSR), without overflow warnings (inf is checked later)."""
    with np.errstate(over="ignore"):
        if sp.issparse(X):
            return np.asarray(X.multiply(X).sum(axis=1)).ravel()
        return np.einsum("ij,ij->i", X, X)


def nonzeros(X):
    """Number of nonzero entries of ``X`` (dense or sparse)."""
    return int(X.count_nonzero()) if sp.issparse(X) else int(np.count_nonzero(X))


def diverged(est, where, cure=CURE):
    """The :class:`DivergenceError` of a fit whose loss or parameters stopped being finite."""
    return DivergenceError(f"{type(est).__name__}: the iteration diverged ({where} became non-finite). "
                           f"Cure: {cure}.")


def progress(est, epoch, n_epochs, loss):
    """Plain-text progress line on stderr (only when ``verbose``)."""
    width = 20
    done = int(round(width * epoch / n_epochs))
    print(f"{type(est).__name__} [{'#' * done}{'.' * (width - done)}] epoch {epoch}/{n_epochs}"
          f"  mean loss {loss:.6f}", file=sys.stderr, flush=True)
