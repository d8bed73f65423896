"""The student edition (make student) removes solutions and keeps exercises.

Unit tests of the stripping in tools/student_edition.py on a small synthetic notebook; the
full build is `make student` (not run here: it builds the whole book).
"""

import json

import nbformat
import pytest

import student_edition as se

EXERCISE = """```{admonition} Exercise 4.2
Derive the gradient of the NLL. Then run
`linbook.exercises.check("logreg.newton-step", my_newton_step)`.
```"""

SOLUTION_4 = """````{admonition} Solution 4.2
:class: dropdown solution

The gradient is $X^\\top(\\mu - y)$:

```python
def grad(w):
    return X.T @ (sigmoid(X @ w) - y)
```
SECRET-ANSWER-1
````"""

SOLUTION_COLON = """:::{admonition} Hint and answer
:class: solution dropdown
SECRET-ANSWER-2
:::"""

TITLED_SOLUTION = """```{admonition} Solution 4.3
SECRET-ANSWER-3
```"""

DROPDOWN_NOTE = """```{admonition} Why the Hessian is PSD
:class: dropdown

Not a solution: kept.
```"""


def _nb():
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Logistic regression\n\nText."),
        nbformat.v4.new_code_cell("import linbook"),
        nbformat.v4.new_markdown_cell("## Exercises\n\n" + EXERCISE + "\n\n" + SOLUTION_4 + "\n\nAfter the solution."),
        nbformat.v4.new_code_cell("answer = 42  # SECRET-ANSWER-4", metadata={"tags": ["solution", "hide-input"]}),
        nbformat.v4.new_code_cell("linbook.exercises.available()", metadata={"tags": ["hide-input"]}),
        nbformat.v4.new_markdown_cell(SOLUTION_COLON),
        nbformat.v4.new_markdown_cell(TITLED_SOLUTION + "\n\n" + DROPDOWN_NOTE),
    ]
    return json.loads(nbformat.writes(nb))


def test_solutions_stripped_exercises_kept():
    nb = _nb()
    removed = se.strip_notebook(nb)
    text = json.dumps(nb)
    assert removed == 4  # solution 4.2, the tagged code cell, the colon solution, "Solution 4.3"
    for i in (1, 2, 3, 4):
        assert f"SECRET-ANSWER-{i}" not in text, i
    assert "Exercise 4.2" in text and "logreg.newton-step" in text
    assert "After the solution." in text
    assert "Not a solution: kept." in text
    sources = ["".join(c["source"]) for c in nb["cells"]]
    assert sources[0].startswith("# Logistic regression")
    assert "import linbook" in sources[1]
    assert any("exercises.available" in s for s in sources), "an untagged code cell was removed"
    assert len(nb["cells"]) == 5  # the tagged cell and the solution-only cell are gone
    nbformat.validate(nbformat.reads(json.dumps(nb), as_version=4))


def test_strip_is_idempotent_and_reports_nothing_left():
    nb = _nb()
    se.strip_notebook(nb)
    assert se.strip_notebook(nb) == 0


def test_markdown_page_and_inner_code_fences():
    text = "# Page\n\n" + EXERCISE + "\n\n" + SOLUTION_4 + "\n\n## Next section\n\nbody\n"
    out, n = se.strip_markdown(text)
    assert n == 1
    assert "SECRET-ANSWER-1" not in out and "def grad" not in out
    assert "## Next section" in out and "body" in out and "Exercise 4.2" in out


def test_unclosed_fence_removes_to_end_not_beyond_file():
    out, n = se.strip_markdown("intro\n\n```{admonition} Solution 1\n:class: dropdown solution\nx\n")
    assert n == 1 and out.strip() == "intro"


@pytest.mark.parametrize("opening", ["```{note}", "```python", ":::{tip}"])
def test_other_blocks_untouched(opening):
    fence = opening[:3]
    text = f"{opening}\n:class: dropdown\nkeep me\n{fence}\n"
    assert se.strip_markdown(text) == (text, 0)


def test_tree_copy_excludes_build_and_venv(tmp_path):
    src = tmp_path / "book"
    (src / "chapters").mkdir(parents=True)
    (src / ".venv" / "bin").mkdir(parents=True)
    (src / "_build" / "html").mkdir(parents=True)
    (src / "_config.yml").write_text('title: "Book"\n')
    (src / "chapters" / "c.md").write_text("# C\n\n" + SOLUTION_COLON + "\n")
    nb = _nb()
    (src / "chapters" / "n.ipynb").write_text(json.dumps(nb))
    out = se.copy_sources(tmp_path / "student", root=src)
    assert not (out / ".venv").exists() and not (out / "_build").exists()
    counts = se.strip_tree(out)
    assert counts == {"chapters/c.md": 1, "chapters/n.ipynb": 4}
    assert se.leftover_solutions(out) == []
    assert 'title: "Book (student edition)"' in (out / "_config.yml").read_text()
    assert "SECRET-ANSWER-2" in (src / "chapters" / "c.md").read_text(), "the source was modified"


# --- the student edition of a real chapter runs as printed ----------------------------------
#
# A chapter's student edition is built from its MyST source (jupytext, then strip_notebook),
# executed, and then a student is simulated: for every self-check the exercise prints
# (`linbook.exercises.check("key", name)`), a new cell defines the function (the solution
# cell's code without its own check calls and without `import linbook.exercises`) and runs the
# printed line verbatim, which must report "all properties pass". One chapter by default (it
# executes the whole chapter); LINBOOK_STUDENT_CHAPTERS=all (or "02,07") runs others.

import ast  # noqa: E402
import copy  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PRINTED_CHECK = re.compile(r'`(linbook\.exercises\.check\("([\w.-]+)",\s*(\w+)\))`')
DEFAULT_CHAPTERS = "03"


def _chapters():
    wanted = os.environ.get("LINBOOK_STUDENT_CHAPTERS", DEFAULT_CHAPTERS)
    sources = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.md"))
    if wanted == "all":
        return sources
    return [p for p in sources if p.name[:2] in wanted.split(",")]


def _without_own_checks(code):
    """A solution cell's code without its self-check calls and `import linbook.exercises`."""
    lines = code.split("\n")
    drop = set()
    for node in ast.parse(code).body:
        text = "\n".join(lines[node.lineno - 1:node.end_lineno])
        if re.search(r"\b(ex|exercises)\.check\(", text) or re.match(r"import linbook\.exercises", text):
            drop |= set(range(node.lineno - 1, node.end_lineno))
    return "\n".join(line for i, line in enumerate(lines) if i not in drop)


def student_chapter(source):
    """(student notebook, [(key, printed call)]) for a chapter source; a student's cells appended."""
    import jupytext

    full = json.loads(nbformat.writes(jupytext.read(source)))
    nb = copy.deepcopy(full)
    assert se.strip_notebook(nb) > 0
    solutions = ["".join(c["source"]) for c in full["cells"]
                 if c["cell_type"] == "code" and "solution" in c["metadata"].get("tags", [])]
    printed = []
    for cell in list(nb["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        for call, key, _name in PRINTED_CHECK.findall("".join(cell["source"])):
            (solution,) = [s for s in solutions if f'check("{key}"' in s]
            printed.append((key, call))
            code = _without_own_checks(solution) + "\n" + call
            nb["cells"].append(nbformat.v4.new_code_cell(code, metadata={"tags": ["student"]}))
    return nb, printed


@pytest.mark.parametrize("source", _chapters(), ids=lambda p: p.stem)
def test_student_edition_runs_as_printed(source, tmp_path):
    from nbclient import NotebookClient

    nb, printed = student_chapter(source)
    assert printed, f"{source.name} prints no self-check"
    work = tmp_path / "student"
    work.mkdir()
    nb = nbformat.reads(json.dumps(nb), as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(work)}}).execute()
    student_cells = [c for c in nb.cells if "student" in c.metadata.get("tags", [])]
    assert len(student_cells) == len(printed)
    for (key, call), cell in zip(printed, student_cells):
        text = "".join(o.get("text", "") + "".join(o.get("data", {}).get("text/plain", ""))
                       for o in cell.outputs)
        # the report, once: no second summary line as the cell's value
        assert text.count(key) == 1 and "all properties pass" in text, f"{call} in the student edition:\n{text}"
    shutil.rmtree(work)
