import matplotlib.pyplot as plt
import numpy as np
import pytest

from linbook import plotting


def test_helpers_draw_on_axes():
    plotting.use_book_style()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    fig, ax = plt.subplots()
    plotting.plot_decision_boundary(lambda P: (P.sum(axis=1) > 0).astype(int), X, y, ax=ax)
    assert len(ax.collections) >= 3  # filled regions, boundary, two scatter groups
    plotting.plot_gaussian_ellipse([0, 0], [[2, 0.5], [0.5, 1]], ax=ax, n_std=(1, 2))
    assert len(ax.patches) == 2
    # The 1-sigma ellipse's semi-axes are the square roots of the covariance eigenvalues.
    vals = np.linalg.eigvalsh([[2, 0.5], [0.5, 1]])
    e = ax.patches[0]
    assert np.isclose(e.width / 2, np.sqrt(vals[-1])) and np.isclose(e.height / 2, np.sqrt(vals[0]))
    fig2, ax2 = plt.subplots()
    path = np.array([[1.0, 1.0], [0.5, 0.2], [0.0, 0.0]])
    plotting.plot_contours_with_path(lambda a, b: a**2 + b**2, path, ax=ax2)
    assert np.allclose(ax2.lines[0].get_xydata(), path)
    plt.close("all")


def test_grid():
    xx, yy, pts = plotting.grid_2d((0, 1), (0, 2), n=5)
    assert xx.shape == (5, 5) and pts.shape == (25, 2) and pts[-1].tolist() == [1.0, 2.0]


def _stored_width(fig):
    """Width in px of ``fig`` as a notebook stores it (150 dpi, cropped to its content)."""
    import io
    import struct

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=150, bbox_inches="tight")
    return struct.unpack(">II", buf.getvalue()[16:24])[0]


def test_book_figure_fits_the_column():
    plotting.use_book_style()
    for nrows, ncols in [(1, 1), (1, 2), (2, 2), (3, 1)]:
        fig, axes = plotting.book_figure(nrows, ncols)
        assert fig.get_figwidth() == plotting.TEXT_WIDTH <= 7
        assert np.size(axes) == nrows * ncols
        for ax in np.atleast_1d(axes).ravel():
            ax.plot([0, 1], [0, 1])
            ax.set_xlabel(r"$x_1$")
            ax.set_ylabel(r"$p(y=1\mid x)$")
        # what tests/test_figures.py asks of every stored figure
        assert 900 <= _stored_width(fig) <= 1100, (nrows, ncols)
        plt.close(fig)
    # the default figure of use_book_style is stored that wide too
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    assert 900 <= _stored_width(fig) <= 1100
    plt.close(fig)


def test_book_figure_rejects_unreadable_layouts():
    with pytest.raises(ValueError, match="at most 2 columns"):
        plotting.book_figure(1, 3)
    with pytest.raises(ValueError, match="at most 7 in"):
        plotting.book_figure(1, 1, width=10)


def test_add_colorbar_is_labelled():
    plotting.use_book_style()
    fig, axes = plotting.book_figure(1, 2)
    xx, yy, _ = plotting.grid_2d((0, 1), (0, 1), 20)
    cs = axes[0].contourf(xx, yy, xx * yy)
    cb = plotting.add_colorbar(axes[0], cs, r"$x_1 x_2$")
    assert cb.ax.get_ylabel() == r"$x_1 x_2$" and cb.ax in fig.axes
    cb2 = plotting.add_colorbar(axes, cs, "shared")  # one colourbar for both panels
    assert cb2.ax.get_ylabel() == "shared"
    with pytest.raises(ValueError, match="label"):
        plotting.add_colorbar(axes[0], cs, "")
    plt.close(fig)


def test_decision_boundary_probability_colorbar():
    plotting.use_book_style()
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 2))
    fig, ax = plotting.book_figure()
    plotting.plot_decision_boundary(lambda P: 1 / (1 + np.exp(-P.sum(axis=1))), X, ax=ax, proba=True)
    assert [a.get_ylabel() for a in fig.axes if a is not ax] == [r"$p(y=1\mid x)$"]
    plt.close(fig)


def test_legend_below_covers_no_panel():
    plotting.use_book_style()
    fig, axes = plotting.book_figure(1, 2)
    for i, ax in enumerate(axes):
        ax.plot([0, 1], [0, 1], label="same line")
        ax.plot([0, 1], [1, 0], label=f"only in panel {i}")
    leg = plotting.legend_below(fig)
    assert [t.get_text() for t in leg.get_texts()].count("same line") == 1
    assert len(leg.get_texts()) == 3
    fig.canvas.draw()
    box = leg.get_window_extent()
    assert all(box.y1 <= ax.get_tightbbox().y0 + 1 for ax in axes)  # below every panel
    with pytest.raises(ValueError, match="no labelled"):
        plotting.legend_below(plotting.book_figure()[0])
    plt.close("all")


def test_contours_with_path_colorbar():
    plotting.use_book_style()
    fig, ax = plotting.book_figure()
    plotting.plot_contours_with_path(lambda a, b: a**2 + b**2, ax=ax, colorbar_label=r"$f(\theta)$")
    assert any(a.get_ylabel() == r"$f(\theta)$" for a in fig.axes if a is not ax)
    plt.close(fig)


def test_smallest_text_is_recorded_in_the_notebook_png():
    import base64
    import io

    from PIL import Image

    plotting.use_book_style()
    fig, ax = plotting.book_figure()
    ax.plot([0, 1], [0, 1], label="line")
    ax.legend()
    assert plotting.smallest_text_pt(fig) == 12  # ticks and legend at font.size
    ax.text(0.5, 0.5, "note", fontsize=7)
    ax.text(0.2, 0.2, "hidden", fontsize=3).set_visible(False)
    ax.text(0.3, 0.3, "   ", fontsize=2)
    assert plotting.smallest_text_pt(fig) == 7
    pytest.importorskip("IPython", reason="the notebook PNG is IPython's (the notebooks extra), not a core dependency")
    png = plotting._png_recording_text_size(fig)
    with Image.open(io.BytesIO(base64.b64decode(png))) as im:
        assert float(im.text[plotting.MIN_TEXT_KEY]) == pytest.approx(7 * fig.dpi / 72, abs=0.01)
        assert "Software" not in im.text
    assert plotting.smallest_text_pt(plt.figure()) is None
    plt.close("all")
