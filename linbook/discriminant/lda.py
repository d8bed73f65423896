"""Linear discriminant analysis (one shared covariance) and its regularised form RDA.

Derived in: chapter "Gaussian models and GDA" § "Linear discriminant analysis".
"""

from __future__ import annotations

import warnings
from numbers import Real

import numpy as np
from scipy import linalg
from sklearn.utils.validation import check_is_fitted

from .._kernels.scatter import within_scatter
from .._kernels.scores import linear_scores
from ..base import DEPRECATED, Interval, LinbookWarning, _finite, _plain_input, check_params, renamed_param
from ..numerics import _orient_columns
from .base import SINGULAR_CURE, ZERO_VARIANCE, GaussianClassifier, cholesky

__all__ = ["LDA", "RDA"]


class LDA(GaussianClassifier):
    """Linear discriminant analysis: Gaussians with one shared covariance (eqs. (4.34)-(4.38)).

    Maximises (4.52) with ``Sigma_c = Sigma``, the pooled within-class MLE

        ``Sigma = (1 / N) sum_c sum_{i: y_i = c} (x_i - mu_c)(x_i - mu_c)^T``

    (with ``sample_weight``: ``w_i`` inside the sum and ``W = sum_i w_i`` for ``N``). The
    posterior is ``softmax_c(beta_c^T x + gamma_c)`` (4.38) with ``beta_c = Sigma^{-1} mu_c``
    and ``gamma_c = -mu_c^T beta_c / 2 + log pi_c`` (4.36)-(4.37), solved by Cholesky.
    Equals scikit-learn's ``LinearDiscriminantAnalysis(solver="lsqr")`` (and ``"eigen"``).

    Parameters
    ----------
    priors : array_like, shape (C,), optional
        Class priors; default the (weighted) class frequencies.

    Attributes
    ----------
    classes_, priors_, class_count_, means_ : ndarray
    covariance_ : ndarray, shape (D, D)
        ``Sigma`` in the units of X.
    betas_ : ndarray, shape (C, D)
    gammas_ : ndarray, shape (C,)
    coef_, intercept_ : ndarray
        As scikit-learn: ``betas_`` / ``gammas_``, or for two classes the single row
        ``w = beta_1 - beta_0 = Sigma^{-1}(mu_1 - mu_0)`` (4.48) and ``gamma_1 - gamma_0``.
    constant_features_ : ndarray of bool
    n_params_ : int
        ``(C - 1) + C D + D (D + 1) / 2``; the ``C - 1`` priors count only when estimated (``priors=None``).

    Derived in: chapter "Gaussian models and GDA" § "Linear discriminant analysis".
    """

    def __init__(self, priors=None):
        self.priors = priors

    def _scatter(self, X, yi, sw):
        return within_scatter(X, yi, self._means_z, self._inv_scale, sw)      # sum_i w_i r_i r_i'

    def _covariances_from(self, scatter, counts):
        S = scatter / self.class_count_.sum()
        self._chol = cholesky(S, model=type(self).__name__, what="the pooled covariance")
        solve = lambda M: linalg.cho_solve((self._chol, True), M.T).T   # noqa: E731  rows M Sigma^{-1}
        self._set_discriminants(solve, 2.0 * np.log(np.diag(self._chol)).sum())

    def _set_discriminants(self, solve, logdet_z):
        """beta_c, gamma_c (4.36)-(4.37) in standardised units; ``solve(M)`` applies ``Sigma^{-1}`` to rows.

        The scores use the discriminants of the data centred at the mean ``m`` of the
        classes' means, ``(x - m)^T Sigma^{-1} (mu_c - m) - (mu_c - m)^T Sigma^{-1} (mu_c - m) / 2``,
        which differ from (4.36)-(4.37) by a term that does not depend on the class. With a
        feature offset by 1e8, ``x^T Sigma^{-1} mu_c`` is ~1e16 and the classes' differences of
        order 1 would drown in its rounding; centred, nothing large is subtracted.
        """
        C, D = self._means_z.shape
        self._set_scores(solve, logdet_z)
        means_z = self._means_z + self._origin * self._inv_scale      # mu_c from X's origin, as reported
        betas_z = solve(means_z)                                # Sigma^{-1} mu_c, as reported
        self.betas_ = np.zeros((C, self._keep.size))
        with np.errstate(over="ignore"):
            self.betas_[:, self._keep] = betas_z * self._inv_scale
        if not _finite(self.betas_):
            warnings.warn(f"{type(self).__name__}: betas_ and coef_ are beyond float64 (features of ~1e-300 or smaller "
                          "make Sigma^{-1} mu_c ~1e300 or more) and hold inf; predictions use standardised features "
                          "and are unaffected. To inspect them, fit on rescaled features (e.g. X * 1e300).",
                          LinbookWarning, stacklevel=4)
        self.gammas_ = -0.5 * np.einsum("cd,cd->c", means_z, betas_z) + self._log_priors
        if C == 2:
            self.coef_, self.intercept_ = self._binary_discriminant()
        else:
            self.coef_, self.intercept_ = self.betas_, self.gammas_
        self.n_params_ = int(self._free_priors() + C * D + D * (D + 1) // 2)

    def _set_scores(self, solve, logdet_z):
        """What the scores need (:meth:`_set_discriminants`): the centre ``m``, ``b_c = Sigma^{-1} (mu_c - m)``,
        ``(mu_c - m)^T b_c`` and ``log|Sigma|``, in standardised units."""
        counts = self.class_count_
        center_z = counts @ self._means_z / counts.sum()
        centred = self._means_z - center_z
        betas_c = solve(centred)                                # Sigma^{-1} (mu_c - m)
        self._center_z, self._betas_z = center_z, betas_c
        self._center = center_z * self._scale                   # m in the units of X (kept features)
        with np.errstate(over="ignore"):
            self._betas = betas_c * self._inv_scale             # for x - m, in the units of X
        self._quad_mu = np.einsum("cd,cd->c", centred, betas_c)
        # features below ~1e-308 (subnormal): b_c in the units of X is beyond float64, so rows are standardised
        with np.errstate(over="ignore", invalid="ignore"):
            self._standardise_rows = not (_finite(self._betas) and _finite(self._class_constants()))
        self._logdet = logdet_z

    def _marginal_model(self, o):
        # the marginal over the features o of N(mu_c, Sigma) is N(mu_c,o, Sigma_oo): an LDA of those features (RDA's
        # too: Sigma_oo is no longer of its shrunk form, so its Cholesky factor serves)
        sub = self._restricted_to(LDA, o)
        sub._chol = linalg.cholesky(self._covariance_z()[np.ix_(o, o)], lower=True, check_finite=False)
        solve = lambda M: linalg.cho_solve((sub._chol, True), M.T).T   # noqa: E731  rows M Sigma_oo^{-1}
        sub._set_scores(solve, 2.0 * np.log(np.diag(sub._chol)).sum())
        return sub

    def _binary_discriminant(self):
        """``coef_, intercept_`` of two classes, ``beta_1 - beta_0`` and ``gamma_1 - gamma_0``, from the centred
        discriminants: ``Sigma^{-1} (mu_1 - m) - Sigma^{-1} (mu_0 - m)`` is the same vector, but each ``beta_c`` of a
        feature offset by 1e12 is ~1e12 and their difference (of order 1) rounded at 1e-4 relative."""
        with np.errstate(over="ignore", invalid="ignore"):
            w = self._betas[1] - self._betas[0]                 # for x - origin, in the units of X
            b = (-0.5 * (self._quad_mu[1] - self._quad_mu[0]) - self._center @ w - self._origin @ w
                 + (self._log_priors[1] - self._log_priors[0]))
        if not (_finite(w) and np.isfinite(b)):                 # features near 1e-300: as reported, inf
            return (self.betas_[1] - self.betas_[0])[None, :], np.array([self.gammas_[1] - self.gammas_[0]])
        coef = np.zeros((1, self._keep.size))
        coef[0, self._keep] = w
        return coef, np.array([b])

    def _log_density(self, X, exact=False):
        # log N(x | mu_c, Sigma) = beta_c^T x - mu_c^T beta_c / 2  - x^T Sigma^{-1} x / 2 - log|2 pi Sigma| / 2
        # with x and mu_c measured from the centre m (see _set_discriminants)
        # (x - m)' b_c = x' b_c - m' b_c: with b_c = Sigma^{-1} (mu_c - m) of order 1 both terms
        # are as large as x itself, so no copy of X is needed for the centring
        if self._standardise_rows:
            Z = X * self._inv_scale - self._center_z            # a copy: b_c in the units of X would overflow
            s = linear_scores(Z, self._betas_z, -0.5 * self._quad_mu)
        else:
            s = linear_scores(X, self._betas, self._class_constants())
        if exact:
            Z = X * self._inv_scale - self._center_z
            s -= 0.5 * (self._quad(Z)[:, None] + self._logdet)
            s += self._log_norm_const()
        return self._near_rows_from_own_centres(X * self._inv_scale, s)

    def _own_centre_log_density(self, Z):
        D = np.column_stack([self._quad(Z - mu) for mu in self._means_z])
        return -0.5 * (D + self._logdet) + self._log_norm_const(), D

    def _scores_proving_X_finite(self, X):
        # as _predictor.predict_scores: a NaN or inf entry of X times a nonzero b_cj makes the scores of its row
        # NaN or inf (in any BLAS), so all scores finite means X finite, and validation's pass over X is not needed
        check_is_fitted(self)
        if not (self._keep.all() and not self._standardise_rows and not np.any(self._origin) and np.count_nonzero(self._betas) == self._betas.size
                and _plain_input(self, X, None, reset=False, finite_X=False)):
            return None
        with np.errstate(over="ignore", invalid="ignore"):      # overflow and NaN: the validated way
            s = self._log_density(X)
            s += self._log_priors
        return s if _finite(s) else None

    def _class_constants(self):
        """``-(mu_c - m)^T beta_c / 2 - m^T b_c``: the class scores' constant terms for ``x`` in the units of X."""
        return -0.5 * self._quad_mu - self._betas @ self._center

    def _row_scaled_log_density(self, X, exponent):
        # the class-dependent scores are linear, x' b_c + k_c: over 4^e they are (u' b_c + k_c / 2^e) / 2^e
        # with u = x / 2^e (powers of two scale exactly), and u' b_c cannot overflow where x' b_c does
        column = exponent[:, None]
        if self._standardise_rows:
            # features ~1e-308 or below in fit: a row whose scores overflow is ~1e300 standard deviations away, and
            # its scores over 4^e (e from x) overflow as well
            raise ValueError(f"{type(self).__name__}: the scores of some rows of X overflow float64 (they are ~1e300 "
                             "or more standard deviations from every class mean: the features in fit were ~1e-308 or "
                             "smaller); pass X in the units used in fit")
        scaled = np.ldexp(X, -column) @ self._betas.T + np.ldexp(self._class_constants(), -column)
        with np.errstate(under="ignore"):       # scores far below the row's scale matter as little
            return np.ldexp(scaled, -column)

    def _quad(self, Z):
        """``z^T Sigma^{-1} z`` for each row of Z (standardised units)."""
        R = linalg.solve_triangular(self._chol, Z.T, lower=True, check_finite=False)
        return np.einsum("ij,ij->j", R, R)

    def _covariance_z(self):
        return self._chol @ self._chol.T

    @property
    def covariance_(self):
        """The shared covariance ``Sigma``, shape (D, D), in the units of X."""
        return self._in_units_of_X(self._covariance_z(), "covariance_", matrix=True)


class RDA(LDA):
    """Regularised LDA: shared covariance ``shrinkage diag(S) + (1 - shrinkage) S`` (eq. (4.54)).

    ``S`` is the pooled within-class MLE covariance of :class:`LDA` (MLAPP §4.2.6). The fit
    never forms ``Sigma^{-1}``: with ``Delta = diag(S)``, the pooled correlation matrix
    ``R = Delta^{-1/2} S Delta^{-1/2} = V diag(e) V^T`` (``V`` is D x r, ``r <= min(N, D)``;
    from the thin SVD of the standardised residuals when ``N < D``) and ``lam = shrinkage``,

    ``Sigma = Delta^{1/2} (lam I + (1 - lam) V diag(e) V^T) Delta^{1/2}``,
    ``Sigma^{-1} = Delta^{-1/2} [V diag(1/(lam + (1 - lam) e)) V^T + (I - V V^T)/lam] Delta^{-1/2}``,

    the exact form of the SVD trick of eqs. (4.55)-(4.63) (which, as written in the note,
    shrinks towards the diagonal of the rotated covariance instead). Cost O(N D min(N, D));
    works for D > N when ``shrinkage > 0``. ``shrinkage = 0`` is :class:`LDA`;
    ``shrinkage = 1`` a diagonal model with MLE (``1/N``) pooled variances. (scikit-learn's
    ``LinearDiscriminantAnalysis(shrinkage=a)`` shrinks towards ``trace(S)/D I`` instead.)

    Parameters
    ----------
    shrinkage : float in [0, 1]
        Weight of ``diag(S)`` in the mixture (``lambda`` in note 003).
    priors : array_like, shape (C,), optional
    lam : float, deprecated
        The old name of ``shrinkage`` (FutureWarning; removed in linbook 0.3).

    Attributes
    ----------
    classes_, priors_, means_, betas_, gammas_, coef_, intercept_ : ndarray
        As :class:`LDA`.
    covariance_ : ndarray, shape (D, D)
        The regularised covariance, in the units of X.
    variances_ : ndarray, shape (D,)
        ``diag(S)``, in the units of X.
    components_ : ndarray, shape (r, D)
        ``V^T``: the eigenvectors of the pooled correlation matrix with eigenvalue above 1e-12 of the
        largest, by decreasing eigenvalue. Each row's sign is fixed so that its entry of largest
        magnitude is positive (the first such entry when several tie to a relative 1e-6), so it does not
        depend on the BLAS/LAPACK build or on whether the eigen- or the singular value decomposition ran.
    n_params_ : int
        As :class:`LDA`.

    Derived in: chapter "Gaussian models and GDA" § "Regularised LDA and the SVD trick".
    """

    _parameter_constraints = {**LDA._parameter_constraints, "shrinkage": [Interval(Real, 0.0, 1.0, closed="both")]}

    def __init__(self, shrinkage=0.5, priors=None, *, lam=DEPRECATED):
        self.shrinkage = shrinkage
        self.priors = priors
        self.lam = lam

    def _fit_covariances(self, X, yi, sw, counts):
        lam = renamed_param(self, "shrinkage", "lam")
        check_params(self, shrinkage=lam)                      # the value of the old name too
        lam = float(lam)
        C, D = self._means_z.shape
        N, W = X.shape[0], self.class_count_.sum()
        if N >= D:
            S = within_scatter(X, yi, self._means_z, self._inv_scale, sw) / W
            var = np.diag(S).copy()
        else:                               # residuals themselves (N x D); never a D x D matrix
            Rz = X * self._inv_scale - self._means_z[yi]
            Rz *= np.sqrt((np.ones(N) if sw is None else sw) / W)[:, None]
            var = np.einsum("ij,ij->j", Rz, Rz)
        flat = np.flatnonzero(var <= ZERO_VARIANCE)
        if flat.size:
            raise ValueError(f"RDA: feature(s) {flat.tolist()} have zero within-class variance (column(s) of "
                             "X constant inside every class of y), so diag(S) is singular; drop them")
        sd = np.sqrt(var)
        try:
            if N >= D:
                e, V = linalg.eigh(S / sd[:, None] / sd[None, :])
            else:
                _, sv, Vt = linalg.svd(Rz / sd, full_matrices=False)
                e, V = sv ** 2, Vt.T
        except linalg.LinAlgError as exc:
            raise ValueError(f"RDA: the eigen-decomposition of the pooled correlation matrix failed ({exc}); "
                             "check the data for duplicated columns or extreme outliers") from None
        order = np.argsort(e, kind="stable")[::-1]          # decreasing, from eigh and svd alike
        e, V = e[order], V[:, order]
        keep = e > 1e-12 * max(1.0, e.max())
        e, V = e[keep], _orient_columns(V[:, keep])           # LAPACK's signs are arbitrary
        if lam == 0.0 and e.size < D:
            raise ValueError(f"RDA(shrinkage=0) is LDA and its pooled covariance is singular (rank {e.size} "
                             f"< D = {D}); {SINGULAR_CURE}")
        self.components_ = V.T
        self._eig, self._sd, self._shrinkage = e, sd, lam
        self._mid = lam + (1.0 - lam) * e               # eigenvalues of the regularised R on span(V)
        logdet = (2.0 * np.log(sd).sum() + np.log(self._mid).sum()
                  + (D - e.size) * (np.log(lam) if lam > 0 else 0.0))
        self._set_discriminants(self._apply_inverse, logdet)
        if not (np.all(np.isfinite(self._betas_z)) and np.all(np.isfinite(self._quad_mu))):
            raise ValueError(f"RDA: shrinkage = {lam:g} is too small for this pooled covariance (rank {e.size} < "
                             f"D = {D}): its inverse, 1 / shrinkage off the rank's span, overflows float64. "
                             "Set shrinkage to 1e-200 or more, or drop features.")

    def _apply_inverse(self, A):
        """Rows of A (standardised units) times ``Sigma^{-1}``, without forming ``Sigma``."""
        U = A / self._sd
        V = self.components_.T
        P = U @ V
        out = (P / self._mid) @ V.T
        if self._shrinkage > 0 and V.shape[1] < V.shape[0]:
            # the complement of span(V), where the regularised R is shrinkage * I; with every direction kept,
            # U - P V^T is rounding alone, and divided by shrinkage ~1e-300 it swamped the scores (or overflowed)
            out += (U - P @ V.T) / self._shrinkage
        return out / self._sd

    def _quad(self, Z):
        return np.einsum("ij,ij->i", Z, self._apply_inverse(Z))

    def _covariance_z(self):
        V = self.components_.T
        lam = self._shrinkage
        R = lam * np.eye(V.shape[0]) + (1.0 - lam) * (V * self._eig) @ V.T
        return self._sd[:, None] * R * self._sd[None, :]

    @property
    def variances_(self):
        """``diag(S)``, the pooled within-class MLE variances, shape (D,), in the units of X."""
        return self._in_units_of_X(self._sd ** 2, "variances_")

    def covariance(self):
        """Deprecated: the attribute ``covariance_`` (FutureWarning; removed in linbook 0.3)."""
        warnings.warn("RDA.covariance() was replaced by the attribute RDA.covariance_ in linbook 0.2; "
                      "the method will stop working in linbook 0.3. Read covariance_ instead.",
                      FutureWarning, stacklevel=2)
        return self.covariance_
