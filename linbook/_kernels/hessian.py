"""Weighted Gram matrices and one-pass GLM objective/gradient/Hessian, blocked over rows.

Readable references (what each function returns, up to rounding)::

    weighted_gram(X, s)            == X.T @ np.diag(s) @ X
    binary_pass(X, t, v, b, terms) == (sum(a * nll), Xt.T @ (a * dz), Xt.T @ diag(a * d2) @ Xt, z)
                                      with Xt = [1, X / c], z = Xt @ [b, v], (nll, dz, d2) = terms(z, t)
    multinomial_hessian(...)       == sum_i a_i (diag(p_i) - p_i p_i') kron (xt_i xt_i')

Dense ``X`` is read in row blocks of about 0.5 MB, so one pass reads ``X`` from memory
once and the temporaries stay in cache; the Gram matrix is accumulated by BLAS ``syrk``
on ``sqrt(s) * X_block`` (half the flops of a general product, symmetric by
construction). Sparse ``X`` (CSR/CSC) uses sparse products and is never densified.
Columns are divided by ``col_scale`` block by block (the model's standardised
coordinates), so features of size 1e300 do not overflow ``X'SX``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse
from scipy.linalg.blas import dsyrk

from .csr import divide_columns
from .threads import THREADED_NNZ, RowChunks, _csr_rows, map_row_chunks

__all__ = ["block_rows", "weighted_gram", "binary_pass", "multinomial_hessian", "CHUNK_MIN_ROWS"]

#: Dense passes of ``binary_pass`` split ``X`` into a row chunk per core from ``2 * CHUNK_MIN_ROWS`` rows on.
CHUNK_MIN_ROWS = 8192


def block_rows(n_rows, n_cols, block_size=None):
    """Row ranges ``[(i, j), ...]`` of about 0.5 MB of float64 each."""
    if block_size is None:
        block_size = max(256, (1 << 16) // max(n_cols, 1))
    return [(i, min(i + block_size, n_rows)) for i in range(0, n_rows, block_size)]


def _scaled_block(X, i, j, col_scale):
    """Rows ``[i, j)`` of ``X / col_scale``: divided, as the sparse path's ``divide_columns`` (the
    reciprocal of a subnormal scale, a column of 1e-310, overflows to ``inf``)."""
    Xb = X[i:j]
    return Xb / col_scale if col_scale is not None else Xb


def _safe_reciprocal(col_scale, limit):
    """``1 / col_scale`` when every scale lies in ``(1 / limit, limit)`` (then the reciprocal is a
    normal number, and multiplying by it equals dividing to rounding), else ``None``."""
    if col_scale is None or not (np.min(col_scale) > 1.0 / limit and np.max(col_scale) < limit):
        return None
    return 1.0 / col_scale


def _symmetrise_upper(H):
    """``dsyrk`` fills the upper triangle: mirror it."""
    return np.triu(H) + np.triu(H, 1).T


def weighted_gram(X, s, *, col_scale=None, block_size=None):
    """``X' diag(s) X`` for ``s >= 0`` without forming ``diag(s)`` (dense: blocked ``syrk``)."""
    s = np.asarray(s, dtype=float)
    c = None if col_scale is None else np.asarray(col_scale, dtype=float)
    if scipy.sparse.issparse(X):
        Xc = X if c is None else divide_columns(X, c)
        return np.asarray((Xc.T @ Xc.multiply(s[:, None]).tocsr()).todense())
    n, d = X.shape
    H = np.zeros((d, d), order="F")
    for i, j in block_rows(n, d, block_size):
        Xs = _scaled_block(X, i, j, c) * np.sqrt(s[i:j])[:, None]
        H = dsyrk(1.0, Xs.T, beta=1.0, c=H, trans=0, lower=0, overwrite_c=1)
    return _symmetrise_upper(H)


def binary_pass(X, t, v, b, terms, *, weights=None, col_scale=None, fit_intercept=True,
                need_hess=True, block_size=None, single_hessian=False, row_chunks=None):
    """One pass over ``X``: data term, gradient and Hessian of a binary GLM's weighted NLL.

    Parameters
    ----------
    X : (n, d) ndarray or sparse matrix
    t : (n,) array of +-1 labels
    v : (d,) coefficients in the scaled coordinates (``z = (X / c) v + b``)
    b : float, intercept
    terms : callable ``(z, t) -> (nll_i, d nll_i/dz, d2 nll_i/dz2)``
    weights : (n,) sample weights ``a_i`` or None (all ones)
    col_scale : (d,) column scales ``c`` or None (no scaling)
    single_hessian : bool
        Dense ``X``: form each block's ``X_b' S X_b`` in single precision (SSYRK, twice the
        speed of DSYRK) and sum the blocks in double. The Hessian's entries then carry
        relative errors of ~1e-6; ``f`` and ``g`` are unaffected. For solvers that only need
        an approximate Hessian (Newton with Hessian reuse).
    row_chunks : RowChunks of ``X`` or None
        Sparse ``X`` without ``col_scale``: the row chunks of its products, cut once by a fit that
        passes over the same ``X`` many times (None: cut here).

    Returns
    -------
    f, g, H, z
        ``g`` and ``H`` in the order ``[b, v]`` (no ``b`` without intercept); ``H`` is
        ``None`` unless ``need_hess``. No penalty is included.
    """
    n, d = X.shape
    off = 1 if fit_intercept else 0
    c = None if col_scale is None else np.asarray(col_scale, dtype=float)
    if scipy.sparse.issparse(X):
        Xc = X if c is None else divide_columns(X, c)
        # its products a chunk of rows per core; a fit passes the chunks it cut once (cutting costs ~0.5 ms a chunk)
        rows = row_chunks if row_chunks is not None and c is None else RowChunks(Xc)
        z = rows.dot(v) + b
        nll, dz, d2 = terms(z, t)
        if weights is not None:
            nll, dz, d2 = nll * weights, dz * weights, d2 * weights
        g = np.empty(d + off)
        g[off:] = rows.tdot(dz)
        H = None
        if need_hess:
            H = np.empty((d + off, d + off))
            H[off:, off:] = np.asarray((Xc.T @ Xc.multiply(d2[:, None]).tocsr()).todense())
        if fit_intercept:
            g[0] = dz.sum()
            if need_hess:
                H[0, 0] = d2.sum()
                H[0, 1:] = H[1:, 0] = Xc.T @ d2
        return float(nll.sum()), g, H, z
    inv_c = _safe_reciprocal(c, 1e290)
    if not need_hess and (c is None or inv_c is not None):
        return _gradient_pass(X, t, v, b, terms, weights, inv_c, fit_intercept)
    # wide X: blocks of >= d rows, so each rank-k SYRK update of the d x d result is
    # amortised over k >= d rows (C is read and written once per block)
    # moderate scales: scale v and the results by 1 / c instead of copying each block of X
    # (X'SX in the units of X cannot overflow while max |x| < 1e100); other scales (a subnormal
    # column's among them) divide each block by c
    inv_c = _safe_reciprocal(c, 1e100)
    post = inv_c is not None
    u = v * inv_c if post else v
    rows = block_size or max(256, (1 << 16) // max(d, 1), min(d, 4096))
    single = need_hess and single_hessian
    if single:
        rows = block_size or max(rows, 2048)      # SSYRK is efficient from ~2000 rows on
    if need_hess:
        # small fits scale with numpy: importing numba and loading the loop costs ~0.5 s
        scale_rows_into = _scale_rows_numpy if n * d < 100_000 and not single else _compiled_scale_rows()
    # single precision: standardise the columns in the buffer, so that no unit of the
    # features can overflow or underflow float32 (its range is only 1e-38 to 3e38)
    col = inv_c if single and post else np.empty(0)
    z = np.empty(n)

    def chunk(i0, i1):
        """The sums over rows ``[i0, i1)``: ``f``, ``g``, and the Hessian's blocks ``Hww``, ``Hwb``, ``Hbb``."""
        f, g = 0.0, np.zeros(d + off)
        Hww = np.zeros((d, d), order="F") if need_hess else None
        Hwb, Hbb = np.zeros(d), 0.0
        if need_hess:
            buf = np.empty((min(rows, i1 - i0), d), dtype=np.float32 if single else np.float64)
        for i, j in block_rows(i1 - i0, d, rows):
            i, j = i0 + i, i0 + j
            Xb = X[i:j] if post else _scaled_block(X, i, j, c)
            zb = Xb @ u
            zb += b
            z[i:j] = zb
            nll, dz, d2 = terms(zb, t[i:j])
            if weights is not None:
                a = weights[i:j]
                nll, dz, d2 = nll * a, dz * a, d2 * a
            f += nll.sum()
            if need_hess:
                # the two products X_b' dz and X_b' d2 read X_b once
                rs = Xb.T @ np.column_stack([dz, d2])
                g[off:] += rs[:, 0]
                B = buf[:j - i]
                scale_rows_into(Xb, np.sqrt(d2), col, B)
                # numpy computes B'B by SYRK (half a general product's flops, exactly symmetric) and,
                # unlike scipy's dsyrk, releases the GIL, so the chunks run at once
                Hww += B.T @ B
                Hwb += rs[:, 1]
                Hbb += d2.sum()
            else:
                g[off:] += Xb.T @ dz
            if fit_intercept:
                g[0] += dz.sum()
        return f, g, Hww, Hwb, Hbb

    # one contiguous chunk of rows per core, each with single-threaded BLAS (``_gradient_pass``
    # says why). 50,000 x 40 logistic Newton fit: 0.22 s with BLAS's two threads in every
    # small block call, 0.14 s with one thread and one chunk
    parts = map_row_chunks(chunk, n, min_rows=CHUNK_MIN_ROWS)
    f = float(sum(part[0] for part in parts))
    g = np.sum([part[1] for part in parts], axis=0)
    if need_hess:
        Hww = np.sum([part[2] for part in parts], axis=0)
        Hwb = np.sum([part[3] for part in parts], axis=0)
        Hbb = sum(part[4] for part in parts)
    if post:
        g[off:] *= inv_c
    if not need_hess:
        return f, g, None, z
    if post:
        if not single:                        # single precision summed standardised rows already
            Hww *= np.outer(inv_c, inv_c)
        Hwb *= inv_c
    H = np.empty((d + off, d + off))
    H[off:, off:] = _symmetrise_upper(Hww)
    if fit_intercept:
        H[0, 0] = Hbb
        H[0, 1:] = H[1:, 0] = Hwb
    return f, g, H, z


def _gradient_pass(X, t, v, b, terms, weights, inv_c, fit_intercept):
    """``binary_pass`` without the Hessian, dense ``X``: one contiguous row chunk per core, each
    in Python threads with single-threaded BLAS (:func:`linbook._kernels.threads.map_row_chunks`;
    a multi-threaded BLAS synchronises inside each of the many small block calls, which stalls on
    a busy machine). Within a chunk: ``z_b = X_b u``, then ``X_b' dz_b`` while the ~1 MB block is
    still in cache, so ``X`` is read from memory once; scaling ``u`` and ``g`` by ``inv_c = 1 / c``
    instead of ``X`` copies nothing (``binary_pass`` passes ``inv_c`` only for ``1e-290 < c < 1e290``:
    a normal number, and ``(X' dz) / c`` cannot overflow unless the features are near 1e308)."""
    n, d = X.shape
    u = v if inv_c is None else v * inv_c
    z = np.empty(n)

    def chunk(i0, i1):
        f, sdz, gw = 0.0, 0.0, np.zeros(d)
        for i, j in block_rows(i1 - i0, d, max(16, (1 << 17) // max(d, 1))):
            Xb = X[i0 + i:i0 + j]
            zb = Xb @ u
            zb += b
            z[i0 + i:i0 + j] = zb
            nll, dz, _ = terms(zb, t[i0 + i:i0 + j])
            if weights is not None:
                nll, dz = nll * weights[i0 + i:i0 + j], dz * weights[i0 + i:i0 + j]
            f += nll.sum()
            sdz += dz.sum()
            gw += dz @ Xb
        return f, sdz, gw

    parts = map_row_chunks(chunk, n, min_rows=CHUNK_MIN_ROWS)
    gw = np.sum([p[2] for p in parts], axis=0)
    off = int(fit_intercept)
    g = np.empty(d + off)
    g[off:] = gw if inv_c is None else gw * inv_c
    if fit_intercept:
        g[0] = sum(p[1] for p in parts)
    return float(sum(p[0] for p in parts)), g, None, z


def multinomial_hessian(X, W, b, *, weights=None, col_scale=None, fit_intercept=True, block_size=None):
    """Hessian of the multinomial NLL in the reduced parameters (reference class 0).

    ``W`` is ``(K, d)`` (``K = C - 1`` free classes, scaled coordinates), ``b`` ``(K,)``.
    Parameter order is class-major ``[b_1, w_1, ..., b_K, w_K]``; blocks are
    ``H_ck = sum_i a_i p_ic (delta_ck - p_ik) xt_i xt_i'``. No penalty is included.

    The rows run in the chunks of :func:`linbook._kernels.threads.map_row_chunks` (a Python thread per core,
    one BLAS thread each; the chunks' sums added in order: the same bits on any number of cores), as many as
    :func:`_hessian_chunk_rows` allows for their partial Hessians.
    """
    n, d = X.shape
    K = W.shape[0]
    off = 1 if fit_intercept else 0
    q = K * (d + off)
    c = None if col_scale is None else np.asarray(col_scale, dtype=float)
    a = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    if scipy.sparse.issparse(X):
        Xc = X if c is None else divide_columns(X, c)
        Xt = scipy.sparse.hstack([np.ones((n, 1)), Xc]).tocsr() if fit_intercept else Xc.tocsr()
        P = _free_class_probabilities(Xc @ W.T + b)
        parts = map_row_chunks(lambda i, j: _sparse_hessian_rows(_csr_rows(Xt, i, j), P[i:j], a[i:j]), n,
                               min_rows=_hessian_chunk_rows(n, q), parallel=Xt.nnz >= THREADED_NNZ)
    else:
        # blocks of up to 2048 rows while S (rows x K p) stays under 8 MB: a one-thread SYRK of 459 columns
        # took 0.33 s for 50,000 rows in blocks of 2048, 0.40-0.45 s in blocks of 256 to 1024
        rows = block_size or max(256, (1 << 16) // q, min(2048, (1 << 20) // q))

        def chunk(i0, i1):
            H = np.zeros((q, q))
            for i, j in block_rows(i1 - i0, q, rows):
                Xb = _scaled_block(X, i0 + i, i0 + j, c)
                _add_dense_hessian_rows(H, Xb, _free_class_probabilities(Xb @ W.T + b), a[i0 + i:i0 + j],
                                        fit_intercept)
            return H

        parts = map_row_chunks(chunk, n, min_rows=_hessian_chunk_rows(n, q))
    H = parts[0]
    for part in parts[1:]:          # in chunk order
        H += part
    return H


#: The most bytes of partial Hessians that :func:`multinomial_hessian`'s row chunks hold at once (each chunk's
#: is ``(K p)^2`` numbers: 1.7 MB for 10 classes of 50 features, 50 MB for 50 classes).
HESSIAN_PARTS_BYTES = 1 << 28


def _hessian_chunk_rows(n, q):
    """``min_rows`` of the multinomial Hessian's row chunks: :data:`CHUNK_MIN_ROWS`, or more where the chunks'
    ``q x q`` partial sums would exceed :data:`HESSIAN_PARTS_BYTES` (from the shape only, never the cores)."""
    max_chunks = max(1, HESSIAN_PARTS_BYTES // (8 * q * q))
    return max(CHUNK_MIN_ROWS, -(-n // max_chunks))


def _free_class_probabilities(A_free):
    """``P``, the softmax probabilities of the free classes ``1..K`` (rows of ``A_free``: their scores, the
    reference class's being 0)."""
    A = np.zeros((A_free.shape[0], A_free.shape[1] + 1))
    A[:, 1:] = A_free
    A -= A.max(axis=1, keepdims=True)
    np.exp(A, out=A)
    return A[:, 1:] / A.sum(axis=1, keepdims=True)


def _add_dense_hessian_rows(H, Xb, P, a, fit_intercept):
    """``H += sum_i a_i (diag(p_i) - p_i p_i') kron xt_i xt_i'`` over the rows ``Xb`` (dense, scaled), as
    products ``B'B`` (numpy's SYRK: half a general product's flops): the diagonal blocks ``sum_i a_i p_ik xt_i
    xt_i'``, less ``S'S`` with ``S_i = sqrt(a_i) p_i kron xt_i``."""
    m, K = P.shape
    Xt = np.column_stack([np.ones(m), Xb]) if fit_intercept else Xb
    p = Xt.shape[1]
    root_a = np.sqrt(a)
    for k in range(K):
        B = (root_a * np.sqrt(P[:, k]))[:, None] * Xt
        H[k * p:(k + 1) * p, k * p:(k + 1) * p] += B.T @ B
    S = ((root_a[:, None] * P)[:, :, None] * Xt[:, None, :]).reshape(m, K * p)
    H -= S.T @ S


def _sparse_hessian_rows(Xt, P, a):
    """``sum_i a_i (diag(p_i) - p_i p_i') kron xt_i xt_i'`` over the rows of sparse ``Xt``, block by block
    (``X~' diag(s) X~`` with ``s = a p_k (delta_km - p_m)``), dense."""
    K, p = P.shape[1], Xt.shape[1]
    H = np.empty((K * p, K * p))
    for k in range(K):
        for m in range(k, K):
            s = a * P[:, k] * ((k == m) - P[:, m])
            B = np.asarray((Xt.T @ Xt.multiply(s[:, None]).tocsr()).todense())
            H[k * p:(k + 1) * p, m * p:(m + 1) * p] = B
            H[m * p:(m + 1) * p, k * p:(k + 1) * p] = B.T
    return H


def _compiled_scale_rows():
    from ._rows_nb import scale_rows_into
    return scale_rows_into


def _scale_rows_numpy(Xb, s, col, out):
    """``_rows_nb.scale_rows_into`` in numpy: ``out[:] = Xb * s[:, None] (* col[None, :])``."""
    np.multiply(Xb, s[:, None], out=out, casting="same_kind")
    if col.shape[0]:
        out *= col
