"""Session-29 adversarial sweep of the classifiers (helper s29clf). Each case names its oracle."""

import re
import warnings

import numpy as np
import pytest

import linbook

# --- GaussianNaiveBayes: the error when var_smoothing * max_j Var(x_j) overflows float64 -------------------------
# Before: "var_smoothing * max_j Var(x_j) overflows float64 (var_smoothing = 1e+10); lower var_smoothing (near 1e300
# ...)" -- it named neither the column of X whose variance makes the product overflow nor how far to lower
# var_smoothing, and for var_smoothing = 1e10 beside a column of size 1e150 "near 1e300" was misleading.
# Oracle: the largest var_smoothing quoted in the message must fit (the fit succeeds), and 10 times it must not.

_NB_OVERFLOW = [(1e10, (1e150, 1e-150), 0), (1e306, (1e3, 1.0), 0), (1e300, (1.0, 1e10), 1),
                (1e200, (1e60, 1e-60, 1.0), 0), (1e20, (1.0, 1e-3, 1e145), 2), (1e250, (1e-100, 1e-70), 1),
                (1e300, (1e-5, 1e5, 1.0, 1.0), 1), (1e9, (1e200, 1e-200), 0)]


@pytest.mark.parametrize("vs, scales, column", _NB_OVERFLOW)
def test_naive_bayes_smoothing_overflow_names_the_column_and_the_limit(vs, scales, column):
    rng = np.random.default_rng(len(scales))
    X = rng.standard_normal((60, len(scales)))
    y = (X[:, 0] + 0.3 * rng.standard_normal(60) > 0).astype(int)
    X = X * np.asarray(scales)
    with pytest.raises(ValueError) as info:
        linbook.GaussianNaiveBayes(var_smoothing=vs).fit(X, y)
    message = str(info.value)
    assert f"Var of column {column} of X" in message
    assert "var_smoothing" in message and "rescale" in message
    limit = float(re.search(r"var_smoothing to ([0-9.e+-]+) or less", message).group(1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        proba = linbook.GaussianNaiveBayes(var_smoothing=limit).fit(X, y).predict_proba(X)
        assert np.all(np.isfinite(proba)) and np.allclose(proba.sum(axis=1), 1.0)
        with pytest.raises(ValueError, match="overflows"):
            linbook.GaussianNaiveBayes(var_smoothing=limit * 10).fit(X, y)
