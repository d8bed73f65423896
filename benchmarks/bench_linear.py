"""Least squares and ridge: linbook's default fit against scikit-learn's, same minimiser.

Targets (issue 13): the *default* ``linbook.Ridge()`` / ``linbook.LinearRegression()`` on tall
dense data (5e5 x 100, 1e6 x 100, 2e6 x 10) at most 1.0 x scikit-learn's fastest suitable
solver (``Ridge(solver="cholesky")``, ``LinearRegression()``); rows against scikit-learn's
defaults are reported next to them. Sparse rows (CSR, 1 % dense) compare with scikit-learn's
default sparse solver and report only. ``compare`` prints the largest coefficient difference
and the two objective values, so speed cannot be bought with accuracy.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sps
from sklearn import linear_model as sk

import linbook
from benchmarks.run import Case, FastestPeer


def _dense(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) + rng.normal(0, 2, d)     # offsets: centring matters
    y = X @ rng.standard_normal(d) + 1.0 + rng.standard_normal(n)
    return X, y


def _sparse(n, d, density=0.01, seed=0):
    rng = np.random.default_rng(seed)
    X = sps.random(n, d, density=density, format="csr", random_state=seed, data_rvs=rng.standard_normal)
    y = X @ rng.standard_normal(d) + 1.0 + rng.standard_normal(n)
    return X, y


def _quality(lam):
    def compare(data, lin, ref):
        X, y = data

        def obj(m):
            r = y - (X @ m.coef_) - m.intercept_
            return 0.5 * float(r @ r) + 0.5 * lam * float(m.coef_ @ m.coef_)
        diff = np.max(np.abs(lin.coef_ - ref.coef_))
        return f"obj linbook {obj(lin):.12g} vs ref {obj(ref):.12g}; max|coef diff| {diff:.1e}"
    return compare


def _cases():
    out = []
    for n, d in [(500_000, 100), (1_000_000, 100), (2_000_000, 10)]:
        tag = f"{n // 1000}k x {d}"
        setup = (lambda n=n, d=d: _dense(n, d))
        out += [
            Case(f"ridge default {tag}", setup, lambda D: linbook.Ridge(lam=1.0).fit(*D),
                 lambda D: sk.Ridge(alpha=1.0, solver="cholesky").fit(*D), "sklearn Ridge cholesky",
                 target=1.0, compare=_quality(1.0), repeat=5),
            Case(f"ridge default {tag} vs sklearn default", setup, lambda D: linbook.Ridge(lam=1.0).fit(*D),
                 lambda D: sk.Ridge(alpha=1.0).fit(*D), "sklearn Ridge()", compare=_quality(1.0), repeat=5),
            Case(f"ols default {tag}", setup, lambda D: linbook.LinearRegression().fit(*D),
                 lambda D: sk.LinearRegression().fit(*D), "sklearn LinearRegression",
                 target=1.0, compare=_quality(0.0), repeat=5),
        ]
    sp = (lambda: _sparse(1_000_000, 100))
    out += [
        Case("ridge sparse default 1000k x 100", sp, lambda D: linbook.Ridge(lam=1.0).fit(*D),
             lambda D: sk.Ridge(alpha=1.0).fit(*D), "sklearn Ridge() sparse",
             target=1.0, compare=_quality(1.0), repeat=5),
        Case("ols sparse default 1000k x 100", sp, lambda D: linbook.LinearRegression().fit(*D),
             lambda D: sk.LinearRegression().fit(*D), "sklearn LinearRegression sparse",
             target=1.0, compare=_quality(0.0), repeat=5),
    ]
    return out + _unseen_shapes()


def _lam_max(X, y):
    return float(np.max(np.abs((X - X.mean(0)).T @ (y - y.mean()))))


def _lasso_objective(frac):
    """Half the summed squares plus lam ||w||_1 (linbook's objective; scikit-learn's times N)."""
    def compare(data, lin, ref):
        X, y = data
        lam = frac * _lam_max(X, y)

        def obj(m):
            r = y - X @ m.coef_ - m.intercept_
            return 0.5 * float(r @ r) + lam * float(np.abs(m.coef_).sum())
        return (f"obj linbook {obj(lin):.12g} vs ref {obj(ref):.12g}; max|coef diff| "
                f"{np.max(np.abs(lin.coef_ - ref.coef_)):.1e}; non-zeros {np.count_nonzero(lin.coef_)} vs "
                f"{np.count_nonzero(ref.coef_)}")
    return compare


def _ridge_peers(lam):
    """scikit-learn's suitable Ridge solvers; the iterative ones at tol 1e-10 (their 1e-4 is another answer)."""
    return FastestPeer({f"sklearn Ridge {s}": (lambda D, s=s: sk.Ridge(alpha=lam, solver=s, tol=1e-10).fit(*D))
                        for s in ("cholesky", "svd", "sparse_cg", "lsqr")})


def _unseen_shapes():
    """Session 13 (issue 22): wide dense shapes nobody tuned to, against the fastest peer solver."""
    out = []
    for n, d in [(200, 5000), (1000, 10000)]:
        setup = (lambda n=n, d=d: _dense(n, d))
        out += [
            Case(f"ridge wide default {n} x {d} vs fastest peer", setup, lambda D: linbook.Ridge(lam=1.0).fit(*D),
                 _ridge_peers(1.0), "fastest sklearn Ridge solver", target=1.0, compare=_quality(1.0)),
            Case(f"ols wide default {n} x {d}", setup, lambda D: linbook.LinearRegression().fit(*D),
                 lambda D: sk.LinearRegression().fit(*D), "sklearn LinearRegression (gelsd)",
                 target=1.0, compare=_quality(0.0)),
        ]
    for n, d in [(500, 5000), (100_000, 50)]:
        for frac in (0.01, 0.3):
            def setup(n=n, d=d):
                X, y = _dense(n, d)
                return X, X[:, :20] @ np.random.default_rng(1).standard_normal(20) + y * 0.1
            lin = (lambda D, f=frac: linbook.Lasso(lam=f * _lam_max(*D), max_iter=100_000).fit(*D))   # as the peer
            peers = FastestPeer({f"sklearn Lasso precompute={p}": (
                lambda D, f=frac, p=p: sk.Lasso(alpha=f * _lam_max(*D) / len(D[1]), tol=1e-10, max_iter=100_000,
                                                precompute=p).fit(*D)) for p in (False, True)})
            out.append(Case(f"lasso default {n} x {d}, lam = {frac} lam_max vs fastest peer", setup, lin, peers,
                            "fastest sklearn Lasso (tol 1e-10)", target=1.0, compare=_lasso_objective(frac)))
    return out


CASES = _cases()
