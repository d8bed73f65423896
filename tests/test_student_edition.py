"""The student edition (make student) removes solutions and keeps exercises.

Unit tests of tools/student_edition.py (nbconvert's TagRemovePreprocessor on the cells tagged
``solution``) on a small synthetic notebook, and of the convention it relies on in every chapter
source: each solution is a cell of its own, tagged. The full build is `make student` (not run
here: it builds the whole book).
"""

import json
from pathlib import Path

import nbformat
import pytest

import student_edition as se

ROOT = Path(__file__).resolve().parents[1]

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

SOLUTION = {"tags": ["solution"]}


def _nb():
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Logistic regression\n\nText."),
        nbformat.v4.new_code_cell("import linbook"),
        nbformat.v4.new_markdown_cell("## Exercises\n\n" + EXERCISE),
        nbformat.v4.new_markdown_cell(SOLUTION_4, metadata=SOLUTION),
        nbformat.v4.new_markdown_cell("After the solution."),
        nbformat.v4.new_code_cell("answer = 42  # SECRET-ANSWER-4", metadata={"tags": ["solution", "hide-input"]}),
        nbformat.v4.new_code_cell("linbook.exercises.available()", metadata={"tags": ["hide-input"]}),
        nbformat.v4.new_markdown_cell(SOLUTION_COLON, metadata=SOLUTION),
        nbformat.v4.new_markdown_cell(TITLED_SOLUTION, metadata=SOLUTION),
        nbformat.v4.new_markdown_cell(DROPDOWN_NOTE),
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
    assert len(nb["cells"]) == 6
    assert se.untagged_solutions(nb) == []
    nbformat.validate(nbformat.reads(json.dumps(nb), as_version=4))


def test_strip_is_idempotent_and_reports_nothing_left():
    nb = _nb()
    se.strip_notebook(nb)
    assert se.strip_notebook(nb) == 0


@pytest.mark.parametrize("block", [SOLUTION_4, SOLUTION_COLON, TITLED_SOLUTION])
def test_untagged_solution_is_found_not_published(block, tmp_path):
    """A solution block left in an untagged cell (e.g. inside the exercise's cell) stops the build."""
    nb = _nb()
    nb["cells"][2]["source"] += "\n\n" + block
    assert se.untagged_solutions(nb) == [2]
    se.strip_notebook(nb)
    assert se.untagged_solutions(nb) == [2], "the exercise's cell must not be removed with it"
    (tmp_path / "chapters").mkdir()
    nbformat.write(nbformat.from_dict(nb), tmp_path / "chapters" / "n.ipynb")
    assert se.leftover_solutions(tmp_path) == ["n.ipynb"]


@pytest.mark.parametrize("opening", ["```{note}", "```python", ":::{tip}"])
def test_other_blocks_untouched(opening):
    fence = opening[:3]
    nb = _nb()
    nb["cells"].append(nbformat.v4.new_markdown_cell(f"{opening}\n:class: dropdown\nkeep me\n{fence}\n"))
    se.strip_notebook(nb)
    assert se.untagged_solutions(nb) == [] and "keep me" in nb["cells"][-1]["source"]


def test_tree_copy_excludes_build_and_venv(tmp_path):
    src = tmp_path / "book"
    (src / "chapters").mkdir(parents=True)
    (src / ".venv" / "bin").mkdir(parents=True)
    (src / "_build" / "html").mkdir(parents=True)
    (src / "_config.yml").write_text('title: "Book"\n')
    (src / "chapters" / "c.md").write_text("# C\n\nA page.\n")
    nb = _nb()
    (src / "chapters" / "n.ipynb").write_text(json.dumps(nb))
    out = se.copy_sources(tmp_path / "student", root=src)
    assert not (out / ".venv").exists() and not (out / "_build").exists()
    counts = se.strip_tree(out)
    assert counts == {"chapters/n.ipynb": 4}
    assert se.leftover_solutions(out) == []
    assert 'title: "Book (student edition)"' in (out / "_config.yml").read_text()
    assert "SECRET-ANSWER-2" in (src / "chapters" / "n.ipynb").read_text(), "the source was modified"
    # a page (not a notebook) cannot hold a solution: nothing would remove it
    (out / "chapters" / "c.md").write_text("# C\n\n" + SOLUTION_COLON + "\n")
    assert se.leftover_solutions(out) == ["c.md"]


def _sources():
    return sorted((ROOT / "chapters").glob("[0-9][0-9]_*.md"))


@pytest.mark.parametrize("source", _sources(), ids=lambda p: p.stem)
def test_every_solution_is_a_tagged_cell_of_its_own(source):
    """The chapter sources follow the convention the student edition relies on."""
    import jupytext

    nb = json.loads(nbformat.writes(jupytext.read(source)))
    assert se.untagged_solutions(nb) == [], f"{source.name}: a solution block in an untagged cell"
    tagged = [c for c in nb["cells"] if "solution" in c["metadata"].get("tags", [])]
    assert any(c["cell_type"] == "markdown" for c in tagged), f"{source.name}: no solution cell"
    for cell in tagged:
        if cell["cell_type"] == "markdown":
            text = "".join(cell["source"]).strip()
            assert text.startswith("```{admonition} Solution") and text.endswith("```"), (
                f"{source.name}: a markdown cell tagged solution holds more than its solution:\n{text[:200]}")
            assert "{admonition} Exercise" not in text, f"{source.name}: an exercise inside a solution cell"
    student = json.loads(json.dumps(nb))
    se.strip_notebook(student)

    def exercises(book):
        return "".join("".join(c["source"]) for c in book["cells"]).count("{admonition} Exercise")

    assert exercises(student) == exercises(nb) > 0, f"{source.name}: an exercise went with the solutions"


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
