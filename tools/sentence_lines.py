"""One sentence per line in the prose of the chapters' MyST sources.

Usage: python tools/sentence_lines.py [--check] [chapters/NN_name.md ...]   (default: every page)

A hard-wrapped paragraph turns a one-word edit into a rewrapped paragraph; with one sentence
per line a change is a one-line diff. This joins each prose paragraph (list items and
admonition bodies included) and breaks it after every sentence. It never touches code cells,
display math, tables, headings, directive options or front matter, never breaks inside inline
math or code, and never starts a line with something Markdown would read as structure (a
list marker, a heading, a quote, a cell break). Only whitespace changes: the script refuses
to write a page whose text, with whitespace collapsed, is not the same as before.
``--check`` exits non-zero when a page is not in this form (tests/test_chapter_style.py).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Words whose final period is not a sentence end.
ABBREVIATIONS = {"e.g.", "i.e.", "eq.", "eqs.", "Eq.", "Eqs.", "fig.", "Fig.", "figs.", "cf.", "vs.",
                 "al.", "approx.", "resp.", "ch.", "Ch.", "chap.", "sec.", "Sec.", "p.", "pp.", "no.",
                 "No.", "vol.", "ed.", "etc.", "St.", "Dr.", "Prof.", "Thm.", "Prop.", "Alg.", "ex.",
                 "Ex.", "w.r.t.", "a.s.", "s.t.", "iid.", "i.i.d."}
#: A sentence ends at . ? ! (after closing quotes, brackets or emphasis) before a space and a
#: capital letter, inline math, code, a bracket or emphasis.
_END = re.compile(r"(?<=[.?!])([)\]\"'*_]*)( +)(?=[A-Z$`(\[*{\"])")
#: What a line must not start with, lest Markdown read it as structure.
_STRUCTURAL = re.compile(r"^(?:[*+-]\s|\d+[.)]\s|#|>|\||\$\$|```|~~~|:::|\+\+\+|%|\(\w[\w-]*\)=|---|===)")
_LIST_ITEM = re.compile(r"^(\s*)([*+-]|\d+[.)])(\s+)")
_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
#: Directives whose body is Markdown prose (the others - code-cell, math, ... - are code).
_PROSE_DIRECTIVES = ("admonition", "note", "warning", "tip", "important", "hint", "caution",
                     "attention", "seealso", "dropdown", "exercise", "solution", "epigraph")


def _protected_spans(text):
    """Character ranges no break may fall in: inline math and inline code."""
    spans = []
    for m in re.finditer(r"\$\$.+?\$\$|\$[^$]+?\$|``.+?``|`[^`]+?`|\{[a-z:-]+\}`[^`]*`", text):
        spans.append((m.start(), m.end()))
    return spans


def split_sentences(text: str) -> list[str]:
    """The sentences of one paragraph's text (whitespace inside it collapsed)."""
    text = " ".join(text.split())
    spans = _protected_spans(text)
    pieces, start = [], 0
    for m in _END.finditer(text):
        cut = m.end(1)  # after the closing marks, before the spaces
        if any(a < cut < b for a, b in spans):
            continue
        word = text[:cut].rstrip(")]\"'*_").rsplit(" ", 1)[-1]
        if word in ABBREVIATIONS or re.fullmatch(r"[A-Z]\.|\(?[a-z]\.|[\d.]*\d\.", word):
            continue  # an abbreviation, an initial, an enumerator "(a." or a number "3."
        rest = text[m.end():]
        if _STRUCTURAL.match(rest):
            continue
        pieces.append(text[start:cut])
        start = m.end()
    pieces.append(text[start:])
    return [p for p in pieces if p]


def _flush(paragraph, out):
    """Write a paragraph (a list of raw lines) back, one sentence a line."""
    if not paragraph:
        return
    first = paragraph[0]
    m = _LIST_ITEM.match(first)
    if m:
        lead = m.group(0)
        indent = " " * len(lead)
        body = first[len(lead):] + " " + " ".join(line.strip() for line in paragraph[1:])
    else:
        lead = indent = re.match(r"^\s*", first).group(0)
        body = " ".join(line.strip() for line in paragraph)
    sentences = split_sentences(body)
    out.append(lead + sentences[0])
    out.extend(indent + s for s in sentences[1:])
    paragraph.clear()


def _is_prose(line: str) -> bool:
    stripped = line.strip()
    if not stripped:
        return False
    if re.match(r"^(#|\||\$\$|:[\w-]+:|\+\+\+|%|<|\(\w[\w-]*\)=|---\s*$|===)", stripped):
        return False
    if line.endswith("  ") or line.endswith("\\"):
        return False  # a hard line break is the author's choice
    return True


def reflow(text: str) -> str:
    """The page with one sentence per line in its prose."""
    lines = text.split("\n")
    out, paragraph = [], []
    i = 0
    if lines and lines[0] == "---":  # front matter
        end = lines.index("---", 1)
        out.extend(lines[:end + 1])
        i = end + 1
    fence = None  # (marker, prose?) of the fence we are in
    in_math = False
    while i < len(lines):
        line = lines[i]
        i += 1
        m = _FENCE.match(line)
        if m and (fence is None or (m.group(2).startswith(fence[0][0]) and len(m.group(2)) >= len(fence[0])
                                    and not m.group(3).strip())):
            _flush(paragraph, out)
            if fence is None:
                name = re.match(r"\{([\w-]+)\}", m.group(3).strip())
                fence = (m.group(2), bool(name and name.group(1) in _PROSE_DIRECTIVES))
            else:
                fence = None
            out.append(line)
            continue
        if fence is not None and not fence[1]:
            out.append(line)  # code, math or another directive: verbatim
            continue
        stripped = line.strip()
        if in_math or stripped.startswith("$$"):
            _flush(paragraph, out)
            out.append(line)
            # a display that opens and closes on one line leaves the math mode as it was
            if stripped.count("$$") % 2 == 1:
                in_math = not in_math
            continue
        if not _is_prose(line):
            _flush(paragraph, out)
            out.append(line)
            continue
        if _LIST_ITEM.match(line) and paragraph:
            _flush(paragraph, out)
        paragraph.append(line)
    _flush(paragraph, out)
    return "\n".join(out)


def pages(args):
    chapters = ROOT / "chapters"
    return [Path(a) for a in args] or [chapters / "intro.md", chapters / "notation.md",
                                       *sorted(chapters.glob("[0-9][0-9]_*.md"))]


def main(argv):
    check = "--check" in argv
    bad = 0
    for page in pages([a for a in argv if a != "--check"]):
        old = page.read_text(encoding="utf-8")
        new = reflow(old)
        if " ".join(old.split()) != " ".join(new.split()):
            raise SystemExit(f"{page}: reflowing would change more than whitespace; nothing written")
        if new != old:
            if check:
                bad += 1
                print(f"{page}: prose is not one sentence per line (python tools/sentence_lines.py {page})")
            else:
                page.write_text(new, encoding="utf-8")
                print(f"{page}: one sentence per line")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
