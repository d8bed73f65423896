"""Generate the errata and coverage pages from the registry (run by ``make book``).

Writes chapters/backmatter/errata.md and chapters/backmatter/coverage.md. A unit test
checks the committed pages equal a fresh generation, so they cannot drift.

Both pages are lists, not tables, so they read on a phone: one card per erratum (a heading,
then a definition list), each linked to the chapter section whose code cell quotes the
entry's id (the check that proves it). Each card has a stable label ``erratum-<id>`` that
chapters can cite with ``{ref}`erratum-<id>```.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_index import load_chapters, section_link, section_of_id  # noqa: E402
from registry import ROOT, load_entries, load_sections, note_equations, validate  # noqa: E402

OUT = ROOT / "chapters" / "backmatter"


def _one_line(text):
    return " ".join(str(text).split())


def note_heading(note, info):
    """"Note 000 — MLAPP ch. 8 notes, logistic regression" plus the file name in small text."""
    return [f"## Note {note[:3]} — {info['title']}", "", "```{rst-class} note-file", "```", "",
            f"Note file `{note}`", ""]


def where_in_note(e):
    eqs = note_equations(e.get("note_eq"))
    parts = [f"§ {e['section']}"]
    if eqs:
        parts.append(f"eq. ({e['note_eq']})" if len(eqs) == 1 else f"eqs. ({e['note_eq']})")
    if str(e.get("locator") or "").strip():
        parts.append(_one_line(e["locator"]))
    return ", ".join(parts)


def entry_card(e, chapters):
    ch = chapters.get(e["chapter"])
    sec = section_of_id(ch, e["id"]) if ch else None
    link = section_link(ch, sec) if ch else f"`{e['chapter']}`"
    lines = [f"(erratum-{e['id']})=", f"### {where_in_note(e)}", "",
             f"`{e['id']}` ({e['status']})", "",
             "The note says", f": {_one_line(e['note_says'])}", "",
             "Correct" if e["status"] == "corrected" else "Checked claim", f": {_one_line(e['correct'])}", "",
             "Checked by", f": {_one_line(e['checked_by'])}, in {link}", ""]
    also = [chapters[c] for c in e.get("see_also") or [] if c in chapters]
    if also:
        lines += ["Also discussed in", ": " + "; ".join(section_link(c) for c in also), ""]
    return lines


def errata_page(entries, sections, chapters=None):
    chapters = load_chapters() if chapters is None else chapters
    lines = [
        "# Errata of the source notes",
        "",
        "Every place where a source note is wrong, as found and checked by this book. Each entry says",
        "where the mistake is (the note's own section and equation number), what the note says, what",
        "is right, and how the chapter checks it; the check is a code cell that raises when the",
        "corrected form fails, and the link goes to the section that holds it. Claims that were",
        "checked and found right are counted on the {doc}`coverage page <coverage>`.",
        "",
        "This page is generated from the registry in `errata/*.yaml` by `tools/gen_backmatter.py`.",
        "",
    ]
    by_note = defaultdict(list)
    for e in entries:
        if e["status"] == "corrected":
            by_note[e["note"]].append(e)
    total = sum(len(v) for v in by_note.values())
    lines += [f"{total} corrections in {len(by_note)} notes.", ""]
    for note, info in sections.items():
        rows = by_note.get(note, [])
        if not rows:
            continue
        lines += note_heading(note, info)
        for e in rows:
            lines += entry_card(e, chapters)
    return "\n".join(lines)


def coverage_page(entries, sections, chapters=None):
    chapters = load_chapters() if chapters is None else chapters
    counts = defaultdict(lambda: [0, 0])
    for e in entries:
        counts[(e["note"], str(e["section"]))][0 if e["status"] == "verified" else 1] += 1
    lines = [
        "# Coverage of the source notes",
        "",
        "Every section of the five source notes (see `SOURCE_MAP.md`), the chapter that is its home,",
        "and how many of its equations and claims the book checks in code: *verified* (the note is",
        "right) and *corrected* (listed on the {doc}`errata page <errata>`).",
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
            lines += [f"§ {s['id']} {_one_line(s['title'])}",
                      f": {home}: {v} verified, {c} corrected", ""]
    return "\n".join(lines)


def main():
    entries, sections = load_entries(), load_sections()
    problems = validate(entries, sections)
    if problems:
        print("registry problems:\n  " + "\n  ".join(problems))
        sys.exit(1)
    chapters = load_chapters()
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "errata.md").write_text(errata_page(entries, sections, chapters), encoding="utf-8")
    (OUT / "coverage.md").write_text(coverage_page(entries, sections, chapters), encoding="utf-8")
    print(f"errata/coverage pages written from {len(entries)} registry entries")


if __name__ == "__main__":
    main()
