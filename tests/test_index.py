"""The cross-index page (tools/gen_index.py) and the "Derived in" lines it is built from.

Regenerate the page after chapters, docstrings, tests or the registry change:
``.venv/bin/python tools/gen_index.py``.
"""

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


@pytest.mark.parametrize("title, slug", [
    ("Newton's method", "newtons-method"),
    ("Gaussian prior: ridge, with the exact $\\lambda$", "gaussian-prior-ridge-with-the-exact-"),
    ("The `fit` method", "the-fit-method"),
    ("MLE of the multivariate normal", "mle-of-the-multivariate-normal"),
])
def test_slugs_match_myst(title, slug):
    assert gen_index.slugify(title) == slug


def test_chapter_parsing_attributes_references_to_sections(tmp_path):
    import json

    import nbformat
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Title\n\nMirrors note `000_5aa4326280c496e2.txt`, eq. (8.1)."),
        nbformat.v4.new_markdown_cell("## First part\n\nSee Figure 8.2 and\n```python\n# eq. (9.9) in code\n```"),
        nbformat.v4.new_code_cell("check('x [erratum my-id]')"),
        nbformat.v4.new_markdown_cell("## First part\n\n### Deep\n\n#### Deeper\n\nAlgorithm 8.4, eqs. (8.3)"),
    ]
    p = tmp_path / "99_x.ipynb"
    p.write_text(json.dumps(json.loads(nbformat.writes(nb))))
    ch = gen_index.load_chapter(p, depth=3)
    assert ch["title"] == "Title"
    assert [(s["title"], s["slug"]) for s in ch["sections"]] == [
        ("First part", "first-part"), ("First part", "first-part-1"), ("Deep", "deep")]
    refs = {(r["kind"], r["number"], r["section"]["title"] if r["section"] else None, r["note"]) for r in ch["refs"]}
    note = "000_5aa4326280c496e2.txt"
    assert refs == {("eq.", "8.1", None, note), ("Figure", "8.2", "First part", note),
                    ("Algorithm", "8.4", "Deep", note), ("eq.", "8.3", "Deep", note)}
    assert gen_index.load_chapter(p, depth=0)["sections"][0]["slug"] is None
