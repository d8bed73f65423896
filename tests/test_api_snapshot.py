"""linbook's public API is a contract with homework code: snapshot it.

``tests/api_snapshot.json`` holds ``linbook.__all__`` and the signature of every public
function, class ``__init__`` and public method (of linbook's own classes), for the top-level
names and for the namespace modules (``linbook.optim.bfgs``, ``linbook.datasets...``,
``linbook.exercises.check``). The test fails with a readable diff when the API changes:
REMOVED and CHANGED entries break students' code; ADDED entries only need the snapshot
regenerated.

Regenerate after an intended change (one line)::

    LINBOOK_UPDATE_API=1 .venv/bin/python -m pytest -q tests/test_api_snapshot.py

(or ``.venv/bin/python tests/test_api_snapshot.py --update``).
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import json
import os
import re
import sys
from pathlib import Path

import pytest

SNAPSHOT = Path(__file__).resolve().parent / "api_snapshot.json"
# Modules used as namespaces by homework code, beyond what `from linbook import *` gives.
NAMESPACES = ["numerics", "symbolic", "datasets", "plotting", "optim", "online", "exercises"]


def _sig(obj):
    try:
        s = str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(signature unavailable)"
    s = s.replace(str(SNAPSHOT.parents[1]), "<root>")  # no machine-specific paths in defaults
    return re.sub(r" at 0x[0-9a-fA-F]+", "", s)


def _describe(prefix, obj, out):
    if inspect.ismodule(obj):
        out[prefix] = "module"
        return
    if inspect.isclass(obj):
        bases = ", ".join(b.__name__ for b in obj.__bases__)
        out[prefix] = f"class({bases})"
        if "__init__" in vars(obj) or not issubclass(obj, BaseException):
            out[prefix + ".__init__"] = _sig(obj.__init__)
        for klass in reversed(obj.__mro__):
            if not klass.__module__.startswith("linbook"):
                continue
            for name, member in vars(klass).items():
                if name.startswith("_"):
                    continue
                key = f"{prefix}.{name}"
                if isinstance(member, property):
                    out[key] = "property"
                elif isinstance(member, (staticmethod, classmethod)):
                    out[key] = type(member).__name__ + _sig(member.__func__)
                elif inspect.isfunction(member):
                    out[key] = _sig(member)
        return
    if callable(obj):
        out[prefix] = _sig(obj)
        return
    out[prefix] = f"value: {type(obj).__name__}"


def current_api():
    import linbook

    api = {"__all__": sorted(linbook.__all__), "signatures": {}}
    sigs = api["signatures"]
    for name in linbook.__all__:
        _describe(f"linbook.{name}", getattr(linbook, name), sigs)
    for mod_name in NAMESPACES:
        mod = importlib.import_module(f"linbook.{mod_name}")
        names = getattr(mod, "__all__", [])
        api.setdefault("namespaces", {})[mod_name] = sorted(names)
        for name in names:
            _describe(f"linbook.{mod_name}.{name}", getattr(mod, name), sigs)
    api["signatures"] = dict(sorted(sigs.items()))
    return api


def write_snapshot(api=None):
    api = current_api() if api is None else api
    SNAPSHOT.write_text(json.dumps(api, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return api


def api_diff(old, new):
    """Readable list of changes from ``old`` to ``new`` (empty when equal)."""
    lines = []
    o, n = set(old.get("__all__", [])), set(new.get("__all__", []))
    lines += [f"REMOVED from linbook.__all__: {x}" for x in sorted(o - n)]
    lines += [f"ADDED to linbook.__all__: {x}" for x in sorted(n - o)]
    for mod in sorted(set(old.get("namespaces", {})) | set(new.get("namespaces", {}))):
        a, b = set(old.get("namespaces", {}).get(mod, [])), set(new.get("namespaces", {}).get(mod, []))
        lines += [f"REMOVED from linbook.{mod}.__all__: {x}" for x in sorted(a - b)]
        lines += [f"ADDED to linbook.{mod}.__all__: {x}" for x in sorted(b - a)]
    os_, ns = old.get("signatures", {}), new.get("signatures", {})
    for key in sorted(set(os_) | set(ns)):
        if key not in ns:
            lines.append(f"REMOVED {key}{os_[key] if os_[key].startswith('(') else ': ' + os_[key]}")
        elif key not in os_:
            lines.append(f"ADDED   {key}{ns[key] if ns[key].startswith('(') else ': ' + ns[key]}")
        elif os_[key] != ns[key]:
            lines.append(f"CHANGED {key}\n    was {os_[key]}\n    now {ns[key]}")
    return lines


def test_public_api_matches_snapshot():
    api = current_api()
    if os.environ.get("LINBOOK_UPDATE_API") == "1":
        write_snapshot(api)
        return
    assert SNAPSHOT.exists(), "no tests/api_snapshot.json: run LINBOOK_UPDATE_API=1 .venv/bin/python -m pytest tests/test_api_snapshot.py"
    old = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    changes = api_diff(old, api)
    if changes:
        breaking = sum(c.startswith(("REMOVED", "CHANGED")) for c in changes)
        pytest.fail(
            f"linbook's public API changed ({breaking} breaking, {len(changes) - breaking} added):\n  "
            + "\n  ".join(changes)
            + "\nIf intended, regenerate: LINBOOK_UPDATE_API=1 .venv/bin/python -m pytest -q tests/test_api_snapshot.py",
            pytrace=False)


def test_diff_reports_breaking_changes():
    old = {"__all__": ["f", "g"], "signatures": {"linbook.f": "(x, y=1)", "linbook.g": "(x)"}}
    new = {"__all__": ["f", "h"], "signatures": {"linbook.f": "(x, y=2)", "linbook.h": "(x)"}}
    d = api_diff(old, new)
    assert "REMOVED from linbook.__all__: g" in d and "ADDED to linbook.__all__: h" in d
    assert "REMOVED linbook.g(x)" in d and "ADDED   linbook.h(x)" in d
    assert "CHANGED linbook.f\n    was (x, y=1)\n    now (x, y=2)" in d
    assert api_diff(old, old) == []


def test_snapshot_covers_every_public_name():
    api = current_api()
    import linbook
    for name in linbook.__all__:
        assert f"linbook.{name}" in api["signatures"], name


if __name__ == "__main__":
    if "--update" in sys.argv:
        sys.path.insert(0, str(SNAPSHOT.parents[1]))
        write_snapshot()
        print(f"wrote {SNAPSHOT}")
    else:
        print("\n".join(api_diff(json.loads(SNAPSHOT.read_text()), current_api())) or "API unchanged")
