"""BLAS's threads in linbook: one BLAS thread in a fit, and the cores used by row chunks instead.

**The policy.** Every estimator's training method (``fit``, ``partial_fit``: :func:`linbook.base.all_or_nothing`,
:func:`linbook.online._stream.transactional`) runs under :func:`fit_blas_threads`: on data of at least
:data:`FIT_ONE_THREAD_ENTRIES` entries, BLAS runs one thread, and single calls of more than
:data:`THREADED_FLOPS` lift it (:func:`blas_threads_for_one_call`). The caller's thread count is restored on the
way out, failed fits and fits from several Python threads included. Earlier per-call limits
(:func:`factorisation_threads`, the solvers' and selection helpers' :func:`single_threaded_blas`) stay for the
public functions that run the same code outside an estimator (``irls``, ``laplace_approximation``,
``loocv_ridge`` ...); inside a fit they nest harmlessly.

**Row chunks.** The blocked kernels make many small BLAS calls (one per row block, sized for the
cache). A multi-threaded BLAS synchronises its threads inside every call, and on a
busy machine a call waits for a descheduled sibling thread: measured 7x slower than
single-threaded BLAS on 2 shared cores. Splitting the rows into contiguous chunks, run
in Python threads (numpy and BLAS release the GIL, a thread per core) with BLAS limited
to one thread, uses the cores of an idle machine and degrades gracefully on a busy one.

The chunks depend on the number of rows only, never on the number of cores: the chunks'
partial sums are added in the same order on every machine, so a result is the same to
the last bit on 1 core or 64 (a stored notebook output must not depend on the reader's
CPU count; ``tests/test_kernels_rows.py`` checks it).

    map_row_chunks(fn, n_rows) == [fn(a_k, b_k) for the chunks [a_k, b_k) of range(n_rows)]

Sparse ``X`` takes the same chunks through :class:`RowChunks`: scipy's sparse products are serial, but
release the GIL, so a chunk of rows per core runs them at once (``X @ V`` row by row, ``X^T S`` as the
chunks' partial sums in order).
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext

import numpy as np

__all__ = ["RowChunks", "blas_own_threads", "blas_threads_for_one_call", "factorisation_threads",
           "fit_blas_threads", "map_row_chunks", "single_threaded_blas"]

_POOL = {}      # pid -> executor: starting threads per call costs 1-40 ms; a forked child needs its own
_LOCK = threading.Lock()
_MODES = threading.local()  # this Python thread's stack of modes: True one thread, False BLAS's own threads
# the Python threads whose innermost mode is one thread; the thread counts to restore; each loaded BLAS
# library's (get, set) of its thread count, found once
_STATE = {"limiting": 0, "saved": None, "libraries": None}


def _n_cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _blas_libraries():
    """The loaded BLAS libraries' thread-count getters and setters (threadpoolctl's scan, ~7 ms, once).

    threadpoolctl's own ``set_num_threads`` ignores a call from any Python thread but the one that first set a
    limit (so that threads do not fight over OpenBLAS's process-wide pool). This module keeps the process's
    state itself, under a lock, and may restore from another thread than the one that limited (a fit in a
    thread pool): so it calls the library's own setter where threadpoolctl has one.
    """
    if _STATE["libraries"] is None:
        import scipy.linalg  # noqa: F401  (scipy's own BLAS is loaded before the scan)
        from threadpoolctl import ThreadpoolController

        _STATE["libraries"] = [(library.get_num_threads,
                                getattr(library, "_real_set_num_threads", library.set_num_threads))
                               for library in ThreadpoolController().select(user_api="blas").lib_controllers]
    return _STATE["libraries"]


def _apply():
    """Limit every BLAS library to one thread while any Python thread's innermost mode asks for it; restore
    the counts found before (the user's) when none does. Called under :data:`_LOCK`."""
    if _STATE["limiting"] and _STATE["saved"] is None:
        _STATE["saved"] = [get() for get, _ in _blas_libraries()]
        for _, set_threads in _STATE["libraries"]:
            set_threads(1)
    elif not _STATE["limiting"] and _STATE["saved"] is not None:
        for (_, set_threads), n in zip(_STATE["libraries"], _STATE["saved"]):
            if n is not None:
                set_threads(n)
        _STATE["saved"] = None


@contextmanager
def _blas_mode(one_thread):
    """Enter a BLAS-threads mode with stack semantics: the innermost mode of a Python thread is its wish, and
    BLAS runs one thread while any Python thread wishes it (two threads calling BLAS at once want one each)."""
    stack = _MODES.__dict__.setdefault("stack", [])
    with _LOCK:
        before = bool(stack) and stack[-1]
        stack.append(one_thread)
        _STATE["limiting"] += one_thread - before
        _apply()
    try:
        yield
    finally:
        with _LOCK:
            stack.pop()
            _STATE["limiting"] += (bool(stack) and stack[-1]) - one_thread
            _apply()


def single_threaded_blas():
    """BLAS limited to one thread inside the block (nested and concurrent uses compose: see :func:`_blas_mode`)."""
    return _blas_mode(True)


def blas_own_threads():
    """BLAS's own threads inside the block, lifting an enclosing :func:`single_threaded_blas` of this Python
    thread (not another thread's: two threads calling BLAS at once keep one BLAS thread each)."""
    return _blas_mode(False)


#: Entries of ``X`` from which a fit runs on one BLAS thread (:func:`fit_blas_threads`). Below it BLAS splits
#: no call anyway (OpenBLAS threads a product from ~10^4-10^5 multiply-adds) and the limit's ~5 us would show
#: in a loop of tiny fits.
FIT_ONE_THREAD_ENTRIES = 1 << 14


def fit_blas_threads(X):
    """linbook's BLAS policy for a fit on ``X``: one BLAS thread, except single large calls, which lift it
    (:func:`blas_threads_for_one_call`); small ``X`` leaves BLAS as the caller set it.

    Why: a fit is many mid-sized BLAS calls (a pass over row blocks, a k x k solve, the vector algebra of a
    solver step), and a multi-threaded BLAS synchronises its threads inside each. On an idle machine the second
    thread gains little in them; on a busy one (a 2-vCPU CI runner with a neighbour, a laptop with a browser
    open) a call waits for a descheduled sibling: at 5000 x 50 on 2 shared cores, two BLAS threads made LDA
    3.6x slower, QDA 3.4x, RDA 28x, FisherLDA 26x, GaussianNaiveBayes 20x, LinearRegression 21x, the
    multinomial LogisticRegression 3.5x (``benchmarks/issue22_first_fit.md``, session 21). The cores are used
    instead by the row chunks' Python threads (:func:`map_row_chunks`), whose count does not change the result.
    A list or other input without ``size`` is treated as large. Where threadpoolctl finds no BLAS library to
    control (a version older than the BLAS build numpy ships), the policy does nothing.
    """
    size = getattr(X, "size", None)
    if isinstance(size, (int, np.integer)) and size < FIT_ONE_THREAD_ENTRIES:
        return nullcontext()
    return single_threaded_blas()


#: Flops of one BLAS call from which BLAS's own threads pay for themselves (a syrk of 1000 x 10000, ~1e10
#: flops, gains from them on an idle machine; 200 x 5000 on 2 shared cores: 157 ms with them, 11 ms without).
THREADED_FLOPS = 1e9


def blas_threads_for_one_call(flops):
    """BLAS's own threads for one large call (at least :data:`THREADED_FLOPS`: lifting a fit's one-thread
    policy, :func:`fit_blas_threads`), one thread for a smaller one."""
    return blas_own_threads() if flops > THREADED_FLOPS else single_threaded_blas()


def factorisation_threads(n):
    """One BLAS thread for a LAPACK factorisation (Cholesky, triangular solves) of ``n >= 128`` columns.

    A blocked factorisation is many mid-sized BLAS calls, each synchronising BLAS's threads: on 2 shared
    busy cores a 2000 x 2000 Cholesky took 1.6-2.9 s with two threads against 0.10-0.14 s with one, a
    1000 x 1000 one 1.2 s against ~0.03 s, and (session 18, ``equilibrated_cholesky``) 400 x 400 20 ms
    against 3.3 ms, 200 x 200 1.9 ms against 0.6 ms. At 101 columns two threads were as fast (67 us against
    88 us with the limit's ~15-30 us), and below BLAS runs about one thread anyway.
    """
    return single_threaded_blas() if n >= 128 else nullcontext()


#: The most row chunks of a pass: a fixed number (see the module docstring), the cores of most machines
#: that run the book. On 2 cores, 8 chunks of a logistic fit's passes cost the same as 2 (20k x 20 to
#: 200k x 20, L-BFGS: within 4 %, either way).
ROW_CHUNKS = 8


def map_row_chunks(fn, n_rows, *, min_rows=4096, parallel=True):
    """Results of ``fn(a, b)`` on contiguous row chunks covering ``range(n_rows)``, in order: at most
    :data:`ROW_CHUNKS` chunks of at least ``min_rows`` rows, whatever the number of cores.

    Inputs of fewer than ``2 * min_rows`` rows (or ``parallel=False``) run as one call,
    with the caller's BLAS threading untouched.
    """
    n_chunks = max(1, min(ROW_CHUNKS, n_rows // min_rows)) if parallel else 1
    if n_chunks == 1 and n_rows < 2 * min_rows:
        return [fn(0, n_rows)]
    bounds = [n_rows * k // n_chunks for k in range(n_chunks + 1)]
    with single_threaded_blas():
        if n_chunks == 1:
            return [fn(0, n_rows)]
        pool = _POOL.get(os.getpid())
        if pool is None:
            _POOL.clear()
            pool = _POOL[os.getpid()] = ThreadPoolExecutor(_n_cores(), thread_name_prefix="linbook")
        return list(pool.map(lambda k: fn(bounds[k], bounds[k + 1]), range(n_chunks)))


#: Sparse ``X`` of at least this many stored entries runs its Hessian a chunk of rows per core (``hessian.py``):
#: below it the ~0.3 ms of handing chunks to the threads costs more than they save (100k x 2000 at 0.5 %: 1.6 ms
#: a product on 2 busy cores against 2.6 ms in one piece).
THREADED_NNZ = 1 << 18

#: ... and its products ``X @ V``, ``X^T S`` (:class:`RowChunks`) from this many: a product is less work per stored
#: entry than a Hessian. Session 26, 20k x 20k text at 265k entries on 2 idle cores: ``X @ v`` 0.56 ms in 4
#: chunks against 0.41 ms in one piece; 400k x 200 at 800k entries 3.16 against 4.11 ms.
THREADED_PRODUCT_NNZ = 1 << 19

#: ``X^T S`` runs in chunks only where each chunk holds this many stored entries per column of ``X``: each
#: chunk's product is a full ``(D, k)`` array, and adding them costs ``D`` per chunk. Session 26, 2 idle cores,
#: ``X^T s`` chunked against one piece: 400k x 200 (500 entries per column in a chunk) 3.05 against 3.59 ms;
#: 100k x 2000 (62) 1.83 against 1.56 ms; 100k x 50k text (7) 4.9 against 4.7 ms; 20k x 20k text (3) 0.81
#: against 0.37 ms.
TDOT_ENTRIES_PER_COLUMN = 128

#: ... or this many, where ``S`` has at least :data:`TDOT_WIDE_COLUMNS` columns: the threads' fixed cost is then
#: shared by ``k`` products while the additions grow with ``k`` like the products. Session 28, 2 idle cores,
#: 50k x 5000 at 1 % (62 entries per column in a chunk), one piece against chunks: ``k = 1`` 2.99 against
#: 2.73 ms, ``k = 4`` 4.63 against 3.91, ``k = 9`` 8.10 against 5.47, ``k = 49`` (the multinomial Hessian
#: product of 50 classes) 43.4 against 30.2 ms; 100k x 50k text (7): ``k = 9`` 11.05 against 10.98 ms.
TDOT_WIDE_ENTRIES_PER_COLUMN = 32
TDOT_WIDE_COLUMNS = 4


class RowChunks:
    """The products ``X @ V`` and ``X^T S`` of a matrix, a chunk of rows per core for sparse ``X``.

    Why: scipy's sparse products run on one core, but release the GIL. CSR ``X`` of at least
    :data:`THREADED_PRODUCT_NNZ` stored entries is cut once into the row chunks of :func:`map_row_chunks` (views of
    its arrays, no copy), and each product runs them in its threads: ``X @ V`` fills each chunk's rows (the
    same numbers as one call), ``X^T S`` adds the chunks' ``X_k^T S_k`` in order (a fixed order: the same
    bits on any core count) where the chunks are tall enough (:data:`TDOT_ENTRIES_PER_COLUMN`, or :data:`TDOT_WIDE_ENTRIES_PER_COLUMN` for
    ``S`` of several columns; both depend on the shapes only, so the bits do not depend on the machine). Dense, small
    or non-CSR ``X``: one call, with BLAS's own threads.
    """

    def __init__(self, X):
        import scipy.sparse as sps

        self.X, self.n = X, X.shape[0]
        self.chunked = sps.issparse(X) and X.format == "csr" and X.nnz >= THREADED_PRODUCT_NNZ
        bounds = map_row_chunks(lambda a, b: (a, b), self.n) if self.chunked else [(0, self.n)]
        self.chunked = len(bounds) > 1
        self.blocks = {a: _csr_rows(X, a, b) if self.chunked else X for a, b in bounds}
        # stored entries per column in a chunk
        per_column = X.nnz / max(X.shape[1] * len(bounds), 1) if self.chunked else 0.0
        self.chunked_tdot = self.chunked and per_column >= TDOT_ENTRIES_PER_COLUMN
        self.chunked_wide_tdot = self.chunked and per_column >= TDOT_WIDE_ENTRIES_PER_COLUMN
        self._transposes = {}

    def map(self, fn):
        """``[fn(X_k, a_k, b_k)]`` over the chunks ``X_k = X[a_k:b_k]``, in order (one call on all of ``X``
        unless chunked)."""
        if not self.chunked:
            return [fn(self.X, 0, self.n)]
        return map_row_chunks(lambda a, b: fn(self.blocks[a], a, b), self.n)

    def dot(self, V):
        """``X @ V``."""
        if not self.chunked:
            return self.X @ V
        V = np.ascontiguousarray(V)            # (scipy would copy a transposed V for each chunk)
        out = np.empty((self.n,) + V.shape[1:])

        def rows(B, a, b):
            out[a:b] = B @ V

        self.map(rows)
        return out

    def transposed(self, B, a):
        """``B.T`` of the chunk ``B`` starting at row ``a`` (or of the whole ``X``), made once: scipy builds a new CSC
        wrapper, with its index checks, on each ``.T`` (60 us; a CG on sparse 2000 x 20000 made 31 of them, 6 %
        of its time)."""
        key = None if B is self.X else a
        if key not in self._transposes:
            self._transposes[key] = B.T
        return self._transposes[key]

    def tdot(self, S):
        """``X^T S``."""
        wide = np.ndim(S) == 2 and np.shape(S)[1] >= TDOT_WIDE_COLUMNS
        if not (self.chunked_wide_tdot if wide else self.chunked_tdot):
            return self.transposed(self.X, 0) @ S
        parts = self.map(lambda B, a, b: self.transposed(B, a) @ S[a:b])
        total = parts[0].copy()
        for part in parts[1:]:
            total += part
        return total


def _csr_rows(X, a, b):
    """Rows ``a:b`` of CSR ``X`` as a CSR matrix on views of its arrays (``X[a:b]`` copies them)."""
    import scipy.sparse as sps

    start, stop = X.indptr[a], X.indptr[b]
    return sps.csr_matrix((X.data[start:stop], X.indices[start:stop], X.indptr[a:b + 1] - start),
                          shape=(b - a, X.shape[1]), copy=False)
