"""Conditioning of the design matrix shared by the models with an intercept (private).

``linbook.base.centre_offsets`` is the old import path of :func:`centre_offsets` (kept).
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse

from ._kernels.csr import divide_columns
from .numerics import _power_of_two_scale


def constant_columns(X):
    """``(constant, value)``: which columns of ``X`` hold one value in every row, and that value (0 elsewhere).

    Their mean, summed in floating point, is that value only to rounding (forty rows of 0.1 average to
    0.1 + 1.4e-17), so centring on it leaves a column of rounding noise that a fit takes for a feature:
    scaled to unit size (or compared with the other columns for rank) it got a coefficient of O(1) to
    1e16, and every prediction at another value of the feature moved by that much. Centred on the value
    itself the column is exactly zero, the duplicate of the intercept it is: its coefficient is 0 (the
    minimum-norm answer). Dense ``X``: compared with the first row a block of rows at a time, each block
    only on the columns still equal (usually none after the first block: no N x D temporary); sparse
    ``X``: only columns stored in every row can be nonzero constants (an all-zero column already has
    mean 0 exactly).
    """
    n, d = X.shape
    constant, value = np.zeros(d, dtype=bool), np.zeros(d)
    if n == 0:
        return constant, value
    if scipy.sparse.issparse(X):
        X = scipy.sparse.csr_matrix(X)
        cand = np.flatnonzero(np.bincount(X.indices, minlength=d) >= n)
        block = X[:, cand].toarray()
        cand = cand[np.all(block == block[:1], axis=0)]
    else:
        cand, start = np.arange(d), 0
        while cand.size and start < n:
            stop = start + max(1, _BLOCK_ENTRIES // cand.size)
            rows = X[start:stop] if cand.size == d else X[start:stop, cand]
            cand = cand[np.all(rows == X[0, cand], axis=0)]
            start = stop
    constant[cand] = True
    value[cand] = X[0, cand].toarray().ravel() if scipy.sparse.issparse(X) else X[0, cand]
    return constant, value


_BLOCK_ENTRIES = 1 << 18       # entries compared at a time (a 256 kB boolean temporary)


#: a column whose location lies beyond this many spreads from 0 is "offset far from 0" for the predictions' origin
#: (:func:`range_origin`, ``Moments.origin``): there ``x^T w + b``, with ``b ~ -o^T w``, rounds at ``eps |o^T w|``
FAR_OFFSET = 8.0


def offset_columns(location, spread, factor=FAR_OFFSET):
    """Which columns are offset from 0: ``|location| > factor * spread``, both finite (one rule for every model).

    ``factor``: :data:`FAR_OFFSET` where the fit measures such columns from an origin to keep the predictions'
    digits (:func:`range_origin`, ``linbook.linear._moments.Moments.origin``); 1 where the fit centres them to
    keep the intercept's column from being parallel to theirs (:func:`centre_offsets`, and the logistic fit on
    Dask, which decides it on all rows).
    """
    with np.errstate(over="ignore", invalid="ignore"):
        return np.isfinite(location) & np.isfinite(spread) & (np.abs(location) > factor * spread)


def range_origin(lo, hi):
    """The origin to measure each column from, given its smallest and largest values ``lo``, ``hi``: the centre
    of its range where the range lies farther from 0 than 4 times its width, else 0 (and 0 where the range is
    not finite: a column with no rows of positive weight).

    Why: a feature offset by 1e12 holds its spread in its last few digits, and any sum over it -- class means,
    Gram matrices, ``x^T w + b`` with ``b ~ -o^T w`` -- rounds at ``eps 1e12``: 2e-4 off against the same fit
    on ``x - 1e12``. Measured from the centre of its range the feature is exact (every entry is within a
    factor 2 of the centre, so ``x - centre`` is exact by Sterbenz's lemma) and of the size of its spread.
    Used by the Gaussian classifiers, ``FisherLDA`` and the least-squares fits on Dask (which read the range
    in their first pass); in memory, ``Moments.origin`` and :func:`centre_offsets` measure from the mean.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        centre, half_width = lo / 2 + hi / 2, hi / 2 - lo / 2
    return np.where(offset_columns(centre, half_width), centre, 0.0)


def column_means(X):
    """Column means of dense 2-D ``X``; a constant column's is its value exactly (see :func:`constant_columns`)."""
    constant, value = constant_columns(X)
    return np.where(constant, value, X.mean(axis=0))


def centre_offsets(X, sw, fit_intercept):
    """``(X - mu, mu)`` with ``mu`` the weighted means of the dense columns whose mean exceeds
    their spread (zeros elsewhere; ``X`` itself and ``mu = None`` when there is none, for sparse
    ``X`` or without an intercept). With an intercept the model is translation invariant
    (only ``b`` changes, by ``-w' mu``), but a feature offset by 1e8 makes its column almost
    parallel to the intercept's and the Hessian singular to rounding: centring those columns
    keeps the fit exact. Which columns is decided on every k-th row (at most ~20,000 rows: an
    estimate is enough, centring or not is exact either way); the copy of ``X`` is made only
    when some column needs it. ``sw``: the sample weights (None: ones)."""
    if not fit_intercept or scipy.sparse.issparse(X) or X.shape[0] < 2:
        return X, None
    sw = np.ones(X.shape[0]) if sw is None else sw
    step = max(1, X.shape[0] // 20_000)
    S, sw_S = X[::step], sw[::step]
    if not sw_S.sum() > 0:
        S, sw_S = X, sw
    with np.errstate(over="ignore", invalid="ignore"):
        mu_s = (sw_S @ S) / sw_S.sum()
        spread = np.sqrt(sw_S @ (S - mu_s) ** 2 / sw_S.sum())
        need = offset_columns(mu_s, spread, 1.0)
        if not np.any(need):
            return X, None
        mu = (sw @ X) / sw.sum()
    shift = np.where(need & np.isfinite(mu), mu, 0.0)
    constant, value = constant_columns(X)
    shift[constant] = value[constant]             # exactly: see constant_columns
    return X - shift, shift


def centre_sparse_offsets(X, sw, fit_intercept):
    """``(X - 1 shift', shift)`` for sparse ``X``, as :func:`centre_offsets` for dense:
    ``shift_j`` the weighted mean of the columns whose mean exceeds their spread (zeros elsewhere;
    ``X`` itself and ``None`` when there is none, or without an intercept).

    Only such a column is centred, and it is stored densely: ``|mean| > spread`` means
    ``2 mean^2 > mean(x^2)`` (the spread is never formed: ``mean(x^2) - mean^2`` cancels for an
    offset column), which needs more than half of the weight on non-zero entries, so the
    centred matrix has fewer than twice the non-zeros of ``X``; text-like columns stay as they
    are. Subtracting the mean from the stored values is the dense path's ``X - shift``, exact
    to rounding; the alternative, centring implicitly by rank corrections (``X v - 1 (shift'v)``,
    ``X'SX - ...``), cancels 8 digits in the gradient and 16 in the Hessian at a 1e8 offset."""
    if not fit_intercept or X.shape[0] < 2 or X.nnz == 0:
        return X, None
    n, d = X.shape
    X = scipy.sparse.csr_matrix(X)
    # candidates: columns with more than half of the weight on stored entries (one pass over the indices)
    if sw is None:
        sw, stored = np.ones(n), np.bincount(X.indices, minlength=d)
    else:
        stored = np.bincount(X.indices, weights=np.repeat(sw, np.diff(X.indptr)), minlength=d)
    cand = np.flatnonzero(stored > 0.5 * sw.sum())
    if cand.size == 0:
        return X, None
    Xs = X[:, cand].tocsc()
    m = np.asarray(abs(Xs).max(axis=0).todense()).ravel()
    unit = divide_columns(Xs, np.where(m > 0, m, 1.0))     # |x| <= 1: no overflow when squared
    mean_u, mean_sq_u = (sw @ unit) / sw.sum(), (sw @ unit.multiply(unit)) / sw.sum()
    need = 2.0 * mean_u * mean_u > mean_sq_u
    if not np.any(need):
        return X, None
    cols = cand[need]
    block = Xs[:, np.flatnonzero(need)]
    shift = np.zeros(d)
    dense = block.toarray()
    shift[cols] = (sw @ dense) / sw.sum()
    constant = np.all(dense == dense[:1], axis=0)
    shift[cols[constant]] = dense[0, constant]        # exactly: see constant_columns
    dense -= shift[cols]                              # the centred columns, as the dense path's X - shift
    centred = scipy.sparse.csr_matrix((dense.ravel(), np.tile(cols, n), np.arange(0, n * cols.size + 1, cols.size)),
                                      shape=X.shape)
    # the other columns as they are (own index arrays: eliminate_zeros works in place, X is the caller's)
    keep = np.ones(d)
    keep[cols] = 0.0
    rest = scipy.sparse.csr_matrix((X.data * keep[X.indices], X.indices.copy(), X.indptr.copy()), shape=X.shape)
    rest.eliminate_zeros()
    return rest + centred, shift


def typical_magnitudes(largest, columns, spread):
    """Per column, a power of two near the median of its non-zero ``|x|`` (``columns``: each one's ``|x|``), but at
    least ``largest / spread``: what a column is divided by so that its ordinary entries are near 1 (exact).

    Why not its largest entry: one far row (1e9 times the others) then left every other entry of its columns near
    1e-9, below what a solver or a QR resolves beside entries near 1 (``LeastAbsoluteDeviation``'s LP treated them
    as zero; ``loocv_ridge``'s QR moved the ordinary rows' leverages by 1e-6). ``spread`` bounds the far entries
    after the division (the LP's 1e20 infinity; float64's range).
    """
    typical = _median_of_positive(columns)
    return _power_of_two_scale(np.maximum(typical, largest / spread), below=True)


def _median_of_positive(columns):
    """Per column, the median of its positive entries (0 for none); columns of one length in one vectorised pass
    (a loop of ``np.median`` calls cost ~10 ms for 40 short columns). Taken of the halves and doubled (exact, the
    same double): the median of an even count averages the middle two, whose sum overflowed to inf for entries
    near 1e308 (then no scale at all: ``hat_diagonal`` of such columns came out 0)."""
    if len(columns) > 1 and len({len(c) for c in columns}) == 1:
        A = np.array(columns, dtype=float)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)          # "All-NaN slice": a column without one
            typical = 2.0 * np.nanmedian(np.where(A > 0, 0.5 * A, np.nan), axis=1)
        return np.where(np.isnan(typical), 0.0, typical)
    return np.array([2.0 * np.median(0.5 * c[c > 0]) if np.any(c > 0) else 0.0 for c in columns])
