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
    code = ("import sys, linbook; heavy = [m for m in ('sklearn', 'scipy', 'sympy', 'matplotlib', 'numba') "
            "if m in sys.modules]; print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "", f"import linbook pulled in {out}"


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
