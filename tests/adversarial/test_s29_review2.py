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
# no warning. All 13 seeds here fail on main d32bf6c; 11 other seeds of 0..59 still stop converged_ 10-30 % above the
# minimum by another path (the gradient and step tests both pass), left for a later session.
# The new intercept-only start (from the log class weights) sent more such fits there instead of an error.
# Oracle: Nelder-Mead (scipy) from the fitted point on the same objective; a fit that says it converged must not
# be beaten by more than 1e-6 relatively, else it must say it did not converge (ConvergenceWarning).


def _weighted_log_loss(theta, X, y, sw):
    """sum_i sw_i (log(1 + e^z_i) - y_i z_i), divided by a power of two near max(sw) (same minimiser)."""
    z = X @ theta[:-1] + theta[-1]
    return float(np.sum(sw * 2.0 ** -np.floor(np.log2(sw.max())) * (np.logaddexp(0.0, z) - y * z)))


@pytest.mark.parametrize("seed", [3, 4, 11, 12, 19, 23, 24, 33, 37, 39, 41, 53, 58])
def test_logistic_weights_over_300_decades_converged_only_at_the_mle(seed):
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
    if model.converged_:
        assert fitted <= best * (1 + 1e-6), (fitted, best)
    else:
        assert any(issubclass(w.category, ConvergenceWarning) for w in caught)
