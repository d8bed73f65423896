"""The fast path of the binary GLM fit computes the chapter's step: ``logistic_loss`` (the
objective, gradient and Hessian in numpy) against the private kernel path, and
LogisticRegression / irls / the Laplace approximation against the textbook Newton loop."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse

import linbook
from linbook.logistic._scaled import BinaryLoss, ScaledColumns
from linbook.logistic.binary import logit_terms, probit_terms
from linbook.logistic.logistic_regression import logistic_loss, softmax_loss
from linbook.logistic.multinomial import _reduced_objective, hessian_product
from linbook.logistic.probit import probit_loss
from linbook.optim import newton


def _data(name):
    """The chapter's data (breast cancer raw and standardised, make_separable) and other shapes."""
    if name.startswith("breast_cancer"):   # chapters 4 and 5: raw features have offsets up to 1e3
        X, y = linbook.datasets.load("breast_cancer")[:2]
        if name == "breast_cancer":
            X = (X - X.mean(0)) / X.std(0)
        return X, (np.asarray(y) == np.unique(y)[1]).astype(float)
    if name == "separable":                # chapters 4 and 5
        X, y, _ = linbook.datasets.make_separable(40, 2, margin=0.3, random_state=1)
        return X, (np.asarray(y) > 0).astype(float)
    n, d, seed = {"small": (40, 2, 0), "tall": (5000, 8, 1), "wide": (300, 120, 2), "sparse": (400, 60, 3),
                  "extreme": (200, 4, 4)}[name]
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * np.logspace(-1, 1, d)
    y = (rng.random(n) < linbook.sigmoid(X @ rng.standard_normal(d) / np.sqrt(d))).astype(float)
    if name == "sparse":
        X = scipy.sparse.random(n, d, density=0.05, format="csr", random_state=seed, data_rvs=rng.standard_normal)
    if name == "extreme":                  # features of 1e-200 and 1e200, one offset by 1e8
        X = X * np.array([1e-200, 1e200, 1.0, 1.0]) + np.array([0.0, 0.0, 1e8, 0.0])
    return X, y


def _readable(theta, X, y, lam, a=None):
    Xt = np.column_stack([np.ones(len(y)), X])
    return logistic_loss(theta, Xt, y, lam, sample_weight=a, penalised=np.r_[0.0, np.ones(X.shape[1])])


SHAPES = ["breast_cancer", "breast_cancer_raw", "separable", "small", "tall", "wide", "sparse", "extreme"]


@pytest.mark.parametrize("name", SHAPES)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("lam", [0.0, 0.7])
def test_fast_loss_is_logistic_loss_on_its_columns(name, weighted, lam):
    """The private BinaryLoss is logistic_loss on the columns it works with: the centred, scaled
    design [1, (X - shift) / c], the penalty on v = c w being (lam/2) sum (v_j / c_j)^2 -- F, g and
    H equal to 1e-10 relative, also for features of 1e+-200 where X'SX in the units of X overflows."""
    X, y = _data(name)
    rng = np.random.default_rng(5)
    a = rng.uniform(0.5, 2.0, len(y)) if weighted else None
    loss = BinaryLoss(X, y, a, lam, True, logit_terms)
    theta = np.r_[0.3, rng.standard_normal(X.shape[1]) / np.sqrt(X.shape[1])]      # [b', v]
    Xs = loss.X.toarray() if scipy.sparse.issparse(loss.X) else loss.X
    r = np.r_[0.0, (1.0 / loss.c) ** 2] if lam > 0 else None      # lam > 0 keeps c >= sqrt(4 lam / sum a)
    F, g, H = logistic_loss(theta, np.column_stack([np.ones(len(y)), Xs / loss.c]), y, lam,
                            sample_weight=a, penalised=r)
    Fk, gk, Hk = loss(theta)
    assert Fk == pytest.approx(F, rel=1e-12)
    np.testing.assert_allclose(gk, g, rtol=1e-10, atol=1e-10 * np.abs(g).max())
    np.testing.assert_allclose(Hk, H, rtol=1e-10, atol=1e-10 * np.abs(H).max())
    Fg, gg = loss.value_and_gradient(theta)
    assert Fg == pytest.approx(F, rel=1e-12)
    np.testing.assert_allclose(gg, g, rtol=1e-10, atol=1e-10 * np.abs(g).max())


@pytest.mark.parametrize("name", SHAPES)
@pytest.mark.parametrize("link", ["logit", "probit"])
@pytest.mark.parametrize("lam", [0.0, 0.7])
def test_hessian_product_is_the_hessian_times_u(name, link, lam):
    """Newton-CG's F, g, H u and diag(H) (never forming H) equal F, g, H of the tested loss to 1e-10."""
    X, y = _data(name)
    rng = np.random.default_rng(6)
    a = rng.uniform(0.5, 2.0, len(y))
    loss = BinaryLoss(X, y, a, lam, True, logit_terms if link == "logit" else probit_terms, link=link)
    theta = np.r_[0.3, rng.standard_normal(X.shape[1]) / np.sqrt(X.shape[1])]
    F, g, H = loss(theta)
    Fp, gp, (hessp, diag) = loss.with_hessian_product(theta)
    assert Fp == pytest.approx(F, rel=1e-12)
    np.testing.assert_allclose(gp, g, rtol=1e-10, atol=1e-10 * np.abs(g).max())
    for u in (rng.standard_normal(theta.size), np.eye(theta.size)[0], np.eye(theta.size)[-1]):
        np.testing.assert_allclose(hessp(u), H @ u, rtol=1e-10, atol=1e-10 * np.abs(H @ u).max())
    if scipy.sparse.issparse(X):
        np.testing.assert_allclose(diag, np.diag(H), rtol=1e-10)
    else:
        assert diag is None


@pytest.mark.parametrize("name", ["breast_cancer", "breast_cancer_raw", "separable", "small", "tall", "wide",
                                  "sparse"])
@pytest.mark.parametrize("single", [False, True])
def test_fast_loss_is_logistic_loss_in_the_units_of_x(name, single):
    """In the units of X: at theta = [b, w], BinaryLoss at loss.coordinates(b, w) is logistic_loss on
    [1, X], its gradient and Hessian those of the chain rule (theta = J theta', g' = J'g, H' = J'HJ),
    to 1e-10 (the single-precision Hessian, used only for the chord method, to its own 1e-5)."""
    X, y = _data(name)
    rng = np.random.default_rng(5)
    a = rng.uniform(0.5, 2.0, len(y))
    lam = 0.7
    loss = BinaryLoss(X, y, a, lam, True, logit_terms, approximate_hessian=single)
    b, w = 0.3, rng.standard_normal(X.shape[1]) / np.sqrt(X.shape[1]) / loss.c
    Xd = X.toarray() if scipy.sparse.issparse(X) else X
    F, g, H = _readable(np.r_[b, w], Xd, y, lam, a)
    Fk, gk, Hk = loss(loss.coordinates(b, w))
    shift = np.zeros(X.shape[1]) if loss.shift is None else loss.shift
    J = np.eye(X.shape[1] + 1)                     # d[b, w] / d[b', v]: b = b' - (v / c)' shift, w = v / c
    J[0, 1:] = -shift / loss.c
    J[1:, 1:] = np.diag(1.0 / loss.c)
    assert Fk == pytest.approx(F, rel=1e-12)
    np.testing.assert_allclose(gk, J.T @ g, rtol=1e-10, atol=1e-10 * np.abs(J.T @ g).max())
    tol = 1e-5 if single else 1e-10
    np.testing.assert_allclose(Hk, J.T @ H @ J, rtol=tol, atol=tol * np.abs(J.T @ H @ J).max())
    wk, bk = loss.coefficients(loss.coordinates(b, w))
    np.testing.assert_allclose(np.r_[bk, wk], np.r_[b, w], rtol=1e-12)


def _textbook_newton(X, y, lam, a=None, steps=30):
    """The chapter's loop: theta <- theta - H^{-1} g with logistic_loss, full steps."""
    theta = np.zeros(X.shape[1] + 1)
    for _ in range(steps):
        _, g, H = _readable(theta, X, y, lam, a)
        theta = theta - np.linalg.solve(H, g)
    return theta


@pytest.mark.parametrize("name", ["breast_cancer", "breast_cancer_raw", "separable", "small", "tall", "wide",
                                  "sparse"])
@pytest.mark.parametrize("solver", ["newton", "lbfgs", "newton-cg"])
def test_logistic_regression_is_the_textbook_newton_fit(name, solver):
    X, y = _data(name)
    a = np.random.default_rng(3).uniform(0.5, 2.0, len(y))
    theta = _textbook_newton(X.toarray() if scipy.sparse.issparse(X) else X, y, 1.0, a)
    m = linbook.LogisticRegression(lam=1.0, solver=solver, tol=1e-12, max_iter=100_000).fit(X, y, sample_weight=a)
    # the fit stops where its line search can no longer see F decrease (|g| ~ 1e-7 on 40 samples),
    # so the coefficients agree to ~1e-8, not to the 1e-10 of each step's F, g and H above
    # (atol relative to the largest coefficient: raw breast-cancer features make the intercept ~24)
    np.testing.assert_allclose(np.r_[m.intercept_, m.coef_[0]], theta, rtol=1e-7, atol=1e-9 * np.abs(theta).max())


def test_logistic_loss_against_finite_differences():
    X, y = _data("small")
    w = np.array([0.2, -0.5, 0.9])
    _, g, H = _readable(w, X, y, 0.5)
    eps = 1e-6
    for j in range(3):
        e = np.eye(3)[j] * eps
        assert (_readable(w + e, X, y, 0.5)[0] - _readable(w - e, X, y, 0.5)[0]) / (2 * eps) == \
            pytest.approx(g[j], rel=1e-6)
        np.testing.assert_allclose((_readable(w + e, X, y, 0.5)[1] - _readable(w - e, X, y, 0.5)[1]) / (2 * eps),
                                   H[:, j], rtol=1e-6, atol=1e-8)


def test_irls_is_the_textbook_newton_fit_and_old_name_warns():
    X, y = _data("small")
    Xt = np.column_stack([np.ones(len(y)), X])
    theta = _textbook_newton(X, y, 0.0)
    np.testing.assert_allclose(linbook.irls(Xt, y, tol=1e-13).x, theta, rtol=1e-10)
    with pytest.warns(FutureWarning, match="linbook.irls"):
        old = linbook.optim.irls
    assert old is linbook.irls


def test_newton_decrement_stop():
    """decrement_tol stops at g'H^{-1}g/2 <= tol: a quadratic stops after one step."""
    A = np.array([[3.0, 1.0], [1.0, 2.0]])

    def fgh(x):
        return 0.5 * x @ A @ x, A @ x, A

    res = newton(fgh, np.ones(2), grad=True, hess=True, gtol=0.0, xtol=0.0, decrement_tol=1e-20)
    assert res.converged and res.n_iter == 1 and "decrement" in res.message
    np.testing.assert_allclose(res.x, 0.0, atol=1e-15)


def test_bayesian_logistic_mode_is_the_textbook_newton_fit():
    """The Laplace mode of BayesianLogisticRegression is the MAP point of the penalised loss
    (the intercept penalised too), found by the one Newton driver."""
    X, y = _data("small")
    Xt = np.column_stack([np.ones(len(y)), X])
    m = linbook.BayesianLogisticRegression(prior_precision=0.5).fit(X, y)
    theta = np.zeros(3)
    for _ in range(30):
        _, g, H = logistic_loss(theta, Xt, y, 0.5)
        theta = theta - np.linalg.solve(H, g)
    # tol = 1e-14 on the decrement g'A^{-1}g/2 bounds the error in the A-norm by ~1.4e-7
    np.testing.assert_allclose(m.posterior_mean_, theta, rtol=1e-8)


# ---- probit and multinomial: the readable step (probit_loss, softmax_loss) against the fast path

def _step_equal(F, g, H, Fk, gk, Hk):
    """F, g, H and the Newton step -H^{-1} g of the two paths equal to 1e-10 relative."""
    assert Fk == pytest.approx(F, rel=1e-12)
    np.testing.assert_allclose(gk, g, rtol=1e-10, atol=1e-10 * np.abs(g).max())
    np.testing.assert_allclose(Hk, H, rtol=1e-10, atol=1e-10 * np.abs(H).max())
    step, step_k = np.linalg.solve(H, -g), np.linalg.solve(Hk, -gk)
    np.testing.assert_allclose(step_k, step, rtol=1e-10, atol=1e-10 * np.abs(step).max())


@pytest.mark.parametrize("name", SHAPES)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("lam", [0.0, 0.7])
def test_fast_probit_loss_is_probit_loss_on_its_columns(name, weighted, lam):
    """ProbitRegression's BinaryLoss (probit_terms) is probit_loss on the centred, scaled design
    [1, (X - shift) / c]: F, g, H and the Newton step equal to 1e-10 relative."""
    X, y = _data(name)
    rng = np.random.default_rng(6)
    sw = rng.uniform(0.5, 2.0, len(y)) if weighted else None
    loss = BinaryLoss(X, y, sw, lam, True, probit_terms, link="probit")
    theta = np.r_[0.2, 0.5 * rng.standard_normal(X.shape[1]) / np.sqrt(X.shape[1])]
    Xs = loss.X.toarray() if scipy.sparse.issparse(loss.X) else loss.X
    r = np.r_[0.0, (1.0 / loss.c) ** 2] if lam > 0 else None
    F, g, H = probit_loss(theta, np.column_stack([np.ones(len(y)), Xs / loss.c]), y, lam,
                          sample_weight=sw, penalised=r)
    _step_equal(F, g, H, *loss(theta))


def _multiclass(name):
    """Chapter 4's iris (3 classes) and other shapes: tall, wide-ish, sparse, raw offsets, 5 classes."""
    if name == "iris":
        X, y = linbook.datasets.load("iris")[:2]
        return np.asarray(X, dtype=float), np.unique(np.asarray(y), return_inverse=True)[1]
    n, d, C, seed = {"tall": (3000, 6, 3, 1), "wide": (200, 40, 4, 2), "sparse": (400, 30, 3, 3),
                     "offset": (300, 5, 5, 4)}[name]
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * np.logspace(-1, 1, d)
    y = np.argmax(X @ rng.standard_normal((d, C)) / np.sqrt(d) + rng.gumbel(size=(n, C)), axis=1)
    if name == "sparse":
        X = scipy.sparse.random(n, d, density=0.1, format="csr", random_state=seed, data_rvs=rng.standard_normal)
    if name == "offset":                   # offsets up to 1e4: the fast path centres these columns
        X = X + np.array([0.0, 1e4, 0.0, 50.0, 0.0])
    return X, y


@pytest.mark.parametrize("name", ["iris", "tall", "wide", "sparse", "offset"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("lam", [0.0, 0.7])
def test_fast_multinomial_loss_is_softmax_loss_on_its_columns(name, weighted, lam):
    """The multinomial Newton path's objective (reduced parameters, class 0 the reference) is
    softmax_loss on the centred, scaled design [1, (X - shift) / c]: F, g, H and the Newton step
    equal to 1e-10 relative."""
    X, y = _multiclass(name)
    C = int(y.max()) + 1
    rng = np.random.default_rng(7)
    sw = rng.uniform(0.5, 2.0, len(y)) if weighted else None
    cols = ScaledColumns(X, sw, lam, True)
    fgh, _, _ = _reduced_objective(cols.Xk, cols.ck, cols.c, y, sw, C, lam, True)
    theta = 0.5 * rng.standard_normal((C - 1) * (X.shape[1] + 1)) / np.sqrt(X.shape[1])
    Xs = cols.X.toarray() if scipy.sparse.issparse(cols.X) else cols.X
    r = np.r_[0.0, (1.0 / cols.c) ** 2] if lam > 0 else None
    F, g, H = softmax_loss(theta, np.column_stack([np.ones(len(y)), Xs / cols.c]), y, C, lam,
                           sample_weight=sw, penalised=r)
    _step_equal(F, g, H, *fgh(theta))


@pytest.mark.parametrize("name", ["iris", "tall", "wide", "sparse", "offset"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("lam", [0.0, 0.7])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_multinomial_hessian_product_is_softmax_loss_hessian_times_u(name, weighted, lam, fit_intercept):
    """Newton-CG's multinomial product, never forming H, is the chapter's H (softmax_loss, formed) times
    random directions: the readable ``hessian_product`` (no penalty) and the fit's ``hessp`` on the centred,
    scaled design (with the penalty) to 1e-10 relative; for sparse X its Jacobi diagonal is diag(H); F and g
    are those of the Newton path."""
    X, y = _multiclass(name)
    C = int(y.max()) + 1
    rng = np.random.default_rng(11)
    sw = rng.uniform(0.5, 2.0, len(y)) if weighted else None
    cols = ScaledColumns(X, sw, lam, fit_intercept)
    fgh, _, with_hessian_product = _reduced_objective(cols.Xk, cols.ck, cols.c, y, sw, C, lam, fit_intercept)
    p = X.shape[1] + int(fit_intercept)
    theta = 0.5 * rng.standard_normal((C - 1) * p) / np.sqrt(X.shape[1])
    Xs = cols.X.toarray() if scipy.sparse.issparse(cols.X) else cols.X
    Xt = np.column_stack([np.ones(len(y)), Xs / cols.c]) if fit_intercept else Xs / cols.c
    r = np.r_[np.zeros(int(fit_intercept)), (1.0 / cols.c) ** 2]
    H = softmax_loss(theta, Xt, y, C, lam, sample_weight=sw, penalised=r)[2]
    H_data = softmax_loss(theta, Xt, y, C, 0.0, sample_weight=sw)[2]
    A = np.column_stack([np.zeros(len(y)), Xt @ theta.reshape(C - 1, p).T])
    P = linbook.softmax(A, axis=1)[:, 1:]
    F, g, (hessp, diag) = with_hessian_product(theta)
    Fn, gn, _ = fgh(theta)
    assert F == Fn and np.array_equal(g, gn)
    for _ in range(3):
        u = rng.standard_normal(theta.size)
        readable = hessian_product(Xt, P, np.ones(len(y)) if sw is None else sw, u.reshape(C - 1, p)).ravel()
        np.testing.assert_allclose(readable, H_data @ u, rtol=1e-10, atol=1e-10 * np.abs(H_data @ u).max())
        np.testing.assert_allclose(hessp(u), H @ u, rtol=1e-10, atol=1e-10 * np.abs(H @ u).max())
    if scipy.sparse.issparse(X):
        np.testing.assert_allclose(diag, np.diag(H), rtol=1e-10, atol=1e-10 * np.abs(np.diag(H)).max())
    else:
        assert diag is None


@pytest.mark.parametrize("name", ["iris", "wide", "sparse", "offset"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_symmetric_hessian_product_is_the_symmetric_gradient_derivative(name, weighted, fit_intercept):
    """Newton-CG with lam > 0 runs in the symmetric parameters (C rows): its product is the derivative of the
    symmetric objective's gradient along u (central differences, 1e-6), symmetric, with the objective's F and g;
    for sparse X its Jacobi diagonal is the product's diagonal."""
    from linbook.logistic.multinomial import symmetric_hessian_products, symmetric_objective

    X, y = _multiclass(name)
    C, lam = int(y.max()) + 1, 0.7
    rng = np.random.default_rng(12)
    sw = rng.uniform(0.5, 2.0, len(y)) if weighted else None
    cols = ScaledColumns(X, sw, lam, fit_intercept)
    design = (cols.Xk, cols.ck, cols.c, y, sw, C, lam, fit_intercept)
    fg, products = symmetric_objective(*design), symmetric_hessian_products(*design)
    theta = 0.5 * rng.standard_normal(C * (X.shape[1] + int(fit_intercept))) / np.sqrt(X.shape[1])
    F, g, (hessp, diag) = products(theta)
    assert (F, g.tolist()) == (fg(theta)[0], fg(theta)[1].tolist())
    H = np.column_stack([hessp(e) for e in np.eye(theta.size)])
    np.testing.assert_allclose(H, H.T, rtol=1e-12, atol=1e-12 * np.abs(H).max())
    u = rng.standard_normal(theta.size)
    derivative = (fg(theta + 1e-5 * u)[1] - fg(theta - 1e-5 * u)[1]) / 2e-5
    np.testing.assert_allclose(hessp(u), derivative, rtol=1e-6, atol=1e-6 * np.abs(derivative).max())
    if scipy.sparse.issparse(X):
        np.testing.assert_allclose(diag, np.diag(H), rtol=1e-10, atol=1e-10 * np.abs(np.diag(H)).max())


def _textbook_newton_step_fit(loss, d, steps=40, **kw):
    """The chapter's loop with a readable loss: theta <- theta - H^{-1} g, full steps from 0."""
    theta = np.zeros(d)
    for _ in range(steps):
        _, g, H = loss(theta, **kw)
        theta = theta - np.linalg.solve(H, g)
    return theta


@pytest.mark.parametrize("name", ["breast_cancer", "small", "tall", "wide"])
def test_probit_regression_is_the_textbook_newton_fit(name):
    X, y = _data(name)
    sw = np.random.default_rng(3).uniform(0.5, 2.0, len(y))
    Xt = np.column_stack([np.ones(len(y)), X])
    theta = _textbook_newton_step_fit(lambda th: probit_loss(th, Xt, y, 1.0, sample_weight=sw,
                                                             penalised=np.r_[0.0, np.ones(X.shape[1])]), Xt.shape[1])
    m = linbook.ProbitRegression(lam=1.0, tol=1e-12).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(np.r_[m.intercept_, m.coef_[0]], theta, rtol=1e-7, atol=1e-9 * np.abs(theta).max())


@pytest.mark.parametrize("name", ["iris", "tall", "wide", "offset"])
def test_multinomial_logistic_regression_is_the_textbook_newton_fit(name):
    """Newton on softmax_loss (reduced parameters) gives LogisticRegression's multinomial fit,
    reported centred: W = [0, theta_1, ...] minus its class mean."""
    X, y = _multiclass(name)
    C, d = int(y.max()) + 1, X.shape[1]
    sw = np.random.default_rng(3).uniform(0.5, 2.0, len(y))
    Xt = np.column_stack([np.ones(len(y)), X])
    theta = _textbook_newton_step_fit(lambda th: softmax_loss(th, Xt, y, C, 1.0, sample_weight=sw,
                                                              penalised=np.r_[0.0, np.ones(d)]), (C - 1) * (d + 1))
    Wt = np.vstack([np.zeros(d + 1), theta.reshape(C - 1, d + 1)])
    Wt -= Wt.mean(axis=0)
    m = linbook.LogisticRegression(lam=1.0, solver="newton", tol=1e-12).fit(X, y, sample_weight=sw)
    got = np.column_stack([m.intercept_, m.coef_])
    np.testing.assert_allclose(got, Wt, rtol=1e-7, atol=1e-9 * np.abs(Wt).max())


@pytest.mark.parametrize("weighted", [False, True])
def test_fast_gradient_in_row_chunks_is_logistic_loss(weighted):
    """40,000 rows: the gradient-only pass runs in row chunks (one per core, single-threaded BLAS);
    its F and g equal logistic_loss's to 1e-10, and z is every row's."""
    rng = np.random.default_rng(8)
    X = rng.standard_normal((40_000, 7)) * np.logspace(-1, 1, 7) + np.r_[0.0, 0.0, 30.0, 0.0, 0.0, 0.0, 0.0]
    y = (rng.random(40_000) < linbook.sigmoid(X[:, :2].sum(1))).astype(float)
    sw = rng.uniform(0.5, 2.0, len(y)) if weighted else None
    loss = BinaryLoss(X, y, sw, 0.7, True, logit_terms)
    theta = np.r_[0.3, rng.standard_normal(7) / 3]
    F, g, _ = logistic_loss(theta, np.column_stack([np.ones(len(y)), loss.X / loss.c]), y, 0.7, sample_weight=sw,
                            penalised=np.r_[0.0, (1.0 / loss.c) ** 2], hessian=False)
    Fk, gk = loss.value_and_gradient(theta)
    assert Fk == pytest.approx(F, rel=1e-12)
    np.testing.assert_allclose(gk, g, rtol=1e-10, atol=1e-10 * np.abs(g).max())


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("single", [False, True])
def test_fast_hessian_in_row_chunks_is_logistic_loss(weighted, single):
    """40,000 rows: the pass with the Hessian runs in row chunks too (one per core, each summing its own
    X_b' S X_b); F, g and H equal logistic_loss's (H to single precision's ~1e-6 when formed in it)."""
    rng = np.random.default_rng(9)
    X = rng.standard_normal((40_000, 7)) * np.logspace(-1, 1, 7) + np.r_[0.0, 0.0, 30.0, 0.0, 0.0, 0.0, 0.0]
    y = (rng.random(40_000) < linbook.sigmoid(X[:, :2].sum(1))).astype(float)
    sw = rng.uniform(0.5, 2.0, len(y)) if weighted else None
    loss = BinaryLoss(X, y, sw, 0.7, True, logit_terms, approximate_hessian=single)
    assert loss.hessian_by_rows
    theta = np.r_[0.3, rng.standard_normal(7) / 3]
    F, g, H = logistic_loss(theta, np.column_stack([np.ones(len(y)), loss.X / loss.c]), y, 0.7, sample_weight=sw,
                            penalised=np.r_[0.0, (1.0 / loss.c) ** 2])
    Fk, gk, Hk = loss(theta)
    assert Fk == pytest.approx(F, rel=1e-12)
    np.testing.assert_allclose(gk, g, rtol=1e-10, atol=1e-10 * np.abs(g).max())
    np.testing.assert_allclose(Hk, H, rtol=1e-5 if single else 1e-10, atol=(1e-5 if single else 1e-10) * np.abs(H).max())
    assert np.array_equal(Hk, Hk.T)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_symmetric_multinomial_loss_in_row_chunks_is_the_softmax_loss(weighted, sparse):
    """The first-order multinomial path's objective (symmetric parameters, ``lam > 0``), summed over row
    chunks with one BLAS thread each (20,000 rows: two or more chunks), is the chapter's
    ``sum_i s_i [logsumexp(A_i) - A_{i, y_i}] + (lam / 2) ||W||^2`` on the design ``[1, (X - shift) / c]``,
    and its gradient, to 1e-10 relative."""
    from linbook.logistic.multinomial import symmetric_objective
    rng = np.random.default_rng(41)
    n, d, C, lam = 20_000, 30, 7, 0.7
    X = rng.standard_normal((n, d)) * np.logspace(-1, 1, d) + 3.0
    if sparse:
        X = scipy.sparse.random(n, d, density=0.1, format="csr", random_state=41, data_rvs=rng.standard_normal)
    y = rng.integers(0, C, n)
    sw = rng.uniform(0.5, 2.0, n) if weighted else None
    cols = ScaledColumns(X, sw, lam, True)
    fg = symmetric_objective(cols.Xk, cols.ck, cols.c, y, sw, C, lam, True)
    theta = 0.5 * rng.standard_normal(C * (d + 1)) / np.sqrt(d)
    Xs = cols.X.toarray() if scipy.sparse.issparse(cols.X) else cols.X
    D = np.column_stack([np.ones(n), Xs / cols.c])
    T = theta.reshape(C, d + 1)
    A = D @ T.T
    P = np.exp(A - linbook.logsumexp(A, axis=1)[:, None])
    s = np.ones(n) if sw is None else sw
    W = T[:, 1:] / cols.c
    F = s @ (linbook.logsumexp(A, axis=1) - A[np.arange(n), y]) + 0.5 * lam * np.sum(W * W)
    R = s[:, None] * (P - np.eye(C)[y])
    g = R.T @ D
    g[:, 1:] += lam * W / cols.c
    f_fast, g_fast = fg(theta)
    assert f_fast == pytest.approx(F, rel=1e-10)
    np.testing.assert_allclose(g_fast, g.ravel(), rtol=1e-10, atol=1e-10 * np.max(np.abs(g)))


@pytest.mark.parametrize("name", ["small", "extreme", "breast_cancer_raw", "separable"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("intercept", [False, True])
@pytest.mark.parametrize("terms", [logit_terms, probit_terms])
def test_small_pass_is_the_blocked_pass(name, weighted, intercept, terms):
    """Small dense X is passed over whole (``small_pass`` on ``X~ = [1, X / c]``): the same F, g and H as the
    blocked kernel, to rounding, also for features of 1e+-200 and offsets of 1e8."""
    from linbook._kernels.hessian import binary_pass
    from linbook.logistic._scaled import small_pass

    X, y = _data(name)
    rng = np.random.default_rng(6)
    a = rng.uniform(0.5, 2.0, len(y)) if weighted else None
    loss = BinaryLoss(X, y, a, 0.3, intercept, terms)
    assert loss._small is not None
    off = int(intercept)
    theta = rng.standard_normal(X.shape[1] + off) / np.sqrt(X.shape[1])
    f, g, H = small_pass(loss._small, loss.t, theta, terms, a, True)
    f0, g0, H0, _ = binary_pass(loss._Xk, loss.t, theta[off:], theta[0] if off else 0.0, terms, weights=a,
                                col_scale=loss._ck, fit_intercept=intercept)
    assert f == pytest.approx(f0, rel=1e-12)
    np.testing.assert_allclose(g, g0, rtol=1e-10, atol=1e-12 * np.abs(g0).max())
    np.testing.assert_allclose(H, H0, rtol=1e-10, atol=1e-12 * np.abs(H0).max())
    np.testing.assert_array_equal(H, H.T)
    assert small_pass(loss._small, loss.t, theta, terms, a, False)[2] is None


@pytest.mark.parametrize("name", ["small", "breast_cancer", "separable"])
@pytest.mark.parametrize("lam", [0.0, 1.0])
def test_small_fit_is_the_blocked_fit(name, lam, monkeypatch):
    """LogisticRegression on small dense X (the whole-design pass) and through the blocked kernel: the same
    fit, iterations, convergence and separation verdict."""
    import warnings

    from linbook.logistic import _scaled

    X, y = _data(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        small = linbook.LogisticRegression(lam=lam).fit(X, y)
        monkeypatch.setattr(_scaled, "SMALL_PASS_ENTRIES", 0)
        blocked = linbook.LogisticRegression(lam=lam).fit(X, y)
    assert (small.converged_, small.separable_, small.n_iter_) == (blocked.converged_, blocked.separable_,
                                                                    blocked.n_iter_)
    scale = max(1.0, np.abs(blocked.coef_).max())
    np.testing.assert_allclose(small.coef_, blocked.coef_, rtol=0, atol=1e-7 * scale)
    np.testing.assert_allclose(small.intercept_, blocked.intercept_, rtol=0, atol=1e-7 * scale)
    np.testing.assert_allclose(small.predict_proba(X), blocked.predict_proba(X), rtol=0, atol=1e-9)
