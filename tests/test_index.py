"""The cross-index page (tools/gen_index.py) and the "Derived in" lines it is built from.

Regenerate the page after chapters, docstrings, tests or the registry change:
``.venv/bin/python tools/gen_index.py``.
"""

import ast
import json
import re

import gen_index
import pytest


def test_committed_index_page_is_fresh():
    page = gen_index.build_page()
    assert gen_index.OUT.exists(), "chapters/backmatter/index_map.md missing: run tools/gen_index.py"
    assert gen_index.OUT.read_text(encoding="utf-8") == page, (
        "chapters/backmatter/index_map.md is stale: run .venv/bin/python tools/gen_index.py")


def test_every_public_symbol_says_where_it_is_derived():
    """Fails only for symbols that exist and lack the line (stub modules export nothing)."""
    missing = []
    for public, obj in gen_index.public_symbols():
        text = gen_index.derived_in(obj)
        if not text:
            missing.append(f"{public} ({obj.__module__})")
    assert not missing, (f"{len(missing)} public symbols have no 'Derived in: chapter \"<title>\" "
                         f"§ \"<section>\".' line in their docstring:\n  " + "\n  ".join(missing))


def test_derived_in_names_a_chapter():
    bad = []
    for public, obj in gen_index.public_symbols():
        text = gen_index.derived_in(obj)
        if text and not gen_index.DERIVED.search(text) and "not a derivation" not in text:
            bad.append(f"{public}: 'Derived in: {text}'")
    assert not bad, "'Derived in' lines that name no chapter (\"chapter \\\"<title>\\\" § ...\"):\n  " + "\n  ".join(bad)


def test_derived_in_names_a_heading_of_that_chapter():
    """Every ``Derived in: chapter "<title>" § "<section>"`` in linbook's sources (public or private, class,
    function or module docstring) names a chapter title and one of its headings in full, as a reader
    searching the chapter would type it (a prefix such as "Regret" for "Regret and online gradient
    descent" resolved in the index but names no heading)."""
    from pathlib import Path

    chapters = {chapter["title"]: chapter for chapter in gen_index.load_chapters().values()}
    norm = lambda text: " ".join(text.replace("`", " ").replace("*", " ").split()).lower()  # noqa: E731
    bad = []
    for path in sorted((gen_index.ROOT / "linbook").rglob("*.py")):
        for title, section in re.findall(r'chapter\s+"([^"]+)"\s*§\s*"([^"]+)"', path.read_text(encoding="utf-8")):
            chapter = chapters.get(title)
            headings = [] if chapter is None else [norm(sec["title"]) for sec in chapter["sections"]]
            if norm(section) not in headings:
                bad.append(f"{Path(path).relative_to(gen_index.ROOT)}: chapter \"{title}\" § \"{section}\"")
    assert not bad, "'Derived in' lines naming no heading of their chapter:\n  " + "\n  ".join(bad)


@pytest.mark.parametrize("title, slug", [
    ("Newton's method", "newtons-method"),
    ("Gaussian prior: ridge, with the exact $\\lambda$", "gaussian-prior-ridge-with-the-exact-"),
    ("The `fit` method", "the-fit-method"),
    ("MLE of the multivariate normal", "mle-of-the-multivariate-normal"),
])
def test_slugs_match_myst(title, slug):
    assert gen_index.slugify(title) == slug


MD = '''---
jupytext:
  text_representation: {extension: .md, format_name: myst}
---

# Title

Mirrors note `000_5aa4326280c496e2.txt`, eq. (8.1), and mentions LogisticRegression in prose.

```{code-cell} ipython3
import linbook
from linbook.symbolic import check_equal as ce
import linbook.online as ol
```

## First part

```python
# a heading-like comment in a literal block is not a heading
```

```{code-cell} ipython3
:tags: [hide-input]

# not a heading either
m = linbook.LogisticRegression(lam=1.0).fit(X, y)
ce(1, 1, "x [erratum my-id]")
```

+++

## First part

### Deep

#### Deeper

```{code-cell} ipython3
%matplotlib inline
ol.LMS()
linbook.optim.bfgs
```
'''


def test_md_chapter_parsing_sections_and_linbook_calls(tmp_path):
    p = tmp_path / "99_x.md"
    p.write_text(MD, encoding="utf-8")
    ch = gen_index.load_chapter(p, depth=3)
    assert ch["title"] == "Title"
    assert [(s["title"], s["slug"]) for s in ch["sections"]] == [
        ("First part", "first-part"), ("First part", "first-part-1"), ("Deep", "deep")]
    assert gen_index.section_of_id(ch, "my-id")["slug"] == "first-part"
    resolver = gen_index._Resolver(gen_index.public_symbols())
    usage = gen_index.chapter_usage(ch, resolver)
    assert usage["First part"] == {"linbook.LogisticRegression", "linbook.symbolic.check_equal"}
    assert usage["Deep"] == {"linbook.online.LMS", "linbook.optim.bfgs"}
    assert usage[None] == set()  # imports alone are not uses; prose never counts
    assert gen_index.load_chapter(p, depth=0)["sections"][0]["slug"] is None


def test_ipynb_fallback_parses_the_same_way(tmp_path):
    cells = [{"cell_type": "markdown", "source": "# T\n\n## A"},
             {"cell_type": "code", "source": "import linbook\nlinbook.sigmoid(0.0)  # [erratum z]"}]
    p = tmp_path / "98_y.ipynb"
    p.write_text(json.dumps({"cells": cells}), encoding="utf-8")
    ch = gen_index.load_chapter(p, depth=3)
    assert gen_index.section_of_id(ch, "z")["title"] == "A"
    usage = gen_index.chapter_usage(ch, gen_index._Resolver(gen_index.public_symbols()))
    assert usage["A"] == {"linbook.sigmoid"}


def test_tests_are_attributed_by_imports_and_uses_not_words():
    resolver = gen_index._Resolver(gen_index.public_symbols())
    tree = ast.parse("from linbook.linear import Ridge\nimport linbook\n"
                     "def test_x():\n    '''mentions LogisticRegression and sigmoid'''\n"
                     "    Ridge(lam=1.0)\n    linbook.optim.newton\n")
    assert gen_index.linbook_names(tree, resolver) == {"linbook.Ridge", "linbook.optim.newton"}
    tested = gen_index.test_usage(resolver)
    assert not any("test_student_edition.py" in v for v in tested.values())


def test_index_rows_come_from_the_registry():
    page = gen_index.OUT.read_text(encoding="utf-8")
    # locators are never turned into equation numbers
    assert "eq. (8.6 intro" not in page and "eq. (8.5.2.3)" not in page
    assert "§ 8.5.2, §8.5.2.3" in page
    assert "|" not in "".join(ln[:1] for ln in page.splitlines()), "no tables (they overflow on phones)"
