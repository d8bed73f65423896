"""Adversarial cases for linbook.linear and BayesianLogisticRegression: bad inputs and scale scans.

A case passes when the estimator gives the right answer (stated per test: the scale-mapped
answer of the unscaled problem, or an optimality property) or a clear error.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from linbook.laplace import BayesianLogisticRegression
from linbook.linear import Lasso, LeastAbsoluteDeviation, LinearRegression, Ridge
from linbook.numerics import sigmoid

from .harness import SCALES, answer_or_clear_error, assert_all_finite, right_answer_required, unrepresentable

REGRESSORS = {
    "LinearRegression": lambda: LinearRegression(),
    "Ridge": lambda: Ridge(lam=1.5),
    "Lasso": lambda: Lasso(lam=4.0),
    "LeastAbsoluteDeviation": lambda: LeastAbsoluteDeviation(),
}
ALL = dict(REGRESSORS, BayesianLogisticRegression=lambda: BayesianLogisticRegression(prior_precision=0.5))


def _data(n=40, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * [1.0, 3.0, 0.5] + [2.0, -1.0, 0.0]
    y = X @ [1.0, -0.5, 2.0] + 0.7 + 0.3 * rng.standard_normal(n)
    return X, y


def _target(name, y):
    return (y > np.median(y)).astype(int) if name == "BayesianLogisticRegression" else y


def _bad_inputs():
    X, y = _data()
    Xn = X.copy(); Xn[3, 1] = np.nan
    Xi = X.copy(); Xi[0, 0] = np.inf
    yn = y.copy(); yn[2] = np.nan
    yi = y.copy(); yi[5] = -np.inf
    return {
        "nan in X": (Xn, y), "inf in X": (Xi, y), "nan in y": (X, yn), "inf in y": (X, yi),
        "short y": (X, y[:-1]), "1-D X": (X[:, 0], y), "empty X": (X[:0], y[:0]),
        "no features": (X[:, :0], y), "string X": (X.astype(str).astype(object) + "x", y),
        "complex X": (X + 1j, y), "complex y": (X, y + 0j), "2-column y": (X, np.column_stack([y, y])),
        "one sample": (X[:1], y[:1]), "constant X": (np.ones_like(X), y),
        "duplicate column": (np.column_stack([X, X[:, 0]]), y),
        "wide X": (np.random.default_rng(1).standard_normal((5, 30)), y[:5]),
        "1e308 in X": (np.where(np.arange(X.size).reshape(X.shape) == 4, 1e308, X), y),
        "subnormal X": (X * 1e-310, y),
    }


BAD = _bad_inputs()
#: The input each case corrupts: a clear error must name it.
CORRUPTS = {"nan in y": "y", "inf in y": "y", "complex y": "y", "short y": "y", "2-column y": "y", "one sample": ("X", "y")}


@pytest.mark.parametrize("case", sorted(BAD))
@pytest.mark.parametrize("name", sorted(ALL))
def test_bad_input_right_answer_or_clear_error(name, case):
    X, y = BAD[case]
    est = ALL[name]()
    out = answer_or_clear_error(lambda: est.fit(X, _target(name, y) if np.ndim(y) == 1 else y),
                                corrupts=CORRUPTS.get(case, "X"))
    if out is None:
        return
    assert_all_finite(est.coef_, est.intercept_, what=f"{name} coefficients on {case}")
    Xp = np.asarray(X, dtype=float)
    pred = answer_or_clear_error(lambda: est.predict(Xp), corrupts="X")
    if pred is not None and name != "BayesianLogisticRegression":
        assert_all_finite(pred, what="predictions")
        # the fitted model must be at least as good as the best constant (it contains it)
        yy = np.asarray(y, dtype=float)
        if name == "LeastAbsoluteDeviation":
            assert np.abs(yy - pred).sum() <= np.abs(yy - np.median(yy)).sum() * (1 + 1e-9) + 1e-300
        elif name in ("LinearRegression",):
            assert np.sum((yy - pred) ** 2) <= np.sum((yy - yy.mean()) ** 2) * (1 + 1e-9) + 1e-300


@pytest.mark.parametrize("name", sorted(ALL))
def test_unfitted_and_wrong_width(name):
    X, y = _data()
    est = ALL[name]()
    with pytest.raises(NotFittedError):
        est.predict(X)
    est.fit(X, _target(name, y))
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :2])


def _mapped(name, s):
    """(estimator on X * s, estimator on X, map: coef on X*s -> coef on X) with the right lam."""
    if name == "LinearRegression":
        return LinearRegression(), LinearRegression()
    if name == "LeastAbsoluteDeviation":
        return LeastAbsoluteDeviation(), LeastAbsoluteDeviation()
    if name == "Lasso":        # (X s, lam s) is (X, lam) divided by s
        return Lasso(lam=4.0 * s), Lasso(lam=4.0)
    return Ridge(lam=1.5), Ridge(lam=1.5 / s ** 2)    # (X s, lam) is (X, lam / s^2) / s


@pytest.mark.parametrize("s", SCALES)
@pytest.mark.parametrize("name", sorted(REGRESSORS))
def test_feature_scale_scan(name, s):
    X, y = _data(seed=2)
    with np.errstate(over="ignore", under="ignore"):
        on_scaled, on_unscaled = _mapped(name, np.float64(s))
    ref = on_unscaled.fit(X, y)
    why = unrepresentable(ref.coef_, 1 / s)             # coef(X s) = coef(X) / s
    out = right_answer_required(lambda: on_scaled.fit(X * s, y), unreachable=why)
    if out is None:
        return
    assert_all_finite(on_scaled.coef_, on_scaled.intercept_)
    if name == "LeastAbsoluteDeviation":      # non-unique minimiser: compare objective values
        obj = lambda w, b: np.abs(y - X @ w - b).sum()  # noqa: E731
        assert obj(on_scaled.coef_ * s, on_scaled.intercept_) == pytest.approx(obj(ref.coef_, ref.intercept_), rel=1e-9)
        return
    rtol = 1e-7 if name == "Lasso" else 1e-9     # lasso: the gap tolerance 1e-10 bounds |dw|^2
    np.testing.assert_allclose(on_scaled.coef_ * s, ref.coef_, rtol=rtol, atol=1e-9 * np.abs(ref.coef_).max())
    assert on_scaled.intercept_ == pytest.approx(ref.intercept_, rel=rtol, abs=1e-9)
    pred = on_scaled.predict(X * s)
    assert_all_finite(pred, what="predictions")


@pytest.mark.parametrize("s", (*SCALES, 1e-310))          # 1e-310: every column's largest entry subnormal
def test_lad_sparse_feature_scale_scan(s):
    """LeastAbsoluteDeviation on CSR X * s: as on dense X. Scaling a column whose largest entry is
    subnormal multiplied by 1 / 2**e, which overflows; linprog then refused "A_eq must not contain
    inf" (an error naming neither the input nor a cure)."""
    import scipy.sparse as sps

    X, y = _data(seed=2)
    ref = LeastAbsoluteDeviation().fit(X, y)
    why = unrepresentable(ref.coef_, 1 / s)
    est = LeastAbsoluteDeviation()
    with np.errstate(over="ignore", under="ignore"):
        Xs = sps.csr_matrix(X * np.float64(s))
    out = right_answer_required(lambda: est.fit(Xs, y), unreachable=why)
    if out is None:
        return
    obj = lambda w, b: np.abs(y - X @ w - b).sum()  # noqa: E731
    assert obj(est.coef_ * s, est.intercept_) == pytest.approx(obj(ref.coef_, ref.intercept_), rel=1e-9)


@pytest.mark.parametrize("c", SCALES)
@pytest.mark.parametrize("name", sorted(REGRESSORS))
def test_target_scale_scan(name, c):
    X, y = _data(seed=3)
    on_scaled = Lasso(lam=4.0 * c) if name == "Lasso" else REGRESSORS[name]()
    ref = REGRESSORS[name]().fit(X, y)
    why = unrepresentable(np.r_[ref.coef_, ref.intercept_], c)      # coef(X, y c) = c coef(X, y)
    out = right_answer_required(lambda: on_scaled.fit(X, y * c), unreachable=why, corrupts="y")
    if out is None:
        return
    assert_all_finite(on_scaled.coef_, on_scaled.intercept_)
    rtol = 1e-7 if name == "Lasso" else 1e-9
    if name == "LeastAbsoluteDeviation":
        obj = lambda w, b: np.abs(y - X @ w - b).sum()  # noqa: E731
        assert obj(on_scaled.coef_ / c, on_scaled.intercept_ / c) == pytest.approx(obj(ref.coef_, ref.intercept_), rel=1e-9)
    else:
        np.testing.assert_allclose(on_scaled.coef_ / c, ref.coef_, rtol=rtol, atol=1e-9)
    # the information criteria are finite and shift by the change of units: +2 N log c
    a = on_scaled.aic(X, y * c)
    assert np.isfinite(a), f"silent non-finite AIC at y * {c:g}"
    if name in ("LinearRegression", "LeastAbsoluteDeviation"):
        assert a == pytest.approx(ref.aic(X, y) + 2 * len(y) * np.log(c), rel=1e-9)


@pytest.mark.parametrize("s", SCALES)
def test_bayesian_logistic_scale_scan(s):
    """No simple invariance (the prior is not scale-free): the answer must be the MAP point."""
    X, y = _data(seed=4)
    t = (y > np.median(y)).astype(int)
    est = BayesianLogisticRegression(prior_precision=0.5)
    # the posterior covariance of the feature weights is at most (prior precision)^-1 and, for
    # large s, about that of the maximum-likelihood fit on X divided by s^2
    ref_cov = BayesianLogisticRegression(prior_precision=1e-8).fit(X, t).posterior_cov_[1:, 1:]
    why = unrepresentable(np.diag(ref_cov), 1 / s, 1 / s) if s > 1 else None
    if right_answer_required(lambda: est.fit(X * s, t), unreachable=why) is None:
        return
    w = est.posterior_mean_
    assert_all_finite(w, est.posterior_cov_, est.log_evidence_, what="posterior")
    Phi = np.column_stack([np.ones(len(t)), X * s])
    mu = sigmoid(Phi @ w)
    g = Phi.T @ (mu - t) + 0.5 * w
    A = Phi.T @ ((mu * (1 - mu))[:, None] * Phi) + 0.5 * np.eye(Phi.shape[1])
    # at the mode the Newton decrement g^T A^{-1} g / 2 (the predicted decrease of the energy,
    # in nats: invariant to rescaling the weights) is at the fit's tolerance
    assert 0.5 * g @ np.linalg.solve(A, g) <= 1e-12
    p = est.predict_proba(X * s)
    assert_all_finite(p, what="probabilities")
    assert np.all((p >= 0) & (p <= 1))


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("name", ["LinearRegression", "Ridge", "Lasso"])
@pytest.mark.parametrize("offset", [1e8, 1e12])
def test_offset_column_with_spread_weights(name, offset, sparse):
    """A column offset by 1e8..1e12 with sample_weight spanning 1e-6..1e7: the coefficients of the
    offset data equal those of the data shifted back (exactly, the shift is a float subtraction
    without rounding). The weighted column mean cannot be held closer than eps * offset; centring
    on it alone left sum(sample_weight) * delta^2 in the Gram matrix, which swamped the light rows'
    share (LinearRegression's first coefficient came out ~2e-5 for ~-0.45)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((6, 2))
    Xo = X.copy()
    Xo[:, 0] += offset
    Xr = Xo.copy()
    Xr[:, 0] -= offset                       # exact: the numbers the offset column really holds
    y = rng.standard_normal(6)
    sw = np.array([1e-6, 1e-6, 1e-6, 1e-6, 1e7, 1e3])
    kw = {"Ridge": {"lam": 1e-3}, "Lasso": {"lam": 1e-3}}.get(name, {})
    est = {"LinearRegression": LinearRegression, "Ridge": Ridge, "Lasso": Lasso}[name]
    ref = est(**kw).fit(Xr, y, sample_weight=sw)
    if sparse:
        import scipy.sparse as sps
        Xo = sps.csr_matrix(Xo)
    got = est(**kw).fit(Xo, y, sample_weight=sw)
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=1e-6, atol=1e-9 * np.abs(ref.coef_).max())
    # predictions carry the rounding of intercept_ (~ offset * coef_[0]) and of x @ coef_ at ~offset
    slack = 16 * np.finfo(float).eps * offset * abs(ref.coef_[0])
    np.testing.assert_allclose(got.predict(Xo), ref.predict(Xr), rtol=0, atol=1e-6 * np.ptp(y) + slack)


def _regressors():
    from sklearn.base import is_regressor

    from .harness import public_estimators
    return [Est for Est in public_estimators() if is_regressor(Est())]


def _exact_r2(y, yhat, w=None):
    from fractions import Fraction

    F, P = [Fraction(float(v)) for v in y], [Fraction(float(v)) for v in yhat]
    W = [Fraction(1)] * len(F) if w is None else [Fraction(float(v)) for v in w]
    mean = sum(s * a for s, a in zip(W, F)) / sum(W)
    return float(1 - sum(s * (a - b) ** 2 for s, a, b in zip(W, F, P)) / sum(s * (a - mean) ** 2 for s, a in zip(W, F)))


@pytest.mark.parametrize("Est", _regressors(), ids=lambda Est: Est.__name__)
def test_score_of_targets_near_1e156(Est):
    """R^2 against targets near 1e156 (a model fitted on y near 1): scikit-learn's r2_score squares
    them and returned NaN; the R^2 is a ratio, finite and exactly computable (here with fractions)."""
    X, y = _data()
    model = Est().fit(X, y)
    y_t = y * 2.0 ** 520
    yhat = model.predict(X)
    got = right_answer_required(lambda: model.score(X, y_t), corrupts="y")
    assert got == pytest.approx(_exact_r2(y_t, yhat), rel=1e-12)
    w = np.linspace(0.5, 2.0, len(y))
    assert model.score(X, y_t, sample_weight=w) == pytest.approx(_exact_r2(y_t, yhat, w), rel=1e-12)


@pytest.mark.parametrize("Est", _regressors(), ids=lambda Est: Est.__name__)
def test_score_of_targets_at_the_top_of_the_float_range(Est):
    """R^2 against targets up to 1e308: the power of two that scaled them was 2**1024 = inf, every
    scaled value 0, and the score a silent 1.0 (the exact R^2 here is about 0)."""
    X, y = _data()
    model = Est().fit(X, y)
    y_t = y * (1e308 / np.max(np.abs(y)))
    yhat = model.predict(X)
    got = right_answer_required(lambda: model.score(X, y_t), corrupts="y")
    assert got == pytest.approx(_exact_r2(y_t, yhat), rel=1e-12, abs=1e-12)
    w = np.linspace(0.5, 2.0, len(y))
    assert model.score(X, y_t, sample_weight=w) == pytest.approx(_exact_r2(y_t, yhat, w), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("name", ["LinearRegression", "Ridge", "LeastAbsoluteDeviation"])
@pytest.mark.parametrize("t", [2.0 ** 520, 2.0 ** -540])
def test_score_of_a_fit_to_targets_near_the_ends_of_the_float_range(name, t):
    """A model fitted to y * t scores its own data: R^2 equals that at t = 1 (the squares of targets
    near 1e156 overflowed, those near 1e-163 underflowed, and r2_score gave NaN or 0)."""
    X, y = _data()
    model = REGRESSORS[name]().fit(X, y * t)
    got = right_answer_required(lambda: model.score(X, y * t), corrupts="y")
    assert got == pytest.approx(_exact_r2(y * t, model.predict(X)), rel=1e-12)


def test_r2_plain_and_scaled_sums_agree_to_the_last_bit():
    """``base._r2`` takes plain sums of squares where they are finite and far above underflow, else sums of
    values divided by powers of two: scaling y and yhat by 2^k changes neither R^2 (to the last bit),
    whichever path each k takes, and both equal the exact value (fractions) to rounding."""
    from linbook.base import _r2

    rng = np.random.default_rng(11)
    for trial in range(40):
        n = int(rng.integers(2, 30))
        y = rng.standard_normal(n) + rng.uniform(-5, 5)
        yhat = y + rng.standard_normal(n) * 10.0 ** rng.uniform(-12, 0.5)
        w = (np.ones(n) if trial % 4 == 1 else None) if trial % 2 else 10.0 ** rng.uniform(-3, 3, n)
        base = _r2(y, yhat, w)
        assert base == pytest.approx(_exact_r2(y, yhat, w), rel=1e-12, abs=1e-14)
        for k in (-1070, -900, -520, -130, 60, 500, 1000):
            scaled_y, scaled_yhat = np.ldexp(y, k), np.ldexp(yhat, k)
            if np.max(np.abs(scaled_y)) < np.finfo(float).tiny * 2 ** 60:
                continue                                    # subnormal: y itself has lost digits
            if not (np.isfinite(scaled_y).all() and np.isfinite(scaled_yhat).all()):
                continue
            assert _r2(scaled_y, scaled_yhat, w) == base, (trial, k)



@pytest.mark.parametrize("predictive", ["plugin", "probit", "mc"])
def test_bayesian_logistic_probabilities_of_the_unlikely_class_in_the_tails(predictive):
    """``predict_proba``'s column of the unlikely class, at logits 20 .. 650: ``sigmoid(-a)`` (averaged over
    the draws for ``"mc"``), a normal double down to ~1e-304. It was ``1 - p1``: 0 for every logit above
    ~37 (and ``1.843e-14`` for ``1.847e-14`` at 31.6), in silence. Reference: scipy's ``expit``, exact in its
    tails, of the model's own logits (plug-in, moderated, or those of the same posterior draws). 20000 rows:
    a posterior narrow enough that the moderated logit, too, goes beyond 37."""
    from scipy.linalg import solve_triangular
    from scipy.special import expit

    rng = np.random.default_rng(3)
    X = rng.standard_normal((20000, 2))
    y = (X @ [2.0, -1.0] + 0.3 * rng.standard_normal(20000) > 0).astype(int)
    model = BayesianLogisticRegression(prior_precision=1.0, predictive=predictive, n_samples=50,
                                       random_state=0).fit(X, y)
    m = model.posterior_mean_                       # (intercept, w)
    rows = np.outer(np.r_[-np.geomspace(20, 650, 12), np.geomspace(20, 650, 12)], m[1:] / (m[1:] @ m[1:]))
    phi = np.c_[np.ones(len(rows)), rows]
    plugin = phi @ m
    if predictive == "plugin":
        logits = plugin[:, None]
    elif predictive == "probit":
        var = np.sum(solve_triangular(model.laplace_.chol, phi.T, lower=True) ** 2, axis=0)
        logits = (plugin / np.sqrt(1 + np.pi * var / 8))[:, None]
    else:
        logits = phi @ model.sample_posterior(50, 0).T
    p_unlikely = np.where(plugin > 0, expit(-logits).mean(axis=1), expit(logits).mean(axis=1))
    assert np.all(p_unlikely > 1e-300) and np.min(p_unlikely) < 1e-17      # beyond 1 - p1's resolution
    proba = model.predict_proba(rows)
    np.testing.assert_allclose(np.where(plugin > 0, proba[:, 0], proba[:, 1]), p_unlikely, rtol=1e-9)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lad_with_a_far_near_duplicate_row_reaches_the_least_objective(seed, fit_intercept, sparse):
    """One row 1e9 times another (plus a little noise): the LP's columns were divided by their largest entry,
    which left every other row's entries near 1e-9, which HiGHS treats as zero; the fit's objective was 1e-3 ..
    4e-3 (at 1e12: up to 1e-1) above the least one, in silence. Right answer: an objective no higher than that
    of HiGHS on the unscaled LP (a feasible point; the objectives are compared exactly, in fractions), to 1e-7:
    the vertex is determined to ~cond * eps, cond ~1e9."""
    from fractions import Fraction

    import scipy.sparse as sps
    from scipy.optimize import linprog

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((40, 3))
    X[-1] = 1e9 * X[0] + 1e-3 * rng.standard_normal(3)
    y = X @ (rng.standard_normal(3) / np.linalg.norm(X, axis=0) * np.sqrt(40)) + 0.5 + 0.3 * rng.standard_normal(40)
    design = np.c_[X, np.ones(40)] if fit_intercept else X
    p = design.shape[1]
    lp = linprog(np.r_[np.zeros(p), np.ones(80)], A_eq=np.c_[design, np.eye(40), -np.eye(40)], b_eq=y,
                 bounds=[(None, None)] * p + [(0, None)] * 80, method="highs")

    def objective(theta):
        return sum(abs(Fraction(yi) - sum(Fraction(a) * Fraction(t) for a, t in zip(row, theta)))
                   for row, yi in zip(design, y))

    model = LeastAbsoluteDeviation(fit_intercept=fit_intercept).fit(sps.csr_matrix(X) if sparse else X, y)
    theta = np.r_[model.coef_, model.intercept_] if fit_intercept else model.coef_
    best = objective(lp.x[:p])
    assert objective(theta) <= best * (1 + Fraction(1, 10 ** 7))      # the far row: cond ~1e9, times eps


def _lad_fit_of_the_other_rows(X, y, sw, far):
    """``(least, objective)``: the least of, and a function for, LAD's objective with the rows ``far`` replaced by
    the linear term their residuals' fixed signs give (``-sum_far s_i sign(y_i) (x_i'w + b)``, the rest of their
    ``s_i |r_i|`` being a constant): the objective that decides the fit when those ``y_i`` are far away. The least
    by HiGHS on that LP, whose entries are all ordinary numbers."""
    from scipy.optimize import linprog

    rest = np.setdiff1d(np.arange(len(y)), far)
    design = np.c_[X, np.ones(len(y))]
    pull = -(sw[far] * np.sign(y[far])) @ design[far]
    n, p = rest.size, design.shape[1]
    lp = linprog(np.r_[pull, sw[rest], sw[rest]], A_eq=np.c_[design[rest], np.eye(n), -np.eye(n)], b_eq=y[rest],
                 bounds=[(None, None)] * p + [(0, None)] * 2 * n, method="highs")
    assert lp.status == 0

    def objective(w, b):
        theta = np.r_[w, b]
        return float(np.sum(sw[rest] * np.abs(y[rest] - design[rest] @ theta)) + pull @ theta)

    return lp.fun, objective


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("far_y", [[1e10], [1e20], [-1e300], [1e200, -1e200, 1e180]], ids=str)
def test_lad_with_far_targets_fits_the_other_rows(far_y, weighted):
    """A few ``y`` far from the rest (1e10 .. 1e300 times them): the LP's right-hand side was divided by the largest
    ``|y|``, which left the others near 1e-10 .. 1e-300, treated as zero by HiGHS: the other rows' fit was 67 %
    above its least objective (at 1e10: 4e-6), in silence. Right answer: the least objective of the other rows
    (with the far rows' fixed pull), to 1e-9 (HiGHS on that LP of ordinary numbers is the reference)."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 3))
    y = X @ [1.0, -2.0, 0.5] + 0.3 + rng.standard_t(2, 40)
    far = np.arange(len(far_y)) * 7 + 5
    y[far] = far_y
    sw = 10.0 ** rng.uniform(-1, 1, 40) if weighted else None
    model = LeastAbsoluteDeviation().fit(X, y, sample_weight=sw)
    least, objective = _lad_fit_of_the_other_rows(X, y, np.ones(40) if sw is None else sw, far)
    assert objective(model.coef_, model.intercept_) <= least + 1e-9 * abs(least)
    assert np.isfinite(model.scale_)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("far_y", [1e12, 1e50, 1e300])
def test_lad_with_a_far_target_on_its_own_column_fits_the_other_rows(seed, far_y):
    """Row 5's ``y`` is far and column 3 is 1 on row 5 only: the fit passes through row 5 (column 3's coefficient
    takes it), and the other coefficients are the LAD fit of the other rows, whatever ``y_5``. Known defect until
    session 24 (the LP on ``y`` scaled near its largest value saw the other rows as zeros); the second LP on the
    first fit's residuals (``lad._residual_correction``) fits them at their own scale."""
    rng = np.random.default_rng(seed)
    X = np.c_[rng.standard_normal((40, 3)), np.zeros(40)]
    X[5, 3] = 1.0
    y = X[:, :3] @ [1.0, -2.0, 0.5] + 0.3 + rng.standard_t(2, 40)
    reference = LeastAbsoluteDeviation().fit(np.delete(X[:, :3], 5, 0), np.delete(y, 5))
    y[5] = far_y
    model = LeastAbsoluteDeviation().fit(X, y)
    rest = np.delete(np.arange(40), 5)

    def objective(w, b):
        return np.sum(np.abs(y[rest] - X[rest, :3] @ w - b))

    least = objective(reference.coef_, reference.intercept_)
    assert objective(model.coef_[:3], model.intercept_) <= least * (1 + 1e-9)


@pytest.mark.parametrize("case", ["2 features", "separable, alpha 1e-8"])
def test_bayesian_logistic_mode_and_evidence_to_rounding(case):
    """The Laplace approximation stopped where Newton's decrement fell below tol = 1e-14, which leaves the mode
    ~sqrt(2 tol / lambda_min) off: 2e-8 on 40 ordinary rows, 3e-7 (relative) with separable classes under
    alpha = 1e-8, the log evidence 1.6e-8 and 2e-7 off, in silence. Right answer: the fixed point of Newton's
    iteration on the chapter's energy (``logistic_loss``, 30 steps from the fit), and the Laplace evidence there,
    to 1e-10 (the flat separable energy's conditioning limits the reference to ~1e-11)."""
    from linbook.logistic.logistic_regression import logistic_loss

    rng = np.random.default_rng(11)
    X = rng.normal(size=(40, 2))
    y = (X @ [1.0, -1.0] + rng.normal(size=40) > 0).astype(int)
    alpha, sw = 0.5, None
    if case == "separable, alpha 1e-8":
        X, y, alpha = X[:, :1], (X[:, 0] > 0).astype(int), 1e-8
    model = BayesianLogisticRegression(prior_precision=alpha).fit(X, y, sample_weight=sw)
    Phi = np.c_[np.ones(len(y)), X]
    w = model.posterior_mean_.copy()
    for _ in range(30):
        _, g, H = logistic_loss(w, Phi, y.astype(float), alpha, sample_weight=sw)
        w = w - np.linalg.solve(H, g)
    E, _, H = logistic_loss(w, Phi, y.astype(float), alpha, sample_weight=sw)
    m = w.size
    log_evidence = -(E + 0.5 * m * np.log(2 * np.pi / alpha)) + 0.5 * m * np.log(2 * np.pi) - 0.5 * np.linalg.slogdet(H)[1]
    np.testing.assert_allclose(model.posterior_mean_, w, rtol=0, atol=1e-10 * np.max(np.abs(w)))
    assert model.log_evidence_ == pytest.approx(log_evidence, rel=1e-10)


@pytest.mark.parametrize("far_y", [1e20, -1e150])
def test_lad_passes_through_a_far_target_that_outweighs_the_rest(far_y):
    """Row 5 weighs more than all the others together, so the fit passes through it whatever ``y_5`` (1e20,
    -1e150): clipping ``y_5`` for the LP is not exact there, and an interpolated clipped row's residual of
    rounding size (1e-13) must not pass for its sign. Right answer: the least objective among fits through row 5
    (HiGHS on the other rows relative to row 5, in units of ``|y_5|``), to 1e-9."""
    from scipy.optimize import linprog

    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 3))
    y = X @ [1.0, -2.0, 0.5] + 0.3 + rng.standard_t(2, 40)
    y[5] = far_y
    sw = np.ones(40)
    sw[5] = 45.0
    model = LeastAbsoluteDeviation().fit(X, y, sample_weight=sw)
    rest = np.delete(np.arange(40), 5)
    lp = linprog(np.r_[np.zeros(3), sw[rest], sw[rest]], A_eq=np.c_[X[rest] - X[5], np.eye(39), -np.eye(39)],
                 b_eq=(y[rest] - y[5]) / abs(y[5]), bounds=[(None, None)] * 3 + [(0, None)] * 78, method="highs")
    w = lp.x[:3] * abs(y[5])

    def objective(w, b):
        return float(np.sum(sw * np.abs(y - X @ w - b)))

    assert objective(model.coef_, model.intercept_) <= objective(w, y[5] - X[5] @ w) * (1 + 1e-9)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n, d", [(2, 4), (5, 4), (9, 9), (12, 11)])
def test_lad_interpolates_rows_of_columns_with_a_large_offset(seed, n, d):
    """With ``n <= d + 1`` rows the least objective is 0 (the fit passes through every row). Columns of spread 1
    around 1e6 used to get a vertex with an objective of up to 1e6 times the noise (5e5 where 0 is reached), in
    silence: the LP lost the rows' differences in the offset. Now 0 to rounding of ``y``."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) + 1e6
    y = X @ rng.standard_normal(d) + rng.standard_cauchy(n)
    model = LeastAbsoluteDeviation().fit(X, y)
    assert np.abs(y - model.predict(X)).sum() <= 1e-12 * np.abs(y).sum() * n
