"""Session 28 review: adversarial inputs against this session's new code, each against an oracle.

RecursiveLeastSquares with one feature and an intercept and a far row among the first rows: ``A`` (columns
scaled) is a well-conditioned 2 x 2, so the normal equations "succeeded" and the far-row QR solve never ran,
but ``r``'s intercept entry held only the far row's ``s y``: the intercept came out 1e57 off at a row 1e75
times the others (412 instead of 0.934 at 1e20), in ``fit`` and in streams of any chunk size. Oracle: the
weighted ridge minimiser at 400 digits (mpmath, the helper of test_rls_far_rows).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from linbook.online import RecursiveLeastSquares

from .test_rls_far_rows import _exact


def _one_feature_problem(far, pos, n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 1))
    y = X[:, 0] * rng.standard_normal() + 0.5 + 0.1 * rng.standard_normal(n)
    sw = rng.uniform(0.5, 2.0, n)
    X[pos] *= far
    y[pos] = far * rng.standard_normal()
    return X, y, sw


def _stream(model, X, y, sw, chunk):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)       # the first rows alone are rank deficient
        for i in range(0, len(y), chunk):
            model.partial_fit(X[i:i + chunk], y[i:i + chunk], sample_weight=sw[i:i + chunk])
    return model


@pytest.mark.parametrize("far", [1e20, 1e75, 1e150], ids=lambda f: f"far{f:g}")
@pytest.mark.parametrize("pos", [0, 3], ids=["first", "row2p-1"])
@pytest.mark.parametrize("alpha", [0.0, 0.7])
@pytest.mark.parametrize("route", ["fit", "rows", "chunks7"])
def test_rls_one_feature_far_first_rows_intercept_is_the_minimiser(far, pos, alpha, route):
    X, y, sw = _one_feature_problem(far, pos)
    model = RecursiveLeastSquares(prior_precision=alpha)
    if route == "fit":
        model.fit(X, y, sample_weight=sw)
    else:
        _stream(model, X, y, sw, 1 if route == "rows" else 7)
    np.testing.assert_allclose(np.r_[model.coef_, model.intercept_], _exact(X, y, sw, alpha, True), rtol=1e-9)
    assert model.n_samples_seen_ == len(y)


# --- linbook.exercises.close: references and scales it cannot judge by, complex answers ----------------------
# Before: a reference holding inf made every bound inf (any answer matched), complex arrays lost their
# imaginary parts with only a ComplexWarning (so [1 + 5j, 2] matched [1, 2]), and a scale of shape (n, 1)
# broadcast the bound to (n, n).

from linbook.exercises import close  # noqa: E402


@pytest.mark.parametrize("b", [[np.inf, 1.0], [1.0, -np.inf], [np.nan, 1.0]], ids=["inf", "-inf", "nan"])
def test_close_refuses_a_non_finite_reference(b):
    with pytest.raises(ValueError, match="reference b holds NaN or inf"):
        close(np.array([0.0, 999.0]), np.array(b))


@pytest.mark.parametrize("a, b", [([1 + 5j, 2.0], [1.0, 2.0]), ([1.0, 2.0 + 1e-3j], [1.0, 2.0])])
def test_close_rejects_a_complex_answer(a, b):
    verdict = close(np.array(a), np.array(b))
    assert not verdict and "complex" in str(verdict)


def test_close_refuses_a_complex_reference_and_accepts_zero_imaginary_parts():
    with pytest.raises(ValueError, match="complex"):
        close(np.array([1.0, 2.0]), np.array([1 + 5j, 2.0]))
    assert close(np.array([1.0, 2.0]), np.array([1.0, 2.0], dtype=complex))


@pytest.mark.parametrize("scale", [np.ones((2, 1)), np.ones(3), -1.0, np.array([np.nan, 1.0]), np.inf])
def test_close_refuses_a_scale_of_the_wrong_shape_or_sign(scale):
    with pytest.raises(ValueError, match="scale must be"):
        close(np.array([1.0, 2.0]), np.array([1.0, 2.0]), scale=scale)


def test_close_with_a_valid_scale_array_judges_each_entry_against_its_own():
    # entry 1 is 1e-9 off: inside atol * 1e3 = 1e-7, outside atol * 1 = 1e-10 (rtol 0 isolates atol)
    a, b = np.array([1.0, 1e-9]), np.array([1.0, 0.0])
    assert close(a, b, rtol=0.0, scale=np.array([1.0, 1e3]))
    assert not close(a, b, rtol=0.0, scale=np.array([1e3, 1.0]))


# --- partial_fit's re-check of the parameters: a renamed parameter moved to its new name -------------------
# Before: a stream started with the deprecated alpha=0.5, moved to prior_precision=0.5 as the FutureWarning
# says, was refused ("prior_precision changed from 0.0 to 0.5") though its prior had not changed.


def _rls_chunks():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((30, 2))
    return X, X @ np.array([1.0, -2.0]) + 0.3 + 0.1 * rng.standard_normal(30)


def test_rls_stream_moved_from_alpha_to_prior_precision_keeps_going():
    X, y = _rls_chunks()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        model = RecursiveLeastSquares(alpha=0.5).partial_fit(X[:15], y[:15])
    model.set_params(alpha="deprecated", prior_precision=0.5)
    model.partial_fit(X[15:], y[15:])
    whole = RecursiveLeastSquares(prior_precision=0.5).fit(X, y)
    np.testing.assert_allclose(np.r_[model.coef_, model.intercept_], np.r_[whole.coef_, whole.intercept_],
                               rtol=1e-12)


@pytest.mark.parametrize("change", [{"prior_precision": 1.0}, {"alpha": 1.0, "prior_precision": 0.0}])
def test_rls_stream_refuses_a_changed_prior_and_stays_as_it_was(change):
    X, y = _rls_chunks()
    model = RecursiveLeastSquares(prior_precision=0.5).partial_fit(X[:15], y[:15])
    before = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in vars(model).items()}
    model.set_params(**change)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with pytest.raises(ValueError, match="prior_precision changed from 0.5 to 1.0"):
            model.partial_fit(X[15:], y[15:])
    assert model.n_samples_seen_ == before["n_samples_seen_"]
    np.testing.assert_array_equal(model.coef_, before["coef_"])


# --- levenberg_marquardt: the damping's unit follows J ------------------------------------------------------
# Before: u was fixed at x0's largest |J_ij|, and lam's range [1e-15, 1e16] relative to it; a Jacobian that
# grows by more than ~1e8 on the way (x^3 - 8 from x = 1e-5: J from 3e-10 to 12) needed lam beyond the range,
# so the run stopped at x = 0.443 with converged False (the pre-session absolute lam reached 2).

from scipy.optimize import least_squares  # noqa: E402

from linbook.optim import levenberg_marquardt  # noqa: E402


def _cube(x):
    return np.array([x[0] ** 3 - 8.0])


def _cube_jac(x):
    return np.array([[3.0 * x[0] ** 2]])


@pytest.mark.parametrize("start", [1e-5, 3e-5, 1e-4, -1e-5], ids=lambda s: f"x0={s:g}")
@pytest.mark.parametrize("scale", [1.0, 1e-100, 1e100], ids=lambda s: f"r*{s:g}")
def test_levenberg_marquardt_reaches_the_root_when_the_jacobian_grows(start, scale):
    def residual(x):
        return scale * _cube(x)

    def jac(x):
        return scale * _cube_jac(x)

    x0 = np.array([start])
    result = levenberg_marquardt(residual, x0, jac)
    reference = least_squares(_cube, x0, jac=_cube_jac, method="lm", xtol=1e-15, ftol=1e-15, gtol=1e-15).x
    np.testing.assert_allclose(reference, [2.0], rtol=1e-12)
    assert result.converged
    np.testing.assert_allclose(result.x, reference, rtol=1e-9)
