"""Every figure stored in a chapter notebook is sized for the text column and has alt text.

The notebooks are generated (``make notebooks``); these checks read what they store:

* each ``image/png`` is at least 900 px wide (text legible when a phone scales the
  page) and at most 1100 px (a figure wider than ~7 in at 150 dpi is shrunk into the
  column, and its 10 pt text with it);
* each code cell that draws has alt text in its metadata (``mystnb.image.alt``, which
  MyST-NB writes to the HTML ``alt`` attribute), a sentence, not a placeholder.
"""

from __future__ import annotations

import base64
import struct

import build_notebooks as bn
import nbformat
import pytest

MIN_WIDTH_PX, MAX_WIDTH_PX = 900, 1100
NOTEBOOKS = [bn.notebook_path(s) for s in bn.chapter_sources()]


def png_size(data: str) -> tuple[int, int]:
    """(width, height) in px of a base64 PNG, from its IHDR chunk."""
    raw = base64.b64decode(data)
    if raw[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    return struct.unpack(">II", raw[16:24])


def figure_cells(path):
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        pngs = [o["data"]["image/png"] for o in cell.get("outputs", [])
                if "image/png" in o.get("data", {})]
        if pngs:
            yield i, cell, pngs


def test_png_size_reads_the_header():
    import io

    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(2, 1), dpi=100)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    assert png_size(base64.b64encode(buf.getvalue()).decode()) == (200, 100)
    with pytest.raises(ValueError):
        png_size(base64.b64encode(b"GIF89a" + bytes(30)).decode())


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_stored_figures_fit_the_column(path):
    cells = list(figure_cells(path))
    assert cells, f"{path.name} stores no figure (was it executed? make notebooks)"
    bad = [f"cell {i}: {w} x {h} px" for i, _, pngs in cells for w, h in map(png_size, pngs)
           if not MIN_WIDTH_PX <= w <= MAX_WIDTH_PX]
    assert not bad, (f"{path.name}: figures must be {MIN_WIDTH_PX}-{MAX_WIDTH_PX} px wide "
                     f"(linbook.plotting.book_figure): " + "; ".join(bad))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_figure_has_alt_text(path):
    missing = []
    for i, cell, _ in figure_cells(path):
        alt = cell.metadata.get("mystnb", {}).get("image", {}).get("alt", "")
        if len(alt.split()) < 5:
            missing.append(f"cell {i} ({cell.source.splitlines()[0][:50]!r})")
    assert not missing, (f"{path.name}: give each figure a one-sentence alt text in the cell's "
                         "metadata (mystnb: image: alt: ...): " + "; ".join(missing))
