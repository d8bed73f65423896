"""Dense least squares and ridge fits whose rows span many decades: solved row by row accurately.

A row 1e20 times the others (or a weight that large) holds ``X^T S X`` only to its own rounding, and the centred
copy that LAPACK's SVD solver is given holds the other rows only to the rounding of the far row's share of the
column means: both routes lose the ordinary rows' share of the answer. Before this path, one far row of 1e16 to
1e100 in 30 random problems left 20 fits of ``LinearRegression`` and ``Ridge`` silently wrong (fitted values of
the ordinary rows off by 0.03 to 89 of ``y``'s spread). The rows go instead, uncentred, with the intercept as a
column of ones, to Householder QR with the rows sorted by size (:mod:`linbook._graded_qr`, Powell and Reid).

Derived in: chapter "Linear regression" § "Least squares in matrix form".
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sps

from .._graded_qr import _full_rank_by_rows, _row_spread, _sorted_qr_solve, central_row
from ..base import LinbookWarning

__all__ = []

#: Rows whose weighted squared norms (columns in their own units) span more than this go to the graded QR: the
#: normal equations and the centred copy keep at most 16 - log10 of it of the smallest rows' digits.
FAR_ROWS = 1e8
#: An equilibrated coefficient below this share of the largest may hold only a Cholesky solve's rounding.
SMALL_COMPONENT = 1e-6


def components_below_rounding(G, pen, v):
    """Whether a coefficient of the Cholesky solution ``v`` of ``(G + diag(pen)) v = c``, in the equilibrated
    coordinates ``sqrt(G_jj + pen_j) v_j``, is below :data:`SMALL_COMPONENT` of the largest: then a ridge fit
    measures its rows (:func:`far_rows_solve`).

    Why: a penalty makes ``G + diag(pen)`` well conditioned, so Cholesky passes its condition test, but that
    bounds the error only normwise. Where the rows span many decades, ``G`` holds the light rows only to the
    heavy rows' rounding, and a coefficient that only the light rows decide is lost: with weights
    ``10 ** uniform(-50, 50)`` and a column scaled by 1e-50, it was 1e10 times its value (1e91 at +-200),
    silently. Such a coefficient is small beside the others; on ordinary data none is, and the rows are not
    measured (a pass over ``X`` with a median: several times the fit)."""
    if v.size == 0:
        return False
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        ev = np.abs(np.sqrt(np.diagonal(G) + pen) * v)
        return bool(np.min(ev) < SMALL_COMPONENT * np.max(ev))


def _rows_from_a_central_row(mom):
    """``(Z, sw, shift)``: the dense rows of ``mom`` in its scaled units, from a central row ``shift`` and with a
    column of ones where there is an intercept (the same model). Why the shift: a column offset by 1e12 beside
    rows of spread weights (whose fit is nearly exact) left the ones nearly parallel to it."""
    Z = np.divide(mom.X, mom.x_scale)
    sw = np.ones(mom.n) if mom.sw is None else mom.sw
    if not mom.fit_intercept:
        return Z, sw, np.zeros(mom.d)
    shift = central_row(Z, sw)
    return np.column_stack([Z - shift, np.ones(mom.n)]), sw, shift


def rows_far_apart(mom):
    """Whether the dense rows of ``mom`` span more than :data:`FAR_ROWS` in weighted squared size (from a central
    row): then the centred moments hold the smaller rows only to the far rows' rounding."""
    if sps.issparse(mom.X) or mom.n == 0:
        return False
    Z, sw, _ = _rows_from_a_central_row(mom)
    return _row_spread(Z, sw) > FAR_ROWS


def far_rows_solve(mom, pen, model):
    """``(v, intercept, rss)``: the weighted ridge problem of ``mom`` (``pen`` the penalty per scaled coefficient,
    zeros for least squares) solved by the graded QR of its rows, where dense rows span more than
    :data:`FAR_ROWS` and the design has full rank row by row; ``v`` in ``mom``'s scaled coordinates, the
    intercept in ``y``'s units, ``rss`` the weighted residual sum of squares in scaled units. ``None`` otherwise
    (the caller's solver then runs; with a rank-deficient design beside far rows it is warned about)."""
    if sps.issparse(mom.X) or mom.n == 0:
        return None
    Z, sw, shift = _rows_from_a_central_row(mom)
    prior = np.r_[pen, np.zeros(int(mom.fit_intercept))]
    if Z.shape[0] + np.count_nonzero(prior) < Z.shape[1] or _row_spread(Z, sw) <= FAR_ROWS:
        return None
    if not _full_rank_by_rows(Z, sw, prior):
        warnings.warn(f"{model}: the rows of X span more than {FAR_ROWS:g} in squared size and its columns are "
                      "(nearly) dependent, so the minimum-norm solution may have lost the smaller rows' digits. "
                      "Drop the dependent columns, scale the far rows down, or use Ridge(lam > 0).",
                      LinbookWarning, stacklevel=4)
        return None
    m, _, objective = _sorted_qr_solve(Z, mom.ys, sw, prior, model)
    if m is None or not np.all(np.isfinite(m)):
        return None
    # the data's share of the QR's minimum (residuals formed row by row hold only each far row's rounding)
    with np.errstate(over="ignore", invalid="ignore"):
        rss = max(objective - float(prior @ (m * m)), 0.0)
    intercept = float((m[mom.d] - m[:mom.d] @ shift) * mom.y_scale) if mom.fit_intercept else 0.0
    return m[:mom.d], intercept, rss
