import matplotlib.pyplot as plt
import numpy as np

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
