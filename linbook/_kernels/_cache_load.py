"""Load linbook's cached kernels without numba's registry refresh (the first fit of a process).

Before it reads a cached function, numba refreshes its typing and lowering registries: it imports
its whole library of implementations (``numba.np``, ``numba.cpython``, ``numba.typed``, cffi
support...) and runs every third-party ``numba_extensions`` entry point. Loading cached machine
code needs none of that, only numba's runtime (NRT) and the hash-secret symbols of
``numba.cpython.hashing``; a compile refreshes the registries itself (``numba.core.compiler``).
On a fresh process this is most of the cost of the first cached kernel: 20,000 x 20
``Perceptron().fit``, 0.39 s CPU for its first kernel with the refresh, 0.07 s without.

``install()`` (run when this module is imported: every numba kernel module of linbook imports it,
most of them through :mod:`linbook._kernels.prefetch`) makes the loads of linbook's own kernels
(functions of ``linbook.*`` modules) skip the refresh and the entry points, on the numba releases
it was tested with (``TESTED_NUMBA``); elsewhere it does nothing. Every other function, and every compile, goes through numba unchanged: a
user's own ``@njit`` function in the same process still loads and compiles as numba does it.
Loaded kernels run the same machine code (``tests/test_cache_load.py``).
"""

from numba.core import caching, dispatcher
from numba.core.runtime import rtsys

_numba_load_overload = caching.Cache.load_overload
_numba_init_hook = dispatcher.Dispatcher._compilation_chain_init_hook


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


# The numba releases this was tested with (the lock's): the methods it wraps are private, so on any
# other release linbook's kernels load as numba loads them.
TESTED_NUMBA = ((0, 68),)


def _tested_numba():
    import numba

    return tuple(int(part) for part in numba.__version__.split(".")[:2]) in TESTED_NUMBA


def install():
    """Patch numba's cache load and init hook (once), on a tested numba that has the methods they wrap."""
    ok = _tested_numba() and all(hasattr(caching.Cache, name)
                                 for name in ("_load_overload", "_guard_against_spurious_io_errors"))
    if ok and caching.Cache.load_overload is _numba_load_overload:
        caching.Cache.load_overload = _load_overload
        dispatcher.Dispatcher._compilation_chain_init_hook = _compilation_chain_init_hook


install()
