"""Build the student edition of the book: the same site without the solutions.

Usage::

    .venv/bin/python tools/student_edition.py OUTDIR        # copy, strip, build (make student)
    .venv/bin/python tools/student_edition.py OUTDIR --no-build

Copies the book sources (not ``.venv``, ``_build``, ``.git``, caches) to OUTDIR, removes the
solutions and builds OUTDIR with Jupyter Book into ``OUTDIR/_build/html`` with warnings as
errors. Removed (the convention of CONTRIBUTING.md):

* markdown directive blocks (```` ```{admonition} ```` or ``:::{admonition}`` fences, any
  fence length) whose ``:class:`` option contains ``solution`` (e.g. ``:class: dropdown
  solution``), and admonitions titled "Solution ..." -- in notebooks and in ``.md`` pages;
* code cells tagged ``solution``.

Exercises, their self-checks and everything else stay.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SKIP_DIRS = {".venv", "_build", "_build_student", ".git", ".pytest_cache", "__pycache__",
             ".ipynb_checkpoints", ".jupyter_cache", "node_modules", "screenshots", "results"}
STUDENT_SUFFIX = " (student edition)"

_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|:{3,})\{(?P<name>[\w:-]+)\}(?P<arg>.*)$")
_OPTION = re.compile(r"^\s*:(?P<key>[\w-]+):\s*(?P<value>.*)$")


def _block_end(lines, start, fence):
    """Index of the line closing the fence opened at ``start`` (or len(lines)).

    As in CommonMark/MyST: a line of only the same character, at least as long as the
    opening fence. Inner code blocks use shorter fences (```` ```` ```` around ``` ```), so they
    do not close it.
    """
    close = re.compile(r"^\s*" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}\s*$")
    for j in range(start + 1, len(lines)):
        if close.match(lines[j]):
            return j
    return len(lines)


def _is_solution(lines, start, m):
    if m.group("name") == "admonition" and re.match(r"\s*Solution\b", m.group("arg"), re.I):
        return True
    for line in lines[start + 1:]:
        opt = _OPTION.match(line)
        if not opt:
            break
        if opt.group("key") == "class" and "solution" in opt.group("value").split():
            return True
    return False


def strip_markdown(text):
    """Return ``(text without solution blocks, number of blocks removed)``."""
    lines = text.split("\n")
    out, removed, i = [], 0, 0
    while i < len(lines):
        m = _OPEN.match(lines[i])
        if m and _is_solution(lines, i, m):
            i = _block_end(lines, i, m.group("fence")) + 1
            removed += 1
            # drop one blank line left behind so paragraphs do not pile up
            if out and not out[-1].strip() and i < len(lines) and not lines[i].strip():
                i += 1
            continue
        out.append(lines[i])
        i += 1
    return "\n".join(out), removed


def _source(cell):
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def strip_notebook(nb):
    """Remove solutions from a notebook dict in place; return the number removed."""
    removed, cells = 0, []
    for cell in nb.get("cells", []):
        tags = cell.get("metadata", {}).get("tags", [])
        if cell.get("cell_type") == "code" and "solution" in tags:
            removed += 1
            continue
        if cell.get("cell_type") == "markdown":
            new, n = strip_markdown(_source(cell))
            if n:
                removed += n
                if not new.strip():
                    continue
                cell["source"] = new
        cells.append(cell)
    nb["cells"] = cells
    return removed


def copy_sources(outdir, root=ROOT):
    outdir = Path(outdir).resolve()
    if outdir.exists():
        shutil.rmtree(outdir)

    def ignore(path, names):
        skipped = {n for n in names if n in SKIP_DIRS or n.endswith(".egg-info")}
        return skipped | {n for n in names if (Path(path) / n).resolve() == outdir}

    shutil.copytree(root, outdir, ignore=ignore)
    return outdir


def strip_tree(outdir):
    """Strip every notebook and markdown page of the book in ``outdir``; return {file: n}."""
    counts = {}
    # A chapter's MyST source holds its solution cells too; the student edition is built
    # from the generated notebooks, so the sources are left out of it.
    for source in Path(outdir, "chapters").glob("[0-9][0-9]_*.md"):
        if source.with_suffix(".ipynb").exists():
            source.unlink()
    for path in sorted(Path(outdir, "chapters").rglob("*")):
        if path.suffix == ".ipynb":
            nb = json.loads(path.read_text(encoding="utf-8"))
            n = strip_notebook(nb)
            if n:
                path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        elif path.suffix == ".md":
            text, n = strip_markdown(path.read_text(encoding="utf-8"))
            if n:
                path.write_text(text, encoding="utf-8")
        else:
            continue
        if n:
            counts[path.relative_to(outdir).as_posix()] = n
    cfg = Path(outdir, "_config.yml")
    text = cfg.read_text(encoding="utf-8")
    text = re.sub(r'^(title:\s*)"(.*)"\s*$', lambda m: f'{m.group(1)}"{m.group(2)}{STUDENT_SUFFIX}"',
                  text, count=1, flags=re.M)
    cfg.write_text(text, encoding="utf-8")
    return counts


def leftover_solutions(outdir):
    """Files that still hold a solution marker after stripping (should be empty)."""
    bad = []
    for path in Path(outdir, "chapters").rglob("*"):
        if path.suffix == ".ipynb":
            nb = json.loads(path.read_text(encoding="utf-8"))
            for c in nb["cells"]:
                if "solution" in c.get("metadata", {}).get("tags", []) or (
                        c["cell_type"] == "markdown" and strip_markdown(_source(c))[1]):
                    bad.append(path.name)
        elif path.suffix == ".md" and strip_markdown(path.read_text(encoding="utf-8"))[1]:
            bad.append(path.name)
    return bad


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0].startswith("-"):
        print(__doc__)
        return 2
    outdir = copy_sources(argv[0])
    counts = strip_tree(outdir)
    total = sum(counts.values())
    print(f"student edition: removed {total} solution blocks/cells from {len(counts)} files")
    for name, n in counts.items():
        print(f"  {name}: {n}")
    bad = leftover_solutions(outdir)
    if bad:
        print(f"solutions left in {sorted(set(bad))}", file=sys.stderr)
        return 1
    if "--no-build" in argv:
        return 0
    jb = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(jb) if jb.exists() else "jupyter-book", "build", "--all", "-W", "-n", "--keep-going", str(outdir)]
    return subprocess.call(cmd)


if __name__ == "__main__":
    sys.exit(main())
