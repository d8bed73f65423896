"""Ridge on dense wide X by conjugate gradients on the centred copy (``linbook.linear._base.wide_cg_solve``).

CG runs first where its budget (the cost of the ``N x N`` form's syrk) allows, from ~730 rows; here the budget is
forced on small problems so the route is tested on data whose answer is known. Its answer must be the ``N x N``
form's (the SVD's) and ``df_`` the same; where CG would not finish in its budget it gives way early and the
factorisation answers.
"""

import pickle
import warnings

import numpy as np
import pytest

import linbook.linear._base as base_module
import linbook.linear.ridge as ridge_module
from linbook.linear import Ridge


def data(n=60, d=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * rng.uniform(0.5, 3, d) + rng.normal(0, 2, d)
    y = X[:, :10] @ rng.standard_normal(10) + 1.5 + 0.5 * rng.standard_normal(n)
    return X, y


@pytest.fixture
def cg_budget(monkeypatch):
    monkeypatch.setattr(ridge_module, "wide_cg_budget", lambda n, d: 500)


def svd_ridge(X, y, lam, sw, fit_intercept):
    """The oracle: the ridge solution and its df from the SVD of the centred, weighted X."""
    xm = sw @ X / sw.sum() if fit_intercept else np.zeros(X.shape[1])
    ym = sw @ y / sw.sum() if fit_intercept else 0.0
    r = np.sqrt(sw)
    U, s, Vt = np.linalg.svd((X - xm) * r[:, None], full_matrices=False)
    w = Vt.T @ (s / (s ** 2 + lam) * (U.T @ ((y - ym) * r)))
    keep = s > s.max() * max(X.shape) * np.finfo(float).eps
    return w, ym - xm @ w, np.sum(s[keep] ** 2 / (s[keep] ** 2 + lam))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("lam", [1e-1, 10.0, 1e4])
def test_cg_fit_equals_the_svd_solution(cg_budget, lam, fit_intercept, weighted):
    X, y = data(seed=1)
    sw = np.random.default_rng(2).uniform(0.5, 2.0, len(y)) if weighted else np.ones(len(y))
    m = Ridge(lam=lam, fit_intercept=fit_intercept).fit(X, y, sample_weight=sw if weighted else None)
    assert m.solver_ == "cg"
    w, b, df = svd_ridge(X, y, lam, sw, fit_intercept)
    np.testing.assert_allclose(m.coef_, w, rtol=0, atol=1e-10 * np.abs(w).max())
    np.testing.assert_allclose(m.intercept_, b, rtol=1e-10, atol=1e-10 * abs(b))
    np.testing.assert_allclose(m.df_, df, rtol=1e-9)


def test_cg_equals_the_n_by_n_form_and_df_comes_from_the_training_x(cg_budget, monkeypatch):
    X, y = data(seed=3)
    m = Ridge(lam=1.0).fit(X, y)
    assert m.solver_ == "cg"
    X0 = X.copy()
    X[:] = 0.0                                        # the caller's X changes after the fit: df_ is the fit's
    df = m.df_
    pickled = pickle.dumps(Ridge(lam=1.0).fit(X0, y))             # the deferred df_ survives pickling
    monkeypatch.setattr(ridge_module, "wide_cg_budget", lambda n, d: 0)
    ref = Ridge(lam=1.0).fit(X0, y)
    assert ref.solver_ == "cholesky"
    np.testing.assert_allclose(m.coef_, ref.coef_, rtol=0, atol=1e-11 * np.abs(ref.coef_).max())
    np.testing.assert_allclose(df, ref.df_, rtol=1e-12)
    again = pickle.loads(pickled)
    assert again.solver_ == "cg"
    np.testing.assert_allclose(again.df_, ref.df_, rtol=1e-12)


def test_cg_that_would_overrun_its_budget_gives_way_after_a_few_iterations(monkeypatch):
    """Singular values spread over three decades and a penalty at the smallest squared: CG would need thousands of
    iterations. Its Lanczos estimate shows that within a few, and the factorisation answers (the right answer, at
    the cost of a few passes, not the whole budget)."""
    rng = np.random.default_rng(4)
    U = np.linalg.qr(rng.standard_normal((60, 60)))[0]
    V = np.linalg.qr(rng.standard_normal((400, 60)))[0]
    X = (U * np.logspace(0, -3, 60)) @ V.T
    y = rng.standard_normal(60)
    monkeypatch.setattr(ridge_module, "wide_cg_budget", lambda n, d: 300)
    passes = []
    matvec = base_module._dense_normal_matvec

    def counted(Z, pen):
        H = matvec(Z, pen)
        return lambda p: passes.append(1) or H(p)

    monkeypatch.setattr(base_module, "_dense_normal_matvec", counted)
    m = Ridge(lam=1e-6, fit_intercept=False).fit(X, y)
    assert m.solver_ == "cholesky" and 0 < len(passes) <= 20
    w = svd_ridge(X, y, 1e-6, np.ones(len(y)), False)[0]
    np.testing.assert_allclose(m.coef_, w, rtol=0, atol=1e-8 * np.abs(w).max())


@pytest.mark.parametrize("s", [1e-150, 1e150])
def test_cg_under_extreme_column_scales(cg_budget, s):
    """Half the columns multiplied by ``s``: the fit on ``(X D, y)`` with the penalty per column mapped equals the
    fit on ``(X, y)``; here ``lam`` is one number, so compare against the same data's ``N x N`` form."""
    X, y = data(seed=6)
    X[:, ::2] *= s
    m = Ridge(lam=1.0).fit(X, y)
    assert np.all(np.isfinite(m.coef_))
    ref_est = Ridge(lam=1.0)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ridge_module, "wide_cg_budget", lambda n, d: 0)
        ref = ref_est.fit(X, y)
    scale = np.where(np.arange(X.shape[1]) % 2 == 0, s, 1.0)
    # compare the coefficients in the units of each column (w_j x_j: what each contributes to the fit)
    np.testing.assert_allclose(m.coef_ * scale, ref.coef_ * scale, rtol=0, atol=1e-9 * np.abs(ref.coef_ * scale).max())
    np.testing.assert_allclose(m.intercept_, ref.intercept_, rtol=1e-9)


def test_cg_with_weights_over_many_decades(cg_budget):
    """Weights 1e-100 .. 1e100: the N x N form's answer. CG stopped after 3 steps (the heavy rows' equations
    settled) and its answer passed the backward-error test with the objective 1e16 times the optimum's."""
    X, y = data(seed=7)
    sw = 10.0 ** np.random.default_rng(8).uniform(-100, 100, len(y))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = Ridge(lam=1.0).fit(X, y, sample_weight=sw)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(ridge_module, "wide_cg_budget", lambda n, d: 0)
            ref = Ridge(lam=1.0).fit(X, y, sample_weight=sw)
    assert m.solver_ == ref.solver_ == "cholesky"
    np.testing.assert_allclose(m.coef_, ref.coef_, rtol=0, atol=1e-8 * np.abs(ref.coef_).max())


def test_the_svd_fallback_after_the_n_by_n_form_uses_the_unscaled_copy():
    """The ``N x N`` form scales the centred copy in place (columns of different powers of two); where it then fails
    (two equal rows, a penalty below rounding) the SVD must see the copy as it was."""
    X, y = data(n=20, d=60, seed=9)
    X[:, :30] *= 1e3                             # per-column scales differ: q != 1
    X[7], y[7] = X[3], y[3] + 1.0
    lam = 1e-20
    m = Ridge(lam=lam).fit(X, y)
    assert m.solver_ == "svd"
    Xc, yc = X - X.mean(0), y - y.mean()
    np.testing.assert_allclose(Xc @ m.coef_, Xc @ np.linalg.lstsq(Xc, yc, rcond=None)[0], rtol=0,
                               atol=1e-7 * np.abs(yc).max())
