"""``import linbook`` loads numpy only; every chapter module loads on first use.

The check is on *what* is imported (no timing in unit tests): after a bare ``import linbook``
neither scikit-learn, scipy, sympy nor matplotlib is in ``sys.modules``. And the lazy name
table of ``linbook/__init__.py`` must list exactly each module's ``__all__``, so a name added
to a module cannot silently miss the top level.
"""

import importlib
import subprocess
import sys

import pytest

import linbook


def test_bare_import_loads_no_heavy_library():
    code = ("import sys, linbook; heavy = [m for m in ('sklearn', 'scipy', 'sympy', 'matplotlib', 'numba', 'dask', "
            "'distributed') "
            "if m in sys.modules]; print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "", f"import linbook pulled in {out}"


def _imported_after(code, modules):
    """Which of ``modules`` a fresh interpreter has imported after running ``code`` (comma-separated)."""
    probe = f"{code}\nimport sys; print(','.join(m for m in {modules!r} if m in sys.modules))"
    return subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip()


def test_in_memory_fits_do_not_import_dask():
    """linbook._dask is imported only when a dask collection is passed (linbook.base.is_dask)."""
    code = ("import numpy as np, linbook; rng = np.random.default_rng(0); X = rng.normal(size=(60, 3)); "
            "y = (X[:, 0] > 0).astype(int); linbook.LogisticRegression().fit(X, y).predict(X); "
            "linbook.Ridge().fit(X, X[:, 1]).predict(X); linbook.LDA().fit(X, y).predict(X); "
            "linbook.online.RecursiveLeastSquares().partial_fit(X, X[:, 1]).predict(X)")
    out = _imported_after(code, ("dask", "distributed", "linbook._dask"))
    assert out == "", f"an in-memory fit imported {out}"


def test_small_first_fits_load_no_numba():
    """The first fits of a chapter (bench_first_use's FIRST_FIT: eight estimators on 200 x 5, the
    perceptron on 2,000 x 8) run numpy only: numba (~0.4 s to import, more to load a kernel), sympy,
    matplotlib and dask stay unimported."""
    code = ("import warnings, numpy as np, linbook; from linbook import online; "
            "rng = np.random.default_rng(0); X = rng.normal(size=(200, 5)); y = X @ rng.normal(size=5); "
            "c = (y > 0).astype(int); Xp = rng.normal(size=(2000, 8)); cp = (Xp[:, 0] > 0).astype(int); "
            "warnings.simplefilter('ignore'); "
            "[m.fit(A, b).predict(A) for m, A, b in [(linbook.LinearRegression(), X, y), (linbook.Ridge(), X, y), "
            "(linbook.Lasso(lam=0.1), X, y), (linbook.LogisticRegression(), X, c), (linbook.LDA(), X, c), "
            "(linbook.QDA(), X, c), (linbook.Perceptron(random_state=0), Xp, cp), "
            "(online.SGDClassifier(random_state=0), X, c), (online.LMS(eta0=0.01, max_iter=5), X, y), "
            "(online.RecursiveLeastSquares(), X, y), (online.OnlineGradientDescent(), X, y)]]")
    out = _imported_after(code, ("numba", "sympy", "matplotlib", "dask"))
    assert out == "", f"the small first fits imported {out}"


@pytest.mark.parametrize("module", sorted(linbook._EXPORTS))
def test_lazy_table_matches_module_all(module):
    mod = importlib.import_module(f"linbook.{module}")
    expected = set(linbook._EXPORTS[module])
    if module in ("criteria", "symbolic"):          # only some of their names are top-level
        assert expected <= set(dir(mod))
    else:
        assert expected == set(mod.__all__)


def test_every_top_level_name_resolves():
    for name in linbook.__all__:
        assert getattr(linbook, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'NoSuchModel'"):
        _ = linbook.NoSuchModel
