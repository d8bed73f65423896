"""Compiled per-sample SGD epochs (Algorithm 8.3) for ``linbook.online.sgd``.

One call runs one epoch: visit the samples in ``order`` in minibatches of ``batch``
(1: plain SGD); for each sample compute the scores ``z = W x + b`` and the derivative
``r = dloss/dz``, add ``sw_i r x^T / B`` to the minibatch gradient ``G``, then step

    W <- W - eta_w (G + (lam/n) W),    b <- b - eta_b g_b

(or its adagrad form), and update the Polyak-Ruppert average. ``sgd_epoch_dense``
is this loop as written; ``sgd_epoch_csr`` is the same loop on a CSR matrix with the
two classic sparse tricks (Bottou's weight scale for the l2 shrink, Xu's lazy average)
so that one sample costs O(nnz) instead of O(n_features). Both are tested equal to
``linbook.online.sgd_per_sample`` and to each other.

Codes: loss 0 squared error, 1 log-loss (sigmoid for one output, softmax for several),
2 perceptron; schedule 0 constant, 1 Robbins-Monro, 2 "optimal". ``state`` holds
``[t (updates so far), n_avg (iterates averaged so far)]``. Each kernel returns the
summed (weighted) loss of the epoch, each sample's loss taken before its update, and
the position in ``order`` where a loss stopped being finite (-1 if none) or -2 when
the penalty step ``eta_w lam / n`` reached 1 (the shrink factor would not be positive).
The step of update ``k`` is ``eta_w = step_size(k)`` for the weights and
``eta_b = b_ratio * eta_w`` for the intercept.
"""

import numpy as np
from numba import njit

# reassociation lets LLVM vectorise the dot products (results differ in the last bits only)
_FAST = {"reassoc", "contract", "nsz"}

SQUARED, LOG, PERCEPTRON = 0, 1, 2
CONSTANT, ROBBINS_MONRO, OPTIMAL = 0, 1, 2


@njit(cache=True)
def step_size(schedule, eta0, tau0, kappa, lam_n, k):
    """eta_k of update ``k = 1, 2, ...`` (see ``linbook.online.learning_rate_schedule``)."""
    if schedule == CONSTANT:
        return eta0
    if schedule == ROBBINS_MONRO:
        return eta0 * (tau0 + k) ** (-kappa)
    return eta0 / (1.0 + lam_n * eta0 * (k - 1.0))


@njit(cache=True)
def residual(loss, z, y, r):
    """Fill ``r = dloss/dz`` for scores ``z`` and target ``y``; return the loss.

    One output: ``y`` is the real target (squared) or 0/1 (log, perceptron).
    Several outputs: ``y`` is the class code; the loss is softmax or argmax based.
    """
    M = z.shape[0]
    if M == 1:
        s = z[0]
        if loss == SQUARED:
            r[0] = s - y
            return 0.5 * r[0] * r[0]
        if loss == LOG:                      # stable sigmoid and log(1 + e^s) - y s
            if s >= 0.0:
                e = np.exp(-s)
                r[0] = 1.0 / (1.0 + e) - y
                return s + np.log1p(e) - y * s
            e = np.exp(s)
            r[0] = e / (1.0 + e) - y
            return np.log1p(e) - y * s
        r[0] = (1.0 if s > 0.0 else 0.0) - y  # perceptron (8.90)
        return max(0.0, -(2.0 * y - 1.0) * s)
    c = int(y)
    top = 0
    for m in range(1, M):
        if z[m] > z[top]:
            top = m
    if loss == LOG:                          # softmax with the max subtracted
        tot = 0.0
        for m in range(M):
            r[m] = np.exp(z[m] - z[top])
            tot += r[m]
        for m in range(M):
            r[m] /= tot
        r[c] -= 1.0
        return np.log(tot) + z[top] - z[c]
    for m in range(M):
        r[m] = 0.0
    r[top] += 1.0
    r[c] -= 1.0
    return z[top] - z[c]


@njit(cache=True, fastmath=_FAST)
def sgd_epoch_dense(X, y, sw, order, batch, W, b, G2W, G2b, Wbar, bbar, state, loss, schedule, eta0,
                    tau0, kappa, lam_n, b_ratio, fit_intercept, adagrad, ada_eps, avg_start):
    """One epoch of minibatch SGD on dense ``X`` (the textbook loop).

    ``W`` (M, D), ``b`` (M,) are updated in place; ``G2W``/``G2b`` are adagrad's running
    sums of squared gradients, ``Wbar``/``bbar`` the running mean of the iterates from
    update ``avg_start`` on (``avg_start = 0``: no averaging). With ``batch = 1`` the
    gradient of row ``m`` is ``gb[m] x`` and is used without being stored.
    """
    M, D = W.shape
    z, r = np.empty(M), np.empty(M)
    G, gb = np.zeros((M, D)), np.zeros(M)   # gradient of the minibatch mean loss
    t, n_avg = state[0], state[1]
    total = 0.0
    n = order.shape[0]
    for start in range(0, n, batch):
        stop = min(n, start + batch)
        for pos in range(start, stop):
            x = X[order[pos]]
            for m in range(M):
                s = b[m]
                for j in range(D):
                    s += W[m, j] * x[j]
                z[m] = s
            f = residual(loss, z, y[order[pos]], r)
            if not np.isfinite(f):
                state[0], state[1] = t, n_avg
                return total, pos
            total += sw[order[pos]] * f
            for m in range(M):
                g = sw[order[pos]] * r[m] / (stop - start)
                gb[m] += g
                if batch > 1:
                    for j in range(D):
                        G[m, j] += g * x[j]
        t += 1.0
        eta_w = step_size(schedule, eta0, tau0, kappa, lam_n, t)
        eta_b = b_ratio * eta_w
        shrink = 1.0 - eta_w * lam_n
        if shrink <= 0.0:
            state[0], state[1] = t, n_avg
            return total, -2
        averaging = avg_start > 0 and t >= avg_start
        mu = 0.0
        if averaging:                        # recursive mean of the iterates (8.80)
            n_avg += 1.0
            mu = 1.0 / n_avg
        for m in range(M):
            grad = x if batch == 1 else G[m]  # the gradient is c * grad
            c = gb[m] if batch == 1 else 1.0
            if adagrad:                      # (8.84)-(8.85): per-parameter steps
                for j in range(D):
                    gj = c * grad[j] + lam_n * W[m, j]
                    G2W[m, j] += gj * gj
                    W[m, j] -= eta_w * gj / (ada_eps + np.sqrt(G2W[m, j]))
                    if averaging:
                        Wbar[m, j] += mu * (W[m, j] - Wbar[m, j])
                if fit_intercept:
                    G2b[m] += gb[m] * gb[m]
                    b[m] -= eta_b * gb[m] / (ada_eps + np.sqrt(G2b[m]))
            else:
                step = eta_w * c
                for j in range(D):
                    wj = shrink * W[m, j] - step * grad[j]
                    W[m, j] = wj
                    if averaging:
                        Wbar[m, j] += mu * (wj - Wbar[m, j])
                if fit_intercept:
                    b[m] -= eta_b * gb[m]
            if averaging:
                bbar[m] += mu * (b[m] - bbar[m])
            gb[m] = 0.0
            if batch > 1:
                G[m, :] = 0.0
    state[0], state[1] = t, n_avg
    return total, -1


@njit(cache=True)   # no reassociation: vectorised gathers are slower than scalar loads here
def sgd_epoch_csr(data, indices, indptr, y, sw, order, batch, W, b, G2W, G2b, Wbar, bbar, state, loss,
                  schedule, eta0, tau0, kappa, lam_n, b_ratio, fit_intercept, adagrad, ada_eps, avg_start):
    """``sgd_epoch_dense`` on a CSR matrix, O(nnz) per sample instead of O(n_features).

    Inside the epoch the weights are kept as ``W = a V`` with a scalar ``a``: the l2
    shrink ``W <- (1 - eta lam/n) W`` only rescales ``a`` (Bottou's trick); and the
    average as ``Wbar = rho (U + sigma V)`` (Xu 2011), so a sparse step of ``V`` costs a
    sparse step of ``U``. The scalars are folded back (``W``, ``Wbar`` written out)
    before they underflow and at the end of the epoch. With adagrad the shrink is per
    coordinate: ``a`` stays 1 and, when ``lam > 0``, every coordinate moves.
    The gradient of row ``m`` is ``c * vals`` on the columns ``cols``: the sample's own
    nonzeros when ``batch = 1``, the columns touched by the minibatch otherwise.
    """
    M, D = W.shape
    # V and U side by side (a = rho = 1, sigma = 0 on entry): a sparse step touches V[m, j]
    # and U[m, j] in one cache line instead of two random places
    VU = np.empty((M, D, 2))
    VU[:, :, 0] = W
    VU[:, :, 1] = Wbar
    V, U = VU[:, :, 0], VU[:, :, 1]
    z, r = np.empty(M), np.empty(M)
    gb = np.zeros(M)
    G = np.zeros((M, D)) if batch > 1 else np.zeros((M, 0))
    touched = np.empty(D if batch > 1 else 0, dtype=indices.dtype)
    mark = np.zeros(D if batch > 1 else 0, dtype=np.bool_)
    scratch = np.empty(D if batch > 1 else 0)
    gdense = np.empty(D if (adagrad and lam_n > 0.0) else 0)
    t, n_avg = state[0], state[1]
    a, rho, sigma = 1.0, 1.0, 0.0
    total = 0.0
    status = -1
    n = order.shape[0]
    lo, hi = 0, 0
    for start in range(0, n, batch):
        stop = min(n, start + batch)
        nt = 0
        for pos in range(start, stop):
            i = order[pos]
            lo, hi = indptr[i], indptr[i + 1]
            for m in range(M):
                s = 0.0
                for p in range(lo, hi):
                    s += V[m, indices[p]] * data[p]
                z[m] = a * s + b[m]
            f = residual(loss, z, y[i], r)
            if not np.isfinite(f):
                status = pos
                break
            total += sw[i] * f
            for m in range(M):
                g = sw[i] * r[m] / (stop - start)
                gb[m] += g
                if batch > 1:
                    for p in range(lo, hi):
                        G[m, indices[p]] += g * data[p]
            if batch > 1:
                for p in range(lo, hi):
                    if not mark[indices[p]]:
                        mark[indices[p]] = True
                        touched[nt] = indices[p]
                        nt += 1
        if status != -1:
            break
        t += 1.0
        eta_w = step_size(schedule, eta0, tau0, kappa, lam_n, t)
        eta_b = b_ratio * eta_w
        shrink = 1.0 - eta_w * lam_n
        if shrink <= 0.0:
            status = -2
            break
        averaging = avg_start > 0 and t >= avg_start
        first_avg = averaging and n_avg == 0.0
        track = averaging and not first_avg  # U follows the steps of V, weighted by sigma
        if not adagrad:
            a *= shrink
        for m in range(M):
            if batch == 1:
                cols, vals, c = indices[lo:hi], data[lo:hi], gb[m]
            else:
                for k in range(nt):
                    scratch[k] = G[m, touched[k]]
                    G[m, touched[k]] = 0.0
                cols, vals, c = touched[:nt], scratch[:nt], 1.0
            if adagrad:
                _adagrad_csr_step(V[m], U[m], G2W[m], cols, vals, c, eta_w, lam_n, ada_eps, sigma, track,
                                  gdense)
            else:                            # the plain step, on the scaled weights
                step = eta_w * c / a
                if track:
                    for k in range(cols.shape[0]):
                        d = step * vals[k]
                        V[m, cols[k]] -= d
                        U[m, cols[k]] += sigma * d
                else:
                    for k in range(cols.shape[0]):
                        V[m, cols[k]] -= step * vals[k]
            if fit_intercept:
                if adagrad:
                    G2b[m] += gb[m] * gb[m]
                    b[m] -= eta_b * gb[m] / (ada_eps + np.sqrt(G2b[m]))
                else:
                    b[m] -= eta_b * gb[m]
            gb[m] = 0.0
        for k in range(nt):
            mark[touched[k]] = False
        if averaging:
            n_avg += 1.0
            mu = 1.0 / n_avg
            if first_avg:                    # Wbar = W = a V
                U[:, :] = 0.0
                rho, sigma = 1.0, a
            else:
                rho *= 1.0 - mu
                sigma += mu * a / rho
            for m in range(M):
                bbar[m] += mu * (b[m] - bbar[m])
        if a < 1e-9 or rho < 1e-9:
            _fold(V, U, a, rho, sigma, n_avg > 0.0)
            a, rho, sigma = 1.0, 1.0, 0.0
    _fold(V, U, a, rho, sigma, n_avg > 0.0)
    W[:, :] = V
    Wbar[:, :] = U
    state[0], state[1] = t, n_avg
    return total, status


@njit(cache=True)
def _adagrad_csr_step(v, u, g2, cols, vals, c, eta_w, lam_n, ada_eps, sigma, track, gdense):
    """Adagrad step (8.84)-(8.85) of one row of weights from the sparse gradient ``c * vals`` on
    ``cols``; with ``lam_n > 0`` the penalty's gradient ``lam_n v`` moves every coordinate."""
    if lam_n > 0.0:
        for j in range(v.shape[0]):
            gdense[j] = lam_n * v[j]
        for k in range(cols.shape[0]):
            gdense[cols[k]] += c * vals[k]
        for j in range(v.shape[0]):
            g2[j] += gdense[j] * gdense[j]
            d = eta_w * gdense[j] / (ada_eps + np.sqrt(g2[j]))
            v[j] -= d
            if track:
                u[j] += sigma * d
        return
    for k in range(cols.shape[0]):
        j = cols[k]
        gj = c * vals[k]
        g2[j] += gj * gj
        d = eta_w * gj / (ada_eps + np.sqrt(g2[j]))
        v[j] -= d
        if track:
            u[j] += sigma * d


@njit(cache=True)
def _fold(V, U, a, rho, sigma, averaged):
    """Write out ``W = a V`` into V and ``Wbar = rho (U + sigma V)`` into U."""
    M, D = V.shape
    for m in range(M):
        for j in range(D):
            if averaged:
                U[m, j] = rho * (U[m, j] + sigma * V[m, j])
            V[m, j] *= a


@njit(cache=True, fastmath=_FAST)
def dense_row_stats(X):
    """``(max_i ||x_i||^2, number of nonzero entries)`` of a dense matrix in one pass."""
    top, nnz = 0.0, 0
    for i in range(X.shape[0]):
        x = X[i]
        s = 0.0
        for j in range(x.shape[0]):
            s += x[j] * x[j]
            nnz += x[j] != 0.0
        top = max(top, s)
    return top, nnz
