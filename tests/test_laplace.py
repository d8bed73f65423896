"""Tests for linbook.laplace: Laplace approximation, probit approximation, BayesianLogisticRegression.

Oracles: quadrature (1-D and 2-D normalisers), Monte Carlo with many samples (probit),
scikit-learn (MAP point), statsmodels (BIC / AIC conventions).
"""

import warnings

import numpy as np
import pytest
from scipy import integrate, stats
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression as SkLogReg
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import linbook
from linbook.numerics import log1pexp, sigmoid


# ---------------------------------------------------------------- Laplace approximation
def _prml_energy():
    E = lambda z: 0.5 * z * z + log1pexp(-(20 * z + 4))          # -log[exp(-z^2/2) sigm(20z+4)]
    g = lambda z: z - 20 * sigmoid(-(20 * z + 4))
    h = lambda z: 1 + 400 * sigmoid(20 * z + 4) * sigmoid(-(20 * z + 4))
    return E, g, h


def test_laplace_1d_prml_mode_and_normaliser_vs_quadrature():
    E, g, h = _prml_energy()
    r = linbook.laplace_approximation(E, g, h, 0.0)
    assert abs(g(r.mode[0])) < 1e-10
    assert r.precision[0, 0] == pytest.approx(h(r.mode[0]))
    # the Laplace normaliser equals the quadrature of the *approximating* Gaussian's unnormalised form
    quad_gauss = integrate.quad(lambda z: np.exp(-E(r.mode[0]) - 0.5 * r.precision[0, 0] * (z - r.mode[0]) ** 2),
                                -np.inf, np.inf)[0]
    assert r.log_evidence == pytest.approx(np.log(quad_gauss), rel=1e-9)
    # and approximates (not equals) the true normaliser of this skewed density
    true = np.log(integrate.quad(lambda z: np.exp(-E(z)), -20, 20, points=[-0.2, 0.0, 0.2])[0])
    assert abs(r.log_evidence - true) < 0.1
    assert abs(r.log_evidence - true) > 1e-3


def test_laplace_exact_for_gaussian_2d_vs_dblquad():
    A = np.array([[2.0, 0.6], [0.6, 1.0]])
    mu = np.array([0.3, -1.2])
    c = 1.7
    E = lambda z: c + 0.5 * (z - mu) @ A @ (z - mu)
    r = linbook.laplace_approximation(E, lambda z: A @ (z - mu), lambda z: A, np.zeros(2))
    np.testing.assert_allclose(r.mode, mu, atol=1e-12)
    np.testing.assert_allclose(r.covariance, np.linalg.inv(A), rtol=1e-12)
    quad = integrate.dblquad(lambda y, x: np.exp(-E(np.array([x, y]))), -12, 12, -12, 12, epsabs=1e-12)[0]
    assert r.log_evidence == pytest.approx(np.log(quad), rel=1e-8)
    # the Gaussian pdf integrates to one and matches scipy
    np.testing.assert_allclose(r.pdf(np.array([[0.0, 0.0], [1.0, -1.0]])),
                               stats.multivariate_normal(mu, np.linalg.inv(A)).pdf([[0, 0], [1, -1]]), rtol=1e-12)


def test_laplace_2d_non_gaussian_close_to_quadrature():
    # a logistic-regression-like posterior in 2-D: Laplace within a few percent of quadrature
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 2))
    t = (X @ [1.0, -0.5] + rng.normal(size=30) > 0).astype(float)
    v = 4.0

    def E(w):
        a = X @ w
        return np.sum(log1pexp(a) - t * a) + 0.5 * w @ w / v + np.log(2 * np.pi * v)

    g = lambda w: X.T @ (sigmoid(X @ w) - t) + w / v
    H = lambda w: X.T @ ((sigmoid(X @ w) * (1 - sigmoid(X @ w)))[:, None] * X) + np.eye(2) / v
    r = linbook.laplace_approximation(E, g, H, np.zeros(2))
    quad = integrate.dblquad(lambda y, x: np.exp(-E(np.array([x, y]))), -8, 10, -10, 8, epsabs=1e-14)[0]
    assert abs(r.log_evidence - np.log(quad)) < 0.05
    np.testing.assert_allclose(g(r.mode), 0, atol=1e-8)


def test_laplace_evaluates_each_point_once():
    """The start and the mode are evaluated once each (the mode's Hessian is the precision A):
    E, its gradient and its Hessian are called once per Newton step plus once at x0, and a
    caller's buffer reused between calls does not change the result."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((300, 4))
    y = (X @ np.array([1.0, -2.0, 0.5, 0.0]) + rng.logistic(size=300) > 0).astype(float)
    calls = {"E": 0, "g": 0, "H": 0}
    buffer = np.empty((4, 4))

    def E(w):
        calls["E"] += 1
        z = X @ w
        return np.sum(np.logaddexp(0, z) - y * z) + 0.5 * w @ w

    def g(w):
        calls["g"] += 1
        return X.T @ (sigmoid(X @ w) - y) + w

    def H(w):
        calls["H"] += 1
        m = sigmoid(X @ w)
        buffer[:] = (X.T * (m * (1 - m))) @ X + np.eye(4)
        return buffer                      # the same array every call

    res = linbook.laplace_approximation(E, g, H, np.zeros(4))
    assert calls == {"E": res.n_iter + 1, "g": res.n_iter + 1, "H": res.n_iter + 1}
    m = sigmoid(X @ res.mode)
    exact = (X.T * (m * (1 - m))) @ X + np.eye(4)
    np.testing.assert_allclose(res.precision, exact, rtol=1e-12)


def test_laplace_errors():
    with pytest.raises(ValueError, match="finite"):
        linbook.laplace_approximation(lambda z: z * z, lambda z: 2 * z, lambda z: 2.0, np.nan)
    with pytest.raises(ValueError, match="not finite"):
        linbook.laplace_approximation(lambda z: np.inf, lambda z: 0.0, lambda z: 1.0, 0.0)
    # a flat direction at the mode: Hessian singular
    with pytest.raises(ValueError, match="positive definite"):
        linbook.laplace_approximation(lambda z: z[0] ** 2, lambda z: np.array([2 * z[0], 0.0]),
                                      lambda z: np.diag([2.0, 0.0]), np.ones(2))
    # unbounded below: no mode
    with pytest.raises(ValueError, match="did not reach the mode"):
        linbook.laplace_approximation(lambda z: -z, lambda z: -1.0, lambda z: 0.0, 0.0, max_iter=20)


# ---------------------------------------------------------------- probit approximation
def test_kappa_and_moderated_sigmoid_vs_quadrature_and_mc():
    assert linbook.probit_kappa(0.0) == 1.0
    assert linbook.probit_kappa(8 / np.pi) == pytest.approx(1 / np.sqrt(2))
    rng = np.random.default_rng(0)
    for mu, var in [(0.0, 1.0), (1.5, 0.5), (-2.0, 4.0), (3.0, 10.0)]:
        exact = integrate.quad(lambda a: sigmoid(a) * stats.norm.pdf(a, mu, np.sqrt(var)), -np.inf, np.inf)[0]
        mc = sigmoid(mu + np.sqrt(var) * rng.standard_normal(400_000)).mean()
        approx = linbook.moderated_sigmoid(mu, var)
        assert abs(approx - exact) < 0.02          # the approximation's known accuracy
        assert abs(mc - exact) < 3e-3              # MC is an unbiased oracle
    with pytest.raises(ValueError):
        linbook.probit_kappa(-1.0)


def test_probit_convolution_identity_exact():
    lam = np.sqrt(np.pi / 8)
    for mu, s2 in [(0.4, 1.3), (-1.0, 0.2), (2.5, 5.0)]:
        lhs = integrate.quad(lambda a: stats.norm.cdf(lam * a) * stats.norm.pdf(a, mu, np.sqrt(s2)), -np.inf, np.inf)[0]
        assert lhs == pytest.approx(stats.norm.cdf(mu / np.sqrt(lam ** -2 + s2)), rel=1e-9)


# ---------------------------------------------------------------- BayesianLogisticRegression
def _data(n=80, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (X @ [1.5, -1.0, 0.0] + 0.3 + rng.logistic(size=n) > 0).astype(int)
    return X, y


def test_map_equals_sklearn_without_intercept():
    X, y = _data()
    m = linbook.BayesianLogisticRegression(prior_precision=0.5, fit_intercept=False).fit(X, y)
    s = SkLogReg(C=2.0, fit_intercept=False, tol=1e-12, max_iter=10_000).fit(X, y)
    np.testing.assert_allclose(m.coef_, s.coef_, atol=1e-6)
    assert m.intercept_[0] == 0.0


def test_sample_weight_is_repeated_rows_and_sklearns_weights():
    """Integer weights give the posterior and evidence of repeated rows (0 drops a row); without an
    intercept the weighted MAP is scikit-learn's weighted fit at C = 1/alpha."""
    X, y = _data()
    w = np.random.default_rng(5).integers(0, 4, y.size)
    weighted = linbook.BayesianLogisticRegression(prior_precision=0.5).fit(X, y, sample_weight=w.astype(float))
    repeated = linbook.BayesianLogisticRegression(prior_precision=0.5).fit(np.repeat(X, w, 0), np.repeat(y, w))
    np.testing.assert_allclose(weighted.posterior_mean_, repeated.posterior_mean_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(weighted.posterior_cov_, repeated.posterior_cov_, rtol=1e-10, atol=1e-14)
    assert weighted.log_evidence_ == pytest.approx(repeated.log_evidence_, rel=1e-12)
    np.testing.assert_allclose(weighted.predict_proba(X), repeated.predict_proba(X), rtol=1e-10)
    unit = linbook.BayesianLogisticRegression(prior_precision=0.5).fit(X, y)
    assert abs(unit.log_evidence_ - weighted.log_evidence_) > 1.0      # the weights are used
    m = linbook.BayesianLogisticRegression(prior_precision=0.5, fit_intercept=False).fit(X, y, sample_weight=w)
    s = SkLogReg(C=2.0, fit_intercept=False, tol=1e-12, max_iter=10_000).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(m.coef_, s.coef_, atol=1e-6)
    with pytest.raises(ValueError, match="sample_weight"):
        linbook.BayesianLogisticRegression().fit(X, y, sample_weight=-np.ones(y.size))


def test_posterior_cov_is_inverse_hessian_and_evidence_vs_quadrature_1d():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(25, 1))
    y = (x[:, 0] + rng.logistic(size=25) > 0).astype(int)
    v = 3.0
    m = linbook.BayesianLogisticRegression(prior_precision=1 / v, fit_intercept=False).fit(x, y)
    w = m.posterior_mean_[0]
    mu = sigmoid(x[:, 0] * w)
    assert m.posterior_cov_[0, 0] == pytest.approx(1 / (np.sum(mu * (1 - mu) * x[:, 0] ** 2) + 1 / v))

    def joint(w):     # p(y | x, w) p(w)
        a = x[:, 0] * w
        return np.exp(np.sum(y * a - log1pexp(a))) * stats.norm.pdf(w, 0, np.sqrt(v))

    exact = np.log(integrate.quad(joint, -15, 15, points=[w])[0])
    assert abs(m.log_evidence_ - exact) < 0.05


def test_predictives_agree_and_mc_is_seeded():
    X, y = _data()
    Xt = np.random.default_rng(9).normal(size=(50, 3)) * 2
    kw = dict(prior_precision=0.1)
    pr = linbook.BayesianLogisticRegression(predictive="probit", **kw).fit(X, y).predict_proba(Xt)
    mc_model = linbook.BayesianLogisticRegression(predictive="mc", n_samples=200_000, random_state=0, **kw).fit(X, y)
    mc = mc_model.predict_proba(Xt)
    pl = linbook.BayesianLogisticRegression(predictive="plugin", **kw).fit(X, y).predict_proba(Xt)
    # MC with many samples is the oracle for the integral; probit is within its known error
    mu, var = mc_model.predictive_moments(Xt)
    exact = np.array([integrate.quad(lambda a: sigmoid(a) * stats.norm.pdf(a, m_, np.sqrt(v_)), -np.inf, np.inf)[0]
                      for m_, v_ in zip(mu, var)])
    np.testing.assert_allclose(mc[:, 1], exact, atol=5e-3)
    np.testing.assert_allclose(pr[:, 1], exact, atol=0.02)
    np.testing.assert_allclose(pr.sum(1), 1.0)
    # moderated output is less confident than the plug-in: |p - 1/2| shrinks
    assert np.all(np.abs(pr[:, 1] - 0.5) <= np.abs(pl[:, 1] - 0.5) + 1e-12)
    # same seed -> same probabilities; decision boundary shared by plug-in and probit
    np.testing.assert_array_equal(mc_model.predict_proba(Xt), mc)
    np.testing.assert_array_equal(pr[:, 1] > 0.5, pl[:, 1] > 0.5)
    np.testing.assert_allclose(mc_model.decision_function(Xt), mu)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_probit_predictive_is_the_textbook_formula_and_reaches_its_limit_far_out(fit_intercept):
    X, y = _data()
    model = linbook.BayesianLogisticRegression(prior_precision=0.1, fit_intercept=fit_intercept).fit(X, y)
    x = np.random.default_rng(3).normal(size=(6, 3)) * 10.0 ** np.arange(-3, 3)[:, None]
    # the row-scaled computation is sigm(kappa(var) mu) of the public moments, bit for bit
    mu, var = model.predictive_moments(x)
    np.testing.assert_array_equal(model.predict_proba(x)[:, 1], linbook.moderated_sigmoid(mu, var))
    # far out (var ~ 1e600 overflows) the moderated probability is the limit sigm(mu_n / sqrt(pi var_n / 8))
    near, far = model.predict_proba(x[:1] * 1e8), model.predict_proba(x[:1] * 1e300)
    assert np.all(np.isfinite(far))
    np.testing.assert_allclose(far, near, atol=1e-7)
    assert 1e-6 < far[0, 1] < 1.0 - 1e-6     # moderated: not the plug-in's 0 or 1


def test_sample_posterior_has_the_laplace_moments():
    X, y = _data()
    m = linbook.BayesianLogisticRegression(prior_precision=0.2).fit(X, y)
    W = m.sample_posterior(200_000, random_state=1)
    np.testing.assert_allclose(W.mean(0), m.posterior_mean_, atol=0.02)
    np.testing.assert_allclose(np.cov(W.T), m.posterior_cov_, atol=0.02)


def test_separable_data_gives_finite_posterior():
    X, y, _ = linbook.datasets.make_separable(40, labels=(0, 1), random_state=0)
    m = linbook.BayesianLogisticRegression(prior_precision=0.01).fit(X, y)
    assert np.all(np.isfinite(m.posterior_mean_)) and np.isfinite(m.log_evidence_)
    np.testing.assert_array_equal(m.predict(X), y)


def _stable_gradient(model, X, y, alpha):
    """The energy's gradient at the fitted mode, each residual ``mu - t`` without cancelling."""
    Phi = np.column_stack([np.ones(len(y)), X])
    w = np.r_[model.intercept_, model.coef_.ravel()]
    z = Phi @ w
    return Phi.T @ ((1 - y) * sigmoid(z) - y * sigmoid(-z)) + alpha * w, w


@pytest.mark.parametrize("alpha", [1e-15, 1e-20, 1e-50])
def test_separable_data_under_a_weak_prior_reach_the_mode(alpha):
    """On separable classes the mode moves out as log(1/alpha); the Newton decrement fell below tol far before
    it (at |w| = 265 for every alpha from 1e-20 down), and the gradient's residuals mu - 1 rounded to 0."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 2))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    model = linbook.BayesianLogisticRegression(prior_precision=alpha).fit(X, y)
    g, w = _stable_gradient(model, X, y, alpha)
    assert np.max(np.abs(g)) <= 1e-3 * alpha * np.max(np.abs(w))      # the likelihood's pull balances the prior's


def test_a_far_mode_is_reached_by_doubled_flat_steps():
    """Separable classes under prior_precision 1e-300: the mode has margins of ~690, where E is flat to rounding.
    Until session 30 the default max_iter stopped short (a clear error naming the prior and max_iter); Newton's flat
    step now doubles while the slope falls, and both runs reach the mode."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 2))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    for kwargs in ({}, {"max_iter": 2000}):
        model = linbook.BayesianLogisticRegression(prior_precision=1e-300, **kwargs).fit(X, y)
        g, w = _stable_gradient(model, X, y, 1e-300)
        assert np.max(np.abs(g)) <= 1e-2 * 1e-300 * np.max(np.abs(w))     # margins of ~690
    with pytest.raises(ValueError, match="did not reach the mode in max_iter=5 iterations; increase max_iter"):
        linbook.BayesianLogisticRegression(prior_precision=1e-300, max_iter=5).fit(X, y)


def test_sklearn_api_and_labels():
    X, y = _data()
    labels = np.where(y == 1, "pass", "fail")
    m = linbook.BayesianLogisticRegression().fit(X, labels)
    assert set(m.predict(X)) <= {"pass", "fail"}
    assert list(m.classes_) == ["fail", "pass"]
    c = clone(linbook.BayesianLogisticRegression(prior_precision=3.0, predictive="mc", random_state=0))
    assert c.get_params()["prior_precision"] == 3.0
    sc = cross_val_score(make_pipeline(StandardScaler(), linbook.BayesianLogisticRegression()), X, y, cv=3)
    assert sc.mean() > 0.6


@pytest.mark.parametrize("bad", [
    dict(prior_precision=0.0), dict(prior_precision=-1.0), dict(prior_precision=np.inf), dict(predictive="laplace"), dict(n_samples=0)])
def test_bad_parameters(bad):
    X, y = _data()
    with pytest.raises(ValueError):
        linbook.BayesianLogisticRegression(**bad).fit(X, y)


def test_bad_input():
    X, y = _data()
    est = linbook.BayesianLogisticRegression()
    Xn = X.copy(); Xn[0, 0] = np.nan
    with pytest.raises(ValueError):
        est.fit(Xn, y)
    Xi = X.copy(); Xi[0, 0] = np.inf
    with pytest.raises(ValueError):
        est.fit(Xi, y)
    with pytest.raises(ValueError, match="at least 2 classes"):
        est.fit(X, np.zeros(len(y)))
    with pytest.raises(ValueError, match="Only binary"):
        est.fit(X, np.arange(len(y)) % 3)
    with pytest.raises(ValueError):
        est.fit(X, y[:-1])
    est.fit(X, y)
    with pytest.raises(ValueError, match="features"):
        est.predict_proba(X[:, :2])


# ---------------------------------------------------------------- information criteria
def test_aic_bic_reexported_and_match_statsmodels_logit():
    import statsmodels.api as sm
    from linbook.laplace import aic, bic
    assert aic is linbook.aic and bic is linbook.bic
    X, y = _data()
    res = sm.Logit(y, sm.add_constant(X)).fit(disp=0)
    k = X.shape[1] + 1
    assert bic(res.llf, k, len(y)) == pytest.approx(res.bic, rel=1e-12)
    assert aic(res.llf, k) == pytest.approx(res.aic, rel=1e-12)


# ---------------------------------------------------------------- fitted linear models vs statsmodels
def test_bic_refuses_fewer_than_one_sample_in_the_one_wording():
    from linbook.laplace import bic
    with pytest.raises(ValueError, match=r"The 'n_samples' parameter of bic must be .* Set n_samples to "):
        bic(-3.0, 2, 0)


def test_logistic_regression_llf_bic_aic_equal_statsmodels():
    import statsmodels.api as sm
    X, y = _data(n=120, seed=4)
    m = linbook.LogisticRegression(lam=0).fit(X, y)
    res = sm.Logit(y, sm.add_constant(X)).fit(disp=0, tol=1e-12)
    assert m.log_likelihood(X, y) == pytest.approx(res.llf, rel=1e-8)
    assert m.bic(X, y) == pytest.approx(res.bic, rel=1e-8)
    assert m.aic(X, y) == pytest.approx(res.aic, rel=1e-8)


def test_linear_regression_llf_bic_aic_equal_statsmodels():
    import statsmodels.api as sm
    rng = np.random.default_rng(8)
    X = rng.normal(size=(60, 3))
    y = X @ [1.0, 0.0, -2.0] + 0.5 + rng.normal(size=60)
    m = linbook.LinearRegression().fit(X, y)
    res = sm.OLS(y, sm.add_constant(X)).fit()
    assert m.log_likelihood(X, y) == pytest.approx(res.llf, rel=1e-10)
    assert m.bic(X, y) == pytest.approx(res.bic, rel=1e-10)
    assert m.aic(X, y) == pytest.approx(res.aic, rel=1e-10)


def test_map_equals_linbook_logistic_lam_without_intercept():
    X, y = _data()
    m = linbook.BayesianLogisticRegression(prior_precision=0.7, fit_intercept=False).fit(X, y)
    r = linbook.LogisticRegression(lam=0.7, fit_intercept=False).fit(X, y)
    np.testing.assert_allclose(m.coef_, r.coef_, atol=1e-8)


def test_contract_feature_names_not_fitted_and_predict_writes_nothing():
    pd = pytest.importorskip("pandas")
    from sklearn.exceptions import NotFittedError
    X, y = _data()
    est = linbook.BayesianLogisticRegression(predictive="mc", n_samples=50, random_state=0)
    with pytest.raises(NotFittedError):
        est.predict(X)
    with pytest.raises(NotFittedError):
        est.sample_posterior(3)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    est.fit(df, y)
    assert list(est.feature_names_in_) == ["a", "b", "c"]
    before = set(vars(est))
    p1, p2 = est.predict_proba(df), est.predict_proba(df)
    np.testing.assert_array_equal(p1, p2)
    assert set(vars(est)) == before
    with pytest.raises(ValueError, match="feature names"):
        est.predict(df[["c", "a", "b"]])


def test_offset_features_warn_or_say_what_to_do():
    """Features offset by 1e6..1e8 (the intercept has the prior too, so centring is not exact): the
    Hessian at the mode is positive definite but ill-conditioned. log_evidence_ was silently off by up
    to 0.01 nats (1e7), and at 1e8 the error said no Gaussian approximation exists (false: alpha > 0)."""
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((40, 2))
    y = (rng.random(40) < sigmoid(Z[:, 0] - Z[:, 1])).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        linbook.BayesianLogisticRegression(prior_precision=1.0).fit(Z, y)          # centred: no warning
    with pytest.warns(UserWarning, match="ill-conditioned.*StandardScaler"):
        linbook.BayesianLogisticRegression(prior_precision=1.0).fit(Z + 1e6, y)
    # at 1e8 the rounding decides whether the Cholesky factor exists (it does under some BLAS kernels):
    # either way the user is told, by the warning or by an error that says why and what to do
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            linbook.BayesianLogisticRegression(prior_precision=1.0).fit(Z + 1e8, y)
        except ValueError as exc:
            assert "positive definite" in str(exc) and "singular to float64's rounding" in str(exc)
            assert "StandardScaler" in str(exc)
        else:
            assert any("ill-conditioned" in str(w.message) for w in caught)


@pytest.mark.parametrize("call, names", [
    (lambda: __import__("linbook").aic(-1e308, 5), "log_likelihood"),
    (lambda: __import__("linbook").bic(1e308, 5, 10), "log_likelihood"),
    (lambda: __import__("linbook").bic(-3.0, 1e308, 10), "n_params"),
])
def test_criteria_that_overflow_raise_instead_of_inf(call, names):
    """-2 log L + penalty beyond the largest double: a clear error naming the input, not a silent inf."""
    from tests.adversarial.harness import assert_clear_error
    with pytest.raises(ValueError) as info:
        call()
    assert_clear_error(info.value, names)
