"""Estimator plumbing shared by every linbook model.

linbook's estimators subclass scikit-learn's ``BaseEstimator`` and mixins, so they
work with ``clone``, ``Pipeline``, ``GridSearchCV`` and ``cross_val_score``. The
input checks reuse scikit-learn's validation (which already rejects NaN/inf and
wrong dimensions with a clear ``ValueError``) and add the checks the book's models
need: the number of classes a model can take, and a matching width at predict time.

Derived in: not a derivation; conventions are stated in the chapter
"Estimation: MLE, MAP and Bayes" § "Using linbook".
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import _check_sample_weight, check_array, check_is_fitted, check_X_y
from sklearn.utils.validation import validate_data as _sk_validate_data

__all__ = ["validate_data", "validate_X", "validate_fit", "validate_predict", "check_sample_weight",
           "encode_labels", "check_finite_fit", "LinbookWarning", "SeparableDataWarning",
           "DivergenceError"]


class LinbookWarning(UserWarning):
    """Base class for linbook's warnings."""


class SeparableDataWarning(LinbookWarning):
    """The data are (quasi-)separable, so an unregularised maximum-likelihood fit diverges."""


class DivergenceError(ValueError):
    """An iterative fit produced a non-finite loss or parameters (it diverged).

    A ``ValueError`` so that code catching bad-input errors also catches it; the
    message names the cure (scale the features, lower the step size, add a penalty).
    """


def validate_fit(estimator, X, y=None, *, y_numeric=False, accept_sparse=False, min_samples=1,
                 sample_weight=None, allow_nan=False):
    """Validate training data and record ``n_features_in_`` / ``feature_names_in_``.

    The one entry point every estimator's ``fit`` uses (scikit-learn's
    ``validate_data`` with ``reset=True``): ``X`` becomes a finite float64 array
    (or CSR matrix when ``accept_sparse``), ``y`` a 1-D array of the same length
    (float when ``y_numeric``). With ``sample_weight`` given (or ``None``), returns
    ``(X, y, w)`` where ``w`` is a float array of non-negative weights (ones when
    ``None``); without the keyword, returns ``(X, y)``. ``allow_nan=True`` lets NaN
    (missing values) through; inf is still rejected.
    """
    sparse = ["csr", "csc"] if accept_sparse is True else accept_sparse
    finite = "allow-nan" if allow_nan else True
    if y is None:
        X = _sk_validate_data(estimator, X, reset=True, dtype=np.float64, accept_sparse=sparse,
                              ensure_min_samples=min_samples, ensure_all_finite=finite)
        return X
    X, y = _sk_validate_data(estimator, X, y, reset=True, dtype=np.float64, accept_sparse=sparse,
                             y_numeric=y_numeric, ensure_min_samples=min_samples, ensure_all_finite=finite)
    if y_numeric:
        y = np.asarray(y, dtype=np.float64)
    return X, y


def check_sample_weight(sample_weight, X):
    """Non-negative float weights, one per row of ``X`` (ones when ``None``).

    Raises ``ValueError`` for negative, non-finite or all-zero weights, or a wrong length.
    """
    w = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
    if not np.all(np.isfinite(w)):
        raise ValueError("sample_weight must be finite.")
    if not np.any(w > 0):
        raise ValueError("sample_weight is zero for every sample: nothing to fit.")
    return w


def validate_predict(estimator, X, *, accept_sparse=False, allow_nan=False):
    """Validate ``X`` at predict time against what ``fit`` saw.

    Raises ``sklearn.exceptions.NotFittedError`` before ``fit``; checks the width and,
    when ``fit`` saw a DataFrame, the column names (scikit-learn's rules). Never
    modifies the estimator. ``allow_nan=True`` lets NaN (missing values) through.
    """
    check_is_fitted(estimator)
    sparse = ["csr", "csc"] if accept_sparse is True else accept_sparse
    return _sk_validate_data(estimator, X, reset=False, dtype=np.float64, accept_sparse=sparse,
                             ensure_all_finite="allow-nan" if allow_nan else True)


def check_finite_fit(estimator, *values, what="the fit", cure="scale the features (e.g. StandardScaler)"):
    """Raise :class:`DivergenceError` naming the cure when any value is not finite.

    Use after (or inside) an iterative fit on the loss and the parameters: a
    non-finite value means the iteration diverged or overflowed, and silently
    returning NaN would be a wrong answer.
    """
    for v in values:
        if v is None:
            continue
        a = np.asarray(v.data if hasattr(v, "data") and not isinstance(v, np.ndarray) else v)
        if a.dtype.kind in "fc" and not np.all(np.isfinite(a)):
            raise DivergenceError(
                f"{type(estimator).__name__}: {what} diverged (non-finite values). Cure: {cure}."
            )


def validate_data(X, y, *, y_numeric=False, min_samples=1):
    """Check ``X`` (2-D float, finite) and ``y`` (1-D, same length) for ``fit``.

    Returns float64 ``X`` and ``y`` (``y`` as float when ``y_numeric``).
    Raises ``ValueError`` with a readable message on NaN/inf, wrong shapes,
    mismatched lengths, or too few samples.
    """
    X, y = check_X_y(X, y, dtype=np.float64, y_numeric=y_numeric, ensure_min_samples=min_samples)
    if y_numeric:
        y = np.asarray(y, dtype=np.float64)
    return X, y


def validate_X(estimator, X):
    """Check ``X`` at predict time: finite, 2-D, and as wide as at ``fit``."""
    check_is_fitted(estimator)
    X = check_array(X, dtype=np.float64)
    n = getattr(estimator, "n_features_in_", None)
    if n is not None and X.shape[1] != n:
        raise ValueError(
            f"X has {X.shape[1]} features, but {type(estimator).__name__} was fitted with {n} features."
        )
    return X


def encode_labels(y, *, min_classes=2, max_classes=None, model="this model"):
    """Map arbitrary labels to ``0..K-1``.

    Returns ``(classes, y_index)`` where ``classes`` is sorted (as
    ``np.unique``) and ``y_index`` holds integer codes.

    Raises ``ValueError`` for continuous targets, fewer than ``min_classes``
    classes (e.g. a single class) or more than ``max_classes``.
    """
    kind = type_of_target(y)
    if kind not in ("binary", "multiclass"):
        raise ValueError(
            f"Unknown label type: {kind!r}. {model} needs class labels, but y looks {kind!r}. "
            "Use a regression model for a continuous target."
        )
    classes, y_index = np.unique(y, return_inverse=True)
    k = classes.size
    if k < min_classes:
        raise ValueError(
            f"{model} needs at least {min_classes} classes in y; got {k} class{'es' if k != 1 else ''} "
            f"({classes.tolist()}). "
            "A single class cannot be learned: check the data or its split."
        )
    if max_classes is not None and k > max_classes:
        raise ValueError(
            ("Only binary classification is supported. " if max_classes == 2 else "")
            + f"{model} takes at most {max_classes} classes; got {k} ({classes.tolist()[:10]})."
        )
    return classes, y_index
