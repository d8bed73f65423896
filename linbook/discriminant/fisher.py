"""Fisher's linear discriminant: the projection that best separates the class means.

Derived in: chapter "Generative vs discriminative classifiers" § "Fisher's linear discriminant (8.6.3)".
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import linalg
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.multiclass import check_classification_targets

from .._kernels.scatter import class_sums, column_range, within_scatter
from ..base import (POSITIVE_INT, LinbookWarning, _finite, all_or_nothing, check_params, check_sample_weight,
                    encode_labels, require_y, validate_fit, validate_predict, weights_near_one, _with_advice)
from .._predictor import finite_scores, linear_predictor
from ..numerics import _orient_columns, _power_of_two_scale
from .._design import range_origin
from .base import _weight_spread_note, cholesky, require_class_rows

__all__ = ["FisherLDA"]


class FisherLDA(TransformerMixin, BaseEstimator):
    """Fisher's linear discriminant: project onto L <= C - 1 discriminant directions.

    Maximises ``J(W) = |W^T Sigma_B W| / |W^T Sigma_W W|`` with
    ``Sigma_B = sum_c (N_c/N)(mu_c - mu)(mu_c - mu)^T`` and
    ``Sigma_W = sum_c (N_c/N) Sigma_c`` (eqs. (8.114)-(8.117)). The columns of ``W`` are the
    leading generalised eigenvectors ``Sigma_B w = lambda Sigma_W w`` (8.107), normalised so
    ``W^T Sigma_W W = I`` (equivalently ``W = Sigma_W^{-1/2} U``, eq. (8.118)). With sample weights
    ``s_i``, ``N_c`` and ``N`` are sums of weights and every mean and scatter is weighted (integer
    weights equal repeated rows). Because
    ``rank(Sigma_B) <= C - 1``, at most ``C - 1`` eigenvalues are non-zero. Both scatter
    matrices are formed for the standardised features ``x / s`` (``s_j`` a power of two
    near ``max_i |x_ij|``), so features of size 1e300 do not overflow them. A column
    constant over all rows (of positive weight) is in neither scatter matrix; its row of ``W`` is 0.

    Parameters
    ----------
    n_components : int, optional
        L; default ``min(C - 1, D)``, D counting the columns that are not constant. Must be
        ``<= min(C - 1, D)``.

    Attributes
    ----------
    scalings_ : ndarray, shape (D, L)
        The directions ``W``. Each is defined up to its sign; the sign is fixed so that the column's
        entry of largest magnitude is positive (the first such entry, by column of ``X``, when several
        tie to a relative 1e-6), so it does not depend on the BLAS/LAPACK build, the order of the rows
        or the class labels. Directions of equal Fisher ratio are defined only up to a rotation.
    eigenvalues_ : ndarray, shape (L,)
        The Fisher ratios ``J(w_l)``, decreasing.
    mean_ : ndarray, shape (D,)
    classes_ : ndarray

    Derived in: chapter "Generative vs discriminative classifiers" § "Fisher's linear discriminant (8.6.3)".
    """

    _parameter_constraints = {"n_components": [POSITIVE_INT, None]}

    def __init__(self, n_components=None):
        self.n_components = n_components

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags

    @all_or_nothing
    def fit(self, X, y, sample_weight=None):
        """Compute the scatter matrices and solve the generalised eigenproblem.

        Parameters
        ----------
        X : array_like, shape (N, D)
        y : array_like, shape (N,)
        sample_weight : array_like, shape (N,), optional
            Non-negative weights; every class needs positive total weight.

        Returns
        -------
        self
        """
        check_params(self)
        require_y(self, y)
        X, y = validate_fit(self, X, y, min_samples=2)
        if y.dtype == object:                   # "Unknown label type" for non-label objects
            with _with_advice(self):
                check_classification_targets(y)
        classes, yi = encode_labels(y, model="FisherLDA")
        sw = None if sample_weight is None else weights_near_one(check_sample_weight(sample_weight, X,
                                                                                     estimator=self))[0]
        require_class_rows("FisherLDA", classes, np.bincount(yi, weights=None if sw is None else (sw > 0),
                                                             minlength=classes.size))
        C = classes.size
        N, D = X.shape
        lo, hi = column_range(X, sw)
        # a column constant over all rows adds nothing to either scatter: its loading is 0, and it
        # adds no direction (rank(Sigma_B) <= min(C - 1, number of varying columns))
        keep = hi > lo
        if not keep.any():
            raise ValueError("FisherLDA: every column of X is constant; there is nothing to project. "
                             "Pass an X with at least one varying column.")
        varying = int(keep.sum())
        Lmax = min(C - 1, varying)
        L = Lmax if self.n_components is None else int(self.n_components)
        if not 1 <= L <= Lmax:
            of = "D" if varying == D else f"the {varying} varying columns of X"
            raise ValueError(f"n_components must be between 1 and min(C - 1, {of}) = {Lmax} "
                             f"(rank(Sigma_B) <= C - 1); got {self.n_components}. Set n_components in that "
                             "range, or None for the largest.")
        origin = range_origin(lo[keep], hi[keep])          # (see linbook._design.range_origin)
        Xk = X[:, keep] if not keep.all() else X
        try:
            vals, W_z, mu_z, scale = self._directions(Xk - origin if np.any(origin) else Xk, yi, C,
                                                      lo[keep] - origin, hi[keep] - origin, sw)
        except ValueError as exc:
            raise ValueError(f"{exc}{_weight_spread_note(sw)}") from None
        order = np.argsort(vals)[::-1][:L]
        _warn_if_not_unique(vals[order], L)
        self.classes_, self.eigenvalues_ = classes, vals[order]
        self._set_scalings(W_z[:, order], mu_z, scale, keep, lo, origin)
        return self

    def _set_scalings(self, W_z, mu_z, scale, keep, lo, origin):
        """``scalings_`` (``W_z / s`` in the units of X, each column's sign fixed) and ``mean_``, and what transform
        needs. Why the standardised copy: for features ~1e-308 or below, ``W`` in the units of X (~1 / s) is beyond
        float64, and transform refused the training rows themselves ("rows far larger than the training data")."""
        # each column's sign fixed on W in the units of X up to one power of two (min(s) / s <= 1: no overflow)
        M = W_z * (scale.min() / scale)[:, None]
        W_z = W_z * np.where(np.all(_orient_columns(M) == M, axis=0), 1.0, -1.0)
        scalings = np.zeros((keep.size, W_z.shape[1]))
        with np.errstate(over="ignore"):
            scalings[keep] = W_z / scale[:, None]
        self.scalings_ = scalings
        self.mean_ = lo.astype(float)
        self.mean_[keep] = mu_z * scale + origin
        # the mean as origin + offset from it (a feature far from 0: mean_ itself rounds at eps |mean|)
        self._origin = np.zeros(keep.size)
        self._origin[keep] = origin
        self._mean_from_origin = np.where(keep, 0.0, self.mean_)
        self._mean_from_origin[keep] = mu_z * scale
        self._standardised = None if _finite(scalings) else (W_z, mu_z, 1.0 / scale, keep, origin)
        if self._standardised is not None:
            warnings.warn("FisherLDA: scalings_ is beyond float64 (features of ~1e-300 or smaller make the directions "
                          "~1e300 or more) and holds inf; transform uses standardised features and is unaffected. "
                          "To inspect it, fit on rescaled features (e.g. X * 1e300).", LinbookWarning, stacklevel=4)

    @staticmethod
    def _directions(X, yi, C, lo, hi, sw=None):
        """Generalised eigenpairs of (Sigma_B, Sigma_W) in the units of X, and the mean (varying columns)."""
        scale = _power_of_two_scale(np.maximum(-lo, hi), normal=True)      # 1 / scale is exact too
        counts = np.bincount(yi, weights=sw, minlength=C).astype(float)          # N_c (weighted)
        N = counts.sum()
        means = class_sums(X, yi, C, sw, 1.0 / scale)[0] / counts[:, None]         # standardised units
        mu = counts @ means / N
        Sw = within_scatter(X, yi, means, 1.0 / scale, w=sw) / N
        B = (means - mu) * np.sqrt(counts / N)[:, None]
        Sb = B.T @ B
        cholesky(Sw, model="FisherLDA", what="the within-class covariance Sigma_W",
                 cure="drop constant or duplicated columns, or project the data with PCA first (note 000, 8.6.3.2)")
        try:
            vals, vecs = linalg.eigh(Sb, Sw)
        except linalg.LinAlgError as exc:
            raise ValueError(f"FisherLDA: the generalised eigenproblem failed ({exc}); Sigma_W is near "
                             "singular: project the data with PCA first") from None
        return vals, vecs, mu, scale          # standardised units: W = vecs / scale, the mean mu * scale

    def transform(self, X):
        """Project: ``z = W^T (x - mu)``.

        Parameters
        ----------
        X : array_like, shape (N, D)

        Returns
        -------
        Z : ndarray, shape (N, L)
        """
        X = validate_predict(self, X)
        if self._standardised is not None:
            W_z, mu_z, inv_scale, keep, origin = self._standardised
            with np.errstate(over="ignore", invalid="ignore"):
                Z = ((X[:, keep] - origin) * inv_scale - mu_z) @ W_z
            return finite_scores(self, Z, "projection")
        with np.errstate(over="ignore", invalid="ignore"):
            shifted = X - self._origin if np.any(self._origin) else X
            Z = (shifted - self._mean_from_origin) @ self.scalings_
        far = ~np.isfinite(Z).all(axis=1)
        if far.any():       # rows near 1e308: x - mu or a partial sum overflowed (linbook._predictor)
            Z[far] = linear_predictor(X[far], self.scalings_, -(self.mean_ @ self.scalings_))
        return finite_scores(self, Z, "projection")


# An eigenvalue below this fraction of the largest is zero to rounding: Sigma_B has no such direction.
_ZERO_EIGENVALUE = 1e-12


def _warn_if_not_unique(vals, n_components):
    """Warn when a kept eigenvalue (descending ``vals``) is zero to rounding: the class means span fewer
    directions than ``n_components``, and each direction past them is any ``Sigma_W``-orthogonal vector
    of the null space of ``Sigma_B``: a valid answer, but not determined by the data."""
    rank = int(np.sum(vals > _ZERO_EIGENVALUE * max(vals[0], 0.0)))
    if rank < n_components:
        which = (f"component {n_components} is" if rank + 1 == n_components else
                 f"components {rank + 1} to {n_components} are")
        warnings.warn(f"FisherLDA: the class means span only {rank} direction{'s' if rank != 1 else ''} (the "
                      f"generalised eigenvalues {', '.join(f'{v:.1e}' for v in vals[rank:])} are zero to rounding), "
                      f"so {which} not determined by the data: any direction Sigma_B does not see is as good. "
                      f"Pass n_components={max(rank, 1)}.", UserWarning, stacklevel=3)
