"""Information criteria: AIC and BIC, with one parameter-count convention for the book.

Conventions (equal to statsmodels' ``llf``, ``aic``, ``bic`` on the same model):

* ``log_likelihood`` is the maximised log-likelihood of the *training targets* given the
  inputs, in nats, summed over samples (not averaged).
* ``n_params`` counts the free coefficients of the mean / linear predictor, intercept
  included. For least squares the noise variance is profiled out (sigma^2 = RSS/N) and,
  as in statsmodels' OLS, *not* counted. For multinomial models with C classes (one class,
  ``classes_[0]``, the reference: only C - 1 score vectors are identified), it is (C - 1) x (D + 1).
* ``AIC = -2 log L + 2 k`` and ``BIC = -2 log L + k log N`` (lower is better). The book's
  chapter 7 writes BIC as the log-evidence approximation ``log L - (k/2) log N``, which is
  ``-BIC / 2``.

Derived in: chapter "Laplace approximation, BIC and Bayesian logistic regression" § "The Occam factor and the BIC".
"""

from __future__ import annotations

import inspect

import numpy as np

__all__ = ["aic", "bic", "InformationCriteriaMixin"]


def _check_arguments(caller, log_likelihood, n_params, **counts):
    """The arguments both criteria share: a finite log-likelihood and a count ``n_params >= 0``
    (a NaN log-likelihood would give a NaN criterion, a negative count a wrong one, silently)."""
    # the one constraint scheme (linbook.base loads scikit-learn, so on first use only)
    from .base import NON_NEGATIVE, Interval, Real, check_param_values
    constraints = {"log_likelihood": [Interval(Real, -np.inf, np.inf, closed="neither")],
                   "n_params": [NON_NEGATIVE],
                   **{name: [Interval(Real, 1, None, closed="left")] for name in counts}}
    # a 0-d array (a model's summed log-likelihood) is a number here
    values = {"log_likelihood": np.asarray(log_likelihood).item() if np.ndim(log_likelihood) == 0 else log_likelihood,
              "n_params": n_params, **counts}
    for name, count in {"n_params": n_params, **counts}.items():
        # a Python int beyond float64 (10**400): the constraint check raised OverflowError, naming nothing
        if isinstance(count, int) and abs(count) >= 2**1024:
            raise ValueError(f"{caller}: {name} is an integer of {len(str(abs(count)))} digits, beyond float64; "
                             f"pass {name} as the count it is (far below 1e308)")
    check_param_values(caller, constraints, values)
    if not abs(float(log_likelihood)) <= np.finfo(float).max / 2:
        raise ValueError(f"{caller}: -2 * log_likelihood overflows float64 (log_likelihood = {float(log_likelihood):.3g}); "
                         "pass a log-likelihood below ~9e307 in magnitude (check how it was computed: a sum of "
                         "per-sample terms in nats cannot reach that with finite data)")


def _finite(caller, value):
    """``value``, or a clear error when ``-2 log L + penalty`` overflowed (a penalty near 1e308)."""
    if not np.isfinite(value):
        raise ValueError(f"{caller}: the criterion overflows float64 (n_params near 1e308); pass the number of "
                         "free parameters (a count, far below that)")
    return value


def aic(log_likelihood, n_params):
    """Akaike information criterion ``-2 log L + 2 k``.

    Derived in: chapter "Laplace approximation, BIC and Bayesian logistic regression" § "The Occam factor and the BIC".
    """
    _check_arguments("aic", log_likelihood, n_params)
    with np.errstate(over="ignore"):        # checked by _finite
        return _finite("aic", -2.0 * float(log_likelihood) + 2.0 * n_params)


def bic(log_likelihood, n_params, n_samples):
    """Bayesian information criterion ``-2 log L + k log N``.

    Derived in: chapter "Laplace approximation, BIC and Bayesian logistic regression" § "The Occam factor and the BIC".
    """
    _check_arguments("bic", log_likelihood, n_params, n_samples=n_samples)
    # one line of arithmetic: statsmodels' eval_measures.bic is the same but not a dependency of linbook
    with np.errstate(over="ignore"):        # checked by _finite
        # (float first: np.log of a Python int beyond int64, 10**30 say, raised numpy's TypeError)
        return _finite("bic", -2.0 * float(log_likelihood) + n_params * np.log(float(n_samples)))


class InformationCriteriaMixin:
    """Adds ``aic(X, y)`` and ``bic(X, y)`` to a fitted model.

    A subclass implements ``log_likelihood(X, y)`` (summed, in nats, see the module
    conventions) and ``n_params_`` (property or attribute: the parameter count above).
    """

    def _ll(self, X, y, sample_weight):
        if sample_weight is None:
            return self.log_likelihood(X, y)
        if "sample_weight" not in inspect.signature(self.log_likelihood).parameters:
            raise ValueError(f"{type(self).__name__}.log_likelihood takes no sample_weight; call "
                             "aic/bic without it (a weighted likelihood is defined for the "
                             "least-squares models only).")
        return self.log_likelihood(X, y, sample_weight=sample_weight)

    def aic(self, X, y, sample_weight=None):
        """AIC of the fitted model on ``(X, y)``: ``-2 log L + 2 k``.

        ``sample_weight`` is passed to ``log_likelihood`` (models that take it: the weighted
        least-squares likelihood, equal to statsmodels' ``WLS``).
        """
        return aic(self._ll(X, y, sample_weight), self.n_params_)

    def bic(self, X, y, sample_weight=None):
        """BIC of the fitted model on ``(X, y)``: ``-2 log L + k log N``.

        ``N`` is the number of rows of ``X`` (with weights: of rows with positive weight).
        """
        log_likelihood = self._ll(X, y, sample_weight)      # checks the weights first
        n = np.shape(X)[0]
        if sample_weight is not None:       # one number weighs every row (it counted as one row: log N = 0)
            n = int(np.count_nonzero(np.broadcast_to(np.asarray(sample_weight, dtype=float), (n,)) > 0))
        return bic(log_likelihood, self.n_params_, n)
