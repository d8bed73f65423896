"""Adversarial cases for LogisticRegression / ProbitRegression: a right answer or a clear error."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse
from sklearn.exceptions import NotFittedError

import linbook
from tests.adversarial.harness import (SCALES, answer_or_clear_error, assert_all_finite, right_answer_required,
                                      unrepresentable)

ESTIMATORS = {
    **{f"logistic-{s}": (lambda s=s, **kw: linbook.LogisticRegression(solver=s, **kw))
       for s in ("auto", "newton", "lbfgs", "bfgs", "gd")},
    "probit": lambda **kw: linbook.ProbitRegression(**kw),
}


def _data(n=120, d=3, seed=0, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if classes == 2:
        y = (rng.random(n) < linbook.sigmoid(X @ np.arange(1, d + 1) * 0.7 + 0.2)).astype(int)
    else:
        y = np.argmax(X @ rng.normal(size=(d, classes)) + rng.gumbel(size=(n, classes)), axis=1)
    return X, y


def _bad_inputs():
    X, y = _data()
    Xn = X.copy()
    Xn[3, 1] = np.nan
    Xi = X.copy()
    Xi[0, 0] = np.inf
    return {
        "nan in X": (Xn, y, {}),
        "inf in X": (Xi, y, {}),
        "y too short": (X, y[:-1], {}),
        "one class": (X, np.zeros(len(y)), {}),
        "continuous y": (X, np.linspace(0, 1, len(y)), {}),
        "complex y": (X, y + 0j, {}),
        "no samples": (X[:0], y[:0], {}),
        "3-D X": (X[:, :, None], y, {}),
        "string X": (np.full(X.shape, "a"), y, {}),
        "y None": (X, None, {}),
        "negative weights": (X, y, {"sample_weight": -np.ones(len(y))}),
        "nan weights": (X, y, {"sample_weight": np.full(len(y), np.nan)}),
        "zero weights": (X, y, {"sample_weight": np.zeros(len(y))}),
        "one class with weight": (X, y, {"sample_weight": (y == 1).astype(float)}),
        "weights wrong length": (X, y, {"sample_weight": np.ones(3)}),
    }


#: The input each bad-input case corrupts: a clear error must name it.
CORRUPTS = {"nan in X": "X", "inf in X": "X", "y too short": "y", "one class": "y", "continuous y": "y",
            "complex y": "y", "no samples": "X", "3-D X": "X", "string X": "X", "y None": "y", "negative weights": "sample_weight",
            "nan weights": "sample_weight", "zero weights": "sample_weight",
            "one class with weight": "sample_weight", "weights wrong length": "sample_weight"}


@pytest.mark.parametrize("est", list(ESTIMATORS))
@pytest.mark.parametrize("case", list(_bad_inputs()))
def test_bad_input_gets_clear_error(est, case):
    X, y, kw = _bad_inputs()[case]
    out = answer_or_clear_error(lambda: ESTIMATORS[est]().fit(X, y, **kw), corrupts=CORRUPTS[case])
    assert out is None, f"{case}: accepted bad input"


@pytest.mark.parametrize("est", list(ESTIMATORS))
@pytest.mark.parametrize("param", [{"lam": -1.0}, {"lam": np.nan}, {"lam": np.inf}, {"tol": 0.0},
                                   {"tol": -1e-3}, {"max_iter": 0}, {"solver": "sgd"}])
def test_bad_parameters(est, param):
    X, y = _data()
    kw = {k: v for k, v in param.items() if k != "solver"}
    if "solver" in param:
        make = (lambda: linbook.LogisticRegression(solver=param["solver"])) if est != "probit" \
            else (lambda: linbook.ProbitRegression(solver=param["solver"]))
    else:
        make = lambda: ESTIMATORS[est](**kw)          # noqa: E731
    assert answer_or_clear_error(lambda: make().fit(X, y), corrupts=next(iter(param))) is None


@pytest.mark.parametrize("est", list(ESTIMATORS))
def test_predict_errors(est):
    X, y = _data()
    with pytest.raises(NotFittedError):
        ESTIMATORS[est]().predict(X)
    m = ESTIMATORS[est]().fit(X, y)
    for bad in (X[:, :2], np.full_like(X, np.nan), X[:, :, None]):
        assert answer_or_clear_error(lambda: m.predict(bad), corrupts="X") is None
    assert answer_or_clear_error(lambda: m.log_likelihood(X, y + 7), corrupts="y") is None


def _reference(est, X, y, lam=0.0):
    with warnings.catch_warnings():
        warnings.simplefilter("error")              # the unscaled problem is well posed
        return ESTIMATORS[est](lam=lam, tol=1e-10).fit(X, y)


@pytest.mark.parametrize("est", list(ESTIMATORS))
@pytest.mark.parametrize("scale", SCALES)
def test_feature_scale_scan(est, scale):
    """coef(X * s) = coef(X) / s (lam = 0, and lam * s^2 where finite): right answer or clear error."""
    X, y = _data(seed=1)
    ref = _reference(est, X, y)
    why = unrepresentable(ref.coef_, 1 / scale)                 # coef(X s) = coef(X) / s
    m = right_answer_required(lambda: ESTIMATORS[est](lam=0.0, tol=1e-10).fit(X * scale, y), unreachable=why)
    if m is None:
        return
    assert_all_finite(m.coef_, m.intercept_)
    assert m.converged_, f"not converged at scale {scale}"
    np.testing.assert_allclose(m.coef_ * scale, ref.coef_, rtol=1e-6)
    np.testing.assert_allclose(m.intercept_, ref.intercept_, rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(m.predict(X * scale), ref.predict(X))
    with np.errstate(over="ignore"):
        lam_s = 2.0 * np.float64(scale) ** 2
    if np.isfinite(lam_s) and lam_s > 0:
        ref2 = _reference(est, X, y, lam=2.0)
        m2 = right_answer_required(lambda: ESTIMATORS[est](lam=lam_s, tol=1e-10).fit(X * scale, y),
                                   unreachable=unrepresentable(ref2.coef_, 1 / scale))
        if m2 is not None:
            assert m2.converged_
            np.testing.assert_allclose(m2.coef_ * scale, ref2.coef_, rtol=1e-6)


@pytest.mark.parametrize("solver", ["newton", "lbfgs", "bfgs"])
@pytest.mark.parametrize("scale", SCALES)
def test_feature_scale_scan_multinomial(solver, scale):
    X, y = _data(n=300, seed=2, classes=3)
    ref = linbook.LogisticRegression(lam=0, solver=solver, tol=1e-10).fit(X, y)
    m = right_answer_required(
        lambda: linbook.LogisticRegression(lam=0, solver=solver, tol=1e-10).fit(X * scale, y),
        unreachable=unrepresentable(ref.coef_, 1 / scale))
    if m is None:
        return
    assert_all_finite(m.coef_, m.intercept_)
    assert m.converged_
    np.testing.assert_allclose(m.coef_ * scale, ref.coef_, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("scale", [1e-8, 1.0, 1e8])
def test_sparse_scale_scan(scale):
    X, y = _data(n=200, d=4, seed=3)
    X = X * (np.random.default_rng(0).random(X.shape) < 0.5)
    ref = linbook.LogisticRegression(lam=0, solver="lbfgs", tol=1e-10).fit(X, y)
    m = linbook.LogisticRegression(lam=0, solver="lbfgs", tol=1e-10).fit(scipy.sparse.csr_matrix(X * scale), y)
    assert m.converged_
    np.testing.assert_allclose(m.coef_ * scale, ref.coef_, rtol=1e-6)


@pytest.mark.parametrize("est", list(ESTIMATORS))
def test_degenerate_columns(est):
    """Constant, all-zero and duplicated columns: a finite optimum, not a LinAlgError."""
    X, y = _data(seed=4)
    Xd = np.column_stack([X, np.zeros(len(y)), np.full(len(y), 3.0), X[:, 0]])
    m = right_answer_required(lambda: ESTIMATORS[est](lam=1.0).fit(Xd, y))
    assert m is not None and m.converged_
    assert_all_finite(m.coef_, m.predict_proba(Xd))
    assert m.coef_[0, 3] == pytest.approx(0.0, abs=1e-9)
    np.testing.assert_allclose(m.coef_[0, 0], m.coef_[0, -1], rtol=1e-6)


@pytest.mark.parametrize("est", list(ESTIMATORS))
def test_separable_lam0_warns_not_converged(est):
    from linbook.base import SeparableDataWarning
    X, y, _ = linbook.datasets.make_separable(60, 2, random_state=0)
    with pytest.warns(SeparableDataWarning, match="lam > 0"):
        m = ESTIMATORS[est](lam=0.0).fit(X, y)
    assert not m.converged_ and m.separable_
    assert_all_finite(m.coef_, m.predict_proba(X))


@pytest.mark.parametrize("classes", (2, 3))
@pytest.mark.parametrize("dtype", (np.float32, np.float16))
@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_numpy_scalar_lam_is_the_same_number(name, dtype, classes):
    """``lam=np.float32(0.3)`` is the double ``float(np.float32(0.3))``: the same fit. Before, a numpy
    float32 lam times a Python float stayed float32 (NEP 50), the objective lost half its digits and
    the fit moved by ~1e-6 (relative), silently."""
    if name == "probit" and classes == 3:
        pytest.skip("ProbitRegression is binary")
    X, y = _data(classes=classes)
    lam = dtype(0.3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = ESTIMATORS[name](lam=lam).fit(X, y).predict_proba(X)
        want = ESTIMATORS[name](lam=float(lam)).fit(X, y).predict_proba(X)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("solver", ["gd", "lbfgs", "bfgs", "newton-cg"])
@pytest.mark.parametrize("scale", [1e-150, 1e-60, 1e-30, 1e-6, 0.3, 3.0, 1e50, 1e150])
def test_first_order_solvers_do_not_depend_on_the_scale_of_equal_weights(solver, scale):
    """Equal weights ``s`` give the unweighted minimiser (lam = 0). Gradient descent's first trial step
    was 1 whatever the weights: at ``s = 1e-6`` it crawled for 20,000 iterations and stopped 0.8 away,
    at 1e-30 .. 1e-99 and 1e50 it stopped at once (not converged). The first-order methods now minimise
    ``F / unit`` with ``unit`` the power of two nearest the mean weight."""
    rng = np.random.default_rng(11)
    X = rng.standard_normal((200, 3))
    y = (X @ np.array([1.0, -2.0, 0.5]) + rng.standard_normal(200) > 0).astype(int)
    want = linbook.LogisticRegression(lam=0.0, solver="newton").fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                   # no ConvergenceWarning
        got = linbook.LogisticRegression(lam=0.0, solver=solver).fit(X, y, sample_weight=np.full(200, scale))
    assert got.converged_
    np.testing.assert_allclose(got.coef_, want.coef_, rtol=1e-5)
    assert got.intercept_[0] == pytest.approx(want.intercept_[0], rel=1e-5, abs=1e-6)
