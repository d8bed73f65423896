"""Gaussian classifiers: fit + predict_proba on 200k x 50, 5 classes, against scikit-learn.

linbook's classifiers have one configuration each (the default), timed against the
scikit-learn configuration that fits the *same* model, in its default and its fastest
form, so the ratio is never bought with a different model:

* ``linbook.LDA()`` (pooled MLE covariance) = ``LinearDiscriminantAnalysis(solver="lsqr")``
  and ``(solver="eigen")``; the default ``solver="svd"`` fits the same posteriors through an
  SVD of the data and is shown for reference.
* ``linbook.QDA()`` (per-class MLE, ``1/N_c``) = ``QuadraticDiscriminantAnalysis(solver="eigen")``,
  its fastest solver for this model (an eigendecomposition of each D x D class covariance
  instead of the default ``"svd"``'s SVD of each N_c x D class block; both use ``1/N_c``).
* ``linbook.GaussianNaiveBayes()`` = ``GaussianNB()`` (one configuration).

``kind`` says which scikit-learn configuration a row compares with: ``default`` (both
libraries as users get them) or ``tuned`` (scikit-learn's fastest solver for the same
model; linbook has a single configuration). The quality note is the largest difference
of the predicted probabilities. The numba loops compile in the harness's warm-up run
(once per installation; cached on disk afterwards).
"""

import numpy as np
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import NearestCentroid

from benchmarks.run import Case, FastestPeer
import linbook


def _data():
    rng = np.random.default_rng(0)
    N, D, C = 200_000, 50, 5
    y = rng.integers(0, C, N)
    A = rng.normal(size=(C, D, D)) / np.sqrt(D)
    X = rng.normal(size=(N, D))
    for c in range(C):
        m = y == c
        X[m] = X[m] @ (np.eye(D) + 0.5 * A[c]) + rng.normal(size=D)
    return X, y


def _run(make):
    def f(data):
        X, y = data
        return make().fit(X, y).predict_proba(X)
    return f


def _maxdiff(data, a, b):
    return f"max |p_linbook - p_sklearn| = {np.abs(a - b).max():.1e}"


_LDA, _QDA = "lda fit+predict_proba 200k x 50, C=5", "qda fit+predict_proba 200k x 50, C=5"
CASES = [
    Case(_LDA, _data, _run(linbook.LDA), _run(LinearDiscriminantAnalysis),
         "sklearn LDA() (svd)", compare=_maxdiff, kind="default"),
    Case(_LDA, _data, _run(linbook.LDA), _run(lambda: LinearDiscriminantAnalysis(solver="lsqr")),
         "sklearn LDA(solver='lsqr')", target=0.6, compare=_maxdiff, kind="tuned"),
    Case(_LDA, _data, _run(linbook.LDA), _run(lambda: LinearDiscriminantAnalysis(solver="eigen")),
         "sklearn LDA(solver='eigen')", target=0.6, compare=_maxdiff, kind="tuned"),
    Case(_QDA, _data, _run(linbook.QDA), _run(QuadraticDiscriminantAnalysis),
         "sklearn QDA() (svd)", compare=_maxdiff, kind="default"),
    Case(_QDA, _data, _run(linbook.QDA), _run(lambda: QuadraticDiscriminantAnalysis(solver="eigen")),
         "sklearn QDA(solver='eigen')", target=0.6, compare=_maxdiff, kind="tuned"),
    Case("naive bayes fit+predict_proba 200k x 50, C=5", _data, _run(linbook.GaussianNaiveBayes),
         _run(GaussianNB), "sklearn GaussianNB()", target=1.0, compare=_maxdiff, kind="default"),
]


# -------- session 14 (issue 22): 50 classes in 500 dimensions, and predictions on 1e6 new rows
def _many_classes(n=50_000, d=500, C=50, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, C, n)
    X = rng.standard_normal((n, d)) + 3 * rng.standard_normal((C, d))[y] / np.sqrt(d)
    return X, y


def _agreement(data, a, b):
    return f"prediction agreement {np.mean(a == b):.4f}"


def _predicted(make_lin, make_ref, method):
    """``(fitted linbook, fitted sklearn, 1e6 new rows)`` for a row timing ``method`` on the new rows."""
    def setup():
        X, y = _many_classes(5000, 20, 10)
        Xn = np.random.default_rng(9).standard_normal((1_000_000, 20))
        return make_lin().fit(X, y), make_ref().fit(X, y), Xn
    return setup, (lambda D: getattr(D[0], method)(D[2])), (lambda D: getattr(D[1], method)(D[2]))


_MANY = "fit+predict_proba 50k x 500, C=50"
CASES += [
    Case(f"qda {_MANY} default vs fastest peer", _many_classes, _run(linbook.QDA),
         FastestPeer({f"sklearn QDA({s})": _run(lambda s=s: QuadraticDiscriminantAnalysis(solver=s))
                      for s in ("svd", "eigen")}), "fastest sklearn QDA solver", target=1.0, compare=_maxdiff),
    Case(f"naive bayes {_MANY} default", _many_classes, _run(linbook.GaussianNaiveBayes), _run(GaussianNB),
         "sklearn GaussianNB()", target=1.0, compare=_maxdiff),
    Case("nearest shrunken centroids fit+predict 50k x 500, C=50, threshold 1 default", _many_classes,
         lambda D: linbook.NearestShrunkenCentroids(shrink_threshold=1.0).fit(*D).predict(D[0]),
         lambda D: NearestCentroid(shrink_threshold=1.0, priors="empirical").fit(*D).predict(D[0]),
         "sklearn NearestCentroid(shrink_threshold=1, priors='empirical')", target=1.0, compare=_agreement),
]
for _name, _lin, _ref in [("lda", linbook.LDA, lambda: LinearDiscriminantAnalysis(solver="lsqr")),
                          ("qda", linbook.QDA, QuadraticDiscriminantAnalysis),
                          ("naive bayes", linbook.GaussianNaiveBayes, GaussianNB)]:
    for _method in ("predict_proba", "predict"):
        _setup, _l, _r = _predicted(_lin, _ref, _method)
        CASES.append(Case(f"{_name} {_method} default 1e6 x 20, C=10", _setup, _l, _r, f"sklearn {_method}",
                          target=1.0, repeat=7,
                          compare=lambda D, a, b: f"max|diff| {np.max(np.abs(np.asarray(a, float) - b)):.1e}"))
