"""Least absolute deviations (median regression) as a linear programme.

Derived in: chapter "Linear regression" § "Ridge, lasso and least absolute deviations".
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sps
from scipy import linalg
from scipy.optimize import linprog

from .._design import centre_offsets, constant_columns, typical_magnitudes
from ..base import all_or_nothing, validate_predict, without_zero_weight_rows
from .._kernels.csr import divide_columns
from ..numerics import _power_of_two_scale
from ._base import LinearModel, log_sum_squares  # noqa: F401  (shared validation and tags)

__all__ = ["LeastAbsoluteDeviation"]

#: The largest scaled entry the LP is given: ``2^60 ~ 1e18``, below the 1e20 that HiGHS treats as infinite.
_LARGEST_SCALED_ENTRY = 2.0 ** 60


def _typical_magnitudes(largest, columns):
    """:func:`linbook._design.typical_magnitudes` with the LP's bound, :data:`_LARGEST_SCALED_ENTRY`."""
    return typical_magnitudes(largest, columns, _LARGEST_SCALED_ENTRY)


#: The caps on ``|y|`` over its typical size (:func:`_target_scale`) tried in turn: HiGHS loses digits in proportion
#: to the LP's largest entry (one ``y`` at 1e10 times the rest: the other rows' objective 4e-6 above its least, at
#: 1e12: 4e-4; clipped at 2^20: 1e-9), so far values are clipped as close as their residuals' signs allow.
_TARGET_CAPS = (2.0 ** 10, 2.0 ** 20, 2.0 ** 40)


def _target_scales(y):
    """The ``(sy, cap)`` to try in turn: ``y / sy`` is the LP's right-hand side, its entries clipped to ``+-cap``
    (:func:`_clipped_target`). ``sy`` is a power of two near the median of the non-zero ``|y|``
    (:func:`_typical_magnitudes` without its floor) with each of :data:`_TARGET_CAPS`; last, where the fit passes
    through a far value (a heavy weight on it), near the largest ``|y|``, unclipped: the fitted values are that large.

    Why not the largest ``|y|`` alone, as before: one ``y`` at 1e20 (or 1e300) left every other entry near 1e-20,
    which HiGHS treats as zero; the other rows' fit was 67 % above the least objective, in silence.
    """
    typical = float(_typical_magnitudes(np.zeros(1), [np.abs(y)])[0])
    top = float(_power_of_two_scale(np.max(np.abs(y), initial=0.0), below=True))
    return [(typical, cap) for cap in _TARGET_CAPS] + [(top, np.inf)]


def _clipped_target(ys, cap):
    """``(clip(ys, -cap, cap), clipped)``: the LP's right-hand side with its entries beyond ``cap`` set to ``+-cap``.

    Why clipping is exact: moving ``y_i`` further out on the side of the fit where it lies does not change the
    LP's minimiser (the optimality certificate, a dual ``u`` with ``X~'u = 0``, ``u_i = s_i sign(r_i)`` where
    ``r_i != 0`` and ``|u_i| <= s_i``, still holds). So the fit to the clipped ``y`` is one to ``y`` where
    every clipped row keeps its residual's sign (:func:`_keeps_signs`); otherwise the next scale is tried.
    """
    return np.clip(ys, -cap, cap), np.abs(ys) > cap


def _keeps_signs(residuals, ys):
    """Whether every clipped row's residual has the sign of its (clipped) ``y`` (:func:`_clipped_target`), beyond
    doubt: at least half of it. A row the fit passes through has a residual of rounding size, of either sign
    (1e-13 at a cap of 2^10, with a fit to the unclipped ``y`` whose objective is 1 % lower: not a sign)."""
    return bool(np.all(residuals * np.sign(ys) >= 0.5 * np.abs(ys)))


def _solve_lp(A, ys, s):
    """The LAD coefficients ``(w, b)`` minimising ``sum_i s_i |ys_i - A_i . (w, b)|``, by linear programming.

    The primal LP (``ys - A (w, b) = u - v``, ``u, v >= 0``, minimise ``s'(u + v)``) has a row per sample. Its dual,
    maximise ``ys'd`` subject to ``A'd = 0`` and ``|d_i| <= s_i``, has a row per coefficient, and HiGHS returns the
    primal ``(w, b)`` as the multipliers of ``A'd = 0``: the same optimum, 10-14x faster at 10000 x 50. Weights
    over many decades are the dual's bounds, where HiGHS can stall (1e12 beside 1); then the primal is solved.
    So is it where the least-squares fit has a lower objective than the dual's answer, which then is no optimum:
    on nearly dependent columns HiGHS's tolerance on ``A'd = 0`` (1e-10) admits a ``d`` whose value ``ys'd`` is
    above the least objective (six rows, seven coefficients, condition 1e13: 1.63 where 0 is reached).
    """
    options = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
    n, k = A.shape
    res = linprog(-ys, A_eq=A.T.tocsr(), b_eq=np.zeros(k), bounds=np.column_stack([-s, s]), method="highs",
                  options=options)
    dual = -np.asarray(res.eqlin.marginals, dtype=float) if res.status == 0 and res.x is not None else None
    fits = [] if dual is None else [dual]
    least_squares = _least_squares(A, ys)
    if least_squares is not None:
        fits.append(least_squares)
    slack = 1e-9 * float(s @ np.abs(ys))       # an exact fit's two answers differ by rounding only
    if dual is not None and _objective(A, ys, s, dual) <= _objective(A, ys, s, fits[-1]) + slack:
        return dual
    eye = sps.identity(n, format="csr")
    res = linprog(np.concatenate([np.zeros(k), s, s]), A_eq=sps.hstack([A, eye, -eye], format="csr"), b_eq=ys,
                  bounds=[(None, None)] * k + [(0, None)] * (2 * n), method="highs", options=options)
    if res.status == 0 and res.x is not None:
        fits.append(np.asarray(res.x[:k], dtype=float))
    elif dual is None:
        raise ValueError(
            f"LeastAbsoluteDeviation: the linear programme (HiGHS) failed with status {res.status}: "
            f"{res.message}. The data are finite and were rescaled, so this usually means "
            "features of wildly different magnitudes within a column or far more columns than "
            "the LP can handle: check X for such columns, standardise them, or drop some.")
    return min(fits, key=lambda wb: _objective(A, ys, s, wb))


def _objective(A, ys, s, wb):
    """``sum_i s_i |ys_i - A_i wb|`` (inf where it is not finite)."""
    with np.errstate(over="ignore", invalid="ignore"):
        value = float(s @ np.abs(ys - A @ wb))
    return value if np.isfinite(value) else np.inf


def _least_squares(A, ys):
    """The least-squares fit of ``ys`` on ``A`` (SVD, dense), an upper bound on the LAD objective, or ``None`` above
    ``2^22`` entries (where it would cost more than the LP)."""
    if A.shape[0] * A.shape[1] > 2 ** 22:
        return None
    return np.linalg.lstsq(A.toarray(), ys, rcond=None)[0]


def _residual_correction(A, residuals, s):
    """The LAD fit to the first fit's residuals, solved on them scaled to near 1 (exactly, by a power of two).

    HiGHS's tolerances are absolute (1e-10), so where the fit leaves residuals far below the right-hand side (a
    column of size 1e8 beside noise of size 1) the first vertex can lie 5e-6 relative above the least objective; the
    same LP on the residuals (the objective is unchanged by moving ``y`` along ``A``) is solved to their own size.
    """
    scale = float(_typical_magnitudes(np.zeros(1), [np.abs(residuals)])[0])
    return scale * _solve_lp(A, residuals / scale, s)


def _descend_edges(A, ys, s, wb, max_steps=None):
    """``wb`` moved along the edges of the LAD objective ``sum_i s_i |ys_i - A_i wb|`` while one descends: the LP
    solver's vertex made optimal where its tolerances left it short (the exchange step of Barrodale and Roberts).

    At a vertex, a basis ``B`` of ``k`` rows is interpolated; its certificate ``d_B`` solves
    ``A_B^T d_B = -g``, ``g = sum_{i not in B} s_i sign(r_i) A_i``, and the vertex is optimal when every
    ``|d_i| <= s_i``. Where ``|d_i| > s_i``, releasing row ``i`` (the direction ``A_B delta = -sign(d_i) e_i``)
    lowers the objective at the rate ``|d_i| - s_i``; the step goes to the breakpoint where the slope turns
    (a weighted median of the rows' zero crossings), a new vertex. Why: HiGHS's absolute tolerances cannot see the
    rows of small weight beside weights 1e100 larger, and its vertex was up to 1400 times above the least
    objective, silently; ``d_B`` holds no heavy row's terms (those rows are in the basis), so it is exact enough
    to decide. Dense ``A`` of at most ``2^22`` entries (else ``wb`` unchanged); each step strictly descends."""
    n, k = A.shape
    if n * k > 2 ** 22 or n <= k:
        return wb
    A = A.toarray() if sps.issparse(A) else np.asarray(A)
    eps = np.finfo(float).eps
    for _ in range(max_steps or 10 * k):
        step = _edge_step(A, ys, s, wb, eps)
        if step is None:
            return wb
        wb = wb + step
    return wb


def _edge_step(A, ys, s, wb, eps):
    """The step of :func:`_descend_edges` from ``wb``, or ``None`` where no edge descends (beyond rounding). Short of
    a vertex (fewer than ``k`` independent rows interpolated: HiGHS's answer on a column it took for zero), the step
    first goes along the objective's gradient projected on the directions those rows leave free."""
    n, k = A.shape
    r = ys - A @ wb
    size = np.abs(ys) + np.abs(A) @ np.abs(wb)
    on = np.abs(r) <= 8 * k * eps * size             # the rows the fit interpolates (to rounding)
    zero = np.flatnonzero(on)
    sign = np.where(on, 0.0, np.sign(r))
    g = A.T @ (s * sign)                              # minus the objective's gradient off the interpolated rows
    rank, basis, Q = 0, zero[:0], np.eye(k)
    if zero.size:
        Q, R, pivot = linalg.qr(A[zero].T, pivoting=True)
        diag = np.abs(np.diag(R))
        rank = int(np.sum(diag > k * eps * diag[0])) if diag.size and diag[0] > 0 else 0
        basis = zero[pivot[:rank]]
    if rank < k:
        free = Q[:, rank:]                            # directions along which the interpolated rows stay at 0
        along = free.T @ g
        norm = float(np.linalg.norm(along))
        # g's rounding along the free directions, and theirs (a QR's directions are exact to eps)
        noise = 64 * k * eps * float(np.linalg.norm(np.abs(free).T @ (np.abs(A).T @ (s * ~on))) + np.linalg.norm(g))
        if not norm > noise:
            return None
        return _to_breakpoint(A, r, s, on, free @ (along / norm), -norm, 0.0)
    AB = A[basis]
    d = linalg.solve(AB.T, -g)
    slack = 64 * k * eps * (np.abs(linalg.inv(AB.T)) @ (np.abs(A).T @ (s * ~on)))
    for i in np.argsort(-(np.abs(d) - s[basis]) / s[basis]):
        if not np.abs(d[i]) - s[basis][i] > slack[i]:
            return None
        delta = linalg.solve(AB, -np.sign(d[i]) * np.eye(k)[i])
        rate = A @ delta
        slope = s[basis][i] - np.abs(d[i]) + float(s[on] @ np.abs(rate[on])) - float(s[basis] @ np.abs(rate[basis]))
        step = _to_breakpoint(A, r, s, on, delta, slope, slack[i])
        if step is not None:
            return step
    return None


def _to_breakpoint(A, r, s, on, delta, slope, slack):
    """``t delta`` with ``t`` the first zero crossing of a row's residual where the objective's slope along
    ``delta`` (``slope`` at ``t = 0``) turns non-negative; ``None`` where ``slope`` does not descend beyond ``slack``."""
    if not slope < -slack:
        return None
    rate = A @ delta
    moving = np.flatnonzero((rate != 0) & ~on)
    t = r[moving] / rate[moving]
    ahead = np.flatnonzero(t > 0)
    order = ahead[np.argsort(t[ahead])]
    turn = np.flatnonzero(slope + np.cumsum(2.0 * s[moving][order] * np.abs(rate[moving][order])) >= 0.0)
    return None if turn.size == 0 else t[order[turn[0]]] * delta


class LeastAbsoluteDeviation(LinearModel):
    """Least absolute deviations: minimises ``sum_i s_i |y_i - x_i . w - b|``.

    ``s_i`` are the sample weights (1 by default). The maximum-likelihood fit under Laplace
    noise. Solved exactly as a linear programme (scipy's HiGHS): with ``y - X w - b = u - v``,
    ``u, v >= 0``, minimise ``sum_i s_i (u_i + v_i)``. HiGHS is given its dual, which has one
    equality constraint per coefficient and ``N`` bounded variables, and returns ``(w, b)`` as
    its multipliers (``_solve_lp``); sparse ``X`` is used as is. The
    minimiser need not be unique (the objective is piecewise linear); the LP returns a vertex
    solution, which interpolates at least ``rank`` data points. Same objective value as
    scikit-learn's ``QuantileRegressor(quantile=0.5, alpha=0)`` and statsmodels' ``QuantReg``
    at ``q=0.5``.

    Before the LP, ``y`` and every column of ``X`` are divided by a power of two near their
    largest entry (exact in floating point), so that HiGHS sees numbers near 1: it treats
    entries below 1e-9 as zero and above 1e20 as infinite, which made raw fits of features
    scaled by 1e-12 suboptimal and by 1e300 fail. Hence ``coef(X * s) = coef(X) / s`` (up to the
    choice among equally good vertices). A failed LP raises ``ValueError`` saying why.

    Parameters
    ----------
    fit_intercept : bool, default=True

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    scale_ : float
        Maximum-likelihood Laplace scale ``b = sum_i s_i |r_i| / sum_i s_i`` on the training data.
    n_params_ : int
        ``n_features + fit_intercept``.
    n_features_in_ : int
    feature_names_in_ : ndarray of str, only when ``X`` had string column names.

    Derived in: chapter "Linear regression" § "Ridge, lasso and least absolute deviations".
    """

    def __init__(self, fit_intercept=True):
        self.fit_intercept = fit_intercept

    @all_or_nothing
    def fit(self, X, y, sample_weight=None):
        """Fit by linear programming; returns ``self``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights ``s_i`` (a weight 2 counts a row twice).

        Returns
        -------
        self
        """
        X, y, sw = self._validate(X, y, sample_weight)
        X, y, sw = without_zero_weight_rows(X, y, sw)     # (they would still set the column scales)
        n, d = X.shape
        sw = np.ones(n) if sw is None else sw
        Xs, sx, shift = self._scaled_columns(X)
        if self.fit_intercept:
            # a constant column is the intercept again: its coefficient is 0 (see constant_columns), where the dual LP
            # would share the intercept between them
            Xs = (Xs @ sps.diags((~constant_columns(X)[0]).astype(float))).tocsr()
            Xs.eliminate_zeros()
            Xs = sps.hstack([Xs, sps.csr_matrix(np.ones((n, 1)))], format="csr")
        # weights scaled to mean 1 (the minimiser does not change) so the bounds are near 1 too
        s = sw / sw.mean()
        for sy, cap in _target_scales(y):
            with np.errstate(over="ignore"):          # y / sy beyond float64: clipped anyway
                ys, clipped = _clipped_target(y / sy, cap)
            wb = _solve_lp(Xs, ys, s)
            wb += _residual_correction(Xs, ys - Xs @ wb, s)
            wb = _descend_edges(Xs, ys, s, wb)
            if _keeps_signs(ys[clipped] - Xs[clipped] @ wb, ys[clipped]):
                break
        with np.errstate(over="ignore", invalid="ignore"):
            self.coef_ = sy * (wb[:d] / sx)
            self.intercept_ = float(sy * wb[d]) if self.fit_intercept else 0.0
            # predictions as (x - shift)^T w + b_shift (see linbook._predictor.predict_scores: x^T w + b rounds at
            # eps |shift^T w|)
            self._origin = None if shift is None else (shift, self.intercept_)
            if shift is not None:
                self.intercept_ -= float(self.coef_ @ shift)
        if not (np.all(np.isfinite(self.coef_)) and np.isfinite(self.intercept_)):
            raise ValueError("LeastAbsoluteDeviation: the coefficients overflow float64 because y is "
                             "huge relative to the features; rescale y or the columns of X.")
        top = float(_power_of_two_scale(np.max(np.abs(y), initial=0.0), below=True))   # no overflow in r
        r = np.abs(y / top - self._linear(X) / top)
        self._log_scale = max(float(np.log(sw @ r / sw.sum()) + np.log(top)) if np.any(sw * r > 0) else -np.inf,
                              float(np.log(np.finfo(float).tiny)))
        with np.errstate(over="ignore"):
            self.scale_ = float(np.exp(self._log_scale))
        return self

    def _scaled_columns(self, X):
        """``(Xs, sx, shift)``: ``X`` as CSR with its (shifted) columns divided by powers of two ``sx``, for the LP.

        Dense columns whose mean exceeds their spread are centred (only ``b`` changes, by ``-w' shift``): an
        offset of 1e8 leaves the LP singular to rounding. Unweighted means: weighted ones sit on a heavy row
        and leave entries near 1e-9 elsewhere, which HiGHS drops as zeros.
        """
        if sps.issparse(X):
            magnitudes = abs(X).tocsc()
            sx = _typical_magnitudes(np.asarray(magnitudes.max(axis=0).todense()).ravel(),
                                     [magnitudes.data[a:b] for a, b in zip(magnitudes.indptr, magnitudes.indptr[1:])])
            return divide_columns(X, sx), sx, None
        Xc, shift = centre_offsets(X, None, self.fit_intercept)
        magnitudes = np.abs(Xc)
        sx = _typical_magnitudes(np.max(magnitudes, axis=0, initial=0.0), list(magnitudes.T))
        return sps.csr_matrix(Xc / sx), sx, shift

    def log_likelihood(self, X, y):
        """Laplace log-likelihood ``-N log(2 b) - sum|r_i| / b`` with ``b = scale_`` (nats).

        On the training data (unweighted fit) ``b`` is the maximum-likelihood scale, so this
        is the maximised log-likelihood ``-N (log(2 b) + 1)``. Computed in log space (finite
        for ``y`` near 1e300).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        float
        """
        X = validate_predict(self, X, accept_sparse=["csr", "csc"])
        y = np.asarray(y, dtype=float).ravel()
        if y.shape[0] != X.shape[0] or not np.all(np.isfinite(y)):
            raise ValueError("y must be finite and have one value per row of X")
        r = np.abs(y - self._linear(X))
        s = float(_power_of_two_scale(np.max(r, initial=0.0), below=True))
        ratio = float(np.sum(r / s)) * np.exp(np.log(s) - self._log_scale)
        return float(-y.shape[0] * (np.log(2.0) + self._log_scale) - ratio)

    @property
    def n_params_(self):
        return self.n_features_in_ + int(self.fit_intercept)
