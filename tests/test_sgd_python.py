"""The list kernel of per-sample SGD (``linbook._kernels.sgd_python.sgd_epoch_list``) equals the readable
numpy epoch (``linbook.online.sgd._numpy_epoch``) bit for bit: weights, means, counters, loss and status."""

import numpy as np
import pytest

from linbook._kernels.sgd_python import MAX_FEATURES, sgd_epoch_list
from linbook.online.sgd import _numpy_epoch


def _case(seed, d, loss, code, avg_start, lam_n, fit_intercept, weighted, scale, n=40):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * scale
    y = rng.standard_normal(n) * scale if loss == 0 else (rng.random(n) > 0.5).astype(float)
    sw = rng.uniform(0.1, 3.0, n) if weighted else np.ones(n)
    order = rng.permutation(n)
    W, b = rng.standard_normal((1, d)) * 0.1, rng.standard_normal(1) * 0.1
    eta0 = np.float64(0.05 / max(scale * scale * d, 1.0))     # as the estimator passes it
    state = np.array([float(rng.integers(0, 50)), 0.0])
    args = (loss, code, eta0, 1.0 + rng.random(), 0.5 + 0.5 * rng.random(), lam_n, 0.01 + rng.random(),
            fit_intercept, avg_start)
    return X, y, sw, order, W, b, W.copy(), b.copy(), state, args


def _both(X, y, sw, order, W, b, Wbar, bbar, state, args):
    out = []
    for epoch in (_numpy_epoch, sgd_epoch_list):
        params = [a.copy() for a in (W, b, Wbar, bbar, state)]
        with np.errstate(over="ignore", invalid="ignore"):
            total, status = epoch(X, y, sw, order, *params[:4], params[4], *args)
        out.append((total, status, params))
    return out


def _blas_dot_sums_in_order():
    """Whether this BLAS's ``w @ x`` for ``d <= MAX_FEATURES`` is the left-to-right sum the list loop makes
    (OpenBLAS's Haswell and later kernels; its Prescott kernel, which CI also runs, keeps several partial sums)."""
    rng = np.random.default_rng(0)
    for _ in range(2000):
        d = int(rng.integers(2, MAX_FEATURES + 1))
        w, x = rng.standard_normal(d), rng.standard_normal(d) * 10.0 ** rng.integers(-5, 5, d)
        z = 0.0
        for a, b in zip(w.tolist(), x.tolist()):
            z += a * b
        if z != float(w @ x):
            return False
    return True


IN_ORDER = _blas_dot_sums_in_order()


def _assert_bit_equal(out):
    """Bit for bit where the BLAS's dot sums in order; elsewhere the scores differ in their last bits, and the
    weights by a few units of rounding of the step (the loop is contracting: nothing grows)."""
    (t1, s1, p1), (t2, s2, p2) = out
    assert s1 == s2
    if IN_ORDER:
        assert np.array_equal(t1, t2, equal_nan=True)
        for a, b in zip(p1, p2):
            assert np.array_equal(a, b, equal_nan=True)
        return
    np.testing.assert_allclose(t2, t1, rtol=1e-9, atol=0, equal_nan=True)
    for a, b in zip(p1, p2):
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-9 * np.max(np.abs(a), initial=0.0), equal_nan=True)


CASES = [(loss, code, avg, lam, fit, weighted)
         for loss in (0, 1, 2) for code in (0, 1, 2) for avg in (0, 1, 15)
         for lam, fit, weighted in ((0.0, True, False), (0.3, False, True), (0.02, True, True))]


@pytest.mark.parametrize("loss, code, avg, lam, fit, weighted", CASES)
def test_list_epoch_equals_numpy_epoch(loss, code, avg, lam, fit, weighted):
    for seed, d in enumerate((1, 2, 5, 8, MAX_FEATURES)):
        out = _both(*_case(seed, d, loss, code, avg, lam, fit, weighted, scale=1.0))
        _assert_bit_equal(out)
        assert out[0][1] == -1


@pytest.mark.parametrize("scale", [1e-150, 1e-20, 1e20, 1e150])
@pytest.mark.parametrize("loss", [0, 1, 2])
def test_list_epoch_equals_numpy_epoch_extreme_values(scale, loss):
    for seed, d in enumerate((1, 3, 7, MAX_FEATURES)):
        _assert_bit_equal(_both(*_case(seed, d, loss, 1, 5, 0.01, True, True, scale=scale)))


def test_non_finite_loss_status():
    X, y, sw, order, W, b, Wbar, bbar, state, args = _case(0, 5, 0, 0, 1, 0.0, True, False, scale=1.0)
    X[order[7]] = 1e300                                  # its squared loss overflows
    out = _both(X, y, sw, order, W, b, Wbar, bbar, state, args)
    _assert_bit_equal(out)
    assert out[0][1] == 7


def test_shrink_at_most_zero_status():
    X, y, sw, order, W, b, Wbar, bbar, state, args = _case(1, 4, 1, 0, 0, 0.0, True, False, scale=1.0)
    args = (args[0], 0, 2.0, *args[3:5], 0.6, *args[6:])     # 1 - 2.0 * 0.6 < 0 at the first step
    out = _both(X, y, sw, order, W, b, Wbar, bbar, state, args)
    _assert_bit_equal(out)
    assert out[0][1] == -2
