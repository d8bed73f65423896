"""Algorithm 8.3 as written: stochastic gradient descent one sample (or minibatch) at a time, in numpy.

The readable reference that ``SGDRegressor`` / ``SGDClassifier`` are tested equal to.

Derived in: chapter "Online learning and stochastic optimisation" § "Algorithm 8.3: epochs and minibatches".
"""

from __future__ import annotations

import numpy as np

from ..base import (NON_NEGATIVE, NON_NEGATIVE_INT, POSITIVE, POSITIVE_INT, DivergenceError, StrOptions, as_rng,
                    check_param_values)
from ..numerics import sigmoid

__all__ = ["sgd_per_sample"]

_LOSSES = ("squared_error", "log_loss", "perceptron")


def sgd_per_sample(X, y, *, loss="squared_error", eta=0.1, n_epochs=1, shuffle=True, random_state=None,
                   average=False, theta0=None, batch_size=1, lam_n=0.0, adagrad=False, adagrad_tau0=1e-8,
                   sample_weight=None):
    """Algorithm 8.3 as written: the readable reference (a Python loop, slow).

    ``theta`` has no intercept (add a column of ones to ``X`` for one). For each
    epoch: permute the samples (if ``shuffle``), cut them into minibatches of
    ``batch_size`` and for each minibatch ``B``::

        g = (1/|B|) sum_{i in B} s_i (yhat_i - y_i) x_i + lam_n theta,     theta <- theta - eta_k g

    (adagrad: ``s <- s + g*g``, ``theta <- theta - eta_k g / (adagrad_tau0 + sqrt(s))``).

    Parameters
    ----------
    X, y : ndarray (N, D) and (N,)
        ``y``: real targets for ``"squared_error"``, 0/1 labels otherwise.
    loss : {"squared_error", "log_loss", "perceptron"}
        ``yhat = theta^T x``, ``sigm(theta^T x)`` or ``1[theta^T x > 0]`` (8.86, 8.88, 8.90).
    eta : float or callable
        Constant step, or ``eta(k)`` for update ``k = 1, 2, ...``.
    n_epochs, batch_size : int
    shuffle, random_state : bool; int, Generator or None
        A fresh permutation (``numpy.random.default_rng(random_state).permutation``) per epoch.
    average : bool or int
        Return the Polyak-Ruppert average (8.80) of the iterates from update 1 (``True``)
        or from update ``average`` on, updated recursively.
    theta0 : array_like or None, the start (default zeros)
    lam_n : float
        Per-sample l2 penalty ``lam / n`` (the objective ``sum_i f_i + (lam/2)||theta||^2``).
    adagrad, adagrad_tau0 : bool, float
    sample_weight : array_like or None
        ``s_i`` (default ones).

    Returns
    -------
    theta, path : ndarray (D,) and (n_updates + 1, D)
        The last iterate (the average when ``average``); every iterate, from ``theta0`` on.

    Derived in: chapter "Online learning and stochastic optimisation" § "Algorithm 8.3: epochs and minibatches".
    """
    X, y, sw = _reference_inputs(X, y, loss, sample_weight)
    theta, start = _reference_options(X, y, eta, n_epochs, batch_size, average, theta0, lam_n, adagrad_tau0, shuffle)
    rng = as_rng(random_state)
    theta_bar, n_avg, s2, path, k = theta.copy(), 0, np.zeros_like(theta), [theta.copy()], 0
    step = eta if callable(eta) else (lambda k: eta)
    for _ in range(n_epochs):
        order = rng.permutation(len(y)) if shuffle else np.arange(len(y))
        for batch in np.array_split(order, np.arange(batch_size, len(y), batch_size)):
            g = _minibatch_gradient(X, y, sw, batch, theta, loss, lam_n)
            k += 1
            s2 = s2 + g * g if adagrad else s2            # (8.84)-(8.85)
            scale = adagrad_tau0 + np.sqrt(s2) if adagrad else 1.0
            theta = _check_finite(theta - _checked_step(step(k), k) * g / scale, k)
            if average and k >= start:                    # recursive form of (8.80)
                n_avg += 1
                theta_bar = theta_bar + (theta - theta_bar) / n_avg
            path.append(theta.copy())
    return _result(theta, theta_bar, average, n_avg, k), np.array(path)


def _check_finite(theta, k):
    """``theta``, or a clear error when update ``k`` left it non-finite (the steps diverged; it returned NaN before)."""
    if not np.all(np.isfinite(theta)):
        raise DivergenceError(f"sgd_per_sample diverged at update {k}: theta is no longer finite. Lower the step size "
                              "eta (at most about 1 / max_i ||x_i||^2 for the squared loss) or scale the features "
                              "(e.g. StandardScaler)")
    return theta


def _result(theta, theta_bar, average, n_avg, k):
    """The last iterate, or the average; a clear error when ``average`` starts after the last of the ``k`` updates
    (the average of no iterate: ``theta0`` came back)."""
    if average and n_avg == 0:
        raise ValueError(f"sgd_per_sample: average={average} starts the average after the last of the {k} updates; "
                         f"set average to at most {k} (or True for the average of every iterate)")
    return theta_bar if average else theta


def _reference_inputs(X, y, loss, sample_weight):
    """``(X, y, s)`` as float arrays, ``s`` the sample weights (ones by default); checks the loss
    and that its labels are 0/1."""
    check_param_values("sgd_per_sample", {"loss": [StrOptions(set(_LOSSES))]}, {"loss": loss})
    X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
    if X.ndim != 2 or y.shape != (X.shape[0],):
        raise ValueError(f"sgd_per_sample needs X of shape (N, D) and y of shape (N,); got X {X.shape} and y "
                         f"{y.shape}. Pass X as a 2-D array and y as a 1-D array with one value per row")
    if loss != "squared_error" and not np.all((y == 0) | (y == 1)):
        raise ValueError(f"sgd_per_sample: loss={loss!r} needs labels y in {{0, 1}}; got "
                         f"{np.unique(y[(y != 0) & (y != 1)])[:5].tolist()}. Encode the classes as 0 and 1.")
    if X.shape[0] == 0:
        raise ValueError("sgd_per_sample: X and y have no rows (the stream is empty); pass at least one sample")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
        raise ValueError("sgd_per_sample: X and y must be finite; drop or impute the rows with NaN or inf")
    sw = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    if sw.shape != y.shape or not np.all(np.isfinite(sw)) or np.any(sw < 0):
        raise ValueError(f"sgd_per_sample needs sample_weight of shape {y.shape} with finite entries >= 0; got shape "
                         f"{sw.shape}. Pass one non-negative weight per row of X (or None)")
    return X, y, sw


def _reference_options(X, y, eta, n_epochs, batch_size, average, theta0, lam_n, adagrad_tau0, shuffle):
    """``(theta0, first update averaged)`` with every option checked, or a clear error naming it. Why: a negative
    or NaN ``eta``, ``lam_n`` or weight gave a wrong or NaN theta silently, ``batch_size=0`` a ZeroDivisionError,
    ``n_epochs=-1`` and ``average=-1`` were taken as 0 epochs and "average everything"."""
    params = {"n_epochs": n_epochs, "batch_size": batch_size, "lam_n": lam_n, "adagrad_tau0": adagrad_tau0,
              "average": average, "shuffle": shuffle}
    constraints = {"n_epochs": [POSITIVE_INT], "batch_size": [POSITIVE_INT], "lam_n": [NON_NEGATIVE],
                   "adagrad_tau0": [POSITIVE], "average": ["boolean", NON_NEGATIVE_INT], "shuffle": ["boolean"]}
    if not callable(eta):
        params["eta"], constraints["eta"] = eta, [POSITIVE]
    check_param_values("sgd_per_sample", constraints, params)
    theta = np.zeros(X.shape[1]) if theta0 is None else np.array(theta0, dtype=float)
    if theta.shape != (X.shape[1],) or not np.all(np.isfinite(theta)):
        raise ValueError(f"sgd_per_sample needs theta0 of shape ({X.shape[1]},) with finite entries, one per column "
                         f"of X; got shape {theta.shape}")
    return theta, 1 if average is True else int(average)


def _checked_step(eta_k, k):
    """``eta(k)`` of a callable step, or a clear error when it is not a finite number > 0."""
    if not (isinstance(eta_k, (int, float, np.integer, np.floating)) and np.isfinite(eta_k) and eta_k > 0):
        raise ValueError(f"sgd_per_sample: eta({k}) returned {eta_k!r}; a step size must be a finite number > 0")
    return float(eta_k)


def _minibatch_gradient(X, y, sw, batch, theta, loss, lam_n):
    """``g = (1/|B|) sum_{i in B} s_i (yhat_i - y_i) x_i + lam_n theta``, one sample at a time."""
    g = lam_n * theta
    for i in batch:
        z = theta @ X[i]
        if loss == "squared_error":
            yhat = z                                      # (8.86)
        elif loss == "log_loss":
            yhat = float(sigmoid(z))                      # (8.88)
        else:
            yhat = 1.0 if z > 0 else 0.0                  # (8.90)
        g = g + sw[i] * (yhat - y[i]) * X[i] / len(batch)
    return g

