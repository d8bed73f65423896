"""Session 29: the online learners other than RLS on streams with far rows (oracle: the same algorithm written
out in plain numpy).

OnlineGradientDescent checked each chunk's squared row norms for underflow on the chunk alone, in the units of
the first chunk: a stream whose first row was 1e150 times the later ones (units ~1e-150 for them) refused every
later chunk ("features of order 1e-150 or smaller"), although the iteration is well defined (and SGDRegressor,
SGDClassifier and LMS, which keep the stream's largest norm, took the same stream). It now keeps the stream's
largest squared norm, as they do.
"""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest

from linbook.online import OnlineGradientDescent


def _ogd_reference(X, y):
    """Projected OGD (8.78), squared loss, eta0='auto', no ball: ``eta_t = 1 / (L_t sqrt(t))``,
    ``L_t = max_{s<=t} ||x_s||^2``, in plain numpy on the unscaled rows."""
    theta, L = np.zeros(X.shape[1]), 0.0
    for t, (x, target) in enumerate(zip(X, y), start=1):
        dz = x @ theta - target
        L = max(L, x @ x)
        theta = theta - dz * x / (L * np.sqrt(t))
    return theta


@pytest.mark.parametrize("far", [1e100, 1e150, 1e152], ids=lambda f: f"far{f:g}")
@pytest.mark.parametrize("chunk", [1, 7])
def test_ogd_stream_after_a_far_first_row_is_the_algorithm(far, chunk):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    y = X @ [1.0, -2.0, 0.5] + 0.1 * rng.standard_normal(40)
    X[0] *= far
    model = OnlineGradientDescent()
    for i in range(0, 40, chunk):
        model.partial_fit(X[i:i + chunk], y[i:i + chunk])
    np.testing.assert_allclose(model.coef_, _ogd_reference(X, y), rtol=1e-12)
    assert model.t_ == 40


def test_ogd_after_zero_rows_fits_rows_whose_squares_underflow():
    """A first chunk of zero rows and then rows of 2^-531 (squared norms underflow, no larger row before): the
    default steps would divide by 0, and this was refused. The stream now picks its units on the chunk (the
    squares' underflow no longer hides the scale): the weights of rows ``x 2^-531`` are those of ``x`` times
    ``2^531``."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(6, 2)), rng.normal(size=6)
    tiny = OnlineGradientDescent().partial_fit(np.zeros((3, 2)), np.ones(3)).partial_fit(np.ldexp(X, -531), y)
    plain = OnlineGradientDescent().partial_fit(np.zeros((3, 2)), np.ones(3)).partial_fit(X, y)
    np.testing.assert_array_equal(tiny.coef_, np.ldexp(plain.coef_, 531))


@pytest.mark.parametrize("lam", [0.0, 1e-300])
def test_sgd_stop_rule_with_weights_near_the_overflow(lam):
    """A constant step of 1e300 (log loss saturates from the first step, so the iterates are 1e150 times those
    of a step of 1e150, to the last bit in exact arithmetic): the epoch objective's penalty was ``0 * inf`` =
    NaN with ``lam = 0`` (inf with ``lam = 1e-300``), so the stop rule never fired, 1000 epochs ran and 1000
    RuntimeWarnings leaked. Now the penalty is taken scaled, and the fit stops when the step of 1e150 does."""
    from linbook.online import SGDClassifier

    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3))
    y = (X @ [1.0, -2.0, 0.5] + 0.3 > 0).astype(int)
    small = SGDClassifier(learning_rate="constant", eta0=1e150, lam=lam, random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        large = SGDClassifier(learning_rate="constant", eta0=1e300, lam=lam, random_state=0).fit(X, y)
    if lam == 0.0:
        assert large.n_iter_ == small.n_iter_ < 1000
        np.testing.assert_allclose(large.coef_, 1e150 * small.coef_, rtol=1e-12)
        np.testing.assert_allclose(large.intercept_, 1e150 * small.intercept_, rtol=1e-12)
    else:          # the penalty's share differs between the two; the rule still fires, on a finite objective
        assert large.tol_reached_ and large.n_iter_ < 1000
    assert np.all(np.isfinite(large.coef_))
