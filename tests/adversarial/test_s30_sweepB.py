"""Session 30, sweep B: the helpers of the logistic, online, perceptron and selection chapters.

Each block names the defect the old code had and checks the fix against an oracle (statsmodels, scikit-learn,
scipy's LP solver, or the same computation on a rescaled problem).
"""

import warnings

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import optimize
from sklearn.feature_selection import SequentialFeatureSelector
from sklearn.linear_model import LinearRegression
from sklearn.metrics import mutual_info_score
from sklearn.model_selection import KFold, cross_val_score

import linbook
from linbook.base import SeparableDataWarning


def _logit_data(seed=1, n=60):
    rng = np.random.default_rng(seed)
    X = np.c_[np.ones(n), rng.normal(size=(n, 2))]
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ [0.3, 1.0, -1.0])))).astype(float)
    return X, y


# --- irls: columns far from 1 ---------------------------------------------------------------------------------
# Old: the Hessian X'SX squares the columns, so columns near 1e-300 gave a zero data Hessian and irls stopped
# "converged" with NLL 41.29 against the optimum 33.26 (coefficients off by 100 %); columns near 1e300 gave an
# infinite Hessian and w = 0.

@pytest.mark.parametrize("scale", [1e-300, 1e-200, 1e200, 1e300])
def test_irls_far_column_scales_match_statsmodels(scale):
    X, y = _logit_data()
    ref = sm.Logit(y, X).fit(disp=0, tol=1e-14, maxiter=200).params
    Xs = X.copy()
    Xs[:, 1:] *= scale
    res = linbook.irls(Xs, y)
    assert res.converged
    np.testing.assert_allclose(res.x * np.r_[1.0, scale, scale], ref, rtol=1e-8)
    np.testing.assert_allclose(res.path[-1], res.x)


def test_irls_far_columns_with_penalty_match_the_rescaled_problem():
    # the fit on X * 2^-500 with lam 2^-1000 is the fit on X with lam 1, its coefficients times 2^500
    X, y = _logit_data(seed=2)
    ref = linbook.irls(X, y, lam=1.0, tol=1e-12)
    c = 2.0 ** -500
    res = linbook.irls(X * c, y, lam=c * c, tol=1e-12)
    assert res.converged
    np.testing.assert_allclose(res.x * c, ref.x, rtol=1e-9)


# --- irls: no finite MLE without saturated margins ------------------------------------------------------------
# Old: the separability test ran only when a margin exceeded 25 or Newton had not converged; one class only
# (margins ~24 when the relative gradient test passed) and a single sample came back converged=True.

@pytest.mark.parametrize("case", ["one_class", "one_sample", "one_class_no_intercept"])
def test_irls_no_finite_mle_is_not_converged(case):
    X, y = _logit_data()
    if case == "one_class":
        y = np.ones_like(y)
    elif case == "one_sample":
        X, y = X[:1], y[:1]
    else:
        X, y = np.abs(X[:, 1:]), np.zeros_like(y)     # x'v <= 0 for v = -(1, 1): separable through the origin
    with pytest.warns(SeparableDataWarning):
        res = linbook.irls(X, y)
    assert not res.converged


def test_irls_one_class_with_a_finite_mle_converges():
    # x = +-1 with y = 1 both times: log(1 + e^-w) + log(1 + e^w) is smallest at w = 0, a finite MLE
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = linbook.irls(np.array([[1.0], [-1.0]]), np.array([1.0, 1.0]))
    assert res.converged and abs(res.x[0]) < 1e-12


def test_irls_refuses_no_rows():
    with pytest.raises(ValueError, match="no rows"):
        linbook.irls(np.zeros((0, 2)), np.zeros(0))


# --- forward_selection / backward_selection --------------------------------------------------------------------

def _regression(seed=2, n=30, d=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, X[:, 1] * 2 - X[:, d - 2] + 0.5 * rng.normal(size=n)


@pytest.mark.parametrize("search", [linbook.forward_selection, linbook.backward_selection])
def test_search_accepts_one_feature(search):
    # old: Interval(Integral, 1, 1) is refused by scikit-learn ("right can't be less than left"), so a
    # one-column X could not be searched at all, not even with n_features=None
    X, y = _regression()
    res = search(LinearRegression(), X[:, :1], y, n_features=1)
    assert res.support.tolist() == [True]
    expected = np.mean(cross_val_score(LinearRegression(), X[:, :1], y, cv=5))
    assert res.scores[-1] == pytest.approx(expected, rel=1e-12)
    assert search(LinearRegression(), X[:, :1], y).n_features == 1


@pytest.mark.parametrize("search", [linbook.forward_selection, linbook.backward_selection])
@pytest.mark.parametrize("case", ["loo_r2", "nan_scorer"])
def test_search_refuses_nan_scores(search, case):
    # old: np.argmax picks a NaN first, so R^2 on the one-sample folds of cv=N chose feature 0 with score NaN
    X, y = _regression()
    kw = {"cv": 30} if case == "loo_r2" else {"scoring": lambda est, X_, y_: np.nan}
    with pytest.raises(ValueError, match="NaN"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search(LinearRegression(), X, y, n_features=2, **kw)


def test_search_fit_failing_in_a_fold_raises_its_own_error():
    # old: scikit-learn's error_score=nan turned a failed fold into a NaN score (then the NaN argmax above)
    class FailsOnPairs(LinearRegression):
        def fit(self, X, y):
            if X.shape[1] == 2 and X.shape[0] < 25:
                raise RuntimeError("boom in a fold")
            return super().fit(X, y)

    X, y = _regression()
    with pytest.raises(RuntimeError, match="boom in a fold"):
        linbook.forward_selection(FailsOnPairs(), X, y, n_features=3)


@pytest.mark.parametrize("direction", ["forward", "backward"])
@pytest.mark.parametrize("cv", [5, KFold(3, shuffle=True, random_state=0)])
def test_search_matches_sequential_feature_selector_with_duplicate_and_constant_columns(direction, cv):
    X, y = _regression(seed=5)
    X = np.c_[X, X[:, 1], np.ones(len(y))]
    search = linbook.forward_selection if direction == "forward" else linbook.backward_selection
    ours = search(LinearRegression(), X, y, n_features=3, cv=cv)
    sfs = SequentialFeatureSelector(LinearRegression(), n_features_to_select=3, direction=direction, cv=cv).fit(X, y)
    assert ours.support.tolist() == sfs.get_support().tolist()


# --- mutual_information_scores: continuous columns ---------------------------------------------------------------
# old: a column with a different value in every row (a continuous feature) was scored H(y), the largest possible
# score, with no word: five Gaussian columns all scored 0.657.

def test_mutual_information_scores_warns_on_all_distinct_columns():
    rng = np.random.default_rng(4)
    X = np.c_[rng.normal(size=40), rng.integers(0, 3, 40)]
    y = rng.integers(0, 2, 40)
    with pytest.warns(linbook.base.LinbookWarning, match=r"column\(s\) \[0\]"):
        scores = linbook.mutual_information_scores(X, y)
    np.testing.assert_allclose(scores, [mutual_info_score(X[:, j], y) for j in range(2)], rtol=1e-12)


def test_mutual_information_scores_discrete_columns_do_not_warn():
    rng = np.random.default_rng(4)
    X, y = rng.integers(0, 3, (40, 3)) * 2 ** 62, rng.integers(0, 2, 40) * 2 ** 62 + 7
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        linbook.mutual_information_scores(X, y)


# --- best_fixed_parameter ---------------------------------------------------------------------------------------
# old: BFGS / SLSQP with absolute tolerances. The absolute loss (non-smooth) stopped anywhere: 1.5846 against the
# LP optimum 1.5837 on unit features, theta = 0 and total 10.68 on features 1e8; the squared loss in a ball of
# radius 1e-7 on features 1e8 returned a total of 7e15 against 0.10; radius 1e300 overflowed (OverflowError).

def _online_data(seed=0, n=20):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, X @ [1.0, -2.0, 0.5] + 0.1 * rng.normal(size=n)


def _lad_total(X, y):
    T, D = X.shape
    lp = optimize.linprog(np.r_[np.zeros(D), np.ones(T)], A_ub=np.block([[X, -np.eye(T)], [-X, -np.eye(T)]]),
                          b_ub=np.r_[y, -y], bounds=[(None, None)] * D + [(0, None)] * T, method="highs")
    return lp.fun


@pytest.mark.parametrize("xs,ys", [(1.0, 1.0), (1e8, 1.0), (1e-8, 1.0), (1.0, 1e200), (1e150, 1e-150)])
def test_best_fixed_parameter_absolute_loss_is_the_lp_optimum(xs, ys):
    X, y = _online_data()
    theta, total = linbook.online.best_fixed_parameter(X * xs, y * ys, loss="absolute_error")
    assert total == pytest.approx(_lad_total(X, y) * ys, rel=1e-9)
    np.testing.assert_allclose(np.sum(np.abs(X @ (theta * xs / ys) - y)), _lad_total(X, y), rtol=1e-9)


def _kkt_on_sphere(theta, grad, radius):
    """theta on the sphere and grad = -mu theta with mu > 0 (the constrained optimum of a convex loss)."""
    assert np.linalg.norm(theta) == pytest.approx(radius, rel=1e-9)
    mu = -(grad @ theta) / (theta @ theta)
    assert mu > 0
    assert np.linalg.norm(grad + mu * theta) <= 1e-7 * np.linalg.norm(grad)


@pytest.mark.parametrize("xs,radius", [(1.0, 0.5), (1e8, 0.5e-8), (1e-8, 0.5e8), (1e150, 0.5e-150)])
def test_best_fixed_parameter_squared_loss_in_a_ball_meets_kkt(xs, radius):
    X, y = _online_data()
    theta, total = linbook.online.best_fixed_parameter(X * xs, y, radius=radius)
    _kkt_on_sphere(theta * xs, X.T @ (X @ (theta * xs) - y), radius * xs)
    assert total == pytest.approx(0.5 * np.sum((X @ (theta * xs) - y) ** 2), rel=1e-12)


@pytest.mark.parametrize("xs,radius", [(1.0, 2.0), (1e6, 2e-6), (1e-6, 2e6)])
def test_best_fixed_parameter_log_loss_in_a_ball_meets_kkt(xs, radius):
    X, y = _online_data()
    yb = (X[:, 0] > 0).astype(float)                  # separable: the ball binds
    theta, total = linbook.online.best_fixed_parameter(X * xs, yb, loss="log_loss", radius=radius)
    t = theta * xs
    _kkt_on_sphere(t, X.T @ (1 / (1 + np.exp(-(X @ t))) - yb), radius * xs)


def test_best_fixed_parameter_inside_the_ball_is_least_squares():
    X, y = _online_data()
    theta, _ = linbook.online.best_fixed_parameter(X * 1e8, y, radius=1e-7)
    np.testing.assert_allclose(theta * 1e8, np.linalg.lstsq(X, y, rcond=None)[0], rtol=1e-10)
    theta, _ = linbook.online.best_fixed_parameter(X, y, radius=1e300)
    np.testing.assert_allclose(theta, np.linalg.lstsq(X, y, rcond=None)[0], rtol=1e-10)


def test_best_fixed_parameter_separable_log_loss_without_ball_warns():
    X, y = _online_data()
    with pytest.warns(SeparableDataWarning, match="radius"):
        linbook.online.best_fixed_parameter(X, (X[:, 0] > 0).astype(float), loss="log_loss")


# --- sgd_per_sample: options ------------------------------------------------------------------------------------
# old: no option was checked. eta=-1 returned theta ~1e6 (ascent), NaN eta / lam_n / weights / X gave NaN theta,
# eta=1e308 NaN theta, average=1000 (past the last update) returned theta0, average=-1 averaged everything,
# n_epochs=-1 returned theta0, negative weights and lam_n fitted silently, batch_size=0 a ZeroDivisionError.

def _sgd_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    return X, X @ [1.0, -2.0, 0.5] + 0.1 * rng.normal(size=20)


@pytest.mark.parametrize("kw", [
    {"eta": -1.0}, {"eta": np.nan}, {"eta": np.inf}, {"eta": 0.0}, {"eta": lambda k: -1.0}, {"eta": lambda k: np.nan},
    {"n_epochs": -1}, {"n_epochs": 0}, {"batch_size": 0}, {"batch_size": -1}, {"average": -1}, {"average": 1000},
    {"lam_n": -1.0}, {"lam_n": np.nan}, {"adagrad": True, "adagrad_tau0": -1.0}, {"adagrad": True, "adagrad_tau0": 0.0},
    {"sample_weight": -np.ones(20)}, {"sample_weight": np.full(20, np.nan)}, {"sample_weight": np.ones(3)},
    {"theta0": [1.0, np.nan, 2.0]}, {"X_nan": True}, {"y_nan": True}, {"empty": True}])
def test_sgd_per_sample_refuses_bad_options(kw):
    X, y = _sgd_data()
    kw = dict(kw)
    if kw.pop("X_nan", False):
        X[3, 1] = np.nan
    if kw.pop("y_nan", False):
        y[4] = np.nan
    if kw.pop("empty", False):
        X, y = X[:0], y[:0]
    with pytest.raises(ValueError):
        linbook.online.sgd_per_sample(X, y, **kw)


def test_sgd_per_sample_divergence_is_a_clear_error():
    X, y = _sgd_data()
    with pytest.raises(linbook.base.DivergenceError, match="eta"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        linbook.online.sgd_per_sample(X, y, eta=1e308)


def test_sgd_per_sample_average_start_matches_numpy():
    # the recursive average of the iterates from update 5 on, against the mean of the path's rows 5..N
    X, y = _sgd_data()
    theta, path = linbook.online.sgd_per_sample(X, y, eta=0.05, shuffle=False, average=5)
    np.testing.assert_allclose(theta, path[5:].mean(axis=0), rtol=1e-12)


# --- learning_rate_schedule -------------------------------------------------------------------------------------
# old: nothing was checked (eta0=-1 gave negative steps, NaN anything a NaN step, kappa <= 0 growing steps,
# k=0 with tau0=0 a division by zero), and the formulas overflowed: tau0 + k at 1e308 gave a step of 0 for
# 1.05e-186, lam_n eta0 (k - 1) with eta0 = lam_n = 1e308 gave 0 for 1e-308.

@pytest.mark.parametrize("kw", [
    {"k": 0}, {"k": -1}, {"k": np.nan}, {"k": np.inf}, {"k": [1, 0, 2]}, {"k": 1, "eta0": -1.0},
    {"k": 1, "eta0": 0.0}, {"k": 1, "eta0": np.nan}, {"k": 1, "eta0": np.inf},
    {"k": 1, "kappa": 0.0}, {"k": 1, "kappa": -1.0}, {"k": 1, "kappa": np.nan}, {"k": 1, "tau0": -5.0}, {"k": 1, "tau0": np.inf},
    {"k": 3, "schedule": "optimal", "lam_n": -1.0}, {"k": 2, "schedule": "optimal", "lam_n": np.inf},
    {"k": 1, "schedule": "constant", "eta0": -2.0}])
def test_learning_rate_schedule_refuses_bad_arguments(kw):
    kw = dict(kw)
    with pytest.raises(ValueError), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        linbook.online.learning_rate_schedule(kw.pop("k"), **kw)


def _mp_schedule(k, schedule, eta0=0.1, tau0=1.0, kappa=0.75, lam_n=0.0):
    import mpmath
    with mpmath.workdps(50):
        k, eta0, tau0, kappa, lam_n = (mpmath.mpf(v) for v in (k, eta0, tau0, kappa, lam_n))
        if schedule == "robbins_monro":
            return float(eta0 * (tau0 + k) ** (-kappa))
        return float(eta0 / (1 + lam_n * eta0 * (k - 1)))


@pytest.mark.parametrize("k,schedule,kw", [
    (1e308, "robbins_monro", {"tau0": 1e308, "kappa": 0.6}), (1.5e308, "robbins_monro", {"tau0": 1e308, "kappa": 1.0}),
    (2.0, "optimal", {"eta0": 1e308, "lam_n": 1e308}), (1e10, "optimal", {"eta0": 1e200, "lam_n": 1e150}),
    (7.0, "optimal", {"eta0": 0.5, "lam_n": 0.1}), (1e6, "robbins_monro", {"tau0": 3.0, "kappa": 0.51})])
def test_learning_rate_schedule_extreme_values_match_mpmath(k, schedule, kw):
    assert linbook.online.learning_rate_schedule(k, schedule, **kw) == pytest.approx(
        _mp_schedule(k, schedule, **kw), rel=1e-13)


# --- perceptron_reference: overflow -----------------------------------------------------------------------------
# old: eta=1e308 returned inf and NaN weights (numpy RuntimeWarnings only); intercept_scaling=1e200 raised
# Python's OverflowError (34, 'Numerical result out of range'), naming nothing.

@pytest.mark.parametrize("kw", [{"eta": 1e308}, {"intercept_scaling": 1e200}, {"eta": 1e300, "intercept_scaling": 1e5}])
def test_perceptron_reference_overflow_is_a_clear_error(kw):
    X, y = _sgd_data()
    with pytest.raises(ValueError, match="overflowed"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        linbook.perceptron.perceptron_reference(X, np.sign(y), max_iter=5, **kw)


def test_perceptron_reference_large_eta_scales_the_weights():
    # from w = 0 the iterates are eta times those of eta = 1 (exact for a power of two)
    X, y = _sgd_data()
    w1, b1, u1 = linbook.perceptron.perceptron_reference(X, np.sign(y), max_iter=5)
    w, b, u = linbook.perceptron.perceptron_reference(X, np.sign(y), max_iter=5, eta=2.0 ** 1000)
    assert u == u1 and b == b1 * 2.0 ** 1000
    np.testing.assert_array_equal(w, w1 * 2.0 ** 1000)


# --- logistic_loss: subnormal weights, penalised ------------------------------------------------------------------
# old: with weights of 5e-324 every term sw_i l_i rounded to a multiple of the smallest double, so F came out 2.4
# units of 5e-324 off and the gradient 3 to 8 units off; penalised=[-1, 1, 1] made the objective unbounded below
# silently, a NaN was reported as "the scores X @ w overflow", an inf gave inf - inf.

def _mp_logistic(w, X, y, sw):
    import mpmath
    with mpmath.workdps(60):
        F, g = mpmath.mpf(0), [mpmath.mpf(0)] * X.shape[1]
        for xi, yi, si in zip(X.tolist(), y.tolist(), sw.tolist()):
            z = mpmath.fsum(mpmath.mpf(a) * mpmath.mpf(b) for a, b in zip(xi, w.tolist()))
            F += mpmath.mpf(si) * (mpmath.log1p(mpmath.exp(z)) - yi * z)
            r = mpmath.mpf(si) * (1 / (1 + mpmath.exp(-z)) - yi)
            g = [gj + r * xj for gj, xj in zip(g, xi)]
        return F, g


@pytest.mark.parametrize("weight", [5e-324, 3e-322, 1e-310])
def test_logistic_loss_subnormal_weights_to_the_last_unit(weight):
    from linbook.logistic.logistic_regression import logistic_loss
    X, y = _logit_data()
    w = np.array([0.3, 1.0, -1.0])
    sw = np.full(len(y), weight)
    F, g, _ = logistic_loss(w, X, y, sample_weight=sw, hessian=False)
    F_mp, g_mp = _mp_logistic(w, X, y, sw)
    unit = 5e-324
    assert abs(F - float(F_mp)) <= max(unit, 1e-15 * abs(F))
    np.testing.assert_allclose(g, [float(v) for v in g_mp], rtol=1e-13, atol=unit)


@pytest.mark.parametrize("penalised", [[1.0, np.inf, 1.0], [1.0, np.nan, 0.0], [-1.0, 1.0, 1.0]])
def test_logistic_loss_refuses_penalised_negative_or_not_finite(penalised):
    from linbook.logistic.logistic_regression import logistic_loss
    X, y = _logit_data()
    with pytest.raises(ValueError, match="penalised"):
        logistic_loss(np.zeros(3), X, y, 1.0, penalised=penalised)


# --- LDA / RDA: subnormal features ------------------------------------------------------------------------------
# old: with every feature ~1e-313 (subnormal), b_c = Sigma^{-1} (mu_c - m) in the units of X (~1e313) overflowed:
# LDA's predict_proba was NaN for every row (a RuntimeWarning only), RDA refused the fit ("shrinkage too small ...
# rank 3 < D = 3") on full-rank data. The oracle: the same fit on the features scaled back by 2^1040 (exact).

def _three_classes():
    rng = np.random.default_rng(5)
    X, y = rng.normal(size=(60, 3)), rng.integers(0, 3, 60)
    return X + y[:, None] * 0.8, y


@pytest.mark.parametrize("model", [linbook.discriminant.LDA(), linbook.discriminant.RDA(0.3)], ids=["LDA", "RDA"])
@pytest.mark.parametrize("exponent", [-1040, -1060])
def test_lda_subnormal_features_match_the_rescaled_fit(model, exponent):
    from sklearn.base import clone
    X, y = _three_classes()
    Xs = np.ldexp(X, exponent)
    Xr = np.ldexp(Xs, -exponent)                    # the subnormal data's own values, scaled exactly
    ref = clone(model).fit(Xr, y)
    with pytest.warns(linbook.base.LinbookWarning, match="betas_"):
        fitted = clone(model).fit(Xs, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        P = fitted.predict_proba(Xs)
        lj = fitted.predict_joint_log_proba(Xs)
    np.testing.assert_allclose(P, ref.predict_proba(Xr), atol=1e-13)
    assert fitted.predict(Xs).tolist() == ref.predict(Xr).tolist()
    with pytest.raises(ValueError, match="units used in fit"):   # rows ~2^1040 standard deviations away
        fitted.predict_proba(np.ldexp(Xr[:5], 2))
    # log N in the units of X: the reference's minus D log(2^exponent)
    np.testing.assert_allclose(lj, ref.predict_joint_log_proba(Xr) - 3 * exponent * np.log(2.0), rtol=1e-12)


# --- FisherLDA: subnormal features ------------------------------------------------------------------------------
# old: scalings_ in the units of X (~1e313) overflowed to inf and transform refused the training rows themselves
# ("the projection of some rows of X overflows float64 ... rows far larger than the training data").

@pytest.mark.parametrize("exponent", [-1040, -1060])
def test_fisher_lda_subnormal_features_match_the_rescaled_fit(exponent):
    X, y = _three_classes()
    Xs = np.ldexp(X, exponent)
    Xr = np.ldexp(Xs, -exponent)
    ref = linbook.discriminant.FisherLDA().fit(Xr, y)
    with pytest.warns(linbook.base.LinbookWarning, match="scalings_"):
        fitted = linbook.discriminant.FisherLDA().fit(Xs, y)
    np.testing.assert_allclose(fitted.transform(Xs), ref.transform(Xr), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(fitted.eigenvalues_, ref.eigenvalues_, rtol=1e-12)
