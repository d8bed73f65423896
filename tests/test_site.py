"""Checks on the built site (make test builds _build/html first) and on its configuration.

Math must render offline: every page loads MathJax from the vendored copy and no page
references a remote script for math. The API reference is one page per module, code-cell
names link to it, and the version and citation data agree with ``linbook.__version__``.
"""

import importlib
import inspect
import os
import re
import sys
from pathlib import Path

import pytest
import yaml

import linbook

ROOT = Path(__file__).resolve().parents[1]
HTML = Path(os.environ.get("LINBOOK_SITE", ROOT / "_build" / "html"))
site = pytest.mark.site

SCRIPT = re.compile(r"<script[^>]*\bsrc=\"([^\"]+)\"", re.I)
sys.path.insert(0, str(ROOT / "_ext"))


def _pages():
    if not (HTML / "index.html").exists():
        pytest.fail(f"no built site at {HTML}: run `make book` (make test builds it)")
    return sorted(p for p in HTML.rglob("*.html") if "_static" not in p.parts)


@site
def test_math_scripts_are_local():
    pages = _pages()
    assert len(pages) >= 15
    for page in pages:
        srcs = SCRIPT.findall(page.read_text(encoding="utf-8"))
        remote_math = [s for s in srcs if re.search(r"mathjax|katex|polyfill", s, re.I) and re.match(r"(https?:)?//", s)]
        assert not remote_math, f"{page.relative_to(HTML)} loads math from the network: {remote_math}"


@site
def test_pages_with_math_load_vendored_mathjax():
    checked = 0
    for page in _pages():
        text = page.read_text(encoding="utf-8")
        if 'class="math' in text or "\\(" in text:
            assert re.search(r"_static/mathjax/tex-mml-chtml\.js", text), page
            checked += 1
    assert checked >= 1
    assert (HTML / "_static" / "mathjax" / "tex-mml-chtml.js").exists()
    assert (HTML / "_static" / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2").is_dir()


@site
def test_every_chapter_page_built():
    names = {p.stem for p in (HTML / "chapters").glob("*.html")}
    for nb in (ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"):
        assert nb.stem in names, f"{nb.name} has no page"


def _api_modules():
    return sorted(p.stem for p in (ROOT / "chapters" / "backmatter" / "api").glob("*.md") if p.stem != "index")


def test_api_reference_is_one_page_per_module_and_in_the_toc():
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    mods = _api_modules()
    assert len(mods) >= 15
    for m in mods:
        text = (ROOT / "chapters" / "backmatter" / "api" / f"{m}.md").read_text(encoding="utf-8")
        assert text.count(".. automodule::") == 1, m
        assert f"chapters/backmatter/api/{m}\n" in toc, f"api/{m}.md is not in _toc.yml"
    documented = {re.search(r"automodule:: (\S+)", (ROOT / "chapters/backmatter/api" / f"{m}.md").read_text()).group(1)
                  for m in mods}
    for name in ("numerics", "symbolic", "linear", "logistic", "optim", "online", "discriminant"):
        assert f"linbook.{name}" in documented


@site
def test_api_pages_built_and_code_cells_link_to_them():
    api = HTML / "chapters" / "backmatter" / "api"
    assert (api / "index.html").exists()
    for m in _api_modules():
        assert (api / f"{m}.html").exists(), m
    page = (HTML / "chapters" / "04_logistic_regression.html").read_text(encoding="utf-8")
    links = re.findall(r'<a[^>]*class="sphinx-codeautolink-a"[^>]*href="([^"]+)"', page)
    assert any("backmatter/api/" in h for h in links), "no code-cell name links to the API pages"


def _docstring_objects():
    for mod_name in [m for m in _api_modules() if m != "index"]:
        mod = importlib.import_module(f"linbook.{mod_name}")
        yield f"linbook.{mod_name}", mod
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                yield f"linbook.{mod_name}.{name}", obj


def test_derived_in_sentences_stay_whole_in_the_api_pages():
    """The autodoc hook lifts the whole (possibly multi-line) sentence; nothing is left behind."""
    from linbook_site import _move_derived_in
    checked = 0
    for name, obj in _docstring_objects():
        doc = inspect.getdoc(obj) or ""
        if "Derived in:" not in doc:
            continue
        lines = doc.split("\n")
        _move_derived_in(None, "module", name, obj, {}, lines)
        lifted = [ln for ln in lines if ln.startswith("*Derived in:*")]
        assert lifted, name
        full = re.search(r"Derived in:(.*?)(?:\n\s*\n|\Z)", doc, re.S).group(1)
        assert " ".join(lifted[0].split()) == "*Derived in:* " + " ".join(full.split()), name
        rest = "\n".join(ln for ln in lines if not ln.startswith("*Derived in:*"))
        tail = " ".join(full.split())[-25:]
        assert tail not in " ".join(rest.split()), f"{name}: a fragment of the 'Derived in' sentence was left behind"
        checked += 1
    assert checked >= 20


def test_version_and_citation_agree():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0" and cff["title"] and cff["authors"]
    assert str(cff["version"]) == linbook.__version__, "CITATION.cff version != linbook.__version__"
    intro = (ROOT / "chapters" / "intro.md").read_text(encoding="utf-8")
    bib = re.search(r"```bibtex\n(.*?)```", intro, re.S)
    assert bib, "chapters/intro.md has no BibTeX block"
    assert f"version {linbook.__version__}" in bib.group(1)
    assert cff["title"] in bib.group(1)


@site
def test_version_is_shown_on_the_site():
    text = (HTML / "chapters" / "intro.html").read_text(encoding="utf-8")
    assert f"linbook {linbook.__version__}" in text and f"(v{linbook.__version__})" in text
