"""Session-29 review of the session's new code (helper s29review2). Each case names its oracle."""

import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning

import linbook

# --- LogisticRegression with sample weights over 300 decades: converged_ at a point that is not the MLE ---------
# Newton's line search found no decrease along a long Newton step and called the point converged because the
# gradient was small relative to sum(sample_weight), without the step test it applies after every step: e.g.
# seed 39 (at 805d62c) stopped with the (weight-scaled) objective 5e-23 where Nelder-Mead reaches 3e-73, converged_ True and
# no warning. All 13 seeds here fail on main d32bf6c. 11 other seeds of 0..59 seemed to stop converged_ 10-30 % above
# the minimum, but only under an objective written as log(1 + e^z) - y z, which rounds a row of y = 1 and margin
# above ~33 to a loss of 0 (Nelder-Mead found those points); with the loss as log(1 + e^-m), m the margin, linbook's
# fits of those seeds are the minimum to 1e-15, and they are kept below as cases that must stay converged.
# The new intercept-only start (from the log class weights) sent more such fits there instead of an error.
# Oracle: Nelder-Mead (scipy) from the fitted point on the same objective; a fit that says it converged must not
# be beaten by more than 1e-6 relatively, else it must say it did not converge (ConvergenceWarning).


def _weighted_log_loss(theta, X, y, sw):
    """sum_i sw_i log(1 + e^-m_i), ``m_i = (2 y_i - 1) z_i`` the margin, divided by a power of two near max(sw) (same
    minimiser). (Not ``log(1 + e^z) - y z``: for ``y = 1`` that difference rounds to 0 at margins above ~33.)"""
    z = X @ theta[:-1] + theta[-1]
    return float(np.sum(sw * 2.0 ** -np.floor(np.log2(sw.max())) * np.logaddexp(0.0, -(2 * y - 1) * z)))


def _fit_and_best(seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((40, int(rng.integers(1, 4))))
    y = (X[:, 0] + rng.standard_normal(40) > 0.3).astype(float)
    sw = 10.0 ** rng.uniform(-150, 150, 40)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = linbook.LogisticRegression(lam=0.0).fit(X, y, sample_weight=sw)
    theta = np.r_[model.coef_.ravel(), np.ravel(model.intercept_)]
    fitted = _weighted_log_loss(theta, X, y, sw)
    best = minimize(_weighted_log_loss, theta, args=(X, y, sw), method="Nelder-Mead",
                    options=dict(xatol=1e-10, fatol=0.0, maxiter=4000)).fun
    return model, fitted, best, caught


@pytest.mark.parametrize("seed", [3, 4, 11, 12, 19, 23, 24, 33, 37, 39, 41, 53, 58])
def test_logistic_weights_over_300_decades_converged_only_at_the_mle(seed):
    model, fitted, best, caught = _fit_and_best(seed)
    if model.converged_:
        assert fitted <= best * (1 + 1e-6), (fitted, best)
    else:
        assert any(issubclass(w.category, ConvergenceWarning) for w in caught)


@pytest.mark.parametrize("seed", [1, 7, 17, 18, 21, 29, 34, 38, 45, 47, 57])
def test_logistic_weights_over_300_decades_at_the_mle_stay_converged(seed):
    """At the minimum (Nelder-Mead from it gains less than 1e-12) where it says it converged; with numpy 1.25 /
    scipy 1.10 (make test-min) seeds 18 and 29 stop short instead, and warn."""
    model, fitted, best, caught = _fit_and_best(seed)
    if model.converged_:
        assert fitted <= best * (1 + 1e-12), (fitted, best)
    else:
        assert any(issubclass(w.category, ConvergenceWarning) for w in caught)


@pytest.mark.parametrize("target", ["binary", "multinomial", "probit"])
def test_rank_deficient_newton_fits_at_the_least_norm_optimum_stay_converged(target):
    """No false alarm from the rule above: on a design with x3 = x0 + x1 Newton's last step is rounding noise along
    the near-null direction (long, so the step test refuses it) and predicts a gain ~1e-22 of the objective, which
    no line search can find; the least-norm optimum is reached (tests/test_logistic_rank.py) and is converged."""
    from tests.test_logistic_rank import _collinear
    X, y, y3 = _collinear()
    model = (linbook.ProbitRegression(tol=1e-10) if target == "probit" else
             linbook.LogisticRegression(lam=0, tol=1e-10))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model.fit(X, y3 if target == "multinomial" else y)
    assert model.converged_
