"""The speed machinery of the GLM fits behind one small interface: the chapter's loss on
centred and scaled columns.

:class:`BinaryLoss` has the contract of
:func:`linbook.logistic.logistic_regression.logistic_loss` -- ``loss(theta) -> (F, g, H)``
-- and the same value, gradient and Hessian (``tests/test_logistic_readable.py`` checks them
equal to 1e-10), in *standardised coordinates*:

* offset columns centred (:func:`linbook._design.centre_offsets`; sparse ``X``:
  :func:`linbook._design.centre_sparse_offsets`): a feature offset by 1e8 is almost parallel to the
  intercept's column and makes the Hessian singular to rounding;
* coefficient ``j`` is ``v_j = c_j w_j`` with ``c_j`` the root-mean-square of feature ``j``
  (dense ``X``; its largest ``|x_ij|`` for sparse ``X``), so ``X w = (X / c) v``: the same
  objective in other units, far better conditioned for the first-order methods, and no
  overflow for features of 1e-300 or 1e300;
* ``F, g, H`` from one blocked pass over ``X`` (:func:`linbook._kernels.hessian.binary_pass`:
  BLAS SYRK, numba row scaling, a single-precision Hessian while it is well conditioned); small dense
  ``X`` is held whole as ``X~ = [1, X / c]`` and passed over in a few numpy calls (:func:`small_pass`).

The stopping rule is in *max-abs units* ``m_j = max_i |x_ij|``: ``max_j |dF/dw_j| / m_j <=
tol * sum(sample_weight)``, the gradient of the *mean* NLL with respect to the coefficients
of max-abs-scaled features (so a rare sparse feature is not held to a stricter test). Both
are unit-free: ``coef(X * s) = coef(X) / s``, whatever ``s``. Newton's direction is
unit-free anyway.

Derived in: chapter "Logistic regression" § "Negative log-likelihood, gradient and Hessian".
"""

from __future__ import annotations

import contextlib

import numpy as np
import scipy.sparse

from .._kernels.cholesky import equilibrated_cholesky
from .._kernels.csr import divide_columns
from .._kernels.hessian import CHUNK_MIN_ROWS, binary_pass, block_rows
from .._kernels.threads import RowChunks, single_threaded_blas
from .._design import centre_offsets, centre_sparse_offsets
from .separation import separable

__all__ = []


def column_scales(X, weights=None, lam=0.0):
    """``(c, m)``: the preconditioner ``c`` and
    largest absolute value ``m`` over the samples with positive weight (the units of the
    stopping rule, as scikit-learn's ``MaxAbsScaler``: a rare sparse feature counts by
    its size, not by how rarely it occurs). ``c_j^2 = mean_sw(x_j^2) + 4 lam / sum(sw)`` is
    the diagonal of the penalised Hessian at the start (curvature 1/4 per sample) over
    that of the intercept: a Jacobi preconditioner, the root-mean-square of the feature
    when the data dominate, a constant when the penalty does (dense ``X``, as
    ``StandardScaler``). Sparse ``X`` uses ``c = max(m, sqrt(4 lam / sum(sw)))`` (as
    ``MaxAbsScaler`` where the data dominate). One pass over
    ``X``; no overflow or underflow for features of 1e-300 to 1e300."""
    n, d = X.shape
    sw = np.ones(n) if weights is None else weights
    sw_sum = sw.sum()
    Xp = X[np.flatnonzero(sw > 0)] if np.any(sw == 0) else X
    if scipy.sparse.issparse(X):
        Xp = scipy.sparse.csr_matrix(Xp)
        m = np.asarray(abs(Xp).max(axis=0).todense()).ravel() if Xp.nnz else np.zeros(d)
        m = np.where(m > 0, m, 1.0)
        # sparse: max-abs scaling (as MaxAbsScaler); the root-mean-square of a rare feature
        # is tiny, and dividing by it makes L-BFGS crawl on penalty-dominated text data. A column
        # below the penalty's scale takes that scale instead (the larger of the two, so text-like
        # columns keep c = m): with c = m a column of 1e-200 had the penalty's curvature
        # lam / c^2 overflow, and the fit stopped at w = 0 or diverged
        with np.errstate(over="ignore"):
            penalty_scale = np.sqrt(4.0 * lam / sw_sum)
        return (np.maximum(m, penalty_scale) if np.isfinite(penalty_scale) else m), m
    m, ss = np.zeros(d), np.zeros(d)
    with np.errstate(over="ignore", under="ignore"):
        for i, j in block_rows(n, d):
            Xb = X[i:j]
            ss += sw[i:j] @ (Xb * Xb)
            if Xp is X:
                np.maximum(m, np.max(np.abs(Xb), axis=0), out=m)
        if Xp is not X:
            m = np.max(np.abs(Xp), axis=0)
        m = np.where(m > 0, m, 1.0)
        c = np.sqrt(ss / sw_sum)
    bad = ~np.isfinite(c) | ((c < 1e-150) & (m > 0))
    if np.any(bad):           # 1e300 or 1e-300 features: divide by the column maximum first
        Xb = X[:, bad] / m[bad]
        c[bad] = m[bad] * np.sqrt(sw @ (Xb * Xb) / sw_sum)
    return _jacobi(c, lam, sw_sum), m


def _jacobi(rms, lam, sw_sum):
    # sqrt(rms^2 + 4 lam / sw_sum) without squaring rms: its square under- or overflows for
    # features below 1e-154 or above 1e154 (then c was 1 and Newton could not move)
    c = np.hypot(rms, np.sqrt(4.0 * lam / sw_sum))
    c = np.where(np.isfinite(c), c, rms)
    return np.where(c > 0, c, 1.0)


def gradient_scale(X, weights, c, m, fit_intercept, n_rows=1):
    """Per-coordinate scale of the stopping rule in the coordinates ``v = c w``.

    ``|dF/dw_j| / m_j <= tol * sum(sw)`` (max-abs units ``m_j``) is, for ``dF/dv_j =
    (dF/dw_j) / c_j``, ``|dF/dv_j| <= tol * sum(sw) * m_j / c_j``; the intercept's scale
    is ``sum(sw)``. ``n_rows`` repeats it for each class of a multinomial model.
    """
    n_eff = float(X.shape[0] if weights is None else weights.sum())
    # tiny weights under a penalty (sum 1e-298, c ~ sqrt(lam / sum)) can underflow the product
    return np.maximum(n_eff * predictor_scale(c, m, fit_intercept, n_rows), np.finfo(float).tiny)


def weights_differ(sample_weight):
    """Whether ``sample_weight`` is given and not all equal."""
    return sample_weight is not None and np.size(sample_weight) > 0 and np.ptp(sample_weight) > 0


#: A row is small when every entry is below this fraction of its column's max-abs unit (:func:`uneven_rows`).
SMALL_ROW = 1e-3
#: Rows :func:`uneven_rows` looks at: a strided sample of at most this many.
_ROW_SAMPLE = 8192


def uneven_rows(X, sample_weight, m):
    """Whether a few rows can dominate the gradient test, so that :func:`linbook.logistic.solvers.minimise`
    gives the first-order methods Newton's step test: the weights are not all equal, or at least a tenth of
    the rows (of a strided sample) are small (every ``|x_ij|`` below :data:`SMALL_ROW` ``m_j``).

    The test bounds ``|dF/dw_j| / m_j``, a sum of every row's ``sw_i (mu_i - y_i) x_ij / m_j``: a row enters
    with its weight times its size in the max-abs units ``m_j``. A row 1e6 times the others (a near-duplicate
    of one, far out) sets ``m`` and leaves the others entering at 1e-6, as weights of 1e-6 would: L-BFGS,
    BFGS and Newton-CG met the test with probabilities 1e-3 .. 1e-2 off and ``converged_`` true. The sample
    is 1e-3 of the units for a tenth of the rows only where the data span several decades; Gaussian
    features (the tenth quantile near 0.03 of the maximum, one column) are never flagged.
    """
    if weights_differ(sample_weight):
        return True
    if X.shape[0] == 0 or X.shape[1] == 0:
        return False
    rows = X[::max(1, X.shape[0] // _ROW_SAMPLE)]
    units = np.where(m > 0, m, 1.0)
    if scipy.sparse.issparse(rows):
        largest = abs(rows).multiply(1.0 / units).max(axis=1).toarray().ravel()
    else:
        largest = np.max(np.abs(rows) / units, axis=1)
    return bool(np.quantile(largest, 0.1) < SMALL_ROW)


def predictor_scale(c, m, fit_intercept, n_rows=1):
    """Per-coordinate bound on how far a unit change of ``v = c w`` (or of the intercept) moves a
    linear predictor: ``max_i |x_ij| / c_j = m_j / c_j``, and 1 for the intercept. The units of
    the Newton-step test of :func:`linbook.logistic.solvers.minimise` (which, unlike the
    gradient's, do not depend on the sample weights)."""
    return np.tile(np.r_[np.ones(int(fit_intercept)), m / c], n_rows)


def scaled_design(X, c):
    """``(X_k, c_k)`` for the kernels: sparse ``X`` is scaled once (its copy is ``nnz``
    long); dense ``X`` is scaled block by block inside the kernels (no copy of ``X``)."""
    if scipy.sparse.issparse(X):
        return divide_columns(X, c), None
    return X, c


# Dense X~ = [1, X / c] of at most this many entries is held whole, and a pass over it is a few numpy calls
# (small_pass): binary_pass's blocks, row chunks and reassembly cost ~0.15 ms a pass in fixed overhead, most
# of a small Newton step (200 x 5: 0.2 ms a pass against 0.04 ms). 256 kB, one block of binary_pass's anyway.
SMALL_PASS_ENTRIES = 1 << 15


def small_design(Xk, ck, fit_intercept):
    """``X~ = [1, Xk / ck]`` (no column of ones without intercept) as one array when dense ``Xk`` is small
    (:data:`SMALL_PASS_ENTRIES`), else ``None``. Divided as ``binary_pass`` divides its blocks."""
    if scipy.sparse.issparse(Xk) or Xk.shape[0] * (Xk.shape[1] + 1) > SMALL_PASS_ENTRIES:
        return None
    off = int(fit_intercept)
    Xt = np.empty((Xk.shape[0], Xk.shape[1] + off))
    Xt[:, :off] = 1.0
    if ck is None:
        Xt[:, off:] = Xk
    else:
        np.divide(Xk, ck, out=Xt[:, off:])
    return Xt


def small_pass(Xt, t, theta, terms, weights, need_hess):
    """``(f, g, H)`` of ``binary_pass`` on the whole small design ``Xt = X~`` (``H`` None unless ``need_hess``)::

        z = X~ theta,   f = sum a nll,   g = X~' (a dnll/dz),   H = B'B with B = sqrt(a d2nll/dz2) X~

    ``B'B`` is numpy's SYRK (exactly symmetric), as ``binary_pass``'s blocks. No penalty is included."""
    nll, dz, d2 = terms(Xt @ theta, t)
    if weights is not None:
        nll, dz, d2 = nll * weights, dz * weights, d2 * weights
    g = dz @ Xt
    if not need_hess:
        return float(nll.sum()), g, None
    B = Xt * np.sqrt(d2)[:, None]
    return float(nll.sum()), g, B.T @ B


_SATURATED = {"logit": 25.0, "probit": 6.7}   # margins t_i z_i beyond which p(y_i | x_i) > 1 - 1e-11


class ScaledColumns:
    """The columns of ``X`` as the fits use them, made in one place: ``X`` centred where a column's
    offset exceeds its spread (``X - shift``), coefficients in units ``v = c w`` (``c``,
    :func:`column_scales`), the kernels' design ``Xk`` (sparse: ``(X - shift) / c``, copied once;
    dense: ``X - shift`` with the scale ``ck = c`` applied block by block), and the max-abs units
    ``m`` of the stopping rule."""

    def __init__(self, X, sample_weight, lam, fit_intercept):
        centre = centre_sparse_offsets if scipy.sparse.issparse(X) else centre_offsets
        self.X, self.shift = centre(X, sample_weight, fit_intercept)
        self.c, self.m = column_scales(self.X, sample_weight, lam)
        self.Xk, self.ck = scaled_design(self.X, self.c)
        self.sample_weight, self.fit_intercept = sample_weight, fit_intercept

    def gradient_scale(self, n_rows=1):
        """The stopping rule's per-coordinate scale (:func:`gradient_scale`)."""
        return gradient_scale(self.X, self.sample_weight, self.c, self.m, self.fit_intercept, n_rows)

    def predictor_scale(self, n_rows=1):
        """The Newton-step test's per-coordinate units (:func:`predictor_scale`)."""
        return predictor_scale(self.c, self.m, self.fit_intercept, n_rows)


class BinaryLoss:
    """``loss(theta) -> (F, g, H)``: ``logistic_loss`` of a binary GLM on centred, scaled columns.

    For labels ``y`` in {0, 1} (``t = 2 y - 1``), weights ``sw`` and a link's per-sample
    ``terms(z, t) -> (nll_i, dnll_i/dz, d2nll_i/dz2)``::

        F(theta) = sum_i sw_i nll_i(z_i) + (lam / 2) ||w||^2,    z = X~ [b, w]
        g = X~' (sw * dnll/dz) + lam [0, w],    H = X~' diag(sw * d2nll/dz2) X~ + lam diag(0, 1, ..., 1)

    (logit: ``dnll/dz = mu - y``, ``d2nll/dz2 = mu (1 - mu)``, exactly ``logistic_loss``), in
    the coordinates ``theta = [b', v]`` of :class:`ScaledColumns`: ``v = c * w`` on the centred
    columns ``X - shift``, ``b' = b + w' shift``. :meth:`coordinates` and :meth:`coefficients`
    convert.

    ``approximate_hessian``: for Newton with Hessian reuse (the chord method), which needs
    the Hessian only approximately, form it in single precision (twice as fast) while it is
    well conditioned: once its equilibrated condition number exceeds 1e4 (where the ~1e-6
    relative error of single precision could spoil the direction), it and all later ones
    are formed in double.
    """

    #: May the design have null directions (``optim.newton``'s gain rule)? The estimator says so once it knows.
    null_directions = True

    # The gradient pass runs a row chunk per core (single-threaded BLAS each), so the first-order solvers
    # keep BLAS single-threaded (``solvers.minimise``); ``hessian_by_rows`` (set below) says the same of
    # the Hessian's pass, which Newton then uses.
    parallel_by_rows = True
    # H = X~' S X~ + diag(0, lam / c^2): the form for which solvers._cg_error_bounds is proven
    diagonal_penalty = True

    def __init__(self, X, y, sample_weight, lam, fit_intercept, terms, *, link="logit",
                 approximate_hessian=False):
        # every pass, the Hessian's too, runs a row chunk per core (dense X of 2 * CHUNK_MIN_ROWS rows on):
        # then the column passes here run with single-threaded BLAS as well, as the solver's steps do
        # (``solvers.minimise``): a multi-threaded call leaves BLAS's threads spinning for a while,
        # taking a core from the row chunks (50,000 x 40: 20 ms a Newton pass instead of 12). Newton keeps
        # BLAS single-threaded through the fit for the same reason (``solvers.minimise``).
        self.hessian_by_rows = not scipy.sparse.issparse(X) and X.shape[0] >= 2 * CHUNK_MIN_ROWS
        with single_threaded_blas() if self.hessian_by_rows else contextlib.nullcontext():
            cols = ScaledColumns(X, sample_weight, lam, fit_intercept)
        self.X, self.shift, self.c, self._Xk, self._ck = cols.X, cols.shift, cols.c, cols.Xk, cols.ck
        self.gscale, self.zscale = cols.gradient_scale(), cols.predictor_scale()
        self.t = 2 * np.asarray(y).astype(np.int8) - 1
        self.sample_weight, self.lam, self.fit_intercept = sample_weight, lam, fit_intercept
        self.uneven_rows = uneven_rows(cols.X, sample_weight, cols.m)    # solvers.minimise: the first-order step test
        # solvers.minimise: the objective's unit for the first-order methods (the mean weight)
        self.mean_weight = 1.0 if sample_weight is None or np.size(sample_weight) == 0 else float(np.mean(sample_weight))
        self.terms, self.link = terms, link
        self._single = approximate_hessian and not scipy.sparse.issparse(self._Xk)
        self._small = None if self._single else small_design(self._Xk, self._ck, fit_intercept)
        self._Xk_squared = None
        # sparse X: its products a chunk of rows per core, the chunks cut once a fit (~0.5 ms a chunk)
        self._rows = RowChunks(self._Xk)

    def __call__(self, theta):
        return self._evaluate(theta, need_hess=True)

    def value_and_gradient(self, theta):
        """``(F, g)`` without the Hessian (a pass costing ~1/4 of one with it)."""
        return self._evaluate(theta, need_hess=False)

    def _evaluate(self, theta, need_hess):
        off, lam, c = int(self.fit_intercept), self.lam, self.c
        b, v = (theta[0] if self.fit_intercept else 0.0), theta[off:]
        if self._small is not None:             # small dense X: the same sums, without the blocks' overhead
            f, g, H = small_pass(self._small, self.t, theta, self.terms, self.sample_weight, need_hess)
        else:
            f, g, H, _ = binary_pass(self._Xk, self.t, v, b, self.terms, weights=self.sample_weight,
                                     col_scale=self._ck, fit_intercept=self.fit_intercept,
                                     need_hess=need_hess, single_hessian=self._single, row_chunks=self._rows)
        if lam > 0:            # lam = 0 adds nothing (and w = v / c may overflow for tiny features)
            w = v / c
            f += 0.5 * lam * float(w @ w)             # (lam/2) ||w||^2
            g[off:] += (lam / c) * w                  # d/dv of the penalty
            if need_hess:
                H[off:, off:] += np.diag((lam / c) / c)
        if not need_hess:
            return f, g
        if self._single and equilibrated_cholesky(H, rcond_min=1e-4) is None:
            self._single = False                     # ill-conditioned: double precision from now on
            return self._evaluate(theta, need_hess)
        return f, g, H

    def with_hessian_product(self, theta):
        """``(F, g, (hessp, diag_H))`` for Newton-CG (:func:`linbook.optim.newton_cg`): ``F, g`` as
        :meth:`value_and_gradient`, ``hessp(u) = H u`` and the diagonal of ``H`` (sparse ``X``; ``None``
        for dense), never forming ``H``::

            H u = X~' (s * (X~ u)) + lam diag(0, 1/c^2) u,    s = sw * d2nll/dz2 at theta

        two passes over ``X`` a product (``tests/test_logistic_readable.py`` checks it equals ``H u``)."""
        off = int(self.fit_intercept)
        b, v = (theta[0] if self.fit_intercept else 0.0), theta[off:]
        f, g, _, z = binary_pass(self._Xk, self.t, v, b, self.terms, weights=self.sample_weight,
                                 col_scale=self._ck, fit_intercept=self.fit_intercept, need_hess=False,
                                 row_chunks=self._rows)
        s = self.terms(z, self.t)[2] * (1.0 if self.sample_weight is None else self.sample_weight)
        pen = np.zeros(v.size) if self.lam == 0 else (self.lam / self.c) / self.c
        if self.lam > 0:
            w = v / self.c
            f += 0.5 * self.lam * float(w @ w)
            g[off:] += (self.lam / self.c) * w
        rows, ck = self._rows, self._ck

        def hessp(u):
            uw = u[off:] if ck is None else u[off:] / ck
            su = s * (rows.dot(uw) + (u[0] if off else 0.0))
            Hu = np.empty_like(u)
            Hu[off:] = rows.tdot(su) if ck is None else rows.tdot(su) / ck
            if off:
                Hu[0] = su.sum()
            Hu[off:] += pen * u[off:]
            return Hu

        diag = None
        if ck is None:                          # sparse: the squares of X's non-zeros, made once
            if self._Xk_squared is None:
                self._Xk_squared = self._Xk.multiply(self._Xk).tocsr()
            diag = np.r_[[s.sum()] if off else [], self._Xk_squared.T @ s + pen]
        return f, g, (hessp, diag)

    def coordinates(self, b=0.0, w=None):
        """``theta`` of the coefficients ``(b, w)`` in the units of ``X`` (default ``w = 0``)."""
        w = np.zeros(self.X.shape[1]) if w is None else np.asarray(w, dtype=float)
        b_centred = b + (0.0 if self.shift is None else float(w @ self.shift))
        return np.r_[[b_centred] if self.fit_intercept else [], self.c * w]

    def coefficients(self, theta):
        """``(w, b)`` in the units of ``X`` from the coordinates ``theta``."""
        off = int(self.fit_intercept)
        w, b = theta[off:] / self.c, (float(theta[0]) if self.fit_intercept else 0.0)
        if self.shift is not None:
            b = b - float(w @ self.shift)             # back to the units of X
        return w, b

    def separable(self):
        """The exact test (a linear program): are the classes (quasi-)separated?"""
        return separable(self.X, self.t, self.fit_intercept, col_scale=self.c, weights=self.sample_weight)

    def separated_at(self, theta, converged, watch=None):
        """With ``lam = 0``: has the fit ending at ``theta`` no finite optimum? The test runs
        only where the margins saturate or the solver did not converge (``watch``: a
        :class:`linbook.logistic.solvers.SeparationWatch` that may have run it already)."""
        if watch is not None and (watch.separable or watch.tested):
            return watch.separable
        w, b = theta[int(self.fit_intercept):] / self.c, (theta[0] if self.fit_intercept else 0.0)
        margin = self.t * (self.X @ w + b)
        if np.any(margin > _SATURATED[self.link]) or not converged:
            return self.separable()
        return False
