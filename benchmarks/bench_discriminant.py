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

The quality note is the largest difference of the predicted probabilities. The numba
loops are compiled in ``setup`` (once per installation; cached on disk afterwards).
"""

import numpy as np
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis
from sklearn.naive_bayes import GaussianNB

from benchmarks.run import Case
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
    # compile (or load from the disk cache) the kernels outside the timed region
    linbook.GaussianNaiveBayes().fit(X[:20_000], y[:20_000])
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
    Case(_LDA, _data, _run(linbook.LDA), _run(lambda: LinearDiscriminantAnalysis(solver="lsqr")),
         "sklearn LDA(lsqr)", target=0.6, compare=_maxdiff, repeat=5),
    Case(_LDA, _data, _run(linbook.LDA), _run(lambda: LinearDiscriminantAnalysis(solver="eigen")),
         "sklearn LDA(eigen)", target=0.6, compare=_maxdiff, repeat=5),
    Case(_LDA, _data, _run(linbook.LDA), _run(LinearDiscriminantAnalysis),
         "sklearn LDA() default (svd)", compare=_maxdiff, repeat=5),
    Case(_QDA, _data, _run(linbook.QDA), _run(lambda: QuadraticDiscriminantAnalysis(solver="eigen")),
         "sklearn QDA(eigen), fastest", target=0.6, compare=_maxdiff, repeat=5),
    Case(_QDA, _data, _run(linbook.QDA), _run(QuadraticDiscriminantAnalysis),
         "sklearn QDA() default (svd)", compare=_maxdiff, repeat=5),
    Case("gaussian naive bayes fit+predict_proba 200k x 50, C=5", _data, _run(linbook.GaussianNaiveBayes),
         _run(GaussianNB), "sklearn GaussianNB()", target=1.0, compare=_maxdiff, repeat=5),
]
