"""Plotting helpers with one look across the book.

Each helper draws on a given ``ax`` (or the current axes) and returns the axes,
so a notebook cell can compose them and end with ``plt.show()`` (nbval then sees
no object repr with a memory address).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Ellipse
from matplotlib.text import Text

__all__ = ["use_book_style", "CLASS_COLORS", "TEXT_WIDTH", "book_figure", "add_colorbar",
           "legend_below", "plot_classes", "plot_decision_boundary", "plot_gaussian_ellipse",
           "plot_contours_with_path", "grid_2d", "smallest_text_pt", "MIN_TEXT_KEY"]

CLASS_COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
                "#7f7f7f", "#bcbd22", "#17becf"]
_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">"]

#: Width of a book figure in inches. At 150 dpi, cropped to its content, a figure this wide is
#: stored 950-1050 px wide. Its text is 12 pt (25 px in the PNG, ``font.size``; never set a
#: smaller ``fontsize``): a 390 px phone shows the figure 358 CSS px wide, about 0.345 of its
#: stored width, so that text is 8.6 CSS px there (at least 8, checked by the site's browser
#: test), and about 16 CSS px in the 688 px desktop column.
TEXT_WIDTH = 6.8
#: Most panels side by side on a book figure (each panel is then >= 3 in wide).
MAX_COLUMNS = 2


#: PNG text entry in which a notebook figure records the height of its smallest font in pixels
#: of the PNG (points x dpi / 72); the browser test turns it into CSS px on a phone.
MIN_TEXT_KEY = "linbook:min-text-px"


def smallest_text_pt(fig):
    """Size in points of the smallest font of any visible, non-empty text of ``fig``.

    Counts every text artist (tick labels, axis labels, titles, legends, colourbars,
    annotations), also tick labels outside the view limits, so it may be smaller than what is
    drawn, never larger. ``None`` for a figure without text.

    Derived in: not a derivation; the book's figure style.
    """
    sizes = [t.get_fontsize() for t in fig.findobj(Text)
             if t.get_visible() and t.get_text().strip()]
    return min(sizes) if sizes else None


def _png_recording_text_size(fig):
    """The inline backend's PNG of ``fig`` (cropped, no "Software" entry) with ``MIN_TEXT_KEY``."""
    from IPython.core.pylabtools import print_figure

    metadata = {"Software": None}
    pt = smallest_text_pt(fig)
    if pt is not None:
        metadata[MIN_TEXT_KEY] = f"{pt * fig.dpi / 72:.2f}"
    return print_figure(fig, fmt="png", base64=True, bbox_inches="tight", metadata=metadata)


def use_book_style():
    """Set the book's matplotlib defaults (size, resolution, grid, fonts). Call once per notebook.

    Figures are ``TEXT_WIDTH`` x 4.25 in (6.8 x 4.25) at 150 dpi (about 950 px wide once
    cropped) with 12 pt text, sized for the text column so that text stays at least 8 CSS px
    when a 390 px phone scales the page. Multi-panel figures come from :func:`book_figure`. Layout is constrained
    (no ``tight_layout`` calls needed). In a notebook, PNGs are
    written without the "Software" metadata entry, so a stored figure is
    byte-identical wherever it is rendered with the same matplotlib, and with the size of
    their smallest text (``MIN_TEXT_KEY``, see :func:`smallest_text_pt`), so the site's
    browser test can measure it as a phone shows it.

    Derived in: not a derivation; the book's figure style.
    """
    plt.rcParams.update({
        "figure.figsize": (TEXT_WIDTH, 4.25),
        "figure.dpi": 150,
        # constrained layout leaves room for labels, colourbars and legends outside the
        # axes (fig.legend(loc="outside ...")); do not call tight_layout on top of it
        "figure.constrained_layout.use": True,
        "savefig.dpi": 150,
        "axes.grid": True,
        "grid.alpha": 0.3,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "font.size": 12,
        "legend.frameon": False,
        "axes.prop_cycle": plt.cycler(color=CLASS_COLORS),
    })
    try:
        from IPython import get_ipython
        ip = get_ipython()
        if ip is not None:
            from matplotlib.figure import Figure
            from matplotlib_inline.backend_inline import set_matplotlib_formats
            set_matplotlib_formats("png", bbox_inches="tight", metadata={"Software": None})
            ip.display_formatter.formatters["image/png"].for_type(Figure, _png_recording_text_size)
    except ImportError:  # not in IPython / no inline backend: nothing to configure
        pass


def book_figure(nrows=1, ncols=1, *, height=None, width=TEXT_WIDTH, **kw):
    """A figure with an ``nrows x ncols`` grid of axes, sized for the text column.

    The figure is ``width`` inches wide (default ``TEXT_WIDTH``) and ``height`` inches
    per row of panels (default 4.25 for one column, 3.2 for two), with constrained
    layout, so colourbars and :func:`legend_below` find room without overlapping.
    More than ``MAX_COLUMNS`` panels per row leave each panel too narrow for its 12 pt
    labels on a phone: stack rows instead.

    Parameters
    ----------
    nrows, ncols : int
        Grid of panels; ``ncols`` at most 2.
    height : float, optional
        Height of one row of panels in inches.
    width : float
        Width of the figure in inches (at most 7).
    **kw
        Passed to ``matplotlib.pyplot.subplots`` (``sharex``, ``sharey``, ...).

    Returns
    -------
    fig, axes
        As ``matplotlib.pyplot.subplots`` returns them.

    Derived in: not a derivation; the book's figure style.
    """
    if ncols > MAX_COLUMNS:
        raise ValueError(f"book_figure: {ncols} panels per row are too small to read in the "
                         f"text column; use at most {MAX_COLUMNS} columns and stack rows")
    if not 0 < width <= 7.0:
        raise ValueError(f"book_figure: width {width} in does not fit the text column (at most 7 in)")
    if height is None:
        height = 4.25 if ncols == 1 else 3.2
    return plt.subplots(nrows, ncols, figsize=(width, height * nrows), layout="constrained", **kw)


def add_colorbar(ax, mappable, label, **kw):
    """Attach a labelled colourbar for ``mappable`` (contour set, image, mesh) beside ``ax``.

    ``ax`` may be one axes or a list of axes that share the colour scale. Returns the
    ``matplotlib.colorbar.Colorbar``.

    Derived in: not a derivation; the book's figure style.
    """
    if not label:
        raise ValueError("add_colorbar: give the colourbar a label (what the colours measure)")
    axes = np.atleast_1d(ax).ravel().tolist()
    return axes[0].figure.colorbar(mappable, ax=axes if len(axes) > 1 else axes[0], label=label,
                                   **kw)


def legend_below(fig, ncol=2, axes=None, **kw):
    """One legend for the whole figure, centred below the panels (it covers no data).

    Entries are collected from ``axes`` (default: every axes of ``fig``); an entry whose
    label repeats one already collected is dropped. Needs a figure with constrained
    layout (:func:`book_figure`). Returns the legend.

    Derived in: not a derivation; the book's figure style.
    """
    handles, labels = [], []
    for ax in (fig.axes if axes is None else np.atleast_1d(axes).ravel()):
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    if not handles:
        raise ValueError("legend_below: no labelled artists on the figure")
    return fig.legend(handles, labels, loc="outside lower center", ncol=min(ncol, len(handles)),
                      **kw)


def grid_2d(xlim, ylim, n=200):
    """Return ``(xx, yy, points)`` for an ``n x n`` grid over the given limits.

    Derived in: not a derivation; grid for contour plots.
    """
    xs = np.linspace(*xlim, n)
    ys = np.linspace(*ylim, n)
    xx, yy = np.meshgrid(xs, ys)
    return xx, yy, np.column_stack([xx.ravel(), yy.ravel()])


def _limits(X, pad=0.1):
    lo, hi = X.min(axis=0), X.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    return (lo[0] - pad * span[0], hi[0] + pad * span[0]), (lo[1] - pad * span[1], hi[1] + pad * span[1])


def plot_classes(X, y, ax=None, labels=None, **kw):
    """Scatter 2-D points coloured and marked by class.

    Derived in: not a derivation; used by every classification chapter.
    """
    ax = ax or plt.gca()
    for i, c in enumerate(np.unique(y)):
        m = y == c
        name = labels[i] if labels is not None else f"class {c}"
        ax.scatter(X[m, 0], X[m, 1], s=kw.get("s", 18), c=CLASS_COLORS[i % 10],
                   marker=_MARKERS[i % 10], edgecolors="white", linewidths=0.4, label=name,
                   alpha=kw.get("alpha", 0.9))
    return ax


def plot_decision_boundary(predict, X, y=None, ax=None, *, proba=False, levels=None, n=200,
                           xlim=None, ylim=None):
    """Shade the regions of a 2-D classifier and draw its boundary.

    Parameters
    ----------
    predict : callable
        Maps an (m, 2) array to labels, or (with ``proba=True``) to the
        probability of the positive class, which is contoured at ``levels``
        (default 0.5).

    Derived in: chapter "Logistic regression" § "Model" (decision boundary geometry).
    """
    ax = ax or plt.gca()
    if xlim is None or ylim is None:
        lx, ly = _limits(X)
        xlim, ylim = xlim or lx, ylim or ly
    xx, yy, pts = grid_2d(xlim, ylim, n)
    z = np.asarray(predict(pts))
    if proba:
        zz = z.reshape(xx.shape)
        cf = ax.contourf(xx, yy, zz, levels=np.linspace(0, 1, 11), cmap="RdBu_r", alpha=0.3)
        ax.contour(xx, yy, zz, levels=levels or [0.5], colors="k", linewidths=1.2)
        add_colorbar(ax, cf, r"$p(y=1\mid x)$")
    else:
        _, codes = np.unique(z, return_inverse=True)
        zz = codes.reshape(xx.shape)
        k = codes.max() + 1
        ax.contourf(xx, yy, zz, levels=np.arange(k + 1) - 0.5,
                    colors=[CLASS_COLORS[i % 10] for i in range(k)], alpha=0.15)
        ax.contour(xx, yy, zz, levels=np.arange(k) + 0.5, colors="k", linewidths=1.0)
    if y is not None:
        plot_classes(X, y, ax=ax)
    ax.set_xlim(xlim)
    ax.set_ylim(ylim)
    return ax


def plot_gaussian_ellipse(mean, cov, ax=None, *, n_std=(1.0, 2.0), color="k", **kw):
    """Draw the Mahalanobis-distance contours ``n_std`` of a 2-D Gaussian.

    The ellipse axes are the eigenvectors of ``cov``, half-lengths
    ``n_std * sqrt(eigenvalue)`` (chapter "Gaussian models and GDA", eq. (4.5)).

    Derived in: chapter "Gaussian models and GDA" § "The multivariate normal" (eq. (4.5)).
    """
    ax = ax or plt.gca()
    vals, vecs = np.linalg.eigh(np.asarray(cov, dtype=float))
    angle = np.degrees(np.arctan2(vecs[1, -1], vecs[0, -1]))
    for k in np.atleast_1d(n_std):
        e = Ellipse(mean, 2 * k * np.sqrt(vals[-1]), 2 * k * np.sqrt(vals[0]), angle=angle,
                    fill=False, edgecolor=color, linewidth=kw.get("linewidth", 1.2),
                    linestyle=kw.get("linestyle", "-"))
        ax.add_patch(e)
    ax.plot(*mean, marker="+", color=color, markersize=8)
    return ax


def plot_contours_with_path(f, path=None, ax=None, *, xlim=(-2, 2), ylim=(-2, 2), n=200, levels=30,
                            label=None, color="C1", log_levels=False, colorbar_label=None):
    """Contours of ``f(x, y)`` (vectorised over arrays) with an optimiser's path on top.

    With ``colorbar_label`` (e.g. ``"objective"``) a colourbar says which level each
    contour colour is.

    Derived in: chapter "Optimizers" § "Gradient descent" (figures 8.2-8.4).
    """
    ax = ax or plt.gca()
    xx, yy, _ = grid_2d(xlim, ylim, n)
    zz = f(xx, yy)
    if log_levels:
        lo = max(np.min(zz), 1e-12)
        levels = np.geomspace(lo, np.max(zz), levels if isinstance(levels, int) else len(levels))
    cs = ax.contour(xx, yy, zz, levels=levels, cmap="viridis", linewidths=0.7)
    if colorbar_label is not None:
        add_colorbar(ax, cs, colorbar_label)
    if path is not None:
        path = np.asarray(path)
        ax.plot(path[:, 0], path[:, 1], "-o", color=color, markersize=3, linewidth=1.2, label=label)
        ax.plot(*path[0], "ks", markersize=5)
    ax.set_xlim(xlim)
    ax.set_ylim(ylim)
    ax.set_aspect("equal", adjustable="box")
    return ax
