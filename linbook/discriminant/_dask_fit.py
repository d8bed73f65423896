"""The Gaussian classifiers (LDA, QDA, naive Bayes, diagonal LDA, shrunken centroids) on row blocks.

Their fit needs three sums over rows, each computed on the workers block by block with the
in-memory kernels and methods, and turned into parameters on the client by the in-memory code:

1. class counts, rows of positive weight per class, column ranges (:func:`linbook._dask.blocks.summarise`)
   -> ``GaussianClassifier._set_priors_and_scale``;
2. class sums of the standardised features (:func:`linbook._kernels.scatter.class_sums`)
   -> ``GaussianClassifier._set_means``;
3. the model's scatter statistic around those means (the model's own ``_scatter``: within-class
   scatter for LDA, one per class for QDA, squared residuals for the diagonal models)
   -> the model's ``_covariances_from``.

Only ``O(D^2 x classes)`` numbers reach the client.

Derived in: chapter "Gaussian models and GDA" § "Gaussian discriminant analysis".
"""

from __future__ import annotations

import numpy as np
from sklearn.base import clone

from .._kernels.scatter import class_sums
from ..base import check_params, encode_labels, require_y
from .._dask.blocks import map_reduce, row_blocks, summarise

__all__ = ["fit_gaussian_classifier"]


def _class_index(yb, classes):
    return np.searchsorted(classes, np.asarray(yb))


def _weights(swb):
    return None if swb is None else np.asarray(swb, dtype=np.float64)


def _positive_rows(Xb, yb, swb, model, keep):
    """The block's rows of positive weight (``X`` from the model's origin, kept features), as the in-memory fit
    takes them: a row of weight 0 with entries near 1e200 made ``0 * inf = NaN`` in the squared residuals."""
    X, y, sw = np.asarray(Xb, dtype=np.float64), np.asarray(yb), _weights(swb)
    if sw is not None and not np.all(sw > 0):
        X, y, sw = X[sw > 0], y[sw > 0], sw[sw > 0]
    return model._from_origin(X[:, keep]), _class_index(y, model.classes_), sw


def _class_sums_block(Xb, yb, swb, model, keep):
    X, yi, sw = _positive_rows(Xb, yb, swb, model, keep)
    return class_sums(X, yi, model.classes_.size, sw, model._inv_scale)


def _scatter_block(Xb, yb, swb, model, keep):
    return model._scatter(*_positive_rows(Xb, yb, swb, model, keep))


def fit_gaussian_classifier(est, X, y, sample_weight=None, *, covariance_is_a_row_sum):
    """``fit`` of a :class:`linbook.discriminant.base.GaussianClassifier` on dask collections: three
    passes, the in-memory steps. ``covariance_is_a_row_sum``: the model estimates its covariance as
    one scatter sum over rows (not RDA's or FisherLDA's estimates)."""
    name = type(est).__name__
    check_params(est)             # the in-memory fit's errors, before any pass over the data
    require_y(est, y)
    if not covariance_is_a_row_sum:
        raise TypeError(f"{name} cannot fit dask collections yet (its covariance is not a sum over rows): "
                        "pass numpy arrays (X.compute()) or use LDA, QDA, GaussianNaiveBayes, DiagonalLDA or "
                        "NearestShrunkenCentroids.")
    blocks = row_blocks(X, y, sample_weight, model=name)
    summary = summarise(blocks, name, allow_nan=est._nan_in_fit)
    if summary.n < 2:
        raise ValueError(f"{name}: X has {summary.n} sample(s) (shape=({summary.n}, {blocks.n_features})) but "
                         "a minimum of 2 is required. Pass more samples (rows of X).")
    work = clone(est)                       # the model is changed only when the whole fit succeeds
    work.classes_, _ = encode_labels(summary.labels, model=name)
    work._check_class_sizes(summary.label_rows)
    work.n_features_in_ = blocks.n_features
    if blocks.feature_names is not None:
        work.feature_names_in_ = blocks.feature_names
    keep = work._set_priors_and_scale(summary.label_weight.astype(float), summary.xmin, summary.xmax)
    sums, counts = map_reduce(_class_sums_block, blocks, work, keep)
    work._set_means(sums, counts, summary.xmin)
    work._covariances_from(map_reduce(_scatter_block, blocks, work, keep), counts)
    work._set_centres_spread()
    vars(est).clear()
    vars(est).update(vars(work))
    return est
