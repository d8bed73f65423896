"""The adversarial harness can fail: deliberately bad fake estimators are caught.

Each fake is run through the harness's own rules and through a real adversarial test
(``tests/adversarial/test_linear.py::test_feature_scale_scan``), with the fake in place of
the model. A fake that passes where it is right (scale 1) and fails elsewhere shows the
failures come from its defect, not from a broken set-up.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from sklearn.base import BaseEstimator, RegressorMixin

from linbook.linear import LinearRegression
from tests.adversarial import test_linear as linear_cases
from tests.adversarial.harness import (
    SCALES,
    answer_or_clear_error,
    assert_all_finite,
    clear_error,
    right_answer_required,
    unrepresentable,
)

# What the harness used to accept as a clear error: 20+ characters and one of these words.
_OLD_ADVICE_WORDS = re.compile(r"must|should|cannot|only|call|fit", re.IGNORECASE)
WORDY = ("This estimator must only be called on well-behaved input; it cannot fit this, and "
         "you should call fit again once it is fine.")


class _LeastSquares(BaseEstimator, RegressorMixin):
    """Least squares with an intercept: the right answer of the scale scan at every scale."""

    def _solve(self, X, y):
        A = np.column_stack([X, np.ones(len(X))])
        w = np.linalg.lstsq(A, y, rcond=None)[0]
        self.coef_, self.intercept_ = w[:-1], float(w[-1])
        return self

    def fit(self, X, y):
        return self._solve(np.asarray(X, dtype=float), np.asarray(y, dtype=float))

    def predict(self, X):
        return np.asarray(X, dtype=float) @ self.coef_ + self.intercept_

    def aic(self, X, y):
        return 0.0


class RefusesRescaledInput(_LeastSquares):
    """Refuses any features outside [1e-3, 1e3] with a wordy message that names nothing."""

    def fit(self, X, y):
        if not 1e-3 <= np.max(np.abs(X)) <= 1e3:
            raise ValueError(WORDY)
        return super().fit(X, y)


class ClipsSilently(_LeastSquares):
    """'Guards' against extreme features by clipping them to [-1e6, 1e6] and flushing those
    below 1e-6 to zero: finite, plausible and wrong coefficients, and no warning."""

    def fit(self, X, y):
        X = np.clip(np.asarray(X, dtype=float), -1e6, 1e6)
        return super().fit(np.where(np.abs(X) < 1e-6, 0.0, X), y)


def _scan(monkeypatch, fake, s):
    """Run the real feature-scale case with ``fake`` as the model on the scaled data."""
    monkeypatch.setattr(linear_cases, "_mapped", lambda name, s: (fake(), LinearRegression()))
    linear_cases.test_feature_scale_scan("LinearRegression", s)


@pytest.mark.parametrize("fake", [RefusesRescaledInput, ClipsSilently])
def test_fake_passes_where_it_is_right(monkeypatch, fake):
    _scan(monkeypatch, fake, 1.0)


@pytest.mark.parametrize("s", [s for s in SCALES if s != 1.0])
def test_scale_case_flags_a_model_that_refuses_rescaled_input(monkeypatch, s):
    assert len(WORDY) >= 20 and _OLD_ADVICE_WORDS.search(WORDY)      # the old harness took it as advice
    with pytest.raises(AssertionError, match="refused extreme but valid input"):
        _scan(monkeypatch, RefusesRescaledInput, s)


@pytest.mark.parametrize("s", [1e-12, 1e-8, 1e8, 1e150, 1e300])
def test_scale_case_flags_a_silently_wrong_answer(monkeypatch, s):
    # (at 1e-4 and 1e4 the scan's features, |x| < 20, stay inside the fake's guard: it is right there)
    with pytest.raises(AssertionError, match="Not equal to tolerance"):
        _scan(monkeypatch, ClipsSilently, s)


def test_refusal_of_an_unreachable_answer_still_needs_a_clear_error():
    X = np.random.default_rng(0).standard_normal((20, 2)) * 1e300
    why = unrepresentable(np.ones(2), 1e300, 1e300)
    assert why and "beyond the largest double" in why
    with pytest.raises(AssertionError, match="does not name the offending input X"):
        right_answer_required(lambda: RefusesRescaledInput().fit(X, X[:, 0]), unreachable=why)


def test_unrepresentable_draws_the_line_at_the_normal_doubles():
    tiny, big = np.finfo(float).tiny, np.finfo(float).max
    assert unrepresentable([3.0, 0.0], 1e-300) is None
    assert unrepresentable([1.0], tiny) is None and unrepresentable([1.0], big) is None
    assert "below the smallest normal" in unrepresentable([1.0], 1e-300, 1e-10)
    assert "beyond the largest double" in unrepresentable([2.0], big)
    assert unrepresentable([0.0, 0.0], 1e-300, 1e-300) is None            # zero is exact at any scale


@pytest.mark.parametrize("message, corrupts, clear", [
    (WORDY, "X", False),                                                 # names nothing, advises nothing
    ("Input X contains NaN.", "X", False),                               # a diagnosis, no action
    ("X must be 2-D, of shape (n_samples, n_features).", "X", False),    # "must" is not an action
    ("Reshape X to 2-D, of shape (n_samples, n_features).", "X", True),
    ("Weights must be >= 0. Pass non-negative weights.", "sample_weight", False),   # not named as spelled
    ("Negative values in `sample_weight`. Pass sample_weight >= 0.", "sample_weight", True),
    ("Input y contains NaN. Drop the samples whose target is missing.", "X", False),  # names the wrong input
    ("the training set is empty; the split used is wrong (X)", "X", False),         # nouns, not imperatives
    ("lam must be >= 0; got -1. Set lam >= 0.", "lam", True),
    ("lam must be >= 0; got -1. Set lam >= 0.", "lambda", False),
    ("the fit diverged. Cure: scale the features, lower eta0 (or use eta0='auto').", ("eta0", "lam"), True),
])
def test_clear_error_needs_the_input_and_an_action(message, corrupts, clear):
    assert clear_error(ValueError(message), corrupts) is clear
    if not clear:
        with pytest.raises(AssertionError, match="unclear error"):
            answer_or_clear_error(lambda: (_ for _ in ()).throw(ValueError(message)), corrupts=corrupts)


def test_clear_error_rejects_linalg_and_other_types():
    assert not clear_error(np.linalg.LinAlgError("Singular matrix. Set X to full rank."), "X")
    assert not clear_error(RuntimeError("X overflowed. Scale X."), "X")


def test_silent_nan_is_flagged():
    with pytest.raises(AssertionError, match="silent non-finite"):
        assert_all_finite(np.array([1.0, np.nan]))
