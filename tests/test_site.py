"""Checks on the built site (make test builds _build/html first).

Math must render offline: every page loads MathJax from the vendored copy and no page
references a remote script for math.
"""

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HTML = Path(os.environ.get("LINBOOK_SITE", ROOT / "_build" / "html"))
pytestmark = pytest.mark.site

SCRIPT = re.compile(r"<script[^>]*\bsrc=\"([^\"]+)\"", re.I)


def _pages():
    if not (HTML / "index.html").exists():
        pytest.fail(f"no built site at {HTML}: run `make book` (make test builds it)")
    return sorted(p for p in HTML.rglob("*.html") if "_static" not in p.parts)


def test_math_scripts_are_local():
    pages = _pages()
    assert len(pages) >= 15
    for page in pages:
        srcs = SCRIPT.findall(page.read_text(encoding="utf-8"))
        remote_math = [s for s in srcs if re.search(r"mathjax|katex|polyfill", s, re.I) and re.match(r"(https?:)?//", s)]
        assert not remote_math, f"{page.relative_to(HTML)} loads math from the network: {remote_math}"


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


def test_every_chapter_page_built():
    names = {p.stem for p in (HTML / "chapters").glob("*.html")}
    for nb in (ROOT / "chapters").glob("*.ipynb"):
        assert nb.stem in names, f"{nb.name} has no page"
