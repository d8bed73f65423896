"""Extreme sample weights: every logistic solver reaches the answer Newton reaches.

Only the ratios of the weights matter to the maximum-likelihood fit (``lam = 0``): uniform
weights of 1e300 or 1e-300 must give the unweighted fit. Under a penalty, large weights
must give what Newton (scale-free) gives. Before, L-BFGS, BFGS and gradient descent
stopped after 0-5 iterations with a wrong answer (their g'g and y's overflowed or
underflowed) and only a ConvergenceWarning.
"""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from linbook import LogisticRegression

SOLVERS = ["lbfgs", "bfgs", "gd", "newton-cg"]
SCALES = [1e300, 1e200, 1e-200, 1e-300]


def _data(n_classes, seed=0, n=200):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    if n_classes == 2:
        return X, (X @ np.array([1.0, -1.0, 0.5]) + rng.standard_normal(n) > 0).astype(int), rng
    return X, rng.integers(0, n_classes, n), rng


def _fit(solver, lam, X, y, sample_weight=None):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)    # a warning-only stop fails the case
        return LogisticRegression(solver=solver, lam=lam).fit(X, y, sample_weight=sample_weight)


def _close(model, reference, rtol=1e-5):
    scale = np.max(np.abs(reference.coef_))
    assert np.max(np.abs(model.coef_ - reference.coef_)) <= rtol * scale
    assert np.max(np.abs(model.intercept_ - reference.intercept_)) <= rtol * max(scale, 1.0)


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("solver", SOLVERS)
def test_uniform_extreme_weights_give_the_unweighted_mle(solver, n_classes, scale):
    X, y, _ = _data(n_classes)
    reference = _fit("newton", 0.0, X, y)
    _close(_fit(solver, 0.0, X, y, np.full(len(y), scale)), reference)


@pytest.mark.parametrize("scale", [1e300, 1e200])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("solver", SOLVERS)
def test_spread_extreme_weights_under_a_penalty_match_newton(solver, n_classes, scale):
    X, y, rng = _data(n_classes, seed=1)
    sw = scale * rng.uniform(0.2, 1.0, len(y))
    _close(_fit(solver, 1.0, X, y, sw), _fit("newton", 1.0, X, y, sw))
