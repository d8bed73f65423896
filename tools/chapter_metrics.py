"""Measure how close each chapter source is to "chapter sources as text" (issue 20, item 4).

Usage: python tools/chapter_metrics.py [--cells] [chapters/NN_name.md ...]   (default: every chapter)

Per chapter it counts, on the MyST source (code cells parsed with ``ast``, nothing executed):

* ``max/cell``: the most checks in one code cell, and ``cells>N``: the code cells with more
  than ``MAX_CHECKS_PER_CELL`` checks that carry no ``# several checks: <reason>`` comment;
* ``multiline``: checks written over more than one line (``check_...(`` to its ``)``);
* ``print(check)``: checks wrapped in ``print`` (a check prints itself);
* ``prose``: prose lines that do not end a sentence (lines ``tools/sentence_lines.py`` would move);
* ``private``: uses of linbook names outside the public API (``linbook.__all__`` and the
  namespace modules of ``tests/api_snapshot.json``, plus ``linbook.book``).

A check is a call of a function whose name starts with ``check_`` (``linbook.symbolic``'s
checkers, ``check_fails`` and ``check_differs`` included). ``--cells`` lists the offending
cells by their first line. ``tests/test_chapter_style.py`` runs the same functions.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: A check cell shows one claim. A family of checks of one claim (one identity over three shapes,
#: a gradient with its Hessian and its value at the mode) fits in three; more needs a reason.
MAX_CHECKS_PER_CELL = 3
#: The comment that lets a cell hold more checks; the reason follows the colon.
SEVERAL_CHECKS = re.compile(r"^\s*# several checks: \S", re.M)
#: Public modules beyond the API snapshot's: the glue helper chapters quote numbers with.
EXTRA_PUBLIC_MODULES = {"book"}


def code_cells(source: Path) -> list[str]:
    """The code of each code cell of a MyST source, in order (cell options removed)."""
    cells, current = [], None
    for line in source.read_text(encoding="utf-8").split("\n"):
        if current is None and line.startswith("```{code-cell}"):
            current = []
        elif current is not None and line.startswith("```"):
            cells.append("\n".join(current))
            current = None
        elif current is not None:
            current.append(line)
    # cell options: ":key: value" lines, or a YAML block between "---" lines
    return [re.sub(r"\A(?:(?::[\w-]+:[^\n]*\n)+|---\n.*?\n---\n)", "", cell, flags=re.S) for cell in cells]


def _parse(code: str) -> ast.Module:
    # IPython magics and shell lines are not Python; keep the line numbers.
    return ast.parse(re.sub(r"(?m)^(\s*)[%!].*$", r"\1pass", code))


def _called_name(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")


def checks(code: str) -> list[ast.Call]:
    """The check calls of one cell (a check passed as an argument is not a call)."""
    return [node for node in ast.walk(_parse(code))
            if isinstance(node, ast.Call) and _called_name(node).startswith("check_")]


def printed_checks(code: str) -> int:
    return sum(1 for node in ast.walk(_parse(code)) if isinstance(node, ast.Call)
               and _called_name(node) == "print" and any(
                   isinstance(a, ast.Call) and _called_name(a).startswith("check_") for a in node.args))


def public_api() -> tuple[set[str], dict[str, set[str]]]:
    """``linbook.__all__`` and the names of each public namespace module."""
    snapshot = json.loads((ROOT / "tests" / "api_snapshot.json").read_text(encoding="utf-8"))
    namespaces = {name: set(members) for name, members in snapshot["namespaces"].items()}
    for name in EXTRA_PUBLIC_MODULES:
        namespaces.setdefault(name, None)  # every name of these modules
    return set(snapshot["__all__"]), namespaces


def _is_public(dotted: str, top: set[str], namespaces: dict) -> bool:
    parts = dotted.split(".")[1:]  # after "linbook"
    if not parts:
        return True
    if parts[0] in namespaces:
        members = namespaces[parts[0]]
        return len(parts) == 1 or members is None or parts[1] in members
    return len(parts) == 1 and parts[0] in top


def _dotted(node) -> str | None:
    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(names)])
    return None


def private_uses(code: str, top: set[str], namespaces: dict) -> list[str]:
    """The linbook names one cell uses that are not public (imports and ``linbook.a.b`` chains)."""
    used = []
    for node in ast.walk(_parse(code)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "linbook":
            used += [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            used += [a.name for a in node.names if a.name.split(".")[0] == "linbook"]
        elif isinstance(node, ast.Attribute):
            dotted = _dotted(node)
            if dotted and dotted.startswith("linbook."):
                used.append(dotted)
    # an attribute chain also yields its prefixes (linbook.a, linbook.a.b); judge the longest
    used = [u for u in used if not any(v.startswith(u + ".") for v in used)]
    return sorted({u for u in used if not _is_public(u, top, namespaces)})


def prose_lines_mid_sentence(source: Path) -> int:
    """Lines of prose that tools/sentence_lines.py would join or break."""
    sys.path.insert(0, str(ROOT / "tools"))
    import difflib

    import sentence_lines

    old = source.read_text(encoding="utf-8").split("\n")
    new = sentence_lines.reflow("\n".join(old)).split("\n")
    return sum(1 for line in difflib.ndiff(old, new) if line.startswith("- "))


def measure(source: Path) -> dict:
    """The counts of one chapter source, and the offending cells (index, first line, what)."""
    top, namespaces = public_api()
    counts = {"checks": 0, "max/cell": 0, "cells>N": 0, "multiline": 0, "print(check)": 0,
              "prose": prose_lines_mid_sentence(source), "private": 0}
    offenders = []
    for index, code in enumerate(code_cells(source)):
        first = next((ln for ln in code.split("\n") if ln.strip()), "")
        calls = checks(code)
        counts["checks"] += len(calls)
        counts["max/cell"] = max(counts["max/cell"], len(calls))
        if len(calls) > MAX_CHECKS_PER_CELL and not SEVERAL_CHECKS.search(code):
            counts["cells>N"] += 1
            offenders.append((index, first, f"{len(calls)} checks"))
        spread = [c for c in calls if c.end_lineno > c.lineno]
        counts["multiline"] += len(spread)
        offenders += [(index, first, f"multi-line check at cell line {c.lineno}") for c in spread]
        counts["print(check)"] += printed_checks(code)
        private = private_uses(code, top, namespaces)
        counts["private"] += len(private)
        offenders += [(index, first, f"non-public {name}") for name in private]
    return {"counts": counts, "offenders": offenders}


def main(argv):
    cells = "--cells" in argv
    sources = ([Path(a) for a in argv if a != "--cells"]
               or sorted((ROOT / "chapters").glob("[0-9][0-9]_*.md")))
    keys = None
    totals = {}
    for source in sources:
        result = measure(source)
        keys = keys or list(result["counts"])
        if source is sources[0]:
            print(f"{'chapter':<32}" + "".join(f"{k:>14}" for k in keys))
        print(f"{source.stem:<32}" + "".join(f"{result['counts'][k]:>14}" for k in keys))
        for k, count in result["counts"].items():
            combine = max if k == "max/cell" else sum
            totals[k] = combine((totals.get(k, 0), count))
        if cells:
            for index, first, what in result["offenders"]:
                print(f"    cell {index:>3}  {what:<40} {first[:60]}")
    print(f"{'total':<32}" + "".join(f"{totals[k]:>14}" for k in keys))


if __name__ == "__main__":
    main(sys.argv[1:])
