"""LDA and QDA: fit + predict_proba on 200k x 50, 5 classes, against scikit-learn.

Equal settings: linbook.LDA is the pooled-MLE model of LinearDiscriminantAnalysis(solver="lsqr")
and linbook.QDA the per-class MLE model of QuadraticDiscriminantAnalysis() (solver "svd",
reg_param=0); the quality note is the largest difference of the predicted probabilities.
"""

import numpy as np
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis

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
    return X, y


def _run(model):
    def f(data):
        X, y = data
        return model.fit(X, y).predict_proba(X)
    return f


def _maxdiff(data, a, b):
    return f"max |p_linbook - p_sklearn| = {np.abs(a - b).max():.1e}"


CASES = [
    Case("lda fit+predict_proba 200k x 50, C=5", _data, _run(linbook.LDA()),
         _run(LinearDiscriminantAnalysis(solver="lsqr")), "sklearn LDA(lsqr)", target=0.6, compare=_maxdiff),
    Case("qda fit+predict_proba 200k x 50, C=5", _data, _run(linbook.QDA()),
         _run(QuadraticDiscriminantAnalysis()), "sklearn QDA(svd)", target=0.6, compare=_maxdiff),
]
