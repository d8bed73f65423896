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

from .base import Integral, Interval, as_rng, check_param_values
from .numerics import _binary_exponent, _power_of_two_scale, _refuse_masked
from .optim.result import real_array

__all__ = ["mvn_cholesky", "mahalanobis", "mvn_logpdf", "mvn_sample", "mvn_entropy"]

_LOG_2PI = np.log(2.0 * np.pi)


#: ``mvn_cholesky`` accepts ``|C - C.T| <= SYMMETRY_RTOL * max |C|`` (rounding of a symmetric product), for the
#: correlation-scaled ``C = cov / (e e^T)``, ``e ~ sqrt(diag(cov))``: an asymmetry is judged against the
#: entries' own variances, not against the largest variance of another feature.
SYMMETRY_RTOL = 1e-10
# a Gaussian density needs every variance direction > 0; these are the two ways to get there
_SINGULAR_CURE = ("add a small ridge to its diagonal (cov + eps * I), or drop the linearly dependent features "
                  "so that every direction has positive variance")


def mvn_cholesky(cov, *, what="covariance"):
    """Lower Cholesky factor of a covariance matrix, with a clear error when it is singular.

    Parameters
    ----------
    cov : array_like, shape (D, D)
        Symmetric positive-definite matrix.
    what : str
        Name used in the error message, followed by the argument's name: "covariance (cov) ...".

    Returns
    -------
    L : ndarray, shape (D, D)
        Lower-triangular with ``L @ L.T == cov``.

    Raises
    ------
    ValueError
        If ``cov`` is not square, not finite, not symmetric (to ``SYMMETRY_RTOL``, relative to
        ``sqrt(cov_ii cov_jj)``) or not positive definite (judged on its correlation matrix, so
        features in different units are not "singular").

    Derived in: chapter "Gaussian models and GDA" § "The multivariate normal".
    """
    what = f"{what} (cov)"           # the error names the argument to fix as well as what it is
    if np.iscomplexobj(cov) or hasattr(cov, "toarray"):
        raise TypeError(f"{what} must be a dense real matrix; got {type(cov).__name__} of "
                        f"{getattr(cov, 'dtype', 'unknown dtype')}. Pass a real numpy array (.toarray() for a sparse one)")
    _refuse_masked(cov, "cov")
    cov = np.asarray(cov, dtype=float)
    if cov.ndim != 2 or cov.shape[0] != cov.shape[1]:
        raise ValueError(f"{what} must be a square matrix; got shape {cov.shape}. Pass a D x D array")
    if not np.all(np.isfinite(cov)):
        raise ValueError(f"{what} contains NaN or inf: pass a finite covariance matrix (fix how it was estimated)")
    # Work on C = cov / (e e^T), e_j a power of two near sqrt(cov_jj) (exact): features in different
    # units (variances 1e-16 and 1e16) make cov ill-conditioned but not its correlation matrix, and the
    # density depends on the correlation only (plus log e). Symmetry and singularity are judged on C.
    e = _unit_scales(cov, what)
    C = cov / np.outer(e, e)
    # the factorisation reads one triangle only: a non-symmetric matrix would be used as another matrix
    asymmetry = np.max(np.abs(C - C.T), initial=0.0)
    if asymmetry > SYMMETRY_RTOL * np.max(np.abs(C), initial=0.0):
        raise ValueError(f"{what} must be symmetric; |cov - cov.T| reaches {np.max(np.abs(cov - cov.T)):.3g}. A "
                         "covariance is symmetric: pass (cov + cov.T) / 2 if the asymmetry is rounding, or check "
                         "how it was built.")
    try:
        L = linalg.cholesky(C, lower=True, check_finite=False)
    except linalg.LinAlgError:
        raise ValueError(f"{what} is not positive definite (singular or indefinite): {_SINGULAR_CURE}") from None
    if tiny_pivot(np.diag(L)):
        raise ValueError(f"{what} is numerically singular (its correlation matrix has condition number > ~1e12): "
                         f"{_SINGULAR_CURE}")
    return L * e[:, None]                        # the factor of cov: diag(e) times that of C


def _unit_scales(cov, what):
    """Powers of two near ``sqrt(diag(cov))`` (exact to divide by), or a clear error if a variance is not positive."""
    var = np.diag(cov)
    if np.any(var <= 0):
        j = int(np.flatnonzero(var <= 0)[0])
        raise ValueError(f"{what} is singular or not positive definite: its diagonal entry {j} (a variance) is "
                         f"{var[j]:g}; "
                         f"{_SINGULAR_CURE}")
    return _power_of_two_scale(np.sqrt(var), below=True)     # sqrt(var_j) / e_j in [1, 2)


def tiny_pivot(d):
    """Whether the pivots ``d`` (the diagonal of a Cholesky factor) hold one so small relative to
    the largest that ``cond(cov) > ~1e12``: singular in float64."""
    return bool(np.any(d <= 10.0 * np.sqrt(d.size * np.finfo(float).eps) * np.abs(d).max(initial=0.0)))


def _points(X, mean, L):
    """``X`` as a finite (N, D) array and ``mean`` as a finite (D,) array matching ``L``, or a clear error."""
    _refuse_masked(X, "X")
    _refuse_masked(mean, "mean")
    X = real_array(X, "X")             # complex, strings, sparse: an error naming X (numpy's names nothing)
    single = X.ndim <= 1                # one point: (D,), or a number when D = 1
    X = np.atleast_2d(X)
    mean = real_array(mean, "mean").ravel()
    D = L.shape[0]
    if X.ndim != 2 or X.shape[1] != D or mean.size != D:
        raise ValueError(f"points must have shape (N, {D}) and mean shape ({D},) to match the {D} x {D} "
                         f"covariance; got X {X.shape} and mean {mean.shape}. Reshape X to (N, {D}) and pass "
                         f"a mean of {D} entries")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(mean))):
        raise ValueError("X and mean must be finite (no NaN or inf); drop or impute missing values")
    return X, mean, single


def _chol(cov, chol):
    if cov is not None and chol is not None:
        raise ValueError("give the covariance cov or its Cholesky factor chol, not both (one would be ignored): "
                         "pass chol=None, or cov=None")
    if chol is None:
        if cov is None:
            raise ValueError("give the covariance cov or its Cholesky factor chol")
        return mvn_cholesky(cov)
    L = np.asarray(chol, dtype=float)
    if (L.ndim != 2 or L.shape[0] != L.shape[1] or not np.all(np.isfinite(L)) or np.any(np.diag(L) <= 0)
            or np.any(np.triu(L, 1) != 0)):
        raise ValueError("chol must be a square lower-triangular Cholesky factor with a positive, finite "
                         "diagonal; use linbook.mvn_cholesky(cov) to compute it")
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
    L = _chol(cov, chol)
    X, mean, single = _points(X, mean, L)
    q, s = _scaled_squared_distances(X, mean, L)
    with np.errstate(over="ignore", under="ignore"):    # a point ~1e154 standard deviations away: inf, as rounded
        d2 = np.ldexp(q, 2 * s)
    return float(d2[0]) if single else d2


def _scaled_squared_distances(X, mean, L):
    """``(q, s)`` with ``||L^{-1}(x_i - mean)||^2 = q_i 4^{s_i}``, without overflow or underflow on the way.

    Why: ``L^{-1}(x - mean)`` formed as it stands overflows part-way for a point far out along a direction of
    tiny variance (variance 1e-300, a point 1e300 away: an inf, then ``0 * inf`` in the triangular solve, and
    the distance came out NaN), and ``x - mean`` overflows for entries of opposite signs near 1e308. Powers of
    two bring every factor near 1 exactly: ``L = diag(2^f) L'`` (rows of ``L'`` at most 1 in magnitude), each
    residual ``(x_ij - mean_j) / 2^f_j = 2^{s_i} U_ij`` with ``|U_ij| <= 2``; then ``q_i = ||L'^{-1} U_i||^2``.
    """
    f = _binary_exponent(np.max(np.abs(L), axis=1, initial=0.0))
    t = _binary_exponent(np.maximum(np.abs(X), np.abs(mean)))     # x_ij and mean_j over 2^t_ij: below 1
    R = np.ldexp(X, -t) - np.ldexp(mean, -t)                        # (x_ij - mean_j) / 2^t_ij, |R| < 2
    g = t - f                                                       # residual over 2^f_j = R_ij 2^g_ij
    s = np.max(np.where(R != 0, g, np.iinfo(np.int32).min), axis=1, initial=np.iinfo(np.int32).min)
    s = np.where(np.any(R != 0, axis=1), s, 0)
    U = np.ldexp(R, g - s[:, None])
    Z = linalg.solve_triangular(np.ldexp(L, -f[:, None]), U.T, lower=True, check_finite=False)
    with np.errstate(over="ignore", invalid="ignore"):      # only for distances far beyond float64
        q = np.einsum("ij,ij->j", Z, Z)
    return np.where(np.isnan(q), np.inf, q), s


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
    L = _chol(cov, chol)
    X, mean, single = _points(X, mean, L)
    q, s = _scaled_squared_distances(X, mean, L)
    with np.errstate(over="ignore", under="ignore"):
        half_d2 = np.ldexp(q, 2 * s - 1)        # (d2 / 2 may be a double where d2 is not)
    logp = -0.5 * L.shape[0] * _LOG_2PI - np.sum(np.log(np.diag(L))) - half_d2
    return float(logp[0]) if single else logp


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
    check_param_values("mvn_sample", {"size": [Interval(Integral, 0, None, closed="left")]}, {"size": size})
    rng = as_rng(random_state)
    # numpy's rng.multivariate_normal(method="cholesky") draws the same way, but without
    # mvn_cholesky's checks (symmetric, not singular): the factor is ours
    L = mvn_cholesky(cov)
    _, mean, _ = _points(np.zeros(L.shape[0]), mean, L)
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
