"""Generate the cross-index page chapters/backmatter/index_map.md.

Built only from structured sources and real references, never from prose:

* the **errata registry** (``tools/registry.py``): each entry's note, ``note_eq`` (the note's
  own equation numbers), ``locator`` and chapter; the chapter section is the heading above
  the code cell that quotes the entry's id (the check that proves it);
* the **chapter sources** (``chapters/<chapter>.md`` read with jupytext, falling back to the
  ``.ipynb``): headings and their anchors, and the linbook names each section's code cells use,
  found by parsing the cell with ``ast`` and resolving imports and aliases. (sphinx-codeautolink's
  ``autolink-examples`` tables were tried for the per-symbol list: they key a use by the resolved
  location, which for functions re-exported by a package is not the documented name, and they
  give neither the section-to-names rows nor the tests, so this parser stays.)
* the **tests**: the linbook names each ``tests/**/test_*.py`` file imports and uses (``ast``);
* linbook's docstrings: each public symbol's ``Derived in: chapter "<title>" § "<section>"``.

Run: ``.venv/bin/python tools/gen_index.py`` (``--check`` exits 1 if the committed page is
stale). tests/test_index.py checks the committed page equals a fresh generation. Section
links use the heading anchors of ``myst_heading_anchors`` (``_config.yml``, ``sphinx.config``).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from book_settings import book_config, repository_branch, repository_url  # noqa: E402
from registry import CHAPTERS, ROOT, load_entries, load_sections, note_equations  # noqa: E402

OUT = ROOT / "chapters" / "backmatter" / "index_map.md"
TESTS = ROOT / "tests"
# The checking and plotting helpers every section uses are left out of the per-claim rows.
TOOLING = ("linbook.symbolic.", "linbook.plotting.", "linbook.exercises.")
NAMESPACES = ["numerics", "symbolic", "datasets", "plotting", "optim", "online"]
DERIVED = re.compile(r'chapter\s+"([^"]+)"(?:\s*§\s*"([^"]+)")?')
_SLUG_CLEAN = re.compile(r"[^\w\u4e00-\u9fff\- ]")
_FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


# -- configuration ------------------------------------------------------------------------------
def heading_anchor_depth():
    sphinx_cfg = (book_config().get("sphinx") or {}).get("config") or {}
    return int(sphinx_cfg.get("myst_heading_anchors", 0) or 0)


def repo_blob_url():
    """Base of links to files in the book's repository; "" (no links) when it names none."""
    url = repository_url()
    return f"{url}/blob/{repository_branch()}/" if url else ""


# -- headings and their anchors -----------------------------------------------------------------
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


# -- chapter sources ----------------------------------------------------------------------------
def _md_cells(text):
    """Cells of a MyST (jupytext) text notebook: ``[("markdown"|"code", source)]``."""
    import jupytext

    return [("code" if c.cell_type == "code" else "markdown", c.source)
            for c in jupytext.reads(text, fmt="md:myst").cells]


def _ipynb_cells(text):
    out = []
    for cell in json.loads(text).get("cells", []):
        src = cell.get("source", "")
        src = "".join(src) if isinstance(src, list) else src
        out.append(("code" if cell.get("cell_type") == "code" else "markdown", src))
    return out


def _markdown_lines(text):
    """Lines of markdown outside literal code fences (directive fences such as {admonition} count)."""
    fence = None
    for line in text.split("\n"):
        m = _FENCE.match(line)
        if fence is None and m and not m.group("info").lstrip().startswith("{"):
            fence = m.group("fence")
            continue
        if fence is not None:
            if re.match(r"^\s*" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}\s*$", line):
                fence = None
            continue
        yield line


def load_chapter(path, depth):
    """Title, sections (level, title, slug) and cells ``(section, kind, source)`` of a chapter."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    raw = _md_cells(text) if path.suffix == ".md" else _ipynb_cells(text)
    title, sections, cells = path.stem, [], []
    slugs, current = set(), None
    for kind, src in raw:
        if kind == "markdown":
            for line in _markdown_lines(src):
                h = _HEADING.match(line)
                if not h:
                    continue
                level, htext = len(h.group(1)), h.group(2).strip()
                if level == 1 and title == path.stem:
                    title = htext
                slug = None
                if level <= depth:
                    slug, base, i = slugify(htext), slugify(htext), 1
                    while slug in slugs:
                        slug, i = f"{base}-{i}", i + 1
                    slugs.add(slug)
                if level >= 2 and (slug is not None or current is None):
                    sec = {"level": level, "title": htext, "slug": slug}
                    sections.append(sec)
                    current = sec
        cells.append((current, kind, src))
    return {"stem": path.stem, "title": title, "sections": sections, "cells": cells}


def chapter_paths(chapters=None):
    """``{stem: source path}``: the .md source of each chapter, else its .ipynb."""
    base = CHAPTERS if chapters is None else Path(chapters)
    out = {}
    for p in sorted(base.glob("*.ipynb")) + sorted(base.glob("*.md")):
        if re.match(r"^\d\d_", p.stem):
            out[p.stem] = p  # .md listed last wins
    return dict(sorted(out.items()))


def load_chapters(chapters=None):
    depth = heading_anchor_depth()
    return {stem: load_chapter(p, depth) for stem, p in chapter_paths(chapters).items()}


def section_of_id(chapter, ident):
    """The section whose code cell quotes ``ident`` (else a markdown mention; else None)."""
    for kind in ("code", "markdown"):
        for sec, k, src in chapter["cells"]:
            if k == kind and ident in src:
                return sec
    return None


def _cell(text):
    return " ".join(str(text).split()).replace("|", "\\|")


def section_link(chapter, section=None, short=False):
    """MyST link from chapters/backmatter/ to a chapter, or to a section's heading anchor."""
    # Markdown links (not {doc}): their text may hold inline math, which MathJax typesets.
    if section is None or not section.get("slug"):
        return f"[{_cell(chapter['title'])}](../{chapter['stem']}.ipynb)"
    label = _cell(section["title"] if short else f"{chapter['title']} § {section['title']}")
    return f"[{label}](../{chapter['stem']}.ipynb#{section['slug']})"


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


# -- linbook --------------------------------------------------------------------------------------
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
        try:
            mod = importlib.import_module(f"linbook.{mod_name}")
        except ImportError:
            continue
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


API = ROOT / "chapters" / "backmatter" / "api"


def documented_modules():
    """The modules the API pages document (``.. automodule::``)."""
    found = set()
    for page in API.glob("*.md"):
        found |= set(re.findall(r"^\.\. automodule::\s*(\S+)", page.read_text(encoding="utf-8"), re.M))
    return found


def qualified(obj, public, documented=None):
    """The name the API pages document ``obj`` under (the target of its link).

    Its defining module's path when that module has an API page; otherwise the documented
    package that lists it in ``__all__`` (``linbook.optim.bfgs``, defined in a private file).
    """
    mod = getattr(obj, "__module__", "") or ""
    if not mod.startswith("linbook"):
        return public
    documented = documented_modules() if documented is None else documented
    if mod not in documented:
        for pkg in sorted(documented):
            module = importlib.import_module(pkg)
            for name in getattr(module, "__all__", ()):
                if getattr(module, name, None) is obj:
                    return f"{pkg}.{name}"
    return f"{mod}.{obj.__qualname__}"


class _Resolver:
    """Map dotted names used in code to linbook's public symbols (by object identity)."""

    def __init__(self, symbols):
        self.by_id = {id(obj): public for public, obj in symbols}
        self.cache = {}

    def resolve(self, dotted):
        if dotted in self.cache:
            return self.cache[dotted]
        parts, obj, found = dotted.split("."), None, None
        if parts[0] == "linbook":
            try:
                obj = importlib.import_module("linbook")
                for i, part in enumerate(parts[1:], 1):
                    if hasattr(obj, part):
                        obj = getattr(obj, part)
                    else:
                        obj = importlib.import_module(".".join(parts[:i + 1]))
                found = self.by_id.get(id(obj))
            except (ImportError, AttributeError):
                found = None
        self.cache[dotted] = found
        return found


def _dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id] + parts[::-1])
    return None


def _parse(src):
    """ast of a code cell or test file; IPython magics and shell lines are blanked."""
    lines = ["" if re.match(r"^\s*[%!]", ln) else ln for ln in src.split("\n")]
    try:
        return ast.parse("\n".join(lines))
    except SyntaxError:
        return None


def linbook_names(tree, resolver, aliases=None):
    """Public linbook symbols a module/cell uses; ``aliases`` (local -> dotted) carries imports."""
    aliases = {} if aliases is None else aliases
    if tree is None:
        return set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "linbook":
                    if a.asname:
                        aliases[a.asname] = a.name
                    else:
                        aliases["linbook"] = "linbook"
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "linbook":
            for a in node.names:
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    used = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Attribute, ast.Name)) and isinstance(getattr(node, "ctx", None), ast.Load):
            dotted = _dotted(node)
            if not dotted:
                continue
            head, _, rest = dotted.partition(".")
            if head not in aliases:
                continue
            full = aliases[head] + (f".{rest}" if rest else "")
            sym = resolver.resolve(full)
            if sym:
                used.add(sym)
    return used


def chapter_usage(chapter, resolver):
    """``{section title or None: set of public symbols}`` from the chapter's code cells."""
    aliases, out = {}, defaultdict(set)
    for sec, kind, src in chapter["cells"]:
        if kind == "code":
            out[sec["title"] if sec else None] |= linbook_names(_parse(src), resolver, aliases)
    return out


def test_files():
    return sorted(p for p in TESTS.rglob("test_*.py") if "browser" not in p.parts)


def test_usage(resolver):
    """``{public symbol: sorted test paths (relative to tests/)}``."""
    out = defaultdict(set)
    for p in test_files():
        for sym in linbook_names(_parse(p.read_text(encoding="utf-8")), resolver):
            out[sym].add(p.relative_to(TESTS).as_posix())
    return {k: sorted(v) for k, v in out.items()}


# -- page -----------------------------------------------------------------------------------------
def _eq_key(number):
    return [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", number)]


def build_page(chapters_dir=None):
    chapters = load_chapters(chapters_dir)
    by_title = {c["title"]: c for c in chapters.values()}
    symbols = public_symbols()
    resolver = _Resolver(symbols)
    documented = documented_modules()
    targets = {public: qualified(obj, public, documented) for public, obj in symbols}
    used_in = {stem: chapter_usage(ch, resolver) for stem, ch in chapters.items()}
    tested = test_usage(resolver)
    blob = repo_blob_url()
    unresolved = []

    def sym_link(public):
        return f"{{py:obj}}`{public.removeprefix('linbook.')} <{targets[public]}>`"

    def test_links(names):
        return ", ".join(f"[{n}]({blob}tests/{n})" if blob else f"`{n}`" for n in names)

    def place(stem, sec):
        """Link, linbook symbols used there, and their tests."""
        syms = sorted((s for s in used_in[stem].get(sec["title"] if sec else None, set())
                       if not targets[s].startswith(TOOLING)), key=str.lower)
        tests = sorted({t for s in syms for t in tested.get(s, [])})
        return syms, tests

    sections_meta = load_sections()
    by_note = defaultdict(list)
    for e in load_entries():
        ch = chapters.get(e.get("chapter"))
        if ch is None:
            continue
        sec = section_of_id(ch, e["id"])
        eqs = note_equations(e.get("note_eq"))
        loc = " ".join(str(e.get("locator") or "").split())
        if eqs:
            label = (f"eq. ({e['note_eq']})" if len(eqs) == 1 else f"eqs. ({e['note_eq']})") + (f", {loc}" if loc else "")
        else:
            label = f"§ {e['section']}" + (f", {loc}" if loc else "")
        by_note[e["note"]].append((label, e, ch, sec, eqs[0] if eqs else None))

    lines = [
        "# Cross-index: notes, chapters, linbook, tests",
        "",
        "For each numbered equation (and each other checked claim) of the source notes: the chapter",
        "section whose code cell checks it, the linbook functions that section's code calls (leaving",
        "out the checking and plotting helpers every section calls), and the tests that use them. Then, for every public linbook symbol: the section its",
        "docstring says derives it, the sections whose code calls it, and the tests that use it.",
        "",
        "Generated by `tools/gen_index.py` from the errata registry (`errata/*.yaml`), the chapter",
        "sources (code cells parsed with Python's `ast`), linbook's docstrings and the tests (also",
        "parsed with `ast`); nothing is matched in prose. Registry ids are explained on the",
        "{doc}`errata <errata>` and {doc}`coverage <coverage>` pages.",
        "",
        "## Note equations and claims",
        "",
    ]
    for note in sections_meta:
        rows = by_note.get(note)
        if not rows:
            continue
        lines += [f"### {sections_meta[note]['name']}", ""]
        rows.sort(key=lambda r: (r[4] is None, _eq_key(r[4] or str(r[1]["section"])), r[1]["id"]))
        for label, e, ch, sec, _ in rows:
            syms, tests = place(ch["stem"], sec)
            lines += [f"{_cell(label)}",
                      f": checked in {section_link(ch, sec)} (`{e['id']}`, {e['status']})"]
            if syms:
                lines += ["", f"  linbook: {', '.join(sym_link(s) for s in syms)}"]
            if tests:
                lines += ["", f"  tests: {test_links(tests)}"]
            lines.append("")

    lines += ["## linbook symbols", ""]
    for public, obj in sorted(symbols, key=lambda s: s[0].lower()):
        text = derived_in(obj)
        derived = []
        for title, sec_name in DERIVED.findall(text):
            ch = by_title.get(title)
            sec = find_section(ch, sec_name) if ch else None
            if ch is None:
                unresolved.append(f"`{public}`: chapter \"{title}\" not found")
            elif sec_name and sec is None:
                unresolved.append(f"`{public}`: section \"{sec_name}\" not found in chapter \"{title}\"")
            derived.append(section_link(ch, sec) if ch else _cell(f'"{title}" § "{sec_name}"'))
        calls = []
        for stem, usage in used_in.items():
            ch = chapters[stem]
            secs = [s for s in ch["sections"] if public in usage.get(s["title"], ())]
            if secs:
                calls.append(f"{_cell(ch['title'])}: " + ", ".join(section_link(ch, s, short=True) for s in secs))
            elif public in usage.get(None, ()):
                calls.append(section_link(ch))
        lines.append(sym_link(public))
        lines.append(": derived in " + ("; ".join(derived) if derived else
                                         (_cell(text) if text else "**no \"Derived in\" line**")))
        lines += ["", "  used in " + ("; ".join(calls) if calls else "no chapter code cell")]
        tests = tested.get(public, [])
        lines += ["", "  tests: " + (test_links(tests) if tests else "none import it")]
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
