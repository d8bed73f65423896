"""Algorithm 8.3 as written: stochastic gradient descent one sample (or minibatch) at a time, in numpy.

The readable reference that ``SGDRegressor`` / ``SGDClassifier`` are tested equal to.

Derived in: chapter "Online learning and stochastic optimisation" § "Algorithm 8.3".
"""

from __future__ import annotations

import numpy as np

from ..base import as_rng
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
    X : ndarray (N, D)
    y : ndarray (N,)
        Real targets for ``"squared_error"``, 0/1 labels otherwise.
    loss : {"squared_error", "log_loss", "perceptron"}
        ``yhat = theta^T x``, ``sigm(theta^T x)`` or ``1[theta^T x > 0]`` (8.86, 8.88, 8.90).
    eta : float or callable
        Constant step, or ``eta(k)`` for update ``k = 1, 2, ...``.
    n_epochs : int
    shuffle : bool
        A fresh permutation (``numpy.random.default_rng(random_state).permutation``) per epoch.
    random_state : int, Generator or None
    average : bool or int
        Return the Polyak-Ruppert average (8.80) of the iterates from update 1 (``True``)
        or from update ``average`` on, updated recursively.
    theta0 : array_like or None
        Start (default zeros).
    batch_size : int
    lam_n : float
        Per-sample l2 penalty ``lam / n`` (the objective ``sum_i f_i + (lam/2)||theta||^2``).
    adagrad : bool
    adagrad_tau0 : float
    sample_weight : array_like or None
        ``s_i`` (default ones).

    Returns
    -------
    theta : ndarray (D,)
        Last iterate (or the average when ``average``).
    path : ndarray (n_updates + 1, D)
        Every iterate, starting with ``theta0``.

    Derived in: chapter "Online learning and stochastic optimisation" § "Algorithm 8.3".
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    s = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    if loss not in _LOSSES:
        raise ValueError(f"loss must be one of {_LOSSES}; got {loss!r}")
    if loss != "squared_error" and not np.all((y == 0) | (y == 1)):
        raise ValueError(f"sgd_per_sample: loss={loss!r} needs labels y in {{0, 1}}; got "
                         f"{np.unique(y[(y != 0) & (y != 1)])[:5].tolist()}. Encode the classes as 0 and 1.")
    rng = as_rng(random_state)
    theta = np.zeros(X.shape[1]) if theta0 is None else np.array(theta0, dtype=float)
    theta_bar, n_avg = theta.copy(), 0
    s2 = np.zeros_like(theta)
    start = 1 if average is True else int(average)
    path = [theta.copy()]
    step = eta if callable(eta) else (lambda k: eta)
    k = 0
    for _ in range(n_epochs):
        order = rng.permutation(len(y)) if shuffle else np.arange(len(y))
        for batch in np.array_split(order, np.arange(batch_size, len(y), batch_size)):
            g = lam_n * theta
            for i in batch:
                z = theta @ X[i]
                if loss == "squared_error":
                    yhat = z
                elif loss == "log_loss":
                    yhat = float(sigmoid(z))
                else:
                    yhat = 1.0 if z > 0 else 0.0
                g = g + s[i] * (yhat - y[i]) * X[i] / len(batch)
            k += 1
            if adagrad:                                   # (8.84)-(8.85)
                s2 = s2 + g * g
                theta = theta - step(k) * g / (adagrad_tau0 + np.sqrt(s2))
            else:
                theta = theta - step(k) * g
            if average and k >= start:                    # recursive form of (8.80)
                n_avg += 1
                theta_bar = theta_bar + (theta - theta_bar) / n_avg
            path.append(theta.copy())
    return (theta_bar if average else theta), np.array(path)
