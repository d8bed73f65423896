"""Algorithm 8.3 as written: stochastic gradient descent one sample (or minibatch) at a time, in numpy.

The readable reference that ``SGDRegressor`` / ``SGDClassifier`` are tested equal to.

Derived in: chapter "Online learning and stochastic optimisation" § "Algorithm 8.3: epochs and minibatches".
"""

from __future__ import annotations

import numpy as np

from ..base import StrOptions, as_rng, check_param_values
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
    rng = as_rng(random_state)
    theta = np.zeros(X.shape[1]) if theta0 is None else np.array(theta0, dtype=float)
    theta_bar, n_avg, s2, path, k = theta.copy(), 0, np.zeros_like(theta), [theta.copy()], 0
    start = 1 if average is True else int(average)
    step = eta if callable(eta) else (lambda k: eta)
    for _ in range(n_epochs):
        order = rng.permutation(len(y)) if shuffle else np.arange(len(y))
        for batch in np.array_split(order, np.arange(batch_size, len(y), batch_size)):
            g = _minibatch_gradient(X, y, sw, batch, theta, loss, lam_n)
            k += 1
            if adagrad:                                   # (8.84)-(8.85)
                s2 = s2 + g * g
            theta = theta - (step(k) * g / (adagrad_tau0 + np.sqrt(s2)) if adagrad else step(k) * g)
            if average and k >= start:                    # recursive form of (8.80)
                n_avg += 1
                theta_bar = theta_bar + (theta - theta_bar) / n_avg
            path.append(theta.copy())
    return (theta_bar if average else theta), np.array(path)


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
    return X, y, np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)


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

