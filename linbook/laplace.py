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

import warnings
from dataclasses import dataclass, replace

import numpy as np
from scipy import linalg
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .base import (ClassifierMixin,  # scikit-learn's, with score's y and sample_weight checked
                   DEPRECATED, NON_NEGATIVE, POSITIVE, POSITIVE_INT, Integral, Interval, StrOptions, all_or_nothing,
                   check_param_values, check_params, check_sample_weight, encode_labels, label_type, renamed_param, require_y,
                   validate_fit, validate_predict, weight_spread)
from ._predictor import finite_scores
from .criteria import aic, bic  # noqa: F401  (re-exported for ``from linbook.laplace import bic``)
from .logistic.logistic_regression import logistic_loss
from ._kernels.cholesky import equilibrated_cholesky, equilibrated_solve
from .numerics import _binary_exponent, sigmoid
from .optim.newton import _newton_direction, newton
from .optim.resume import resume_until_step_is_short
from .optim.result import MSG_NONFINITE, MSG_STEP_STILL_LONG, MSG_UNBOUNDED, _x0, real_array

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
        Newton steps taken.

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

    The mode is found by Newton's method with a backtracking (Armijo) line search on the energy ``E``
    (:func:`linbook.optim.newton`; where the Hessian is not positive definite it adds the smallest ridge
    that gives a descent step). At the mode, ``A = hess(z0)`` must be positive definite (a strict local
    minimum of ``E``), otherwise a ``ValueError`` is raised.

    Parameters
    ----------
    neg_log_density : callable
        ``E(z)``: the negative log of the *unnormalised* density (any additive constant in
        ``E`` shifts ``log_evidence`` by the same amount).
    grad : callable or True
        Gradient of ``E``, returns shape (M,); ``True`` when ``neg_log_density`` returns
        ``(E, gradient, Hessian)`` from one evaluation (then ``hess=True`` too).
    hess : callable or True
        Hessian of ``E``, returns shape (M, M).
    x0 : float or array-like of shape (M,)
        Starting point.
    tol : float, default=1e-14
        Stop when the Newton decrement ``g^T A^{-1} g / 2`` falls below ``tol`` and Newton's next step
        ``A^{-1} g`` is short: at most ``max(sqrt(tol), 1e-5)`` times ``max(1, max_j |z_j|)`` (on a flat
        energy the decrement is small far from the mode; Newton then goes on); then one more Newton step.
    max_iter : int, default=200
        Iteration cap; a ``ValueError`` naming it is raised if the mode is not reached.

    Returns
    -------
    LaplaceResult
        Mode, precision ``A``, covariance ``A^{-1}`` (via Cholesky), and
        ``log_evidence = -E(z0) + (M/2) log(2 pi) - (1/2) log |A|``.

    Derived in: chapter "Laplace approximation, BIC and Bayesian logistic regression" § "The Laplace approximation in M dimensions".
    """
    check_param_values("laplace_approximation", {"tol": [NON_NEGATIVE], "max_iter": [POSITIVE_INT]},
                       {"tol": tol, "max_iter": max_iter})
    z = _x0(x0)                    # a finite float vector (a copy), or a clear error
    m, scalar = z.size, np.ndim(x0) == 0
    energy = _energy_at_last_point(neg_log_density, grad, hess, m, scalar)
    e0 = energy(z)[0]
    if not np.isfinite(e0):
        raise ValueError(f"the energy E(x0) is not finite ({e0}); start where the density is positive")
    # the mode: Newton's method with backtracking (linbook.optim.newton), stopped by the decrement where the
    # next step is short as well: on a flat energy (separable classes under a prior of precision 1e-50, say)
    # the decrement ~ E'^2 / E'' falls below tol while the mode is still many steps away
    def run(x, decrement_tol, max_iter):
        return newton(energy, x, grad=True, hess=True, max_iter=max_iter, gtol=0.0, xtol=0.0,
                      decrement_tol=decrement_tol)

    res = resume_until_step_is_short(run, z, lambda x: _relative_newton_step(energy, x),
                                     step_tol=max(np.sqrt(tol), _STEP_TOL_MIN), gtol=tol, max_iter=max_iter)
    z0, n_polish = _polished_mode(energy, res.x) if res.converged else (res.x, 0)   # (n_iter counts its steps)
    e, g, A = energy(z0)
    A, L = _precision_and_factor(res, e, g, A, max_iter)       # A = hess E(z0) = L L'
    cov = linalg.cho_solve((L, True), np.eye(m), check_finite=False)   # L: the factor of a finite A
    logdet = 2.0 * float(np.sum(np.log(np.diag(L))))
    log_z = -e + 0.5 * m * np.log(2 * np.pi) - 0.5 * logdet    # log Z ~= -E(z0) + (M/2) log 2pi - log|A|/2
    return LaplaceResult(mode=z0, energy=e, precision=A, covariance=0.5 * (cov + cov.T), chol=L,
                         log_det_precision=logdet, log_evidence=log_z, n_iter=res.n_iter + n_polish)


# A step of at most this, relative to max |z|, counts as short whatever tol: at a well-conditioned mode the
# decrement test leaves steps of ~1e-7, but along a nearly flat direction (a posterior standard deviation of
# 1e6, say) the gradient's rounding alone moves Newton's step by ~1e-6 of |z|, and no shorter step is found.
_STEP_TOL_MIN = 1e-5


def _polished_mode(energy, z):
    """``(z, n)``: ``z``, where the mode search stopped, after ``n`` more full Newton steps, taken while each
    brings it nearer the mode (Newton's next step from there is shorter), up to :data:`_POLISH_STEPS`.

    Why: the decrement ``g'A^{-1}g / 2 <= tol`` leaves the mode ~``sqrt(2 tol / lambda_min(A))`` off, which a
    step squares. Measured (tol 1e-14, against the mode in 700-digit arithmetic): ``BayesianLogisticRegression``
    on 40 rows, 2 features, was 2e-8 off, its log evidence 1.6e-8; polished once: ~1e-15. Where the Hessian
    changes fast along the step (separable classes under ``alpha = 1e-8`` or ``1e-30``: margins ~ log(1/alpha))
    Newton converges more slowly: one polishing step left the mode 1.3e-9 and 3.3e-9 (relative) off, the log
    evidence 3e-9 and 4e-8, in silence; the steps go on while they shrink. A ``ValueError`` when they still
    shrink after :data:`_POLISH_STEPS` (linear convergence: the Hessian at the mode is singular)."""
    def above_rounding(step):
        # a step below the rounding of z cannot bring it nearer; after the first, below eps max(1, |z|): the mode
        # search's own floor (X * 1e-12 under prior_precision 0.5: the intercept, ~1e-22, drifted by 5e-24 per step,
        # its gradient's data term rounded away). The first step is taken down to the rounding of z itself
        # (prior_precision 1e300: the whole mode is ~1e-300).
        floor = _longest(z) if n == 0 else max(1.0, _longest(z))
        return step is not None and _longest(step) > np.finfo(float).eps * floor

    step, n = _full_newton_step(energy, z), 0
    while n < _POLISH_STEPS and above_rounding(step):
        polished = z + step
        next_step = _full_newton_step(energy, polished)
        if next_step is None or _longest(next_step) > _longest(step):
            break
        z, step, n = polished, next_step, n + 1
    if n == _POLISH_STEPS and above_rounding(step):     # still shrinking by a fixed fraction: singular at the mode
        raise ValueError(_MSG_LINEAR)
    return z, n


#: At most this many full Newton steps polish the mode. Near a mode with a positive definite Hessian Newton doubles
#: the correct digits per step and stops within 4 (measured: 1 to 3 for the Bayesian logistic posteriors, separable
#: classes included); where the Hessian at the mode is singular (``E = z^4``) each step is a fixed fraction of the
#: last (2/3) and the steps run out: then no Gaussian approximation exists (the mode search stopped at ``z ~ 1e-6``
#: and its "covariance", 8e10, and "log evidence", 13.5, were returned for ``log Z = 0.59``).
_POLISH_STEPS = 50
_MSG_LINEAR = ("laplace_approximation: Newton's method converges only linearly to the mode (each step a fixed "
               "fraction of the last), so the Hessian of E at the mode is singular: E is flatter than a quadratic "
               "there (like z^4) and no Gaussian approximation exists. Add a quadratic term (a Gaussian prior) to E, "
               "or use another approximation of the normaliser.")


def _longest(step):
    return float(np.max(np.abs(step), initial=0.0))


def _full_newton_step(energy, z):
    """``-H^{-1} g`` at ``z``, or ``None`` where ``E``, ``g`` or ``H`` is not finite or ``H`` not positive definite.

    Solved with the equilibrated Cholesky factor, without Newton's descent test (:func:`_newton_direction`):
    near the mode of a strongly curved energy (prior precision 1e300: ``g`` ~ 1e-16, the step ~ 1e-316) the slope
    ``g'd`` underflows to 0 and that test would reject the exact Newton step."""
    e, g, H = energy(z)
    if not (np.isfinite(e) and np.all(np.isfinite(g))):
        return None
    factor = equilibrated_cholesky(H)
    if factor is None:
        return None
    step = -equilibrated_solve(factor, g)
    return step if np.all(np.isfinite(step)) else None


def _relative_newton_step(energy, x):
    """``max_j |(H^{-1} g)_j| / max(1, max_j |x_j|)`` at ``x`` (Newton's own direction,
    :func:`linbook.optim.newton._newton_direction`); NaN where ``H`` is not positive definite."""
    _, g, H = energy(x)
    try:
        step, tau, _ = _newton_direction(H, g)
    except ValueError:
        return np.nan
    if tau != 0.0:
        return np.nan
    return float(np.max(np.abs(step), initial=0.0) / max(1.0, np.max(np.abs(x), initial=0.0)))


def _energy_at_last_point(neg_log_density, grad, hess, m, scalar):
    """``energy(v) -> (E, g, H)`` with the caller's shapes (scalar or (M,)), evaluated once per point:
    the start and the mode are each asked for twice (checks, then Newton; Newton, then ``A``), the mode
    also after a polishing step from it was tried and refused (so the last two points are kept)."""
    last = {}

    def energy(v):
        key = v.tobytes()
        if key not in last:
            u = float(v[0]) if scalar else v
            e, g, H = neg_log_density(u) if grad is True else (neg_log_density(u), grad(u), hess(u))
            g, H = _shaped(g, (m,), "grad"), _shaped(H, (m, m), "hess")
            if len(last) == 2:
                del last[next(iter(last))]                   # the older of the two
            last[key] = float(e), g, H
        return last[key]

    return energy


def _shaped(value, shape, name):
    """``value`` as a float array (a copy) of ``shape`` (or of as many entries), or an error naming ``name``."""
    arr = np.array(real_array(value, name), dtype=float)
    if arr.size != int(np.prod(shape)):
        raise ValueError(f"laplace_approximation: {name} returned shape {arr.shape} for a point of {shape[0]} "
                         f"coordinates; fix {name} to return shape {shape}")
    return arr.reshape(shape)


class _NotPositiveDefinite(ValueError):
    """The Hessian at the end of the mode search has no Cholesky factor (a model may say why)."""


def _precision_and_factor(res, e, g, A, max_iter):
    """``(A, L)``: the (symmetrised) Hessian at the end of the mode search and its lower Cholesky
    factor, or a ``ValueError`` saying why there is no Gaussian approximation there."""
    A = A + 0.5 * (A.T - A)            # symmetrised; (A + A.T) / 2 overflows for entries near 1.7e308
    overflow = res.message in (MSG_NONFINITE, MSG_UNBOUNDED) or res.message.startswith("newton: the Hessian")
    if overflow or not (np.isfinite(e) and np.all(np.isfinite(g)) and np.all(np.isfinite(A))):
        raise ValueError("laplace_approximation: the gradient or Hessian is not finite during the "
                         "mode search (overflow); scale the variables (for a model: standardise the columns of X).")
    if not res.converged and res.n_iter >= max_iter:
        # a Gaussian fitted anywhere but at the mode is no Laplace approximation: no partial result
        raise ValueError(f"laplace_approximation did not reach the mode in max_iter={max_iter} iterations; "
                         "increase max_iter, or check that the density is bounded (a proper posterior).")
    try:
        L = np.linalg.cholesky(A)                             # A = L L'
    except np.linalg.LinAlgError:
        raise _NotPositiveDefinite("the Hessian of E at the mode is not positive definite: the point is not a "
                                   "strict local maximum of the density, so no Gaussian approximation exists there. "
                                   "Pass an x0 nearer the mode (not a stationary point such as a saddle), or fix "
                                   "hess if it is not the Hessian of E") from None
    if not res.converged and res.message.endswith(MSG_STEP_STILL_LONG):
        raise ValueError("laplace_approximation: the line search stalled at the rounding level of E while "
                         "Newton's next step is still long (E is too flat to locate the mode at its precision); "
                         "subtract a large constant from E, or scale the variables.")
    if not res.converged:
        _check_stalled_at_mode(L, g, e)
    return A, L


def _check_stalled_at_mode(L, g, e):
    """Accept a Newton run whose line search stalled short of ``decrement_tol`` only at the mode
    to rounding: where the decrement ``g'A^{-1}g/2`` is below ``1e-8 max(1, |E|)``."""
    v = linalg.solve_triangular(L, g, lower=True)
    decrement = 0.5 * float(v @ v)
    if decrement > 1e-8 * max(1.0, abs(e)):
        raise ValueError("laplace_approximation: the line search stalled away from the mode "
                         f"(Newton decrement {decrement:.3g}); check that E, grad and hess agree, "
                         "or scale the variables.")


def probit_kappa(var):
    """``kappa(sigma^2) = (1 + pi sigma^2 / 8)^{-1/2}`` (MLAPP 8.70, PRML 4.154).

    ``var = inf`` gives the limit 0 (an activation of unbounded variance: the moderated output is 1/2).

    Derived in: chapter "Laplace approximation, BIC and Bayesian logistic regression" § "The posterior predictive".
    """
    var = real_array(var, "var")
    if np.any(var < 0) or np.any(np.isnan(var)):
        raise ValueError("probit_kappa: var must be non-negative (a variance), not NaN; "
                         "pass phi^T A^-1 phi as computed")
    # pi * (var / 8), not (pi * var) / 8: the same double (dividing by 8 is exact), but pi * var
    # overflows for var above ~5.7e307, where kappa (~1e-154) is still a normal number
    return 1.0 / np.sqrt(1.0 + np.pi * (var / 8.0))


def moderated_sigmoid(mu, var):
    """Probit approximation ``int sigm(a) N(a | mu, var) da ~= sigm(kappa(var) mu)``.

    Derived in: chapter "Laplace approximation, BIC and Bayesian logistic regression" § "The posterior predictive".
    """
    mu = real_array(mu, "mu")
    if np.any(np.isnan(mu)):
        raise ValueError("moderated_sigmoid: mu contains NaN (a NaN probability would follow); pass the "
                         "posterior means phi^T m_N as computed, without missing values")
    kappa = probit_kappa(var)
    try:
        np.broadcast_shapes(mu.shape, kappa.shape)
    except ValueError:
        raise ValueError(f"moderated_sigmoid: mu of shape {mu.shape} and var of shape {kappa.shape} do not "
                         "match; pass one var per mu (or one for all)") from None
    if np.any(np.isinf(mu) & (kappa == 0)):
        raise ValueError("moderated_sigmoid: mu and var are both infinite for some entries: the limit of "
                         "sigm(kappa(var) mu) depends on how fast each grows; pass finite mu or var there")
    return sigmoid(kappa * mu)


def _moderated_logit(mu_n, var_n, exponent):
    """``kappa(var) mu`` for ``mu = 2^e mu_n`` and ``var = 4^e var_n`` without forming them:
    ``kappa(var) mu = mu_n / sqrt(4^-e + pi var_n / 8)``. Far out (``4^-e`` underflows to 0) it is the
    limit ``mu_n / sqrt(pi var_n / 8)``; for ordinary rows it equals ``probit_kappa(var) * mu`` exactly."""
    kappa_n = 1.0 / np.sqrt(np.ldexp(1.0, -2 * exponent) + np.pi * var_n / 8.0)    # = kappa(var) 2^e
    return kappa_n * mu_n


def _laplace_posterior(Phi, t, alpha, sw, tol, max_iter):
    """:func:`laplace_approximation` of the Bayesian logistic posterior (the energy in
    :class:`BayesianLogisticRegression`), with its errors worded for the model."""
    m = Phi.shape[1]
    const = 0.5 * m * (np.log(2 * np.pi) - np.log(alpha))   # (2 pi / alpha overflows for alpha < ~1e-308)
    # E is a sum of s_i-weighted terms: weights times c make E, and the Newton decrement that tol reads in
    # nats, c times larger. The mode search runs on E / c, c a power of 4 near the weights' mean (1
    # without weights): the same mode, found to the same relative precision at any scale of the weights.
    c = _weight_scale(sw)
    while not np.isfinite(alpha / c):   # a prior near 1e308 beside small weights: it decides the mode alone
        c *= 4.0
    sw_c, alpha_c = (None if sw is None else sw / c), alpha / c

    def energy_over_c(w):   # E(w) = NLL(w) + (alpha/2) ||w||^2 over c, plus (M/2) log(2 pi / alpha); its g and H
        # g = Phi'(s (mu - t)) + alpha w,  H = Phi' S Phi + alpha I  (over c)
        E, g, H = logistic_loss(w, Phi, t, alpha_c, sample_weight=sw_c)
        return E + const, g, H

    try:
        res_c = laplace_approximation(energy_over_c, True, True, np.zeros(m), tol=tol, max_iter=max_iter)
    except _NotPositiveDefinite:                    # with alpha > 0 it is, in exact arithmetic
        raise ValueError(f"BayesianLogisticRegression: the Hessian at the mode, Phi' S Phi + alpha I, is "
                         f"positive definite (alpha = {alpha:g} > 0) but singular to float64's rounding: "
                         f"{_LARGE_COLUMNS} Centre and scale the features (e.g. StandardScaler) before "
                         "fitting.") from None
    except ValueError as exc:
        raise _weights_too_spread(_prior_too_weak(exc, alpha), sw) from exc
    # the prior's normaliser is in the search in nats, not over c: over c (weights of 1e-17) it was a constant of
    # ~1e19, whose rounding stalled the line search 1.2 standard deviations from the mode; in nats the search is
    # the one without weights (there E flat to rounding at far margins lets Newton's flat step double). E / c at the
    # mode is then evaluated alone: beside the normaliser it kept only its part above const's rounding (weights of
    # 1e18 on separable classes: E / c ~ 2e-15 beside 13, and the log evidence came out 426 nats off)
    energy_c = float(logistic_loss(res_c.mode, Phi, t, alpha_c, sample_weight=sw_c, hessian=False)[0])
    return _shifted(_energy_times(_with_energy(res_c, energy_c), c), const)


def _with_energy(res, energy):
    """``res`` with ``E`` at the mode replaced by ``energy`` (its value less a constant) and the log evidence
    ``-E + (M/2) log(2 pi) - (1/2) log |A|`` formed from it."""
    log_z = -energy + 0.5 * res.mode.size * np.log(2 * np.pi) - 0.5 * res.log_det_precision
    return replace(res, energy=energy, log_evidence=log_z)


def _shifted(res, constant):
    """The Laplace approximation of ``exp(-(E + constant))`` from that of ``exp(-E)``: the same Gaussian."""
    return replace(res, energy=res.energy + constant, log_evidence=res.log_evidence - constant)


def _weight_scale(sw):
    """A power of 4 near the mean of the positive ``sample_weight`` (1.0 without weights, or within a factor 2
    of 1): dividing by it is exact, and so is multiplying a Cholesky factor by its square root."""
    if sw is None or not np.any(sw > 0):
        return 1.0
    top = int(np.frexp(sw.max())[1])                   # sw / 2^top <= 1: the mean cannot overflow
    log2_mean = top + np.log2(np.mean(np.ldexp(sw, -top)))
    return float(np.ldexp(1.0, 2 * int(np.clip(np.round(log2_mean / 2), -500, 500))))


def _energy_times(res, c):
    """The Laplace approximation of ``exp(-c E)`` from ``res``, that of ``exp(-E)``: the same mode, with
    ``E``, ``A`` and ``log |A|`` of ``c E`` (``c`` a power of 4, so every product is exact).

    Far-out weights can put ``c A`` or ``c E`` beyond float64: then an error, not an infinite precision."""
    if c == 1.0:
        return res
    m = res.mode.size
    precision, energy = res.precision * c, res.energy * c
    if not (np.all(np.isfinite(precision)) and np.isfinite(energy)):
        raise ValueError("BayesianLogisticRegression: the posterior precision A or the energy E exceeds float64 "
                         "(both grow with sample_weight, whose sum is near 1e308); divide sample_weight by a constant "
                         "and prior_precision by the same constant (the same posterior mode).")
    log_det = res.log_det_precision + m * np.log(c)
    return LaplaceResult(mode=res.mode, energy=energy, precision=precision, covariance=res.covariance / c,
                         chol=res.chol * np.sqrt(c), log_det_precision=log_det,
                         log_evidence=-energy + 0.5 * m * np.log(2 * np.pi) - 0.5 * log_det, n_iter=res.n_iter)


def _prior_too_weak(exc, alpha):
    """``exc``, or the error naming ``prior_precision`` when the mode was not reached under a weak prior.

    Classes that (nearly) separate put the mode where the margins are about ``log(1 / alpha)``, and Newton's
    step on ``log(1 + exp(-margin))`` grows them by about 1: ``log(1 / alpha)`` steps.
    """
    if "did not reach the mode" not in str(exc) or alpha >= 1e-8:
        return exc
    return ValueError(f"BayesianLogisticRegression: {exc} With prior_precision={alpha:.1e}, classes that (nearly) "
                      f"separate have their mode at margins of about log(1/prior_precision) = {-np.log(alpha):.0f}, "
                      "which takes Newton about as many steps: increase max_iter, or prior_precision.")


def _weights_too_spread(exc, sw):
    """``exc``, or the error naming ``sample_weight`` when one weight dwarfs the others.

    A sample of weight ``c`` times the others is fitted to a margin of about ``log c``, and near
    it Newton's step on ``log(1 + exp(-margin))`` grows the margin by about 1: ``log c`` steps.
    """
    spread = weight_spread(sw)
    if np.log(spread) < 20:
        return exc
    return ValueError(f"BayesianLogisticRegression: {exc} The positive sample_weight span a factor {spread:.1e}: "
                      f"Newton needs about log({spread:.1e}) = {np.log(spread):.0f} steps to fit the heaviest sample. "
                      "Increase max_iter, or pass sample_weight within a narrower range.")


_LARGE_COLUMNS = ("columns of X with a large offset or scale (a feature near 1e7 or more), or sample_weight over "
                  "many orders of magnitude, make it so. Bring sample_weight to a narrower range if so.")


def _warn_if_ill_conditioned(res):
    """Warn when ``A`` at the mode is so ill-conditioned (LAPACK's estimate of its reciprocal condition
    number below 1e-10) that ``log det A`` (in ``log_evidence_``) and ``A^{-1}`` lose several digits."""
    from scipy.linalg import lapack

    A = res.precision
    rcond, info = lapack.dpocon(res.chol, np.abs(A).sum(axis=0).max(), uplo="L")
    if info == 0 and rcond < 1e-10:
        warnings.warn(f"BayesianLogisticRegression: the Hessian at the mode is ill-conditioned (condition number "
                      f"~{1.0 / max(rcond, 1e-300):.0e}): log_evidence_ and posterior_cov_ may have lost digits; "
                      f"{_LARGE_COLUMNS} Centre and scale the features (e.g. StandardScaler) before fitting.",
                      UserWarning, stacklevel=3)


class BayesianLogisticRegression(ClassifierMixin, BaseEstimator):
    """Binary logistic regression with a Gaussian prior and a Laplace-approximated posterior.

    Model: ``p(y = 1 | x, w) = sigm(w^T phi(x))`` with ``phi(x) = (1, x)`` when
    ``fit_intercept`` (else ``x``), prior ``w ~ N(0, alpha^{-1} I)`` with ``alpha = prior_precision``
    (PRML's notation). **The intercept gets the
    same prior as the other weights** (this keeps the posterior proper on separable data and
    the evidence well defined). The posterior is approximated by ``N(w | w_MAP, A^{-1})`` where
    ``w_MAP`` minimises the energy::

        E(w) = sum_i s_i [log(1 + exp(a_i)) - y_i a_i] + (alpha/2) ||w||^2 + (M/2) log(2 pi / alpha),
        a_i = w^T phi(x_i),  y_i in {0, 1},

    and ``A = Phi^T S Phi + alpha I`` with ``S = diag(s_i mu_i (1 - mu_i))``; ``s_i`` are the sample
    weights (1 by default: integer weights equal repeated rows, in the posterior and the evidence). The MAP point minimises
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

    _parameter_constraints = {
        "prior_precision": [POSITIVE], "prior_var": [POSITIVE, StrOptions({DEPRECATED})],
        "predictive": [StrOptions({"probit", "mc", "plugin"})], "n_samples": [POSITIVE_INT],
        "random_state": [None, Integral, np.random.Generator, np.random.RandomState],
        "fit_intercept": ["boolean"], "tol": [NON_NEGATIVE], "max_iter": [POSITIVE_INT],
    }

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False     # binary only
        return tags

    def _design(self, X):
        return np.hstack([np.ones((X.shape[0], 1)), X]) if self.fit_intercept else X

    def _prior_precision(self):
        alpha = renamed_param(self, "prior_precision", "prior_var", convert=lambda var: 1.0 / var,
                              formula="prior_precision=1/prior_var")
        if not np.isfinite(alpha):          # only 1 / prior_var can overflow: the constraints bound prior_precision
            raise ValueError(f"BayesianLogisticRegression: prior_var={self.prior_var:g} is below 1 / 1.8e308, so "
                             "its precision 1 / prior_var is not a float64; pass prior_precision (at most 1.8e308).")
        return alpha

    @all_or_nothing
    def fit(self, X, y, sample_weight=None):
        """Find ``w_MAP`` by Newton's method and the Laplace posterior; returns ``self``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two classes (any labels).
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights ``s_i`` of the samples' log-likelihood terms (scikit-learn's meaning).

        Returns
        -------
        self
        """
        check_params(self)
        require_y(self, y)
        X, y = validate_fit(self, X, y)
        kind = label_type(y)
        if kind == "unknown":
            raise ValueError("Unknown label type: BayesianLogisticRegression needs two class labels in y. Pass "
                             "them as numbers, strings or booleans (an object array of other or mixed types: "
                             "convert it, e.g. y.astype(bool) or y.astype(str)).")
        if X.shape[0] < 2:     # (one sample is one class: three classes get encode_labels' message)
            raise ValueError("BayesianLogisticRegression needs at least one sample of each of two "
                             "classes; got 1 sample. Pass more rows of X and y.")
        self.classes_, t = encode_labels(y, max_classes=2, model="BayesianLogisticRegression",
                                         more_classes="linbook.LogisticRegression (multinomial)", target_type=kind)
        t = t.astype(float)
        sw = None if sample_weight is None else check_sample_weight(sample_weight, X, estimator=self)
        Phi = self._design(X)
        # E(w) = NLL(w) + (alpha/2) ||w||^2 + (M/2) log(2 pi / alpha): its mode, Hessian A and log Z
        res = _laplace_posterior(Phi, t, float(self._prior_precision()), sw, self.tol, self.max_iter)
        _warn_if_ill_conditioned(res)
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
        (MLAPP 8.64-8.66), computed as ``||L^{-1} phi||^2`` with ``A = L L^T``. For rows beyond
        ``~1e154`` the variance exceeds float64 (inf); ``predict_proba`` never forms it.
        """
        mu_n, var_n, exponent = self._row_scaled_moments(X)
        return np.ldexp(mu_n, exponent), np.ldexp(var_n, 2 * exponent)

    def _row_scaled_moments(self, X):
        """``(mu_n, var_n, e)``: the moments of the rows ``phi / 2^e`` (``2^e`` just above the row's largest
        entry), so that ``mu_a = 2^e mu_n`` and ``var_a = 4^e var_n``. A power of two scales exactly: for
        rows of ordinary size the moments are those of ``phi`` bit for bit, and far rows cannot overflow."""
        Phi_n, exponent = self._row_scaled_design(X)
        mu_n = Phi_n @ self.posterior_mean_
        V = linalg.solve_triangular(self.laplace_.chol, Phi_n.T, lower=True)
        return mu_n, np.sum(V * V, axis=0), exponent

    def _row_scaled_design(self, X):
        """``(phi / 2^e, e)`` per row, ``2^e`` just above the row's largest entry (validated ``X``)."""
        Phi = self._design(validate_predict(self, X))
        exponent = _binary_exponent(np.max(np.abs(Phi), axis=1, initial=0.0))
        return np.ldexp(Phi, -exponent[:, None]), exponent

    def sample_posterior(self, n_samples, random_state=None):
        """Draw ``n_samples`` weight vectors from ``N(m, A^{-1})``: ``w = m + L^{-T} z``."""
        check_is_fitted(self)
        # (int(n_samples) took 2.5 as 2 and '3' as 3; -1 got numpy's "negative dimensions are not allowed")
        check_param_values("sample_posterior", {"n_samples": [Interval(Integral, 0, None, closed="left")]},
                           {"n_samples": n_samples})
        rng = np.random.default_rng(random_state)
        z = rng.standard_normal((int(n_samples), self.posterior_mean_.size))
        return self.posterior_mean_ + linalg.solve_triangular(self.laplace_.chol, z.T, lower=True, trans="T").T

    def decision_function(self, X):
        """``mu_a = m^T phi(x)``: the log-odds at the posterior mean (the plug-in logit)."""
        return finite_scores(self, self._plugin_logit(X), "decision function")

    def _plugin_logit(self, X):
        """``mu_a``, an infinity of the right sign where it is beyond float64 (``linbook._predictor``)."""
        mu_n, _, exponent = self._row_scaled_moments(X)
        with np.errstate(over="ignore"):
            return np.ldexp(mu_n, exponent)

    def predict_proba(self, X):
        """Posterior predictive ``p(y | x, D)`` by the chosen ``predictive``; shape (n, 2).

        Each column is computed as itself, ``p(y = 0 | x) = sigmoid(-a)`` beside ``sigmoid(a)``: as ``1 - p1``
        it lost every digit for logits above ~37 (``p1`` rounds to 1) and came out 0, or ``1.843e-14`` for
        ``1.847e-14``."""
        if self.predictive == "plugin":
            logits = self._plugin_logit(X)[:, None]
        elif self.predictive == "probit":
            logits = _moderated_logit(*self._row_scaled_moments(X))[:, None]
        else:
            W = self.sample_posterior(self.n_samples, self.random_state)
            # logits of scaled rows, scaled back: exact, and a row near 1e308 cannot overflow part-way
            # through its sum (a matrix product then returns an infinity of either sign, or NaN)
            Phi_n, exponent = self._row_scaled_design(X)
            with np.errstate(over="ignore"):            # a logit beyond float64: +-inf, the sign is right
                logits = np.ldexp(Phi_n @ W.T, exponent[:, None])
        return np.column_stack([sigmoid(-logits).mean(axis=1), sigmoid(logits).mean(axis=1)])

    def predict(self, X):
        """Class with ``mu_a > 0`` (the plug-in and probit predictives share this boundary)."""
        positive = self._plugin_logit(X) > 0
        return self.classes_[positive.astype(int)]
