"""Recursive least squares: the Kalman filter for a constant weight vector (recursive Bayes, 8.93).

Derived in: chapter "Online learning and stochastic optimisation" § "The Bayesian view".
"""

from __future__ import annotations

import numpy as np
from scipy import linalg
from sklearn.base import BaseEstimator, RegressorMixin

from ..base import (DEPRECATED, NON_NEGATIVE, POSITIVE, DivergenceError, check_params, check_sample_weight,
                    dask_blocks, predict_input, renamed_param)
from ._stream import numpy_pass, transactional, validate_chunk

__all__ = ["RecursiveLeastSquares"]

_SWITCH_COND = 1e8      # leave the information form once cond(A) (columns scaled) is below this
_FINAL_COND = 1e12      # beyond this at the end of a chunk the design is treated as rank deficient
_WOODBURY_MIN_PARAMS = 32   # from this many parameters a chunk goes in by blocks (Woodbury)


def _woodbury(P, m, Xb, yb, sw_block, first_row=0):
    """Absorb the ``k`` rows ``Xb`` (weights ``sb``) at once: the rank-``k`` form of the recursion.

    With ``Z = diag(sqrt(s)) Xb`` and ``M = I + Z P Z^T`` (k x k, Cholesky ``L L^T``)::

        P <- P - P Z^T M^{-1} Z P = P - G^T G,     G = L^{-1} Z P
        m <- m + P Z^T M^{-1} (sqrt(s) (y - Xb m)) = m + G^T L^{-1} sqrt(s) (y - Xb m)

    (Woodbury's identity; the row-by-row recursion is the case ``k = 1``, and after all rows
    ``P = (alpha I + sum s x x^T)^{-1}`` either way). Returns new ``(P, m)``.
    """
    root = np.sqrt(sw_block)
    Z = root[:, None] * Xb
    with np.errstate(over="ignore", invalid="ignore"):      # an overflow is reported below
        U = Z @ P
        M = U @ Z.T
    M[np.diag_indices_from(M)] += 1.0
    try:
        if not np.all(np.isfinite(M)):
            raise linalg.LinAlgError
        L = linalg.cholesky(M, lower=True, check_finite=False)
    except linalg.LinAlgError:
        raise _lost_definiteness(first_row) from None
    G = linalg.solve_triangular(L, U, lower=True, check_finite=False)
    e = linalg.solve_triangular(L, root * (yb - Xb @ m), lower=True, check_finite=False)
    P_new = P - G.T @ G
    P_new = 0.5 * (P_new + P_new.T)
    if not (np.all(np.isfinite(P_new)) and np.all(np.diag(P_new) > 0)):
        raise _lost_definiteness(first_row)
    return P_new, m + G.T @ e


def _sherman_morrison_rows(Xa, y, sw, P, m):
    """Recursive least squares row by row (Sherman-Morrison), in numpy, updating ``P`` and ``m`` in place.

    For each sample with weight ``s_i > 0``::

        Px = P x,   d = 1/s_i + x^T P x,   k = Px / d,   m <- m + k (y - x^T m),   P <- P - k Px^T

    Returns the row where ``d`` was not positive and finite (``P`` lost positive definiteness),
    or -1, as ``linbook._kernels.online.rls_pass``, which runs this loop compiled and is tested
    equal to it.

    Derived in: chapter "Online learning and stochastic optimisation" § "The Bayesian view".
    """
    for i in range(Xa.shape[0]):
        if sw[i] == 0.0:
            continue
        x = Xa[i]
        Px = P @ x
        d = 1.0 / sw[i] + float(x @ Px)
        e = y[i] - float(x @ m)
        if not (d > 0.0 and np.isfinite(d) and np.isfinite(e)):
            return i
        k = Px / d
        m += k * e
        P -= np.outer(k, Px)
    return -1


def _lost_definiteness(row):
    return DivergenceError(
        f"RecursiveLeastSquares: the update of sample {row} made P lose positive "
        "definiteness (the data are too ill-conditioned for the recursion). Cure: scale the "
        "features X (e.g. StandardScaler) or set prior_precision > 0.")


class RecursiveLeastSquares(RegressorMixin, BaseEstimator):
    """Recursive least squares: the Kalman filter for a constant weight vector (recursive Bayes, 8.93).

    Model ``y = w^T x + b + eps``, ``eps ~ N(0, sigma^2 / s)`` for a sample of weight ``s``
    (default 1), prior ``w ~ N(0, sigma^2 / alpha I)`` with ``alpha = prior_precision``
    (flat prior on ``b``). After every sample the posterior is ``N(m_k, sigma^2 P_k)``
    with ``P_k = (alpha I + sum s x x^T)^{-1}``, updated by Sherman-Morrison, one
    sample at a time (a compiled loop)::

        d = 1/s + x^T P x,   k = P x / d,   m <- m + k (y - x^T m),   P <- P - k x^T P

    so the mean after all N samples minimises
    ``(1/2) sum_i s_i (y_i - w^T x_i - b)^2 + (alpha/2) ||w||^2`` -- scikit-learn's
    ``Ridge(alpha=prior_precision)`` with the same ``sample_weight``, batch least
    squares for ``alpha = 0`` -- in one pass. The gain ``P x`` is a per-parameter
    (matrix) step size.

    With a flat prior (``alpha = 0``, or the intercept) ``P_0`` is infinite, so the
    filter starts in information form ("exact initialisation"): it accumulates
    ``A = alpha I + sum s x x^T`` and ``sum s x y`` until ``A`` is well conditioned,
    then sets ``P = A^{-1}``, ``m = P sum s x y`` and continues sample by sample.
    With an intercept the filter runs on ``x - c``, ``c`` the first chunk's weighted column
    means: the flat prior on ``b`` makes that shift change only ``b`` (``b = b_c - w^T c``),
    and it keeps ``A`` well conditioned when a column is offset by 1e8 or more.
    A design that stays rank deficient (too few samples, a constant-zero or an exactly
    duplicated column) raises ``ValueError``; data so ill-conditioned that ``P`` loses
    positive definiteness raise ``linbook.base.DivergenceError``.

    Parameters
    ----------
    prior_precision : float, default 0.0
        ``alpha``: prior precision of the weights relative to the noise precision
        (the ridge penalty).
    fit_intercept : bool, default True
    noise_variance : float, default 1.0
        ``sigma^2``; only scales ``covariance_``.
    alpha : float, deprecated
        The old name of ``prior_precision`` (FutureWarning; removed in linbook 0.3).
    block_size : int, deprecated
        Removed (the update is one compiled loop): has no effect (FutureWarning).

    Attributes
    ----------
    coef_ : ndarray (n_features,)
    intercept_ : float
        The posterior mean.
    P_ : ndarray (p, p)
        ``(alpha I + sum s x x^T)^{-1}`` over ``[coef..., intercept]``.
    covariance_ : ndarray (p, p)
        ``noise_variance * P_``, the posterior covariance.
    n_samples_seen_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Column names, when ``X`` was a DataFrame with string column names.

    Derived in: chapter "Online learning and stochastic optimisation" § "The Bayesian view".
    """

    def __init__(self, *, prior_precision=0.0, fit_intercept=True, noise_variance=1.0, alpha=DEPRECATED,
                 block_size=DEPRECATED):
        self.prior_precision = prior_precision
        self.fit_intercept = fit_intercept
        self.noise_variance = noise_variance
        self.alpha = alpha
        self.block_size = block_size

    # fit is one pass over the rows in order, so on a dask collection it is partial_fit over its blocks
    _fit_is_one_pass = True
    _parameter_constraints = {"prior_precision": [NON_NEGATIVE], "fit_intercept": ["boolean"],
                              "noise_variance": [POSITIVE]}

    def _start(self, X, sw):
        renamed_param(self, None, "block_size")
        prior_precision = renamed_param(self, "prior_precision", "alpha")
        check_params(self, prior_precision=prior_precision)
        self._prior_precision = float(prior_precision)
        d = X.shape[1]
        p = d + int(self.fit_intercept)
        self.n_samples_seen_ = 0
        # With a flat prior on b, streaming x - c instead of x changes only b (b = b_c - w^T c), not the
        # posterior of w: c near the data's centre keeps A well conditioned whatever the columns' offsets.
        self._shift = self._centre(X, sw) if self.fit_intercept else None
        prior = np.full(p, float(prior_precision))
        if self.fit_intercept:
            prior[-1] = 0.0
        if np.all(prior > 0):      # proper prior: Kalman filter from N(0, P0)
            self._A, self._r = None, None
            self._P, self._m = np.diag(1.0 / prior), np.zeros(p)
        else:                      # information form until A is invertible
            self._A, self._r = np.diag(prior), np.zeros(p)
            self._P = self._m = None

    @staticmethod
    def _centre(X, sw):
        """The shift ``c``: the first chunk's weighted column means (weights scaled to a maximum of 1 so
        that ``s x`` cannot overflow; plain means when every weight is 0). Any fixed ``c`` gives the same
        model; this one makes the intercept column orthogonal to the others in the first chunk's ``A``."""
        top = sw.max()
        if not top > 0:
            return X.mean(axis=0)
        with np.errstate(over="ignore", invalid="ignore"):      # X near the overflow: then no shift
            centre = np.average(X, axis=0, weights=sw / top)
        return np.where(np.isfinite(centre), centre, 0.0)

    def _augment(self, X):
        """``[x - c, 1]`` per row with an intercept (``c`` the shift fixed by the first chunk), else ``x``."""
        if not self.fit_intercept:
            return np.ascontiguousarray(X)
        Xa = np.empty((X.shape[0], X.shape[1] + 1))
        Xa[:, :-1] = X - self._shift
        Xa[:, -1] = 1.0
        return Xa

    @staticmethod
    def _switch(A, r, final=False):
        """``(P, m)`` from the information form ``(A, r)`` once ``A`` is well conditioned (its
        2-norm condition number with the columns scaled to unit diagonal below the limit), else
        ``None``. The scaled factor is linbook's one equilibrated Cholesky."""
        from .._kernels.cholesky import equilibrated_cholesky, equilibrated_solve

        factor = equilibrated_cholesky(A)
        if factor is None:                     # not positive definite: a zero or dependent column
            return None
        C, e = factor
        sv = linalg.svdvals(C)                 # cond(A / (e e^T)) = (sv_max / sv_min)^2
        if not sv[-1] ** 2 > sv[0] ** 2 / (_FINAL_COND if final else _SWITCH_COND):
            return None
        P = linalg.cho_solve((C, False), np.eye(A.shape[0])) / np.outer(e, e)
        return 0.5 * (P + P.T), equilibrated_solve(factor, r)

    def _update(self, Xa, y, sw):
        """Absorb the rows of ``Xa`` (already augmented) with weights ``s``: the new state, computed
        on copies, is stored only when every row went in (a failed call leaves the model as it was)."""
        n, p, i = Xa.shape[0], Xa.shape[1], 0
        A, r, P, m = self._A, self._r, self._P, self._m
        if A is not None:
            A, r = A.copy(), r.copy()
        while i < n and A is not None:         # information form, p rows at a time
            j = min(n, i + p)
            Xb, sw_block = Xa[i:j], sw[i:j]
            with np.errstate(over="ignore", invalid="ignore"):
                A += Xb.T @ (sw_block[:, None] * Xb)
                r += Xb.T @ (sw_block * y[i:j])
            if not (np.all(np.isfinite(A)) and np.all(np.isfinite(r))):
                raise ValueError("X^T X overflows (features or targets of order 1e150 or larger): "
                                 "scale the features and the target before fitting.")
            i = j
            switched = self._switch(A, r)
            if switched is not None:
                (P, m), A, r = switched, None, None
        if A is None and i < n:
            if p >= _WOODBURY_MIN_PARAMS:      # blocks of <= p rows: BLAS-3, k x k Cholesky
                from .._kernels.threads import single_threaded_blas

                # products this small gain nothing from BLAS threads, which wait for each other
                # in every call on a busy machine
                with single_threaded_blas():
                    for j in range(i, n, p):
                        P, m = _woodbury(P, m, Xa[j:j + p], y[j:j + p], sw[j:j + p], first_row=j)
            else:                              # few parameters: the rank-1 loop (numpy, then compiled) is faster
                P, m = P.copy(), m.copy()
                if numpy_pass(n - i):
                    with np.errstate(over="ignore", invalid="ignore"):    # reported by the row returned
                        bad = _sherman_morrison_rows(Xa[i:], y[i:], sw[i:], P, m)
                else:
                    from .._kernels.online import rls_pass

                    bad = rls_pass(Xa[i:], y[i:], sw[i:], P, m)
                if bad >= 0:
                    raise _lost_definiteness(i + bad)
                P = 0.5 * (P + P.T)
        self._A, self._r, self._P, self._m = A, r, P, m

    def _publish(self):
        if self._P is None:
            switched = self._switch(self._A, self._r, final=True)
            if switched is not None:
                self._P, self._m = switched
                self._A = self._r = None
        if self._P is None:
            raise self._rank_deficient()
        if not (np.isfinite(self._m).all() and (self._P.diagonal() > 0).all()):
            raise DivergenceError("RecursiveLeastSquares: the posterior became non-finite or lost positive "
                                  "definiteness. Cure: scale the features X (e.g. StandardScaler) or set "
                                  "prior_precision > 0.")
        m, d = self._m, self.n_features_in_
        self.coef_ = m[:d].copy()
        self.P_ = self._P.copy()
        self.intercept_ = 0.0
        if self.fit_intercept:      # back from the shifted columns: b = b_c - w^T c
            c = self._shift
            self.intercept_ = float(m[-1] - self.coef_ @ c)
            # P = S P_c S^T with S = [[I, 0], [-c^T, 1]], in O(p^2) (a chunk's update may cost less than p^3)
            Pc = self.P_[:d, :d] @ c
            self.P_[:d, -1] -= Pc
            self.P_[-1, -1] += c @ Pc - 2.0 * (c @ self._P[:d, -1])
            self.P_[-1, :d] = self.P_[:d, -1]
        self.covariance_ = self.noise_variance * self.P_

    def _rank_deficient(self):
        n, p, alpha = self.n_samples_seen_, self._A.shape[0], self._prior_precision
        prior = f"prior_precision = {alpha:g}" + (" (a flat prior on the intercept)" if self.fit_intercept else "")
        return ValueError(
            f"The design seen so far ({n} sample{'s' if n != 1 else ''}, {p} parameters) is rank deficient or "
            f"too ill-conditioned to solve (cond > {_FINAL_COND:g} with its columns scaled) with {prior}: "
            "fewer independent samples than parameters, a zero column, duplicated columns, or sample_weight "
            "spanning too many orders of magnitude. Stream more samples, drop the redundant columns, "
            f"bring sample_weight to a narrower range, or {'raise' if alpha > 0 else 'set'} prior_precision"
            f"{'' if alpha > 0 else ' > 0'}.")

    @transactional
    def fit(self, X, y, sample_weight=None):
        """One pass over ``(X, y)`` from the prior. Returns ``self``."""
        X, y = validate_chunk(self, X, y, first=True, y_numeric=True)
        sw = check_sample_weight(sample_weight, X, estimator=self)
        self._start(X, sw)
        self._update(self._augment(X), y, sw)
        self.n_samples_seen_ = X.shape[0]
        self._publish()
        return self

    @transactional
    def partial_fit(self, X, y, sample_weight=None):
        """Absorb one chunk (continuing the posterior). Returns ``self``."""
        first = not hasattr(self, "_m")
        X, y = validate_chunk(self, X, y, first=first, y_numeric=True)
        sw = check_sample_weight(sample_weight, X, estimator=self)
        if first:
            self._start(X, sw)
        self._update(self._augment(X), y, sw)
        self.n_samples_seen_ += X.shape[0]
        self._publish()
        return self

    @dask_blocks
    def predict(self, X):
        """Posterior mean prediction ``X coef_ + intercept_``."""
        X = predict_input(self, X)
        return X @ self.coef_ + self.intercept_
