"""What every Gaussian generative classifier shares: fitting pi_c and mu_c, the posterior.

Every classifier of this package models ``p(x, y = c) = pi_c N(x | mu_c, Sigma_c)`` and
fits it by (weighted) maximum likelihood, eqs. (4.52)-(4.53) of note ``003``:

    pi_c = W_c / W,    mu_c = (1 / W_c) sum_{i: y_i = c} w_i x_i,    W_c = sum_{i: y_i = c} w_i

(``w_i = 1`` without ``sample_weight``, so ``W_c = N_c``; integer weights equal repeated
rows). The models differ only in ``Sigma_c`` (``_fit_covariances``) and in how they
evaluate ``log N(x | mu_c, Sigma_c)`` (``_log_density``); the posterior is the softmax
of the joint log-likelihood ``log pi_c + log N(x | mu_c, Sigma_c)`` (eq. (4.33)).

Standardised coordinates: ``fit`` divides feature j by ``s_j``, the power of two just
above ``max_i |x_ij|`` (exact, no digit changes), and estimates everything for
``z = x / s``. Squares of features of size 1e300 then do not overflow, and the
posteriors for ``X`` and ``X * t`` agree for every ``t`` from 1e-12 to 1e300. Attributes
are reported in the units of ``X``; reading a covariance that float64 cannot hold
(features of size 1e200 have variances 1e400) raises a ``ValueError`` that says so.

Missing values: ``predict_proba`` accepts NaN in ``X``; a missing feature is marginalised
out (drop its rows and columns of ``mu_c`` and ``Sigma_c``), eqs. (8.94)-(8.97) of note
``000``: the same kind of model on the observed features, which scores the row as a complete one
(far from the data as well). Features constant in the training data carry no information; they are ignored
with a warning (``constant_features_``).

Derived in: chapter "Gaussian models and GDA" § "Gaussian discriminant analysis".
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.multiclass import check_classification_targets

from .._design import range_origin
from .._kernels.scatter import class_sums, column_range
from .._kernels.scores import row_argmax, row_softmax
from ..base import (ClassifierMixin,  # scikit-learn's, with score's y and sample_weight checked
                    LinbookWarning, all_or_nothing, check_params, check_sample_weight, dask_blocks, encode_labels,
                    is_dask, require_y, validate_fit, validate_predict_missing, weight_spread, without_zero_weight_rows,
                    class_index, weights_near_one, _with_advice)
from ..criteria import InformationCriteriaMixin
from .._kernels.cholesky import equilibrated_cholesky
from ..gaussian import tiny_pivot
from ..numerics import _binary_exponent, _power_of_two_scale, log_softmax

_LOG_2PI = np.log(2.0 * np.pi)
#: a variance below this (in standardised units, |z| <= 1) is zero up to rounding
ZERO_VARIANCE = (16.0 * np.finfo(float).eps) ** 2
SINGULAR_CURE = ("use a regularised model instead: linbook.RDA(shrinkage=0.1) (shrinks the covariance "
                 "towards its diagonal), linbook.DiagonalLDA or linbook.GaussianNaiveBayes; or drop "
                 "duplicated / collinear columns")


#: Squared standardised distances up to which a class's score, measured from its own centre, keeps the classes'
#: differences (their rounding, ~eps times this, far below 1); beyond, the scores are taken otherwise.
QUADRATIC_EXACT = 256.0


def class_name(label):
    """A class label as the user wrote it in ``y`` (``0``, ``'a'``), for messages: numpy's ``repr`` of its
    scalars reads ``np.int64(0)``."""
    return repr(label.item() if isinstance(label, np.generic) else label)


def check_priors(priors, n_classes):
    """``None`` or a valid prior vector (finite, positive, one entry per class, summing to 1)."""
    if priors is None:
        return None
    p = np.array(priors, dtype=float).ravel()      # a copy: priors_ must not change with the caller's array
    if p.size != n_classes:
        raise ValueError(f"priors must have one entry per class: got {p.size} entries for {n_classes} classes. "
                         "Pass one prior per class, in the order of classes_.")
    if np.any(~np.isfinite(p)) or np.any(p <= 0):
        raise ValueError(f"priors must be finite and strictly positive; got {p.tolist()}. Set every prior > 0.")
    if not np.isclose(p.sum(), 1.0):
        raise ValueError(f"priors must sum to 1; they sum to {p.sum():.6g}. Pass priors / sum(priors).")
    return p


def cholesky(S, *, model, what, cure=SINGULAR_CURE):
    """Lower Cholesky factor of a covariance in standardised units, or a clear error.

    The factor is linbook's one equilibrated Cholesky (``_kernels/cholesky``): that of the
    correlation matrix ``S / (d d^T)``, ``d = sqrt(diag S)``, scaled back, so the test for
    singularity does not depend on the units of the features.
    """
    d = np.sqrt(np.diag(S))
    flat = np.flatnonzero(d * d <= ZERO_VARIANCE)
    if flat.size:
        raise ValueError(f"{model}: {what} is singular: column(s) {flat.tolist()} of X have zero variance "
                         f"there (constant within the class(es)); drop them, or {cure}")
    factor = equilibrated_cholesky(S)
    if factor is None or tiny_pivot(np.diag(factor[0])):
        raise ValueError(f"{model}: {what} is singular (too few rows of X for its number of columns, "
                         f"or collinear columns); {cure}")
    upper, e = factor
    return upper.T * e[:, None]


def _weight_spread_note(sw):
    """Advice added to a failed fit when ``sample_weight`` spans many orders of magnitude.

    A weight that dwarfs the others pins its class's mean on that row and shrinks the
    class's spread below what float64 tells from zero, so "singular" is then about the weights.
    """
    spread = weight_spread(sw)
    if spread < 1e8:
        return ""
    return (f" (sample_weight spans a factor {spread:.0e}: a weight that dwarfs the others makes its "
            "class's spread vanish; rescale or clip sample_weight)")



def require_class_rows(model, classes, n, min_per_class=1):
    """Raise unless each class has ``min_per_class`` rows of positive weight (``n``, one count a class)."""
    small = np.flatnonzero(np.asarray(n) < max(min_per_class, 1))
    if small.size:
        c = small[0]
        need = ("at least one sample of positive weight" if min_per_class <= 1 else
                f"at least {min_per_class} samples per class to estimate its covariance")
        raise ValueError(f"{model}: class {class_name(classes[c])} of y has {int(n[c])} sample(s) "
                         f"of positive weight (sample_weight); this model needs {need}. Collect more "
                         "data, merge or drop the class, or use a model with a shared covariance (linbook.LDA, linbook.RDA).")


def _missing_patterns(missing, rows=None):
    """``(o, idx)`` for each distinct pattern of NaN among the rows ``rows`` (a mask; all rows when ``None``): the
    observed features and the indices of its rows."""
    idx = np.arange(missing.shape[0]) if rows is None else np.flatnonzero(rows)
    patterns, inv = np.unique(missing[idx], axis=0, return_inverse=True)
    for k, pattern in enumerate(patterns):
        yield np.flatnonzero(~pattern), idx[inv.ravel() == k]


class GaussianClassifier(InformationCriteriaMixin, ClassifierMixin, BaseEstimator):
    """Base class: validation, priors, class means, standardisation, posterior, missing values."""

    _parameter_constraints = {"priors": ["array-like", None]}
    _min_per_class = 1      # rows of positive weight each class needs
    _nan_in_fit = False     # True: the likelihood factorises over features and fit uses observed entries
    _weights_count_samples = False      # True: a variance divides by N - C, N the sum of the weights

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = self._nan_in_fit
        return tags

    # ----------------------------------------------------------------- fitting
    @all_or_nothing
    def fit(self, X, y, sample_weight=None):
        """Fit by (weighted) maximum likelihood (eqs. (4.52)-(4.53) of note 003).

        Parameters
        ----------
        X : array_like, shape (N, D)
            Training inputs (finite; the diagonal models accept NaN for missing entries).
        y : array_like, shape (N,)
            Class labels (at least two classes).
        sample_weight : array_like, shape (N,), optional
            Non-negative weights; integer weights equal repeating rows.

        Returns
        -------
        self
        """
        if is_dask(X, y, sample_weight):      # a dask array or DataFrame: the sums below as map-reduces
            from ._dask_fit import fit_gaussian_classifier

            # RDA and FisherLDA estimate their covariance otherwise than as one sum over rows
            rows_sum = type(self)._fit_covariances is GaussianClassifier._fit_covariances
            return fit_gaussian_classifier(self, X, y, sample_weight, covariance_is_a_row_sum=rows_sum)
        check_params(self)
        require_y(self, y)
        X, y = validate_fit(self, X, y, allow_nan=self._nan_in_fit, min_samples=2)
        if y.dtype == object:                   # "Unknown label type" for non-label objects
            with _with_advice(self):
                check_classification_targets(y)
        sw = None if sample_weight is None else check_sample_weight(sample_weight, X, estimator=self)
        unit = 1.0
        if sw is not None and not self._weights_count_samples:
            sw, _, unit = weights_near_one(sw)  # only their ratios matter (weights of 2^-1070: 0.12 off)
        before = dict(vars(self))               # a failed fit leaves the model as it was
        try:
            self._fit_statistics(X, y, sw)
            self.class_count_ = self.class_count_ * unit     # in the caller's units (a power of two: exact)
            return self
        except ValueError as exc:
            vars(self).clear()
            vars(self).update(before)
            raise ValueError(f"{exc}{_weight_spread_note(sw)}") from None

    def _fit_statistics(self, X, y, sw):
        """The fit on validated inputs: priors, means, covariances (sets the attributes)."""
        name = type(self).__name__
        self.classes_, yi = encode_labels(y, model=name)
        C = self.classes_.size
        self._check_class_sizes(np.bincount(yi if sw is None else yi[sw > 0], minlength=C))
        X, yi, sw = without_zero_weight_rows(X, yi, sw)    # (0 * x^2 sums; its class stays in classes_)
        lo, hi = column_range(X, sw)
        keep = self._set_priors_and_scale(np.bincount(yi, weights=sw, minlength=C).astype(float), lo, hi)
        Xk = self._from_origin(X if keep.all() else X[:, keep])
        sums, counts = class_sums(Xk, yi, C, sw, self._inv_scale)
        self._set_means(sums, counts, lo)
        self._fit_covariances(Xk, yi, sw, counts)
        self._set_centres_spread()
        return self

    def _free_priors(self):
        """The number of priors ``n_params_`` counts: ``C - 1`` when they are estimated, none when given."""
        return 0 if self.priors is not None else self.classes_.size - 1

    # The fit in three steps, each a function of sums over rows (so linbook._dask runs them on row
    # blocks): the class counts and column ranges, the class sums, the scatter statistics.
    def _set_priors_and_scale(self, class_count, lo, hi):
        """``class_count_``, ``priors_``, the constant features and the power-of-two scale; returns the kept features."""
        self.class_count_ = class_count
        p = check_priors(self.priors, class_count.size)
        self.priors_ = self.class_count_ / self.class_count_.sum() if p is None else p
        # the scores' log priors from the weights themselves: classes weighing 1e200 and 1e-200 have a prior of
        # 1e-400, which priors_ rounds to 0 (and log(0) = -inf made that class never predicted)
        with np.errstate(divide="ignore"):
            self._log_priors = np.log(class_count) - np.log(class_count.sum()) if p is None else np.log(p)
        keep = self._find_constant_features(lo, hi)
        self._origin = range_origin(lo[keep], hi[keep])
        self._scale = _power_of_two_scale(np.maximum(self._origin - lo[keep], hi[keep] - self._origin),
                                          normal=True)     # 1 / scale is exact too
        self._inv_scale = 1.0 / self._scale
        return keep

    def _from_origin(self, X):
        """``X - origin`` (kept features), the coordinates the model works in; ``X`` itself where no column is
        offset (``linbook._design.range_origin``)."""
        if not np.any(self._origin):
            return X
        with np.errstate(over="ignore"):
            shifted = X - self._origin
        if np.isinf(shifted).any() and not np.isinf(X[np.isinf(shifted)]).all():
            # a row on the other side of 0 from columns offset near 1e308: its distance from the centre exceeds
            # float64, although its standardised distance may not (the posteriors came out NaN, silently)
            raise ValueError(f"{type(self).__name__}: some rows of X lie further than float64 holds (1.8e308) from "
                             "the centre of the features seen in fit (columns offset near 1e308); scale X and the "
                             "training data alike (e.g. by 2^-10) and refit")
        return shifted

    def _set_means(self, sums, counts, lo):
        """``means_`` from the class sums and counts of the observed entries (standardised units)."""
        name, keep, C = type(self).__name__, self._keep, self.classes_.size
        if np.any(counts <= 0):
            c, j = np.argwhere(counts <= 0)[0]
            raise ValueError(f"{name}: class {class_name(self.classes_[c])} has no observed value of feature "
                             f"{np.flatnonzero(keep)[j]} (all NaN), so its mean is undefined; drop the "
                             "feature or impute it")
        self._means_z = sums / counts                               # mu_c in standardised units
        self.means_ = np.empty((C, keep.size))
        self.means_[:, keep] = self._means_z * self._scale + self._origin
        self.means_[:, ~keep] = lo[~keep]

    def _check_class_sizes(self, n):
        """``n``: the number of rows of positive weight in each class."""
        require_class_rows(type(self).__name__, self.classes_, n, self._min_per_class)

    def _find_constant_features(self, lo, hi):
        name = type(self).__name__
        never = np.flatnonzero(lo > hi)
        if never.size:
            raise ValueError(f"{name}: feature(s) {never.tolist()} are missing (NaN) in every sample; drop them")
        const = ~(hi > lo)
        if const.all():
            raise ValueError(f"{name}: every feature (column of X) is constant; there is nothing to "
                             "learn from. Pass an X with at least one varying column.")
        if const.any():
            warnings.warn(f"{name}: feature(s) {np.flatnonzero(const).tolist()} are constant in the "
                          "training data and are ignored", LinbookWarning, stacklevel=3)
        self.constant_features_ = const
        self._keep = ~const
        return self._keep

    def _fit_covariances(self, X, yi, sw, counts):
        """The covariance(s) from the scatter statistic of the rows (kept features, standardised units)."""
        self._covariances_from(self._scatter(X, yi, sw), counts)

    def _scatter(self, X, yi, sw):  # pragma: no cover - abstract
        """The model's scatter statistic: a sum over the rows of ``X`` around ``_means_z``."""
        raise NotImplementedError

    def _covariances_from(self, scatter, counts):  # pragma: no cover - abstract
        """Set the covariance(s) and what prediction needs from the summed scatter statistic."""
        raise NotImplementedError

    def _in_units_of_X(self, a_z, what, power=2, matrix=False, fill=0.0):
        """A standardised quantity in the units of X: times ``s_j**power``, or ``s_i s_j`` for a matrix.

        Constant features get ``fill`` (vectors) or zero rows and columns (matrices).
        """
        s = self._scale
        with np.errstate(over="ignore"):
            a = a_z * (s[:, None] * s[None, :] if matrix else s ** power)
        if not np.all(np.isfinite(a)):
            e = int(np.log10(s.max()))
            raise ValueError(
                f"{type(self).__name__}.{what} is not representable in float64: features of size ~1e{e} "
                f"have variances ~1e{power * e}. The model works on standardised features, so its "
                f"predictions are unaffected; to inspect {what}, fit on rescaled features (e.g. X / 1e{e}).")
        k = np.flatnonzero(self._keep)
        D = self._keep.size
        if matrix:
            out = np.zeros(a.shape[:-2] + (D, D))
            out[..., k[:, None], k[None, :]] = a
        else:
            out = np.full(a.shape[:-1] + (D,), fill)
            out[..., k] = a
        return out

    def _log_norm_const(self):
        """Class-free part of log N(x | ...) in the units of X: ``-D/2 log(2 pi) - sum_j log s_j``."""
        return -0.5 * self._scale.size * _LOG_2PI - np.log(self._scale).sum()

    # -------------------------------------------------------------- predicting
    def _joint_log_likelihood(self, X, exact=False, *, scale_far_rows=False):
        """``log p(x_i, y = c)`` for every row and class (up to a class-free term unless ``exact``).

        With ``scale_far_rows`` (the posterior and the argmax need only the scores' order and
        differences), returns ``(s, far, e)``: the rows ``far`` whose scores overflow hold the scores of
        ``x / 2^e`` instead (:meth:`_row_scaled_scores`), with ``s = 4^e s_far`` up to class-free terms.
        """
        s = None if exact else self._scores_proving_X_finite(X)
        if s is not None:
            return (s, np.zeros(s.shape[0], dtype=bool), np.zeros(0, dtype=int)) if scale_far_rows else s
        X, missing = validate_predict_missing(self, X)
        if not self._keep.all():
            X = X[:, self._keep]
            missing = None if missing is None else missing[:, self._keep]
        X = self._from_origin(X)
        complete = missing is None or not missing.any()      # (X.sum() can be NaN from +-inf alone)
        with np.errstate(over="ignore", invalid="ignore"):      # overflowing rows are found below
            if complete:
                s = self._log_density(X, exact or missing is not None)
            else:       # the rows with a missing value apart: a row's scores must not depend on the others'
                gaps = missing.any(axis=1)
                s = np.empty((X.shape[0], self.classes_.size))
                s[~gaps] = self._log_density(X[~gaps], exact)
                s[gaps] = self._gap_rows_log_density(X[gaps], missing[gaps], exact)
        # (N, C) in column-major order: reductions over the C classes of a row are then
        # vectorised over rows (3x faster softmax for small C)
        s = np.asfortranarray(s)
        s += self._log_priors
        # a row is far when any of its scores is not finite: a partial sum that overflowed gives -inf to a class
        # whose exact score may still be the largest (the row-scaled scores below are exact)
        far = ~np.isfinite(s).all(axis=1)
        scalable = scale_far_rows and self._row_scaled_log_density is not None
        if far.any() and not scalable:
            raise ValueError(f"{type(self).__name__}: the log-density of some rows of X overflows float64 "
                             "(they are ~1e150 or more standard deviations from every class mean); pass "
                             "X in the units used in fit")
        if not scale_far_rows:
            return s
        observed = X[far] if complete else np.where(missing[far], 0.0, X[far])     # (a NaN entry is dropped)
        exponent = _binary_exponent(np.max(np.abs(observed), axis=1, initial=0.0))
        if far.any():
            scaled = (self._row_scaled_log_density(X[far], exponent) if complete
                      else self._row_scaled_gap_rows(X[far], missing[far], exponent))
            s[far] = scaled + np.ldexp(self._log_priors, -2 * exponent[:, None])
        return s, far, exponent

    def _scores_proving_X_finite(self, X):
        """The scores ``log pi_c + log N(x | ...)`` (up to a class-free term) of ``X`` without validation's pass
        over it, when they are all finite and that proves ``X`` finite; else ``None``: the validated way
        (a model whose scores prove nothing, NaN or inf in ``X``, a far row, input that is not plain float64)."""
        return None

    #: ``_own_centre_log_density(Z)``: ``(L, D)`` for standardised rows ``Z``: ``L`` the log-densities ``log N(x | class
    #: c)`` and ``D`` the squared standardised distances, both measured from each class's own centre, shape (N, C);
    #: ``_center_z``: the centre the scores are otherwise measured from. ``None``: not available.
    _own_centre_log_density = None

    def _near_rows_from_own_centres(self, Z, s):
        """``s`` with each row near a class (squared standardised distance at most :data:`QUADRATIC_EXACT`) scored
        by :meth:`_own_centre_log_density`, where the class centres lie more than ``QUADRATIC_EXACT^2`` from their
        common centre. Why: the scores measured from that centre carry terms ~ the squared distance of the farthest
        class, and their rounding drowned the differences of the near classes: beside a third class 1e10 standard
        deviations away, two close classes scored the same (0.5 / 0.5, the wrong class by argmax), or 1 / 0. From
        each class's own centre, the near classes' scores are exact and the far class's only very low."""
        if not getattr(self, "_centres_far_apart", False) or Z.shape[0] == 0:
            return s
        L, D = self._own_centre_log_density(Z)
        near = np.min(D, axis=1) <= QUADRATIC_EXACT
        if near.any():
            s[near] = L[near]
        return s

    def _set_centres_spread(self):
        """``_centres_far_apart`` (read by :meth:`_near_rows_from_own_centres`), once the fit is complete."""
        self._centres_far_apart = False
        if self._own_centre_log_density is not None:
            _, spread = self._own_centre_log_density(self._center_z[None, :])
            self._centres_far_apart = bool(np.max(spread) > QUADRATIC_EXACT ** 2)

    #: ``_row_scaled_log_density(X, e)``: the class-dependent part of ``log N(x_i | ...) / 4^e_i``, computed
    #: from ``x_i / 2^e_i`` (exact scaling) so that rows ~1e300 do not overflow; ``None``: not available.
    _row_scaled_log_density = None

    def _log_posterior(self, X):
        """``log p(y = c | x)``: the log-softmax of the scores (:meth:`_posterior_scores`)."""
        return log_softmax(self._posterior_scores(X), axis=1)

    def _posterior_scores(self, X):
        """Scores whose softmax is ``p(y = c | x)``; for far rows (scores ``4^e s_far``) ``4^e (s_far - max s_far)``,
        which is 0 for the best class and ``-inf`` for the others once ``4^e`` overflows (the one-hot limit)."""
        s, far, exponent = self._joint_log_likelihood(X, scale_far_rows=True)
        if far.any():
            s_far = s[far]
            with np.errstate(over="ignore"):
                s[far] = np.ldexp(s_far - s_far.max(axis=1, keepdims=True), 2 * exponent[:, None])
        return s

    # ------------------------------------------------------- missing values
    # The marginal of N(mu_c, Sigma_c) over the observed features o is N(mu_c,o, Sigma_c,oo) (eq. (8.97)): a model
    # of the same kind on the features o alone (:meth:`_marginal_model`), so a row with NaN is scored as that model
    # scores a complete row, far-row paths included.
    def _gap_rows_log_density(self, X, missing, exact):
        """Rows with NaN: ``log N(x_o | mu_c,o, Sigma_c,oo)`` over each row's observed features ``o`` (eq. (8.97)).

        Each class's score is measured from its own centre (:meth:`_marginal_log_density`); unless ``exact``, a row
        further than :data:`QUADRATIC_EXACT` from every class is scored again by its pattern's marginal model, as a
        complete row far out. Why: the exact log-densities are each ~``-|z|^2 / 2``, and their rounding drowned the
        classes' differences (~``|z|``): at 1e16 standard deviations the wrong class, from 1e17 on 1/3 each.
        """
        s, dist = self._marginal_log_density(X, missing)
        if exact:
            return s
        far = ~(np.min(dist, axis=1) <= QUADRATIC_EXACT)        # (NaN or inf: far)
        for o, rows in _missing_patterns(missing, far):
            if o.size:
                sub = self._marginal_model(o)
                sub._set_centres_spread()       # (its rows near a class: from each class's own centre)
                s[rows] = sub._log_density(X[np.ix_(rows, o)], False)
        return s

    def _marginal_log_density(self, X, missing):
        """``(L, D)`` for rows with NaN: the log-densities over the observed features and the squared standardised
        distances, each from the class's own centre (:attr:`_own_centre_log_density` of the marginal model)."""
        L = np.zeros((X.shape[0], self.classes_.size))
        D = np.zeros_like(L)
        for o, rows in _missing_patterns(missing):
            if o.size:          # (nothing observed: the posterior is the prior)
                sub = self._marginal_model(o)
                L[rows], D[rows] = sub._own_centre_log_density(X[np.ix_(rows, o)] * sub._inv_scale)
        return L, D

    def _row_scaled_gap_rows(self, X, missing, exponent):
        """:attr:`_row_scaled_log_density` of far rows some of which have NaN: those by their pattern's marginal
        model (whose scores are the row's marginal log-densities, eq. (8.97))."""
        s = np.zeros((X.shape[0], self.classes_.size))
        gaps = missing.any(axis=1)
        s[~gaps] = self._row_scaled_log_density(X[~gaps], exponent[~gaps])
        for o, rows in _missing_patterns(missing, gaps):
            if o.size:
                s[rows] = self._marginal_model(o)._row_scaled_log_density(X[np.ix_(rows, o)], exponent[rows])
        return s

    def _marginal_model(self, o):  # pragma: no cover - abstract
        """The fitted model of the (kept) features ``o`` alone: the marginal of each class's Gaussian. Its
        :meth:`_log_density` needs :meth:`_set_centres_spread` first (not done here: the exact scores do not)."""
        raise NotImplementedError

    def _restricted_to(self, cls, o):
        """A bare ``cls`` with this fit's classes, priors and class means of the features ``o`` (standardised units,
        from the origin); the caller sets the covariance and what its scores need."""
        sub = cls.__new__(cls)
        sub.classes_, sub.class_count_, sub._log_priors = self.classes_, self.class_count_, self._log_priors
        sub._scale, sub._inv_scale = self._scale[o], self._inv_scale[o]
        sub._means_z = self._means_z[:, o]
        sub._keep, sub._origin = np.ones(o.size, dtype=bool), np.zeros(o.size)
        return sub

    @dask_blocks
    def predict_joint_log_proba(self, X):
        """Joint log-likelihood ``log p(x, y = c) = log pi_c + log N(x | mu_c, Sigma_c)`` in nats.

        ``logsumexp`` over the classes gives ``log p(x)``, the density of an unlabelled point.

        Parameters
        ----------
        X : array_like, shape (N, D); NaN marks a missing feature

        Returns
        -------
        ndarray, shape (N, C)
        """
        return self._joint_log_likelihood(X, exact=True)

    @dask_blocks
    def decision_function(self, X):
        """Log joint ``log p(x, y = c)`` up to a class-free term; for two classes the log-odds.

        Parameters
        ----------
        X : array_like, shape (N, D); NaN marks a missing feature

        Returns
        -------
        scores : ndarray, shape (N, C), or (N,) for two classes
        """
        s = self._joint_log_likelihood(X)
        return s[:, 1] - s[:, 0] if s.shape[1] == 2 else s

    @dask_blocks
    def predict_log_proba(self, X):
        """Log posterior ``log p(y = c | x)``; NaN features are marginalised out.

        Parameters
        ----------
        X : array_like, shape (N, D)

        Returns
        -------
        log_proba : ndarray, shape (N, C)
        """
        return self._log_posterior(X)

    @dask_blocks
    def predict_proba(self, X):
        """Posterior ``p(y = c | x)`` (eq. (4.33)); NaN features are marginalised out (eq. (8.97)).

        Parameters
        ----------
        X : array_like, shape (N, D)

        Returns
        -------
        proba : ndarray, shape (N, C)
        """
        # the softmax of the scores: exp(predict_log_proba) to rounding, in fewer passes (1e6 x 20, 10 classes:
        # log-softmax then exp is two exp passes and a log over the (N, C) scores); row_softmax is softmax in
        # place, a chunk of rows per core
        return row_softmax(self._posterior_scores(X))

    @dask_blocks
    def predict(self, X):
        """Class with the largest posterior (eq. (4.31)).

        Parameters
        ----------
        X : array_like, shape (N, D)

        Returns
        -------
        y : ndarray, shape (N,)
        """
        s = self._joint_log_likelihood(X, scale_far_rows=True)[0]    # first: it raises NotFittedError before fit
        return self.classes_[row_argmax(s)]

    def log_likelihood(self, X, y):
        """Joint log-likelihood ``sum_i log p(x_i, y_i)`` in nats (eq. (4.52)).

        Parameters
        ----------
        X : array_like, shape (N, D)
        y : array_like, shape (N,)

        Returns
        -------
        float
        """
        s = self._joint_log_likelihood(X, exact=True)
        yi = self._label_index(y, s.shape[0])
        return float(s[np.arange(len(yi)), yi].sum())

    def conditional_log_likelihood(self, X, y):
        """Conditional log-likelihood ``sum_i log p(y_i | x_i)`` in nats (what logistic regression maximises).

        Parameters
        ----------
        X : array_like, shape (N, D)
        y : array_like, shape (N,)

        Returns
        -------
        float
        """
        lp = self.predict_log_proba(X)
        yi = self._label_index(y, lp.shape[0])
        return float(lp[np.arange(len(yi)), yi].sum())

    def _label_index(self, y, n_rows):
        y = np.asarray(y).ravel()
        if y.size != n_rows:
            raise ValueError(f"X has {n_rows} rows but y has {y.size} labels; they must match")
        return class_index(self, y)

    # -------------------------------------------------- per-model primitives
    def _log_density(self, X, exact):  # pragma: no cover - abstract
        """``log N(x | mu_c, Sigma_c)`` (N, C) for rows of X in its units (kept features)."""
        raise NotImplementedError

    def _covariance_z(self):  # pragma: no cover - abstract
        """Covariance(s) in standardised units: (C, D, D) or a shared (D, D)."""
        raise NotImplementedError
