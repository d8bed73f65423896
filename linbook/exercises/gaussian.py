"""Self-checks for the exercises of chapter "Gaussian models and GDA".

Derived in: chapter "Gaussian models and GDA" § "Exercises".
"""

import numpy as np

from linbook.exercises import Property, close, exercise, has_shape


def _spd(rng, d):
    A = rng.normal(size=(d, d))
    return A @ A.T + 0.5 * np.eye(d)


@exercise("gda.mahalanobis-eig", "Mahalanobis distance through the eigendecomposition",
          returns="one squared distance per row of X, shape (N,)")
def _mahalanobis(fn):
    rng = np.random.default_rng(0)
    ok_rand = ok_id = True
    ok_shape = True
    for d in (1, 2, 5):
        S, mu, X = _spd(rng, d), rng.normal(size=d), rng.normal(size=(7, d))
        ref = np.einsum("ij,ij->i", X - mu, np.linalg.solve(S, (X - mu).T).T)
        out = np.asarray(fn(X, mu, S), dtype=float)
        ok_shape = ok_shape and has_shape(out, (7,))
        ok_rand = ok_rand and close(out, ref, rtol=1e-8, atol=1e-8)
        ok_id = ok_id and close(fn(X, mu, np.eye(d)), ((X - mu) ** 2).sum(1), rtol=1e-5, atol=1e-8)
    yield Property("returns one distance per row", ok_shape, "return an array of shape (N,)")
    yield Property("matches (x-mu)^T Sigma^-1 (x-mu) on random covariances", ok_rand,
                   "the inverse of Sigma has the eigenvectors of Sigma: check how its eigenvalues enter")
    yield Property("equals the squared Euclidean distance for Sigma = I", ok_id, "check the centring by mu")


@exercise("gda.two-class-lda", "w and x0 of two-class LDA",
          returns="(w, x0), both of shape (D,)")
def _two_class(fn):
    rng = np.random.default_rng(1)
    ok, ok_mid = True, True
    for d in (1, 2, 4):
        S, m0, m1 = _spd(rng, d), rng.normal(size=d), rng.normal(size=d)
        for pi1 in (0.5, 0.2, 0.9):
            w, x0 = fn(m0, m1, S, pi1)
            shapes = has_shape(w, (d,)) and has_shape(x0, (d,))
            if not shapes:
                ok = ok_mid = shapes
                break
            w, x0 = np.asarray(w, dtype=float), np.asarray(x0, dtype=float)
            X = rng.normal(size=(5, d))
            Si = np.linalg.inv(S)
            g1 = -0.5 * m1 @ Si @ m1 + np.log(pi1)
            g0 = -0.5 * m0 @ Si @ m0 + np.log(1 - pi1)
            ref = (X @ (Si @ (m1 - m0))) + g1 - g0
            ok = ok and close((X - x0) @ w, ref, rtol=1e-8, atol=1e-10)
            if pi1 == 0.5:
                ok_mid = ok_mid and close(x0, 0.5 * (m0 + m1), rtol=1e-5, atol=1e-8)
        if not shapes:
            break
    yield Property("with equal priors x0 is the midpoint of the means", ok_mid, "check the sign of the 1/2 (mu1 + mu0) term")
    yield Property("w^T (x - x0) equals the LDA log-odds", ok,
                   "compare the classes' log-densities plus log-priors: the quadratic terms cancel, "
                   "and x0 is where the log-odds vanish")


@exercise("gda.soft-threshold", "Soft-thresholding of shrunken-centroid offsets",
          returns="an array of the same shape as d")
def _soft(fn):
    d = np.array([-3.0, -0.5, 0.0, 0.2, 1.0, 2.5])
    ref = np.sign(d) * np.maximum(np.abs(d) - 1.0, 0)
    out = np.asarray(fn(d, 1.0), dtype=float)
    yield Property("matches sign(d)(|d| - lam)_+", close(out, ref, rtol=1e-5, atol=1e-8),
                   "small offsets become exactly zero; large ones move towards zero by lam")
    yield Property("lam = 0 leaves offsets unchanged", close(fn(d, 0.0), d, rtol=1e-5, atol=1e-8), "")
    M = np.random.default_rng(0).normal(size=(3, 4))
    yield Property("works elementwise on a matrix", close(fn(M, 0.3), np.sign(M) * np.maximum(np.abs(M) - 0.3, 0), rtol=1e-5, atol=1e-8),
                   "use vectorised numpy operations")
