"""The errata/coverage registry is consistent, and the generated pages are current."""

import re
from pathlib import Path

import pytest
import yaml

import gen_backmatter
import registry

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "chapters" / "backmatter"


def _entry(**kw):
    e = {"id": "x-1", "note": "000_5aa4326280c496e2.txt", "section": "8.1", "note_eq": None, "locator": "",
         "status": "verified", "note_says": "a", "correct": "b", "checked_by": "c",
         "chapter": "04_logistic_regression", "see_also": [], "_file": "t.yaml"}
    e.update(kw)
    return e


def test_registry_is_consistent():
    problems = registry.validate()
    assert not problems, "\n".join(problems)


def test_every_chapter_in_sections_exists():
    for note, info in registry.load_sections().items():
        for s in info["sections"]:
            assert registry.chapter_source(s["chapter"]) is not None, (note, s)


def test_sections_cover_source_map():
    """All five source notes have their sections placed."""
    sections = registry.load_sections()
    assert len(sections) == 5
    assert all(info["sections"] for info in sections.values())


def test_generated_pages_are_current():
    entries, sections = registry.load_entries(), registry.load_sections()
    chapters = gen_backmatter.load_chapters()
    for name, text in gen_backmatter.errata_pages(entries, sections, chapters).items():
        assert (OUT / name).exists() and (OUT / name).read_text(encoding="utf-8") == text, \
            f"{name} is stale: run make backmatter"
    assert (OUT / "coverage.md").read_text(encoding="utf-8") == gen_backmatter.coverage_page(entries, sections, chapters), \
        "coverage.md is stale: run make backmatter"


def _errata_files():
    return ["errata.md"] + [f"{info['page']}.md" for info in registry.load_sections().values()]


def test_generated_pages_have_single_backslashes_in_math():
    """YAML that keeps `\\\\mu` (an unquoted value) would show a literal backslash on the page."""
    for name in _errata_files() + ["coverage.md", "index_map.md"]:
        text = (OUT / name).read_text(encoding="utf-8")
        bad = re.findall(r".{0,30}\\\\[A-Za-z|].{0,10}", text)
        assert not bad, f"{name}: doubled backslashes {bad[:3]}"


def test_errata_pages_one_per_note_in_the_toc():
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    overview = (OUT / "errata.md").read_text(encoding="utf-8")
    for info in registry.load_sections().values():
        assert f"chapters/backmatter/{info['page']}\n" in toc, f"{info['page']} is not in _toc.yml"
        assert f"<{info['page']}>`" in overview, f"errata.md does not link {info['page']}"


def test_errata_pages_follow_the_note_and_repeat_no_heading():
    corrected = [e for e in registry.load_entries() if e["status"] == "corrected"]
    for note, info in registry.load_sections().items():
        text = (OUT / f"{info['page']}.md").read_text(encoding="utf-8")
        assert not re.search(r"^\|", text, re.M), "the errata pages must not use (wide) tables"
        assert note not in text, f"{info['page']}: the note's file name belongs on the coverage page only"
        headings = re.findall(r"^#{1,6} (.+)$", text, re.M)
        assert len(headings) == len(set(headings)), f"{info['page']}: repeated headings"
        mine = [e for e in corrected if e["note"] == note]
        for e in mine:
            card = text.split(f"(erratum-{e['id']})=", 1)[1].split("(erratum-", 1)[0]
            assert re.search(rf"\]\(\.\./{e['chapter']}\.ipynb#[\w-]+\)", card), f"{e['id']}: no section link"
        # sections appear in the note's order
        order = [str(s["id"]) for s in info["sections"]]
        seen = [next(str(e["section"]) for e in mine if e["id"] == i)
                for i in re.findall(r"^\(erratum-([\w-]+)\)=$", text, re.M)]
        ranks = [order.index(s) for s in seen]
        assert ranks == sorted(ranks) and len(seen) == len(mine), f"{info['page']}: not in the note's order"


def test_places_are_ordered_inside_a_section():
    place_order = gen_backmatter.place_order
    e = lambda note_eq, locator="": {"note_eq": note_eq, "locator": locator}  # noqa: E731
    keys = [place_order(x) for x in (e("8.3"), e(None, "before (8.4)"), e("8.4"), e(None, "after (8.4)"),
                                     e("8.10"), e(None, "the last paragraph"))]
    assert keys == sorted(keys)


def test_registry_rejects_a_bad_entry():
    bad = [_entry(note="nope.txt", status="maybe")]
    problems = registry.validate(bad, registry.load_sections())
    assert any("status" in p for p in problems) and any("unknown note" in p for p in problems)


@pytest.mark.parametrize("note_eq", [8.5, "(8.5)", "8.5 intro", ""])
def test_note_eq_must_be_a_quoted_equation_number(note_eq):
    problems = registry.validate([_entry(note_eq=note_eq)], registry.load_sections())
    assert any("note_eq" in p for p in problems), problems


def test_old_equation_field_asks_for_the_migration():
    e = _entry()
    del e["note_eq"], e["locator"]
    e["equation"] = "(8.1)"
    problems = registry.validate([e], registry.load_sections())
    assert any("tools/registry.py migrate" in p for p in problems)


def test_doubled_backslash_is_rejected():
    problems = registry.validate([_entry(id="logreg-model-boundary", checked_by="($\\\\mu=-2$)")],
                                 registry.load_sections())
    assert any("doubled backslash" in p for p in problems), problems


def test_same_claim_in_two_chapters_is_rejected(tmp_path):
    for ch in ("01_a", "02_b"):
        (tmp_path / f"{ch}.md").write_text("check('[erratum a-1] [erratum b-1]')", encoding="utf-8")
    a = _entry(id="a-1", note_eq="8.5-8.7", chapter="01_a", section="8.3.1")
    b = _entry(id="b-1", note_eq="8.6", chapter="02_b", section="8.3.1")
    problems = registry.validate([a, b], registry.load_sections(), chapters=tmp_path)
    assert any("same claim" in p and "see_also" in p for p in problems), problems
    # one home, the other chapter in see_also: consistent
    problems = registry.validate([dict(a, see_also=["02_b"])], registry.load_sections(), chapters=tmp_path)
    assert not problems, problems
    problems = registry.validate([dict(a, see_also=["01_a", "99_none"])], registry.load_sections(), chapters=tmp_path)
    assert any("own chapter" in p for p in problems) and any("99_none" in p for p in problems)


def test_id_is_looked_up_in_the_md_source_then_the_notebook(tmp_path):
    (tmp_path / "01_a.md").write_text("```{code-cell} ipython3\ncheck('[erratum a-1]')\n```\n", encoding="utf-8")
    (tmp_path / "02_b.ipynb").write_text('{"cells": [{"source": "[erratum b-1]"}]}', encoding="utf-8")
    entries = [_entry(id="a-1", chapter="01_a"), _entry(id="b-1", chapter="02_b", note_says="other"),
               _entry(id="c-1", chapter="01_a", note_says="third")]
    problems = registry.validate(entries, registry.load_sections(), chapters=tmp_path)
    assert problems == ["t.yaml:c-1: chapter 01_a never mentions the id (no check quotes it)"]


@pytest.mark.parametrize("old, note_eq, locator", [
    ("(8.9)", "8.9", ""),
    ("(8.5)-(8.7)", "8.5-8.7", ""),
    ("(4.11), (4.17)-(4.18), (4.20)", "4.11, 4.17-4.18, 4.20", ""),
    ("PRML (4.137)", "4.137", ""),
    ("Z (PRML 4.135)", "4.135", "Z"),
    ("posterior (3), MAP", "3", "posterior, MAP"),
    ("before (8.4)", None, "before (8.4)"),
    ("8.6 intro", None, "8.6 intro"),
    ("§8.5.2.3", None, "§8.5.2.3"),
    ("Algorithm 8.2", None, "Algorithm 8.2"),
    ("", None, ""),
])
def test_migration_splits_numbers_from_prose(old, note_eq, locator):
    assert registry.split_equation(old) == (note_eq, locator)


def test_migration_rewrites_both_yaml_styles_and_is_idempotent():
    old = ('- id: a\n  equation: "(8.5)-(8.7)"\n  checked_by: numeric ($\\\\mu=-2$)\n  chapter: x\n'
           '- {id: b, section: "4.1", equation: "text before (4.55)", status: verified,\n'
           '   chapter: y}\n')
    new, n = registry.migrate_text(old)
    assert n == 3
    a, b = yaml.safe_load(new)
    assert (a["note_eq"], a["locator"], a["checked_by"]) == ("8.5-8.7", "", "numeric ($\\mu=-2$)")
    assert (b["note_eq"], b["locator"], b["chapter"]) == (None, "text before (4.55)", "y")
    assert "equation" not in a and "equation" not in b
    assert registry.migrate_text(new) == (new, 0)


def test_registry_files_are_migrated():
    for path in registry.registry_files():
        text = path.read_text(encoding="utf-8")
        assert registry.migrate_text(text)[1] == 0, f"{path.name}: run tools/registry.py migrate"


def test_note_equations_expand_ranges():
    assert registry.note_equations("8.5-8.7, 8.9") == ["8.5", "8.6", "8.7", "8.9"]
    assert registry.note_equations(None) == []


def test_another_chapter_quoting_the_id_must_be_in_see_also(tmp_path):
    (tmp_path / "01_a.md").write_text("check('[erratum a-2]')", encoding="utf-8")
    (tmp_path / "02_b.md").write_text("as shown in the estimation chapter (erratum a-2)", encoding="utf-8")
    (tmp_path / "03_c.md").write_text("mentions a-20 and xa-2, not the id", encoding="utf-8")
    e = _entry(id="a-2", chapter="01_a")
    problems = registry.validate([e], registry.load_sections(), chapters=tmp_path)
    assert len(problems) == 1 and "02_b also quotes" in problems[0], problems
    assert not registry.validate([dict(e, see_also=["02_b"])], registry.load_sections(), chapters=tmp_path)


def test_schema_is_valid_json_schema():
    import json

    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(json.loads(registry.SCHEMA.read_text(encoding="utf-8")))


@pytest.mark.parametrize("change, says", [
    ({"foo": 1}, "'foo' was unexpected"),
    ({"see_also": "05_optimizers"}, "see_also: '05_optimizers' is not of type 'array'"),
    ({"see_also": ["Optimizers"]}, "see_also: 'Optimizers' does not match"),
    ({"locator": None}, "locator: None is not of type 'string'"),
    ({"id": "two words"}, "id: 'two words' does not match"),
    ({"note_says": ""}, "note_says: '' should be non-empty"),
])
def test_schema_names_the_field_and_the_fault(change, says):
    problems = registry.validate([_entry(**change)], registry.load_sections())
    assert any(p.startswith("t.yaml:") and says in p for p in problems), problems


def test_missing_field_is_named_and_stops_the_cross_checks():
    e = _entry()
    del e["chapter"]
    problems = registry.validate([e], registry.load_sections())
    assert problems == ["t.yaml:x-1: 'chapter' is a required property"]
