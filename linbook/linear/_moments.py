"""The sufficient statistics of (weighted) least squares, computed once and without copying X.

Every linear model here solves a problem in the centred Gram matrix
``G = Xc^T W Xc`` and ``c = Xc^T W yc`` (``Xc``, ``yc`` centred by the weighted means when an
intercept is fitted, ``W = diag(sample_weight)``). This module computes them without copying
``X``: by one BLAS ``syrk`` on ``X`` and a rank-one centring update when that loses at most two
digits (unweighted data whose column means are within ~10 standard deviations of zero), else
in one pass over ``X`` in row blocks that are centred and weighted exactly (a block of a few MB
is the only temporary). It works in *scaled* coordinates: ``y`` is divided by a power of
two near ``max|y|`` when that is beyond 1e100 or below 1e-100, and, when the Gram matrix would
overflow or underflow (features near 1e300 or 1e-160), every column of ``X`` by a power of two
near its largest entry. Powers of two make the scaling exact, so results do not change, but
nothing overflows. Solvers work with the scaled solution ``v`` and :meth:`Moments.coef` maps it
back: ``w_j = y_scale * v_j / x_scale_j``.

Private helpers of :mod:`linbook.linear`.
"""

from __future__ import annotations


import numpy as np
import scipy.sparse as sps
import scipy.linalg
from scipy.linalg import lapack

from .._graded_qr import _full_rank_by_rows
from .._design import constant_columns, offset_columns
from .._kernels.csr import divide_columns
from .._kernels.numpy_budget import numpy_pass
from .._kernels.threads import RowChunks, factorisation_threads, map_row_chunks, single_threaded_blas
from ..numerics import _power_of_two_scale

#: Bytes of the largest dense temporary (one block of rows of X).
BLOCK_BYTES = 1 << 22
#: The equilibrated Gram matrix is used for Cholesky only above this reciprocal condition
#: number: below it (cond(X) > 1e4) the normal equations would lose more than half of the
#: float64 digits, and the solvers fall back to an orthogonal factorisation of X itself.
RCOND_MIN = 1e-8
#: Sparse X with more columns than this is solved iteratively (CG or LSQR) instead of by a dense Gram.
MAX_GRAM_FEATURES = 4096
#: Pairs of stored entries in a row (``sum_i nnz_i^2``) that scipy's sparse product turns into Gram entries
#: in one step of the numpy budget (~10 us; 7e4 pairs took 1.2 ms, 2e5 pairs 8 ms against 0.9 ms compiled).
_GRAM_PAIRS_PER_STEP = 600


def gram_pairs(X):
    """``sum_i nnz_i^2 / 2`` for sparse ``X`` (CSR or CSC; ``nnz_i`` the stored entries of row ``i``): the
    products that forming its Gram matrix costs (the solvers' cost models start from it)."""
    rows = np.diff(X.indptr) if X.format == "csr" else np.bincount(X.tocoo().row, minlength=X.shape[0])
    rows = rows.astype(float)
    return 0.5 * float(np.sum(rows * rows))        # (not BLAS's dot: waking its threads cost 4 ms under load)


def _largest_magnitudes(X):
    """``max_i |x_ij|`` of dense ``X`` per column (0 for none), as ``max(max x, -min x)`` over row blocks of ~1 MB.

    Why blocks: the two reductions over the whole of ``X`` read it from memory twice; a block is still in cache
    for the second (maxima are exact, so the order changes no bit). Why not ``|X|``: its temporary."""
    big = np.zeros(X.shape[1])
    step = _blocks(*X.shape)[1] // 4
    for i in range(0, X.shape[0], step):
        B = X[i:i + step]
        np.maximum(big, np.max(B, axis=0, initial=0.0), out=big)
        np.maximum(big, -np.min(B, axis=0, initial=0.0), out=big)
    return big


def _blocks(n, d):
    step = max(64, BLOCK_BYTES // (8 * max(d, 1)))
    return range(0, n, step), step


def _rows(X, i, j):
    B = X[i:j]
    return B.toarray() if sps.issparse(B) else B


class Moments:
    """Scaled, centred, weighted Gram statistics of one regression problem.

    Attributes (scaled coordinates: ``X' = X / x_scale``, ``y' = y / y_scale``)
    ----------
    G : (d, d) ``Xc'^T W Xc'``        c : (d,) ``Xc'^T W yc'``        yy : ``yc'^T W yc'``
    x_mean, y_mean : weighted means in original units (zeros without an intercept)
    x_scale : (d,) powers of two (ones unless the raw Gram would overflow or underflow)
    y_scale : 1, or a power of two near ``max|y|`` when that is beyond 1e+-100
    n_eff : number of samples with positive weight
    """

    def __init__(self, X, y, sw, fit_intercept, gram=True, common_scale=True):
        if sps.issparse(X):
            X = X.tocsr()
            if not X.has_canonical_format:        # duplicates summed, indices sorted: once, for every pass
                X = X.copy()
                X.sum_duplicates()
        self.X, self.sw, self.fit_intercept = X, sw, fit_intercept
        self.n, self.d = X.shape
        self.x_mean_delta = np.zeros(self.d)      # set by _x_means for weighted X
        self.constant, self.constant_value = constant_columns(X)   # centred exactly on their value
        self.n_eff = self.n if sw is None else int(np.count_nonzero(sw))
        big = max(float(y.max(initial=0.0)), -float(y.min(initial=0.0)))
        # y is rescaled only where its squares could overflow or underflow (exactly: a power of 2)
        self.y_scale = float(_power_of_two_scale(big, below=True)) if not 1e-100 <= big <= 1e100 else 1.0
        self.y_abs_max = big        # the resolution of y: the noise-variance floor (LinearModel._finish)
        self.ys = y / self.y_scale if self.y_scale != 1.0 else y
        self.sum_w = float(self.n if sw is None else sw.sum())
        self.y_mean_s = float(self._wmean(self.ys)) if fit_intercept else 0.0
        self.gram_built = False
        self.gram_possible = not sps.issparse(X) or self.d <= MAX_GRAM_FEATURES
        self.yc = yc = self.ys - self.y_mean_s
        self.yy = float(yc @ yc if sw is None else sw @ (yc * yc))
        if not gram or (sps.issparse(X) and self.d > MAX_GRAM_FEATURES):
            # no D x D matrix (wide dense X, or sparse X with many columns): a power of two per
            # column, or one common to all (``common_scale``: the minimum-norm solution of least
            # squares is then that of the original units; a penalised fit maps its penalty per column)
            self.column_scales = scales = self._column_scales()
            self.x_scale = np.full(self.d, float(np.max(scales, initial=0.0)) or 1.0) if common_scale else scales
            self.x_mean_s = self._x_means()
            return
        self.x_scale = np.ones(self.d)
        self._raw_c = None
        if sw is None and isinstance(X, np.ndarray) and fit_intercept:
            # column means and X^T yc in one pass over X (a GEMM with the two columns [yc, 1])
            with np.errstate(over="ignore", invalid="ignore"):
                T = X.T @ np.column_stack([yc, np.ones(self.n)])
            self._raw_c, self.x_mean_s = T[:, 0], self._exact_constant_means(T[:, 1] / self.n)
        else:
            self.x_mean_s = self._x_means()
        ok = self._gram()
        if not ok:
            self.x_scale = self._column_scales()
            self.x_mean_s = self._x_means()
            self._gram()

    # -- statistics ----------------------------------------------------------------------------
    def _wmean(self, v):
        if self.sw is None:
            return v.mean()
        m = (self.sw @ v) / self.sum_w
        return m + (self.sw @ (v - m)) / self.sum_w       # see _refine_weighted_means

    def _weighted_mean_residual(self, m):
        """``mean_w(X / x_scale - m)``: what is left of the weighted column means after centring on ``m``.

        ``m = sw @ X / sum(sw)`` is off by about ``eps * max|x_j|`` (and a column offset by 1e12 cannot
        even hold its mean closer than that), so ``X - m`` keeps a weighted mean ``delta``; its Gram then
        carries an extra ``sum(sw) * delta delta^T`` that the intercept does not absorb, and with weights
        spanning many orders of magnitude that term swamps the light rows' share of ``G``. The
        differences ``X - m`` are exact (Sterbenz), so ``delta`` is accurate, and the centring
        subtracts it as a second step (``Xc = (X - m) - delta``).
        """
        X = self.X
        with np.errstate(over="ignore", invalid="ignore"):
            if sps.issparse(X):
                delta = self._sparse_mean_residual(m)
            else:
                parts = map_row_chunks(lambda a, b: self._dense_mean_residual(m, a, b), self.n)
                delta = np.sum(parts, axis=0) / self.sum_w
        return np.where(np.isfinite(delta), delta, 0.0)

    def _dense_mean_residual(self, m, a, b):
        """``sum_w (X / x_scale - m)`` over the rows ``[a, b)`` of dense ``X``, block by block."""
        tot = np.zeros(self.d)
        with np.errstate(over="ignore", invalid="ignore"):
            for i, j, Z in self._shifted_blocks(m, a, b):
                tot += Z.sum(axis=0) if self.sw is None else self.sw[i:j] @ Z
        return tot

    def _exact_constant_means_delta(self, delta):
        """``delta`` without the constant columns' share (their means are exactly their value)."""
        return np.where(self.constant, 0.0, delta) if np.any(self.constant) else delta

    def _shifted_blocks(self, m, a, b):
        """``(i, j, X[i:j] / x_scale - m)`` for the row blocks of ``[a, b)``, in one reused buffer (a block is
        overwritten by the next: use it before asking for that)."""
        X, s = self.X, self.x_scale
        scaled = not np.all(s == 1.0)
        step = _blocks(self.n, self.d)[1]
        buf = np.empty((min(step, b - a), self.d))
        for i in range(a, b, step):
            j = min(i + step, b)
            Z = buf[:j - i]
            if scaled:
                np.divide(_rows(X, i, j), s, out=Z)
                Z -= m
            else:
                np.subtract(_rows(X, i, j), m, out=Z)
            yield i, j, Z

    def _sparse_mean_residual(self, m):
        """``mean_w(X / x_scale - m)`` of CSR ``X`` from its stored entries: ``sum_stored w (x - m)`` minus
        ``m`` times the weight of the rows where the column is 0 (no dense pass)."""
        X = self.X
        cols = X.indices
        w = np.repeat(self.sw, np.diff(X.indptr))
        stored = np.bincount(cols, weights=w * (X.data / self.x_scale[cols] - m[cols]), minlength=self.d)
        w_stored = np.bincount(cols, weights=w, minlength=self.d)
        return (stored - m * (self.sum_w - w_stored)) / self.sum_w

    def _exact_constant_means(self, m):
        """``m`` with the means of the constant columns set to their value (see
        :func:`linbook._design.constant_columns`; ``x_scale`` is a power of two: exact)."""
        if self.fit_intercept and np.any(self.constant):
            m = np.where(self.constant, self.constant_value / self.x_scale, m)
            self.x_mean_delta = np.where(self.constant, 0.0, self.x_mean_delta)
        return m

    def _x_means(self):
        """Weighted column means of ``X / x_scale`` (constant columns: exactly their value)."""
        return self._exact_constant_means(self._summed_x_means())

    def _summed_x_means(self):
        """Weighted column means of ``X / x_scale``, summed blockwise so nothing overflows (dense weighted
        ``X``: also ``x_mean_delta``, see :meth:`_weighted_mean_residual`)."""
        self.x_mean_delta = np.zeros(self.d)
        if not self.fit_intercept:
            return np.zeros(self.d)
        X, s = self.X, self.x_scale
        unscaled = np.all(s == 1.0)
        if sps.issparse(X):
            sw = np.ones(self.n) if self.sw is None else self.sw
            m = self._scaled_after(lambda: np.asarray(X.T @ sw).ravel(), entries=self.sw is None)
            if m is None:
                m = np.asarray(divide_columns(X, s).T @ sw).ravel()
            m = m / self.sum_w
            if self.sw is not None:
                self.x_mean_delta = self._weighted_mean_residual(m)
            return m
        if unscaled and self.sw is None:     # the common case: no temporary at all
            with np.errstate(over="ignore", invalid="ignore"):
                return X.mean(axis=0)
        if unscaled:
            with np.errstate(over="ignore", invalid="ignore"):
                m = (self.sw @ X) / self.sum_w
            self.x_mean_delta = self._weighted_mean_residual(m)
            return m
        if self.sw is None:
            # X's column sums divided by the powers of two (exact) where they are finite: no scaled blocks
            # (1000 x 10000: 23 ms -> 8 ms)
            with np.errstate(over="ignore", invalid="ignore"):
                tot = X.sum(axis=0)
            if np.all(np.isfinite(tot)):
                return tot / s / self.sum_w
        tot = np.zeros(self.d)
        rng, step = _blocks(self.n, self.d)
        for i in rng:
            B = X[i:i + step] / s
            tot += B.sum(axis=0) if self.sw is None else self.sw[i:i + step] @ B
        if self.sw is not None:
            self.x_mean_delta = self._weighted_mean_residual(tot / self.sum_w)
        return tot / self.sum_w

    def _scaled_after(self, column_sums, power=1, entries=False):
        """``column_sums()`` (sums over the stored entries of ``X``, each term of degree ``power`` in ``x``) divided by
        ``x_scale ** power`` afterwards: the same bits as the sums of the scaled entries (a power of two scales
        each term exactly) where the scales are at least 1 (the unscaled terms underflow no sooner) and the
        sums are finite; else ``None`` (then the caller scales the entries first). Saves a scaled copy of the
        stored entries (sparse 100k x 2000 at 0.5 %: ~20 ms a fit). ``entries``: the terms are the stored entries
        themselves (unweighted, degree 1), so scales below 1 qualify too: no term is rounded, and an addition
        whose result falls below the normal range is exact, so the sums scale exactly either way (as the dense
        column sums do; sparse 2000 x 20000 at 1 %, whose columns' largest entries are mostly below 2: a 2 ms copy).
        """
        s = self.x_scale
        if not (entries or np.min(s, initial=1.0) >= 1.0):
            return None
        with np.errstate(over="ignore", invalid="ignore"):
            out = column_sums()
            if np.all(s == 1.0):
                return out
            for _ in range(power):
                out = out / s
        return out if np.all(np.isfinite(out)) else None

    def _column_scales(self):
        X = self.X
        if sps.issparse(X):          # the largest |x| of each column from the stored entries (no CSC copy)
            big = np.zeros(self.d)
            np.maximum.at(big, X.indices, np.abs(X.data))
        else:
            big = _largest_magnitudes(X)
        return _power_of_two_scale(big, below=True)

    def _gram(self):
        """Fill ``G``, ``c``, ``yy``; return False when the scaled-by-one Gram over/underflows."""
        d = self.d
        yc = self.yc
        if sps.issparse(self.X):
            if not self._sparse_gram(yc):
                self._dense_gram(yc)
        elif not self._raw_gram(yc):
            if self.fit_intercept and self.sw is None and not np.any(self.x_mean_delta):
                # a column far from 0 beside its spread: its mean m is off by ~eps |m|, and X - m keeps a mean
                # the Gram would carry as sum_w delta delta^T (coefficients 3e-8 off at an offset of 1e12)
                self.x_mean_delta = self._exact_constant_means_delta(self._weighted_mean_residual(self.x_mean_s))
            self._dense_gram(yc)
        self.gram_built = True
        diag = np.diag(self.G)
        if not (np.all(np.isfinite(self.G)) and np.all(np.isfinite(self.c))):
            return False
        if np.all(self.x_scale == 1.0) and np.any((diag < 1e-250) & (diag >= 0)) and d:
            return bool(np.all(self._column_scales() == 1.0))   # zero column, or tiny values
        return True

    def _raw_gram(self, yc):
        """One BLAS ``syrk`` on X itself, centred by a rank-one update; False if that is inaccurate.

        ``Xc^T Xc = X^T X - N m m^T`` loses about ``log10(X^T X / Xc^T Xc)`` digits on the
        diagonal to cancellation. Used (unweighted, unscaled data only) while that is at most two
        digits, i.e. every column's mean is within ~10 standard deviations of zero; otherwise
        the caller centres block by block, which is exact.
        """
        X = self.X
        if self.sw is not None or not np.all(self.x_scale == 1.0):
            return False
        if not (X.flags.c_contiguous or X.flags.f_contiguous):
            return False
        # numpy computes X^T X by SYRK (exactly symmetric) in its own BLAS: scipy's dsyrk runs in scipy's
        # OpenBLAS, whose threads then compete with numpy's still-spinning ones (1e5 x 50: 0.033 s median
        # against 0.022, the same numbers)
        m = self.x_mean_s
        with np.errstate(over="ignore", invalid="ignore"):     # overflow: _gram then scales the columns
            G = X.T @ X
            c = X.T @ yc if self._raw_c is None else self._raw_c
            if self.fit_intercept:
                Gc = G - self.n * np.outer(m, m)
                if not np.all(np.diag(Gc) >= 1e-2 * np.diag(G)):
                    return False
                G, c = Gc, c - m * float(yc.sum())
        self.G, self.c = G, c
        return True

    def _dense_gram(self, yc):
        """``G`` and ``c`` from the rows centred (and weighted) exactly, a block at a time.

        The block products are small BLAS calls: one contiguous chunk of rows per core, each with
        single-threaded BLAS (see :mod:`linbook._kernels.threads`). 200,000 x 50 weighted, 2 shared
        cores under load: 0.6-0.7 s with BLAS's own threads in every block call, 0.05 s on one thread.
        """
        parts = map_row_chunks(lambda a, b: self._dense_gram_rows(yc, a, b), self.n)
        self.G = np.sum([part[0] for part in parts], axis=0)
        self.c = np.sum([part[1] for part in parts], axis=0)

    def _dense_gram_rows(self, yc, a, b):
        """``(Xc^T W Xc, Xc^T W yc)`` of the rows ``[a, b)`` (scaled, centred, weighted by ``sqrt(sw)``)."""
        sw = self.sw
        fine = bool(np.any(self.x_mean_delta))
        G = np.zeros((self.d, self.d))
        c = np.zeros(self.d)
        with np.errstate(over="ignore", invalid="ignore"):
            for i, j, Z in self._shifted_blocks(self.x_mean_s, a, b):
                if fine:
                    Z -= self.x_mean_delta
                yb = yc[i:j]
                if sw is not None:
                    r = np.sqrt(sw[i:j])
                    Z *= r[:, None]
                    yb = yb * r
                # numpy computes Z^T Z by SYRK (exactly symmetric) and, unlike scipy's dsyrk, releases
                # the GIL, so the chunks run at once
                G += Z.T @ Z
                c += Z.T @ yb
        return G, c

    def _sparse_gram(self, yc):
        """``X^T W X`` by the CSR Gram kernel (by scipy's sparse product while the process's numpy budget
        lasts), centred by a rank-one update when that is accurate."""
        X, m, s = self.X, self.x_mean_s, self.x_scale
        Xs = divide_columns(X, s) if not np.all(s == 1.0) else X
        sw = np.empty(0) if self.sw is None else self.sw
        with np.errstate(over="ignore", invalid="ignore"):
            if numpy_pass(int(2 * gram_pairs(Xs)) // _GRAM_PAIRS_PER_STEP + 1):
                # a small Gram by scipy's sparse product, so that a first small fit loads no compiled code
                # (symmetrised: with weights, x_ij s_i x_ik and x_ik s_i x_ij may round apart)
                XtS = Xs.T if self.sw is None else Xs.T @ sps.diags(self.sw)
                G = (XtS @ Xs).toarray()
                G = 0.5 * (G + G.T)
            else:
                from .._kernels.sparse_gram import csr_gram

                G = csr_gram(Xs, sw)
            c = Xs.T @ (yc if self.sw is None else self.sw * yc)
            if self.fit_intercept:
                Gc = G - self.sum_w * np.outer(m, m)
                # centring by subtraction loses digits when a mean dominates the spread:
                # then centre block by block instead (exact, a few MB of dense rows at a time)
                dg, dc = np.diag(G), np.diag(Gc)
                if np.any(dc < 1e-4 * dg):
                    return False
                c = c - m * float(yc.sum() if self.sw is None else self.sw @ yc)
                G = Gc
        self.G, self.c = G, c
        return True

    def build_gram(self):
        """Form ``G`` and ``c`` after all, for moments made with ``gram=False`` (an iterative solve that
        fell back to the Gram, or a statistic that needs its spectrum): the constructor's scaling (none,
        or per column where the Gram would overflow or underflow), so the result is the same."""
        if self.gram_built:
            return
        self._raw_c = None
        self.x_scale = np.ones(self.d)
        self.x_mean_s = self._x_means()
        if not self._gram():
            self.x_scale = self._column_scales()
            self.x_mean_s = self._x_means()
            self._gram()

    def gram_diagonal(self):
        """``(diag(G), sum_i s_i (x_ij / x_scale_j)^2)`` of sparse ``X`` without forming ``G``.

        ``diag(G)_j = sum_i s_i (x_ij / x_scale_j - m_j)^2`` is computed as ``sum_w x^2 - sum_w m^2`` from
        the stored entries: where a mean dominates the spread of its column (``diag(G)`` far below the
        plain sum of squares) that loses digits, and so would any product with the implicitly centred X.
        """
        X = self.X
        w = None if self.sw is None else np.repeat(self.sw, np.diff(X.indptr))
        squares = self._scaled_after(lambda: np.bincount(X.indices, weights=X.data * X.data if w is None else
                                                         w * X.data * X.data, minlength=self.d), power=2)
        if squares is None:
            scaled = X.data / self.x_scale[X.indices]
            weights = scaled * scaled if w is None else w * scaled * scaled
            squares = np.bincount(X.indices, weights=weights, minlength=self.d)
        m = self.x_mean_s + self.x_mean_delta
        return np.maximum(squares - self.sum_w * m * m, 0.0), squares

    def normal_matvec(self, pen):
        """``p -> (G + diag(pen)) p`` of sparse ``X`` without forming ``G``: ``A^T (A p)`` with ``A`` the centred,
        weighted, scaled operator of :meth:`operator` (``Xc = X / x_scale - 1 m^T``, centred implicitly).

        Computed as ``X^T u / x_scale - m sum(u)`` with ``u = S (X (p / x_scale) - m . p)``, both sparse
        products in each chunk of rows, a chunk per core (:class:`linbook._kernels.threads.RowChunks`).
        """
        s, sw = self.x_scale, self.sw
        m = self.x_mean_s + self.x_mean_delta
        pen = np.broadcast_to(np.asarray(pen, dtype=float), (self.d,))
        chunks = RowChunks(self.X)

        def rows(B, a, b, q, shift):
            u = B @ q - shift
            if sw is not None:
                u *= sw[a:b]
            return chunks.transposed(B, a) @ u, u.sum()

        def matvec(p):
            q, shift = p / s, float(m @ p)
            parts = chunks.map(lambda B, a, b: rows(B, a, b, q, shift))
            Xtu, total = sum(part[0] for part in parts), sum(part[1] for part in parts)
            return Xtu / s - m * total + pen * p

        return matvec

    # -- solving -----------------------------------------------------------------------------
    def cholesky_solve(self, pen):
        """Solve ``(G + diag(pen)) v = c`` by Cholesky of the equilibrated matrix.

        Returns ``None`` when the matrix is not numerically positive definite or its
        reciprocal condition number (after symmetric diagonal scaling, so column scales do not
        matter) is below :data:`RCOND_MIN`; the caller then falls back to an orthogonal method.
        """
        if not self.gram_built:
            return None
        if self.d == 0:
            return np.zeros(0)
        from .._kernels.cholesky import equilibrated_cholesky

        A = self.G + np.diag(np.broadcast_to(np.asarray(pen, dtype=float), (self.d,)))
        with factorisation_threads(self.d):
            factor = equilibrated_cholesky(A, RCOND_MIN)
            if factor is None:
                return None
            C, e = factor
            v, info = lapack.dpotrs(C, (self.c / e)[:, None])
        return v[:, 0] / e

    def design(self, statistics=False, column_factors=None):
        """Dense centred, weighted, scaled copy ``(Z, z)`` with ``Z^T Z = G``: the fallback's input.

        ``statistics``: ``(Z, z, Z^T z, diag(Z^T Z))``, the right-hand side and the diagonal summed over the blocks
        of the copy as each is made (conjugate gradients on the copy then read it two times fewer).
        ``column_factors``: ``Z diag(column_factors)`` instead, multiplied while each block is in cache (the
        ``N x N`` form's scaling, :func:`._base.wide_kernel`, without a pass of its own)."""
        X = self.X.toarray() if sps.issparse(self.X) else self.X
        r = None if self.sw is None else np.sqrt(self.sw)
        z = self.ys - self.y_mean_s
        z = z if r is None else z * r
        Z, c, squares = np.empty(X.shape), np.zeros(self.d), np.zeros(self.d)
        fine = bool(np.any(self.x_mean_delta))
        step = _blocks(self.n, self.d)[1] // 4          # a block of ~1 MB: its later steps find it in cache
        for i in range(0, self.n, step):                 # (each entry's operations as on the whole array)
            B = np.divide(X[i:i + step], self.x_scale, out=Z[i:i + step])
            B -= self.x_mean_s              # in place: one copy of X, not two (1000 x 10000: 44 ms -> 30 ms)
            if fine:
                B -= self.x_mean_delta
            if r is not None:
                B *= r[i:i + step, None]
            if column_factors is not None:
                B *= column_factors
            if statistics:
                with np.errstate(over="ignore", invalid="ignore"):     # (an overflow: the caller's test)
                    c += z[i:i + step] @ B
                    squares += np.einsum("ij,ij->j", B, B)
        return (Z, z, c, squares) if statistics else (Z, z)

    def operator(self):
        """``(A, z)``: ``A`` a LinearOperator for the centred, weighted, scaled X (never densified)."""
        from scipy.sparse.linalg import LinearOperator
        X, s, m = self.X.tocsr(), self.x_scale, self.x_mean_s
        r = np.ones(self.n) if self.sw is None else np.sqrt(self.sw)

        delta = self.x_mean_delta           # the means' remainder (weighted X): centred on m + delta

        def mv(v):
            v = np.ravel(v) / s
            return r * (X @ v - (m @ (v * s) + delta @ (v * s)))

        def rmv(u):
            u = r * np.ravel(u)
            return (X.T @ u) / s - (m * u.sum() + delta * u.sum())

        A = LinearOperator((self.n, self.d), matvec=mv, rmatvec=rmv, dtype=float)
        return A, r * (self.ys - self.y_mean_s)

    # -- back to original units ----------------------------------------------------------------
    def coef(self, v, model):
        with np.errstate(over="ignore", invalid="ignore"):
            w = self.y_scale * (np.asarray(v, dtype=float) / self.x_scale)
        if not np.all(np.isfinite(w)):
            raise ValueError(f"{model}: the coefficients overflow float64 (|w| > 1e308), because y is "
                             "huge relative to the features. Rescale y or the columns of X (e.g. "
                             "StandardScaler) before fitting.")
        # a coefficient that matters at the precision of y (scaled units: |v_j| above eps times the
        # spread of y) but falls below float64's normal range would move the predictions untraced
        eps, tiny = np.finfo(float).eps, np.finfo(float).tiny
        matters = np.abs(v) > eps * np.sqrt(max(self.yy, 0.0) / self.sum_w)
        if np.any(matters & (np.abs(w) < tiny)):
            raise ValueError(f"{model}: the coefficients underflow float64 (|w| < 1e-308), because y is "
                             "tiny relative to the features. Rescale y or the columns of X (e.g. "
                             "StandardScaler) before fitting.")
        return w

    def origin(self, v):
        """``(o, b_o)`` in ``X``'s and ``y``'s units: the fit as ``(x - o)^T w + b_o``, ``o`` the means of the columns
        whose mean lies more than 8 standard deviations from 0 (``linbook._design.offset_columns``; 0 for the
        others); ``None`` where no column does, or without an intercept, a Gram matrix or dense ``X``. Why:
        ``b = ybar - xbar^T w`` and ``x^T w`` are both ~``|o^T w|``, and the prediction, their difference, rounds at
        ``eps |o^T w|``: 3.5e-4 at an offset of 1e12 against the fit on ``X - 1e12``. ``o = xbar`` exactly (a power of
        two scales it), so ``b_o = ybar - ((xbar - o) + delta)^T w`` has no such term."""
        if not (self.fit_intercept and self.gram_built) or sps.issparse(self.X):
            return None
        with np.errstate(over="ignore", invalid="ignore"):
            offset = offset_columns(self.x_mean_s, np.sqrt(np.diag(self.G) / self.sum_w)) & ~self.constant
            origin = np.where(offset, self.x_mean_s, 0.0) * self.x_scale
        if not np.any(offset) or not np.all(np.isfinite(origin)):
            return None
        v = np.asarray(v, dtype=float)
        rest = np.where(offset, 0.0, self.x_mean_s) + self.x_mean_delta
        return origin, float(self.y_scale * (self.y_mean_s - rest @ v))

    def intercept(self, v):
        if not self.fit_intercept:
            return 0.0
        v = np.asarray(v, dtype=float)
        return float(self.y_scale * (self.y_mean_s - (self.x_mean_s @ v + self.x_mean_delta @ v)))

    def _gram_rss(self, v):
        """The weighted residual sum of squares of ``v`` from the Gram matrix, or None when that loses more than
        four digits to cancellation (``RSS < 1e-4 ||yc||^2``) or there is no Gram matrix."""
        if not self.gram_built:
            return None
        rss = self.yy - 2.0 * (v @ self.c) + v @ (self.G @ v)
        return float(rss) if rss >= 1e-4 * self.yy else None

    def centring_may_have_lost_rows(self, v):
        """Whether ``v`` (from the centred Gram matrix) leaves less than 1e-4 of ``||yc||^2``. A row far from the
        others in ``X`` and ``y`` (one of 1e16 on the line) holds nearly all of ``||yc||^2``, and centring by means
        it dominates keeps the other rows only to its rounding: such fits measure their rows
        (:func:`linbook.linear._far_rows.far_rows_solve`); on ordinary data few fits are this close."""
        return self.fit_intercept and self.gram_built and self._gram_rss(v) is None

    def rss_scaled(self, v):
        """Weighted residual sum of squares of ``v`` in scaled units (times ``y_scale**2``: original).

        From the Gram matrix when that is accurate (:meth:`_gram_rss`); otherwise from the residuals
        themselves, in one more pass.
        """
        rss = self._gram_rss(v)
        if rss is not None:
            return rss
        r = self.residual_scaled(v)
        return float(np.sum(r * r) if self.sw is None else self.sw @ (r * r))

    def residual_scaled(self, v):
        v = np.asarray(v, dtype=float)
        if sps.issparse(self.X):
            pred = np.asarray(self.X @ (v / self.x_scale)).ravel() - self.x_mean_s @ v
        else:
            # from the centred rows (X - m is exact): X @ v rounds each row to eps |x| |v|, which for columns
            # offset by 1e10 doubled sigma2_ of a fit whose residuals are 1e-6
            pred = np.empty(self.n)
            for i, j, Z in self._shifted_blocks(self.x_mean_s, 0, self.n):
                pred[i:j] = Z @ v
        return (self.ys - self.y_mean_s) - (pred - self.x_mean_delta @ v)


class TrainingGram:
    """The centred Gram matrix of a sparse training ``X``, formed on first use.

    After conjugate gradients on ``X`` the fit never needed it; only statistics of its spectrum
    (Ridge's ``df_``, least squares' ``rank_`` and ``singular_``) ask for it. Keeps a copy of ``X``
    until then (the caller's matrix may change after ``fit``).
    """

    def __init__(self, X, sw, fit_intercept):
        self._data = (X.copy(), None if sw is None else sw.copy(), fit_intercept)
        self._stats = None

    def statistics(self):
        """``(G, x_scale, n)``: the Gram matrix in scaled units, its column scales and the row count."""
        if self._stats is None:
            X, sw, fit_intercept = self._data
            mom = Moments(X, np.zeros(X.shape[0]), sw, fit_intercept)
            self._stats, self._data = (mom.G, mom.x_scale, mom.n), None
        return self._stats


def design_rank(X, sw, fit_intercept):
    """The numerical rank of the design ``[1, X]`` (``X`` without an intercept) over the rows of positive
    weight: how many parameters a likelihood of ``X w + b`` has (statsmodels' ``df_model + 1``, its
    ``matrix_rank`` of the design); ``None`` for sparse ``X`` of more than :data:`MAX_GRAM_FEATURES` columns.

    The weights do not enter (a row of weight 1e-300 spans a direction as a row of weight 1 does), and every
    column is scaled to unit norm first (a feature in kilometres is not "smaller" than one in millimetres).
    The equilibrated Gram matrix settles a well-conditioned design (rcond at least :data:`RCOND_MIN`);
    otherwise the singular values of the centred copy are counted above ``max(N, D) eps`` of the largest,
    as ``numpy.linalg.matrix_rank`` and ``LinearRegression``'s ``gelsd`` do. For sparse ``X`` the Gram's
    eigenvalues resolve only singular values above ``sqrt(max(N, D) eps)`` of the largest: those are counted.
    """
    found = _design_spectrum(X, sw, fit_intercept, null_space=False)
    return None if found is None else found[0]


def design_null_space(X, sw, fit_intercept):
    """``(AB, m)``: ``w - (w A) B'`` moves ``w`` to the least norm (in the units of ``X``, see :func:`_null_space`)
    along the null space of the centred design ``X - 1 m'`` over the rows of positive weight (``m``: the
    centre, zeros without an intercept; the null space's dimension ``D - r`` as :func:`design_rank` decides
    it; ``AB = (A, B)``, ``None`` at full rank). Along a null direction ``d``, ``X d`` is constant on those
    rows (equal to ``m' d``): the coefficients can move along it without changing any fitted score.

    The null space, not the row space: with columns of very different scales (1e150 beside 1) an orthonormal
    basis of the row space in the units of ``X`` loses the small columns' directions below rounding (a
    projection on it moved the fit's probabilities by 0.8), while ``w - N N' w`` changes ``w`` only along
    ``N``, each entry at its own scale."""
    _, N, m = _design_spectrum(X, sw, fit_intercept, null_space=True)
    return N, m


def _design_spectrum(X, sw, fit_intercept, null_space):
    """``(rank of [1, X], N, m)`` for :func:`design_rank` and :func:`design_null_space` (``N``: ``None`` unless
    ``null_space``, or at full rank); ``None`` for sparse ``X`` beyond :data:`MAX_GRAM_FEATURES` columns."""
    if sw is not None and not np.all(sw > 0):
        X = X[np.flatnonzero(sw > 0)]
    n, d = X.shape
    intercept = int(fit_intercept and n > 0)
    sparse = sps.issparse(X)
    if sparse and d > MAX_GRAM_FEATURES:
        return None
    tall = sparse or n >= d
    # one SYRK and one Cholesky: BLAS's threads cost more than they save on a busy machine (20,000 x 200 on
    # 2 busy cores: the 200 x 200 Cholesky took 0.24 s with them)
    with single_threaded_blas():
        mom = Moments(X, np.zeros(n), None, fit_intercept, gram=tall)
        centre = mom.x_mean_s * mom.x_scale
        if sparse:
            rank, N = gram_null_space(mom.G, n, mom.x_scale, null_space)
            return rank + intercept, N, centre
        if tall and (_well_conditioned(mom.G) or _full_rank_row_by_row(X, intercept)):
            return d + intercept, None, centre
        Z = mom.design()[0]
        unit = _unit_scale(np.linalg.norm(Z, axis=0))
        _, s, Vt = scipy.linalg.svd(Z / unit, full_matrices=True, check_finite=False)
    kept = np.zeros(d, dtype=bool)
    kept[:s.size] = s > s[:1] * max(n, d) * np.finfo(float).eps
    return int(np.count_nonzero(kept)) + intercept, _null_space(Vt[~kept].T, mom.x_scale * unit, null_space), centre


def _full_rank_row_by_row(X, intercept):
    """Whether dense ``[1, X]`` (``X`` without an intercept) has full column rank judged on its rows scaled to norm 1
    (:func:`linbook._graded_qr._full_rank_by_rows`). Why: a row 1e34 times the others makes ``X^T X`` and the
    centred copy look rank one, and the least-norm move of a logistic fit then threw the other rows' coefficients
    away (an intercept of -5.7e16 at the optimum's 0.09)."""
    Z = np.column_stack([X, np.ones(X.shape[0])]) if intercept else X
    return _full_rank_by_rows(Z, np.ones(Z.shape[0]), np.zeros(Z.shape[1]))


def gram_null_space(G, n_rows, scale, null_space=True):
    """``(rank, N)`` of a design ``Z diag(scale)`` from the Gram matrix ``G = Z^T Z`` of ``Z`` (``n_rows``
    rows; :func:`design_rank`'s rule for sparse ``X``, and for dask collections): ``G``'s size where its
    equilibrated Cholesky factor has rcond at least :data:`RCOND_MIN`, else the number of eigenvalues of the
    equilibrated ``G`` above ``max(N, D) eps`` of the largest (singular values of ``Z`` above
    ``sqrt(max(N, D) eps)`` of the largest: what the Gram resolves). ``N``: an orthonormal basis of the null
    space in the units of ``Z diag(scale)`` (``None`` at full rank, or without ``null_space``)."""
    d = G.shape[0]
    if d == 0 or _well_conditioned(G):
        return d, None
    unit = _unit_scale(np.sqrt(np.maximum(G.diagonal(), 0.0)))
    eig, vectors = np.linalg.eigh(G / unit[:, None] / unit[None, :])
    kept = eig > eig[-1] * max(n_rows, d) * np.finfo(float).eps
    return int(np.count_nonzero(kept)), _null_space(vectors[:, ~kept], scale * unit, null_space)


def _null_space(basis, scale, wanted):
    """``(A, B)`` with ``w - (w A) B'`` the least-norm move along the null space of ``Z diag(scale)``, from the
    orthonormal null basis ``basis`` of ``Z`` (``Z u = 0``); ``None`` when empty or not ``wanted``.

    In the units of ``X`` (``A = B = N``, ``N`` orthonormal spanning ``diag(1 / scale) basis``) where that basis
    is trustworthy: mapped back, ``N``'s columns must lie in ``basis``'s span to ``1e-8``. With scales 1e300
    apart it is not (a rounding-level entry of ``basis`` on a column of scale 1e-300 becomes the largest
    entry of ``N``, and the move erased a coefficient the scores need): then the least norm of ``w diag(scale)``
    (``A = diag(scale) basis``, ``B = diag(1 / scale) basis``), which keeps every score."""
    if not wanted or basis.shape[1] == 0:
        return None
    basis = null_basis_without_rounding(basis)
    N = np.linalg.qr(basis / scale[:, None])[0]
    back = N * scale[:, None]
    back /= _unit_scale(np.max(np.abs(back), axis=0))          # first to O(1): its squares may underflow
    back /= _unit_scale(np.linalg.norm(back, axis=0))
    if np.max(np.linalg.norm(back - basis @ (basis.T @ back), axis=0)) <= 1e-8:
        return N, N
    return basis * scale[:, None], basis / scale[:, None]


def null_basis_without_rounding(basis):
    """An orthonormal null basis (columns) with its entries at the SVD's or eigensolver's rounding set to the zeros
    they are to its precision. Why: mapped back to columns of other scales, a 1e-16 entry along a column of scale
    2^-60 became the largest (an all-zero column beside it got a coefficient of 5e17), and one along a coefficient
    of 1e8 steered the least norm (an all-zero column got -0.2)."""
    return np.where(np.abs(basis) <= 8 * basis.shape[0] * np.finfo(float).eps, 0.0, basis)


def _unit_scale(norms):
    return np.where(norms > 0, norms, 1.0)


def _well_conditioned(G):
    """Whether the equilibrated Cholesky factor of ``G`` has rcond at least :data:`RCOND_MIN` (full rank)."""
    from .._kernels.cholesky import equilibrated_cholesky
    return equilibrated_cholesky(G, RCOND_MIN) is not None
