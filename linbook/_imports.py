"""The heavy imports of a first use, made cheaper: the cyclic collector paused, numba's unused extras skipped.

A student's first fit in a fresh kernel imports scikit-learn, SciPy and pandas (through the estimators'
``BaseEstimator``) and, on data large enough for a compiled loop, numba. Two costs of those imports do no work
for linbook:

* **The cyclic garbage collector.** An import creates many objects and keeps nearly all of them; every few
  hundred allocations Python's collector runs a young collection, and now and then a full one, which walks
  every object of the process. :func:`imported_for_good` holds it off while modules load, and then moves their
  objects to the oldest generation unwalked; linbook uses it while any of its submodules loads
  (:class:`SubmodulesForGood`, installed by ``import linbook``) and while numba is imported
  (:func:`import_numba`). :func:`collector_paused` only holds it off, while one of linbook's kernels loads or
  compiles (``linbook._kernels._cache_load``: a compile's objects are mostly garbage after it). Measured in
  fresh processes (``benchmarks/issue22_first_fit.md``, session 26), a 20,000 x 20 first-fit script (import
  ``linbook.online``, fit ``Perceptron`` and ``SGDClassifier``): 298 young and 2 full collections, 0.22-0.28 s
  CPU, before; 35 young ones, 0.011-0.015 s, after.
* **numba's optional extras.** numba imports ``coverage`` (0.09 s CPU) to report compiled lines to a coverage
  run, which it does only when ``NUMBA_JIT_COVERAGE`` is set, and ``yaml`` (0.03 s) to read a
  ``.numba_config.yaml`` in the working directory. :func:`import_numba` imports numba without them when they
  cannot be used: no such file, and ``NUMBA_JIT_COVERAGE`` unset or 0. Either library stays importable
  afterwards, and one that is already imported (a coverage run) is used as numba would use it.
"""

import contextlib
import functools
import gc
import importlib.machinery
import os
import sys


@contextlib.contextmanager
def collector_paused(*, promote=False):
    """Hold Python's cyclic garbage collector off inside the block (left off if it was off).

    ``promote=True``: then move every object to the collector's oldest generation (:func:`imported_for_good`).
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if promote:     # before the collector is on again: its first young collection would walk them all
            gc.freeze()
            gc.unfreeze()
        gc.enable()


def imported_for_good():
    """Hold the collector off while modules are imported, then move every object to its oldest generation.

    A module's objects live as long as the process. Collected young, each would be walked by the next young
    collections (0.13-0.15 s after scikit-learn's first import) for nothing; in the oldest generation only a full
    collection walks them. ``gc.freeze(); gc.unfreeze()`` is that move, with no walk. Objects of the caller's
    that were young then age too: a cycle among them is freed at the next full collection instead.
    """
    return collector_paused(promote=True)


class SubmodulesForGood:
    """A ``sys.meta_path`` finder that loads linbook's own submodules under :func:`imported_for_good`.

    It finds them as Python's path finder does, and wraps the loader's ``exec_module`` only: the loader keeps
    its type and every other method (``get_source``, resources...). Nested imports run inside the outermost
    one's pause. Every way in is covered: ``linbook.LDA``, ``from linbook import online``, ``import
    linbook.exercises``, ``from linbook.online import SGDClassifier``.
    """

    def find_spec(self, fullname, path, target=None):
        if not fullname.startswith("linbook.") or path is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is not None and hasattr(spec.loader, "exec_module"):
            spec.loader.exec_module = functools.partial(_exec_for_good, spec.loader.exec_module)
        return spec


def _exec_for_good(exec_module, module):
    with imported_for_good():
        exec_module(module)


def install_finder():
    """Put :class:`SubmodulesForGood` first in ``sys.meta_path`` (once)."""
    if not any(isinstance(finder, SubmodulesForGood) for finder in sys.meta_path):
        sys.meta_path.insert(0, SubmodulesForGood())


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
        with imported_for_good(), _not_importable(_unused_numba_extras()):
            import numba  # noqa: F401
    return sys.modules["numba"]
