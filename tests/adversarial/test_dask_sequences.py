"""The streaming models on dask collections whose blocks are laid out oddly: the answer of the in-memory
call on the same rows, or a clear error naming the input.

``fit`` / ``partial_fit`` on a dask collection is ``partial_fit`` on each row block in order. A stream
cannot start from rows that all weigh 0, so a collection whose first block(s) held only weight-0 rows
was refused ("Sample weights must contain at least one non-zero number") although its weights were
valid and the in-memory ``fit`` on the same rows succeeds. Blocks of unknown sizes that do not pair
with y's were reported as "inconsistent numbers of samples" with the advice to pass one row per
sample, which the caller did. Dask's synchronous scheduler runs the blocks (as in tests/test_dask.py's
local-scheduler tests).
"""

from __future__ import annotations

import numpy as np
import pytest

from linbook.online import RecursiveLeastSquares, SGDClassifier, SGDRegressor

from .harness import assert_clear_error

da = pytest.importorskip("dask.array", reason="the dask extra is not installed (pip install 'linbook[dask]')")
dask = pytest.importorskip("dask")


def _data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) + np.array([0.0, 3.0, 0.0])
    y = X @ np.array([1.0, -2.0, 0.5]) + 0.3 + 0.1 * rng.normal(size=n)
    return X, y


def _weights(n, zero_blocks, block=10):
    """Weights in (0.5, 2), with the rows of the listed blocks of ``block`` rows at 0."""
    sw = np.random.default_rng(1).uniform(0.5, 2.0, n)
    for b in zero_blocks:
        sw[b * block:(b + 1) * block] = 0.0
    return sw


def _sync(call):
    with dask.config.set(scheduler="synchronous"):
        return call()


@pytest.mark.parametrize("zero_blocks", [(0,), (0, 1), (0, 3), (2,)], ids=str)
@pytest.mark.parametrize("prior_precision", [0.0, 1.0])
def test_rls_fit_with_weight_0_blocks_is_the_batch_fit(zero_blocks, prior_precision):
    """The exact batch posterior (coef_, intercept_, P_) of the in-memory fit, rows of weight 0 counted as seen."""
    X, y = _data()
    sw = _weights(len(y), zero_blocks)
    mem = RecursiveLeastSquares(prior_precision=prior_precision).fit(X, y, sample_weight=sw)
    dsk = _sync(lambda: RecursiveLeastSquares(prior_precision=prior_precision).fit(
        da.from_array(X, chunks=(10, 3)), da.from_array(y, chunks=10), sample_weight=da.from_array(sw, chunks=7)))
    np.testing.assert_allclose(dsk.coef_, mem.coef_, rtol=1e-9)
    np.testing.assert_allclose(dsk.intercept_, mem.intercept_, rtol=1e-9)
    np.testing.assert_allclose(dsk.P_, mem.P_, rtol=1e-8, atol=1e-14)
    assert dsk.n_samples_seen_ == mem.n_samples_seen_ == len(y)


@pytest.mark.parametrize("make, target", [
    (lambda: SGDRegressor(eta0=0.05, random_state=0), "y"),
    (lambda: SGDClassifier(eta0=0.1, random_state=0), "labels"),
    (lambda: RecursiveLeastSquares(), "y")], ids=["SGDRegressor", "SGDClassifier", "RLS"])
def test_partial_fit_whose_first_block_weighs_0_skips_it(make, target):
    """Rows of weight 0 move nothing: the stream equals partial_fit on the blocks after them."""
    X, y = _data()
    t = (y > np.median(y)).astype(int) if target == "labels" else y
    kwargs = {"classes": [0, 1]} if target == "labels" else {}
    sw = _weights(len(y), (0,))
    mem = make()
    for start in range(10, len(y), 10):
        mem.partial_fit(X[start:start + 10], t[start:start + 10], sample_weight=sw[start:start + 10], **kwargs)
    dsk = _sync(lambda: make().partial_fit(da.from_array(X, chunks=(10, 3)), da.from_array(t, chunks=10),
                                           sample_weight=da.from_array(sw, chunks=10), **kwargs))
    np.testing.assert_allclose(dsk.coef_, mem.coef_, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(dsk.intercept_, mem.intercept_, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("make", [RecursiveLeastSquares, lambda: SGDRegressor(random_state=0)])
def test_stream_whose_every_weight_is_0_is_refused_and_changes_nothing(make):
    X, y = _data()
    model = make()
    with pytest.raises(ValueError) as info:
        _sync(lambda: model.partial_fit(da.from_array(X, chunks=(10, 3)), da.from_array(y, chunks=10),
                                        sample_weight=da.zeros(len(y), chunks=10)))
    assert_clear_error(info.value, ("sample_weight",))
    assert not hasattr(model, "n_features_in_") and not hasattr(model, "coef_")


@pytest.mark.parametrize("make", [RecursiveLeastSquares, lambda: SGDRegressor(random_state=0)])
def test_unpaired_blocks_of_unknown_size_name_the_cure(make):
    """X in blocks of 20 rows, y in blocks of unknown sizes 25, 1, 34: the error names y's blocks and
    compute_chunk_sizes (it said "inconsistent numbers of samples: [20, 25]. Pass one row per sample")."""
    X, y = _data()
    parts = [slice(0, 25), slice(25, 26), slice(26, 60)]
    yd = da.concatenate([da.from_delayed(dask.delayed(lambda s=s: y[s])(), shape=(np.nan,), dtype=float)
                         for s in parts])
    model = make()
    with pytest.raises(ValueError) as info:
        _sync(lambda: model.fit(da.from_array(X, chunks=(20, 3)), yd) if isinstance(model, RecursiveLeastSquares)
              else model.partial_fit(da.from_array(X, chunks=(20, 3)), yd))
    assert "compute_chunk_sizes" in str(info.value) and "block" in str(info.value)
    assert_clear_error(info.value, ("y",))
    assert not hasattr(model, "coef_")
