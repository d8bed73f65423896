"""Compiled per-sample loops for LMS, recursive least squares and online gradient descent, and the
normal equations of a recursive-least-squares chunk.

Each is the textbook loop of ``linbook.online`` (one sample at a time, the update as in
the chapter), tested equal to a plain numpy loop.
"""

import numpy as np

from . import _cache_load  # noqa: F401  (imports numba: before it, see the module)
from numba import njit

from .finite import is_finite
from .prefetch import AHEAD, prefetch_dense_row
from .sgd import step_size

_FAST = {"reassoc", "contract", "nsz"}


@njit(cache=True, fastmath=_FAST)
def lms_pass(X, y, order, theta, fit_intercept, schedule, eta0, tau0, kappa, b_ratio, state, tol, path):
    """LMS (8.87) over the samples in ``order``: ``theta <- theta - eta_k (yhat - y) x``.

    ``theta = [intercept, coef...]`` (``[coef...]`` without intercept) is updated in place;
    the intercept's step is ``b_ratio * eta_k``. ``state[0]`` counts updates. Stops at
    the first update with ``||theta_k - theta_(k-1)||^2 < tol`` (``tol < 0``: never).
    Row ``k`` of ``path`` (when it has rows) receives the ``k+1``-th iterate of this call.
    Returns ``(position, code, loss)``: code 0 done, 1 the ``tol`` test fired, 2 non-finite;
    ``loss`` the summed ``(1/2)(yhat - y)^2`` of the samples stepped on, each before its step.
    """
    off = 1 if fit_intercept else 0
    D = X.shape[1]
    t = state[0]
    base = t
    record = path.shape[0] > 0
    n = order.shape[0]
    total = 0.0
    for pos in range(n):
        if pos + AHEAD < n:                  # start loading a later row: rows come in random order
            prefetch_dense_row(X, order[pos + AHEAD])
        i = order[pos]
        x = X[i]
        yhat = theta[0] if off else 0.0
        for j in range(D):
            yhat += theta[off + j] * x[j]
        r = yhat - y[i]
        total += 0.5 * r * r
        t += 1.0
        e = step_size(schedule, eta0, tau0, kappa, 0.0, t) * r
        if not is_finite(e):
            state[0] = t
            return pos, 2, total
        sq = 0.0
        if off:
            d = b_ratio * e
            theta[0] -= d
            sq += d * d
        for j in range(D):
            d = e * x[j]
            theta[off + j] -= d
            sq += d * d
        if record:
            path[int(t - base) - 1] = theta
        if sq < tol:
            state[0] = t
            return pos, 1, total
    state[0] = t
    return order.shape[0], 0, total


@njit(cache=True, fastmath=_FAST)
def rls_pass(X, shift, y, sw, P, m, A, r, gain_limit):
    """Recursive least squares (Sherman-Morrison) over the rows of ``X``, updating ``P``, ``m`` and the
    information ``A``, ``r`` in place: ``linbook.online.rls._sherman_morrison_rows``, compiled.

    The rows are those of the augmented design, ``x = [X_i - shift, 1]`` when ``shift`` has one
    entry per column of ``X`` (an intercept), else ``x = X_i``; they are formed one at a time.
    For each sample with weight ``s_i > 0``::

        Px = P x,   g = x^T P x,   d = 1/s_i + g,   k = Px / d,
        m <- m + k (y - x^T m),    P <- P - k Px^T,     A <- A + s_i x x^T,   r <- r + s_i y x

    stopping before a row with ``s_i g > gain_limit``; then ``P <- (P + P^T) / 2``.
    Returns ``(row, outcome)`` with the codes of ``linbook.online.rls``: 0 done (``row = n``),
    1 large gain at ``row`` (the rows before it absorbed), 2 ``P`` lost positive definiteness
    (``d`` at ``row``, or a diagonal entry at the end: ``row = n - 1``), 3 ``A`` overflowed at ``row``.
    """
    p, D, n = P.shape[0], X.shape[1], X.shape[0]
    x = np.ones(p)
    Px = np.empty(p)
    outcome = 0
    for i in range(n):
        s = sw[i]
        if s == 0.0:
            continue
        if shift.shape[0] == D:
            for j in range(D):
                x[j] = X[i, j] - shift[j]
        else:
            for j in range(D):
                x[j] = X[i, j]
        g = 0.0
        e = y[i]
        for a in range(p):
            t = 0.0
            for c in range(p):
                t += P[a, c] * x[c]
            Px[a] = t
            g += x[a] * t
            e -= x[a] * m[a]
        d = 1.0 / s + g
        if not (d > 0.0 and is_finite(d) and is_finite(e)):
            return i, 2
        if s * g > gain_limit:
            n, outcome = i, 1
            break
        for a in range(p):
            k = Px[a] / d
            m[a] += k * e
            Pa = P[a]
            for c in range(p):
                Pa[c] -= k * Px[c]
        for a in range(p):
            sx = s * x[a]
            r[a] += sx * y[i]
            Aa = A[a]
            for c in range(p):
                Aa[c] += sx * x[c]
            if not is_finite(Aa[a]):       # |A_jk| <= sqrt(A_jj A_kk)
                return i, 3
    for a in range(p):
        for c in range(a):
            P[a, c] = P[c, a] = 0.5 * (P[a, c] + P[c, a])
        if outcome == 0 and not P[a, a] > 0.0:
            return n - 1, 2
    return n, outcome


@njit(cache=True, fastmath=_FAST)
def rls_normal_solve(X, shift, y, sw, A, r, ceiling, C, e, m):
    """Add a chunk to the normal equations and solve them: ``linbook.online.rls._normal_equations``, compiled.

    With ``Z`` the augmented rows (``[X_i - shift, 1]`` when ``shift`` has one entry per column of ``X``,
    else ``X_i``) and ``S = diag(sw)``, in place::

        A <- A + Z^T S Z,    r <- r + Z^T S y

    then into ``C``, ``e`` the factor of ``linbook._kernels.cholesky.equilibrated_cholesky(A)`` (upper ``C``
    with ``C^T C = A / outer(e, e)``, ``e = sqrt(diag A)``, 1 where ``diag A <= 0``) and into ``m`` the
    solution of ``A m = r``. For a small ``p``: one call instead of a dozen numpy and LAPACK calls of
    ~1-5 microseconds each. Returns the codes of ``linbook.online.rls``: 0 solved and every ``A_jj`` below
    ``ceiling_j`` (the caller's bound on the condition), 5 solved but not so (or ``ceiling`` empty: the caller
    estimates the condition), 3 ``A`` or ``r`` overflowed, 4 the scaled ``A`` is not numerically positive
    definite (no factor, ``m`` untouched).
    """
    p, D, n = A.shape[0], X.shape[1], X.shape[0]
    Zt = np.ones((p, n))        # Z transposed: each sum over the rows runs along a contiguous line
    SZt = np.empty((p, n))
    for i in range(n):
        for j in range(D):
            Zt[j, i] = X[i, j] - shift[j] if shift.shape[0] == D else X[i, j]
    for a in range(p):
        t = 0.0
        for i in range(n):
            SZt[a, i] = sw[i] * Zt[a, i]
            t += SZt[a, i] * y[i]
        r[a] += t
    for a in range(p):
        for c in range(a, p):
            t = 0.0
            for i in range(n):
                t += SZt[a, i] * Zt[c, i]
            A[a, c] += t
    bounded = ceiling.shape[0] == p
    for a in range(p):
        if not (is_finite(A[a, a]) and is_finite(r[a])):      # |A_jk| <= sqrt(A_jj A_kk)
            return 3
        if bounded and not A[a, a] < ceiling[a]:
            bounded = False
        e[a] = np.sqrt(A[a, a]) if A[a, a] > 0.0 else 1.0
        for c in range(a):
            A[a, c] = A[c, a]
    for a in range(p):                      # C <- the scaled A's upper triangle, then factored in place
        for c in range(p):
            C[a, c] = A[a, c] / (e[a] * e[c]) if c >= a else 0.0
    for j in range(p):                      # right-looking: row j of C, then the rows below updated
        if not C[j, j] > 0.0:
            return 4
        C[j, j] = np.sqrt(C[j, j])
        for c in range(j + 1, p):
            C[j, c] /= C[j, j]
        for a in range(j + 1, p):
            for c in range(a, p):
                C[a, c] -= C[j, a] * C[j, c]
    for a in range(p):                      # C^T z = r / e, then C w = z, m = w / e
        t = r[a] / e[a]
        for k in range(a):
            t -= C[k, a] * m[k]
        m[a] = t / C[a, a]
    for a in range(p - 1, -1, -1):
        t = m[a]
        for k in range(a + 1, p):
            t -= C[a, k] * m[k]
        m[a] = t / C[a, a]
    for a in range(p):
        m[a] /= e[a]
    return 0 if bounded else 5



@njit(cache=True, fastmath=_FAST)
def rls_plain_chunk(X, shift, y, y_shift, A, r, ceiling, C, e, m):
    """An unweighted chunk of a stream added to the normal equations and solved in one call:
    :func:`rls_normal_solve` of ``(X, y - y_shift)`` with unit weights, after a pass that finds any non-finite
    entry of ``X`` or ``y`` (code 6, nothing written: the caller's validation then says which), and then a
    check that the mean ``m`` is finite (code 7 when not). The other codes are :func:`rls_normal_solve`'s.

    Why: for ``RecursiveLeastSquares.partial_fit`` on chunks of ~100 rows and ~10 columns, the chunk's
    finiteness tests, its unit weights, the shift of ``y`` and the test of the mean were numpy calls of
    ~0.5-1 microseconds each beside the ~3 microseconds of the solve itself; in one call a stream of such
    chunks costs less than re-solving the normal equations with numpy (``benchmarks/bench_first_use.py``).
    """
    n, D = X.shape
    for i in range(n):
        if not is_finite(y[i]):
            return 6
        for j in range(D):
            if not is_finite(X[i, j]):
                return 6
    sw = np.ones(n)
    yc = np.empty(n)
    for i in range(n):
        yc[i] = y[i] - y_shift
    outcome = rls_normal_solve(X, shift, yc, sw, A, r, ceiling, C, e, m)
    if outcome == 0 or outcome == 5:
        for a in range(m.shape[0]):
            if not is_finite(m[a]):
                return 7
    return outcome


@njit(cache=True, fastmath=_FAST)
def ogd_rounds(X, y, theta, loss, radius, eta0, auto, state, losses):
    """Projected online gradient descent (8.78), one round per row.

    Round ``t``: suffer ``f(theta, z_t)`` (stored in ``losses``), then
    ``theta <- proj(theta - eta_t grad f)`` with ``eta_t = eta0 / sqrt(t)``, or with
    ``auto``: ``eta_t = 1 / (L_t sqrt(t))``, ``L_t = c max_{s<=t} ||x_s||^2`` (``c = 1/4`` for
    the log-loss, 1 otherwise). ``state = [t, L_t]``; ``radius <= 0``: no projection.
    Returns the row where the loss stopped being finite, or -1.
    """
    D = X.shape[1]
    t, L = state[0], state[1]
    c = 0.25 if loss == 1 else 1.0
    for i in range(X.shape[0]):
        x = X[i]
        z = 0.0
        sq = 0.0
        for j in range(D):
            z += theta[j] * x[j]
            sq += x[j] * x[j]
        if loss == 0:                         # (1/2)(z - y)^2
            f, dz = 0.5 * (z - y[i]) ** 2, z - y[i]
        elif loss == 1:                       # log(1 + e^z) - y z, stable
            if z >= 0.0:
                ez = np.exp(-z)
                f, dz = z + np.log1p(ez) - y[i] * z, 1.0 / (1.0 + ez) - y[i]
            else:
                ez = np.exp(z)
                f, dz = np.log1p(ez) - y[i] * z, ez / (1.0 + ez) - y[i]
        else:                                 # |z - y|
            f, dz = abs(z - y[i]), np.sign(z - y[i])
        losses[i] = f
        if not is_finite(f):
            state[0], state[1] = t, L
            return i
        t += 1.0
        if auto:
            L = max(L, c * sq)
            eta = 1.0 / (L * np.sqrt(t)) if L > 0.0 else 0.0
        else:
            eta = eta0 / np.sqrt(t)
        nrm = 0.0
        for j in range(D):
            theta[j] -= eta * dz * x[j]
            nrm += theta[j] * theta[j]
        if not is_finite(nrm):
            state[0], state[1] = t, L
            return i
        if radius > 0.0 and nrm > radius * radius:
            shrink = radius / np.sqrt(nrm)
            for j in range(D):
                theta[j] *= shrink
    state[0], state[1] = t, L
    return -1
