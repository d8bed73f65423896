"""linbook's cached kernels load without numba's registry refresh (``linbook._kernels._cache_load``).

Two fresh processes share an empty numba cache: the first compiles the perceptron's kernels (numba's
own path), the second loads them. The second must take the light path (numba's registries of
implementations, e.g. ``numba.np.linalg``, stay unimported), fit the same weights bit for bit, and
leave numba working for a user's own function in the same process (compiled, with its entry points).
"""

import re
import subprocess
import sys
from pathlib import Path

import linbook
from linbook._kernels import _cache_load

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = r"""
import sys, warnings
import numpy as np
import linbook
from linbook import base, perceptron

perceptron._numpy_updates_left[0] = 0      # the compiled epochs, as linbook._warm does
rng = np.random.default_rng(0)
X = rng.standard_normal((500, 6))
y = (X @ rng.standard_normal(6) + 0.3 * rng.standard_normal(500) > 0).astype(int)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    model = linbook.Perceptron(random_state=0, max_iter=20).fit(X, y)
from numba.core import entrypoints
light = "numba.np.linalg" not in sys.modules and not entrypoints._already_initialized
import numba

@numba.njit
def user_norm(v):
    return np.linalg.norm(v)

user_ok = abs(user_norm(X[0]) - np.linalg.norm(X[0])) < 1e-12 and entrypoints._already_initialized
print(light, user_ok, model.n_iter_, *(float(v).hex() for v in (*model.coef_[0], *model.intercept_)))
"""


def _run(cache_dir):
    env = {"NUMBA_CACHE_DIR": str(cache_dir), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_cached_kernels_load_light_and_fit_the_same(tmp_path):
    compiled = _run(tmp_path)
    loaded = _run(tmp_path)
    assert compiled[0] == "False", "the first process compiled, so numba's registries must be loaded"
    # on a numba outside TESTED_NUMBA (make test-min's) the patch is not installed: numba's own load
    assert loaded[0] == str(_cache_load._tested_numba()), "the light load is taken on a tested numba only"
    assert compiled[1] == loaded[1] == "True", "a user's njit function failed beside linbook's kernels"
    assert loaded[2:] == compiled[2:]


def test_an_untested_numba_keeps_its_own_load(monkeypatch):
    """The patch wraps private numba methods: on a release outside TESTED_NUMBA it is not installed."""
    import numba

    from linbook._kernels import _cache_load

    # the lock's numba is one it was tested with (a numba bump in the lock must be tested and added)
    (lock_numba,) = re.findall(r"^numba==(\d+)\.(\d+)", (ROOT / "requirements.lock").read_text(), re.M)
    assert tuple(map(int, lock_numba)) in _cache_load.TESTED_NUMBA
    monkeypatch.setattr(numba, "__version__", "%d.%d.0" % _cache_load.TESTED_NUMBA[-1])
    assert _cache_load._tested_numba()
    monkeypatch.setattr(numba, "__version__", "0.99.0")
    assert not _cache_load._tested_numba()


def test_a_user_function_without_a_module_compiles_beside_the_kernels():
    """numba compiles functions made by ``exec`` (``__module__`` None), as in a user's code generator; the
    cache patch asked ``None.startswith`` and raised AttributeError for them."""
    import numba
    import numpy as np

    import linbook._kernels.sparse_gram  # noqa: F401  (installs the patch, as any compiled kernel does)

    namespace = {"__name__": None}
    exec("def double(v):\n    return 2.0 * v\n", namespace)
    assert namespace["double"].__module__ is None
    assert numba.njit(namespace["double"])(np.arange(3.0)).tolist() == [0.0, 2.0, 4.0]


PAUSE_SCRIPT = r"""
import gc, sys, warnings
import numpy as np
import linbook
from linbook import perceptron

perceptron._numpy_updates_left[0] = 0      # the compiled epochs
numba_modules = lambda: sum(name.split(".")[0] == "numba" for name in sys.modules)
seen = []                                   # numba modules loaded at each collection, and whether a kernel compiled
compiling = [False]
gc.callbacks.append(lambda phase, info: seen.append((numba_modules(), compiling[0])) if phase == "start" else None)
import linbook._kernels.perceptron          # imports numba
imported = numba_modules()
during_import = [n for n, _ in seen if 0 < n < imported]
from numba.core import dispatcher
numba_compile = dispatcher._FunctionCompiler.compile    # the compile proper, inside Dispatcher.compile

def watched(self, args, return_type):
    compiling[0] = True
    try:
        return numba_compile(self, args, return_type)
    finally:
        compiling[0] = False

dispatcher._FunctionCompiler.compile = watched
rng = np.random.default_rng(0)
X = rng.standard_normal((500, 6))
y = (X @ rng.standard_normal(6) + 0.3 * rng.standard_normal(500) > 0).astype(int)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    linbook.Perceptron(random_state=0, max_iter=20).fit(X, y)
during_compile = sum(c for _, c in seen)
print(len(during_import), during_compile, gc.isenabled(), len(seen))
"""


def test_numba_import_and_kernel_compile_run_with_the_collector_paused(tmp_path):
    """Python's collector walks every object of the process (scikit-learn's, SciPy's...) at each full
    collection: none runs while numba is imported or a linbook kernel compiles, and it is on after."""
    # the linbook under test (also when it comes from PYTHONPATH, e.g. an old revision's worktree)
    env = {"NUMBA_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin",
           "PYTHONPATH": str(Path(linbook.__file__).parents[1])}
    out = subprocess.run([sys.executable, "-c", PAUSE_SCRIPT], env=env, capture_output=True, text=True, check=True)
    during_import, during_compile, enabled, collections = out.stdout.split()
    assert int(collections) > 0, "the collector never ran: the check would be empty"
    assert (during_import, enabled) == ("0", "True")
    # the compile is wrapped on a tested numba only (elsewhere numba's own compile runs: make test-min's 0.60)
    if _cache_load._tested_numba():
        assert during_compile == "0"
