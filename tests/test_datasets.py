import numpy as np
import pytest

from linbook import datasets


def test_gaussian_classes_seeded_and_shaped():
    X1, y1 = datasets.make_gaussian_classes(50, [[0, 0], [2, 2]], np.eye(2), random_state=3)
    X2, y2 = datasets.make_gaussian_classes(50, [[0, 0], [2, 2]], np.eye(2), random_state=3)
    assert X1.shape == (100, 2) and np.array_equal(X1, X2) and np.array_equal(y1, y2)
    assert np.bincount(y1).tolist() == [50, 50]
    with pytest.raises(ValueError):
        datasets.make_gaussian_classes(5, [[0, 0], [1, 1]], np.eye(3))


def test_separable_margin():
    X, y, w = datasets.make_separable(300, 3, margin=0.2, random_state=0)
    d = X @ w
    assert np.all(np.sign(d) == y) and np.min(np.abs(d)) >= 0.2 - 1e-12


def test_regression_noise_laws():
    for noise in ("gaussian", "laplace", "student-t", "none"):
        X, y, coef = datasets.make_regression(200, 2, noise=noise, random_state=1)
        assert X.shape == (200, 2) and y.shape == (200,)
    X, y, coef = datasets.make_regression(50, 2, noise="none", coef=[1.0, -2.0], intercept=0.5, random_state=0)
    np.testing.assert_allclose(y, X @ [1.0, -2.0] + 0.5)
    with pytest.raises(ValueError):
        datasets.make_regression(10, noise="cauchy")


def test_rng_policy():
    g = np.random.default_rng(1)
    assert datasets.as_rng(g) is g
    with pytest.raises(TypeError):
        datasets.as_rng(np.random.RandomState(0))


@pytest.mark.parametrize("name, shape, n_classes", [
    ("iris", (150, 4), 3), ("wine", (178, 13), 3), ("breast_cancer", (569, 30), 2),
    ("diabetes", (442, 10), None), ("digits", (1797, 64), 10)])
def test_real_data_sets_are_scikit_learns(name, shape, n_classes):
    import sklearn.datasets as skd

    X, y = datasets.load(name)
    X_ref, y_ref = getattr(skd, datasets.REAL_DATASETS[name][0])(return_X_y=True)
    assert X.shape == shape and X.dtype == float and y.shape == (shape[0],)
    np.testing.assert_array_equal(X, X_ref)
    np.testing.assert_array_equal(y, y_ref)
    if n_classes is not None:
        assert np.unique(y).size == n_classes
    header, table = datasets.load_csv(name)
    assert len(header) == shape[1] + 1 and header[-1] == "target" and table.shape == (shape[0], shape[1] + 1)
    np.testing.assert_array_equal(table[:, :-1], X)
    np.testing.assert_array_equal(table[:, -1], y)
    what, provenance, licence = datasets.REAL_DATASETS[name][1:]
    assert what and provenance and licence and name in datasets.load.__doc__


def test_every_real_data_set_a_chapter_loads_is_offered():
    from pathlib import Path
    import re

    loaded = set()
    for path in (Path(__file__).resolve().parents[1] / "chapters").glob("[0-9][0-9]_*.md"):
        loaded |= set(re.findall(r"\bload_(\w+)\(", path.read_text(encoding="utf-8")))
    assert loaded, "the chapters load real data sets through sklearn.datasets.load_<name>"
    assert loaded <= set(datasets.REAL_DATASETS)


def test_unknown_data_set_lists_the_available_ones():
    assert datasets.available()[:5] == sorted(datasets.REAL_DATASETS)
    with pytest.raises(ValueError, match=r"name must be one of \['breast_cancer', 'diabetes', 'digits', 'iris', 'wine'"):
        datasets.load("mnist")
    with pytest.raises(FileNotFoundError, match="name must be one of .*'iris'"):
        datasets.load_csv("mnist")


@pytest.mark.parametrize("name", sorted(datasets.REAL_DATASETS))
def test_as_frame_gives_named_columns_like_scikit_learn(name):
    pd = pytest.importorskip("pandas")
    import sklearn.datasets as skd

    X, y = datasets.load(name, as_frame=True)
    bunch = getattr(skd, datasets.REAL_DATASETS[name][0])()
    assert isinstance(X, pd.DataFrame) and isinstance(y, pd.Series) and y.name == "target"
    assert list(X.columns) == [str(f) for f in bunch.feature_names]
    assert all(dt == float for dt in X.dtypes)
    X_np, y_np = datasets.load(name)
    np.testing.assert_array_equal(X.to_numpy(), X_np)
    np.testing.assert_array_equal(y.to_numpy(), y_np)


def test_as_frame_without_pandas_says_what_to_do(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_pandas(name, *args, **kwargs):
        if name == "pandas":
            raise ImportError("No module named 'pandas'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pandas)
    with pytest.raises(ImportError, match=r"as_frame=True\) needs pandas: pip install pandas"):
        datasets.load("iris", as_frame=True)
