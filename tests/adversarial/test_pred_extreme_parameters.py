"""Extreme but valid parameter values: the fit the maths gives, or a clear error naming the parameter.

Found by the session-27 prediction fuzz (every public estimator, every float parameter at 5e-324 ... 1.7e308,
outputs checked for finiteness and agreement with each other): two parameters made a silent NaN.
"""

import warnings

import numpy as np
import pytest

import linbook
from tests.adversarial.harness import assert_all_finite, assert_clear_error


def _classes(C, n=60, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % C
    y[: n // 6] = 0                                  # unequal class frequencies
    return rng.standard_normal((n, 3)) + 2.0 * rng.standard_normal((C, 3))[y], y


def _fit(model, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit(X, y)


@pytest.mark.parametrize("var_smoothing", [1e300, 1e308, 1.7e308])
def test_naive_bayes_with_a_huge_var_smoothing_predicts_the_priors(var_smoothing):
    """``var_smoothing`` near 1e308 makes every class variance ~1e307: the class-conditional densities are all
    but equal, so the posterior is the class frequencies. Before, ``log(2 pi v)`` overflowed to inf for v above
    ~3e307, every score was -inf, and predict_proba returned NaN while predict returned class 0, silently."""
    X, y = _classes(3)
    rng = np.random.default_rng(1)
    Xt = 3.0 * rng.standard_normal((5, 3))
    model = _fit(linbook.GaussianNaiveBayes(var_smoothing=var_smoothing), X, y)
    priors = np.bincount(y) / y.size
    P = model.predict_proba(Xt)
    assert_all_finite(P, model.predict_log_proba(Xt), what="posterior")
    np.testing.assert_allclose(P, np.broadcast_to(priors, P.shape), rtol=1e-9)
    np.testing.assert_allclose(model.predict_log_proba(Xt), np.log(P), rtol=1e-12)
    np.testing.assert_array_equal(model.predict(Xt), np.argmax(priors))


def test_naive_bayes_variances_that_overflow_name_var_smoothing():
    """Features in units of 2^60 make ``max_j Var(x_j)`` beyond 1 in the model's units: ``var_smoothing``
    1.79e308 times it cannot be held, so fit names ``var_smoothing``."""
    X, y = _classes(3)
    X = X * np.array([1.0, 1.0, 2.0 ** 60])
    X[:, 2] *= 1.9
    try:
        model = _fit(linbook.GaussianNaiveBayes(var_smoothing=1.79e308), X, y)
    except ValueError as exc:
        assert_clear_error(exc, "var_smoothing")
        return
    P = model.predict_proba(X[:5])
    assert_all_finite(P, what="posterior")
    np.testing.assert_allclose(P, np.broadcast_to(np.bincount(y) / y.size, P.shape), rtol=1e-9)


@pytest.mark.parametrize("form", ["primal", "dual", "pocket"])
@pytest.mark.parametrize("eta", [2.0 ** 70, 1e300, 4e306, 1.6e307])
def test_perceptron_with_a_huge_eta_is_eta_times_the_unit_step_fit(form, eta):
    """With zero initial weights the perceptron's mistakes do not depend on ``eta``, and its weights are
    ``eta`` times those of ``eta = 1``. Before, the scores ``eta x.x`` overflowed above eta ~1e300: the
    weights became inf and NaN (1e306: 50 % training accuracy) without a word."""
    X, y = _classes(2)
    unit = _fit(linbook.Perceptron(form=form, random_state=0), X, y)
    big = _fit(linbook.Perceptron(form=form, eta=eta, random_state=0), X, y)
    assert_all_finite(big.coef_, big.intercept_, what="weights")
    np.testing.assert_allclose(big.coef_, unit.coef_ * eta, rtol=1e-12)
    np.testing.assert_allclose(big.intercept_, unit.intercept_ * eta, rtol=1e-12)
    assert big.n_mistakes_ == unit.n_mistakes_
    if form == "dual":
        np.testing.assert_allclose(big.alpha_, unit.alpha_ * eta, rtol=1e-12)


@pytest.mark.parametrize("form", ["primal", "dual", "pocket"])
def test_perceptron_weights_beyond_float64_name_eta(form):
    """At eta = 1.7e308 the weights eta * sum y_i x_i cannot be held: a clear error naming eta, and the
    model is left as it was (before: NaN weights, silently)."""
    X, y = _classes(2)
    model = linbook.Perceptron(form=form, eta=1.7e308, random_state=0)
    with pytest.raises(ValueError) as info:
        _fit(model, X, y)
    assert_clear_error(info.value, "eta")
    assert not hasattr(model, "coef_")


def test_bayesian_logistic_with_a_prior_precision_near_the_largest_double():
    """The mode is w = 0 and every probability 1/2; laplace_approximation symmetrised A as (A + A') / 2, which
    overflowed at 1.7e308 and stopped the fit with "scale the variables" (fixed in session 27)."""
    X, y = _classes(2)
    try:
        model = _fit(linbook.BayesianLogisticRegression(prior_precision=1.7e308), X, y)
    except ValueError as exc:
        assert_clear_error(exc, "prior_precision")
        return
    np.testing.assert_allclose(model.predict_proba(X[:5]), 0.5, atol=1e-12)
