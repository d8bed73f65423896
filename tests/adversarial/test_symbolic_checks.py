"""Adversarial cases for linbook.symbolic: a check must never pass on something it did not show.

The book's derivation checks come in two kinds. A positive check (``check_numeric``,
``check_close``, ``check_gradient``, ``check_true``, ...) passes only when the claim is
shown to hold; a negative check (``check_differs``, ``check_fails``) passes only when the
note's wrong form is shown to differ. NaN is the trap for both: ``nan != nan``, so before,
two identical forms undefined at the sampled points (``np.log`` vs ``np.log`` on [-2, 2])
were "shown to differ", ``check_fails`` counted a NaN failure of the positive check as a
refutation, ``check_true(nan)`` passed (NaN is truthy) and so did a claim about an empty
array, and a matrix with an inf entry was "positive definite".

Right answer: a NaN or inf (or no value at all) shows nothing, so every such case raises
:class:`DerivationError` saying it could not evaluate, and ``check_fails`` treats that as
inconclusive (it raises, never passes). Values that are finite on both sides still decide.
"""

from __future__ import annotations

import numpy as np
import pytest

from linbook.symbolic import (DerivationError, check_close, check_differs, check_equal, check_fails, check_gradient,
                              check_hessian, check_numeric, check_positive_definite, check_true)

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")   # log/sqrt of negatives, by design


def _log_sum(v):
    return float(np.sum(np.log(v)))


#: Negative checks whose two sides are the same function (or the same values): a NaN must not
#: count as a difference, so each must raise.
SAME_FORMS = {
    "differs: log vs log on [-2, 2]": lambda: check_differs(np.log, lambda t: np.log(t)),
    "differs: sqrt vs sqrt, all points negative": lambda: check_differs(np.sqrt, np.sqrt, points=[-1.0, -2.0]),
    "differs: NaN arrays": lambda: check_differs(np.array([np.nan, 1.0]), np.array([np.nan, 1.0])),
    "differs: only NaN": lambda: check_differs(np.nan, np.nan),
    "fails: check_numeric, log vs log": lambda: check_fails(check_numeric, np.log, np.log, points=[-1.0, -0.5]),
    "fails: check_close, NaN vs NaN": lambda: check_fails(check_close, np.nan, np.nan),
    "fails: check_gradient, NaN at x": lambda: check_fails(check_gradient, _log_sum, lambda v: 1.0 / v,
                                                           np.array([-1.0, 2.0])),
    "fails: check_hessian, NaN at x": lambda: check_fails(check_hessian, np.log, lambda v: np.diag(1.0 / v),
                                                          np.array([-1.0, 2.0])),
}


@pytest.mark.parametrize("case", SAME_FORMS, ids=list(SAME_FORMS))
def test_a_nan_is_not_a_difference(case):
    with pytest.raises(DerivationError, match="could not|unexpectedly|expected"):
        SAME_FORMS[case]()


def test_differences_where_both_sides_are_finite_still_decide():
    # log|x| vs log x: equal where x > 0, so only the finite points count, and they agree
    with pytest.raises(DerivationError, match="unexpectedly agrees"):
        check_differs(lambda t: np.log(np.abs(t)), np.log, points=[-1.0, 0.5, 2.0])
    # a real difference at a finite point is shown, NaN elsewhere or not
    assert check_differs(lambda t: 2 * np.log(t), np.log, points=[-1.0, 0.5]).method.startswith("differs")
    assert check_differs(np.array([np.nan, 1.0]), np.array([np.nan, 2.0])).method.startswith("differs")
    assert check_fails(check_gradient, lambda v: float(v @ v), lambda v: v, np.ones(2)).method == "fails as expected"


@pytest.mark.parametrize("condition", [np.nan, np.array([np.nan, 1.0]), np.array([]), np.float64("nan")],
                         ids=["nan", "nan-in-array", "empty", "np-nan"])
def test_check_true_refuses_nan_and_empty_claims(condition):
    with pytest.raises(DerivationError, match="could not evaluate"):
        check_true(condition, "claim")


def test_check_true_still_decides_booleans():
    assert check_true(np.array([True, True]), "ok").method == "claim"
    with pytest.raises(DerivationError, match="claim is false"):
        check_true(np.array([True, False]), "false")


@pytest.mark.parametrize("M", [np.diag([np.inf, 1.0]), np.array([[np.nan, 0.0], [0.0, 1.0]]), np.zeros((0, 0))],
                         ids=["inf", "nan", "empty"])
def test_positive_definite_needs_finite_entries(M):
    with pytest.raises(DerivationError, match="could not evaluate"):
        check_positive_definite(M, "PD")


def test_positive_checks_say_when_nothing_could_be_compared():
    with pytest.raises(DerivationError, match="could not evaluate"):
        check_numeric(np.log, np.log, points=[-1.0])
    with pytest.raises(DerivationError, match="could not evaluate"):
        check_close(np.nan, 1.0)
    with pytest.raises(DerivationError, match="could not evaluate"):
        check_gradient(_log_sum, lambda v: 1.0 / v, np.array([-1.0, 2.0]))


def test_numpy_arrays_of_sympy_entries_are_compared_entrywise():
    """np.array([x, y]) is how a derivation often holds a vector; check_equal raised AttributeError
    ('ImmutableDenseNDimArray' object has no attribute 'evalf') and check_differs TypeError on it."""
    import sympy as sp
    x, y = sp.symbols("x y", real=True)
    assert check_equal(np.array([x, y]), sp.Matrix([x, y])).method == "symbolic"
    with pytest.raises(DerivationError, match="sides differ"):
        check_equal(np.array([x, y]), np.array([x, -y]))
    assert check_differs(np.array([x, y]), np.array([x, -y])).method.startswith("differs")
    with pytest.raises(DerivationError, match="unexpectedly"):
        check_differs(np.array([x, y]), [x, y])
