"""Least squares on rows of very different sizes: Householder QR of the rows sorted by norm (Powell and Reid).

A row 1e20 times the others holds the normal equations ``A = sum s z z^T`` only to its own rounding, so every
route through ``A`` (and LAPACK's SVD, which resolves singular values down to ``eps s_max``) loses the other rows'
share of the answer. QR with row interchanges and column pivoting is accurate row by row, so each row keeps its
own digits. Used by :class:`linbook.online.RecursiveLeastSquares` (far rows in a stream), by
:class:`linbook.LinearRegression` and :class:`linbook.Ridge` on dense ``X`` (far rows in ``fit``), and, as
LAPACK's QR of the sorted rows (:func:`sorted_row_qr`), by the leave-one-out functions of
:mod:`linbook.selection`.

Derived in: chapter "Linear regression" § "Least squares in matrix form".
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg

from ._kernels.threads import single_threaded_blas
from .numerics import _power_of_two_scale

__all__ = []

_QR_ROUNDING = 1e-7     # a QR pivot below 1e7 times its rounding error: the answer may have lost its digits
_EPS = np.finfo(float).eps


def _row_spread(Z, sw):
    """The ratio of the largest to the smallest ``s_i ||z_i / c||^2`` over the rows of weight and norm above 0,
    ``c`` the columns' median ``|entry|`` (their largest where that is 0; a power of two).

    Why: ``A = sum s z z^T`` holds a row's share only to the rounding of the largest share, so rows whose shares
    span more than ~1e8 lose digits in ``A``, and beyond 1e16 they are lost whatever the route. The column units
    make a column of large numbers no far row; the median makes a far row no unit."""
    mag = np.abs(Z)
    unit = np.median(mag, axis=0)
    unit = _power_of_two_scale(np.where(unit > 0, unit, mag.max(axis=0, initial=0.0)), normal=True)
    with np.errstate(over="ignore", under="ignore"):
        q = sw * np.einsum("ij,ij->i", Z / unit, Z / unit)
    q = q[(q > 0) & np.isfinite(q)]
    with np.errstate(over="ignore"):
        return q.max() / q.min() if q.size > 1 else 1.0


def largest_rows_first(A):
    """The order of ``A``'s rows by decreasing largest ``|entry|`` (stable): the order in which Householder QR is
    accurate row by row."""
    return np.argsort(-np.max(np.abs(A), axis=1, initial=0.0), kind="stable")


def sorted_row_qr(A):
    """``(Q, R, pivot)``: LAPACK's thin Householder QR with column pivoting of ``A``'s rows sorted largest first
    (:func:`largest_rows_first`), ``A[:, pivot] = Q R``, with ``Q``'s rows put back in ``A``'s order. Why sorted:
    Householder QR with column pivoting of rows in decreasing size is accurate row by row (Powell and Reid; a row
    1e10 times the others left their leverages 1e-6 off). One BLAS thread: column pivoting makes the QR a sequence
    of small BLAS calls, and BLAS's threads spin between them (5000 x 50 on 2 busy cores: 0.72 s of CPU against
    0.017 s with one thread)."""
    order = largest_rows_first(A)
    with single_threaded_blas():
        Q, R, pivot = scipy.linalg.qr(A[order], mode="economic", pivoting=True)
    Q[order] = Q.copy()
    return Q, R, pivot


def _norm(x):
    """``||x||``, scaled: entries of 1e200 do not overflow."""
    top = np.abs(x).max(initial=0.0)
    return top * np.sqrt(np.sum((x / top) ** 2)) if top > 0 else 0.0


def _householder_step(M, J, k):
    """Step ``k`` of Householder QR with row interchanges, in place on ``M`` (rows ``k..``, columns ``k..``):
    the row of largest ``|M_ik|`` is moved to row ``k`` first, so every entry of the reflector's vector
    ``v`` (``v_k = 1``) is at most 1 and no reflection adds a large row's rounding to a small one (Powell and
    Reid). Why not LAPACK's ``dgeqrf``: a row that the earlier steps made small in ``z`` but left large in ``y``
    (the residual of rows 1e150 times the others) was reflected onto the small pivot's row, and its ``y``
    rounded away what the pivot's row held (an intercept of 0 for 456).

    ``J`` bounds the rounding error of each entry of ``M``'s first ``p`` columns, updated alike. False: the
    column is zero."""
    i = k + int(np.argmax(np.abs(M[k:, k])))
    M[[k, i]], J[[k, i]] = M[[i, k]], J[[i, k]]
    x = M[k:, k]
    top = abs(x[0])
    if top == 0:
        return False
    norm = _norm(x)
    beta = -np.copysign(norm, x[0])
    v = x / (x[0] - beta)
    v[0] = 1.0
    tau = (beta - x[0]) / beta
    w = tau * (v @ M[k:, k + 1:])
    M[k:, k + 1:] -= np.outer(v, w)
    p = J.shape[1]
    J[k:, k + 1:] += _EPS * (np.abs(M[k:, k + 1:p]) + np.outer(np.abs(v), np.abs(w[:p - k - 1])))
    M[k, k], M[k + 1:, k] = beta, 0.0
    return True


def _rounding_in_m(junk, y, pivot):
    """A bound on the error that the rounding ``junk`` of a column (rows ``k..``, before step ``k``) puts into
    ``m`` beside those rows' ``y``: ``sum_i junk_i |y_i| / R_kk^2`` (scaled: the terms can overflow). Why: rows 1e107 times the others with two equal columns leave, after their first pivots, entries
    that are nothing but rounding in those columns; with their large ``y`` they decide how the prior splits the
    weight between the columns, which no order of the rows recovers."""
    y = np.abs(y)
    a, b = junk.max(initial=0.0), y.max(initial=0.0)
    if a == 0 or b == 0:
        return 0.0
    return (a / abs(pivot)) * (b / abs(pivot)) * float(np.sum((junk / a) * (y / b)))


def _sorted_qr(rows, p, model="RecursiveLeastSquares"):
    """``((R, q, piv), m, objective)``: the least-squares solution ``m`` of the rows ``[sqrt(s) z, sqrt(s) y]`` (or
    ``[S, S m]``, a square root of earlier rows' information) by Householder QR with column pivoting and row
    interchanges (:func:`_householder_step`) of the rows sorted by decreasing norm: ``Z[:, piv] = Q R``,
    ``q`` the first ``p`` entries of ``Q^T y``, ``R m[piv] = q``; ``objective`` the squared norm of the rest of
    ``Q^T y``, the minimum, which residuals formed row by row hold only to each far row's rounding (a row of 1e16
    on the line: 4000 times the minimum); ``(None, None, None)`` when ``R`` is singular or not finite. Why:
    Householder QR so is accurate row by row (Powell and Reid): a row 1e150 times the others
    leaves their share of the answer intact, where the normal equations ``A m = r`` round it away. Without the
    column pivoting, rows 1e150 times the others in ``x`` and a row of weight 1e147 (large only in the
    intercept's column) lost the intercept."""
    M = rows[largest_rows_first(rows[:, :p])]        # (the max-norm orders the rows as well, and cannot overflow)
    if M.shape[0] < p:
        return None, None, None
    piv, J, lost = np.arange(p), _EPS * np.abs(M[:, :p]), 0.0    # lost: a bound on the error in m
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        for k in range(p):
            sub = M[k:, k:p]
            top = np.abs(sub).max(axis=0)
            unit = np.where(top > 0, top, 1.0)
            j = k + int(np.argmax(top * np.sqrt(np.sum((sub / unit) ** 2, axis=0))))
            M[:, [k, j]], J[:, [k, j]], piv[[k, j]] = M[:, [j, k]], J[:, [j, k]], piv[[j, k]]
            junk, y = J[k:, k].copy(), M[k:, p].copy()
            if not _householder_step(M, J, k):
                return None, None, None
            lost = max(lost, _rounding_in_m(junk, y, M[k, k]))
    R, q = np.triu(M[:p, :p]), M[:p, p]
    if not (np.isfinite(lost) and np.all(np.isfinite(R)) and np.all(np.isfinite(q))):
        return None, None, None
    m = np.empty(p)
    m[piv] = scipy.linalg.solve_triangular(R, q)
    if lost > _QR_ROUNDING * np.abs(m).max():
        warnings.warn(f"{model}: rows far larger than the others leave a direction of the weights "
                      "decided by rounding (equal or nearly equal columns beside such rows), so the mean may be off "
                      f"by up to {lost:.2g} along it. Drop duplicated columns, scale the far rows down or raise "
                      "prior_precision.", UserWarning, stacklevel=5)
    with np.errstate(over="ignore"):
        objective = float(M[p:, p] @ M[p:, p])
    return (R, q, piv), m, objective


def _weighted_rows(Z, y, sw):
    """``[sqrt(s) z, sqrt(s) y]`` per row: the rows whose least-squares problem is the weighted one."""
    root = np.sqrt(sw)
    return np.column_stack([root[:, None] * Z, root * y])


def _sorted_qr_solve(Z, y, sw, prior, model="RecursiveLeastSquares"):
    """``(m, root, objective)``: the weighted ridge problem ``min sum s_i (y_i - z_i^T m)^2 + sum_j prior_j m_j^2``
    solved by :func:`_sorted_qr` of its rows and the prior's rows ``sqrt(prior_j) e_j``, and its minimum;
    ``(None, None, None)`` when ``R`` is singular."""
    p = Z.shape[1]
    rows = np.vstack([_weighted_rows(Z, y, sw), np.column_stack([np.diag(np.sqrt(prior)), np.zeros(p)])[prior > 0]])
    root, m, objective = _sorted_qr(rows, p, model)
    return m, root, objective


def _full_rank_by_rows(Z, sw, prior):
    """Whether the weighted design with the prior's rows has full column rank, judged on its rows scaled to
    norm 1 and then its columns to norm 1 (scalings that change no rank): condition below 1e6, the limit
    ``_FINAL_COND = 1e12`` puts on ``A``. Why: a far row makes ``A`` look singular, and ``R``'s diagonal spans
    the rows' scales, so neither can tell a far row from a duplicated column; the unit rows can."""
    rows = np.vstack([np.sqrt(sw)[:, None] * Z, np.diag(np.sqrt(prior))[prior > 0]])
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        rows = rows / _power_of_two_scale(np.abs(rows).max(axis=1), normal=True)[:, None]
        rows = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    rows = rows[np.all(np.isfinite(rows), axis=1)]
    rows = rows / np.maximum(np.linalg.norm(rows, axis=0), np.finfo(float).tiny)
    sv = np.linalg.svd(rows, compute_uv=False)
    return sv.size == Z.shape[1] and sv[-1] > 1e-6 * sv[0]


def _weighted_median(x, w):
    """Each column's value at the first row (in sorted order) past half the weight ``w``."""
    order = np.argsort(x, axis=0, kind="stable")
    below = np.cumsum(w[order], axis=0)
    middle = np.argmax(below >= 0.5 * below[-1], axis=0)        # the first row past half the weight
    return x[order[middle, np.arange(x.shape[1])], np.arange(x.shape[1])]


def _lower_median(x):
    """:func:`_weighted_median` for equal weights: the row past half the weight is
    then the ``ceil(k / 2)``-th smallest of ``k`` (the cumulative weights ``1, 2, ..., k`` are exact),
    found by a partition. Why: the sort of every column cost ~3 ms of the ~5 ms a stream of 101 parameters spends
    on its first two chunks (the rows held until ``2 p``), more than 20 later chunks."""
    k = (x.shape[0] + 1) // 2 - 1
    return np.partition(x, k, axis=0)[k]


def central_row(Z, sw):
    """Each column's weighted median (``sw`` scaled by its largest: the sums cannot overflow): a shift near the
    data's centre, whatever a far row or an offset does to the mean."""
    top = sw.max()
    return _lower_median(Z) if np.all(sw == top) else _weighted_median(Z, sw / top)
