"""Maximum likelihood, MAP and Bayesian estimation of simple models.

Conventions (see the chapter "Estimation: MLE, MAP and Bayes" § "Using linbook"):

* data come as numpy arrays, one sample per row (``X`` of shape ``(N, D)``) or a
  1-D array of ``N`` scalar samples;
* a ``*_mle`` function returns the maximum-likelihood estimate; where the book
  also uses an unbiased variant it is a keyword (``unbiased=True``), never the
  default, so that "MLE" always means the argmax of the likelihood;
* log-likelihoods and log marginal likelihoods are *summed* over samples, in nats;
* bad input (empty data, NaN/inf, labels outside ``{0, 1}``, non-positive prior
  parameters, singular covariances) raises a ``ValueError`` saying what is wrong.

Derived in: chapter "Estimation: MLE, MAP and Bayes".
"""

from __future__ import annotations

from numbers import Real

import numpy as np

from ._design import column_means
from .base import POSITIVE, Interval, all_or_nothing, check_param_values
from .numerics import _power_of_two_scale, _refuse_masked, log1pexp
from .optim.result import real_array

__all__ = [
    "bernoulli_mle",
    "gaussian_mle",
    "mvn_mle",
    "mvn_log_likelihood",
    "BetaBernoulli",
    "ridge_lambda_from_prior",
    "lasso_lambda_from_prior",
]


def _as_finite(x, name, ndim):
    _refuse_masked(x, name)
    x = real_array(x, name)
    if x.ndim not in ndim:
        raise ValueError(f"{name} must be {' or '.join(f'{d}-D' for d in ndim)}; got shape {x.shape}. Reshape {name} "
                         "to one row per sample")
    if x.shape[0] == 0:
        raise ValueError(f"{name} is empty: an estimate needs at least one sample")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} contains NaN or inf: drop or impute the missing samples (an estimate "
                         "from the finite ones is the caller's choice, not silently made here)")
    return x


def _as_binary(x, name="x"):
    """1-D float array of 0/1 values (accepts bool); empty is allowed here."""
    _refuse_masked(x, name)
    x = np.asarray(x)
    if x.dtype == bool:
        x = x.astype(float)
    x = real_array(x, name).ravel() if x.ndim == 0 else real_array(x, name)
    if x.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of 0/1 outcomes; got shape {x.shape}. Pass {name} "
                         "flattened (x.ravel()), one outcome per trial")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} contains NaN or inf: drop or impute the missing outcomes")
    if not np.all((x == 0) | (x == 1)):
        bad = np.unique(x[(x != 0) & (x != 1)])[:5]
        raise ValueError(f"{name} must contain only 0 and 1 (Bernoulli outcomes); found {bad.tolist()}. "
                         f"Encode the outcomes as 0/1 first, e.g. {name} == positive_label")
    return x


def bernoulli_mle(x):
    """Maximum-likelihood estimate of a Bernoulli parameter.

    Maximises ``sum_i [x_i log theta + (1 - x_i) log(1 - theta)]``; the maximiser
    is the fraction of ones, ``N_1 / N`` (it is 0 or 1 when all outcomes agree).

    Parameters
    ----------
    x : array_like of shape (N,)
        Outcomes in ``{0, 1}`` (booleans are accepted), ``N >= 1``.

    Returns
    -------
    float
        ``theta_hat = N_1 / N``.

    Raises
    ------
    ValueError
        If ``x`` is empty, not 1-D, contains NaN/inf or values other than 0 and 1.

    Derived in: chapter "Estimation: MLE, MAP and Bayes" § "Maximum likelihood".
    """
    x = _as_binary(x)
    if x.size == 0:
        raise ValueError("x is empty: the Bernoulli MLE needs at least one outcome; pass one or more 0/1 outcomes")
    return float(x.mean())


def _scatter_about_the_mean(R):
    """``sum_i r_i r_i^T`` about the exact mean, from the residuals ``R`` about the rounded mean ``m``.

    ``sum (z - m)^2`` exceeds the scatter about the exact mean by ``N (mean - m)^2``, which is not negligible
    where the spread is a few units in the last place of the mean (``1e6 + 1e-10`` noise: the variance came out
    1.6x too large). ``sum r = N (mean - m)`` measures it: subtract ``(sum r)^2 / N`` (the corrected two-pass
    algorithm; Chan, Golub & LeVeque 1983).
    """
    n, r = R.shape[0], R.sum(axis=0)
    if R.ndim == 1:
        return max(R @ R - r * r / n, 0.0)
    scatter = R.T @ R - np.outer(r, r) / n
    np.fill_diagonal(scatter, np.maximum(np.diag(scatter), 0.0))
    return scatter


def gaussian_mle(X, *, unbiased=False):
    """Maximum-likelihood mean and (co)variance of Gaussian samples.

    The MLE of the covariance divides the scatter matrix by ``N``:
    ``Sigma_hat = (1/N) sum_i (x_i - xbar)(x_i - xbar)^T``. It is biased,
    ``E[Sigma_hat] = (N-1)/N Sigma``, but asymptotically unbiased. With
    ``unbiased=True`` the scatter is divided by ``N - 1`` instead (the sample
    covariance; this is *not* the MLE).

    Parameters
    ----------
    X : array_like of shape (N,) or (N, D)
        Samples, one per row; a 1-D array is ``N`` scalar samples.
    unbiased : bool, default False
        Divide by ``N - 1`` (needs ``N >= 2``) instead of ``N``.

    Returns
    -------
    mean : float or ndarray of shape (D,)
        The sample mean ``xbar``.
    cov : float or ndarray of shape (D, D)
        The variance (1-D input) or covariance matrix.

    Raises
    ------
    ValueError
        Empty input, NaN/inf, more than 2 dimensions, or ``unbiased`` with ``N < 2``.

    Derived in: chapter "Estimation: MLE, MAP and Bayes" § "Maximum likelihood".
    """
    check_param_values("gaussian_mle", {"unbiased": ["boolean"]}, {"unbiased": unbiased})
    X = _as_finite(X, "X", (1, 2))
    n = X.shape[0]
    if unbiased and n < 2:
        raise ValueError(f"X has {n} sample: the unbiased (N-1) covariance needs at least 2 samples. Pass more rows "
                         "of X, or use unbiased=False (the MLE, 0 for one sample)")
    # work on X / c, c_j a power of two near max|X_j| for each column j (exact), so that sums of
    # squares of data near 1e300 or 1e-200 neither overflow nor underflow; scale back at the end.
    # One c per column: with one c for all, a column of 1e-100 next to one of 1e100 had its
    # squares (1e-400) underflow to a variance of 0, although 1e-200 is a double.
    c = _power_of_two_scale(np.max(np.abs(X), axis=0), below=True)
    Z = X / c
    mz = column_means(Z.reshape(n, -1)).reshape(Z.shape[1:])   # a constant column: variance exactly 0
    R = Z - mz
    S = _scatter_about_the_mean(R) / (n - 1 if unbiased else n)
    with np.errstate(over="ignore", under="ignore"):
        # (S c_i) c_j, not S (c_i c_j): c_i c_j overflows for data near 1e308, and 0 * inf made the variance of
        # a constant column there NaN (refused as an overflow, though it is 0)
        mean, cov = mz * c, np.multiply.outer(S * c, c) if X.ndim == 1 else (S * c[:, None]) * c[None, :]
    if not np.all(np.isfinite(cov)):
        raise ValueError("the (co)variance of X overflows float64 (|X| near 1e154 or more): rescale "
                         "the data (e.g. divide by its largest entry) before estimating.")
    if np.any((S != 0) & (np.abs(cov) < np.finfo(float).tiny)):
        raise ValueError("the (co)variance of X underflows float64 (|X| near 1e-154 or less): rescale "
                         "the data (e.g. divide by its largest entry) before estimating.")
    if X.ndim == 1:
        return float(mean), float(cov)
    return mean, cov


def mvn_mle(X):
    """Maximum-likelihood estimate of a multivariate normal, theorem 4.1.1 of MLAPP.

    ``mu_hat = xbar`` and ``Sigma_hat = (1/N) sum_i (x_i - xbar)(x_i - xbar)^T``
    (eqs. (4.6)-(4.7) of the notes).

    Parameters
    ----------
    X : array_like of shape (N, D)
        Samples, one per row.

    Returns
    -------
    mean : ndarray of shape (D,)
    cov : ndarray of shape (D, D)
        Singular when ``N <= D`` or the data lie in a subspace (then the
        likelihood has no maximum; see :func:`mvn_log_likelihood`).

    Raises
    ------
    ValueError
        If ``X`` is not 2-D, empty, or contains NaN/inf.

    Derived in: chapter "Estimation: MLE, MAP and Bayes" § "MLE of the multivariate normal".
    """
    X = _as_finite(X, "X", (2,))
    return gaussian_mle(X)


def mvn_log_likelihood(X, mean, cov):
    """Summed log-likelihood ``sum_i log N(x_i | mean, cov)`` in nats.

    ``-N D/2 log(2 pi) - N/2 log|cov| - 1/2 sum_i (x_i - mean)^T cov^{-1} (x_i - mean)``,
    computed with a Cholesky factor (no inverse).

    Parameters
    ----------
    X : array_like of shape (N, D)
    mean : array_like of shape (D,)
    cov : array_like of shape (D, D)
        Symmetric positive definite.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Wrong shapes, NaN/inf, or a covariance that is not symmetric positive definite.

    Derived in: chapter "Estimation: MLE, MAP and Bayes" § "MLE of the multivariate normal".
    """
    X = _as_finite(X, "X", (2,))
    d = X.shape[1]
    _refuse_masked(mean, "mean")
    _refuse_masked(cov, "cov")
    mean, cov = real_array(mean, "mean"), real_array(cov, "cov")     # (complex: an error, not a dropped part)
    if mean.shape != (d,) or cov.shape != (d, d):
        raise ValueError(f"mean must have shape ({d},) and cov ({d}, {d}); got {mean.shape} and {cov.shape}. "
                         "Pass one mean entry per column of X and a square cov of that size")
    if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(cov))):
        raise ValueError("mean and cov must be finite (no NaN or inf): fix how they were estimated")
    # linbook's one covariance check (symmetric and positive definite relative to each entry's own
    # variances, so that units do not matter) and its Cholesky factor L; then log|cov| = 2 sum log L_ii
    # and the Mahalanobis terms are ||L^{-1}(x_i - mean)||^2, per row by mvn_logpdf (a far point along a
    # direction of tiny variance gives -inf there, not NaN; x - mean near 1e308 does not overflow)
    from .gaussian import mvn_cholesky, mvn_logpdf
    with np.errstate(over="ignore"):          # a sum below -1.8e308: -inf, as rounded
        return float(np.sum(mvn_logpdf(X, mean, chol=mvn_cholesky(cov))))


def _shares(a, b):
    """``(a / (a + b), b / (a + b))`` for ``a, b >= 0``, not both 0.

    Both counts are divided by the larger first: near ``1e308`` the sum ``a + b`` itself
    overflows to inf and the plain quotient comes out 0 (or NaN).
    """
    s = max(a, b)
    a, b = a / s, b / s
    return a / (a + b), b / (a + b)


def _less_one(prior, count):
    """``prior + count - 1`` in one rounding (``count`` an integer)."""
    return float(prior) + (count - 1) if count >= 1 else float(prior) - 1.0


def _log_share(x, y):
    """``log(x / (x + y))`` elementwise for ``x, y > 0``, to a few ulps, without forming ``x + y``.

    (``linbook.numerics.log_sigmoid(log x - log y)`` is the same quantity, but the subtraction
    loses ``eps |log x|`` absolutely, up to ~1e-13 of a tiny result.)
    For ``y <= x`` it is ``-log1p(y / x)``: no cancellation however small ``y / x`` is.
    For ``y > x`` it is ``log(x / y) - log1p(x / y)``; when ``x / y`` underflows (``x`` below
    ``y`` by 300 orders or more) ``log x - log y`` is used instead, far from cancelling there.
    """
    x, y = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):   # (the branch not taken)
        r = y / x
        q = x / y
        log_q = np.where(q >= np.finfo(float).tiny, np.log(q), np.log(x) - np.log(y))
        return np.where(r <= 1, -np.log1p(r), log_q - np.log1p(q))


_CHAIN_BLOCK = 1 << 16      # terms of the chain rule per vectorised block (bounds the memory)


def _log_chain(x, y, count):
    """``sum_{i < count} log((x + i) / (x + i + y))``: the log-probability of ``count`` outcomes of
    one kind in a row, under pseudo-counts ``x`` for that kind and ``y`` for the other."""
    total = 0.0
    for start in range(0, count, _CHAIN_BLOCK):
        i = np.arange(start, min(count, start + _CHAIN_BLOCK), dtype=float)
        total += float(np.sum(_log_share(x + i, y)))
    return total


class BetaBernoulli:
    """Conjugate beta-Bernoulli model: prior ``theta ~ Beta(a, b)``, ``x_i | theta ~ Ber(theta)``.

    After ``N_1`` ones and ``N_0`` zeros the posterior is
    ``Beta(a + N_1, b + N_0)``; ``update`` adds data sequentially (the posterior
    after two batches equals the posterior after their union).

    Parameters
    ----------
    a, b : float, default 1.0
        Prior pseudo-counts of ones and zeros, both ``> 0``; ``a = b = 1`` is the
        uniform prior.

    Attributes
    ----------
    a_n_, b_n_ : float
        Posterior parameters ``a + N_1`` and ``b + N_0``.
    n1_, n0_ : int
        Numbers of ones and zeros seen so far.

    Derived in: chapter "Estimation: MLE, MAP and Bayes" § "MAP with a conjugate prior".
    """

    def __init__(self, a=1.0, b=1.0):
        self.a = a
        self.b = b

    def get_params(self, deep=True):
        """Prior parameters as a dict (scikit-learn style)."""
        return {"a": self.a, "b": self.b}

    def set_params(self, **params):
        """Set prior parameters (scikit-learn style); call ``fit`` again afterwards."""
        for k, v in params.items():
            if k not in ("a", "b"):
                raise ValueError(f"unknown parameter {k!r}; BetaBernoulli takes a and b")
            setattr(self, k, v)
        return self

    def __repr__(self):
        return f"BetaBernoulli(a={self.a!r}, b={self.b!r})"

    def _check_prior(self):
        check_param_values("BetaBernoulli", {"a": [POSITIVE], "b": [POSITIVE]}, {"a": self.a, "b": self.b})

    @all_or_nothing
    def fit(self, x, y=None):
        """Posterior from the prior and the outcomes ``x`` (forgets earlier data). Returns self."""
        self._check_prior()
        self.n1_, self.n0_ = 0, 0
        self.a_n_, self.b_n_ = float(self.a), float(self.b)
        return self.update(x)

    def update(self, x):
        """Add outcomes ``x`` (0/1, may be empty) to the posterior. Returns self."""
        self._check_prior()
        x = _as_binary(x)
        if not hasattr(self, "a_n_"):
            self.n1_, self.n0_ = 0, 0
        n1 = int(x.sum())
        self.n1_ += n1
        self.n0_ += int(x.size - n1)
        self.a_n_ = float(self.a) + self.n1_
        self.b_n_ = float(self.b) + self.n0_
        return self

    def _post(self):
        if not hasattr(self, "a_n_"):
            raise ValueError("BetaBernoulli is not fitted: call fit(x) (fit([]) gives the prior)")
        return self.a_n_, self.b_n_

    def posterior(self):
        """The posterior as a frozen ``scipy.stats.beta`` distribution."""
        a, b = self._post()
        from scipy import stats  # imported here: scipy.stats would double `import linbook`

        return stats.beta(a, b)

    def posterior_mean(self):
        """``E[theta | S] = (a + N_1) / (a + b + N)``."""
        a, b = self._post()
        return _shares(a, b)[0]

    def map_estimate(self):
        """Mode of the posterior ``Beta(alpha, beta)``.

        ``(alpha - 1) / (alpha + beta - 2)`` when ``alpha, beta >= 1`` and
        ``alpha + beta > 2``; ``0`` when ``alpha < 1 <= beta``; ``1`` when
        ``beta < 1 <= alpha``. With a uniform prior it equals the MLE ``N_1/N``.

        Raises
        ------
        ValueError
            When the mode is not unique (``alpha = beta = 1``: flat posterior;
            ``alpha, beta < 1``: modes at both 0 and 1).
        """
        a, b = self._post()
        if a >= 1 and b >= 1:
            if a + b == 2:
                raise ValueError("the posterior is uniform (a_n = b_n = 1): every theta is a MAP estimate; use "
                                 "posterior_mean() (1/2), or set a prior a, b with a unique mode (a + b > 2)")
            # (a_n - 1) / (a_n + b_n - 2), each a_n - 1 as (N_1 - 1) + a: one rounding (a_n - 1 formed from
            # a_n = 1e-8 + 1 kept 8 digits)
            return _shares(_less_one(self.a, self.n1_), _less_one(self.b, self.n0_))[0]
        if a < 1 <= b:
            return 0.0
        if b < 1 <= a:
            return 1.0
        raise ValueError("the posterior Beta(a_n, b_n) with a_n, b_n < 1 is U-shaped: modes at 0 and 1; use "
                         "posterior_mean(), or set a prior a, b >= 1")

    def predictive_proba(self, x=1):
        """Posterior predictive ``p(x | S) = int Ber(x | theta) Beta(theta | a_n, b_n) dtheta``.

        Equals ``a_n / (a_n + b_n)`` for ``x = 1`` (the posterior mean; with the
        uniform prior this is Laplace's rule of succession ``(N_1 + 1) / (N + 2)``)
        and ``b_n / (a_n + b_n)`` for ``x = 0``.

        Parameters
        ----------
        x : {0, 1} or array_like of them, default 1

        Returns
        -------
        float or ndarray
        """
        a, b = self._post()
        xs = _as_binary(np.atleast_1d(x))
        p1, p0 = _shares(a, b)
        p = np.where(xs == 1, p1, p0)
        return float(p[0]) if np.ndim(x) == 0 else p

    def log_marginal_likelihood(self):
        """``log p(S) = log B(a + N_1, b + N_0) - log B(a, b)`` for the observed sequence (nats).

        Computed by the chain rule ``log p(S) = sum_i log p(x_i | x_<i)`` with the ones first
        (the outcomes are exchangeable, so any order gives the same product):
        ``sum_{i < N_1} log((a + i) / (a + b + i)) + sum_{j < N_0} log((b + j) / (a + b + N_1 + j))``.
        Every term is a log-probability ``<= 0`` computed to a few ulps, so the sum is accurate
        for all ``a, b > 0``. The difference of log-beta functions is not: for a strong prior
        (``a, b`` of ``1e12`` or more) both are huge and nearly equal, and their difference
        loses every digit (it can even come out positive). The cost is ``O(N)``, like ``fit``.
        """
        self._post()
        a, b = float(self.a), float(self.b)
        ones = _log_chain(a, b, self.n1_)
        zeros = _log_chain(b, a + self.n1_, self.n0_)
        return ones + zeros

    def credible_interval(self, level=0.95):
        """Equal-tailed posterior credible interval ``(lower, upper)`` of probability ``level``.

        When the posterior is narrower than the rounding of its mean (both pseudo-counts
        beyond about ``1e35``; the interval's half-width is ``z sd``, ``sd`` the posterior
        standard deviation) the interval is ``(mean, mean)``, which also covers counts whose sum
        overflows.

        Raises
        ------
        ValueError
            When the beta quantile function cannot be evaluated at these counts (their sum
            overflows and the posterior is not that narrow, or the quantiles come out NaN or
            out of order).
        """
        check_param_values("credible_interval", {"level": [Interval(Real, 0.0, 1.0, closed="neither")]},
                           {"level": level})
        a, b = self._post()
        from scipy import stats

        # the larger relative sd, of theta or of 1 - theta: sqrt(max(a, b) / (min(a, b) (a + b + 1))),
        # in logs because a + b may overflow
        # (log1p((small + 1) / big) as log1pexp of a difference of logs: the quotient overflows for subnormal
        # counts, and a = b = 5e-324 (U-shaped, the interval ~(0, 1)) counted as narrow: (0.5, 0.5))
        small, big = min(a, b), max(a, b)
        log_rel_sd = -0.5 * (np.log(small) + log1pexp(np.log1p(small) - np.log(big)))
        z = stats.norm.isf((1 - level) / 2)
        # max(z, 1) sd < eps mean / e^2: every quantile within z sd (and the median) rounds to the mean. (With z
        # itself, a level near 0 (z -> 0) counted as narrow: Beta(1, 10) at level 1e-20 gave the mean, 0.0909,
        # for the median, 0.0670.)
        if log_rel_sd + np.log(max(z, 1.0)) < np.log(np.finfo(float).eps) - 2:
            mean = self.posterior_mean()
            return mean, mean
        lo, hi = _beta_quantiles([(1 - level) / 2, (1 + level) / 2], a, b)
        if not (np.isfinite(lo) and np.isfinite(hi) and lo <= hi):     # lo > hi: scipy lost its accuracy
            raise ValueError(
                f"the credible interval of the posterior Beta({a:g}, {b:g}) cannot be computed: the beta "
                f"quantile function fails at these counts (prior a={self.a!r}, b={self.b!r}). Use prior "
                "pseudo-counts between 1e-300 and 1e300, or a normal approximation from posterior_mean().")
        return float(lo), float(hi)


#: ``Beta(a, b)`` with ``b`` at least this many times ``max(a, 1)`` is ``Gamma(a, 1) / b`` to float64's precision.
_GAMMA_LIMIT = 1e32
#: ``Beta(a, b)`` with both counts at least this is its Cornish-Fisher expansion to float64's precision
#: (see :func:`_cornish_fisher_quantiles`).
_NORMAL_LIMIT = 1e10


def _cornish_fisher_quantiles(q, a, b):
    """Quantiles ``q`` of ``Beta(a, b)`` for ``a, b >= 1e10``: ``mean + sd (z + (z^2 - 1) skew / 6)``, ``z`` the
    normal quantile (the first-order Cornish-Fisher expansion).

    Why: scipy's beta quantiles drift for such counts (``Beta(1e15, 3e15)``: the lower end 0.77 sd off, in
    silence; NaN from ``Beta(2e16, 1e17)`` on), yet the interval is ~1e-8 wide. The expansion's error is
    ``~skew^2 sd``, ``skew ~ 2 / sqrt(min(a, b))``: 4e-10 sd at 1e10 (scipy agrees there to 4e-11 sd). Formed
    from the shares ``a / (a + b)``, ``b / (a + b)`` and ``sqrt(a + b + 1)`` with ``max(a, b)`` factored out,
    so that ``a + b`` may overflow.
    """
    from scipy import stats

    p1, p0 = _shares(a, b)
    big = max(a, b)
    root_n = np.sqrt(big) * np.sqrt(min(a, b) / big + 1.0 + 1.0 / big)        # sqrt(a + b + 1)
    sd = np.sqrt(p1 * p0) / root_n
    skew = 2.0 * (p0 - p1) / (np.sqrt(p1 * p0) * root_n)       # (to a relative 1 / (a + b), far below its effect)
    z = stats.norm.ppf(q)
    return p1 + sd * (z + (z * z - 1.0) * skew / 6.0)


def _beta_quantiles(q, a, b):
    """Quantiles ``q`` of ``Beta(a, b)``; NaN where they cannot be computed.

    When one count dwarfs the other, ``theta = G_a / (G_a + G_b)`` with ``G_b / b = 1 + O(b^-1/2)``: ``theta = G_a
    / b`` to ``1e-16`` relative beyond :data:`_GAMMA_LIMIT` (and ``1 - theta = G_b / a`` when ``a`` is the larger);
    both counts beyond :data:`_NORMAL_LIMIT`: :func:`_cornish_fisher_quantiles`. Otherwise the root of the
    distribution function (:func:`_quantile_by_root`), on the side of the smaller count.

    Why not ``scipy.stats.beta.ppf``: at counts far apart it is wrong in silence (``Beta(1000, 1e20)``: ``1.5e-8``
    for both ends, which are ``9.4e-18`` and ``1.06e-17``; scipy 1.17), returns NaN (``Beta(50, 1e200)``), puts
    the ends out of order (``Beta(1e9, 1000)``) or, in scipy 1.10, never returns (``Beta(1000, 1e30)``); it drifts
    for large counts and raises ``OverflowError`` for subnormal ones.
    """
    from scipy import stats

    q = np.asarray(q, dtype=float)
    if min(a, b) >= _NORMAL_LIMIT:
        return _cornish_fisher_quantiles(q, a, b)
    if b >= _GAMMA_LIMIT * max(a, 1.0):
        return stats.gamma.ppf(q, a) / b
    if a >= _GAMMA_LIMIT * max(b, 1.0):
        return 1.0 - stats.gamma.isf(q, b) / a
    if np.isinf(a + b) or min(a, b) < np.finfo(float).tiny:      # (scipy's betainc is wrong at subnormal counts)
        return np.full(q.shape, np.nan)
    if max(a, b) <= _TINY_COUNTS:
        return _tiny_count_quantiles(q, a, b)
    if a > b:                          # 1 - theta ~ Beta(b, a): the small side keeps its digits
        return 1.0 - np.array([_quantile_by_root(1.0 - qi, b, a) for qi in q.ravel()]).reshape(q.shape)
    return np.array([_quantile_by_root(qi, a, b) for qi in q.ravel()]).reshape(q.shape)


#: ``Beta(a, b)`` with both counts at most this is :func:`_tiny_count_quantiles` to float64's precision.
_TINY_COUNTS = 1e-17


def _tiny_count_quantiles(q, a, b):
    """Quantiles ``q`` of ``Beta(a, b)`` for ``a, b <= 1e-17``: the mass ``b / (a + b)`` sits at 0 with
    ``P(theta <= x) = b / (a + b) x^a`` and the rest at 1 with ``P(theta >= 1 - x) = a / (a + b) x^b``, to a
    relative ``O(a + b)`` (``I_x(a, b) = x^a (1 - x)^b 2F1(a + b, 1; a + 1; x) / (a B(a, b))`` and ``a B(a, b) = (a
    + b) / b (1 + O(a b))``). Why: scipy's ``betainc`` is wrong at such counts in some releases (1.12: ``(0.5,
    0.5)`` for ``Beta(1e-300, 1e-300)``, whose interval is ``(0, 1)``)."""
    p1, p0 = _shares(a, b)
    with np.errstate(divide="ignore", over="ignore", under="ignore", invalid="ignore"):
        at_zero = np.exp(np.log(q / p0) / a)
        at_one = 1.0 - np.exp(np.log((1.0 - q) / p1) / b)
    return np.where(q <= p0, at_zero, at_one)


def _quantile_by_root(q, a, b):
    """The ``q`` quantile of ``Beta(a, b)`` (``a <= b``, ``a + b`` finite, no subnormal count): the root of
    ``I_x(a, b) = q`` (``scipy.special.betainc``, or ``betaincc`` for the upper tail) by Brent's method, bracketed
    by Cantelli's inequality, ``P(theta <= mean - k sd) <= 1 / (1 + k^2)``, which holds for every distribution (so
    a bracket the distribution function does not straddle means that function failed here: NaN, not a guess); NaN
    where the root is not found."""
    from scipy import optimize, special

    if q <= 0.0 or q >= 1.0:
        return float(q >= 1.0)
    mean = _shares(a, b)[0]
    sd = np.sqrt(mean * _shares(a, b)[1]) / np.sqrt(a + b + 1.0)
    lo = max(0.0, mean - 2.0 * sd * np.sqrt((1.0 - q) / q))         # (twice the bound: room for rounding)
    hi = min(1.0, mean + 2.0 * sd * np.sqrt(q / (1.0 - q)))

    def excess(x):                    # (the upper tail by betaincc: betainc near 1 is 1e-11 off at Beta(30, 1e7))
        return special.betainc(a, b, x) - q if q <= 0.5 else (1.0 - q) - special.betaincc(a, b, x)

    if q <= 0.5 and excess(1e-300) >= 0.0:
        # below 1e-300 I_x(a, b) = x^a / (a B(a, b)) to a relative 1e-300: its inverse, where betainc loses its
        # digits among the subnormals (Beta(0.05, 0.05) at q = 2^-53: the root ~7e-314 was not found)
        return float(np.exp((np.log(q) + np.log(a) + special.betaln(a, b)) / a))
    if excess(5e-324) >= 0.0:         # the distribution function reaches q at the smallest positive double
        return 0.0
    if excess(np.nextafter(1.0, 0.0)) < 0.0:
        return 1.0
    low, high = excess(lo), excess(hi)
    if not (low <= 0.0 <= high):
        return np.nan
    if low == 0.0 or high == 0.0:
        return lo if low == 0.0 else hi
    try:                # (xtol: the smallest subnormal, so that a quantile of 1e-320 keeps its digits)
        return optimize.brentq(excess, lo, hi, xtol=5e-324, rtol=4 * np.finfo(float).eps, maxiter=2200)
    except RuntimeError:
        return np.nan


def _check_positive(v, name, caller):
    check_param_values(caller, {name: [POSITIVE]}, {name: v})


def _representable_ratio(noise_var, prior, caller, prior_name):
    """``noise_var / prior``, or a clear error when the quotient overflows to inf or underflows to 0
    (a penalty of inf or 0 would be another model, silently)."""
    with np.errstate(over="ignore", under="ignore"):
        lam = float(np.float64(noise_var) / np.float64(prior))
    if not (np.isfinite(lam) and lam >= np.finfo(float).tiny):
        raise ValueError(f"{caller}: noise_var / {prior_name} = {float(noise_var):.3g} / {float(prior):.3g} "
                         f"{'overflows' if lam > 1 else 'underflows'} float64; rescale y (noise_var scales with "
                         f"y^2) or set {prior_name} nearer to noise_var")
    return lam


def ridge_lambda_from_prior(noise_var, prior_var):
    """Ridge strength equivalent to a Gaussian prior: ``lam = noise_var / prior_var``.

    With ``y | X, w ~ N(Xw, noise_var I)`` and ``w_j ~ N(0, prior_var)`` i.i.d.,
    the MAP estimate minimises ``1/2 ||y - Xw||^2 + lam/2 ||w||^2`` with this ``lam``.

    Derived in: chapter "Estimation: MLE, MAP and Bayes" § "Regularisation as a prior".
    """
    _check_positive(noise_var, "noise_var", "ridge_lambda_from_prior")
    _check_positive(prior_var, "prior_var", "ridge_lambda_from_prior")
    return _representable_ratio(noise_var, prior_var, "ridge_lambda_from_prior", "prior_var")


def lasso_lambda_from_prior(noise_var, prior_scale):
    """Lasso strength equivalent to a Laplace prior: ``lam = noise_var / prior_scale``.

    With ``y | X, w ~ N(Xw, noise_var I)`` and ``w_j ~ Lap(0, prior_scale)``
    (density ``exp(-|w_j|/b) / (2b)``), the MAP estimate minimises
    ``1/2 ||y - Xw||^2 + lam ||w||_1`` with this ``lam``. scikit-learn's ``Lasso``
    minimises ``1/(2N) ||y - Xw||^2 + alpha ||w||_1``, so ``alpha = lam / N``.

    Derived in: chapter "Estimation: MLE, MAP and Bayes" § "Regularisation as a prior".
    """
    _check_positive(noise_var, "noise_var", "lasso_lambda_from_prior")
    _check_positive(prior_scale, "prior_scale", "lasso_lambda_from_prior")
    return _representable_ratio(noise_var, prior_scale, "lasso_lambda_from_prior", "prior_scale")
