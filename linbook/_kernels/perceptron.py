"""Compiled epochs of the perceptron (primal, pocket, dual) for ``linbook.perceptron``.

Each kernel is the textbook loop: visit the samples in ``order`` and, on a mistake
``t_i (w.x_i + b) <= 0``, update ``w <- w + eta t_i x_i``, ``b <- b + eta_b t_i``
(``eta_b = eta c^2`` for an intercept column of value ``c``; 0 without intercept). Rows are
read from a dense ``X`` or, when ``indptr`` is non-empty, from the CSR arrays
``(data, indices, indptr)`` (``X`` is then a 0 x 0 placeholder). Tested equal to
``linbook.perceptron.perceptron_reference``.
"""

import functools

from . import _cache_load  # noqa: F401  (imports numba: before it, see the module)
from numba import njit

from .prefetch import AHEAD, prefetch_csr_row, prefetch_dense_row, worth_prefetching

_FAST = {"reassoc", "contract", "nsz"}


@njit(cache=True, fastmath=_FAST, inline="always")
def _dot(X, data, indices, indptr, i, w):
    """``x_i . w``."""
    s = 0.0
    if indptr.shape[0] > 0:
        for p in range(indptr[i], indptr[i + 1]):
            s += w[indices[p]] * data[p]
    else:
        x = X[i]
        for j in range(x.shape[0]):
            s += w[j] * x[j]
    return s


@njit(cache=True, fastmath=_FAST, inline="always")
def _add_row(X, data, indices, indptr, i, c, w):
    """``w <- w + c x_i``."""
    if indptr.shape[0] > 0:
        for p in range(indptr[i], indptr[i + 1]):
            w[indices[p]] += c * data[p]
    else:
        x = X[i]
        for j in range(x.shape[0]):
            w[j] += c * x[j]


@njit(cache=True, fastmath=_FAST)
def _rows_dot(X, data, indices, indptr, i, k):
    """``x_i . x_k`` (CSR rows with sorted indices are merged)."""
    s = 0.0
    if indptr.shape[0] > 0:
        p, q = indptr[i], indptr[k]
        while p < indptr[i + 1] and q < indptr[k + 1]:
            if indices[p] == indices[q]:
                s += data[p] * data[q]
                p += 1
                q += 1
            elif indices[p] < indices[q]:
                p += 1
            else:
                q += 1
    else:
        for j in range(X.shape[1]):
            s += X[i, j] * X[k, j]
    return s


@njit(cache=True, fastmath=_FAST)
def training_errors(X, data, indices, indptr, t, w, b, limit):
    """Training errors of ``(w, b)`` with ``sign(0) = +1``, each counted ``|t_i|`` times (``t_i = s_i y_i``
    with sample weights ``s_i``, else ``y_i = +-1``); stops counting at ``limit``."""
    err = 0.0
    for i in range(t.shape[0]):
        s = _dot(X, data, indices, indptr, i, w) + b
        if (s >= 0.0) != (t[i] > 0.0):
            err += abs(t[i])
            if err >= limit:
                return err
    return err


def primal_epoch(X, data, indices, indptr, t, order, w, b, eta, eta_b, updates):
    """One epoch of the primal perceptron; returns the number of mistakes (updates).

    ``b`` is a length-1 array; ``updates`` receives the index of every updated sample.
    A plain Python dispatcher on purpose: were the CSR loop called from a fastmath-compiled
    function, LLVM would inline it and vectorise its gathers, which runs ~1.5x slower.
    """
    if indptr.shape[0] > 0:
        return _primal_csr(data, indices, indptr, t, order, w, b, eta, eta_b, updates)
    return _primal_dense(worth_prefetching(X))(X, t, order, w, b, eta, eta_b, updates)


@functools.cache
def _primal_dense(PREFETCH):
    """``primal_epoch`` on dense rows, compiled with or without the prefetch of later rows (a constant of
    the compiled function, as ``sgd._epoch_loop``'s switches: small ``X`` needs none)."""
    @njit(cache=True, fastmath=_FAST)
    def primal_dense(X, t, order, w, b, eta, eta_b, updates):
        mistakes = 0
        bias = b[0]                              # a local: keeps the dot products vectorised
        n = order.shape[0]
        for pos in range(n):
            if PREFETCH and pos + AHEAD < n:     # start loading a later row: rows come in random order
                prefetch_dense_row(X, order[pos + AHEAD])
            i = order[pos]
            x = X[i]
            s = bias
            for j in range(x.shape[0]):
                s += w[j] * x[j]
            if t[i] * s <= 0.0:
                c = eta * t[i]
                for j in range(x.shape[0]):
                    w[j] += c * x[j]
                bias += eta_b * t[i]
                updates[mistakes] = i
                mistakes += 1
        b[0] = bias
        return mistakes

    return primal_dense


@njit(cache=True)   # no reassociation: vectorised gathers are slower than scalar loads
def _primal_csr(data, indices, indptr, t, order, w, b, eta, eta_b, updates):
    """``primal_epoch`` on CSR rows."""
    mistakes = 0
    bias = b[0]
    n = order.shape[0]
    for pos in range(n):
        if pos + AHEAD < n:                  # start loading a later row: rows come in random order
            prefetch_csr_row(data, indices, indptr, order[pos + AHEAD])
        i = order[pos]
        s = bias
        for p in range(indptr[i], indptr[i + 1]):
            s += w[indices[p]] * data[p]
        if t[i] * s <= 0.0:
            c = eta * t[i]
            for p in range(indptr[i], indptr[i + 1]):
                w[indices[p]] += c * data[p]
            bias += eta_b * t[i]
            updates[mistakes] = i
            mistakes += 1
    b[0] = bias
    return mistakes


@njit(cache=True, fastmath=_FAST)
def pocket_epoch(X, data, indices, indptr, t, order, w, b, eta, eta_b, updates, best_w, best):
    """One epoch of Gallant's pocket algorithm: the primal loop, and after every update
    the training errors are counted and the weights kept in ``best_w``,
    ``best = [errors, b, updates so far]`` when they are fewer; ``best[2]`` counts from
    ``best[3]``, the updates of earlier epochs. Returns the number of mistakes.
    """
    mistakes = 0
    for i in order:
        if t[i] * (_dot(X, data, indices, indptr, i, w) + b[0]) <= 0.0:
            _add_row(X, data, indices, indptr, i, eta * t[i], w)
            b[0] += eta_b * t[i]
            updates[mistakes] = i
            mistakes += 1
            err = training_errors(X, data, indices, indptr, t, w, b[0], best[0])
            if err < best[0]:
                best[0], best[1], best[2] = err, b[0], best[3] + mistakes
                best_w[:] = w
    return mistakes


@njit(cache=True, fastmath=_FAST)
def dual_epoch(X, data, indices, indptr, t, order, alpha, b, eta, eta_b, updates, support, n_support):
    """One epoch of the dual perceptron; returns the number of mistakes.

    The score of sample ``i`` is ``sum_j alpha_j t_j (x_j . x_i) + b`` over the samples
    updated so far (``support[:n_support[0]]``): the entries of the Gram matrix are
    computed as needed, never stored. A mistake adds ``eta`` to ``alpha_i``.
    """
    mistakes = 0
    for i in order:
        s = b[0]
        for k in range(n_support[0]):
            j = support[k]
            s += alpha[j] * t[j] * _rows_dot(X, data, indices, indptr, j, i)
        if t[i] * s <= 0.0:
            if alpha[i] == 0.0:
                support[n_support[0]] = i
                n_support[0] += 1
            alpha[i] += eta
            b[0] += eta_b * t[i]
            updates[mistakes] = i
            mistakes += 1
    return mistakes
