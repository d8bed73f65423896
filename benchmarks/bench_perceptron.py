"""Perceptron: 5 epochs on 100k x 50 separable data, linbook against scikit-learn.

Like for like: both start from w = 0, b = 0, use learning rate 1, count
``y (w.x + b) <= 0`` as a mistake and run at most 5 epochs, visiting the samples in a fresh
random order every epoch (``shuffle=True``; a second case without shuffling, where the two
produce the same weights). linbook stops after an epoch without mistakes, as the textbook
algorithm does, while scikit-learn with ``tol=None`` always runs 5; the quality column shows
the epochs each ran and the training accuracy of both.
"""

import warnings

import numpy as np
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


def _fit(model, data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(*data)


def compare(data, a, b):
    X, y = data
    return (f"train acc linbook {a.score(X, y):.5f} ({a.n_iter_} epochs, {a.n_mistakes_} updates), "
            f"sklearn {b.score(X, y):.5f} ({b.n_iter_} epochs)")


CASES = [
    Case(
        name="perceptron 100k x 50, 5 epochs, shuffle",
        setup=setup,
        linbook=lambda d: _fit(Perceptron(max_epochs=5, shuffle=True, random_state=0), d),
        reference=lambda d: _fit(SkPerceptron(max_iter=5, tol=None, shuffle=True, random_state=0), d),
        reference_name="sklearn Perceptron",
        target=1.0,
        compare=compare,
        repeat=5,
    ),
    Case(
        name="perceptron 100k x 50, 5 epochs, no shuffle",
        setup=setup,
        linbook=lambda d: _fit(Perceptron(max_epochs=5, shuffle=False), d),
        reference=lambda d: _fit(SkPerceptron(max_iter=5, tol=None, shuffle=False), d),
        reference_name="sklearn Perceptron",
        target=1.0,
        compare=lambda d, a, b: compare(d, a, b) + (
            f"; max |w_lb - w_sk| {np.abs(a.coef_ - b.coef_.ravel()).max():.1e}"),
        repeat=5,
    ),
    Case(
        name="perceptron 100k x 50, 5 epochs, margin 0.01 (dense mistakes)",
        setup=setup_dense,
        linbook=lambda d: _fit(Perceptron(max_epochs=5, shuffle=True, random_state=0), d),
        reference=lambda d: _fit(SkPerceptron(max_iter=5, tol=None, shuffle=True, random_state=0), d),
        reference_name="sklearn Perceptron",
        target=None,
        compare=compare,
        repeat=3,
        notes="report only: ~4.7k updates, each costing a few numpy calls; the per-sample "
              "Cython loop of scikit-learn wins when mistakes are this dense",
    ),
]
