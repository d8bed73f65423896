"""Self-checks of chapter 10's exercises: the reference passes, plausible wrong answers fail."""

import numpy as np
from sklearn.model_selection import KFold

import linbook
import linbook.exercises as ex


def test_loo_residuals():
    ref = lambda X, y: linbook.loocv_least_squares(X, y, fit_intercept=False, return_residuals=True)[1]
    assert ex.check("selection.loo-residuals", ref, verbose=False)
    def ordinary(X, y):                     # forgets the 1/(1 - h_ii) inflation
        w = np.linalg.lstsq(X, y, rcond=None)[0]
        return y - X @ w
    assert not ex.check("selection.loo-residuals", ordinary, verbose=False)
    def times(X, y):                        # multiplies instead of divides
        Q, _ = np.linalg.qr(X)
        return (y - Q @ (Q.T @ y)) * (1 - np.sum(Q ** 2, 1))
    assert not ex.check("selection.loo-residuals", times, verbose=False)


def test_mutual_information():
    assert ex.check("selection.mutual-information", linbook.mutual_information, verbose=False)
    def base2(x, y):                        # bits instead of nats
        return linbook.mutual_information(x, y) / np.log(2)
    assert not ex.check("selection.mutual-information", base2, verbose=False)
    def note_literal(x, y):                 # the note's \sum{y_i} read as a weight y
        _, a = np.unique(x, return_inverse=True); _, b = np.unique(y, return_inverse=True)
        P = np.zeros((a.max() + 1, b.max() + 1)); np.add.at(P, (a, b), 1.0); P /= len(a)
        Q = np.outer(P.sum(1), P.sum(0)); nz = P > 0
        return float(np.sum((np.arange(P.shape[1])[None, :] * P * np.log(np.where(nz, P, 1) / np.where(nz, Q, 1)))))
    assert not ex.check("selection.mutual-information", note_literal, verbose=False)


def test_kfold():
    ref = lambda n, k: list(KFold(k).split(np.zeros(n)))
    assert ex.check("selection.kfold", ref, verbose=False)
    def uneven(n, k):                       # last fold takes the remainder
        size = n // k
        out = []
        for j in range(k):
            te = np.arange(j * size, n if j == k - 1 else (j + 1) * size)
            out.append((np.setdiff1d(np.arange(n), te), te))
        return out
    assert not ex.check("selection.kfold", uneven, verbose=False)
    def train_is_test(n, k):
        return [(te, te) for _, te in KFold(k).split(np.zeros(n))]
    assert not ex.check("selection.kfold", train_is_test, verbose=False)
