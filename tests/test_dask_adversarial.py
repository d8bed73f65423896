"""Adversarial inputs for the Dask fits: odd dtypes, odd layouts of the blocks, mixed in-memory and
Dask use. Each gives the in-memory answer or a clear error naming the input -- never a silent wrong
answer. One ``distributed.LocalCluster`` with two worker processes (the ``client`` fixture of
tests/conftest.py) serves the module.
"""

from __future__ import annotations

import numpy as np
import pytest

import linbook

da = pytest.importorskip("dask.array", reason="the dask extra is not installed (pip install 'linbook[dask]')")
distributed = pytest.importorskip("distributed")
dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")

RTOL = 1e-8
N = 600
MODELS = {   # name -> (constructor, kind of target)
    "LogisticRegression": (lambda: linbook.LogisticRegression(), "labels"),
    "ProbitRegression": (lambda: linbook.ProbitRegression(), "labels"),
    "LinearRegression": (lambda: linbook.LinearRegression(), "real"),
    "Ridge": (lambda: linbook.Ridge(lam=0.5), "real"),
    "LDA": (lambda: linbook.LDA(), "labels"),
    "QDA": (lambda: linbook.QDA(), "labels"),
    "GaussianNaiveBayes": (lambda: linbook.GaussianNaiveBayes(), "labels"),
}
FITTED = ("coef_", "intercept_", "means_", "covariance_", "theta_", "var_", "class_prior_", "priors_")


def _data(kind, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, 3)) + np.array([0.0, 4.0, 0.0])
    z = (X - X.mean(0)) @ np.array([1.0, -1.0, 0.5]) + rng.standard_normal(N)
    return X, (z > 0).astype(int) if kind == "labels" else z


def _assert_same_fit(mem, dsk):
    """Every fitted array the in-memory model has, equal to ``RTOL`` relative to its size, in numpy."""
    compared = 0
    for name in FITTED:
        if hasattr(mem, name):
            a, b = np.asarray(getattr(mem, name), dtype=float), getattr(dsk, name)
            assert isinstance(b, (np.ndarray, float)), f"{name} is {type(b)}, not numpy"
            b = np.asarray(b, dtype=float)
            gap = float(np.max(np.abs(a - b), initial=0.0)) / max(float(np.max(np.abs(a), initial=0.0)), 1e-300)
            assert a.shape == b.shape and gap <= RTOL, f"{name}: relative gap {gap:.1e}"
            compared += 1
    assert compared >= 1
    if hasattr(mem, "classes_"):
        assert np.array_equal(mem.classes_, dsk.classes_)


@pytest.mark.parametrize("name", MODELS)
def test_integer_float32_and_boolean_X(client, name):
    """int, float32 and bool X are read as float64 block by block: the in-memory fit's answer."""
    make, kind = MODELS[name]
    X, y = _data(kind)
    for Xt in ((X * 10).astype(np.int64), X.astype(np.float32), X > np.median(X, axis=0)):
        mem = make().fit(Xt, y)
        _assert_same_fit(mem, make().fit(da.from_array(Xt, chunks=200), da.from_array(y, chunks=200)))


@pytest.mark.parametrize("name", MODELS)
def test_block_layouts(client, name):
    """Whole blocks of zero weight, a block of zero rows, one single block, and X chunked along its
    columns too (with y chunked otherwise): each the in-memory fit."""
    make, kind = MODELS[name]
    X, y = _data(kind, seed=1)
    a = np.random.default_rng(2).uniform(0.5, 2.0, N)
    a[200:400] = 0.0                                       # the whole middle block
    _assert_same_fit(make().fit(X, y, sample_weight=a),
                     make().fit(da.from_array(X, chunks=200), da.from_array(y, chunks=200),
                                sample_weight=da.from_array(a, chunks=200)))
    mem = make().fit(X, y)
    rows = ((250, 0, 350),)
    _assert_same_fit(mem, make().fit(da.from_array(X, chunks=(rows[0], 3)), da.from_array(y, chunks=rows)))
    _assert_same_fit(mem, make().fit(da.from_array(X, chunks=-1), da.from_array(y, chunks=-1)))
    _assert_same_fit(mem, make().fit(da.from_array(X, chunks=(150, 2)), da.from_array(y, chunks=220)))


@pytest.mark.parametrize("name", MODELS)
def test_predictions_across_in_memory_and_dask(client, name):
    """A model fitted in memory predicts on a dask array (any chunking: a dask array back), and a model
    fitted on Dask predicts on numpy (numpy back) and on differently chunked dask arrays: the same
    numbers as the in-memory model on numpy."""
    make, kind = MODELS[name]
    X, y = _data(kind, seed=3)
    mem = make().fit(X, y)
    dsk = make().fit(da.from_array(X, chunks=(150, 2)), da.from_array(y, chunks=150))
    methods = [m for m in ("predict", "predict_proba", "decision_function") if hasattr(mem, m)]
    for method in methods:
        expected = getattr(mem, method)(X)
        for model in (mem, dsk):
            for Xd in (da.from_array(X, chunks=(97, 1)), da.from_array(X, chunks=-1)):
                out = getattr(model, method)(Xd)
                assert isinstance(out, da.Array) and out.shape == expected.shape
                np.testing.assert_allclose(out.compute(), expected, rtol=1e-10, atol=1e-12)
        on_numpy = getattr(dsk, method)(X)
        assert isinstance(on_numpy, np.ndarray)
        np.testing.assert_allclose(on_numpy, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", [n for n, (_, kind) in MODELS.items() if kind == "labels"])
def test_string_labels_for_classifiers(client, name):
    """y as strings (a dask array of str, and a dask Series of object dtype): classes_ are the strings,
    the fit is the in-memory one, predictions are strings."""
    make, _ = MODELS[name]
    X, y = _data("labels", seed=4)
    ys = np.array(["no", "yes"])[y]
    mem = make().fit(X, ys)
    dsk = make().fit(da.from_array(X, chunks=200), da.from_array(ys, chunks=200))
    _assert_same_fit(mem, dsk)
    assert list(dsk.classes_) == ["no", "yes"]
    frame = dd.from_pandas(pd.DataFrame(X, columns=["a", "b", "c"]), npartitions=3)
    series = dd.from_pandas(pd.Series(ys.astype(object)), npartitions=3)
    _assert_same_fit(mem, make().fit(frame, series))
    assert np.array_equal(dsk.predict(da.from_array(X, chunks=150)).compute(), mem.predict(X))


@pytest.mark.parametrize("name", ["LogisticRegression", "LinearRegression", "LDA"])
@pytest.mark.parametrize("column", ["category", "object"])
def test_dataframe_with_non_numeric_columns_is_a_clear_error(client, name, column):
    """A categorical or string column in a dask DataFrame: an error naming the column and what to do,
    from the dtypes alone (nothing computed), and the model left as it was."""
    make, kind = MODELS[name]
    X, y = _data(kind, seed=5)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    frame["colour"] = np.where(X[:, 0] > 0, "red", "blue")
    frame["colour"] = frame["colour"].astype(column)
    model = make().fit(X, y)
    before = {k: np.copy(getattr(model, k)) for k in FITTED if hasattr(model, k)}
    with pytest.raises(ValueError, match=rf"{name}: X must be numeric, but these columns are not: 'colour' .*"
                                         r"Encode string or categorical columns first"):
        model.fit(dd.from_pandas(frame, npartitions=3), da.from_array(y, chunks=200))
    for k, v in before.items():
        assert np.array_equal(getattr(model, k), v)
    with pytest.raises(ValueError, match=rf"{name}: X must be numeric.*dtype object"):
        make().fit(da.from_array(X.astype(object), chunks=200), da.from_array(y, chunks=200))


def test_string_target_for_a_regression_is_a_clear_error(client):
    X, y = _data("labels", seed=6)
    ys = np.array(["no", "yes"])[y]
    with pytest.raises(ValueError, match=r"LinearRegression: y must be numeric for a regression.*row block \d.*"
                                         r"Use a classifier"):
        linbook.LinearRegression().fit(da.from_array(X, chunks=200), da.from_array(ys, chunks=200))


def test_a_class_of_zero_weight_is_refused_as_in_memory(client):
    """Three classes, one weighing 0 in every block: no finite optimum with an intercept, so the Dask
    fit gives the in-memory error (naming sample_weight) before any Newton pass."""
    X, z = _data("real", seed=6)
    y = np.digitize(z, [-0.5, 0.5])
    w = np.where(y == 2, 0.0, 1.0)
    with pytest.raises(ValueError) as in_memory:
        linbook.LogisticRegression().fit(X, y, sample_weight=w)
    model = linbook.LogisticRegression()
    with pytest.raises(ValueError) as on_dask:
        model.fit(da.from_array(X, chunks=200), da.from_array(y, chunks=200), sample_weight=da.from_array(w, chunks=200))
    assert str(on_dask.value) == str(in_memory.value) and "sample_weight" in str(on_dask.value)
    assert not hasattr(model, "coef_")


def test_dask_least_squares_with_weights_beyond_1e100_equals_in_memory():
    """Weights spanning 1e-200..1e200 were refused on Dask ("sample_weight reaches ..."): the merge of two blocks'
    moments formed ``W1 W2``, which overflowed. With ``W1 (W2 / (W1 + W2))`` the fit is the in-memory one."""
    import dask
    import dask.array as da

    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3))
    y = X @ [1.0, -0.5, 0.3] + 0.4 + 0.5 * rng.standard_normal(60)
    w = 10.0 ** rng.uniform(-200, 200, 60)
    for make in (linbook.LinearRegression, lambda: linbook.Ridge(lam=1.0)):
        mem = make().fit(X, y, sample_weight=w)
        with dask.config.set(scheduler="synchronous"):
            dsk = make().fit(da.from_array(X, chunks=(20, -1)), da.from_array(y, chunks=20),
                             sample_weight=da.from_array(w, chunks=20))
        np.testing.assert_allclose(dsk.coef_, mem.coef_, rtol=1e-9)
        assert dsk.intercept_ == pytest.approx(mem.intercept_, rel=1e-9)


@pytest.mark.parametrize("scale", [1e-300, 1e-200, 1e200, 1e300])
def test_dask_least_squares_with_uniformly_tiny_or_huge_weights(scale):
    """All weights times 1e-200: ``W1 W2`` of two blocks underflowed to 0, the gap between their means was lost, and
    LinearRegression's coefficients came out 10 % off, silently (times 1e200: refused). The same weights times 1
    give the same least-squares fit; Ridge equals its in-memory fit."""
    import dask
    import dask.array as da

    rng = np.random.default_rng(3)
    X = rng.standard_normal((60, 3)) + [0.0, 4.0, 0.0]
    y = (X - X.mean(0)) @ [1.0, -1.0, 0.5] + rng.standard_normal(60)
    w = rng.uniform(0.5, 2.0, 60)
    for make, reference in ((linbook.LinearRegression, linbook.LinearRegression().fit(X, y, sample_weight=w)),
                            (lambda: linbook.Ridge(lam=0.5), linbook.Ridge(lam=0.5).fit(X, y, sample_weight=w * scale))):
        with dask.config.set(scheduler="synchronous"):
            dsk = make().fit(da.from_array(X, chunks=(7, -1)), da.from_array(y, chunks=7),
                             sample_weight=da.from_array(w * scale, chunks=7))
        np.testing.assert_allclose(dsk.coef_, reference.coef_, rtol=1e-9)
