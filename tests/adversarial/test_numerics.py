"""Adversarial cases for linbook.numerics: +-inf, NaN, +-1e308, subnormals.

Right answer = the mathematical limit (stated per function in its docstring), without an
overflow/invalid warning; NaN in gives NaN out (propagation, as numpy); an all -inf softmax
row is a clear error.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from linbook.numerics import log1pexp, log_sigmoid, log_softmax, logsumexp, sigmoid, softmax

from .harness import answer_or_clear_error, assert_all_finite

BIG = np.finfo(float).max
TINY = np.finfo(float).smallest_subnormal
POINTS = {"+inf": np.inf, "-inf": -np.inf, "+max": BIG, "-max": -BIG, "+1e308": 1e308, "-1e308": -1e308,
          "+subnormal": TINY, "-subnormal": -TINY, "+0": 0.0, "-0": -0.0, "+800": 800.0, "-800": -800.0}
LIMITS = {  # (sigmoid, log1pexp, log_sigmoid) at each point
    "+inf": (1.0, np.inf, 0.0), "-inf": (0.0, 0.0, -np.inf),
    "+max": (1.0, BIG, 0.0), "-max": (0.0, 0.0, -BIG), "+1e308": (1.0, 1e308, 0.0), "-1e308": (0.0, 0.0, -1e308),
    "+subnormal": (0.5, np.log(2.0), -np.log(2.0)), "-subnormal": (0.5, np.log(2.0), -np.log(2.0)),
    "+0": (0.5, np.log(2.0), -np.log(2.0)), "-0": (0.5, np.log(2.0), -np.log(2.0)),
    "+800": (1.0, 800.0, 0.0), "-800": (0.0, 0.0, -800.0),
}


@pytest.fixture(autouse=True)
def _warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


@pytest.mark.parametrize("point", sorted(POINTS))
def test_elementwise_limits(point):
    z = POINTS[point]
    want = LIMITS[point]
    got = (sigmoid(z), log1pexp(z), log_sigmoid(z))
    for g, w, f in zip(got, want, ("sigmoid", "log1pexp", "log_sigmoid")):
        assert g == pytest.approx(w, rel=1e-15, abs=0), f"{f}({point}) = {g}, limit {w}"
    assert 0.0 <= sigmoid(z) <= 1.0


@pytest.mark.parametrize("f", [sigmoid, log1pexp, log_sigmoid])
def test_nan_propagates(f):
    out = f(np.array([np.nan, 0.0]))
    assert np.isnan(out[0]) and np.isfinite(out[1])


ROWS = {
    "two +inf": ([1.0, np.inf, -3.0, np.inf], [0, 0.5, 0, 0.5]),
    "one +inf and -inf": ([np.inf, -np.inf, 0.0], [1.0, 0, 0]),
    "+-max": ([BIG, -BIG, 0.0], [1.0, 0, 0]),
    "1e308 pair": ([1e308, 1e308], [0.5, 0.5]),
    "some -inf": ([-np.inf, 0.0, -np.inf, 0.0], [0, 0.5, 0, 0.5]),
    "subnormals": ([TINY, -TINY], [0.5, 0.5]),
}


@pytest.mark.parametrize("row", sorted(ROWS))
def test_softmax_limits(row):
    a, want = (np.array(v, dtype=float) for v in ROWS[row])
    p = softmax(a[None, :], axis=1)[0]
    np.testing.assert_allclose(p, want, rtol=1e-15, atol=0)
    lp = log_softmax(a[None, :], axis=1)[0]
    assert not np.isnan(lp).any() and np.all(lp <= 0)
    with np.errstate(under="ignore"):
        np.testing.assert_allclose(np.exp(lp), want, rtol=1e-15, atol=0)   # log_softmax may keep -1e308
    lse = logsumexp(a)
    assert not np.isnan(lse)
    if np.isposinf(a).any():
        assert lse == np.inf


def test_logsumexp_extremes():
    assert logsumexp(np.array([BIG, BIG])) == np.inf or logsumexp(np.array([BIG, BIG])) == pytest.approx(BIG)
    assert logsumexp(np.array([1e308, -1e308])) == 1e308
    assert logsumexp(np.array([-np.inf, -np.inf])) == -np.inf
    assert logsumexp(np.array([-BIG, -BIG])) == pytest.approx(-BIG + np.log(2.0))
    assert np.isnan(logsumexp(np.array([np.nan, 1.0])))


@pytest.mark.parametrize("f", [softmax, log_softmax])
def test_all_minus_inf_row_is_a_clear_error(f):
    a = np.array([[0.0, 1.0], [-np.inf, -np.inf]])
    assert answer_or_clear_error(lambda: f(a, axis=1), corrupts="a") is None
    with pytest.raises(ValueError, match="entirely -inf"):
        f(a, axis=1)


@pytest.mark.parametrize("f", [softmax, log_softmax])
def test_nan_row_propagates_alone(f):
    a = np.array([[0.0, 1.0], [np.nan, 1.0]])
    out = f(a, axis=1)
    assert np.all(np.isnan(out[1]))
    assert_all_finite(out[0], what="the NaN-free row")
