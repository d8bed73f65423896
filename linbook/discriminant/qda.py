"""Quadratic discriminant analysis: one full Gaussian per class.

Derived in: chapter "Gaussian models and GDA" § "Quadratic discriminant analysis".
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

from .._kernels.scores import class_sq_distances, stack_whitening
from .._kernels.scatter import within_scatter
from .base import QUADRATIC_EXACT, GaussianClassifier, cholesky, class_name

__all__ = ["QDA"]


class QDA(GaussianClassifier):
    """Quadratic discriminant analysis: one full Gaussian per class (eq. (4.33)).

    Maximises the joint log-likelihood (4.52): ``pi_c = N_c / N`` (unless ``priors``),
    ``mu_c`` the class mean and the MLE covariance (eq. (4.53))

        ``Sigma_c = (1 / N_c) sum_{i: y_i = c} (x_i - mu_c)(x_i - mu_c)^T``

    (with ``sample_weight``: ``w_i`` inside the sum and ``W_c`` for ``N_c``). The posterior is
    ``p(y = c | x) = softmax_c(log pi_c - 1/2 log|Sigma_c| - 1/2 (x - mu_c)^T Sigma_c^{-1} (x - mu_c))``
    (eq. (4.33)), the Mahalanobis term computed as ``||L_c^{-1}(x - mu_c)||^2`` with the
    Cholesky factor ``Sigma_c = L_c L_c^T``. Equals scikit-learn's
    ``QuadraticDiscriminantAnalysis()`` (``solver="svd"`` or ``"eigen"``, ``reg_param=0``),
    which uses the same ``1/N_c`` estimate.

    Parameters
    ----------
    priors : array_like, shape (C,), optional
        Class priors; default the (weighted) class frequencies.

    Attributes
    ----------
    classes_, priors_, class_count_, means_ : ndarray
    covariances_ : ndarray, shape (C, D, D)
        The ``Sigma_c``, in the units of X.
    constant_features_ : ndarray of bool
    n_params_ : int
        ``(C - 1) + C D + C D (D + 1) / 2``; the ``C - 1`` priors count only when estimated (``priors=None``).

    Raises
    ------
    ValueError
        A class with fewer than 2 samples, or a singular class covariance (e.g. ``N_c <= D``
        or collinear features within a class); the message names the regularised models.

    Derived in: chapter "Gaussian models and GDA" § "Quadratic discriminant analysis".
    """

    _min_per_class = 2

    def __init__(self, priors=None):
        self.priors = priors

    def _scatter(self, X, yi, sw):
        """The class scatter matrices ``sum_{i: y_i = c} w_i r_i r_i'``, shape (C, D, D)."""
        C, D = self._means_z.shape
        order = np.argsort(yi, kind="stable")                # rows of class c: order[start_c:end_c]
        ends = np.cumsum(np.bincount(yi, minlength=C))
        starts = np.r_[0, ends[:-1]]
        scatter = np.zeros((C, D, D))
        for c in range(C):
            if ends[c] > starts[c]:
                scatter[c] = within_scatter(X, yi, self._means_z, self._inv_scale, sw, rows=order[starts[c]:ends[c]])
        return scatter

    def _covariances_from(self, scatter, counts):
        C, D = self._means_z.shape
        chol = np.empty((C, D, D))
        for c in range(C):
            S_c = scatter[c] / self.class_count_[c]
            chol[c] = cholesky(S_c, model="QDA", what=f"the covariance of class {class_name(self.classes_[c])}")
        self._set_factors(chol)
        self.n_params_ = int(self._free_priors() + C * D + C * D * (D + 1) // 2)

    def _set_factors(self, chol):
        """What the scores need from the Cholesky factors ``L_c`` of the ``Sigma_c`` (standardised units)."""
        C, D = self._means_z.shape
        self._chol = chol
        self._logdet = 2.0 * np.log(np.diagonal(chol, axis1=1, axis2=2)).sum(axis=1)     # log|Sigma_c|
        # for the prediction kernel: W_c = L_c^{-T}, rows centred on the overall mean
        whiten = np.stack([linalg.solve_triangular(L, np.eye(D), lower=True).T for L in chol])
        self._center = self.class_count_ @ self._means_z / self.class_count_.sum()
        self._whiten = stack_whitening(whiten)
        self._offsets = np.einsum("cd,cde->ce", self._means_z - self._center, whiten)
        # each class's first class of the same covariance, bit for bit (itself where none is)
        self._same_as = np.array([next(r for r in range(c + 1) if np.array_equal(chol[r], chol[c])) for c in range(C)])

    def _marginal_model(self, o):
        # the marginal over the features o of N(mu_c, Sigma_c) is N(mu_c,o, Sigma_c,oo): a QDA of those features
        sub = self._restricted_to(QDA, o)
        covs = self._covariance_z()[:, o[:, None], o[None, :]]
        sub._set_factors(np.stack([linalg.cholesky(S, lower=True, check_finite=False) for S in covs]))
        return sub

    def _log_density(self, X, exact=False):
        # log N(x | mu_c, Sigma_c) = -1/2 ||L_c^{-1}(x - mu_c)||^2 - 1/2 log|Sigma_c| + class-free terms
        maha = class_sq_distances(X, self._inv_scale, self._center, self._whiten, self._offsets)
        s = -0.5 * (maha + self._logdet)
        if exact:
            return self._near_rows_from_own_centres(X * self._inv_scale, s + self._log_norm_const())
        shared = self._shares_covariances()
        if shared is not None:
            far = ~(maha <= QUADRATIC_EXACT).all(axis=1)
            if far.any():
                U = X[far] * self._inv_scale - self._center
                s[far] = self._same_covariance_scores(s[far], U, shared, 1.0)
        return self._near_rows_from_own_centres(X * self._inv_scale, s)

    @property
    def _center_z(self):
        return self._center

    def _own_centre_log_density(self, Z):
        D = self._means_z.shape[1]
        W = [self._whiten[:, c * D:(c + 1) * D] for c in range(self._means_z.shape[0])]
        dist = np.column_stack([np.einsum("ij,ij->i", G, G) for G in ((Z - mu) @ w for mu, w in zip(self._means_z, W))])
        return -0.5 * (dist + self._logdet) + self._log_norm_const(), dist

    def _shares_covariances(self):
        """The classes whose covariance is another's, bit for bit, or None."""
        own = np.arange(len(self._logdet))
        shared = np.flatnonzero(getattr(self, "_same_as", own) != own)
        return shared if shared.size else None

    def _same_covariance_scores(self, s, U, shared, shrink):
        """Scores ``s`` of rows far out, less the score of the class of the best one's covariance that comes first
        (``r``); each class ``c`` of class ``r'``'s covariance then scores ``s_r' - s_r`` plus their exact difference
        ``g . (o_c - o_r') - (|o_c|^2 - |o_r'|^2) / 2`` (``g = W_r'^T u``, ``u`` the row from the centre; times
        ``shrink``, the constant times ``shrink^2``, for row-scaled scores). Why: such classes differ only in a term
        linear in ``x``, which their Mahalanobis distances, each ~``|x|^2``, rounded away far from the data (two
        translated classes scored the same at 1e17: 0.5 / 0.5, the wrong class by argmax)."""
        D = self._offsets.shape[1]
        rows = np.arange(s.shape[0])
        top = self._same_as[np.argmax(s, axis=1)]
        out = s - s[rows, top][:, None]
        for c in shared:
            r = self._same_as[c]
            g = U @ self._whiten[:, r * D:(r + 1) * D]
            o_c, o_r = self._offsets[c], self._offsets[r]
            gap = 0.5 * (o_c - o_r) @ (o_c + o_r)
            # (out[:, r] is 0 where r's covariance is the best class's)
            out[:, c] = out[:, r] + (g @ (o_c - o_r) * shrink - gap * shrink * shrink)
        return out

    def _row_scaled_log_density(self, X, exponent):
        # the scores of _log_density / 4^e from u = z / 2^e (z - mu_c = 2^e (u - mu_c / 2^e)): a power of two
        # scales exactly, and ||L_c^{-1}(u - mu_c / 2^e)||^2 cannot overflow where ||L_c^{-1}(z - mu_c)||^2 does
        C, D = self._means_z.shape
        U = np.ldexp(X, -exponent[:, None]) * self._inv_scale
        shrink = np.ldexp(1.0, -exponent)[:, None]
        G = (U - self._center * shrink) @ self._whiten - self._offsets.reshape(1, C * D) * shrink
        G = G.reshape(len(U), C, D)
        maha = np.einsum("icd,icd->ic", G, G)
        s = -0.5 * (maha + np.ldexp(self._logdet, -2 * exponent[:, None]))
        shared = self._shares_covariances()
        if shared is not None:
            s = self._same_covariance_scores(s, U - self._center * shrink, shared, shrink[:, 0])
        return s

    def _covariance_z(self):
        return self._chol @ self._chol.transpose(0, 2, 1)

    @property
    def covariances_(self):
        """Class covariances ``Sigma_c``, shape (C, D, D), in the units of X."""
        return self._in_units_of_X(self._covariance_z(), "covariances_", matrix=True)
