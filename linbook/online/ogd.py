"""Projected online gradient descent (8.78) and the regret it is judged by (8.77).

Derived in: chapter "Online learning and stochastic optimisation" § "Regret and online gradient descent".
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import optimize
from sklearn.base import BaseEstimator
from .._predictor import finite_scores, linear_predictor
from ..base import RegressorMixin  # scikit-learn's, with an R^2 that does not overflow
from sklearn.utils.validation import check_array, check_is_fitted

from ..base import POSITIVE, SeparableDataWarning, StrOptions, _with_advice, check_param_values, check_params, dask_blocks, predict_input
from ..numerics import _power_of_two_scale, log1pexp, sigmoid
from ._stream import diverged, numpy_pass, recheck_params, record_params, transactional, validate_chunk
from .schedules import curvature_bound, in_caller_units, rescale_exactly, scaled_fixed_step, scaled_rows

__all__ = ["OnlineGradientDescent", "best_fixed_parameter"]

_LOSSES = ("squared_error", "log_loss", "absolute_error")


def _total_loss(loss, theta, X, y):
    """``sum_t f(theta, z_t)`` and its gradient."""
    Z = X @ theta
    if loss == "squared_error":
        R = Z - y
        return 0.5 * float(R @ R), X.T @ R
    if loss == "log_loss":
        return float(np.sum(log1pexp(Z) - y * Z)), X.T @ (sigmoid(Z) - y)
    return float(np.sum(np.abs(Z - y))), X.T @ np.sign(Z - y)


def _ogd_rounds(X, y, theta, loss, radius, eta0, auto, state, losses):
    """Projected online gradient descent (8.78), one round per row, in numpy.

    Round ``t``: suffer ``f(theta, z_t)`` (stored in ``losses``), then
    ``theta <- proj(theta - eta_t grad f)`` with ``eta_t = eta0 / sqrt(t)``, or with ``auto``:
    ``eta_t = 1 / (L_t sqrt(t))``, ``L_t = c max_{s<=t} ||x_s||^2`` (``c = 1/4`` for the log-loss,
    1 otherwise); ``proj`` scales ``theta`` back onto the ball of ``radius`` (``<= 0``: none).
    ``theta`` and ``state = [t, L_t]`` are updated in place. Returns the row where the loss
    stopped being finite, or -1, as ``linbook._kernels.online.ogd_rounds``, which runs this loop
    compiled and is tested equal to it.

    Derived in: chapter "Online learning and stochastic optimisation" § "Regret and online gradient descent".
    """
    c = 0.25 if loss == 1 else 1.0
    for i in range(X.shape[0]):
        x = X[i]
        z, r = float(theta @ x), float(x @ x)
        if loss == 0:                         # (1/2)(z - y)^2
            f, dz = 0.5 * (z - y[i]) ** 2, z - y[i]
        elif loss == 1:                       # log(1 + e^z) - y z, stable
            f, dz = float(log1pexp(z)) - y[i] * z, float(sigmoid(z)) - y[i]
        else:                                 # |z - y|
            f, dz = abs(z - y[i]), np.sign(z - y[i])
        losses[i] = f
        if not np.isfinite(f):
            return i
        state[0] += 1.0
        if auto:
            state[1] = max(state[1], c * r)
            eta = 1.0 / (state[1] * np.sqrt(state[0])) if state[1] > 0.0 else 0.0
        else:
            eta = eta0 / np.sqrt(state[0])
        theta -= (eta * dz) * x
        norm2 = float(theta @ theta)
        if not np.isfinite(norm2):
            return i
        if radius > 0.0 and norm2 > radius * radius:
            theta *= radius / np.sqrt(norm2)
    return -1


#: the radius of the feasible ball (None: no projection)
_RADIUS = [POSITIVE, None]


def _check_targets(loss, y, who):
    """The log-loss is the logistic NLL of labels in {0, 1}; any other value gives a meaningless fit."""
    if loss == "log_loss" and not np.all((y == 0) | (y == 1)):
        bad = np.unique(y[(y != 0) & (y != 1)])[:5].tolist()
        raise ValueError(f"{who}: loss='log_loss' needs labels y in {{0, 1}}; got {bad}. "
                         "Encode the two classes as 0 and 1 (e.g. y = (labels == positive_class)).")


def best_fixed_parameter(X, y, *, loss="squared_error", radius=None):
    """The best fixed parameter in hindsight: ``argmin_{||theta|| <= radius} sum_t f(theta, z_t)``.

    Solved exactly where the loss allows, on ``X`` and ``y`` divided by powers of two (the answer
    scales back exactly): the squared loss by the SVD of ``X`` (inside the ball the least-squares
    solution of least norm; on its boundary the ridge solution whose norm is ``radius``, found on
    the ridge path), the log-loss by ``linbook.irls`` (on the boundary likewise, IRLS with the
    penalty whose solution has norm ``radius``), the absolute loss as a linear program (HiGHS), or
    with a ball by SLSQP on that program.

    Parameters
    ----------
    X : array_like (T, D)
    y : array_like (T,)
    loss : {"squared_error", "log_loss", "absolute_error"}
    radius : float or None

    Returns
    -------
    theta : ndarray (D,)
    total : float
        ``sum_t f(theta, z_t)``.

    Without a ball, log-loss on (quasi-)separable labels has no minimiser (the total falls towards 0
    as ``||theta||`` grows): a ``SeparableDataWarning`` says so; pass a ``radius``.

    Derived in: chapter "Online learning and stochastic optimisation" § "Regret and online gradient descent".
    """
    check_param_values("best_fixed_parameter", {"loss": [StrOptions(set(_LOSSES))], "radius": _RADIUS},
                       {"loss": loss, "radius": radius})
    with _with_advice():                     # scikit-learn's "Found array with dim 3" names no input
        X = check_array(X, dtype=np.float64)
    if np.ndim(y) == 1:
        y = check_array(y, dtype=np.float64, ensure_2d=False, ensure_min_samples=0, input_name="y")
    if np.ndim(y) != 1 or np.shape(y)[0] != X.shape[0]:
        raise ValueError(f"best_fixed_parameter: y must be 1-D with one value per row of X ({X.shape[0]}); "
                         f"got shape {np.shape(y)}. Pass y as a 1-D array of shape (n_samples,).")
    _check_targets(loss, y, "best_fixed_parameter")
    # theta' = theta a / b on X / a and y / b (b = 1 for the log-loss, whose labels have no units)
    a = float(_power_of_two_scale(np.max(np.abs(X), initial=0.0), normal=True))
    b = 1.0 if loss == "log_loss" else float(_power_of_two_scale(np.max(np.abs(y), initial=0.0), normal=True))
    with np.errstate(over="ignore", under="ignore"):
        r = None if radius is None else radius * a / b
    r = None if r is not None and not np.isfinite(r) else r
    solve = {"squared_error": _squared_in_ball, "log_loss": _logistic_in_ball, "absolute_error": _absolute_in_ball}
    theta = solve[loss](X / a, y / b, r) * b / a
    return theta, _total_loss(loss, theta, X, y)[0]


def _squared_in_ball(X, y, radius):
    """``argmin_{||t|| <= radius} ||X t - y||^2 / 2`` from the SVD of ``X``: the least-squares solution of least
    norm when it lies in the ball, else the ridge solution ``t(lam)`` with ``||t(lam)|| = radius`` (the norm falls
    with ``lam``, so the root is unique). Why: SLSQP's absolute tolerances missed the constrained optimum."""
    t = _unique_least_squares(X, y)
    if t is not None and (radius is None or np.linalg.norm(t) <= radius):
        return t
    U, s, Vt = np.linalg.svd(X, full_matrices=False)
    keep = s > (s[0] if s.size else 0.0) * max(X.shape) * np.finfo(float).eps
    U, s, Vt = U[:, keep], s[keep], Vt[keep]
    c = U.T @ y
    path = lambda lam: Vt.T @ (s * c / (s * s + lam))  # noqa: E731
    t = path(0.0)
    if radius is None or np.linalg.norm(t) <= radius:
        return t
    if radius == 0.0:
        return np.zeros(X.shape[1])
    return path(_norm_root(lambda lam: np.linalg.norm(path(lam)) - radius, float(s[0] * np.linalg.norm(c) / radius)))


def _column_units(X):
    """Powers of two near the norms of ``X``'s columns (1 for a zero column): ``X / units`` has columns of one size, and
    a solution ``t`` on it is ``t / units`` on ``X``, exactly."""
    return _power_of_two_scale(np.linalg.norm(X, axis=0), normal=True)


def _unique_least_squares(X, y):
    """``argmin ||X t - y||`` where ``X`` has independent columns once each is divided by its norm (then the minimiser
    is unique and found there: columns 1e14 apart in scale made the smallest singular value of ``X`` itself fall below
    the rank cut, and the minimiser lost a coordinate: the total loss 61.6 where it is 0.28); else ``None``."""
    units = _column_units(X)
    U, s, Vt = np.linalg.svd(X / units, full_matrices=False)
    if not (s.size == X.shape[1] and s[-1] > s[0] * max(X.shape) * np.finfo(float).eps):
        return None
    return (Vt.T @ ((U.T @ y) / s)) / units


def _norm_root(excess, upper):
    """The ``lam > 0`` where ``excess(lam)`` (the norm of a penalised solution minus the radius, decreasing in
    ``lam``, positive as ``lam -> 0``) crosses 0; ``upper`` a ``lam`` where it is <= 0. Solved on ``log lam``."""
    lower = upper
    while excess(lower) <= 0.0 and lower > 1e-300:
        lower /= 1e4
    while excess(upper) > 0.0:
        upper *= 1e4
    return float(np.exp(optimize.brentq(lambda v: excess(np.exp(v)), np.log(lower), np.log(upper),
                                        xtol=1e-14, rtol=4 * np.finfo(float).eps)))


def _logistic_in_ball(X, y, radius):
    """Log-loss minimiser by IRLS; on the ball's boundary (KKT: ``grad + mu t = 0``, ``mu > 0``) the penalised
    IRLS solution whose norm is ``radius``. Why: BFGS from 0 stopped far from the optimum on separable and badly
    scaled data, without a word."""
    from ..logistic.irls import irls                 # the logistic package imports nothing from online

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SeparableDataWarning)
        free = irls(X, y, tol=1e-12, max_iter=200)
    separable = any(issubclass(w.category, SeparableDataWarning) for w in caught)
    if radius is None:
        if separable:
            warnings.warn("best_fixed_parameter: the labels are (quasi-)separable, so the log-loss has no "
                          "minimiser (its total falls towards 0 as ||theta|| grows); the theta returned is where "
                          "IRLS stopped. Pass a radius to bound theta.", SeparableDataWarning, stacklevel=3)
        return free.x
    if not separable and free.converged and np.linalg.norm(free.x) <= radius:
        return free.x
    if radius == 0.0:
        return np.zeros(X.shape[1])
    fit = lambda mu: irls(X, y, lam=mu, tol=1e-12, max_iter=200).x  # noqa: E731
    mu = _norm_root(lambda mu: np.linalg.norm(fit(mu)) - radius, float(np.linalg.norm(X.T @ (y - 0.5)) / radius))
    return fit(mu)


def _absolute_in_ball(X, y, radius):
    """``argmin_{||t|| <= radius} sum |X t - y|`` as the linear program ``min sum e``, ``-e <= X t - y <= e``
    (HiGHS); with a ball, SLSQP on that program from the LP's solution pulled into the ball. Why: BFGS on the
    non-smooth loss stopped anywhere (features 1e8: theta = 0, total 10.7 against 1.58)."""
    T, D = X.shape
    # the program on columns of one size (HiGHS's tolerances are absolute: columns 1e8 apart in scale left the
    # total 1.3 % above its minimum), its solution scaled back exactly
    units = _column_units(X)
    cost = np.r_[np.zeros(D), np.ones(T)]
    lp = optimize.linprog(cost, A_ub=np.block([[X / units, -np.eye(T)], [-X / units, -np.eye(T)]]), b_ub=np.r_[y, -y],
                          bounds=[(None, None)] * D + [(0, None)] * T, method="highs")
    if lp.status != 0:
        raise ValueError(f"best_fixed_parameter: the least-absolute-deviation program failed ({lp.message})")
    t = lp.x[:D] / units
    if radius is None or np.linalg.norm(t) <= radius:
        return t
    A = np.block([[X, -np.eye(T)], [-X, -np.eye(T)]])
    t0 = t * (radius / np.linalg.norm(t))
    cons = [{"type": "ineq", "fun": lambda v: np.r_[y, -y] - A @ v, "jac": lambda v: -A},
            {"type": "ineq", "fun": lambda v: 1.0 - (v[:D] @ v[:D]) / radius ** 2,
             "jac": lambda v: np.r_[-2.0 * v[:D] / radius ** 2, np.zeros(T)]}]
    res = optimize.minimize(lambda v: (float(cost @ v), cost), np.r_[t0, np.abs(X @ t0 - y)], jac=True,
                            method="SLSQP", constraints=cons, options={"ftol": 1e-15, "maxiter": 2000})
    v = res.x[:D]
    return v * min(1.0, radius / np.linalg.norm(v)) if np.linalg.norm(v) > 0 else v


class OnlineGradientDescent(RegressorMixin, BaseEstimator):
    """Projected online gradient descent (8.78), predicting before each label arrives.

    For each sample ``z_t = (x_t, y_t)`` in turn: suffer ``f(theta_t, z_t)`` (recorded
    in ``losses_``), then ``theta_{t+1} = proj(theta_t - eta_t grad f(theta_t, z_t))``
    with ``proj`` the Euclidean projection onto the ball ``||theta|| <= radius`` and
    ``eta_t = eta0 / sqrt(t)``. With ``eta0 = diameter / G`` (G bounds the gradient
    norm) the cumulative regret is at most ``(3/2) diameter G sqrt(T)`` (Zinkevich 2003).
    No intercept: add a column of ones to ``X``. A compiled per-round loop; a
    non-finite loss raises ``linbook.base.DivergenceError``.

    Parameters
    ----------
    loss : {"squared_error", "log_loss", "absolute_error"}
        ``(1/2)(theta^T x - y)^2``, the logistic NLL with y in {0, 1}, or ``|theta^T x - y|``.
    radius : float or None, default None
        Radius of the feasible ball (None: no projection).
    eta0 : "auto" or float, default "auto"
        ``"auto"``: ``eta_t = 1 / (L_t sqrt(t))`` with ``L_t = c max_{s<=t} ||x_s||^2``
        (the largest curvature of a loss seen so far; ``c = 1/4`` for the log-loss,
        1 otherwise), which keeps the squared loss from diverging on unscaled features.
        A number gives ``eta_t = eta0 / sqrt(t)``.

    Attributes
    ----------
    coef_ : ndarray (D,)
        The current parameter theta_{T+1}.
    losses_ : ndarray (T,)
        The learner's loss on each sample, suffered before the update.
    n_features_in_ : int
    t_ : int
        Rounds played.

    Derived in: chapter "Online learning and stochastic optimisation" § "Regret and online gradient descent".
    """

    def __init__(self, *, loss="squared_error", radius=None, eta0="auto"):
        self.loss = loss
        self.radius = radius
        self.eta0 = eta0

    # fit is one pass over the rows in order, so on a dask collection it is partial_fit over its blocks
    _fit_is_one_pass = True
    _parameter_constraints = {"loss": [StrOptions(set(_LOSSES))], "radius": _RADIUS,
                              "eta0": [POSITIVE, StrOptions({"auto"})]}

    @transactional
    def partial_fit(self, X, y):
        """Play the rounds of one chunk. Returns ``self``."""
        first = not hasattr(self, "coef_")
        if first:
            check_params(self)
            record_params(self)
        else:
            recheck_params(self, lambda: check_params(self))
        X, y = validate_chunk(self, X, y, first=first, y_numeric=True)
        _check_targets(self.loss, y, type(self).__name__)
        # the rounds run on X c (c a power of two, 1 unless ||x||^2 over- or underflows): theta / c,
        # the step eta0 / c^2 and the radius / c make every score and loss those of X, bit for bit
        X, scale, top, nnz = scaled_rows(X, None if first else self._x_scale)
        if not first and scale != self._x_scale:      # a chunk beyond the window: the state in the new units
            self._rescale_features(scale)
        # a clear error when ||x c||^2 overflows, or underflows with no larger row before it: the stream's
        # largest, not the chunk's (a first row 1e150 times the later ones made every later chunk refused)
        L_x = curvature_bound(top, 0.0 if first else getattr(self, "_L_x", 0.0), nnz=nnz)
        auto = isinstance(self.eta0, str)
        eta0 = 1.0 if auto else scaled_fixed_step(float(self.eta0), scale)[0]
        radius = -1.0 if self.radius is None else float(self.radius) / scale
        if radius == 0.0:
            raise ValueError(f"radius={self.radius:g} is too small for features of order {1.0 / scale:.0e}: "
                             "the ball is not representable in their units. Scale the features.")
        if first:
            self._theta = np.zeros(X.shape[1])        # the parameter of X c: coef_ / c
            self._x_scale = scale
            self.t_ = 0
            self.losses_ = np.empty(0)
            self._state = np.zeros(2)                 # [t, L_t]
        theta, losses = self._theta.copy(), np.empty(X.shape[0])
        args = (np.ascontiguousarray(X), y, theta, _LOSSES.index(self.loss), radius, eta0, auto, self._state,
                losses)
        if numpy_pass(X.shape[0]):
            with np.errstate(over="ignore", invalid="ignore"):    # reported by the row returned
                bad = _ogd_rounds(*args)
        else:
            from .._kernels.online import ogd_rounds

            bad = ogd_rounds(*args)
        if bad >= 0 or not np.all(np.isfinite(theta)):
            big_y = self.loss == "squared_error" and np.max(np.abs(y)) > 1e150
            raise diverged(self, "the loss", "scale the target y (its values reach 1e150 or more, so the squared "
                           "loss overflows)" if big_y else "scale the features, lower eta0 (or use eta0='auto'), "
                           "or set a radius")
        self._theta, self._L_x = theta, L_x
        self.coef_ = in_caller_units(self, theta, self._x_scale)
        self.t_ = int(self._state[0])
        self.losses_ = np.concatenate([self.losses_, losses])
        return self

    def _rescale_features(self, scale):
        """The stream's state in the units of ``X c`` for a new ``c``: ``theta = coef / c`` and the squared
        row norms ``L`` (exact: powers of two)."""
        old = self._x_scale
        rescale_exactly((self._theta,), scale, old)
        L = np.array([self._state[1], getattr(self, "_L_x", 0.0)])
        rescale_exactly((L,), old, scale, power=2)
        self._state[1], self._L_x, self._x_scale = L[0], float(L[1]), scale

    @transactional
    def fit(self, X, y):
        """Start afresh and play every sample once, in order. Returns ``self``."""
        for a in ("coef_", "losses_", "t_", "_state", "_theta", "_x_scale", "_L_x", "_stream_params"):
            self.__dict__.pop(a, None)
        return self.partial_fit(X, y)

    @dask_blocks
    def predict(self, X):
        """``X coef_`` (for ``loss="log_loss"`` the log-odds)."""
        X = predict_input(self, X)
        return finite_scores(self, linear_predictor(X, self.coef_))

    def regret(self, X, y, ks=None):
        """Average regret (8.77) after ``k`` rounds, for each ``k`` in ``ks``.

        ``regret_k = (1/k) sum_{t<=k} f(theta_t, z_t) - min_{theta in ball} (1/k) sum_{t<=k} f(theta, z_t)``.

        Parameters
        ----------
        X, y : the samples played so far, in order.
        ks : array_like of int, optional
            Horizons (default: every ``k`` from 1 to ``t_``; costly for long streams).

        Returns
        -------
        ndarray
        """
        check_is_fitted(self)
        X, y = validate_chunk(self, X, y, first=False, y_numeric=True)
        if X.shape[0] != self.t_:
            raise ValueError(f"pass the {self.t_} samples played so far, in order; got {X.shape[0]}")
        _check_targets(self.loss, y, type(self).__name__)
        ks = np.arange(1, self.t_ + 1) if ks is None else np.asarray(ks)
        if ks.ndim != 1 or not np.issubdtype(ks.dtype, np.integer) or np.any((ks < 1) | (ks > self.t_)):
            raise ValueError(f"ks must be a 1-D array of integer horizons between 1 and t_ = {self.t_}; "
                             f"got {ks!r}. Pass integers in 1..t_, or leave ks=None for every horizon")
        cum = np.cumsum(self.losses_)
        out = []
        for k in ks:
            _, best = best_fixed_parameter(X[:k], y[:k], loss=self.loss, radius=self.radius)
            out.append((cum[k - 1] - best) / k)
        return np.array(out)
