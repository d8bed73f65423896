"""Compiled per-sample SGD epochs (Algorithm 8.3) for ``linbook.online.sgd``.

One call runs one epoch: visit the samples in ``order`` in minibatches of ``batch``
(1: plain SGD); for each sample compute the scores ``z = W x + b`` and the derivative
``r = dloss/dz``, add ``sw_i r x^T / B`` to the minibatch gradient ``G``, then step

    W <- W - eta_w (G + (lam/n) W),    b <- b - eta_b g_b

(or its adagrad form), and update the Polyak-Ruppert average. ``sgd_epoch_dense``
is this loop as written (compiled for the fit's loss and kind of step, ``_epoch_loop``);
``sgd_epoch_csr`` is the same loop on a CSR matrix with the two classic sparse tricks
(Bottou's weight scale for the l2 shrink, Xu's lazy average) so that one sample costs
O(nnz) instead of O(n_features). Both are tested equal to
``linbook.online.sgd_per_sample`` and to each other.

Codes: loss 0 squared error, 1 log-loss (sigmoid for one output, softmax for several),
2 perceptron (each loss's ``r = dloss/dz`` is a function of its own: ``residual``);
schedule 0 constant, 1 Robbins-Monro, 2 "optimal". ``state`` holds
``[t (updates so far), n_avg (iterates averaged so far)]``. Each kernel returns the
summed (weighted) loss of the epoch, each sample's loss taken before its update, and
the position in ``order`` where a loss stopped being finite (-1 if none) or -2 when
the penalty step ``eta_w lam / n`` reached 1 (the shrink factor would not be positive).
The step of update ``k`` is ``eta_w = step_size(k)`` for the weights and
``eta_b = b_ratio * eta_w`` for the intercept.
"""

import functools

import numpy as np

from . import _cache_load  # noqa: F401  (imports numba: before it, see the module)
from numba import njit

from .finite import is_finite
from .prefetch import AHEAD, prefetch_dense_row, worth_prefetching

# reassociation lets LLVM vectorise the dot products (results differ in the last bits only)
_FAST = {"reassoc", "contract", "nsz"}

SQUARED, LOG, PERCEPTRON = 0, 1, 2
#: Multiclass perceptron: scores within this fraction of the largest |score| count as a tie.
TIE_RTOL = 1e-9
CONSTANT, ROBBINS_MONRO, OPTIMAL = 0, 1, 2


@njit(cache=True, inline="always")
def step_size(schedule, eta0, tau0, kappa, lam_n, k):
    """eta_k of update ``k = 1, 2, ...`` (see ``linbook.online.learning_rate_schedule``)."""
    if schedule == CONSTANT:
        return eta0
    if schedule == ROBBINS_MONRO:
        return eta0 * (tau0 + k) ** (-kappa)
    return eta0 / (1.0 + lam_n * eta0 * (k - 1.0))


@njit(cache=True)
def residual(loss, z, y, r, zmag):
    """Fill ``r = dloss/dz`` for scores ``z`` and target ``y``; return the loss.

    ``zmag[m]`` is ``|b_m| + sum_j |W_mj x_j|`` (the scale of the rounding error of
    ``z[m]``); only the multiclass perceptron reads it.

    One output: ``y`` is the real target (squared) or 0/1 (log, perceptron).
    Several outputs: ``y`` is the class code; the loss is softmax or argmax based.
    """
    if loss == SQUARED:
        return squared_residual(z, y, r)
    if z.shape[0] == 1:
        return sigmoid_residual(z, y, r) if loss == LOG else perceptron_residual(z, y, r)
    return softmax_residual(z, y, r) if loss == LOG else argmax_residual(z, y, r, zmag)


@njit(cache=True, inline="always")
def squared_residual(z, y, r):
    """``residual`` of the squared error."""
    r[0] = z[0] - y
    return 0.5 * r[0] * r[0]


@njit(cache=True, inline="always")
def sigmoid_residual(z, y, r):
    """``residual`` of the log-loss, one output: the stable sigmoid and ``log(1 + e^s) - y s``."""
    s = z[0]
    if s >= 0.0:
        e = np.exp(-s)
        r[0] = 1.0 / (1.0 + e) - y
        return s + np.log1p(e) - y * s
    e = np.exp(s)
    r[0] = e / (1.0 + e) - y
    return np.log1p(e) - y * s


@njit(cache=True, inline="always")
def perceptron_residual(z, y, r):
    """``residual`` of the perceptron loss (8.90), one output."""
    s = z[0]
    r[0] = (1.0 if s > 0.0 else 0.0) - y
    hinge = -(2.0 * y - 1.0) * s
    return hinge if hinge > 0.0 else 0.0


@njit(cache=True, inline="always")
def first_max(z):
    """The index of the largest score, the first of equals (as ``np.argmax``)."""
    top = 0
    for m in range(1, z.shape[0]):
        if z[m] > z[top]:
            top = m
    return top


@njit(cache=True, inline="always")
def softmax_residual(z, y, r):
    """``residual`` of the log-loss, several outputs: the softmax with the max subtracted."""
    M = z.shape[0]
    c = np.int64(y)
    top = first_max(z)
    tot = 0.0
    for m in range(M):
        r[m] = np.exp(z[m] - z[top])
        tot += r[m]
    for m in range(M):
        r[m] /= tot
    r[c] -= 1.0
    return np.log(tot) + z[top] - z[c]


@njit(cache=True, inline="always")
def argmax_residual(z, y, r, zmag):
    """``residual`` of the multiclass perceptron: the top score against the true class's."""
    M = z.shape[0]
    c = np.int64(y)
    top = first_max(z)
    # Scores that tie in exact arithmetic (common with integer or binary features) differ
    # by rounding, which the dense and sparse loops do in different orders: scores within
    # TIE_RTOL of the largest sum of |terms| count as tied; the first wins (as np.argmax).
    tie = 0.0
    for m in range(M):
        if TIE_RTOL * zmag[m] > tie:
            tie = TIE_RTOL * zmag[m]
    for m in range(top):
        if z[m] >= z[top] - tie:
            top = m
            break
    for m in range(M):
        r[m] = 0.0
    r[top] += 1.0
    r[c] -= 1.0
    return z[top] - z[c]


def sgd_epoch_dense(X, y, sw, order, batch, W, b, G2W, G2b, Wbar, bbar, state, loss, schedule, eta0,
                    tau0, kappa, lam_n, b_ratio, fit_intercept, adagrad, ada_eps, avg_start):
    """One epoch of minibatch SGD on dense ``X`` (the textbook loop, ``_epoch_loop``).

    ``W`` (M, D), ``b`` (M,) are updated in place; ``G2W``/``G2b`` are adagrad's running
    sums of squared gradients, ``Wbar``/``bbar`` the running mean of the iterates from
    update ``avg_start`` on (``avg_start = 0``: no averaging). With ``batch = 1`` the
    gradient of row ``m`` is ``gb[m] x`` and is used without being stored.
    """
    M, D = W.shape
    loop = _epoch_loop(int(loss), bool(M > 1), bool(adagrad), bool(batch > 1), bool(avg_start > 0),
                       worth_prefetching(X))
    work = (np.empty(M), np.empty(M), np.zeros(M), np.zeros((M, D) if batch > 1 else (0, 0)), np.zeros(M))
    return loop(X, y, sw, order, batch, W, b, G2W, G2b, Wbar, bbar, state, schedule, eta0, tau0, kappa, lam_n,
                b_ratio, fit_intercept, ada_eps, avg_start, *work)


@functools.cache
def _epoch_loop(LOSS, MULTICLASS, ADAGRAD, MINIBATCH, AVERAGE, PREFETCH):
    """``sgd_epoch_dense``'s loop, compiled for one loss, one or several outputs and one kind of step
    (and with the rows prefetched only for ``X`` large enough: ``prefetch.worth_prefetching``).

    The six switches are constants of the compiled function (Python ints and bools: numba's cache
    keys a closure by their pickled values, so each configuration has its own cache entry), and
    numba builds only the branches a fit takes. The residual is picked the same way, from the
    per-loss functions ``residual`` dispatches to at run time. The buffers ``z, r, zmag`` (scores,
    their derivatives and magnitudes) and ``G, gb`` (the minibatch gradient) come from the caller:
    allocating them here would compile numba's ``np.empty``/``np.zeros`` too.

    The arithmetic is the general loop's, in the same order: 360 configurations (every loss,
    binary and multiclass, adagrad, minibatches, averaging, schedules, penalties, integer and
    real features, weights) give bit-identical weights to the loop that took every switch at
    run time. What it saves is compile time, the cold first fit: a binary log-loss epoch compiled
    in 3.6 s CPU with all branches (its allocations 0.9 s of it) and compiles in 1.5 s now; the
    first ``SGDClassifier().fit`` on 20,000 x 20 in a fresh process with an empty cache takes 2.3 s
    CPU instead of 4.5 s (``benchmarks/issue22_first_fit.md``).
    """
    @njit(cache=True, fastmath=_FAST)
    def epoch(X, y, sw, order, batch, W, b, G2W, G2b, Wbar, bbar, state, schedule, eta0, tau0, kappa, lam_n,
              b_ratio, fit_intercept, ada_eps, avg_start, z, r, zmag, G, gb):
        M = W.shape[0] if MULTICLASS else 1      # a constant 1: LLVM drops the loops over outputs
        D = W.shape[1]
        t, n_avg = state[0], state[1]
        total = 0.0
        n = order.shape[0]
        for start in range(0, n, batch):
            stop = start + batch if start + batch < n else n
            for pos in range(start, stop):
                if PREFETCH and pos + AHEAD < n:     # start loading a later row: rows come in random order
                    prefetch_dense_row(X, order[pos + AHEAD])
                x = X[order[pos]]
                for m in range(M):
                    s = b[m]
                    for j in range(D):
                        s += W[m, j] * x[j]
                    z[m] = s
                    if LOSS == PERCEPTRON and MULTICLASS:   # argmax_residual's tie scale
                        sa = abs(b[m])
                        for j in range(D):
                            sa += abs(W[m, j] * x[j])
                        zmag[m] = sa
                # residual(LOSS, ...) with its branches taken here, where they are constants
                if LOSS == SQUARED:
                    f = squared_residual(z, y[order[pos]], r)
                elif not MULTICLASS:
                    if LOSS == LOG:
                        f = sigmoid_residual(z, y[order[pos]], r)
                    else:
                        f = perceptron_residual(z, y[order[pos]], r)
                elif LOSS == LOG:
                    f = softmax_residual(z, y[order[pos]], r)
                else:
                    f = argmax_residual(z, y[order[pos]], r, zmag)
                if not is_finite(f):
                    state[0], state[1] = t, n_avg
                    return total, pos
                total += sw[order[pos]] * f
                for m in range(M):
                    g = sw[order[pos]] * r[m] / (stop - start)
                    gb[m] += g
                    if MINIBATCH:
                        for j in range(D):
                            G[m, j] += g * x[j]
            t += 1.0
            eta_w = step_size(schedule, eta0, tau0, kappa, lam_n, t)
            eta_b = b_ratio * eta_w
            shrink = 1.0 - eta_w * lam_n
            if shrink <= 0.0:
                state[0], state[1] = t, n_avg
                return total, -2
            averaging = AVERAGE and t >= avg_start
            mu = 0.0
            if averaging:                    # recursive mean of the iterates (8.80)
                n_avg += 1.0
                mu = 1.0 / n_avg
            for m in range(M):
                grad = G[m] if MINIBATCH else x  # the gradient is c * grad
                c = 1.0 if MINIBATCH else gb[m]
                if ADAGRAD:                  # (8.84)-(8.85): per-parameter steps
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
                if MINIBATCH:
                    G[m, :] = 0.0
        state[0], state[1] = t, n_avg
        return total, -1

    return epoch


@njit(cache=True)
def csr_row_stats(data, indptr):
    """``(max_i ||x_i||^2, number of nonzero entries)`` of a CSR matrix from its arrays, without a temporary of ``nnz`` squares.

    Each row's squares are summed in stored order (as before: the same bits). The positions are
    unsigned, so ``data[p]`` carries no wrap-around test for a negative ``p``, and the nonzeros
    are counted in a loop of their own, which LLVM vectorises: 4.8 instructions a nonzero where
    the one loop with signed positions took 13.3 (callgrind, the bench's text rows).
    """
    top = 0.0
    for i in range(indptr.shape[0] - 1):
        s = 0.0
        for p in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            s += data[p] * data[p]
        top = max(top, s)
    nnz = 0
    for p in range(data.shape[0]):
        nnz += data[p] != 0.0
    return top, nnz


#: ``csr_index_check``'s answers, each worse than the one before.
CANONICAL, UNSORTED, REPEATS, OUT_OF_RANGE = 0, 1, 2, 3


@njit(cache=True)
def csr_index_check(indices, indptr, n_cols):
    """How a CSR matrix stores its column indices: the worst of ``CANONICAL`` (every row strictly
    increasing), ``UNSORTED`` (some row out of order, none storing a column twice), ``REPEATS``
    (some row stores a column twice) and ``OUT_OF_RANGE`` (an index outside ``[0, n_cols)``).

    ``indices`` are viewed unsigned and ``n_cols`` has their type: a negative index reads as 2^31
    (2^63) or more, so the one test ``j < n_cols`` bounds both ends.

    While every row so far strictly increases, a row is tested by comparing each index with the
    one before (no memory written; LLVM vectorises it): such a row repeats no column and lies in
    range when its last index does. From the first row out of order on, the answer is at least
    ``UNSORTED`` and only repeats and bounds are left to find, so every later row goes straight to
    the stamp pass (rows of one matrix are usually all sorted or all not): each entry stamps its
    column with its row's number (int32, modulo 2^31 - 1: a row 2^31 - 1 rows later may see a stale
    stamp and report a repeat, which only costs a canonical copy). Repeats do not end the pass:
    the bounds of every row are still checked.
    """
    status = CANONICAL
    seen = np.empty(0, dtype=np.int32)                # allocated at the first row out of order
    for i in range(indptr.shape[0] - 1):
        start, stop = np.uint64(indptr[i]), np.uint64(indptr[i + 1])
        if start >= stop:
            continue
        if status == CANONICAL:
            descents = 0
            for p in range(start + np.uint64(1), stop):
                descents += indices[p] <= indices[p - np.uint64(1)]
            if descents == 0:
                if indices[stop - np.uint64(1)] >= n_cols:
                    return OUT_OF_RANGE
                continue
            status = UNSORTED
            seen = np.full(n_cols, -1, dtype=np.int32)
        stamp = np.int32(i % 2147483647)
        for p in range(start, stop):
            j = indices[p]
            if j >= n_cols:
                return OUT_OF_RANGE
            if seen[j] == stamp:
                status = REPEATS
            seen[j] = stamp
    return status
