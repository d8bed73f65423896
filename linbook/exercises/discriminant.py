"""Self-checks for the exercises of chapter "Generative vs discriminative classifiers".

Derived in: chapter "Generative vs discriminative classifiers" § "Exercises".
"""

import numpy as np
from scipy import stats

from linbook.exercises import Property, close, exercise, has_shape


@exercise("gendisc.marginal-posterior", "GDA posterior with missing features",
          returns="the C class probabilities, shape (C,)")
def _marg(fn):
    rng = np.random.default_rng(0)
    d, C = 4, 3
    mus = rng.normal(size=(C, d))
    Sig = []
    for _ in range(C):
        A = rng.normal(size=(d, d))
        Sig.append(A @ A.T + np.eye(d))
    pis = np.array([0.2, 0.3, 0.5])

    def ref(x):
        o = ~np.isnan(x)
        if not o.any():
            return pis
        lj = np.array([np.log(p) + stats.multivariate_normal(m[o], S[np.ix_(o, o)]).logpdf(x[o])
                       for p, m, S in zip(pis, mus, Sig)])
        lj -= lj.max()
        return np.exp(lj) / np.exp(lj).sum()
    x = rng.normal(size=d)
    yield Property("complete input: the GDA posterior", close(fn(x, pis, mus, Sig), ref(x), rtol=1e-5, atol=1e-10),
                   "Bayes' rule over the classes, in log space, normalised")
    xm = x.copy(); xm[[1, 3]] = np.nan
    yield Property("missing entries are marginalised", close(fn(xm, pis, mus, Sig), ref(xm), rtol=1e-5, atol=1e-10),
                   "a missing feature must be integrated out, not filled in (neither with zero nor with the mean)")
    yield Property("nothing observed gives the prior", close(fn(np.full(d, np.nan), pis, mus, Sig), pis, rtol=1e-5, atol=1e-8),
                   "with no observed feature the likelihood is 1")


def _fisher_data(rng, d, labels, n0, n1):
    """Two classes of ``n0`` and ``n1`` samples in shuffled order, the first sample of the larger label.

    Why: with sorted, balanced labels a function that ignored y (the first half is class 1) or took y[0] for
    class 1 passed. Class 1 is the smaller label (np.unique's order), whatever comes first in y.
    """
    A = rng.normal(size=(d, d))
    y = rng.permutation(np.repeat(labels, [n0, n1]))
    first = int(np.flatnonzero(y == labels[1])[0])
    y[[0, first]] = y[[first, 0]]
    X = rng.normal(size=(n0 + n1, d)) @ A
    X[y == labels[1]] += rng.normal(size=d)
    return X, y


def _fisher_ref(X, y):
    c0, c1 = np.unique(y)
    m0, m1 = X[y == c0].mean(0), X[y == c1].mean(0)
    R = np.where((y == c0)[:, None], X - m0, X - m1)
    return np.linalg.solve(R.T @ R, m1 - m0)


@exercise("gendisc.fisher-direction", "Two-class Fisher direction",
          returns="a direction w of shape (D,)")
def _fisher(fn):
    rng = np.random.default_rng(1)
    ok, cosines = True, []
    for d, labels, n0, n1 in [(2, (3, 7), 40, 40), (5, (-2, 5), 25, 65), (3, (0, 1), 70, 20)]:
        X, y = _fisher_data(rng, d, np.array(labels), n0, n1)
        ref = _fisher_ref(X, y)
        w = fn(X, y)
        shape_ok = has_shape(w, ref.shape)
        if not shape_ok:
            ok = shape_ok
            break
        w = np.asarray(w, dtype=float)
        cosines.append(w @ ref / np.linalg.norm(w) / np.linalg.norm(ref))
        ok = ok and cosines[-1] > 1 - 1e-8   # parallel and pointing the same way: any positive scale is right
    hint = "S_W is the within-class scatter (each class centred on its own mean, summed over all samples)"
    if not ok and cosines and all(c < -1 + 1e-8 for c in cosines):
        hint = ("it points the wrong way: class 2 is the larger label (the order of np.unique), "
                "wherever the classes first appear in y")
    yield Property("parallel to S_W^-1 (mu2 - mu1), pointing to the second class", ok, hint)


@exercise("gendisc.param-count", "Parameters of the Gaussian generative classifier",
          returns="an integer")
def _params(fn):
    # compared exactly as a number, not through int(): int() truncated a wrong 14.5 to a right 14;
    # close() says what came back when it is not one number
    ok = True
    for M in range(1, 30):
        ok = close(fn(M), 2 * M + M * (M + 1) // 2 + 1, rtol=0.0, atol=0.0)
        if not ok:
            break
    yield Property("counts means, shared covariance and the prior", ok,
                   "count free numbers only: a symmetric matrix has fewer than D^2, "
                   "and probabilities that sum to one lose one")
