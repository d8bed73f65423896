"""Conditioning of the design matrix shared by the models with an intercept (private).

``linbook.base.centre_offsets`` is the old import path of :func:`centre_offsets` (kept).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse


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
        need = np.isfinite(mu_s) & np.isfinite(spread) & (np.abs(mu_s) > spread)
        if not np.any(need):
            return X, None
        mu = (sw @ X) / sw.sum()
    shift = np.where(need & np.isfinite(mu), mu, 0.0)
    return X - shift, shift
