"""pytest plugin of the notebook gate (tools/nbgate.py): records each failing nbval cell.

Loaded with ``-p nbgate_report``; writes a JSON list to ``$LINBOOK_NBGATE_REPORT`` with,
for every cell that failed, its index, its first source line, the stored and the obtained
text, and nbval's message.
"""

from __future__ import annotations

import json
import os

import pytest

_FAILED = []


def _text(outputs):
    parts = []
    for out in outputs or []:
        kind = out.get("output_type")
        if kind == "stream":
            parts.append(out.get("text", ""))
        elif kind in ("execute_result", "display_data"):
            data = out.get("data", {})
            parts.append("<figure>" if "image/png" in data and "text/plain" not in data
                         else data.get("text/plain", ""))
            if "image/png" in data and "text/plain" in data:
                parts.append("<figure>")
        elif kind == "error":
            parts.append(f"{out.get('ename')}: {out.get('evalue')}")
    return "\n".join(p.rstrip("\n") for p in parts)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    cell = getattr(item, "cell", None)
    if report.when != "call" or not report.failed or cell is None:
        return
    source = cell.get("source", "")
    first = next((line for line in source.splitlines() if line.strip()), "")
    exc = call.excinfo.value if call.excinfo else None
    _FAILED.append({
        "cell": getattr(item, "cell_num", -1),
        "first_line": first,
        "stored": _text(cell.get("outputs")),
        "obtained": _text(getattr(item, "test_outputs", None)),
        "message": " ".join(str(exc).split())[:300] if exc else "",
        "detail": (getattr(exc, "inner_traceback", "") or "")[-2000:],
    })


def pytest_sessionfinish(session):
    path = os.environ.get("LINBOOK_NBGATE_REPORT")
    if path:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(_FAILED, f)
