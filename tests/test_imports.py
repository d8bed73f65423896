"""linbook's heavy imports at a first use (``linbook._imports``): the collector paused, numba's unused extras skipped.

Each check runs a fresh interpreter (what is imported, and when the collector runs, depend on the whole process).
No timing: the savings are measured in ``benchmarks/bench_first_use.py``.
"""

import subprocess
import sys

import pytest
from pathlib import Path

import linbook

# the linbook under test (also when it comes from PYTHONPATH, e.g. an old revision's worktree)
_PYTHONPATH = str(Path(linbook.__file__).parents[1])


def _run(code, cwd=None, **env):
    full_env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": _PYTHONPATH, **env}
    return subprocess.run([sys.executable, "-c", code], env=full_env, cwd=cwd, capture_output=True, text=True,
                          check=True).stdout.split()


NUMBA_EXTRAS = """
import importlib, sys
from linbook._imports import import_numba
numba = import_numba()
imported = [name for name in ("coverage", "yaml") if name in sys.modules]
# numba works, and both libraries can still be imported by the user
assert numba.njit(lambda x: 2 * x)(21) == 42
for name in ("coverage", "yaml"):
    importlib.import_module(name)
try:
    from numba.misc.coverage_support import coverage_available     # numba >= 0.61 reports to coverage runs
except ImportError:
    coverage_available = "old-numba"
print(",".join(imported) or "-", coverage_available, numba.config.DISABLE_PERFORMANCE_WARNINGS)
"""


def _extras(*names):
    """The extras these tests import must be installed (the lock has both; ``make test-min``'s has neither)."""
    for name in names:
        pytest.importorskip(name)


def _reports(expected):
    """What ``coverage_support.coverage_available`` should say, on a numba that has it."""
    from importlib.util import find_spec

    return str(expected) if find_spec("numba.misc.coverage_support") else "old-numba"


def test_numba_is_imported_without_coverage_and_yaml_when_it_cannot_use_them(tmp_path):
    _extras("coverage", "yaml")
    assert _run(NUMBA_EXTRAS, cwd=tmp_path) == ["-", _reports(False), "0"]


def test_numba_imports_coverage_when_asked_to_report_compiled_lines(tmp_path):
    _extras("coverage", "yaml")
    assert _run(NUMBA_EXTRAS, cwd=tmp_path, NUMBA_JIT_COVERAGE="1")[:2] == [
        "coverage" if _reports(True) == "True" else "-", _reports(True)]


def test_numba_reads_its_config_file_with_yaml(tmp_path):
    _extras("coverage", "yaml")
    (tmp_path / ".numba_config.yaml").write_text("disable_performance_warnings: 1\n")
    imported, reports, disabled = _run(NUMBA_EXTRAS, cwd=tmp_path)
    assert ("yaml" in imported.split(","), reports, disabled) == (True, _reports(True), "1")


def test_a_coverage_run_already_under_way_keeps_numba_reporting_to_it(tmp_path):
    _extras("coverage", "yaml")
    assert _run("import coverage\n" + NUMBA_EXTRAS, cwd=tmp_path) == ["coverage", _reports(True), "0"]


FIRST_USE = """
import gc, sys, weakref
import linbook
class Node: pass
cycle = Node(); cycle.self = cycle                 # a user's garbage cycle, young when linbook loads
freed = []; weakref.finalize(cycle, freed.append, True); del cycle
collections = []
gc.callbacks.append(lambda phase, info: collections.append(info["generation"]) if phase == "start" else None)
WAY_IN        # loads a chapter module, and with it scikit-learn, SciPy...
loaded = "sklearn" in sys.modules and "scipy" in sys.modules
during = len(collections)
young = len(gc.get_objects(0)) + len(gc.get_objects(1))
del gc.callbacks[-1]
gc.collect()
print(loaded, during, young < 5000, gc.isenabled(), gc.get_freeze_count(), freed == [True])
"""


@pytest.mark.parametrize("way_in", ["linbook.LDA", "from linbook import online",
                                    "from linbook.online import SGDClassifier", "import linbook.selection"])
def test_a_chapter_module_loads_without_collections_and_its_objects_go_to_the_oldest_generation(way_in):
    """No collection while scikit-learn & co. load (their objects live as long as the process, and go to the
    oldest generation unwalked), nothing stays frozen, the collector is on after, a user's cycle is still freed."""
    loaded, during, few_young, enabled, frozen, freed = _run(FIRST_USE.replace("WAY_IN", way_in))
    assert (loaded, enabled, frozen, freed) == ("True", "True", "0", "True")
    assert during == "0"
    assert few_young == "True"


def test_submodules_keep_their_loaders():
    """Only ``exec_module`` is wrapped: the loader keeps its type, sources and line numbers stay readable."""
    code = ("import importlib.machinery, inspect, linbook.online.lms as lms; "
            "print(type(lms.__loader__) is importlib.machinery.SourceFileLoader, "
            "'class LMS' in inspect.getsource(lms), lms.__spec__.origin == lms.__file__)")
    assert _run(code) == ["True", "True", "True"]


def test_a_paused_collector_stays_paused():
    code = ("import gc, linbook; gc.disable(); linbook.LDA; from linbook._imports import import_numba; "
            "import_numba(); print(gc.isenabled(), gc.get_freeze_count())")
    assert _run(code) == ["False", "0"]
