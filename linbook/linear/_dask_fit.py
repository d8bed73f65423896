"""Least squares and ridge on row blocks: the centred Gram matrix as a map-reduce.

Each block gives its weighted means and its Gram matrix centred at them,
``G_b = (X_b - m_b)' A_b (X_b - m_b)``, ``c_b = (X_b - m_b)' A_b (y_b - ybar_b)``; two blocks'
statistics combine exactly (Chan et al.'s update of the parallel variance, for matrices)::

    G = G_1 + G_2 + (W_1 W_2 / W) (m_2 - m_1)(m_2 - m_1)'

so no centring by subtraction from ``X'X`` loses digits. The total is the in-memory fit's
:class:`linbook.linear._moments.Moments` (``G``, ``c``, ``yy``, the means), and the in-memory
solver step -- Cholesky of the equilibrated ``G + diag(pen)`` -- and the in-memory
``LinearModel._finish`` give the coefficients, the intercept and ``sigma2_``.

Derived in: chapter "Optimizers" § "When the data do not fit: the Newton step as a map-reduce".
"""

from __future__ import annotations

import warnings

import numpy as np

from ..base import LinbookWarning, check_params, require_y
from ..numerics import _power_of_two_scale
from ._base import original_gram, ridge_penalty
from ._far_rows import components_below_rounding
from ._moments import Moments
from .._dask.blocks import CLIENT_NUMBERS, map_reduce, merge_weight, row_blocks, summarise
from .._design import constant_columns, range_origin

__all__ = ["fit_linear_regression", "fit_ridge"]


def _scaled(Xb, yb, x_scale, y_scale, origin=None):
    """The block in the scaled coordinates of :class:`Moments` (powers of two: exact), measured from
    ``origin`` (:func:`linbook._design.range_origin`: exact too) where some column is offset far from 0."""
    X = np.asarray(Xb, dtype=np.float64)
    if origin is not None:
        X = X - origin
    return X / x_scale, np.asarray(yb, dtype=np.float64) / y_scale


def _gram_block(Xb, yb, swb, x_scale, y_scale, origin=None):
    """``(W, m, ybar, G, c, yy)`` of one block (scaled, from ``origin``), centred at its own weighted means."""
    X, y = _scaled(Xb, yb, x_scale, y_scale, origin)
    a = np.ones(X.shape[0]) if swb is None else np.asarray(swb, dtype=np.float64)
    W = float(a.sum())
    if not W > 0:
        d = X.shape[1]
        return 0.0, np.zeros(d), 0.0, np.zeros((d, d)), np.zeros(d), 0.0
    constant, value = constant_columns(X)         # centred on their value exactly (a mean is off by rounding)
    m, ybar = np.where(constant, value, (a @ X) / W), float(a @ y) / W
    Z, z = X - m, y - ybar
    if swb is not None:
        # what the rounded means leave (X - m is exact), subtracted as a second step, as in memory
        # (Moments._weighted_mean_residual): else W delta delta^T, with weights 1e40 times the others, swamped the
        # light rows' share of G (a coefficient 0.65 off)
        with np.errstate(over="ignore", invalid="ignore"):
            delta, dy = np.where(constant, 0.0, (a @ Z) / W), float(a @ z) / W
        if np.all(np.isfinite(delta)) and np.isfinite(dy):
            Z -= delta
            z -= dy
            m, ybar = m + delta, ybar + dy
    Za = Z * a[:, None]
    return W, m, ybar, Za.T @ Z, Za.T @ z, float(z @ (a * z))


def _combine_grams(*parts):
    W, m, ybar, G, c, yy = parts[0]
    G, c = G.copy(), c.copy()
    for W2, m2, ybar2, G2, c2, yy2 in parts[1:]:
        total = W + W2
        if W2 == 0:
            continue
        if W == 0:
            W, m, ybar, G, c, yy = W2, m2, ybar2, G2.copy(), c2.copy(), yy2
            continue
        dm, dy, k = m2 - m, ybar2 - ybar, merge_weight(W, W2)
        G += G2 + k * np.outer(dm, dm)
        c += c2 + k * dm * dy
        yy += yy2 + k * dy * dy
        m, ybar, W = m + dm * (W2 / total), ybar + dy * (W2 / total), total
    return W, m, ybar, G, c, yy


def _uncentred_block(Xb, yb, swb, x_scale, y_scale):
    """``(W, X'AX, X'Ay, y'Ay)`` of one block (scaled; no intercept: nothing is centred)."""
    X, y = _scaled(Xb, yb, x_scale, y_scale)
    a = np.ones(X.shape[0]) if swb is None else np.asarray(swb, dtype=np.float64)
    Xa = X * a[:, None]
    return float(a.sum()), Xa.T @ X, Xa.T @ y, float(y @ (a * y))


def _rss_block(Xb, yb, swb, v, intercept, x_scale, y_scale, origin=None):
    """The block's weighted residual sum of squares, scaled (the exact pass when the Gram's cancels)."""
    X, y = _scaled(Xb, yb, x_scale, y_scale, origin)
    r = y - (X @ v + intercept)
    return float(r @ r) if swb is None else float(np.asarray(swb, dtype=np.float64) @ (r * r))


def _scales(summary, origin=0.0):
    """``(x_scale, y_scale)`` as in memory: powers of two near the columns' (measured from ``origin``) and
    ``y``'s largest values where squares could overflow or underflow (beyond 1e+-100), else ones."""
    big = np.maximum(np.abs(summary.xmax - origin), np.abs(summary.xmin - origin))
    big = np.where(np.isfinite(big), big, 0.0)           # a column with no positive-weight rows
    tiny_or_huge = (big > 1e100) | ((big > 0) & (big < 1e-100))
    x_scale = _power_of_two_scale(big, below=True) if np.any(tiny_or_huge) else np.ones(big.size)
    y_scale = float(_power_of_two_scale(summary.yabs, below=True)) if not 1e-100 <= summary.yabs <= 1e100 else 1.0
    return x_scale, y_scale


class BlockMoments(Moments):
    """:class:`Moments` from the blocks' statistics, in the in-memory scaled coordinates
    (``x_scale``, ``y_scale``: :func:`_scales`, from the first pass's extremes).

    The in-memory solving and back-transformation methods (``cholesky_solve``, ``coef``,
    ``intercept``, ``rss_scaled``) run unchanged on these attributes; the residual pass they
    fall back to is a map-reduce here.
    """

    def __init__(self, blocks, summary, fit_intercept, model):
        self.blocks, self.sw, self.fit_intercept = blocks, None, fit_intercept
        self.n, self.d = summary.n, blocks.n_features
        self.n_eff = summary.n_positive
        # columns offset far from 0 are measured from the centre of their range (the first pass read it):
        # the moments of the shifted blocks are exact where those of X round at eps |offset|
        shift = range_origin(summary.xmin, summary.xmax) if fit_intercept else None
        self.shift = shift if shift is not None and np.any(shift) else None
        self.x_scale, self.y_scale = _scales(summary, 0.0 if self.shift is None else self.shift)
        self.y_abs_max = float(summary.yabs)
        scales = (self.x_scale, self.y_scale)
        if fit_intercept:
            W, m, ybar, G, c, yy = map_reduce(_gram_block, blocks, *scales, self.shift, combine=_combine_grams)
        else:
            W, G, c, yy = map_reduce(_uncentred_block, blocks, *scales)
            m, ybar = np.zeros(self.d), 0.0
        if not (np.all(np.isfinite(G)) and np.all(np.isfinite(c)) and np.isfinite(yy)):
            if summary.wmax > 1e100:          # the weights, not the rows, overflow the sums
                raise ValueError(f"{model}: the weighted Gram matrix X'AX overflows float64: sample_weight reaches "
                                 f"{summary.wmax:.3g}. Divide sample_weight by its maximum (LinearRegression's fit "
                                 "is the same; for Ridge divide lam by it too), or fit in memory, which rescales "
                                 "them.")
            raise ValueError(f"{model}: the Gram matrix X'X overflows float64 although every column is scaled "
                             "by its largest value (more rows than float64 can sum). Divide X and y by a power "
                             "of ten, or fit on fewer rows.")
        self.sum_w, self.x_mean_s, self.y_mean_s = W, m, ybar
        self.x_mean_delta = np.zeros(self.d)      # Moments.intercept reads it; each block corrected its own mean
        self.G, self.c, self.yy = G, c, yy
        self.gram_built = True

    def origin(self, v):
        """``(o, b_o)``: the fit as ``(x - o)^T w + b_o`` with ``o`` the shift of the offset columns (else None)."""
        return None if self.shift is None else (self.shift, Moments.intercept(self, v))

    def intercept(self, v):
        """``b = b_o - o^T w``: the moments are those of ``X - o``."""
        b_o = Moments.intercept(self, v)
        if self.shift is None:
            return b_o
        with np.errstate(over="ignore", invalid="ignore"):
            return float(b_o - self.shift @ (self.y_scale * (np.asarray(v, dtype=float) / self.x_scale)))

    def residual_scaled(self, v):    # pragma: no cover - replaced by rss_scaled's map-reduce below
        raise NotImplementedError

    def rss_scaled(self, v):
        rss = self.yy - 2.0 * (v @ self.c) + v @ (self.G @ v)
        if rss >= 1e-4 * self.yy:
            return float(rss)
        v = np.asarray(v, dtype=float)
        b = self.y_mean_s - self.x_mean_s @ v if self.fit_intercept else 0.0     # scaled intercept
        return map_reduce(_rss_block, self.blocks, v, b, self.x_scale, self.y_scale, self.shift)


def _prepare(est, X, y, sample_weight):
    check_params(est)             # the in-memory fit's errors, before any pass over the data
    require_y(est, y)
    model = type(est).__name__
    blocks = row_blocks(X, y, sample_weight, model=model)
    summary = summarise(blocks, model, labels=False)
    return blocks, summary, BlockMoments(blocks, summary, est.fit_intercept, model)


def _set_common(est, blocks):
    est.n_features_in_ = blocks.n_features
    if blocks.feature_names is not None:
        est.feature_names_in_ = blocks.feature_names
    elif "feature_names_in_" in vars(est):
        del est.feature_names_in_


def _ill_conditioned(model):
    advice = "increase lam" if model == "Ridge" else "use Ridge with lam > 0"
    return ValueError(f"{model}: X'X is singular or too ill-conditioned for the normal equations (reciprocal "
                      "condition number below 1e-8: collinear or near-duplicate columns, or rows many decades "
                      f"apart). On Dask, data of more than {CLIENT_NUMBERS:.0e} numbers have only the Cholesky "
                      f"path: {advice}, drop the collinear columns, or fit in memory (X.compute()) for the "
                      "orthogonal fallbacks.")


def fit_linear_regression(est, X, y, sample_weight=None):
    """``LinearRegression.fit`` on dask collections (the in-memory Cholesky path; where it fails, the in-memory fit
    on rows that fit on the client: :func:`_fit_on_client`)."""
    blocks, summary, mom = _prepare(est, X, y, sample_weight)
    v = mom.cholesky_solve(0.0)
    # (nearly exact: a far row on the line may hold the column means, as in memory, which then measures the rows)
    if v is None or mom.centring_may_have_lost_rows(v):
        if _fit_on_client(est, blocks, summary):
            return est
        if v is None:
            raise _ill_conditioned("LinearRegression")
    _set_common(est, blocks)
    est._sv, est._gram, est._training_gram = None, original_gram(mom.G, mom.x_scale), None
    est.solver_, est._rank, est._weight_unit = "cholesky", mom.d, 1.0     # (the weights as given: no unit)
    return est._finish(mom, v, "LinearRegression")


def fit_ridge(est, X, y, sample_weight=None):
    """``Ridge.fit`` on dask collections (the in-memory Cholesky path, penalty ``lam`` on ``G``; where it fails or
    a coefficient may hold only its rounding, the in-memory fit on rows that fit on the client)."""
    blocks, summary, mom = _prepare(est, X, y, sample_weight)
    pen = ridge_penalty(mom, float(est.lam))           # the penalty in scaled coordinates, as in memory
    v = mom.cholesky_solve(pen)
    small = v is not None and components_below_rounding(mom.G, pen, v)
    if v is None or small or mom.centring_may_have_lost_rows(v):
        if _fit_on_client(est, blocks, summary):
            return est
        if v is None:
            raise _ill_conditioned("Ridge")
    if small:
        warnings.warn(f"Ridge: a coefficient is below 1e-6 of the others in the equilibrated coordinates, where "
                      "the normal equations hold only rounding if the rows span many decades; the rows exceed "
                      f"{CLIENT_NUMBERS:.0e} numbers, so they were not measured. Fit in memory, or rescale the "
                      "far rows or weights, to be sure of the small coefficients.", LinbookWarning, stacklevel=4)
    _set_common(est, blocks)
    est._df, est._svd_df = (mom.G, pen, mom.n), None
    est.solver_, est._weight_unit = "cholesky", 1.0        # (the weights as given: no unit)
    return est._finish(mom, v, "Ridge")


def _block_rows(Xb, yb, swb):
    return (np.asarray(Xb, dtype=np.float64), np.asarray(yb, dtype=np.float64),
            None if swb is None else np.asarray(swb, dtype=np.float64))


def _concatenate_rows(*parts):
    return tuple(None if part[0] is None else np.concatenate(part) for part in zip(*parts))


def _fit_on_client(est, blocks, summary):
    """Whether the rows were brought to the client and fitted there, by the in-memory fit: where they hold at
    most :data:`CLIENT_NUMBERS` numbers. Why: where Cholesky of the normal equations fails, or its solution has a
    coefficient that may hold only rounding (:func:`._far_rows.components_below_rounding`), the in-memory fit
    measures the rows and takes the graded QR or an orthogonal method, so the answer is the in-memory one (with
    weights ``10 ** uniform(-50, 50)`` and a column of 1e-50 the Cholesky coefficient was 1e10 off, silently)."""
    if summary.n * (blocks.n_features + 2) > CLIENT_NUMBERS:
        return False
    X, y, sw = map_reduce(_block_rows, blocks, combine=_concatenate_rows)
    type(est).fit(est, X, y, sample_weight=sw)
    _set_common(est, blocks)
    return True
