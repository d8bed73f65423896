"""Recursive least squares: the Kalman filter for a constant weight vector (recursive Bayes, 8.93).

Derived in: chapter "Online learning and stochastic optimisation" § "The Bayesian view: recursive Bayes, the Kalman filter and RLS".
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import scipy.linalg
from scipy.linalg import lapack
from sklearn.base import BaseEstimator
from .._predictor import finite_scores, linear_predictor_from
from ..base import RegressorMixin  # scikit-learn's, with an R^2 that does not overflow

from ..base import (DEPRECATED, NON_NEGATIVE, POSITIVE, DivergenceError, _finite, check_param_values, check_params,
                    check_sample_weight, dask_blocks, predict_input, renamed_param)
from .._kernels.cholesky import cholesky_known_conditioned, equilibrated_cholesky, equilibrated_solve
from .._kernels.threads import blas_threads_for_one_call
from .._graded_qr import (_full_rank_by_rows, _lower_median, _row_spread, _sorted_qr, _sorted_qr_solve,
                           _weighted_median, _weighted_rows)
from ._stream import (chunk_sample_weight, numpy_pass, numpy_steps_left, params_unchanged, recheck_params,
                      record_params, transactional, validate_chunk)

__all__ = ["RecursiveLeastSquares"]

_SOLVE_COND = 1e8       # A m = r is solved by Cholesky only while cond(A) (columns scaled) is below this
_FINAL_COND = 1e12      # beyond this at the end of a chunk, with no mean yet, the design is rank deficient
_GAIN_LIMIT = 1e3       # a row with s x^T P x above this is not put through the recursion (see below)
_FAR_ROWS = 1e8         # a first chunk A cannot solve goes to QR when its rows' weighted squared norms span more
_HOLD_ROWS = 1024    # the first rows kept whole until there is a mean (and at least 2 p rows): _warm_start
_FAR_SHARE = 1e4        # a row whose s z_j^2 is above this times A_jj of the rows before it: _far_beside
_NO_SHIFT = np.zeros(0)     # rls_pass's shift without an intercept
_NO_CEILING = np.zeros(0)   # no bound on the condition yet (_estimate_condition)
# up to this many parameters a chunk's solve is one compiled call: 100 rows, one thread, 6 / 65 / 138 us against
# numpy's 105 / 157 / 212 at p = 11 / 41 / 61, but 388 against 295 at p = 101 (LAPACK's Cholesky and BLAS's X^T X)
_COMPILED_SOLVE_MAX_P = 64

# how the recursion over a chunk ended (linbook._kernels.online.rls_pass returns the same codes), and the
# solve of the normal equations (_normal_equations, rls_normal_solve): DONE (the condition known to be below
# _SOLVE_COND), CONDITION_UNKNOWN (solved; estimate it), OVERFLOW or NOT_POSITIVE_DEFINITE (no factor)
DONE, LARGE_GAIN, LOST_DEFINITENESS, OVERFLOW, NOT_POSITIVE_DEFINITE, CONDITION_UNKNOWN = 0, 1, 2, 3, 4, 5


def _solving_is_cheaper(n_rows, p):
    """Whether solving ``A m = r`` again costs less time than ``n_rows`` steps of the recursion: a step
    costs ~``p^2`` units (of ~1 ns in the compiled loop). Up to ``_COMPILED_SOLVE_MAX_P`` parameters the
    solve is one compiled call (``rls_normal_solve``): ~``n p^2 / 4 + p^3 / 6`` plus a fixed ~2,000; beyond,
    ``p^3 / 20`` units (its ``p^3 / 3`` flops run in BLAS) plus a fixed ~30,000 (numpy and LAPACK calls
    and their checks). Measured on 2-core x86."""
    if p <= _COMPILED_SOLVE_MAX_P:
        return n_rows * p * p > 2_000 + n_rows * p * p / 4 + p ** 3 / 6
    return n_rows * p * p > 30_000 + p ** 3 / 20


def _sherman_morrison_rows(Xa, y, sw, P, m, A, r, gain_limit):
    """Recursive least squares row by row (Sherman-Morrison), in numpy, updating ``P``, ``m`` and the
    information ``A``, ``r`` in place.

    For each sample with weight ``s_i > 0``::

        Px = P x,   g = x^T P x,   d = 1/s_i + g,   k = Px / d,
        m <- m + k (y - x^T m),    P <- P - k Px^T,     A <- A + s_i x x^T,   r <- r + s_i y x

    A row with ``s_i g > gain_limit`` stops the loop before it: ``P - k Px^T`` would remove all but
    ``1 / (1 + s_i g)`` of ``P`` along ``x``, and that cancellation loses ~``log10(s_i g)`` digits of
    ``P`` (a weak prior on a large-scale column, or a heavy row); the caller solves ``A m = r`` instead.
    Then ``P <- (P + P^T) / 2`` (rounding leaves ``k Px^T`` slightly asymmetric).

    Returns ``(row, outcome)``: ``(n, DONE)``; ``(i, LARGE_GAIN)``, rows before ``i`` absorbed;
    ``(i, LOST_DEFINITENESS)`` when ``d`` was not positive and finite at row ``i``, or ``(n - 1, ...)``
    when a diagonal entry of ``P`` ends up not positive; ``(i, OVERFLOW)`` when ``A`` overflowed at
    row ``i``. ``linbook._kernels.online.rls_pass`` runs this loop compiled and is tested equal to it.

    Derived in: chapter "Online learning and stochastic optimisation" § "The Bayesian view: recursive Bayes, the Kalman filter and RLS".
    """
    n, outcome = Xa.shape[0], DONE
    for i in range(n):
        if sw[i] == 0.0:
            continue
        x = Xa[i]
        Px = P @ x
        g = float(x @ Px)
        d = 1.0 / sw[i] + g
        e = y[i] - float(x @ m)
        if not (d > 0.0 and np.isfinite(d) and np.isfinite(e)):
            return i, LOST_DEFINITENESS
        if sw[i] * g > gain_limit:
            n, outcome = i, LARGE_GAIN
            break
        k = Px / d
        m += k * e
        P -= np.outer(k, Px)
        sx = sw[i] * x
        A += np.outer(sx, x)
        r += sx * y[i]
        if not np.isfinite(A.diagonal()).all():          # |A_jk| <= sqrt(A_jj A_kk)
            return i, OVERFLOW
    P[:] = 0.5 * (P + P.T)
    if outcome == DONE and not (P.diagonal() > 0).all():
        return n - 1, LOST_DEFINITENESS
    return n, outcome


def _normal_equations(A, r, Z, y, sw, ceiling):
    """A chunk added to the normal equations, which are then solved, in numpy: ``(A', r', factor, m, outcome)``
    with ``A' = A + Z^T S Z``, ``r' = r + Z^T S y`` (``Z`` the augmented rows, ``S = diag(sw)``), ``factor``
    the equilibrated Cholesky factor of ``A'`` (unscaled, ``e = 1``, where the ceiling already proves the
    condition small: ``cholesky_known_conditioned``) and ``m = A'^-1 r'`` from it; ``outcome`` is ``DONE`` when
    every ``A'_jj`` is below ``ceiling_j`` (the condition is then known to be small enough, see
    ``RecursiveLeastSquares._estimate_condition``), ``CONDITION_UNKNOWN`` when not (or ``ceiling`` is empty),
    ``OVERFLOW`` (``A'`` or ``r'`` overflowed) or ``NOT_POSITIVE_DEFINITE`` (no factor, ``m`` is ``None``).
    ``Z`` is written into; ``sw`` may be ``None`` for unit weights. ``linbook._kernels.online.rls_normal_solve`` is the same, compiled, for small ``p``.
    """
    root = None
    if sw is not None and not (sw == 1.0).all():       # None: unit weights
        root = np.sqrt(sw)
        Z *= root[:, None]
    with np.errstate(over="ignore", invalid="ignore"):      # reported by the outcome
        ZtZ = Z.T @ Z
        ZtZ += A            # A + Z^T Z, without a second new p x p array
        A = ZtZ
        r = r + Z.T @ (y if root is None else root * y)
    # diag A below a ceiling is finite (NaN compares False); |A_jk| <= sqrt(A_jj A_kk)
    bounded = len(ceiling) == len(r) and (A.diagonal() < ceiling).all()
    if not ((bounded or _finite(A.diagonal())) and _finite(r)):
        return A, r, None, None, OVERFLOW
    # the condition known small: the scaling would change neither the answer's accuracy nor the factor's existence
    unscaled = bounded and cholesky_known_conditioned(A)
    factor = unscaled or equilibrated_cholesky(A)
    if factor is None:
        return A, r, None, None, NOT_POSITIVE_DEFINITE
    # unscaled (e = 1): equilibrated_solve's two divisions by 1 change nothing
    m = lapack.dpotrs(factor[0], r, lower=0)[0] if unscaled else equilibrated_solve(factor, r)
    return A, r, factor, m, DONE if bounded else CONDITION_UNKNOWN


def _far_rows_hold_a_column(X, shift, sw, A):
    """Whether some ``A_jj`` is above ``_FAR_SHARE`` times ``n`` rows' median ``s_i z_ij^2`` (``z = [x - c, 1]``,
    or ``x``; over the rows where it is above 0): a few far rows hold all but ``1 / _FAR_SHARE`` of the column,
    and the normal equations rounded the other rows' share of it away, although ``A`` (columns scaled) may be
    well conditioned. Why: with one feature and an intercept a row 1e20 times the others (or four rows 1e93
    times) leaves ``A`` a well-conditioned 2 x 2 whose solve succeeds, but ``r``'s intercept entry held only the
    far rows' ``s y``: ``fit`` and streams published intercepts 1e45..1e57 off. The medians of a strided
    sample of 128 rows settle ordinary rows first (a fit of 1e5 x 10 paid 10 % for a whole copy of ``X``);
    :meth:`_far_rows_solve` then solves the rows by QR."""
    n, diag = X.shape[0], A.diagonal()
    c = 0.0 if shift is None else shift
    for rows in (slice(None, None, -(-n // 128)), slice(None)):
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            share = np.column_stack([(X[rows] - c) ** 2, np.ones(len(sw[rows]))])[:, :len(diag)] * sw[rows, None]
        typical = np.median(share, axis=0)
        for j in np.flatnonzero(typical == 0):        # a column mostly 0: the median of its other rows
            positive = share[:, j][share[:, j] > 0]
            typical[j] = np.median(positive) if positive.size else np.inf
        if np.all(diag <= _FAR_SHARE * n * typical):
            return False
    return True


def _root_rows(root):
    """``[S, q]`` with ``S^T S = A`` (``S = R`` with its columns put back in order): the earlier rows' share
    of the least-squares problem as ``p`` rows."""
    R, q, piv = root
    S = np.empty_like(R)
    S[:, piv] = R
    return np.column_stack([S, q])


def _root_covariance(root):
    """``A^-1`` from ``A[piv][:, piv] = R^T R``."""
    R, _, piv = root
    Rinv = scipy.linalg.solve_triangular(R, np.eye(len(R)))
    P = np.empty_like(R)
    P[np.ix_(piv, piv)] = Rinv @ Rinv.T
    return P


def _far_beside(X, shift, sw, A):
    """Whether some row's ``s_i z_ij^2`` (``z = [x - c, 1]``, or ``x``) is above ``_FAR_SHARE`` times ``A_jj``,
    the information of the rows before it in column ``j``. Why: ``A + s z z^T`` then holds the earlier rows'
    share of that column (and of ``r``) only to the rounding of the far row's, so every route through ``A``
    (a solve, the recursion's gain) loses their digits: one feature and an intercept, a row 1e20 times the
    others arriving after them, and the intercept came out 600 times too large, silently. Rows within the
    limit cost at most ~4 of the earlier rows' 16 digits."""
    c = 0.0 if shift is None else shift
    with np.errstate(over="ignore", invalid="ignore"):
        largest = np.append((np.abs(X - c) * np.sqrt(sw)[:, None]).max(axis=0) ** 2, sw.max())[:len(A)]
        return bool(np.any(~(largest <= _FAR_SHARE * A.diagonal())))


@functools.cache
def _compiled():
    """``linbook._kernels.online``, imported on first use (``import linbook`` loads no numba) and then kept:
    a ``from ... import`` statement in the chunk's path cost ~1 microsecond of its ~20."""
    from .._kernels import online

    return online


def _overflow():
    return ValueError("RecursiveLeastSquares: X^T X overflows (features or targets of order 1e150 or larger, "
                      "or sample_weight that large): scale the features and the target before fitting.")


def _lost_definiteness(row):
    return DivergenceError(
        f"RecursiveLeastSquares: the update of sample {row} made P lose positive "
        "definiteness (the data are too ill-conditioned for the recursion, or a row is far larger than "
        "the others). Cure: scale the features X (e.g. StandardScaler), set prior_precision > 0, or call "
        "fit on all rows (it solves rows far larger than the others by QR).")


class RecursiveLeastSquares(RegressorMixin, BaseEstimator):
    """Recursive least squares: the Kalman filter for a constant weight vector (recursive Bayes, 8.93).

    Model ``y = w^T x + b + eps``, ``eps ~ N(0, sigma^2 / s)`` for a sample of weight ``s``
    (default 1), prior ``w ~ N(0, sigma^2 / alpha I)`` with ``alpha = prior_precision``
    (flat prior on ``b``). After every chunk the posterior is ``N(m, sigma^2 P)`` with
    precision and information vector::

        A = P^{-1} = alpha I + sum s x x^T,     r = sum s x y,     A m = r

    so the mean after all N samples minimises
    ``(1/2) sum_i s_i (y_i - w^T x_i - b)^2 + (alpha/2) ||w||^2`` -- scikit-learn's
    ``Ridge(alpha=prior_precision)`` with the same ``sample_weight``, batch least
    squares for ``alpha = 0`` -- in one pass, whatever the chunks.

    A chunk adds its ``X^T S X`` and ``X^T S y`` to ``A`` and ``r``, which are kept exactly, and moves
    ``m`` by the quicker of two exact routes:

    * a large chunk: solve ``A m = r`` again (equilibrated Cholesky), while ``A`` is well conditioned;
    * a small chunk, or ``A`` too ill-conditioned to solve: the Sherman-Morrison recursion, one
      sample at a time (a compiled loop), on ``P`` itself::

          d = 1/s + x^T P x,   k = P x / d,   m <- m + k (y - x^T m),   P <- P - k x^T P

      The gain ``P x`` is a per-parameter (matrix) step size. A row that would remove nearly all
      of ``P`` along ``x`` (``s x^T P x > 1000``: the cancellation would cost digits) is solved for
      instead.

    Beside a row far larger than the others (its ``s x_j^2`` above 1e4 times the ``A_jj`` of the rows before
    it, or rows whose shares span that much within a chunk: a row 1e2..1e150 times the others, or a weight that
    large, at any position of the stream) ``A`` rounds the other rows' share away and no mean can be found
    from it. From that chunk on, the stream keeps a square root ``R`` of ``A`` (``R^T R = A``) instead and
    absorbs each chunk by Householder QR of ``R`` and the rows (sorted by norm, with column pivoting and
    row interchanges, which keep each row's share to its own rounding). A stream's first rows are held and
    solved together, chunk after chunk, until there is a mean and at least ``2 p`` of them (at most 1024).
    Where a direction of the weights is then decided by rounding alone (equal columns beside far rows) a
    ``UserWarning`` says so.

    With a flat prior (``alpha = 0``, or the intercept) ``P_0`` is infinite, so no mean
    exists until ``A`` is invertible ("exact initialisation": no large artificial prior).
    With an intercept the filter runs on ``x - c`` and ``y - c_y``, ``c`` and ``c_y`` the first rows'
    (those held, above) weighted column and target medians: the flat prior on ``b`` makes those shifts change only ``b``
    (``b = b_c + c_y - w^T c``); they keep ``A`` well conditioned when a column is offset by 1e8 or
    more, and ``w`` its digits when ``y`` is (``y + 1e12`` cost it 1e-4 before).
    A design that stays rank deficient (too few samples, a constant-zero or an exactly
    duplicated column) makes ``fit`` raise ``ValueError``; ``partial_fit`` keeps the rows, warns,
    and publishes the minimum-norm solution until more rows make it well posed (``P_`` is not
    defined until then). Data so ill-conditioned that ``P`` loses positive definiteness raise
    ``linbook.base.DivergenceError``.

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
        Removed (the update chooses its route itself): has no effect (FutureWarning).

    Attributes
    ----------
    coef_ : ndarray (n_features,)
    intercept_ : float
        The posterior mean.
    P_ : ndarray (p, p)
        ``(alpha I + sum s x x^T)^{-1}`` over ``[coef..., intercept]`` (computed when first read
        after an update: a chunk's update does not need it).
    covariance_ : ndarray (p, p)
        ``noise_variance * P_``, the posterior covariance.
    n_samples_seen_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Column names, when ``X`` was a DataFrame with string column names.

    Derived in: chapter "Online learning and stochastic optimisation" § "The Bayesian view: recursive Bayes, the Kalman filter and RLS".
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
    # _update and _publish store new arrays, never write into old ones: a failed call is undone by
    # putting the attribute dictionary back (linbook.online._stream.transactional)
    _updates_replace_arrays = True
    _parameter_constraints = {"prior_precision": [NON_NEGATIVE], "fit_intercept": ["boolean"],
                              "noise_variance": [POSITIVE]}

    def _checked_prior(self):
        """Check the parameters; return ``prior_precision`` (also when given by its old name ``alpha``)."""
        renamed_param(self, None, "block_size")
        prior_precision = renamed_param(self, "prior_precision", "alpha")
        check_params(self, prior_precision=prior_precision)
        return prior_precision

    def _same_prior(self):
        """Check the parameters of a later chunk; the prior the stream started from cannot change. Why the
        value, not each name: a stream started with the deprecated ``alpha=0.5`` and moved to
        ``prior_precision=0.5``, as the FutureWarning says to, kept its prior but was refused as changed."""
        prior = float(self._checked_prior())
        if prior != self._prior_precision:
            raise ValueError(f"RecursiveLeastSquares: prior_precision changed from {self._prior_precision!r} to "
                             f"{prior!r} after the stream started, but it fixes the model the stream updates. Set "
                             f"prior_precision back to {self._prior_precision!r}, or call fit (or partial_fit on a "
                             "clone) to start a new stream.")

    def _start(self, X, y, sw):
        prior_precision = self._checked_prior()
        record_params(self)
        self._prior_precision = float(prior_precision)
        d = X.shape[1]
        p = d + int(self.fit_intercept)
        self.n_samples_seen_ = 0
        # With a flat prior on b, streaming x - c instead of x changes only b (b = b_c - w^T c), not the
        # posterior of w: c near the data's centre keeps A well conditioned whatever the columns' offsets.
        self._shift = self._centre(X, sw) if self.fit_intercept else None
        # y - c_y changes only b as well (b = b_c + c_y): y offset by 1e12 no longer costs w its digits
        self._y_shift = self._centre(y[:, None], sw)[0] if self.fit_intercept else 0.0
        prior = np.full(p, float(prior_precision))
        if self.fit_intercept:
            prior[-1] = 0.0
        self._A, self._r = np.diag(prior), np.zeros(p)
        # no mean m until A is invertible; A and r are always those of the rows seen, and with m either
        # the Cholesky factor of A (after a solve) or P = A^{-1} (after the recursion) is kept
        self._m = self._P = self._factor = None
        self._fresh = True              # no rows in A yet: a first chunk of far rows can still be solved by QR
        self._held = None               # the first rows, kept whole until there is a mean (_hold)
        self._root = None               # (R, q, piv), a square root of A, once far rows came in: _qr_update
        self._ceiling = _NO_CEILING     # diag A below which A is known well conditioned (_estimate_condition)

    @staticmethod
    def _centre(X, sw):
        """The shift ``c``: the first chunk's weighted column medians, over a strided sample of about 8192 rows
        and the 64 heaviest. Any fixed ``c`` gives the same model; near the data's centre it keeps ``A`` well
        conditioned whatever the columns' offsets. A weighted median, not the weighted mean: one row 1e9 times
        another among 40 moved the mean to ~2.5e7 times the others, which then all entered ``A`` as far from
        ``c`` as that row, and no chunk of them could be solved; a row of weight 1e200 still sets ``c`` (it is
        then only the intercept's, and ``A`` stays well conditioned)."""
        n = X.shape[0]
        if n < 2 * 8192:            # the stride is 1: every row (the union with the heaviest cost ~0.1 ms)
            x, w = X, sw
        else:
            heaviest = np.argpartition(-sw, 63)[:64]
            rows = np.union1d(np.arange(0, n, n // 8192), heaviest)
            x, w = X[rows], sw[rows]
        top = sw.max()
        w = w / top if top > 0 else np.ones(x.shape[0])        # scaled: their sum cannot overflow
        return _lower_median(x) if np.all(w == 1.0) else _weighted_median(x, w)

    def _augment(self, X):
        """``[x - c, 1]`` per row with an intercept (``c`` the shift fixed by the first chunk), else a copy of
        ``x`` (the caller may write into it)."""
        if not self.fit_intercept:
            return np.array(X, order="C")
        Xa = np.empty((X.shape[0], X.shape[1] + 1))
        np.subtract(X, self._shift, out=Xa[:, :-1])
        Xa[:, -1] = 1.0
        return Xa

    def _update(self, X, y, sw):
        """Absorb the rows of ``X`` with weights ``s``. Every step stores new arrays (never writes into the
        ones held), so a failed call leaves the model as it was (``transactional``)."""
        n, p = X.shape[0], X.shape[1] + int(self.fit_intercept)
        if self._root is not None:             # far rows came in: A no longer holds the others' share
            self._qr_update(X, y, sw)
            return
        if self._m is not None and not _solving_is_cheaper(n, p):
            absorbed = self._recursion(X, y, sw, _GAIN_LIMIT)
            X, y, sw = X[absorbed:], y[absorbed:], sw[absorbed:]
            if not len(y):
                return
        if self._m is None and n >= 2 * p and self._solve_or_halve(X, y, sw):
            return
        if not self._solve(X, y, sw):          # A too ill-conditioned to solve: the recursion, every row
            self._recursion(X, y, sw, np.inf)
            if equilibrated_cholesky(self._A, rcond_min=1.0 / _FINAL_COND) is None:
                warnings.warn(f"RecursiveLeastSquares: the design seen so far is too ill-conditioned for the normal "
                              f"equations (cond > {_FINAL_COND:g} with its columns scaled); the mean comes from the "
                              "recursion alone and may have lost digits. Scale the features, bring sample_weight "
                              "to a narrower range, set prior_precision > 0, or, for rows far larger than the "
                              "others, call fit on all rows (it solves them by QR).", UserWarning, stacklevel=4)

    def _far_rows_solve(self, X, y, sw, spread=_FAR_ROWS):
        """The first chunk, where the normal equations found no mean, on rows whose weighted norms span more than
        ``spread`` (a row 1e4..1e150 times the others, or a weight that large; 0: one row known to hold a column): the whole problem by QR of
        the rows sorted by norm (``_sorted_qr_solve``), whose factor ``[R, q]`` later chunks then update
        (:meth:`_qr_update`). True: done. False (nothing stored) for ordinary rows, a rank-deficient design or
        ``A`` overflowing: the normal route then goes on as before (halves, the recursion, or its error).

        Why: ``A = sum s x x^T`` rounds the ordinary rows' share away beside a far row, so every route through
        ``A`` (a solve, the halves, the recursion) refused a well-posed problem or lost all the digits of the
        ordinary rows' answer (a stream of rows after a far first row of 1e20: coefficients 78 % off)."""
        Z = self._augment(X)    # not the normal route's Z: that one holds sqrt(s) z
        prior = self._A.diagonal().copy()
        if (spread and _row_spread(Z, sw) <= spread) or not _full_rank_by_rows(Z, sw, prior):
            return False
        with np.errstate(over="ignore", invalid="ignore"):
            A, r = self._A + Z.T @ (sw[:, None] * Z), self._r + Z.T @ (sw * y)
        m, root, _ = _sorted_qr_solve(Z, y, sw, prior)
        if m is None or not (_finite(A.diagonal()) and _finite(r) and _finite(m)):
            return False
        self._A, self._r, self._m, self._P, self._factor, self._fresh, self._root = A, r, m, None, None, False, root
        return True

    def _square_root(self):
        """``(S, S m, range(p))`` with ``S^T S = A`` (the rows seen so far, accurate: none far beside the others yet), from
        the Cholesky factor of ``A``, or, where ``A`` is too ill-conditioned to factor, from that of ``P = A^-1``
        kept by the recursion; ``None`` when neither exists."""
        factor = self._factor or equilibrated_cholesky(self._A)
        if factor is not None:
            S = factor[0] * factor[1]              # A = e C^T C e
        else:
            factor = equilibrated_cholesky(self._covariance_in_shifted_columns())
            if factor is None:
                return None
            S = scipy.linalg.solve_triangular(factor[0] * factor[1], np.eye(len(self._m)), trans="T")
        return S, S @ self._m, np.arange(len(S))

    def _qr_update(self, X, y, sw):
        """Absorb the rows by QR into the square root ``(R, q, piv)`` of the information (``R^T R = A`` with the
        columns in the order ``piv``, ``R m[piv] = q``): :func:`_sorted_qr` of its rows and ``sqrt(s) [z, y]``.

        Why: once a row far larger than those before it (:func:`_far_beside`) has entered, ``A`` and ``r`` hold
        the other rows' share only to the far row's rounding, and so would every later chunk's; the factor keeps
        each row's share to its own rounding (Powell and Reid), whatever the order the rows arrive in."""
        p, Z = len(self._m), self._augment(X)
        root, m, _ = _sorted_qr(np.vstack([_root_rows(self._root), _weighted_rows(Z, y, sw)]), p)
        if m is None or not _finite(m):
            raise _overflow()
        with np.errstate(over="ignore", invalid="ignore"):     # kept for their size only: the factor decides
            A, r = self._A + Z.T @ (sw[:, None] * Z), self._r + Z.T @ (sw * y)
        self._A, self._r, self._root, self._m, self._P, self._factor, self._fresh = A, r, root, m, None, None, False

    def _solve_or_halve(self, X, y, sw):
        """No mean yet, a chunk of at least ``2 p`` rows: solve the normal equations with it whole, or, where
        they stay too ill-conditioned, absorb its two halves in turn (each by :meth:`_update`). True: done.

        Why: a row far larger than the rest (1e9 times another) leaves the other rows' share of ``A`` below
        its rounding, so no solve of the chunk whole can find the mean (``fit`` refused a well-posed ridge
        problem, ``partial_fit`` published an answer 95 % off). Halved, the rows before the far one give the
        mean and the recursion takes the far one, as a stream of single rows does. Halves of fewer than
        ``2 p`` rows are not split again (a rank-deficient chunk costs ``O(n / p)`` solves of ``p x p``)."""
        A, r = self._A, self._r
        self._solve(X, y, sw)
        if self._m is not None:
            return True
        self._A, self._r = A, r                # undo (the solve stored new arrays): the halves instead
        half = X.shape[0] // 2
        self._update(X[:half], y[:half], sw[:half])
        self._update(X[half:], y[half:], sw[half:])
        return True

    def _solve(self, X, y, sw):
        """Add the rows to ``A`` and ``r`` and solve ``A m = r``. ``False``, and nothing stored, when ``A``
        is too ill-conditioned for that and there is a mean (the recursion continues from it)."""
        p = X.shape[1] + int(self.fit_intercept)
        if p > _COMPILED_SOLVE_MAX_P or numpy_pass(X.shape[0]):      # the readable statement
            Z = self._augment(X)
            # the chunk's p x n x p product and p x p factor on one BLAS thread, as in a fit on more entries
            # (blas_threads_for_one_call): BLAS splits a product of 100 rows and 101 parameters between its
            # threads, whose synchronisation cost more than they gain (benchmarks/issue22_first_fit.md, session 23)
            with blas_threads_for_one_call(X.shape[0] * p * p):
                A, r, factor, m, outcome = _normal_equations(self._A, self._r, Z, y, sw, self._ceiling)
        else:
            A, r, C, e, m = self._A.copy(), self._r.copy(), np.empty((p, p)), np.empty(p), np.empty(p)
            shift = self._shift if self.fit_intercept else _NO_SHIFT
            outcome = _compiled().rls_normal_solve(X, shift, y, sw, A, r, self._ceiling, C, e, m)
            factor = (C, e)
        if outcome == OVERFLOW:
            raise _overflow()
        # DONE: no A_jj grew past the ceiling, at most _FAR_SHARE times its value when it was set: no far rows
        if outcome != DONE and self._m is not None and _far_beside(X, self._shift, sw, self._A):
            self._root = self._square_root()
            if self._root is not None:
                self._qr_update(X, y, sw)
                return True
        if outcome == DONE or (outcome == CONDITION_UNKNOWN and self._estimate_condition(A, factor)):
            if self._fresh and _far_rows_hold_a_column(X, self._shift, sw, A) and self._far_rows_solve(X, y, sw, 0.0):
                return True
            self._A, self._r, self._factor, self._P, self._m, self._fresh = A, r, factor, None, m, False
            return True
        if self._m is not None:
            return False
        if self._fresh and self._far_rows_solve(X, y, sw):
            return True
        self._A, self._r, self._fresh = A, r, False    # no mean yet: keep the rows and wait for more
        return True

    def _estimate_condition(self, A, factor):
        """Whether ``cond(A)`` with its columns scaled (``As = A / outer(e, e)``, unit diagonal) is below
        ``_SOLVE_COND``, from LAPACK's estimate of ``||As^-1||_1``; then also the ceiling of the diagonal
        below which later solves need no estimate (they check it). Rows only add to ``A``
        (``A' - A = Z^T S Z >= 0``), so
        ``lambda_min(As') >= lambda_min(As) min_j A_jj / A'_jj`` with ``lambda_min(As) >= 1 / ||As^-1||_1``,
        and ``cond_1(As') <= p^1.5 / lambda_min(As')`` (the entries of ``As'`` are at most 1): that bound
        stays below the limit while every ``A'_jj`` stays below ``ceiling_j = A_jj _SOLVE_COND / (p^1.5
        ||As^-1||_1)``, and at most ``_FAR_SHARE`` times ``A_jj`` (so that a chunk below the ceiling holds no
        row far beside the earlier ones: :func:`_far_beside`). A stream of like chunks is estimated once, then
        again when the diagonal has grown by that factor."""
        diag = A.diagonal()
        C, e = factor
        norm = np.abs(A / np.outer(e, e)).sum(axis=0).max()
        rcond, info = lapack.dpocon(C, norm)
        if info != 0 or not rcond >= 1.0 / _SOLVE_COND:
            return False
        # a ceiling beyond float64 (a diagonal near 1e300: features of 1e150) is inf, rightly: no finite
        # diagonal can pass it (numpy's overflow warning on a valid fit was noise)
        with np.errstate(over="ignore"):
            self._ceiling = diag * min(_SOLVE_COND * rcond * norm / len(diag) ** 1.5, _FAR_SHARE)
        return True

    def _recursion(self, X, y, sw, gain_limit):
        """Run the recursion over the rows (on copies of the state, then stored); returns how many rows
        went in: all, or those before a row whose gain exceeds ``gain_limit``."""
        P, m = self._covariance_in_shifted_columns().copy(), self._m.copy()
        A, r = self._A.copy(), self._r.copy()
        if numpy_pass(X.shape[0]):             # the readable loop, then the compiled one
            with np.errstate(over="ignore", invalid="ignore"):    # reported by the outcome
                row, outcome = _sherman_morrison_rows(self._augment(X), y, sw, P, m, A, r, gain_limit)
        else:
            shift = self._shift if self.fit_intercept else _NO_SHIFT
            row, outcome = _compiled().rls_pass(X, shift, y, sw, P, m, A, r, gain_limit)
        if outcome == LOST_DEFINITENESS:
            raise _lost_definiteness(row)
        if outcome == OVERFLOW:
            raise _overflow()
        self._P, self._m, self._A, self._r, self._factor, self._fresh = P, m, A, r, None, False
        return row

    def _covariance_in_shifted_columns(self):
        """``P = A^{-1}``: kept by the recursion, or from the factor of the last solve."""
        if self._P is None and self._root is not None:
            self._P = _root_covariance(self._root)
        elif self._P is None:
            P = equilibrated_solve(self._factor, np.eye(len(self._m)))
            self._P = 0.5 * (P + P.T)
        return self._P

    def _publish(self, chunk=False):
        """Set ``coef_`` and ``intercept_`` from the posterior mean. While the design seen so far is rank
        deficient, ``fit`` raises; ``partial_fit`` keeps the rows, warns, and publishes the minimum-norm
        solution of ``A m = r`` (so that a stream of single rows can start without a prior)."""
        mean = self._m
        if mean is None:                       # still no mean: the last chance, at the looser limit
            factor = equilibrated_cholesky(self._A, rcond_min=1.0 / _FINAL_COND)
            if factor is not None:
                self._factor, self._m = factor, equilibrated_solve(factor, self._r)
                mean = self._m
            elif not chunk:
                raise ValueError(self._rank_deficient())
            else:
                warnings.warn(f"{self._rank_deficient()} Until then coef_ and intercept_ are the minimum-norm "
                              "solution and P_ is not defined.", UserWarning, stacklevel=4)
                mean = np.linalg.lstsq(self._A, self._r, rcond=None)[0]
        if not _finite(mean):
            raise DivergenceError("RecursiveLeastSquares: the posterior mean became non-finite. Cure: scale "
                                  "the features X (e.g. StandardScaler) or set prior_precision > 0.")
        self._set_mean(mean)

    def _set_mean(self, mean):
        """``coef_`` and ``intercept_`` from a finite posterior mean of the shifted columns."""
        d = self.n_features_in_
        self.coef_ = mean[:d].copy()
        self.intercept_ = 0.0
        if self.fit_intercept:      # back from the shifted columns: b = b_c - w^T c
            self._intercept_at_shift = float(mean[-1] + self._y_shift)
            self.intercept_ = float(self._intercept_at_shift - self.coef_.dot(self._shift))
        self._P_published = None    # P_ of this update, computed when first read

    @property
    def P_(self):
        """``(alpha I + sum s x x^T)^{-1}`` over ``[coef..., intercept]``, computed when first read after
        an update (from the factor of the last solve, or kept by the recursion)."""
        if "_P_published" not in vars(self):
            raise AttributeError("'RecursiveLeastSquares' object has no attribute 'P_' (call fit first)")
        if self._m is None:
            raise AttributeError(f"P_ is not defined: {self._rank_deficient()}")
        if self._P_published is None:
            P, d = self._covariance_in_shifted_columns().copy(), self.n_features_in_
            if self.fit_intercept:  # P = S P_c S^T with S = [[I, 0], [-c^T, 1]], in O(p^2)
                c = self._shift
                Pc = P[:d, :d] @ c
                corner = c @ Pc - 2.0 * (c @ P[:d, -1])
                P[:d, -1] -= Pc
                P[-1, -1] += corner
                P[-1, :d] = P[:d, -1]
            self._P_published = P
        return self._P_published

    @property
    def covariance_(self):
        """``noise_variance * P_``: the posterior covariance of ``[coef..., intercept]``."""
        # read here, not at fit: a value set afterwards (set_params) is checked here, or a negative
        # noise_variance would give a negative "covariance"
        check_param_values(type(self).__name__, {"noise_variance": self._parameter_constraints["noise_variance"]},
                           {"noise_variance": self.noise_variance})
        return self.noise_variance * self.P_

    def _rank_deficient(self):
        n, p, alpha = self.n_samples_seen_, len(self._r), self._prior_precision
        prior = f"prior_precision = {alpha:g}" + (" (a flat prior on the intercept)" if self.fit_intercept else "")
        return (
            f"The design seen so far ({n} sample{'s' if n != 1 else ''}, {p} parameters) is rank deficient or "
            f"too ill-conditioned to solve (cond > {_FINAL_COND:g} with its columns scaled) with {prior}: "
            "fewer independent samples than parameters, a zero column, duplicated columns, sample_weight "
            "spanning too many orders of magnitude, rows far larger than the others (1e4 times or more: the "
            "recursion keeps them, but not the rows beside them) when the first chunk alone does not determine "
            "the model, or features and weights so small that s x^2 underflows. "
            "Stream more samples, drop the redundant columns, bring sample_weight to a narrower range, pass the "
            "far rows in a first chunk that determines the model or call fit on all rows (both solve far rows "
            f"by QR), scale tiny features up, or {'raise' if alpha > 0 else 'set'} prior_precision"
            f"{'' if alpha > 0 else ' > 0'}.")

    @transactional
    def fit(self, X, y, sample_weight=None):
        """One pass over ``(X, y)`` from the prior. Returns ``self``."""
        X, y = validate_chunk(self, X, y, first=True, y_numeric=True)
        sw = check_sample_weight(sample_weight, X, estimator=self)
        self._start(X, y, sw)
        self._update(X, y - self._y_shift, sw)
        self.n_samples_seen_ = X.shape[0]
        self._publish()
        return self

    @transactional
    def partial_fit(self, X, y, sample_weight=None):
        """Absorb one chunk (continuing the posterior). Returns ``self``."""
        if sample_weight is None and self._solved_in_one_call(X, y):     # the common chunk, compiled
            return self
        first = not hasattr(self, "_m")
        if not first:
            recheck_params(self, self._same_prior, fixed=("fit_intercept",))
        X, y = validate_chunk(self, X, y, first=first, y_numeric=True)
        sw = chunk_sample_weight(self, sample_weight, X, first=first)
        # weights all 0: the rows are seen, the posterior unchanged (None means ones: no test, ~5 us of ~35)
        if sample_weight is not None and not sw.any():
            self.n_samples_seen_ += X.shape[0]
            return self
        seen = (0 if first else self.n_samples_seen_) + X.shape[0]
        warm = first or self._held is not None
        if warm:
            X, y, sw = self._warm_start(X, y, sw)
        self._update(X, y - self._y_shift, sw)
        self._held = (X, y, sw) if warm and self._still_warm(len(sw)) else None
        self.n_samples_seen_ = seen
        self._publish(chunk=True)
        return self

    def _solved_in_one_call(self, X, y):
        """Absorb a plain chunk in one step where the steps below would take the same route: a started stream
        with a mean, no rows held or far, unchanged parameters, float64 arrays of the stream's width, unit
        weights, and a solve of ``A m = r`` whose condition is known below its limit (``DONE``). True: done, as
        those steps would have done it. False, nothing stored: any other chunk, non-finite entries included,
        which the steps then validate (the same errors).

        Why: the steps' validation, weights, shifts and checks cost ~10 microseconds of numpy calls per chunk,
        beside ~3 of arithmetic at 11 parameters: more than re-solving the normal equations with numpy."""
        if not (vars(self).get("_m") is not None and self._held is None and self._root is None and not self._fresh
                and type(X) is np.ndarray and type(y) is np.ndarray and X.ndim == 2 and y.ndim == 1
                and X.dtype == np.float64 and y.dtype == np.float64):
            return False
        n, p = X.shape[0], len(self._r)
        if not (0 < n == y.shape[0] and X.shape[1] == self.n_features_in_ and "feature_names_in_" not in vars(self)
                and _solving_is_cheaper(n, p) and params_unchanged(self)):
            return False
        if p <= _COMPILED_SOLVE_MAX_P:
            solved = numpy_steps_left[0] < n and self._compiled_chunk(X, y)
        else:
            solved = self._numpy_chunk(X, y)
        if not solved:
            return False
        self._A, self._r, self._factor, self._P, self._m = solved
        self.n_samples_seen_ += n
        self._set_mean(self._m)
        return True

    def _compiled_chunk(self, X, y):
        """``(A, r, factor, None, m)`` of :meth:`_solved_in_one_call` by ``rls_plain_chunk`` (the finiteness of
        ``X``, ``y`` and ``m`` tested in the same call), or ``None``."""
        p = len(self._r)
        A, r, C, e, m = self._A.copy(), self._r.copy(), np.empty((p, p)), np.empty(p), np.empty(p)
        shift = self._shift if self.fit_intercept else _NO_SHIFT
        if _compiled().rls_plain_chunk(X, shift, y, self._y_shift, A, r, self._ceiling, C, e, m) != DONE:
            return None
        return A, r, (C, e), None, m

    def _numpy_chunk(self, X, y):
        """``(A, r, factor, None, m)`` of :meth:`_solved_in_one_call` by :func:`_normal_equations` (as
        :meth:`_solve` beyond ``_COMPILED_SOLVE_MAX_P`` parameters), or ``None``. No pass tests ``X`` and ``y``
        for NaN and inf: ``DONE`` means ``diag(Z^T Z)`` and ``Z^T y`` came out finite, which a non-finite entry
        of ``X`` (in its column's sum of squares) or of ``y`` (in the intercept's entry, or times a row of ``X``)
        would have made inf or NaN (the chunk then goes to the steps' validation)."""
        Z = self._augment(X)
        with blas_threads_for_one_call(X.shape[0] * Z.shape[1] ** 2):      # as in _solve
            A, r, factor, m, outcome = _normal_equations(self._A, self._r, Z, y - self._y_shift, None, self._ceiling)
        if outcome != DONE or not _finite(m):
            return None
        return A, r, factor, None, m

    def _warm_start(self, X, y, sw):
        """Start again from the prior with the rows held so far and this chunk: ``(X, y, sw)``, all of them.

        Why: the first rows fix the shift ``c`` (their weighted median) and, with no prior, the first mean; a
        far row among them (1e8..1e150 times the others) then either became the shift, so that every later row
        ``x - c`` lost its digits to it, or entered ``A`` before the rows that decide the other directions, which
        it then rounded away: a stream of single rows after a far first row ended 2 %..1e134 times off, or
        raised DivergenceError. Held until there is a mean and at least ``2 p`` rows, the first rows are solved
        together each time (by QR where they span far scales: :meth:`_far_rows_solve`), with their median as
        the shift, as one chunk of them would be."""
        if getattr(self, "_held", None) is not None:      # (none before the first chunk)
            X, y, sw = (np.concatenate([held, new]) for held, new in zip(self._held, (X, y, sw)))
        self._start(X, y, sw)
        return X, y, sw

    def _still_warm(self, n_rows):
        """Whether the first ``n_rows`` rows are to be held (``_warm_start`` starts from them): while there is
        no mean or fewer than ``2 p`` of them, up to ``_HOLD_ROWS``; after that the recursion carries them."""
        p = len(self._r)
        return (self._m is None or n_rows < 2 * p) and n_rows <= _HOLD_ROWS

    @dask_blocks
    def predict(self, X):
        """Posterior mean prediction ``X coef_ + intercept_``."""
        X = predict_input(self, X)
        # from the shift c, where the posterior mean lives (b = b_c - w^T c rounds at eps |w^T c|)
        origin = (self._shift, self._intercept_at_shift) if self.fit_intercept else None
        return finite_scores(self, linear_predictor_from(X, self.coef_, self.intercept_, origin))
