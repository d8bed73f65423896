"""Session 33: silent wrong answers found by independent probes, one test per class.

- ``Ridge`` with rows many decades apart (weights ``10 ** uniform(-50, 50)`` or rows scaled alike) beside a column
  scaled by 1e-50: the penalty makes ``G + diag(pen)`` well conditioned, so Cholesky passed its test, but ``G``
  held the light rows only to the heavy rows' rounding, and the small column's coefficient, which only they decide,
  came out 1e10 times its value (1e91 at weights over +-200). A coefficient below 1e-6 of the others (equilibrated)
  now has the rows measured, and the graded QR solves rows that span many decades
  (``linbook.linear._far_rows.components_below_rounding``). On Dask, the rows go to the client and the in-memory
  fit decides, where they fit there. Oracle: the penalised normal equations at 450 digits.
"""

import warnings

import mpmath as mp
import numpy as np
import pytest

import linbook

try:
    import dask
    import dask.array as da
except ImportError:                      # the Dask cases are skipped
    da = None


def _ridge_at_450_digits(X, y, lam, sw):
    """The ridge solution (intercept unpenalised) from the centred normal equations in 450-digit arithmetic."""
    with mp.workdps(450):
        n, d = X.shape
        s = [mp.mpf(float(w)) for w in sw]
        Xm = [[mp.mpf(float(v)) for v in row] for row in X]
        ym = [mp.mpf(float(v)) for v in y]
        total = mp.fsum(s)
        mx = [mp.fsum(s[i] * Xm[i][j] for i in range(n)) / total for j in range(d)]
        my = mp.fsum(s[i] * ym[i] for i in range(n)) / total
        Z = [[Xm[i][j] - mx[j] for j in range(d)] for i in range(n)]
        A = mp.matrix(d, d)
        c = mp.matrix(d, 1)
        for a in range(d):
            c[a] = mp.fsum(s[i] * Z[i][a] * (ym[i] - my) for i in range(n))
            for b in range(d):
                A[a, b] = mp.fsum(s[i] * Z[i][a] * Z[i][b] for i in range(n)) + (lam if a == b else 0)
        w = mp.lu_solve(A, c)
        b = my - mp.fsum(mx[j] * w[j] for j in range(d))
        return np.array([float(w[j]) for j in range(d)]), float(b)


def _far_ridge_problem(seed, span, small, rows_scaled):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(15, 3))
    y = X @ [1.0, 2.0, 3.0] + rng.normal(size=15)
    far = 10.0 ** rng.uniform(-span, span, 15)
    X = X * [1.0, small, 1.0]
    if rows_scaled:                      # the same spread as rows of X and y, without weights
        return X * np.sqrt(far)[:, None], y * np.sqrt(far), np.ones(15)
    return X, y, far


def _relative_error(got, want):
    return np.max(np.abs(got - want) / np.abs(want))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("span, small, rows_scaled", [(50, 1e-50, False), (100, 1e-100, False),
                                                      (200, 1e-100, False), (25, 1e-50, True)])
@pytest.mark.parametrize("lam", [1e-3, 1.0, 1e3])
def test_ridge_small_column_beside_rows_many_decades_apart(seed, span, small, rows_scaled, lam):
    X, y, sw = _far_ridge_problem(seed, span, small, rows_scaled)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = linbook.Ridge(lam=lam).fit(X, y, sample_weight=sw)
    w, b = _ridge_at_450_digits(X, y, lam, sw)
    assert _relative_error(model.coef_, w) < 1e-12
    assert abs(model.intercept_ - b) < 1e-12 * abs(b)


@pytest.mark.skipif(da is None, reason="needs dask")
@pytest.mark.parametrize("seed", range(4))
def test_ridge_on_dask_beside_rows_many_decades_apart_equals_in_memory(seed):
    X, y, sw = _far_ridge_problem(seed, 50, 1e-50, False)
    with dask.config.set(scheduler="synchronous"):
        on_dask = linbook.Ridge().fit(da.from_array(X, chunks=5), da.from_array(y, chunks=5),
                                      sample_weight=da.from_array(sw, chunks=5))
    in_memory = linbook.Ridge().fit(X, y, sample_weight=sw)
    np.testing.assert_array_equal(on_dask.coef_, in_memory.coef_)
    assert on_dask.intercept_ == in_memory.intercept_
    assert _relative_error(on_dask.coef_, _ridge_at_450_digits(X, y, 1.0, sw)[0]) < 1e-12


@pytest.mark.skipif(da is None, reason="needs dask")
def test_least_squares_on_dask_where_cholesky_fails_gives_the_in_memory_fit():
    """A duplicated column: the normal equations are singular. On Dask the rows (here 400) go to the client and
    the in-memory fit (its SVD) gives the minimum-norm answer, where the Cholesky-only path refused."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 3))
    X = np.column_stack([X, X[:, 0]])
    y = X[:, :3] @ [1.0, -2.0, 0.5] + rng.normal(size=400)
    with dask.config.set(scheduler="synchronous"):
        on_dask = linbook.LinearRegression().fit(da.from_array(X, chunks=100), da.from_array(y, chunks=100))
    in_memory = linbook.LinearRegression().fit(X, y)
    np.testing.assert_array_equal(on_dask.coef_, in_memory.coef_)
    assert on_dask.coef_[0] == pytest.approx(on_dask.coef_[3], rel=1e-12)       # the duplicates split evenly


def _weighted_least_squares_at_800_digits(X, y, sw):
    with mp.workdps(800):
        A = mp.matrix([[mp.mpf(float(np.sqrt(w))) * mp.mpf(float(v)) for v in (*row, 1.0)] for row, w in zip(X, sw)])
        b = mp.matrix([mp.sqrt(mp.mpf(float(w))) * mp.mpf(float(v)) for v, w in zip(y, sw)])
        sol = mp.lu_solve(A.T * A, A.T * b)
        return np.array([float(v) for v in sol])


@pytest.mark.skipif(da is None, reason="needs dask")
@pytest.mark.parametrize("big, chunks", [(1e30, 10), (1e32, 10), (1e40, 3), (1e200, 10)])
@pytest.mark.parametrize("make", [linbook.LinearRegression, lambda: linbook.Ridge(lam=1e-3)])
def test_least_squares_on_dask_beside_heavy_rows_that_share_a_column_value(big, chunks, make):
    """Two rows of weight ``big`` share column 2's value, which only the light rows then decide. A block's rounded
    weighted mean put ``W delta delta^T`` (1e200 x 1e-34) into that column's Gram entry: the coefficient was up to
    0.78 off. Each block now subtracts what its rounded mean leaves, as the in-memory fit does."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(10, 2))
    X[0], X[1] = [0.3, 0.7], [0.9, 0.7]
    y = X @ [1.0, -2.0] + 0.5 + 0.1 * rng.normal(size=10)
    sw = np.ones(10)
    sw[0], sw[1] = big, 2.3 * big
    with dask.config.set(scheduler="synchronous"):
        on_dask = make().fit(da.from_array(X, chunks=(chunks, 2)), da.from_array(y, chunks=chunks),
                             sample_weight=da.from_array(sw, chunks=chunks))
    in_memory = make().fit(X, y, sample_weight=sw)
    got, want = np.r_[on_dask.coef_, on_dask.intercept_], np.r_[in_memory.coef_, in_memory.intercept_]
    assert _relative_error(got, want) < 1e-12
    if isinstance(on_dask, linbook.LinearRegression):
        assert _relative_error(got, _weighted_least_squares_at_800_digits(X, y, sw)) < 1e-12


@pytest.mark.parametrize("offset", [1e8, 1e10, 1e12])
@pytest.mark.parametrize("make", [linbook.LinearRegression, lambda: linbook.Ridge(lam=1e-12)])
def test_noise_variance_of_a_close_fit_on_offset_columns(offset, make):
    """``sigma2_`` of a fit whose residuals are 1e-6 on a column offset by 1e10 was twice the right value: the
    residuals were taken from ``X @ w`` on the uncentred rows. Oracle: the exact translation ``X - offset``."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 2)) + offset
    y = (X - offset) @ [2.0, -1.0] + 1e-6 * rng.normal(size=30)
    got = make().fit(X, y).sigma2_
    want = make().fit(X - offset, y).sigma2_
    assert got == pytest.approx(want, rel=1e-6)


@pytest.mark.parametrize("power", [0, 100, 200, 990])
@pytest.mark.parametrize("make", [linbook.LinearRegression, linbook.Ridge])
def test_noise_variance_scales_with_the_weights(power, make):
    """``sigma2_ = sum(s r^2) / n``: weights times ``2^-k`` leave the coefficients and scale it by ``2^-k``
    exactly. Its floor did not scale with them: 2.1e-30 at ``k = 100`` where it is 8.3e-32."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 3))
    y = X @ [1.0, -1.0, 0.5] + 2 + 0.3 * rng.normal(size=40)
    sw = rng.uniform(1, 2, 40)
    lam = {linbook.Ridge: {"lam": 2.0 ** -power}, linbook.LinearRegression: {}}[make]
    got = make(**lam).fit(X, y, sample_weight=sw * 2.0 ** -power).sigma2_
    want = make(**{k: v * 2.0 ** power for k, v in lam.items()}).fit(X, y, sample_weight=sw).sigma2_
    assert got == pytest.approx(want * 2.0 ** -power, rel=1e-12)


@pytest.mark.parametrize("offset", [0.0, 1e12, 1e14, 1e15])
def test_lms_converged_does_not_depend_on_an_offset_of_y(offset):
    """Noise of 1 beside ``y`` near 1e14 is 64 units of ``y``'s last place: the rounding test called such
    residuals an exact fit, and a fit 7e-2 from least squares converged. Oracle: the exact translation of ``y``
    and the documented cosine test."""
    from linbook.online import LMS

    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 20))
    y = offset + X @ rng.standard_normal(20) + rng.standard_normal(200)
    model = LMS(max_iter=50, random_state=0).fit(X, y)
    r = (y - offset) - X @ model.coef_ - (model.intercept_ - offset)        # (exact differences)
    cosines = np.abs(X.T @ r) / (np.linalg.norm(X, axis=0) * np.linalg.norm(r))
    assert cosines.max() > 1e-2                        # not least squares ...
    assert not model.converged_                        # ... and not called so


def test_lms_partial_fit_after_fit_drops_fits_claims():
    from linbook.online import LMS

    rng = np.random.default_rng(0)
    X = rng.standard_normal((100, 3))
    y = X @ [1.0, 2.0, 3.0] + 1.0                      # noiseless: LMS reaches least squares
    model = LMS(max_iter=200).fit(X, y)
    assert model.converged_
    model.partial_fit(X[:10] * 5, y[:10] + 50)          # moves the parameters away
    assert not model.converged_ and not model.tol_reached_


@pytest.mark.parametrize("seed", [16, 114, 3, 7])
@pytest.mark.parametrize("make, classes", [(lambda: linbook.LogisticRegression(lam=0.0), 2),
                                           (lambda: linbook.LogisticRegression(lam=0.0), 3),
                                           (lambda: linbook.ProbitRegression(), 2)])
@pytest.mark.parametrize("order", ["as given", "reversed"])
def test_unpenalised_fit_on_a_collinear_design_reaches_the_full_rank_fit(seed, make, classes, order):
    """A column that is a combination of others leaves the scores unique. The Hessian is then singular, every
    Newton step is damped, and the polishing step was skipped: probabilities up to 1.6e-7 off (1.9e-5 relative)
    with ``converged_`` True, depending on the order of the columns. Oracle: the fit without the redundant
    column, whose scores are the same function of ``X``."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((60, 4))
    z = X @ [1.0, -2.0, 0.5, 0.3] + rng.standard_normal(60)
    y = (z > 0).astype(int) if classes == 2 else np.digitize(z, [-0.7, 0.7])
    design = np.column_stack([X, X[:, 0] - 2 * X[:, 2]])
    if order == "reversed":
        design = design[:, ::-1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        collinear = make().fit(design, y)
        full_rank = make().fit(X, y)
    assert collinear.converged_
    got, want = collinear.decision_function(design), full_rank.decision_function(X)
    assert np.max(np.abs(got - want)) < 1e-9 * np.max(np.abs(want))


@pytest.mark.parametrize("condition", [1e2, 1e7, 1e9, 1e10])
@pytest.mark.parametrize("tol", [1e-6, 1e-10])
def test_conjugate_gradient_converged_and_grad_are_the_true_residuals(condition, tol):
    """``converged`` and ``grad`` came from the updated residual, which drifts from ``b - A x`` by rounding: at
    condition 1e10 it said 9e-11 of ``b`` where ``A x - b`` was 1.2e-7 (so in rational arithmetic too), with
    ``converged`` True at tol 1e-10. The docstring's ``grad`` is ``A x - b`` of the returned ``x``: the same
    product, so equal to far below the drift; ``converged`` is its test."""
    rng = np.random.default_rng(20)
    Q, _ = np.linalg.qr(rng.normal(size=(20, 20)))
    A = (Q * np.logspace(0, -np.log10(condition), 20)) @ Q.T
    A = (A + A.T) / 2
    b = rng.normal(size=20)
    res = linbook.optim.conjugate_gradient(A, b, tol=tol, max_iter=400)
    residual = A @ res.x - b
    assert np.max(np.abs(res.grad - residual)) <= 1e-13 * np.linalg.norm(b)
    assert res.converged == (np.linalg.norm(residual) <= tol * np.linalg.norm(b))
    if condition <= 1e7 or tol == 1e-6:
        assert res.converged                 # the true residual is reachable there


def test_newton_step_test_beside_a_large_coordinate():
    """A step below ``xtol * max |x|`` ended Newton's run beside a coordinate of 1e12, whatever the gradient: one
    step from ``x1 = 8``, f = 202 against a minimum of 1, ``converged`` True. Oracle: the minimiser in closed form."""
    f = lambda x: 0.5e-24 * (x[0] - 1e12) ** 2 + np.cosh(x[1] - 1.0)        # noqa: E731
    g = lambda x: np.array([1e-24 * (x[0] - 1e12), np.sinh(x[1] - 1.0)])    # noqa: E731
    h = lambda x: np.array([[1e-24, 0.0], [0.0, np.cosh(x[1] - 1.0)]])      # noqa: E731
    res = linbook.optim.newton(f, np.array([1e12 + 1.0, 8.0]), g, h)
    assert res.converged
    assert res.x[1] == pytest.approx(1.0, abs=1e-6) and res.fun == pytest.approx(1.0, rel=1e-12)


@pytest.mark.skipif(da is None, reason="needs dask")
@pytest.mark.parametrize("chunks", [1, 2, 3, 40])
def test_rls_fit_on_dask_blocks_smaller_than_the_model_says_nothing_of_them(chunks):
    """``fit`` on row blocks reads them by ``partial_fit``: a first block with fewer rows than parameters warned
    that the design "seen so far" was rank deficient and ``P_`` undefined, of a fit the later blocks determine
    (the in-memory ``fit``, all rows at once, says nothing). A design still not solvable at the end is refused,
    as in memory."""
    from linbook.online import RecursiveLeastSquares

    rng = np.random.default_rng(9)
    X = rng.normal(size=(40, 3))
    y = X @ [1.0, -1.0, 2.0] + 0.3 * rng.normal(size=40) + 1
    with warnings.catch_warnings(), dask.config.set(scheduler="synchronous"):
        warnings.simplefilter("error")
        on_dask = RecursiveLeastSquares().fit(da.from_array(X, chunks=(chunks, 3)), da.from_array(y, chunks=chunks))
    want = linbook.LinearRegression().fit(X, y)
    assert _relative_error(np.r_[on_dask.coef_, on_dask.intercept_], np.r_[want.coef_, want.intercept_]) < 1e-9
    with pytest.raises(ValueError, match="rank deficient") as in_memory:
        RecursiveLeastSquares().fit(X[:2], y[:2])
    with pytest.raises(ValueError, match="rank deficient") as blocks, dask.config.set(scheduler="synchronous"):
        RecursiveLeastSquares().fit(da.from_array(X[:2], chunks=(1, 3)), da.from_array(y[:2], chunks=1))
    assert str(blocks.value) == str(in_memory.value)


@pytest.mark.parametrize("make", [linbook.LDA, linbook.QDA, linbook.RDA, linbook.DiagonalLDA,
                                  linbook.GaussianNaiveBayes])
def test_gaussian_classifiers_keep_a_class_whose_prior_underflows(make):
    """Class weights 1e200 and 1e-200: the prior of the light class is 1e-400, which ``priors_`` rounds to 0, and
    the scores added ``log 0``: that class was never predicted, even where its exact log-posterior is 0. The
    scores now take ``log W_c - log W``. Oracle: the fit under weights 1e100 and 1e-100 (the same class parameters
    to rounding, a prior of 1e-200 that float64 holds), its class-1 log prior moved by log(1e-200)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 2))
    y = np.repeat([0, 1], 10)
    X[y == 1] += 3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = make().fit(X, y, sample_weight=np.where(y == 0, 1e200, 1e-200))
        held = make().fit(X, y, sample_weight=np.where(y == 0, 1e100, 1e-100))
    rows = np.array([[0.0, 0.0], [1.5, 1.5], [300.0, 300.0]])
    got = model.predict_log_proba(rows)
    want = held.predict_log_proba(rows) + [0.0, np.log(1e-200)]
    want -= np.logaddexp.reduce(want, axis=1, keepdims=True)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(model.predict(rows), np.argmax(want, axis=1))


@pytest.mark.parametrize("weight", [1e16, 1e20, 1e200])
@pytest.mark.parametrize("heavy_rows", [1, 3])
def test_lasso_does_not_claim_an_optimum_beside_rows_of_overwhelming_weight(weight, heavy_rows):
    """A few rows of weight 1e16 or more: the certificate's rounding allowances were the heavy rows', every
    coordinate counted as unpenalised, and a fit that ignored the other rows (objective 45 times the minimum)
    passed with ``converged_`` True and a gap of 0. Such weights are now beyond certification: a
    ``ConvergenceWarning``, ``converged_`` False and no gap."""
    from sklearn.exceptions import ConvergenceWarning

    rng = np.random.default_rng(5)
    X = rng.standard_normal((30, 4))
    y = X @ [1.0, -2.0, 0.0, 0.5] + 0.3 * rng.standard_normal(30)
    sw = np.ones(30)
    sw[:heavy_rows] = weight
    with pytest.warns(ConvergenceWarning, match="span more than 1e16"):
        model = linbook.Lasso(lam=1.0).fit(X, y, sample_weight=sw)
    assert not model.converged_ and model.dual_gap_ == np.inf


@pytest.mark.parametrize("far", [1e6, 1e10, 1e14])
@pytest.mark.parametrize("make", [linbook.LDA, linbook.RDA, linbook.DiagonalLDA, linbook.NearestShrunkenCentroids,
                                  lambda: linbook.GaussianNaiveBayes(var_smoothing=0.0), linbook.QDA])
def test_gaussian_classifiers_two_close_classes_beside_a_far_one(far, make):
    """Two classes 0.5 apart and a third ``far`` away: the scores were measured from the centres' common centre,
    ~far / 3 from the close classes, and their rounding (~eps far^2) drowned the close classes' differences:
    0.5 / 0.5 or 1 / 0 on rows among them (the wrong class by argmax at 1e10). Rows near a class are now scored
    from each class's own centre. Oracle: the fitted parameters' posterior at 60 digits."""
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(20, 2)), rng.normal(size=(20, 2)) + 0.5, rng.normal(size=(20, 2)) + far])
    y = np.repeat([0, 1, 2], 20)
    model = make().fit(X, y)
    rows = np.array([[0.3, 0.1], [-1.0, 0.5], [0.8, 0.9]])
    got = model.predict_log_proba(rows)
    with mp.workdps(60):
        want = []
        for x in rows:
            scores = [mp.mpf(float(v)) for v in _exact_joint_scores(model, x)]
            total = mp.log(mp.fsum(mp.exp(v - max(scores)) for v in scores)) + max(scores)
            want.append([float(v - total) for v in scores])
    np.testing.assert_allclose(got[:, :2], np.array(want)[:, :2], rtol=0, atol=1e-9)
    np.testing.assert_array_equal(model.predict(rows), np.argmax(want, axis=1))


def _exact_joint_scores(model, x):
    """``log pi_c + log N(x | mu_c, Sigma_c)`` at 60 digits from the fitted parameters (``means_``, the
    covariances or variances, ``priors_``), each from the class's own mean."""
    scores = []
    for c in range(len(model.classes_)):
        if hasattr(model, "covariance_") and np.ndim(model.covariance_) == 2:
            cov = model.covariance_
        elif hasattr(model, "covariance_"):
            cov = model.covariance_[c]
        elif hasattr(model, "covariances_"):
            cov = model.covariances_[c]
        elif hasattr(model, "within_class_std_dev_"):
            cov = np.diag(model.within_class_std_dev_ ** 2)
        else:
            var = model.var_ if np.ndim(model.var_) == 1 else model.var_[c]
            cov = np.diag(var)
        mean = model.centroids_[c] if hasattr(model, "centroids_") else model.means_[c]
        S = mp.matrix(cov.tolist())
        d = mp.matrix([mp.mpf(float(a)) - mp.mpf(float(b)) for a, b in zip(x, mean)])
        quad = (d.T * mp.lu_solve(S, d))[0]
        scores.append(mp.log(mp.mpf(float(model.priors_[c]))) - quad / 2 - mp.log(mp.det(S)) / 2)
    return scores


@pytest.mark.parametrize("solver", ["newton", "lbfgs", "bfgs", "newton-cg", "gd"])
@pytest.mark.parametrize("seed", [15, 3])
def test_multinomial_class_of_one_edge_row_is_separable_for_every_solver(solver, seed):
    """A third class of one row on the edge of the data: a line splits it off, so ``lam = 0`` has no finite fit.
    L-BFGS and BFGS met the mean gradient's test with that row's margin at 23, below the saturation that calls
    the exact test: ``converged_`` True, ``separable_`` False, no warning. Oracle: the exact separation LP."""
    from linbook.logistic.separation import separable_multinomial

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(80, 2))
    y = rng.integers(0, 2, 80)
    y[int(np.argmax(np.linalg.norm(X, axis=1)))] = 2
    assert separable_multinomial(X, y, 3, True)
    with pytest.warns(linbook.SeparableDataWarning):
        model = linbook.LogisticRegression(lam=0.0, solver=solver).fit(X, y)
    assert model.separable_ and not model.converged_


@pytest.mark.parametrize("kind", ["csr_matrix", "csc_matrix", "coo_matrix", "csr_array", "csc_array"])
def test_logistic_loss_hessian_on_sparse_x(kind):
    """``logistic_loss`` keeps sparse ``X`` for ``F`` and ``g``, but its Hessian failed on it ("matmul: dimension
    mismatch", or "ufunc 'ldexp' not supported"). Oracle: the same call on the dense ``X``."""
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 5))
    X[X < 0.5] = 0.0
    y = (rng.random(40) < 0.5).astype(float)
    w, sw = rng.normal(size=5), rng.uniform(0.5, 2.0, 40)
    F, g, H = linbook.logistic_loss(w, getattr(sp, kind)(X), y, 0.3, sample_weight=sw)
    F0, g0, H0 = linbook.logistic_loss(w, X, y, 0.3, sample_weight=sw)
    assert isinstance(H, np.ndarray)
    np.testing.assert_allclose(H, H0, rtol=1e-13, atol=1e-13 * np.abs(H0).max())
    assert F == pytest.approx(F0, rel=1e-14)
    np.testing.assert_allclose(g, g0, rtol=1e-13, atol=1e-13 * np.abs(g0).max())
