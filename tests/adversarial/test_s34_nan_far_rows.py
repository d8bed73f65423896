"""Session 34: rows with a missing feature (NaN) far from the data, for every Gaussian classifier.

A missing feature is marginalised out: the score of class ``c`` is ``log pi_c + log N(x_o | mu_c,o, Sigma_c,oo)``
over the observed features ``o`` (eq. (8.97) of note 000). Those log-densities were evaluated in one exact form
only, each ~``-|z|^2 / 2``, so far from the data their rounding drowned the classes' differences (~``|z|``): the
shared-covariance models (LDA, RDA, DiagonalLDA, NearestShrunkenCentroids) gave the wrong class at 1e16 standard
deviations and 1/3 each from 1e17 on, silently; every model refused rows from ~1e154 on ("the log-density
overflows"), and a complete far row beside a row with NaN was refused with it. The marginal of each class's
Gaussian is a model of the same kind on the features ``o``, and a row with NaN far out is now scored as that model
scores a complete row (linear scores about the classes' centre, row scaling by powers of two).

Oracles: the posterior of the fitted parameters (``means_`` or ``centroids_``, the covariances or variances,
``priors_``) marginalised exactly (drop the rows and columns of the missing features) at 60 digits and more; and the
same model fitted on the observed columns alone, whose posterior on the row without its NaN is the marginal one
(without NaN in training, the fitted statistics of those columns are the same).
"""

import warnings

import mpmath as mp
import numpy as np
import pytest

import linbook

MODELS = {"LDA": linbook.LDA, "RDA": lambda: linbook.RDA(shrinkage=0.3), "QDA": linbook.QDA,
          "DiagonalLDA": linbook.DiagonalLDA, "NearestShrunkenCentroids": linbook.NearestShrunkenCentroids,
          "GaussianNaiveBayes": linbook.GaussianNaiveBayes}
SCALES = [1e4, 1e8, 1e12, 1e16, 1e17, 1e20, 1e100, 1e200, 1e300]
DIRECTIONS = np.array([[0.3, 0.5, -0.7, 0.2], [-1.0, 0.4, 0.1, -0.3], [0.2, -0.9, 0.6, 1.0]])


def _data(seed=15, offset=0.0):
    """Three well-separated classes in four correlated features (offset by ``offset``)."""
    rng = np.random.default_rng(seed)
    mix = np.array([[1.0, 0.3, 0.0, 0.1], [0.0, 1.0, 0.2, 0.0], [0.0, 0.0, 1.0, 0.4], [0.0, 0.0, 0.0, 1.0]])
    y = np.repeat([0, 1, 2], 20)
    X = rng.normal(size=(60, 4)) @ mix + y[:, None] * np.array([1.0, -0.5, 0.3, 0.8]) + offset
    return X, y


def _fitted_gaussians(model):
    """``priors_``, the class centres and covariances of a fitted model, in the units of X."""
    C = len(model.classes_)
    if hasattr(model, "centroids_"):
        return model.priors_, model.centroids_, [np.diag(model.within_class_std_dev_ ** 2)] * C
    if hasattr(model, "var_"):
        var = np.broadcast_to(model.var_, model.means_.shape)
        return model.priors_, model.means_, [np.diag(v) for v in var]
    if hasattr(model, "covariances_"):
        return model.priors_, model.means_, list(model.covariances_)
    return model.priors_, model.means_, [model.covariance_] * C


def _marginal_posterior(model, x):
    """``p(y = c | x_o)`` of the fitted parameters, the Gaussians marginalised over the observed features of ``x``
    exactly, at 60 digits plus twice the row's decimal exponent (its squared distances keep their differences)."""
    priors, means, covs = _fitted_gaussians(model)
    o = np.flatnonzero(~np.isnan(x))
    size = max(1.0, float(np.max(np.abs(x[o]))))
    with mp.workdps(60 + 2 * int(np.log10(size))):
        joint = []
        for p, mu, S in zip(priors, means, covs):
            r = mp.matrix([mp.mpf(float(x[j])) - mp.mpf(float(mu[j])) for j in o])
            L = mp.cholesky(mp.matrix([[mp.mpf(float(S[a, b])) for b in o] for a in o]))
            w = mp.lu_solve(L, r)
            logdet = 2 * mp.fsum(mp.log(L[j, j]) for j in range(len(o)))
            joint.append(mp.log(mp.mpf(float(p))) - mp.fsum(v * v for v in w) / 2 - logdet / 2)
        top = max(joint)
        evidence = top + mp.log(mp.fsum(mp.exp(v - top) for v in joint))
        return np.array([float(mp.exp(v - evidence)) for v in joint])


def _predictions(model, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # constant features, drowned columns: not what is tested
        return model.predict_proba(X), model.predict(X)


def _far_rows(missing):
    """Rows ``t u`` for every scale in SCALES and direction in DIRECTIONS, with the features ``missing`` NaN."""
    rows = np.array([t * u for t in SCALES for u in DIRECTIONS])
    rows[:, missing] = np.nan
    return rows


@pytest.mark.parametrize("missing", [[1], [0, 2], [3], [1, 2, 3]], ids=["x1", "x0x2", "x3", "x1x2x3"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_far_rows_with_missing_features_get_the_marginal_posterior(name, missing):
    """Rows 1e4 to 1e300 standard deviations out with one to three features NaN: the class and the posterior of
    the marginal over the observed features. On the old code the shared-covariance models gave the wrong class at
    1e16 and 1/3 each from 1e17 on; every model refused the rows from 1e200 on."""
    model = MODELS[name]().fit(*_data())
    rows = _far_rows(missing)
    for batch in (rows[np.max(np.abs(np.nan_to_num(rows)), axis=1) < 1e150], rows):   # the squares fit, then all
        proba, labels = _predictions(model, batch)
        want = np.array([_marginal_posterior(model, x) for x in batch])
        np.testing.assert_array_equal(labels, model.classes_[np.argmax(want, axis=1)])
        np.testing.assert_allclose(proba, want, rtol=0, atol=1e-9)


@pytest.mark.parametrize("offset", [0.0, 1e8])
@pytest.mark.parametrize("name", ["LDA", "RDA", "QDA", "DiagonalLDA"])
def test_row_with_missing_features_as_the_model_of_the_observed_columns(name, offset):
    """The marginal of the fitted Gaussians over the observed columns is the model fitted on those columns alone
    (LDA's pooled covariance, RDA's shrunk one, QDA's and DiagonalLDA's are sums over those columns' residuals), so
    far rows with NaN get that model's class and posterior on the rows without their NaN, also with features offset
    by 1e8 (0.5 / 0.5 at 1e16, 1/3 each beyond, then a refusal, on the old code)."""
    X, y = _data(seed=3, offset=offset)
    model = MODELS[name]().fit(X, y)
    for missing in ([1], [0, 3]):
        observed = np.setdiff1d(np.arange(4), missing)
        rows = _far_rows(missing)
        rows[:, observed] += offset
        alone = MODELS[name]().fit(X[:, observed], y)
        proba, labels = _predictions(model, rows)
        want_proba, want_labels = _predictions(alone, rows[:, observed])
        np.testing.assert_array_equal(labels, want_labels, err_msg=f"missing {missing}")
        np.testing.assert_allclose(proba, want_proba, rtol=0, atol=1e-9, err_msg=f"missing {missing}")


@pytest.mark.parametrize("far", [1e6, 1e10, 1e14])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_two_close_classes_beside_a_far_one_with_missing_features(name, far):
    """Two classes 0.5 apart and a third ``far`` away; rows with a NaN among the close classes keep the close
    classes' posterior (each class scored from its own centre), and rows with a NaN far from all three get the
    marginal posterior (on the old code 1/3 each, or refused)."""
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(20, 3)), rng.normal(size=(20, 3)) + 0.5, rng.normal(size=(20, 3)) + far])
    model = MODELS[name]().fit(X, np.repeat([0, 1, 2], 20))
    nan = np.nan
    rows = np.array([[0.3, 0.1, nan], [-1.0, nan, 0.5], [nan, 0.8, 0.9],             # among the close classes
                     [1e20, nan, -3e20], [nan, -1e250, 2e250], [1e300, nan, nan]])   # far from all
    proba, labels = _predictions(model, rows)
    want = np.array([_marginal_posterior(model, x) for x in rows])
    np.testing.assert_array_equal(labels, model.classes_[np.argmax(want, axis=1)])
    np.testing.assert_allclose(proba, want, rtol=0, atol=1e-9)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_a_far_complete_row_beside_a_row_with_missing_features(name):
    """A batch holding a row with NaN was refused whole when another row's scores overflowed ("the log-density
    overflows"), although that row alone gets its class; now each row gets what it gets alone, and the far rows the
    marginal (or complete) posterior of the fitted parameters."""
    model = MODELS[name]().fit(*_data())
    rows = np.array([[1e300, -1e300, 2e299, 5e299], [0.3, np.nan, 0.2, 0.9], [1e200, np.nan, -3e199, 1e199]])
    proba, labels = _predictions(model, rows)
    for i, x in enumerate(rows):
        p, label = _predictions(model, x[None, :])
        np.testing.assert_array_equal(proba[i], p[0])
        assert labels[i] == label[0]
        np.testing.assert_allclose(proba[i], _marginal_posterior(model, x), rtol=0, atol=1e-9)
