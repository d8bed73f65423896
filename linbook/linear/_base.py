"""What the linear regression models share: validation, prediction, the Gaussian likelihood.

Private to :mod:`linbook.linear`.
"""

from __future__ import annotations


import warnings
from contextlib import nullcontext

import numpy as np
import scipy.sparse as sps
from sklearn.base import BaseEstimator
from ..base import RegressorMixin  # scikit-learn's, with an R^2 that does not overflow
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted

from ..base import (check_params, check_sample_weight, dask_blocks, require_y, validate_fit, validate_predict,
                    weights_near_one, without_zero_weight_rows)
from ..criteria import InformationCriteriaMixin
from .._kernels.cholesky import equilibrated_cholesky, equilibrated_solve
from .._kernels.threads import (blas_threads_for_one_call, factorisation_threads, map_row_chunks,
                                single_threaded_blas)
from ..numerics import _power_of_two_scale
from ..optim.newton_cg import conjugate_gradient_step, lanczos_condition
from .._predictor import finite_scores, linear_predictor_from, predict_scores
from ._moments import RCOND_MIN, Moments, TrainingGram, gram_pairs


def log_sum_squares(r, sw=None):
    """``log(sum_i s_i r_i^2)`` (``s_i`` the sample weights ``sw``) without overflow or underflow
    (``-inf`` for a zero residual)."""
    r = np.asarray(r, dtype=float)
    s = float(_power_of_two_scale(np.max(np.abs(r), initial=0.0), below=True))
    q = (r / s) ** 2
    t = float(q.sum() if sw is None else sw @ q)
    return (np.log(t) + 2.0 * np.log(s)) if t > 0 else -np.inf


class LinearModel(InformationCriteriaMixin, RegressorMixin, BaseEstimator):
    """``predict``, tags and the Gaussian log-likelihood of the least-squares family."""

    _accept_sparse = True
    _parameter_constraints = {"fit_intercept": ["boolean"]}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self._accept_sparse
        return tags

    def _validate(self, X, y, sample_weight):
        """Check the parameters and the data: ``(X, y, sample_weight or None)``."""
        check_params(self)
        require_y(self, y)
        X, y = validate_fit(self, X, y, y_numeric=True, accept_sparse=["csr", "csc"])
        sw = None if sample_weight is None else check_sample_weight(sample_weight, X, estimator=self)
        # a row of weight 0 counts for nothing, but its y would still set y's scale and the variance floor
        # (a y of 1e300 made sigma2_ inf), and 0 * its square overflowed to NaN in the sums
        return without_zero_weight_rows(X, y, sw)

    #: The power of two the weights were divided by (:meth:`_weights_near_one`): ``sigma2_`` is in the caller's units.
    _weight_unit = 1.0

    def _weights_near_one(self, sw, lam=0.0):
        """``(sw, lam)`` over ``2^e`` for weights below ``2^-64`` (``linbook.base.weights_near_one``: the same
        minimiser of ``sum s_i r_i^2 + lam ||w||^2``); ``2^e`` is kept for ``sigma2_``. Why: weights of 2^-1000
        beside a column offset by 1e10 put its centred products below the smallest double (1.4e-4 off, silently)."""
        sw, lam, self._weight_unit = weights_near_one(sw, lam)
        return sw, lam

    def _finish(self, mom, v, model, intercept=None, rss=None):
        """Set ``coef_``, ``intercept_`` and the plug-in noise variance from the scaled solution (the intercept,
        in ``y``'s units, and the scaled ``rss`` as a solver on the uncentred rows found them, if given)."""
        self.coef_ = mom.coef(v, model)
        self.intercept_ = mom.intercept(v) if intercept is None else intercept
        # (o, b_o): predictions as (x - o)^T w + b_o on columns offset far from 0 (Moments.origin)
        self._origin = mom.origin(v) if intercept is None and hasattr(mom, "origin") else None
        rss = max(mom.rss_scaled(v) if rss is None else rss, 0.0)
        # log sigma^2 = log(RSS / n), kept in log space (y may be near 1e300 or 1e-300). A fit
        # within rounding of y is floored at sigma = eps * max|y|: the likelihood is unbounded at
        # sigma^2 = 0, and residuals below the resolution of y carry no information.
        # (from max|y| itself: y_scale is 1 for |y| within 1e+-100, and a floor of eps^2 swallowed the noise
        # variance of any y below ~1e-8, 1e-20 -> sigma2_ ~1e-32 where it was 1e-42; y = 0: eps^2)
        # sigma2_ = sum(s r^2) / n, so the floor scales with the mean weight too (under weights of 2^-100 a fixed
        # floor stood 25 times above the weighted variance)
        floor = 2.0 * (np.log(np.finfo(float).eps) + np.log(mom.y_abs_max if mom.y_abs_max > 0 else 1.0))
        if mom.sum_w > 0 and mom.n_eff > 0:
            floor += np.log(mom.sum_w) - np.log(mom.n_eff)
        log_rss = np.log(rss) + 2.0 * np.log(mom.y_scale) if rss > 0 else -np.inf
        self._log_sigma2 = max(float(log_rss - np.log(mom.n_eff)), float(floor)) + np.log(self._weight_unit)
        with np.errstate(over="ignore"):
            self.sigma2_ = float(np.exp(self._log_sigma2))
        return self

    def _cg_first(self, X, sw, mom, pen, precondition, budget):
        """Sparse ``X``: ``(G + diag(pen)) v = c`` by conjugate gradients on ``X`` itself, before any Gram matrix.

        Returns ``(v, training_gram)`` where :func:`sparse_cg_solve` settles the equations within ``budget``
        iterations (then ``solver_ = "cg"``, and ``training_gram`` forms the Gram matrix for the statistics of
        its spectrum on first use, or is ``None`` where ``X`` is too wide for one); else ``(None, None)``, with
        the Gram matrix formed, where it may be, for the solver that comes next."""
        v = sparse_cg_solve(mom, pen, precondition, budget) if budget else None
        if v is None:
            if budget and mom.gram_possible:
                mom.build_gram()
            return None, None
        self.solver_ = "cg"
        return v, (TrainingGram(X, sw, self.fit_intercept) if mom.gram_possible else None)

    @dask_blocks
    def predict(self, X):
        """Predicted targets ``X @ coef_ + intercept_``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        return finite_scores(self, predict_scores(self, X, self.coef_, self.intercept_, accept_sparse=["csr", "csc"],
                                                  origin=getattr(self, "_origin", None)))

    def _linear(self, X):
        """``X @ coef_ + intercept_`` on validated ``X`` (from the fit's origin, where it has one)."""
        return linear_predictor_from(X, self.coef_, self.intercept_, getattr(self, "_origin", None))

    def log_likelihood(self, X, y, sample_weight=None):
        """Gaussian log-likelihood of ``y`` given ``X`` (summed, nats).

        With noise variance ``sigma2_ / w_i`` for sample ``i`` (``w_i = 1`` without weights) and
        ``sigma2_ = sum_i w_i r_i^2 / N`` fitted on the training data (the maximum-likelihood
        value), this is ``-N/2 log(2 pi sigma2_) + 1/2 sum_i log w_i - sum_i w_i r_i^2 / (2 sigma2_)``;
        on the training data it equals statsmodels' ``OLS(...).fit().llf`` (``WLS`` with
        ``weights=sample_weight``). Rows of zero weight are left out (``N`` counts the others).
        Computed in log space, so it is finite even when ``y`` is near 1e300. A fit within rounding of
        ``y`` (an exact fit) has ``sigma2_`` floored at ``(eps max|y|)^2``: the likelihood is unbounded as
        ``sigma^2 -> 0``, and residuals below the resolution of ``y`` carry no information, so this
        (and ``aic``/``bic``) is then finite, the value at that floor.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        float
        """
        X = validate_predict(self, X, accept_sparse=["csr", "csc"])
        y = np.asarray(y, dtype=float).ravel()
        if y.shape[0] != X.shape[0] or not np.all(np.isfinite(y)):
            raise ValueError("y must be finite and have one value per row of X")
        r = y - self._linear(X)
        if sample_weight is None:
            sw, n, log_sw = None, y.shape[0], 0.0
        else:
            sw = check_sample_weight(sample_weight, X, estimator=self)
            keep = sw > 0
            sw, r = sw[keep], r[keep]
            n, log_sw = int(keep.sum()), float(np.sum(np.log(sw)))
        ratio = np.exp(log_sum_squares(r, sw) - self._log_sigma2)
        return float(-0.5 * n * (np.log(2 * np.pi) + self._log_sigma2) + 0.5 * log_sw - 0.5 * ratio)


def weights_beyond_rounding(sw):
    """Whether the positive sample weights span more than ``1 / eps``: the light rows' share of any sum over the rows
    (``X^T S X``, ``x_j^T S r``) is then below the heavy rows' rounding."""
    if sw is None:
        return False
    positive = sw[sw > 0]
    return bool(positive.size and float(np.max(positive)) > float(np.min(positive)) / np.finfo(float).eps)


def moments(est, X, y, sw, gram=True, common_scale=True):
    """The scaled Gram statistics of the fit (see :mod:`linbook.linear._moments`).

    ``gram=False`` skips the D x D Gram matrix (wide dense X, solved from a copy instead);
    without it, ``common_scale=False`` scales each column by its own power of two (for a penalised
    fit, whose penalty maps per column: a column of 1e200 beside ordinary ones leaves them their
    digits) instead of one common to all (the minimum-norm least-squares solution in original units).
    """
    # sparse X: vector operations only; a long dot product here would wake BLAS's threads, which then spin
    # and take a core from the row chunks of the conjugate gradients that follow (sparse 100k x 2000:
    # 0.119 s a Ridge fit against 0.091 s)
    with single_threaded_blas() if sps.issparse(X) else nullcontext():
        return Moments(X, y, sw, est.fit_intercept, gram=gram, common_scale=common_scale)


def ridge_penalty(mom, lam):
    """``lam`` in the scaled coordinates of ``mom``: ``lam / x_scale_j^2`` per column."""
    with np.errstate(over="ignore"):
        pen = (np.sqrt(lam) / mom.x_scale) ** 2
    if not np.all(np.isfinite(pen)):
        raise ValueError(f"Ridge: lam / (feature scale)^2 overflows float64 (features below ~1e-150 "
                         f"with lam = {lam:g}): the penalty swamps the data completely. Rescale the "
                         "columns of X (e.g. StandardScaler) and lam with them.")
    return pen


def original_gram(G, x_scale):
    """The Gram matrix in original units, or ``None`` when it overflows float64."""
    with np.errstate(over="ignore", invalid="ignore"):
        A = G * np.outer(x_scale, x_scale)
    return A if np.all(np.isfinite(A)) else None


def wide_roots(pen):
    """``sqrt(q)`` with ``q = min(pen) / pen`` (powers of four: exact, at most 1; ``q = 1`` for ``pen = 0``), the column
    factors of :func:`wide_kernel`, or ``None`` where ``q`` underflows or ``pen`` mixes zeros with positive entries."""
    pen_min = float(np.min(pen))
    if pen_min > 0:
        q = pen_min / pen
    elif np.all(pen == 0):
        q = np.ones(len(pen))
    else:
        return None
    if not np.min(q, initial=1.0) >= np.finfo(float).tiny:
        return None
    return np.sqrt(q)                                        # sqrt of a power of four: exact


def wide_kernel(Z, pen, overwrite=False, scaled=False):
    """``(K, sqrt(q), min(pen))`` with ``K = Z diag(q) Z^T``, ``q = min(pen) / pen`` (:func:`wide_roots`), or ``None``
    where that is. ``overwrite``: ``Z`` (the caller's private copy) becomes ``Z diag(sqrt(q))`` in place, so a wide
    fit holds one copy of ``X``, not two (1000 x 10000: 80 MB and ~0.02 s); ``scaled``: ``Z`` is that already (the
    caller applied the factors while making its copy, :meth:`Moments.design`: one pass over it fewer)."""
    n, d = Z.shape
    root = wide_roots(pen)
    if root is None:
        return None
    with blas_threads_for_one_call(n * n * d):
        if scaled or np.all(root == 1.0):
            Zq = Z
        elif overwrite:
            Zq = Z
            Zq *= root
        else:
            Zq = Z * root
        K = Zq @ Zq.T                                        # Z diag(q) Z^T (numpy's syrk: symmetric)
    return K, root, float(np.min(pen))


def wide_normal_solve(Z, z, pen, centred, sw, overwrite=False, scaled=False):
    """Wide ``Z`` (``N < D``): ``(Z^T Z + diag(pen)) v = Z^T z`` in its ``N x N`` form, or ``None``.

    Pushing ``Z^T`` through the inverse gives ``v = P^{-1} Z^T (Z P^{-1} Z^T + I)^{-1} z``
    (``P = diag(pen)``): ``O(N^2 D)`` flops instead of ``O(N D^2)``. The ``N x N`` matrix is smaller
    than ``Z`` itself because ``N < D`` (the project's "never N x N" is about tall data, where it would
    be the largest array): it is never formed when ``N >= D``. With ``q = min(pen) / pen`` (powers of
    four: exact, at most 1) it reads ``v = q Z^T beta``, ``(Z diag(q) Z^T + min(pen) I) beta = z``, so
    nothing overflows (:func:`wide_kernel`). ``pen = 0`` (least squares) gives ``v = Z^T (Z Z^T)^{-1} z``, the
    **minimum-norm** solution: every such ``v`` lies in the row space of ``Z``. Centring makes
    ``Z^T u = 0`` and ``z . u = 0`` for ``u ~ sqrt(sw)``: ``beta`` has no component along ``u``
    whatever the matrix does there, so the matrix is filled along ``u`` and the condition check sees
    only the directions that matter (else every small ``pen`` looked singular). Solved by the
    equilibrated Cholesky with the condition check of the tall normal equations (``RCOND_MIN``);
    ``None`` when that fails (nearly dependent rows with a tiny or zero penalty), when ``q``
    underflows (column scales ~1e150 apart) or when ``Z`` is not wide: then the caller's SVD.
    ``overwrite``: ``Z`` may be scaled in place (a caller that needs it again recomputes it); ``scaled``: ``Z`` is
    ``Z diag(sqrt(q))`` already (:func:`wide_kernel`).
    Returns ``(v, K, min(pen))`` with ``K = Z diag(q) Z^T`` (for the degrees of freedom).
    """
    n, d = Z.shape
    if not n < d:
        return None
    kernel = wide_kernel(Z, pen, overwrite, scaled)
    if kernel is None:
        return None
    K, root, pen_min = kernel
    A = K + pen_min * np.eye(n)
    if centred:
        u = np.sqrt(sw) if sw is not None else np.ones(n)
        u /= np.linalg.norm(u)
        A += np.max(np.diag(K), initial=0.0) * np.outer(u, u)
    with factorisation_threads(n):
        factor = equilibrated_cholesky(A, RCOND_MIN)
        if factor is None:
            return None
        beta = equilibrated_solve(factor, z)
    with blas_threads_for_one_call(2 * n * d):
        t = Z.T @ beta                 # (Z diag(sqrt(q)))^T beta where Z was scaled in place
    return root * (t if overwrite or scaled else root * t), K, pen_min


# The cost model that decides whether conjugate gradients on sparse X may run before the Gram matrix
# is formed (seconds; fitted to the Gram path and to CG iterations on CSR matrices from 3000 x 300 to
# 100k x 2000 and 5000 x 4000, AMD EPYC, 2 cores; within 2-3x of the measured times): the Gram costs its
# scattered products, a loop over the rows, its D^2 passes and a D^3/3 Cholesky; an iteration costs two
# passes over the stored entries, a few vector operations and ~0.1 ms of Python.
_GRAM_PAIR_S, _GRAM_ROW_S, _GRAM_CUBE_S, _GRAM_SQUARE_S = 2e-9, 1e-8, 1.8e-11, 2e-8
_CG_ENTRY_S, _CG_VECTOR_S, _CG_CALL_S = 3e-9, 2e-9, 1e-4
_CG_MAX_ITER_WITHOUT_GRAM = 2000        # sparse X too wide for a Gram: then LSQR
#: Normwise backward error at which a CG solution counts, on the equilibrated equations (``E = diag(G + P)^(-1/2)``,
#: the scaling of the Cholesky path): ``||E ((G + P) v - c)|| <= 1e-13 (||E^-1 v|| + ||E c||)``, three digits looser
#: than a backward-stable factorisation. Why equilibrated: with ``||G + P||`` taken as its largest diagonal entry,
#: a penalty of 1e22 on a column of 1e-8 (lam = 1e6) passed CG's answer with the other columns' equations
#: solved to 2e-3 (a ridge objective 1e-3 above its minimum, silently).
CG_BACKWARD_ERROR = 1e-13


def sparse_cg_budget(X):
    """The CG iterations sparse ``X`` may spend before forming its Gram matrix would have been cheaper
    (the cost model above; ``0``: not worth starting; sparse ``X`` too wide for a Gram: a fixed cap).
    Decided from the shape and the stored entries alone, before any pass over ``X``."""
    from . import _moments                   # read at call time (tests lower the limit)

    n, d = X.shape
    if not sps.issparse(X) or d == 0:
        return 0
    if d > _moments.MAX_GRAM_FEATURES:
        return _CG_MAX_ITER_WITHOUT_GRAM
    gram_s = _GRAM_PAIR_S * gram_pairs(X) + _GRAM_ROW_S * n + _GRAM_CUBE_S * d ** 3 + _GRAM_SQUARE_S * d * d
    budget = int(gram_s / (_CG_ENTRY_S * X.nnz + _CG_VECTOR_S * (n + d) + _CG_CALL_S))
    return budget if budget >= 5 else 0


def sparse_cg_solve(mom, pen, precondition, budget):
    """Sparse ``X``: ``(G + diag(pen)) v = c`` by conjugate gradients on ``X`` itself, or ``None``.

    Each iteration applies ``G + diag(pen)`` as two passes over the stored entries of ``X``
    (:meth:`Moments.normal_matvec`): no ``D x D`` matrix. CG runs at most ``budget`` iterations (while
    that costs less than forming the Gram matrix: :func:`sparse_cg_budget`), and its answer counts only
    at the backward error :data:`CG_BACKWARD_ERROR` and where CG's own estimate of the condition number
    (:func:`linbook.optim.newton_cg.lanczos_condition`) passes the Cholesky path's test, ``RCOND_MIN``;
    otherwise ``None``, and the caller forms the Gram (and, past that test, an orthogonal method).
    Also ``None`` where a column's mean dominates its spread (the implicit centring would lose more
    than two digits; the Gram path centres such columns exactly).
    ``precondition`` (for a unique solution, ``pen > 0``): by Jacobi (``diag(G) + pen``) when ``N >= D``;
    by ``pen`` itself when ``D > N``, where ``D - N`` eigenvalues of ``G + pen`` are the penalty alone and
    preconditioning by ``pen`` keeps them one cluster (plain CG in the original units; Jacobi spreads
    them: 2000 x 20000 sparse took 260 steps with Jacobi, 30 with ``pen``). Least squares runs
    unpreconditioned from ``v = 0`` on one common column scale: its iterates stay in the row space of
    ``X``, so it converges to the minimum-norm solution.
    """
    d = mom.d
    if not precondition and np.max(mom.column_scales) > 2.0 ** 200 * np.min(mom.column_scales):
        return None              # (one scale for columns 1e60 apart would leave the small ones few digits)
    diag, squares = mom.gram_diagonal()
    if np.any(diag < 1e-4 * squares):
        return None              # a column's mean dominates its spread: only the Gram centres it exactly
    diag = diag + pen
    A, z = mom.operator()
    c = A.rmatvec(z)
    preconditioner = None if not precondition else diag if mom.n >= d else np.broadcast_to(pen, (d,))
    return _settled_cg(mom.normal_matvec(pen), c, diag, preconditioner, budget)


def _settled_cg(H, c, diag, preconditioner, budget, give_way=False):
    """``H v = c`` (``H = G + diag(pen)``, ``diag`` its diagonal, or a function giving it) by conjugate gradients
    in at most ``budget`` iterations, or ``None`` where the answer does not pass :data:`CG_BACKWARD_ERROR` on the
    equilibrated equations and the Cholesky path's condition test.

    CG stops as soon as its own residual passes half that bound (:func:`_backward_error`; the half leaves room
    for the drift of CG's recurrence from ``H v - c``, checked once at the end), or at a relative residual of
    1e-14 (sparse 2000 x 20000, whose residual falls ~3x a step: 28 iterations where 1e-14 alone took 29).
    ``give_way``: CG ends early (and its answer is refused) once the condition number its Lanczos matrix shows
    (a lower bound, see :func:`lanczos_condition`) fails that test or would need more than ``budget`` iterations
    by CG's bound ``sqrt(cond) / 2 ln(2 / 1e-14)``: the caller's factorisation then answers, a few passes later
    instead of a whole budget later."""
    if not np.any(c):
        return np.zeros(len(c))
    steps, gave_way = {"alpha": [], "beta": []}, []
    diag = diag() if callable(diag) else diag
    with np.errstate(over="ignore", invalid="ignore"):
        root = np.sqrt(np.where(diag > 0, diag, 1.0))      # (a column of zeros: its equation is 0 = 0)
        c_size = np.linalg.norm(c / root)

    def stop(d, r):
        if give_way and len(steps["alpha"]) >= 2 and _hopeless(steps, budget):
            gave_way.append(True)
            return True
        return _backward_error(r, d, c_size, root) <= 0.5 * CG_BACKWARD_ERROR

    # each iteration is two products with X and a few vector operations: one BLAS thread (see lsqr_solve)
    with single_threaded_blas(), np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        v = conjugate_gradient_step(H, -c, 1e-14, budget, preconditioner, stop=stop, steps=steps)
        if gave_way:
            return None
        # a bound that overflowed accepts anything (inf <= inf): with lam ~1e-300 the preconditioner 1 / pen
        # overflowed, CG stopped before its first step and returned a vector of ~1e300s
        accurate = len(steps["alpha"]) > 0 and _backward_error(c - H(v), v, c_size, root) <= CG_BACKWARD_ERROR
        # the Cholesky path's rule: where the (equilibrated) normal equations are this ill-conditioned they
        # lose more than half of the digits, and an orthogonal method on X itself takes over
        return v if accurate and lanczos_condition(steps) * RCOND_MIN <= 1.0 else None


def _backward_error(r, v, c_size, root):
    """The normwise backward error of ``v`` with residual ``r = c - H v`` on the equilibrated equations (each row and
    column divided by ``root = sqrt(diag(H))``, unit diagonal): ``||r / root|| / (||root v|| + c_size)`` with
    ``c_size = ||c / root||``, or ``inf`` where that is not finite. Why equilibrated: judged in the units of the
    largest diagonal entry, the other equations went unchecked."""
    scale = np.linalg.norm(root * v) + c_size
    error = np.linalg.norm(r / root) / scale
    return float(error) if np.isfinite(scale) and np.isfinite(error) else np.inf


def _hopeless(steps, budget):
    """Whether the condition number CG's Lanczos matrix shows (a lower bound) fails the Cholesky path's test or
    needs more than ``budget`` iterations by CG's bound ``sqrt(cond) / 2 ln(2 / 1e-14)``."""
    try:
        cond = lanczos_condition(steps)
    except ValueError:              # a step of 0 or inf (a penalty near 1e-300): not a CG problem
        cond = np.inf
    return not cond * RCOND_MIN <= 1.0 or 0.5 * np.sqrt(cond) * np.log(2e14) > budget


# Dense wide X: conjugate gradients on the centred copy before the N x N form (seconds, 1000 x 10000, AMD EPYC Zen 4,
# 2 cores: the syrk 0.116 s quiet in sessions 32 and 33, so ~1.16e-11 N^2 D; 1.75e-11 on the earlier machine sent
# 1000 rows to CG, 0.256 s against 0.188 s for the N x N form). A step's one pass over the copy ~4e-10 N D, from
# the ratio measured under load, 0.70 s against 16.5 ms: ~42 passes a syrk, 0.029 N. CG starts only with room for
# the ~30 steps a well-conditioned fit needs (a random 1000 x 10000: 28; the Lanczos bound of _settled_cg says
# 32), from ~1100 rows: below, it would give way on most problems after a few passes, each 1/(0.029 N) of a syrk.
_WIDE_SYRK_S, _WIDE_PASS_S, _WIDE_MIN_BUDGET = 1.16e-11, 4e-10, 32
#: Bytes of a block of rows in the fused products ``Z^T (Z p)``: read from memory once, it is still in cache
#: for its second product (1000 x 10000: 16.5 ms a product against 23 ms for the two whole-matrix products).
_WIDE_BLOCK_BYTES = 1 << 21
#: The widest ratio of positive sample weights for which dense wide CG runs (beyond: the ``N x N`` form).
_WIDE_CG_WEIGHT_SPREAD = 1e4


def wide_cg_budget(n, d):
    """The CG iterations a dense wide ``n x d`` fit may spend before the ``N x N`` form would have been cheaper
    (``0``: not worth starting)."""
    budget = int(_WIDE_SYRK_S * n / _WIDE_PASS_S) if n < d else 0
    return budget if budget >= _WIDE_MIN_BUDGET else 0


def _dense_normal_matvec(Z, pen):
    """``p -> (Z^T Z + diag(pen)) p`` for dense ``Z``, both products a block of rows at a time (the block read
    from memory once), the blocks' sums in a fixed order (the same bits on any core count)."""
    n, d = Z.shape
    rows = max(1, _WIDE_BLOCK_BYTES // (8 * d))

    def chunk(a, b, p):
        out = np.zeros(d)
        for i in range(a, b, rows):
            B = Z[i:min(i + rows, b)]
            out += B.T @ (B @ p)
        return out

    def matvec(p):
        parts = map_row_chunks(lambda a, b: chunk(a, b, p), n, min_rows=4 * rows)
        return np.sum(parts, axis=0) + pen * p

    return matvec


def wide_cg_solve(Z, z, pen, sw, precondition, budget, c=None, squares=None):
    """Dense wide ``Z`` (the centred, weighted, scaled copy, ``N < D``): ``(Z^T Z + diag(pen)) v = Z^T z`` by
    conjugate gradients within ``budget`` iterations, or ``None`` (then the ``N x N`` form).

    Each iteration is one pass over ``Z`` (:func:`_dense_normal_matvec`), against the ``N^2 D`` of the ``N x N``
    form's syrk; the answer counts on :func:`sparse_cg_solve`'s terms (backward error and condition test),
    and CG gives way early where its condition estimate shows it would not finish within the budget. Preconditioned by
    ``pen`` (``D - N`` eigenvalues are the penalty alone, see :func:`sparse_cg_solve`); least squares
    (``precondition`` false) runs plain CG from ``v = 0``, whose iterates stay in the row space of ``Z``
    (the minimum-norm solution), on one common column scale. Sample weights ``sw`` more than
    :data:`_WIDE_CG_WEIGHT_SPREAD` apart: ``None`` (the normwise backward error does not see the light rows: with
    weights 1e-100 .. 1e100 CG stopped after 3 steps and its answer passed, the objective 1e16 times the optimum's;
    the ``N x N`` form equilibrates the rows). ``c = Z^T z`` and ``squares = diag(Z^T Z)``, where the caller summed
    them while making ``Z`` (:meth:`Moments.design`), save a pass each."""
    if budget <= 0 or (sw is not None and np.max(sw) > _WIDE_CG_WEIGHT_SPREAD * np.min(sw[sw > 0])):
        return None
    if c is None:
        with np.errstate(over="ignore", invalid="ignore"):
            c = Z.T @ z
    if not np.all(np.isfinite(c)):
        return None

    def diag():
        return (np.einsum("ij,ij->j", Z, Z) if squares is None else squares) + pen

    return _settled_cg(_dense_normal_matvec(Z, pen), c, diag, np.broadcast_to(pen, c.shape) if precondition
                       else None, budget, give_way=True)


def lsqr_solve(A, z, damp, model):
    """LSQR on the implicitly centred operator, to (nearly) machine precision; warns if it stalls. ``A``, ``z`` and
    ``damp`` are first divided by powers of two near ``||A||`` and ``||z||`` (:func:`_lsqr_units`)."""
    from scipy.sparse.linalg import LinearOperator, lsqr
    a, b = _lsqr_units(A, z)
    A1 = LinearOperator(A.shape, dtype=float, matvec=lambda v: A.matvec(np.ravel(v)) / a,
                        rmatvec=lambda u: A.rmatvec(np.ravel(u)) / a)
    # each iteration is a few vector operations and two sparse products: one BLAS thread (BLAS's threads
    # synchronise in every norm and dot; Ridge on sparse 2000 x 20000, 287 iterations: 3.1 s with two
    # threads on 2 busy cores, 1.4 s of it in the vector dots)
    with single_threaded_blas():
        out = lsqr(A1, z / b, damp=damp / a, atol=1e-14, btol=1e-14, conlim=1e14,
                   iter_lim=max(2000, 20 * A.shape[1]))
    if out[1] == 7:
        warnings.warn(f"{model}: LSQR reached its iteration limit ({out[2]} iterations) before "
                      "converging; the coefficients may be inaccurate. Scale the features or add a "
                      "penalty (Ridge).", ConvergenceWarning, stacklevel=3)
    return out[0] * (b / a)


def _lsqr_units(A, z):
    """Powers of two ``(a, b)`` near ``||A||`` (a few power iterations on ``A^T A``) and ``||z||``.

    Why: SciPy's LSQR stops once ``||A^T r|| <= atol (||A|| ||r|| + eps)``, an absolute ``eps`` that the product
    falls below for a small operator: Ridge(lam=0) on sparse 8 x 8 features of ~1e-30 (any weights spread) stopped
    after a few iterations with the fitted values 0.7 of y's spread off, silently, where the same features at 1
    were right to 1e-10. On ``A / a`` and ``z / b`` (exact) the tests are relative again."""
    x, sizes = np.random.default_rng(0).standard_normal(A.shape[1]), (0.0, 0.0)
    for _ in range(3):              # each product's input brought to entries below 1, so that nothing overflows
        u = A.matvec(x / _power_of_two_scale(np.max(np.abs(x), initial=0.0)))
        x = A.rmatvec(u / _power_of_two_scale(np.max(np.abs(u), initial=0.0)))
        sizes = (np.max(np.abs(u), initial=0.0), np.max(np.abs(x), initial=0.0))     # each ~ ||A||
    norm_a = np.sqrt(sizes[0]) * np.sqrt(sizes[1])
    return (float(_power_of_two_scale(norm_a if np.isfinite(norm_a) else 1.0)),
            float(_power_of_two_scale(np.max(np.abs(z), initial=0.0))))
