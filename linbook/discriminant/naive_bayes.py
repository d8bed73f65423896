"""Gaussian classifiers with diagonal covariances: diagonal LDA and Gaussian naive Bayes.

A diagonal covariance makes the class density a product over features,
``N(x | mu_c, diag(v_c)) = prod_j N(x_j | mu_cj, v_cj)``, so a missing feature simply
drops its factor, both at prediction (eq. (8.96)) and in the fit, whose likelihood then
factorises over features too: each mean and variance is estimated from the observed
entries of its feature. These models therefore accept NaN in ``fit`` as well.

Derived in: chapter "Gaussian models and GDA" § "Diagonal LDA".
"""

from __future__ import annotations

import numpy as np

import warnings

from scipy import stats

from .._kernels.scatter import class_square_sums
from .._kernels.scores import diagonal_log_density
from ..base import NON_NEGATIVE, LinbookWarning
from ..numerics import _binary_exponent
from .base import _LOG_2PI, QUADRATIC_EXACT, ZERO_VARIANCE, GaussianClassifier, class_name

__all__ = ["DiagonalLDA", "GaussianNaiveBayes"]

#: GaussianNaiveBayes reports a column as drowned by var_smoothing when its classes differ at the level
#: SEPARATES with its own variance, and not even at the level HIDDEN once the smoothing is added to it.
SEPARATES, HIDDEN = 1e-3, 0.05


class DiagonalGaussianClassifier(GaussianClassifier):
    """Classes ``N(mu_c, diag(v_c))``; subclasses call ``_set_diagonal(mu, var)`` in ``fit``."""

    _nan_in_fit = True

    def _scatter(self, X, yi, sw):
        """The class sums of squared residuals ``sum_{i: y_i = c} w_i r_ij^2``, shape (C, D) (NaN skipped)."""
        return class_square_sums(X, yi, self._means_z, sw, self._inv_scale)

    def _set_diagonal(self, mu_z, var_z):
        """Class centres and variances, shape (C, D) and (C, D) or (D,), in standardised units."""
        self._mu = mu_z
        self._var = var_z
        # the scores below which a row is scored again without the class-free quadratic (see _log_density)
        self._far_scores = -0.5 * (QUADRATIC_EXACT + self._variances_and_constants()[1].sum(axis=1))

    def _log_density(self, X, exact=True):
        # log N(x | mu_c, diag(v_c)) = -1/2 sum_j [(z_j - mu_cj)^2 / v_cj + log(2 pi v_cj s_j^2)],
        # z = x / s; a missing x_j drops its term (eq. (8.96))
        if not exact and self._var.ndim == 1:
            return self._near_rows_from_own_centres(X * self._inv_scale, self._shared_variance_scores(X))
        var, const = self._variances_and_constants()
        s = diagonal_log_density(X, self._inv_scale, self._mu, 1.0 / var, const)
        if not exact:
            # rows whose squared distance from their best class exceeds QUADRATIC_EXACT lose the classes'
            # differences to their rounding where variances coincide: those rows again by the scores without the
            # class-free quadratic. (Not a row near its best class beside a far class: the expansion about the
            # centres' mean rounded the near classes' differences away, 1 / 0 for 0.42 / 0.58.)
            best = np.argmax(s, axis=1)
            far = ~(s[np.arange(s.shape[0]), best] >= self._far_scores[best])
            if far.any():
                s[far] = self._class_variance_scores(X[far])
        return s

    @property
    def _center_z(self):
        return self._mu.mean(axis=0)

    def _marginal_log_density(self, X, missing):
        # a missing x_j drops its factor (eq. (8.96)): all rows at once, without a model per pattern of NaN
        var, const = self._variances_and_constants()
        L = diagonal_log_density(X, self._inv_scale, self._mu, 1.0 / var, const)
        return L, -2.0 * L - (~missing).astype(float) @ const.T

    def _marginal_model(self, o):
        # the marginal over the features o drops the other factors: the same model on those features
        sub = self._restricted_to(type(self), o)
        sub._set_diagonal(self._mu[:, o], self._var[..., o])
        return sub

    def _own_centre_log_density(self, Z):
        var, const = self._variances_and_constants()
        L = diagonal_log_density(Z, np.ones(Z.shape[1]), self._mu, 1.0 / var, const)
        return L, -2.0 * L - const.sum(axis=1)

    def _variances_and_constants(self):
        """``v_cj`` and ``log(2 pi v_cj s_j^2)``, shape (C, D) each."""
        var = np.broadcast_to(self._var, self._mu.shape)
        # log(2 pi) + log(v), not log(2 pi v): the product overflowed for v above ~3e307 (var_smoothing near
        # 1e308) and the scores became -inf - (-inf) = NaN, a silent NaN posterior
        return var, _LOG_2PI + np.log(var) + 2.0 * np.log(self._scale)

    def _row_scaled_log_density(self, X, exponent):
        # the scores of _log_density / 4^e from u = z / 2^e (z_j - mu_cj = 2^e (u_j - mu_cj / 2^e)): a power
        # of two scales exactly, and (u_j - mu_cj / 2^e)^2 cannot overflow where (z_j - mu_cj)^2 does
        if self._var.ndim == 1:
            return self._row_scaled_shared_variance_scores(X, exponent)
        m, a, b, c0 = self._class_variance_terms()
        column = exponent[:, None]
        U = np.ldexp(X, -column) * self._inv_scale - np.ldexp(m, -column)
        with np.errstate(under="ignore"):
            return -0.5 * ((U * U) @ a.T - 2.0 * np.ldexp(U @ b.T, -column) + np.ldexp(c0, -2 * column))

    def _class_variance_scores(self, X):
        """Scores for per-class variances without the class-free ``-sum_j (z_j - m_j)^2 / (2 r_j)`` term.

        With ``u = z - m`` (``m`` the mean of the centres), ``d_c = mu_c - m`` and ``r_j`` the largest of the
        classes' variances, ``(z - mu_c)^2 / v_c - u^2 / r = u^2 (1 / v_c - 1 / r) - 2 u d_c / v_c + d_c^2 / v_c``,
        and ``1 / v_c - 1 / r = (r - v_c) / (v_c r)`` is exactly 0 for a class whose variance is the largest. Why:
        two classes of the same variance differ only in the linear term, which the quadratic ``(z - mu_c)^2 / v_c``
        rounded away far out (a row 1e17 from the data scored both classes the same: 0.5 / 0.5, and the wrong
        class by argmax), as the shared-variance scores above avoid for ``DiagonalLDA``.
        """
        m, a, b, c0 = self._class_variance_terms()
        U = X * self._inv_scale - m
        return -0.5 * ((U * U) @ a.T - 2.0 * (U @ b.T) + c0)

    def _class_variance_terms(self):
        """``m``, ``a_c = (r - v_c) / (v_c r)``, ``b_c = d_c / v_c`` and ``c0_c = sum_j d_cj^2 / v_cj + log(2 pi v_cj
        s_j^2)`` of :meth:`_class_variance_scores`."""
        var, const = self._variances_and_constants()
        m = self._mu.mean(axis=0)
        d = self._mu - m
        ref = var.max(axis=0)
        with np.errstate(over="ignore"):          # (r v_c beyond float64: a_c is then 1 / v_c to rounding)
            a = np.where(var == ref, 0.0, (ref - var) / (var * ref))
            a = np.where(np.isfinite(a), a, 1.0 / var - 1.0 / ref)
        b = d / var
        return m, a, b, np.sum(d * b + const, axis=1)

    def _shared_variance_scores(self, X):
        """Scores for a shared variance without the class-free ``-|z - m|^2 / (2 v)`` term.

        ``-(z - mu_c)^2 / (2 v) = -(z - m)^2 / (2 v) + (z - m)(mu_c - m) / v - (mu_c - m)^2 / (2 v)``
        with ``m`` the mean of the centres. Far out (``z`` ~1e150 standard deviations) the first,
        class-free term swamps the class differences (at 1e150 every class scored the same, a
        silent 0.5 / 0.5) or overflows; the last two are linear in ``z`` and exact up to ~1e300.
        """
        m, d, offsets = self._shared_variance_terms()
        return (X * self._inv_scale - m) @ d.T - offsets

    def _shared_variance_terms(self):
        """``m``, ``d_c = (mu_c - m) / v`` and ``(mu_c - m) d_c / 2``: the scores are ``(z - m) d_c - that``."""
        m = self._mu.mean(axis=0)
        d = (self._mu - m) / self._var
        return m, d, 0.5 * np.sum((self._mu - m) * d, axis=1)

    def _row_scaled_shared_variance_scores(self, X, exponent):
        # the linear scores over 4^e, from u = z / 2^e: ((u - m / 2^e) d_c - offset_c / 2^e) / 2^e. The
        # quadratic form's class-free -|u|^2 / 2v would swamp the classes' differences (every class the same)
        m, d, offsets = self._shared_variance_terms()
        column = exponent[:, None]
        U = np.ldexp(X, -column) * self._inv_scale
        scaled = (U - np.ldexp(m, -column)) @ d.T - np.ldexp(offsets, -column)
        with np.errstate(under="ignore"):
            return np.ldexp(scaled, -column)


class DiagonalLDA(DiagonalGaussianClassifier):
    """Diagonal LDA: shared diagonal covariance (eqs. (4.64)-(4.65)).

    ``delta_c(x) = -sum_j (x_j - mu_cj)^2 / (2 s_j^2) + log pi_c`` (plus the class-free
    ``-1/2 sum_j log(2 pi s_j^2)``), with ``mu_cj`` the class means and the pooled variance

        ``s_j^2 = sum_c sum_{i: y_i = c} (x_ij - mu_cj)^2 / (N - C)``   (eq. (4.65))

    (with ``sample_weight``: ``w_i`` inside the sum and ``W = sum_i w_i`` for ``N``; with
    missing entries, sums and ``N`` over the observed entries of feature j).

    Parameters
    ----------
    priors : array_like, shape (C,), optional

    Attributes
    ----------
    classes_, priors_, class_count_, means_ : ndarray
    var_ : ndarray, shape (D,)
        Pooled variances ``s_j^2``, in the units of X.
    n_params_ : int
        ``(C - 1) + C D + D``; the ``C - 1`` priors count only when estimated (``priors=None``).

    Derived in: chapter "Gaussian models and GDA" § "Diagonal LDA".
    """

    _weights_count_samples = True       # its pooled variance divides by N - C

    def __init__(self, priors=None):
        self.priors = priors

    def _covariances_from(self, within, counts):
        C, D = self._means_z.shape
        dof = counts.sum(axis=0) - C
        if np.any(dof <= 0):
            raise ValueError("DiagonalLDA needs more samples than classes of y (the pooled variance divides "
                             f"by N - C = {dof.min():g}, N the sum of sample_weight when given): collect more "
                             "rows of X and y, or scale sample_weight so that it counts samples (e.g. mean 1)")
        var = within.sum(axis=0) / dof
        flat = np.flatnonzero(var <= ZERO_VARIANCE)
        if flat.size:
            raise ValueError(f"DiagonalLDA: feature(s) {flat.tolist()} have zero within-class variance "
                             "(column(s) of X constant inside every class of y); drop them, or use "
                             "linbook.GaussianNaiveBayes(var_smoothing=...) which adds a floor")
        self._set_diagonal(self._means_z, var)
        self.n_params_ = int(self._free_priors() + C * D + D)

    @property
    def var_(self):
        """Pooled within-class variances ``s_j^2``, shape (D,), in the units of X."""
        return self._in_units_of_X(self._var, "var_")


class GaussianNaiveBayes(DiagonalGaussianClassifier):
    """Gaussian naive Bayes: one diagonal Gaussian per class.

    ``v_cj = (1/N_c) sum_{i: y_i = c} (x_ij - mu_cj)^2 + eps`` with
    ``eps = var_smoothing * max_j Var(x_j)`` (the MLE plus scikit-learn's smoothing), so it
    equals ``sklearn.naive_bayes.GaussianNB(var_smoothing=...)`` at the same setting. With
    ``sample_weight``, ``w_i`` enters every sum and ``Var(x_j)`` is the weighted variance
    (integer weights equal repeated rows; scikit-learn takes the unweighted ``Var(x_j)``,
    a difference of the order of ``var_smoothing``). A missing feature drops out of the
    product (eq. (8.96)), in ``predict_proba`` and in ``fit``.

    Parameters
    ----------
    priors : array_like, shape (C,), optional
    var_smoothing : float >= 0
        Fraction of the largest feature variance added to every variance. Being relative to the
        *largest* variance, it couples the columns' units: a column whose variance is far below
        ``eps`` (units of 1e-6 beside a column in units of 1e3) is drowned, its class differences
        erased. ``fit`` then warns (``LinbookWarning``) naming the columns, when the smoothing
        changes what the data say about them: a column is reported when the one-way ANOVA F-test
        finds its class means different at level 1e-3 with the MLE variances, and not even at level
        0.05 once ``eps`` is added to them (the same test with ``v_cj + eps``; ``N_c`` counts sample
        weights as repeated rows): the smoothing then hides a clear difference entirely, whereas a
        column it merely weakens is left alone. So a noise column, whose classes do not differ anyway, is not reported,
        nor a column that keeps separating the classes beside ``eps`` (e.g. one constant within
        each class, which the smoothing exists for); the fix is to rescale the columns (e.g.
        ``StandardScaler``) or to lower ``var_smoothing``.

    Attributes
    ----------
    classes_, priors_, class_count_, means_ : ndarray
    var_ : ndarray, shape (C, D)
        The ``v_cj``, in the units of X.
    n_params_ : int
        ``(C - 1) + 2 C D``; the ``C - 1`` priors count only when estimated (``priors=None``).

    Raises
    ------
    ValueError
        A zero variance (a one-sample class or a feature constant within a class) with
        ``var_smoothing = 0``.

    Derived in: chapter "Generative vs discriminative classifiers" § "Missing data (8.6.2)".
    """

    _parameter_constraints = {**GaussianClassifier._parameter_constraints, "var_smoothing": [NON_NEGATIVE]}

    def __init__(self, priors=None, var_smoothing=1e-9):
        self.priors = priors
        self.var_smoothing = var_smoothing

    def _covariances_from(self, within, counts):
        C, D = self._means_z.shape
        n = counts.sum(axis=0)
        m = (counts * self._means_z).sum(axis=0) / n
        total = (within.sum(axis=0) + (counts * (self._means_z - m) ** 2).sum(axis=0)) / n   # Var(x_j)
        # eps = var_smoothing * max_j Var(x_j) in the units of X; Var(x_j) = total_j * s_j^2, s_j = 2^e_j
        e = _binary_exponent(self._scale) - 1
        k = np.argmax(np.log2(total) + 2 * e)
        shift = np.minimum(2 * (e[k] - e), 1000)
        with np.errstate(over="ignore"):        # an overflow is reported below, naming the columns
            eps = np.ldexp(self.var_smoothing * total[k], shift)
        if not np.all(np.isfinite(eps)):
            raise ValueError(self._smoothing_overflow_message(total[k], e, k, int(np.argmax(shift))))
        var = within / counts + eps
        if np.any(var <= ZERO_VARIANCE):
            c, j = np.argwhere(var <= ZERO_VARIANCE)[0]
            raise ValueError(f"GaussianNaiveBayes: class {class_name(self.classes_[c])} of y, feature "
                             f"{np.flatnonzero(self._keep)[j]} (column of X) has zero variance (one sample, or "
                             "constant within the class); set var_smoothing > 0")
        self._warn_drowned_columns(within, counts, eps)
        self._set_diagonal(self._means_z, var)
        self.n_params_ = int(self._free_priors() + 2 * C * D)

    def _smoothing_overflow_message(self, total_k, e, k, j):
        """The error for ``eps = var_smoothing * Var(x_k)`` (``k`` the widest column) beyond float64 in the units
        of column ``j`` (the narrowest; the fit works in each column's own units ``2^e``). It names both inputs
        that make the product, ``var_smoothing`` and the columns of X, and the largest ``var_smoothing`` that
        fits (rounded down), so the user can lower the one or rescale the other."""
        exact = np.log10(np.finfo(float).max) - np.log10(total_k) - min(2 * (e[k] - e[j]), 1000) * np.log10(2)
        limit = np.floor(10.0 ** (exact % 1 + 1)) / 10 * 10.0 ** np.floor(exact)
        col_k, col_j = np.flatnonzero(self._keep)[[k, j]]
        log_var = np.log10(total_k) + 2 * e[k] * np.log10(2)
        return (f"GaussianNaiveBayes: the added variance var_smoothing * max_j Var(x_j) overflows float64: "
                f"var_smoothing = {self.var_smoothing:g} times Var of column {col_k} of X (about 1e{log_var:.0f}, the "
                f"largest), in the units of column {col_j} of X (values up to about 2^{e[j] + 1}). Lower "
                f"var_smoothing to {limit:.2g} or less, or rescale columns {col_k} and {col_j} of X to comparable "
                "sizes (e.g. StandardScaler); a var_smoothing this large swamps every class variance anyway, and "
                "the model predicts the class priors.")

    def _warn_drowned_columns(self, within, counts, eps):
        """Warn naming the columns whose class separation the smoothing ``eps`` erases (the class docstring's rule).

        One-way ANOVA per column: ``F_j(v) = [sum_c n_cj (mu_cj - m_j)^2 / (C - 1)] / [n_j v_j / (n_j - C)]``,
        ``v_j = sum_c n_cj v_cj / n_j`` the pooled class variance; compared with ``F(C - 1, n_j - C)``.
        """
        C = self._means_z.shape[0]
        n = counts.sum(axis=0) * np.ones(self._means_z.shape[1])
        dof = n - C
        if C < 2 or not np.any(dof > 0) or not np.any(eps > 0):
            return
        m = (counts * self._means_z).sum(axis=0) / n
        between = (counts * (self._means_z - m) ** 2).sum(axis=0) / (C - 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            before = between / (within.sum(axis=0) / np.maximum(dof, 1))          # the MLE variances
            after = between / ((within.sum(axis=0) + n * eps) / np.maximum(dof, 1))   # smoothed
            p_before = stats.f.sf(before, C - 1, np.maximum(dof, 1))
            p_after = stats.f.sf(after, C - 1, np.maximum(dof, 1))
        drowned = np.flatnonzero((dof > 0) & (p_before < SEPARATES) & (p_after >= HIDDEN))
        if drowned.size:
            cols = np.flatnonzero(self._keep)[drowned].tolist()
            cols = cols if len(cols) <= 10 else f"{cols[:10]} (and {len(cols) - 10} more)"
            warnings.warn(f"GaussianNaiveBayes: var_smoothing = {self.var_smoothing:g} adds var_smoothing * max_j "
                          f"Var(x_j) to every variance, which drowns column(s) {cols} of X: their class means differ "
                          f"(F-test p < {SEPARATES:g}), but not beside the added variance (p >= {HIDDEN:g}), so the "
                          "model all but ignores them. Rescale the columns of X to comparable variances (e.g. StandardScaler), or "
                          "lower var_smoothing.", LinbookWarning, stacklevel=7)

    @property
    def var_(self):
        """Class variances ``v_cj``, shape (C, D), in the units of X."""
        return self._in_units_of_X(self._var, "var_")
