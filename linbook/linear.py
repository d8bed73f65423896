"""Linear regression: least squares, ridge, lasso and least absolute deviations.

Every estimator fits ``y ~ X w + b``. With ``fit_intercept=True`` the intercept ``b``
is never penalised: the columns of ``X`` and ``y`` are centred, the penalised problem
is solved for ``w`` on the centred data, and ``b = mean(y) - mean(X) @ w``.

==========================  =============================================  ==========================
estimator                   minimises                                      scikit-learn equivalent
==========================  =============================================  ==========================
``LinearRegression``        ``1/2 ||y - X w - b||^2``                      ``LinearRegression()``
``Ridge(lam)``              ``1/2 ||y - X w - b||^2 + lam/2 ||w||^2``      ``Ridge(alpha=lam)``
``Lasso(lam)``              ``1/2 ||y - X w - b||^2 + lam ||w||_1``        ``Lasso(alpha=lam / N)``
``LeastAbsoluteDeviation``  ``sum_i |y_i - x_i.w - b|``                    ``QuantileRegressor(quantile=0.5, alpha=0)``
==========================  =============================================  ==========================

Derived in: chapter "Linear regression".
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, RegressorMixin

from .base import validate_X, validate_data
from .criteria import InformationCriteriaMixin

__all__ = ["LinearRegression", "Ridge", "Lasso", "LeastAbsoluteDeviation"]


def _check_flag(value, name):
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")


def _check_lam(lam):
    if not np.isscalar(lam) or not np.isfinite(lam) or lam < 0:
        raise ValueError(f"lam must be a finite number >= 0, got {lam!r}")
    return float(lam)


def _centre(X, y, fit_intercept):
    """Centre columns of ``X`` and ``y`` when an (unpenalised) intercept is fitted."""
    if fit_intercept:
        x_mean, y_mean = X.mean(axis=0), y.mean()
        return X - x_mean, y - y_mean, x_mean, y_mean
    return X, y, np.zeros(X.shape[1]), 0.0


class _LinearModel(RegressorMixin, BaseEstimator):
    """Shared ``predict`` and Gaussian log-likelihood for the least-squares family."""

    def _validate_fit(self, X, y):
        _check_flag(self.fit_intercept, "fit_intercept")
        X, y = validate_data(X, y, y_numeric=True)
        self.n_features_in_ = X.shape[1]
        return X, y

    def _set_intercept(self, x_mean, y_mean):
        self.intercept_ = float(y_mean - x_mean @ self.coef_) if self.fit_intercept else 0.0

    def predict(self, X):
        """Predicted targets ``X @ coef_ + intercept_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        X = validate_X(self, X)
        return X @ self.coef_ + self.intercept_

    def _gaussian_fit_noise(self, X, y):
        rss = float(np.sum((y - self.predict(X)) ** 2))
        self.sigma2_ = rss / X.shape[0]
        if self.sigma2_ <= 0:
            # a perfect fit: the Gaussian likelihood is unbounded; keep a tiny positive floor
            self.sigma2_ = np.finfo(float).tiny

    def log_likelihood(self, X, y):
        """Gaussian log-likelihood of ``y`` given ``X`` (summed, nats).

        Uses the noise variance fitted on the training data, ``sigma2_ = RSS / N``
        (the maximum-likelihood value), so on the training data this is the
        maximised log-likelihood ``-N/2 (log(2 pi sigma2_) + 1)``, equal to
        statsmodels' ``OLS(...).fit().llf``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        float
        """
        X = validate_X(self, X)
        y = np.asarray(y, dtype=float).ravel()
        if y.shape[0] != X.shape[0] or not np.all(np.isfinite(y)):
            raise ValueError("y must be finite and have one value per row of X")
        r = y - self.predict(X)
        n = y.shape[0]
        return float(-0.5 * n * np.log(2 * np.pi * self.sigma2_) - 0.5 * (r @ r) / self.sigma2_)


class LinearRegression(InformationCriteriaMixin, _LinearModel):
    """Ordinary least squares: minimises ``1/2 ||y - X w - b||^2``.

    Solved by an SVD-based least-squares solver (LAPACK ``gelsd`` through
    ``scipy.linalg.lstsq``), never by inverting ``X^T X``. When ``X`` (centred, if an
    intercept is fitted) is rank-deficient (singular values below ``max(N, D) eps s_max``
    count as zero) - collinear columns, or more columns than
    rows - the minimiser is not unique and the **minimum-norm** ``w`` is returned
    (the pseudo-inverse solution ``X^+ y``). Equals scikit-learn's
    ``LinearRegression()``.

    Parameters
    ----------
    fit_intercept : bool, default=True
        Fit an intercept ``b`` (unpenalised; the data are centred).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    rank_ : int
        Numerical rank of the (centred) design matrix.
    singular_ : ndarray
        Its singular values, largest first.
    sigma2_ : float
        Maximum-likelihood noise variance ``RSS / N`` on the training data.
    n_params_ : int
        ``rank_ + fit_intercept`` (the noise variance is profiled out and not counted,
        as in statsmodels' OLS).

    Derived in: chapter "Linear regression" § "Least squares in matrix form".
    """

    def __init__(self, fit_intercept=True):
        self.fit_intercept = fit_intercept

    def fit(self, X, y):
        """Fit by least squares; returns ``self``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        X, y = self._validate_fit(X, y)
        Xc, yc, x_mean, y_mean = _centre(X, y, self.fit_intercept)
        # singular values below max(N, D) * eps * s_max count as zero (numpy's matrix_rank rule)
        cond = max(Xc.shape) * np.finfo(float).eps
        coef, _, rank, sv = scipy.linalg.lstsq(Xc, yc, cond=cond, lapack_driver="gelsd",
                                               check_finite=False)
        self.coef_ = np.asarray(coef, dtype=float)
        self.rank_ = int(rank)
        self.singular_ = np.asarray(sv, dtype=float)
        self._set_intercept(x_mean, y_mean)
        self._gaussian_fit_noise(X, y)
        return self

    @property
    def n_params_(self):
        return self.rank_ + int(self.fit_intercept)


class Ridge(InformationCriteriaMixin, _LinearModel):
    """Ridge regression: minimises ``1/2 ||y - X w - b||^2 + (lam/2) ||w||^2``.

    The intercept is not penalised. The minimiser solves
    ``(Xc^T Xc + lam I) w = Xc^T yc`` on centred data; this is the same minimiser as
    scikit-learn's ``Ridge(alpha=lam)``, whose objective ``||y - Xw||^2 + alpha ||w||^2``
    is twice ours. It is also the MAP estimate under Gaussian noise of variance
    ``s^2`` and a ``N(0, tau^2 I)`` prior on ``w`` when ``lam = s^2 / tau^2``.

    Solved by a Cholesky factorisation of the ``D x D`` system when ``N >= D`` and
    ``lam > 0``, otherwise through the thin SVD ``Xc = U S V^T``,
    ``w = V diag(s / (s^2 + lam)) U^T yc`` (works for ``D > N``; with ``lam = 0`` it is
    the minimum-norm least-squares solution).

    Parameters
    ----------
    lam : float, default=1.0
        Penalty strength ``lam >= 0``.
    fit_intercept : bool, default=True

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    sigma2_ : float
        ``RSS / N`` on the training data (plug-in Gaussian noise variance).
    df_ : float
        Effective degrees of freedom ``sum_k s_k^2 / (s_k^2 + lam)``.
    n_params_ : float
        ``df_ + fit_intercept`` (used by ``aic``/``bic``).

    Derived in: chapter "Linear regression" § "Ridge, lasso and least absolute deviations".
    """

    def __init__(self, lam=1.0, fit_intercept=True):
        self.lam = lam
        self.fit_intercept = fit_intercept

    def fit(self, X, y):
        """Fit the ridge solution; returns ``self``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        lam = _check_lam(self.lam)
        X, y = self._validate_fit(X, y)
        Xc, yc, x_mean, y_mean = _centre(X, y, self.fit_intercept)
        n, d = Xc.shape
        if n >= d and lam > 0:
            A = Xc.T @ Xc
            A[np.diag_indices_from(A)] += lam
            c, low = scipy.linalg.cho_factor(A, check_finite=False)
            self.coef_ = scipy.linalg.cho_solve((c, low), Xc.T @ yc, check_finite=False)
            s2 = np.clip(np.linalg.eigvalsh(Xc.T @ Xc), 0, None)
            self.df_ = float(np.sum(s2 / (s2 + lam)))
        else:
            U, s, Vt = scipy.linalg.svd(Xc, full_matrices=False, check_finite=False)
            tol = s.max(initial=0.0) * max(n, d) * np.finfo(float).eps
            keep = s > tol
            f = np.zeros_like(s)
            f[keep] = s[keep] / (s[keep] ** 2 + lam)
            self.coef_ = Vt.T @ (f * (U.T @ yc))
            self.df_ = float(np.sum(s[keep] ** 2 / (s[keep] ** 2 + lam)))
        self._set_intercept(x_mean, y_mean)
        self._gaussian_fit_noise(X, y)
        return self

    @property
    def n_params_(self):
        return self.df_ + int(self.fit_intercept)


def _soft_threshold(z, t):
    return np.sign(z) * max(abs(z) - t, 0.0)


class Lasso(InformationCriteriaMixin, _LinearModel):
    """The lasso: minimises ``1/2 ||y - X w - b||^2 + lam ||w||_1`` (intercept unpenalised).

    Cyclic coordinate descent. With ``r`` the current residual and
    ``a_j = ||x_j||^2`` (precomputed), coordinate ``j`` is set to
    ``S(x_j^T r + a_j w_j, lam) / a_j`` where ``S(z, t) = sign(z) max(|z| - t, 0)``
    is soft thresholding. Two exact variants: residual updates in place (``O(N)`` per
    coordinate) or, when ``N > 2 D``, Gram updates (``O(D)`` per coordinate from
    ``G = Xc^T Xc`` and ``c = Xc^T yc``). Iteration stops when the duality gap is at most
    ``tol * ||yc||^2``. Equals scikit-learn's ``Lasso(alpha=lam / N)``, whose objective
    ``1/(2N) ||y - Xw||^2 + alpha ||w||_1`` is ours divided by ``N``.

    Parameters
    ----------
    lam : float, default=1.0
        Penalty strength ``lam >= 0``; every coefficient is zero once
        ``lam >= max_j |x_j^T yc|``.
    fit_intercept : bool, default=True
    max_iter : int, default=1000
        Maximum number of full sweeps over the coordinates.
    tol : float, default=1e-8
        Relative duality-gap tolerance.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    n_iter_ : int
        Sweeps performed.
    dual_gap_ : float
        Duality gap at the returned solution.
    n_params_ : int
        Number of non-zero coefficients (the lasso's degrees of freedom) + intercept.

    Derived in: chapter "Linear regression" § "Ridge, lasso and least absolute deviations".
    """

    def __init__(self, lam=1.0, fit_intercept=True, max_iter=1000, tol=1e-8):
        self.lam = lam
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol

    @staticmethod
    def _gap(lam, yy, yc_r, rr, xtr_absmax, w):
        """Duality gap from ``||yc||^2``, ``yc^T r``, ``||r||^2``, ``||Xc^T r||_inf``."""
        primal = 0.5 * rr + lam * np.abs(w).sum()
        s = 1.0 if xtr_absmax <= lam else lam / xtr_absmax
        # dual point theta = s r;  D(theta) = 1/2 ||y||^2 - 1/2 ||y - theta||^2
        dual = s * yc_r - 0.5 * s * s * rr
        return primal - dual

    def fit(self, X, y):
        """Fit by cyclic coordinate descent; returns ``self``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        lam = _check_lam(self.lam)
        if not (isinstance(self.max_iter, (int, np.integer)) and self.max_iter >= 1):
            raise ValueError(f"max_iter must be a positive integer, got {self.max_iter!r}")
        if not (np.isscalar(self.tol) and self.tol > 0):
            raise ValueError(f"tol must be positive, got {self.tol!r}")
        X, y = self._validate_fit(X, y)
        Xc, yc, x_mean, y_mean = _centre(X, y, self.fit_intercept)
        n, d = Xc.shape
        a = np.einsum("ij,ij->j", Xc, Xc)
        w = np.zeros(d)
        yy = float(yc @ yc)
        stop = self.tol * max(yy, np.finfo(float).tiny)
        use_gram = n > 2 * d
        if use_gram:
            G = Xc.T @ Xc
            c = Xc.T @ yc
            grad = c.copy()              # Xc^T r, kept up to date
        else:
            r = yc.copy()
        gap = np.inf
        it = 0
        for it in range(1, self.max_iter + 1):
            for j in range(d):
                if a[j] == 0.0:
                    continue
                wj = w[j]
                rho = (grad[j] if use_gram else Xc[:, j] @ r) + a[j] * wj
                new = _soft_threshold(rho, lam) / a[j]
                if new != wj:
                    w[j] = new
                    if use_gram:
                        grad -= (new - wj) * G[:, j]
                    else:
                        r -= (new - wj) * Xc[:, j]
            if use_gram:
                rr = max(yy - 2 * (w @ c) + w @ (G @ w), 0.0)
                yc_r = yy - w @ c
                xtr = np.abs(grad).max(initial=0.0)
            else:
                rr = float(r @ r)
                yc_r = float(yc @ r)
                xtr = np.abs(Xc.T @ r).max(initial=0.0)
            gap = self._gap(lam, yy, yc_r, rr, xtr, w)
            if gap <= stop:
                break
        self.coef_ = w
        self.n_iter_ = it
        self.dual_gap_ = float(gap)
        self._set_intercept(x_mean, y_mean)
        self._gaussian_fit_noise(X, y)
        return self

    @property
    def n_params_(self):
        return int(np.count_nonzero(self.coef_)) + int(self.fit_intercept)


class LeastAbsoluteDeviation(InformationCriteriaMixin, RegressorMixin, BaseEstimator):
    """Least absolute deviations: minimises ``sum_i |y_i - x_i . w - b|``.

    The maximum-likelihood fit under Laplace noise. Solved exactly as a linear
    programme (scipy's HiGHS): with ``y - X w - b = u - v``, ``u, v >= 0``, minimise
    ``sum(u + v)``. The LP has ``N`` equality constraints (sparse), so it is meant for
    small and medium ``N``. The minimiser need not be unique (the objective is
    piecewise linear); the LP returns a vertex solution, which interpolates at least
    ``rank`` data points.

    Parameters
    ----------
    fit_intercept : bool, default=True

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    scale_ : float
        Maximum-likelihood Laplace scale ``b = mean |residual|`` on the training data.
    n_params_ : int
        ``n_features + fit_intercept``.

    Derived in: chapter "Linear regression" § "Ridge, lasso and least absolute deviations".
    """

    def __init__(self, fit_intercept=True):
        self.fit_intercept = fit_intercept

    def fit(self, X, y):
        """Fit by linear programming; returns ``self``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        import scipy.sparse as sps
        from scipy.optimize import linprog

        _check_flag(self.fit_intercept, "fit_intercept")
        X, y = validate_data(X, y, y_numeric=True)
        self.n_features_in_ = X.shape[1]
        n, d = X.shape
        cols = [sps.csr_matrix(X)]
        if self.fit_intercept:
            cols.append(sps.csr_matrix(np.ones((n, 1))))
        eye = sps.identity(n, format="csr")
        A = sps.hstack(cols + [eye, -eye], format="csr")
        k = d + int(self.fit_intercept)
        cost = np.concatenate([np.zeros(k), np.ones(2 * n)])
        bounds = [(None, None)] * k + [(0, None)] * (2 * n)
        res = linprog(cost, A_eq=A, b_eq=y, bounds=bounds, method="highs")
        if res.status != 0:
            raise ValueError(f"least-absolute-deviation LP failed: {res.message}")
        self.coef_ = np.asarray(res.x[:d], dtype=float)
        self.intercept_ = float(res.x[d]) if self.fit_intercept else 0.0
        resid = y - self.predict(X)
        self.scale_ = max(float(np.mean(np.abs(resid))), np.finfo(float).tiny)
        return self

    def predict(self, X):
        """Predicted targets ``X @ coef_ + intercept_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        X = validate_X(self, X)
        return X @ self.coef_ + self.intercept_

    def log_likelihood(self, X, y):
        """Laplace log-likelihood ``-N log(2 b) - sum|r_i| / b`` with ``b = scale_`` (nats).

        On the training data ``b`` is the maximum-likelihood scale, so this is the
        maximised log-likelihood ``-N (log(2 b) + 1)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        float
        """
        X = validate_X(self, X)
        y = np.asarray(y, dtype=float).ravel()
        if y.shape[0] != X.shape[0] or not np.all(np.isfinite(y)):
            raise ValueError("y must be finite and have one value per row of X")
        r = np.abs(y - self.predict(X))
        return float(-y.shape[0] * np.log(2 * self.scale_) - r.sum() / self.scale_)

    @property
    def n_params_(self):
        return self.n_features_in_ + int(self.fit_intercept)
