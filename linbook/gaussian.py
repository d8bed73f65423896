"""Multivariate-normal helpers: log-density by Cholesky, Mahalanobis distance, sampling, entropy.

Every function works with the Cholesky factor ``L`` of the covariance (``Sigma = L L^T``)
and triangular solves, never with an explicit inverse:

* squared Mahalanobis distance ``(x - mu)^T Sigma^{-1} (x - mu) = ||L^{-1}(x - mu)||^2``;
* ``log N(x | mu, Sigma) = -D/2 log(2 pi) - sum_i log L_ii - 1/2 * Mahalanobis^2``
  (``log|Sigma| = 2 sum_i log L_ii``);
* sampling ``x = mu + L z`` with ``z ~ N(0, I)``;
* differential entropy ``h = 1/2 log[(2 pi e)^D |Sigma|]`` in nats.

Derived in: chapter "Gaussian models and GDA" § "The multivariate normal".
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

from .datasets import as_rng

__all__ = ["mvn_cholesky", "mahalanobis", "mvn_logpdf", "mvn_sample", "mvn_entropy"]

_LOG_2PI = np.log(2.0 * np.pi)


def mvn_cholesky(cov, *, what="covariance"):
    """Lower Cholesky factor of a covariance matrix, with a clear error when it is singular.

    Parameters
    ----------
    cov : array_like, shape (D, D)
        Symmetric positive-definite matrix.
    what : str
        Name used in the error message.

    Returns
    -------
    L : ndarray, shape (D, D)
        Lower-triangular with ``L @ L.T == cov``.

    Raises
    ------
    ValueError
        If ``cov`` is not square, not finite, or not positive definite.

    Derived in: chapter "Gaussian models and GDA" § "The multivariate normal".
    """
    cov = np.asarray(cov, dtype=float)
    if cov.ndim != 2 or cov.shape[0] != cov.shape[1]:
        raise ValueError(f"{what} must be a square matrix; got shape {cov.shape}")
    if not np.all(np.isfinite(cov)):
        raise ValueError(f"{what} contains NaN or inf")
    try:
        L = linalg.cholesky(cov, lower=True, check_finite=False)
    except linalg.LinAlgError:
        raise ValueError(f"{what} is not positive definite (singular or indefinite)") from None
    d = np.diag(L)
    # a pivot this small relative to the largest means cond(cov) > ~1e12: singular in float64
    if np.any(d <= 10.0 * np.sqrt(d.size * np.finfo(float).eps) * np.abs(d).max(initial=0.0)):
        raise ValueError(f"{what} is numerically singular")
    return L


def mahalanobis(X, mean, cov=None, *, chol=None):
    """Squared Mahalanobis distances ``(x_i - mu)^T Sigma^{-1} (x_i - mu)``.

    Parameters
    ----------
    X : array_like, shape (N, D) or (D,)
    mean : array_like, shape (D,)
    cov : array_like, shape (D, D), optional
        Covariance; give either ``cov`` or its Cholesky factor ``chol``.
    chol : array_like, shape (D, D), optional
        Lower Cholesky factor of the covariance.

    Returns
    -------
    d2 : ndarray, shape (N,) (or a float for a single point)

    Derived in: chapter "Gaussian models and GDA" § "The multivariate normal".
    """
    X = np.asarray(X, dtype=float)
    single = X.ndim == 1
    X = np.atleast_2d(X)
    L = mvn_cholesky(cov) if chol is None else np.asarray(chol, dtype=float)
    Z = linalg.solve_triangular(L, (X - np.asarray(mean, dtype=float)).T, lower=True, check_finite=False)
    d2 = np.einsum("ij,ij->j", Z, Z)
    return float(d2[0]) if single else d2


def mvn_logpdf(X, mean, cov=None, *, chol=None):
    """Log-density ``log N(x | mu, Sigma)`` of the rows of ``X``, via Cholesky.

    ``log N = -D/2 log(2 pi) - 1/2 log|Sigma| - 1/2 (x - mu)^T Sigma^{-1} (x - mu)``,
    eq. (4.1) of note ``003``.

    Parameters
    ----------
    X : array_like, shape (N, D) or (D,)
    mean : array_like, shape (D,)
    cov : array_like, shape (D, D), optional
    chol : array_like, shape (D, D), optional
        Lower Cholesky factor (instead of ``cov``).

    Returns
    -------
    logp : ndarray, shape (N,) (or a float for a single point)

    Derived in: chapter "Gaussian models and GDA" § "The multivariate normal".
    """
    L = mvn_cholesky(cov) if chol is None else np.asarray(chol, dtype=float)
    d = L.shape[0]
    d2 = mahalanobis(X, mean, chol=L)
    return -0.5 * d * _LOG_2PI - np.sum(np.log(np.diag(L))) - 0.5 * d2


def mvn_sample(mean, cov, size=1, *, random_state=None):
    """Draw ``size`` samples ``mu + L z``, ``z ~ N(0, I)``, ``L L^T = Sigma``.

    Parameters
    ----------
    mean : array_like, shape (D,)
    cov : array_like, shape (D, D)
    size : int
    random_state : int or numpy Generator

    Returns
    -------
    X : ndarray, shape (size, D)

    Derived in: chapter "Gaussian models and GDA" § "The multivariate normal".
    """
    rng = as_rng(random_state)
    mean = np.asarray(mean, dtype=float)
    L = mvn_cholesky(cov)
    Z = rng.standard_normal((int(size), mean.size))
    return mean + Z @ L.T


def mvn_entropy(cov):
    """Differential entropy of ``N(mu, Sigma)`` in nats: ``1/2 log[(2 pi e)^D |Sigma|]`` (eq. 4.25).

    Parameters
    ----------
    cov : array_like, shape (D, D)

    Returns
    -------
    h : float

    Derived in: chapter "Gaussian models and GDA" § "Maximum entropy".
    """
    L = mvn_cholesky(cov)
    d = L.shape[0]
    return 0.5 * d * (_LOG_2PI + 1.0) + float(np.sum(np.log(np.diag(L))))
