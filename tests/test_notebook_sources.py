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
