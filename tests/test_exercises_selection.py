"""Self-checks of chapter 10's exercises: the reference passes, plausible wrong answers fail."""

import numpy as np
import pytest
from sklearn.metrics import mutual_info_score
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


# --- loo-residuals: "no intercept added" is checked on a design without a column of ones --------------------
def loo_adds_intercept(X, y):             # centres X and y: right only when X holds a ones column
    Xc, yc = X - X.mean(0), y - y.mean()
    U = np.linalg.svd(Xc, full_matrices=False)[0][:, :np.linalg.matrix_rank(Xc)]
    return (yc - U @ (U.T @ yc)) / (1 - 1 / len(y) - np.sum(U ** 2, 1))


def test_loo_residuals_reject_an_intercept_of_their_own():
    r = ex.check("selection.loo-residuals", loo_adds_intercept, verbose=False)
    failed = {p.name: p.hint for p in r.properties if not p.passed}
    assert "adding no intercept" in failed["equals refitting without each sample"]


@pytest.mark.parametrize("fn", [
    lambda X, y: linbook.loocv_least_squares(X, y, fit_intercept=False, return_residuals=True)[1],
    lambda X, y: ((y - (Q := np.linalg.qr(X)[0]) @ (Q.T @ y)) / (1 - np.sum(Q ** 2, 1))).tolist(),
], ids=["linbook", "qr as a list"])
def test_loo_residuals_accept_right_answers(fn):
    assert ex.check("selection.loo-residuals", fn, verbose=False)


# --- mutual-information on labels that are not 0..k-1 ------------------------------------------------------
def mi_labels_as_indices(x, y):           # the table indexed by the labels: -1 wraps onto the largest label
    P = np.zeros((x.max() + 1, y.max() + 1))
    np.add.at(P, (x, y), 1)
    P /= len(x)
    Q = np.outer(P.sum(1), P.sum(0))
    nz = P > 0
    return float(np.sum(P[nz] * np.log(P[nz] / Q[nz])))


def mi_shifted(x, y):                     # labels shifted to start at 0: integers only
    return mi_labels_as_indices(x - x.min(), y - y.min())


def test_mutual_information_rejects_labels_used_as_indices():
    r = ex.check("selection.mutual-information", mi_labels_as_indices, verbose=False)
    (hint,) = [p.hint for p in r.properties if not p.passed]
    assert "not cells indexed by the labels themselves" in hint and "[-3, -1, 0, 2]" in hint


def test_mutual_information_needs_non_numeric_labels_too():
    """Exercise 10.2 says "two discrete 1-D arrays": string categories are discrete data (sklearn's
    mutual_info_score and the chapter's solution take them)."""
    r = ex.check("selection.mutual-information", mi_shifted, verbose=False)
    (hint,) = [p.hint for p in r.properties if not p.passed]
    assert "['a', 'b', 'c']" in hint and "your function raised" in hint


def mi_counter(x, y):                     # plain Python: counts of pairs of values
    from collections import Counter
    n, pxy, px, py = len(x), Counter(zip(x, y)), Counter(x), Counter(y)
    return sum(c / n * np.log(c * n / (px[a] * py[b])) for (a, b), c in pxy.items())


def mi_chapter(x, y):                     # the chapter's solution 10.2
    _, a = np.unique(x, return_inverse=True)
    _, b = np.unique(y, return_inverse=True)
    return mi_labels_as_indices(a, b)


@pytest.mark.parametrize("fn", [mutual_info_score, mi_counter, mi_chapter, linbook.mutual_information],
                         ids=["sklearn", "counter", "chapter", "linbook"])
def test_mutual_information_accepts_any_labels(fn):
    r = ex.check("selection.mutual-information", fn, verbose=False)
    assert r, r.report()


# --- kfold: KFold(k)'s folds, contiguous and in order (Exercise 10.3) ---------------------------------------
def kfold_strided(n, k):                  # sizes right, folds not contiguous
    return [(np.setdiff1d(np.arange(n), np.arange(j, n, k)), np.arange(j, n, k)) for j in range(k)]


def kfold_shuffled(n, k):
    tests = np.array_split(np.random.default_rng(0).permutation(n), k)
    return [(np.setdiff1d(np.arange(n), te), te) for te in tests]


def kfold_extras_last(n, k):              # contiguous, but the larger folds at the end
    return [(tr, te) for tr, te in reversed([(np.setdiff1d(np.arange(n), n - 1 - te), n - 1 - te)
                                             for _, te in KFold(k).split(np.zeros(n))])]


@pytest.mark.parametrize("fn", [kfold_strided, kfold_shuffled, kfold_extras_last], ids=lambda f: f.__name__)
def test_kfold_rejects_folds_other_than_kfolds(fn):
    r = ex.check("selection.kfold", fn, verbose=False)
    failed = [p.name for p in r.properties if not p.passed]
    assert failed and all(name.endswith("contiguous test folds in order, sizes differing by at most one")
                          for name in failed), r.report()


@pytest.mark.parametrize("fn", [
    lambda n, k: [(tr.tolist(), te.tolist()) for tr, te in KFold(k).split(np.zeros(n))],      # lists
    lambda n, k: [(tr[::-1], te[::-1]) for tr, te in KFold(k).split(np.zeros(n))],            # any order within
    lambda n, k: [(np.setdiff1d(np.arange(n), te), te) for te in np.array_split(np.arange(n), k)],
], ids=["lists", "reversed within folds", "array_split"])
def test_kfold_accepts_kfolds_folds_written_another_way(fn):
    r = ex.check("selection.kfold", fn, verbose=False)
    assert r, r.report()
