"""The linear predictor ``X w + b`` of every linear model's predict methods, right for rows near 1e308.

A plain ``X @ w`` can overflow in a partial sum, or add two infinite terms into NaN, although the
score itself is an ordinary float64: with ``w = (1, -2)`` the row ``(1e308, 1e308)`` scores
``-1e308``, but ``1e308 * 1 + 1e308 * (-2)`` is ``-inf``. Such rows are computed again from
``x / 2^e`` and ``w / 2^k`` (powers of two just above their largest entries: the scaling is exact)
and multiplied back by ``2^(e + k)``. A score that fits in float64 then comes back right; one that
does not comes back as an infinity of the right sign, never NaN.

What a method may do with an infinite score differs:

* a class label or a binary probability needs only the sign (``sigmoid(+inf) = 1`` is exact);
* several classes' scores are needed relative to each other, so a far row is returned shifted by its
  largest score (``shift_far_rows``: softmax and argmax do not change under a shift of the row);
* a regression prediction or a public ``decision_function`` is the number itself: where it does not
  fit in float64 there is no right float to return, so :func:`finite_scores` raises a clear error.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .base import _finite, _plain_input, validate_predict
from .numerics import _binary_exponent

__all__ = ["linear_predictor", "predict_scores", "finite_scores"]


def linear_predictor(X, coef, intercept=0.0, *, shift_far_rows=False):
    """``X @ coef + intercept``: ``coef`` of shape ``(D,)`` gives ``(n,)``, ``(D, C)`` gives ``(n, C)``.

    ``X`` is validated (finite float64, dense or sparse). Rows whose plain product is not finite are
    computed again on exactly scaled rows (see the module docstring): exact where the score fits in
    float64, ``+-inf`` with the right sign where it does not. With ``shift_far_rows`` and several columns
    (classes), those rows come back minus their largest score instead: 0 for the top class, the others' gaps below
    it (``-inf`` where a gap does not fit), which is what argmax and softmax need.
    """
    scores = _product(X, coef, intercept)
    if _finite(scores):
        return scores
    bad = ~np.isfinite(scores)
    far = np.flatnonzero(bad.any(axis=1) if bad.ndim == 2 else bad)
    if far.size:
        scores[far] = _far_rows(X[far], coef, intercept, shift_far_rows)
    return scores


def linear_predictor_from(X, coef, intercept, origin, *, shift_far_rows=False):
    """:func:`linear_predictor` of validated ``X`` from the fit's ``origin``: ``(o, b_o)`` gives ``(X - o) @ coef +
    b_o`` for dense ``X``; ``None``, or sparse ``X`` (``X - o`` would be dense), gives ``X @ coef + intercept``.
    Why: a fit on columns offset far from 0 has ``intercept ~ -o^T coef``, and ``x^T w + b`` rounds at ``eps |o^T
    w|`` (2e-4 of the scores' spread at an offset of 1e12), where ``x - o`` is exact (Sterbenz)."""
    if origin is not None and not sp.issparse(X):
        with np.errstate(over="ignore"):
            shifted = X - origin[0]
        # a row on the other side of 0 from columns offset near 1e308 is further than float64 holds from o: it
        # takes the plain formula (its score ~1e3 overflowed to a false error)
        beyond = np.isinf(shifted).any(axis=1) & np.isfinite(X).all(axis=1)
        if not beyond.any():
            return linear_predictor(shifted, coef, origin[1], shift_far_rows=shift_far_rows)
        scores = linear_predictor(np.where(beyond[:, None], 0.0, shifted), coef, origin[1],
                                  shift_far_rows=shift_far_rows)
        scores[beyond] = linear_predictor(X[beyond], coef, intercept, shift_far_rows=shift_far_rows)
        return scores
    return linear_predictor(X, coef, intercept, shift_far_rows=shift_far_rows)


def predict_scores(estimator, X, coef, intercept=0.0, *, accept_sparse=False, shift_far_rows=False, origin=None):
    """``linear_predictor(validate_predict(estimator, X, accept_sparse=...), coef, intercept, ...)`` with one
    pass over ``X`` fewer: the fitted ``estimator``'s scores, where its ``coef`` and ``intercept`` were read by
    the caller (after ``check_is_fitted``).

    ``origin``: ``(o, b_o)`` of a fit on columns offset far from 0 (:func:`linear_predictor_from`).

    Validation tests every entry of ``X`` for NaN and inf, a pass over ``X`` as long as the product itself
    (1e6 x 20: ~10 ms of a prediction's ~18). For a plain float64 ``X`` and coefficients without a zero, the
    scores prove it instead: a NaN or inf entry makes its product with a nonzero coefficient NaN or inf, and
    that term makes its row's score NaN or inf (NaN and inf propagate through a sum, ``inf - inf`` is NaN), in
    any BLAS (one may skip a zero entry of ``X``, which is finite). So all scores finite means ``X`` finite.
    Otherwise (a NaN or inf in ``X``, or a far row whose score overflowed) the call goes the validated way:
    validation raises its error for ``X``, or :func:`linear_predictor` computes the far rows again.
    """
    coef = np.asarray(coef)
    if origin is not None and not sp.issparse(X):
        X = validate_predict(estimator, X, accept_sparse=accept_sparse)
        return linear_predictor_from(X, coef, intercept, origin, shift_far_rows=shift_far_rows)
    if (not sp.issparse(X) and np.count_nonzero(coef) == coef.size
            and _plain_input(estimator, X, None, reset=False, finite_X=False)):
        scores = _product(X, coef, intercept)
        if _finite(scores):
            return scores
    X = validate_predict(estimator, X, accept_sparse=accept_sparse)
    return linear_predictor(X, coef, intercept, shift_far_rows=shift_far_rows)


def _product(X, coef, intercept):
    """``X @ coef + intercept``, with overflow left to the caller's test of the scores."""
    with np.errstate(over="ignore", invalid="ignore"):
        if coef.ndim == 2 and not sp.issparse(X):
            # several classes: (coef^T X^T)^T is column-major straight from BLAS's wide product (X @ coef
            # with coef a transposed view pays a strided copy: 1e6 x 20, 10 classes, 0.10 s against 0.25 s),
            # and argmax and softmax over the classes of a row are vectorised over rows in that order
            return (coef.T @ X.T).T + intercept
        return np.asarray(X @ coef) + intercept


def _far_rows(rows, coef, intercept, shift):
    """The scores of ``rows`` from ``rows / 2^e`` (per row) and ``coef / 2^k``, multiplied back by
    ``2^(e + k)`` (``ldexp``: overflow gives an infinity of the right sign, never NaN)."""
    coef = np.asarray(coef, dtype=float)
    k = int(_binary_exponent(np.max(np.abs(coef), initial=0.0)))
    if sp.issparse(rows):
        e = _binary_exponent(abs(rows).max(axis=1).toarray().ravel())
        scaled = np.asarray(sp.diags(np.ldexp(1.0, -e)) @ rows @ np.ldexp(coef, -k))
    else:
        e = _binary_exponent(np.max(np.abs(rows), axis=1))
        scaled = np.ldexp(rows, -e[:, None]) @ np.ldexp(coef, -k)
    exponent = (e + k).reshape((-1,) + (1,) * (scaled.ndim - 1))
    with np.errstate(under="ignore"):           # an intercept far below the row's scale is negligible
        scaled = scaled + np.ldexp(intercept, -exponent)
    if shift and scaled.ndim == 2 and scaled.shape[1] > 1:     # one column keeps its score (sign)
        scaled = scaled - scaled.max(axis=1, keepdims=True)
    with np.errstate(over="ignore"):            # a score beyond float64: +-inf, the sign is right
        return np.ldexp(scaled, exponent)


def finite_scores(estimator, scores, what="prediction"):
    """``scores`` when all are finite; otherwise the clear error of a score beyond float64."""
    if not _finite(scores):
        raise ValueError(f"{type(estimator).__name__}: the {what} of some rows of X overflows float64 "
                         "(|X @ coef_| beyond 1.8e308: rows far larger than the training data); pass X in the "
                         "units used in fit, or scale the features and refit.")
    return scores
