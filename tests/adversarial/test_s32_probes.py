"""Session 32: silent wrong answers found by two independent probes, one test per class.

- Leave-one-out and leverages (``loocv_least_squares``, ``loocv_ridge``, ``hat_diagonal``): a column far from 0
  with a small but exact spread (``1e15 + k``, 150 units in its last place) was counted as the intercept's and
  dropped: the MSE of the intercept-only model, 380 times the right one. The rank test now grants the entries as
  given only their own rounding (``linbook.selection._GIVEN``). Oracle: the same call on ``X - offset``, exact.
- ``best_fixed_parameter`` (and ``OnlineGradientDescent.regret``): columns 1e14 apart in scale lost a coordinate to
  the SVD's rank cut (squared loss: total 61.6 where it is 0.28); 1e8 apart, HiGHS's absolute tolerances left the
  absolute loss 1.3 % above its minimum. Both now solve on columns of one size. Oracle: the exact scale invariance.
- ``LMS.converged_`` was True for a fit that ignored a column of 1e-9 (its coefficient 1.5e-10 where it is 5):
  any residual below 1e-8 of ``y``'s spread counted as an exact fit. Now only one within its own rounding.
- ``mutual_information_scores`` on a DataFrame of an int64 identifier beside a float column: the common float64
  dtype merged identifiers above 2^53 into one category (score 0 where it is 0.69).
- ``LeastAbsoluteDeviation`` with weights over 1e+-50: HiGHS's vertex missed the rows of small weight (a coefficient
  0, the objective up to 1400 times its least). Oracle: the exact optimum, by exhaustion over vertices in rationals.
- ``GaussianNaiveBayes`` far from the data beside classes of equal variance: 0.5 / 0.5 and the wrong class at 1e17.
  Oracle: the posterior of the fitted parameters at 500 digits. ``QDA`` likewise beside classes of one covariance.
- ``score`` on Dask collections, unchecked: NaN at weights of 1e307, negative weights accepted. ``fit`` changed the
  caller's non-canonical CSR matrix in place. ``Perceptron`` kept the previous form's attributes on a refit.
- The Gaussian classifiers on Dask with rows of weight 0 at 1e200: NaN posteriors. ``LinearRegression`` gave an
  all-zero column beside one near 1e8 a coefficient of -0.2 (``gelsd`` mixed their null directions). Logistic and
  probit ``lam = 0`` fits gave an all-zero column beside one scaled by 2^-60 a coefficient of 5e17, and on Dask,
  beside a row 1e9 times the others, coefficients of ~0.
"""

import warnings

import numpy as np
import pytest

import linbook
from linbook.online import LMS, OnlineGradientDescent
from linbook.online.ogd import best_fixed_parameter

try:
    import dask.array as da
except ImportError:                      # the Dask case is skipped
    da = None

_STEPS = [(1e16, 8.0), (1e15, 1.0), (1e15, 0.25), (1e16, 2.0), (1.7e18, 1000.0), (-1e15, 3.0)]


def _trend(n=20, seed=0):
    k = np.arange(float(n))
    return k, 3.0 * k + np.random.default_rng(seed).standard_normal(n)


@pytest.mark.parametrize("base, step", _STEPS)
def test_leave_one_out_keeps_an_offset_column_of_small_exact_spread(base, step):
    k, y = _trend()
    X = np.c_[base + step * k, np.random.default_rng(1).standard_normal(k.size)]
    shifted = X - [base, 0.0]                     # exact: the entries are within a factor 2 of base
    assert np.array_equal(shifted + [base, 0.0], X)
    assert linbook.loocv_least_squares(X, y) == pytest.approx(linbook.loocv_least_squares(shifted, y), rel=1e-12)
    assert linbook.loocv_ridge(X, y, 1.0) == pytest.approx(linbook.loocv_ridge(shifted, y, 1.0), rel=1e-12)
    np.testing.assert_allclose(linbook.hat_diagonal(X, fit_intercept=True),
                               linbook.hat_diagonal(shifted, fit_intercept=True), rtol=1e-12, atol=0)


def test_leave_one_out_still_drops_a_rounded_multiple_of_an_offset_column():
    """The other side of the rule: ``3 x`` of a column offset by 1e6 is rounding away from dependent, and is dropped."""
    rng = np.random.default_rng(2)
    x = 1e6 + rng.standard_normal(30)
    y = x - 1e6 + 0.1 * rng.standard_normal(30)
    with_multiple = np.c_[x, 3.0 * x]
    assert linbook.loocv_least_squares(with_multiple, y) == pytest.approx(linbook.loocv_least_squares(x[:, None], y),
                                                                         rel=1e-10)


@pytest.mark.parametrize("scale", [1e8, 1e14, 1e15, 1e150, 1e-8, 1e-150])
@pytest.mark.parametrize("loss", ["squared_error", "absolute_error"])
def test_best_fixed_parameter_does_not_depend_on_column_scales(loss, scale):
    rng = np.random.default_rng(8)
    X = rng.standard_normal((50, 3))
    y = X @ [1.0, -2.0, 3.0] + 0.1 * rng.standard_normal(50)
    units = np.array([scale, 1.0, 1.0])
    theta, total = best_fixed_parameter(X, y, loss=loss)
    theta_scaled, total_scaled = best_fixed_parameter(X * units, y, loss=loss)
    assert total_scaled == pytest.approx(total, rel=1e-9)
    np.testing.assert_allclose(theta_scaled * units, theta, rtol=0, atol=1e-8)


def test_regret_on_columns_of_very_different_scales():
    rng = np.random.default_rng(8)
    X = rng.standard_normal((50, 3)) * [1e150, 1.0, 1.0]
    y = X @ [1e-150, -2.0, 3.0] + 0.1 * rng.standard_normal(50)
    model = OnlineGradientDescent().fit(X, y)
    units = np.array([1e150, 1.0, 1.0])
    best = 0.5 * np.sum((X @ (np.linalg.lstsq(X / units, y, rcond=None)[0] / units) - y) ** 2)
    assert model.regret(X, y, ks=np.array([50]))[0] == pytest.approx((model.losses_.sum() - best) / 50, rel=1e-9)


def test_lms_is_not_converged_when_it_ignored_a_small_column():
    rng = np.random.default_rng(8)
    X = rng.standard_normal((200, 2)) * [1.0, 1e-9]
    y = X @ [2.0, 5.0]
    model = LMS().fit(X, y)
    if abs(model.coef_[1] - 5.0) > 1e-3:          # the fit did not find the small column's coefficient
        assert not model.converged_


def test_lms_is_converged_on_an_exact_fit_it_reaches():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((200, 2))
    model = LMS().fit(X, X @ [1.0, 2.0] + 3.0)
    np.testing.assert_allclose(np.r_[model.coef_, model.intercept_], [1.0, 2.0, 3.0], rtol=0, atol=1e-12)
    assert model.converged_


def test_mutual_information_scores_keeps_each_dataframe_column_dtype():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    ids = 10 ** 17 + rng.integers(0, 8, 400)
    y = (ids - 10 ** 17) % 2
    frame = pd.DataFrame({"user": ids, "score": rng.standard_normal(400).round(1)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scores = linbook.mutual_information_scores(frame, y)
    assert scores[0] == pytest.approx(linbook.mutual_information(ids, y), rel=1e-12)
    assert scores[1] == pytest.approx(linbook.mutual_information(frame["score"].to_numpy(), y), rel=1e-12)


def _exact_lad_optimum(A, y, sw):
    """The least-absolute-deviation optimum by exhaustion over the vertices (``k`` rows interpolated), in rationals."""
    from fractions import Fraction
    from itertools import combinations

    def solve(rows):
        M = [[Fraction(a) for a in A[i]] + [Fraction(y[i])] for i in rows]
        k = len(rows)
        for c in range(k):
            p = next((r for r in range(c, k) if M[r][c] != 0), None)
            if p is None:
                return None
            M[c], M[p] = M[p], M[c]
            for r in range(k):
                if r != c and M[r][c] != 0:
                    f = M[r][c] / M[c][c]
                    M[r] = [a - f * b for a, b in zip(M[r], M[c])]
        return [M[i][k] / M[i][i] for i in range(k)]

    def objective(q):
        return sum(Fraction(s) * abs(Fraction(t) - sum(Fraction(a) * c for a, c in zip(row, q)))
                   for s, row, t in zip(sw, A, y))

    vertices = (solve(rows) for rows in combinations(range(len(y)), A.shape[1]))
    return np.array([float(c) for c in min((q for q in vertices if q is not None), key=objective)])


@pytest.mark.parametrize("span", [30, 50, 80])
@pytest.mark.parametrize("seed", range(6))
def test_lad_with_weights_over_many_decades(seed, span):
    """Weights from 1e-span to 1e+span: HiGHS's vertex missed the rows of small weight (a coefficient 0, the
    objective up to 1400 times its least); the edge descent after it reaches the exact optimum."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((14, 2))
    y = X @ [1.0, 2.0] + rng.laplace(size=14)
    sw = 10.0 ** rng.uniform(-span, span, 14)
    model = linbook.LeastAbsoluteDeviation().fit(X, y, sample_weight=sw)
    exact = _exact_lad_optimum(np.c_[X, np.ones(14)], y, sw)
    np.testing.assert_allclose(np.r_[model.coef_, model.intercept_], exact, rtol=0, atol=1e-12)


@pytest.mark.parametrize("x", [1e6, 1e10, 1e12, 1e17, 1e20, 1e200, -1e17])
def test_naive_bayes_far_rows_beside_classes_of_equal_variance(x):
    """A column constant within each class: both classes get the smoothing's variance, equal, and differ only in the
    linear term of their scores, which the quadratic ``(z - mu_c)^2 / v_c`` rounded away (0.5 / 0.5 at 1e17, the
    wrong class by argmax). Oracle: the posterior from the fitted ``means_``, ``var_``, ``priors_`` at 500 digits."""
    mpmath = pytest.importorskip("mpmath")
    rng = np.random.default_rng(17)
    y = np.r_[[0] * 20, [1] * 20]
    X = np.c_[y.astype(float), rng.standard_normal(40)]
    model = linbook.GaussianNaiveBayes().fit(X, y)
    row = np.array([[x, 0.3]])
    with mpmath.workdps(500):                     # (x^2 / v ~1e409 beside a difference of ~1e209)
        joint = [mpmath.log(model.priors_[c]) + sum(
            -(mpmath.mpf(row[0, j]) - model.means_[c, j]) ** 2 / (2 * mpmath.mpf(model.var_[c, j]))
            - mpmath.log(2 * mpmath.pi * model.var_[c, j]) / 2 for j in range(2)) for c in range(2)]
        top = max(joint)
        evidence = top + mpmath.log(sum(mpmath.exp(t - top) for t in joint))
        want = np.array([float(t - evidence) for t in joint])
    got = model.predict_log_proba(row)[0]
    assert model.predict(row)[0] == int(np.argmax(want))
    big = np.argmin(want)
    assert got[big] == pytest.approx(want[big], rel=1e-12)
    assert got[1 - big] == pytest.approx(want[1 - big], abs=1e-12)


@pytest.mark.parametrize("x", [1e6, 1e15, 1e17, 1e100, -1e17, 1e300])
def test_qda_far_rows_beside_classes_of_one_covariance(x):
    """Two classes, one a translate of the other: their covariances are equal bit for bit, and the log-odds is
    linear in ``x``, ``-(Sigma^{-1})_00 (x - 1/2)``; the Mahalanobis distances (~``x^2``) rounded it away (4.7 % off
    at 1e15, 0.5 / 0.5 and the wrong class at 1e17). Oracle: that line, from the fitted covariance."""
    base = np.array([[-1.0, -2.0], [1.0, 0.5], [0.5, 2.0], [-0.5, -0.5], [0.0, 0.0]])
    model = linbook.QDA().fit(np.vstack([base, base + [1.0, 0.0]]), np.r_[[0] * 5, [1] * 5])
    slope = np.linalg.inv(model.covariances_[0])[0, 0]
    log_odds = -slope * (x - 0.5)                   # log p(0 | x) - log p(1 | x)
    got = model.predict_log_proba(np.array([[x, 0.0]]))[0]
    assert model.predict(np.array([[x, 0.0]]))[0] == (0 if log_odds > 0 else 1)
    loser = 1 if log_odds > 0 else 0
    assert got[loser] == pytest.approx(-abs(log_odds), rel=1e-12)


def test_perceptron_refit_in_another_form_drops_the_old_forms_attributes():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((100, 3))
    y = (X[:, 0] > 0).astype(int)
    model = linbook.Perceptron(form="dual").fit(X, y)
    model.set_params(form="pocket").fit(X[:50], y[:50])
    assert not hasattr(model, "alpha_")
    model.set_params(form="primal").fit(X, y)
    assert not hasattr(model, "pocket_errors_") and not hasattr(model, "pocket_update_")


@pytest.mark.parametrize("make", [linbook.LeastAbsoluteDeviation, linbook.LogisticRegression, linbook.ProbitRegression,
                                  linbook.LinearRegression, lambda: linbook.Perceptron(random_state=0)],
                         ids=["LAD", "logistic", "probit", "OLS", "Perceptron"])
def test_fit_leaves_the_callers_sparse_matrix_as_it_was(make):
    """A CSR matrix storing each entry as two halves, indices unsorted: fit sums them on its own copy (scipy's column
    indexing did it in place, halving the caller's stored entries)."""
    import scipy.sparse as sps

    rng = np.random.default_rng(0)
    dense = rng.standard_normal((60, 4)) * (rng.random((60, 4)) < 0.6)
    y = (dense[:, 0] + 0.5 * rng.standard_normal(60) > 0).astype(int)
    csr = sps.csr_matrix(dense)
    data, indices = [], []
    for i in range(60):                           # each row's entries, then the same entries in reverse order
        row = slice(csr.indptr[i], csr.indptr[i + 1])
        data += [csr.data[row] / 2, csr.data[row][::-1] / 2]
        indices += [csr.indices[row], csr.indices[row][::-1]]
    halves = sps.csr_matrix((np.concatenate(data), np.concatenate(indices), 2 * csr.indptr), shape=csr.shape)
    assert not halves.has_canonical_format and np.array_equal(halves.toarray(), dense)
    stored = (halves.data.copy(), halves.indices.copy(), halves.indptr.copy())
    model = make().fit(halves, y)
    assert all(np.array_equal(a, b) for a, b in zip(stored, (halves.data, halves.indices, halves.indptr)))
    np.testing.assert_allclose(model.predict(dense), make().fit(csr, y).predict(dense), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("weights", [1.0, 1e307, 5e-324])
def test_score_on_dask_is_scored_and_checked_as_in_memory(weights):
    pytest.importorskip("dask")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 3))
    y = X @ [1.0, 2.0, 3.0] + rng.standard_normal(200)
    sw = rng.uniform(0.5, 2.0, 200) * weights if weights != 5e-324 else np.full(200, 5e-324)
    blocks = lambda a: da.from_array(a, chunks=50)   # noqa: E731
    regressor = linbook.LinearRegression().fit(X, y)
    assert regressor.score(blocks(X), blocks(y), blocks(sw)) == regressor.score(X, y, sw)
    labels = (y > 0).astype(int)
    classifier = linbook.LogisticRegression().fit(X, labels)
    assert classifier.score(blocks(X), blocks(labels), blocks(sw)) == classifier.score(X, labels, sw)
    with pytest.raises(ValueError, match="sample_weight"):
        regressor.score(blocks(X), blocks(y), blocks(sw - 2.0 * sw.max()))


@pytest.mark.parametrize("make", [linbook.DiagonalLDA, linbook.GaussianNaiveBayes, linbook.NearestShrunkenCentroids,
                                  linbook.LDA, linbook.QDA])
def test_gaussian_classifiers_on_dask_leave_out_rows_of_weight_zero(make):
    """Rows of weight 0 holding 1e200: in memory they are dropped; on Dask ``0 * inf`` made the diagonal models'
    squared residuals NaN (NaN posteriors, or a garbled error)."""
    if da is None:
        pytest.skip("dask is not installed")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 2))
    y = (X[:, 0] > 0).astype(int)
    sw = np.ones(200)
    sw[:10], X[:10] = 0.0, 1e200
    in_memory = make().fit(X, y, sample_weight=sw)
    on_blocks = make().fit(da.from_array(X, chunks=(50, 2)), da.from_array(y, chunks=50),
                           sample_weight=da.from_array(sw, chunks=50))
    np.testing.assert_allclose(on_blocks.predict_proba(X[10:]), in_memory.predict_proba(X[10:]), rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_least_squares_gives_a_zero_column_no_weight_beside_an_offset_column(seed):
    """A column of zeros beside one near 1e8: ``gelsd`` on the centred copy mixed the zero column's null direction
    with the offset column's (1e-8 of its size once centred): coefficients -0.34 to 0.16 where the minimum-norm fit
    has 0. Oracle: the fit on the exactly shifted column (and a duplicated column split evenly)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((100, 5))
    X[:, 1], X[:, 0] = 0.0, X[:, 0] + 1e8
    y = 3 * (X[:, 0] - 1e8) + X[:, 2] + 0.1 * rng.standard_normal(100)
    shift = np.array([1e8, 0, 0, 0, 0])
    model = linbook.LinearRegression().fit(X, y)
    assert abs(model.coef_[1]) < 1e-12
    np.testing.assert_allclose(model.coef_, linbook.LinearRegression().fit(X - shift, y).coef_, rtol=0, atol=1e-12)
    X[:, 1] = X[:, 2]
    twins = linbook.LinearRegression().fit(X, y).coef_[1:3]
    assert twins[0] == pytest.approx(twins[1], rel=1e-12)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("make", [linbook.LogisticRegression, linbook.ProbitRegression])
@pytest.mark.parametrize("power", [40, 60])
def test_least_norm_fit_with_a_zero_column_beside_a_small_one(power, make, sparse):
    """``lam = 0``, an all-zero column beside one scaled by 2^-60: a rounding-level entry of the null basis,
    mapped back by 2^60, became its largest, and the zero column got a coefficient of 5e17 (``converged_`` True).
    Oracle: the fit on the unscaled columns (scaling a column by 2^-k scales its coefficient by 2^k, exactly)."""
    import scipy.sparse as sps

    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 8))
    X[:, 3] = 0.0
    y = (X @ rng.standard_normal(8) + 0.3 * rng.standard_normal(200) > 0).astype(int)
    units = np.r_[1.0, 2.0 ** -power, np.ones(6)]
    scaled = X * units
    model = make(lam=0.0).fit(sps.csr_matrix(scaled) if sparse else scaled, y)
    reference = make(lam=0.0).fit(X, y)
    assert model.coef_[0][3] == 0.0
    np.testing.assert_allclose(model.coef_[0] * units, reference.coef_[0], rtol=0, atol=1e-9)


@pytest.mark.parametrize("far", [1e9, 1e12])
@pytest.mark.parametrize("make, classes, fit_intercept", [(linbook.LogisticRegression, 2, True),
                                                          (linbook.ProbitRegression, 2, True),
                                                          (linbook.LogisticRegression, 3, True),
                                                          (linbook.LogisticRegression, 2, False)],
                         ids=["logistic", "probit", "multinomial", "no-intercept"])
def test_lam_zero_fits_on_dask_beside_a_far_row(make, classes, fit_intercept, far):
    """One row ``far`` times the others: the Dask fit judged the design's rank from its Gram matrix alone, which a far
    row makes look rank one, and the least-norm move erased the coefficients (``coef_`` ~0, ``converged_`` True).
    Where the rows fit on the client the in-memory rank test now decides. Oracle: the in-memory fit."""
    if da is None:
        pytest.skip("dask is not installed")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 3))
    X[0] *= far
    y = (X[:, 0] / np.r_[far, np.ones(199)] + rng.standard_normal(200) > 0).astype(int)
    if classes == 3:
        y = np.digitize(X[:, 1] + rng.standard_normal(200), [-0.5, 0.5])
    in_memory = make(lam=0.0, fit_intercept=fit_intercept).fit(X, y)
    on_blocks = make(lam=0.0, fit_intercept=fit_intercept).fit(da.from_array(X, chunks=(50, 3)),
                                                                da.from_array(y, chunks=50))
    assert on_blocks.n_params_ == in_memory.n_params_
    np.testing.assert_allclose(on_blocks.coef_, in_memory.coef_, rtol=0, atol=1e-9)
