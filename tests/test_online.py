"""linbook.online: streaming estimators against batch solutions, scikit-learn and the readable references."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression as SkLogit
from sklearn.linear_model import Ridge
from sklearn.linear_model import SGDClassifier as SkSGDC
from sklearn.linear_model import SGDRegressor as SkSGDR
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import linbook.online.rls as rls_module
import linbook.online.sgd as sgd_module
from linbook.base import DivergenceError
from linbook.online import (LMS, OnlineGradientDescent, RecursiveLeastSquares, SGDClassifier, SGDRegressor,
                            best_fixed_parameter, learning_rate_schedule, sgd_per_sample)


def _reg(n=500, d=4, seed=0, scales=None):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * (np.ones(d) if scales is None else np.asarray(scales))
    y = X @ rng.standard_normal(d) + 1.5 + 0.3 * rng.standard_normal(n)
    return X, y


def _clf(n=2000, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ np.linspace(1, -1, d) + 0.3)))).astype(int)
    return X, y


def _sparse(X, density=0.4, seed=0):
    """X with most entries zeroed, as CSR (and the same matrix dense)."""
    mask = np.random.default_rng(seed).random(X.shape) < density
    Xd = np.where(mask, X, 0.0)
    return Xd, sp.csr_matrix(Xd)


# ----------------------------------------------------------------- RLS = batch least squares

@pytest.mark.parametrize("fit_intercept", [True, False])
def test_rls_one_pass_equals_batch_least_squares(fit_intercept):
    X, y = _reg(800, 5, scales=[1, 3, 0.2, 5, 1])
    A = np.c_[X, np.ones(len(y))] if fit_intercept else X
    w = np.linalg.lstsq(A, y, rcond=None)[0]
    rls = RecursiveLeastSquares(fit_intercept=fit_intercept)
    for s in range(0, len(y), 113):                       # uneven chunks
        rls.partial_fit(X[s:s + 113], y[s:s + 113])
    got = np.r_[rls.coef_, rls.intercept_] if fit_intercept else rls.coef_
    np.testing.assert_allclose(got, w, rtol=0, atol=1e-10)
    np.testing.assert_allclose(rls.P_, np.linalg.inv(A.T @ A), rtol=1e-8, atol=1e-12)


def test_rls_with_prior_equals_ridge_and_weights():
    X, y = _reg(300, 4, seed=1)
    for a in (0.1, 10.0):
        rls = RecursiveLeastSquares(prior_precision=a).fit(X, y)
        ref = Ridge(alpha=a).fit(X, y)          # (1/2)||r||^2 + (a/2)||w||^2, intercept free
        np.testing.assert_allclose(rls.coef_, ref.coef_, rtol=1e-9, atol=1e-10)
        assert rls.intercept_ == pytest.approx(ref.intercept_, abs=1e-9)
    s = np.random.default_rng(2).uniform(0, 3, len(y))
    s[:5] = 0.0
    rls = RecursiveLeastSquares(prior_precision=0.5).fit(X, y, sample_weight=s)
    ref = Ridge(alpha=0.5).fit(X, y, sample_weight=s)
    np.testing.assert_allclose(rls.coef_, ref.coef_, rtol=1e-9, atol=1e-10)
    rls = RecursiveLeastSquares(prior_precision=2.0, fit_intercept=False, noise_variance=4.0).fit(X, y)
    np.testing.assert_allclose(rls.covariance_, 4.0 * np.linalg.inv(X.T @ X + 2.0 * np.eye(4)), rtol=1e-8)


def test_rls_rank_deficient_without_prior_raises():
    X, y = _reg(3, 5)
    with pytest.raises(ValueError, match="rank deficient"):
        RecursiveLeastSquares().fit(X, y)
    RecursiveLeastSquares(prior_precision=1.0).fit(X, y)    # a prior makes it well posed
    X, y = _reg(200, 3)
    with pytest.raises(ValueError, match="rank deficient"):   # an exactly duplicated column
        RecursiveLeastSquares().fit(np.c_[X, X[:, 1]], y)
    with pytest.raises(ValueError, match="rank deficient"):   # a column equal to the intercept's
        RecursiveLeastSquares().fit(np.c_[X, np.full(200, 3.0)], y)


def test_rls_badly_scaled_features_still_exact():
    rng = np.random.default_rng(20)
    X = rng.standard_normal((500, 3)) * np.array([1e4, 1.0, 1e-4])
    y = X @ np.array([1e-4, 1.0, 1e4]) + 0.1 * rng.standard_normal(500)
    w = np.linalg.lstsq(np.c_[X, np.ones(500)], y, rcond=None)[0]
    rls = RecursiveLeastSquares().fit(X, y)
    np.testing.assert_allclose(np.r_[rls.coef_, rls.intercept_], w, rtol=1e-8, atol=1e-10)
    X[:, 1] = 0.0                                  # a dead column: truly rank deficient
    with pytest.raises(ValueError, match="rank deficient"):
        RecursiveLeastSquares().fit(X, y)


@pytest.mark.parametrize("offset", [1e8, 1e10, 1e12])
def test_rls_offset_column_equals_ridge_and_chunks_equal_fit(offset):
    # a flat prior on b: streaming x - c changes only b, so an offset column is well posed (it was refused)
    X, y = _reg(300, 4, seed=5)
    X[:, 1] += offset
    s = (np.arange(300) % 3 + 1).astype(float)
    for sw in (None, s):
        rls = RecursiveLeastSquares(prior_precision=0.5).fit(X, y, sample_weight=sw)
        # the oracle: ridge by lstsq on x - x_0 (exact at these offsets) with a free intercept column. sklearn's
        # Ridge centres by a weighted mean that is off by eps * offset, so the centred columns do not sum to 0
        # and its coef is off by up to 1e-7 at 1e12 (rtol 1e-6 below); the intercept column absorbs that here.
        root = np.sqrt(np.ones(300) if sw is None else sw)
        design = np.c_[root[:, None] * (X - X[0]), root]
        ridge_rows = np.c_[np.sqrt(0.5) * np.eye(4), np.zeros(4)]
        sol = np.linalg.lstsq(np.vstack([design, ridge_rows]), np.r_[root * y, np.zeros(4)], rcond=None)[0]
        np.testing.assert_allclose(rls.coef_, sol[:4], rtol=1e-12, atol=0)
        assert rls.intercept_ == pytest.approx(sol[4] - sol[:4] @ X[0], rel=1e-12)
        ref = Ridge(alpha=0.5).fit(X, y, sample_weight=sw)
        np.testing.assert_allclose(rls.coef_, ref.coef_, rtol=1e-6, atol=0)
        chunks = RecursiveLeastSquares(prior_precision=0.5)
        for a in range(0, 300, 70):
            chunks.partial_fit(X[a:a + 70], y[a:a + 70], sample_weight=None if sw is None else sw[a:a + 70])
        np.testing.assert_allclose(chunks.coef_, rls.coef_, rtol=1e-10, atol=0)
        assert chunks.intercept_ == pytest.approx(rls.intercept_, rel=1e-10)
    X[:, 1] -= offset - 5.0       # P_ is over [coef, intercept] in the caller's coordinates (not the shifted ones)
    Xa = np.c_[X, np.ones(300)]
    np.testing.assert_allclose(RecursiveLeastSquares().fit(X, y).P_, np.linalg.inv(Xa.T @ Xa), rtol=1e-6, atol=0)


def test_rls_huge_weight_fits_through_its_row():
    X, y = _reg(40, 3, seed=6)
    s = np.ones(40)
    s[0] = 1e200
    rls = RecursiveLeastSquares(prior_precision=0.5).fit(X, y, sample_weight=s)
    # the limit: the ridge fit of the other rows through (x_0, y_0)
    D, r = X[1:] - X[0], y[1:] - y[0]
    w = np.linalg.lstsq(np.vstack([D, np.sqrt(0.5) * np.eye(3)]), np.r_[r, np.zeros(3)], rcond=None)[0]
    np.testing.assert_allclose(rls.coef_, w, rtol=1e-8)
    assert rls.predict(X[:1])[0] == pytest.approx(y[0], rel=1e-12)


def test_rls_stream_of_single_rows_starts_without_a_prior():
    """partial_fit keeps the rows of a design that is still rank deficient (a warning says so, the model
    interpolates them with the minimum-norm solution, P_ is not defined); once the rows pin the model
    down it is the batch answer over all of them. fit on too few rows still raises."""
    X, y = _reg(40, 5)
    model = RecursiveLeastSquares()
    for i in range(5):                                 # 1..5 rows for 6 parameters
        with pytest.warns(UserWarning, match="minimum-norm"):
            model.partial_fit(X[i:i + 1], y[i:i + 1])
        np.testing.assert_allclose(model.predict(X[:i + 1]), y[:i + 1], rtol=1e-9, atol=1e-9)
        with pytest.raises(AttributeError, match="rank deficient"):
            model.P_
    assert not hasattr(model, "P_") and model.n_samples_seen_ == 5
    for i in range(5, 40):
        model.partial_fit(X[i:i + 1], y[i:i + 1])
    w = np.linalg.lstsq(np.c_[X, np.ones(40)], y, rcond=None)[0]
    np.testing.assert_allclose(np.r_[model.coef_, model.intercept_], w, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(model.P_, np.linalg.inv(np.c_[X, np.ones(40)].T @ np.c_[X, np.ones(40)]),
                               rtol=1e-8, atol=1e-12)
    with pytest.raises(ValueError, match="rank deficient"):
        RecursiveLeastSquares().fit(X[:3], y[:3])


def test_rls_rank_deficient_message_states_the_prior_in_use():
    X, y = _reg(3, 5)
    with pytest.raises(ValueError, match=r"prior_precision = 0 \(a flat prior on the intercept\)"):
        RecursiveLeastSquares().fit(X, y)
    with pytest.raises(ValueError, match=r"prior_precision = 0:"):
        RecursiveLeastSquares(fit_intercept=False).fit(X, y)


# ----------------------------------------------------------------- SGD against scikit-learn and the reference

def test_sgd_regressor_matches_sklearn_plain_sgd_with_weights():
    X, y = _reg(300, 3, seed=2)
    s = np.random.default_rng(3).uniform(0.2, 2.0, 300)
    a = SkSGDR(learning_rate="constant", eta0=0.01, penalty=None, shuffle=False, max_iter=2, tol=None)
    b = SGDRegressor(learning_rate="constant", eta0=0.01, average=False, shuffle=False, max_iter=2)
    a.fit(X, y, sample_weight=s)
    b.fit(X, y, sample_weight=s)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-10)
    assert b.intercept_ == pytest.approx(a.intercept_[0], rel=1e-10)


def test_sgd_classifier_matches_sklearn_plain_sgd_and_penalty_convention():
    X, y = _clf(500, seed=3)
    a = SkSGDC(loss="log_loss", learning_rate="constant", eta0=0.05, penalty=None, shuffle=False, max_iter=2,
               tol=None).fit(X, y)
    b = SGDClassifier(learning_rate="constant", eta0=0.05, average=False, shuffle=False, max_iter=2).fit(X, y)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-9)
    np.testing.assert_allclose(b.intercept_, a.intercept_, rtol=1e-9)
    # lam on the summed loss is sklearn's alpha = lam / n (sklearn's shrink is the same)
    a = SkSGDC(loss="log_loss", learning_rate="constant", eta0=0.05, alpha=0.01, shuffle=False, max_iter=2,
               tol=None).fit(X, y)
    b = SGDClassifier(lam=0.01 * 500, learning_rate="constant", eta0=0.05, average=False, shuffle=False,
                      max_iter=2).fit(X, y)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-9)


@pytest.mark.parametrize("loss", ["squared_error", "log_loss", "perceptron"])
@pytest.mark.parametrize("options", [dict(), dict(batch_size=7), dict(lam_n=0.05, average=30),
                                     dict(adagrad=True, batch_size=3), dict(adagrad=True, lam_n=0.02),
                                     dict(average=True, weights=True)])
@pytest.mark.parametrize("sparse", [False, True])
def test_compiled_kernel_equals_per_sample_reference(loss, options, sparse):
    X, y = (_reg(200, 3, seed=4) if loss == "squared_error" else _clf(200, seed=4))
    if sparse:
        X, Xs = _sparse(X, seed=5)
    options = dict(options)
    s = np.random.default_rng(6).uniform(0.5, 2, 200) if options.pop("weights", False) else None
    lam_n = options.pop("lam_n", 0.0)
    ref, path = sgd_per_sample(X, y, loss=loss, eta=lambda k: 0.3 * (1 + k) ** -0.75, n_epochs=3,
                               random_state=5, lam_n=lam_n, sample_weight=s, **options)
    kw = dict(lam=lam_n * 200, fit_intercept=False, learning_rate="robbins_monro", eta0=0.3, tau0=1.0,
              kappa=0.75, max_iter=3, random_state=5, average=options.pop("average", False), **options)
    est = SGDRegressor(**kw) if loss == "squared_error" else SGDClassifier(loss=loss, **kw)
    est.fit(Xs if sparse else X, y, sample_weight=s)
    np.testing.assert_allclose(np.ravel(est.coef_), ref, rtol=1e-10, atol=1e-12)
    assert est.t_ == path.shape[0] - 1


def test_intercept_and_multinomial_kernels_equal_numpy_loops():
    """fit_intercept = a column of ones with the same step; softmax SGD = a numpy softmax loop."""
    X, y = _clf(150, seed=7)
    ref, _ = sgd_per_sample(np.c_[X, np.ones(150)], y, loss="log_loss", eta=0.1, n_epochs=2, random_state=1)
    est = SGDClassifier(eta0=0.1, average=False, max_iter=2, random_state=1).fit(X, y)
    np.testing.assert_allclose(np.r_[est.coef_.ravel(), est.intercept_], ref, rtol=1e-10)
    rng = np.random.default_rng(8)
    X = rng.standard_normal((120, 3))
    y = rng.integers(0, 3, 120)
    W, b = np.zeros((3, 3)), np.zeros(3)
    for i in range(120):
        z = W @ X[i] + b
        p = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
        p[y[i]] -= 1.0
        W -= 0.2 * np.outer(p, X[i])
        b -= 0.2 * p
    for Xin in (X, sp.csr_matrix(X)):
        est = SGDClassifier(eta0=0.2, average=False, shuffle=False, max_iter=1).fit(Xin, y)
        np.testing.assert_allclose(est.coef_, W, rtol=1e-10)
        np.testing.assert_allclose(est.intercept_, b, rtol=1e-10)


@pytest.mark.parametrize("kw", [dict(), dict(lam=30.0, batch_size=5), dict(adagrad=True, lam=3.0),
                                dict(lam=5.0, average=10, learning_rate="optimal")])
def test_sparse_fit_equals_dense_fit(kw):
    """Text-like data: the CSR kernel (weight-scale and lazy-average tricks) = the dense loop."""
    rng = np.random.default_rng(9)
    Xd, Xs = _sparse(rng.standard_normal((300, 40)), density=0.1)
    y = (Xd @ rng.standard_normal(40) > 0).astype(int)
    for est in (SGDClassifier(random_state=0, **kw), SGDRegressor(random_state=0, **kw)):
        target = y if isinstance(est, SGDClassifier) else Xd @ np.arange(40.0)
        a, b = clone(est).fit(Xd, target), clone(est).fit(Xs, target)
        np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(b.intercept_, a.intercept_, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(b.predict(Xs), a.predict(Xd), rtol=1e-9, atol=1e-9)


def test_averaging_is_the_mean_of_the_iterates():
    X, y = _reg(150, 3, seed=6)
    _, path = sgd_per_sample(X, y, eta=0.02, n_epochs=1, shuffle=False)
    est = SGDRegressor(fit_intercept=False, learning_rate="constant", eta0=0.02, average=True,
                       shuffle=False, max_iter=1).fit(X, y)
    np.testing.assert_allclose(est.coef_, path[1:].mean(axis=0), rtol=1e-11)
    est2 = SGDRegressor(fit_intercept=False, learning_rate="constant", eta0=0.02, average=50,
                        shuffle=False, max_iter=1).fit(X, y)
    np.testing.assert_allclose(est2.coef_, path[50:].mean(axis=0), rtol=1e-11)


def test_averaged_sgd_reaches_logistic_mle_on_a_large_stream():
    """Stated tolerance: ||theta - theta_MLE|| < 0.03 after one pass over 60 000 samples (MLE s.e. ~0.01)."""
    X, y = _clf(60_000, 4, seed=7)
    mle = SkLogit(C=np.inf, tol=1e-10, max_iter=1000).fit(X, y)
    est = SGDClassifier(batch_size=4, learning_rate="robbins_monro", eta0=1.0, kappa=0.51, average=1000)
    for s in range(0, len(y), 5000):
        est.partial_fit(X[s:s + 5000], y[s:s + 5000], classes=[0, 1])
    err = np.linalg.norm(np.r_[est.coef_.ravel() - mle.coef_.ravel(), est.intercept_ - mle.intercept_])
    assert err < 0.03


def test_defaults_reach_the_penalised_optimum():
    """NLL + lam/2 ||w||^2 is sklearn LogisticRegression with C = 1/lam; the defaults (averaged SGD,
    eta0='auto') get within 0.02 of it in 5 epochs (the optimum's standard error is ~0.02)."""
    X, y = _clf(20_000, 3, seed=8)
    lam = 200.0
    ref = SkLogit(C=1 / lam, tol=1e-10, max_iter=1000).fit(X, y)
    est = SGDClassifier(lam=lam, random_state=0).fit(X, y)
    np.testing.assert_allclose(est.coef_, ref.coef_, atol=0.02)
    Xr, yr = _reg(20_000, 3, seed=8, scales=[1, 3, 0.5])
    w = np.linalg.lstsq(np.c_[Xr, np.ones(len(yr))], yr, rcond=None)[0]
    reg = SGDRegressor(random_state=0).fit(Xr, yr)      # noise sd 0.3: the lstsq s.e. is ~0.002
    np.testing.assert_allclose(np.r_[reg.coef_, reg.intercept_], w, atol=0.01)


def test_multinomial_sgd_close_to_multinomial_mle():
    rng = np.random.default_rng(9)
    X = rng.standard_normal((6000, 2))
    logits = X @ np.array([[1.0, -1.0, 0.0], [0.5, 0.5, -1.0]])
    y = np.array(["a", "b", "c"])[np.argmax(logits + rng.gumbel(size=logits.shape), axis=1)]
    ref = SkLogit(C=np.inf, max_iter=1000).fit(X, y)
    est = SGDClassifier(random_state=0).fit(X, y)
    assert est.coef_.shape == (3, 2)
    centred = lambda W: W - W.mean(axis=0)   # noqa: E731  softmax parameters are identified up to a shift
    np.testing.assert_allclose(centred(est.coef_), centred(ref.coef_), atol=0.06)
    np.testing.assert_allclose(est.predict_proba(X).sum(axis=1), 1.0)
    np.testing.assert_allclose(est.predict_log_proba(X), np.log(est.predict_proba(X)), atol=1e-12)
    assert np.mean(est.predict(X) == ref.predict(X)) > 0.98


def test_adagrad_and_optimal_schedule_fit():
    X, y = _reg(2000, 3, seed=10, scales=[1, 10, 0.3])
    w = np.linalg.lstsq(np.c_[X, np.ones(len(y))], y, rcond=None)[0]
    ada = SGDRegressor(adagrad=True, eta0=0.5, average=False, max_iter=5, random_state=0).fit(X, y)
    assert np.max(np.abs(np.r_[ada.coef_, ada.intercept_] - w)) < 0.05
    opt = SGDRegressor(lam=2.0, learning_rate="optimal", eta0=0.005, max_iter=3, random_state=0).fit(X, y)
    assert opt.score(X, y) > 0.99


@pytest.mark.parametrize("x_scale, y_scale", [(1e8, 1.0), (1e-8, 1.0), (1e4, 1.0), (1.0, 1e8), (1.0, 1e-8),
                                                (1e-6, 1e6)])
def test_adagrad_auto_step_follows_the_units_of_x_and_y(x_scale, y_scale):
    """eta0='auto' with adagrad: the fit on (X a, y b) is the fit on (X, y) with coef_ times b / a.
    Adagrad moves each parameter by about eta0 a step whatever its gradient's size, so a fixed eta0 = 1
    crawled towards weights of 1e8 or overshot weights of 1e-8 (R^2 = -8e10 on X * 1e8, no warning)."""
    X, y = _reg(500, 4, seed=21)
    y = y + 3.0
    Xa = np.c_[X, np.ones(len(y))]
    best = 1.0 - np.sum((y - Xa @ np.linalg.lstsq(Xa, y, rcond=None)[0]) ** 2) / np.sum((y - y.mean()) ** 2)
    ref = SGDRegressor(adagrad=True, random_state=0).fit(X, y)
    assert ref.score(X, y) > best - 0.01
    fit = SGDRegressor(adagrad=True, random_state=0).fit(X * x_scale, y * y_scale)
    assert fit.score(X * x_scale, y * y_scale) > best - 0.01
    np.testing.assert_allclose(fit.coef_ * x_scale / y_scale, ref.coef_, rtol=1e-3, atol=1e-3)
    clf_ref = SGDClassifier(adagrad=True, random_state=0).fit(X, (y > 3.0).astype(int))
    clf = SGDClassifier(adagrad=True, random_state=0).fit(X * x_scale, (y > 3.0).astype(int))
    assert np.mean(clf.predict(X * x_scale) == clf_ref.predict(X)) > 0.99


def test_learning_rate_schedule_values():
    k = np.arange(1, 5)
    np.testing.assert_allclose(learning_rate_schedule(k, "robbins_monro", eta0=2.0, tau0=3.0, kappa=0.5),
                               2.0 / np.sqrt(3.0 + k))
    np.testing.assert_allclose(learning_rate_schedule(k, "optimal", eta0=0.5, lam_n=0.1),
                               1.0 / (0.1 * (1 / (0.1 * 0.5) + k - 1)))
    assert learning_rate_schedule(7, "constant", eta0=0.3) == 0.3
    with pytest.raises(ValueError):
        learning_rate_schedule(1, "bogus")


# ----------------------------------------------------------------- divergence and feature scale

@pytest.mark.parametrize("std", [1e2, 1e4, 1e6])
def test_defaults_do_not_diverge_on_integer_features(std):
    """Plain integer features with std 1e2..1e6: the defaults fit (eta0='auto'), a fixed step raises."""
    rng = np.random.default_rng(11)
    X = np.round(rng.standard_normal((3000, 3)) * std)
    y = X @ (np.array([1.0, -2.0, 0.5]) / std) + 3.0 + 0.1 * rng.standard_normal(3000)
    A = np.c_[X, np.ones(3000)]
    best = A @ np.linalg.lstsq(A, y, rcond=None)[0]
    for est in (SGDRegressor(random_state=0), LMS(max_iter=5)):
        pred = est.fit(X, y).predict(X)
        assert np.all(np.isfinite(pred))
        assert np.sqrt(np.mean((pred - best) ** 2)) < 0.05 * np.std(y)
    ogd = OnlineGradientDescent().fit(A, y)
    assert np.all(np.isfinite(ogd.coef_)) and np.mean(ogd.losses_[-500:]) < np.mean(ogd.losses_[:500])
    for est in (SGDRegressor(eta0=0.1), LMS(eta0=0.1), OnlineGradientDescent(eta0=1.0)):
        with pytest.raises(DivergenceError, match="scale the features"):
            est.fit(A if isinstance(est, OnlineGradientDescent) else X, y)


def test_penalty_step_overshoot_is_an_error():
    X, y = _reg(50, 2)
    with pytest.raises(DivergenceError, match="lower eta0"):
        SGDRegressor(lam=500.0, eta0=1.0).fit(X, y)


def test_auto_step_makes_fit_scale_invariant():
    """With eta0='auto' scaling the features by s scales the weights by 1/s (the iterates are the same)."""
    X, y = _reg(400, 3, seed=12)
    base = SGDRegressor(random_state=0).fit(X, y)
    for s in (1e-8, 1e6):
        other = SGDRegressor(random_state=0).fit(X * s, y)
        np.testing.assert_allclose(other.coef_ * s, base.coef_, rtol=1e-9)
        assert other.intercept_ == pytest.approx(base.intercept_, rel=1e-9)


# ----------------------------------------------------------------- partial_fit over chunks = fit

@pytest.mark.parametrize("batch_size", [1, 4])
def test_partial_fit_chunks_equal_fit_sgd(batch_size):
    X, y = _clf(400, seed=11)
    kw = dict(batch_size=batch_size, eta0=0.2, average=True, adagrad=True)
    full = SGDClassifier(shuffle=False, max_iter=1, **kw).fit(X, y)
    part = SGDClassifier(**kw)
    for s in range(0, 400, 40):          # chunk sizes are multiples of batch_size
        part.partial_fit(X[s:s + 40], y[s:s + 40], classes=np.array([0, 1]))
    np.testing.assert_allclose(part.coef_, full.coef_, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(part.intercept_, full.intercept_, rtol=1e-12, atol=1e-14)
    Xr, yr = _reg(400, seed=11)
    full = SGDRegressor(shuffle=False, max_iter=1, batch_size=batch_size, eta0=0.05).fit(Xr, yr)
    part = SGDRegressor(batch_size=batch_size, eta0=0.05)
    for s in range(0, 400, 40):
        part.partial_fit(Xr[s:s + 40], yr[s:s + 40])
    np.testing.assert_allclose(part.coef_, full.coef_, rtol=1e-12)


def test_partial_fit_chunks_equal_fit_lms_and_rls():
    X, y = _reg(300, 3, seed=12)
    full = LMS(eta0=0.05, max_iter=1).fit(X, y)
    part = LMS(eta0=0.05)
    for s in range(0, 300, 37):
        part.partial_fit(X[s:s + 37], y[s:s + 37])
    np.testing.assert_allclose(part.coef_, full.coef_, rtol=1e-13)
    full = RecursiveLeastSquares(prior_precision=0.5).fit(X, y)
    part = RecursiveLeastSquares(prior_precision=0.5)
    for s in range(0, 300, 37):
        part.partial_fit(X[s:s + 37], y[s:s + 37])
    np.testing.assert_allclose(part.coef_, full.coef_, rtol=1e-10)


def test_lms_is_delta_rule_and_stopping_rule():
    X, y = _reg(50, 2, seed=13)
    lms = LMS(eta0=0.1, max_iter=1, record_path=True, theta0=[0.5, -1.0, 2.0]).fit(X, y)
    theta = np.array([0.5, -1.0, 2.0])
    for i in range(50):
        xa = np.r_[1.0, X[i]]
        theta = theta - 0.1 * (theta @ xa - y[i]) * xa          # (8.87)
    np.testing.assert_allclose(np.r_[lms.intercept_, lms.coef_], theta, rtol=1e-12)
    assert lms.path_.shape == (51, 3)
    stop = LMS(eta0=0.1, max_iter=100, tol=1e-2).fit(X, y)
    assert stop.tol_reached_ and not stop.converged_          # the note's test fires away from the optimum
    d = np.diff(LMS(eta0=0.1, max_iter=100, record_path=True).fit(X, y).path_[: stop.t_ + 1], axis=0)
    assert np.sum(d[-1] ** 2) < 1e-2 and np.all(np.sum(d[:-1] ** 2, axis=1) >= 1e-2)
    decaying = LMS(eta0=0.1, learning_rate="robbins_monro", kappa=1.0, tau0=0.0, max_iter=1).fit(X, y)
    assert not decaying.converged_
    noiseless = LMS(max_iter=3000).fit(X, X @ [1.0, 2.0] - 1.0)   # residual -> 0: the optimum is reached
    assert noiseless.converged_


# ----------------------------------------------------------------- online gradient descent and regret

def test_ogd_projection_and_regret_bound():
    rng = np.random.default_rng(14)
    X = rng.uniform(-1, 1, (600, 3))
    y = X @ np.array([1.0, -0.5, 0.4]) + 0.3 * rng.standard_normal(600)
    R = 1.5
    G = np.max((R * np.linalg.norm(X, axis=1) + np.abs(y)) * np.linalg.norm(X, axis=1))
    ogd = OnlineGradientDescent(radius=R, eta0=2 * R / G)
    ogd.partial_fit(X[:300], y[:300]).partial_fit(X[300:], y[300:])
    assert np.linalg.norm(ogd.coef_) <= R + 1e-12 and ogd.losses_.shape == (600,)
    ks = np.array([10, 100, 600])
    reg = ogd.regret(X, y, ks)
    assert np.all(reg * ks <= 1.5 * 2 * R * G * np.sqrt(ks))
    assert reg[-1] < reg[0]
    theta, total = best_fixed_parameter(X, y, radius=0.5)
    assert np.linalg.norm(theta) <= 0.5 + 1e-8
    for _ in range(20):                # the constrained optimum beats random feasible points
        t = rng.standard_normal(3)
        t *= 0.5 * rng.random() / np.linalg.norm(t)
        assert total <= 0.5 * np.sum((X @ t - y) ** 2) + 1e-9
    thl, _ = best_fixed_parameter(X, (y > 0).astype(float), loss="log_loss")
    ref = SkLogit(C=np.inf, fit_intercept=False, tol=1e-12, max_iter=1000).fit(X, (y > 0).astype(int))
    np.testing.assert_allclose(thl, ref.coef_.ravel(), atol=1e-4)
    with pytest.raises(ValueError, match="samples played"):
        ogd.regret(X[:10], y[:10])


def test_ogd_kernel_equals_numpy_loop():
    rng = np.random.default_rng(15)
    X, y = rng.standard_normal((80, 3)), (rng.random(80) < 0.5).astype(float)
    for loss in ("squared_error", "log_loss", "absolute_error"):
        theta, losses = np.zeros(3), []
        for t in range(1, 81):
            z = theta @ X[t - 1]
            if loss == "squared_error":
                f, g = 0.5 * (z - y[t - 1]) ** 2, z - y[t - 1]
            elif loss == "log_loss":
                f, g = np.logaddexp(0, z) - y[t - 1] * z, 1 / (1 + np.exp(-z)) - y[t - 1]
            else:
                f, g = abs(z - y[t - 1]), np.sign(z - y[t - 1])
            losses.append(f)
            theta = theta - 0.3 / np.sqrt(t) * g * X[t - 1]
            if np.linalg.norm(theta) > 0.7:
                theta *= 0.7 / np.linalg.norm(theta)
        ogd = OnlineGradientDescent(loss=loss, radius=0.7, eta0=0.3).fit(X, y)
        np.testing.assert_allclose(ogd.coef_, theta, rtol=1e-12)
        np.testing.assert_allclose(ogd.losses_, losses, rtol=1e-12)


# ----------------------------------------------------------------- bad input

def test_partial_fit_bad_input_is_refused():
    X, y = _clf(100, seed=15)
    clf = SGDClassifier()
    with pytest.raises(ValueError, match="classes must be passed"):
        clf.partial_fit(X, y)
    clf.partial_fit(X[:50], y[:50], classes=[0, 1])
    with pytest.raises(ValueError, match="not in classes"):
        clf.partial_fit(X[:5], np.array([0, 1, 2, 1, 0]))
    with pytest.raises(ValueError, match="features"):
        clf.partial_fit(X[:5, :2], y[:5])
    with pytest.raises(ValueError, match="differ from the classes"):
        clf.partial_fit(X[:5], y[:5], classes=[0, 1, 2])
    Xn = X[:5].copy()
    Xn[2, 1] = np.nan
    for est, args in [(clf, (Xn, y[:5])), (SGDRegressor(), (Xn, np.ones(5))), (LMS(), (Xn, np.ones(5))),
                      (RecursiveLeastSquares(), (Xn, np.ones(5))), (OnlineGradientDescent(), (Xn, np.ones(5)))]:
        with pytest.raises(ValueError, match="NaN"):
            est.partial_fit(*args)
    for est in (SGDRegressor(), LMS(), RecursiveLeastSquares(prior_precision=1.0), OnlineGradientDescent()):
        est.partial_fit(X[:20], y[:20].astype(float))
        with pytest.raises(ValueError, match="features"):
            est.partial_fit(X[:5, :2], np.ones(5))
        with pytest.raises(ValueError, match="infinity"):
            est.partial_fit(X[:2], np.array([1.0, np.inf]))
        with pytest.raises(ValueError, match="samples"):
            est.partial_fit(X[:5], np.ones(4))


def test_bad_parameters_and_labels():
    X, y = _clf(50, seed=16)
    with pytest.raises(ValueError, match="at least 2 classes"):
        SGDClassifier().fit(X, np.zeros(50))
    with pytest.raises(ValueError, match="class labels"):
        SGDClassifier().fit(X, np.linspace(0, 1, 50))
    with pytest.raises(ValueError, match="kappa"):
        SGDClassifier(learning_rate="robbins_monro", kappa=0.5).fit(X, y)
    with pytest.raises(ValueError, match="lam > 0"):
        SGDRegressor(learning_rate="optimal").fit(X, y.astype(float))
    for bad in (dict(batch_size=0), dict(eta0=-1.0), dict(eta0="big"), dict(lam=-1.0), dict(average=-2),
                dict(max_iter=0)):
        with pytest.raises(ValueError, match=list(bad)[0]):
            SGDRegressor(**bad).fit(X, y.astype(float))
    with pytest.raises(ValueError, match="loss"):
        SGDClassifier(loss="hinge").fit(X, y)
    with pytest.raises(AttributeError, match="predict_proba"):
        SGDClassifier(loss="perceptron").fit(X, y).predict_proba(X)
    with pytest.raises(ValueError, match="features"):
        SGDClassifier().fit(X, y).predict(X[:, :2])
    with pytest.raises(ValueError, match="prior_precision"):
        RecursiveLeastSquares(prior_precision=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="radius"):
        OnlineGradientDescent(radius=0.0).fit(X, y)


# ----------------------------------------------------------------- sklearn conventions and progress

@pytest.mark.parametrize("est", [SGDRegressor(random_state=0), LMS(eta0=0.05, max_iter=5),
                                 RecursiveLeastSquares(prior_precision=0.1)])
def test_regressors_work_with_clone_pipeline_cv(est):
    X, y = _reg(200, 3, seed=17)
    c = clone(est)
    assert c.get_params() == est.get_params()
    scores = cross_val_score(make_pipeline(StandardScaler(), c), X, y, cv=3)
    assert np.all(scores > 0.9)


def test_classifier_works_with_clone_pipeline_cv():
    X, y = _clf(600, seed=18)
    labels = np.array(["no", "yes"])[y]
    est = SGDClassifier(batch_size=8, max_iter=5, random_state=0)
    scores = cross_val_score(make_pipeline(StandardScaler(), clone(est)), X, labels, cv=3)
    assert np.all(scores > 0.6)
    fitted = est.fit(X, labels)
    assert set(fitted.predict(X)) <= {"no", "yes"}
    np.testing.assert_allclose(fitted.predict_proba(X)[:, 1], 1 / (1 + np.exp(-fitted.decision_function(X))))
    same = clone(est).fit(X, labels)
    np.testing.assert_array_equal(same.coef_, fitted.coef_)       # random_state makes fit reproducible


def test_predict_does_not_write_to_the_estimator_and_feature_names():
    pd = pytest.importorskip("pandas")
    X, y = _reg(100, 3, seed=21)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    for est in (SGDRegressor(), LMS(), RecursiveLeastSquares(), OnlineGradientDescent(),
                SGDClassifier()):
        target = (y > np.median(y)).astype(int) if isinstance(est, SGDClassifier) else y
        est.fit(df, target)
        assert list(est.feature_names_in_) == ["a", "b", "c"]
        before = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in vars(est).items()}
        est.predict(df)
        assert set(vars(est)) == set(before)
        for k, v in before.items():
            now = vars(est)[k]
            assert np.array_equal(v, now) if isinstance(v, np.ndarray) else (v is now or v == now)
        with pytest.raises(ValueError, match="feature names"):
            est.predict(df[["c", "b", "a"]])


def test_verbose_progress_goes_to_stderr_only(capsys):
    X, y = _clf(200, seed=19)
    SGDClassifier(max_iter=3, verbose=1, random_state=0).fit(X, y)
    out, err = capsys.readouterr()
    assert out == "" and err.count("epoch") == 3 and "mean loss" in err
    SGDClassifier(max_iter=3, random_state=0).fit(X, y)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("make", [lambda: SGDRegressor(random_state=0), lambda: LMS(),
                                  lambda: OnlineGradientDescent(), lambda: SGDClassifier(random_state=0)])
@pytest.mark.parametrize("k", [700, 1000])
def test_features_whose_squares_underflow_run_in_units_near_one(make, k):
    """Rows with ||x||^2 below 1e-300: per-sample steps cannot move the weights (the fit stayed at zero,
    silently); then a ValueError said to scale the features. Now the fit scales them itself (a power of two,
    ``schedules.feature_scale``, also where every square underflowed to 0): the weights of ``X 2^-k`` are those
    of ``X`` times ``2^k`` (to the last bits: the two fits may run one in numpy, one compiled)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    est = make()
    y = (X[:, 0] > 0).astype(int) if isinstance(est, SGDClassifier) else rng.normal(size=200)
    tiny = est.fit(np.ldexp(X, -k), y).coef_.copy()
    np.testing.assert_allclose(tiny, np.ldexp(make().fit(X, y).coef_, k), rtol=1e-14)


@pytest.mark.parametrize("w", [1e-300, 1e-100, 1e100, 1e300])
def test_sgd_auto_step_is_invariant_to_the_scale_of_sample_weight(w):
    """Without a penalty, uniform sample weights do not change the minimiser; eta0='auto'
    divides by the largest weight, so SGD's iterates do not change either (tiny weights left
    the weights at zero, huge ones diverged)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + 0.3 * rng.normal(size=300)
    ref = SGDRegressor(random_state=0).fit(X, y)
    m = SGDRegressor(random_state=0).fit(X, y, sample_weight=np.full(300, w))
    np.testing.assert_allclose(m.coef_, ref.coef_, rtol=1e-10)
    yc = (y > 0).astype(int)
    refc = SGDClassifier(random_state=0).fit(X, yc)
    mc = SGDClassifier(random_state=0).fit(X, yc, sample_weight=np.full(300, w))
    np.testing.assert_allclose(mc.coef_, refc.coef_, rtol=1e-10)


@pytest.mark.parametrize("budget", [10 ** 9, 0], ids=["numpy", "compiled"])
@pytest.mark.parametrize("options", [{}, dict(average=False), dict(adagrad=True), dict(batch_size=7),
                                     dict(lam=1.0, learning_rate="optimal")])
def test_sgd_target_overflow_names_the_target_as_the_cure(monkeypatch, budget, options):
    """An overflowed squared loss stops the fit in both the numpy and the compiled epochs, whatever the
    kind of step (the compiled loop once let an infinite loss pass under reassociation), and the
    failed call leaves the model as it was. Only adagrad, whose steps keep the targets' units, meets it
    now: the other fits run on targets near 1 (``schedules.target_units``), and targets near 1e200, in
    ``fit`` or in a stream's later chunk, give the weights of targets near 1 times their scale."""
    monkeypatch.setattr(sgd_module, "_numpy_steps_left", [budget])
    rng = np.random.default_rng(4)
    X = rng.normal(size=(200, 3))
    first, later = rng.normal(size=200), rng.normal(size=200)
    model = SGDRegressor(random_state=0, **options)
    if options.get("adagrad"):
        with pytest.raises(ValueError, match="scale the target y"):
            model.fit(X, later * 1e200)
        assert not hasattr(model, "coef_")
        return
    model.partial_fit(X, first).partial_fit(X, np.ldexp(later, 665))
    ref = SGDRegressor(random_state=0, **options).partial_fit(X, np.ldexp(first, -665)).partial_fit(X, later)
    np.testing.assert_array_equal(model.coef_, np.ldexp(ref.coef_, 665))


@pytest.mark.parametrize("options", [{}, dict(average=False), dict(batch_size=7), dict(lam=1.0, eta0=0.01),
                                     dict(lam=1.0, learning_rate="optimal")])
@pytest.mark.parametrize("exponent", [-900, -600, 600, 1000])
def test_sgd_and_lms_fits_scale_with_extreme_targets(options, exponent):
    """``y 2^k`` gives the weights of ``y`` times ``2^k`` exactly, for targets far beyond the squared loss's
    range (``schedules.target_units``). Before, targets near 2^-600 made every summed loss 0, so the
    stop rule never fired (1000 epochs, the weights 2e-2 from the fit on ``y``), and targets near 2^600
    made the loss overflow into a false divergence error."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(150, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + 0.3 + 0.1 * rng.normal(size=150)
    ref = SGDRegressor(random_state=0, **options).fit(X, y)
    m = SGDRegressor(random_state=0, **options).fit(X, y * 2.0 ** exponent)
    assert m.n_iter_ == ref.n_iter_
    assert np.array_equal(m.coef_, ref.coef_ * 2.0 ** exponent)
    assert m.intercept_ == ref.intercept_ * 2.0 ** exponent
    lms_ref = LMS(loss_tol=1e-3, max_iter=300).fit(X, y)
    lms = LMS(loss_tol=1e-3, max_iter=300).fit(X, y * 2.0 ** exponent)
    assert lms.n_iter_ == lms_ref.n_iter_ < 300
    assert np.array_equal(lms.coef_, lms_ref.coef_ * 2.0 ** exponent)


# ----------------------------------------------------------------- RLS: solving and the recursion
# against each other and the batch solution (was tests/test_rls.py)
def _rls_data(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * rng.uniform(0.5, 3.0, d)
    y = X @ rng.standard_normal(d) + 2.0 + 0.3 * rng.standard_normal(n)
    s = rng.uniform(0.0, 2.0, n)
    s[::7] = 0.0                                         # zero weights leave rows out
    return X, y, s


def _rls_stream(model, X, y, s, chunk):
    """The first 100 rows (enough to pin the 41 parameters down without a prior), then chunks."""
    model.partial_fit(X[:100], y[:100], sample_weight=s[:100])
    for i in range(100, len(y), chunk):
        model.partial_fit(X[i:i + chunk], y[i:i + chunk], sample_weight=s[i:i + chunk])
    return model


@pytest.mark.parametrize("d", [5, 40])
@pytest.mark.parametrize("prior_precision", [0.0, 0.5])
def test_solving_and_the_recursion_give_the_same_posterior(monkeypatch, d, prior_precision):
    """Each chunk goes by the cheaper exact route (solving A m = r, or the recursion on P); forced to one
    route, or switching between them as the chunk sizes change, the posterior is the batch one."""
    X, y, s = _rls_data(900, d, seed=d)
    sizes = [100, 1, 3, 250, 2, 1, 60, 7, 200, 1]            # small and large chunks, in turn
    edges = np.cumsum([0, *sizes, 900 - sum(sizes)])

    def stream(route):
        if route is not None:
            monkeypatch.setattr(rls_module, "_solving_is_cheaper", lambda n_rows, p: route)
        model = RecursiveLeastSquares(prior_precision=prior_precision)
        for a, b in zip(edges[:-1], edges[1:]):
            model.partial_fit(X[a:b], y[a:b], sample_weight=s[a:b])
        monkeypatch.undo()
        return model

    Xa = np.c_[X, np.ones(len(y))]
    A = Xa.T @ (s[:, None] * Xa) + np.diag(np.r_[np.full(d, prior_precision), 0.0])
    want = np.linalg.solve(A, Xa.T @ (s * y))
    for model in (stream(None), stream(True), stream(False)):
        np.testing.assert_allclose(np.r_[model.coef_, model.intercept_], want, rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(model.P_, np.linalg.inv(A), rtol=1e-8, atol=1e-12)
        np.testing.assert_allclose(model.covariance_, model.P_)


@pytest.mark.parametrize("d", [8, 80])
def test_a_stream_of_like_chunks_estimates_the_condition_once(monkeypatch, d):
    """Solving A m = r after each chunk needs cond(A) below _SOLVE_COND: rows only add to A, so one LAPACK
    estimate bounds it for the chunks after (until the diagonal has grown ~1e6-fold); a chunk that makes A
    ill-conditioned is still caught (test_a_heavy_row_in_a_large_late_chunk_goes_through_the_recursion)."""
    from scipy.linalg import lapack

    X, y, s = _rls_data(3000, d, seed=3)
    estimates = []

    def counted(*args, **kwargs):
        estimates.append(1)
        return dpocon(*args, **kwargs)

    dpocon = lapack.dpocon
    monkeypatch.setattr(lapack, "dpocon", counted)
    model = RecursiveLeastSquares(prior_precision=0.5)
    for a in range(0, 3000, 100):
        model.partial_fit(X[a:a + 100], y[a:a + 100], sample_weight=s[a:a + 100])
    # a first chunk of fewer than 2 p rows is held and solved again with the next one (_warm_start): one more
    assert len(estimates) == (1 if 100 >= 2 * (d + 1) else 2)
    Xa = np.c_[X, np.ones(len(y))]
    A = Xa.T @ (s[:, None] * Xa) + np.diag(np.r_[np.full(d, 0.5), 0.0])
    np.testing.assert_allclose(np.r_[model.coef_, model.intercept_], np.linalg.solve(A, Xa.T @ (s * y)),
                               rtol=1e-9, atol=1e-10)


def test_a_heavy_row_in_a_large_late_chunk_is_solved_by_qr():
    """Weight 1e200 on one row of a later chunk: A + s x x^T would round the earlier rows away, so that chunk
    and the later ones go by QR of a square root of A and the rows (no warning: nothing is lost), which fits
    exactly through the row (the limit of the weighted ridge fit). Before session 29 the recursion took it,
    with a warning that digits may be lost."""
    X, y, _ = _rls_data(400, 3, seed=8)
    s = np.ones(400)
    s[300] = 1e200
    model = RecursiveLeastSquares(prior_precision=0.5).partial_fit(X[:200], y[:200])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.partial_fit(X[200:], y[200:], sample_weight=s[200:])
    assert model._root is not None                                    # the square root's state
    assert model.predict(X[300:301])[0] == pytest.approx(y[300], rel=1e-12, abs=1e-12)
    D, r = np.delete(X, 300, axis=0) - X[300], np.delete(y, 300) - y[300]
    w = np.linalg.lstsq(np.vstack([D, np.sqrt(0.5) * np.eye(3)]), np.r_[r, np.zeros(3)], rcond=None)[0]
    np.testing.assert_allclose(model.coef_, w, rtol=1e-8)
    model.partial_fit(X[:300], y[:300])                               # more rows still go through it
    assert model.predict(X[300:301])[0] == pytest.approx(y[300], rel=1e-12, abs=1e-12)


def _weak_prior_on_wide_scales(seed):
    """Columns from 1e-5 to 4e5 with a weak prior: the first rows remove nearly all of P = 1 / prior along
    the large columns (gains s x'Px of 1e13), where the recursion's cancellation loses that many digits."""
    rng = np.random.default_rng(seed)
    scales = 10.0 ** np.array([-5.0, -2.0, 0.0, 2.0, 4.0, 5.6])
    X = rng.standard_normal((400, 6)) * scales
    y = (X / scales) @ rng.standard_normal(6) + rng.standard_normal(400)
    return X, y


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rows_of_large_gain_are_solved_for_not_cancelled(monkeypatch, seed):
    X, y = _weak_prior_on_wide_scales(seed)
    Xa, prior = np.c_[X, np.ones(400)], np.r_[np.full(6, 2.5e-4), 0.0]
    design = np.vstack([Xa, np.diag(np.sqrt(prior))])
    c = np.linalg.norm(design, axis=0)
    want = np.linalg.lstsq(design / c, np.r_[y, np.zeros(7)], rcond=None)[0] / c
    sizes = [1, 17, 5, 100, 100, 1, 2, 174]

    def stream():
        model, a = RecursiveLeastSquares(prior_precision=2.5e-4), 0
        for k in sizes:
            model.partial_fit(X[a:a + k], y[a:a + k])
            a += k
        return Xa @ np.r_[model.coef_, model.intercept_]

    scale = np.abs(Xa @ want).max()
    assert np.abs(stream() - Xa @ want).max() < 1e-9 * scale
    monkeypatch.setattr(rls_module, "_GAIN_LIMIT", np.inf)     # every row through the recursion
    monkeypatch.setattr(rls_module, "_solving_is_cheaper", lambda n_rows, p: False)
    monkeypatch.setattr(rls_module, "_HOLD_ROWS", 0)           # the first rows too (not held and solved)
    assert np.abs(stream() - Xa @ want).max() > 1e-6 * scale


def test_failed_chunk_leaves_the_model_as_it_was():
    X, y, s = _rls_data(300, 40, seed=4)
    m = RecursiveLeastSquares().partial_fit(X[:200], y[:200])
    before = (m.coef_.copy(), m.P_.copy(), m.n_samples_seen_, m._A.copy(), m._m.copy())
    with pytest.raises(ValueError):
        m.partial_fit(np.where(np.arange(40) == 3, np.nan, X[200:260]), y[200:260])
    with pytest.raises(ValueError, match="overflows"):   # rows of norm ~1e200: X^T X overflows
        m.partial_fit(X[200:260] * 1e200, y[200:260])
    np.testing.assert_array_equal(m.coef_, before[0])
    np.testing.assert_array_equal(m.P_, before[1])
    assert m.n_samples_seen_ == before[2]
    np.testing.assert_array_equal(m._A, before[3])
    np.testing.assert_array_equal(m._m, before[4])
    m.partial_fit(X[200:], y[200:])                      # and it continues from there
    np.testing.assert_allclose(m.coef_, RecursiveLeastSquares().fit(X, y).coef_, rtol=1e-9, atol=1e-10)


def test_later_chunks_are_still_checked():
    X, y, _ = _rls_data(100, 3, seed=5)
    m = RecursiveLeastSquares().partial_fit(X[:50], y[:50])
    with pytest.raises(ValueError, match="features"):
        m.partial_fit(X[50:, :2], y[50:])
    bad = X[50:].copy()
    bad[4, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        m.partial_fit(bad, y[50:])
    with pytest.raises(ValueError, match="NaN"):
        m.partial_fit(X[50:], np.where(np.arange(50) == 2, np.nan, y[50:]))


@pytest.mark.parametrize("model", [SGDRegressor, LMS])
@pytest.mark.parametrize("param", ["tau0", "kappa"])
@pytest.mark.parametrize("bad", [[1.0], None, 1j, "0.5"])
def test_schedule_numbers_are_checked_under_every_schedule(model, param, bad):
    """tau0 and kappa are read under every schedule: a list, None or a complex number was a raw
    'float() argument must be ...' TypeError naming no parameter under the constant schedule."""
    X, y = _reg(60, 2, seed=3)
    with pytest.raises(ValueError, match=f"'{param}' parameter of {model.__name__}.*Set {param} to"):
        model(**{param: bad}).fit(X, y)


def test_adagrad_auto_step_takes_its_scale_from_the_first_non_zero_targets():
    """A stream whose first chunk has only zero targets: the target's scale comes from a later chunk (it
    was fixed at 1 by the first, and targets of 1e6 then crawled)."""
    X, y = _reg(2000, 3, seed=4)
    y = y * 1e6
    model = SGDRegressor(adagrad=True, random_state=0)
    model.partial_fit(X[:50], np.zeros(50))
    for i in range(50, 2000, 50):
        model.partial_fit(X[i:i + 50], y[i:i + 50])
    assert model.score(X, y) > 0.9


def test_rls_far_row_in_the_first_chunk_gives_the_answer_of_a_stream_of_rows():
    """Session 18 (s18fuzz): a row 1e9 times another among the first chunk's 40 moved the centre (then the
    weighted mean) to it, and left the other rows below the rounding of A: fit refused a well-posed ridge
    problem, partial_fit warned and published coefficients 95 % off. Now the centre is a weighted median and
    a chunk that cannot be solved whole is taken in halves: the answer of the stream of single rows."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    X[-1] = 1e9 * X[0] + 1e-3 * rng.standard_normal(3)
    y = X @ (rng.standard_normal(3) / np.linalg.norm(X, axis=0) * np.sqrt(40)) + 0.5 + 1e-3 * rng.standard_normal(40)
    rows = RecursiveLeastSquares(prior_precision=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)       # the recursion alone: "may have lost digits"
        for i in range(40):
            rows.partial_fit(X[i:i + 1], y[i:i + 1])
        whole = RecursiveLeastSquares(prior_precision=1.0).fit(X, y)
        chunk = RecursiveLeastSquares(prior_precision=1.0).partial_fit(X, y)
    # the ridge problem by orthogonal factorisation (intercept unpenalised): its condition ~1e9 limits it
    A = np.vstack([np.column_stack([X, np.ones(40)]), np.c_[np.eye(3), np.zeros(3)]])
    exact = np.linalg.lstsq(A, np.r_[y, np.zeros(3)], rcond=None)[0]
    for model in (whole, chunk):
        np.testing.assert_allclose(model.coef_, rows.coef_, rtol=1e-9)
        np.testing.assert_allclose(model.intercept_, rows.intercept_, rtol=1e-9)
        np.testing.assert_allclose(model.coef_, exact[:3], rtol=1e-5)


def test_sgd_classifier_probability_of_the_unlikely_class_in_the_tail():
    """``p(y = 0) = sigmoid(-z)``, not ``1 - sigmoid(z)`` (0 for ``z`` above ~37): exact against mpmath, as
    ``predict_log_proba`` already was."""
    import mpmath

    from linbook.online import SGDClassifier

    X = np.r_[np.linspace(-1.0, 1.0, 40)][:, None]
    model = SGDClassifier(random_state=0).fit(X, (X[:, 0] > 0).astype(int))
    far = np.array([[-800.0], [-60.0], [-5.0], [5.0], [60.0], [800.0]]) / max(abs(float(model.coef_.ravel()[0])), 1e-3)
    z = model.decision_function(far)
    ref = np.array([[float(1 / (1 + mpmath.exp(mpmath.mpf(float(v))))), float(1 / (1 + mpmath.exp(-mpmath.mpf(float(v)))))]
                    for v in z])
    np.testing.assert_allclose(model.predict_proba(far), ref, rtol=1e-14, atol=1e-320)
    np.testing.assert_allclose(np.exp(model.predict_log_proba(far)), model.predict_proba(far), rtol=1e-13, atol=1e-320)


@pytest.mark.parametrize("k, j", [(150, -500), (300, -500), (100, -860), (-300, 450), (-200, 0)])
@pytest.mark.parametrize("name", ["sgd", "sgd-robbins-monro", "lms", "ogd"])
def test_online_fits_scale_with_features_and_targets_apart(name, k, j):
    """``X 2^k`` and ``y 2^j`` give the weights times ``2^(j-k)`` exactly while they are normal numbers. A
    step's factor ``eta r`` is about ``r / ||x||^2``: with squared row norms used as they were up to 2^900
    it underflowed (features 2^300, targets 2^-500: ``coef_ = 0`` with no warning; features 2^100,
    targets 2^-860: 6e-2 off) or overflowed into a false divergence error (features 2^-300, targets 2^450).
    Rows beyond ``schedules.SAFE_SQUARED_NORM`` now run in units near 1."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + 0.3 + 0.1 * rng.normal(size=40)
    make = {"sgd": lambda: SGDRegressor(random_state=0, max_iter=30),
            "sgd-robbins-monro": lambda: SGDRegressor(random_state=0, max_iter=30, average=False,
                                                      learning_rate="robbins_monro"),
            "lms": lambda: LMS(max_iter=30), "ogd": lambda: OnlineGradientDescent()}[name]
    if name == "ogd":
        X = np.c_[X, np.ones(40)]
    ref = make().fit(X, y)
    m = make().fit(X * 2.0 ** k, y * 2.0 ** j)
    np.testing.assert_allclose(m.coef_ * 2.0 ** (k - j), ref.coef_, rtol=1e-12)


def _stream(model, chunks):
    for X, y in chunks:
        model.partial_fit(X, y)
    return model


@pytest.mark.parametrize("name", ["sgd", "lms"])
@pytest.mark.parametrize("k", [0, 300, -300, 700])
def test_a_stream_whose_targets_change_scale_follows_them(name, k):
    """A first chunk of targets near 1e-160, then targets near 1: the units ``d`` the first chunk picked made the
    later squared losses overflow ("scale the target y: its values reach 1e150", though none exceeds 10). A
    chunk whose targets leave ``2^+-64`` in the stream's units now picks ``d`` anew, the state rescaled exactly.
    Oracle: the stream with every target times ``2^k`` gives the weights times ``2^k``, bit for bit."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 3)) + [3.0, 0.0, 0.0]
    y = X @ [1.0, -2.0, 0.5] + 0.1 * rng.standard_normal(40)
    y[:5] *= 1e-160
    make = {"sgd": lambda: SGDRegressor(random_state=0), "lms": LMS}[name]
    chunks = [(X[:5], y[:5]), (X[5:20], y[5:20]), (X[20:], y[20:])]
    ref = _stream(make(), chunks)
    got = _stream(make(), [(A, np.ldexp(b, k)) for A, b in chunks])
    assert np.all(np.isfinite(ref.coef_)) and np.any(ref.coef_ != 0)
    np.testing.assert_array_equal(got.coef_, np.ldexp(ref.coef_, k))


@pytest.mark.parametrize("name", ["sgd", "sgd-classifier", "lms", "ogd"])
@pytest.mark.parametrize("k", [0, 200, -200])
def test_a_stream_whose_features_change_scale_follows_them(name, k):
    """A first chunk of features near 1e-155, then features near 1: the first chunk's units made the later rows'
    squared norms overflow ("features of order 1e154 or larger"). A chunk beyond the window in the stream's units
    now picks them anew. Oracle: every feature times ``2^k`` gives the weights over ``2^k``, bit for bit. (The
    regressors' first chunk is at 1e-30: after one at 1e-155 their weights ~1e155 make the next chunk's squared
    loss ~1e310, beyond float64 in exact arithmetic too, a divergence error.)"""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 3)) + [3.0, 0.0, 0.0]
    y = X @ [1.0, -2.0, 0.5] + 0.1 * rng.standard_normal(40)
    if name == "sgd-classifier":
        y = (y > np.median(y)).astype(int)
    X[:5] *= 1e-30 if name in ("sgd", "ogd") else 1e-155
    make = {"sgd": lambda: SGDRegressor(random_state=0), "lms": LMS, "ogd": OnlineGradientDescent,
            "sgd-classifier": lambda: SGDClassifier(random_state=0)}[name]
    chunks = [(X[:5], y[:5]), (X[5:20], y[5:20]), (X[20:], y[20:])]
    first = {"classes": [0, 1]} if name == "sgd-classifier" else {}
    ref, got = make(), make()
    for i, (A, b) in enumerate(chunks):
        ref.partial_fit(A, b, **(first if i == 0 else {}))
        got.partial_fit(np.ldexp(A, k), b, **(first if i == 0 else {}))
    assert np.all(np.isfinite(ref.coef_)) and np.any(ref.coef_ != 0)
    np.testing.assert_array_equal(got.coef_, np.ldexp(ref.coef_, -k))


@pytest.mark.parametrize("make", [lambda: SGDRegressor(random_state=0), LMS, OnlineGradientDescent])
def test_coefficients_beyond_float64_are_a_clear_error(make):
    """Features near 1e-310 run scaled, but their coefficients (~1e310: they scale like y / x) exceed float64: the fit
    returned infinite ``coef_`` with only numpy's overflow warning. Now a clear error, and nothing fitted."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    model = make()
    with pytest.raises(ValueError, match="exceed float64"):
        model.fit(X * 1e-310, X @ [1.0, -2.0, 0.5])
    assert not hasattr(model, "coef_")
