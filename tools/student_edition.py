"""Build the student edition of the book: the same site without the solutions.

Usage::

    .venv/bin/python tools/student_edition.py OUTDIR        # copy, strip, build (make student)
    .venv/bin/python tools/student_edition.py OUTDIR --no-build

Copies the book sources (not ``.venv``, ``_build``, ``.git``, caches) to OUTDIR, removes every
cell tagged ``solution`` from the chapter notebooks with nbconvert's ``TagRemovePreprocessor``
and builds OUTDIR with Jupyter Book into ``OUTDIR/_build/html`` with warnings as errors.

A solution is a cell of its own tagged ``solution`` (CONTRIBUTING.md): the code cell
(``:tags: [solution, hide-input]``) and the markdown cell holding the
```` ```{admonition} Solution 4.2 ```` block (``+++ {"tags": ["solution"]}`` above it in the
MyST source, ``+++`` below it when more markdown follows). Exercises, their self-checks and
everything else stay. A solution marker left in any page after stripping (an untagged
``:class: ... solution`` admonition, or a "Solution" admonition) stops the build.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
from nbconvert.preprocessors import TagRemovePreprocessor

ROOT = Path(__file__).resolve().parents[1]
SKIP_DIRS = {".venv", "_build", "_build_student", ".git", ".pytest_cache", "__pycache__",
             ".ipynb_checkpoints", ".jupyter_cache", "node_modules", "screenshots", "results"}
STUDENT_SUFFIX = " (student edition)"
SOLUTION_TAG = "solution"
# What a solution looks like in markdown: a directive with the class "solution", or an
# admonition titled "Solution ...". Used only to find solutions left untagged.
_SOLUTION_MARK = re.compile(r"^\s*:class:.*\bsolution\b|^\s*(`{3,}|:{3,})\{admonition\}\s*Solution\b",
                            re.M | re.I)


def strip_notebook(nb):
    """Remove the cells tagged ``solution`` from a notebook dict in place; return how many."""
    before = len(nb["cells"])
    node = nbformat.from_dict(nb)
    TagRemovePreprocessor(remove_cell_tags={SOLUTION_TAG}, enabled=True).preprocess(node, {})
    nb["cells"] = list(node.cells)
    return before - len(nb["cells"])


def untagged_solutions(nb):
    """Indices of markdown cells that hold a solution block but are not tagged ``solution``."""
    return [i for i, c in enumerate(nb["cells"])
            if c["cell_type"] == "markdown" and SOLUTION_TAG not in c.get("metadata", {}).get("tags", [])
            and _SOLUTION_MARK.search(_source(c))]


def _source(cell):
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


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
    """Strip every chapter notebook in ``outdir``; return {file: cells removed}."""
    counts = {}
    # A chapter's MyST source holds its solution cells too; the student edition is built
    # from the generated notebooks, so the sources are left out of it.
    for source in Path(outdir, "chapters").glob("[0-9][0-9]_*.md"):
        if source.with_suffix(".ipynb").exists():
            source.unlink()
    for path in sorted(Path(outdir, "chapters").rglob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        n = strip_notebook(nb)
        if n:
            nbformat.write(nbformat.from_dict(nb), path)
            counts[path.relative_to(outdir).as_posix()] = n
    cfg = Path(outdir, "_config.yml")
    text = cfg.read_text(encoding="utf-8")
    text = re.sub(r'^(title:\s*)"(.*)"\s*$', lambda m: f'{m.group(1)}"{m.group(2)}{STUDENT_SUFFIX}"',
                  text, count=1, flags=re.M)
    cfg.write_text(text, encoding="utf-8")
    return counts


def leftover_solutions(outdir):
    """Pages that still hold a solution after stripping (should be empty)."""
    bad = []
    for path in sorted(Path(outdir, "chapters").rglob("*")):
        if path.suffix == ".ipynb":
            nb = nbformat.read(path, as_version=4)
            if any(SOLUTION_TAG in c.metadata.get("tags", []) for c in nb.cells) or untagged_solutions(nb):
                bad.append(path.name)
        elif path.suffix == ".md" and _SOLUTION_MARK.search(path.read_text(encoding="utf-8")):
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
    print(f"student edition: removed {total} solution cells from {len(counts)} notebooks")
    for name, n in counts.items():
        print(f"  {name}: {n}")
    bad = leftover_solutions(outdir)
    if bad:
        print(f"solutions left (untagged) in {bad}: give each solution a cell of its own tagged "
              f"'solution' (CONTRIBUTING.md, Exercises)", file=sys.stderr)
        return 1
    if "--no-build" in argv:
        return 0
    jb = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(jb) if jb.exists() else "jupyter-book", "build", "--all", "-W", "-n", "--keep-going", str(outdir)]
    return subprocess.call(cmd)


if __name__ == "__main__":
    sys.exit(main())
