"""The chapters' code follows one style: ruff-formatted at 100 columns, no `;` chains,
named functions instead of assigned lambdas (checked on the MyST sources' code cells)."""

import functools
import shutil
import subprocess
import sys
from pathlib import Path

import jupytext
import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.md"))
RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
RULES = "E501,E702,E703,E731"


def _code_only(source, tmp_path):
    nb = jupytext.read(source, fmt="md:myst")
    nb.cells = [c for c in nb.cells if c.cell_type == "code"]
    path = tmp_path / (source.stem + ".ipynb")
    nbformat.write(nb, path)
    return path


@pytest.mark.skipif(RUFF is None, reason="ruff is not installed (it is in the locked environment)")
@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_code_cells_follow_the_style(source, tmp_path):
    nb = _code_only(source, tmp_path)
    lint = subprocess.run([RUFF, "check", "--no-cache", "--isolated", "--select", RULES,
                           "--line-length", "100", str(nb)], capture_output=True, text=True)
    assert lint.returncode == 0, f"{source.name}: {lint.stdout[-3000:]}"
    fmt = subprocess.run([RUFF, "format", "--no-cache", "--isolated", "--check", "--line-length", "100",
                          str(nb)], capture_output=True, text=True)
    assert fmt.returncode == 0, (f"{source.name} is not formatted; run: jupytext --pipe 'ruff format "
                                 f"--line-length 100 -' --pipe-fmt py:percent {source.relative_to(ROOT)}")


def test_prose_is_one_sentence_per_line():
    """CONTRIBUTING promises one-line diffs for one-sentence edits (tools/sentence_lines.py)."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, str(root / "tools" / "sentence_lines.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# --- issue 20, item 4: a check is one short line, one claim per check cell, public API only ---
sys.path.insert(0, str(ROOT / "tools"))
import chapter_metrics  # noqa: E402

_measure = functools.lru_cache(maxsize=None)(chapter_metrics.measure)  # three tests read each chapter

#: Chapters whose check cells are not yet split to one claim each (strict: the xfail fails once
#: a chapter is done, so its entry must then be removed).
NOT_YET_ONE_CLAIM_PER_CELL: set[str] = set()
#: Chapters that still need a linbook name the package does not export yet.
NOT_YET_PUBLIC: dict[str, str] = {}      # chapter stem -> why it still uses a non-public name


def _marked(source, todo):
    reason = todo.get(source.stem, "not converted yet") if isinstance(todo, dict) else "not converted yet"
    if source.stem in todo:
        return pytest.param(source, id=source.stem, marks=pytest.mark.xfail(strict=True, reason=reason))
    return pytest.param(source, id=source.stem)


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_every_check_is_one_line(source):
    """A check prints its own line, so its code is one line too (long pieces are named above it:
    tools/one_line_checks.py, which tools/format_chapters.py runs)."""
    result = _measure(source)
    spread = [o for o in result["offenders"] if o[2].startswith("multi-line")]
    assert result["counts"]["print(check)"] == 0, f"{source.name}: a check prints itself; drop print()"
    assert not spread, f"{source.name}: checks over several lines (cell, first line, where): {spread}"


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_only_checks_print_ok_lines(source):
    """An "ok  ..." line in an output comes from a check function that tested it, never from a ``print``
    (a printed summary after real checks read as one more check, and named ids no check carried)."""
    import re

    code = "\n".join(c.source for c in jupytext.read(source, fmt="md:myst").cells if c.cell_type == "code")
    printed = re.findall(r"print\(\s*f?[\"']ok\b[^\n]*", code)
    assert not printed, f"{source.name}: prints that look like checks; put the claim in the checks' labels: {printed}"


@pytest.mark.parametrize("source", [_marked(s, NOT_YET_ONE_CLAIM_PER_CELL) for s in SOURCES])
def test_one_claim_per_check_cell(source):
    """At most MAX_CHECKS_PER_CELL checks in a code cell, unless the cell says why in a
    ``# several checks: <reason>`` comment."""
    result = _measure(source)
    crowded = [o for o in result["offenders"] if o[2].endswith(" checks")]
    assert not crowded, (f"{source.name}: cells with more than {chapter_metrics.MAX_CHECKS_PER_CELL} "
                         f"checks; split them after the sentence that states each claim: {crowded}")


@pytest.mark.parametrize("source", [_marked(s, NOT_YET_PUBLIC) for s in SOURCES])
def test_chapters_use_only_the_public_api(source):
    result = _measure(source)
    private = [o for o in result["offenders"] if o[2].startswith("non-public")]
    assert not private, f"{source.name}: use linbook's public names: {private}"


def test_the_chapter_rules_can_fail(tmp_path):
    """A spread check, a crowded cell and a private import are each reported; a reason admits a cell."""
    body = "\n".join(f'check_true(True, "claim {i}")' for i in range(4))
    page = tmp_path / "99_x.md"
    page.write_text("```{code-cell} ipython3\nfrom linbook.base import validate_fit\n" + body + "\n```\n\n"
                    "```{code-cell} ipython3\ncheck_close(\n    1.0,\n    1.0,\n    \"one\",\n)\n```\n\n"
                    "```{code-cell} ipython3\n# several checks: one identity over four shapes\n" + body
                    + "\n```\n", encoding="utf-8")
    counts = chapter_metrics.measure(page)["counts"]
    assert (counts["cells>N"], counts["multiline"], counts["private"], counts["max/cell"]) == (1, 1, 1, 4)


def test_one_line_checks_prints_the_same_line(capsys):
    """The rewrite names a spread check's pieces above it; the check prints what it printed."""
    import one_line_checks

    spread = ('import numpy as np\nfrom linbook.symbolic import check_close\n'
              'check_close(\n    np.exp(np.log(np.arange(1.0, 4.0)) + 0.0 * np.ones(3)),\n'
              '    np.arange(1.0, 4.0),\n    "exp(log(x)) = x on three points, a label long enough to '
              'need the line",\n    rtol=1e-12,\n)')
    one_line, rewritten = one_line_checks.one_line_cell(spread, taken={"np", "check_close"})
    assert rewritten == 1
    assert chapter_metrics.checks(one_line)[0].end_lineno == chapter_metrics.checks(one_line)[0].lineno
    exec(spread, {})
    before = capsys.readouterr().out
    exec(one_line, {})
    assert capsys.readouterr().out == before != ""
