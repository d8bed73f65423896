"""Seeded data generators used across the book.

Every generator takes ``random_state`` (an int seed or a ``numpy.random.Generator``)
and draws only through ``np.random.default_rng``, so a notebook that passes a seed
gets the same data on every machine.

Real data sets, where a chapter wants them, ship as small files in
``linbook/data/`` with their provenance and licence in ``linbook/data/README.md``;
load them with :func:`load_csv`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = [
    "as_rng",
    "make_gaussian_classes",
    "make_separable",
    "make_regression",
    "load_csv",
    "DATA_DIR",
]

DATA_DIR = Path(__file__).resolve().parent / "data"


def as_rng(random_state=None):
    """Return a ``numpy.random.Generator`` from a seed, a Generator, or None.

    Derived in: chapter "Estimation: MLE, MAP and Bayes" § "Using linbook" (the seeding convention).
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        raise TypeError("linbook uses numpy.random.Generator; pass an int seed or np.random.default_rng(seed)")
    return np.random.default_rng(random_state)


def make_gaussian_classes(n_per_class, means, covs, *, priors=None, random_state=None):
    """Samples from Gaussian classes with given means and covariances.

    Parameters
    ----------
    n_per_class : int or sequence of int
        Samples per class; with ``priors`` given, ``n_per_class`` is the total
        and class sizes are drawn from a multinomial.
    means : array_like, shape (K, D)
    covs : array_like, shape (K, D, D) or (D, D)
        One covariance per class, or one shared covariance (the LDA setting).
    priors : array_like, shape (K,), optional
    random_state : int or Generator

    Returns
    -------
    X : ndarray, shape (N, D)
    y : ndarray of int, shape (N,)
        Class index ``0..K-1``.

    Derived in: chapter "Gaussian models and GDA" § "Gaussian discriminant analysis" (the generative model it samples).
    """
    rng = as_rng(random_state)
    means = np.atleast_2d(np.asarray(means, dtype=float))
    k, d = means.shape
    covs = np.asarray(covs, dtype=float)
    if covs.ndim == 2:
        covs = np.broadcast_to(covs, (k, d, d))
    if covs.shape != (k, d, d):
        raise ValueError(f"covs must have shape ({k}, {d}, {d}) or ({d}, {d}); got {covs.shape}")
    if priors is not None:
        counts = rng.multinomial(int(n_per_class), np.asarray(priors, dtype=float))
    else:
        counts = np.broadcast_to(np.asarray(n_per_class, dtype=int), (k,))
    X = np.vstack([rng.multivariate_normal(means[c], covs[c], size=int(counts[c])) for c in range(k)])
    y = np.repeat(np.arange(k), counts)
    return X, y


def make_separable(n_samples=100, n_features=2, *, margin=0.5, radius=1.0, w=None, b=0.0,
                   labels=(-1, 1), random_state=None):
    """Linearly separable data with a guaranteed geometric margin.

    Points are drawn uniformly in the ball of ``radius``; those closer than
    ``margin`` to the hyperplane ``w.x + b = 0`` are pushed out to distance
    ``margin`` along the normal, so the true margin is at least ``margin``
    and the data radius at most ``radius + margin``.

    Returns
    -------
    X : ndarray (n_samples, n_features)
    y : ndarray with values in ``labels`` (negative side first)
    w : ndarray, unit normal of the separating hyperplane

    Derived in: chapter "The perceptron" § "Convergence: Novikoff's bound" (data with a known margin).
    """
    rng = as_rng(random_state)
    if w is None:
        w = rng.standard_normal(n_features)
    w = np.asarray(w, dtype=float)
    w = w / np.linalg.norm(w)
    direction = rng.standard_normal((n_samples, n_features))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    X = direction * radius * rng.uniform(0, 1, size=(n_samples, 1)) ** (1.0 / n_features)
    s = X @ w + b
    side = np.where(s >= 0, 1.0, -1.0)
    push = np.where(np.abs(s) < margin, side * margin - s, 0.0)
    X = X + push[:, None] * w
    y = np.where(side > 0, labels[1], labels[0])
    return X, y, w


def make_regression(n_samples=100, n_features=1, *, coef=None, intercept=0.0, noise="gaussian",
                    scale=1.0, x_low=-1.0, x_high=1.0, random_state=None):
    """Linear-regression data ``y = X coef + intercept + noise`` with a chosen noise law.

    Parameters
    ----------
    noise : {"gaussian", "laplace", "student-t", "none"}
        ``scale`` is the standard deviation for Gaussian noise, the Laplace
        scale b (variance 2 b^2), or the scale of a t distribution with 2
        degrees of freedom (heavy tails, for outlier demonstrations).

    Returns
    -------
    X : ndarray (n_samples, n_features), uniform on [x_low, x_high]
    y : ndarray (n_samples,)
    coef : ndarray (n_features,)

    Derived in: chapter "Estimation: MLE, MAP and Bayes" § "Regularisation as a prior" (the noise laws).
    """
    rng = as_rng(random_state)
    X = rng.uniform(x_low, x_high, size=(n_samples, n_features))
    if coef is None:
        coef = rng.standard_normal(n_features)
    coef = np.asarray(coef, dtype=float).reshape(n_features)
    if noise == "gaussian":
        e = rng.normal(0.0, scale, n_samples)
    elif noise == "laplace":
        e = rng.laplace(0.0, scale, n_samples)
    elif noise == "student-t":
        e = scale * rng.standard_t(2, n_samples)
    elif noise == "none":
        e = np.zeros(n_samples)
    else:
        raise ValueError("noise must be 'gaussian', 'laplace', 'student-t' or 'none'")
    return X, X @ coef + intercept + e, coef


def load_csv(name):
    """Load ``linbook/data/<name>.csv`` as (header list, float ndarray).

    Provenance and licence of each file: ``linbook/data/README.md``.

    Derived in: not a derivation; data provenance in linbook/data/README.md.
    """
    path = DATA_DIR / f"{name}.csv"
    if not path.exists():
        available = sorted(p.stem for p in DATA_DIR.glob("*.csv"))
        raise FileNotFoundError(f"no data set {name!r}; available: {available}")
    with open(path, encoding="utf-8") as f:
        header = f.readline().strip().split(",")
    data = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    return header, data
