"""Session 28 review: adversarial inputs against this session's new code, each against an oracle.

RecursiveLeastSquares with one feature and an intercept and a far row among the first rows: ``A`` (columns
scaled) is a well-conditioned 2 x 2, so the normal equations "succeeded" and the far-row QR solve never ran,
but ``r``'s intercept entry held only the far row's ``s y``: the intercept came out 1e57 off at a row 1e75
times the others (412 instead of 0.934 at 1e20), in ``fit`` and in streams of any chunk size. Oracle: the
weighted ridge minimiser at 400 digits (mpmath, the helper of test_rls_far_rows).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from linbook.online import RecursiveLeastSquares

from .test_rls_far_rows import _exact


def _one_feature_problem(far, pos, n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 1))
    y = X[:, 0] * rng.standard_normal() + 0.5 + 0.1 * rng.standard_normal(n)
    sw = rng.uniform(0.5, 2.0, n)
    X[pos] *= far
    y[pos] = far * rng.standard_normal()
    return X, y, sw


def _stream(model, X, y, sw, chunk):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)       # the first rows alone are rank deficient
        for i in range(0, len(y), chunk):
            model.partial_fit(X[i:i + chunk], y[i:i + chunk], sample_weight=sw[i:i + chunk])
    return model


@pytest.mark.parametrize("far", [1e20, 1e75, 1e150], ids=lambda f: f"far{f:g}")
@pytest.mark.parametrize("pos", [0, 3], ids=["first", "row2p-1"])
@pytest.mark.parametrize("alpha", [0.0, 0.7])
@pytest.mark.parametrize("route", ["fit", "rows", "chunks7"])
def test_rls_one_feature_far_first_rows_intercept_is_the_minimiser(far, pos, alpha, route):
    X, y, sw = _one_feature_problem(far, pos)
    model = RecursiveLeastSquares(prior_precision=alpha)
    if route == "fit":
        model.fit(X, y, sample_weight=sw)
    else:
        _stream(model, X, y, sw, 1 if route == "rows" else 7)
    np.testing.assert_allclose(np.r_[model.coef_, model.intercept_], _exact(X, y, sw, alpha, True), rtol=1e-9)
    assert model.n_samples_seen_ == len(y)
