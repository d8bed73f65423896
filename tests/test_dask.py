"""The estimators on Dask (linbook._dask): the same fitted attributes as in memory, on a local cluster.

Every test runs on one ``distributed.LocalCluster`` with two worker processes, started by the
``client`` fixture of tests/conftest.py for the module. Equality with the in-memory fit is asserted
to 1e-8 relative (the issue's bar); the fits are exact map-reduces of the in-memory statistics, so
the measured gaps are ~1e-14.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import linbook
import linbook.base

da = pytest.importorskip("dask.array", reason="the dask extra is not installed (pip install 'linbook[dask]')")
distributed = pytest.importorskip("distributed")
dd = pytest.importorskip("dask.dataframe")

RTOL = 1e-8


def _close(a, b, rtol=RTOL):
    """``max |a - b| <= rtol * max |a|`` (relative to the array's scale), with the gap in the message."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert a.shape == b.shape
    gap = float(np.max(np.abs(a - b))) / max(float(np.max(np.abs(a))), 1e-300)
    assert gap <= rtol, f"relative gap {gap:.2e} > {rtol:.0e}"
    return gap


def _classification(n=3000, d=5, classes=2, seed=0, offset=50.0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * np.linspace(0.5, 3.0, d)
    X[:, 1] += offset                          # an offset column: the fit centres it, as in memory
    W = rng.standard_normal((classes, d))
    A = (X - X.mean(0)) @ W.T
    P = np.exp(A - A.max(1, keepdims=True))
    P /= P.sum(1, keepdims=True)
    y = (P.cumsum(1) < rng.random((n, 1))).sum(1)
    return X, y, rng.uniform(0.2, 2.0, n)


def _fitted_equal(m_mem, m_dask, names):
    gaps = {}
    for name in names:
        value = getattr(m_dask, name)
        assert isinstance(value, np.ndarray), f"{name} is {type(value)}, not numpy"
        gaps[name] = _close(getattr(m_mem, name), value)
    return gaps


# --------------------------------------------------------------------------- logistic and probit
@pytest.mark.parametrize("classes", [2, 3])
def test_newton_cg_on_blocks_is_refused_clearly_and_leaves_the_model(client, classes):
    """Newton-CG fits in-memory X (now with any number of classes); on dask collections it says so
    and names the solvers that work, and the model is left as it was."""
    X, y, _ = _classification(n=600, classes=classes)
    m = linbook.LogisticRegression(solver="newton-cg")
    with pytest.raises(ValueError, match=r"solver='newton-cg' needs in-memory X.*Set solver to 'newton' or 'lbfgs'"):
        m.fit(da.from_array(X, chunks=(200, -1)), da.from_array(y, chunks=200))
    assert not hasattr(m, "coef_") and not hasattr(m, "solver_")


def test_logistic_binary_weighted_equals_in_memory(client):
    """Binary, sample weights, y and weights chunked unlike X (rechunked to X's rows)."""
    X, y, a = _classification()
    mem = linbook.LogisticRegression(lam=0.5).fit(X, y, sample_weight=a)
    Xd = da.from_array(X, chunks=(700, 3))
    dsk = linbook.LogisticRegression(lam=0.5).fit(Xd, da.from_array(y, chunks=1000),
                                                  sample_weight=da.from_array(a, chunks=900))
    _fitted_equal(mem, dsk, ["coef_", "intercept_", "classes_"])
    assert dsk.converged_ and dsk.solver_ == mem.solver_ == "newton" and dsk.n_features_in_ == 5
    proba = dsk.predict_proba(Xd)
    assert isinstance(proba, da.Array) and proba.shape == (len(y), 2)
    _close(mem.predict_proba(X), proba.compute())
    assert np.array_equal(dsk.predict(Xd).compute(), mem.predict(X))
    _close(mem.decision_function(X), dsk.decision_function(Xd).compute())


def test_logistic_multinomial_blocks_with_one_class(client):
    """Three classes, unweighted, labels sorted so that most row blocks hold a single class: the
    classes are found globally, and the fit is the in-memory one."""
    X, y, _ = _classification(classes=3, seed=1)
    order = np.argsort(y, kind="stable")
    X, y = X[order], np.array(["ant", "bee", "cat"])[y[order]]
    mem = linbook.LogisticRegression(lam=0.0).fit(X, y)
    dsk = linbook.LogisticRegression(lam=0.0).fit(da.from_array(X, chunks=400), da.from_array(y, chunks=400))
    _fitted_equal(mem, dsk, ["coef_", "intercept_"])
    assert list(dsk.classes_) == ["ant", "bee", "cat"] and dsk.converged_
    assert np.array_equal(dsk.predict(da.from_array(X, chunks=400)).compute(), mem.predict(X))


def test_logistic_lbfgs_wide_path(client):
    """The L-BFGS path (wide data) reaches the same optimum: both fits run to tol=1e-12."""
    X, y, _ = _classification(n=1500, d=8, classes=3, seed=2, offset=0.0)
    mem = linbook.LogisticRegression(lam=1.0, solver="lbfgs", tol=1e-12).fit(X, y)
    dsk = linbook.LogisticRegression(lam=1.0, solver="lbfgs", tol=1e-12).fit(da.from_array(X, chunks=500),
                                                                               da.from_array(y, chunks=500))
    assert dsk.solver_ == "lbfgs" and dsk.converged_
    _fitted_equal(mem, dsk, ["coef_", "intercept_"])


def test_probit_and_dataframe_input(client):
    """Probit on a dask DataFrame and Series: feature names kept, predictions on a DataFrame."""
    pd = pytest.importorskip("pandas")
    X, y, _ = _classification(seed=3)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    mem = linbook.ProbitRegression().fit(frame, y)
    ddf = dd.from_pandas(frame, npartitions=3)
    dsk = linbook.ProbitRegression().fit(ddf, dd.from_pandas(pd.Series(y), npartitions=3))
    _fitted_equal(mem, dsk, ["coef_", "intercept_"])
    assert mem.converged_ and dsk.converged_        # margins above 6.7, yet a finite MLE: no false alarm
    assert list(dsk.feature_names_in_) == list(frame.columns)
    _close(mem.predict_proba(frame), dsk.predict_proba(ddf).compute())


# --------------------------------------------------------------------------- bad input
def test_nan_in_one_block_is_a_clear_error_and_leaves_the_model(client):
    X, y, _ = _classification(n=1200)
    X[1000, 2] = np.nan                         # in the last of three blocks
    model = linbook.LogisticRegression().fit(X[:900], y[:900])
    before = model.coef_.copy()
    with pytest.raises(ValueError, match=r"LogisticRegression: X contains NaN \(in row block 2\).*impute"):
        model.fit(da.from_array(X, chunks=400), da.from_array(y, chunks=400))
    assert np.array_equal(model.coef_, before)


def test_unknown_chunk_sizes(client):
    """A boolean mask gives blocks of unknown size: paired one to one with y's (masked alike) they fit
    as in memory; with a different number of blocks the error says to compute the chunk sizes."""
    X, y, _ = _classification(n=2000, seed=4)
    keep = X[:, 0] > -1.0
    Xd, yd = da.from_array(X, chunks=500), da.from_array(y, chunks=500)
    Xm, ym = Xd[da.from_array(keep, chunks=500)], yd[da.from_array(keep, chunks=500)]
    assert np.isnan(Xm.shape[0])
    mem = linbook.LogisticRegression().fit(X[keep], y[keep])
    _fitted_equal(mem, linbook.LogisticRegression().fit(Xm, ym), ["coef_", "intercept_"])
    with pytest.raises(ValueError, match=r"compute_chunk_sizes\(\)"):
        linbook.LogisticRegression().fit(Xm, da.from_array(y[keep], chunks=700))
    y_short = da.from_array(y, chunks=500)[da.from_array(keep & (np.arange(2000) != 10), chunks=500)]
    with pytest.raises(ValueError, match=r"row block 0 of X has \d+ rows but the matching block of y"):
        linbook.LogisticRegression().fit(Xm, y_short)


def test_wrong_lengths_and_continuous_labels(client):
    X, y, _ = _classification(n=600)
    with pytest.raises(ValueError, match="X has 600 rows but y has 599"):
        linbook.LogisticRegression().fit(da.from_array(X, chunks=200), da.from_array(y[:-1], chunks=200))
    with pytest.raises(ValueError, match="continuous"):
        linbook.LogisticRegression().fit(da.from_array(X, chunks=200), da.from_array(X[:, 0], chunks=200))


# --------------------------------------------------------------------------- least squares and ridge
def _regression(n=3000, d=5, seed=5):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * np.linspace(0.5, 3.0, d)
    X[:, 0] += 1e3                              # far from zero: the blocks' Grams are combined centred
    return X, X @ rng.standard_normal(d) + rng.standard_normal(n), rng.uniform(0.2, 2.0, n)


@pytest.mark.parametrize("make", [lambda: linbook.LinearRegression(), lambda: linbook.Ridge(lam=3.0),
                                  lambda: linbook.LinearRegression(fit_intercept=False)],
                         ids=["ols", "ridge", "ols-no-intercept"])
def test_least_squares_equal_in_memory(client, make):
    X, y, a = _regression()
    Xd, yd, ad = client.persist([da.from_array(X, chunks=700), da.from_array(y, chunks=700),
                                 da.from_array(a, chunks=700)])
    for weights, weights_d in ((None, None), (a, ad)):
        mem, dsk = make().fit(X, y, sample_weight=weights), make().fit(Xd, yd, sample_weight=weights_d)
        _fitted_equal(mem, dsk, ["coef_"])
        _close([mem.intercept_, mem.sigma2_], [dsk.intercept_, dsk.sigma2_])
        assert dsk.solver_ == mem.solver_ == "cholesky"
    pred = dsk.predict(Xd)
    assert isinstance(pred, da.Array)
    _close(mem.predict(X), pred.compute())


# --------------------------------------------------------------------------- Gaussian classifiers
@pytest.fixture(scope="module")
def gaussian_data(client):
    rng = np.random.default_rng(6)
    n = 2400
    y = rng.integers(0, 3, n)
    X = rng.standard_normal((n, 4)) + y[:, None] * np.array([1.0, 0.5, 0.0, 2.0]) + np.array([0.0, 1e3, 0.0, 0.0])
    X[:, 3] *= 1e-3                             # a small-unit feature: the power-of-two scales differ
    a = rng.uniform(0.2, 2.0, n)
    order = np.argsort(y, kind="stable")        # blocks of one class
    X, y, a = X[order], y[order], a[order]
    return (X, y, a), client.persist([da.from_array(X, chunks=600), da.from_array(y, chunks=800),
                                      da.from_array(a, chunks=600)])


@pytest.mark.parametrize("make, names", [
    (lambda: linbook.LDA(), ["coef_", "intercept_", "covariance_"]),
    (lambda: linbook.QDA(), ["covariances_"]),
    (lambda: linbook.GaussianNaiveBayes(), ["var_"]),
    (lambda: linbook.DiagonalLDA(), ["var_"]),
    (lambda: linbook.NearestShrunkenCentroids(shrink_threshold=0.5), ["centroids_", "deviations_"]),
], ids=["LDA", "QDA", "GaussianNaiveBayes", "DiagonalLDA", "NearestShrunkenCentroids"])
def test_gaussian_classifiers_equal_in_memory(gaussian_data, make, names):
    (X, y, a), (Xd, yd, ad) = gaussian_data
    mem, dsk = make().fit(X, y, sample_weight=a), make().fit(Xd, yd, sample_weight=ad)
    _fitted_equal(mem, dsk, ["means_", "priors_", "class_count_"] + names)
    proba = dsk.predict_proba(Xd)
    assert isinstance(proba, da.Array)
    _close(mem.predict_proba(X), proba.compute(), rtol=1e-10)


def test_rda_says_it_cannot_fit_dask(gaussian_data):
    _, (Xd, yd, _) = gaussian_data
    with pytest.raises(TypeError, match=r"RDA cannot fit dask collections yet.*X.compute\(\)"):
        linbook.RDA().fit(Xd, yd)


@pytest.mark.parametrize("make", [lambda: linbook.Lasso(lam=1.0), lambda: linbook.LeastAbsoluteDeviation(),
                                  lambda: linbook.Perceptron(), lambda: linbook.BayesianLogisticRegression()],
                         ids=["Lasso", "LeastAbsoluteDeviation", "Perceptron", "BayesianLogisticRegression"])
def test_models_without_a_map_reduce_refuse_dask_before_computing(make):
    """No silent X.compute(): a model whose fit is not a sum over rows says so, and is left unfitted."""
    rng = np.random.default_rng(9)
    X = rng.standard_normal((200, 3))
    y = (X[:, 0] > 0).astype(int)
    model = make()
    with pytest.raises(TypeError, match=r"cannot fit dask collections.*X\.compute\(\)"):
        model.fit(da.from_array(X, chunks=50), da.from_array(y, chunks=50))
    assert not hasattr(model, "n_features_in_")


# --------------------------------------------------------------------------- streaming models
def _stream_data():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((2000, 4))
    y = X @ rng.standard_normal(4) + 0.1 * rng.standard_normal(2000)
    return X, y, (y > 0).astype(int)


@pytest.mark.parametrize("name, target, kwargs", [
    ("SGDRegressor", "y", {}), ("SGDClassifier", "labels", {"classes": [0, 1]}), ("LMS", "y", {}),
    ("RecursiveLeastSquares", "y", {}), ("OnlineGradientDescent", "y", {})])
def test_streaming_partial_fit_over_blocks_in_order(client, name, target, kwargs):
    """partial_fit on a dask array = partial_fit on its blocks in memory, in the same order."""
    X, y, labels = _stream_data()
    Y = {"y": y, "labels": labels}[target]
    model = getattr(linbook.online, name)
    mem = model()
    for i in range(0, 2000, 500):
        mem.partial_fit(X[i:i + 500], Y[i:i + 500], **kwargs)
    Xd, Yd = client.persist([da.from_array(X, chunks=500), da.from_array(Y, chunks=500)])
    dsk = model().partial_fit(Xd, Yd, **kwargs)
    _fitted_equal(mem, dsk, ["coef_"])
    _close(np.atleast_1d(mem.intercept_) if hasattr(mem, "intercept_") else [1.0],
           np.atleast_1d(dsk.intercept_) if hasattr(dsk, "intercept_") else [1.0])
    pred = dsk.predict(Xd)
    assert isinstance(pred, da.Array)
    if target == "labels":
        assert np.array_equal(pred.compute(), mem.predict(X))
    else:   # a block's X_b @ w and the whole X @ w may round differently (BLAS blocking, numba vs numpy path)
        np.testing.assert_allclose(pred.compute(), mem.predict(X), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("scheduler", ["threads", "synchronous"])
@pytest.mark.parametrize("name, target, kwargs", [
    ("SGDRegressor", "y", {}), ("SGDClassifier", "labels", {"classes": [0, 1]}), ("LMS", "y", {}),
    ("RecursiveLeastSquares", "y", {}), ("OnlineGradientDescent", "y", {})])
def test_streaming_partial_fit_on_the_local_schedulers(scheduler, name, target, kwargs):
    """Without a cluster (Dask's local schedulers pass the model object itself from task to task, where a
    cluster pickles it) partial_fit keeps every block, an empty one included, and a second call continues."""
    import dask

    X, y, labels = _stream_data()
    Y = {"y": y, "labels": labels}[target]
    model = getattr(linbook.online, name)
    mem = model()
    for i, j in [(0, 300), (300, 1000), (1000, 2000)]:
        mem.partial_fit(X[i:j], Y[i:j], **kwargs)
    sizes = (300, 0, 700)                                 # a filtered collection can have empty blocks
    with dask.config.set(scheduler=scheduler):
        dsk = model().partial_fit(da.from_array(X[:1000], chunks=(sizes, 4)),
                                  da.from_array(Y[:1000], chunks=(sizes,)), **kwargs)
        assert dsk.n_features_in_ == 4
        dsk.partial_fit(da.from_array(X[1000:], chunks=(1000, 4)), da.from_array(Y[1000:], chunks=1000), **kwargs)
    _fitted_equal(mem, dsk, ["coef_"])


@pytest.mark.parametrize("make", [linbook.LinearRegression, linbook.LDA, linbook.online.RecursiveLeastSquares])
def test_predictions_on_a_collection_with_an_empty_block(make):
    """Filtering a dask array leaves blocks of no rows: predict gives them no rows (it raised that X has 0
    samples)."""
    import dask

    X, y, labels = _stream_data()
    target = labels if make is linbook.LDA else y
    model = make().fit(X, target)
    Xd = da.from_array(X[:1000], chunks=((300, 0, 700), 4))
    with dask.config.set(scheduler="synchronous"):
        np.testing.assert_allclose(model.predict(Xd).compute(), model.predict(X[:1000]), rtol=1e-12, atol=1e-12)
        if hasattr(model, "predict_proba"):
            proba = model.predict_proba(Xd).compute()
            assert proba.shape == (1000, 2)
            np.testing.assert_allclose(proba, model.predict_proba(X[:1000]), rtol=1e-12, atol=1e-15)


def test_rls_on_dask_is_the_batch_solution(client):
    """RecursiveLeastSquares.fit on a dask array (blocks of unequal size) is the in-memory batch answer."""
    X, y, _ = _stream_data()
    mem = linbook.online.RecursiveLeastSquares().fit(X, y)
    dsk = linbook.online.RecursiveLeastSquares().fit(da.from_array(X, chunks=((300, 900, 800), 4)),
                                                     da.from_array(y, chunks=700))
    _fitted_equal(mem, dsk, ["coef_", "P_"])
    with pytest.raises(TypeError, match=r"partial_fit\(X, y\)"):
        linbook.online.SGDRegressor().fit(da.from_array(X, chunks=500), da.from_array(y, chunks=500))


def test_separable_data_without_penalty_is_reported(client, monkeypatch):
    """lam = 0 on separable classes has no MLE: the Dask fit runs the in-memory exact test, warns and
    is not "converged"; with too many rows to gather for that test a saturated margin and the ray
    test say so, and the warning says the exact test was not run."""
    rng = np.random.default_rng(8)
    X = rng.standard_normal((400, 2))
    y = (X[:, 0] > 0).astype(int)
    Xd, yd = client.persist([da.from_array(X, chunks=100), da.from_array(y, chunks=100)])
    with pytest.warns(linbook.base.SeparableDataWarning, match="quasi-.*separable.*Set lam > 0"):
        model = linbook.LogisticRegression(lam=0.0).fit(Xd, yd)
    assert not model.converged_ and model.separable_
    import linbook.logistic._dask_fit as dask_fit

    monkeypatch.setattr(dask_fit, "EXACT_TEST_NUMBERS", 0)
    with pytest.warns(linbook.base.SeparableDataWarning, match="probably .*separable.*exact separation test was "
                                                               "not run.*Set lam > 0"):
        model = linbook.LogisticRegression(lam=0.0).fit(Xd, yd)
    assert not model.converged_ and not model.separable_


def _quasi_separated(n=600, classes=2, seed=5):
    """Half the rows have x0 = 0 and overlapping classes; in the other half x0 > 0 is always the last
    class and x0 < 0 never: quasi-complete separation, so no finite MLE with lam = 0."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    X[: n // 2, 0] = 0.0
    overlap = (X[:, 1] + rng.standard_normal(n) > 0).astype(int)
    last = classes - 1
    if classes == 2:
        y = np.where(X[:, 0] > 0, 1, np.where(X[:, 0] < 0, 0, overlap))
    else:
        y = np.where(X[:, 0] > 0, last, overlap)
    return X, y


@pytest.mark.parametrize("model,classes", [("LogisticRegression", 2), ("ProbitRegression", 2),
                                           ("LogisticRegression", 3)])
def test_quasi_separation_is_reported_as_in_memory(client, model, classes):
    """Quasi-separation with overlapping classes escaped the Dask fit's ray test (F(2 theta) rises
    because of the overlap): it reported converged_=True where the in-memory fit's exact test says
    separable. Now the same test runs on the same rows: the same flags, warning and coefficients."""
    X, y = _quasi_separated(classes=classes)
    Model = getattr(linbook, model)
    with pytest.warns(linbook.base.SeparableDataWarning) as mem_warnings:
        mem = Model(lam=0.0).fit(X, y)
    Xd, yd = client.persist([da.from_array(X, chunks=150), da.from_array(y, chunks=150)])
    with pytest.warns(linbook.base.SeparableDataWarning) as dask_warnings:
        dsk = Model(lam=0.0).fit(Xd, yd)
    assert (dsk.converged_, dsk.separable_) == (mem.converged_, mem.separable_) == (False, True)
    assert [str(w.message) for w in dask_warnings] == [str(w.message) for w in mem_warnings]
    assert dsk.n_iter_ == mem.n_iter_
    _fitted_equal(mem, dsk, ["coef_", "intercept_"])      # the watch stopped both at the same iterate


@pytest.mark.parametrize("scale", [1e-12, 1e300, 1e-300])
def test_logistic_with_extreme_feature_scales_equals_in_memory(client, scale):
    """A feature of size 1e300 overflows the blocks' summed squares: the fit must still be the
    in-memory one (it used to drop the feature and predict wrong labels), as for 1e-12 and 1e-300."""
    rng = np.random.default_rng(11)
    X = rng.standard_normal((2000, 3))
    y = (X @ np.array([1.0, -1.0, 0.5]) + rng.standard_normal(2000) > 0).astype(int)
    X[:, 0] *= scale
    mem = linbook.LogisticRegression().fit(X, y)
    Xd, yd = client.persist([da.from_array(X, chunks=500), da.from_array(y, chunks=500)])
    dsk = linbook.LogisticRegression().fit(Xd, yd)
    _close(mem.coef_ * scale ** np.array([1, 0, 0]), dsk.coef_ * scale ** np.array([1, 0, 0]), rtol=1e-6)
    _close(mem.intercept_, dsk.intercept_, rtol=1e-6)
    assert np.array_equal(mem.predict(X), dsk.predict(X))


@pytest.mark.parametrize("scale", [1e-12, 1e300, 1e-300])
@pytest.mark.parametrize("model", ["LinearRegression", "Ridge", "Ridge-no-intercept"])
def test_least_squares_with_extreme_scales_equals_in_memory(client, model, scale):
    """Features (and the target) near 1e300 or 1e-300 overflow or underflow the blocks' Gram
    matrices: the columns are scaled by powers of two near their maxima, as in memory, and the
    answer is the in-memory one (it used to be an error). Ridge at 1e-300 gives the in-memory
    error (the penalty lam / scale^2 overflows)."""
    rng = np.random.default_rng(12)
    X = rng.standard_normal((600, 3)) + np.array([0.0, 5.0, 0.0])
    y = X @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.standard_normal(600) + 3.0
    X[:, 1] *= scale
    y = y * (scale if scale > 1 else 1.0)                # a target near 1e300 too
    a = rng.uniform(0.5, 2.0, 600)
    make = {"LinearRegression": lambda: linbook.LinearRegression(), "Ridge": lambda: linbook.Ridge(lam=0.5),
            "Ridge-no-intercept": lambda: linbook.Ridge(lam=0.5, fit_intercept=False)}[model]
    Xd, yd, ad = client.persist([da.from_array(X, chunks=200), da.from_array(y, chunks=200),
                                 da.from_array(a, chunks=200)])
    try:
        mem = make().fit(X, y, sample_weight=a)
    except ValueError as exc:
        with pytest.raises(ValueError, match=re.escape(str(exc))):
            make().fit(Xd, yd, sample_weight=ad)
        return
    dsk = make().fit(Xd, yd, sample_weight=ad)
    for name in ("coef_", "intercept_", "sigma2_"):        # each number to its own size (they span 1e600)
        m, d = np.atleast_1d(getattr(mem, name)), np.atleast_1d(getattr(dsk, name))
        with np.errstate(invalid="ignore"):                # sigma2_ of a target near 1e300 is inf in both
            assert np.all((m == d) | (np.abs(m - d) <= 1e-10 * np.abs(m))), (name, m, d)
    assert np.all(np.isfinite(dsk.coef_)) and np.isfinite(dsk.intercept_)
    _close(mem.predict(X), dsk.predict(Xd).compute(), rtol=1e-10)


@pytest.mark.parametrize("solver", ["newton", "lbfgs"])
def test_spread_weights_multinomial_on_blocks(solver):
    """Weights over 1e-4 .. 1e4: the block fit stopped at iteration 0 on the intercept-only start,
    converged, coef_ = 0. Now Newton reaches the in-memory optimum; L-BFGS reaches it or says not converged."""
    X = np.array([0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 0.15])[:, None]
    y = np.array([0, 0, 1, 0, 1, 2, 1, 2, 2, 1, 2, 0])
    sw = np.where(y == 0, 1e4, 1e-4)
    ref = linbook.LogisticRegression(lam=0.0).fit(X, y, sample_weight=sw)
    m = linbook.LogisticRegression(lam=0.0, solver=solver).fit(
        da.from_array(X, chunks=5), da.from_array(y, chunks=5), sample_weight=da.from_array(sw, chunks=5))
    assert m.n_iter_ > 0
    assert m.converged_ or solver != "newton"
    if m.converged_:
        np.testing.assert_allclose(m.coef_, ref.coef_, rtol=1e-5, atol=1e-5 * np.max(np.abs(ref.coef_)))
