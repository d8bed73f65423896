"""RecursiveLeastSquares.partial_fit's one-call chunk (session 30, issue 22): equal to the readable steps.

A plain chunk of a started stream (float64 arrays, no ``sample_weight``, a solve whose condition is known small)
is absorbed by ``RecursiveLeastSquares._solved_in_one_call``: up to 64 parameters by one compiled call
(``linbook._kernels.online.rls_plain_chunk``), beyond by ``_normal_equations`` without the steps' plumbing. These
tests hold it to the readable steps (the same route with the shortcut switched off): the same state after every
chunk, the same errors for NaN / inf / a wrong width / a changed parameter, and a failed chunk leaves the model
exactly as it was. No timing here: speed lives in ``benchmarks/bench_first_use.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from linbook.online import RecursiveLeastSquares, _stream
from linbook.online import rls as rls_module
from linbook._kernels import online as online_kernels


@pytest.fixture
def compiled_budget():
    """No numpy steps left: the compiled routes from the first chunk (restored after the test)."""
    saved = _stream.numpy_steps_left[0]
    _stream.numpy_steps_left[0] = 0
    yield
    _stream.numpy_steps_left[0] = saved


def _data(seed, n, d):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * rng.choice([0.1, 1.0, 10.0], d) + rng.choice([0.0, 5.0, 100.0], d)
    return X, X @ rng.standard_normal(d) + 3.0 + rng.standard_normal(n)


def _state(model):
    return {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in vars(model).items()}


def _assert_same_state(a, b, rtol=0.0):
    assert a.keys() == b.keys()
    for k in a:
        if isinstance(a[k], np.ndarray):
            np.testing.assert_allclose(a[k], b[k], rtol=rtol, atol=0.0, err_msg=k)
        elif isinstance(a[k], tuple) and k == "_factor":
            for u, v in zip(a[k], b[k]):
                np.testing.assert_allclose(u, v, rtol=rtol, atol=0.0, err_msg=k)
        elif k not in ("_stream_params",):
            assert a[k] == b[k] or (a[k] is None and b[k] is None), k


def _readable(monkeypatch):
    """The steps alone: the one-call shortcut switched off."""
    monkeypatch.setattr(RecursiveLeastSquares, "_solved_in_one_call", lambda self, X, y: False)


def _counting(monkeypatch):
    """Count the chunks the shortcut absorbed (so that a test cannot pass by never taking it)."""
    taken = [0]
    original = RecursiveLeastSquares._solved_in_one_call

    def counted(self, X, y):
        done = original(self, X, y)
        taken[0] += done
        return done

    monkeypatch.setattr(RecursiveLeastSquares, "_solved_in_one_call", counted)
    return taken


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_plain_chunk_kernel_equals_normal_solve(fit_intercept):
    """``rls_plain_chunk`` = ``rls_normal_solve`` of ``(X, y - y_shift)`` with unit weights (A, r, factor, m,
    outcome), to the last bit; a NaN or inf in X or y: code 6 and nothing written."""
    X, y = _data(3, 120, 7)
    shift = np.median(X, axis=0) if fit_intercept else np.zeros(0)
    p = 8 if fit_intercept else 7
    A0, r0 = np.diag(np.r_[np.full(7, 0.3), np.zeros(p - 7)]), np.full(p, 0.1)
    for ceiling in (np.zeros(0), np.full(p, 1e300)):
        a = [A0.copy(), r0.copy(), ceiling, np.empty((p, p)), np.empty(p), np.empty(p)]
        b = [A0.copy(), r0.copy(), ceiling, np.empty((p, p)), np.empty(p), np.empty(p)]
        out_a = online_kernels.rls_normal_solve(X, shift, y - 2.5, np.ones(len(y)), *a)
        out_b = online_kernels.rls_plain_chunk(X, shift, y, 2.5, *b)
        assert out_a == out_b == (rls_module.CONDITION_UNKNOWN if ceiling.size == 0 else rls_module.DONE)
        for u, v in zip(a, b):
            np.testing.assert_array_equal(u, v)
        np.testing.assert_allclose(b[0] @ b[5], b[1], rtol=1e-9)        # m solves A m = r
    for bad in (np.nan, np.inf, -np.inf):
        for where in ("X", "y"):
            Xb, yb = X.copy(), y.copy()
            (Xb if where == "X" else yb)[(57, 3) if where == "X" else 57] = bad
            A, r = A0.copy(), r0.copy()
            out = online_kernels.rls_plain_chunk(Xb, shift, yb, 2.5, A, r, np.full(p, 1e300), np.empty((p, p)),
                                                 np.empty(p), np.empty(p))
            assert out == 6
            np.testing.assert_array_equal(A, A0)
            np.testing.assert_array_equal(r, r0)


@pytest.mark.parametrize("d, prior, fit_intercept, chunk",
                         [(10, 0.0, True, 100), (10, 0.5, False, 37), (3, 0.0, True, 5), (40, 1.0, True, 150),
                          (100, 0.0, True, 100), (70, 0.3, True, 120)])
def test_one_call_chunks_equal_the_steps(monkeypatch, compiled_budget, d, prior, fit_intercept, chunk):
    """A stream with the shortcut and the same stream through the steps alone end every chunk in the same state
    (coef_, intercept_, A, r, the factor, P_); the shortcut took most chunks, or none where the steps take the
    recursion (5 rows of 4 parameters)."""
    X, y = _data(d, 40 * chunk + 2 * d, d)

    def stream(fast):
        model = RecursiveLeastSquares(prior_precision=prior, fit_intercept=fit_intercept)
        states, i = [], 0
        with monkeypatch.context() as patch:
            taken = _counting(patch) if fast else _readable(patch)
            model.partial_fit(X[:2 * d + 10], y[:2 * d + 10])
            for i in range(2 * d + 10, len(y), chunk):
                model.partial_fit(X[i:i + chunk], y[i:i + chunk])
                states.append(_state(model))
        return model, states, taken

    fast, fast_states, taken = stream(True)
    slow, slow_states, _ = stream(False)
    if rls_module._solving_is_cheaper(chunk, d + fit_intercept):
        assert taken[0] >= len(fast_states) - 3
    else:                                       # small chunks go through the recursion, never the shortcut
        assert taken[0] == 0
    for a, b in zip(fast_states, slow_states):
        _assert_same_state(a, b)
    np.testing.assert_array_equal(fast.P_, slow.P_)
    full = RecursiveLeastSquares(prior_precision=prior, fit_intercept=fit_intercept).fit(X, y)
    np.testing.assert_allclose(fast.coef_, full.coef_, rtol=1e-8, atol=1e-10)


def _bad_chunks(X, y):
    nan_x, inf_y, wide = X.copy(), y.copy(), np.c_[X, X[:, :1]]
    nan_x[17, 2] = np.nan
    inf_y[3] = np.inf
    return [(nan_x, y), (X, inf_y), (-np.inf * np.ones_like(X), y), (wide, y), (X, y[:-1])]


@pytest.mark.parametrize("d", [10, 100])
def test_bad_chunks_same_error_and_nothing_changes(monkeypatch, compiled_budget, d):
    """A chunk with NaN / inf / a wrong width / a wrong length on a stream the shortcut carries: the steps'
    ValueError, word for word, and the model exactly as it was."""
    X, y = _data(d + 1, 2000, d)

    def started():
        model = RecursiveLeastSquares().partial_fit(X[:200], y[:200])
        for i in range(200, 1000, 100):
            model.partial_fit(X[i:i + 100], y[i:i + 100])
        return model

    taken = _counting(monkeypatch)
    model = started()
    assert taken[0] > 0                      # the stream is on the shortcut
    for Xb, yb in _bad_chunks(X[1000:1100], y[1000:1100]):
        before = _state(model)
        with pytest.raises(ValueError) as fast_error:
            model.partial_fit(Xb, yb)
        _assert_same_state(_state(model), before)
        with monkeypatch.context() as patch:
            _readable(patch)
            with pytest.raises(ValueError) as slow_error:
                started().partial_fit(Xb, yb)
        assert str(fast_error.value) == str(slow_error.value)
    model.partial_fit(X[1000:1100], y[1000:1100])            # and the stream goes on
    np.testing.assert_allclose(model.coef_, RecursiveLeastSquares().fit(X[:1100], y[:1100]).coef_, rtol=1e-8)


def test_parameters_set_between_chunks_are_checked(compiled_budget):
    """set_params between chunks: a bad value is refused, a changed prior too; a new noise_variance is taken."""
    X, y = _data(5, 1000, 10)
    model = RecursiveLeastSquares()
    for i in range(0, 600, 100):
        model.partial_fit(X[i:i + 100], y[i:i + 100])
    before = _state(model)
    for bad in (dict(noise_variance=-1.0), dict(prior_precision=0.5), dict(fit_intercept=False)):
        model.set_params(**bad)
        with pytest.raises(ValueError):
            model.partial_fit(X[600:700], y[600:700])
        model.set_params(noise_variance=1.0, prior_precision=0.0, fit_intercept=True)
        _assert_same_state({k: v for k, v in _state(model).items() if k != "_stream_params"},
                           {k: v for k, v in before.items() if k != "_stream_params"})
    model.set_params(noise_variance=4.0)
    model.partial_fit(X[600:700], y[600:700])
    np.testing.assert_allclose(model.covariance_, 4.0 * model.P_)
    np.testing.assert_allclose(model.coef_, RecursiveLeastSquares().fit(X[:700], y[:700]).coef_, rtol=1e-8)


@pytest.mark.parametrize("k", [1, 2, 3, 200, 301])
def test_lower_median_is_the_weighted_median_of_equal_weights(k):
    """The shift of equal weights by a partition = the sorted route's first row past half the weight (ties, odd and
    even counts), and ``_centre`` takes it for any common weight."""
    rng = np.random.default_rng(k)
    x = rng.integers(-3, 4, size=(k, 6)).astype(float) * rng.choice([1e-3, 1.0, 1e8], 6)   # many ties
    np.testing.assert_array_equal(rls_module._lower_median(x), rls_module._weighted_median(x, np.ones(k)))
    np.testing.assert_array_equal(RecursiveLeastSquares._centre(x, np.full(k, 0.3)),
                                  rls_module._weighted_median(x, np.ones(k)))
    if k > 2:                                     # unequal weights: the sorted route
        w = np.ones(k)
        w[0] = 1e6
        np.testing.assert_array_equal(RecursiveLeastSquares._centre(x, w), x[0])
