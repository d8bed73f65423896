"""Row-chunk parallelism for the blocked kernels: a thread per core, one BLAS thread each.

The blocked kernels make many small BLAS calls (one per row block, sized for the
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
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext

__all__ = ["blas_threads_for_one_call", "factorisation_threads", "map_row_chunks", "single_threaded_blas"]

_CONTROLLER = []
_POOL = {}      # pid -> executor: starting threads per call costs 1-40 ms; a forked child needs its own
_LIMIT = {"depth": 0, "limiter": None}
_LOCK = threading.Lock()


def _n_cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


@contextmanager
def single_threaded_blas():
    """BLAS limited to one thread; nested or concurrent uses restore the limit only at the last exit."""
    with _LOCK:
        if _LIMIT["depth"] == 0:
            if not _CONTROLLER:
                from threadpoolctl import ThreadpoolController   # ~10 ms once: inspects the loaded BLAS
                _CONTROLLER.append(ThreadpoolController())
            _LIMIT["limiter"] = _CONTROLLER[0].limit(limits=1, user_api="blas")
        _LIMIT["depth"] += 1
    try:
        yield
    finally:
        with _LOCK:
            _LIMIT["depth"] -= 1
            if _LIMIT["depth"] == 0:
                _LIMIT["limiter"].restore_original_limits()


#: Flops of one BLAS call from which BLAS's own threads pay for themselves (a syrk of 1000 x 10000, ~1e10
#: flops, gains from them on an idle machine; 200 x 5000 on 2 shared cores: 157 ms with them, 11 ms without).
THREADED_FLOPS = 1e9


def blas_threads_for_one_call(flops):
    """BLAS's own threads for one large call (at least :data:`THREADED_FLOPS`), one thread for a smaller one."""
    return nullcontext() if flops > THREADED_FLOPS else single_threaded_blas()


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
