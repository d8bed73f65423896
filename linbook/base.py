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
from sklearn.utils.validation import check_array, check_is_fitted, check_X_y

__all__ = ["validate_data", "validate_X", "encode_labels", "LinbookWarning",
           "SeparableDataWarning"]


class LinbookWarning(UserWarning):
    """Base class for linbook's warnings."""


class SeparableDataWarning(LinbookWarning):
    """The data are (quasi-)separable, so an unregularised maximum-likelihood fit diverges."""


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
            f"{model} needs class labels, but y looks {kind!r}. "
            "Use a regression model for a continuous target."
        )
    classes, y_index = np.unique(y, return_inverse=True)
    k = classes.size
    if k < min_classes:
        raise ValueError(
            f"{model} needs at least {min_classes} classes in y; got {k} ({classes.tolist()}). "
            "A single class cannot be learned: check the data or its split."
        )
    if max_classes is not None and k > max_classes:
        raise ValueError(
            f"{model} takes at most {max_classes} classes; got {k} ({classes.tolist()[:10]})."
        )
    return classes, y_index
