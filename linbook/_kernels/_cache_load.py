"""Load and compile linbook's kernels cheaply in a fresh process (the first fit of a process).

Two costs of numba's own path are avoided, for linbook's kernels only (functions of ``linbook.*``
modules):

* **The registry refresh.** Before it reads a cached function, numba refreshes its typing and
  lowering registries: it imports its whole library of implementations (``numba.np``,
  ``numba.cpython``, ``numba.typed``, cffi support...) and runs every third-party
  ``numba_extensions`` entry point. Loading cached machine code needs none of that, only numba's
  runtime (NRT) and the hash-secret symbols of ``numba.cpython.hashing``; a compile refreshes the
  registries itself (``numba.core.compiler``). On a fresh process this was most of the cost of the
  first cached kernel: 20,000 x 20 ``Perceptron().fit``, 0.39 s CPU for its first kernel with the
  refresh, 0.07 s without.
* **The cyclic garbage collector.** Importing numba, loading a kernel and compiling one create
  many objects (numba's import alone ~20,000 that stay), and every few hundred of them Python's
  collector runs; its full collections walk every object of the process, which by a first fit holds
  scikit-learn's, SciPy's and pandas'. numba is imported by :func:`linbook._imports.import_numba` (every
  numba kernel module of linbook imports this module before numba), and a linbook kernel loads or
  compiles under :func:`linbook._imports.collector_paused`. Session 25
  (``benchmarks/issue22_first_fit.md``), 20,000 x 20 in a fresh process: a cold perceptron compile made
  135 collections and makes none (1.45-1.59 s -> 1.08-1.24 s). The peak memory of the process did not
  change.

``install()`` (run when this module is imported) makes the loads of linbook's kernels skip the
refresh and the entry points, and runs their loads and compiles with the collector paused, on the
numba releases it was tested with (``TESTED_NUMBA``); elsewhere it does nothing. Every other
function goes through numba unchanged: a user's own ``@njit`` function in the same process still
loads and compiles as numba does it. Loaded kernels run the same machine code
(``tests/test_cache_load.py``).
"""

from .._imports import collector_paused, import_numba, imported_for_good

with imported_for_good():
    import_numba()
    from numba.core import caching, dispatcher
    from numba.core.runtime import rtsys

_numba_load_overload = caching.Cache.load_overload
_numba_init_hook = dispatcher.Dispatcher._compilation_chain_init_hook
_numba_compile = dispatcher.Dispatcher.compile


def _is_linbook(py_func):
    # a function made by exec() or a C extension may have __module__ None
    return (getattr(py_func, "__module__", None) or "").startswith("linbook.")


def _load_overload(self, sig, target_context):
    """numba's ``Cache.load_overload`` for linbook's kernels: the runtime initialised, no refresh."""
    if not _is_linbook(self._py_func):
        return _numba_load_overload(self, sig, target_context)
    import numba.cpython.hashing  # noqa: F401  (puts the hash secret in LLVM's symbol table)

    rtsys.initialize(target_context)
    with self._guard_against_spurious_io_errors():
        return self._load_overload(sig, target_context)


def _compilation_chain_init_hook(self):
    """numba runs the ``numba_extensions`` entry points before a dispatcher's first compile or load;
    linbook's kernels use no extension type, so theirs skip it (the next other dispatcher runs them)."""
    if not _is_linbook(self.py_func):
        _numba_init_hook(self)


def _compile(self, sig):
    """numba's ``Dispatcher.compile`` (a cache load or a compile), for linbook's kernels with the
    collector paused."""
    if not _is_linbook(self.py_func):
        return _numba_compile(self, sig)
    with collector_paused():
        return _numba_compile(self, sig)


# The numba releases this was tested with (the lock's): the methods it wraps are private, so on any
# other release linbook's kernels load as numba loads them.
TESTED_NUMBA = ((0, 68),)


def _tested_numba():
    import numba

    return tuple(int(part) for part in numba.__version__.split(".")[:2]) in TESTED_NUMBA


def install():
    """Patch numba's cache load, init hook and compile (once), on a tested numba that has the methods
    they wrap."""
    ok = _tested_numba() and all(hasattr(caching.Cache, name)
                                 for name in ("_load_overload", "_guard_against_spurious_io_errors"))
    if ok and caching.Cache.load_overload is _numba_load_overload:
        caching.Cache.load_overload = _load_overload
        dispatcher.Dispatcher._compilation_chain_init_hook = _compilation_chain_init_hook
        dispatcher.Dispatcher.compile = _compile


install()
