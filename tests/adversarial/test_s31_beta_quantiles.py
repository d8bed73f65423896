"""Session 31: ``BetaBernoulli.credible_interval`` where scipy's beta quantile function fails.

``scipy.stats.beta.ppf`` gave ``(1.5e-8, 1.5e-8)`` for ``Beta(1000, 1e20)``, whose interval is ``(9.4e-18,
1.06e-17)`` (scipy 1.17, in silence), put the ends of ``Beta(1e9, 1000)`` out of order (an error for an ordinary
posterior), and in scipy 1.10 never returned for ``Beta(1000, 1e30)``. The quantiles are now roots of
``scipy.special.betainc`` bracketed by Cantelli's inequality. Oracles: mpmath, independent of scipy.
"""

import mpmath
import numpy as np
import pytest

import linbook
from tests.adversarial.harness import gamma_quantiles_mp


def _beta_quantile_mp(q, a, b):
    """The ``q`` quantile of ``Beta(a, b)`` (``a`` the smaller count) by bisection on mpmath's regularised
    incomplete beta function at 50 digits, within 40 standard deviations of the mean."""
    with mpmath.workdps(50):
        a, b = mpmath.mpf(a), mpmath.mpf(b)
        mean, sd = a / (a + b), mpmath.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
        lo, hi = max(mpmath.mpf(0), mean - 40 * sd), min(mpmath.mpf(1), mean + 40 * sd)
        for _ in range(200):
            mid = (lo + hi) / 2
            if mpmath.betainc(a, b, 0, mid, regularized=True) < q:
                lo = mid
            else:
                hi = mid
        return float((lo + hi) / 2)


@pytest.mark.parametrize("a, b", [(1000.0, 1e9), (30.0, 1e7), (2.5, 4e5), (7.0, 3.0), (0.5, 0.5)])
def test_interval_against_mpmath(a, b):
    """Both orientations: ``Beta(a, b)`` and its mirror ``Beta(b, a)``, whose interval is ``1 -`` the reversed one
    (``Beta(1e9, 1000)`` was refused: scipy's upper end fell below its lower end)."""
    ref = [_beta_quantile_mp(q, a, b) for q in (0.025, 0.975)]
    rtol = 1e-11            # (scipy 1.12's betaincc: 2.4e-12 off at Beta(30, 1e7)'s upper end; 1.17's: 1e-15)
    lo, hi = linbook.BetaBernoulli(a, b).fit([]).credible_interval()
    np.testing.assert_allclose([lo, hi], ref, rtol=rtol)
    lo, hi = linbook.BetaBernoulli(b, a).fit([]).credible_interval()
    np.testing.assert_allclose([1 - hi, 1 - lo], ref, rtol=rtol if a >= b else 64 * np.finfo(float).eps / ref[0],
                               atol=0)


@pytest.mark.parametrize("a, b", [(1000.0, 1e20), (1000.0, 1e25), (3.0, 1e18), (1e5, 1e30), (300.0, 1e16)])
def test_counts_far_apart_below_the_gamma_limit(a, b):
    """``b / a`` from 1e15 to 1e28, below the switch to ``Gamma(a) / b`` (1e32): scipy's quantiles were
    ``1.49e-8`` at both ends for ``Beta(1000, 1e20..1e30)``. Oracle: ``Gamma(a) / b`` by mpmath, which is
    ``theta`` to a relative ``sqrt(a) / b`` here (far below 1e-12)."""
    ref = gamma_quantiles_mp([0.025, 0.975], a) / b
    lo, hi = linbook.BetaBernoulli(a, b).fit([]).credible_interval()
    np.testing.assert_allclose([lo, hi], ref, rtol=1e-12)


@pytest.mark.parametrize("a, b, expected", [(1e-300, 1e-300, (0.0, 1.0)), (1e-20, 1e-20, (0.0, 1.0)),
                                            (1e-5, 0.3, (0.0, 0.0)), (0.3, 1e-5, (1.0, 1.0)),
                                            (1e-20, 1.0, (0.0, 0.0)), (1e-18, 3e-18, (0.0, 1.0)),
                                            (3e-18, 1e-18, (0.0, 1.0)), (1e-300, 1e-20, (0.0, 0.0))])
def test_tiny_counts_put_the_ends_at_0_or_1(a, b, expected):
    """``Beta(1e-5, 0.3)``: ``P(theta <= x) = x^1e-5 (0.99...)`` reaches 0.975 only at ``x ~ e^-1776``, which is 0
    in double precision, so both ends are 0; two tiny counts put half the mass at each end: ``(0, 1)``."""
    assert linbook.BetaBernoulli(a, b).fit([]).credible_interval() == expected


def test_subnormal_counts_are_refused_with_advice():
    """scipy's ``betainc`` at subnormal counts is wrong (0 below 0.5, 1 above): a clear error, naming the prior."""
    with pytest.raises(ValueError, match=r"prior a=5e-324.*pseudo-counts between"):
        linbook.BetaBernoulli(5e-324, 1.0).fit([]).credible_interval()
