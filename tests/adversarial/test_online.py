"""Adversarial cases for linbook.online and linbook.Perceptron: bad input, feature scale, divergence.

"Right" here: the defaults are scale-equivariant (``eta0="auto"``, ``intercept_scaling="auto"``),
so fitting ``X * s`` must give the predictions of ``X`` (the weights divided by ``s``);
recursive least squares must give the least-squares predictions; a divergent step size
must raise ``DivergenceError``. A fit on bad input must raise an error that says what to do.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone, is_classifier
from sklearn.exceptions import ConvergenceWarning

from linbook.base import DivergenceError
from linbook.online import LMS, OnlineGradientDescent, RecursiveLeastSquares, SGDClassifier, SGDRegressor
from linbook.perceptron import Perceptron

from .harness import (SCALES, answer_or_clear_error, assert_all_finite, assert_clear_error, right_answer_required,
                      unrepresentable)

REGRESSORS = [SGDRegressor(random_state=0), SGDRegressor(batch_size=8, lam=1.0, random_state=0), LMS(max_iter=5),
              RecursiveLeastSquares(), RecursiveLeastSquares(prior_precision=1.0), OnlineGradientDescent()]
CLASSIFIERS = [SGDClassifier(random_state=0), SGDClassifier(loss="perceptron", random_state=0),
               Perceptron(random_state=0), Perceptron(form="dual", random_state=0),
               Perceptron(form="pocket", max_iter=20, random_state=0)]
ALL = REGRESSORS + CLASSIFIERS


def _name(est):
    return repr(est).replace(" ", "")


def _data(n=200, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = X @ np.array([1.0, -2.0, 0.5])[:d] + 0.7 + 0.1 * rng.standard_normal(n)
    return X, y, (X @ np.array([1.0, -2.0, 0.5])[:d] + 0.7 > 0).astype(int)


def _target(est, y, labels):
    return labels if is_classifier(est) else y


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return clone(est).fit(X, y)


# ------------------------------------------------------------------ bad input x every estimator

def _bad_inputs():
    X, y, labels = _data(30)
    Xn, Xi = X.copy(), X.copy()
    Xn[3, 1], Xi[4, 2] = np.nan, np.inf
    yn = y.copy()
    yn[2] = np.nan
    return {
        "nan in X": (Xn, y, labels),
        "inf in X": (Xi, y, labels),
        "nan in y": (X, yn, np.where(np.isnan(yn), np.nan, labels)),
        "1-D X": (X[:, 0], y, labels),
        "3-D X": (X[:, :, None], y, labels),
        "y shorter than X": (X, y[:-1], labels[:-1]),
        "2-D y": (X, np.c_[y, y], np.c_[labels, labels]),
        "strings in X": (np.full((30, 3), "a"), y, labels),
        "complex X": (X + 1j, y, labels),
        "complex y": (X, y + 0j, labels + 0j),
        "empty": (np.empty((0, 3)), np.empty(0), np.empty(0, dtype=int)),
        "no columns": (np.empty((30, 0)), y, labels),
        "y is None": (X, None, None),
    }


BAD = _bad_inputs()
#: The input each case corrupts: a clear error must name it.
CORRUPTS = {"nan in y": "y", "complex y": "y", "y shorter than X": "y", "2-D y": "y", "y is None": "y"}


@pytest.mark.parametrize("case", list(BAD))
@pytest.mark.parametrize("est", ALL, ids=_name)
def test_bad_input_gets_a_clear_error(est, case):
    X, y, labels = BAD[case]
    with pytest.raises(Exception) as info:
        _fit(est, X, _target(est, y, labels))
    assert_clear_error(info.value, CORRUPTS.get(case, "X"))


@pytest.mark.parametrize("est", CLASSIFIERS, ids=_name)
def test_one_class_and_continuous_labels(est):
    X, _, _ = _data(40)
    for y in (np.zeros(40, dtype=int), np.linspace(0, 1, 40)):
        with pytest.raises(ValueError) as info:
            _fit(est, X, y)
        assert_clear_error(info.value, "y")


@pytest.mark.parametrize("est", ALL, ids=_name)
def test_predict_bad_input_and_unfitted(est):
    X, y, labels = _data(60)
    with pytest.raises(Exception) as info:
        clone(est).predict(X)
    assert_clear_error(info.value, "fit")
    fitted = _fit(est, X, _target(est, y, labels))
    Xn = X.copy()
    Xn[0, 0] = np.nan
    for bad in (Xn, X[:, :2], np.full((3, 3), "a")):
        with pytest.raises(ValueError) as info:
            fitted.predict(bad)
        assert_clear_error(info.value, "X")


# ------------------------------------------------------------------ feature-scale scan

def _equivariant(est):
    """The default estimators whose fit on X * s equals the fit on X (weights / s)."""
    return not (isinstance(est, Perceptron) and est.intercept_scaling != "auto") and getattr(est, "lam", 0) == 0


SCANNED = [SGDRegressor(random_state=0), SGDRegressor(batch_size=8, random_state=0), LMS(max_iter=5),
           RecursiveLeastSquares(), OnlineGradientDescent(), SGDClassifier(random_state=0),
           SGDClassifier(loss="perceptron", random_state=0), Perceptron(intercept_scaling="auto", random_state=0),
           Perceptron(form="dual", intercept_scaling="auto", random_state=0)]


def _scan_cases():
    for est in SCANNED:
        for scale in SCALES:
            yield pytest.param(est, scale, id=f"{_name(est)}-{scale}")


@pytest.mark.parametrize("est, scale", list(_scan_cases()))
def test_feature_scale_scan(est, scale):
    X, y, labels = _data(200)
    if isinstance(est, OnlineGradientDescent):
        X = np.c_[X, np.ones(200)]                       # OGD has no intercept: a column of ones
    base = _fit(est, X, _target(est, y, labels))
    why = unrepresentable(base.coef_, 1 / scale)        # the weights of X * s are those of X over s
    if isinstance(est, Perceptron):                      # w = sum eta y x: scores scale like s^2
        why = why or unrepresentable(base.decision_function(X), scale, scale)
    if isinstance(est, RecursiveLeastSquares):           # covariance_ = (X'X)^-1 scales like 1 / s^2
        why = why or unrepresentable(np.diag(base.covariance_)[:-1], 1 / scale, 1 / scale)
    got = right_answer_required(lambda: _fit(est, X * scale, _target(est, y, labels)), unreachable=why)
    if got is None:
        return
    if isinstance(est, OnlineGradientDescent):
        assert_all_finite(got.coef_, what="coef_")
        np.testing.assert_allclose(got.coef_[:-1] * scale, base.coef_[:-1], rtol=1e-6)
        return
    pred, ref = got.predict(X * scale), base.predict(X)
    if is_classifier(est):
        np.testing.assert_array_equal(pred, ref)
        unit = scale ** 2 if isinstance(est, Perceptron) else 1.0     # w = sum eta y x: scores scale like x^2
        np.testing.assert_allclose(got.decision_function(X * scale) / unit, base.decision_function(X),
                                   rtol=1e-6, atol=1e-9)
    else:
        assert_all_finite(pred, what="predictions")
        np.testing.assert_allclose(pred, ref, rtol=1e-6, atol=1e-9 * np.std(y))


@pytest.mark.parametrize("scale", SCALES)
def test_rls_scan_equals_least_squares(scale):
    X, y, _ = _data(150)
    A = np.c_[X * scale, np.ones(150)]
    base = RecursiveLeastSquares().fit(X, y)
    why = unrepresentable(np.diag(base.covariance_)[:-1], 1 / scale, 1 / scale)
    got = right_answer_required(lambda: RecursiveLeastSquares().fit(X * scale, y), unreachable=why)
    if got is None:
        return
    w = np.linalg.lstsq(np.c_[X, np.ones(150)], y, rcond=None)[0]
    np.testing.assert_allclose(got.predict(X * scale), np.c_[X, np.ones(150)] @ w, rtol=1e-8, atol=1e-8)
    assert np.all(np.isfinite(A))


@pytest.mark.parametrize("scale", SCALES)
def test_textbook_perceptron_scan_separates_or_names_the_cure(scale):
    """intercept_scaling=1 (the textbook update b += eta y) is not scale-free: it must separate
    separable data or warn that the features are far from unit scale, naming the cure."""
    X, _, labels = _data(200)
    keep = np.abs(X @ np.array([1.0, -2.0, 0.5]) + 0.7) > 0.3           # a clear margin
    X, labels = X[keep], labels[keep]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # w = sum eta y x grows like s, the scores w'x like s^2
        why = unrepresentable(X @ X.T, scale, scale)
        got = right_answer_required(lambda: Perceptron(max_iter=50, random_state=0).fit(X * scale, labels),
                                    unreachable=why)
    if got is None:
        return
    if got.converged_:
        assert got.score(X * scale, labels) == 1.0
    else:
        assert any("intercept_scaling='auto'" in str(w.message) for w in caught), [str(w.message) for w in caught]


# ------------------------------------------------------------------ integer features, divergence

@pytest.mark.parametrize("std", [1e2, 1e3, 1e4, 1e5, 1e6])
@pytest.mark.parametrize("est", [SGDRegressor(random_state=0), LMS(max_iter=5), RecursiveLeastSquares(),
                                 SGDClassifier(random_state=0), Perceptron(intercept_scaling="auto", random_state=0)],
                         ids=_name)
def test_integer_features(est, std):
    rng = np.random.default_rng(1)
    X = np.round(rng.standard_normal((2000, 3)) * std)
    w = np.array([1.0, -2.0, 0.5]) / std
    y = X @ w + 3.0 + 0.1 * rng.standard_normal(2000)
    labels = (X @ w + 0.3 > 0).astype(int)
    got = _fit(est, X, _target(est, y, labels))
    if is_classifier(est):
        assert got.score(X, labels) > 0.97
    else:
        A = np.c_[X, np.ones(2000)]
        best = A @ np.linalg.lstsq(A, y, rcond=None)[0]
        pred = got.predict(X)
        assert_all_finite(pred, what="predictions")
        assert np.sqrt(np.mean((pred - best) ** 2)) < 0.05 * np.std(y)


@pytest.mark.parametrize("est", [SGDRegressor(eta0=10.0), SGDRegressor(eta0=10.0, batch_size=16),
                                 LMS(eta0=10.0), OnlineGradientDescent(eta0=1e3), SGDRegressor(lam=1e4, eta0=1.0),
                                 SGDRegressor(eta0=10.0, learning_rate="robbins_monro")], ids=_name)
def test_divergent_steps_raise(est):
    X, y, labels = _data(300)
    X = X * 30.0
    with pytest.raises(DivergenceError) as info:
        _fit(est, X, _target(est, y * 1e3, labels))
    assert_clear_error(info.value, ("eta0", "lam"))
    assert "Cure" in str(info.value)


def test_rls_ill_conditioned_recursion_is_reported():
    """A proper prior with features of 1e12: the Sherman-Morrison recursion loses precision."""
    rng = np.random.default_rng(2)
    X = rng.standard_normal((200, 3)) * np.array([1e12, 1.0, 1e-12])
    y = X @ np.array([1e-12, 1.0, 1e12]) + 0.01 * rng.standard_normal(200)
    got = answer_or_clear_error(lambda: RecursiveLeastSquares(prior_precision=1e-30, fit_intercept=False).fit(X, y),
                                corrupts="prior_precision")
    if got is not None:
        ridge = np.linalg.solve(X.T @ X + 1e-30 * np.eye(3), X.T @ y)
        np.testing.assert_allclose(got.predict(X), X @ ridge, rtol=1e-6, atol=1e-6 * np.std(y))


# ------------------------------------------------------------------ features beyond the squared-norm range

# Fits whose iterates scale exactly: on X * 2^k they run on X (a power of two is exact) and map back.
# A given eta0 is also the intercept's step, which does not scale: those cases fit no intercept.
EQUIVARIANT = [SGDRegressor(random_state=0), SGDRegressor(batch_size=8, lam=3.0, random_state=0),
               SGDRegressor(eta0=1e-3, lam=2.0, learning_rate="optimal", fit_intercept=False, random_state=0),
               SGDRegressor(eta0=1e-3, learning_rate="robbins_monro", average=False, fit_intercept=False,
                            random_state=0),
               SGDClassifier(random_state=0),
               SGDClassifier(loss="perceptron", eta0=1.0, fit_intercept=False, random_state=0),
               SGDClassifier(lam=1.0, max_iter=5, tol=None, random_state=0), LMS(max_iter=5),
               LMS(max_iter=3, eta0=0.01, record_path=True, theta0=[1.0, -1.0, 2.0], fit_intercept=False),
               OnlineGradientDescent(), OnlineGradientDescent(eta0=0.05, radius=1.5),
               OnlineGradientDescent(loss="log_loss")]


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("power", [1000, 500, -500, -530])
@pytest.mark.parametrize("est", EQUIVARIANT, ids=_name)
def test_power_of_two_scaled_features_give_the_scaled_fit(est, power, sparse):
    """X * 2^1000 or 2^500 (squared norms overflow or leave the safe range) and X * 2^-500 or
    2^-530 (they underflow): the fit of X, weights / 2^power.

    The given ``eta0``, ``lam`` and ``radius`` are mapped along (``eta0 / s^2``, ``lam s^2``,
    ``radius / s`` for X * s), so the fit is the one the same algorithm makes in exact arithmetic;
    powers at which they are not representable are skipped.
    """
    if sparse and not isinstance(est, (SGDRegressor, SGDClassifier)):
        return
    with np.errstate(over="ignore"):
        mapped = [np.ldexp(est.eta0, -2 * power) if not isinstance(est.eta0, str) else 1.0,
                  np.ldexp(float(getattr(est, "lam", 0.0)), 2 * power) if getattr(est, "lam", 0.0) else 1.0,
                  np.ldexp(float(est.radius), -power) if getattr(est, "radius", None) else 1.0]
    if not all(np.isfinite(m) and abs(m) >= np.finfo(float).tiny for m in mapped):
        pytest.skip("the mapped eta0, lam or radius is not representable at this power")
    X, y, labels = _data(120)
    if isinstance(est, OnlineGradientDescent):
        X = np.c_[X, np.ones(120)]
    t = (labels if est.loss == "log_loss" else y) if isinstance(est, OnlineGradientDescent) else _target(est, y,
                                                                                                        labels)
    scale = np.ldexp(1.0, power)
    params = {name: np.ldexp(value, {"eta0": -2 * power, "lam": 2 * power, "radius": -power}[name])
              for name, value in est.get_params().items()
              if name in ("eta0", "lam", "radius") and value is not None and not isinstance(value, str)}
    if isinstance(est, LMS) and est.theta0 is not None:
        params["theta0"] = np.asarray(est.theta0) / scale
    big = (lambda A: sp.csr_matrix(A)) if sparse else np.asarray
    base = _fit(est, big(X), t)
    got = _fit(clone(est).set_params(**params), big(X * scale), t)
    np.testing.assert_allclose(got.coef_ * scale, base.coef_, rtol=1e-12, atol=0)
    if hasattr(base, "intercept_"):
        np.testing.assert_allclose(got.intercept_, base.intercept_, rtol=1e-12, atol=0)
    if isinstance(est, LMS) and est.record_path:
        np.testing.assert_allclose(got.path_ * scale, base.path_, rtol=1e-12, atol=0)
    np.testing.assert_allclose(got.predict(big(X * scale)), base.predict(big(X)), rtol=1e-12, atol=1e-300)


def test_features_of_1e300_stream_in_the_units_of_the_first_chunk():
    """partial_fit keeps the power of two ``c`` of its first chunk: a stream of X * 1e300 is the
    stream of X * 1e300 * c (squared norms in range), weights times ``c``."""
    X, y, _ = _data(100)
    X = X * 1e300
    X[50:] *= 0.25                                     # the second chunk alone would pick another c
    c = 2.0 ** -int(np.frexp(np.max(np.abs(X[:50])))[1])
    for est in (SGDRegressor(), LMS(), OnlineGradientDescent()):
        base, got = clone(est), clone(est)
        for rows in (slice(0, 50), slice(50, 100)):
            base.partial_fit(X[rows] * c, y[rows])
            got.partial_fit(X[rows], y[rows])
        np.testing.assert_allclose(got.coef_, base.coef_ * c, rtol=1e-12, atol=0)
        np.testing.assert_array_equal(getattr(got, "intercept_", 0.0), getattr(base, "intercept_", 0.0))


@pytest.mark.parametrize("est, says", [(SGDRegressor(adagrad=True), "scale the features"),
                                       (LMS(tol=1e-6), "scale the features"),
                                       (SGDRegressor(eta0=0.01), "eta0='auto'"),
                                       (OnlineGradientDescent(eta0=0.01), "eta0='auto'")], ids=_name)
def test_not_scale_equivariant_at_1e300_says_what_to_do(est, says):
    """Adagrad (``adagrad_tau0`` in its steps) and LMS's absolute ``tol`` test do not scale with the
    features; a given eta0 of 0.01 on features of 1e300 overshoots every step by 1e598. Each refuses
    with the cure, and a refused fit leaves the model as it was."""
    X, y, _ = _data(60)
    if isinstance(est, OnlineGradientDescent):
        X = np.c_[X, np.ones(60)]
    with pytest.raises(ValueError) as info:
        _fit(est, X * 1e300, y)
    assert_clear_error(info.value, "X" if says == "scale the features" else "eta0")
    assert says in str(info.value)


def test_rls_chunk_of_features_near_1e150_after_ordinary_ones_warns_nothing():
    """A later chunk's features near 1e150 put ``X^T X``'s diagonal near 1e300; the bound on the diagonal below
    which later solves need no condition estimate then overflowed to inf (rightly: no finite diagonal passes it)
    and numpy printed ``RuntimeWarning: overflow encountered in multiply`` on a valid fit. Right answer: no
    warning, and the batch least-squares fit of all the rows (``LinearRegression``), to 1e-12."""
    from linbook import LinearRegression

    rng = np.random.default_rng(4)
    X = rng.normal(size=(60, 3)) * [1, 2, 0.5] + [0, 1, -1]
    y = X @ [1.0, -0.5, 2.0] + 0.7 + 0.3 * rng.normal(size=60)
    X[30:] *= 1e150
    model = RecursiveLeastSquares()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.partial_fit(X[:30], y[:30])
        model.partial_fit(X[30:], y[30:])
    batch = LinearRegression().fit(X, y)
    np.testing.assert_allclose(model.coef_, batch.coef_, rtol=1e-12)
    assert model.intercept_ == pytest.approx(batch.intercept_, rel=1e-12)


@pytest.mark.parametrize("offset", [1e8, 1e12, 1e14])
@pytest.mark.parametrize("chunk", [None, 10, 1])
@pytest.mark.parametrize("prior_precision", [0.0, 1.0])
@pytest.mark.parametrize("constant", [False, True])
def test_rls_target_offset_changes_only_the_intercept(offset, chunk, prior_precision, constant):
    """With a flat prior on the intercept, ``y + c`` changes only ``b`` (by ``c``), never ``w``. The filter
    centred the features but not the target: ``y + 1e12`` cost the weights ~1e-4 (a constant ``y`` of 1e12 gave
    ``coef_`` ~1e-4, not 0), though the stored targets minus ``c`` recover ``y`` exactly (steps of 1/16, at
    least the spacing of doubles near 1e14: every ``y + c`` here is exact). Right answer: the fit of ``y`` itself, on a problem of condition
    ~1 (so to 1e-11), for ``fit``, chunks of 10 rows and a stream of single rows; the intercept to the rounding of
    ``c``."""
    rng = np.random.default_rng(7)
    X = rng.standard_normal((60, 4))
    y = 0.0 * X[:, 0] if constant else np.round(X @ [4.8, -3.2, 1.6, 4.0]) / 16
    assert np.array_equal((y + offset) - offset, y)          # the shifted targets are exact

    def run(targets):
        model = RecursiveLeastSquares(prior_precision=prior_precision)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)     # single rows: rank deficient until 5 are in
            if chunk is None:
                return model.fit(X, targets)
            for start in range(0, 60, chunk):
                model.partial_fit(X[start:start + chunk], targets[start:start + chunk])
        return model

    got, ref = run(y + offset), run(y)
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=0, atol=1e-11 * max(np.abs(ref.coef_).max(), 0.1))
    assert abs(got.intercept_ - offset - ref.intercept_) <= 8 * np.finfo(float).eps * offset
