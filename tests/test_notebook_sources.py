"""The chapter notebooks are generated from their MyST sources and agree with them."""

import build_notebooks as bn
import pytest

SOURCES = bn.chapter_sources()


def test_every_chapter_has_a_source():
    names = {p.stem for p in SOURCES}
    notebooks = {p.stem for p in bn.CHAPTERS.glob("[0-9][0-9]_*.ipynb")}
    assert len(SOURCES) == 10
    assert notebooks == names, f"notebooks without a source: {sorted(notebooks - names)}"


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_notebook_agrees_with_source(source):
    problems = bn.out_of_sync(source)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_no_hand_caught_derivation_errors(source):
    """Negative checks use check_differs / check_fails, which raise when the wrong form holds."""
    text = source.read_text(encoding="utf-8")
    assert "except DerivationError" not in text, (
        f"{source.name}: use linbook.symbolic.check_differs/check_fails instead of catching DerivationError")


def test_out_of_sync_detects_an_edit(tmp_path, monkeypatch):
    """The sync check can fail: a one-word change to a source is reported."""
    src = SOURCES[0]
    edited = tmp_path / src.name
    edited.write_text(src.read_text(encoding="utf-8").replace("# ", "# Edited ", 1), encoding="utf-8")
    (tmp_path / src.with_suffix(".ipynb").name).write_bytes(src.with_suffix(".ipynb").read_bytes())
    monkeypatch.setattr(bn, "ROOT", tmp_path.parent)
    assert bn.out_of_sync(edited)


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_pure_check_cells_fold_their_code(source):
    """Read first, check second: a cell that only prints check results hides its input."""
    import format_chapters as fc
    import nbformat

    nb = nbformat.read(source.with_suffix(".ipynb"), as_version=4)
    unfolded = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"
                and fc.is_check_output(c.outputs) and "hide-input" not in c.metadata.get("tags", [])]
    assert not unfolded, (f"{source.name}: cells {unfolded} only print checks; fold them: "
                          f"python tools/format_chapters.py --tag-checks {source.relative_to(bn.ROOT)}")


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_no_output_line_wider_than_the_page(source):
    import nbformat

    nb = nbformat.read(source.with_suffix(".ipynb"), as_version=4)
    wide = []
    for i, c in enumerate(nb.cells):
        for out in c.get("outputs", []):
            text = out.get("text", "") if out.get("output_type") == "stream" else out.get("data", {}).get("text/plain", "")
            wide += [(i, len(ln)) for ln in text.splitlines() if len(ln) > 100]
    assert not wide, f"{source.name}: output lines over 100 characters (cell, length): {wide[:10]}"
