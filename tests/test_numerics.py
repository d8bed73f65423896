"""Stable primitives: exact to float64 against mpmath, warning-free at |z| = 1000 and inf.

At the end, the exact power-of-two scaling (``_binary_exponent``, ``_power_of_two_scale``) that every
site dividing data by a power of two uses: its edge cases (0, subnormals, the float64 limit, inf,
NaN, negative, scalars and arrays) and the properties those sites rely on (``m / s`` in the
documented interval, ``(x / s) * s == x`` exactly).
"""

import warnings

import mpmath
import numpy as np
import pytest

from linbook.numerics import (_binary_exponent, _power_of_two_scale, log1pexp, log_sigmoid, log_softmax,
                              logsumexp, sigmoid, softmax)

mpmath.mp.dps = 50
Z = np.array([-1000.0, -745.0, -40.0, -20.0, -1.0, -1e-8, 0.0, 1e-8, 1.0, 20.0, 40.0, 745.0, 1000.0])


def _ref(f, z):
    return np.array([float(f(mpmath.mpf(float(v)))) for v in z])


@pytest.fixture(autouse=True)
def _no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's RuntimeWarnings (overflow, invalid, divide) become errors
        yield


def test_sigmoid_exact():
    ref = _ref(lambda t: 1 / (1 + mpmath.exp(-t)), Z)
    np.testing.assert_allclose(sigmoid(Z), ref, rtol=4e-16, atol=1e-320)  # atol: subnormals at z = -745


def test_log1pexp_exact():
    ref = _ref(lambda t: mpmath.log(1 + mpmath.exp(t)), Z)
    np.testing.assert_allclose(log1pexp(Z), ref, rtol=4e-16, atol=1e-320)  # atol: subnormals at z = -745


def test_log_sigmoid_exact():
    ref = _ref(lambda t: -mpmath.log(1 + mpmath.exp(-t)), Z)
    np.testing.assert_allclose(log_sigmoid(Z), ref, rtol=4e-16, atol=1e-320)  # atol: subnormals at z = -745


def test_infinities():
    assert sigmoid(np.inf) == 1.0 and sigmoid(-np.inf) == 0.0
    assert log1pexp(-np.inf) == 0.0 and log1pexp(np.inf) == np.inf
    assert log_sigmoid(np.inf) == 0.0 and log_sigmoid(-np.inf) == -np.inf


def test_scalar_in_scalar_out():
    assert isinstance(sigmoid(0.0), float)
    assert sigmoid(0.0) == 0.5


def test_logsumexp_and_softmax():
    a = np.array([[1000.0, 1000.0, -1000.0], [-1000.0, -1001.0, -1002.0], [0.0, 1.0, 2.0]])
    ref = np.array([float(mpmath.log(sum(mpmath.exp(mpmath.mpf(v)) for v in row))) for row in a])
    np.testing.assert_allclose(logsumexp(a, axis=1), ref, rtol=4e-16)
    p = softmax(a, axis=1)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-15)
    np.testing.assert_allclose(np.exp(log_softmax(a, axis=1)), p, rtol=1e-14)
    assert logsumexp(np.array([-np.inf, -np.inf])) == -np.inf
    assert np.isclose(logsumexp(np.array([1.0, 2.0])), np.log(np.e + np.e**2))
    assert logsumexp(a, axis=0, keepdims=True).shape == (1, 3)


@pytest.mark.parametrize("gap", [1.0, 20.0, 37.0, 50.0, 300.0, 700.0])
def test_logsumexp_and_log_softmax_keep_the_small_terms_of_a_near_certain_row(gap):
    """``logsumexp([0, -gap, ...])`` is ``log1p(sum exp(-gap))``, ~1e-22 at ``gap = 50``: rounding ``1 + t``
    gave 0 there, and the largest entry's log-softmax 0 for -1.9e-22 (relative error 1). Ties, NaN, inf."""
    rows = np.array([[0.0, -gap, -gap - 1.0], [-gap, 3.0, 3.0 - gap], [-gap, -gap, 0.0], [5.0, 5.0, 5.0 - gap]])
    mp = [[mpmath.mpf(float(v)) for v in row] for row in rows]
    with mpmath.workdps(700):          # log(1 + 1e-304) needs more than 50 digits
        lse = [+mpmath.log(sum(mpmath.exp(v) for v in row)) for row in mp]
    np.testing.assert_allclose(logsumexp(rows, axis=1), [float(v) for v in lse], rtol=4e-16, atol=0)
    with mpmath.workdps(700):
        ref = np.array([[float(v - n) for v in row] for row, n in zip(mp, lse)])
    np.testing.assert_allclose(log_softmax(rows, axis=1), ref, rtol=4e-16, atol=1e-320)
    np.testing.assert_allclose(logsumexp(rows.T, axis=0), [float(v) for v in lse], rtol=4e-16, atol=0)
    # the 1-D path too, to what exp and log1p guarantee (within an ulp or so: numpy's SIMD paths differ in the last bit)
    np.testing.assert_allclose(logsumexp(rows[0]), float(lse[0]), rtol=4e-16, atol=0)
    with np.errstate(invalid="ignore"):
        assert np.isnan(logsumexp(np.array([np.nan, 0.0, -gap])))
        assert np.isnan(log_softmax(np.array([np.nan, 0.0]))).all()


def test_softmax_limits_at_infinity():
    a = np.array([[0.0, np.inf, np.inf], [1.0, 2.0, -np.inf]])
    np.testing.assert_array_equal(softmax(a, axis=1)[0], [0.0, 0.5, 0.5])
    np.testing.assert_array_equal(log_softmax(a, axis=1)[0], [-np.inf, -np.log(2), -np.log(2)])
    np.testing.assert_allclose(softmax(a, axis=1)[1], [1 / (1 + np.e), np.e / (1 + np.e), 0.0], rtol=1e-15)
    np.testing.assert_array_equal(logsumexp(a, axis=1)[:1], [np.inf])
    with pytest.raises(ValueError, match="entirely -inf"):
        softmax(np.array([-np.inf, -np.inf]))
    with pytest.raises(ValueError, match="entirely -inf"):
        log_softmax(np.array([[0.0], [-np.inf]]), axis=1)
    # near the end of the float range: no overflow, exact
    assert logsumexp(np.array([1e308, -1e308])) == 1e308
    np.testing.assert_array_equal(softmax(np.array([1e308, -1e308])), [1.0, 0.0])


def test_equilibrated_solve_vector_and_matrix_right_hand_sides():
    """The one equilibrated Cholesky solves A x = b for a vector and for each column of a matrix,
    also when the diagonal of A spans many orders of magnitude (where a wrong-axis scaling shows)."""
    from linbook._kernels.cholesky import equilibrated_cholesky, equilibrated_solve

    rng = np.random.default_rng(3)
    M = rng.standard_normal((5, 5))
    scale = np.array([1e-3, 1.0, 1e2, 1e4, 1.0])
    A = scale[:, None] * (M @ M.T + 5 * np.eye(5)) * scale[None, :]
    B = rng.standard_normal((5, 3))
    factor = equilibrated_cholesky(A)
    np.testing.assert_allclose(A @ equilibrated_solve(factor, B[:, 0]), B[:, 0], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(A @ equilibrated_solve(factor, B), B, rtol=1e-9, atol=1e-9)



def test_cholesky_known_conditioned_is_the_equilibrated_factor_unscaled():
    """Without the scaling (for an A whose scaled condition is known small) the factor is the equilibrated
    one times the scales, ``C = Cs diag(e)``, and its solves are as accurate, whatever the columns' units;
    outside the diagonal range it refuses (None), and so does a matrix with no factor."""
    from linbook._kernels.cholesky import cholesky_known_conditioned, equilibrated_cholesky, equilibrated_solve

    rng = np.random.default_rng(4)
    M = rng.standard_normal((6, 6))
    scale = np.array([1e-30, 1e-3, 1.0, 1e2, 1e30, 1.0])
    A = scale[:, None] * (M @ M.T + 6 * np.eye(6)) * scale[None, :]
    b = A @ rng.standard_normal(6)
    (C, e), (Cs, es) = cholesky_known_conditioned(A), equilibrated_cholesky(A)
    np.testing.assert_array_equal(e, np.ones(6))
    np.testing.assert_allclose(C, Cs * es[None, :], rtol=1e-12, atol=0)
    x, xs = equilibrated_solve((C, e), b), equilibrated_solve((Cs, es), b)
    # both accurate in the scaled unknowns es * x (the problem As (es x) = b / es, cond(As) small)
    np.testing.assert_allclose(es * x, es * xs, rtol=0, atol=1e-10 * np.abs(es * xs).max())
    np.testing.assert_allclose((A @ x - b) / es, 0.0, atol=1e-10 * np.abs(b / es).max())
    assert cholesky_known_conditioned(np.diag([1.0, 1e101])) is None        # beyond 1e100: scale instead
    assert cholesky_known_conditioned(np.diag([1e-101, 1.0])) is None
    assert cholesky_known_conditioned(np.array([[1.0, 2.0], [2.0, 1.0]])) is None     # not positive definite


# ---------------------------------------------------------------- exact power-of-two scaling
TINY = 5e-324                                   # the smallest subnormal, 2**-1074
BIG = np.finfo(float).max                       # (2 - 2**-52) 2**1023
RNG = np.random.default_rng(12345)
# finite positive magnitudes over the whole range: random bit patterns, every power of two and its neighbours
_bits = np.abs(RNG.integers(0, 2**63, 20000, dtype=np.uint64).view(np.float64))
_powers = np.ldexp(1.0, np.arange(-1074, 1024))
POSITIVE = np.concatenate([_bits[np.isfinite(_bits) & (_bits > 0)], _powers,
                           np.nextafter(_powers, np.inf), np.nextafter(_powers[1:], 0.0), [BIG]])
NOT_A_MAGNITUDE = np.array([0.0, -0.0, -1.0, -TINY, -BIG, np.inf, -np.inf, np.nan])


def _is_power_of_two(s):
    mantissa, _ = np.frexp(s)
    return np.all(mantissa == 0.5)


def test_binary_exponent_brackets_the_magnitude():
    e = _binary_exponent(POSITIVE)
    assert e.shape == POSITIVE.shape and e.dtype == np.intc
    # 2**(e-1) <= x < 2**e, checked without forming 2**1024: x / 2**e in [0.5, 1)
    r = np.ldexp(POSITIVE, -e)
    assert np.all((0.5 <= r) & (r < 1.0))
    np.testing.assert_array_equal(_binary_exponent(-POSITIVE), e)        # the sign is ignored


@pytest.mark.parametrize("x, e", [(1.0, 1), (0.5, 0), (0.75, 0), (3.0, 2), (-3.0, 2), (2.0 ** 1022, 1023),
                                  (BIG, 1024), (2.0 ** -1022, -1021), (TINY, -1073), (3 * TINY, -1072),
                                  (0.0, 0), (-0.0, 0), (np.inf, 0), (-np.inf, 0), (np.nan, 0)])
def test_binary_exponent_of_scalars(x, e):
    got = _binary_exponent(x)
    assert got == e and np.ndim(got) == 0 and isinstance(got, np.integer)


def test_binary_exponent_keeps_the_shape():
    X = np.array([[1.0, 4.0, 0.0], [np.inf, 1e-310, -6.0]])
    np.testing.assert_array_equal(_binary_exponent(X), [[1, 3, 0], [0, -1029, 3]])


@pytest.mark.parametrize("below, lo, hi", [(False, 0.5, 1.0), (True, 1.0, 2.0)])
def test_scale_is_a_power_of_two_and_brackets_the_magnitude(below, lo, hi):
    m = POSITIVE[POSITIVE < 2.0 ** 1023] if not below else POSITIVE
    s = _power_of_two_scale(m, below=below)
    assert s.shape == m.shape and s.dtype == np.float64
    assert np.all(np.isfinite(s)) and np.all(s > 0) and _is_power_of_two(s)
    r = m / s
    assert np.all((lo <= r) & (r < hi))
    np.testing.assert_array_equal(r * s, m)                    # exact both ways


def test_scale_above_the_largest_binade_is_clipped_to_stay_finite():
    m = np.array([2.0 ** 1023, 1.5 * 2.0 ** 1023, BIG])
    s = _power_of_two_scale(m)                                 # 2**1024 would overflow: 2**1023 instead
    np.testing.assert_array_equal(s, 2.0 ** 1023)
    assert np.all((1.0 <= m / s) & (m / s < 2.0))


@pytest.mark.parametrize("below, normal", [(False, False), (True, False), (False, True), (True, True)])
def test_scale_is_one_where_m_is_no_magnitude(below, normal):
    s = _power_of_two_scale(NOT_A_MAGNITUDE, below=below, normal=normal)
    np.testing.assert_array_equal(s, 1.0)
    for m in NOT_A_MAGNITUDE:
        one = _power_of_two_scale(m, below=below, normal=normal)
        assert one == 1.0 and isinstance(one, np.float64)


def test_scale_of_subnormals():
    m = np.array([TINY, 3 * TINY, 1e-320, 2.0 ** -1023])
    s = _power_of_two_scale(m, below=True)                     # subnormal scales, exact: m / s in [1, 2)
    np.testing.assert_array_equal(s, [TINY, 2 * TINY, 2.0 ** -1064, 2.0 ** -1023])
    np.testing.assert_array_equal((m / s) * s, m)
    with np.errstate(over="ignore"):
        assert np.all(np.isinf(1.0 / s[:3]))                   # why normal=True exists
    sn = _power_of_two_scale(m, normal=True)
    np.testing.assert_array_equal(sn, 2.0 ** -1021)


@pytest.mark.parametrize("below", [False, True])
def test_normal_scales_have_normal_reciprocals(below):
    m = np.concatenate([POSITIVE, [0.0, np.inf, np.nan]])
    s = _power_of_two_scale(m, below=below, normal=True)
    tiny = np.finfo(float).tiny
    assert _is_power_of_two(s) and np.all((tiny <= s) & (s <= 2.0 ** 1022))
    inv = 1.0 / s
    assert np.all((tiny <= inv) & (inv <= 2.0 ** 1022))
    np.testing.assert_array_equal(inv * s, 1.0)
    assert np.all(POSITIVE / s[:POSITIVE.size] < 4.0)           # 2**1022 <= m < 2**1024: m / s < 4
    # inside the normal range the clip changes nothing
    mid = POSITIVE[(POSITIVE > 2.0 ** -1000) & (POSITIVE < 2.0 ** 1000)]
    np.testing.assert_array_equal(_power_of_two_scale(mid, below=below, normal=True),
                                  _power_of_two_scale(mid, below=below))


def test_scalars_and_arrays_agree():
    m = np.array([[3e-12, 1.0], [7e250, 0.0]])
    for below in (False, True):
        s = _power_of_two_scale(m, below=below)
        assert s.shape == (2, 2)
        for idx in np.ndindex(m.shape):
            one = _power_of_two_scale(float(m[idx]), below=below)
            assert isinstance(one, np.float64) and one == s[idx]
    assert _power_of_two_scale([1.5, 3.0]).tolist() == [2.0, 4.0]         # lists are read as arrays
    assert _power_of_two_scale(3, below=True) == 2.0                      # so are integers


def test_dividing_data_by_its_column_scale_is_exact():
    # columns of every size; each entry's quotient stays a normal number, so x == (x / s) * s
    sizes = np.ldexp(1.0, np.arange(-1000, 1000, 37))
    X = RNG.uniform(-1.0, 1.0, (50, sizes.size)) * sizes
    X[0] = sizes * 0.999                                           # the column maxima
    for below, normal in [(False, False), (True, False), (False, True)]:
        s = _power_of_two_scale(np.max(np.abs(X), axis=0), below=below, normal=normal)
        Z = X / s
        assert np.max(np.abs(Z)) < (2.0 if below else 1.0)
        np.testing.assert_array_equal(Z * s, X)
        np.testing.assert_array_equal(X * (1.0 / s), Z)                # normal scales: reciprocal exact
        np.testing.assert_array_equal(np.ldexp(X, -_binary_exponent(s) + 1), Z)   # s = 2**(e-1)
