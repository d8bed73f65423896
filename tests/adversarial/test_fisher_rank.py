"""FisherLDA where the class means span fewer directions than ``n_components``.

Found by the session-26 state fuzz: on three classes whose means lie on a line, ``Sigma_B`` has rank 1 and
the second generalised eigenvalue is zero to rounding (1e-17 beside 8). Any ``Sigma_W``-orthogonal vector
of ``Sigma_B``'s null space is then a valid second direction, and which one came back depended on LAPACK's
rounding, in silence. The fit now warns, naming the rank and the ``n_components`` to pass.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import linbook


def _collinear_means(seed, d=3):
    """Three classes of 30 rows whose means are exactly on the first axis (0, 3, 6)."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], 30)
    X = rng.standard_normal((90, d))
    for c in range(3):
        X[y == c] -= X[y == c].mean(axis=0)
    X[:, 0] += 3.0 * y
    return X, y


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("n_components", [2, None])
def test_directions_the_means_do_not_span_are_warned(seed, n_components):
    X, y = _collinear_means(seed)
    with pytest.warns(UserWarning, match=r"span only 1 direction.*n_components=1"):
        model = linbook.FisherLDA(n_components=n_components).fit(X, y)
    assert model.eigenvalues_[1] < 1e-12 * model.eigenvalues_[0]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_directions_the_means_span_are_not_warned(seed):
    X, y = _collinear_means(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        one = linbook.FisherLDA(n_components=1).fit(X, y)
        X2 = X.copy()
        X2[:, 1] += np.where(y == 1, 1e-3, 0.0)       # a small but real second direction
        two = linbook.FisherLDA(n_components=2).fit(X2, y)
    assert one.eigenvalues_.shape == (1,)
    assert two.eigenvalues_[1] > 1e-9
