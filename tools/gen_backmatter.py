"""Generate the errata and coverage pages from the registry (run by ``make book``).

Writes chapters/backmatter/errata.md and chapters/backmatter/coverage.md. A unit test
checks the committed pages equal a fresh generation, so they cannot drift.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from registry import ROOT, load_entries, load_sections, validate  # noqa: E402

OUT = ROOT / "chapters" / "backmatter"


def _cell(text):
    return " ".join(str(text).split()).replace("|", "\\|")


def _chapter_titles():
    import json
    titles = {}
    for nb in sorted((ROOT / "chapters").glob("*.ipynb")):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        first = "".join(cells[0]["source"]) if cells else nb.stem
        line = next((ln for ln in first.splitlines() if ln.startswith("# ")), nb.stem)
        titles[nb.stem] = line[2:].strip()
    return titles


def errata_page(entries, sections):
    lines = [
        "# Errata of the source notes",
        "",
        "Every place where a source note is wrong, as found and checked by this book. Each row says",
        "where the mistake is (note file and the note's own section or equation number), what the note",
        "says, what is right, and how the chapter checks it; the check is a code cell that raises when",
        "the corrected form fails. Claims that were checked and found right are counted on the",
        "{doc}`coverage page <coverage>`.",
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
    for note in sections:
        rows = by_note.get(note, [])
        if not rows:
            continue
        lines += [f"## `{note}`", "", f"{sections[note]['title']}.", "",
                  "| id | section / eq. | the note says | correct | checked by | chapter |",
                  "|---|---|---|---|---|---|"]
        for e in rows:
            loc = _cell(f"§ {e['section']} {e['equation']}".strip())
            lines.append(f"| `{e['id']}` | {loc} | {_cell(e['note_says'])} | {_cell(e['correct'])} | "
                         f"{_cell(e['checked_by'])} | {{doc}}`../{e['chapter']}` |")
        lines.append("")
    return "\n".join(lines)


def coverage_page(entries, sections):
    titles = _chapter_titles()
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
        lines += [f"## `{note}`", "", f"{info['title']}.", "",
                  "| section | topic | chapter | verified | corrected |", "|---|---|---|---|---|"]
        for s in info["sections"]:
            v, c = counts[(note, str(s["id"]))]
            ch = s["chapter"]
            lines.append(f"| {s['id']} | {_cell(s['title'])} | {{doc}}`{_cell(titles.get(ch, ch))} <../{ch}>` | {v} | {c} |")
        lines.append("")
    return "\n".join(lines)


def main():
    entries, sections = load_entries(), load_sections()
    problems = validate(entries, sections)
    if problems:
        print("registry problems:\n  " + "\n  ".join(problems))
        sys.exit(1)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "errata.md").write_text(errata_page(entries, sections), encoding="utf-8")
    (OUT / "coverage.md").write_text(coverage_page(entries, sections), encoding="utf-8")
    print(f"errata/coverage pages written from {len(entries)} registry entries")


if __name__ == "__main__":
    main()
