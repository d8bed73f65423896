"""Least mean squares (the delta rule, Widrow-Hoff), eq. (8.87).

Derived in: chapter "Online learning and stochastic optimisation" § "Least mean squares (the delta rule)".
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.base import BaseEstimator
from .._predictor import finite_scores, linear_predictor
from ..base import RegressorMixin  # scikit-learn's, with an R^2 that does not overflow

from ..base import NON_NEGATIVE, POSITIVE_INT, StrOptions, as_rng, check_params, dask_blocks, predict_input
from . import schedules
from ._stream import (diverged, numpy_fit, numpy_pass, objective_stop, recheck_params, record_params, transactional,
                      validate_chunk)
from .sgd import _step_size

__all__ = ["LMS"]

#: ``converged_`` asks every column of ``[1, X]`` to be orthogonal to the residual to this cosine.
OPTIMALITY_TOL = 1e-6


def least_squares_optimal(X, y, theta, fit_intercept, tol=OPTIMALITY_TOL):
    """Whether ``theta = [intercept, coef...]`` solves least squares on ``(X, y)``, scale-free.

    The normal equations say the residual ``r`` is orthogonal to every column; the test
    is ``|col^T r| <= tol ||col|| ||r||`` for each column, which does not change when
    a column or ``y`` is rescaled. A residual within the rounding of its own terms
    (``4 (D + 2) eps |x_i|^T |w| + eps (|b| + |y_i|) / 2``: the products' rounding, and half a unit in the last
    place of ``b`` for its own rounding and half for the sum ``... + b``) is an exact fit: its direction is
    rounding noise. Not ``4 (D + 2)`` units of ``b`` and ``y_i`` as well: with ``y`` near 1e14, residuals of 64
    units of ``y`` (noise of 1) counted as rounding, and a fit 7e-2 from least squares as converged. Not a
    residual below ``1e-8`` of the part of ``y`` to explain: a column of 1e-9 beside one of 1 explains less
    than that, and a fit that ignored it
    (its coefficient 1.5e-10 where it is 5, the column at cosine 0.97 to the residual) passed.
    """
    off = int(fit_intercept)
    b = theta[0] if off else 0.0
    r = X @ theta[off:] + b - y
    rn = np.linalg.norm(r)
    terms = 4.0 * (X.shape[1] + 2) * (np.abs(X) @ np.abs(theta[off:])) + 0.5 * (abs(b) + np.abs(y))
    if rn <= np.finfo(float).eps * np.linalg.norm(terms):
        return True
    cols = [(X.T @ r, np.sqrt(np.einsum("ij,ij->j", X, X)))]
    if off:
        cols.append((np.array([r.sum()]), np.array([np.sqrt(X.shape[0])])))
    return all(np.all(np.abs(g) <= tol * nrm * rn) for g, nrm in cols)


def _delta_rule_pass(X, y, order, theta, fit_intercept, schedule, eta0, tau0, kappa, b_ratio, state, tol, path):
    """One pass of the delta rule (8.87) over the samples in ``order``, in numpy.

    For each sample ``i``: the residual ``r = yhat_i - y_i``, then
    ``theta <- theta - eta_k r [1, x_i]`` (the intercept's step ``b_ratio eta_k``), ``eta_k`` the
    schedule's step of update ``k = state[0]``. ``theta = [intercept, coef...]`` and ``state`` are
    updated in place; row ``k`` of ``path`` (when it has rows) receives the ``k+1``-th iterate.
    Stops at the first step with ``||theta_k - theta_(k-1)||^2 < tol`` (``tol < 0``: never).
    Returns ``(position, code, loss)`` as ``linbook._kernels.online.lms_pass``, which runs this
    loop compiled and is tested equal to it: code 0 done, 1 the ``tol`` test fired, 2 non-finite;
    ``loss`` the summed ``(1/2) r^2``, each sample's before its step.

    Derived in: chapter "Online learning and stochastic optimisation" § "Least mean squares (the delta rule)".
    """
    off = int(fit_intercept)
    coef, t_before, total = theta[off:], state[0], 0.0
    for pos, i in enumerate(order.tolist()):
        x = X[i]
        r = float(coef @ x) + (float(theta[0]) if off else 0.0) - y[i]
        total += 0.5 * r * r
        state[0] += 1.0
        e = _step_size(schedule, eta0, tau0, kappa, 0.0, state[0]) * r
        if not math.isfinite(e):
            return pos, 2, total
        step = e * x
        coef -= step
        moved = float(step @ step)
        if off:
            theta[0] -= b_ratio * e
            moved += (b_ratio * e) ** 2
        if path.shape[0]:
            path[int(state[0] - t_before) - 1] = theta
        if moved < tol:
            return pos, 1, total
    return order.shape[0], 0, total


class LMS(RegressorMixin, BaseEstimator):
    """Least mean squares (delta rule, Widrow-Hoff): ``theta <- theta - eta_k (yhat_k - y_k) x_k`` (8.87).

    Per-sample SGD on ``(1/2)(theta^T x - y)^2`` without penalty, one sample at a
    time (``_delta_rule_pass``, compiled for larger data). A non-finite prediction raises
    ``linbook.base.DivergenceError``.

    Parameters
    ----------
    eta0 : "auto" or float, default "auto"
        ``"auto"``: the coefficients take ``eta0 = 1 / (2 max_i ||x_i||^2)`` (over the
        samples seen so far) and the intercept ``1 / (2 (m + 1))`` (``m`` nonzero
        features in a typical row), so that one step changes the residual of its sample
        by less than the residual: LMS then cannot diverge on unscaled features (the
        classical condition is ``0 < eta ||x||^2 < 2``). A
        number is used as given for every parameter (the delta rule of the note).
    learning_rate : {"constant", "robbins_monro"}, default "constant"
        ``eta_k = eta0`` or ``eta0 (tau0 + k)^(-kappa)``.
    tau0, kappa : float
    fit_intercept : bool, default True
    max_iter : int, default 50
        Maximum epochs of ``fit``.
    tol : float or None, default None
        The note's stopping rule: stop ``fit`` at the first update with
        ``||theta_k - theta_{k-1}||_2^2 < tol`` (absolute, as in the note: it depends
        on the scale of the data). ``None`` runs every epoch. Firing it sets
        ``tol_reached_``; it does not mean the optimum was reached (see ``converged_``).
    loss_tol : float or None, default None
        The loss-based stop rule of ``SGDRegressor`` (its ``tol``, one implementation):
        stop ``fit`` when the epoch's summed loss ``sum_i (1/2)(yhat_i - y_i)^2`` (each
        sample's taken before its step) has not fallen below ``best - loss_tol * L_ref``
        for ``n_iter_no_change`` epochs in a row, ``best`` the lowest so far and ``L_ref``
        the loss ``(1/2) sum_i (y_i - ybar)^2`` of the best constant (``ybar = 0`` without
        intercept), so rescaling ``y`` does not change when it fires. ``None`` (the
        default, the note's delta rule): the epochs end by ``max_iter`` or ``tol``.
        Firing it also sets ``tol_reached_``.
    n_iter_no_change : int, default 5
        Epochs without improvement before the ``loss_tol`` rule stops ``fit``.
    shuffle : bool, default False
        Shuffle before each epoch of ``fit`` (the stream order is used otherwise).
    record_path : bool, default False
        Keep every iterate in ``path_`` (rows ``[intercept, coef...]``).
    theta0 : array_like or None
        Start ``[intercept, coef...]`` (``[coef...]`` without intercept); default zeros.
    random_state : int, Generator or None

    Attributes
    ----------
    coef_ : ndarray (n_features,)
    intercept_ : float
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Column names, when ``X`` was a DataFrame with string column names.
    t_ : int
        Updates so far.
    n_iter_ : int
        Epochs run by ``fit``.
    tol_reached_ : bool
        Whether the ``tol`` test (or the ``loss_tol`` rule) stopped ``fit`` (False after ``partial_fit``, as
        ``converged_``).
    converged_ : bool
        Whether the final parameters of ``fit`` solve least squares on the training
        data: every column of ``[1, X]`` orthogonal to the residual to a cosine of
        ``1e-6`` (a scale-free test of the normal equations). Constant-step LMS hovers
        around the solution and usually does not pass it.
    path_ : ndarray (``t_ + 1``, n_params)
        Every iterate (``record_path`` only).

    Derived in: chapter "Online learning and stochastic optimisation" § "Least mean squares (the delta rule)".
    """

    def __init__(self, *, eta0="auto", learning_rate="constant", tau0=1.0, kappa=0.75, fit_intercept=True,
                 max_iter=50, tol=None, shuffle=False, record_path=False, theta0=None, random_state=None,
                 loss_tol=None, n_iter_no_change=5):
        self.eta0 = eta0
        self.learning_rate = learning_rate
        self.tau0 = tau0
        self.kappa = kappa
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.loss_tol = loss_tol
        self.n_iter_no_change = n_iter_no_change
        self.shuffle = shuffle
        self.record_path = record_path
        self.theta0 = theta0
        self.random_state = random_state

    _parameter_constraints = {
        **schedules.CONSTRAINTS, "learning_rate": [StrOptions({"constant", "robbins_monro"})],
        "fit_intercept": ["boolean"], "max_iter": [POSITIVE_INT], "tol": [NON_NEGATIVE, None],
        "loss_tol": [NON_NEGATIVE, None], "n_iter_no_change": [POSITIVE_INT],
        "shuffle": ["boolean"], "record_path": ["boolean"],
    }

    def _checked_params(self):
        check_params(self, schedules.schedule_constraints(self))

    def _start(self, d):
        self._checked_params()
        record_params(self)
        p = d + int(self.fit_intercept)
        theta = np.zeros(p) if self.theta0 is None else np.array(self.theta0, dtype=float).reshape(-1)
        if theta.shape[0] != p or not np.all(np.isfinite(theta)):
            raise ValueError(f"theta0 must hold {p} finite numbers ([intercept, coef...])")
        self._theta = theta
        self._state = np.zeros(1)
        self._L_x = 0.0
        self._x_scale = None            # c: the state is that of X c (``_observe``)
        self._y_scale = None            # d: ... and of the target y d (``_targets``)
        self._nnz = np.zeros(2)
        self.t_ = 0
        self.tol_reached_ = False
        self.converged_ = False
        self.path_ = theta[None, :].copy() if self.record_path else None

    def _observe(self, X, tol):
        """Record the largest squared row norm and the nonzeros per row (for ``eta0="auto"``);
        return the chunk in the units the iterates run in, ``X c``.

        ``c`` is a power of two, 1 unless the squared row norms over- or underflow
        (``schedules.feature_scale``); the first chunk picks it, and a chunk whose features leave the
        window in its units picks it anew, the state rescaled alongside. The coefficients on ``X c``
        are those on ``X`` over ``c``, bit for bit (a given ``eta0`` becomes ``eta0 / c^2``). The
        note's ``tol`` test adds the squared moves of the coefficients and of the intercept,
        whose units differ by the feature scale, so with ``tol`` ``c`` stays 1.
        """
        old = self._x_scale
        X, scale, top, nnz = schedules.scaled_rows(X, 1.0 if tol is not None else old, keep=tol is not None)
        if scale != old:       # the coefficients (theta0, or the stream's state) and max ||x c||^2 in units of X c
            schedules.rescale_exactly((self._theta[int(self.fit_intercept):],), scale, old or 1.0)
            L_x = np.array(self._L_x)
            schedules.rescale_exactly((L_x,), old or 1.0, scale, power=2)
            self._L_x, self._x_scale = float(L_x), scale
        self._L_x = schedules.curvature_bound(top, self._L_x, nnz)
        self._nnz += (nnz, X.shape[0])
        return X

    def _targets(self, y, tol):
        """The chunk's targets in the units the iterates run in, ``y d`` (``schedules.target_units``).

        The first chunk with a non-zero target picks ``d``, and a chunk whose targets leave ``2^+-64`` in
        its units picks it anew, the parameters rescaled alongside: those on ``y d`` are those on ``y``
        times ``d``. With ``tol`` (the note's test on the squared moves, in the units of ``y``) ``d``
        stays 1.
        """
        current = self._y_scale or 1.0
        d = current if tol is not None else schedules.target_units(
            schedules.target_scale(y, np.ones(y.shape[0]), True), self._y_scale)
        if d != current:
            schedules.rescale_exactly((self._theta,), current, d)
        self._y_scale = d
        return y * d if d != 1.0 else y

    def _pass(self, X, y, order, tol, numpy_first=True):
        """One pass in ``order`` (numpy for a process's first small fits while ``numpy_first``, else compiled).

        Returns ``(fired, loss)``: whether the ``tol`` test fired, and the pass's summed loss.
        """
        if isinstance(self.eta0, str):
            eta_w, eta_b = schedules.auto_steps(self._L_x, 0.0, self._nnz[0] / self._nnz[1])
            eta0, b_ratio = eta_w, eta_b / eta_w
        else:
            eta0, b_ratio = schedules.scaled_fixed_step(float(self.eta0), self._x_scale)
        path = np.empty((order.shape[0] if self.record_path else 0, self._theta.shape[0]))
        t_before = int(self._state[0])
        args = (X, y, order, self._theta, bool(self.fit_intercept), schedules.SCHEDULES.index(self.learning_rate),
                eta0, float(self.tau0), float(self.kappa), b_ratio, self._state, -1.0 if tol is None else float(tol),
                path)
        if numpy_first and numpy_pass(order.shape[0]):
            with np.errstate(over="ignore", invalid="ignore"):    # a divergence is reported below
                _, status, loss = _delta_rule_pass(*args)
        else:
            from .._kernels.online import lms_pass

            _, status, loss = lms_pass(*args)
        self.t_ = int(self._state[0])
        if status == 2 or not np.all(np.isfinite(self._theta)):
            raise diverged(self, "the prediction")
        if self.record_path:
            path[:, int(self.fit_intercept):] *= self._x_scale
            path /= self._y_scale
            self.path_ = np.vstack([self.path_, path[:self.t_ - t_before]])
        return status == 1, loss

    def _publish(self):
        off = int(self.fit_intercept)
        # the coefficients of X and y: c times those of X c, over d for y d
        self.coef_ = schedules.in_caller_units(self, self._theta[off:], self._x_scale, self._y_scale)
        self.intercept_ = float(self._theta[0]) / self._y_scale if off else 0.0

    @transactional
    def fit(self, X, y):
        """Run up to ``max_iter`` epochs (or until the ``tol`` test fires). Returns ``self``."""
        X, y = validate_chunk(self, X, y, first=True, y_numeric=True)
        X = np.ascontiguousarray(X)
        self._start(X.shape[1])
        X = self._observe(X, self.tol)
        y = self._targets(y, self.tol)
        rng = as_rng(self.random_state)
        stops = None
        if self.loss_tol is not None:
            stops = objective_stop(self.loss_tol, self.n_iter_no_change, y, np.ones(len(y)), squared=True,
                                   fit_intercept=self.fit_intercept)
        self.n_iter_ = 0
        # the fewest epochs this fit runs: tol may fire in the first, loss_tol not before n_iter_no_change + 1
        least = (1 if self.tol is not None else int(self.max_iter) if stops is None
                 else min(int(self.max_iter), int(self.n_iter_no_change) + 1))
        numpy_first = numpy_fit(least * len(y))
        for _ in range(int(self.max_iter)):
            order = rng.permutation(len(y)) if self.shuffle else np.arange(len(y))
            self.n_iter_ += 1
            fired, loss = self._pass(X, y, order, self.tol, numpy_first)
            if fired or (stops is not None and stops(loss)):
                self.tol_reached_ = True
                break
        self._publish()
        self.converged_ = least_squares_optimal(X, y, self._theta, self.fit_intercept)    # scale-free: X c
        return self

    @transactional
    def partial_fit(self, X, y):
        """Update on each sample of the chunk in order (no ``tol`` test). Returns ``self``."""
        first = not hasattr(self, "_theta")
        if not first:
            recheck_params(self, self._checked_params, fixed=("fit_intercept",))
        X, y = validate_chunk(self, X, y, first=first, y_numeric=True)
        X = np.ascontiguousarray(X)
        if first:
            self._start(X.shape[1])
            self.n_iter_ = 0
        X = self._observe(X, None)
        self._pass(X, self._targets(y, None), np.arange(len(y)), None)
        self._publish()
        # the parameters are no longer fit's: its claims about them would be stale
        self.tol_reached_ = self.converged_ = False
        return self

    @dask_blocks
    def predict(self, X):
        """``X coef_ + intercept_``."""
        X = predict_input(self, X)
        return finite_scores(self, linear_predictor(X, self.coef_, self.intercept_))
