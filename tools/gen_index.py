"""Generate the cross-index page chapters/backmatter/index_map.md.

Links both ways between the source notes, the chapters, linbook and the tests:

* **note equation / figure -> chapter section -> linbook symbol -> test**: every "eq. (X.Y)",
  "Figure X.Y", "Algorithm X.Y" or "Table X.Y" a chapter's markdown mentions, attributed to
  the chapter section (heading) it appears under and to the note file last named before it,
  plus every errata-registry entry (``tools/registry.py``: note, section, equation, chapter;
  its section is where the check quoting its id sits);
* **linbook symbol -> chapter section -> tests**: each public symbol's docstring line
  ``Derived in: chapter "<title>" § "<section>"`` and the test files that use the symbol.

Run: ``.venv/bin/python tools/gen_index.py`` (``--check`` exits 1 if the committed page is
stale). tests/test_index.py checks the committed page equals a fresh generation.
Section links use heading anchors when ``myst_heading_anchors`` is set in ``_config.yml``'s
``sphinx.config`` (Jupyter Book 1 ignores it under ``parse:``); otherwise they link the
chapter page. Unresolved references are listed at the end of the page, never as broken links.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from registry import ROOT, load_entries, load_sections  # noqa: E402

OUT = ROOT / "chapters" / "backmatter" / "index_map.md"
NAMESPACES = ["numerics", "symbolic", "datasets", "plotting", "optim", "online"]
NOTE_FILE = re.compile(r"\b(\d{3}_[0-9a-f]{16}\.txt)\b")
REFS = [
    ("eq.", re.compile(r"\b(?:eqs?\.|equations?)\s*(?:\(\s*((?:\d+\.)*\d+[a-z]?)\s*\)|((?:\d+\.)+\d+[a-z]?))", re.I)),
    ("Figure", re.compile(r"\b(?:fig\.|figures?)\s+((?:\d+\.)+\d+[a-z]?)", re.I)),
    ("Algorithm", re.compile(r"\balgorithms?\s+((?:\d+\.)+\d+)", re.I)),
    ("Table", re.compile(r"\btables?\s+((?:\d+\.)+\d+)", re.I)),
]
DERIVED = re.compile(r'chapter\s+"([^"]+)"(?:\s*§\s*"([^"]+)")?')
_SLUG_CLEAN = re.compile(r"[^\w\u4e00-\u9fff\- ]")


# -- chapters -------------------------------------------------------------------------------
def _config():
    return yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8")) or {}


def heading_anchor_depth():
    sphinx_cfg = (_config().get("sphinx") or {}).get("config") or {}
    return int(sphinx_cfg.get("myst_heading_anchors", 0) or 0)


def repo_blob_url():
    repo = _config().get("repository") or {}
    url = (repo.get("url") or "").rstrip("/")
    return f"{url}/blob/{repo.get('branch', 'main')}/" if url else ""


_MD = None


def _heading_text(title):
    """The heading's text as myst-parser sees it: text and inline code; math dropped."""
    global _MD
    try:
        if _MD is None:
            from markdown_it.renderer import RendererHTML
            from myst_parser.config.main import MdParserConfig
            from myst_parser.parsers.mdit import create_md_parser
            _MD = create_md_parser(MdParserConfig(enable_extensions={"dollarmath", "amsmath"}), RendererHTML)
        kids = _MD.parseInline(title)[0].children or []
        return "".join(c.content for c in kids if c.type in ("text", "code_inline"))
    except ImportError:  # approximate without myst-parser
        text = re.sub(r"\$\$.*?\$\$|\$[^$]*\$", "", title)
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
        return text.replace("`", "").replace("*", "")


def slugify(title):
    """myst-parser's default heading slug (``myst_parser...default_slugify``)."""
    return _SLUG_CLEAN.sub("", _heading_text(title).lower().replace(" ", "-"))


def _markdown_lines(text):
    """Lines of a markdown cell outside code fences, with a flag for being in a fence."""
    fence = None
    for line in text.split("\n"):
        m = re.match(r"^\s*(`{3,}|~{3,})(.*)$", line)
        if fence is None and m and not m.group(2).lstrip().startswith("{"):
            fence = m.group(1)
            continue
        if fence is not None:
            if re.match(r"^\s*" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}\s*$", line):
                fence = None
            continue
        yield line


def load_chapter(nb_path, depth):
    """Title, sections (level, title, slug) and references of one chapter notebook."""
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    title, sections, refs, ids_at = nb_path.stem, [], [], []
    slugs, current, note = set(), None, ""
    for cell in nb.get("cells", []):
        src = cell.get("source", "")
        src = "".join(src) if isinstance(src, list) else src
        if cell.get("cell_type") != "markdown":
            ids_at.append((current, src))
            continue
        for line in _markdown_lines(src):
            h = re.match(r"^(#{1,6})\s+(.+?)\s*#*\s*$", line)
            if h:
                level, text = len(h.group(1)), h.group(2).strip()
                if level == 1 and title == nb_path.stem:
                    title = text
                slug = None
                if level <= depth:
                    slug, base, i = slugify(text), slugify(text), 1
                    while slug in slugs:
                        slug, i = f"{base}-{i}", i + 1
                    slugs.add(slug)
                if level >= 2 and (level <= 3 or current is None):
                    sec = {"level": level, "title": text, "slug": slug}
                    sections.append(sec)
                    current = sec
                continue
            for m in NOTE_FILE.finditer(line):
                note = m.group(1)
            for kind, pat in REFS:
                for m in pat.finditer(line):
                    # the note named on this line before the reference, else the last one named
                    before = NOTE_FILE.findall(line[:m.start()])
                    number = next(g for g in m.groups() if g)
                    refs.append({"kind": kind, "number": number.rstrip("."),
                                 "note": before[-1] if before else note, "section": current})
        ids_at.append((current, src))
    return {"stem": nb_path.stem, "title": title, "sections": sections, "refs": refs, "cells": ids_at}


def load_chapters():
    depth = heading_anchor_depth()
    return {p.stem: load_chapter(p, depth) for p in sorted((ROOT / "chapters").glob("*.ipynb"))}


def section_link(chapter, section=None):
    """MyST link from chapters/backmatter/ to a chapter (and section when it has an anchor)."""
    # Markdown links (not {doc}): their text may hold inline math, which MathJax typesets.
    if section is None:
        return f"[{_cell(chapter['title'])}](../{chapter['stem']}.ipynb)"
    label = _cell(f"{chapter['title']} § {section['title']}")
    anchor = f"#{section['slug']}" if section.get("slug") else ""
    return f"[{label}](../{chapter['stem']}.ipynb{anchor})"


def _cell(text):
    return " ".join(str(text).split()).replace("|", "\\|")


def find_section(chapter, name):
    if chapter is None or not name:
        return None
    norm = lambda s: re.sub(r"[\s`*$]+", " ", s).strip().lower()  # noqa: E731
    for sec in chapter["sections"]:
        if norm(sec["title"]) == norm(name):
            return sec
    for sec in chapter["sections"]:
        if norm(sec["title"]).startswith(norm(name)) or norm(name).startswith(norm(sec["title"])):
            return sec
    return None


# -- linbook ------------------------------------------------------------------------------------
def public_symbols():
    """[(public name, object)] for linbook.__all__ (non-modules) and the namespace modules."""
    import linbook

    out, seen = [], set()
    for name in linbook.__all__:
        obj = getattr(linbook, name)
        if inspect.ismodule(obj) or not (inspect.isclass(obj) or callable(obj)):
            continue
        out.append((f"linbook.{name}", obj))
        seen.add(id(obj))
    for mod_name in NAMESPACES:
        mod = importlib.import_module(f"linbook.{mod_name}")
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name)
            if id(obj) in seen or inspect.ismodule(obj) or not (inspect.isclass(obj) or callable(obj)):
                continue
            out.append((f"linbook.{mod_name}.{name}", obj))
            seen.add(id(obj))
    return out


def derived_in(obj):
    """The text of the docstring's 'Derived in:' paragraph ('' if none)."""
    doc = inspect.getdoc(obj) or ""
    m = re.search(r"Derived in:(.*?)(?:\n\s*\n|\Z)", doc, re.S)
    return " ".join(m.group(1).split()) if m else ""


def qualified(obj, public):
    mod = getattr(obj, "__module__", "") or ""
    return f"{mod}.{obj.__qualname__}" if mod.startswith("linbook") else public


def tests_using(public, tests):
    short = public.split(".")[-1]
    pat = re.compile(r"\b" + re.escape(short) + r"\b")
    return sorted(name for name, text in tests.items() if pat.search(text))


def load_tests():
    skip = {"test_api_snapshot.py", "test_index.py"}
    return {p.name: p.read_text(encoding="utf-8") for p in sorted((ROOT / "tests").glob("test_*.py"))
            if p.name not in skip}


# -- page ---------------------------------------------------------------------------------------
def _sort_key(number):
    return [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", number)]


def build_page():
    chapters = load_chapters()
    by_title = {c["title"]: c for c in chapters.values()}
    tests = load_tests()
    blob = repo_blob_url()
    unresolved = []

    def test_links(names):
        if not names:
            return "—"
        return ", ".join(f"[{n}]({blob}tests/{n})" if blob else f"`{n}`" for n in names)

    # symbols and where they are derived
    symbols = []
    by_section = defaultdict(list)
    for public, obj in public_symbols():
        text = derived_in(obj)
        places = []
        for title, sec_name in DERIVED.findall(text):
            ch = by_title.get(title)
            sec = find_section(ch, sec_name) if ch else None
            if ch is None:
                unresolved.append(f"`{public}`: chapter \"{title}\" not found")
            elif sec_name and sec is None:
                unresolved.append(f"`{public}`: section \"{sec_name}\" not found in chapter \"{title}\"")
            places.append((ch, sec, title, sec_name))
            if ch is not None:
                by_section[(ch["stem"], sec["title"] if sec else None)].append(public)
        symbols.append({"public": public, "target": qualified(obj, public), "text": text,
                        "places": places, "tests": tests_using(public, tests)})
    sym_tests = {s["public"]: s["tests"] for s in symbols}

    def sym_link(public):
        s = next(x for x in symbols if x["public"] == public)
        return f"{{py:obj}}`{public.removeprefix('linbook.')} <{s['target']}>`"

    # rows: note references from chapters and the registry
    sections_meta = load_sections()
    rows = defaultdict(lambda: {"places": [], "ids": []})
    for ch in chapters.values():
        for r in ch["refs"]:
            key = (r["note"], r["kind"], r["number"])
            place = (ch["stem"], r["section"]["title"] if r["section"] else None)
            if place not in rows[key]["places"]:
                rows[key]["places"].append(place)
    for e in load_entries():
        ch = chapters.get(e.get("chapter"))
        if ch is None:
            continue
        sec = None
        for s, src in ch["cells"]:
            if e["id"] in src:
                sec = s
                break
        eq = str(e.get("equation") or "").strip()
        m = re.search(r"((?:\d+\.)+\d+[a-z]?)", eq)
        kind = "eq." if m and not re.search(r"fig|alg|table", eq, re.I) else "§"
        number = m.group(1) if kind == "eq." else f"{e['section']}" + (f" {eq}" if eq else "")
        if kind == "eq." and re.search(r"fig", eq, re.I):
            kind = "Figure"
        key = (e["note"], kind, number)
        place = (ch["stem"], sec["title"] if sec else None)
        if place not in rows[key]["places"]:
            rows[key]["places"].append(place)
        rows[key]["ids"].append(e["id"])

    lines = [
        "# Cross-index: notes, chapters, linbook, tests",
        "",
        "Where each figure and numbered equation of the source notes is treated in the book, which",
        "linbook symbol implements that section, and which tests exercise it; then every public",
        "linbook symbol with the section that derives it (its docstring's \"Derived in\" line) and its",
        "tests. Registry ids link to the {doc}`errata <errata>` and {doc}`coverage <coverage>` pages.",
        "",
        "This page is generated by `tools/gen_index.py` from the chapters, the errata registry,",
        "linbook's docstrings and the tests; do not edit it by hand.",
        "",
        "## Note figures and equations",
        "",
    ]
    notes = sorted({k[0] for k in rows}, key=lambda n: (n == "", n))
    if not notes:
        lines += ["No chapter mentions a note equation or figure yet.", ""]
    for note in notes:
        title = sections_meta.get(note, {}).get("title", "") if note else ""
        lines += [f"### `{note}`" if note else "### Note not named in the chapter", ""]
        if title:
            lines += [f"{title}.", ""]
        lines += ["| note | chapter section | linbook | tests | registry |", "|---|---|---|---|---|"]
        keys = sorted((k for k in rows if k[0] == note), key=lambda k: (k[1] != "eq.", k[1], _sort_key(k[2])))
        for key in keys:
            row = rows[key]
            label = f"{key[1]} ({key[2]})" if key[1] == "eq." else f"{key[1]} {key[2]}"
            places, syms = [], []
            # a chapter-level mention (the opening overview) is redundant next to its sections
            sectioned = {stem for stem, sec_title in row["places"] if sec_title}
            for stem, sec_title in row["places"]:
                if sec_title is None and stem in sectioned:
                    continue
                ch = chapters[stem]
                sec = next((s for s in ch["sections"] if s["title"] == sec_title), None)
                places.append(section_link(ch, sec))
                syms += [s for s in by_section.get((stem, sec_title), []) if s not in syms]
            tst = sorted({t for s in syms for t in sym_tests[s]})
            lines.append(f"| {_cell(label)} | {'<br>'.join(places)} | "
                         f"{', '.join(sym_link(s) for s in syms) or '—'} | {test_links(tst)} | "
                         f"{', '.join(f'`{i}`' for i in row['ids']) or '—'} |")
        lines.append("")

    lines += ["## linbook symbols", "",
              "| symbol | derived in | tests |", "|---|---|---|"]
    for s in sorted(symbols, key=lambda s: s["public"].lower()):
        where = []
        for ch, sec, title, sec_name in s["places"]:
            where.append(section_link(ch, sec) if ch else _cell(f'"{title}" § "{sec_name}"'))
        if not where:
            where = [_cell(s["text"]) if s["text"] else "**no \"Derived in\" line**"]
        lines.append(f"| {sym_link(s['public'])} | {'<br>'.join(where)} | {test_links(s['tests'])} |")
    lines.append("")

    lines += ["## Unresolved references", ""]
    if unresolved:
        lines += ["\"Derived in\" lines whose chapter or section the book does not have (yet):", ""]
        lines += [f"* {u}" for u in sorted(set(unresolved))]
    else:
        lines += ["None: every \"Derived in\" line points to an existing chapter section."]
    lines.append("")
    return "\n".join(lines)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    page = build_page()
    if "--check" in argv:
        same = OUT.exists() and OUT.read_text(encoding="utf-8") == page
        print("index_map.md is up to date" if same else "index_map.md is stale: run tools/gen_index.py")
        return 0 if same else 1
    OUT.write_text(page, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
