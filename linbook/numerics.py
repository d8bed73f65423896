"""Numerically stable elementwise primitives.

Every function here is exact to float64 rounding over the whole real line and
emits no overflow/underflow warning, including at ``abs(z) = 1000`` and at ``+-inf``.

Derived in: chapter "Logistic regression" § "The sigmoid and its logarithm"
(stability), and chapter "Estimation" for ``logsumexp`` (normalising a
discrete posterior).
"""

from __future__ import annotations

import numpy as np

__all__ = ["sigmoid", "log_sigmoid", "log1pexp", "logsumexp", "softmax", "log_softmax"]


def sigmoid(z):
    """Logistic sigmoid ``1 / (1 + exp(-z))`` without overflow.

    For ``z >= 0`` it evaluates ``1 / (1 + exp(-z))``; for ``z < 0`` the
    algebraically equal ``exp(z) / (1 + exp(z))``, so ``exp`` only ever sees a
    non-positive argument.

    Parameters
    ----------
    z : array_like

    Returns
    -------
    ndarray or float
        Values in [0, 1], same shape as ``z``.

    Derived in: chapter "Logistic regression" § "Model".
    """
    z = np.asarray(z, dtype=float)
    with np.errstate(under="ignore"):  # exp(-1000) underflows to 0 by design
        e = np.exp(-np.abs(z))
    out = np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
    return out[()] if out.ndim == 0 else out


def log1pexp(z):
    """``log(1 + exp(z))`` (softplus), exact for every float64 ``z``.

    Uses ``max(z, 0) + log1p(exp(-|z|))``: the first term carries the
    asymptote, the second is in [0, log 2] and computed with ``log1p`` so
    that tiny values keep full relative precision.

    Derived in: chapter "Logistic regression" § "Negative log-likelihood".
    """
    z = np.asarray(z, dtype=float)
    with np.errstate(under="ignore"):  # exp(-|z|) underflows to 0 by design
        out = np.maximum(z, 0.0) + np.log1p(np.exp(-np.abs(z)))
    # -inf: max(-inf,0)=0, exp(-inf)=0 -> 0; +inf: inf + 0 = inf. Both fine.
    return out[()] if out.ndim == 0 else out


def log_sigmoid(z):
    """``log sigmoid(z) = -log1pexp(-z)``, exact for every float64 ``z``.

    Derived in: chapter "Logistic regression" § "Negative log-likelihood".
    """
    return -log1pexp(-np.asarray(z, dtype=float))


def logsumexp(a, axis=None, keepdims=False):
    """``log(sum(exp(a)))`` along ``axis`` with the max subtracted first.

    Rows that are entirely ``-inf`` give ``-inf`` (not NaN).

    Parameters
    ----------
    a : array_like
    axis : int or None
        Axis to reduce; ``None`` reduces everything.
    keepdims : bool

    Derived in: chapter "Logistic regression" § "Multinomial logistic regression".
    """
    a = np.asarray(a, dtype=float)
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore", under="ignore"):  # log(0) = -inf for all -inf rows
        out = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    if not keepdims:
        out = np.squeeze(out, axis=axis) if axis is not None else out.reshape(())
    return out[()] if np.ndim(out) == 0 else out


def log_softmax(a, axis=-1):
    """``a - logsumexp(a)`` along ``axis``, computed without cancellation.

    Derived in: chapter "Logistic regression" § "Multinomial logistic regression".
    """
    a = np.asarray(a, dtype=float)
    # Shift first, then subtract the small log-sum: a - logsumexp(a) would cancel
    # two large numbers (|a| ~ 1000) and lose ~13 digits' worth of absolute accuracy.
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    shifted = a - m
    with np.errstate(under="ignore", divide="ignore"):
        return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def softmax(a, axis=-1):
    """``exp(a) / sum(exp(a))`` along ``axis``; rows sum to one exactly up to rounding.

    Derived in: chapter "Logistic regression" § "Multinomial logistic regression";
    temperature form in chapter "Gaussian models and GDA" § "Softmax and temperature".
    """
    a = np.asarray(a, dtype=float)
    m = np.max(a, axis=axis, keepdims=True)
    with np.errstate(under="ignore"):
        e = np.exp(a - m)
    return e / np.sum(e, axis=axis, keepdims=True)
