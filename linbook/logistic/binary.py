"""The binary GLM machinery shared by logistic and probit regression.

For labels ``t_i = +-1`` and the linear predictor ``z_i = x_i'w + b`` the objective is ::

    F(w, b) = sum_i sw_i nll(t_i z_i) + (lam / 2) ||w||^2        (sw_i: sample weights)
    gradient  = X~' (sw * dz)                + lam [0, w]        X~ = [1, X]
    Hessian   = X~' diag(sw * d2) X~         + lam diag(0, 1, ..., 1)

with ``(nll, dz, d2)`` the per-sample loss and its first two derivatives in ``z``
(logit: ``dz = mu - y``, ``d2 = mu (1 - mu)``): the link's part of the model, here. The
fits minimise it through :class:`linbook.logistic._scaled.BinaryLoss` (the same ``F, g, H``
on centred and scaled columns); :class:`BinaryGLM` holds what a fitted model does.

Derived in: chapter "Logistic regression" § "Negative log-likelihood, gradient and Hessian".
"""

from __future__ import annotations

import warnings
from numbers import Real

import numpy as np
import scipy.sparse
from scipy.special import log_ndtr, logsumexp, ndtri
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning

from .._kernels.hessian import binary_pass
from ..base import (ClassifierMixin,  # scikit-learn's, with score's y and sample_weight checked
                    NON_NEGATIVE, POSITIVE_INT, Interval, StrOptions, _with_advice, check_finite_fit,
                    class_index,
                    check_params, check_sample_weight, dask_blocks, encode_labels, label_type, require_weighted_classes,
                    require_y,
                    validate_fit, validate_predict)
from .._predictor import finite_scores, linear_predictor_from
from ..criteria import InformationCriteriaMixin
from ..linear._moments import design_null_space, design_rank
from . import solvers
from .separation import warn_separable

__all__ = []

def logit_terms(z, t):
    """Per-sample ``(-log sigmoid(t z), d/dz, d2/dz2)``, exact for every float ``z``."""
    m = t * z
    with np.errstate(under="ignore"):
        e = np.exp(-np.abs(z))                # one exp serves all three terms
    ope = 1.0 + e
    nll = np.maximum(-m, 0.0) + np.log1p(e)   # -log sigma(t z) = log1pexp(-m)
    sig_neg = np.where(m >= 0, e, 1.0) / ope  # sigma(-m)
    dz = -t * sig_neg                         # mu - y
    d2 = e / (ope * ope)                      # mu (1 - mu), exact also for |z| large
    return nll, dz, d2


def probit_terms(z, t):
    """Per-sample ``(-log Phi(t z), d/dz, d2/dz2)`` with the stable ``log_ndtr``."""
    u = t * z
    logPhi = log_ndtr(u)
    lam = np.exp(-0.5 * u * u - 0.5 * np.log(2 * np.pi) - logPhi)   # phi(u) / Phi(u)
    dz = -t * lam
    d2 = np.clip(lam * (u + lam), 1e-300, 1.0)   # in (0, 1): log Phi is concave
    return -logPhi, dz, d2


def intercept_only_start(y, sw, link="logit"):
    """The intercept-only MLE ``b`` (``link(ybar)``, ``ybar = W_1 / (W_0 + W_1)``), the fits' starting point.

    From the log class weights ``log W_c`` (``logsumexp`` of ``log sw_i``), not from ``ybar``: with weights
    over more than 16 decades ``ybar`` rounds to 1 (or 0) and ``link(ybar)`` to inf, which the solver
    refused ("x0 must be finite"). ``fit`` has already refused a class without positive weight.
    """
    with np.errstate(divide="ignore"):          # zero weights: log 0 = -inf, no mass
        logw = np.zeros(y.size) if sw is None else np.log(sw)
        log_w0, log_w1 = logsumexp(logw[y == 0]), logsumexp(logw[y == 1])
    if link == "logit":
        return float(log_w1 - log_w0)
    # probit: Phi^{-1}(ybar) = -Phi^{-1}(1 - ybar), from the smaller share (it does not round to 0 as 1 - ybar
    # does), kept above the smallest normal number (the MLE is a start, not a result)
    small = np.exp(min(log_w0, log_w1) - np.logaddexp(log_w0, log_w1))
    b = float(ndtri(max(small, np.finfo(float).tiny)))
    return -b if log_w1 > log_w0 else b


class BinaryGLM(InformationCriteriaMixin, ClassifierMixin, BaseEstimator):
    """Prediction and likelihood methods of a fitted binary GLM (not public)."""

    _terms = staticmethod(logit_terms)
    _parameter_constraints = {
        "lam": [NON_NEGATIVE], "solver": [StrOptions(set(solvers.SOLVERS))], "fit_intercept": ["boolean"],
        "max_iter": [POSITIVE_INT, None],
        # the test is on the gradient of the mean NLL per max-abs unit, at most ~1 for the logit: tol >= 1
        # passes every point (w = 0 "converged"), so it is refused rather than reported as an optimum
        "tol": [Interval(Real, 0.0, 1.0, closed="neither")],
    }

    def _prepare_fit(self, X, y, sample_weight, max_classes=None):
        """Check the parameters and the data, choose the solver: ``(X, weights, y_index, max_iter)``."""
        check_params(self)
        X, sw, classes, yidx = self._validate(X, y, sample_weight, max_classes)
        sparse = scipy.sparse.issparse(X)
        # stored entries per cell, at most 1 (CSR may store duplicate entries: 2.0 was refused by choose_solver)
        density = min(1.0, X.nnz / max(X.shape[0] * X.shape[1], 1)) if sparse else None
        solver = solvers.choose_solver(self.solver, *X.shape, classes.size, self.fit_intercept, sparse,
                                       density=density)
        self.classes_, self.solver_ = classes, solver      # set only once the call can go on
        self._set_free_columns(X, sw)
        return X, sw, yidx, self.max_iter or solvers.DEFAULT_MAX_ITER[self.solver_]

    def _validate(self, X, y, sample_weight, max_classes=None):
        """Validated ``(X, y, weights or None, classes_, y_index)`` for ``fit``."""
        require_y(self, y)
        X, y = validate_fit(self, X, y, accept_sparse=True)
        with _with_advice(self):
            kind = label_type(y, raise_unknown=True)
        sw = None if sample_weight is None else check_sample_weight(sample_weight, X, estimator=self)
        if sw is not None and np.all(sw == 1.0):
            sw = None          # unit weights are no weights (scikit-learn's contract): the same fit, bit for bit
        name = type(self).__name__
        # (one class: encode_labels' error, "needs at least 2 classes in y; got 1 class")
        classes, yidx = encode_labels(y, model=name, max_classes=max_classes, target_type=kind,
                                      more_classes="linbook.LogisticRegression (multinomial)")
        if sw is not None:
            require_weighted_classes(name, classes, np.bincount(yidx, weights=sw, minlength=classes.size),
                                     self.fit_intercept)
        return X, sw, classes, yidx

    def _set_binary_fit(self, loss, res, watch=None):
        """Store the fit ending at ``res.x`` (``coef_`` of shape (1, D) as scikit-learn's) and
        warn when it is not one (``lam = 0``: the exact separation test, see ``loss.separated_at``)."""
        w, b = loss.coefficients(res.x)
        self._check_result(res, w)
        separable = bool(self.lam == 0 and loss.separated_at(res.x, res.converged, watch))
        # scores as (x - shift)^T w + b_shift where the fit centred offset columns (linbook._predictor.predict_scores)
        origin = None if loss.shift is None or not self.fit_intercept else (loss.shift, float(res.x[0]))
        null_space = lambda: design_null_space(loss.X, loss.sample_weight, loss.fit_intercept)  # noqa: E731 (X - shift)
        W, b, self._origin = self._least_norm(w[None, :], np.array([b]), null_space, origin)
        self.coef_ = W.copy()
        self.intercept_ = np.array([b[0] if self.fit_intercept else 0.0])
        self._set_convergence(res, separable)

    def _least_norm(self, W, b, null_space, origin=None):
        """``(W, b, origin)`` moved to the maximum-likelihood fit of least ``||w_c||`` where the design has lower rank.

        With ``lam = 0`` and collinear columns the MLE is a family: any direction ``d`` with ``X d`` constant
        adds to ``w`` (the intercept taking ``-m'd``) without changing a score. Each solver stopped at another
        member (Newton and L-BFGS: 0.69 and 0.82 on one coefficient). The member of least norm, the
        ``lam -> 0`` limit of the penalised fits and what ``LinearRegression`` returns, is ``w - N N' w``,
        with ``N`` an orthonormal basis of the null space of the design centred at ``m``
        (``((N, N), m) = null_space()``, :func:`linbook.linear._moments.design_null_space`).

        ``origin``: the scores' ``(o, b_o)`` (:func:`linbook._predictor.linear_predictor_from`), or None; then
        ``null_space`` is that of ``X - o`` and ``m`` is measured from ``o``: ``b_o`` moves by ``m^T d`` exactly as
        ``b`` moves by ``(m + o)^T d``, with no term of the size of ``o`` in it.
        """
        full = self.n_features_in_ + int(self.fit_intercept)
        if self.lam > 0 or self._free_columns is None or self._free_columns == full or not np.all(np.isfinite(W)):
            return W, b, origin
        move, centre = null_space()
        if move is None:
            return W, b, origin
        A, B = move
        along = (W @ A) @ B.T                          # the part of each w_c no score depends on
        if self.fit_intercept:
            shift = 0.0 if origin is None else origin[0]
            b = b + along @ (centre + shift)
            if origin is not None:
                moved = along @ centre
                origin = (shift, origin[1] + (moved[0] if np.ndim(origin[1]) == 0 else moved))
        return W - along, b, origin

    def _set_convergence(self, res, separable):
        """``n_iter_``, ``separable_``, ``converged_`` (true only at a finite optimum), with the warnings."""
        self.n_iter_ = int(res.n_iter)
        self.separable_ = bool(separable)
        self.converged_ = bool(res.converged and not separable)
        if separable:
            warn_separable(type(self).__name__)
        elif not res.converged:
            self._warn_not_converged(res, self.solver_)

    def _check_result(self, res, *params):
        check_finite_fit(self, res.fun, *params, what="the optimisation",
                         cure="scale the features (e.g. StandardScaler) or set lam > 0")

    def _warn_not_converged(self, res, solver):
        # the optimiser's own advice names its arguments (gtol); the estimator's are max_iter and tol
        reason = res.message.split(";")[0]
        other = "" if solver == "newton" else ", or try solver='newton'"
        warnings.warn(f"{type(self).__name__} (solver {solver!r}) stopped without converging after "
                      f"{res.n_iter} iterations ({reason}). Increase max_iter or loosen tol{other}.",
                      ConvergenceWarning, stacklevel=5)

    def _z(self, X):
        X = validate_predict(self, X, accept_sparse=True)
        return linear_predictor_from(X, self.coef_[0], self.intercept_[0], getattr(self, "_origin", None))

    @dask_blocks
    def decision_function(self, X):
        """Linear predictor ``z = x'w + b`` (shape ``(n,)``); class ``classes_[1]`` when ``z > 0``."""
        return finite_scores(self, self._z(X), "decision function")

    @dask_blocks
    def predict(self, X):
        """Most probable class label."""
        z = self._z(X)
        return self.classes_[(z > 0).astype(int)]

    @dask_blocks
    def predict_log_proba(self, X):
        """Log class probabilities, shape ``(n, 2)``, computed without underflow."""
        z = self._z(X)
        return np.column_stack([self._log_p(-z), self._log_p(z)])

    @dask_blocks
    def predict_proba(self, X):
        """Class probabilities, shape ``(n, 2)``, columns in the order of ``classes_``."""
        return np.exp(self.predict_log_proba(X))

    def _y_index(self, y):
        return class_index(self, y)

    def log_likelihood(self, X, y):
        """Summed log-likelihood ``sum_i log p(y_i | x_i)`` in nats (penalty not included)."""
        z = self._z(X)
        yi = self._y_index(y)
        if yi.shape[0] != z.shape[0]:
            raise ValueError("X and y have different numbers of samples")
        return float(np.sum(self._log_p(np.where(yi == 1, z, -z))))

    @property
    def n_params_(self):
        """Free parameters of the likelihood, the ``k`` of :meth:`aic` and :meth:`bic`: ``D + 1`` (``D``
        without intercept) times ``C - 1`` classes. With ``lam = 0`` a design ``[1, X]`` of rank ``r < D + 1``
        (collinear or constant columns) has ``r (C - 1)``, as statsmodels counts (``df_model + 1``): the
        likelihood depends on the coefficients only through ``X w + b``. With ``lam > 0`` the penalty fixes
        every coefficient, and each counts.

        Raises ``AttributeError`` for ``lam = 0`` on sparse ``X`` with more than 4096 columns, where the fit
        does not compute the rank.
        """
        free = getattr(self, "_free_columns", self.n_features_in_ + int(self.fit_intercept))
        if free is None:
            raise AttributeError("n_params_ (and so aic/bic) needs the rank of the design, which a fit with "
                                 "lam = 0 computes for sparse X of at most 4096 columns only. Count the "
                                 "parameters yourself (rank of [1, X]), or fit on dense X.")
        return free * (self.classes_.size - 1)

    def _declare_null_directions(self, loss):
        """Tell Newton (``loss.null_directions``) whether the design may have null directions: a step's gain below
        ``f``'s rounding then means the optimum only where it may (``linbook.optim.newton._no_step``)."""
        full = self.n_features_in_ + int(self.fit_intercept)
        loss.null_directions = bool(self._free_columns is None or self._free_columns < full)
        return loss

    def _set_free_columns(self, X, sw):
        """``_free_columns`` for :attr:`n_params_`: the design's rank where ``lam = 0`` (``None``: unknown)."""
        if self.lam > 0:
            self._free_columns = X.shape[1] + int(self.fit_intercept)
        else:
            self._free_columns = design_rank(X, sw, self.fit_intercept)

    def _pass_at_fit(self, X, y, need_hess):
        X = validate_predict(self, X, accept_sparse=True)
        t = np.ones(X.shape[0]) if y is None else 2.0 * self._y_index(y) - 1.0
        if t.shape[0] != X.shape[0]:
            raise ValueError("X and y have different numbers of samples")
        w = self.coef_[0]
        f, g, H, _ = binary_pass(X, t, w, self.intercept_[0], self._terms,
                                 fit_intercept=self.fit_intercept, need_hess=need_hess)
        off = int(self.fit_intercept)
        g[off:] += self.lam * w
        if need_hess:
            H[off:, off:] += self.lam * np.eye(w.size)
        return g, H

    def nll_gradient(self, X, y):
        """Gradient of the penalised NLL at the fit, order ``[intercept, coef]``."""
        return self._pass_at_fit(X, y, False)[0]

    def nll_hessian_xy(self, X, y):
        """Hessian of the penalised NLL at the fit, on data ``(X, y)`` (any binary model)."""
        return self._pass_at_fit(X, y, True)[1]
