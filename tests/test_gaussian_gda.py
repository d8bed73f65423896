"""Chapter "Gaussian models and GDA": the multivariate normal (linbook.gaussian) and the Gaussian
classifiers (linbook.discriminant; GaussianNaiveBayes and FisherLDA share their base and are
tested here too). The chapter's exercises are tested in test_exercises_gaussian.py.
"""

import numpy as np
import pytest
import sklearn
from scipy import linalg, stats
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_iris, load_wine
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis
from sklearn.model_selection import cross_val_score
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import NearestCentroid
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.exceptions import NotFittedError
from sklearn.utils import get_tags

import linbook
from linbook.base import LinbookWarning
from linbook.gaussian import mahalanobis, mvn_cholesky, mvn_entropy, mvn_logpdf, mvn_sample

DATA = {"iris": load_iris(return_X_y=True), "wine": load_wine(return_X_y=True),
        "cancer": load_breast_cancer(return_X_y=True)}
CLASSIFIERS = [linbook.QDA(), linbook.LDA(), linbook.RDA(shrinkage=0.3), linbook.DiagonalLDA(),
               linbook.GaussianNaiveBayes(), linbook.NearestShrunkenCentroids(shrink_threshold=0.5)]


# scikit-learn's QDA estimates each class covariance by maximum likelihood (divided by n_k, as
# linbook's QDA) from 1.9.1; before, it divided by n_k - 1, so its probabilities differ.
SKLEARN_QDA_IS_MLE = tuple(int(p) for p in sklearn.__version__.split(".")[:3]) >= (1, 9, 1)


def _synthetic(seed=0, n=300, d=4, c=3):
    rng = np.random.default_rng(seed)
    means = rng.normal(scale=2, size=(c, d))
    covs = [a @ a.T + 0.5 * np.eye(d) for a in rng.normal(size=(c, d, d))]
    return linbook.datasets.make_gaussian_classes(n // c, means, covs, random_state=seed)


@pytest.mark.parametrize("name", ["iris", "wine", "cancer", "syn"])
def test_lda_qda_equal_sklearn(name):
    X, y = DATA[name] if name != "syn" else _synthetic()
    for ours, ref in [(linbook.LDA(), LinearDiscriminantAnalysis(solver="lsqr")),
                      (linbook.LDA(), LinearDiscriminantAnalysis(solver="eigen")),
                      (linbook.QDA(), QuadraticDiscriminantAnalysis())]:
        if name == "cancer" and isinstance(ours, linbook.QDA):
            continue  # a class covariance of breast_cancer is near-singular in sklearn too
        if isinstance(ours, linbook.QDA) and not SKLEARN_QDA_IS_MLE:
            continue
        ours.fit(X, y), ref.fit(X, y)
        np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-8)
        np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
        np.testing.assert_allclose(ours.means_, ref.means_, rtol=1e-12, atol=1e-12)


def test_lda_binary_coef_and_priors():
    X, y = DATA["cancer"]
    ours = linbook.LDA().fit(X, y)
    ref = LinearDiscriminantAnalysis(solver="lsqr").fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-7)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=1e-7)
    np.testing.assert_allclose(ours.decision_function(X), ref.decision_function(X), rtol=1e-7, atol=1e-7)
    # given priors shift only the intercepts by log prior ratios
    p = linbook.LDA(priors=[0.5, 0.5]).fit(X, y)
    np.testing.assert_allclose(p.intercept_ - ours.intercept_, -np.log(ours.priors_[1] / ours.priors_[0]))
    # QDA with priors equals sklearn with the same priors
    if not SKLEARN_QDA_IS_MLE:
        return
    Xi, yi = DATA["iris"]
    pri = [0.2, 0.3, 0.5]
    np.testing.assert_allclose(linbook.QDA(priors=pri).fit(Xi, yi).predict_proba(Xi),
                               QuadraticDiscriminantAnalysis(priors=pri).fit(Xi, yi).predict_proba(Xi), atol=1e-10)


@pytest.mark.parametrize("vs", [1e-9, 1e-3, 0.1])
def test_naive_bayes_equals_sklearn(vs):
    for X, y in DATA.values():
        a = linbook.GaussianNaiveBayes(var_smoothing=vs).fit(X, y)
        b = GaussianNB(var_smoothing=vs).fit(X, y)
        np.testing.assert_allclose(a.var_, b.var_, rtol=1e-9)
        np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), atol=1e-8)


@pytest.mark.parametrize("shrink", [0.0, 0.5, 2.0])
def test_nearest_shrunken_centroids_equal_sklearn(shrink):
    X, y = DATA["wine"]
    pri = [0.3, 0.3, 0.4]                      # non-uniform: sklearn then predicts by its discriminant
    a = linbook.NearestShrunkenCentroids(shrink_threshold=shrink, priors=pri).fit(X, y)
    b = NearestCentroid(shrink_threshold=shrink or None, priors=pri).fit(X, y)
    np.testing.assert_allclose(a.centroids_, b.centroids_, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    # sklearn's probabilities are softmax(2 delta): ours squared and renormalised
    p = a.predict_proba(X) ** 2
    np.testing.assert_allclose(p / p.sum(1, keepdims=True), b.predict_proba(X), atol=1e-8)


def test_shrinkage_selects_features_and_zero_shrink_is_diagonal_lda():
    X, y = DATA["wine"]
    nsc0 = linbook.NearestShrunkenCentroids(shrink_threshold=0.0).fit(X, y)
    dlda = linbook.DiagonalLDA().fit(X, y)
    np.testing.assert_allclose(nsc0.predict_proba(X), dlda.predict_proba(X), atol=1e-10)
    np.testing.assert_allclose(dlda.var_, nsc0.within_class_std_dev_ ** 2)
    sizes = [linbook.NearestShrunkenCentroids(shrink_threshold=s).fit(X, y).selected_features_.size for s in (0, 2, 4, 8)]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] == 13 and sizes[-1] < 13


def _direct_rda_betas(X, y, lam):
    C = np.unique(y)
    means = np.array([X[y == c].mean(0) for c in C])
    R = X - means[np.searchsorted(C, y)]
    S = R.T @ R / len(X)
    Sig = lam * np.diag(np.diag(S)) + (1 - lam) * S
    return means, Sig, np.linalg.solve(Sig, means.T).T


@pytest.mark.parametrize("n,d", [(200, 5), (40, 300)])
@pytest.mark.parametrize("lam", [0.05, 0.5, 1.0])
def test_rda_matches_direct_formula(n, d, lam):
    rng = np.random.default_rng(d)
    X = rng.normal(size=(n, d)) @ rng.normal(size=(d, d)) / np.sqrt(d)
    y = rng.integers(0, 3, n)
    X[y == 1] += 0.5
    m = linbook.RDA(shrinkage=lam).fit(X, y)
    means, Sig, betas = _direct_rda_betas(X, y, lam)
    np.testing.assert_allclose(m.betas_, betas, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(m.covariance_, Sig, rtol=1e-9, atol=1e-12)
    from scipy.stats import multivariate_normal
    ll = sum(np.log(m.priors_[c]) * (y == c).sum() + multivariate_normal(means[c], Sig).logpdf(X[y == c]).sum()
             for c in range(3))
    np.testing.assert_allclose(m.log_likelihood(X, y), ll, rtol=1e-9)


def test_rda_endpoints():
    X, y = DATA["wine"]
    np.testing.assert_allclose(linbook.RDA(shrinkage=0).fit(X, y).predict_proba(X),
                               linbook.LDA().fit(X, y).predict_proba(X), atol=1e-10)
    m1 = linbook.RDA(shrinkage=1).fit(X, y)
    np.testing.assert_allclose(np.diag(m1.covariance_), m1.variances_)
    with pytest.raises(ValueError, match="shrinkage"):
        linbook.RDA(shrinkage=1.5).fit(X, y)


@pytest.mark.parametrize("model", CLASSIFIERS, ids=lambda m: type(m).__name__)
def test_missing_features_are_marginalised(model):
    X, y = DATA["wine"]
    m = clone(model).fit(X, y)
    Xt = X[:6].copy()
    Xt[0, 3] = np.nan
    Xt[1, [0, 5, 7]] = np.nan
    Xt[2, :] = np.nan
    P = m.predict_proba(Xt)
    assert np.all(np.isfinite(P)) and np.allclose(P.sum(1), 1)
    np.testing.assert_allclose(P[3:], m.predict_proba(X[3:6]), atol=1e-12)
    np.testing.assert_allclose(P[2], m.priors_, atol=1e-12)           # nothing observed: the prior
    # row 1 equals the posterior of the Gaussian model restricted to the observed dims
    obs = np.setdiff1d(np.arange(13), [0, 5, 7])
    logj = np.log(m.priors_).copy()
    for c in range(3):
        if isinstance(m, (linbook.GaussianNaiveBayes, linbook.DiagonalLDA, linbook.NearestShrunkenCentroids)):
            mu = (m.centroids_ if hasattr(m, "centroids_") else m.means_)[c, obs]
            var = (m.var_[c] if m.var_.ndim == 2 else m.var_) if hasattr(m, "var_") else m.within_class_std_dev_ ** 2
            cov = np.diag(np.broadcast_to(var, (13,))[obs])
        else:
            mu = m.means_[c, obs]
            full = m.covariances_[c] if hasattr(m, "covariances_") else (
                m.covariance_ if isinstance(m, linbook.RDA) else m.covariance_)
            cov = full[np.ix_(obs, obs)]
        from scipy.stats import multivariate_normal
        logj[c] += multivariate_normal(mu, cov).logpdf(X[1, obs])
    np.testing.assert_allclose(P[1], np.exp(logj - np.logaddexp.reduce(logj)), atol=1e-10)


@pytest.mark.parametrize("model", CLASSIFIERS, ids=lambda m: type(m).__name__)
def test_sklearn_plumbing_and_bad_input(model):
    X, y = DATA["iris"]
    assert cross_val_score(make_pipeline(StandardScaler(), clone(model)), X, y, cv=3).mean() > 0.7
    m = clone(model).fit(X, y)
    assert m.fit(X, y) is m and m.score(X, y) > 0.7
    X_nan = np.where(np.arange(X.size).reshape(X.shape) == 3, np.nan, X)
    if get_tags(model).input_tags.allow_nan:                       # diagonal models: fit on observed entries
        assert np.all(np.isfinite(clone(model).fit(X_nan, y).predict_proba(X)))
    else:
        with pytest.raises(ValueError, match="NaN"):
            clone(model).fit(X_nan, y)
    with pytest.raises(ValueError):
        clone(model).fit(X, np.zeros(len(y)))                      # one class
    with pytest.raises(ValueError):
        m.predict(X[:, :2])
    Xi = X[:3].copy()
    Xi[0, 0] = np.inf
    with pytest.raises(ValueError, match="inf"):
        m.predict_proba(Xi)
    with pytest.raises(ValueError, match="labels"):
        m.log_likelihood(X[:3], ["a", "b", "c"])
    with pytest.warns(LinbookWarning, match="constant"):
        mc = clone(model).fit(np.column_stack([X, np.full(len(X), 2.0)]), y)
    np.testing.assert_allclose(mc.predict_proba(np.column_stack([X, np.full(len(X), 2.0)])),
                               m.predict_proba(X), atol=1e-10)


def test_qda_bad_classes():
    X, y = DATA["iris"]
    with pytest.raises(ValueError, match="1 sample"):
        linbook.QDA().fit(X[:101], y[:101])                       # class 2 has one sample
    Xs, ys = X[np.r_[0:4, 50:54, 100:104]], y[np.r_[0:4, 50:54, 100:104]]
    with pytest.raises(ValueError, match="RDA"):
        linbook.QDA().fit(Xs, ys)                                  # N_c = 4 <= D = 4: singular
    with pytest.raises(ValueError, match="RDA.*duplicated"):
        linbook.LDA().fit(np.column_stack([X, X[:, 0] + X[:, 1]]), y)   # collinear features
    with pytest.raises(ValueError, match="RDA.*duplicated"):
        linbook.QDA().fit(np.column_stack([X, X[:, 2]]), y)             # a duplicated column


def test_high_dimensional_d_greater_than_n():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 500))
    y = np.repeat([0, 1, 2], 10)
    X[y == 1, :5] += 3.0
    with pytest.raises(ValueError, match="RDA"):
        linbook.LDA().fit(X, y)
    with pytest.raises(ValueError, match="RDA"):
        linbook.QDA().fit(X, y)
    for m in [linbook.RDA(shrinkage=0.5), linbook.DiagonalLDA(), linbook.GaussianNaiveBayes(),
              linbook.NearestShrunkenCentroids(shrink_threshold=1.0)]:
        assert m.fit(X, y).score(X, y) > 0.6


def test_aic_bic_and_conditional_likelihood():
    X, y = DATA["iris"]
    m = linbook.LDA().fit(X, y)
    assert m.n_params_ == 2 + 12 + 10
    assert np.isclose(m.aic(X, y), -2 * m.log_likelihood(X, y) + 2 * 24)
    assert m.conditional_log_likelihood(X, y) > m.log_likelihood(X, y)


def test_fisher_lda_generalised_eigenvectors():
    for X, y in [DATA["wine"], DATA["iris"]]:
        f = linbook.FisherLDA().fit(X, y)
        C = np.unique(y)
        mu = X.mean(0)
        Sw = sum(np.cov(X[y == c].T, bias=True) * (y == c).mean() for c in C)
        Sb = sum((y == c).mean() * np.outer(X[y == c].mean(0) - mu, X[y == c].mean(0) - mu) for c in C)
        vals, vecs = linalg.eigh(Sb, Sw)
        for k in range(f.scalings_.shape[1]):
            v, w = vecs[:, -1 - k], f.scalings_[:, k]
            cos = abs(v @ w) / np.linalg.norm(v) / np.linalg.norm(w)
            assert cos > 1 - 1e-9
        np.testing.assert_allclose(f.eigenvalues_, vals[::-1][:len(C) - 1], rtol=1e-9)
        np.testing.assert_allclose(f.scalings_.T @ Sw @ f.scalings_, np.eye(len(C) - 1), atol=1e-9)
        # same subspace as sklearn's LDA transform
        Z = f.transform(X)
        Zs = LinearDiscriminantAnalysis(solver="eigen").fit(X, y).transform(X)
        Q1, Q2 = np.linalg.qr(Z - Z.mean(0))[0], np.linalg.qr(Zs - Zs.mean(0))[0]
        np.testing.assert_allclose(np.linalg.svd(Q1.T @ Q2)[1], 1, atol=1e-8)
    with pytest.raises(ValueError, match="C - 1"):
        linbook.FisherLDA(n_components=3).fit(*DATA["wine"])
    with pytest.raises(ValueError, match="PCA"):
        linbook.FisherLDA().fit(np.random.default_rng(0).normal(size=(10, 20)), np.repeat([0, 1], 5))
    assert make_pipeline(linbook.FisherLDA(n_components=2), linbook.QDA()).fit(*DATA["iris"]).score(*DATA["iris"]) > 0.9


def test_fisher_lda_sample_weight_is_repeated_rows():
    """Weighted scatter matrices: integer weights (0 drops a row) give the fit on repeated rows, a
    column constant over the rows of positive weight is left out, a class of weight 0 is refused."""
    X, y = DATA["wine"]
    w = np.random.default_rng(1).integers(0, 4, len(y))
    X = X.copy()
    X[w == 0, 3] += 1.0                     # varies only on rows of weight 0: constant for the fit
    X[w > 0, 3] = 2.5
    a = linbook.FisherLDA().fit(X, y, sample_weight=w.astype(float))
    b = linbook.FisherLDA().fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    np.testing.assert_allclose(a.eigenvalues_, b.eigenvalues_, rtol=1e-10)
    np.testing.assert_allclose(np.abs(a.transform(X)), np.abs(b.transform(X)), rtol=1e-8, atol=1e-10)
    assert np.all(a.scalings_[3] == 0.0) and a.mean_[3] == 2.5
    assert not np.allclose(a.eigenvalues_, linbook.FisherLDA().fit(X, y).eigenvalues_, rtol=1e-3)
    model = linbook.FisherLDA()
    with pytest.raises(ValueError, match="sample_weight"):
        model.fit(X, y, sample_weight=np.where(y == y[0], 0.0, 1.0))
    assert not hasattr(model, "scalings_")


# ------------------------------------------------------------------ sample weights
@pytest.mark.parametrize("model", CLASSIFIERS, ids=lambda m: type(m).__name__)
def test_integer_weights_equal_repeated_rows(model):
    X, y = DATA["wine"]
    w = np.random.default_rng(0).integers(0, 4, len(y))
    a = clone(model).fit(X, y, sample_weight=w)
    b = clone(model).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    np.testing.assert_allclose(a.means_, b.means_, rtol=1e-12)
    np.testing.assert_allclose(a.priors_, b.priors_, rtol=1e-12)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), rtol=1e-8, atol=1e-10)
    if not isinstance(model, (linbook.DiagonalLDA, linbook.NearestShrunkenCentroids)):
        # MLE models: a constant weight changes nothing (the two above divide by W - C, so it does)
        np.testing.assert_allclose(clone(model).fit(X, y, sample_weight=np.full(len(y), 2.5)).predict_proba(X),
                                   clone(model).fit(X, y).predict_proba(X), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("vs", [0.0, 1e-9])
def test_weighted_naive_bayes_equals_sklearn(vs):
    X, y = DATA["iris"]
    w = np.random.default_rng(1).uniform(0.1, 3.0, len(y))
    a = linbook.GaussianNaiveBayes(var_smoothing=vs).fit(X, y, sample_weight=w)
    b = GaussianNB(var_smoothing=vs).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(a.means_, b.theta_, rtol=1e-12)
    np.testing.assert_allclose(a.priors_, b.class_prior_, rtol=1e-12)
    # var_smoothing adds var_smoothing * max Var(x_j): weighted here, unweighted in scikit-learn
    np.testing.assert_allclose(a.var_, b.var_, rtol=1e-12 if vs == 0 else 10 * vs)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), atol=1e-12 if vs == 0 else 1e-6)


def test_weighted_fits_equal_the_weighted_textbook_formulas():
    X, y = _synthetic(seed=2)
    w = np.random.default_rng(2).uniform(0.0, 2.0, len(y))
    W = np.array([w[y == c].sum() for c in range(3)])
    mu = np.array([w[y == c] @ X[y == c] / W[c] for c in range(3)])
    covs = np.array([((X[y == c] - mu[c]) * w[y == c, None]).T @ (X[y == c] - mu[c]) / W[c] for c in range(3)])
    qda = linbook.QDA().fit(X, y, sample_weight=w)
    np.testing.assert_allclose(qda.priors_, W / W.sum(), rtol=1e-12)
    np.testing.assert_allclose(qda.means_, mu, rtol=1e-12)
    np.testing.assert_allclose(qda.covariances_, covs, rtol=1e-10)
    lda = linbook.LDA().fit(X, y, sample_weight=w)
    pooled = np.einsum("c,cij->ij", W, covs) / W.sum()
    np.testing.assert_allclose(lda.covariance_, pooled, rtol=1e-10)
    np.testing.assert_allclose(lda.betas_, np.linalg.solve(pooled, mu.T).T, rtol=1e-9)
    rda = linbook.RDA(shrinkage=0.4).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(rda.covariance_, 0.4 * np.diag(np.diag(pooled)) + 0.6 * pooled, rtol=1e-10)
    with pytest.raises(ValueError, match="positive weight"):
        linbook.LDA().fit(X, y, sample_weight=np.where(y == 2, 0.0, 1.0))


# ------------------------------------------------------------------ contract, missing values, scale
@pytest.mark.parametrize("model", CLASSIFIERS + [linbook.FisherLDA()], ids=lambda m: type(m).__name__)
def test_not_fitted_and_feature_names(model):
    pd = pytest.importorskip("pandas")
    X, y = DATA["iris"]
    for method in ["predict", "predict_proba", "decision_function", "transform"]:
        if hasattr(model, method):
            with pytest.raises(NotFittedError):
                getattr(clone(model), method)(X)
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    m = clone(model).fit(df, y)
    assert list(m.feature_names_in_) == ["a", "b", "c", "d"]
    with pytest.raises(ValueError, match="feature names"):
        (m.predict if hasattr(m, "predict") else m.transform)(df[["b", "a", "c", "d"]])


def test_diagonal_models_fit_with_missing_entries():
    X, y = DATA["wine"]
    Xn = X.copy()
    Xn[np.random.default_rng(3).random(X.shape) < 0.2] = np.nan
    nb = linbook.GaussianNaiveBayes(var_smoothing=0.0).fit(Xn, y)
    for c in range(3):
        np.testing.assert_allclose(nb.means_[c], np.nanmean(Xn[y == c], axis=0), rtol=1e-12)
        np.testing.assert_allclose(nb.var_[c], np.nanvar(Xn[y == c], axis=0), rtol=1e-10)
    d = linbook.DiagonalLDA().fit(Xn, y)
    R = Xn - d.means_[y]
    np.testing.assert_allclose(d.var_, np.nansum(R ** 2, axis=0) / ((~np.isnan(Xn)).sum(0) - 3), rtol=1e-10)
    assert np.all(np.isfinite(linbook.NearestShrunkenCentroids(shrink_threshold=1.0).fit(Xn, y).predict_proba(Xn)))
    Xn[y == 0, 4] = np.nan
    with pytest.raises(ValueError, match="no observed value of feature 4"):
        linbook.GaussianNaiveBayes().fit(Xn, y)


def test_joint_log_proba_is_the_log_joint_density():
    from scipy.stats import multivariate_normal
    X, y = _synthetic(seed=4)
    q = linbook.QDA().fit(X, y)
    ref = np.column_stack([np.log(q.priors_[c]) + multivariate_normal(q.means_[c], q.covariances_[c]).logpdf(X)
                           for c in range(3)])
    np.testing.assert_allclose(q.predict_joint_log_proba(X), ref, rtol=1e-10)
    np.testing.assert_allclose(q._joint_log_likelihood(X, exact=True), ref, rtol=1e-10)
    l = linbook.LDA().fit(X, y)
    ref = np.column_stack([np.log(l.priors_[c]) + multivariate_normal(l.means_[c], l.covariance_).logpdf(X)
                           for c in range(3)])
    np.testing.assert_allclose(l.predict_joint_log_proba(X), ref, rtol=1e-10)


def test_extreme_scales_attributes_and_far_rows():
    X, y = DATA["wine"]
    for model in CLASSIFIERS:
        m = clone(model).fit(X * 1e200, y)
        np.testing.assert_allclose(m.predict_proba(X * 1e200), clone(model).fit(X, y).predict_proba(X),
                                   atol=1e-9)
        assert np.all(np.isfinite(m.means_))
        for attr in ["covariance_", "covariances_", "var_", "variances_"]:
            if hasattr(type(m), attr):
                with pytest.raises(ValueError, match="not representable in float64"):
                    getattr(m, attr)
    for q in (linbook.QDA().fit(X, y), linbook.GaussianNaiveBayes().fit(X, y)):
        # rows ~1e200: the joint log-density (~-1e400) is not representable, the posterior's one-hot limit is
        with pytest.raises(ValueError, match="units used in fit"):
            q.predict_joint_log_proba(X[:20] * 1e200)
        limit = q.predict_proba(X[:20] * 1e4)
        assert np.all((limit == 0) | (limit == 1))
        np.testing.assert_array_equal(q.predict_proba(X[:20] * 1e200), limit)
        np.testing.assert_array_equal(q.predict(X[:20] * 1e300), q.predict(X[:20] * 1e4))
        # the row-scaled scores behind that limit are the model's scores / 4^e where both are representable, up to
        # a class-free term (GaussianNaiveBayes drops its quadratic there: the same posterior)
        exponent = np.frexp(np.max(np.abs(X[:20]), axis=1))[1]
        scaled = np.ldexp(q._row_scaled_log_density(X[:20], exponent), 2 * exponent[:, None])
        plain = q._log_density(X[:20], False)
        np.testing.assert_allclose(scaled - scaled[:, :1], plain - plain[:, :1], rtol=1e-10,
                                   atol=1e-10 * np.max(np.abs(plain)))


@pytest.mark.parametrize("model", [lambda: linbook.LDA(), lambda: linbook.RDA(shrinkage=0.3)])
@pytest.mark.parametrize("offset", [1e4, 1e8, 1e11])
def test_linear_discriminants_are_translation_invariant(model, offset):
    """A feature offset by 1e8 made x' Sigma^-1 mu_c ~1e16 and the scores lost their class
    differences to rounding (16 % of predictions changed, silently); scores are now computed
    from the centre of the class means."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(500, 3))
    y = np.argmax(X @ rng.normal(size=(3, 3)) * 2 + rng.gumbel(size=(500, 3)), axis=1)
    ref = model().fit(X, y)
    Xo = X.copy()
    Xo[:, 1] += offset
    m = model().fit(Xo, y)
    tol = 1e-12 * offset * 10                       # the data themselves are rounded at eps * offset
    np.testing.assert_allclose(m.predict_proba(Xo), ref.predict_proba(X), atol=max(tol, 1e-9))


# ---------------------------------------------------------------- the multivariate normal
def _spd(d, seed=0):
    A = np.random.default_rng(seed).normal(size=(d, d))
    return A @ A.T + d * np.eye(d)


@pytest.mark.parametrize("d", [1, 3, 6])
def test_logpdf_entropy_match_scipy(d):
    rng = np.random.default_rng(d)
    S, mu = _spd(d, d), rng.normal(size=d)
    X = rng.normal(size=(20, d))
    ref = stats.multivariate_normal(mu, S)
    np.testing.assert_allclose(mvn_logpdf(X, mu, S), ref.logpdf(X), rtol=1e-10)
    np.testing.assert_allclose(mvn_entropy(S), ref.entropy(), rtol=1e-12)
    d2 = mahalanobis(X, mu, S)
    np.testing.assert_allclose(d2, np.einsum("ij,ij->i", X - mu, np.linalg.solve(S, (X - mu).T).T), rtol=1e-10)
    assert isinstance(mahalanobis(X[0], mu, S), float)


def test_sampling_moments():
    S, mu = _spd(3), np.array([1.0, -2.0, 0.5])
    X = mvn_sample(mu, S, 200_000, random_state=0)
    np.testing.assert_allclose(X.mean(0), mu, atol=0.05)
    np.testing.assert_allclose(np.cov(X.T), S, rtol=0.03)
    np.testing.assert_array_equal(X[:5], mvn_sample(mu, S, 200_000, random_state=0)[:5])


@pytest.mark.parametrize("bad", [np.zeros((2, 2)), np.array([[1.0, 2.0], [2.0, 1.0]]), np.ones((2, 3)),
                                 np.array([[np.nan, 0], [0, 1.0]])])
def test_bad_covariance(bad):
    with pytest.raises(ValueError):
        mvn_cholesky(bad)


def test_exported():
    assert linbook.mvn_logpdf is mvn_logpdf


@pytest.mark.parametrize("call", [
    lambda: mvn_logpdf(np.array([[np.nan, 0.0]]), np.zeros(2), np.eye(2)),
    lambda: mvn_logpdf(np.ones((3, 3)), np.zeros(2), np.eye(2)),
    lambda: mahalanobis(np.ones((3, 2)), np.zeros(3), np.eye(2)),
    lambda: mahalanobis(np.ones((3, 2)), np.zeros(2), chol=np.zeros((2, 2))),
    lambda: mahalanobis(np.ones((3, 2)), np.zeros(2)),
    lambda: mvn_sample(np.zeros(2), np.eye(2), -1),
    lambda: mvn_sample(np.zeros(2), np.eye(2), 2.5),       # refused, not truncated to 2
    lambda: mvn_sample(np.zeros(3), np.eye(2), 5),
])
def test_bad_points_get_clear_errors(call):
    with pytest.raises(ValueError, match="must|give"):
        call()


def test_far_points_round_to_minus_infinity_not_nan():
    assert mvn_logpdf(np.array([1e300, 1e300]), np.zeros(2), np.eye(2)) == -np.inf
    np.testing.assert_allclose(mvn_logpdf(np.array([3e150, 0.0]), np.zeros(2), np.eye(2)),
                               -0.5 * 9e300 - np.log(2 * np.pi), rtol=1e-12)


def _unit_scaled_problem():
    """A well-conditioned 3-D Gaussian, and the same one with its features in units 1e-8, 1 and 1e8 apart."""
    rng = np.random.default_rng(3)
    A = rng.standard_normal((3, 3))
    cov = A @ A.T + np.eye(3)
    mean = rng.standard_normal(3)
    X = mean + rng.standard_normal((5, 3)) @ np.linalg.cholesky(cov).T
    s = np.array([1e-8, 1.0, 1e8])
    return X, mean, cov, s, (X * s, mean * s, cov * np.outer(s, s))


def test_features_in_different_units_are_not_singular():
    """cov of features measured in units 1e16 apart has condition number ~1e32, but its correlation
    matrix is that of the unscaled problem: the density is the unscaled one minus sum(log s), not a
    'numerically singular' refusal."""
    X, mean, cov, s, (Xs, ms, covs) = _unit_scaled_problem()
    np.testing.assert_allclose(mvn_logpdf(Xs, ms, covs), mvn_logpdf(X, mean, cov) - np.log(s).sum(), rtol=1e-12)
    np.testing.assert_allclose(mahalanobis(Xs, ms, covs), mahalanobis(X, mean, cov), rtol=1e-10)
    np.testing.assert_allclose(mvn_entropy(covs), mvn_entropy(cov) + np.log(s).sum(), rtol=1e-12)
    L = mvn_cholesky(covs)
    np.testing.assert_allclose(L, np.linalg.cholesky(cov) * s[:, None], rtol=1e-12, atol=0)
    from linbook.estimation import mvn_log_likelihood
    np.testing.assert_allclose(mvn_log_likelihood(Xs, ms, covs),
                               mvn_log_likelihood(X, mean, cov) - len(X) * np.log(s).sum(), rtol=1e-12)


@pytest.mark.parametrize("scale", [1e-30, 1e-8, 1.0, 1e30])
def test_asymmetric_covariance_refused_at_every_scale(scale):
    """[[1, 0.5], [0, 1]] * scale is not symmetric whatever the scale; mvn_log_likelihood used an
    absolute tolerance (atol=1e-12) and took it for symmetric below ~1e-12, reading its lower triangle."""
    from linbook.estimation import mvn_log_likelihood
    cov = np.array([[1.0, 0.5], [0.0, 1.0]]) * scale
    for call in (lambda: mvn_logpdf(np.zeros(2), np.zeros(2), cov),
                 lambda: mvn_log_likelihood(np.zeros((1, 2)), np.zeros(2), cov)):
        with pytest.raises(ValueError, match="symmetric"):
            call()


def test_asymmetry_in_a_small_variance_block_is_refused():
    """An asymmetry among features of variance ~1 is not rounding because another feature has variance 1e10
    (the check was relative to the largest entry: this one passed and the lower triangle's 0 was used)."""
    cov = np.diag([1e10, 1.0, 1.0])
    cov[1, 2] = 0.5                          # cov[2, 1] stays 0: the lower triangle would read 0
    with pytest.raises(ValueError, match="symmetric"):
        mvn_cholesky(cov)


@pytest.mark.parametrize("make", ["LDA", "QDA", "GaussianNaiveBayes", "DiagonalLDA", "NearestShrunkenCentroids"])
def test_predict_proba_is_exp_of_predict_log_proba_on_near_and_far_rows(make):
    """predict_proba (the softmax of the posterior scores) equals exp(predict_log_proba) to rounding, also on
    far rows (1e100, 1e145: the one-hot limit) and rows with NaN features (marginalised)."""
    import linbook
    rng = np.random.default_rng(44)
    X = rng.standard_normal((300, 4)) + np.repeat(np.eye(3, 4) * 2, 100, axis=0)
    y = np.repeat([0, 1, 2], 100)
    m = getattr(linbook, make)().fit(X, y)
    Xn = np.vstack([rng.standard_normal((40, 4)), 1e100 * rng.standard_normal((3, 4)), 1e145 * rng.standard_normal((3, 4)),
                    [[np.nan, 0.5, 1.0, 2.0]]])
    P, L = m.predict_proba(Xn), m.predict_log_proba(Xn)
    assert np.all(np.isfinite(P))
    np.testing.assert_allclose(P, np.exp(L), rtol=1e-13, atol=1e-300)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-14)


@pytest.mark.parametrize("labels, shown", [((0, 1), "class 0 of y"), (("a", "b"), "class 'a' of y"),
                                           ((2.0, 7.0), "class 2.0 of y")])
@pytest.mark.parametrize("model", ["LDA", "QDA", "GaussianNaiveBayes"])
def test_errors_name_a_class_as_it_was_written_in_y(model, labels, shown):
    """A class of weight 0 is named as the user wrote it, not by numpy's repr of its scalar (``np.int64(0)``)."""
    import linbook

    X = np.random.default_rng(0).standard_normal((20, 3))
    y = np.array([labels[0]] * 10 + [labels[1]] * 10)
    weights = np.r_[np.zeros(10), np.ones(10)]
    with pytest.raises(ValueError) as err:
        getattr(linbook, model)().fit(X, y, sample_weight=weights)
    assert shown in str(err.value) and "np." not in str(err.value)
