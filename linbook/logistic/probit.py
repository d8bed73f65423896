"""Binary probit regression.

Derived in: chapter "Logistic regression" § "Probit regression".
"""

from __future__ import annotations

import numpy as np
from scipy.special import log_ndtr

from ..base import all_or_nothing, is_dask, weights_near_one
from . import solvers
from ._scaled import BinaryLoss
from .binary import BinaryGLM, intercept_only_start, probit_terms

__all__ = ["ProbitRegression"]


def probit_loss(w, X, y, lam=0.0, *, sample_weight=None, penalised=None, hessian=True):
    """``(F, g, H)`` of the penalised probit NLL at ``w`` (``H`` is None unless ``hessian``).

    For labels ``y_i`` in {0, 1} (``t_i = 2 y_i - 1``), weights ``sw_i``, ``u = t * (X w)`` and
    ``lam_i = phi(u_i) / Phi(u_i)`` (the inverse Mills ratio)::

        F(w) = -sum_i sw_i log Phi(u_i) + (lam / 2) sum_j r_j w_j^2
        g    = X' (sw * (-t lam_i)) + lam r * w
        H    = X' S X + lam diag(r),      S = diag(sw * lam_i (u_i + lam_i))

    (``r`` as in :func:`linbook.logistic_loss`). ``ProbitRegression.fit`` minimises this by
    Newton's method on centred, scaled columns (``tests/test_logistic_readable.py`` checks the two equal).

    Derived in: chapter "Logistic regression" § "Probit regression".
    """
    sw = 1.0 if sample_weight is None else sample_weight
    r = lam * (np.ones_like(w) if penalised is None else penalised)
    t = 2.0 * y - 1.0
    u = t * (X @ w)
    log_Phi = log_ndtr(u)                                             # stable for u far below 0
    mills = np.exp(-0.5 * u * u - 0.5 * np.log(2 * np.pi) - log_Phi)  # phi(u) / Phi(u)
    F = float(-np.sum(sw * log_Phi) + 0.5 * np.sum(r * w * w))
    g = X.T @ (sw * (-t * mills)) + r * w
    if not hessian:
        return F, g, None
    s = sw * mills * (u + mills)              # -d2 log Phi(u) / du2, in (0, 1)
    H = X.T @ (s[:, None] * X) + np.diag(r)
    return F, g, H


class ProbitRegression(BinaryGLM):
    """Binary probit regression ``p(y = classes_[1] | x) = Phi(x'w + b)``.

    Minimises ``-sum_i sw_i log Phi(t_i (x_i'w + b)) + (lam/2) ||w||^2`` (``t_i = +-1``,
    ``sw_i`` sample weights, intercept unpenalised) by Newton's method
    (:func:`linbook.optim.newton`, one blocked pass per step) with the stable
    ``log Phi = scipy.special.log_ndtr``. With ``lam = 0`` it equals statsmodels ``Probit``.
    Binary only (declared in its scikit-learn tags).

    Parameters
    ----------
    lam : float, default 0
        l2 penalty; the default is the maximum-likelihood fit of statsmodels ``Probit``
        (warns on separable data, where that fit does not exist: then set ``lam > 0``); collinear
        columns: the least-norm fit, as :class:`linbook.LogisticRegression`.
    solver : {"auto", "newton", "irls", "newton-cg", "lbfgs", "bfgs", "gd"}, default "auto"
        As :class:`linbook.LogisticRegression` (``"auto"``: Newton unless ``X`` is sparse or wide; then
        Newton-CG for sparse ``X``, L-BFGS for dense).
    fit_intercept : bool, default True
    max_iter : int, optional
    tol : float, default 1e-8
        As :class:`linbook.LogisticRegression` (mean gradient, max-abs-scaled features; Newton
        also needs its next step to move no linear predictor by more than ``sqrt(tol)``).

    Attributes
    ----------
    classes_, coef_ (1, D), intercept_ (1,), n_iter_, converged_, separable_, solver_, n_features_in_

    Derived in: chapter "Logistic regression" § "Probit regression".
    """

    _terms = staticmethod(probit_terms)

    def __init__(self, lam=0.0, solver="auto", fit_intercept=True, max_iter=None, tol=1e-8):
        self.lam = lam
        self.solver = solver
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_class = False
        return tags

    @staticmethod
    def _log_p(z):
        return log_ndtr(z)

    @all_or_nothing
    def fit(self, X, y, sample_weight=None):
        """Fit by Newton's method; returns ``self`` (warns on separable data with ``lam = 0``)."""
        if is_dask(X, y, sample_weight):       # a dask array or DataFrame: Newton as a map-reduce
            from ._dask_fit import fit_probit

            return fit_probit(self, X, y, sample_weight)
        X, sw, yidx, max_iter = self._prepare_fit(X, y, sample_weight, max_classes=2)
        lam = float(self.lam)       # a numpy float32 lam would make the objective float32 (NEP 50)
        # weights below 2^-64 near 1, lam alongside (the same minimiser): subnormal weights were 1.7e-2 off
        sw, lam, _ = weights_near_one(sw, lam)
        y = yidx.astype(float)                              # labels in {0, 1}, t = 2 y - 1
        # minimise over theta = [b, w] (z = X~ theta, X~ = [1, X]) by Newton's method
        #     F(theta) = -sum_i sw_i log Phi(t_i z_i) + (lam/2) ||w||^2
        #     g = X~'(a dF_i/dz) + lam r theta;  H = X~' diag(a d2F_i/dz2) X~ + lam diag(r)
        # -- LogisticRegression's step with probit_terms for the logit's (mu - y, mu (1 - mu)).
        # probit_loss(theta, X~, y, lam, sample_weight=sw, penalised=r) above is that F, g, H in numpy.
        chord = self.solver_ == "newton" and solvers.reuse_hessian(X.shape[0], X.shape[1] + self.fit_intercept)
        loss = BinaryLoss(X, y, sw, lam, self.fit_intercept, probit_terms, link="probit",
                          approximate_hessian=chord)
        self._declare_null_directions(loss)
        theta = loss.coordinates(b=intercept_only_start(yidx, sw, link="probit"))   # the intercept-only MLE
        watch = solvers.SeparationWatch(loss.separable) if lam == 0 else None
        res = solvers.minimise(self.solver_, loss, theta, max_iter=max_iter, tol=self.tol, callback=watch,
                               reuse_hessian=chord)
        self._set_binary_fit(loss, res, watch)
        return self

    def nll_hessian(self, X, y=None):
        """Hessian of the penalised NLL at the fit; the probit curvature depends on ``y``, so pass it."""
        if y is None:
            raise ValueError("ProbitRegression.nll_hessian needs y: its curvature depends on the labels")
        return self.nll_hessian_xy(X, y)
