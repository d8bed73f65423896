"""Ridge regression (l2-penalised least squares).

Derived in: chapter "Linear regression" § "Ridge, lasso and least absolute deviations".
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse as sps
from scipy.sparse.linalg import LinearOperator

from ..base import NON_NEGATIVE, all_or_nothing, is_dask
from ._base import LinearModel, lsqr_solve, moments, ridge_penalty, sparse_cg_budget, wide_normal_solve
from ._moments import MAX_GRAM_FEATURES, TrainingGram

__all__ = ["Ridge"]


def _augmented(A, pen):
    """``[A; diag(sqrt(pen))]`` as an operator: LSQR on it minimises ``||A v - z||^2 + sum pen_j v_j^2``."""
    n, d = A.shape
    r = np.sqrt(pen)
    return LinearOperator((n + d, d), dtype=float,
                          matvec=lambda v: np.concatenate([A.matvec(np.ravel(v)), r * np.ravel(v)]),
                          rmatvec=lambda u: A.rmatvec(np.ravel(u)[:n]) + r * np.ravel(u)[n:])


def _df_from_gram(G, pen, n):
    """``tr(G (G + diag(pen))^{-1})``: by eigenvalues for a uniform penalty, else by a solve.

    Where that solve fails (``G`` singular, for wide X, and the penalty below its rounding), by the
    eigenvalues ``e_k`` of ``Q^(1/2) G Q^(1/2)`` with ``Q = diag(p / pen)``, ``p = min(pen)`` (powers of four:
    exact): ``sum_k e_k / (e_k + p)``, the same trace (it raised LinAlgError).
    """
    if G.shape[0] == 0:
        return 0.0
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
    condition check). **Fallbacks:** when the equilibrated matrix has reciprocal condition number
    below ``1e-8`` (``lam`` tiny and ``X`` nearly collinear, where the normal equations would lose
    more than half the digits), the thin SVD ``Xc = U S V^T`` of a centred copy gives
    ``w = V diag(s / (s^2 + lam)) U^T yc`` (``lam = 0``: the minimum-norm least-squares solution). Sparse
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
        ``"cholesky"``, ``"svd"``, ``"cg"`` (sparse ``X``) or ``"lsqr"`` (sparse ``X``).
    sigma2_ : float
        ``sum_i s_i r_i^2 / N`` on the training data (plug-in Gaussian noise variance; floored at
        ``(eps max|y|)^2``, see ``log_likelihood``).
    df_ : float
        Effective degrees of freedom ``sum_k s_k^2 / (s_k^2 + lam)`` (computed on access; after
        ``"cg"`` from the training Gram matrix, formed then from a copy of ``X`` kept by the fit; not
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
        lam = float(self.lam)
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
        if v is not None:
            self.solver_, self._df = "cholesky", (mom.G, pen, mom.n)
        elif sparse:
            A, z = mom.operator()
            v = lsqr_solve(_augmented(A, pen), np.concatenate([z, np.zeros(mom.d)]), 0.0, "Ridge")
            self.solver_ = "lsqr"
            if mom.gram_built:
                self._df = (mom.G, pen, mom.n)
        else:
            Z, z = mom.design()
            # wide X: the N x N (kernel) form; the SVD where that is ill-conditioned, and for tall X
            v = self._kernel_cholesky(Z, z, pen, mom.fit_intercept, sw) if dense_wide else None
            self.solver_ = "cholesky"
            if v is None:
                v, self.solver_ = self._svd(Z, z, pen), "svd"
        return self._finish(mom, v, "Ridge")

    def _kernel_cholesky(self, Z, z, pen, centred, sw):
        """Wide ``X`` (``N < D``, ``lam > 0``): the ``N x N`` form of the ridge equations
        (:func:`._base.wide_normal_solve`), or ``None`` (then the SVD)."""
        solved = wide_normal_solve(Z, z, pen, centred, sw) if np.min(pen, initial=np.inf) > 0 else None
        if solved is None:
            return None
        v, K, pen_min = solved
        self._df = (K, np.full(len(z), pen_min), len(z))   # tr(K (K + pen_min I)^-1) = the df of the D x D form
        return v

    def _svd(self, Z, z, pen):
        """The ridge solution from the thin SVD of the centred copy (or, where the column scales differ,
        the stacked least-squares problem), or a clear error where LAPACK's SVD fails."""
        try:
            return self._svd_solution(Z, z, pen)
        except np.linalg.LinAlgError as exc:
            raise ValueError(f"Ridge: the SVD of the centred X failed ({exc}). X is finite, so it "
                             "holds columns of wildly different magnitudes or near-duplicates: "
                             "standardise the features (StandardScaler) or increase lam.") from None

    def _svd_solution(self, Z, z, pen):
        n, d = Z.shape
        if d and not np.all(pen == pen[0]):
            # column scales differ (features near 1e300 and near 1 together): solve the
            # stacked least-squares problem [Z; sqrt(pen) I] v ~ [z; 0] instead
            A = np.vstack([Z, np.diag(np.sqrt(pen))])
            v = scipy.linalg.lstsq(A, np.concatenate([z, np.zeros(d)]), check_finite=False)[0]
            self._df = (Z.T @ Z, pen, n)
            return v
        U, s, Vt = scipy.linalg.svd(Z, full_matrices=False, check_finite=False)
        keep = s > s.max(initial=0.0) * max(n, d) * np.finfo(float).eps
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
        if isinstance(self._df[0], TrainingGram):          # after CG: the Gram matrix on first use
            G, x_scale, n = self._df[0].statistics()
            self._df = (G, (np.sqrt(self._df[1]) / x_scale) ** 2, n)
        return _df_from_gram(*self._df)

    @property
    def n_params_(self):
        return self.df_ + int(self.fit_intercept)
