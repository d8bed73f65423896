"""Self-checks for the exercises of chapter "Model and feature selection"."""

from __future__ import annotations

import numpy as np
from sklearn.metrics import mutual_info_score

from linbook.exercises import Property, close, exercise, has_shape
from linbook.selection import loocv_least_squares


@exercise("selection.loo-residuals", "Leave-one-out residuals of least squares from the hat matrix",
          returns="one residual per sample, shape (N,)")
def _loo_residuals(fn):
    rng = np.random.default_rng(0)
    X = np.column_stack([np.ones(30), rng.normal(size=(30, 3))])
    y = X @ [0.5, 1.0, -2.0, 0.0] + rng.normal(size=30)
    _, ref = loocv_least_squares(X, y, fit_intercept=False, return_residuals=True)
    out = np.asarray(fn(X, y), dtype=float)
    yield Property("returns N residuals", has_shape(out, (30,)), "one leave-one-out residual per sample")
    yield Property("equals refitting without each sample", close(out, ref, rtol=1e-8, atol=1e-8),
                   "the LOO residual is the ordinary residual divided by (1 - h_ii)")
    # two nearly collinear columns: cond(X) ~ 2e6, so X^T X (cond ~ 4e12) keeps about 4 digits, and
    # residuals through its inverse are off by ~1e-4 (2 % on the smallest); a QR or SVD of X keeps ~8.
    # (Scaled columns alone test nothing: inverting X^T X is accurate under column scaling.)
    Xb = X.copy()
    Xb[:, 3] = Xb[:, 2] + 1e-6 * rng.normal(size=30)
    _, refb = loocv_least_squares(Xb, y, fit_intercept=False, return_residuals=True)
    yield Property("accurate for nearly collinear columns", close(fn(Xb, y), refb, rtol=1e-6, atol=1e-8),
                   "compute the leverages from a QR factorisation rather than inverting X^T X")


@exercise("selection.mutual-information", "Mutual information of two discrete variables",
          returns="one number (nats)")
def _mi(fn):
    rng = np.random.default_rng(1)
    ok = True
    for _ in range(5):
        x = rng.integers(0, 4, 300)
        y = np.where(rng.uniform(size=300) < 0.6, x % 3, rng.integers(0, 3, 300))
        ok = ok and close(fn(x, y), mutual_info_score(x, y), rtol=1e-10, atol=1e-12)
    yield Property("matches the plug-in MI on random discrete data", ok,
                   "compare the empirical joint distribution with the product of its marginals; natural logarithms")
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
        ok_train = ok_count and all(np.array_equal(np.sort(tr), np.setdiff1d(np.arange(n), te)) for tr, te in zip(trains, tests))
        sizes = [len(t) for t in tests]
        ok_size = ok_count and max(sizes) - min(sizes) <= 1
        yield Property(f"n={n}, k={k}: k folds whose test sets partition 0..n-1", bool(ok_part),
                       "every sample is in exactly one test fold")
        yield Property(f"n={n}, k={k}: training set = all other folds", bool(ok_train),
                       "train on the union of the k - 1 other folds")
        yield Property(f"n={n}, k={k}: fold sizes differ by at most one", bool(ok_size),
                       "spread the n mod k extra samples over the first folds")
