"""Input types: the same values in another container give the same model, or a clear error naming the input.

Generators: small integers (exact in every dtype) as float32 / float16 / int8 / uint8 / bool, Fortran
order, strided and reversed views, read-only arrays and read-only memmaps, lists, pandas frames of
nullable ``Float64`` / ``Int64`` and of mixed dtypes. Right answer: the fit on the float64 C-contiguous
array of the same values (to 1e-9; the stochastic fits are deterministic under ``random_state``).

A 3-d ``y`` was refused with scikit-learn's "Found array with dim 3, while dim <= 2 is required" and
the advice "Reshape X to 2-D": it named X, the input that was right. It now names ``y``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.utils import get_tags

from tests.adversarial.harness import assert_clear_error, public_estimators

ESTIMATORS = public_estimators()
_PARAMS = {"RDA": {"shrinkage": 0.3}, "NearestShrunkenCentroids": {"shrink_threshold": 0.2}}


def _make(cls):
    est = cls(**_PARAMS.get(cls.__name__, {}))
    if "random_state" in est.get_params():
        est.set_params(random_state=0)
    return est


def _is_regressor(est):
    return get_tags(est).estimator_type == "regressor"


def _data(est, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(-3, 4, (30, 4)).astype(float)
    X[:, 3] = rng.integers(0, 2, 30)
    noise = rng.integers(-2, 3, 30)
    if _is_regressor(est):
        return X, X @ np.array([1.0, -0.5, 0.25, 2.0]) + 0.5 * noise + 1.0
    return X, (X[:, 0] + noise > 0).astype(int)


def _outputs(est, X):
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)     # "fitted with feature names": the frame's, here X
        for method in ("predict", "predict_proba", "decision_function", "transform"):
            if hasattr(est, method):
                out[method] = np.asarray(getattr(est, method)(X), dtype=float)
    return out


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y)


def _variants(X, tmp_path):
    strided = np.zeros((X.shape[0], 2 * X.shape[1]))
    strided[:, ::2] = X
    readonly = X.copy()
    readonly.flags.writeable = False
    path = str(tmp_path / "X.dat")
    np.memmap(path, dtype=float, mode="w+", shape=X.shape)[:] = X
    cols = [f"c{j}" for j in range(X.shape[1])]
    mixed = pd.DataFrame({"c0": X[:, 0].astype(int), "c1": X[:, 1].astype("float32"), "c2": X[:, 2],
                          "c3": X[:, 3].astype(bool)})
    return {
        "float32": X.astype(np.float32), "float16": X.astype(np.float16), "int8": X.astype(np.int8),
        "F-order": np.asfortranarray(X), "strided": strided[:, ::2], "reversed-view": X[::-1][::-1],
        "read-only": readonly, "memmap-r": np.memmap(path, dtype=float, mode="r", shape=X.shape),
        "list": X.tolist(), "Float64": pd.DataFrame(X, columns=cols).astype("Float64"),
        "Int64": pd.DataFrame(X.astype(int), columns=cols).astype("Int64"), "mixed-frame": mixed,
    }


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_containers_and_dtypes_give_the_float64_fit(cls, tmp_path):
    X, y = _data(_make(cls))
    want = _outputs(_fit(_make(cls), X, y), X)
    for name, Xv in _variants(X, tmp_path).items():
        got = _outputs(_fit(_make(cls), Xv, y), X)
        for method, value in want.items():
            np.testing.assert_allclose(got[method], value, rtol=1e-9, atol=1e-12, err_msg=f"{name}: {method}")


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_a_3d_y_is_named(cls):
    est = _make(cls)
    X, y = _data(est)
    for method in ("fit", "partial_fit"):
        if not hasattr(est, method):
            continue
        kwargs = {"classes": np.unique(y)} if method == "partial_fit" and not _is_regressor(est) else {}
        with pytest.raises((ValueError, TypeError)) as info:
            getattr(_make(cls), method)(X, y[:, None, None], **kwargs)
        assert_clear_error(info.value, "y")
        assert "Reshape X" not in str(info.value)
