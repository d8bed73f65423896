"""Seeded data generators used across the book.

Every generator takes ``random_state`` (an int seed or a ``numpy.random.Generator``)
and draws only through ``np.random.default_rng``, so a notebook that passes a seed
gets the same data on every machine.

The small real data sets the chapters use are the ones scikit-learn ships (no download):
:func:`load` returns them as ``(X, y)`` (numpy arrays, or with ``as_frame=True`` a pandas
DataFrame with named columns and a Series) and :func:`load_csv` as ``(header, table)``. Their
provenance and licence are in the table :data:`REAL_DATASETS` and in :func:`load`'s docstring.
A data set that scikit-learn does not ship would live as a CSV file in ``linbook/data/``, with
its provenance and licence in ``linbook/data/README.md`` (none does today).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

# as_rng is public here too (its old import path)
from .base import Integral, Interval, StrOptions, as_rng, check_param_values

__all__ = [
    "as_rng",
    "make_gaussian_classes",
    "make_separable",
    "make_regression",
    "load",
    "load_csv",
    "available",
    "REAL_DATASETS",
    "DATA_DIR",
]

DATA_DIR = Path(__file__).resolve().parent / "data"

#: name -> (scikit-learn loader, what it is, provenance, licence). Used in the chapters named.
REAL_DATASETS = {
    "iris": ("load_iris", "150 iris flowers, 4 measurements (cm), 3 species (chapter 4)",
             "R. A. Fisher (1936), via the UCI Machine Learning Repository, as shipped by scikit-learn",
             "CC BY 4.0 (UCI)"),
    "wine": ("load_wine", "178 wines, 13 chemical measurements, 3 cultivars (chapter 9)",
             "Forina et al., PARVUS (1988), via the UCI Machine Learning Repository, as shipped by scikit-learn",
             "CC BY 4.0 (UCI)"),
    "breast_cancer": ("load_breast_cancer",
                      "569 breast-mass images, 30 nucleus features, malignant (0) / benign (1) (chapters 5, 10)",
                      "Wisconsin Diagnostic Breast Cancer, W. N. Street, W. H. Wolberg, O. L. Mangasarian "
                      "(1993), via the UCI Machine Learning Repository, as shipped by scikit-learn",
                      "CC BY 4.0 (UCI)"),
    "diabetes": ("load_diabetes",
                 "442 patients, 10 baseline variables (mean-centred, scaled), disease progression after "
                 "one year (chapter 2)",
                 "B. Efron, T. Hastie, I. Johnstone, R. Tibshirani, 'Least Angle Regression', Annals of "
                 "Statistics 32 (2004), as shipped by scikit-learn",
                 "distributed with scikit-learn (BSD-3-Clause); the authors published it for research use"),
    "digits": ("load_digits", "1797 handwritten digits as 8x8 images of 0..16 grey levels, 10 classes (chapter 9)",
               "E. Alpaydin, C. Kaynak, Optical Recognition of Handwritten Digits (1998), via the UCI "
               "Machine Learning Repository, as shipped by scikit-learn",
               "CC BY 4.0 (UCI)"),
}


def _finite(name, value, *, low=None, strict=False):
    """``value`` as a float array, or a ValueError naming ``name`` when it holds NaN/inf or is below ``low``."""
    try:
        if np.asarray(value).dtype.kind in "US":   # numpy would read "5" as 5.0
            raise TypeError
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError):   # a string, a ragged list, an object: numpy's message names nothing
        raise ValueError(f"{name} must be numbers; got {value!r}. Pass finite numbers for {name}.") from None
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite; got {a.ravel()[:6].tolist()}. Pass finite numbers for {name}.")
    if low is not None and (np.any(a <= low) if strict else np.any(a < low)):
        bound = f"> {low:g}" if strict else f">= {low:g}"
        raise ValueError(f"{name} must be {bound}; got {a.ravel()[:6].tolist()}. Set {name} {bound}.")
    return a


def _check_sizes(caller, n_samples, n_features):
    """``n_samples >= 0`` and ``n_features >= 1`` as integers, or the one constraint scheme's error naming the count
    (a negative one failed inside numpy with "negative dimensions are not allowed")."""
    _not_bool(caller, n_samples=n_samples, n_features=n_features)
    check_param_values(caller, {"n_samples": [Interval(Integral, 0, None, closed="left")],
                                "n_features": [Interval(Integral, 1, None, closed="left")]},
                       {"n_samples": n_samples, "n_features": n_features})


def _not_bool(caller, **counts):
    """A bool is an int to Python (True == 1), so the Interval constraints pass it: refuse it by name."""
    for name, value in counts.items():
        if isinstance(value, (bool, np.bool_)) or (isinstance(value, np.ndarray) and value.dtype == bool):
            raise TypeError(f"The '{name}' parameter of {caller} must be an int count; got {value!r} (a bool). "
                            f"Pass {name} as a number, e.g. {name}=100.")


def _rng(caller, random_state):
    """:func:`as_rng`, with its errors (numpy's "SeedSequence expects int ...") naming ``random_state``."""
    if isinstance(random_state, (bool, np.bool_)):
        raise TypeError(f"{caller}: random_state must be None, an int seed >= 0 or a numpy Generator; got "
                        f"{random_state!r}. Pass e.g. random_state=0.")
    try:
        return as_rng(random_state)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{caller}: random_state must be None, an int seed >= 0 or a numpy Generator; got "
                        f"{random_state!r} ({exc}). Pass e.g. random_state=0 or np.random.default_rng(0).") from None


def _class_sizes(n_per_class, k):
    """``n_per_class`` as ``k`` integer counts >= 0 (one number for every class, or one per class)."""
    _not_bool("make_gaussian_classes", n_per_class=n_per_class)
    n = _finite("n_per_class", n_per_class, low=0)
    if np.any(n != np.round(n)) or n.ndim > 1 or (n.ndim == 1 and n.shape != (k,)):
        raise ValueError(f"n_per_class must be a whole number >= 0, or {k} of them (one per class); got "
                         f"{np.ravel(n)[:6].tolist()}. Pass integer counts.")
    return np.broadcast_to(n.astype(int), (k,))


def _check_covariances(covs):
    """Each covariance symmetric positive semi-definite (a sampler would silently distort anything else)."""
    for c, S in enumerate(covs):
        big = np.max(np.abs(S), initial=0.0)
        if np.any(np.abs(S - S.T) > 1e-12 * big):
            raise ValueError(f"covs[{c}] is not symmetric; pass (S + S.T) / 2 if the asymmetry is rounding.")
        lowest = np.linalg.eigvalsh(S / big)[0] if big > 0 else 0.0
        if lowest < -1e-10:
            raise ValueError(f"covs[{c}] is not positive semi-definite (smallest eigenvalue {lowest * big:.3g}); "
                             "pass a covariance matrix, e.g. A @ A.T.")


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
    rng = _rng("make_gaussian_classes", random_state)
    means = np.atleast_2d(_finite("means", means))
    if means.ndim != 2:
        raise ValueError(f"means must have shape (K, D), one row per class; got shape {means.shape}. Pass means as a (K, D) array.")
    k, d = means.shape
    covs = _finite("covs", covs)
    if covs.shape == (d, d):
        covs = np.broadcast_to(covs, (k, d, d))
    if covs.shape != (k, d, d):
        raise ValueError(f"covs must have shape ({k}, {d}, {d}) or ({d}, {d}); got {covs.shape}. Pass one "
                         "(D, D) covariance per class, or one shared.")
    _check_covariances(covs)
    counts = _class_sizes(n_per_class, k)
    if priors is not None:
        p = _finite("priors", priors, low=0)
        if p.shape != (k,) or not np.isclose(p.sum(), 1.0):
            raise ValueError(f"priors must be {k} non-negative numbers summing to 1; got {p.tolist()}. "
                             "Pass priors / sum(priors).")
        if counts.ndim != 1 or np.size(n_per_class) != 1:
            raise ValueError(f"with priors, n_per_class is the total sample size (one number); got {n_per_class!r}.")
        counts = rng.multinomial(int(counts[0]), p / p.sum())
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
    _check_sizes("make_separable", n_samples, n_features)
    if not hasattr(labels, "__len__") or len(labels) != 2 or labels[0] == labels[1]:
        raise ValueError(f"labels must be two different values (negative side first); got {labels!r}. "
                         "Pass e.g. labels=(-1, 1) or (0, 1)")
    rng = _rng("make_separable", random_state)
    margin, radius, b = float(_finite("margin", margin, low=0)), float(_finite("radius", radius, low=0)), \
        float(_finite("b", b))
    if w is None:
        w = rng.standard_normal(n_features)
    w = _finite("w", w).ravel()
    norm = np.linalg.norm(w)
    if not 1e-150 < norm < 1e150:          # w near 1e+-200: its squares under/overflow, scale it first
        big = np.max(np.abs(w), initial=0.0)
        norm = big * np.linalg.norm(w / big) if big > 0 else 0.0
    if w.shape != (n_features,) or not norm > 0:
        raise ValueError(f"w must be a nonzero vector of n_features = {n_features} numbers; got {w.tolist()[:6]}. "
                         "Pass a nonzero normal, or w=None for a random one.")
    w = w / norm
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
    _check_sizes("make_regression", n_samples, n_features)
    rng = _rng("make_regression", random_state)
    _finite("scale", scale, low=0)
    if np.ndim(_finite("intercept", intercept)) != 0:
        raise ValueError(f"intercept must be one number; got {intercept!r}. Pass a scalar intercept.")
    if not float(_finite("x_low", x_low)) < float(_finite("x_high", x_high)):
        raise ValueError(f"x_low must be below x_high; got {x_low} and {x_high}. Pass x_low < x_high.")
    X = rng.uniform(x_low, x_high, size=(n_samples, n_features))
    if coef is None:
        coef = rng.standard_normal(n_features)
    coef = _finite("coef", coef)
    if coef.size != n_features:
        raise ValueError(f"coef has {coef.size} entries for n_features = {n_features}; pass one per feature")
    coef = coef.reshape(n_features)
    if noise == "gaussian":
        e = rng.normal(0.0, scale, n_samples)
    elif noise == "laplace":
        e = rng.laplace(0.0, scale, n_samples)
    elif noise == "student-t":
        e = scale * rng.standard_t(2, n_samples)
    elif noise == "none":
        e = np.zeros(n_samples)
    else:
        check_param_values("make_regression", {"noise": [StrOptions({"gaussian", "laplace", "student-t", "none"})]},
                           {"noise": noise})
    return X, X @ coef + intercept + e, coef


def available():
    """Names accepted by :func:`load` and :func:`load_csv` (real data sets, then CSV files).

    Derived in: not a derivation; data provenance in linbook.datasets.REAL_DATASETS.
    """
    return sorted(REAL_DATASETS) + sorted(p.stem for p in DATA_DIR.glob("*.csv"))


class UnknownDatasetError(ValueError, FileNotFoundError):
    """A ``name`` that is no data set: a ``ValueError`` (a bad argument), and still the ``FileNotFoundError``
    that :func:`load_csv` raised before."""


def _known(caller, name):
    """``name`` if it is a data set's name, else the error naming ``name`` and listing the valid ones."""
    valid = sorted(REAL_DATASETS) if caller == "load" else available()
    if isinstance(name, str) and name in valid:
        return name
    raise UnknownDatasetError(f"{caller}: name must be one of {valid}; got {name!r}. Pass one of these names")


def load(name, *, as_frame=False):
    """A small real data set as ``(X, y)``: float features (N, D) and the target (N,).

    The data sets are the ones scikit-learn ships with the package (nothing is downloaded);
    linbook loads them through ``sklearn.datasets``, so the numbers are exactly scikit-learn's.

    ==============  ===========  =========================================================
    name            shape of X   what; provenance; licence
    ==============  ===========  =========================================================
    iris            (150, 4)     Fisher (1936), UCI; CC BY 4.0. y in {0, 1, 2}
    wine            (178, 13)    Forina et al. (1988), UCI; CC BY 4.0. y in {0, 1, 2}
    breast_cancer   (569, 30)    Wisconsin Diagnostic Breast Cancer (1993), UCI; CC BY 4.0.
                                 y = 0 malignant, 1 benign
    diabetes        (442, 10)    Efron et al. (2004); shipped with scikit-learn (BSD-3).
                                 y = disease progression (a regression target)
    digits          (1797, 64)   Alpaydin, Kaynak (1998), UCI; CC BY 4.0. y in {0..9}
    ==============  ===========  =========================================================

    Full provenance: :data:`REAL_DATASETS`.

    Parameters
    ----------
    name : str
        One of the names above (``available()`` lists them).
    as_frame : bool, default False
        Return named columns, as scikit-learn's loaders do with ``as_frame=True``: ``X`` a
        pandas DataFrame whose columns are the feature names (``"sepal length (cm)"``, ...),
        ``y`` a pandas Series named ``"target"``. Needs pandas.

    Returns
    -------
    X : ndarray of float, shape (N, D), or pandas.DataFrame
    y : ndarray, shape (N,), or pandas.Series
        Integer class labels, or floats for ``diabetes``.

    Derived in: not a derivation; data provenance in linbook.datasets.REAL_DATASETS.
    """
    name = _known("load", name)
    if not isinstance(as_frame, (bool, np.bool_)):
        raise TypeError(f"load: as_frame must be True or False; got {as_frame!r}. Pass a bool")
    from sklearn import datasets as skd   # imported here: `import linbook` stays fast

    loader = getattr(skd, REAL_DATASETS[name][0])
    if as_frame:
        try:
            import pandas  # noqa: F401 - scikit-learn needs it for as_frame
        except ImportError as exc:
            raise ImportError(f"load({name!r}, as_frame=True) needs pandas: pip install pandas, "
                              "or call load(name) for numpy arrays") from exc
        X, y = loader(return_X_y=True, as_frame=True)
        return X.astype(float), y
    X, y = loader(return_X_y=True)
    return np.asarray(X, dtype=float), np.asarray(y)


def load_csv(name):
    """A data set as ``(header list, float ndarray)``, the target in the last column.

    A real data set of :func:`load` (``load_csv("iris")``: the four measurement names and
    ``"target"``), or a file ``linbook/data/<name>.csv`` (provenance in
    ``linbook/data/README.md``).

    Derived in: not a derivation; data provenance in linbook.datasets.REAL_DATASETS.
    """
    name = _known("load_csv", name)
    if name in REAL_DATASETS:
        from sklearn import datasets as skd

        bunch = getattr(skd, REAL_DATASETS[name][0])()
        header = [str(f) for f in bunch.feature_names] + ["target"]
        return header, np.column_stack([np.asarray(bunch.data, dtype=float), np.asarray(bunch.target, dtype=float)])
    path = DATA_DIR / f"{name}.csv"
    with open(path, encoding="utf-8") as f:
        header = f.readline().strip().split(",")
    data = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    return header, data
