"""The errata and coverage registry: the notes' claims the book checks.

One YAML file per chapter, ``errata/<chapter>.yaml`` (a list of entries), plus
``errata/sections.yaml`` (every note section and its home chapter). Entry fields (their types
and formats are the JSON Schema ``errata/registry.schema.json``, checked with jsonschema):

id          unique kebab-case id; the chapter's checking code cell quotes it in its
            check label (``check_equal(..., "(8.9) [erratum opt-89-function]")``), and a
            test verifies the chapter source (``chapters/<chapter>.md``) contains it.
note        note file name, e.g. ``000_5aa4326280c496e2.txt``
section     a section id of that note from sections.yaml
note_eq     the note's own equation number(s) the claim is about, as a quoted string:
            ``"8.9"``, a range ``"8.5-8.7"`` or a list ``"4.11, 4.17-4.18"``; ``null`` when
            the claim is not a numbered equation of the note
locator     free text that says where else in the note ("before (8.4)", "Algorithm 8.2",
            "§8.5.2.3", "8.6 intro"); ``""`` when note_eq says it all
status      ``verified`` (the note is right) or ``corrected`` (the note is wrong)
note_says   what the note says (English; math in $...$)
correct     the correct form (for ``verified``, the statement that was checked)
checked_by  how the chapter checks it (sympy / quadrature / simulation / ...)
chapter     the chapter that holds the check (its one home), without extension
see_also    optional list of other chapters that link to the entry (they do not repeat it)

Math in values: write them in double quotes with doubled backslashes
(``"$\\\\mu$"`` in the file is ``$\\mu$``), or unquoted/single-quoted with single
backslashes. An unquoted ``$\\\\mu$`` keeps both backslashes and renders as a literal
backslash, so validation rejects doubled backslashes in loaded values.

Migrating from the old single ``equation`` field (numbers and prose mixed):
``.venv/bin/python tools/registry.py migrate`` rewrites ``equation: "..."`` in place into
``note_eq`` + ``locator`` (and double-quotes values whose backslashes were doubled by
mistake). It is idempotent: run it again after merging entries written the old way.
"""

from __future__ import annotations

import functools
import json
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
ERRATA = ROOT / "errata"
CHAPTERS = ROOT / "chapters"
# The fields, their types and formats: errata/registry.schema.json (checked with jsonschema).
SCHEMA = ERRATA / "registry.schema.json"
# Fields the cross-checks of validate() read; an entry with one of them malformed is not cross-checked.
CROSS_CHECKED = ("id", "note", "section", "chapter", "see_also", "equation")
TEXT_FIELDS = ("locator", "note_says", "correct", "checked_by")

_NUM = r"\d+(?:\.\d+)*[a-z]?"


def load_sections():
    with open(ERRATA / "sections.yaml", encoding="utf-8") as f:
        return yaml.safe_load(f)["notes"]


def registry_files():
    return [p for p in sorted(ERRATA.glob("*.yaml")) if p.name != "sections.yaml"]


def load_entries():
    entries = []
    for path in registry_files():
        with open(path, encoding="utf-8") as f:
            items = yaml.safe_load(f) or []
        for e in items:
            e = dict(e)
            e.setdefault("see_also", [])
            e["_file"] = path.name
            entries.append(e)
    return entries


def chapter_source(chapter, root=None):
    """The chapter's source file: ``chapters/<chapter>.md``, else the ``.ipynb`` (or None)."""
    base = (root or CHAPTERS)
    for ext in (".md", ".ipynb"):
        p = base / f"{chapter}{ext}"
        if p.exists():
            return p
    return None


def note_equations(note_eq):
    """``"8.5-8.7, 8.9"`` -> ``["8.5", "8.6", "8.7", "8.9"]`` (ranges expanded on the last part)."""
    if not note_eq:
        return []
    out = []
    for part in str(note_eq).split(","):
        part = part.strip()
        if "-" not in part:
            out.append(part)
            continue
        a, b = part.split("-", 1)
        pa, pb = a.rsplit(".", 1) if "." in a else ("", a), b.rsplit(".", 1) if "." in b else ("", b)
        if pa[0] == pb[0] and pa[1].isdigit() and pb[1].isdigit() and int(pa[1]) <= int(pb[1]) <= int(pa[1]) + 50:
            out += [f"{pa[0]}.{k}" if pa[0] else str(k) for k in range(int(pa[1]), int(pb[1]) + 1)]
        else:
            out += [a, b]
    return out


def _claims(e):
    """Keys that identify the claim: each note equation it covers, else its wording."""
    place = (e.get("note"), str(e.get("section")))
    eqs = note_equations(e.get("note_eq"))
    if eqs:
        return [place + ("eq", q) for q in eqs]
    says = re.sub(r"[\s$\\{}]+", "", str(e.get("note_says", ""))).lower()
    return [place + ("says", says)]


_QUOTES = {}


def quoting_chapters(ident, chapters=None):
    """Chapters whose source quotes the id (as a whole word)."""
    base = CHAPTERS if chapters is None else Path(chapters)
    key = str(base)
    if key not in _QUOTES:
        stems = {p.stem for p in base.glob("[0-9][0-9]_*.*") if p.suffix in (".md", ".ipynb")}
        _QUOTES[key] = {stem: chapter_source(stem, base).read_text(encoding="utf-8") for stem in stems}
    pat = re.compile(r"(?<![\w-])" + re.escape(ident) + r"(?![\w-])")
    return {stem for stem, text in _QUOTES[key].items() if pat.search(text)}


@functools.cache
def _schema_validator():
    from jsonschema import Draft202012Validator

    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def schema_problems(entry):
    """``(problems, usable)``: the entry against errata/registry.schema.json (jsonschema).

    ``usable`` is false when a field the cross-checks read is missing or malformed.
    """
    where = f"{entry.get('_file')}:{entry.get('id')}"
    problems, usable = [], True
    data = [{k: v for k, v in entry.items() if k != "_file"}]
    for err in sorted(_schema_validator().iter_errors(data), key=lambda err: list(map(str, err.path))):
        field = err.path[1] if len(err.path) > 1 else None
        hint = err.schema.get("description") if isinstance(err.schema, dict) else None
        # a "not" schema's own message only repeats it; its description says what is wrong
        message = f"{err.instance!r:.60} {hint}" if err.validator == "not" and hint else (
            err.message + (f" ({hint})" if hint else ""))
        problems.append(f"{where}: {field + ': ' if field else ''}{message}")
        if err.validator == "required" or field in CROSS_CHECKED:
            usable = False
    return problems, usable


def validate(entries=None, sections=None, chapters=None):
    """Return a list of problems (empty when the registry is consistent).

    Each entry's fields against the schema, then what the schema cannot say: ids unique,
    note and section in sections.yaml, the chapter quoting the id, see_also, one home per claim.
    """
    entries = load_entries() if entries is None else entries
    sections = load_sections() if sections is None else sections
    chapters = CHAPTERS if chapters is None else chapters
    problems, seen, claims = [], set(), {}
    sources = {}

    def text_of(chapter):
        if chapter not in sources:
            src = chapter_source(chapter, chapters)
            sources[chapter] = src.read_text(encoding="utf-8") if src else None
        return sources[chapter]

    for e in entries:
        where = f"{e.get('_file')}:{e.get('id')}"
        found, usable = schema_problems(e)
        problems += found
        if not usable:
            continue
        if e["id"] in seen:
            problems.append(f"{where}: duplicate id")
        seen.add(e["id"])
        if e["note"] not in sections:
            problems.append(f"{where}: unknown note {e['note']}")
        elif str(e["section"]) not in {str(s["id"]) for s in sections[e["note"]]["sections"]}:
            problems.append(f"{where}: unknown section {e['section']} of {e['note']}")
        text = text_of(e["chapter"])
        if text is None:
            problems.append(f"{where}: chapter {e['chapter']} does not exist")
        elif e["id"] not in text:
            problems.append(f"{where}: chapter {e['chapter']} never mentions the id (no check quotes it)")
        see_also = e.get("see_also") or []
        for ch in see_also:
            if ch == e["chapter"]:
                problems.append(f"{where}: see_also names the entry's own chapter {ch}")
            elif text_of(ch) is None:
                problems.append(f"{where}: see_also chapter {ch} does not exist")
        for ch in quoting_chapters(e["id"], chapters) - {e["chapter"]} - set(see_also):
            problems.append(f"{where}: chapter {ch} also quotes the id: list it in see_also "
                            f"(`.venv/bin/python tools/registry.py see-also` does it)")
        for key in _claims(e):
            other = claims.setdefault(key, e)
            if other is not e and other["chapter"] != e["chapter"]:
                problems.append(f"{where}: same claim as {other['_file']}:{other['id']} (note {e['note']} "
                                f"{key[-2]} {key[-1][:30]}) in another chapter: keep one entry, in the "
                                f"section's home chapter, and list the other chapter in its see_also")
                break
    return problems


# -- migration from the old `equation` field -----------------------------------------------------
_REF = rf"(?:PRML\s*)?\(\s*(?:PRML\s+)?({_NUM})\s*\)"
_RANGE = re.compile(rf"{_REF}(?:\s*[-\u2013]\s*{_REF})?")
_RELATIVE = re.compile(r"\b(before|after|around|near|below|above)\b", re.I)


def split_equation(value):
    """Old ``equation`` text -> ``(note_eq, locator)``.

    Parenthesised numbers ("(8.9)", "(8.5)-(8.7)", "PRML (4.137)", "(PRML 4.94)") are the
    note's own equation numbers; everything else (and any number placed relative to the
    claim, "before (8.4)") stays in the locator.
    """
    value = " ".join(str(value or "").split())
    if not value or _RELATIVE.search(value):
        return None, value
    nums, rest = [], value
    for m in _RANGE.finditer(value):
        nums.append(m.group(1) + (f"-{m.group(2)}" if m.group(2) else ""))
    if not nums:
        return None, value
    rest = _RANGE.sub("", value)
    rest = re.sub(r"\s*,(\s*,)+", ",", rest)
    rest = re.sub(r"\s+,", ",", rest).strip(" ,;")
    return ", ".join(nums), " ".join(rest.split())


def _dq(text):
    """A YAML double-quoted scalar (JSON strings are valid YAML)."""
    return json.dumps(text, ensure_ascii=False)


_SCALAR = r"(?P<val>\"(?:[^\"\\]|\\.)*\"|'(?:[^']|'')*'|[^,}\n#]*?)"
_BLOCK_SCALAR = r"(?P<val>\"(?:[^\"\\]|\\.)*\"|'(?:[^']|'')*'|[^\n#]*?)"
_BLOCK_EQ = re.compile(rf"^(?P<indent>[ \t]*(?:- )?)equation:[ \t]*{_BLOCK_SCALAR}[ \t]*(?P<comment>#.*)?$", re.M)
_FLOW_EQ = re.compile(rf"(?P<pre>[{{,][ \t]*)equation:[ \t]*{_SCALAR}(?=[ \t]*[,}}])")
_BLOCK_TEXT = re.compile(rf"^(?P<indent>[ \t]*(?:- )?)(?P<key>{'|'.join(TEXT_FIELDS)}):[ \t]+"
                         r"(?P<val>[^\"\s][^\n]*?|'(?:[^']|'')*')[ \t]*$", re.M)


def _load_scalar(text):
    text = text.strip()
    return "" if not text else yaml.safe_load(text)


def migrate_text(text):
    """Rewrite one registry file's text; returns ``(new text, number of changes)``."""
    changes = 0

    def block(m):
        nonlocal changes
        changes += 1
        note_eq, locator = split_equation(_load_scalar(m.group("val")))
        indent = m.group("indent")
        cont = " " * len(indent)
        eq = _dq(note_eq) if note_eq else "null"
        comment = f" {m.group('comment')}" if m.group("comment") else ""
        return f"{indent}note_eq: {eq}\n{cont}locator: {_dq(locator)}{comment}"

    def flow(m):
        nonlocal changes
        changes += 1
        note_eq, locator = split_equation(_load_scalar(m.group("val")))
        eq = _dq(note_eq) if note_eq else "null"
        return f"{m.group('pre')}note_eq: {eq}, locator: {_dq(locator)}"

    def backslashes(m):
        nonlocal changes
        try:
            value = _load_scalar(m.group("val"))
        except yaml.YAMLError:  # a value continued on the next line: left alone, checked below
            return m.group(0)
        if not isinstance(value, str) or "\\\\" not in value:
            return m.group(0)
        changes += 1
        return f"{m.group('indent')}{m.group('key')}: {_dq(value.replace(chr(92) * 2, chr(92)))}"

    text = _BLOCK_EQ.sub(block, text)
    text = _FLOW_EQ.sub(flow, text)
    text = _BLOCK_TEXT.sub(backslashes, text)
    return text, changes


def migrate(paths=None):
    """Migrate registry files in place; returns problems left (e.g. an unparsable value)."""
    left = []
    for path in paths or registry_files():
        old = path.read_text(encoding="utf-8")
        new, n = migrate_text(old)
        before = yaml.safe_load(old) or []
        after = yaml.safe_load(new) or []
        if len(before) != len(after):
            left.append(f"{path.name}: migration changed the number of entries; not written")
            continue
        for a in after:
            if "equation" in a:
                left.append(f"{path.name}:{a.get('id')}: 'equation' not migrated (unusual quoting); edit by hand")
            for k, v in a.items():
                if isinstance(v, str) and "\\\\" in v:
                    left.append(f"{path.name}:{a.get('id')}: {k} still holds a doubled backslash; edit by hand")
        if new != old:
            path.write_text(new, encoding="utf-8")
            print(f"{path.name}: {n} changes")
    return left


def sync_see_also(paths=None):
    """Add to each entry's see_also the other chapters that quote its id (text edit, idempotent)."""
    changed = 0
    for path in paths or registry_files():
        text = path.read_text(encoding="utf-8")
        for e in yaml.safe_load(text) or []:
            want = sorted(quoting_chapters(e["id"]) - {e.get("chapter")} - set(e.get("see_also") or []))
            if not want:
                continue
            new = sorted(set(e.get("see_also") or []) | set(want))
            block = re.compile(rf"(^- id: {re.escape(e['id'])}\n(?:[ \t]+.*\n)*?)(?=- |\Z)", re.M)
            flow = re.compile(rf"(^- \{{id: {re.escape(e['id'])},(?:[^}}])*?)(\}})", re.M)
            if e.get("see_also"):
                text = re.sub(rf"(- id: {re.escape(e['id'])}\n(?:[ \t]+.*\n)*?[ \t]+see_also:).*\n",
                              lambda m: f"{m.group(1)} [{', '.join(new)}]\n", text, count=1)
            elif block.search(text):
                text = block.sub(lambda m: f"{m.group(1)}  see_also: [{', '.join(new)}]\n", text, count=1)
            elif flow.search(text):
                text = flow.sub(lambda m: f"{m.group(1)}, see_also: [{', '.join(new)}]{m.group(2)}", text, count=1)
            else:
                print(f"{path.name}:{e['id']}: add see_also: [{', '.join(new)}] by hand")
                continue
            changed += 1
        path.write_text(text, encoding="utf-8")
    return changed


def main(argv):
    if argv[:1] == ["see-also"]:
        print(f"see_also updated in {sync_see_also()} entries")
        return 0
    if argv[:1] == ["migrate"]:
        left = migrate()
        print("\n".join(left) if left else "registry migrated (nothing left to do by hand)")
        return 1 if left else 0
    problems = validate()
    print("\n".join(problems) if problems else f"registry consistent ({len(load_entries())} entries)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
