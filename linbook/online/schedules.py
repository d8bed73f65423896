"""Step sizes of stochastic gradient methods: the schedules and the data-scaled default.

Derived in: chapter "Online learning and stochastic optimisation" § "Step sizes: the Robbins–Monro conditions".
"""

from __future__ import annotations

from numbers import Real

import numpy as np
import scipy.sparse as sp

from ..base import NON_NEGATIVE, POSITIVE, Interval, StrOptions, check_param_values, renamed_kwargs, row_stats
from ..numerics import _binary_exponent, _power_of_two_scale

__all__ = ["learning_rate_schedule"]

SCHEDULES = ("constant", "robbins_monro", "optimal")


@renamed_kwargs(alpha="lam_n")
def learning_rate_schedule(k, schedule="robbins_monro", *, eta0=0.1, tau0=1.0, kappa=0.75, lam_n=0.0):
    """Step size ``eta_k`` of update number ``k = 1, 2, ...``.

    Parameters
    ----------
    k : int or array_like of int
        Update counter, starting at 1.
    schedule : {"constant", "robbins_monro", "optimal"}
        ``"constant"``: ``eta_k = eta0``.
        ``"robbins_monro"``: ``eta_k = eta0 * (tau0 + k) ** (-kappa)`` with
        ``kappa`` in (0.5, 1], which satisfies the Robbins-Monro conditions
        ``sum eta_k = inf``, ``sum eta_k^2 < inf`` (eq. 8.82, 8.83 corrected); any other
        ``kappa > 0`` decays without satisfying both.
        ``"optimal"``: ``eta_k = eta0 / (1 + lam_n * eta0 * (k - 1))``, i.e.
        ``1 / (lam_n (t0 + k - 1))`` with ``t0 = 1 / (lam_n eta0)``: the
        ``1/(lambda k)`` rate for a ``lam_n``-strongly convex per-sample objective,
        starting at ``eta0``.
    eta0, tau0, kappa : float
    lam_n : float
        Strong convexity of one sample's objective (``lam / n`` for the penalty
        ``(lam/2) ||w||^2`` on a sum over ``n`` samples); only for ``"optimal"``.

    Returns
    -------
    float or ndarray

    Derived in: chapter "Online learning and stochastic optimisation" § "Step sizes: the Robbins–Monro conditions".
    """
    k = _schedule_arguments(k, schedule, eta0, tau0, kappa, lam_n)
    if schedule == "constant":
        out = np.full_like(k, eta0)
    elif schedule == "robbins_monro":
        out = eta0 * _power_of_sum(tau0, k, -kappa)
    else:
        out = _optimal_rate(k, eta0, lam_n)
    return out[()] if out.ndim == 0 else out


def _schedule_arguments(k, schedule, eta0, tau0, kappa, lam_n):
    """``k`` as a float array, with every argument checked, or a clear error. Why:
    ``eta0=-1`` gave negative steps, NaN anything a NaN step, ``kappa <= 0``
    steps that grow, ``k=0`` with ``tau0=0`` a division by zero, without a word. ``kappa`` may lie outside
    (0.5, 1] here (the chapter draws 1/sqrt(k)); the estimators refuse it."""
    check_param_values("learning_rate_schedule",
                       {"schedule": [StrOptions(set(SCHEDULES))], "eta0": [POSITIVE], "lam_n": [NON_NEGATIVE],
                        "tau0": ROBBINS_MONRO["tau0"], "kappa": [POSITIVE]},
                       {"schedule": schedule, "eta0": eta0, "lam_n": lam_n,
                        **({"tau0": tau0, "kappa": kappa} if schedule == "robbins_monro" else {})})
    if schedule == "robbins_monro" and not np.isfinite(tau0):
        raise ValueError(f"learning_rate_schedule: tau0 must be a finite number >= 0; got {tau0!r}")
    try:
        k = np.asarray(k, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"learning_rate_schedule: k must be update counts 1, 2, ... (numbers); got {k!r}") from None
    if not np.all(np.isfinite(k) & (k >= 1)):
        bad = k[~(np.isfinite(k) & (k >= 1))] if k.ndim else k
        raise ValueError(f"learning_rate_schedule: k counts updates from 1; got {np.ravel(bad)[:5].tolist()}. Pass "
                         "finite k >= 1 (for the step before update k = 1 there is none)")
    return k


def _power_of_sum(a, b, p):
    """``(a + b) ** p`` for ``a, b >= 0`` without overflowing the sum (``tau0 + k`` near 1e308 gave inf and a
    step of 0): beyond, as ``m^p (a / m + b / m)^p`` with ``m = max(a, b)``."""
    with np.errstate(over="ignore"):
        total = a + b
    m = np.maximum(a, b)
    return np.where(np.isfinite(total), np.where(np.isfinite(total), total, 1.0) ** p, m ** p * (a / m + b / m) ** p)


def _optimal_rate(k, eta0, lam_n):
    """``eta0 / (1 + lam_n eta0 (k - 1))`` without overflowing the product (``eta0 = lam_n = 1e308`` gave 0 for
    1e-308): for ``eta0 >= 1`` as ``1 / (1 / eta0 + lam_n (k - 1))``, where ``1 / eta0`` is exact enough."""
    d = lam_n * (k - 1.0)
    if eta0 >= 1.0:
        return 1.0 / (1.0 / eta0 + d)
    return eta0 / (1.0 + eta0 * d)


#: The ``_parameter_constraints`` of a step-size schedule (``learning_rate``, ``eta0``).
CONSTRAINTS = {"learning_rate": [StrOptions(set(SCHEDULES))], "eta0": [POSITIVE, StrOptions({"auto"})],
               # read under every schedule (a number, even where unused), bounded under Robbins-Monro's
               "tau0": [Real], "kappa": [Real]}
#: What the Robbins-Monro schedule adds: ``kappa`` in (0.5, 1] (eq. 8.82), ``tau0 >= 0``.
ROBBINS_MONRO = {"kappa": [Interval(Real, 0.5, 1.0, closed="right")],
                 "tau0": [Interval(Real, 0.0, None, closed="left")]}


def schedule_constraints(est):
    """The constraints that hold only under ``est``'s schedule (for ``base.check_params``)."""
    return ROBBINS_MONRO if est.learning_rate == "robbins_monro" else None


def check_optimal_rate(est, lam):
    """``learning_rate="optimal"`` is the ``1/(lambda k)`` rate: it needs ``lam > 0``."""
    if est.learning_rate == "optimal" and not lam > 0:
        raise ValueError("learning_rate='optimal' needs lam > 0 (it is the 1/(lambda k) rate of a "
                         "strongly convex objective); set lam > 0 or use another schedule.")


def curvature_bound(top, previous=0.0, nnz=0):
    """Largest squared row norm ``max_i ||x_i||^2`` seen so far (a bound on one sample's curvature).

    ``top`` is the largest squared row norm of the new chunk, ``nnz`` its number of nonzero
    entries. Raises ``ValueError`` when it overflowed (features near 1e154 or larger) or, for
    a chunk with nonzero features, underflowed below 1e-300 (features near 1e-150 or smaller):
    then a step of size ``1 / ||x||^2`` is not representable and per-sample steps cannot move
    the weights, so the fit would silently stay at zero.
    """
    if not np.isfinite(top):
        raise ValueError("The squared norms of the rows of X overflow (features of order 1e154 or larger): "
                         "scale the features (e.g. StandardScaler) before fitting.")
    if nnz > 0 and max(previous, top) < 1e-300:
        raise ValueError("The squared norms of the rows of X underflow (features of order 1e-150 or smaller), "
                         "so stochastic-gradient steps cannot move the weights in double precision: scale the "
                         "features (e.g. StandardScaler) before fitting.")
    return max(previous, top)


#: Squared row norms up to 2^64 (features near 4e9), and down to 2^-64, are used as they are; beyond them
#: the stochastic-gradient fits run on ``X`` times a power of two (``scaled_rows``). A step's factor
#: ``eta r`` is about ``r / ||x||^2``, the weights' size over ``||x||``: outside this window it under- or
#: overflowed for weights well inside the range of float64 (features 2^150 with weights 2^-800 gave
#: ``coef_ = 0``), and inside it that happens only for weights within 2^32 of float64's limits.
SAFE_SQUARED_NORM = 2.0 ** 64

#: Squared-error targets whose size lies within ``2^+-64`` are used as they are; beyond it the fits run
#: on the targets times a power of two (``target_units``).
SAFE_TARGET = 2.0 ** 64


def rescale_exactly(arrays, old, new, power=1):
    """Multiply each array in place by ``(new / old)^power`` (powers of two: exact, one ``ldexp``, where the ratio
    itself may leave float64), the state of a stream whose units change from ``old`` to ``new``."""
    shift = power * (int(_binary_exponent(new)) - int(_binary_exponent(old)))
    for a in arrays:
        a[...] = np.ldexp(a, shift)


def in_caller_units(estimator, weights, c, d=1.0):
    """The weights of ``X`` and ``y`` from those the iterates hold on ``X c`` and ``y d`` (``weights c / d``, exact),
    or a clear error where they leave float64: they scale like ``y / x``, so features near 1e-310 (scaled to run)
    put them beyond it (the fit returned infinite ``coef_`` with numpy's overflow warning only)."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = weights * c / d
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{type(estimator).__name__}: the coefficients exceed float64 in the units of X and y (they "
                         "scale like y / x, and the features are near 1e-300 or the targets near 1e300): scale the "
                         "features up or the targets down (e.g. StandardScaler) before fitting.")
    return out


def target_units(size, current=None):
    """``d``: the power of two the squared-error fits multiply their targets by, 1 for targets of a
    safe ``size`` (``target_scale``; ``None`` while every target is 0). A stream keeps its ``current``
    ``d`` while ``size d`` stays within ``2^+-64``, and picks anew from ``size`` beyond.

    The default steps do not depend on the target, and the loss and its penalty are both
    quadratic in the parameters and the target, so the iterates on ``y d`` are those on ``y``
    times ``d``, bit for bit, while the summed losses and the stop rule's reference stay
    representable: with targets near 1e-200 the squared losses underflowed to 0 and the stop
    rule never fired (1000 epochs), and near 1e200 they overflowed into a false divergence.
    """
    if size is None:
        return 1.0 if current is None else current
    if current is not None and 1.0 / SAFE_TARGET <= size * current <= SAFE_TARGET:
        return current
    return 1.0 if 1.0 / SAFE_TARGET <= size <= SAFE_TARGET else float(1.0 / _power_of_two_scale(size, normal=True))




def feature_scale(X, top):
    """A power of two ``c`` that brings the entries of ``X`` near 1, or 1.0 when ``top`` is safe.

    ``top = max_i ||x_i||^2``. The default steps divide by it, so it must not overflow
    (features of 1e154 and more) nor underflow (1e-154 and less), although the answer of
    such data (weights scaling like ``1 / x``) is representable. A fit whose iterates scale
    exactly (``eta0="auto"``, or a given ``eta0`` and ``lam`` mapped along, see
    ``scaled_fixed_step``) runs on ``X c`` and multiplies its weights by ``c``: multiplying by
    a power of two is exact, so every score, residual and step is the one of ``X`` to the
    last bit, and the weights are those of the unscaled iteration, scaled.
    """
    if 1.0 / SAFE_SQUARED_NORM <= top <= SAFE_SQUARED_NORM:
        return 1.0
    values = X.data if sp.issparse(X) else X
    largest = float(np.max(np.abs(values), initial=0.0))      # (top is 0 also where every square underflowed)
    # (normal=True: for subnormal features 2^-e itself overflowed to inf)
    return 1.0 if largest == 0.0 else float(1.0 / _power_of_two_scale(largest, normal=True))


def scaled_rows(X, scale=None, keep=False):
    """``(X c, c, max_i ||x_i c||^2, nonzeros)``: ``c`` is ``scale``, or a new pick (``feature_scale``) when
    ``scale`` is None or, unless ``keep``, when the chunk's squared row norms in its units leave the window of
    ``SAFE_SQUARED_NORM``.

    A stream keeps its ``c`` (its state is in those units) until a chunk's features change scale by that much
    (a first chunk of features near 1e-155, then features near 1: refused as overflowing); then the caller
    rescales its state to the new units (``rescale_exactly``). ``X c`` is a copy only when ``c != 1``.
    """
    top, nnz = row_stats(X)
    with np.errstate(over="ignore"):
        if scale is None or not (keep or top == 0.0 or 1.0 / SAFE_SQUARED_NORM <= top * scale * scale
                                 <= SAFE_SQUARED_NORM):
            scale = feature_scale(X, top)
    if scale != 1.0:
        if sp.issparse(X):
            X = X.copy()
            X.data *= scale
        else:
            X = X * scale
        top, nnz = row_stats(X)
    return X, scale, top, nnz


def scaled_fixed_step(eta0, scale):
    """``(eta0 / c^2, c^2)``: a given step in the units of ``X c`` and the factor of a scale-free step.

    On ``X c`` the weights are ``w / c``; the step ``eta0`` on the weights becomes ``eta0 / c^2``
    and a step on the intercept (which does not scale) keeps ``eta0``, i.e. ``c^2`` times the
    weights' step. When ``eta0 / c^2`` overflows, ``eta0 max ||x||^2`` is beyond 1e300: every
    step overshoots by that factor, so the iteration diverges in exact arithmetic too.
    """
    factor, eta = scale * scale, eta0 / scale / scale      # one factor at a time: exact when the result is normal
    if not np.isfinite(eta):
        raise ValueError(f"eta0={eta0:g} is too large for features of order {1.0 / scale:.0e}: eta0 times the "
                         "squared row norms exceeds 1e300, so every step overshoots and the iteration diverges. "
                         "Use eta0='auto' (scaled by the data) or scale the features (e.g. StandardScaler).")
    if eta < np.finfo(float).tiny or not np.isfinite(factor):
        raise ValueError(f"eta0={eta0:g} is too small for features of order {1.0 / scale:.0e}: eta0 times the "
                         "squared row norms is below 1e-300, so the steps cannot move the weights in double "
                         "precision. Use eta0='auto' (scaled by the data) or scale the features (e.g. StandardScaler).")
    return eta, factor


def adagrad_auto_steps(L_x, target_scale):
    """The default ``eta0="auto"`` with adagrad: ``(eta0_weights, eta0_intercept)``.

    An adagrad step ``eta g_i / (tau0 + sqrt(s_i))`` moves parameter ``i`` by about ``eta`` at
    first, whatever the size of its gradients (8.84): ``eta`` is a length in the parameter's own
    units, and a fixed ``eta = 1`` crawls towards weights of 1e8 and overshoots weights of 1e-8 (a
    fit on ``X * 1e8`` ended with R^2 = -8e10 and no warning). So the steps take the size of the
    parameters the data call for: the intercept ``s`` and the weights ``s / sqrt(L_x)``, with ``s``
    the root-mean-square of the target (1 for the classification losses, whose margins have no
    units) and ``L_x = max_i ||x_i||^2``. Scaling the features by ``a`` scales the weights' step by
    ``1 / a``, scaling the target by ``b`` both steps by ``b``: the iterates scale as the solution does
    (up to ``adagrad_tau0``, an absolute floor under ``sqrt(s_i)``). Features of very different
    scales still call for scaling them (adagrad adapts to the gradients' sizes, not to the weights').
    """
    if not np.isfinite(L_x):
        raise ValueError(f"the squared row norms overflow (largest ||x||^2 {L_x:.1e}): scale the features "
                         "(e.g. StandardScaler) before fitting with adagrad.")
    if L_x == 0.0:          # every row is zero so far: only the intercept moves
        return target_scale, target_scale
    return target_scale / np.sqrt(L_x), target_scale


def target_scale(T, sw, squared):
    """``s`` of :func:`adagrad_auto_steps`: the weighted root-mean-square of the targets ``T`` (one per
    sample) for the squared loss, computed without overflow for targets near 1e308; 1 for the
    classification losses; ``None`` while every target (of positive weight) is 0 (no scale yet)."""
    if not squared:
        return 1.0
    top = float(np.max(np.abs(T[sw > 0]), initial=0.0))
    if not top > 0:
        return None
    return top * float(np.sqrt(np.average((T / top) ** 2, weights=sw)))


def auto_steps(L_x, lam_n, m, w_max=1.0):
    """The default ``eta0="auto"``: initial steps of the weights and of the intercept.

    One sample's squared loss has curvature ``||x||^2`` along the weights and 1 along
    the intercept (the log-loss a quarter of that), times its sample weight. With
    ``L = w_max max_i ||x_i||^2 + lam/n`` (``w_max`` the largest sample weight) the weights
    take ``1 / (2 L)``; the intercept, whose column of ones is one more coordinate beside
    the ``m`` nonzero features of a typical row, takes the share of a typical feature,
    ``1 / (2 w_max (m + 1))``. A step then moves the residual of its sample by at most
    ``eta (||x||^2 / (2L) + 1 / (2(m+1))) < 1`` of itself: the squared-loss iteration
    cannot diverge, whatever the feature scale or the scale of the weights, and the
    iterates scale like ``1 / x`` when the features scale like ``x``.

    Returns ``(eta0_weights, eta0_intercept)``.
    """
    with np.errstate(over="ignore"):
        L = w_max * L_x + lam_n
    if not np.isfinite(L):
        raise ValueError(f"sample_weight times the squared row norms overflows (largest weight {w_max:.1e}, "
                         f"largest ||x||^2 {L_x:.1e}): rescale sample_weight (only its ratios matter "
                         "without a penalty) or scale the features.")
    eta_b = 0.5 / ((m + 1.0) * w_max)
    if L == 0.0:        # every row is zero so far: the weights get no gradient but the penalty
        return eta_b, eta_b
    return 0.5 / L, eta_b
