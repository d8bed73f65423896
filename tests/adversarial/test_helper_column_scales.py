"""Public helpers on features whose scales differ by many decades, a streaming ``converged_``, two messages.

Columns of ``X`` in different units (one near 1e-100, another near 1e100) are valid input,
and every answer here is a double: the right answer is the one of the scaled problem,
mapped back by the scales. Generators: standard normal columns times ``1e-k``, ``1``, ``1e+k``.

* ``gaussian_mle`` / ``mvn_mle``: the covariance maps as ``S_ab s_a s_b``. Before, every
  column was divided by one power of two near the largest entry of ``X``: the small column's
  squares (1e-400) underflowed, and its variance (1e-200, a double) came out exactly 0.
* ``loocv_ridge``: with ``lam = 0`` it is least squares, whatever the columns' scales, so it
  equals :func:`linbook.loocv_least_squares` (which is scale-free); with ``lam > 0`` it equals
  refitting ridge N times. Before, its SVD dropped every singular value below
  ``N eps s_max``: a feature of 1e-8 next to one of 1e8 was left out of the fit (LOO MSE 0.33
  instead of 0.10).
* ``LMS.converged_`` means the normal equations hold. Before, a residual below ``1e-8 ||y||``
  counted as an exact fit, so with ``y`` near 1e9 (an offset the intercept absorbs) a fit
  with 8 times the optimal residual norm reported ``converged_`` true.
* Two errors that named the input but said nothing to do: ``gaussian_mle(unbiased=True)`` on one
  sample, and a later ``partial_fit`` whose ``classes`` differ from the first call's.
"""

import warnings

import numpy as np
import pytest

import linbook
from linbook.online import LMS
from linbook.online.lms import least_squares_optimal

DECADES = (8, 50, 100, 150)


def _columns(k, seed=0, n=30):
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, 3))
    return Z, np.array([10.0 ** -k, 1.0, 10.0 ** k])


@pytest.mark.parametrize("k", DECADES, ids=lambda k: f"1e+-{k}")
@pytest.mark.parametrize("unbiased", (False, True), ids=("mle", "unbiased"))
def test_gaussian_mle_keeps_every_column_scale(k, unbiased):
    Z, s = _columns(k)
    mean, cov = linbook.estimation.gaussian_mle(Z * s, unbiased=unbiased)
    mean_z, cov_z = linbook.estimation.gaussian_mle(Z, unbiased=unbiased)
    np.testing.assert_allclose(mean / s, mean_z, rtol=1e-13, atol=0)
    # every entry relative to its own scale s_a s_b (a double for every pair here)
    np.testing.assert_allclose(cov / np.outer(s, s), cov_z, rtol=1e-12, atol=1e-15)
    assert np.all(np.diag(cov) > 0), "a variance of a non-constant column came out 0"


@pytest.mark.parametrize("k", DECADES, ids=lambda k: f"1e+-{k}")
def test_mvn_mle_keeps_every_column_scale(k):
    Z, s = _columns(k, seed=1)
    _, cov = linbook.mvn_mle(Z * s)
    np.testing.assert_allclose(cov / np.outer(s, s), linbook.mvn_mle(Z)[1], rtol=1e-12, atol=1e-15)


def _brute_loo_ridge(X, y, lam):
    """Refit ridge (centred, intercept unpenalised) without each sample, on equilibrated columns."""
    residuals = []
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        Xk, yk = X[keep], y[keep]
        xm, ym = Xk.mean(axis=0), yk.mean()
        d = np.max(np.abs(Xk - xm), axis=0)
        A = np.vstack([(Xk - xm) / d, np.sqrt(lam) * np.diag(1.0 / d)])
        v = np.linalg.lstsq(A, np.r_[yk - ym, np.zeros(X.shape[1])], rcond=None)[0]
        residuals.append(y[i] - ym - (X[i] - xm) @ (v / d))
    return np.array(residuals)


@pytest.mark.parametrize("k", DECADES, ids=lambda k: f"1e+-{k}")
@pytest.mark.parametrize("seed", range(3))
def test_loocv_ridge_without_penalty_is_least_squares(k, seed):
    Z, s = _columns(k, seed=seed, n=25)
    y = Z @ np.array([1.0, -2.0, 0.5]) + 0.3 * np.random.default_rng(seed + 10).standard_normal(25) + 2.0
    mse, r = linbook.loocv_ridge(Z * s, y, 0.0, return_residuals=True)
    mse_ls, r_ls = linbook.loocv_least_squares(Z * s, y, return_residuals=True)
    np.testing.assert_allclose(r, r_ls, rtol=1e-8, atol=1e-10 * np.abs(r_ls).max())
    assert mse == pytest.approx(mse_ls, rel=1e-8)
    # and least squares is scale-free: the same as on the unscaled columns
    assert mse == pytest.approx(linbook.loocv_least_squares(Z, y), rel=1e-8)


@pytest.mark.parametrize("lam", (1e-12, 1e-3, 1.0))
@pytest.mark.parametrize("seed", range(3))
def test_loocv_ridge_equals_refitting_with_features_1e16_apart(lam, seed):
    Z, s = _columns(8, seed=seed, n=25)
    y = Z @ np.array([1.0, -2.0, 0.5]) + 0.3 * np.random.default_rng(seed + 10).standard_normal(25) + 2.0
    _, r = linbook.loocv_ridge(Z * s, y, lam, return_residuals=True)
    want = _brute_loo_ridge(Z * s, y, lam)
    np.testing.assert_allclose(r, want, rtol=1e-6, atol=1e-8 * np.abs(want).max())


def test_loocv_ridge_keeps_collinear_columns_shared():
    """Exactly repeated columns: ridge splits the weight between them (not least squares on one)."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal(20)
    X = np.column_stack([x, x, rng.standard_normal(20)])
    y = 2.0 * x + 0.3 * rng.standard_normal(20)
    for lam in (1e-30, 0.5, 10.0):
        _, r = linbook.loocv_ridge(X, y, lam, return_residuals=True)
        np.testing.assert_allclose(r, _brute_loo_ridge(X, y, lam), rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("seed", range(3))
def test_lms_converged_only_at_the_least_squares_fit_with_an_offset_target(seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((50, 3))
    y = X @ np.array([1.0, -1.0, 2.0]) + 0.3 * rng.standard_normal(50) + 1e9
    H = np.column_stack([np.ones(50), X])
    best = np.linalg.norm(y - H @ np.linalg.lstsq(H, y, rcond=None)[0])
    for max_iter, tol in ((50, None), (1000, 1e-4)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = LMS(max_iter=max_iter, tol=tol, random_state=seed).fit(X, y)
        excess = np.linalg.norm(y - model.predict(X)) / best - 1.0
        assert not (model.converged_ and excess > 1e-6), (
            f"converged_ with a residual norm {excess:.2g} above the least-squares one")


def test_lms_converged_on_an_exact_fit_near_1e9():
    """The other side: an exact fit whose residual is rounding of y ~ 1e9 still counts as converged."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 2))
    y = X @ np.array([1.0, 0.5]) + 1e9
    assert least_squares_optimal(X, y, np.r_[1e9, 1.0, 0.5], True)


def test_unbiased_covariance_of_one_sample_names_x_and_what_to_do():
    from .harness import assert_clear_error
    with pytest.raises(ValueError) as info:
        linbook.estimation.gaussian_mle(np.ones((1, 2)), unbiased=True)
    assert_clear_error(info.value, "X")


def test_partial_fit_with_other_classes_says_what_to_do():
    """A later partial_fit with a different ``classes`` is refused, the model unchanged, with advice."""
    from linbook.online import SGDClassifier

    from .harness import assert_clear_error
    model = SGDClassifier(random_state=0).partial_fit(np.eye(4)[:, :2], [0, 1, 0, 1], classes=[0, 1])
    before = model.coef_.copy()
    with pytest.raises(ValueError) as info:
        model.partial_fit(np.ones((2, 2)), [0, 1], classes=[0, 1, 2])
    assert_clear_error(info.value, "classes")
    np.testing.assert_array_equal(model.coef_, before)
