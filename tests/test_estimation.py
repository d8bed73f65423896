"""linbook.estimation against closed forms, scipy.stats and numpy."""

import numpy as np
import pytest
from scipy import integrate, optimize, stats

import linbook
from linbook.estimation import (BetaBernoulli, bernoulli_mle, gaussian_mle, lasso_lambda_from_prior,
                                mvn_log_likelihood, mvn_mle, ridge_lambda_from_prior)
from tests.adversarial.harness import gamma_quantiles_mp


def test_reexported():
    for name in ("bernoulli_mle", "gaussian_mle", "mvn_mle", "BetaBernoulli"):
        assert getattr(linbook, name) is getattr(linbook.estimation, name)


def test_bernoulli_mle_maximises_likelihood():
    x = np.random.default_rng(0).binomial(1, 0.3, size=57)
    t = bernoulli_mle(x)
    assert t == pytest.approx(x.mean())
    nll = lambda th: -stats.bernoulli.logpmf(x, th).sum()
    res = optimize.minimize_scalar(nll, bounds=(1e-6, 1 - 1e-6), method="bounded", options={"xatol": 1e-10})
    assert res.x == pytest.approx(t, abs=1e-6)
    assert bernoulli_mle([True, False, True]) == pytest.approx(2 / 3)
    assert bernoulli_mle([1, 1, 1]) == 1.0


@pytest.mark.parametrize("bad", [[], [0, 2, 1], [0.5, 1], [np.nan, 1], [[0, 1], [1, 0]]])
def test_bernoulli_mle_bad_input(bad):
    with pytest.raises(ValueError):
        bernoulli_mle(bad)


def test_gaussian_mle_matches_numpy_and_scipy():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 3)) @ np.array([[1, 0, 0], [0.5, 1, 0], [0.2, -0.3, 2]])
    m, S = gaussian_mle(X)
    np.testing.assert_allclose(m, X.mean(0))
    np.testing.assert_allclose(S, np.cov(X.T, bias=True), rtol=1e-12)
    _, Su = gaussian_mle(X, unbiased=True)
    np.testing.assert_allclose(Su, np.cov(X.T), rtol=1e-12)
    x = X[:, 0]
    mu, var = gaussian_mle(x)
    assert isinstance(var, float)
    assert var == pytest.approx(np.var(x))
    # scipy's norm.fit is the MLE too
    loc, scale = stats.norm.fit(x)
    assert mu == pytest.approx(loc) and var == pytest.approx(scale ** 2)


def test_gaussian_mle_bad_input():
    with pytest.raises(ValueError, match="empty"):
        gaussian_mle(np.empty((0, 2)))
    with pytest.raises(ValueError, match="NaN"):
        gaussian_mle([1.0, np.inf])
    with pytest.raises(ValueError):
        gaussian_mle(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="2 samples"):
        gaussian_mle([1.0], unbiased=True)


def test_mvn_mle_maximises_log_likelihood():
    rng = np.random.default_rng(2)
    X = rng.multivariate_normal([1, -1], [[2, 0.6], [0.6, 1]], size=30)
    m, S = mvn_mle(X)
    ll = mvn_log_likelihood(X, m, S)
    assert ll == pytest.approx(stats.multivariate_normal(m, S).logpdf(X).sum(), rel=1e-12)
    for _ in range(20):  # any perturbation lowers the likelihood
        dm = 0.05 * rng.normal(size=2)
        A = 0.05 * rng.normal(size=(2, 2))
        assert mvn_log_likelihood(X, m + dm, S + A @ A.T) < ll
    with pytest.raises(ValueError):
        mvn_mle(X[:, 0])


def test_mvn_log_likelihood_singular_and_shapes():
    X = np.ones((5, 2))
    with pytest.raises(ValueError, match="singular"):
        mvn_log_likelihood(X, [1, 1], np.zeros((2, 2)))
    with pytest.raises(ValueError, match="symmetric"):
        mvn_log_likelihood(X, [1, 1], [[1, 0.5], [0, 1]])
    with pytest.raises(ValueError, match="shape"):
        mvn_log_likelihood(X, [1, 1, 1], np.eye(2))


def test_beta_bernoulli_posterior_and_predictive():
    x = np.array([1, 0, 1, 1, 0, 1, 1])
    m = BetaBernoulli(2.0, 3.0).fit(x)
    assert (m.a_n_, m.b_n_, m.n1_, m.n0_) == (7.0, 5.0, 5, 2)
    post = stats.beta(7, 5)
    assert m.posterior_mean() == pytest.approx(post.mean())
    # MAP: maximiser of the posterior density
    res = optimize.minimize_scalar(lambda t: -post.logpdf(t), bounds=(1e-9, 1 - 1e-9), method="bounded",
                                   options={"xatol": 1e-10})
    assert m.map_estimate() == pytest.approx(res.x, abs=1e-6)
    # predictive by quadrature
    p1, _ = integrate.quad(lambda t: t * post.pdf(t), 0, 1)
    assert m.predictive_proba() == pytest.approx(p1, rel=1e-10)
    np.testing.assert_allclose(m.predictive_proba([0, 1]), [1 - p1, p1], rtol=1e-10)
    # marginal likelihood by quadrature
    ml, _ = integrate.quad(lambda t: np.prod(stats.bernoulli.pmf(x, t)) * stats.beta.pdf(t, 2, 3), 0, 1)
    assert m.log_marginal_likelihood() == pytest.approx(np.log(ml), rel=1e-9)
    lo, hi = m.credible_interval(0.9)
    assert post.cdf(hi) - post.cdf(lo) == pytest.approx(0.9)
    assert m.posterior().mean() == pytest.approx(post.mean())


def test_beta_bernoulli_sequential_equals_batch_and_rule_of_succession():
    x = np.random.default_rng(3).binomial(1, 0.4, size=30)
    a = BetaBernoulli(1, 1).fit(x[:10]).update(x[10:])
    b = BetaBernoulli(1, 1).fit(x)
    assert (a.a_n_, a.b_n_) == (b.a_n_, b.b_n_)
    assert b.predictive_proba() == pytest.approx((x.sum() + 1) / (x.size + 2))
    assert b.map_estimate() == pytest.approx(x.mean())  # flat prior: MAP = MLE
    # update on an unfitted model starts from the prior
    assert BetaBernoulli(2, 2).update([1]).a_n_ == 3.0


def test_beta_bernoulli_map_edge_cases():
    assert BetaBernoulli(0.5, 2).fit([]).map_estimate() == 0.0
    assert BetaBernoulli(2, 0.5).fit([]).map_estimate() == 1.0
    assert BetaBernoulli(1, 1).fit([0]).map_estimate() == 0.0
    with pytest.raises(ValueError, match="uniform"):
        BetaBernoulli(1, 1).fit([]).map_estimate()
    with pytest.raises(ValueError, match="U-shaped"):
        BetaBernoulli(0.5, 0.5).fit([]).map_estimate()


@pytest.mark.parametrize("a,b", [(0, 1), (1, -2), (np.nan, 1), (1, np.inf)])
def test_beta_bernoulli_bad_prior(a, b):
    with pytest.raises(ValueError, match=r"The '[ab]' parameter of BetaBernoulli .* Set [ab] to "):
        BetaBernoulli(a, b).fit([1, 0])


def test_beta_bernoulli_bad_data_and_unfitted():
    with pytest.raises(ValueError, match="only 0 and 1"):
        BetaBernoulli().fit([0, 1, 2])
    with pytest.raises(ValueError, match="NaN"):
        BetaBernoulli().fit([0, np.nan])
    with pytest.raises(ValueError, match="not fitted"):
        BetaBernoulli().posterior_mean()
    with pytest.raises(ValueError, match="level"):
        BetaBernoulli().fit([1]).credible_interval(1.5)


def test_beta_bernoulli_params():
    m = BetaBernoulli(2, 3)
    assert m.get_params() == {"a": 2, "b": 3}
    assert m.set_params(a=4).a == 4
    with pytest.raises(ValueError):
        m.set_params(c=1)
    assert repr(m) == "BetaBernoulli(a=4, b=3)"


_PRIOR_COUNTS = [1e-3, 0.5, 3.7, 1e3, 1e12, 1e16, 1e100, 1e300]
_DATA_COUNTS = [(0, 0), (1, 0), (0, 1), (2, 1), (37, 63), (1000, 0), (400, 600)]     # (ones, zeros)


@pytest.mark.parametrize("a", _PRIOR_COUNTS)
@pytest.mark.parametrize("b", _PRIOR_COUNTS)
def test_beta_bernoulli_log_marginal_likelihood_is_the_chain_rule(a, b):
    """log p(S) = sum_i log p(x_i | x_<i), summed in 50-digit arithmetic: the log-beta difference
    lost every digit for strong priors (0.0 for a = b = 1e15, +64 for a = b = 1e16)."""
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(50):
        for k, m in _DATA_COUNTS:
            x = np.r_[np.ones(k), np.zeros(m)]
            got = BetaBernoulli(a, b).fit(np.random.default_rng(k + m).permutation(x)).log_marginal_likelihood()
            A, B = mpmath.mpf(a), mpmath.mpf(b)
            # log((A + i) / (A + B + i)) as -log1p(B / (A + i)): 50 digits resolve it when B << A too
            exact = (-mpmath.fsum(mpmath.log1p(B / (A + i)) for i in range(k))
                     - mpmath.fsum(mpmath.log1p((A + k) / (B + j)) for j in range(m)))
            assert got <= 0.0
            assert got == pytest.approx(float(exact), rel=1e-13, abs=1e-300), (k, m)


@pytest.mark.parametrize("a,b,k,m", [(1e15, 1e15, 1, 0), (1e16, 1e16, 2, 1), (1e300, 3e299, 5, 4),
                                     (2.5, 1e12, 10, 3), (1e-3, 1e-3, 1000, 0)])
def test_beta_bernoulli_log_marginal_likelihood_against_log_gamma(a, b, k, m):
    """The book's formula log B(a + N_1, b + N_0) - log B(a, b), evaluated with enough digits to survive
    its cancellation."""
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(340):
        A, B = mpmath.mpf(a), mpmath.mpf(b)
        lbeta = lambda p, q: mpmath.loggamma(p) + mpmath.loggamma(q) - mpmath.loggamma(p + q)   # noqa: E731
        exact = float(lbeta(A + k, B + m) - lbeta(A, B))
    x = np.r_[np.ones(k), np.zeros(m)]
    assert BetaBernoulli(a, b).fit(x).log_marginal_likelihood() == pytest.approx(exact, rel=1e-13)


@pytest.mark.parametrize("a,b", [(1e308, 1e308), (1.7e308, 1e308), (1e308, 1.7e308)])
def test_beta_bernoulli_prior_counts_whose_sum_overflows(a, b):
    """a + b = inf near 1e308: the quotients are taken in scaled form instead of returning 0 or NaN."""
    m = BetaBernoulli(a, b).fit([1, 0, 1])
    mean = 1.0 / (1.0 + b / a)          # the extra counts vanish against a and b
    assert m.posterior_mean() == pytest.approx(mean, rel=1e-15)
    assert m.map_estimate() == pytest.approx(mean, rel=1e-15)
    np.testing.assert_allclose(m.predictive_proba([1, 0]), [mean, 1.0 - mean], rtol=1e-15)
    assert m.log_marginal_likelihood() == pytest.approx(2 * np.log(mean) + np.log1p(-mean), rel=1e-14)
    lo, hi = m.credible_interval(0.99)   # sd ~ 1e-154: the interval is the mean to double precision
    assert lo == pytest.approx(mean, rel=1e-15) and hi == pytest.approx(mean, rel=1e-15)


def test_beta_bernoulli_credible_interval_never_nan():
    """Where scipy's beta quantiles fail (NaN) for counts far apart the interval is that of ``Gamma(a) / b``
    (session 30: it was an error); a strong prior on both sides gives the mean."""
    lo, hi = BetaBernoulli(5, 1e307).fit([1]).credible_interval()
    # (oracle: Gamma(6) / 1e307 by mpmath; scipy 1.10's beta quantiles at Beta(6, 1e100) were NaN)
    np.testing.assert_allclose([lo, hi], gamma_quantiles_mp([0.025, 0.975], 6) / 1e307, rtol=1e-12)
    with pytest.raises(ValueError, match=r"prior a=5e-324, b=5e-324.*pseudo-counts between"):
        BetaBernoulli(5e-324, 5e-324).fit([]).credible_interval()     # scipy's beta function overflows
    lo, hi = BetaBernoulli(1e40, 2e40).fit([1, 0]).credible_interval()
    assert lo == hi == pytest.approx(1 / 3, rel=1e-15)
    lo, hi = BetaBernoulli(1e6, 2e6).fit([1, 0]).credible_interval()     # scipy's answer where it is sound
    assert lo < 1 / 3 < hi and stats.beta.cdf(hi, 1e6 + 1, 2e6 + 1) - stats.beta.cdf(lo, 1e6 + 1, 2e6 + 1) \
        == pytest.approx(0.95)


def test_lambda_from_prior():
    assert ridge_lambda_from_prior(0.5, 2.0) == pytest.approx(0.25)
    assert lasso_lambda_from_prior(0.5, 0.1) == pytest.approx(5.0)
    with pytest.raises(ValueError):
        ridge_lambda_from_prior(0, 1)
    with pytest.raises(ValueError):
        lasso_lambda_from_prior(1, -1)


def test_ridge_lambda_is_the_map():
    """Direct maximisation of the log posterior equals ridge with lam = sigma^2 / tau^2."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(25, 3))
    y = X @ [1.0, -2.0, 0.5] + 0.7 * rng.normal(size=25)
    s2, t2 = 0.49, 0.3
    neg_log_post = lambda w: np.sum((y - X @ w) ** 2) / (2 * s2) + np.sum(w ** 2) / (2 * t2)
    w_map = optimize.minimize(neg_log_post, np.zeros(3), method="BFGS", options={"gtol": 1e-10}).x
    lam = ridge_lambda_from_prior(s2, t2)
    w_ridge = np.linalg.solve(X.T @ X + lam * np.eye(3), X.T @ y)
    np.testing.assert_allclose(w_map, w_ridge, atol=1e-6)


@pytest.mark.parametrize("s", [1e-150, 1e-12, 1e12, 1e150])
def test_gaussian_mle_scales_exactly(s):
    X = np.random.default_rng(5).normal(size=(30, 2))
    m0, c0 = gaussian_mle(X)
    m, c = gaussian_mle(X * s)
    np.testing.assert_allclose(m / s, m0, rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(c / s / s, c0, rtol=1e-13)


@pytest.mark.parametrize("s", [1e-300, 1e300])
def test_gaussian_mle_unrepresentable_covariance_is_a_clear_error(s):
    X = np.random.default_rng(5).normal(size=(30, 2))
    with pytest.raises(ValueError, match="rescale"):
        gaussian_mle(X * s)


@pytest.mark.parametrize("f, args, name", [(ridge_lambda_from_prior, (1e300, 1e-300), "prior_var"),
                                           (ridge_lambda_from_prior, (1e-300, 1e300), "prior_var"),
                                           (lasso_lambda_from_prior, (1e300, 1e-300), "prior_scale"),
                                           (lasso_lambda_from_prior, (1e-300, 1e300), "prior_scale")])
def test_lambda_from_prior_out_of_range_is_a_clear_error(f, args, name):
    """noise_var / prior beyond float64 gave lam = inf or 0 (no penalty: another model), silently."""
    from tests.adversarial.harness import assert_clear_error
    with pytest.raises(ValueError) as info:
        f(*args)
    assert_clear_error(info.value, name)
