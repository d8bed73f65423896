"""The errata and coverage registry: the notes' claims the book checks.

One YAML file per chapter, ``errata/<chapter>.yaml`` (a list of entries), plus
``errata/sections.yaml`` (every note section and its home chapter). Entry fields:

id          unique kebab-case id; the chapter's checking code cell quotes it in its
            check label (``check_equal(..., "(8.9) [erratum opt-89-function]")``), and a
            test verifies the notebook contains it.
note        note file name, e.g. ``000_5aa4326280c496e2.txt``
section     a section id of that note from sections.yaml
equation    the note's own equation number or a short locator ("" if none)
status      ``verified`` (the note is right) or ``corrected`` (the note is wrong)
note_says   what the note says (English; math in $...$)
correct     the correct form (for ``verified``, the statement that was checked)
checked_by  how the chapter checks it (sympy / quadrature / simulation / ...)
chapter     the notebook that holds the check, without ``.ipynb``
"""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
ERRATA = ROOT / "errata"
FIELDS = ("id", "note", "section", "equation", "status", "note_says", "correct", "checked_by", "chapter")
STATUSES = ("verified", "corrected")


def load_sections():
    with open(ERRATA / "sections.yaml", encoding="utf-8") as f:
        return yaml.safe_load(f)["notes"]


def load_entries():
    entries = []
    for path in sorted(ERRATA.glob("*.yaml")):
        if path.name == "sections.yaml":
            continue
        with open(path, encoding="utf-8") as f:
            items = yaml.safe_load(f) or []
        for e in items:
            e = dict(e)
            e["_file"] = path.name
            entries.append(e)
    return entries


def validate(entries=None, sections=None):
    """Return a list of problems (empty when the registry is consistent)."""
    entries = load_entries() if entries is None else entries
    sections = load_sections() if sections is None else sections
    problems, seen = [], set()
    for e in entries:
        where = f"{e.get('_file')}:{e.get('id')}"
        missing = [k for k in FIELDS if k not in e or e[k] is None]
        if missing:
            problems.append(f"{where}: missing fields {missing}")
            continue
        if e["id"] in seen:
            problems.append(f"{where}: duplicate id")
        seen.add(e["id"])
        if e["status"] not in STATUSES:
            problems.append(f"{where}: status must be one of {STATUSES}")
        if e["note"] not in sections:
            problems.append(f"{where}: unknown note {e['note']}")
        elif str(e["section"]) not in {str(s["id"]) for s in sections[e["note"]]["sections"]}:
            problems.append(f"{where}: unknown section {e['section']} of {e['note']}")
        nb = ROOT / "chapters" / f"{e['chapter']}.ipynb"
        if not nb.exists():
            problems.append(f"{where}: chapter {e['chapter']} does not exist")
        elif e["id"] not in nb.read_text(encoding="utf-8"):
            problems.append(f"{where}: chapter {e['chapter']} never mentions the id (no check quotes it)")
    return problems
