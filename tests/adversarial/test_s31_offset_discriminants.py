"""Session 31: the Gaussian classifiers on features offset far from 0.

A feature offset by 1e12 holds its spread in its last few digits. The class means of ``x`` and the LDA scores'
``x^T b - m^T b`` both rounded at ``eps 1e12``: posteriors were up to 4e-4 off (3e-7 at 1e9) against the same fit
on ``x - offset``, which is exact (Sterbenz: the entries are within a factor 2 of the offset). The models now
measure such features from the centre of their range (``linbook._design.range_origin``). Oracle: the fit on the exactly shifted
features; 32 of these 38 cases failed before.
"""

import numpy as np
import pytest

import linbook

MODELS = [linbook.LDA, linbook.QDA, linbook.DiagonalLDA, linbook.GaussianNaiveBayes,
          linbook.NearestShrunkenCentroids, linbook.RDA]


def _data(seed=0, n=80, d=3, classes=3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, n)
    X = rng.standard_normal((n, d)) + 1.5 * np.eye(classes, d)[y]
    return X, y


@pytest.mark.parametrize("offset", [1e3, 1e6, 1e9, 1e12, -1e12])
@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_offset_features_give_the_fit_of_the_shifted_features(model, offset):
    X0, y = _data()
    shift = offset * np.array([1.0, -3.0, 0.0])         # two offset features (of either sign) and a plain one
    X = X0 + shift
    exact = X - shift                                    # exact: Sterbenz
    fitted, reference = model().fit(X, y), model().fit(exact, y)
    np.testing.assert_allclose(fitted.predict_proba(X), reference.predict_proba(exact), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(fitted.predict(X), reference.predict(exact))
    np.testing.assert_allclose(fitted.means_ - shift, reference.means_, rtol=0,
                               atol=4 * np.finfo(float).eps * np.abs(shift).max())


@pytest.mark.parametrize("model", [linbook.LDA, linbook.GaussianNaiveBayes], ids=lambda m: m.__name__)
def test_weighted_offset_fit_with_unseen_rows(model):
    """Weights, and rows to predict outside the training range (still within a factor 2 of the offset)."""
    X0, y = _data(seed=3)
    w = np.random.default_rng(4).uniform(0.1, 3.0, y.size)
    shift = np.array([1e11, 1e11, -1e11])
    new = np.random.default_rng(5).standard_normal((20, 3)) * 5
    X = X0 + shift
    fitted = model().fit(X, y, sample_weight=w)
    reference = model().fit(X - shift, y, sample_weight=w)
    np.testing.assert_allclose(fitted.predict_proba((new + shift)), reference.predict_proba((new + shift) - shift),
                               rtol=0, atol=1e-12)


def test_missing_values_in_an_offset_feature():
    """The diagonal models marginalise a NaN entry; the other features are measured from their origin as before."""
    X0, y = _data(seed=6)
    shift = np.array([1e12, 0.0, 1e10])
    X = X0 + shift
    X[::7, 0] = np.nan
    fitted = linbook.GaussianNaiveBayes().fit(X, y)
    reference = linbook.GaussianNaiveBayes().fit(X - shift, y)
    np.testing.assert_allclose(fitted.predict_proba(X), reference.predict_proba(X - shift), rtol=0, atol=1e-12)


def test_dask_fit_measures_offset_features_from_the_same_origin():
    """The Dask fit takes the origin from its first pass's column ranges, as the in-memory fit does."""
    da = pytest.importorskip("dask.array")
    X0, y = _data(seed=8, n=90)
    X = X0 + np.array([1e12, -1e9, 0.0])
    memory = linbook.LDA().fit(X, y)
    blocks = linbook.LDA().fit(da.from_array(X, chunks=(30, 3)), da.from_array(y, chunks=30))
    np.testing.assert_allclose(blocks.predict_proba(X), memory.predict_proba(X), rtol=0, atol=1e-12)


@pytest.mark.parametrize("offset", [1e6, 1e9, 1e12, -1e12])
def test_fisher_projection_of_offset_features(offset):
    """``FisherLDA.transform``, ``W^T (x - mu)``: ``mu`` itself rounds at ``eps |offset|`` (the projections were
    1.5e-4 off at 1e12); measured from the offset features' origin, within 1e-15 of the shifted fit."""
    X0, y = _data(seed=9)
    shift = offset * np.array([1.0, -3.0, 0.0])
    X = X0 + shift
    fitted, reference = linbook.FisherLDA().fit(X, y), linbook.FisherLDA().fit(X - shift, y)
    np.testing.assert_allclose(fitted.transform(X), reference.transform(X - shift), rtol=0, atol=1e-12)
    np.testing.assert_allclose(fitted.mean_ - shift, reference.mean_, rtol=0,
                               atol=4 * np.finfo(float).eps * np.abs(shift).max())
