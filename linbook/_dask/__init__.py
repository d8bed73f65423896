"""linbook's estimators on Dask: each fit is a sum over rows, so a map-reduce over row blocks.

A model's fit needs the data only through sums over samples: a Newton step needs
``g = sum_b X_b'(mu_b - y_b)`` and ``H = sum_b X_b' S_b X_b``; least squares needs the Gram
matrix ``X'X`` and ``X'y``; a discriminant model needs class counts, means and scatter
matrices. Each sum is computed block by block, on the workers, by the *same* functions the
in-memory fit uses (:func:`linbook.logistic.logistic_regression.logistic_loss` for a block's
``(F, g, H)``), the blocks' terms are added in a tree on the workers, and only the total --
``O(D^2 x classes)`` numbers -- reaches the client, which takes the step
(:func:`linbook.optim.newton`, the one Newton driver, with its line search).

This subpackage is imported only when a dask collection is passed to ``fit`` or a predict
method (``linbook.base.is_dask``), so ``import linbook`` never imports dask. It runs on the
active Dask scheduler: a ``distributed.Client`` when one exists.

Derived in: chapter "Optimizers" § "When the data do not fit: the Newton step as a map-reduce".
"""

from __future__ import annotations

from .blocks import map_method

__all__ = ["fit", "map_method"]


def _fitters():
    """``{estimator class: fit function}``; looked up along the MRO, so a subclass fits as its base."""
    from ..discriminant.base import GaussianClassifier
    from ..linear import LinearRegression, Ridge
    from ..logistic import LogisticRegression, ProbitRegression
    from . import discriminant, glm, linear

    return {LogisticRegression: glm.fit_logistic, ProbitRegression: glm.fit_probit,
            LinearRegression: linear.fit_linear_regression, Ridge: linear.fit_ridge,
            GaussianClassifier: discriminant.fit_gaussian_classifier}


def fit(estimator, X, y=None, sample_weight=None):
    """Fit ``estimator`` on dask collections ``X`` (array or DataFrame), ``y``, ``sample_weight``.

    The fitted attributes are numpy arrays, equal to the in-memory fit's. Returns ``estimator``.
    """
    table = _fitters()
    for cls in type(estimator).__mro__:
        if cls in table:
            return table[cls](estimator, X, y, sample_weight)
    raise TypeError(f"{type(estimator).__name__} cannot fit dask collections yet: pass numpy arrays "
                    "(X.compute()) or use one of " + ", ".join(sorted(c.__name__ for c in table)) + ".")
