"""Adversarial cases: predicting on rows near 1e308 after an ordinary fit (``linbook._predictor``).

A plain ``X @ w`` overflows in a partial sum, or adds two infinite terms into NaN, where the score
itself is an ordinary float64. A case passes when

* a score that fits in float64 comes back right (against the exact sum, in fractions);
* a label or a probability comes back right, whether or not the score fits;
* a score that does not fit (a regression prediction, a public ``decision_function``) raises a clear
  error naming ``X`` -- there is no right float to return.
"""

from __future__ import annotations

from fractions import Fraction

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import linbook
from linbook import online
from linbook.discriminant import FisherLDA
from linbook.laplace import BayesianLogisticRegression

from .harness import clear_error

REGRESSORS = {
    "LinearRegression": linbook.LinearRegression, "Ridge": linbook.Ridge, "Lasso": lambda: linbook.Lasso(lam=0.1),
    "LeastAbsoluteDeviation": linbook.LeastAbsoluteDeviation, "LMS": lambda: online.LMS(eta0=0.01),
    "RecursiveLeastSquares": online.RecursiveLeastSquares, "SGDRegressor": lambda: online.SGDRegressor(random_state=0),
    "OnlineGradientDescent": online.OnlineGradientDescent,
}
BINARY = {
    "LogisticRegression": linbook.LogisticRegression, "ProbitRegression": linbook.ProbitRegression,
    "Perceptron": lambda: linbook.Perceptron(random_state=0), "SGDClassifier": lambda: online.SGDClassifier(random_state=0),
    # the plug-in predictive: the default moderated one saturates at a probability below 1 far away
    "BayesianLogisticRegression": lambda: BayesianLogisticRegression(predictive="plugin"),
}
MULTICLASS = {"LogisticRegression": linbook.LogisticRegression,
              "SGDClassifier": lambda: online.SGDClassifier(random_state=0)}


def _data(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((160, 4))
    y = X @ [2.0, -3.0, 1.5, -1.0] + 0.3 + 0.1 * rng.standard_normal(160)
    return X, y


def _weights(model):
    coef = np.asarray(model.coef_, dtype=float)
    coef = coef[0] if coef.ndim == 2 else coef
    return coef, float(np.ravel(getattr(model, "intercept_", 0.0))[0])


FLOAT_MAX = Fraction(np.finfo(float).max)


def _exact(x, coef, intercept):
    """The exact score, a Fraction (it may lie beyond float64)."""
    return sum(Fraction(float(a)) * Fraction(float(w)) for a, w in zip(x, coef)) + Fraction(float(intercept))


def _far_rows(coef, intercept, n=400, seed=1):
    """Rows of entries up to 1.7e308 whose plain product ``x @ coef + b`` is not finite, split by whether the
    exact score fits in float64 (the plain product overflowed in a partial sum) or not."""
    rng = np.random.default_rng(seed)
    rows = 1.7e308 * rng.uniform(-1.0, 1.0, size=(n, coef.size))
    with np.errstate(over="ignore", invalid="ignore"):
        plain = rows @ coef + intercept
    rows = rows[~np.isfinite(plain)]
    exact = [_exact(r, coef, intercept) for r in rows]
    fits = np.array([abs(e) <= FLOAT_MAX for e in exact], dtype=bool)
    assert fits.any() and (~fits).any(), "the premise: both kinds of far row are drawn"
    return rows, exact, fits


@pytest.mark.parametrize("name", sorted(REGRESSORS))
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_far_rows_get_the_exact_prediction_or_a_clear_error(name, sparse):
    X, y = _data()
    model = REGRESSORS[name]().fit(X, y)
    coef, b = _weights(model)
    rows, exact, fits = _far_rows(coef, b)
    sparse = sparse and name in {"LinearRegression", "Ridge", "Lasso", "SGDRegressor"}
    as_input = sp.csr_matrix if sparse else np.asarray
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)      # no "invalid value" noise before a valid answer
        pred = model.predict(as_input(np.vstack([rows[fits], X[:2]])))
    expected = [float(e) for e, f in zip(exact, fits) if f] + [float(_exact(x, coef, b)) for x in X[:2]]
    np.testing.assert_allclose(pred, expected, rtol=1e-12, atol=4 * np.finfo(float).eps * 1.7e308)
    with pytest.raises(ValueError) as info:
        model.predict(as_input(rows[~fits][:3]))
    assert clear_error(info.value, "X"), str(info.value)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_far_rows_get_the_right_label_and_probability(name):
    X, y = _data()
    c = (y > 0).astype(int)
    model = BINARY[name]().fit(X, c)
    coef, b = _weights(model)
    rows, exact, fits = _far_rows(coef, b)
    positive = np.array([e > 0 for e in exact], dtype=int)
    np.testing.assert_array_equal(model.predict(rows), positive)
    if hasattr(model, "predict_proba"):
        np.testing.assert_array_equal(model.predict_proba(rows), np.eye(2)[positive])
    z = model.decision_function(rows[fits])
    np.testing.assert_allclose(z, [float(e) for e, f in zip(exact, fits) if f], rtol=1e-12,
                               atol=4 * np.finfo(float).eps * 1.7e308)
    with pytest.raises(ValueError) as info:
        model.decision_function(rows[~fits][:3])
    assert clear_error(info.value, "X"), str(info.value)


@pytest.mark.parametrize("name", sorted(MULTICLASS))
def test_multiclass_probabilities_of_far_rows_follow_the_largest_score(name):
    """Scores of several classes overflow: the largest wins (softmax of +inf, +inf would split the mass)."""
    X, y = _data()
    labels = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
    model = MULTICLASS[name]().fit(X, labels)
    W, b = np.asarray(model.coef_, dtype=float), np.asarray(model.intercept_, dtype=float)
    rows = 1.7e308 * np.random.default_rng(2).uniform(-1.0, 1.0, size=(200, X.shape[1]))
    exact = np.array([[_exact(r, W[k], b[k]) for k in range(3)] for r in rows], dtype=object)
    top = np.array([int(np.argmax(e)) for e in exact])
    p = model.predict_proba(rows)
    assert np.isfinite(p).all()
    clear = np.array([sorted(e)[-1] - sorted(e)[-2] > 1000 for e in exact])    # then p_top is 1 to the last digit
    np.testing.assert_array_equal(p[clear], np.eye(3)[top[clear]])
    np.testing.assert_array_equal(model.predict(rows), model.classes_[top])


def test_monte_carlo_predictive_of_far_rows_counts_the_draws_on_each_side():
    """``predictive="mc"``: at a far row each draw's logit is beyond +-1e300, so the probability is the share
    of draws with a positive logit (exact signs from fractions). A matrix product of the raw rows returned
    infinities of the wrong sign, or NaN."""
    X, y = _data()
    model = BayesianLogisticRegression(predictive="mc", n_samples=50, random_state=3).fit(X, (y > 0).astype(int))
    W = model.sample_posterior(model.n_samples, model.random_state)        # the draws predict_proba uses
    rows = 1.7e308 * np.random.default_rng(4).uniform(-1.0, 1.0, size=(40, X.shape[1]))
    share = [np.mean([_exact(r, w[1:], w[0]) > 0 for w in W]) for r in rows]
    np.testing.assert_allclose(model.predict_proba(rows)[:, 1], share, rtol=0, atol=1e-15)


def test_fisher_projection_of_far_rows_is_exact_or_a_clear_error():
    """``FisherLDA.transform``: ``(x - mu) W`` of a row near 1e308 overflowed in ``x - mu`` or part-way through the
    product (a matrix product then returns an infinity of either sign)."""
    X, y = _data()
    labels = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
    model = FisherLDA().fit(X * 1e-3, labels)                # small units: scalings of order 1e3
    W, mu = model.scalings_, model.mean_
    rows = 1.7e308 / np.abs(W).max() * np.random.default_rng(5).uniform(-1.0, 1.0, size=(300, X.shape[1]))
    exact = np.array([[_exact(r, W[:, k], -sum(Fraction(float(m)) * Fraction(float(w)) for m, w in zip(mu, W[:, k])))
                       for k in range(W.shape[1])] for r in rows], dtype=object)
    fits = np.array([all(abs(e) <= FLOAT_MAX for e in row) for row in exact])
    assert fits.any() and (~fits).any()
    Z = model.transform(rows[fits])
    np.testing.assert_allclose(Z, exact[fits].astype(float), rtol=1e-12, atol=8 * np.finfo(float).eps * 1.7e308)
    with pytest.raises(ValueError) as info:
        model.transform(rows[~fits][:3])
    assert clear_error(info.value, "X"), str(info.value)


@pytest.mark.parametrize("name", ["LDA", "RDA"])
def test_shared_covariance_models_classify_far_rows_by_the_largest_linear_score(name):
    """LDA's class scores are linear in x: a far row's label and posterior follow the largest exact score
    (they refused such rows: "the log-density overflows float64")."""
    from linbook import discriminant
    X, y = _data()
    labels = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
    model = getattr(discriminant, name)().fit(X, labels)
    B, k = model._betas, (-0.5 * model._quad_mu - model._betas @ model._center) + np.log(model.priors_)    # x' b_c + k_c + log pi_c
    rows = 1.7e308 * np.random.default_rng(6).uniform(-1.0, 1.0, size=(200, X.shape[1]))
    exact = [[_exact(r, B[c], k[c]) for c in range(3)] for r in rows]
    top = np.array([int(np.argmax(e)) for e in exact])
    np.testing.assert_array_equal(model.predict(rows), model.classes_[top])
    p = model.predict_proba(rows)
    clear = np.array([sorted(e)[-1] - sorted(e)[-2] > 1000 for e in exact])
    np.testing.assert_array_equal(p[clear], np.eye(3)[top[clear]])


@pytest.mark.parametrize("name", ["DiagonalLDA", "NearestShrunkenCentroids"])
def test_shared_diagonal_variance_models_classify_far_rows_by_the_largest_linear_score(name):
    """A shared diagonal variance makes the class scores linear in z = x / s: far rows went through the
    quadratic form, whose class-free |z|^2 swamped the classes (every far row class 0, probabilities 1/3)."""
    from linbook import discriminant
    X, y = _data()
    labels = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
    model = getattr(discriminant, name)().fit(X, labels)
    mu, var, inv_scale = model._mu, model._var, model._inv_scale
    m = mu.mean(axis=0)
    d = (mu - m) / var
    k = -0.5 * np.sum((mu - m) * d, axis=1) + np.log(model.priors_)
    rows = 1.7e308 * np.random.default_rng(7).uniform(-1.0, 1.0, size=(200, X.shape[1]))

    def score(r, c):        # (z - m) d_c + k_c, z = x * inv_scale, exactly
        return sum((Fraction(float(a)) * Fraction(float(s)) - Fraction(float(mj))) * Fraction(float(dj))
                   for a, s, mj, dj in zip(r, inv_scale, m, d[c])) + Fraction(float(k[c]))

    exact = [[score(r, c) for c in range(3)] for r in rows]
    top = np.array([int(np.argmax(e)) for e in exact])
    np.testing.assert_array_equal(model.predict(rows), model.classes_[top])
    p = model.predict_proba(rows)
    clear = np.array([sorted(e)[-1] - sorted(e)[-2] > 1000 for e in exact])
    np.testing.assert_array_equal(p[clear], np.eye(3)[top[clear]])


def _classifiers():
    from linbook import discriminant
    return {**BINARY, "LDA": discriminant.LDA, "RDA": discriminant.RDA, "QDA": discriminant.QDA,
            "DiagonalLDA": discriminant.DiagonalLDA, "GaussianNaiveBayes": discriminant.GaussianNaiveBayes,
            "NearestShrunkenCentroids": discriminant.NearestShrunkenCentroids,
            "BayesianLogisticRegression(probit)": BayesianLogisticRegression}


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("name", sorted(_classifiers()))
def test_far_labels_do_not_depend_on_how_far(name, n_classes):
    """Every classifier, rows t u for directions u: beyond the data the label is set by the direction (the
    dominant term of the scores), so t = 1e100, 1e200, 1e300 and 1.7e308 give the same labels, and finite
    probabilities. On the old code 31-58 % of labels changed at 1.7e308 for the linear models, and
    DiagonalLDA and NearestShrunkenCentroids gave every row class 0 with uniform probabilities."""
    X, y = _data()
    labels = (y > 0).astype(int) if n_classes == 2 else np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
    if n_classes == 3 and name.startswith(tuple(set(BINARY) - set(MULTICLASS))):
        pytest.skip("a binary model")
    model = _classifiers()[name]().fit(X, labels)
    directions = np.random.default_rng(8).standard_normal((300, X.shape[1]))
    directions /= np.abs(directions).max(axis=1, keepdims=True)
    near = model.predict(1e100 * directions)
    for t in (1e200, 1e300, 1.7e308):
        np.testing.assert_array_equal(model.predict(t * directions), near, err_msg=f"t = {t:g}")
        if hasattr(model, "predict_proba"):
            p = model.predict_proba(t * directions)
            assert np.isfinite(p).all() and np.allclose(p.sum(axis=1), 1.0)


@pytest.mark.parametrize("classes", [0, 2, 3], ids=["regression", "binary", "multinomial"])
def test_scores_prove_X_finite(classes):
    """``_predictor.predict_scores`` skips validation's finiteness pass over a plain ``X`` and lets the scores
    prove it: the same scores as validating first (ordinary and far rows, to the last bit), and every NaN or
    inf entry of ``X`` still refused with validation's error, also in a column whose coefficient is 0 (which
    takes the validated way) and beside a far row."""
    from linbook._predictor import linear_predictor, predict_scores
    from linbook.base import validate_predict

    rng = np.random.default_rng(5)
    X = rng.standard_normal((300, 4))
    target = X @ [1.0, -2.0, 0.5, 3.0]
    model = (linbook.LinearRegression() if classes == 0 else linbook.LogisticRegression()).fit(
        X, target if classes == 0 else np.digitize(target, [0.0] if classes == 2 else [-1.0, 1.0]))
    if classes == 3:                                  # as the models pass them
        coef, intercept = model.coef_.T, model.intercept_
    elif classes == 2:
        coef, intercept = model.coef_[0], model.intercept_[0]
    else:
        coef, intercept = model.coef_, model.intercept_
    shift = classes == 3
    Xn = rng.standard_normal((50, 4))
    Xn[7] = [1e308, 1e308, -1e308, 1e308]             # a far row: X @ w overflows in a partial sum
    for Z in (Xn[:5], Xn):
        expected = linear_predictor(validate_predict(model, Z), coef, intercept, shift_far_rows=shift)
        np.testing.assert_array_equal(predict_scores(model, Z, coef, intercept, shift_far_rows=shift), expected)
    for zero_column in (False, True):
        w = coef.copy()
        if zero_column:
            w[2] = 0.0
        for bad in (np.nan, np.inf, -np.inf):
            for row, col in [(0, 0), (7, 1), (7, 2), (49, 2), (20, 3)]:
                Z = Xn.copy()
                Z[row, col] = bad
                with pytest.raises(ValueError, match="Input X contains") as info:
                    predict_scores(model, Z, w, intercept, shift_far_rows=shift)
                assert clear_error(info.value, "X")


@pytest.mark.parametrize("name", ["LDA", "RDA"])
def test_lda_scores_prove_X_finite(name):
    """LDA and RDA skip validation's pass over a plain ``X`` when their linear scores prove it finite (as
    ``_predictor.predict_scores``): the same scores, labels and probabilities as the validated way (a list), to
    the last bit, with a far row; every NaN entry still marginalised and every inf refused with validation's
    error, also where a zero coefficient takes the validated way."""
    from linbook import discriminant
    X, y = _data()
    model = getattr(discriminant, name)().fit(X, np.digitize(y, [-1.0, 1.0]))
    Xn = np.random.default_rng(9).standard_normal((50, 4))
    Xn[7] = [1e308, 1e308, -1e308, 1e308]             # a far row: the scores overflow in a partial sum
    for Z in (Xn[:5], Xn):
        for method in ("predict_proba", "predict_log_proba", "predict"):
            np.testing.assert_array_equal(getattr(model, method)(Z), getattr(model, method)(Z.tolist()))
    np.testing.assert_array_equal(model.decision_function(Xn[:5]), model.decision_function(Xn[:5].tolist()))
    with pytest.raises(ValueError, match="overflows float64"):   # the far row's scores themselves: no float
        model.decision_function(Xn)
    for zero_coefficient in (False, True):
        if zero_coefficient:
            model._betas = model._betas.copy()
            model._betas[1, 2] = 0.0
        for row, col in [(0, 0), (7, 1), (7, 2), (49, 2), (20, 3)]:
            Z = Xn.copy()
            Z[7] = Xn[8]                              # (NaN beside a far row is refused either way)
            Z[row, col] = np.nan
            p = model.predict_proba(Z)
            np.testing.assert_array_equal(p, model.predict_proba(Z.tolist()))
            assert np.isfinite(p).all() and np.allclose(p.sum(axis=1), 1.0)
            Z[7] = Xn[7]
            for bad in (np.inf, -np.inf):
                Z[row, col] = bad
                for method in ("decision_function", "predict_proba", "predict"):
                    with pytest.raises(ValueError, match="Input X contains infinity") as info:
                        getattr(model, method)(Z)
                    assert clear_error(info.value, "X")
