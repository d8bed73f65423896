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
from benchmarks.run import Case


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
    return out


CASES = _cases()
