"""Format the code cells of the chapters' MyST sources (the book's one code style).

Usage: python tools/format_chapters.py [chapters/NN_name.md ...]   (default: every chapter)

Runs, on each source's code cells through jupytext (markdown untouched):
0. ``tools/one_line_checks.py`` - a check spread over several lines becomes one line, its long
   arguments named on the lines above (the line length rule cannot spread it again);
1. ``ruff check --fix --unsafe-fixes --select E731`` - assigned lambdas become named functions;
2. ``ruff format --line-length 100`` - one statement per line (no ``;`` chains), wrapped calls;
3. string literals and comments still over 100 columns are split at spaces (adjacent literals
   concatenate), then ``ruff format`` runs again.
``tests/test_chapter_style.py`` checks the result (E501, E702, E703, E731 and ``ruff format --check``).

With ``--tag-checks`` it also applies the book's page design, "read first, check second": a
code cell whose every output line is a check result (``ok  ...``) is a pure check cell, so it
gets the ``hide-input`` tag (the page shows its one-line results and folds the code behind
"Show code cell source"). It reads the generated notebooks to decide, so run
``make notebooks`` first. ``tests/test_notebook_sources.py`` checks the tags.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from one_line_checks import one_line_checks  # noqa: E402

BIN = Path(sys.executable).parent
WIDTH = 100


def width(text: str) -> int:
    """Columns the text takes as ruff counts them (a CJK character is two)."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pipe(source: Path, command: str) -> None:
    subprocess.run([str(BIN / "jupytext"), "-q", "--pipe", command, "--pipe-fmt", "py:percent",
                    str(source)], check=True)


def _pieces(body: str):
    """Split an f-string body where a split is safe: after a space or a replacement field
    at brace depth 0 (never inside ``{...}``)."""
    pieces, cur, depth = [], "", 0
    for ch in body:
        cur += ch
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if depth == 0 and (ch == " " or ch == "}"):
            pieces.append(cur)
            cur = ""
    return pieces + ([cur] if cur else [])


def _split_string(line: str):
    m = re.match(r'^(\s*)(\w+=|\w+ = )?(f?)"(.*)"(,?\)?)$', line)
    if not m:
        return None
    indent, kw, f, body, tail = m.groups()
    if kw and kw.endswith(" = "):  # an assignment: parenthesise the pieces
        kw = kw[:-1]
    inner = indent + ("    " if kw else "")
    room = WIDTH - len(inner) - len(f) - 3
    parts, cur = [], ""
    for piece in _pieces(body):
        if cur and width(cur) + width(piece) > room:
            parts.append(cur)
            cur = ""
        cur += piece
    parts.append(cur)
    if len(parts) == 1 and not kw:
        return None
    lines = [f'{inner}{f if "{" in p else ""}"{p}"' for p in parts]
    if kw:
        return [f"{indent}{kw}("] + lines + [f"{indent}){tail}"]
    lines[-1] += tail
    return lines


def _split_comment(line: str):
    indent, code, text = re.match(r"^(\s*)(.*?)\s*#\s?(.*)$", line).groups()
    wrapped = [indent + "# " + t for t in textwrap.wrap(text, WIDTH - len(indent) - 2)]
    return wrapped + ([indent + code.rstrip()] if code.strip() else [])


def wrap_long_lines(source: Path) -> int:
    lines, out, in_code, changed = source.read_text(encoding="utf-8").split("\n"), [], False, 0
    for line in lines:
        if line.startswith("```{code-cell}"):
            in_code = True
        elif line.startswith("```") and in_code:
            in_code = False
        if in_code and width(line) > WIDTH:
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
    # a check is one line: name its long pieces above it, so ruff has nothing to spread
    one_line_checks(source)
    ruff = BIN / "ruff"
    fix_lambdas = f"{ruff} check -q --exit-zero --fix --unsafe-fixes --select E731 --stdin-filename cell.py -"
    reformat = f"{ruff} format -q --line-length {WIDTH} --stdin-filename cell.py -"
    # twice: a lambda inside a `;` chain can only be rewritten once the chain is split
    for command in (fix_lambdas, reformat, fix_lambdas, reformat):
        _pipe(source, command)
    if wrap_long_lines(source):
        _pipe(source, reformat)


def is_check_output(outputs) -> bool:
    """True when a cell's outputs are only check results (``ok  ...`` lines and their wraps)."""
    lines = []
    for out in outputs:
        if out.get("output_type") == "stream":
            lines += out.get("text", "").splitlines()
        elif out.get("output_type") == "execute_result" and set(out.get("data", {})) == {"text/plain"}:
            lines += out["data"]["text/plain"].splitlines()
        else:
            return False
    lines = [ln for ln in lines if ln.strip()]
    return bool(lines) and lines[0].startswith("ok  ") and all(
        ln.startswith("ok  ") or ln.startswith("    ") for ln in lines)


def tag_check_cells(source: Path) -> int:
    import jupytext
    import nbformat

    notebook = nbformat.read(source.with_suffix(".ipynb"), as_version=4)
    text = jupytext.read(source, fmt="md:myst")
    if len(notebook.cells) != len(text.cells):
        raise SystemExit(f"{source}: notebook out of date; run make notebooks first")
    tagged = 0
    for cell, run in zip(text.cells, notebook.cells):
        if cell.cell_type == "code" and is_check_output(run.get("outputs", [])):
            tags = cell.metadata.setdefault("tags", [])
            if "hide-input" not in tags:
                tags.append("hide-input")
                run.metadata.setdefault("tags", []).append("hide-input")
                tagged += 1
    if tagged:
        # The tag changes no output, so the generated notebook gets the same tag instead of
        # being executed again (its cell ids and outputs stay as they are).
        jupytext.write(text, source, fmt="md:myst")
        with open(source.with_suffix(".ipynb"), "w", encoding="utf-8") as f:
            nbformat.write(notebook, f)
    return tagged


def main(argv):
    tag = "--tag-checks" in argv
    argv = [a for a in argv if a != "--tag-checks"]
    sources = [Path(a) for a in argv] or sorted((ROOT / "chapters").glob("[0-9][0-9]_*.md"))
    for s in sources:
        format_source(s)
        extra = f", {tag_check_cells(s)} check cells newly folded" if tag else ""
        print(f"formatted {s}{extra}")


if __name__ == "__main__":
    main(sys.argv[1:])
