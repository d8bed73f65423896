"""Perceptron: the compiled textbook loop against scikit-learn's Perceptron at equal epochs.

Like for like: both start from w = 0, b = 0, use learning rate 1, count
``y (w.x + b) <= 0`` as a mistake and run at most 5 epochs, visiting the samples in a fresh
random order every epoch (``shuffle=True``; one case without shuffling, where the two
produce the same weights). linbook's parameters are its defaults except ``max_iter=5``
(equal epochs). linbook stops after an epoch without mistakes, as the textbook algorithm
does, while scikit-learn with ``tol=None`` always runs 5; the quality column shows the
epochs each ran and the training accuracy of both.
"""

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Perceptron as SkPerceptron

from benchmarks.run import Case
from linbook import Perceptron
from linbook.datasets import make_separable


def setup(margin=0.02):
    X, y, _ = make_separable(100_000, 50, margin=margin, b=0.1, random_state=0)
    return X, y


def setup_dense():
    return setup(margin=0.01)


def setup_noisy():
    """Separable data with 3 % of the labels flipped: every epoch has mistakes."""
    X, y = setup()
    flip = np.random.default_rng(1).random(len(y)) < 0.03
    return X, np.where(flip, -y, y)


def setup_sparse(n=100_000, d=50_000, per_row=50):
    rng = np.random.default_rng(2)
    X = sp.csr_matrix((rng.exponential(1.0, n * per_row), rng.integers(0, d, n * per_row),
                       np.arange(0, n * per_row + 1, per_row)), shape=(n, d))
    X.sum_duplicates()
    y = np.where(X @ rng.standard_normal(d) > 0, 1, -1)
    y[rng.random(n) < 0.03] *= -1
    return X, y


def setup_noisy_wide():
    """50k x 100 Gaussian features, labels of a random hyperplane with 5 % flipped."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((50_000, 100))
    y = np.where(X @ rng.standard_normal(100) > 0, 1, -1)
    y[rng.random(50_000) < 0.05] *= -1
    return X, y


def _fit(model, data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(*data)


def compare(data, a, b):
    X, y = data
    return (f"train acc linbook {a.score(X, y):.5f} ({a.n_iter_} epochs, {a.n_mistakes_} updates), "
            f"sklearn {b.score(X, y):.5f} ({b.n_iter_} epochs)")


def _linbook(**kw):
    return lambda d: _fit(Perceptron(max_iter=5, random_state=0, **kw), d)


def _sklearn(**kw):
    return lambda d: _fit(SkPerceptron(max_iter=5, tol=None, random_state=0, **kw), d)


CASES = [
    Case(name="perceptron default vs default 50k x 100, 5% label noise", setup=setup_noisy_wide,
         linbook=lambda d: _fit(Perceptron(random_state=0), d),
         reference=lambda d: _fit(SkPerceptron(random_state=0), d), reference_name="sklearn Perceptron()",
         target=1.0, compare=compare, repeat=5,
         notes="both stop when the loss of an epoch stops improving (tol=1e-3, 5 epochs)"),
    Case(name="perceptron default 100k x 50, 3% label noise, 5 epochs", setup=setup_noisy,
         linbook=_linbook(), reference=_sklearn(), reference_name="sklearn Perceptron",
         target=1.0, compare=compare, repeat=5, notes="every epoch has thousands of mistakes"),
    Case(name="perceptron default 100k x 50, 5 epochs", setup=setup, linbook=_linbook(),
         reference=_sklearn(), reference_name="sklearn Perceptron", target=1.0, compare=compare, repeat=5),
    Case(name="perceptron tuned (shuffle=False) 100k x 50, 5 epochs", setup=setup, linbook=_linbook(shuffle=False),
         reference=_sklearn(shuffle=False), reference_name="sklearn Perceptron", target=1.0,
         compare=lambda d, a, b: compare(d, a, b) + (
             f"; max |w_lb - w_sk| {np.abs(a.coef_ - b.coef_).max():.1e}"), repeat=5),
    Case(name="perceptron default 100k x 50, 5 epochs, margin 0.01 (dense mistakes)", setup=setup_dense,
         linbook=_linbook(), reference=_sklearn(), reference_name="sklearn Perceptron", target=1.0,
         compare=compare, repeat=5),
    Case(name="perceptron default sparse CSR 100k x 50k 0.1%, 3% label noise, 5 epochs", setup=setup_sparse,
         linbook=_linbook(), reference=_sklearn(), reference_name="sklearn Perceptron on CSR", target=1.0,
         compare=compare, repeat=5),
]
