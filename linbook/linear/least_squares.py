"""Ordinary (and weighted) least squares.

Derived in: chapter "Linear regression" § "Least squares in matrix form".
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg
import scipy.sparse as sps

from scipy.sparse.linalg import LinearOperator

from ..base import LinbookWarning, all_or_nothing, is_dask
from .._kernels.cholesky import equilibrated_cholesky
from ..numerics import _power_of_two_scale
from ._far_rows import far_rows_solve
from ._base import LinearModel, lsqr_solve, moments, original_gram, sparse_cg_budget, wide_normal_solve
from ._moments import MAX_GRAM_FEATURES, RCOND_MIN, null_basis_without_rounding

__all__ = ["LinearRegression"]


def _least_squares_by_lsqr(mom):
    """Sparse ``X`` past the Cholesky test: LSQR's minimiser of ``||A v - z||`` (``A`` the implicitly centred
    operator), the minimum-norm one wherever LSQR on ``A`` itself reaches the minimum.

    Why a second run, on ``A`` with each column divided by a power of two near its centred norm: LSQR stops
    on tests relative to ``||A||`` (``||A^T r|| <= atol ||A|| ||r||``, ``||r|| <= btol ||z|| + atol ||A|| ||v||``),
    and the largest column sets ``||A||``. Nearly collinear columns of very different scales (norms 5e-4 ..
    6e5, two of them at correlation 1 - 1e-8) met those tests with the fitted values 8 % off the least-squares
    fit, silently, where the dense fit is right to 1e-8. On the equilibrated operator every column counts,
    but from 0 LSQR reaches the least ``||diag(c) v||`` among the minimisers, not the least ``||v||`` that
    least squares promises (and the dense fit returns) for a rank-deficient ``X``. The fitted values ``A v``
    are unique, so the run on ``A`` is kept where its fitted values are the equilibrated run's (to 1e-12
    ``||z||``); where they differ, the run with the smaller residual. (The residual norms alone would not
    tell when to look: near the minimum they differ only by the square of the fits' difference.)
    """
    A, z = mom.operator()
    v = lsqr_solve(A, z, 0.0, "LinearRegression")
    centred, uncentred = mom.gram_diagonal()
    # a constant column centres to rounding noise, which its own scale would blow up to a direction of X
    c = _power_of_two_scale(np.sqrt(np.where(mom.constant, uncentred, centred)))      # 1 for a zero column
    A_eq = LinearOperator(A.shape, dtype=float, matvec=lambda t: A.matvec(np.ravel(t) / c),
                          rmatvec=lambda u: A.rmatvec(np.ravel(u)) / c)
    v_eq = lsqr_solve(A_eq, z, 0.0, "LinearRegression") / c
    fit, fit_eq = A.matvec(v), A.matvec(v_eq)
    if np.linalg.norm(fit - fit_eq) <= 1e-12 * np.linalg.norm(z):
        return v
    # the least-squares fit is the one nearer z (||r||^2 = ||r*||^2 + ||fit - fit*||^2)
    return v_eq if np.linalg.norm(z - fit_eq) <= np.linalg.norm(z - fit) else v


def _least_norm_on_equilibrated_columns(Z, z, cond, v, rank):
    """Tall ``Z`` of lower rank whose columns differ in size: the minimum-norm least-squares ``v`` from the SVD of
    ``Z`` with its columns divided by powers of two near their sizes (``Z_e = Z E^-1``, exact), moved to the least
    ``||v||`` in ``Z``'s units along the null space ``N`` of ``Z_e``: ``u = E v``, ``u = u_0 + N a`` with ``a`` the
    least-squares solution of ``E^-1 N a = -E^-1 u_0``; else ``v`` as ``gelsd`` gave it.

    Why: ``gelsd`` on ``Z`` itself mixes the null direction of an all-zero column with that of a column of
    small spread (a feature near 1e8, centred: 1e-8 of its own size), and the zero column's coefficient came out
    -0.2 where the minimum-norm fit has 0 (its prediction off by that much wherever the column is not 0)."""
    n, d = Z.shape
    size = np.max(np.abs(Z), axis=0)
    if rank >= d or n < d or not np.any(size > 0) or np.ptp(size[size > 0]) == 0:
        return v
    units = _power_of_two_scale(size, normal=True)
    U, s, Vt = scipy.linalg.svd(Z / units, full_matrices=False, check_finite=False)
    keep = s > cond * s[0]
    if int(keep.sum()) != rank:                      # the two SVDs disagree on the rank: keep gelsd's answer
        return v
    u0 = Vt[keep].T @ ((U[:, keep].T @ z) / s[keep])
    null = null_basis_without_rounding(Vt[~keep].T) / units[:, None]       # the null directions, in v's units
    a = scipy.linalg.lstsq(null, -u0 / units, check_finite=False)[0]
    return u0 / units + null @ a


def _equilibrated_rank(Z, cond):
    """The rank of ``Z`` with each column brought to size 1 (singular values above ``cond`` times the largest)."""
    size = np.max(np.abs(Z), axis=0)
    sv = scipy.linalg.svd(Z[:, size > 0] / size[size > 0], compute_uv=False, check_finite=False)
    return int(np.sum(sv > cond * sv[0])) if sv.size else 0


def _min_norm_by_lq(Z, z, rank):
    """Wide ``Z``: the minimum-norm ``v`` with ``Z v = z`` from a QR of ``Z^T`` (an LQ of ``Z``), or ``None``.

    ``Z^T`` goes in with its rows (the columns of ``Z``) largest first and its columns (the equations) pivoted:
    Householder QR of such a graded matrix is accurate row by row, so each column of ``Z`` keeps its own digits
    whatever its scale (the SVD resolves only ``eps s_max``: one column 1e100 times the others left a rank-one
    fit). With ``Z_r`` the ``rank`` equations kept, ``Z_r^T = Q R`` and ``v = Q R^{-T} z_r``: in the row space
    of ``Z`` and solving them, hence the minimum-norm solution. ``None`` unless it also solves the equations
    left out (to 1e-8 of ``||z||``: they are dependent, as after centring, and consistent)."""
    order = np.argsort(-np.max(np.abs(Z), axis=0), kind="stable")
    Q, R, eqs = scipy.linalg.qr(Z[:, order].T, mode="economic", pivoting=True, check_finite=False)
    kept = eqs[:rank]
    v = np.empty(Z.shape[1])
    v[order] = Q[:, :rank] @ scipy.linalg.solve_triangular(R[:rank, :rank], z[kept], trans="T")
    left = np.setdiff1d(np.arange(Z.shape[0]), kept)
    if not np.all(np.isfinite(v)) or np.linalg.norm(Z[left] @ v - z[left]) > 1e-8 * np.linalg.norm(z):
        return None
    return v


def _warn_if_scales_cost_rank(Z, cond, rank, equilibrated=None):
    """Warn when ``gelsd``'s truncation (singular values below ``cond s_max``) dropped directions that the
    columns of ``Z`` span once each is brought to size 1: with columns decades apart the fit then misses the
    least-squares minimum (the wide case is solved by :func:`_min_norm_by_lq` instead; tall ``X`` has its
    columns scaled before)."""
    if rank >= min(Z.shape):
        return
    equilibrated = _equilibrated_rank(Z, cond) if equilibrated is None else equilibrated
    if equilibrated > rank:
        warnings.warn(f"LinearRegression: the columns of X span too many orders of magnitude for the SVD "
                      f"solver: it kept {rank} of the {equilibrated} independent directions they span, so the fit "
                      "does not reach the least-squares minimum. Scale the features (e.g. StandardScaler), "
                      "or use Ridge(lam > 0).", LinbookWarning, stacklevel=4)


class LinearRegression(LinearModel):
    """Ordinary least squares: minimises ``1/2 sum_i s_i (y_i - x_i . w - b)^2``.

    ``s_i`` are the sample weights (all 1 by default: ``1/2 ||y - X w - b||^2``). Equals
    scikit-learn's ``LinearRegression()`` and statsmodels' ``OLS`` (``WLS`` with weights).

    **How it is solved.** The centred Gram matrix ``G = Xc^T S Xc`` and ``c = Xc^T S yc`` come
    from one BLAS ``syrk`` on ``X`` and a rank-one centring update (or, when the column means
    are so large that the update would lose more than two digits, or with weights, from one
    pass over ``X`` in exactly centred row blocks); ``X`` is never copied. The intercept comes
    from the weighted means, ``b = ybar - xbar . w``, and ``G w = c`` is solved by a Cholesky
    factorisation of the diagonally equilibrated ``G``. That is fast (``O(N D^2)`` in
    one BLAS ``syrk``) and accurate while ``X`` is well conditioned. **Fallback:** when
    ``G`` is numerically singular or its reciprocal condition number (equilibrated) is below
    ``1e-8`` - collinear columns or ``cond(Xc) > 1e4``, where the
    normal equations would lose more than half of the digits - the fit uses the SVD-based
    least-squares solver LAPACK ``gelsd`` on a centred copy of ``X`` instead, which returns
    the **minimum-norm** minimiser (singular values below ``max(N, D) eps s_max`` count as
    zero). Dense ``X`` with more columns than rows (``N < D``) is solved in the ``N x N`` form of
    the same equations, ``w = Xc^T (Xc Xc^T)^{-1} yc`` (the minimum-norm solution, ``O(N^2 D)``; the
    ``N x N`` matrix is smaller than ``X`` there, and never formed for ``N >= D``), by the same
    equilibrated Cholesky and ``1e-8`` condition rule as Ridge's wide case, with ``gelsd`` as the
    fallback. Where the fallback meets dense rows whose (weighted) squared sizes span more than 1e8 (a row 1e20
    times the others), which the Gram matrix and the centred copy hold only to the far rows' rounding, the
    uncentred rows with a column of ones go to Householder QR with the rows sorted by size (Powell and Reid),
    accurate row by row (``solver_ = "qr"``; a rank-deficient design there keeps ``gelsd``, with a warning). Sparse ``X`` (CSR/CSC) is never densified: conjugate gradients on ``X`` itself
    (``Xc^T S (Xc p)`` by two sparse products, centred implicitly; from ``w = 0`` without a
    preconditioner, so the iterates stay in the row space and reach the minimum-norm solution) run
    first while their steps cost less than forming the Gram matrix, and count at a backward error of
    1e-13 on a problem that passes the condition test above; otherwise a sparse ``X^T X`` when
    ``D <= 4096``, and LSQR on the implicitly centred operator in its fallback or for more columns
    (also minimum norm; where a second LSQR run, on the column-equilibrated operator, finds other fitted
    values, its solution: LSQR's stopping tests are relative to the largest columns). Features and
    targets are rescaled internally by powers of two, so ``coef(X * s) = coef(X) / s`` holds from
    1e-300 to 1e300.

    Parameters
    ----------
    fit_intercept : bool, default=True
        Fit an intercept ``b`` (unpenalised; the data are centred).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    rank_ : int or None
        Numerical rank of the (centred, weighted) design matrix (``None`` when LSQR solved it, or
        when after ``"cg"`` the Gram matrix fails the condition test; after ``"cg"`` it is computed on
        first access, from the Gram matrix of a copy of ``X`` kept by the fit).
    singular_ : ndarray
        Its singular values, largest first (computed on access from the Gram matrix on the
        fast path; from the SVD in the fallback).
    solver_ : str
        ``"cholesky"`` (the ``D x D`` or, for wide ``X``, the ``N x N`` form), ``"gelsd"``, ``"lq"`` (wide ``X``
        with columns too many decades apart for ``gelsd``: a QR of ``X^T``, the minimum-norm fit), ``"qr"`` (rows
        of dense ``X`` decades apart, see below), ``"cg"`` or ``"lsqr"``: which of the above was used.
    sigma2_ : float
        Maximum-likelihood noise variance ``sum_i s_i r_i^2 / N`` on the training data (floored at
        ``(eps max|y|)^2``, see ``log_likelihood``).
    n_params_ : int
        ``rank_ + fit_intercept`` (the noise variance is profiled out and not counted,
        as in statsmodels' OLS).
    n_features_in_ : int
    feature_names_in_ : ndarray of str, only when ``X`` had string column names.

    Derived in: chapter "Linear regression" § "Least squares in matrix form".
    """

    def __init__(self, fit_intercept=True):
        self.fit_intercept = fit_intercept

    @all_or_nothing
    def fit(self, X, y, sample_weight=None):
        """Fit by least squares; returns ``self``.

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
            from ._dask_fit import fit_linear_regression

            return fit_linear_regression(self, X, y, sample_weight)
        X, y, sw = self._validate(X, y, sample_weight)
        sw, _ = self._weights_near_one(sw)
        sparse = sps.issparse(X)
        # sparse X: conjugate gradients on X itself while they cost less than the D x D Gram matrix
        cg_budget = sparse_cg_budget(X)
        mom = moments(self, X, y, sw, gram=not cg_budget and (sparse or X.shape[0] >= X.shape[1]))
        self._sv, self._gram, self._rank = None, None, None
        v, self._training_gram = self._cg_first(X, sw, mom, 0.0, False, cg_budget)
        if v is not None:
            return self._finish(mom, v, "LinearRegression")
        v = mom.cholesky_solve(0.0)
        if v is not None and not sparse and mom.centring_may_have_lost_rows(v):
            far = far_rows_solve(mom, np.zeros(mom.d), "LinearRegression")    # a far row on the line: measured
            if far is not None:
                return self._graded_qr_finish(mom, far)
        if v is not None:
            self.solver_, self._rank = "cholesky", mom.d
            self._gram = original_gram(mom.G, mom.x_scale)
        elif sparse:
            v = _least_squares_by_lsqr(mom)
            self.solver_, self._rank = "lsqr", None
        else:
            Z, z = mom.design()
            v = self._wide(Z, z, mom, sw)
            far = far_rows_solve(mom, np.zeros(mom.d), "LinearRegression") if v is None else None
            if far is not None:                # rows decades apart: graded QR
                return self._graded_qr_finish(mom, far)
            if v is None:
                v = self._gelsd(Z, z, mom)
        return self._finish(mom, v, "LinearRegression")

    def _graded_qr_finish(self, mom, far):
        """The fit from :func:`._far_rows.far_rows_solve`'s ``(v, intercept, rss)``."""
        Z = mom.design()[0]
        self.solver_, self._rank = "qr", mom.d
        self._gram = original_gram(Z.T @ Z, mom.x_scale)
        return self._finish(mom, *far[:1], "LinearRegression", *far[1:])

    def _gelsd(self, Z, z, mom):
        """The SVD least-squares solver on the centred copy: the minimum-norm minimiser."""
        cond = max(Z.shape) * np.finfo(float).eps
        try:
            v, _, rank, sv = scipy.linalg.lstsq(Z, z, cond=cond, lapack_driver="gelsd", check_finite=False)
            v = _least_norm_on_equilibrated_columns(Z, z, cond, v, rank)
        except np.linalg.LinAlgError as exc:
            raise ValueError(f"LinearRegression: the SVD least-squares solver failed ({exc}). X is "
                             "finite, so it holds columns of wildly different magnitudes or "
                             "near-duplicates: standardise the features or use Ridge(lam > 0).") from None
        self.solver_, self._rank = "gelsd", int(rank)
        equilibrated = _equilibrated_rank(Z, cond) if Z.shape[0] < Z.shape[1] and rank < Z.shape[0] else rank
        lq = _min_norm_by_lq(Z, z, equilibrated) if equilibrated > rank else None
        if lq is not None:
            # wide, columns decades apart: the SVD dropped directions they span (one column times 1e100 gave a
            # rank-one fit); the LQ keeps every column's digits
            v, self.solver_, self._rank = lq, "lq", equilibrated
        else:
            _warn_if_scales_cost_rank(Z, cond, int(rank), equilibrated if Z.shape[0] < Z.shape[1] else None)
        if np.all(mom.x_scale == 1.0):
            self._sv = np.asarray(sv, dtype=float)
        else:                          # singular values of the rescaled copy are not X's
            n, d = Z.shape             # Z^T Z and Z Z^T: the same non-zero spectrum; the smaller one
            self._gram = original_gram(Z.T @ Z, mom.x_scale) if n >= d else \
                original_gram(Z @ Z.T, np.full(n, mom.x_scale[0]))
        return v

    def _wide(self, Z, z, mom, sw):
        """Wide ``X``: the minimum-norm solution ``v = Z^T (Z Z^T)^{-1} z`` in the ``N x N`` form shared
        with Ridge (:func:`._base.wide_normal_solve`), or ``None`` (then ``gelsd``)."""
        solved = wide_normal_solve(Z, z, np.zeros(Z.shape[1]), mom.fit_intercept, sw)
        if solved is None:
            return None
        v, K, _ = solved
        n = Z.shape[0]
        self.solver_, self._rank = "cholesky", n - int(mom.fit_intercept)   # the check passed: full row rank
        self._gram = original_gram(K, np.full(n, mom.x_scale[0]))          # Z Z^T: the same non-zero spectrum
        return v

    @property
    def rank_(self):
        if self._training_gram is not None:        # after CG: from the Gram matrix, formed on first use
            G, x_scale, _ = self._training_gram.statistics()
            self._rank = G.shape[0] if equilibrated_cholesky(G, RCOND_MIN) is not None else None
            self._gram, self._training_gram = original_gram(G, x_scale), None
        return self._rank

    @property
    def singular_(self):
        self.rank_                                   # forms the Gram matrix after CG
        if self._sv is not None:
            return self._sv * np.sqrt(self._weight_unit)
        if self._gram is None:
            raise AttributeError("singular_ is not available after LSQR, or after CG on sparse X with more "
                                 f"than {MAX_GRAM_FEATURES} columns, or when X^T X overflows float64; use "
                                 "scipy.sparse.linalg.svds on X.")
        with np.errstate(over="ignore", invalid="ignore"):
            return np.sqrt(np.clip(np.linalg.eigvalsh(self._gram), 0, None))[::-1] * np.sqrt(self._weight_unit)

    @property
    def n_params_(self):
        if self.rank_ is None:
            raise AttributeError("n_params_ (and so aic/bic) needs the rank, which the iterative solvers on "
                                 f"sparse X do not give when it has more than {MAX_GRAM_FEATURES} columns or "
                                 "is numerically rank-deficient; fit on dense X.")
        return self.rank_ + int(self.fit_intercept)
