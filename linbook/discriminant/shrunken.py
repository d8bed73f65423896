"""Nearest shrunken centroids: diagonal LDA with soft-thresholded class centroids.

Derived in: chapter "Gaussian models and GDA" § "Nearest shrunken centroids".
"""

from __future__ import annotations

import numpy as np

from ..base import DEPRECATED, NON_NEGATIVE, check_params, renamed_param
from .base import ZERO_VARIANCE
from .naive_bayes import DiagonalGaussianClassifier

__all__ = ["NearestShrunkenCentroids"]


class NearestShrunkenCentroids(DiagonalGaussianClassifier):
    """Nearest shrunken centroids (eq. (4.66); Hastie et al. 2009, sec. 18.2).

    Class centroids ``mu_cj = m_j + Delta_cj`` are shrunk towards the overall mean ``m_j``:
    with pooled within-class standard deviations ``s_j`` (``1/(N - C)``), ``s_0 = median(s_j)``
    and ``m_c = sqrt(1/N_c - 1/N)``, the standardised offsets
    ``d_cj = (xbar_cj - m_j) / (m_c (s_j + s_0))`` are soft-thresholded,
    ``d'_cj = sign(d_cj) (|d_cj| - shrink_threshold)_+``, and ``mu_cj = m_j + m_c (s_j + s_0) d'_cj``.
    Classification is diagonal LDA with variances ``s_j^2`` around the shrunken centroids:
    ``delta_c(x) = -sum_j (x_j - mu_cj)^2 / (2 s_j^2) + log pi_c``. A feature with
    ``d'_cj = 0`` for every class plays no role (``selected_features_``). ``shrink_threshold = 0`` is
    :class:`DiagonalLDA`. With ``sample_weight``, ``N_c`` and ``N`` are sums of weights
    (integer weights equal repeated rows); with missing entries, counts of feature j's
    observed entries.

    Same centroids and predictions as ``sklearn.neighbors.NearestCentroid(shrink_threshold=...,
    priors=...)`` with non-uniform priors (scikit-learn's ``predict_proba`` is
    ``softmax(2 delta_c)``, i.e. ours squared and renormalised).

    Parameters
    ----------
    shrink_threshold : float >= 0
        The soft threshold on the standardised offsets (lambda in note 003; scikit-learn's
        name).
    priors : array_like, shape (C,), optional
    shrink : float, deprecated
        The old name of ``shrink_threshold`` (FutureWarning; removed in linbook 0.3).

    Attributes
    ----------
    classes_, priors_, class_count_, means_ : ndarray
    centroids_ : ndarray, shape (C, D)
        Shrunken centroids, in the units of X.
    deviations_ : ndarray, shape (C, D)
        Shrunken standardised offsets ``d'_cj``.
    within_class_std_dev_ : ndarray, shape (D,)
        ``s_j``, in the units of X.
    selected_features_ : ndarray of int
    n_params_ : int

    Derived in: chapter "Gaussian models and GDA" § "Nearest shrunken centroids".
    """

    _weights_count_samples = True       # its pooled variance divides by N - C

    _parameter_constraints = {**DiagonalGaussianClassifier._parameter_constraints, "shrink_threshold": [NON_NEGATIVE]}

    def __init__(self, shrink_threshold=0.0, priors=None, *, shrink=DEPRECATED):
        self.shrink_threshold = shrink_threshold
        self.priors = priors
        self.shrink = shrink

    def _covariances_from(self, within, counts):
        threshold = renamed_param(self, "shrink_threshold", "shrink")
        check_params(self, shrink_threshold=threshold)        # the value of the old name too
        C, D = self._means_z.shape
        n = counts.sum(axis=0)
        if np.any(n <= C):
            raise ValueError("NearestShrunkenCentroids needs more samples than classes of y (the pooled "
                             "variance divides by N - C, N the sum of sample_weight when given): collect "
                             "more rows of X and y, or scale sample_weight so that it counts samples (e.g. mean 1)")
        var = within.sum(axis=0) / (n - C)
        flat = np.flatnonzero(var <= ZERO_VARIANCE)
        if flat.size:
            raise ValueError(f"NearestShrunkenCentroids: feature(s) {flat.tolist()} have zero within-class "
                             "variance (column(s) of X constant inside every class of y); drop them")
        s = np.sqrt(var)
        # s_0 is a median over features, so it is taken in the units of X (not per-feature units)
        s0 = np.median(s * self._scale) * self._inv_scale
        m = (counts * self._means_z).sum(axis=0) / n
        # 1/n_c - 1/n = n_other / (n_c n) and mu_c - m = sum_k (n_k / n) (mu_c - mu_k), n_other summed over
        # the other classes: the differences as written cancel to 0 when those classes weigh ~1e-300
        # beside the rest (then spread 0 and d = 0/0), where both are ordinary small numbers
        others = (1.0 - np.eye(C)) @ counts
        mc = np.sqrt(others / counts / n)          # not counts * n: overflows for weights ~1e300
        spread = mc * (s + s0)
        offsets = np.stack([(counts / n * (mu - self._means_z)).sum(axis=0) for mu in self._means_z])
        d = offsets / spread
        d = np.sign(d) * np.maximum(np.abs(d) - threshold, 0.0)
        centroids = m + spread * d
        self.deviations_ = self._in_units_of_X(d, "deviations_", power=0)
        self.centroids_ = self._in_units_of_X(centroids, "centroids_", power=1)
        self.centroids_[:, self._keep] += self._origin
        self.centroids_[:, ~self._keep] = self.means_[:, ~self._keep]
        self.within_class_std_dev_ = self._in_units_of_X(s, "within_class_std_dev_", power=1)
        self.selected_features_ = np.flatnonzero(self._keep)[np.any(d != 0, axis=0)]
        self._set_diagonal(centroids, var)
        self.n_params_ = int(self._free_priors() + D + np.count_nonzero(d) + D)
