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


# --- Regression sweep (passes on main too; recorded so the classes stay right) -------------------------------------
# LogisticRegression with lam = 0 on columns scaled by exact powers of two 2^-450..2^450, dense and CSR, every solver.
# Oracle: scikit-learn's unpenalised LogisticRegression on the unscaled columns (the posterior is scale-free).

def _multiclass(seed, C, n, p, noise=1.5):
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, p))
    y = (Z @ rng.standard_normal((p, C)) + noise * rng.standard_normal((n, C))).argmax(axis=1)
    return Z, y, rng


@pytest.mark.parametrize("solver", ["auto", "newton", "newton-cg", "lbfgs", "bfgs"])
@pytest.mark.parametrize("seed, C", [(0, 2), (1, 3), (2, 2), (3, 3)])
@pytest.mark.parametrize("sparse", [False, True])
def test_logistic_posterior_is_free_of_power_of_two_column_scales(solver, seed, C, sparse):
    import scipy.sparse as sp
    from sklearn.linear_model import LogisticRegression as SkLogistic
    Z, y, rng = _multiclass(seed, C, 150, 3)
    X = np.ldexp(Z, rng.integers(-450, 450, Z.shape[1]))
    expected = SkLogistic(penalty=None, tol=1e-14, max_iter=100000).fit(Z, y).predict_proba(Z)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = linbook.LogisticRegression(lam=0, solver=solver).fit(sp.csr_matrix(X) if sparse else X, y)
    np.testing.assert_allclose(model.predict_proba(X), expected, atol=1e-6)


# The Gaussian classifiers on columns scaled by 2^-300..2^300 plus a y-independent offset of 1e6 column units.
# Oracle: scikit-learn's LinearDiscriminantAnalysis(solver="lsqr"), QuadraticDiscriminantAnalysis and GaussianNB on
# the unscaled, unshifted data (these models are affine-equivariant per column).

def _sklearn_older_than(major, minor):
    import sklearn
    return tuple(int(v) for v in sklearn.__version__.split(".")[:2]) < (major, minor)


@pytest.mark.parametrize("name", ["LDA", "QDA", "GaussianNaiveBayes"])
@pytest.mark.parametrize("seed, C, p", [(0, 2, 1), (1, 3, 2), (2, 4, 3), (3, 2, 3)])
@pytest.mark.parametrize("offset", [0.0, 1e6])
def test_gaussian_classifiers_are_affine_equivariant_per_column(name, seed, C, p, offset):
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis
    from sklearn.naive_bayes import GaussianNB
    if name == "QDA" and _sklearn_older_than(1, 9):
        pytest.skip("the oracle: scikit-learn 1.6's QDA probabilities differ from 1.9's by 0.01 on these data "
                    "(found under make test-min, not yet traced)")
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(C), 20)
    Z = rng.standard_normal((y.size, p)) + rng.standard_normal((C, p))[y]
    T = Z[::3] + 0.3 * rng.standard_normal(Z[::3].shape)
    e = rng.integers(-300, 300, p)
    oracle = {"LDA": LinearDiscriminantAnalysis(solver="lsqr"), "QDA": QuadraticDiscriminantAnalysis(),
              "GaussianNaiveBayes": GaussianNB(var_smoothing=1e-300)}[name].fit(Z, y)
    model = getattr(linbook, name)(**({"var_smoothing": 0.0} if name == "GaussianNaiveBayes" else {}))
    model.fit(np.ldexp(Z + offset, e), y)
    np.testing.assert_allclose(model.predict_proba(np.ldexp(T + offset, e)), oracle.predict_proba(T), atol=1e-6)


# LogisticRegression against scikit-learn with the matching l2 penalty (C = 1 / lam) for labels of every kind,
# sample weights, and dense / CSC / float32 inputs.

@pytest.mark.parametrize("labels", ["int", "str", "negative", "float", "bool"])
@pytest.mark.parametrize("kind", ["dense", "csc", "float32"])
@pytest.mark.parametrize("weighted", [False, True])
def test_logistic_matches_scikit_learn_for_label_and_input_kinds(labels, kind, weighted):
    import scipy.sparse as sp
    from sklearn.linear_model import LogisticRegression as SkLogistic
    C = 2 if labels == "bool" else 3
    Z, yi, rng = _multiclass(7, C, 80, 3, noise=0.7)
    y = {"int": yi, "str": np.array([f"c{k}" for k in yi]), "negative": -3 - yi, "float": yi.astype(float),
         "bool": yi.astype(bool)}[labels]
    sw = rng.uniform(0.1, 3.0, yi.size) if weighted else None
    oracle = SkLogistic(C=1 / 0.5, tol=1e-13, max_iter=100000).fit(Z, y, sample_weight=sw)
    X = {"dense": Z, "csc": sp.csc_matrix(Z), "float32": Z.astype(np.float32)}[kind]
    model = linbook.LogisticRegression(lam=0.5, tol=1e-10).fit(X, y, sample_weight=sw)
    assert list(model.classes_) == list(oracle.classes_)
    np.testing.assert_allclose(model.predict_proba(Z), oracle.predict_proba(Z), atol=1e-4 if kind == "float32" else 1e-6)
    assert np.array_equal(model.predict(Z), oracle.classes_[oracle.predict_proba(Z).argmax(axis=1)])


# --- LogisticRegression / ProbitRegression with sample weights over more than 16 decades --------------------------
# Before: the start b = link(ybar), ybar = np.average(y, weights=sw), rounded to 1.0 when the heaviest rows were all
# of one class, so b = inf and the fit failed with the solver's "x0 must be finite: pass a starting point without NaN
# or inf" (naming no input of fit). Weights 10^U(-100, 100) on 20 rows: 7 of 30 seeds. Now the start is computed from
# the log class weights. Oracle: mpmath (80 digits) evaluates the gradient of the weighted NLL at the returned
# (intercept_, coef_); relative to sum_i w_i max|x~_i| it must be at rounding level when converged_ is True.

def _weighted_nll_gradient(X, y, w, b, coef, link):
    import mpmath as mp
    with mp.workdps(80):
        grad = [mp.mpf(0)] * (1 + X.shape[1])
        for xi, yi, wi in zip(X, y, w):
            z = mp.mpf(float(b)) + mp.fsum(mp.mpf(float(a)) * mp.mpf(float(c)) for a, c in zip(xi, coef))
            t = 1 if yi == 1 else -1
            if link == "logit":
                d = -t * mp.mpf(float(wi)) / (1 + mp.exp(t * z))
            else:                               # d/dz of -log Phi(t z) = -t phi(z) / Phi(t z)
                d = -t * mp.mpf(float(wi)) * mp.npdf(z) / mp.ncdf(t * z)
            grad = [grad[0] + d] + [grad[j + 1] + d * mp.mpf(float(xi[j])) for j in range(X.shape[1])]
        scale = mp.fsum(mp.mpf(float(wi)) for wi in w) * max(1.0, float(np.abs(X).max()))
        return float(max(abs(g) for g in grad) / scale)


@pytest.mark.parametrize("model, link", [("LogisticRegression", "logit"), ("ProbitRegression", "probit")])
@pytest.mark.parametrize("seed, span", [(1, 200), (4, 200), (5, 200), (9, 200), (2, 60), (3, 300), (6, 40), (8, 250)])
def test_binary_glm_fits_weights_over_many_decades(model, link, seed, span):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((20, 2))
    y = (X.sum(axis=1) + 1.3 * rng.standard_normal(20) > 0).astype(int)
    y[:2] = [0, 1]
    w = 10.0 ** rng.uniform(-span / 2, span / 2, 20)
    w[np.argmax(w)] *= 1e8          # the heaviest row outweighs all others by more than 16 decades
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = getattr(linbook, model)(lam=0).fit(X, y, sample_weight=w)
    assert np.all(np.isfinite(fitted.predict_proba(X)))
    if fitted.converged_:
        assert _weighted_nll_gradient(X, y, w, fitted.intercept_[0], fitted.coef_.ravel(), link) < 1e-8


@pytest.mark.parametrize("model", ["LogisticRegression", "ProbitRegression"])
@pytest.mark.parametrize("seed", [1, 4, 5, 9])
def test_binary_glm_on_dask_fits_weights_over_many_decades(model, seed):
    """The dask fit had the same start (from label_weight sums). Oracle: the in-memory fit (checked above)."""
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((20, 2))
    y = (X.sum(axis=1) + 1.3 * rng.standard_normal(20) > 0).astype(int)
    y[:2] = [0, 1]
    w = 10.0 ** rng.uniform(-100, 100, 20)
    w[np.argmax(w)] *= 1e8
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = getattr(linbook, model)(lam=0).fit(X, y, sample_weight=w)
        fitted = getattr(linbook, model)(lam=0).fit(da.from_array(X, chunks=7), da.from_array(y, chunks=7),
                                                    sample_weight=da.from_array(w, chunks=7))
    assert fitted.converged_ == expected.converged_
    if expected.converged_:
        np.testing.assert_allclose(fitted.predict_proba(X), expected.predict_proba(X), atol=1e-8)
    else:   # both warned: where they stopped is not an answer (seed 4 under the Prescott / 1-thread configuration:
        # coefficients 6.40e4 against 6.55e4 on a quasi-separable fit), but both must have come as far down
        z_fit, z_exp = (np.ravel(m.decision_function(X)) for m in (fitted, expected))
        from scipy.special import log_ndtr
        nll = ((lambda m: -log_ndtr(m)) if model == "ProbitRegression" else (lambda m: np.logaddexp(0.0, -m)))
        loss = [float(np.sum(w / w.max() * nll((2 * y - 1) * z))) for z in (z_fit, z_exp)]
        assert loss[0] == pytest.approx(loss[1], rel=1e-8)
