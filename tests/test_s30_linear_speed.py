"""Session 30 (issue 22's wide and sparse Ridge / LinearRegression rows): the work of the iterative fits.

Work is counted, not timed (products with ``X``, copies of its entries): the counts are the same on every
machine and under any load. Each fast path is checked against the readable computation it replaces.

* CG stops as soon as its residual passes the documented backward error (1e-13 on the equilibrated
  equations, ``linbook.linear._base.CG_BACKWARD_ERROR``), not at a relative residual of 1e-14 as well:
  one product fewer on each of the bench's problems, and the answer still meets that bound, checked here
  against the explicit matrix ``G + diag(pen)`` and the Cholesky solution.
* Sparse unweighted column means are the column sums divided by the powers of two afterwards, also where a
  column's scale is below 1 (no scaled copy of the stored entries): the same bits as the sums of the copy.
"""

import numpy as np
import pytest
import scipy.sparse as sps

import linbook.linear._base as base
import linbook.linear._moments as moments_module
from linbook import LinearRegression, Ridge
from linbook._kernels.csr import divide_columns


def _sparse(n, d, density, seed=0):
    """From numpy's generator alone: ``scipy.sparse.random`` places the entries differently in scipy 1.12 and 1.17,
    and the product counts below are of one matrix."""
    rng = np.random.default_rng(seed)
    cells = rng.choice(n * d, size=round(density * n * d), replace=False)
    X = sps.csr_matrix((rng.standard_normal(cells.size), np.divmod(cells, d)), shape=(n, d))
    y = X @ rng.standard_normal(d) + 1.0 + rng.standard_normal(n)
    return X, y


def _dense(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) + rng.normal(0, 2, d)
    return X, X @ rng.standard_normal(d) + 1.0 + rng.standard_normal(n)


def _count_products(monkeypatch, owner, name):
    """Wrap ``owner.name`` (a factory of normal-equation products) so that every product it makes is counted."""
    made, count = getattr(owner, name), [0]

    def factory(*args, **kwargs):
        product = made(*args, **kwargs)

        def counted(p):
            count[0] += 1
            return product(p)
        return counted

    monkeypatch.setattr(owner, name, factory)
    return count


def _normal_equations(X, y, lam):
    """``(G + lam I, c)`` of the centred problem, dense, in the user's units (the oracle's matrix; the column
    means are near 0, so centring the sparse Gram by ``n m m^T`` loses nothing)."""
    m, z = np.asarray(X.mean(axis=0)).ravel(), y - y.mean()
    G = (X.T @ X).toarray() - len(y) * np.outer(m, m) if sps.issparse(X) else (X - m).T @ (X - m)
    return G + lam * np.eye(X.shape[1]), np.asarray(X.T @ z).ravel()


def _backward_error(A, c, w):
    """``||E (A w - c)|| / (||E^-1 w|| + ||E c||)`` with ``E = diag(A)^(-1/2)``: the bound the docstrings state."""
    root = np.sqrt(np.diag(A))
    return np.linalg.norm((A @ w - c) / root) / (np.linalg.norm(root * w) + np.linalg.norm(c / root))


# (shape, density, lam, products at most: the old rule's count minus one)
SPARSE_CASES = [((300, 3000), 0.02, 1.0, 36), ((20000, 1000), 0.003, 0.0, 32)]


@pytest.mark.parametrize("shape, density, lam, most", SPARSE_CASES, ids=["wide-ridge", "tall-ols"])
def test_sparse_cg_stops_at_the_documented_backward_error(monkeypatch, shape, density, lam, most):
    X, y = _sparse(*shape, density)
    count = _count_products(monkeypatch, moments_module.Moments, "normal_matvec")
    est = (Ridge(lam=lam) if lam else LinearRegression()).fit(X, y)
    assert est.solver_ == "cg"
    assert count[0] <= most                       # the old rule: 37 and 33 (its final check included); now 35, 31
    A, c = _normal_equations(X, y, lam)
    assert _backward_error(A, c, est.coef_) <= 1e-13
    exact = np.linalg.solve(A, c)
    np.testing.assert_allclose(est.coef_, exact, rtol=0, atol=1e-11 * np.max(np.abs(exact)))


def test_dense_wide_cg_stops_at_the_documented_backward_error(monkeypatch):
    X, y = _dense(300, 3000)
    monkeypatch.setattr("linbook.linear.ridge.wide_cg_budget", lambda n, d: 60)   # CG, not the N x N form
    count = _count_products(monkeypatch, base, "_dense_normal_matvec")
    est = Ridge(lam=1.0).fit(X, y)
    assert est.solver_ == "cg"
    assert count[0] <= 28                         # the old rule: 29 (its final check included)
    A, c = _normal_equations(X, y, 1.0)
    assert _backward_error(A, c, est.coef_) <= 1e-13
    exact = np.linalg.solve(A, c)
    np.testing.assert_allclose(est.coef_, exact, rtol=0, atol=1e-11 * np.max(np.abs(exact)))


def test_sparse_means_with_scales_below_one_need_no_scaled_copy(monkeypatch):
    X, _ = _sparse(500, 400, 0.02)
    X = X @ sps.diags(np.exp2(np.random.default_rng(3).integers(-40, 3, 400)))   # column scales 2^-41 .. 2^2
    X = X.tocsr()
    y = np.random.default_rng(4).standard_normal(500)
    readable = moments_module.Moments(X, y, None, True, gram=False, common_scale=False)
    assert np.min(readable.x_scale) < 1.0
    copy = divide_columns(X, readable.x_scale)
    expected = np.asarray(copy.T @ np.ones(500)).ravel() / 500      # the means of the scaled copy
    expected = np.where(readable.constant, readable.constant_value / readable.x_scale, expected)
    np.testing.assert_array_equal(readable.x_mean_s, expected)     # the same bits

    def no_copy(*args):
        raise AssertionError("a scaled copy of X was made")

    monkeypatch.setattr(moments_module, "divide_columns", no_copy)
    fast = moments_module.Moments(X, y, None, True, gram=False, common_scale=False)
    np.testing.assert_array_equal(fast.x_mean_s, readable.x_mean_s)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("shape", [(37, 3000), (1000, 40), (3, 5)])
def test_blocked_design_and_column_scales_equal_the_whole_array_operations(weighted, shape):
    rng = np.random.default_rng(5)
    n, d = shape
    X = rng.standard_normal(shape) * np.exp2(rng.integers(-200, 200, d)) + 1e3 * rng.standard_normal(d)
    y = rng.standard_normal(n)
    sw = rng.uniform(1e-3, 1e3, n) if weighted else None
    mom = moments_module.Moments(X, y, sw, True, gram=False, common_scale=False)
    big = np.maximum(np.max(X, axis=0, initial=0.0), -np.min(X, axis=0, initial=0.0))
    np.testing.assert_array_equal(moments_module._largest_magnitudes(X), big)
    Z = np.divide(X, mom.x_scale)
    Z -= mom.x_mean_s
    if np.any(mom.x_mean_delta):
        Z -= mom.x_mean_delta
    z = y - mom.y_mean_s
    if weighted:
        assert np.any(mom.x_mean_delta)
        Z *= np.sqrt(sw)[:, None]
        z = z * np.sqrt(sw)
    blocked = mom.design()
    np.testing.assert_array_equal(blocked[0], Z)
    np.testing.assert_array_equal(blocked[1], z)
    Zs, zs, c, squares = mom.design(statistics=True)
    np.testing.assert_array_equal(Zs, Z)
    assert np.all(np.abs(c - Z.T @ z) <= 1e-12 * (np.abs(Z).T @ np.abs(z)))     # a sum's rounding bound
    np.testing.assert_allclose(squares, np.einsum("ij,ij->j", Z, Z), rtol=1e-13)


@pytest.mark.parametrize("weighted", [False, True])
def test_wide_copy_made_scaled_equals_the_copy_scaled_in_place(weighted):
    rng = np.random.default_rng(6)
    X = (rng.standard_normal((120, 900)) + rng.normal(0, 3, 900)) * np.exp2(rng.integers(-4, 4, 900))
    y = X[:, :4] @ rng.standard_normal(4) + rng.standard_normal(120)
    sw = rng.uniform(0.1, 10.0, 120) if weighted else None
    mom = moments_module.Moments(X, y, sw, True, gram=False, common_scale=False)
    pen = base.ridge_penalty(mom, 1.0)
    roots = base.wide_roots(pen)
    assert np.min(roots) < 1.0
    Z, z = mom.design()
    in_place = base.wide_normal_solve(Z, z, pen, True, sw, overwrite=True)
    Zs, zs = mom.design(column_factors=roots)
    np.testing.assert_array_equal(Zs, Z)          # the copy scaled in place above
    made_scaled = base.wide_normal_solve(Zs, zs, pen, True, sw, overwrite=True, scaled=True)
    assert in_place is not None
    for a, b in zip(in_place, made_scaled):
        np.testing.assert_array_equal(a, b)
