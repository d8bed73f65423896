"""Format the code cells of the chapters' MyST sources (the book's one code style).

Usage: python tools/format_chapters.py [chapters/NN_name.md ...]   (default: every chapter)

Runs, on each source's code cells through jupytext (markdown untouched):
1. ``ruff check --fix --unsafe-fixes --select E731`` - assigned lambdas become named functions;
2. ``ruff format --line-length 100`` - one statement per line (no ``;`` chains), wrapped calls;
3. string literals and comments still over 100 columns are split at spaces (adjacent literals
   concatenate), then ``ruff format`` runs again.
``tests/test_chapter_style.py`` checks the result (E501, E702, E703, E731 and ``ruff format --check``).
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
WIDTH = 100


def _pipe(source: Path, command: str) -> None:
    subprocess.run([str(BIN / "jupytext"), "-q", "--pipe", command, "--pipe-fmt", "py:percent",
                    str(source)], check=True)


def _split_string(line: str):
    m = re.match(r'^(\s*)(f?)"(.*)"(,?\)?)$', line)
    if not m:
        return None
    indent, f, body, tail = m.groups()
    width = WIDTH - len(indent) - len(f) - 3
    parts, cur, depth = [], "", 0
    words = body.split(" ")
    for i, word in enumerate(words):
        piece = word if i == len(words) - 1 else word + " "
        if cur and depth == 0 and len(cur) + len(word) > width:
            parts.append(cur)
            cur = ""
        cur += piece
        depth += word.count("{") - word.count("}")
    parts.append(cur)
    if len(parts) == 1:
        return None
    return [f'{indent}{f if "{" in p else ""}"{p}"' + (tail if i == len(parts) - 1 else "")
            for i, p in enumerate(parts)]


def _split_comment(line: str):
    code, _, text = re.match(r"^(.*?)(\s*)#\s?(.*)$", line).groups()
    indent = re.match(r"^\s*", code).group(0)
    wrapped = [indent + "# " + t for t in textwrap.wrap(text, WIDTH - len(indent) - 2)]
    return wrapped + ([code.rstrip()] if code.strip() else [])


def wrap_long_lines(source: Path) -> int:
    lines, out, in_code, changed = source.read_text(encoding="utf-8").split("\n"), [], False, 0
    for line in lines:
        if line.startswith("```{code-cell}"):
            in_code = True
        elif line.startswith("```") and in_code:
            in_code = False
        if in_code and len(line) > WIDTH:
            new = _split_string(line)
            if new is None and "#" in line and not re.search(r'"[^"]*#', line):
                new = _split_comment(line)
            if new:
                out.extend(new)
                changed += 1
                continue
        out.append(line)
    source.write_text("\n".join(out), encoding="utf-8")
    return changed


def format_source(source: Path) -> None:
    ruff = BIN / "ruff"
    _pipe(source, f"{ruff} check -q --fix --unsafe-fixes --select E731 --stdin-filename cell.py -")
    _pipe(source, f"{ruff} format -q --line-length {WIDTH} --stdin-filename cell.py -")
    if wrap_long_lines(source):
        _pipe(source, f"{ruff} format -q --line-length {WIDTH} --stdin-filename cell.py -")


def main(argv):
    sources = [Path(a) for a in argv] or sorted((ROOT / "chapters").glob("[0-9][0-9]_*.md"))
    for s in sources:
        format_source(s)
        print(f"formatted {s}")


if __name__ == "__main__":
    main(sys.argv[1:])
