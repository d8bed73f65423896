"""Checks on the built site (make test builds _build/html first) and on its configuration.

Math must render offline: every page loads MathJax from the vendored copy and no page
references a remote script for math. The API reference is one page per module, code-cell
names link to it, and the version and citation data agree with ``linbook.__version__``.
"""

import importlib
import inspect
import os
import re
import subprocess
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


def test_version_comes_from_pyproject():
    import book_settings

    assert linbook.__version__ == book_settings.version(), \
        "linbook.__version__ != pyproject.toml's version: reinstall linbook (make env)"


def test_version_and_citation_agree():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0" and cff["title"] and cff["authors"]
    assert str(cff["version"]) == linbook.__version__, "CITATION.cff version != linbook.__version__"
    bib = (ROOT / "chapters" / "cite_linbook.bib").read_text(encoding="utf-8")
    assert f"version {linbook.__version__}" in bib and cff["title"] in bib
    intro = (ROOT / "chapters" / "intro.md").read_text(encoding="utf-8")
    assert "```{literalinclude} cite_linbook.bib" in intro, "the home page shows the generated BibTeX entry"


def test_files_that_repeat_a_setting_are_current():
    """CITATION.cff, the BibTeX entry and the chapters' Colab cells repeat the version and repository URL."""
    import gen_backmatter

    stale = [p.relative_to(ROOT).as_posix() for p, text in gen_backmatter.setting_files().items()
             if p.read_text(encoding="utf-8") != text]
    assert not stale, f"{stale} disagree with pyproject.toml / _config.yml: run make backmatter"


def test_without_a_repository_nothing_links_to_one():
    import book_settings
    from linbook_site import repository_theme_options

    url = book_settings.repository_url()
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    bib = (ROOT / "chapters" / "cite_linbook.bib").read_text(encoding="utf-8")
    if not url:
        assert "repository-code" not in cff and "url" not in cff and "url " not in bib
    opts = repository_theme_options({"repository_url": "", "path_to_docs": ""})
    assert not any(opts.get(k) for k in ("use_repository_button", "use_issues_button", "repository_url"))
    assert "launch_buttons" not in opts
    opts = repository_theme_options({"repository_url": "https://example.org/book", "path_to_docs": ""})
    assert opts["use_repository_button"] and opts["use_issues_button"]
    assert opts["launch_buttons"]["binderhub_url"] and opts["launch_buttons"]["colab_url"]


def test_no_source_names_a_repository_the_project_does_not_control():
    """The book's repository is one setting (repository.url); no file hard-codes another."""
    url = __import__("book_settings").repository_url()
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    bad = []
    for rel in tracked:
        path = ROOT / rel
        if path.suffix not in (".md", ".py", ".yml", ".yaml", ".cff", ".txt", ".toml", ".cfg", ".bib", ".ipynb") \
                or rel.startswith("_vendor/") or not path.is_file():
            continue
        for m in re.finditer(r"(?:git\+)?https?://(?:github\.com|gitlab\.com|bitbucket\.org)/[\w.-]+/[\w.-]+",
                             path.read_text(encoding="utf-8", errors="replace")):
            if not url or not m.group(0).removeprefix("git+").startswith(url):
                bad.append(f"{rel}: {m.group(0)}")
    assert not bad, "links to repositories that are not the book's (set repository.url instead):\n" + "\n".join(bad)


@site
def test_version_is_shown_on_the_site():
    text = (HTML / "chapters" / "intro.html").read_text(encoding="utf-8")
    assert f"linbook {linbook.__version__}" in text and f"(v{linbook.__version__})" in text
    assert f"This is version {linbook.__version__} of the book" in " ".join(re.sub(r"<[^>]+>", "", text).split())


@site
def test_site_has_repository_buttons_only_with_a_repository():
    url = __import__("book_settings").repository_url()
    for page in ("intro.html", "04_logistic_regression.html"):
        text = (HTML / "chapters" / page).read_text(encoding="utf-8")
        if url:
            assert url in text and f"{url}/issues" in text, page
        else:
            for marker in ("mybinder.org", "colab.research.google.com", "github.com", "/issues"):
                assert marker not in text, f"{page} links to {marker} although repository.url is empty"
    if url:
        text = (HTML / "chapters" / "04_logistic_regression.html").read_text(encoding="utf-8")
        assert "mybinder.org" in text and "colab.research.google.com" in text


@site
def test_no_page_links_outside_the_book():
    """Only the book's own repository (repository.url, when set) may be linked from a page."""
    url = __import__("book_settings").repository_url()
    allowed = tuple(u for u in (url, "https://mybinder.org", "https://colab.research.google.com") if url)
    bad = set()
    for page in _pages():
        for link in re.findall(r'(?:href|src)="((?:https?:)?//[^"]+)"', page.read_text(encoding="utf-8")):
            if not link.startswith(allowed):
                bad.add(f"{page.relative_to(HTML)}: {link}")
    assert not bad, "links to places the project does not control:\n" + "\n".join(sorted(bad)[:20])


@site
def test_colab_cell_is_not_on_the_site():
    for nb in sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb")):
        text = (HTML / "chapters" / f"{nb.stem}.html").read_text(encoding="utf-8")
        assert "google.colab" not in text and "LINBOOK_REPOSITORY" not in text, nb.stem


@site
def test_api_pages_keep_trailing_underscores():
    text = (HTML / "chapters" / "backmatter" / "api" / "logistic.html").read_text(encoding="utf-8")
    for attr in ("coef_", "intercept_", "classes_", "n_iter_"):
        assert f"<strong>{attr}</strong>" in text, f"the Variables list shows {attr} without its underscore"

