"""``BetaBernoulli`` with prior pseudo-counts far from the counts, against 700-digit arithmetic.

* ``map_estimate`` formed ``a_n - 1`` from ``a_n = a + N_1``: with ``a = 1e-8`` and one 1 seen, ``(1e-8 + 1) - 1``
  kept 8 digits (MAP 9.99999994e-21 where it is 1.000000000001e-20). Now ``(N_1 - 1) + a``: one rounding.
* ``log_marginal_likelihood`` with ``a = 1e300`` printed ``RuntimeWarning: invalid value encountered in subtract``
  (the branch of ``_log_share`` not taken, ``inf - inf``); its value was right.
"""

import warnings

import mpmath
import numpy as np
import pytest

import linbook


@pytest.mark.parametrize("a, b", [(1e-8, 2.0), (1e-8, 1e12), (0.5, 1e-300), (1e-300, 3.0)])
@pytest.mark.parametrize("x", [[1], [1, 1, 0], [0, 1]])
def test_map_estimate_to_the_last_digits(a, b, x):
    model = linbook.BetaBernoulli(a=a, b=b).fit(np.array(x))
    n1, n0 = sum(x), len(x) - sum(x)
    with mpmath.workdps(700):
        A, B = mpmath.mpf(a) + n1, mpmath.mpf(b) + n0
        if not (A >= 1 and B >= 1):
            pytest.skip("no interior mode")
        exact = float((A - 1) / (A + B - 2))
    assert model.map_estimate() == pytest.approx(exact, rel=1e-14, abs=0)


@pytest.mark.parametrize("b", [1e-300, 0.5, 2.0, 1e12])
def test_log_marginal_likelihood_of_a_huge_prior_is_silent_and_right(b):
    x = np.array([0, 0, 1, 1, 1])
    model = linbook.BetaBernoulli(a=1e300, b=b).fit(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = model.log_marginal_likelihood()
    with mpmath.workdps(700):
        a = mpmath.mpf(1e300)
        exact = float(mpmath.log(mpmath.beta(a + 3, b + 2)) - mpmath.log(mpmath.beta(a, b)))
    assert got == pytest.approx(exact, rel=1e-12, abs=0)
