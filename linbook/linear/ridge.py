"""Ridge regression (l2-penalised least squares).

Derived in: chapter "Linear regression" § "Ridge, lasso and least absolute deviations".
"""

from __future__ import annotations

import warnings
from functools import partial

import numpy as np
import scipy.linalg
import scipy.sparse as sps
from scipy.sparse.linalg import LinearOperator
from sklearn.exceptions import ConvergenceWarning

from ..base import NON_NEGATIVE, all_or_nothing, is_dask
from .._kernels.cholesky import equilibrated_cholesky, equilibrated_solve
from ._base import (LinearModel, lsqr_solve, moments, ridge_penalty, sparse_cg_budget, wide_cg_budget, wide_cg_solve,
                    weights_beyond_rounding, wide_kernel, wide_normal_solve, wide_roots)
from ._far_rows import components_below_rounding, far_rows_solve
from ._moments import MAX_GRAM_FEATURES, RCOND_MIN, TrainingGram

__all__ = ["Ridge"]


def _augmented(A, pen):
    """``[A; diag(sqrt(pen))]`` as an operator: LSQR on it minimises ``||A v - z||^2 + sum pen_j v_j^2``."""
    n, d = A.shape
    r = np.sqrt(pen)
    return LinearOperator((n + d, d), dtype=float,
                          matvec=lambda v: np.concatenate([A.matvec(np.ravel(v)), r * np.ravel(v)]),
                          rmatvec=lambda u: A.rmatvec(np.ravel(u)[:n]) + r * np.ravel(u)[n:])


def _ridge_by_lsqr(mom, pen):
    """Sparse ``X`` past the Cholesky test: LSQR on the damped, implicitly centred operator, then the least
    ``||w||`` among the solutions with its fit (:func:`_least_norm_in_fit_class`). Warns where the sample
    weights span more than float64 resolves (:func:`_warn_if_weights_beyond_rounding`)."""
    _warn_if_weights_beyond_rounding(mom.sw, "LSQR on sparse X")
    A, z = mom.operator()
    gram_diagonal = mom.gram_diagonal()[0]
    q = _equilibrating_scales(gram_diagonal, pen)
    Aq = LinearOperator(A.shape, dtype=float, matvec=lambda t: A.matvec(q * np.ravel(t)),
                        rmatvec=lambda u: q * A.rmatvec(np.ravel(u)))
    v = q * lsqr_solve(_augmented(Aq, pen * q * q), np.concatenate([z, np.zeros(mom.d)]), 0.0, "Ridge")
    return _least_norm_in_fit_class(A, v, pen, mom.x_scale, gram_diagonal, least_v=np.all(q == q[0]))


def _equilibrating_scales(gram_diagonal, pen):
    """``q`` with unit columns in ``[A; diag(sqrt(pen))] diag(q)``: ``q_j = (G_jj + pen_j)^(-1/2)`` where every
    penalty is positive (the solution is then unique: the scaling changes LSQR's path, not its answer); else
    ones (``lam = 0``: LSQR from 0 then ends at the least ``||v||``, the least-squares answer on one scale).

    Why: damped columns of very different lengths (lam = 1e6 on columns of 1e-8 and of 1e8: ``pen`` from
    1e-11 to 1e25) left the operator so ill-conditioned that LSQR stopped at a ridge objective 1.6 % above
    its minimum, silently; equilibrated, it reaches the minimum (the column scaling of LSQR's own paper)."""
    damped = gram_diagonal + pen
    if not (np.min(pen, initial=np.inf) > 0 and np.all(np.isfinite(damped))):
        return np.ones_like(pen)
    return 1.0 / np.sqrt(damped)


#: LSQR (tolerances 1e-14) resolves a penalty only while the damped operator ``[A; diag(sqrt(pen))]`` has a
#: condition number below ~1e7, i.e. ``min(pen) >= 1e-14 ||A||^2`` (``||A||^2 <= trace(G)``, the scaled Gram).
LSQR_RESOLVED_PENALTY = 1e-14


def _least_norm_in_fit_class(A, v, pen, x_scale, gram_diagonal, least_v=True):
    """LSQR's ridge solution ``v`` (scaled coordinates), moved within ``{u : A u = A v}`` to the least ``||w||``
    in the user's coordinates (``w_j = v_j / x_scale_j``) where LSQR cannot have resolved the penalty.

    Why: LSQR damps each scaled column by its own ``sqrt(pen_j)``; a penalty below
    :data:`LSQR_RESOLVED_PENALTY` times ``trace(G)`` is below the rounding of ``A v``, and LSQR (from 0) stops at
    the least ``||v||``: with column scales that differ that is another problem's answer (norm 71 where the
    ridge limit, the least-norm interpolant in the user's coordinates, has 1.45). The ridge solution is the
    least penalty ``||L u||`` (``L ~ diag(1 / x_scale)``) among all ``u`` with its own fit ``A u``, so this
    move can only lower the objective: it is LSQR, from 0, on the consistent system ``A diag(q) t = A v``
    (``q = x_scale / max(x_scale)``, exact powers of two), whose least-norm ``t`` gives ``u = q t``. Uniform
    scales need no move where LSQR ran on them unscaled (``least_v``: its own iterates are then least-norm).
    Kept only where it reproduces the fit
    ``A v`` to 1e-10 and lowers ``||L u||``; else (a column of 1e200 beside ordinary ones: ``q`` underflows
    for those, and the full-rank fit is unique anyway) ``v`` is returned unchanged.
    """
    resolved = np.min(pen) >= LSQR_RESOLVED_PENALTY * float(np.sum(gram_diagonal))
    if resolved or (least_v and np.all(x_scale == x_scale[0])):
        return v
    q = x_scale / np.max(x_scale)
    Aq = LinearOperator(A.shape, dtype=float, matvec=lambda t: A.matvec(q * np.ravel(t)),
                        rmatvec=lambda u: q * A.rmatvec(np.ravel(u)))
    fit = A.matvec(v)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        u = q * lsqr_solve(Aq, fit, 0.0, "Ridge")
    moved_fit = np.linalg.norm(A.matvec(u) - fit) <= 1e-10 * np.linalg.norm(fit)
    smaller = np.linalg.norm(u / x_scale) <= np.linalg.norm(v / x_scale)
    return u if moved_fit and smaller and np.all(np.isfinite(u)) else v


def _warn_if_weights_beyond_rounding(sw, solver):
    """A ``ConvergenceWarning`` where the positive sample weights span more than ``1 / eps`` and the fallback runs.

    Why: the rows of ``sqrt(sw) X`` then differ by more than 1e8, and an orthogonal method that mixes all rows
    (the SVD's bidiagonalisation, LSQR's products) rounds the light rows away, though with ``lam > 0`` they
    still decide the directions the heavy rows leave open: with ``10 ** uniform(-150, 150)`` weights and
    ``lam = 1`` the SVD's coefficients were 99 % off a 700-digit solution, silently. No method here certifies
    such a fit (a QR of the rows sorted by size reached that solution to 1e-15, but on another such problem
    stopped 1e9 times above the SVD's objective, and the objective itself cannot be evaluated in float64
    there: the heavy rows' residuals are below their rounding). The Cholesky path's condition test bounds the
    light rows' share only normwise: a coefficient that only they decide sends the fit to the graded QR
    (:func:`._far_rows.components_below_rounding`)."""
    if weights_beyond_rounding(sw):
        warnings.warn(f"Ridge: the sample weights span more than 1e16 and the penalised normal equations are "
                      f"ill-conditioned; the {solver} rounds the light rows away, so the coefficients may be off "
                      "the optimum. Merge or rescale the extreme weights (or drop the negligible rows).",
                      ConvergenceWarning, stacklevel=4)


def _df_from_gram(G, pen, n):
    """``tr(G (G + diag(pen))^{-1})``: by a solve of the equilibrated equations where they pass the Cholesky
    path's condition test, else by eigenvalues.

    Equilibrated first: with columns in units 1e13 apart the eigenvalues of ``G`` are resolved only down to
    ``eps ||G||``, and those of the small columns (each adds ``e / (e + lam)``) were lost: ``df_`` 0.99999999999
    where it is 1.0000122527. Where that test fails (``G`` nearly singular and the penalty below its rounding,
    for wide X or collinear columns), by the eigenvalues, those below the rounding counted as zero; for a
    penalty that differs per column, those of ``Q^(1/2) G Q^(1/2)`` with ``Q = diag(p / pen)``, ``p = min(pen)``
    (powers of four: exact): ``sum_k e_k / (e_k + p)``, the same trace (it raised LinAlgError).
    """
    if G.shape[0] == 0:
        return 0.0
    factor = equilibrated_cholesky(G + np.diag(pen), RCOND_MIN)
    if factor is not None:
        return float(np.trace(equilibrated_solve(factor, G)))
    if not np.all(pen == pen[0]):
        try:
            return float(np.trace(scipy.linalg.solve(G + np.diag(pen), G, assume_a="pos")))
        except np.linalg.LinAlgError:
            p = float(np.min(pen))
            if p == 0:                       # a penalty of 0 beside positive ones: the pseudo-inverse
                return float(np.trace(np.linalg.lstsq(G + np.diag(pen), G, rcond=None)[0]))
            q = np.sqrt(p / pen)
            G, pen = G * np.outer(q, q), np.full(G.shape[0], p)
    e = np.clip(np.linalg.eigvalsh(G), 0, None)
    keep = e > e.max(initial=0.0) * max(n, G.shape[0]) * np.finfo(float).eps
    return float(np.sum(e[keep] / (e[keep] + pen[0])))


def _ridge_in_original_norm(s, V, g, pen, x_scale):
    """The ridge solution ``argmin ||Z v - z||^2 + sum_j pen_j v_j^2`` from the kept part of the SVD of
    ``Z = U diag(s) V^T`` (``g = U^T z``), for penalties that differ per column (``pen_j = lam / x_scale_j^2``).

    Why not the stacked problem ``[Z; diag(sqrt(pen))]``: a penalty below the rounding of ``Z`` (``lam`` of
    1e-30 or less beside columns of ~1) is lost in it, and its solution is then *some* least-squares
    solution (coefficients of +-4e12 on a duplicated pair of columns whose answer is 0.30 each). The penalty
    is resolved only against the singular values of ``Z`` above its rounding, ``s_max max(N, D) eps``; the
    directions below that (the rank decision, made in the equilibrated scaled coordinates, where a column of
    1e200 beside ordinary ones is full rank) are null, and there the penalty alone decides, *whatever its
    size*: as ``lam -> 0`` the ridge solution tends to the least-squares solution of least ``||w||`` in the
    user's coordinates (``w_j = v_j / x_scale_j``), not of least ``||v||``. Solved exactly, for any ``lam``:
    with ``v = V a + N b`` (``N`` spanning the null space), the best ``b`` for a given ``a`` is the least
    ``||L v||`` (``L = diag(sqrt(pen))``) with ``V^T v = a``: ``v = L^-1 Q R^-T a`` from ``L^-1 V = Q R``
    (no basis of the null space needed); what remains of the penalty on ``a`` is ``||Q^T L V a||^2``, so
    ``c = diag(s) a`` solves the well-conditioned ``[I; Q^T L V diag(1/s)] c ~ [g; 0]``. ``L`` enters
    through the exact powers of two ``x_scale_j / min(x_scale)`` (a penalty that underflowed to 0 is still
    ordered); the QR sorts the rows by them and pivots the columns (row-wise stable for rows of any scale).
    Uniform ``pen`` gives the usual filter ``s / (s^2 + pen)``.
    """
    d, r = V.shape
    if r == 0:
        return np.zeros(d)
    omega = x_scale / np.min(x_scale)                # L^-1 up to a constant: >= 1, exact
    root_pen_max = float(np.sqrt(np.max(pen)))
    order = np.argsort(-omega, kind="stable")
    Q, R, piv = scipy.linalg.qr(omega[order, None] * V[order], mode="economic", pivoting=True, check_finite=False)
    Q[order] = Q.copy()                              # L^-1 V[:, piv] = Q R
    T = Q.T @ (V / omega[:, None])                   # Q^T L V / sqrt(max pen)
    K = (root_pen_max * T) / s
    c = scipy.linalg.lstsq(np.vstack([np.eye(r), K]), np.concatenate([g, np.zeros(r)]), check_finite=False)[0]
    y = scipy.linalg.solve_triangular(R, (c / s)[piv], trans="T", check_finite=False)
    return omega * (Q @ y)


def _wide_df(Z, pen):
    """``df_``'s arguments after CG on the centred wide copy ``Z``: ``tr(K (K + min(pen) I)^-1)`` with
    ``K = Z diag(q) Z^T`` (:func:`._base.wide_kernel`), the degrees of freedom of the ``D x D`` form."""
    kernel = wide_kernel(Z, pen)
    if kernel is None:                 # column scales ~1e150 apart: as the SVD path, the D x D form
        return Z.T @ Z, pen, len(Z)
    K, _, pen_min = kernel
    return K, np.full(len(K), pen_min), len(K)


class Ridge(LinearModel):
    """Ridge regression: minimises ``1/2 sum_i s_i (y_i - x_i . w - b)^2 + (lam/2) ||w||^2``.

    ``s_i`` are the sample weights (1 by default). The intercept is not penalised. Doubling
    the objective gives ``||y - X w - b||^2 + lam ||w||^2``, scikit-learn's ``Ridge(alpha=lam)``
    objective: same minimiser, also with the same ``sample_weight``. It is the MAP estimate
    under Gaussian noise of variance ``sigma^2`` and a ``N(0, tau^2 I)`` prior on ``w`` when
    ``lam = sigma^2 / tau^2``. The minimiser solves ``(Xc^T S Xc + lam I) w = Xc^T S yc``.

    **How it is solved.** As :class:`LinearRegression`: the centred Gram matrix comes from one
    BLAS ``syrk`` on ``X`` (no copy of ``X``), and ``G + lam I`` is factorised by Cholesky after
    diagonal equilibration. When ``D > N`` (dense ``X``) the same equations are solved in their
    ``N x N`` form, ``w = Xc^T (Xc Xc^T + lam I)^{-1} yc`` (``O(N^2 D)``, by Cholesky with the same
    condition check); from about 730 rows, conjugate gradients on the centred copy run first while
    their steps (one pass over the copy each) cost less than that form's syrk, and count on the terms
    of the sparse case below (not with sample weights more than 1e4 apart). **Fallbacks:** when the
    equilibrated matrix has reciprocal condition number below ``1e-8`` (``lam`` tiny and ``X`` nearly collinear,
    where the normal equations would lose
    more than half the digits), the thin SVD ``Xc = U S V^T`` of a centred copy gives
    ``w = V diag(s / (s^2 + lam)) U^T yc`` (``lam = 0``: the minimum-norm least-squares solution). Singular
    values below ``s_max max(N, D) eps`` are rounding: there the penalty alone decides, however small, so as
    ``lam -> 0`` the fit tends to the least-squares solution of least ``||w||`` in the user's coordinates
    (also where the columns were scaled apart). Sample weights spanning more than ``1 / eps`` there: a
    ``ConvergenceWarning`` (the SVD and LSQR round the light rows away). Sparse
    ``X`` (CSR/CSC) is never densified: conjugate gradients on ``X`` itself (each step ``Xc^T S (Xc p)``,
    two sparse products with ``Xc`` centred implicitly; Jacobi-preconditioned for ``lam > 0``) run first
    while their steps cost less than forming the Gram matrix, and count where they reach a backward error
    of 1e-13 on a problem that passes the Cholesky path's condition test. Otherwise a sparse ``X^T X``
    when ``D <= 4096``, and in its fallback (or for more columns) LSQR on the implicitly centred operator. Internally ``X`` and ``y`` are rescaled by
    powers of two, so no step overflows for features or targets up to 1e300. Scaling: the fit
    on ``(X s, y)`` with ``lam`` equals the fit on ``(X, y)`` with ``lam / s^2``, divided by
    ``s``; the fit on ``(X, c y)`` is ``c`` times the fit on ``(X, y)``.

    Parameters
    ----------
    lam : float, default=1.0
        Penalty strength ``lam >= 0`` (scikit-learn ``alpha = lam``).
    fit_intercept : bool, default=True

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    solver_ : str
        ``"cholesky"``, ``"svd"``, ``"cg"`` (sparse ``X``, or dense ``X`` with more columns than rows),
        ``"lsqr"`` (sparse ``X``) or ``"qr"`` (dense rows whose weighted squared sizes span more than 1e8, where the
        Cholesky factorisation refused: Householder QR of the uncentred rows sorted by size, accurate row by row).
    sigma2_ : float
        ``sum_i s_i r_i^2 / N`` on the training data (plug-in Gaussian noise variance; floored at
        ``(eps max|y|)^2``, see ``log_likelihood``).
    df_ : float
        Effective degrees of freedom ``sum_k s_k^2 / (s_k^2 + lam)`` (computed on access; after
        ``"cg"`` from the training Gram matrix, formed then from a copy of ``X`` kept by the fit (dense wide
        ``X``: its ``N x N`` form, from the fit's centred copy); not
        available for sparse ``X`` with more than 4096 columns).
    n_params_ : float
        ``df_ + fit_intercept`` (used by ``aic``/``bic``).
    n_features_in_ : int
    feature_names_in_ : ndarray of str, only when ``X`` had string column names.

    Derived in: chapter "Linear regression" § "Ridge, lasso and least absolute deviations".
    """

    _parameter_constraints = {**LinearModel._parameter_constraints, "lam": [NON_NEGATIVE]}

    def __init__(self, lam=1.0, fit_intercept=True):
        self.lam = lam
        self.fit_intercept = fit_intercept

    @all_or_nothing
    def fit(self, X, y, sample_weight=None):
        """Fit the ridge solution; returns ``self``.

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
        if is_dask(X, y, sample_weight):       # a dask array or DataFrame: the Gram matrix as a map-reduce
            from ._dask_fit import fit_ridge

            return fit_ridge(self, X, y, sample_weight)
        X, y, sw = self._validate(X, y, sample_weight)
        sw, lam = self._weights_near_one(sw, float(self.lam))
        sparse = sps.issparse(X)
        dense_wide = not sparse and X.shape[1] > X.shape[0]
        # sparse X: conjugate gradients on X itself while they cost less than the D x D Gram matrix;
        # lam = 0 is least squares, whose minimum-norm solution needs one scale for all columns
        cg_budget = sparse_cg_budget(X)
        mom = moments(self, X, y, sw, gram=not (dense_wide or cg_budget), common_scale=lam == 0)
        self._df, self._svd_df = None, None
        v, training_gram = self._cg_first(X, sw, mom, ridge_penalty(mom, lam), lam > 0, cg_budget)
        if v is not None:
            self._df = None if training_gram is None else (training_gram, lam)
            return self._finish(mom, v, "Ridge")
        pen = ridge_penalty(mom, lam)          # (forming the Gram matrix may have rescaled the columns)
        v = None if dense_wide else mom.cholesky_solve(pen)
        if v is not None and not sparse and (components_below_rounding(mom.G, pen, v)
                                             or mom.centring_may_have_lost_rows(v)):
            far = far_rows_solve(mom, pen, "Ridge")     # rows decades apart: the graded QR keeps the light rows
            if far is not None:
                return self._graded_qr_finish(mom, pen, far)
        if v is not None:
            self.solver_, self._df = "cholesky", (mom.G, pen, mom.n)
        elif sparse:
            v, self.solver_ = _ridge_by_lsqr(mom, pen), "lsqr"
            if mom.gram_built:
                self._df = (mom.G, pen, mom.n)
        else:
            # wide X: conjugate gradients where they are cheaper, else the N x N (kernel) form; then, for rows
            # decades apart, the graded QR; the SVD where all that is ill-conditioned, and for tall X
            v = self._wide(pen, mom, sw) if dense_wide else None
            far = far_rows_solve(mom, pen, "Ridge") if v is None else None
            if far is not None:
                return self._graded_qr_finish(mom, pen, far)
            if v is None:
                Z, z = mom.design()          # (the N x N form scaled its copy in place)
                _warn_if_weights_beyond_rounding(sw, "SVD")
                v, self.solver_ = self._svd(Z, z, pen, mom.x_scale), "svd"
        return self._finish(mom, v, "Ridge")

    def _graded_qr_finish(self, mom, pen, far):
        """The fit from :func:`._far_rows.far_rows_solve`'s ``(v, intercept, rss)``."""
        Z = mom.design()[0]
        self.solver_, self._df = "qr", (Z.T @ Z, pen, mom.n)
        return self._finish(mom, *far[:1], "Ridge", *far[1:])

    def _wide(self, pen, mom, sw):
        """Wide ``X`` (``N < D``, ``lam > 0``): conjugate gradients on the centred copy within their budget
        (:func:`._base.wide_cg_solve`; ``df_`` then from the copy, on first use), else the ``N x N`` form of
        the ridge equations (:func:`._base.wide_normal_solve`), or ``None`` (then the SVD)."""
        if not np.min(pen, initial=np.inf) > 0:
            return None
        budget = wide_cg_budget(mom.n, mom.d)
        # with CG to come, Z^T z and diag(Z^T Z) are summed while the copy is made; without, it is made already
        # scaled for the N x N form
        roots = None if budget else wide_roots(pen)
        Z, z, *statistics = mom.design(statistics=budget > 0, column_factors=roots)
        v = wide_cg_solve(Z, z, pen, sw, True, budget, *statistics)
        if v is not None:
            self.solver_, self._df = "cg", partial(_wide_df, Z, pen)
            return v
        solved = wide_normal_solve(Z, z, pen, mom.fit_intercept, sw, overwrite=True, scaled=roots is not None)
        if solved is None:
            return None
        v, K, pen_min = solved
        self.solver_ = "cholesky"
        self._df = (K, np.full(len(z), pen_min), len(z))   # tr(K (K + pen_min I)^-1) = the df of the D x D form
        return v

    def _svd(self, Z, z, pen, x_scale):
        """The ridge solution from the thin SVD of the centred copy (where the column scales differ, with the
        tie-break in the user's coordinates: :func:`_ridge_in_original_norm`), or a clear error where LAPACK's
        SVD fails."""
        try:
            return self._svd_solution(Z, z, pen, x_scale)
        except np.linalg.LinAlgError as exc:
            raise ValueError(f"Ridge: the SVD of the centred X failed ({exc}). X is finite, so it "
                             "holds columns of wildly different magnitudes or near-duplicates: "
                             "standardise the features (StandardScaler) or increase lam.") from None

    def _svd_solution(self, Z, z, pen, x_scale):
        n, d = Z.shape
        U, s, Vt = scipy.linalg.svd(Z, full_matrices=False, check_finite=False)
        keep = s > s.max(initial=0.0) * max(n, d) * np.finfo(float).eps
        if d and not np.all(pen == pen[0]):
            # column scales differ (features near 1e300 and near 1 together, or a penalty below rounding)
            self._df = (Z.T @ Z, pen, n)
            return _ridge_in_original_norm(s[keep], Vt[keep].T, U[:, keep].T @ z, pen, x_scale)
        lam_s = float(pen[0]) if d else 0.0
        f = np.zeros_like(s)
        f[keep] = s[keep] / (s[keep] ** 2 + lam_s)
        self._svd_df = float(np.sum(s[keep] ** 2 / (s[keep] ** 2 + lam_s)))
        return Vt.T @ (f * (U.T @ z))

    @property
    def df_(self):
        if self._df is None:
            if self._svd_df is not None:
                return self._svd_df
            raise AttributeError("df_ is not available after an iterative solver on sparse X with more than "
                                 f"{MAX_GRAM_FEATURES} columns (it needs the spectrum of X^T X).")
        if isinstance(self._df, partial):                  # after CG on dense wide X: its N x N form on first use
            self._df = self._df()
        if isinstance(self._df[0], TrainingGram):          # after CG: the Gram matrix on first use
            G, x_scale, n = self._df[0].statistics()
            self._df = (G, (np.sqrt(self._df[1]) / x_scale) ** 2, n)
        return _df_from_gram(*self._df)

    @property
    def n_params_(self):
        return self.df_ + int(self.fit_intercept)
