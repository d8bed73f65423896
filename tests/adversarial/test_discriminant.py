"""Adversarial cases for linbook.discriminant: a right answer or a clear error, never a silent NaN."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

import linbook
from tests.adversarial.harness import SCALES, answer_or_clear_error, assert_all_finite, right_answer_required

CLASSIFIERS = {
    "QDA": lambda **kw: linbook.QDA(**kw),
    "LDA": lambda **kw: linbook.LDA(**kw),
    "RDA": lambda **kw: linbook.RDA(shrinkage=0.3, **kw),
    "DiagonalLDA": lambda **kw: linbook.DiagonalLDA(**kw),
    "GaussianNaiveBayes": lambda **kw: linbook.GaussianNaiveBayes(**kw),
    "NearestShrunkenCentroids": lambda **kw: linbook.NearestShrunkenCentroids(shrink_threshold=0.3, **kw),
}
ALL = {**CLASSIFIERS, "FisherLDA": lambda **kw: linbook.FisherLDA(**kw)}
DIAGONAL = {"DiagonalLDA", "GaussianNaiveBayes", "NearestShrunkenCentroids"}


def _data(n=90, d=4, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    X = rng.normal(size=(n, d)) @ (np.eye(d) + 0.3 * rng.normal(size=(d, d))) + 1.5 * rng.normal(size=(3, d))[y]
    return X, y


def _output(model, X):
    return model.predict_proba(X) if hasattr(model, "predict_proba") else model.transform(X)


def _check_answer(model, X):
    """A fitted model's answer on clean rows: finite, and probabilities that sum to one."""
    out = _output(model, X)
    assert_all_finite(out)
    if hasattr(model, "predict_proba"):
        np.testing.assert_allclose(out.sum(axis=1), 1.0, atol=1e-12)


def _bad_fits():
    X, y = _data()
    Xn, Xi = X.copy(), X.copy()
    Xn[3, 1] = np.nan
    Xi[0, 0] = np.inf
    return {
        "nan in X": (Xn, y, {}),
        "inf in X": (Xi, y, {}),
        "y too short": (X, y[:-1], {}),
        "one class": (X, np.zeros(len(y)), {}),
        "continuous y": (X, np.linspace(0, 1, len(y)), {}),
        "complex y": (X, y + 0j, {}),
        "no samples": (X[:0], y[:0], {}),
        "one sample": (X[:1], y[:1], {}),
        "1-D X": (X[:, 0], y, {}),
        "3-D X": (X[:, :, None], y, {}),
        "string X": (np.full(X.shape, "a"), y, {}),
        "y None": (X, None, {}),
        "all features constant": (np.ones_like(X), y, {}),
        "class with one sample": (X[:61], np.r_[y[:60], 3], {}),
        "duplicated column": (np.column_stack([X, X[:, 1]]), y, {}),
        "D > N": (np.random.default_rng(1).normal(size=(12, 40)), np.arange(12) % 3, {}),
        "negative weights": (X, y, {"sample_weight": -np.ones(len(y))}),
        "nan weights": (X, y, {"sample_weight": np.full(len(y), np.nan)}),
        "zero weights": (X, y, {"sample_weight": np.zeros(len(y))}),
        "a class without weight": (X, y, {"sample_weight": (y != 2).astype(float)}),
        "weights wrong length": (X, y, {"sample_weight": np.ones(3)}),
    }


#: The input each case corrupts, when not X: a clear error must name it.
CORRUPTS = {"y too short": "y", "one class": "y", "continuous y": "y", "complex y": "y", "y None": "y", "class with one sample": "y",
            "negative weights": "sample_weight", "nan weights": "sample_weight", "zero weights": "sample_weight",
            "a class without weight": "sample_weight", "weights wrong length": "sample_weight"}


@pytest.mark.parametrize("case, est", [pytest.param(case, est, id=f"{case}-{est}")
                                       for case, (_, _, kw) in _bad_fits().items() for est in ALL
                                       if not (kw and est == "FisherLDA")])    # FisherLDA takes no sample_weight
def test_bad_fit_input(est, case):
    X, y, kw = _bad_fits()[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", linbook.base.LinbookWarning)
        model = answer_or_clear_error(lambda: ALL[est]().fit(X, y, **kw), corrupts=CORRUPTS.get(case, "X"))
    accepted = {"nan in X": est in DIAGONAL,                        # fit on the observed entries
                "class with one sample": est != "QDA",      # the others pool, or floor the variance
                "duplicated column": est in DIAGONAL | {"RDA"},
                "D > N": est in DIAGONAL | {"RDA"}}
    if not accepted.get(case, False):
        assert model is None, f"{case}: accepted bad input"
    elif model is not None:
        Xc = np.nan_to_num(np.asarray(X, dtype=float))
        _check_answer(model, Xc)
    if case == "class with one sample" and est == "GaussianNaiveBayes":
        # one sample: variance var_smoothing * max Var(x_j) > 0, a valid (if confident) model
        assert model is not None
    if case == "class with one sample" and est == "QDA":
        assert model is None


@pytest.mark.parametrize("est, param", [
    ("RDA", {"shrinkage": -0.1}), ("RDA", {"shrinkage": 1.5}), ("RDA", {"shrinkage": np.nan}),
    ("GaussianNaiveBayes", {"var_smoothing": -1.0}), ("GaussianNaiveBayes", {"var_smoothing": np.nan}),
    ("NearestShrunkenCentroids", {"shrink_threshold": -1.0}), ("NearestShrunkenCentroids", {"shrink_threshold": np.nan}),
    ("FisherLDA", {"n_components": 0}), ("FisherLDA", {"n_components": 3}),
    *[(e, {"priors": p}) for e in CLASSIFIERS for p in ([0.5, 0.5], [0.5, 0.6, -0.1], [0.2, 0.2, 0.2],
                                                        [np.nan, 0.5, 0.5])],
])
def test_bad_parameters(est, param):
    X, y = _data()
    make = {"RDA": linbook.RDA, "GaussianNaiveBayes": linbook.GaussianNaiveBayes,
            "NearestShrunkenCentroids": linbook.NearestShrunkenCentroids, "FisherLDA": linbook.FisherLDA,
            "QDA": linbook.QDA, "LDA": linbook.LDA, "DiagonalLDA": linbook.DiagonalLDA}[est]
    assert answer_or_clear_error(lambda: make(**param).fit(X, y), corrupts=next(iter(param))) is None


@pytest.mark.parametrize("est", list(ALL))
def test_bad_predict_input(est):
    X, y = _data()
    with pytest.raises(NotFittedError):
        _output(ALL[est](), X)
    model = ALL[est]().fit(X, y)
    Xn, Xi = X.copy(), X.copy()
    Xn[:5, 1] = np.nan
    Xn[5, :] = np.nan
    Xi[0, 0] = np.inf
    for bad in [Xi, X[:, :2], X[:, :, None], np.full(X.shape, "a")]:
        assert answer_or_clear_error(lambda: _output(model, bad), corrupts="X") is None
    out = answer_or_clear_error(lambda: _output(model, Xn), corrupts="X")
    if est == "FisherLDA":
        assert out is None
    else:                                           # missing features are marginalised out
        assert_all_finite(out)
        np.testing.assert_allclose(out[5], model.priors_, atol=1e-12)
        np.testing.assert_allclose(out[6:], model.predict_proba(X[6:]), atol=1e-12)
    far = answer_or_clear_error(lambda: _output(model, X * 1e200), corrupts="X")
    if far is not None:
        assert_all_finite(far)


@pytest.mark.parametrize("est", list(ALL))
@pytest.mark.parametrize("scale", SCALES)
def test_feature_scale_scan(est, scale):
    """Posteriors (and FisherLDA's projection) do not change when every feature is scaled by s."""
    X, y = _data()
    ref = ALL[est]().fit(X, y)
    model = right_answer_required(lambda: ALL[est]().fit(X * scale, y))
    out = _output(model, X * scale)
    assert_all_finite(out)
    np.testing.assert_allclose(out, _output(ref, X), atol=1e-9)
    if est != "FisherLDA":                          # log p(x, y) shifts by the Jacobian N D log s
        shift = X.size * np.log(scale)
        np.testing.assert_allclose(model.log_likelihood(X * scale, y) + shift, ref.log_likelihood(X, y),
                                   rtol=1e-10)
        Xn = X * scale
        Xn[::3, 0] = np.nan
        np.testing.assert_allclose(model.predict_proba(Xn), ref.predict_proba(Xn / scale), atol=1e-9)


@pytest.mark.parametrize("est", list(CLASSIFIERS))
def test_features_of_very_different_scales(est):
    """One feature near 1e300, one near 1e-12: each is standardised on its own."""
    X, y = _data()
    s = np.array([1e300, 1e-12, 1.0, 1e8])
    ref = CLASSIFIERS[est]().fit(X, y)
    out = right_answer_required(lambda: CLASSIFIERS[est]().fit(X * s, y).predict_proba(X * s))
    if est in ("GaussianNaiveBayes", "NearestShrunkenCentroids"):
        # these couple the features' units by design: var_smoothing * max_j Var(x_j) floors every
        # variance (the small features then carry no information, as in scikit-learn), and the
        # shrunken centroids add s_0 = median_j s_j to every s_j. The answer is finite.
        assert_all_finite(out)
    else:
        np.testing.assert_allclose(out, ref.predict_proba(X), atol=1e-9)


@pytest.mark.parametrize("shrinkage", [5e-324, 1e-300, 1e-200])
def test_rda_with_a_tiny_shrinkage_is_lda(shrinkage):
    """Full-rank pooled covariance: ``RDA(shrinkage -> 0)`` is LDA. The part of the scores off the kept
    eigenvectors was added even when none was dropped: rounding divided by ``shrinkage`` gave probabilities
    [0, 0, 1] at 1e-300 and NaN at 5e-324, silently."""
    X, y = _data()
    want = linbook.LDA().fit(X, y).predict_proba(X)
    got = answer_or_clear_error(lambda: linbook.RDA(shrinkage=shrinkage).fit(X, y).predict_proba(X),
                                corrupts="shrinkage")
    assert got is not None
    assert np.max(np.abs(got - want)) <= 1e-9


@pytest.mark.parametrize("shrinkage", [5e-324, 1e-300, 1e-12])
def test_rda_with_a_tiny_shrinkage_on_wide_data_answers_or_says_so(shrinkage):
    """More features than rows (a singular pooled covariance): 1 / shrinkage off its span may overflow; then a
    clear error naming shrinkage, never NaN probabilities (as at 5e-324 before)."""
    X, y = _data(n=12, d=30)
    got = answer_or_clear_error(lambda: linbook.RDA(shrinkage=shrinkage).fit(X, y).predict_proba(X),
                                corrupts="shrinkage")
    if got is not None:
        assert_all_finite(got)
