"""Generative classifiers with Gaussian class-conditional densities, and Fisher's LDA.

All classifiers model ``p(x, y = c) = pi_c N(x | mu_c, Sigma_c)`` and fit it by maximum
likelihood (eqs. (4.52)-(4.53) of note ``003``); they differ in the covariance:

============================  =====================================================
``QDA``                        one full covariance per class (MLE, ``1/N_c``)
``LDA``                        one shared full covariance (pooled MLE, ``1/N``)
``RDA(lam)``                   shared ``lam diag(S) + (1 - lam) S``, S the pooled MLE
``DiagonalLDA``                shared diagonal, pooled variances with ``1/(N - C)``
``GaussianNaiveBayes``         one diagonal per class (MLE + ``var_smoothing``)
``NearestShrunkenCentroids``   DiagonalLDA with soft-thresholded class centroids
============================  =====================================================

Priors ``pi_c`` are the class frequencies ``N_c / N`` unless ``priors`` is given.
``predict_proba`` accepts NaN entries in ``X``: a missing feature is marginalised out
(drop its rows/columns of ``mu_c`` and ``Sigma_c``; for diagonal models drop its
factor), eqs. (8.94)-(8.97) of note ``000``. Features that are constant in the training
data carry no information; they are ignored with a warning (``constant_features_``).

``log_likelihood(X, y)`` is the *joint* log-likelihood ``sum_i log p(x_i, y_i)`` that
these models maximise (a generative model's likelihood); ``conditional_log_likelihood``
is ``sum_i log p(y_i | x_i)``, the quantity logistic regression maximises.

Derived in: chapter "Gaussian models and GDA" § "Gaussian discriminant analysis".
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import linalg
from scipy.linalg import blas
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
from sklearn.utils.validation import check_array, check_is_fitted

from .base import LinbookWarning, encode_labels, validate_data
from .criteria import InformationCriteriaMixin
from .gaussian import mvn_cholesky
from .numerics import logsumexp

__all__ = ["QDA", "LDA", "RDA", "DiagonalLDA", "GaussianNaiveBayes", "NearestShrunkenCentroids",
           "FisherLDA"]

_LOG_2PI = np.log(2.0 * np.pi)
_SINGULAR_HINT = ("use a regularised model instead: linbook.RDA(lam=0.1) (shrinks the shared "
                  "covariance towards its diagonal), linbook.DiagonalLDA or linbook.GaussianNaiveBayes")


def _check_priors(priors, n_classes):
    if priors is None:
        return None
    p = np.asarray(priors, dtype=float).ravel()
    if p.size != n_classes:
        raise ValueError(f"priors has {p.size} entries but there are {n_classes} classes")
    if np.any(~np.isfinite(p)) or np.any(p <= 0):
        raise ValueError("priors must be finite and strictly positive")
    if not np.isclose(p.sum(), 1.0):
        raise ValueError(f"priors must sum to 1; they sum to {p.sum():.6g}")
    return p


def _gram(R):
    """``R.T @ R`` by a symmetric rank-k update (BLAS syrk: half the flops of a GEMM)."""
    R = np.asarray(R, dtype=np.float64)
    if not R.flags.c_contiguous:
        R = np.ascontiguousarray(R)
    # R is C-contiguous (N, D), so R.T is an F-contiguous (D, N) view: syrk(trans=0)
    # forms R.T @ R from it without a copy and fills the upper triangle only.
    G = blas.dsyrk(1.0, R.T, trans=0, lower=0)
    iu = np.triu_indices_from(G, 1)
    G.T[iu] = G[iu]
    return G


class _GaussianClassifier(InformationCriteriaMixin, ClassifierMixin, BaseEstimator):
    """Shared plumbing: validation, priors, constant features, NaN marginalisation."""

    _min_per_class = 1
    _sorted_residuals = True   # False: the model implements _fit_pooled(X, yi, counts, means)

    # ----------------------------------------------------------------- fitting
    def fit(self, X, y):
        """Fit by maximum likelihood (eqs. (4.52)-(4.53) of note 003).

        Parameters
        ----------
        X : array_like, shape (N, D)
            Training inputs (finite).
        y : array_like, shape (N,)
            Class labels (at least two classes).

        Returns
        -------
        self
        """
        name = type(self).__name__
        X, y = validate_data(X, y)
        self.classes_, yi = encode_labels(y, model=name)
        C = self.classes_.size
        yi = yi.ravel()
        counts = np.bincount(yi, minlength=C)
        small = np.flatnonzero(counts < self._min_per_class)
        if small.size:
            c = self.classes_[small[0]]
            raise ValueError(
                f"{name}: class {c!r} has {counts[small[0]]} sample(s); this model needs at least "
                f"{self._min_per_class} per class to estimate its covariance. Collect more data, "
                "merge the class, or use a model with a shared covariance (linbook.LDA, linbook.RDA)."
            )
        N, D = X.shape
        self.n_features_in_ = D
        p = _check_priors(self.priors, C)
        self.class_count_ = counts.astype(float)
        self.priors_ = counts / N if p is None else p
        const = np.ptp(X, axis=0) == 0
        if const.all():
            raise ValueError(f"{name}: every feature is constant; there is nothing to learn from")
        if const.any():
            warnings.warn(f"{name}: feature(s) {np.flatnonzero(const).tolist()} are constant in the "
                          "training data and are ignored", LinbookWarning, stacklevel=2)
        self.constant_features_ = const
        self._keep = ~const
        if not self._sorted_residuals:
            # pooled-covariance models: no sorted copy of X (see LDA._fit_pooled)
            Xk = X[:, self._keep] if const.any() else X
            # class means by one (C, N) x (N, D) product with the class indicator matrix
            onehot = np.zeros((C, N))
            onehot[yi, np.arange(N)] = 1.0
            means = (onehot @ Xk) / counts[:, None]
            self._fit_pooled(Xk, yi, counts, means)
            full = np.empty((C, D))
            full[:, self._keep] = means
            full[:, const] = X[0, const]
            self.means_ = full
            return self
        # sort the rows by class once: every class is then a contiguous block of R
        order = np.argsort(yi, kind="stable")
        R = X[order][:, self._keep] if const.any() else X[order]
        bounds = np.concatenate([[0], np.cumsum(counts)])
        blocks = [slice(bounds[c], bounds[c + 1]) for c in range(C)]
        means = np.empty((C, R.shape[1]))
        for c, b in enumerate(blocks):
            means[c] = R[b].mean(axis=0)
            R[b] -= means[c]                      # within-class residuals, in place
        self._fit_params(R, blocks, counts, means)
        full = np.empty((C, D))
        full[:, self._keep] = means
        full[:, const] = X[0, const]
        self.means_ = full
        return self

    # -------------------------------------------------------------- predicting
    def _check_X(self, X):
        check_is_fitted(self, "classes_")
        X = check_array(X, dtype=np.float64, ensure_all_finite=False)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} was fitted "
                             f"with {self.n_features_in_} features.")
        self._all_finite = bool(np.isfinite(X.sum()))
        if not self._all_finite and np.isinf(X).any():
            raise ValueError("X contains inf; missing values may be NaN but not inf")
        return X[:, self._keep] if not self._keep.all() else X

    def _joint_log_likelihood(self, X, exact=False):
        """log p(x_i, y = c) for every row and class (up to a class-independent term unless exact)."""
        X = self._check_X(X)
        logpri = np.log(self.priors_)
        if self._all_finite or not np.isnan(X).any():
            return self._log_density(X, exact) + logpri
        miss = np.isnan(X)
        out = np.empty((X.shape[0], self.classes_.size))
        rows_missing = miss.any(axis=1)
        if (~rows_missing).any():
            out[~rows_missing] = self._log_density(X[~rows_missing], True)
        idx = np.flatnonzero(rows_missing)
        patterns, inv = np.unique(miss[idx], axis=0, return_inverse=True)
        for k, pat in enumerate(patterns):
            rows = idx[inv.ravel() == k]
            obs = ~pat
            if not obs.any():
                out[rows] = 0.0
            else:
                out[rows] = self._log_density_observed(X[np.ix_(rows, np.flatnonzero(obs))], obs)
        return out + logpri

    def decision_function(self, X):
        """Log joint ``log p(x, y = c)`` up to a class-independent term; for two classes the log-odds.

        Parameters
        ----------
        X : array_like, shape (N, D); NaN marks a missing feature

        Returns
        -------
        scores : ndarray, shape (N, C), or (N,) for two classes
        """
        s = self._joint_log_likelihood(X)
        return s[:, 1] - s[:, 0] if s.shape[1] == 2 else s

    def predict_log_proba(self, X):
        """Log posterior ``log p(y = c | x)``; NaN features are marginalised out.

        Parameters
        ----------
        X : array_like, shape (N, D)

        Returns
        -------
        log_proba : ndarray, shape (N, C)
        """
        s = self._joint_log_likelihood(X)
        return s - logsumexp(s, axis=1, keepdims=True)

    def predict_proba(self, X):
        """Posterior ``p(y = c | x)`` (eq. (4.33)); NaN features are marginalised out (eq. (8.97)).

        Parameters
        ----------
        X : array_like, shape (N, D)

        Returns
        -------
        proba : ndarray, shape (N, C)
        """
        return np.exp(self.predict_log_proba(X))

    def predict(self, X):
        """Class with the largest posterior (eq. (4.31)).

        Parameters
        ----------
        X : array_like, shape (N, D)

        Returns
        -------
        y : ndarray, shape (N,)
        """
        return self.classes_[np.argmax(self._joint_log_likelihood(X), axis=1)]

    def log_likelihood(self, X, y):
        """Joint log-likelihood ``sum_i log p(x_i, y_i)`` in nats (eq. (4.52)).

        Parameters
        ----------
        X : array_like, shape (N, D)
        y : array_like, shape (N,)

        Returns
        -------
        float
        """
        yi = self._label_index(y)
        s = self._joint_log_likelihood(X, exact=True)
        return float(s[np.arange(len(yi)), yi].sum())

    def conditional_log_likelihood(self, X, y):
        """Conditional log-likelihood ``sum_i log p(y_i | x_i)`` in nats.

        Parameters
        ----------
        X : array_like, shape (N, D)
        y : array_like, shape (N,)

        Returns
        -------
        float
        """
        yi = self._label_index(y)
        lp = self.predict_log_proba(X)
        return float(lp[np.arange(len(yi)), yi].sum())

    def _label_index(self, y):
        y = np.asarray(y)
        idx = np.searchsorted(self.classes_, y)
        idx = np.clip(idx, 0, self.classes_.size - 1)
        if np.any(self.classes_[idx] != y):
            raise ValueError("y contains labels not seen in fit")
        return idx

    # -------------------------------------------------- per-model primitives
    def _log_density(self, X, exact):  # pragma: no cover - abstract
        raise NotImplementedError

    def _log_density_observed(self, Xo, obs):  # pragma: no cover - abstract
        raise NotImplementedError


def _gauss_logpdf_cols(Xo, means, covs):
    """log N(x | mu_c, Sigma_c) for each class c (columns); covs (C, d, d) or (d, d)."""
    out = np.empty((Xo.shape[0], means.shape[0]))
    for c in range(means.shape[0]):
        S = covs[c] if covs.ndim == 3 else covs
        L = mvn_cholesky(S, what="marginal covariance")
        Z = linalg.solve_triangular(L, (Xo - means[c]).T, lower=True, check_finite=False)
        out[:, c] = (-0.5 * Xo.shape[1] * _LOG_2PI - np.log(np.diag(L)).sum()
                     - 0.5 * np.einsum("ij,ij->j", Z, Z))
    return out


class QDA(_GaussianClassifier):
    """Quadratic discriminant analysis: one full Gaussian per class (eq. (4.33)).

    Maximises the joint log-likelihood (4.52): ``pi_c = N_c / N`` (unless ``priors``),
    ``mu_c`` the class mean and ``Sigma_c = (1/N_c) sum_{i: y_i = c} (x_i - mu_c)(x_i - mu_c)^T``
    (the MLE, eq. (4.53)). Equals scikit-learn's ``QuadraticDiscriminantAnalysis()``
    (solver ``"svd"``, ``reg_param=0``), which uses the same ``1/N_c`` estimate.

    Parameters
    ----------
    priors : array_like, shape (C,), optional
        Class priors; default the class frequencies.

    Attributes
    ----------
    classes_, priors_, means_ : ndarray
    covariances_ : ndarray, shape (C, D, D)
    constant_features_ : ndarray of bool
    n_params_ : int
        ``(C - 1) + C D + C D (D + 1) / 2``.

    Raises
    ------
    ValueError
        A class with fewer than 2 samples, or a singular class covariance (e.g. ``N_c <= D``);
        the message names the regularised models to use.

    Derived in: chapter "Gaussian models and GDA" § "Quadratic discriminant analysis".
    """

    _min_per_class = 2

    def __init__(self, priors=None):
        self.priors = priors

    def _fit_params(self, R, blocks, counts, means):
        C, D = means.shape
        covs = np.empty((C, D, D))
        whites = np.empty((C, D, D))
        logdet = np.empty(C)
        for c in range(C):
            Xc = R[blocks[c]]
            covs[c] = _gram(Xc) / counts[c]
            try:
                L = mvn_cholesky(covs[c], what="covariance")
            except ValueError:
                raise ValueError(
                    f"QDA: the covariance of class {self.classes_[c]!r} is singular "
                    f"({int(counts[c])} samples, {D} features; QDA needs N_c > D and no collinear "
                    f"features within a class); {_SINGULAR_HINT}") from None
            whites[c] = linalg.solve_triangular(L, np.eye(D), lower=True)   # L^{-1}
            logdet[c] = 2.0 * np.log(np.diag(L)).sum()
        self.covariances_ = covs
        self._whites = whites
        self._logdet = logdet
        self.n_params_ = int((C - 1) + C * D + C * D * (D + 1) // 2)

    def _log_density(self, X, exact=True):
        C, D = self.means_.shape[0], X.shape[1]
        W = self._whites.transpose(2, 0, 1).reshape(D, C * D)        # [L_1^{-T} ... L_C^{-T}]
        off = np.einsum("cd,ced->ce", self.means_[:, self._keep], self._whites).reshape(1, C * D)
        maha = np.empty((X.shape[0], C))
        step = max(1, 2 ** 20 // (C * D))                              # rows per block (~8 MB)
        for a in range(0, X.shape[0], step):
            Z = X[a:a + step] @ W                                      # one GEMM for all classes
            Z -= off
            Z *= Z
            maha[a:a + step] = Z.reshape(-1, C, D).sum(axis=2)
        return -0.5 * (maha + self._logdet + D * _LOG_2PI)

    def _log_density_observed(self, Xo, obs):
        return _gauss_logpdf_cols(Xo, self.means_[:, self._keep][:, obs],
                                  self.covariances_[:, obs][:, :, obs])


class LDA(_GaussianClassifier):
    """Linear discriminant analysis: Gaussians with one shared covariance (eqs. (4.34)-(4.38)).

    Maximises (4.52) with ``Sigma_c = Sigma``: ``Sigma = (1/N) sum_c sum_{i: y_i = c}
    (x_i - mu_c)(x_i - mu_c)^T`` (pooled MLE). Scores ``beta_c^T x + gamma_c`` with
    ``beta_c = Sigma^{-1} mu_c`` and ``gamma_c = -mu_c^T beta_c / 2 + log pi_c`` (4.36)-(4.37),
    computed by Cholesky. Equals scikit-learn's ``LinearDiscriminantAnalysis(solver="lsqr")``
    (and ``"eigen"``) with the default priors.

    Parameters
    ----------
    priors : array_like, shape (C,), optional
        Class priors; default the class frequencies.

    Attributes
    ----------
    classes_, priors_, means_ : ndarray
    covariance_ : ndarray, shape (D, D)
    betas_ : ndarray, shape (C, D)
    gammas_ : ndarray, shape (C,)
    coef_, intercept_ : ndarray
        As scikit-learn: ``betas_`` / ``gammas_``, or for two classes the single row
        ``w = beta_1 - beta_0 = Sigma^{-1}(mu_1 - mu_0)`` (4.48) and ``gamma_1 - gamma_0``.
    n_params_ : int
        ``(C - 1) + C D + D (D + 1) / 2``.

    Derived in: chapter "Gaussian models and GDA" § "Linear discriminant analysis".
    """

    def __init__(self, priors=None):
        self.priors = priors

    _sorted_residuals = False

    def _fit_pooled(self, X, yi, counts, means, block=8192):
        """Pooled within-class scatter, accumulated over row blocks.

        Each row is centred by its own class mean (exact, as in (4.53)), a block at a
        time, and added with a symmetric rank-k update: no sorted or centred copy of X.
        """
        N = X.shape[0]
        S = np.zeros((X.shape[1], X.shape[1]))
        for i in range(0, N, block):
            Rb = X[i:i + block] - means[yi[i:i + block]]
            S += _gram(Rb)
        self._fit_params(None, None, counts, means, S=S / N, N=N)

    def _fit_params(self, R, blocks, counts, means, S=None, N=None):
        C, D = means.shape
        if S is None:
            N = R.shape[0]
            S = _gram(R) / N                    # pooled within-class scatter: one SYRK
        self.covariance_ = S
        try:
            L = mvn_cholesky(S, what="pooled covariance")
        except ValueError:
            raise ValueError(
                f"{type(self).__name__}: the pooled covariance is singular (N - C = {N - C} "
                f"within-class degrees of freedom for D = {D} features, or collinear features); "
                f"{_SINGULAR_HINT}") from None
        self._chol = L
        self._set_linear(linalg.cho_solve((L, True), means.T).T, means, 2.0 * np.log(np.diag(L)).sum())
        self.n_params_ = int((C - 1) + C * D + D * (D + 1) // 2)

    def _set_linear(self, betas, means, logdet):
        self.betas_ = betas
        self._quad_mu = np.einsum("cd,cd->c", means, betas)
        self.gammas_ = -0.5 * self._quad_mu + np.log(self.priors_)
        self._logdet = logdet
        if betas.shape[0] == 2:
            self.coef_ = (betas[1] - betas[0])[None, :]
            self.intercept_ = np.array([self.gammas_[1] - self.gammas_[0]])
        else:
            self.coef_, self.intercept_ = betas, self.gammas_

    def _quad(self, X):
        Z = linalg.solve_triangular(self._chol, X.T, lower=True, check_finite=False)
        return np.einsum("ij,ij->j", Z, Z)

    def _log_density(self, X, exact=False):
        # log N(x|mu_c,Sigma) = beta_c^T x - mu_c^T beta_c / 2  - x^T Sigma^{-1} x / 2 - log|2 pi Sigma| / 2
        s = X @ self.betas_.T - 0.5 * self._quad_mu
        if exact:
            s -= 0.5 * (self._quad(X)[:, None] + self._logdet + X.shape[1] * _LOG_2PI)
        return s

    def _log_density_observed(self, Xo, obs):
        return _gauss_logpdf_cols(Xo, self.means_[:, self._keep][:, obs], self.covariance_[np.ix_(obs, obs)])


class RDA(LDA):
    """Regularised LDA: shared covariance ``lam diag(S) + (1 - lam) S`` (eq. (4.54)).

    ``S`` is the pooled within-class MLE covariance of :class:`LDA`. The fit never forms a
    D x D matrix or its inverse: with ``Delta = diag(S)`` and the standardised within-class
    residuals ``Z = X_w Delta^{-1/2} / sqrt(N)`` (so ``Z^T Z = R`` is the pooled correlation
    matrix) and the thin SVD ``Z = U s V^T`` (``V`` is D x r, r <= min(N, D)),

    ``Sigma = Delta^{1/2} (lam I + (1 - lam) V diag(s^2) V^T) Delta^{1/2}``,
    ``Sigma^{-1} = Delta^{-1/2} [V diag(1/(lam + (1 - lam) s^2)) V^T + (I - V V^T)/lam] Delta^{-1/2}``,

    the exact form of the SVD trick of eqs. (4.55)-(4.63) (which, as written in the note,
    shrinks towards the diagonal of the rotated covariance instead). Cost O(N D min(N, D));
    works for D > N when ``lam > 0``. ``lam = 0`` is :class:`LDA`; ``lam = 1`` a diagonal
    model with MLE (``1/N``) pooled variances.

    Parameters
    ----------
    lam : float in [0, 1]
        Amount of shrinkage towards the diagonal.
    priors : array_like, shape (C,), optional

    Attributes
    ----------
    classes_, priors_, means_, betas_, gammas_, coef_, intercept_ : ndarray
        As :class:`LDA`.
    variances_ : ndarray, shape (D,)
        ``diag(S)``.
    components_ : ndarray, shape (r, D)
        ``V^T``.
    n_params_ : int
        As :class:`LDA`.

    Derived in: chapter "Gaussian models and GDA" § "Regularised LDA and the SVD trick".
    """

    _sorted_residuals = True   # the SVD trick works on the residual matrix itself

    def __init__(self, lam=0.5, priors=None):
        self.lam = lam
        self.priors = priors

    def _fit_params(self, R, blocks, counts, means):
        lam = float(self.lam)
        if not 0.0 <= lam <= 1.0:
            raise ValueError(f"lam must be in [0, 1]; got {self.lam}")
        C, D = means.shape
        N = R.shape[0]
        Xw = R
        var = np.einsum("ij,ij->j", Xw, Xw) / N
        if np.any(var <= 0):
            j = np.flatnonzero(var <= 0).tolist()
            raise ValueError(f"RDA: feature(s) {j} have zero within-class variance (constant "
                             "inside every class), so diag(S) is singular; remove them")
        self.variances_ = var
        sd = np.sqrt(var)
        Z = Xw / (sd * np.sqrt(N))
        if N >= D:
            e, V = linalg.eigh(Z.T @ Z)
        else:
            _, s, Vt = linalg.svd(Z, full_matrices=False)
            e, V = s ** 2, Vt.T
        keep = e > 1e-12 * max(1.0, e.max())
        e, V = e[keep], V[:, keep]
        if lam == 0.0 and e.size < D:
            raise ValueError(f"RDA(lam=0) is LDA and its pooled covariance is singular (rank {e.size} "
                             f"< D = {D}); {_SINGULAR_HINT}")
        self.components_ = V.T
        self._eig = e
        self._sd = sd
        self._mid = lam + (1.0 - lam) * e                     # eigenvalues of the regularised R
        logdet = 2.0 * np.log(sd).sum() + np.log(self._mid).sum() + (D - e.size) * (np.log(lam) if lam > 0 else 0.0)
        betas = self._apply_inverse(means)
        self._set_linear(betas, means, logdet)
        self.n_params_ = int((C - 1) + C * D + D * (D + 1) // 2)

    def _apply_inverse(self, A):
        """Rows of A times Sigma^{-1}, without forming Sigma."""
        U = A / self._sd
        V = self.components_.T
        P = U @ V
        out = (P / self._mid) @ V.T
        if self.lam > 0:
            out += (U - P @ V.T) / self.lam
        return out / self._sd

    def _quad(self, X):
        return np.einsum("ij,ij->i", X, self._apply_inverse(X))

    def covariance(self):
        """The regularised covariance ``lam diag(S) + (1 - lam) S`` as a D x D matrix (for small D).

        Returns
        -------
        ndarray, shape (D, D)
        """
        check_is_fitted(self, "components_")
        V = self.components_.T
        R = self.lam * np.eye(V.shape[0]) + (1 - self.lam) * (V * self._eig) @ V.T
        return self._sd[:, None] * R * self._sd[None, :]

    def _log_density_observed(self, Xo, obs):
        o = np.flatnonzero(obs)
        V = self.components_.T[o]
        R = self.lam * np.eye(o.size) + (1 - self.lam) * (V * self._eig) @ V.T
        cov = self._sd[o, None] * R * self._sd[None, o]
        return _gauss_logpdf_cols(Xo, self.means_[:, self._keep][:, o], cov)


class _DiagonalModel(_GaussianClassifier):
    """Gaussian classes with diagonal covariances ``var_`` of shape (C, D) or (D,)."""

    def _diag_logpdf(self, X, means, var):
        var = np.broadcast_to(var, means.shape)
        prec = 1.0 / var
        # sum_j -(x_j - mu_cj)^2 / (2 var_cj): expand the square -> GEMMs
        s = -0.5 * ((X * X) @ prec.T) + X @ (means * prec).T - 0.5 * np.sum(means * means * prec, axis=1)
        return s - 0.5 * np.sum(np.log(2 * np.pi * var), axis=1)

    def _log_density(self, X, exact=True):
        return self._diag_logpdf(X, self._mu, self._var)

    def _log_density_observed(self, Xo, obs):
        var = np.broadcast_to(self._var, self._mu.shape)
        return self._diag_logpdf(Xo, self._mu[:, obs], var[:, obs])


class DiagonalLDA(_DiagonalModel):
    """Diagonal LDA: shared diagonal covariance (eqs. (4.64)-(4.65)).

    ``delta_c(x) = -sum_j (x_j - mu_cj)^2 / (2 s_j^2) + log pi_c`` (plus the class-independent
    ``-1/2 sum_j log(2 pi s_j^2)``), with ``mu_cj`` the class means and the pooled variance
    ``s_j^2 = sum_c sum_{i: y_i = c} (x_ij - mu_cj)^2 / (N - C)`` (eq. (4.65)).

    Parameters
    ----------
    priors : array_like, shape (C,), optional

    Attributes
    ----------
    classes_, priors_, means_ : ndarray
    var_ : ndarray, shape (D,)
        Pooled variances ``s_j^2``.
    n_params_ : int
        ``(C - 1) + C D + D``.

    Derived in: chapter "Gaussian models and GDA" § "Diagonal LDA".
    """

    def __init__(self, priors=None):
        self.priors = priors

    def _fit_params(self, R, blocks, counts, means):
        C, D = means.shape
        N = R.shape[0]
        if N <= C:
            raise ValueError("DiagonalLDA needs N > C samples to estimate the pooled variances")
        var = np.einsum("ij,ij->j", R, R) / (N - C)
        if np.any(var <= 0):
            raise ValueError(f"DiagonalLDA: feature(s) {np.flatnonzero(var <= 0).tolist()} have zero "
                             "within-class variance; remove them")
        self.var_ = var
        self._mu, self._var = means, var
        self.n_params_ = int((C - 1) + C * D + D)


class GaussianNaiveBayes(_DiagonalModel):
    """Gaussian naive Bayes: one diagonal Gaussian per class.

    ``var_cj = (1/N_c) sum_{i: y_i = c} (x_ij - mu_cj)^2 + eps`` with
    ``eps = var_smoothing * max_j Var(x_j)`` (the MLE plus scikit-learn's smoothing), so it
    equals ``sklearn.naive_bayes.GaussianNB(var_smoothing=...)`` at the same setting. A missing
    feature drops out of the product (eq. (8.96)).

    Parameters
    ----------
    priors : array_like, shape (C,), optional
    var_smoothing : float >= 0
        Fraction of the largest feature variance added to every variance.

    Attributes
    ----------
    classes_, priors_, means_ : ndarray
    var_ : ndarray, shape (C, D)
    n_params_ : int
        ``(C - 1) + 2 C D``.

    Raises
    ------
    ValueError
        A zero variance (a one-sample class or a feature constant within a class) with
        ``var_smoothing = 0``.

    Derived in: chapter "Generative vs discriminative classifiers" § "Missing data".
    """

    def __init__(self, priors=None, var_smoothing=1e-9):
        self.priors = priors
        self.var_smoothing = var_smoothing

    def _fit_params(self, R, blocks, counts, means):
        C, D = means.shape
        if self.var_smoothing < 0:
            raise ValueError("var_smoothing must be >= 0")
        N = R.shape[0]
        within = np.array([np.einsum("ij,ij->j", R[b], R[b]) for b in blocks])     # (C, D)
        m = counts @ means / N
        total_var = (within.sum(axis=0) + counts @ (means - m) ** 2) / N            # Var(x_j)
        eps = self.var_smoothing * total_var.max()
        var = within / counts[:, None] + eps
        if np.any(var <= 0):
            c, j = np.argwhere(var <= 0)[0]
            raise ValueError(f"GaussianNaiveBayes: class {self.classes_[c]!r}, feature {j} has zero "
                             "variance (one sample, or constant within the class); set var_smoothing > 0")
        self.var_ = var
        self._mu, self._var = means, var
        self.n_params_ = int((C - 1) + 2 * C * D)


class NearestShrunkenCentroids(_DiagonalModel):
    """Nearest shrunken centroids (eq. (4.66); Hastie et al. 2009, sec. 18.2).

    Class centroids ``mu_cj = m_j + Delta_cj`` are shrunk towards the overall mean ``m_j``:
    with pooled within-class standard deviations ``s_j`` (``1/(N - C)``), ``s_0 = median(s_j)``
    and ``m_c = sqrt(1/N_c - 1/N)``, the standardised offsets
    ``d_cj = (xbar_cj - m_j) / (m_c (s_j + s_0))`` are soft-thresholded,
    ``d'_cj = sign(d_cj) (|d_cj| - shrink)_+``, and ``mu_cj = m_j + m_c (s_j + s_0) d'_cj``.
    Classification is diagonal LDA with variances ``s_j^2`` around the shrunken centroids:
    ``delta_c(x) = -sum_j (x_j - mu_cj)^2 / (2 s_j^2) + log pi_c``. A feature with
    ``d'_cj = 0`` for every class plays no role (``selected_features_``). ``shrink = 0`` is
    :class:`DiagonalLDA`.

    Same centroids and predictions as ``sklearn.neighbors.NearestCentroid(shrink_threshold=shrink,
    priors=...)`` with non-uniform priors (scikit-learn's ``predict_proba`` is
    ``softmax(2 delta_c)``, i.e. ours squared and renormalised).

    Parameters
    ----------
    shrink : float >= 0
        The threshold (lambda in note 003).
    priors : array_like, shape (C,), optional

    Attributes
    ----------
    classes_, priors_ : ndarray
    centroids_ : ndarray, shape (C, D)
        Shrunken centroids.
    deviations_ : ndarray, shape (C, D)
        Shrunken standardised offsets ``d'_cj``.
    within_class_std_dev_ : ndarray, shape (D,)
    selected_features_ : ndarray of int
    n_params_ : int

    Derived in: chapter "Gaussian models and GDA" § "Nearest shrunken centroids".
    """

    def __init__(self, shrink=0.0, priors=None):
        self.shrink = shrink
        self.priors = priors

    def _fit_params(self, R, blocks, counts, means):
        if self.shrink < 0:
            raise ValueError("shrink must be >= 0")
        C, D = means.shape
        N = R.shape[0]
        if N <= C:
            raise ValueError("NearestShrunkenCentroids needs N > C samples")
        s = np.sqrt(np.einsum("ij,ij->j", R, R) / (N - C))
        if np.any(s <= 0):
            raise ValueError(f"NearestShrunkenCentroids: feature(s) {np.flatnonzero(s <= 0).tolist()} "
                             "have zero within-class variance; remove them")
        m = counts @ means / N
        mc = np.sqrt(1.0 / counts - 1.0 / N)[:, None]
        scale = mc * (s + np.median(s))
        d = (means - m) / scale
        d = np.sign(d) * np.maximum(np.abs(d) - self.shrink, 0.0)
        cent = m + scale * d
        self.within_class_std_dev_ = s
        self.deviations_ = d
        self.centroids_ = cent
        self.selected_features_ = np.flatnonzero(np.any(d != 0, axis=0))
        self._mu, self._var = cent, s * s
        self.n_params_ = int((C - 1) + D + np.count_nonzero(d) + D)


class FisherLDA(TransformerMixin, BaseEstimator):
    """Fisher's linear discriminant: project onto L <= C - 1 discriminant directions.

    Maximises ``J(W) = |W^T Sigma_B W| / |W^T Sigma_W W|`` with
    ``Sigma_B = sum_c (N_c/N)(mu_c - mu)(mu_c - mu)^T`` and
    ``Sigma_W = sum_c (N_c/N) Sigma_c`` (eqs. (8.114)-(8.117)). The columns of ``W`` are the
    leading generalised eigenvectors ``Sigma_B w = lambda Sigma_W w`` (8.107), normalised so
    ``W^T Sigma_W W = I`` (equivalently ``W = Sigma_W^{-1/2} U``, eq. (8.118)). Because
    ``rank(Sigma_B) <= C - 1``, at most ``C - 1`` eigenvalues are non-zero.

    Parameters
    ----------
    n_components : int, optional
        L; default ``min(C - 1, D)``. Must be ``<= min(C - 1, D)``.

    Attributes
    ----------
    scalings_ : ndarray, shape (D, L)
        The directions ``W``.
    eigenvalues_ : ndarray, shape (L,)
        The Fisher ratios ``J(w_l)``, decreasing.
    mean_ : ndarray, shape (D,)
    classes_ : ndarray

    Derived in: chapter "Generative vs discriminative classifiers" § "Fisher's linear discriminant".
    """

    def __init__(self, n_components=None):
        self.n_components = n_components

    def fit(self, X, y):
        """Compute the scatter matrices and solve the generalised eigenproblem.

        Parameters
        ----------
        X : array_like, shape (N, D)
        y : array_like, shape (N,)

        Returns
        -------
        self
        """
        X, y = validate_data(X, y)
        self.classes_, yi = encode_labels(y, model="FisherLDA")
        C = self.classes_.size
        N, D = X.shape
        Lmax = min(C - 1, D)
        L = Lmax if self.n_components is None else int(self.n_components)
        if not 1 <= L <= Lmax:
            raise ValueError(f"n_components must be between 1 and min(C - 1, D) = {Lmax} "
                             f"(rank(Sigma_B) <= C - 1); got {self.n_components}")
        counts = np.bincount(yi, minlength=C).astype(float)
        onehot = np.zeros((N, C))
        onehot[np.arange(N), yi] = 1.0
        means = (onehot.T @ X) / counts[:, None]
        mu = X.mean(axis=0)
        R = X - means[yi]
        Sw = (R.T @ R) / N
        B = (means - mu) * np.sqrt(counts / N)[:, None]
        Sb = B.T @ B
        try:
            mvn_cholesky(Sw, what="within-class covariance")
        except ValueError:
            raise ValueError("FisherLDA: the within-class covariance Sigma_W is singular (D >= N - C or "
                             "collinear features); project the data with PCA first (note 000, 8.6.3.2)") from None
        vals, vecs = linalg.eigh(Sb, Sw)
        order = np.argsort(vals)[::-1][:L]
        self.eigenvalues_ = vals[order]
        self.scalings_ = vecs[:, order]
        self.mean_ = mu
        self.n_features_in_ = D
        return self

    def transform(self, X):
        """Project: ``z = W^T (x - mu)``.

        Parameters
        ----------
        X : array_like, shape (N, D)

        Returns
        -------
        Z : ndarray, shape (N, L)
        """
        check_is_fitted(self, "scalings_")
        X = check_array(X, dtype=np.float64)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but FisherLDA was fitted with "
                             f"{self.n_features_in_} features.")
        return (X - self.mean_) @ self.scalings_
