"""One epoch of per-sample SGD for one output and few features, in plain Python floats (no compiled code).

Readable reference: ``linbook.online.sgd._numpy_epoch`` (tested equal in ``tests/test_sgd_python.py``: bit for
bit where the BLAS's dot sums in order, to 1e-9 elsewhere), for one output (regression or a binary classifier)::

    z = w @ x_i + b;  r, f = residual(z, y_i);  t += 1;  eta = step(t);  shrink = 1 - eta lam/n
    w <- shrink w - (eta s_i r) x_i,   b <- b - (b_ratio eta) s_i r,   running mean of (w, b) (8.80)

The numpy loop makes about ten numpy calls on ``d`` numbers per sample (~15 us a step for d = 5);
here ``w`` is a Python list and each step is a few float operations per feature (~2 us).
Every update and mean is the numpy loop's elementwise operation in the same order, so it is bit-equal.
The score ``w @ x_i`` is summed left to right from 0.0: numpy hands a 1-d dot to BLAS, whose
(OpenBLAS's Haswell and later kernels) ``ddot`` sums fewer than 16 numbers the same way, so the loop runs here only for
``d <= MAX_FEATURES``; another BLAS (or OpenBLAS's Prescott kernel) may differ in the last bits of a score (a relative
``d u sum |w_j x_ij|``, ~1e-15 for d = 15, far below any printed digit).
"""

from __future__ import annotations

import math

MAX_FEATURES = 15   # OpenBLAS's ddot sums n < 16 in order: the list loop equals ``w @ x`` bit for bit


def step_size(code, eta0, tau0, kappa, lam_n, k):
    """eta_k of update ``k`` for the schedule ``schedules.SCHEDULES[code]`` (as the compiled kernel)."""
    if code == 0:
        return eta0
    if code == 1:
        return eta0 * (tau0 + k) ** (-kappa)
    return eta0 / (1.0 + lam_n * eta0 * (k - 1.0))


def squared(s, y):
    """``(r, f)`` of the squared loss (8.86): ``s - y`` and ``r^2/2``."""
    r = s - y
    return r, 0.5 * r * r


def logistic(s, y):
    """``(r, f)`` of the log-loss (8.88), stable: ``sigm(s) - y`` and ``log(1 + e^s) - y s``."""
    e = math.exp(-s if s >= 0.0 else s)
    p = 1.0 / (1.0 + e) if s >= 0.0 else e / (1.0 + e)
    return p - y, (s if s >= 0.0 else 0.0) + math.log1p(e) - y * s


def perceptron(s, y):
    """``(r, f)`` of the perceptron loss (8.90): ``1[s > 0] - y`` and ``max(0, -(2y - 1) s)``."""
    return (1.0 if s > 0.0 else 0.0) - y, max(0.0, -(2.0 * y - 1.0) * s)


RESIDUALS = (squared, logistic, perceptron)   # by the kernels' loss codes


def sgd_epoch_list(X, y, sw, order, W, b, Wbar, bbar, state, loss, code, eta0, tau0, kappa, lam_n, b_ratio,
                   fit_intercept, avg_start):
    """``_numpy_epoch`` for ``W`` of one row: the same arguments, updates in place and ``(total, status)``."""
    w, wbar, rows = W[0].tolist(), Wbar[0].tolist(), X.tolist()
    bias, bias_bar = float(b[0]), float(bbar[0])
    t, n_avg, total, status = state[0], state[1], 0.0, -1
    ys, weights, residual = y.tolist(), sw.tolist(), RESIDUALS[loss]
    eta0, tau0, kappa, lam_n, b_ratio = float(eta0), float(tau0), float(kappa), float(lam_n), float(b_ratio)
    for pos, i in enumerate(order.tolist()):
        x = rows[i]
        z = 0.0
        for wj, xj in zip(w, x):                          # w @ x, left to right (not sum(): compensated in 3.12)
            z += wj * xj
        r, f = residual(z + bias, ys[i])
        if not math.isfinite(f):
            status = pos
            break
        total += weights[i] * f
        t += 1.0
        eta_w = eta0 if code == 0 else step_size(code, eta0, tau0, kappa, lam_n, t)
        shrink = 1.0 - eta_w * lam_n
        if shrink <= 0.0:
            status = -2
            break
        g = weights[i] * r
        c = eta_w * g
        if shrink != 1.0:
            w = [wj * shrink - c * xj for wj, xj in zip(w, x)]
        else:
            w = [wj - c * xj for wj, xj in zip(w, x)]
        if fit_intercept:
            bias -= (b_ratio * eta_w) * g
        if avg_start > 0 and t >= avg_start:
            n_avg += 1.0
            mu = 1.0 / n_avg
            wbar = [mj + mu * (wj - mj) for wj, mj in zip(w, wbar)]
            bias_bar += mu * (bias - bias_bar)
    W[0], Wbar[0], b[0], bbar[0] = w, wbar, bias, bias_bar
    state[0], state[1] = t, n_avg
    return total, status
