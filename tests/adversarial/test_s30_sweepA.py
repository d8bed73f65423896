"""Session 30, sweep A: the lightly tested functions (estimation, gaussian, numerics, laplace, criteria).

Each test here failed on main before its fix; the oracle is named in each.
"""

import mpmath
import numpy as np
import pytest

import linbook
from tests.adversarial.harness import gamma_quantiles_mp


# ------------------------------------------------------------------ BayesianLogisticRegression: the mode
def _mp_mode(Phi, t, alpha, w0, steps=4):
    """The mode of ``sum_i [log(1 + e^{a_i}) - t_i a_i] + alpha/2 |w|^2`` by full Newton steps in 80-digit
    arithmetic from ``w0`` (linbook's mode: a few steps from there reach it to every digit)."""
    with mpmath.workdps(80):
        n, m = Phi.shape
        P = [[mpmath.mpf(float(v)) for v in row] for row in Phi]
        alpha = mpmath.mpf(alpha)
        w = mpmath.matrix([mpmath.mpf(float(v)) for v in w0])
        for _ in range(steps):
            g, H = mpmath.matrix([alpha * w[j] for j in range(m)]), mpmath.eye(m) * alpha
            for i in range(n):
                mu = 1 / (1 + mpmath.exp(-mpmath.fsum(P[i][j] * w[j] for j in range(m))))
                for j in range(m):
                    g[j] += (mu - t[i]) * P[i][j]
                    for k in range(m):
                        H[j, k] += mu * (1 - mu) * P[i][j] * P[i][k]
            w = w - mpmath.lu_solve(H, g)
        return np.array([float(v) for v in w])


def _classes(separable):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = X[:, 0] > 0 if separable else X[:, 0] + 0.5 * rng.normal(size=30) > 0
    return X, y.astype(float)


@pytest.mark.parametrize("alpha, separable", [(1e-8, True), (1e-30, True), (1e300, False)])
def test_bayesian_logistic_mode_to_rounding(alpha, separable):
    """Separable classes under a weak prior: the mode was left 1.3e-9 (alpha 1e-8) and 3.3e-9 (1e-30) off, relative,
    after one polishing step (Newton converges slowly where mu(1 - mu) ~ alpha changes fast); prior precision 1e300:
    the mode (~1e-300) came out 0, the polishing step refused because its slope g'd underflowed."""
    X, y = _classes(separable)
    model = linbook.BayesianLogisticRegression(prior_precision=alpha).fit(X, y)
    exact = _mp_mode(np.c_[np.ones(len(X)), X], y, alpha, model.posterior_mean_)
    np.testing.assert_allclose(model.posterior_mean_, exact, rtol=1e-13, atol=0)


def test_bayesian_logistic_evidence_at_separable_mode():
    """The log evidence at the polished mode equals the one at the 80-digit mode (it was 3.8e-8 off)."""
    X, y = _classes(True)
    alpha = 1e-30
    model = linbook.BayesianLogisticRegression(prior_precision=alpha).fit(X, y)
    Phi = np.c_[np.ones(len(X)), X]
    w = _mp_mode(Phi, y, alpha, model.posterior_mean_)
    with mpmath.workdps(80):
        W = [mpmath.mpf(float(v)) for v in w]
        a = [mpmath.fsum(mpmath.mpf(float(p)) * c for p, c in zip(row, W)) for row in Phi]
        E = mpmath.fsum(mpmath.log(1 + mpmath.exp(ai)) - ti * ai for ai, ti in zip(a, y)) \
            + alpha / 2 * mpmath.fsum(c * c for c in W) + 1.5 * mpmath.log(2 * mpmath.pi / alpha)
        H = mpmath.eye(3) * alpha
        for ai, row in zip(a, Phi):
            s = 1 / (1 + mpmath.exp(-ai))
            for j in range(3):
                for k in range(3):
                    H[j, k] += s * (1 - s) * float(row[j]) * float(row[k])
        log_ev = float(-E + 1.5 * mpmath.log(2 * mpmath.pi) - mpmath.log(mpmath.det(H)) / 2)
    assert abs(model.log_evidence_ - log_ev) < 1e-11 * abs(log_ev)


# ------------------------------------------------------------------ Mahalanobis distances at the ends of the range
def _mp_logpdf(x, mean, var):
    """``log N(x | mean, diag(var))`` and the squared distance in 60-digit arithmetic."""
    with mpmath.workdps(60):
        d2 = mpmath.fsum((mpmath.mpf(float(a)) - mpmath.mpf(float(m))) ** 2 / mpmath.mpf(float(v))
                         for a, m, v in zip(x, mean, var))
        logp = -len(x) / 2 * mpmath.log(2 * mpmath.pi) - mpmath.fsum(mpmath.log(mpmath.mpf(float(v)))
                                                                      for v in var) / 2 - d2 / 2
        return d2, logp


@pytest.mark.parametrize("x, var", [([1e300, 1.0], [1e-300, 1.0]), ([1e300, -3.0, 0.5], [1e-300, 2.0, 1e-300]),
                                    ([1e200, 1e-160], [1e-250, 1e-300])])
def test_far_point_along_tiny_variance_is_infinitely_far(x, var):
    """A point ~1e300 standard deviations out along a direction of variance 1e-300: the whitened residual
    overflowed part-way and ``0 * inf`` in the triangular solve made the distance NaN (and the log-density, and
    ``mvn_log_likelihood``). The distance (~1e900) is beyond float64: inf; the log-density -inf."""
    mean = np.zeros(len(x))
    d2, logp = _mp_logpdf(x, mean, var)
    assert d2 > 1.7e308 and logp < -1.7e308                  # the oracle: both beyond float64
    assert linbook.mahalanobis(x, mean, np.diag(var)) == np.inf
    assert linbook.mvn_logpdf(x, mean, np.diag(var)) == -np.inf
    assert linbook.mvn_log_likelihood(np.atleast_2d(x), mean, np.diag(var)) == -np.inf


@pytest.mark.parametrize("x, mean, var", [([1e308], [-1e308], [1.6e308]),
                                          ([1.1e308, 0.0], [-1.1e308, 1.0], [1.7e308, 1.0])])
def test_residual_beyond_float64_with_finite_log_density(x, mean, var):
    """``x - mean`` overflows (entries of opposite signs near 1e308) although the log-density (~-1.2e308) is a
    double: it came out -inf."""
    d2, logp = _mp_logpdf(x, mean, var)
    got = linbook.mvn_logpdf(x, mean, np.diag(var))
    assert abs(got - float(logp)) <= 1e-14 * abs(float(logp))
    got_ll = linbook.mvn_log_likelihood(np.atleast_2d(x), mean, np.diag(var))
    assert abs(got_ll - float(logp)) <= 1e-14 * abs(float(logp))


def test_gaussian_functions_name_bad_points_and_refuse_two_covariances():
    """Complex or text points got numpy's bare message (naming nothing); ``cov`` and ``chol`` both given: ``chol``
    was used and ``cov`` ignored, in silence."""
    with pytest.raises(TypeError, match=r"\bX\b"):
        linbook.mahalanobis([1 + 1j, 1.0], [0.0, 0.0], np.eye(2))
    with pytest.raises(TypeError, match=r"\bX\b"):
        linbook.mvn_logpdf(["a", 1.0], [0.0, 0.0], np.eye(2))
    with pytest.raises(TypeError, match=r"\bmean\b"):
        linbook.mvn_logpdf([1.0, 1.0], [0.0, 1j], np.eye(2))
    with pytest.raises(ValueError, match=r"not both.*pass"):
        linbook.mahalanobis([1.0, 1.0], [0.0, 0.0], np.eye(2), chol=2.0 * np.eye(2))


# ------------------------------------------------------------------ BetaBernoulli.credible_interval at far counts
@pytest.mark.parametrize("a, b, ones", [(50.0, 1e200, 0), (1.0, 1e200, 49), (1e5, 1e250, 0), (3.0, 1e180, 0)])
def test_credible_interval_of_counts_far_apart(a, b, ones):
    """``Beta(50, 1e200)``: scipy's quantile function gave NaN for the lower end and the interval was refused,
    although it is ``(3.7e-199, 6.5e-199)``; ``Beta(3, 1e180)``: 4.1e-289 for the lower end, 6.2e-181. Oracle: ``b * theta_q`` is the same for every ``b`` far beyond ``a``
    (``theta ~ Gamma(a) / b``), so the quantiles of ``Gamma(a)`` by mpmath, over ``b``. (The oracle was scipy's beta
    quantiles at ``b' = 1e100``: scipy 1.10, then the lowest version linbook allowed, returned NaN there, or never
    returned.)"""
    lo, hi = linbook.BetaBernoulli(a, b).fit(np.ones(ones)).credible_interval(0.95)
    ref = gamma_quantiles_mp([0.025, 0.975], a + ones) / b
    np.testing.assert_allclose([lo, hi], ref, rtol=1e-12)
    # the mirror image: theta -> 1 - theta
    lo1, hi1 = linbook.BetaBernoulli(b, a).fit(np.zeros(ones)).credible_interval(0.95)
    assert (lo1, hi1) == (1.0, 1.0)                  # 1 - 1e-199, rounded


def test_credible_interval_of_subnormal_prior_is_not_a_point():
    """``Beta(5e-324, 5e-324)`` is U-shaped (half its mass at each end): the interval is (0, 1) to rounding, but
    the narrowness test divided by the subnormal count, overflowed, and returned the mean, ``(0.5, 0.5)``. scipy
    cannot evaluate the quantiles there (its beta function overflows): a clear error, naming the prior."""
    with pytest.raises(ValueError, match=r"prior a=.*Use prior pseudo-counts between"):
        linbook.BetaBernoulli(5e-324, 5e-324).fit([]).credible_interval()
    lo, hi = linbook.BetaBernoulli(1e-300, 1e-300).fit([]).credible_interval()     # scipy's range: as before
    assert lo < 1e-300 and hi == 1.0


def _beta_cdf(x, a, b):
    """``P(theta <= x)`` under ``Beta(a, b)`` with large counts: 40-digit quadrature of the density in units of
    its standard deviation about the mean (the mass beyond 20 sd is below 1e-80)."""
    with mpmath.workdps(40):
        a, b, x = mpmath.mpf(a), mpmath.mpf(b), mpmath.mpf(x)
        n = a + b
        m, sd = a / n, mpmath.sqrt(a * b / (n * n * (n + 1)))
        log_c = mpmath.loggamma(n) - mpmath.loggamma(a) - mpmath.loggamma(b)

        def density(t):
            return mpmath.exp(log_c + (a - 1) * mpmath.log(m + sd * t) + (b - 1) * mpmath.log(1 - m - sd * t)) * sd

        end = (x - m) / sd
        return float(mpmath.quad(density, [-20, -5, -2] + ([0, 2, 5] if end > 0 else []) + [end]))


@pytest.mark.parametrize("a, b, tol", [(3e11, 1e10, 1e-9), (1e15, 3e15, 1e-8), (1e20, 1e21, 1e-6)])
def test_credible_interval_of_large_counts(a, b, tol):
    """Large counts: scipy's beta quantiles drift in silence (``Beta(3e11, 1e10)``: the upper end has probability
    0.9749992 below it; ``Beta(1e15, 3e15)``: the lower end 0.118) and are NaN from ~1e16 (refused). Oracle: the
    probability below each end by quadrature; ``tol`` allows for the rounding of the ends (an ulp of theta is
    ~1e-6 sd at 1e20)."""
    lo, hi = linbook.BetaBernoulli(a, b).fit([]).credible_interval(0.95)
    assert abs(_beta_cdf(lo, a, b) - 0.025) < tol and abs(_beta_cdf(hi, a, b) - 0.975) < tol


# ------------------------------------------------------------------ numerics: empty input, axes, non-numbers
def test_logsumexp_of_empty_rows_is_minus_infinity():
    """A sum of no terms is 0, its log -inf (scipy's answer): ``logsumexp([])`` raised numpy's "zero-size array to
    reduction operation maximum", naming nothing."""
    for a, axis, expected in [([], None, -np.inf), (np.zeros((0, 3)), None, -np.inf),
                              (np.zeros((0, 3)), 0, [-np.inf] * 3), (np.zeros((3, 0)), -1, [-np.inf] * 3),
                              (np.zeros((3, 0)), 0, np.zeros(0))]:
        out = linbook.logsumexp(a, axis=axis)
        assert np.shape(out) == np.shape(expected)
        np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_of_empty_arrays_is_empty(fn):
    """No entries, nothing to normalise: softmax([]) raised numpy's zero-size reduction error."""
    for shape in [(0,), (0, 3), (3, 0)]:
        out = getattr(linbook, fn)(np.zeros(shape))
        assert out.shape == shape


def test_reductions_over_several_axes_and_a_scalar():
    """``axis=None`` and tuples of axes (scipy's signatures): ``logsumexp`` raised TypeError for a tuple,
    ``log_softmax`` a ValueError from ``put_along_axis`` for ``axis=None``; ``log_softmax(5.0)`` an AxisError."""
    from scipy import special

    a = np.random.default_rng(0).normal(size=(3, 4, 5)) * 30
    for axis in [None, (0, 1), (1, 2), (0, 2), (2, 0)]:
        np.testing.assert_allclose(linbook.logsumexp(a, axis=axis), special.logsumexp(a, axis=axis), rtol=1e-14)
        np.testing.assert_allclose(linbook.logsumexp(a, axis=axis, keepdims=True),
                                   special.logsumexp(a, axis=axis, keepdims=True), rtol=1e-14)
        np.testing.assert_allclose(linbook.softmax(a, axis=axis), special.softmax(a, axis=axis), rtol=1e-13)
        np.testing.assert_allclose(np.exp(linbook.log_softmax(a, axis=axis)), special.softmax(a, axis=axis),
                                   rtol=1e-13)
    assert linbook.log_softmax(5.0) == 0.0 and linbook.softmax(5.0) == 1.0
    with pytest.raises(ValueError, match=r"axis .* pass axes"):
        linbook.logsumexp(a, axis=(0, 0))


@pytest.mark.parametrize("fn", ["sigmoid", "log1pexp", "log_sigmoid", "logsumexp", "softmax", "log_softmax"])
def test_numerics_refuse_what_is_not_a_number(fn):
    """``None`` became NaN in silence (``sigmoid(None)`` was NaN, ``sigmoid([None, 1])`` ``[nan, 0.73]``); a
    masked array was read with its masked entries; complex or text entries got numpy's message, naming nothing."""
    f = getattr(linbook, fn)
    name = "z" if fn in ("sigmoid", "log1pexp", "log_sigmoid") else "a"
    for bad in [None, [None, 1.0], [1 + 1j, 2.0], ["x", 1.0]]:
        with pytest.raises(TypeError, match=rf"\b{name}\b.*Pass {name}"):
            f(bad)
    with pytest.raises(ValueError, match=rf"\b{name}\b is a masked array.*fill them"):
        f(np.ma.array([1.0, 2.0], mask=[False, True]))
    # what numpy reads as numbers still works: bool, int, float32, objects holding numbers, unmasked masked arrays
    ref = f(np.array([1.0, 0.0]))
    for ok in [[True, False], [1, 0], np.float32([1, 0]), np.array([1.0, 0.0], dtype=object),
               np.ma.array([1.0, 0.0])]:
        np.testing.assert_array_equal(f(ok), ref)


# ------------------------------------------------------------------ laplace helpers and criteria
def test_probit_kappa_and_moderated_sigmoid_at_infinite_variance():
    """``kappa(inf) = 0``, its limit (``1 / sqrt(1 + pi var / 8)`` -> 0), so the moderated output of a finite mean
    is 1/2; both were refused ("var must be finite") although ``kappa(1e308)`` (1.6e-154) was given."""
    assert linbook.probit_kappa(np.inf) == 0.0
    np.testing.assert_array_equal(linbook.moderated_sigmoid([-3.0, 0.0, 1e300], np.inf), [0.5, 0.5, 0.5])
    np.testing.assert_array_equal(linbook.moderated_sigmoid([np.inf, -np.inf], 1.0), [1.0, 0.0])
    with pytest.raises(ValueError, match=r"\bmu\b.*\bvar\b.*pass finite"):
        linbook.moderated_sigmoid(np.inf, np.inf)             # no limit: it depends on the rates


def test_laplace_approximation_names_a_misshapen_grad_or_hess():
    """A ``hess`` of the wrong shape gave numpy's "cannot reshape array of size 9 into shape (2,2)"."""
    def energy(z):
        return 0.5 * float(z @ z)

    with pytest.raises(ValueError, match=r"\bhess\b.*fix hess"):
        linbook.laplace_approximation(energy, lambda z: z, lambda z: np.eye(3), [1.0, 0.0])
    with pytest.raises(ValueError, match=r"\bgrad\b.*fix grad"):
        linbook.laplace_approximation(energy, lambda z: np.zeros(3), lambda z: np.eye(2), [1.0, 0.0])


def test_bic_of_a_huge_integer_sample_count():
    """``n_samples`` a Python int beyond int64 (10**30): numpy's "loop of ufunc does not support argument 0 of type
    int"; the criterion is ``-2 log L + k log N``, with ``log(1e30) = 69.08``."""
    np.testing.assert_allclose(linbook.bic(-5.0, 2, 10**30), 10.0 + 2 * 30 * np.log(10.0), rtol=1e-15)


# ------------------------------------------------------------------ estimation: constant data near 1e308, masks
def test_gaussian_mle_of_constant_data_near_the_largest_double():
    """A constant column at 1e308 has variance 0, a double: the scale-back ``S * (c_i c_j)`` formed ``0 * inf``
    and the estimate was refused as an overflow ("rescale the data")."""
    assert linbook.gaussian_mle([1e308, 1e308]) == (1e308, 0.0)
    mean, cov = linbook.mvn_mle(np.array([[1.7e308, 1.0], [1.7e308, 2.0]]))
    np.testing.assert_array_equal(mean, [1.7e308, 1.5])
    np.testing.assert_array_equal(cov, [[0.0, 0.0], [0.0, 0.25]])          # numpy on the problem minus its mean


@pytest.mark.parametrize("call", [
    lambda m: linbook.gaussian_mle(m), lambda m: linbook.bernoulli_mle(m),
    lambda m: linbook.BetaBernoulli().fit(m), lambda m: linbook.mahalanobis(m, np.zeros(3), np.eye(3)),
    lambda m: linbook.mvn_entropy(np.ma.array(np.eye(2), mask=[[0, 0], [0, 1]]))])
def test_masked_entries_are_not_read_as_data(call):
    """``np.asarray`` of a masked array keeps the hidden values: ``gaussian_mle([1, 0, --])`` used them (a mean of
    0.67 for the masked ``[1, 0, 1]``, ``bernoulli_mle`` likewise). Now an error saying to fill or drop them."""
    with pytest.raises(ValueError, match=r"masked array.*fill them.*or drop them"):
        call(np.ma.array([1.0, 0.0, 1.0], mask=[False, False, True]))


@pytest.mark.parametrize("level", [1e-300, 1e-20])
def test_credible_interval_of_a_tiny_level_is_the_median(level):
    """As the level goes to 0 the equal-tailed interval shrinks to the median; the narrowness test read a small z
    (the normal quantile of the level) as a narrow posterior and returned the mean: ``Beta(1, 10)`` gave 0.0909 for
    the median 0.0670 (scipy's beta.ppf(0.5, 1, 10), the oracle)."""
    from scipy import stats

    lo, hi = linbook.BetaBernoulli(1, 10).fit([]).credible_interval(level)
    np.testing.assert_allclose([lo, hi], stats.beta.ppf(0.5, 1, 10), rtol=1e-14)


def test_one_dimensional_point_given_as_a_number():
    """``mahalanobis(2.0, 0.0, [[4.0]])``: one point, but an array ``[1.]`` came back (a (D,) point gives a float)."""
    from scipy import stats

    assert linbook.mahalanobis(2.0, 0.0, [[4.0]]) == 1.0
    got = linbook.mvn_logpdf(2.0, 0.0, [[4.0]])
    assert isinstance(got, float) and abs(got - stats.norm.logpdf(2.0, scale=2.0)) < 1e-15


@pytest.mark.parametrize("call, name", [(lambda: linbook.aic(-5.0, 10**400), "n_params"),
                                        (lambda: linbook.bic(-5.0, 2, 10**400), "n_samples")])
def test_criteria_name_a_count_beyond_float64(call, name):
    """A Python int beyond float64 raised a bare ``OverflowError: int too large to convert to float``."""
    with pytest.raises(ValueError, match=rf"\b{name}\b.*pass {name}"):
        call()


def test_laplace_approximation_refuses_a_mode_with_singular_hessian():
    """``E = z^4``: the mode 0 has Hessian 0, so there is no Gaussian approximation (``log Z = log 2 Gamma(5/4) =
    0.59``). Newton converged linearly, stopped at z ~ 1e-6 and a covariance of 8e10 and a log evidence of 13.5
    came back in silence. Beside it, ``z^4 + 1e-20 z^2`` has a (tiny) curvature: its exact Laplace approximation,
    mode 0 and variance 1 / 2e-20, is still returned."""
    with pytest.raises(ValueError, match=r"Hessian of E at the mode is singular.*Add a quadratic term"):
        linbook.laplace_approximation(lambda z: z**4, lambda z: 4 * z**3, lambda z: 12 * z**2, 1.0)
    with pytest.raises(ValueError, match=r"converges only linearly"):
        linbook.laplace_approximation(lambda z: z[0]**4 + (z[1] - 1)**2, lambda z: np.array([4 * z[0]**3, 2 * (z[1] - 1)]),
                                      lambda z: np.diag([12 * z[0]**2, 2.0]), [1.0, 0.0])
    res = linbook.laplace_approximation(lambda z: z**4 + 1e-20 * z * z, lambda z: 4 * z**3 + 2e-20 * z,
                                        lambda z: 12 * z**2 + 2e-20, 1.0)
    assert abs(res.mode[0]) < 1e-15                  # the mode to eps max(1, |z|), the mode search's own floor
    np.testing.assert_allclose(res.covariance, [[5e19]], rtol=1e-12)
    np.testing.assert_allclose(res.log_evidence, 0.5 * np.log(2 * np.pi) - 0.5 * np.log(2e-20), rtol=1e-14)


def test_mvn_log_likelihood_reads_mean_and_cov_as_real_unmasked_arrays():
    """A masked ``mean`` was read with its hidden value (-16.68 for the masked [0, 5]); a complex ``mean`` got
    numpy's "float() argument must be ... not 'complex'", naming nothing."""
    X = np.array([[1.0, 2.0], [0.0, 1.0]])
    with pytest.raises(ValueError, match=r"\bmean\b is a masked array"):
        linbook.mvn_log_likelihood(X, np.ma.array([0.0, 5.0], mask=[False, True]), np.eye(2))
    with pytest.raises(TypeError, match=r"\bmean\b must be real"):
        linbook.mvn_log_likelihood(X, [0.0, 1j], np.eye(2))


@pytest.mark.parametrize("n", [-1, 2.5, "3", None])
def test_sample_posterior_checks_n_samples(n):
    """``int(n_samples)`` took 2.5 as 2 draws in silence, -1 got numpy's "negative dimensions are not allowed",
    None a bare int() TypeError."""
    X, y = _classes(False)
    model = linbook.BayesianLogisticRegression().fit(X, y)
    with pytest.raises(ValueError, match=r"n_samples.*Set n_samples"):
        model.sample_posterior(n)
    assert model.sample_posterior(np.int64(3), random_state=0).shape == (3, 3)
