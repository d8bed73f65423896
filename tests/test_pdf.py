"""Checks on the PDF edition, _build/latex/book.pdf (``make pdf`` builds it, then runs these).

The PDF must hold the whole book with every glyph and embedded fonts, and number what the site
numbers the same way: chapter N of the site is chapter N of the PDF, its sections N.1, N.2, ...
in the same order, and its exercises ("Exercise N.k") sit inside chapter N. Notation and the back
matter are unnumbered, as on the site.

Without a PDF these checks are skipped, except in CI (``CI=true``), where .ci/run builds it.
They read the PDF with poppler-utils (``pdfinfo``, ``pdftotext``, ``pdffonts``).
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import linbook

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "_ext"))
PDF_DIR = Path(os.environ.get("LINBOOK_PDF_DIR", ROOT / "_build" / "latex"))
PDF = PDF_DIR / "book.pdf"
HTML = Path(os.environ.get("LINBOOK_SITE", ROOT / "_build" / "html"))
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")

# 421 pages when the check was written (10 chapters, back matter, API reference). Far fewer
# means chapters went missing; far more, that something (a table, a cell output) ran away.
PAGES = range(300, 650)

# Needs the built PDF, so not part of the unit run of make test (-m "not site"); make pdf runs it.
needs_pdf = pytest.mark.site


@pytest.fixture(scope="module")
def pdf():
    if not PDF.exists():
        message = f"no PDF at {PDF}: run `make pdf`"
        if IN_CI:
            pytest.fail(message + " (CI=true: .ci/run builds it before these checks)")
        pytest.skip(message)
    missing = [tool for tool in ("pdfinfo", "pdftotext", "pdffonts") if not shutil.which(tool)]
    if missing:
        pytest.fail(f"{', '.join(missing)} missing: apt-get install poppler-utils")
    return PDF


def _run(*cmd):
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


def _pages_text(pdf, first, last):
    """The text of pages first..last (1-based, physical), one string per page."""
    text = _run("pdftotext", "-layout", "-f", str(first), "-l", str(last), str(pdf), "-")
    return text.split("\f")[: last - first + 1]


def _page_count(pdf):
    return int(re.search(r"^Pages:\s+(\d+)", _run("pdfinfo", str(pdf)), re.MULTILINE).group(1))


def _destinations(pdf):
    """hyperref's named destinations ("chapter.4", "part.2") -> physical page."""
    out = _run("pdfinfo", "-dests", str(pdf))
    return {name: int(page) for page, name in re.findall(r'^\s*(\d+)\s+\[.*?\]\s+"([^"]+)"', out, re.MULTILINE)}


def _norm(text):
    text = re.sub(r"[`*$]", "", text).replace("\u2019", "'").replace("\u2018", "'")
    return " ".join(text.split()).casefold()


# -- what the site numbers, from _toc.yml and the chapter sources -----------------------------------

def _source(doc):
    return ROOT / f"{doc}.md"


def _headings(doc):
    """(level, title) of the markdown headings of ``doc``, outside fenced blocks."""
    out, fence = [], None
    for line in _source(doc).read_text(encoding="utf-8").splitlines():
        m = re.match(r"^\s*(`{3,}|~{3,})", line)
        if m:
            if fence is None:
                fence = m.group(1)
            elif m.group(1).startswith(fence) and not line.strip()[len(m.group(1)):].strip():
                fence = None
            continue
        if fence is None:
            h = re.match(r"^(#{1,6})\s+(.*\S)", line)
            if h:
                out.append((len(h.group(1)), h.group(2)))
    return out


def site_chapters():
    """[(site number or None, title, doc)] for every top-level entry of _toc.yml, in order.

    Only the parts marked ``numbered: true`` are numbered on the site, consecutively across
    parts (sphinx-multitoc-numbering); the rest (Notation, the back matter) are not.
    """
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    chapters, number = [], 0
    for part in toc["parts"]:
        for entry in part["chapters"]:
            doc = entry["file"]
            title = _headings(doc)[0][1]
            if part.get("numbered"):
                number += 1
                chapters.append((number, title, doc))
            else:
                chapters.append((None, title, doc))
    return chapters


def _exercise_numbers(doc):
    text = _source(doc).read_text(encoding="utf-8")
    return re.findall(r"^`{3,}\{admonition\}\s+Exercise\s+(\d+\.\d+)", text, re.MULTILINE)


def test_latex_numbering_of_a_document():
    from linbook_latex import numbering_latex

    assert numbering_latex({}) == "\\setcounter{secnumdepth}{-1}"
    assert numbering_latex({"": ()}) == "\\setcounter{secnumdepth}{-1}"
    chapter = {"": (4,), "#model": (4, 1), "#irls": (4, 3), "#irls-step": (4, 3, 1)}
    assert numbering_latex(chapter) == "\\setcounter{secnumdepth}{2}\\setcounter{chapter}{3}"
    section_doc = {"": (16, 2), "#a": (16, 2, 1)}
    assert numbering_latex(section_doc) == "\\setcounter{secnumdepth}{2}\\setcounter{section}{1}"


def test_site_numbering_is_read_from_the_sources():
    chapters = site_chapters()
    numbered = [(n, doc) for n, _, doc in chapters if n is not None]
    assert [n for n, _ in numbered] == list(range(1, len(numbered) + 1)) and len(numbered) >= 10
    # the chapter files say their number, and their exercises carry it
    for n, doc in numbered:
        assert int(re.match(r"chapters/(\d+)_", doc).group(1)) == n, doc
        exercises = _exercise_numbers(doc)
        assert exercises, f"{doc}: no exercises found"
        assert all(e.split(".")[0] == str(n) for e in exercises), (doc, exercises)
    assert any(title == "Notation" and n is None for n, title, _ in chapters)


# -- the PDF ------------------------------------------------------------------------------------------

@needs_pdf
def test_page_count(pdf):
    pages = _page_count(pdf)
    assert pages in PAGES, f"{pages} pages, expected {PAGES.start}-{PAGES.stop - 1}"


@needs_pdf
def test_no_missing_glyphs(pdf):
    logs = sorted(PDF_DIR.glob("*.log"))
    assert logs, f"no LaTeX log in {PDF_DIR}"
    for log in logs:
        text = log.read_text(encoding="utf-8", errors="replace")
        missing = re.findall(r"Missing character: There is no (.+?) in font ([^!]*)!", text)
        assert not missing, f"{log.name}: {len(missing)} missing glyphs, e.g. {sorted(set(missing))[:5]}"


@needs_pdf
def test_fonts_are_embedded(pdf):
    rows = _run("pdffonts", str(pdf)).splitlines()[2:]
    assert rows, "pdffonts lists no fonts"
    # columns: name type encoding emb sub uni object-id; a name may hold spaces, so read from the right
    not_embedded = [row for row in rows if row.split()[-5] != "yes"]
    assert not not_embedded, f"fonts not embedded: {not_embedded}"


@needs_pdf
def test_version_on_title_page(pdf):
    title_page = _norm(_pages_text(pdf, 1, 1)[0])
    assert f"release {linbook.__version__}" in title_page, title_page[:300]


def _contents(pdf, dests):
    """Chapter-level and section-level lines of the PDF's table of contents."""
    first_part = min(p for name, p in dests.items() if name.startswith("part."))
    text = "\n".join(_pages_text(pdf, 1, first_part - 1))
    chapters, sections = [], []
    for line in text.splitlines():
        section = re.match(r"^\s+(\d+)\.(\d+)\s+(.*?)[\s.]+\d+$", line)
        chapter = re.match(r"^(?:(\d+)\s+)?(\S.*?)\s+(\d+)$", line)
        if section:
            sections.append((int(section.group(1)), int(section.group(2)), section.group(3)))
        elif chapter and not re.match(r"^[IVXLC]+\s", line):  # a part is "II   Chapters   7"
            chapters.append((int(chapter.group(1)) if chapter.group(1) else None, chapter.group(2)))
    return chapters, sections


@needs_pdf
def test_contents_number_chapters_as_the_site(pdf):
    dests = _destinations(pdf)
    chapters, _ = _contents(pdf, dests)
    expected = [(n, _norm(title)) for n, title, _ in site_chapters()]
    got = [(n, _norm(title)) for n, title in chapters][: len(expected)]
    assert got == expected, "PDF contents vs the site's chapters:\n" + "\n".join(
        f"  {g!s:60} {e!s}" for g, e in zip(got, expected))


@needs_pdf
def test_sections_number_as_the_site(pdf):
    _, sections = _contents(pdf, _destinations(pdf))
    for n, _, doc in site_chapters():
        if n is None:
            continue
        want = [_norm(title) for level, title in _headings(doc) if level == 2]
        got = [(k, title) for c, k, title in sections if c == n]
        assert [k for k, _ in got] == list(range(1, len(want) + 1)), f"chapter {n} ({doc}): sections {got}"
        assert _norm(got[-1][1]) == want[-1], f"chapter {n}: last section {got[-1]} != {want[-1]!r}"


@needs_pdf
def test_chapter_pages_and_exercises_as_the_site(pdf):
    dests = _destinations(pdf)
    pages = _page_count(pdf)
    starts = sorted(p for name, p in dests.items() if re.match(r"(chapter|part)\.\d+$", name))
    for n, title, doc in site_chapters():
        if n is None:
            continue
        first = dests.get(f"chapter.{n}")
        assert first, f"no chapter {n} in the PDF (site chapter {n} is {title!r})"
        last = min([p for p in starts if p > first] or [pages + 1]) - 1
        text = _pages_text(pdf, first, last)
        assert _norm(title) in _norm(text[0]), f"PDF chapter {n} opens with {text[0][:200]!r}, not {title!r}"
        found = re.findall(r"^\s*Exercise\s+(\d+)\.(\d+)", "\n".join(text), re.MULTILINE)
        assert [f"{a}.{b}" for a, b in found] == _exercise_numbers(doc), (
            f"PDF chapter {n} ({title}, pages {first}-{last}) holds exercises {found}")


@pytest.mark.site
def test_site_numbers_chapters_the_same():
    """The built site (make book / make test) numbers each chapter as site_chapters() says."""
    if not (HTML / "index.html").exists():
        pytest.skip(f"no built site at {HTML}: run `make book`")
    for n, title, doc in site_chapters():
        page = (HTML / f"{doc}.html").read_text(encoding="utf-8")
        # the page's own headings carry a permalink (the theme repeats the title without one)
        h1 = next(h for h in re.findall(r"<h1[^>]*>(.*?)</h1>", page, re.DOTALL) if "headerlink" in h)
        shown = re.search(r'class="section-number">\s*(\d+)\.\s*<', h1)
        assert (int(shown.group(1)) if shown else None) == n, f"{doc}: site heading {h1!r}"
        if n is not None:
            sections = re.findall(r'<h2[^>]*><span class="section-number">(\d+)\.(\d+)\.\s*</span>', page)
            count = sum(level == 2 for level, _ in _headings(doc))
            assert sections == [(str(n), str(k)) for k in range(1, count + 1)], f"{doc}: site sections {sections}"
