"""The perceptron on features near the bottom of float64 (``x`` ~ 1e-180): the scores ``w.x`` ~ ``x.x``.

With the zero start the run on ``x 2^-k`` makes exactly the same mistakes as on ``x`` (every score is divided by
``2^-2k``), so its weights are ``2^-k`` times those on ``x``, and its predictions the same. Before, the scores
``w.x`` ~ 1e-360 underflowed to 0, every test ``y (w.x + b) <= 0`` counted a mistake, and the fit ended far from
the unscaled one (53 % training accuracy on data the unscaled run classified at 90 %), with no warning;
``predict`` then sent every point to ``classes_[1]`` (``sign(0) = +1``). Now the run goes on ``x / s`` for a
power of two ``s`` (``Perceptron._tiny_scale``) and ``predict`` computes the sign of a score below the normal
numbers on exactly scaled rows. With an intercept whose steps ``eta c^2`` cannot be represented beside such
features: a clear error.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sps

import linbook

K = 600                                   # features ~2^-600 ~ 2.4e-181: x.x ~ 1e-362, below the subnormals


def _data(seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((40, 3))
    y = (X @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.standard_normal(40) > 0).astype(int)   # not through the origin
    return X, y


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("form", ["primal", "dual", "pocket"])
@pytest.mark.parametrize("seed", [0, 1])
def test_tiny_features_make_the_same_run(form, sparse, seed):
    X, y = _data(seed)
    tiny = np.ldexp(X, -K)
    fit = lambda A: linbook.Perceptron(form=form, max_iter=20, random_state=0, fit_intercept=False).fit(
        sps.csr_matrix(A) if sparse else A, y)
    with warnings.catch_warnings(record=True) as ref_warnings:
        warnings.simplefilter("always")
        ref = fit(X)
    with warnings.catch_warnings(record=True) as got_warnings:
        warnings.simplefilter("always")
        got = fit(tiny)
    assert [str(w.message) for w in got_warnings] == [str(w.message) for w in ref_warnings]
    np.testing.assert_array_equal(got.update_indices_, ref.update_indices_)
    np.testing.assert_array_equal(got.coef_, np.ldexp(ref.coef_, -K))
    np.testing.assert_array_equal(got.predict(tiny), ref.predict(X))
    assert got.converged_ == ref.converged_


def test_the_intercept_beside_tiny_features_is_a_clear_error():
    X, y = _data(0)
    for scaling in (1.0, "auto"):
        model = linbook.Perceptron(intercept_scaling=scaling)
        with pytest.raises(ValueError, match="features are too small for the intercept.*StandardScaler"):
            model.fit(np.ldexp(X, -K), y)
        assert not hasattr(model, "coef_")


def test_auto_intercept_scales_with_the_features_down_to_the_normal_numbers():
    """``intercept_scaling="auto"`` makes the run the same at every feature scale: at 2^-500 (x.x ~ 1e-301,
    near the smallest normal number) the intercept is 2^-1000 times the unscaled one."""
    X, y = _data(2)
    ref = linbook.Perceptron(intercept_scaling="auto", max_iter=50, random_state=0).fit(X, y)
    got = linbook.Perceptron(intercept_scaling="auto", max_iter=50, random_state=0).fit(np.ldexp(X, -500), y)
    np.testing.assert_array_equal(got.update_indices_, ref.update_indices_)
    np.testing.assert_array_equal(got.coef_, np.ldexp(ref.coef_, -500))
    np.testing.assert_array_equal(got.intercept_, np.ldexp(ref.intercept_, -1000))
    np.testing.assert_array_equal(got.predict(np.ldexp(X, -500)), ref.predict(X))
