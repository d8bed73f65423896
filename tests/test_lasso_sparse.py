"""The lasso on sparse X by residual updates on its CSC columns (``Lasso.solver_ == "sparse_residual"``).

The columns are never densified and no ``D x D`` matrix is built; the centring is implicit
(``xc_j^T S r = x_j^T S r - mu_j sum(S r)``). The mode must give the Gram mode's and scikit-learn's
answers (objective to ~1e-10 relative, same support) with and without an intercept, with sample
weights, on columns of any scale, zero and duplicated columns, one row, and beyond 4096 columns (which
the Gram mode refused); its compiled sweep equals the readable one.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sps
import sklearn.linear_model as sk

from linbook import Lasso
from linbook._kernels import numpy_budget as _budget
from linbook.linear import lasso as lasso_module
from linbook.linear._base import moments
from tests.lockstep import assert_sweeps_in_lockstep


def objective(X, y, w, b, lam, sw=None):
    r = y - X @ w - b
    s = np.ones_like(y) if sw is None else sw
    return 0.5 * float(s @ (r * r)) + lam * float(np.abs(w).sum())


def sparse_problem(n, d, density, seed, offset=0.0):
    """Sparse ``X`` with a sparse truth among the first columns; ``y`` with an offset."""
    rng = np.random.default_rng(seed)
    X = sps.random(n, d, density=density, format="csr", random_state=seed, data_rvs=rng.standard_normal)
    k = min(d, 8)
    y = X[:, :k] @ rng.standard_normal(k) + 0.3 * rng.standard_normal(n) + offset
    return X, y


def lam_max(X, y, sw, fit_intercept):
    s = np.ones(X.shape[0]) if sw is None else sw
    Xd = X.toarray()
    if fit_intercept:
        Xd = Xd - (s @ Xd) / s.sum()
        y = y - (s @ y) / s.sum()
    return float(np.max(np.abs(Xd.T @ (s * y))))


@pytest.fixture
def forced_mode(monkeypatch):
    """Make every fit use the given descent mode."""
    def force(mode):
        monkeypatch.setattr(lasso_module, "descent_mode", lambda X: mode)
    return force


def fit(X, y, lam, sw=None, **kw):
    kw = {"tol": 1e-13, "max_iter": 100_000, **kw}
    return Lasso(lam=lam, **kw).fit(X, y, sample_weight=sw)


def sklearn_fit(X, y, lam, sw=None, fit_intercept=True):
    alpha = lam / (X.shape[0] if sw is None else sw.sum())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return sk.Lasso(alpha=alpha, fit_intercept=fit_intercept, tol=1e-15, max_iter=10 ** 6).fit(X, y, sample_weight=sw)


# ------------------------------------------------------------------------ the same answers
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("frac", [0.01, 0.3])
def test_sparse_residual_equals_gram_mode_and_sklearn(forced_mode, fit_intercept, weighted, frac):
    X, y = sparse_problem(300, 120, 0.05, seed=1, offset=2.0)
    sw = np.random.default_rng(2).uniform(0.2, 3.0, 300) if weighted else None
    lam = frac * lam_max(X, y, sw, fit_intercept)
    forced_mode("gram")
    gram = fit(X, y, lam, sw, fit_intercept=fit_intercept)
    forced_mode("sparse_residual")
    sparse = fit(X, y, lam, sw, fit_intercept=fit_intercept)
    ref = sklearn_fit(X, y, lam, sw, fit_intercept)
    assert gram.solver_ == "gram" and sparse.solver_ == "sparse_residual" and sparse.converged_
    f = [objective(X, y, m.coef_, m.intercept_, lam, sw) for m in (sparse, gram, ref)]
    assert abs(f[0] - f[1]) <= 1e-10 * f[1] and abs(f[0] - f[2]) <= 1e-10 * f[2]
    assert np.array_equal(sparse.coef_ != 0, gram.coef_ != 0)
    assert np.array_equal(sparse.coef_ != 0, ref.coef_ != 0)
    np.testing.assert_allclose(sparse.coef_, gram.coef_, rtol=1e-6, atol=1e-7 * np.max(np.abs(gram.coef_)))


def test_sparse_lasso_beyond_4096_columns_fits():
    """It raised "not supported here; use scikit-learn": now residual updates, scikit-learn's objective."""
    X, y = sparse_problem(200, 5000, 0.01, seed=3, offset=1.0)
    lam = 0.05 * lam_max(X, y, None, True)
    model = fit(X, y, lam)
    ref = sklearn_fit(X, y, lam)
    assert model.solver_ == "sparse_residual" and model.converged_
    fa, fb = (objective(X, y, m.coef_, m.intercept_, lam) for m in (model, ref))
    assert fa <= fb * (1 + 1e-10)
    assert abs(fa - fb) <= 1e-9 * fb
    assert np.array_equal(model.coef_ != 0, ref.coef_ != 0)


def test_descent_mode_follows_the_cost_rule():
    """Residual updates where ``nnz * sweeps`` undercuts the Gram matrix (and always beyond 4096
    columns), the Gram matrix on tall sparse data and where the dense rule says so."""
    mode = lasso_module.descent_mode
    assert mode(sps.random(5000, 4000, density=0.01, format="csr", random_state=0)) == "sparse_residual"
    assert mode(sps.random(100_000, 1000, density=0.01, format="csr", random_state=0)) == "gram"
    assert mode(sps.random(50, 5000, density=0.5, format="csr", random_state=0)) == "sparse_residual"
    assert mode(np.ones((100, 10))) == "gram" and mode(np.ones((10, 100))) == "residual"
    for container in (sps.csc_matrix, sps.csr_array, sps.csc_array):      # the same rule whatever the format
        assert mode(container(sps.random(5000, 4000, density=0.01, random_state=0))) == "sparse_residual"
        assert mode(container(sps.random(100_000, 1000, density=0.01, random_state=0))) == "gram"


@pytest.mark.parametrize("scale", [1e-310, 1e-150, 1.0, 1e150, 1e300])
def test_sparse_residual_equals_dense_whatever_one_column_scale(forced_mode, scale):
    """As ``tests/adversarial/test_sparse_column_scales.py``, with the sparse fit forced to residual updates."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 5)) * (rng.random((60, 5)) < 0.5)
    y = X @ rng.standard_normal(5) + 0.3 * rng.standard_normal(60)
    X[:, 2] *= scale
    dense = Lasso(lam=1.0).fit(X, y)
    forced_mode("sparse_residual")
    sparse = Lasso(lam=1.0).fit(sps.csr_matrix(X), y)
    assert sparse.solver_ == "sparse_residual" and sparse.converged_
    np.testing.assert_allclose(sparse.predict(X), dense.predict(X), rtol=1e-6, atol=1e-6 * np.max(np.abs(y)))
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-6, atol=1e-7 * np.abs(dense.coef_).max())


def test_sparse_residual_column_scales_from_1e_150_to_1e150(forced_mode):
    """Columns scaled by 1e-150 .. 1e150 (powers of ten: not exact in binary): the Gram mode's
    objective, support and coefficients (each in its column's units); and one common factor ``s`` on
    all columns with ``lam s`` gives the coefficients divided by ``s``."""
    X, y = sparse_problem(200, 40, 0.1, seed=4, offset=3.0)
    Xc = (X @ sps.diags(10.0 ** np.linspace(-150, 150, 40))).tocsr()
    lam = 0.05 * lam_max(X, y, None, True)
    forced_mode("gram")
    gram = fit(Xc, y, lam)
    forced_mode("sparse_residual")
    sparse = fit(Xc, y, lam)
    assert sparse.converged_ and np.array_equal(sparse.coef_ != 0, gram.coef_ != 0)
    fa, fb = (objective(Xc, y, m.coef_, m.intercept_, lam) for m in (sparse, gram))
    assert abs(fa - fb) <= 1e-10 * fb
    np.testing.assert_allclose(sparse.coef_, gram.coef_, rtol=1e-6, atol=0.0)
    ref = fit(X, y, lam)
    for s in (1e-150, 1e150):
        m = fit(X * s, y, lam * s)                   # (X s, lam s): the fit on (X, lam) divided by s
        assert m.converged_ and m.solver_ == "sparse_residual"
        np.testing.assert_allclose(m.coef_ * s, ref.coef_, rtol=1e-7, atol=1e-9 * np.abs(ref.coef_).max())


@pytest.mark.parametrize("weighted", [False, True])
def test_sparse_residual_zero_and_duplicated_columns(forced_mode, weighted):
    """A column of zeros gets 0; a duplicated column splits its weight (the objective is the Gram mode's)."""
    X, y = sparse_problem(150, 30, 0.1, seed=5, offset=-1.0)
    X = sps.hstack([X[:, :3], sps.csr_matrix((150, 1)), X[:, :1], X[:, 3:]]).tocsr()   # col 3 zero, col 4 = col 0
    sw = np.random.default_rng(6).uniform(0.5, 2.0, 150) if weighted else None
    lam = 0.02 * lam_max(X, y, sw, True)
    forced_mode("gram")
    gram = fit(X, y, lam, sw)
    forced_mode("sparse_residual")
    sparse = fit(X, y, lam, sw)
    assert sparse.converged_ and sparse.coef_[3] == 0.0
    fa, fb = (objective(X, y, m.coef_, m.intercept_, lam, sw) for m in (sparse, gram))
    assert abs(fa - fb) <= 1e-10 * fb
    np.testing.assert_allclose(sparse.coef_[0] + sparse.coef_[4], gram.coef_[0] + gram.coef_[4], rtol=1e-6)


def test_sparse_residual_one_row_and_duplicate_entries(forced_mode):
    """N = 1 (centring leaves nothing: w = 0, intercept y); a CSR matrix holding an entry twice counts it once,
    summed, as scipy does."""
    forced_mode("sparse_residual")
    one = Lasso(lam=0.1).fit(sps.csr_matrix(np.array([[1.0, 0.0, 2.0]])), np.array([3.0]))
    assert one.converged_ and np.all(one.coef_ == 0) and one.intercept_ == 3.0
    no_intercept = Lasso(lam=0.1, fit_intercept=False).fit(sps.csr_matrix(np.array([[1.0, 0.0, 2.0]])), [3.0])
    assert no_intercept.converged_ and no_intercept.coef_[2] == pytest.approx((6.0 - 0.1) / 4.0)
    X, y = sparse_problem(80, 10, 0.3, seed=7)
    at = X.indptr[1]                                  # the end of row 0: a second entry for its first column
    twice = sps.csr_matrix((np.insert(X.data, at, 0.5), np.insert(X.indices, at, X.indices[0]),
                            X.indptr + (np.arange(X.indptr.size) >= 1)), shape=X.shape)
    assert twice.nnz == X.nnz + 1
    summed = X.copy()
    summed[0, X.indices[0]] += 0.5
    a, b = fit(twice, y, 1.0), fit(summed, y, 1.0)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-10, atol=1e-12)


# ------------------------------------------------------------------------ the compiled sweep
SWEEP_CASES = [(0, 300, 60, 0.05, 0.02, True, False), (1, 200, 90, 0.1, 0.2, True, True),
               (2, 80, 400, 0.03, 0.01, False, False), (3, 120, 50, 0.2, 0.05, False, True)]


@pytest.mark.parametrize("seed, n, d, density, frac, fit_intercept, weighted", SWEEP_CASES)
def test_sparse_residual_compiled_sweep_equals_readable_sweep(seed, n, d, density, frac, fit_intercept, weighted):
    """Sweep after sweep, from zero and from a polished point: the same ``w``, residual and ``sum(S r)``
    to rounding (columns of unequal scales, one column of zeros)."""
    X, y = sparse_problem(n, d, density, seed, offset=1.5)
    scales = np.random.default_rng(seed).uniform(0.5, 4.0, d)
    scales[5] = 0.0                                    # a column of zeros
    X = (X @ sps.diags(scales)).tocsr()
    X.eliminate_zeros()
    sw = np.random.default_rng(seed + 10).uniform(0.2, 3.0, n) if weighted else None
    model = Lasso(lam=1.0, fit_intercept=fit_intercept)
    Xv, yv, swv = model._validate(X, y, sw)
    mom = moments(model, Xv, yv, swv, gram=False, common_scale=False)
    lam_j = frac * lam_max(X, y, sw, fit_intercept) / (mom.y_scale * mom.x_scale)
    readable = lasso_module._CoordinateDescent(mom, lam_j, "sparse_residual")
    compiled = lasso_module._CoordinateDescent(mom, lam_j, "sparse_residual")

    def weighted_sums_agree(readable, compiled):
        assert abs(compiled.sr - readable.sr) <= 1e-9 * np.sum(np.abs(readable.r)) + 1e-300

    polished = assert_sweeps_in_lockstep(readable, compiled, ["r"], check=weighted_sums_agree, carried=["sr"])
    assert polished and np.count_nonzero(readable.w) > 1


def test_sparse_residual_fits_the_same_in_numpy_and_compiled(forced_mode):
    """Whole fits, every sweep in numpy and every sweep compiled: the same sweeps (+-1) and coefficients."""
    forced_mode("sparse_residual")
    X, y = sparse_problem(200, 80, 0.08, seed=8, offset=2.0)
    sw = np.random.default_rng(9).uniform(0.2, 3.0, 200)
    lam = 0.03 * lam_max(X, y, sw, True)
    fits, saved = [], _budget.numpy_steps_left[0]
    try:
        for budget in (10 ** 9, 0):
            _budget.numpy_steps_left[0] = budget
            fits.append(fit(X, y, lam, sw, tol=1e-12))
    finally:
        _budget.numpy_steps_left[0] = saved
    a, b = fits
    assert a.converged_ and b.converged_ and abs(a.n_iter_ - b.n_iter_) <= 1
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-8, atol=1e-10 * np.abs(a.coef_).max())


# ------------------------------------------------------------------------ columns the implicit centring cannot hold
def test_offset_column_falls_back_to_the_exactly_centred_gram(forced_mode):
    """A column of 1e8 + noise: a step moves r by x_j ~ 1e8 and the constant by mu_j ~ 1e8, losing
    8 digits (the coefficients came out 3e-5 off). With up to 4096 columns the fit takes the Gram
    matrix, centred exactly block by block: the fit of the data shifted back."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 6)) * (rng.random((40, 6)) < 0.5)
    y = X @ rng.standard_normal(6) + 0.1 * rng.standard_normal(40)
    Xo = X.copy()
    Xo[:, 0] += 1e8
    Xr = Xo.copy()
    Xr[:, 0] -= 1e8                                  # exact: the numbers the offset column really holds
    forced_mode("sparse_residual")
    ref = fit(sps.csr_matrix(Xr), y, 0.5)
    got = fit(sps.csr_matrix(Xo), y, 0.5)
    assert ref.solver_ == "sparse_residual" and got.solver_ == "gram"
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=1e-6, atol=1e-9 * np.abs(ref.coef_).max())


def test_offset_column_beyond_4096_columns_is_a_clear_error():
    """Beyond 4096 columns there is no Gram matrix to fall back to: a clear error naming the column, and
    the model keeps its previous fit."""
    X, y = sparse_problem(100, 5000, 0.01, seed=11)
    X = X.tolil()
    X[:, 7] = 1e8 + np.random.default_rng(12).standard_normal((100, 1))
    X = X.tocsr()
    model = fit(*sparse_problem(100, 5000, 0.01, seed=13), 1.0)
    before = model.coef_.copy()
    with pytest.raises(ValueError, match="column 7 .*mean"):
        model.fit(X, y)
    assert np.array_equal(model.coef_, before)
