"""Generate the errata and coverage pages from the registry, and the files that repeat a setting.

Writes (``make backmatter`` runs it; unit tests check the committed files equal a fresh
generation, so they cannot drift):

* ``chapters/backmatter/errata.md`` (the overview) and one errata page per source note,
  ``chapters/backmatter/<page>.md`` (``page`` and the note's reader-facing ``name`` are in
  ``errata/sections.yaml``): the note's sections in the note's order, under each the places
  (equation or passage) in the section's order, one card per erratum;
* ``chapters/backmatter/coverage.md``: every section of every note, its home chapter and its
  counts (the only page that names the notes' files);
* ``CITATION.cff`` and ``chapters/cite_linbook.bib`` (the home page's BibTeX entry), and the
  Colab cell of each chapter: they repeat the version (``pyproject.toml``) and the repository
  URL (``repository.url`` of ``_config.yml``, see ``tools/book_settings.py``).

The pages are lists, not tables, so they read on a phone. Each card has a stable label
``erratum-<id>`` and links to the chapter section whose code cell quotes the entry's id (the
check that proves it).
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from book_settings import repository_url, version  # noqa: E402
from gen_index import load_chapters, section_link, section_of_id  # noqa: E402
from registry import ROOT, load_entries, load_sections, note_equations, validate  # noqa: E402

OUT = ROOT / "chapters" / "backmatter"
CITATION = ROOT / "CITATION.cff"
BIBTEX = ROOT / "chapters" / "cite_linbook.bib"
TITLE = "linbook: linear models for machine learning, derived and checked"


def _one_line(text):
    return " ".join(str(text).split())


def note_name(info):
    return info["name"]


def section_heading(s):
    """"§ 8.3.1 MLE: ..." for numbered sections; the title alone where the note has no numbers."""
    sid = str(s["id"])
    return f"§ {sid} {_one_line(s['title'])}" if re.match(r"^\d", sid) else _one_line(s["title"])


def place_in_section(e):
    """Where in its section an entry is: "eq. (8.9)", "eqs. (8.5-8.7), before ...", "after (8.72)"."""
    eqs = note_equations(e.get("note_eq"))
    parts = []
    if eqs:
        parts.append(f"eq. ({e['note_eq']})" if len(eqs) == 1 else f"eqs. ({e['note_eq']})")
    if str(e.get("locator") or "").strip():
        parts.append(_one_line(e["locator"]))
    return ", ".join(parts) or "The section's text"


def _number_key(number):
    return tuple(int(x) for x in re.findall(r"\d+", number))


def place_order(e):
    """Sort key of an entry inside its section: by the first equation it is at, before or after."""
    eqs = note_equations(e.get("note_eq"))
    if eqs:
        return (0, _number_key(eqs[0]), 0)
    loc = str(e.get("locator") or "")
    m = re.search(r"(before|after)?[^()]*?\((\d+(?:\.\d+)*)\)", loc)
    if m:
        return (0, _number_key(m.group(2)), -1 if m.group(1) == "before" else 1)
    return (1, (), 0)   # a passage without an equation number: after the numbered places


def entry_card(e, chapters):
    ch = chapters.get(e["chapter"])
    sec = section_of_id(ch, e["id"]) if ch else None
    link = section_link(ch, sec) if ch else f"`{e['chapter']}`"
    lines = [f"(erratum-{e['id']})=", f"`{e['id']}`", "",
             "The note says", f": {_one_line(e['note_says'])}", "",
             "Correct", f": {_one_line(e['correct'])}", "",
             "Checked by", f": {_one_line(e['checked_by'])}, in {link}", ""]
    also = [chapters[c] for c in e.get("see_also") or [] if c in chapters]
    if also:
        lines += ["Also discussed in", ": " + "; ".join(section_link(c) for c in also), ""]
    return lines


def _corrections(entries):
    by_note = defaultdict(list)
    for e in entries:
        if e["status"] == "corrected":
            by_note[e["note"]].append(e)
    return by_note


def errata_page(entries, sections, chapters=None):
    """The overview: what the errata are and one line per note, linking to its page."""
    by_note = _corrections(entries)
    total = sum(len(v) for v in by_note.values())
    lines = [
        "# Errata of the source notes",
        "",
        "Every place where a source note is wrong, as found and checked by this book, one page per",
        "note. Each page follows its note: the note's sections in order, and in each section the",
        "places (an equation, or a passage of text) in the order the note reaches them. Each entry",
        "says what the note says, what is right, and how the chapter checks it; the check is a code",
        "cell that raises when the corrected form fails, and the link goes to the section that holds",
        "it. The short name in code font (such as `logreg-83-extra-log`) is the entry's name in the",
        "registry, the label the checking cell prints. Claims that were checked and found right are",
        "counted on the {doc}`coverage page <coverage>`.",
        "",
        "These pages are generated from the registry in `errata/*.yaml` by `tools/gen_backmatter.py`.",
        "",
        f"{total} corrections in {len(by_note)} notes:",
        "",
    ]
    for note, info in sections.items():
        n = len(by_note.get(note, []))
        if n:
            lines.append(f"* {{doc}}`{note_name(info)} <{info['page']}>`: {n} correction{'s' * (n != 1)}")
    lines.append("")
    return "\n".join(lines)


def note_errata_page(note, entries, sections, chapters=None):
    """One note's errata: its sections in the note's order, places in the section's order."""
    chapters = load_chapters() if chapters is None else chapters
    info = sections[note]
    rows = _corrections(entries).get(note, [])
    lines = [f"# Errata: {note_name(info)[0].lower()}{note_name(info)[1:]}", "",
             f"{len(rows)} corrections, in the order of the note. All notes: {{doc}}`errata`.", ""]
    by_section = defaultdict(list)
    for e in rows:
        by_section[str(e["section"])].append(e)
    places = [place_in_section(e) for e in rows]
    for s in info["sections"]:
        sec_rows = sorted(by_section.get(str(s["id"]), []), key=place_order)   # stable: registry order
        if not sec_rows:
            continue
        lines += [f"## {section_heading(s)}", ""]
        grouped = defaultdict(list)
        for e in sec_rows:
            grouped[place_in_section(e)].append(e)
        for place, group in grouped.items():
            # A place named in two sections (rare: "The section's text") gets its section prefixed.
            heading = place if places.count(place) == len(group) else f"§ {s['id']}, {place}"
            lines += [f"### {heading}", ""]
            for e in group:
                lines += entry_card(e, chapters)
    return "\n".join(lines)


def errata_pages(entries, sections, chapters=None):
    """``{file name: text}`` of the overview and of each note's page (notes with errata only)."""
    chapters = load_chapters() if chapters is None else chapters
    pages = {"errata.md": errata_page(entries, sections, chapters)}
    by_note = _corrections(entries)
    for note, info in sections.items():
        if by_note.get(note):
            pages[f"{info['page']}.md"] = note_errata_page(note, entries, sections, chapters)
    return pages


def note_heading(note, info):
    """The coverage page's heading of a note, with the note's file name in small text."""
    return [f"## {note_name(info)}", "", "```{rst-class} note-file", "```", "",
            f"Note file `{note}`", ""]


def coverage_page(entries, sections, chapters=None):
    chapters = load_chapters() if chapters is None else chapters
    counts = defaultdict(lambda: [0, 0])
    for e in entries:
        counts[(e["note"], str(e["section"]))][0 if e["status"] == "verified" else 1] += 1
    lines = [
        "# Coverage of the source notes",
        "",
        "Every section of the five source notes, the chapter that is its home, and how many of its",
        "equations and claims the book checks in code: *verified* (the note is right) and",
        "*corrected* (listed on the note's errata page). Under each note's name is the file name",
        "of the note.",
        "",
        "This page is generated from `errata/sections.yaml` and `errata/*.yaml` by `tools/gen_backmatter.py`.",
        "",
    ]
    for note, info in sections.items():
        lines += note_heading(note, info)
        for s in info["sections"]:
            v, c = counts[(note, str(s["id"]))]
            ch = chapters.get(s["chapter"])
            home = section_link(ch) if ch else f"`{s['chapter']}`"
            corrected = f"{{doc}}`{c} corrected <{info['page']}>`" if c else "0 corrected"
            lines += [section_heading(s), f": {home}: {v} verified, {corrected}", ""]
    return "\n".join(lines)


# -- files that repeat the version and the repository URL ---------------------------------------
def citation_cff(version_, url):
    """CITATION.cff (https://citation-file-format.github.io): no repository fields without a URL."""
    lines = [
        "# Citation metadata, generated by tools/gen_backmatter.py from pyproject.toml (version) and",
        "# _config.yml (repository.url): edit those, then run `make backmatter`.",
        "cff-version: 1.2.0",
        'message: "If you use this book or the linbook package, please cite it as below."',
        "type: software",
        f'title: "{TITLE}"',
        "authors:",
        '  - name: "The linbook authors"',
        f'version: "{version_}"',
        "license: MIT",
    ]
    if url:
        lines += [f'repository-code: "{url}"', f'url: "{url}"']
    lines += [
        "abstract: >-",
        "  Executable notes on linear models for machine learning (estimation, linear and logistic",
        "  regression, the perceptron, optimisers, Gaussian discriminant analysis, the Laplace",
        "  approximation and BIC, online learning, model selection) in which every derivation step is",
        "  checked in code, with errata of the source notes, and linbook, a Python package with",
        "  scikit-learn's conventions that implements the models.",
        "keywords:",
        "  - machine learning",
        "  - linear models",
        "  - logistic regression",
        "  - jupyter book",
        "  - scikit-learn",
        "",
    ]
    return "\n".join(lines)


def bibtex_entry(version_, url):
    """The BibTeX entry the home page shows (included from chapters/cite_linbook.bib)."""
    fields = [("title", f"{{{TITLE}}}"), ("author", "{{The linbook authors}}"), ("year", "{2026}"),
              ("edition", f"{{version {version_}}}")]
    if url:
        fields.append(("url", f"{{{url}}}"))
    fields.append(("note", "{Executable notes with the Python package linbook}"))
    width = max(len(k) for k, _ in fields)
    body = ",\n".join(f"  {k.ljust(width)} = {v}" for k, v in fields)
    return f"@book{{linbook,\n{body}\n}}\n"


COLAB_CELL = re.compile(r"(```\{code-cell\} ipython3\n:tags: \[colab-setup[^\]]*\]\n)(.*?)(^```$)", re.S | re.M)


def colab_cell(url):
    """Body of each chapter's first code cell (tagged colab-setup, removed from the site and PDF).

    On Colab it installs linbook from the book's repository; without one it says how to install
    linbook by hand. Anywhere else (linbook importable) it does nothing.
    """
    return f'''
# On Google Colab only: install linbook, the book's package, from the book's repository
# (repository.url of _config.yml). Anywhere linbook is installed this does nothing.
import importlib.util, subprocess, sys

LINBOOK_REPOSITORY = "{url}"
if "google.colab" in sys.modules and importlib.util.find_spec("linbook") is None:
    if not LINBOOK_REPOSITORY:
        raise ModuleNotFoundError("no linbook here: pip install a linbook wheel (make wheel)")
    pip = [sys.executable, "-m", "pip", "install", "-q"]
    subprocess.run(pip + [f"linbook @ git+{{LINBOOK_REPOSITORY}}"], check=True)
'''


def chapter_with_colab_cell(text, url):
    """The chapter source with its Colab cell written for ``url`` (unchanged if it has none)."""
    return COLAB_CELL.sub(lambda m: m.group(1) + colab_cell(url) + m.group(3), text, count=1)


def setting_files():
    """``{path: text}`` of every generated file that repeats the version or the repository URL."""
    url, ver = repository_url(), version()
    files = {CITATION: citation_cff(ver, url), BIBTEX: bibtex_entry(ver, url)}
    for src in sorted((ROOT / "chapters").glob("[0-9][0-9]_*.md")):
        text = src.read_text(encoding="utf-8")
        files[src] = chapter_with_colab_cell(text, url)
    return files


def main():
    entries, sections = load_entries(), load_sections()
    problems = validate(entries, sections)
    if problems:
        print("registry problems:\n  " + "\n  ".join(problems))
        sys.exit(1)
    chapters = load_chapters()
    OUT.mkdir(parents=True, exist_ok=True)
    for name, text in errata_pages(entries, sections, chapters).items():
        (OUT / name).write_text(text, encoding="utf-8")
    (OUT / "coverage.md").write_text(coverage_page(entries, sections, chapters), encoding="utf-8")
    print(f"errata/coverage pages written from {len(entries)} registry entries")
    changed = []
    for path, text in setting_files().items():
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            changed.append(path.relative_to(ROOT).as_posix())
    if changed:
        print("rewritten from the version / repository settings: " + ", ".join(changed))
        if any(c.endswith(".md") for c in changed):
            print("chapter sources changed: run `make notebooks` to regenerate their notebooks")


if __name__ == "__main__":
    main()
