"""The errata/coverage registry is consistent, and the generated pages are current."""

from pathlib import Path

import gen_backmatter
import registry

ROOT = Path(__file__).resolve().parents[1]


def test_registry_is_consistent():
    problems = registry.validate()
    assert not problems, "\n".join(problems)


def test_every_chapter_in_sections_exists():
    for note, info in registry.load_sections().items():
        for s in info["sections"]:
            assert (ROOT / "chapters" / f"{s['chapter']}.ipynb").exists(), (note, s)


def test_sections_cover_source_map():
    """Every note named in SOURCE_MAP.md has its sections placed."""
    sections = registry.load_sections()
    assert len(sections) == 5
    assert all(info["sections"] for info in sections.values())


def test_generated_pages_are_current():
    entries, sections = registry.load_entries(), registry.load_sections()
    out = ROOT / "chapters" / "backmatter"
    assert (out / "errata.md").read_text(encoding="utf-8") == gen_backmatter.errata_page(entries, sections), \
        "errata.md is stale: run make backmatter"
    assert (out / "coverage.md").read_text(encoding="utf-8") == gen_backmatter.coverage_page(entries, sections), \
        "coverage.md is stale: run make backmatter"


def test_registry_rejects_a_bad_entry(tmp_path):
    bad = [{"id": "x", "note": "nope.txt", "section": "1", "equation": "", "status": "maybe",
            "note_says": "", "correct": "", "checked_by": "", "chapter": "01_estimation", "_file": "t"}]
    problems = registry.validate(bad, registry.load_sections())
    assert any("status" in p for p in problems) and any("unknown note" in p for p in problems)
