import sys
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))


def pytest_configure(config):
    config.addinivalue_line("markers", "site: checks on the built site in _build/html (make test builds it first)")


# The adversarial suite (tests/adversarial) says how many cases it tried; the hooks live here,
# in the top-level conftest, so the count is printed in every run that includes it.
_outcomes = {"passed": 0, "failed": 0, "xfailed": 0, "skipped": 0}


def pytest_runtest_logreport(report):
    if "adversarial" not in report.nodeid:
        return
    if report.when == "call":
        if hasattr(report, "wasxfail"):
            _outcomes["xfailed"] += 1
        else:
            _outcomes[report.outcome] = _outcomes.get(report.outcome, 0) + 1
    elif report.when == "setup" and report.outcome in ("failed", "skipped"):
        _outcomes[report.outcome] += 1


def pytest_terminal_summary(terminalreporter):  # noqa: D103
    total = sum(_outcomes.values())
    if total:
        terminalreporter.write_line(
            "adversarial suite: {} cases tried, {passed} right or clear error, {failed} silent "
            "NaN / wrong answer / refused valid input / unclear error, {xfailed} known defects "
            "(strict xfail)".format(total, **_outcomes))


@pytest.fixture(scope="module")
def client():
    """A local Dask cluster of 2 worker processes for one test module (the Dask tests; a module
    that needs other settings, such as tests/test_dask_scale.py's memory limit, defines its own)."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                       dashboard_address=":0", silence_logs=50)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()
