"""Self-checks for the exercises of chapter "Model and feature selection"."""

from __future__ import annotations

import numpy as np
from sklearn.metrics import mutual_info_score
from sklearn.model_selection import KFold

from linbook.exercises import Property, StudentError, close, exercise, has_shape
from linbook.selection import loocv_least_squares


@exercise("selection.loo-residuals", "Leave-one-out residuals of least squares from the hat matrix",
          returns="one residual per sample, shape (N,)")
def _loo_residuals(fn):
    rng = np.random.default_rng(0)
    X = np.column_stack([np.ones(30), rng.normal(size=(30, 3))])
    y = X @ [0.5, 1.0, -2.0, 0.0] + rng.normal(size=30)
    _, ref = loocv_least_squares(X, y, fit_intercept=False, return_residuals=True)
    out = np.asarray(fn(X, y), dtype=float)
    # and a design without a column of ones, far from the origin: "no intercept added" (Exercise 10.1), so a
    # function that centres X and y (an intercept of its own) differs there; on X with a ones column it cannot
    rng_n = np.random.default_rng(10)   # its own stream: the collinear data below stay as they were
    Xn = rng_n.normal(size=(20, 2)) + 3.0
    yn = Xn @ [0.5, -1.0] + rng_n.normal(size=20)
    _, refn = loocv_least_squares(Xn, yn, fit_intercept=False, return_residuals=True)
    ok_n = close(fn(Xn, yn), refn, rtol=1e-8, atol=1e-8)
    yield Property("returns N residuals", has_shape(out, (30,)), "one leave-one-out residual per sample")
    hint = "the LOO residual is the ordinary residual divided by (1 - h_ii)"
    if close(out, ref, rtol=1e-8, atol=1e-8) and not ok_n:
        hint = "right when X holds a column of ones, not without one: fit X as given, adding no intercept"
    yield Property("equals refitting without each sample", close(out, ref, rtol=1e-8, atol=1e-8) and ok_n, hint)
    # two nearly collinear columns: cond(X) ~ 2e6, so X^T X (cond ~ 4e12) keeps about 4 digits, and
    # residuals through its inverse are off by ~1e-4 (2 % on the smallest); a QR or SVD of X keeps ~8.
    # (Scaled columns alone test nothing: inverting X^T X is accurate under column scaling.)
    Xb = X.copy()
    Xb[:, 3] = Xb[:, 2] + 1e-6 * rng.normal(size=30)
    _, refb = loocv_least_squares(Xb, y, fit_intercept=False, return_residuals=True)
    yield Property("accurate for nearly collinear columns", close(fn(Xb, y), refb, rtol=1e-6, atol=1e-8),
                   "compute the leverages from a QR factorisation rather than inverting X^T X")


# Labels other than 0..k-1 ("two discrete 1-D arrays", Exercise 10.2): negative, far apart, not numbers. Why: a
# table indexed by the labels themselves (np.add.at(P, (x, y), 1)) passed on 0..k-1 and silently wrapped the
# label -1 onto the largest one.
_MI_LABELS = [
    (np.array([-3, -1, 0, 2]), np.array([7, 1000, -50])),
    (np.array([-1, 1]), np.array([-2, -1, 5, 9])),
    (np.array(["a", "b", "c"]), np.array(["lo", "mid", "hi"])),
]


def _mi_other_labels(fn):
    """(ok, problem): the function's MI on data labelled by ``_MI_LABELS``, against the plug-in MI."""
    rng = np.random.default_rng(11)
    for xs, ys in _MI_LABELS:
        a = rng.integers(0, len(xs), 300)
        b = np.where(rng.uniform(size=300) < 0.6, a % len(ys), rng.integers(0, len(ys), 300))
        x, y = xs[a], ys[b]
        where = f"labels {xs.tolist()} and {ys.tolist()}"
        try:
            ok = close(fn(x, y), mutual_info_score(x, y), rtol=1e-10, atol=1e-12)
        except StudentError as exc:   # e.g. string labels used as indices: say which labels, then what it raised
            return False, f"with {where}, {exc}"
        if not ok:
            return ok, f"wrong with {where}"
    return True, ""


@exercise("selection.mutual-information", "Mutual information of two discrete variables",
          returns="one number (nats)")
def _mi(fn):
    rng = np.random.default_rng(1)
    ok = True
    for _ in range(5):
        x = rng.integers(0, 4, 300)
        y = np.where(rng.uniform(size=300) < 0.6, x % 3, rng.integers(0, 3, 300))
        ok = ok and close(fn(x, y), mutual_info_score(x, y), rtol=1e-10, atol=1e-12)
    hint = "compare the empirical joint distribution with the product of its marginals; natural logarithms"
    if ok:
        ok, problem = _mi_other_labels(fn)
        if not ok:
            hint = ("the labels are any discrete values (negative, far apart, strings): count the pairs of "
                    f"distinct values, not cells indexed by the labels themselves ({problem})")
    yield Property("matches the plug-in MI on random discrete data", ok, hint)
    x = rng.integers(0, 3, 200)
    yield Property("independent constant gives 0", close(fn(x, np.zeros(200, int)), 0.0, rtol=1e-5, atol=1e-12),
                   "a constant variable shares no information")
    yield Property("MI(x, x) is the entropy of x", close(fn(x, x), mutual_info_score(x, x), rtol=1e-10, atol=1e-8),
                   "cells with p(x, y) = 0 contribute nothing: skip them instead of taking log 0")


@exercise("selection.kfold", "K-fold index split",
          returns="a list of k pairs (train_indices, test_indices)")
def _kfold(fn):
    for n, k in [(10, 3), (23, 5), (7, 7), (100, 10)]:
        folds = list(fn(n, k))
        tests = [np.asarray(t) for _, t in folds]
        trains = [np.asarray(tr) for tr, _ in folds]
        ok_count = len(folds) == k
        ok_part = ok_count and np.array_equal(np.sort(np.concatenate(tests)), np.arange(n))
        ok_train = ok_count and all(np.array_equal(np.sort(tr), np.setdiff1d(np.arange(n), te))
                                    for tr, te in zip(trains, tests))
        # Exercise 10.3 asks for KFold(k)'s folds: contiguous, in order, the n mod k extra samples in the first
        # ones. Sizes alone passed a strided split (0, 3, 6, 9) and a shuffled one.
        kfold = [te for _, te in KFold(k).split(np.zeros(n))]
        ok_blocks = ok_count and all(np.array_equal(np.sort(te), ref) for te, ref in zip(tests, kfold))
        yield Property(f"n={n}, k={k}: k folds whose test sets partition 0..n-1", bool(ok_part),
                       "every sample is in exactly one test fold")
        yield Property(f"n={n}, k={k}: training set = all other folds", bool(ok_train),
                       "train on the union of the k - 1 other folds")
        yield Property(f"n={n}, k={k}: contiguous test folds in order, sizes differing by at most one",
                       bool(ok_blocks),
                       "cut 0..n-1 into k consecutive runs, as KFold(k) does: the n mod k extra samples go "
                       "to the first folds")
