"""The heavy imports of a first use, made cheaper: the cyclic collector paused, numba's unused extras skipped.

A student's first fit in a fresh kernel imports scikit-learn, SciPy and pandas (through the estimators'
``BaseEstimator``) and, on data large enough for a compiled loop, numba. Two costs of those imports do no work
for linbook:

* **The cyclic garbage collector.** An import creates many objects and keeps nearly all of them; every few
  hundred allocations Python's collector runs, and its full collections walk every object of the process.
  :func:`collector_paused` holds it off inside a block; it runs again at the next allocation after. linbook
  pauses it while a chapter module is loaded through the package (``linbook.LDA``, ``from linbook import
  online``: ``linbook.__getattr__``), while numba is imported (:func:`import_numba`) and while one of linbook's
  kernels is loaded or compiled (``linbook._kernels._cache_load``). Measured in fresh processes
  (``benchmarks/issue22_first_fit.md``, sessions 25 and 26): importing ``linbook.online`` 2.1-2.5 s CPU with two
  full collections, 2.0-2.4 s with none; numba's import 0.39-0.50 s with 76 collections, 0.28-0.36 s with one.
* **numba's optional extras.** numba imports ``coverage`` (0.09 s CPU) to report compiled lines to a coverage
  run, which it does only when ``NUMBA_JIT_COVERAGE`` is set, and ``yaml`` (0.03 s) to read a
  ``.numba_config.yaml`` in the working directory. :func:`import_numba` imports numba without them when they
  cannot be used: no such file, and ``NUMBA_JIT_COVERAGE`` unset or 0. Either library stays importable
  afterwards, and one that is already imported (a coverage run) is used as numba would use it.
"""

import contextlib
import gc
import os
import sys


@contextlib.contextmanager
def collector_paused():
    """Hold Python's cyclic garbage collector off inside the block (left off if it was off)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _unused_numba_extras():
    """The optional libraries numba would import for nothing in this process (see the module docstring)."""
    if os.path.isfile(".numba_config.yaml"):     # it may set any option, JIT_COVERAGE too: import as numba does
        return ()
    extras = ["yaml"]
    if os.environ.get("NUMBA_JIT_COVERAGE", "0").strip() in ("", "0"):
        extras.append("coverage")
    return tuple(name for name in extras if name not in sys.modules)


@contextlib.contextmanager
def _not_importable(names):
    """``import name`` raises ImportError inside the block (as if not installed); importable again after."""
    for name in names:
        sys.modules[name] = None
    try:
        yield
    finally:
        for name in names:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]


def import_numba():
    """``import numba``, with the collector paused and without numba's extras that this process cannot use."""
    if "numba" not in sys.modules:
        with collector_paused(), _not_importable(_unused_numba_extras()):
            import numba  # noqa: F401
    return sys.modules["numba"]
