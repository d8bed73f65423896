"""Laplace approximation, the evidence, and Bayesian logistic regression.

A density known up to its normaliser, ``p(z) = exp(-E(z)) / Z``, is approximated by the
Gaussian ``N(z | z0, A^{-1})`` centred at the mode ``z0`` (the minimum of the energy
``E``), with precision ``A = grad grad E(z0)``. The same expansion gives the normaliser::

    log Z  ~=  -E(z0) + (M/2) log(2 pi) - (1/2) log |A|           (MLAPP 8.54, PRML 4.135)

When ``E(w) = -log p(y | X, w) - log p(w)`` this is the log evidence ``log p(y | X)``.
The information criteria ``aic`` and ``bic`` live in :mod:`linbook.criteria` (re-exported
here and at top level as ``linbook.aic`` / ``linbook.bic``).

Derived in: chapter "Laplace approximation, BIC and Bayesian logistic regression".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted

from .base import DEPRECATED, encode_labels, renamed_param, validate_fit, validate_predict
from .criteria import aic, bic  # noqa: F401  (re-exported for ``from linbook.laplace import bic``)
from .numerics import log1pexp, sigmoid

__all__ = ["LaplaceResult", "laplace_approximation", "probit_kappa", "moderated_sigmoid",
           "BayesianLogisticRegression"]


@dataclass
class LaplaceResult:
    """Result of :func:`laplace_approximation`.

    Attributes
    ----------
    mode : ndarray of shape (M,)
        The minimiser ``z0`` of the energy (the mode of the density).
    energy : float
        ``E(z0)``.
    precision : ndarray of shape (M, M)
        ``A``, the Hessian of the energy at the mode.
    covariance : ndarray of shape (M, M)
        ``A^{-1}`` (from the Cholesky factor of ``A``).
    chol : ndarray of shape (M, M)
        Lower Cholesky factor ``L`` of ``A`` (``A = L L^T``).
    log_det_precision : float
        ``log |A|``.
    log_evidence : float
        ``-E(z0) + (M/2) log(2 pi) - (1/2) log |A|``, the Laplace estimate of ``log Z``.
    n_iter : int
        Newton iterations used.

    Derived in: chapter "Laplace approximation, BIC and Bayesian logistic regression" § "The Laplace approximation in M dimensions".
    """

    mode: np.ndarray
    energy: float
    precision: np.ndarray
    covariance: np.ndarray
    chol: np.ndarray
    log_det_precision: float
    log_evidence: float
    n_iter: int

    def logpdf(self, z):
        """Log density of the Gaussian approximation at the rows of ``z`` (shape (n, M) or (M,))."""
        z = np.atleast_2d(np.asarray(z, dtype=float))
        if z.shape[-1] != self.mode.size:
            z = z.reshape(-1, self.mode.size)
        d = z - self.mode
        # (z - z0)^T A (z - z0) = || L^T (z - z0) ||^2
        q = np.sum((d @ self.chol) ** 2, axis=1)
        m = self.mode.size
        return -0.5 * q - 0.5 * m * np.log(2 * np.pi) + 0.5 * self.log_det_precision

    def pdf(self, z):
        """Density of the Gaussian approximation at the rows of ``z``."""
        return np.exp(self.logpdf(z))


def laplace_approximation(neg_log_density, grad, hess, x0, *, tol=1e-14, max_iter=200):
    """Laplace approximation of ``p(z) = exp(-E(z)) / Z``.

    The mode is found by Newton's method with a backtracking (Armijo) line search on the
    energy ``E``; where the Hessian is not positive definite the step falls back to steepest
    descent. At the mode, ``A = hess(z0)`` must be positive definite (a strict local
    minimum of ``E``), otherwise a ``ValueError`` is raised.

    Parameters
    ----------
    neg_log_density : callable
        ``E(z)``: the negative log of the *unnormalised* density (any additive constant in
        ``E`` shifts ``log_evidence`` by the same amount).
    grad : callable
        Gradient of ``E``, returns shape (M,).
    hess : callable
        Hessian of ``E``, returns shape (M, M).
    x0 : float or array-like of shape (M,)
        Starting point.
    tol : float, default=1e-14
        Stop when the Newton decrement ``g^T A^{-1} g / 2`` falls below ``tol``.
    max_iter : int, default=200
        Iteration cap; a ``ValueError`` is raised if the mode is not reached.

    Returns
    -------
    LaplaceResult
        Mode, precision ``A``, covariance ``A^{-1}`` (via Cholesky), and
        ``log_evidence = -E(z0) + (M/2) log(2 pi) - (1/2) log |A|``.

    Derived in: chapter "Laplace approximation, BIC and Bayesian logistic regression" § "The Laplace approximation in M dimensions".
    """
    z = np.atleast_1d(np.asarray(x0, dtype=float)).ravel().copy()
    if not np.all(np.isfinite(z)):
        raise ValueError("x0 must be finite")
    m = z.size

    scalar = np.ndim(x0) == 0

    def arg(v):
        return float(v[0]) if scalar else v

    def E(v):
        return float(neg_log_density(arg(v)))

    def G(v):
        return np.asarray(grad(arg(v)), dtype=float).reshape(m)

    def Hs(v):
        return np.asarray(hess(arg(v)), dtype=float).reshape(m, m)

    e = E(z)
    if not np.isfinite(e):
        raise ValueError(f"the energy E(x0) is not finite ({e}); start where the density is positive")
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        g, H = G(z), Hs(z)
        if not (np.all(np.isfinite(g)) and np.all(np.isfinite(H))):
            raise ValueError("laplace_approximation: the gradient or Hessian is not finite during the "
                             "mode search (overflow); scale the variables (e.g. standardise the features).")
        try:
            L = np.linalg.cholesky(0.5 * (H + H.T))
            step = -linalg.cho_solve((L, True), g)
        except np.linalg.LinAlgError:
            step = -g / max(1.0, np.linalg.norm(g))
        decrement = -float(g @ step)
        if decrement < 0:          # not a descent direction (cannot happen for PD H)
            step, decrement = -g, float(g @ g)
        if 0.5 * decrement <= tol:
            break
        t = 1.0
        while True:
            z_new = z + t * step
            e_new = E(z_new)
            if np.isfinite(e_new) and e_new <= e - 1e-4 * t * decrement:
                break
            t *= 0.5
            if t < 1e-14:
                break
        if t < 1e-14:
            # no decrease along a descent direction: at the mode to rounding, unless the model
            # still predicts a large decrease (then the energy is not smooth or badly scaled)
            if 0.5 * decrement > 1e-8 * max(1.0, abs(e)):
                raise ValueError("laplace_approximation: the line search stalled away from the mode "
                                 f"(Newton decrement {0.5 * decrement:.3g}); check that E, grad and "
                                 "hess agree, or scale the variables.")
            break
        z, e = z_new, e_new
    else:
        raise ValueError(f"laplace_approximation did not reach the mode in {max_iter} iterations; "
                         "is the density unbounded (e.g. an improper posterior)?")
    A = Hs(z)
    A = 0.5 * (A + A.T)
    try:
        L = np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        raise ValueError("the Hessian of E at the mode is not positive definite: the point is not a "
                         "strict local maximum of the density, so no Gaussian approximation exists") from None
    cov = linalg.cho_solve((L, True), np.eye(m))
    logdet = 2.0 * float(np.sum(np.log(np.diag(L))))
    log_z = -e + 0.5 * m * np.log(2 * np.pi) - 0.5 * logdet
    return LaplaceResult(mode=z, energy=e, precision=A, covariance=0.5 * (cov + cov.T), chol=L,
                         log_det_precision=logdet, log_evidence=log_z, n_iter=n_iter)


def probit_kappa(var):
    """``kappa(sigma^2) = (1 + pi sigma^2 / 8)^{-1/2}`` (MLAPP 8.70, PRML 4.154).

    Derived in: chapter "Laplace approximation, BIC and Bayesian logistic regression" § "The posterior predictive".
    """
    var = np.asarray(var, dtype=float)
    if np.any(var < 0) or not np.all(np.isfinite(var)):
        raise ValueError("the variance must be finite and non-negative")
    return 1.0 / np.sqrt(1.0 + np.pi * var / 8.0)


def moderated_sigmoid(mu, var):
    """Probit approximation ``int sigm(a) N(a | mu, var) da ~= sigm(kappa(var) mu)``.

    Derived in: chapter "Laplace approximation, BIC and Bayesian logistic regression" § "The posterior predictive".
    """
    return sigmoid(probit_kappa(var) * np.asarray(mu, dtype=float))


class BayesianLogisticRegression(ClassifierMixin, BaseEstimator):
    """Binary logistic regression with a Gaussian prior and a Laplace-approximated posterior.

    Model: ``p(y = 1 | x, w) = sigm(w^T phi(x))`` with ``phi(x) = (1, x)`` when
    ``fit_intercept`` (else ``x``), prior ``w ~ N(0, alpha^{-1} I)`` with ``alpha = prior_precision``
    (PRML's notation). **The intercept gets the
    same prior as the other weights** (this keeps the posterior proper on separable data and
    the evidence well defined). The posterior is approximated by ``N(w | w_MAP, A^{-1})`` where
    ``w_MAP`` minimises the energy::

        E(w) = sum_i [log(1 + exp(a_i)) - y_i a_i] + (alpha/2) ||w||^2 + (M/2) log(2 pi / alpha),
        a_i = w^T phi(x_i),  y_i in {0, 1},

    and ``A = Phi^T S Phi + alpha I`` with ``S = diag(mu_i (1 - mu_i))``. The MAP point minimises
    ``NLL(w) + (alpha/2) ||w||^2``, i.e. ``linbook.LogisticRegression(lam=alpha)`` except that the
    intercept is penalised too; with ``fit_intercept=False`` it equals scikit-learn's
    ``LogisticRegression(C=1/alpha, fit_intercept=False)``.

    Parameters
    ----------
    prior_precision : float, default=0.01
        Prior precision ``alpha`` of every weight, the inverse prior variance (MLAPP 8.4.3 uses
        ``N(0, 100 I)``, i.e. ``alpha = 0.01``).
    predictive : {"probit", "mc", "plugin"}, default="probit"
        How ``predict_proba`` integrates over the posterior: the moderated output
        ``sigm(kappa(sigma_a^2) mu_a)``, Monte Carlo over ``n_samples`` posterior draws, or the
        plug-in ``sigm(mu_a)`` at the posterior mean.
    n_samples : int, default=1000
        Monte Carlo draws for ``predictive="mc"``.
    random_state : int, Generator or None, default=None
        Seeds the Monte Carlo draws; an int gives the same probabilities on every call.
    fit_intercept : bool, default=True
        Add a constant feature (with the prior above).
    tol, max_iter : float, int
        Passed to :func:`laplace_approximation`.
    prior_var : float, deprecated
        The old parameter, the prior variance: works as ``prior_precision = 1 / prior_var``
        with a FutureWarning; removed in linbook 0.3.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    posterior_mean_ : ndarray of shape (M,)
        ``w_MAP`` (intercept first when ``fit_intercept``).
    posterior_cov_ : ndarray of shape (M, M)
        ``A^{-1}``.
    log_evidence_ : float
        Laplace estimate of ``log p(y | X)`` (nats), prior normaliser included.
    coef_ : ndarray of shape (1, D)
    intercept_ : ndarray of shape (1,)
    laplace_ : LaplaceResult
        The full Laplace approximation (mode, precision, Cholesky factor, ...).
    n_features_in_ : int
    feature_names_in_ : ndarray of str, only when ``X`` had string column names.
    n_iter_ : int

    Derived in: chapter "Laplace approximation, BIC and Bayesian logistic regression" § "Bayesian logistic regression".
    """

    def __init__(self, prior_precision=0.01, predictive="probit", n_samples=1000, random_state=None,
                 fit_intercept=True, tol=1e-14, max_iter=200, *, prior_var=DEPRECATED):
        self.prior_precision = prior_precision
        self.prior_var = prior_var
        self.predictive = predictive
        self.n_samples = n_samples
        self.random_state = random_state
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False     # binary only
        return tags

    def _design(self, X):
        return np.hstack([np.ones((X.shape[0], 1)), X]) if self.fit_intercept else X

    def _prior_precision(self, warn=True):
        return renamed_param(self, "prior_precision", "prior_var", convert=lambda var: 1.0 / var,
                             formula="prior_precision=1/prior_var", warn=warn)

    def _check_params(self):
        a = self._prior_precision()
        if not (np.isscalar(a) and isinstance(a, (int, float, np.number)) and np.isfinite(a) and a > 0):
            raise ValueError(f"prior_precision must be a positive finite number; got {a!r}")
        if self.predictive not in ("probit", "mc", "plugin"):
            raise ValueError(f"predictive must be 'probit', 'mc' or 'plugin'; got {self.predictive!r}")
        if not (isinstance(self.n_samples, (int, np.integer)) and self.n_samples >= 1):
            raise ValueError(f"n_samples must be an integer >= 1; got {self.n_samples!r}")

    def fit(self, X, y):
        """Find ``w_MAP`` by Newton's method and the Laplace posterior; returns ``self``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two classes (any labels).

        Returns
        -------
        self
        """
        self._check_params()
        if y is None:
            raise ValueError("BayesianLogisticRegression requires y to be passed, but the target y is None. "
                             "Call fit(X, y) with the class labels.")
        X, y = validate_fit(self, X, y)
        kind = type_of_target(y)
        if kind == "unknown":
            raise ValueError("Unknown label type: BayesianLogisticRegression needs two class labels in y.")
        if kind == "multiclass":
            raise ValueError("Only binary classification is supported. The target has more than two "
                             "classes; use linbook.LogisticRegression (multinomial) for those.")
        if X.shape[0] < 2:
            raise ValueError("BayesianLogisticRegression needs at least one sample of each of two "
                             "classes; got 1 sample.")
        self.classes_, t = encode_labels(y, max_classes=2, model="BayesianLogisticRegression")
        t = t.astype(float)
        Phi = self._design(X)
        m, alpha = Phi.shape[1], float(self._prior_precision(warn=False))
        const = 0.5 * m * np.log(2 * np.pi / alpha)

        def energy(w):
            a = Phi @ w
            return float(np.sum(log1pexp(a) - t * a) + 0.5 * alpha * (w @ w) + const)

        def grad(w):
            return Phi.T @ (sigmoid(Phi @ w) - t) + alpha * w

        def hess(w):
            mu = sigmoid(Phi @ w)
            H = Phi.T @ ((mu * (1 - mu))[:, None] * Phi)
            H[np.diag_indices(m)] += alpha
            return H

        res = laplace_approximation(energy, grad, hess, np.zeros(m), tol=self.tol, max_iter=self.max_iter)
        self.laplace_ = res
        self.posterior_mean_ = res.mode
        self.posterior_cov_ = res.covariance
        self.log_evidence_ = res.log_evidence
        self.n_iter_ = res.n_iter
        w = res.mode
        self.intercept_ = np.array([w[0] if self.fit_intercept else 0.0])
        self.coef_ = (w[1:] if self.fit_intercept else w).reshape(1, -1)
        return self

    def predictive_moments(self, X):
        """Mean and variance of the activation ``a = w^T phi(x)`` under the Laplace posterior.

        Returns ``(mu_a, var_a)`` with ``mu_a = m^T phi`` and ``var_a = phi^T A^{-1} phi``
        (MLAPP 8.64-8.66), computed as ``||L^{-1} phi||^2`` with ``A = L L^T``.
        """
        X = validate_predict(self, X)
        Phi = self._design(X)
        mu = Phi @ self.posterior_mean_
        V = linalg.solve_triangular(self.laplace_.chol, Phi.T, lower=True)
        return mu, np.sum(V * V, axis=0)

    def sample_posterior(self, n_samples, random_state=None):
        """Draw ``n_samples`` weight vectors from ``N(m, A^{-1})``: ``w = m + L^{-T} z``."""
        check_is_fitted(self)
        rng = np.random.default_rng(random_state)
        z = rng.standard_normal((int(n_samples), self.posterior_mean_.size))
        return self.posterior_mean_ + linalg.solve_triangular(self.laplace_.chol, z.T, lower=True, trans="T").T

    def decision_function(self, X):
        """``mu_a = m^T phi(x)``: the log-odds at the posterior mean (the plug-in logit)."""
        return self.predictive_moments(X)[0]

    def predict_proba(self, X):
        """Posterior predictive ``p(y | x, D)`` by the chosen ``predictive``; shape (n, 2)."""
        mu, var = self.predictive_moments(X)
        if self.predictive == "plugin":
            p1 = sigmoid(mu)
        elif self.predictive == "probit":
            p1 = moderated_sigmoid(mu, var)
        else:
            W = self.sample_posterior(self.n_samples, self.random_state)
            Phi = self._design(validate_predict(self, X))
            p1 = sigmoid(Phi @ W.T).mean(axis=1)
        return np.column_stack([1 - p1, p1])

    def predict(self, X):
        """Class with ``mu_a > 0`` (the plug-in and probit predictives share this boundary)."""
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(int)]
