"""Adversarial cases for linbook.laplace's predictive helpers: variances up to the largest double.

``probit_kappa(var) = (1 + pi var / 8)^(-1/2)`` is a normal number for every finite
``var >= 0`` (it is never below ~1.2e-154), and ``moderated_sigmoid(mu, var) =
sigmoid(kappa(var) mu)`` then follows. Right answer: the closed form, for ``var`` far
above 1 equal to ``sqrt(8 / (pi var)) / sqrt(1 + 8 / (pi var))``, a product of numbers
that neither overflow nor underflow. Before, ``pi * var`` overflowed for ``var`` above
~5.7e307: kappa came out 0 and ``moderated_sigmoid(1e300, 1.7e308)`` 0.5 instead of 1.
"""

from __future__ import annotations

import numpy as np
import pytest

import linbook

#: From an ordinary variance to the largest double (pi * var overflows from ~5.7e307 on).
VARS = (1.0, 1e8, 1e300, 5e307, 6e307, 1e308, np.finfo(float).max)


def _kappa_far(var):
    """kappa(var) for var >= 1 written so that nothing overflows: sqrt(8 / (pi var)) / sqrt(1 + 8 / (pi var))."""
    r = 8.0 / np.pi / var
    return np.sqrt(r) / np.sqrt(1.0 + r)


@pytest.mark.parametrize("var", VARS, ids=lambda v: f"var{v:g}")
def test_probit_kappa_up_to_the_largest_double(var):
    got = linbook.probit_kappa(var)
    assert np.isfinite(got) and got > 0, f"probit_kappa({var:g}) = {got!r}, a normal number is representable"
    assert got == pytest.approx(_kappa_far(var), rel=1e-14)


@pytest.mark.parametrize("var", VARS, ids=lambda v: f"var{v:g}")
@pytest.mark.parametrize("mu", (1e300, -1e300, 3.0), ids=lambda m: f"mu{m:g}")
def test_moderated_sigmoid_up_to_the_largest_double(mu, var):
    """sigmoid(kappa mu): kappa mu is ~1e146 for mu = 1e300, so the probability is 0 or 1, never 0.5."""
    got = linbook.moderated_sigmoid(mu, var)
    want = linbook.sigmoid(_kappa_far(var) * mu)
    assert got == pytest.approx(want, rel=1e-13, abs=1e-300)


def test_probit_kappa_of_an_array_is_elementwise():
    """The fix keeps arrays elementwise and ordinary variances bit for bit (1 + pi var / 8)^(-1/2)."""
    var = np.array([0.0, 8 / np.pi, 2.5, np.finfo(float).max])
    got = linbook.probit_kappa(var)
    np.testing.assert_array_equal(got[:3], 1.0 / np.sqrt(1.0 + np.pi * var[:3] / 8.0))
    assert got[3] == pytest.approx(_kappa_far(var[3]), rel=1e-14)


@pytest.mark.parametrize("alpha", [5e-324, 1e-310])
def test_bayesian_logistic_regression_with_a_subnormal_prior_precision(alpha):
    """The evidence's ``(M/2) log(2 pi / alpha)`` overflowed for ``alpha`` below ~1e-308 (the fit refused with
    "the energy E(x0) is not finite"); in log space it is finite: the fit is the one at 1e-300 (a flat prior
    either way), with the evidence lower by ``(M/2) log(1e-300 / alpha)``."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    y = (X[:, 0] + rng.standard_normal(40) > 0).astype(int)
    flat = linbook.BayesianLogisticRegression(prior_precision=1e-300).fit(X, y)
    tiny = linbook.BayesianLogisticRegression(prior_precision=alpha).fit(X, y)
    np.testing.assert_allclose(tiny.coef_, flat.coef_, rtol=1e-8)
    shift = 0.5 * 4 * (np.log(1e-300) - np.log(alpha))
    assert np.isfinite(tiny.log_evidence_)
    np.testing.assert_allclose(flat.log_evidence_ - tiny.log_evidence_, shift, rtol=1e-6)
