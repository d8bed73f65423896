"""Count the adversarial cases so the run says how many were tried."""

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


def pytest_terminal_summary(terminalreporter):
    total = sum(_outcomes.values())
    if total:
        terminalreporter.write_line(
            "adversarial suite: {} cases tried, {passed} right or clear error, {failed} silent "
            "NaN / wrong answer / unclear error, {xfailed} expected failures".format(total, **_outcomes))
