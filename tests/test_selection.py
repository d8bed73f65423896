"""Tests for linbook.selection against refitting (LeaveOneOut), SequentialFeatureSelector and
mutual_info_score."""

import numpy as np
import pytest
from sklearn.feature_selection import SequentialFeatureSelector
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.metrics import mutual_info_score
from sklearn.model_selection import KFold, LeaveOneOut, cross_val_predict
from sklearn.preprocessing import PolynomialFeatures

import linbook


def _reg(n=40, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = X[:, 0] - 2 * X[:, 2] + 0.5 + rng.normal(size=n)
    return X, y


def _loo_refit(est, X, y):
    return y - cross_val_predict(est, X, y, cv=LeaveOneOut())


def test_hat_diagonal_properties_and_qr():
    X, _ = _reg()
    h = linbook.hat_diagonal(X, fit_intercept=True)
    Phi = np.hstack([np.ones((len(X), 1)), X])
    H = Phi @ np.linalg.solve(Phi.T @ Phi, Phi.T)       # small N: the oracle may build H
    np.testing.assert_allclose(h, np.diag(H), atol=1e-12)
    assert h.sum() == pytest.approx(7.0)
    # rank-deficient X: leverages sum to the rank
    Xd = np.hstack([X, X[:, :1] * 2.0])
    assert linbook.hat_diagonal(Xd).sum() == pytest.approx(6.0)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_loocv_least_squares_equals_refitting(fit_intercept):
    X, y = _reg()
    mse, r = linbook.loocv_least_squares(X, y, fit_intercept=fit_intercept, return_residuals=True)
    ref = _loo_refit(LinearRegression(fit_intercept=fit_intercept), X, y)
    np.testing.assert_allclose(r, ref, rtol=1e-9, atol=1e-10)
    assert mse == pytest.approx(np.mean(ref ** 2), rel=1e-10)


def test_loocv_polynomial_degrees_equals_refitting():
    rng = np.random.default_rng(2)
    x = rng.uniform(-1, 1, size=(25, 1))
    y = np.sin(3 * x[:, 0]) + 0.2 * rng.normal(size=25)
    for deg in range(1, 7):
        P = PolynomialFeatures(deg, include_bias=False).fit_transform(x)
        ref = np.mean(_loo_refit(LinearRegression(), P, y) ** 2)
        assert linbook.loocv_least_squares(P, y) == pytest.approx(ref, rel=1e-7)


@pytest.mark.parametrize("alpha", [0.0, 0.1, 3.0, 100.0])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_loocv_ridge_equals_refitting(alpha, fit_intercept):
    X, y = _reg()
    mse, r = linbook.loocv_ridge(X, y, alpha, fit_intercept=fit_intercept, return_residuals=True)
    ref = _loo_refit(Ridge(alpha=alpha, fit_intercept=fit_intercept, solver="svd"), X, y)
    np.testing.assert_allclose(r, ref, rtol=1e-8, atol=1e-9)


def test_loocv_errors():
    X, y = _reg()
    with pytest.raises(ValueError, match="leverage"):
        linbook.loocv_least_squares(X[:7], y[:7])          # N = D + 1: every h_ii = 1
    Xn = X.copy(); Xn[0, 0] = np.nan
    with pytest.raises(ValueError):
        linbook.loocv_least_squares(Xn, y)
    with pytest.raises(ValueError):
        linbook.loocv_least_squares(X, y[:-1])
    with pytest.raises(ValueError, match="lam"):
        linbook.loocv_ridge(X, y, -1.0)
    with pytest.raises(ValueError):
        linbook.loocv_ridge(X, np.full_like(y, np.inf), 1.0)


def test_forward_and_backward_match_sequential_feature_selector():
    X, y = _reg(n=60, d=7)
    for k in (1, 3, 5):
        for direction, fn in (("forward", linbook.forward_selection), ("backward", linbook.backward_selection)):
            ours = fn(LinearRegression(), X, y, n_features=k, cv=5)
            sk = SequentialFeatureSelector(LinearRegression(), n_features_to_select=k, direction=direction,
                                           cv=5).fit(X, y)
            np.testing.assert_array_equal(ours.support, sk.get_support())
            assert ours.n_features == k


def test_forward_stopping_rule_finds_the_relevant_features():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(120, 10))
    y = 2 * X[:, 3] - 1.5 * X[:, 7] + 0.5 * rng.normal(size=120)
    res = linbook.forward_selection(LinearRegression(), X, y, cv=KFold(5, shuffle=True, random_state=0))
    assert res.order[:2] == [3, 7]
    assert all(b > a for a, b in zip(res.scores, res.scores[1:]))     # only improving steps are kept
    back = linbook.backward_selection(LinearRegression(), X, y, cv=KFold(5, shuffle=True, random_state=0))
    assert back.support[3] and back.support[7]
    assert back.scores[0] <= max(back.scores)


def test_selection_with_a_classifier_and_errors():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 5))
    y = (X[:, 1] > 0).astype(int)
    res = linbook.forward_selection(LogisticRegression(), X, y, n_features=1, cv=3)
    assert res.order == [1]
    with pytest.raises(ValueError, match="n_features"):
        linbook.forward_selection(LinearRegression(), X, y, n_features=0)
    with pytest.raises(ValueError, match="n_features"):
        linbook.backward_selection(LinearRegression(), X, y, n_features=6)


def test_mutual_information_equals_sklearn_and_kl_form():
    rng = np.random.default_rng(0)
    for _ in range(5):
        x = rng.integers(0, 4, size=200)
        y = np.where(rng.uniform(size=200) < 0.7, x % 2, rng.integers(0, 2, size=200))
        mi = linbook.mutual_information(x, y)
        assert mi == pytest.approx(mutual_info_score(x, y), rel=1e-12, abs=1e-15)
        pxy = np.array([[np.mean((x == a) & (y == b)) for b in range(2)] for a in range(4)])
        assert mi == pytest.approx(linbook.kl_divergence(pxy, np.outer(pxy.sum(1), pxy.sum(0))), rel=1e-12)
    # string labels, independence, identity
    assert linbook.mutual_information(["a", "b"] * 10, [0] * 20) == 0.0
    z = rng.integers(0, 3, size=300)
    assert linbook.mutual_information(z, z) == pytest.approx(mutual_info_score(z, z))
    scores = linbook.mutual_information_scores(np.column_stack([z, rng.integers(0, 3, 300)]), z)
    assert scores[0] > scores[1]


def test_mutual_information_and_kl_errors():
    with pytest.raises(ValueError, match="same length"):
        linbook.mutual_information([0, 1], [0, 1, 1])
    with pytest.raises(ValueError, match="NaN"):
        linbook.mutual_information([0.0, np.nan], [0, 1])
    with pytest.raises(ValueError, match="one-dimensional"):
        linbook.mutual_information(np.zeros((3, 2)), [0, 1, 1])
    with pytest.raises(ValueError, match="sum to 1"):
        linbook.kl_divergence([0.5, 0.6], [0.5, 0.5])
    assert linbook.kl_divergence([0.5, 0.5], [1.0, 0.0]) == np.inf
    assert linbook.kl_divergence([0.2, 0.8], [0.2, 0.8]) == 0.0


@pytest.mark.parametrize("s", [1e-150, 1e-12, 1e12, 1e150, 1e300])
def test_loocv_scale_invariance(s):
    rng = np.random.default_rng(7)
    X = rng.normal(size=(30, 3))
    y = X @ [1.0, -1.0, 0.5] + rng.normal(size=30)
    ref = linbook.loocv_least_squares(X, y)
    assert linbook.loocv_least_squares(X * s, y) == pytest.approx(ref, rel=1e-10)
    # ridge: (X s, lam s^2) is the same fit as (X, lam); lam s^2 capped where it overflows
    with np.errstate(over="ignore"):
        lam_s = 2.0 * np.float64(s) ** 2
    if np.isfinite(lam_s):
        assert linbook.loocv_ridge(X * s, y, lam_s) == pytest.approx(linbook.loocv_ridge(X, y, 2.0), rel=1e-10)
    out = linbook.loocv_ridge(X * s, y, 2.0)
    assert np.isfinite(out)


@pytest.mark.parametrize("p, q, ref", [
    # KL = 0.5 log(0.5 / 1e-320) + 0.5 log(0.5 / (1 - 1e-320)); p / q overflows for the subnormal q
    ([0.5, 0.5], [1.0, 1e-320], 0.5 * (np.log(0.5) - np.log(1e-320)) + 0.5 * np.log(0.5)),
    # a subnormal p: its term is ~1e-317, the other log(1 / 0.5)
    ([1e-320, 1.0], [0.5, 0.5], np.log(2.0)),
])
def test_kl_divergence_with_subnormal_probabilities(p, q, ref):
    """A subnormal q_k > 0 is not zero: KL is finite (p / q overflowed to inf, reported as KL = inf)."""
    assert linbook.kl_divergence(p, q) == pytest.approx(ref, rel=1e-14)


@pytest.mark.parametrize("x", [np.array([np.nan, np.nan, 1.0, 1.0, np.nan, 1.0], dtype=object),
                               np.array(["a", None, "a", None, "b", "b"], dtype=object)],
                         ids=["object-nan", "object-none"])
def test_mutual_information_refuses_missing_values_in_object_arrays(x):
    """NaN in an object array (a pandas column with gaps) was not caught: NaN != NaN made each missing
    entry a category of its own and the MI came out 0.693 for a true 0.057 (NaN as one category);
    None raised a raw TypeError from np.unique. Both are now the float path's clear error."""
    from tests.adversarial.harness import assert_clear_error
    with pytest.raises(ValueError) as info:
        linbook.mutual_information(x, [0, 0, 1, 1, 1, 0])
    assert_clear_error(info.value, "x")


def test_mutual_information_of_mixed_types_is_a_clear_error():
    from tests.adversarial.harness import assert_clear_error
    with pytest.raises(TypeError) as info:
        linbook.mutual_information(np.array([1, "a", 1, "a"], dtype=object), [0, 1, 0, 1])
    assert_clear_error(info.value, "x")
