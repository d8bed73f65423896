"""Logistic regression on Dask (issue 24, item 4): linbook against dask-ml on one LocalCluster.

Both fit the same dask arrays, persisted in the memory of a ``distributed.LocalCluster`` with two
worker processes (one thread each), started once for all rows here and closed at exit.

The objectives are made equal, not assumed equal:

* linbook minimises ``sum_i nll_i + (lam/2) ||w||^2`` (intercept unpenalised).
* dask-ml's ``LogisticRegression(penalty="l2", C=C, solver="lbfgs")`` (dask-glm's ``lbfgs``)
  minimises ``sum_i nll_i + (1/C) ||beta||^2 / 2`` with ``beta = [w, b]``: the same scale of
  penalty (``lam = 1/C``), but it also penalises the intercept (its ``add_intercept`` appends a
  column of ones that the regulariser does not tell apart), and by default (dask-glm's
  ``normalize``) it fits standardised columns, so the penalty falls on ``std_j w_j`` and on the
  intercept of the centred columns. The row passes dask-ml (``solver_kwargs``) a regulariser that
  is dask-glm's L2 on ``w`` only and ``normalize=False``, so both minimise the same function.
  lbfgs is dask-ml's fastest solver that takes a penalty (measured on this data: admm,
  proximal_grad and gradient_descent are slower; all five run on numpy 2.4 with dask-glm 0.4).
* dask-ml's ``newton`` is its fastest solver, but it ignores ``C`` (no penalty, no line search):
  its row compares unpenalised fits (``lam = 0``).

Tolerances, equal in meaning: linbook stops when the gradient of the *mean* loss is below
``tol = 1e-8`` (max-abs units); dask-glm's lbfgs stops when the *summed* gradient's max-norm is
below its ``tol`` (scipy's ``pgtol``), so it gets ``tol = 1e-8 * N`` (it may stop earlier on
scipy's relative-decrease test ``factr``); dask-glm's newton stops when no coefficient (in
standardised units) moves by more than ``tol = 1e-8``. ``compare`` reports what each answer
reached: the objective, the max-norm of the mean gradient, and the coefficient difference.
Run: ``make bench BENCH=dask`` (``BENCH_DASK_N=200000 make bench BENCH=dask`` for a smaller problem).
"""

from __future__ import annotations

import atexit
import os

import numpy as np

import linbook
from benchmarks.run import Case

# N rows in 8 blocks; BENCH_DASK_N=200000 for a quicker table on a loaded machine
N, D = int(float(os.environ.get("BENCH_DASK_N", "1000000"))), 20
CHUNK = -(-N // 8)
TOL = 1e-8
_state = {}


def _client():
    """The LocalCluster all rows share (started on first use, closed at exit)."""
    if "client" not in _state:
        import distributed

        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           memory_limit="2GiB", dashboard_address=":0", silence_logs=50)
        _state["client"] = distributed.Client(cluster)
        atexit.register(lambda: (_state["client"].close(), cluster.close()))
    return _state["client"]


def _data(seed=0):
    """``X`` (N x D, standard normal) and ``y`` from a true logistic model, persisted on the workers."""
    import dask.array as da

    _client()
    rng = np.random.default_rng(seed)
    w = 2 * rng.standard_normal(D) / np.sqrt(D)
    X = da.random.default_rng(seed).standard_normal((N, D), chunks=(CHUNK, D))
    u = da.random.default_rng(seed + 1).random(N, chunks=CHUNK)
    y = (u < 1 / (1 + da.exp(-(X @ w + 0.5)))).astype(np.float64)
    X, y = X.persist(), y.persist()
    return X, y


def _l2_except_intercept():
    """dask-glm's L2 on every coefficient but the last (dask-ml's intercept column)."""
    from dask_glm.regularizers import L2

    class L2ExceptIntercept(L2):
        name = "l2-except-intercept"

        def f(self, beta):
            return (beta[:-1] ** 2).sum() / 2

        def gradient(self, beta):
            mask = np.ones(beta.shape[0])
            mask[-1] = 0.0
            return beta * mask              # numpy or dask beta alike

    return L2ExceptIntercept()


def _dask_ml(solver, lam):
    from dask_ml.linear_model import LogisticRegression as DaskMLLogReg

    def fit(data):
        X, y = data
        if solver == "newton":
            return DaskMLLogReg(solver="newton", tol=TOL, max_iter=100).fit(X, y)
        # normalize=False: by default dask-glm fits standardised columns, so its penalty would fall on
        # std_j * w_j and on the centred intercept instead of on w
        return DaskMLLogReg(solver="lbfgs", penalty="l2", C=1.0 / lam, tol=TOL * X.shape[0], max_iter=1000,
                            solver_kwargs={"regularizer": _l2_except_intercept(), "normalize": False}).fit(X, y)
    return fit


def _linbook(lam):
    return lambda data: linbook.LogisticRegression(lam=lam, tol=TOL).fit(*data)


def _objective_and_gradient(X, y, w, b, lam):
    """``(F, max |grad F| / N)`` of linbook's objective at ``(w, b)``: one pass of dask array operations."""
    import dask.array as da

    z = X @ w + b
    nll = da.maximum(z, 0) + da.log1p(da.exp(-abs(z))) - y * z
    r = 1 / (1 + da.exp(-z)) - y
    F, gw, gb = da.compute(nll.sum(), X.T @ r, r.sum())
    g = np.r_[gb, gw + lam * w]
    return float(F) + 0.5 * lam * float(w @ w), float(np.max(np.abs(g))) / X.shape[0]


def _quality(lam):
    def compare(data, lin, ref):
        X, y = data
        wl, bl = lin.coef_.ravel(), float(lin.intercept_[0])
        wr, br = np.asarray(ref.coef_, dtype=float).ravel(), float(ref.intercept_)
        Fl, gl = _objective_and_gradient(X, y, wl, bl, lam)
        Fr, gr = _objective_and_gradient(X, y, wr, br, lam)
        diff = np.max(np.abs(np.r_[wl - wr, bl - br])) / np.max(np.abs(wr))
        return (f"obj {Fl:.12g} vs {Fr:.12g} (rel diff {(Fl - Fr) / abs(Fr):+.1e}); mean-gradient max-norm "
                f"{gl:.1e} vs {gr:.1e}; rel coef diff {diff:.1e}; solver {lin.solver_}")
    return compare


CASES = [
    Case(f"dask logistic {N:.0e} x {D}, lam=1 default", setup=_data, linbook=_linbook(1.0),
         reference=_dask_ml("lbfgs", 1.0), reference_name="dask-ml lbfgs (C=1, intercept unpenalised)",
         target=0.5, compare=_quality(1.0), repeat=5,
         notes="same objective sum nll + (lam/2)||w||^2 (lam = 1/C); dask-ml's L2 kept off the intercept"),
    Case(f"dask logistic {N:.0e} x {D}, lam=0 default", setup=_data, linbook=_linbook(0.0),
         reference=_dask_ml("newton", 0.0), reference_name="dask-ml newton (no penalty)",
         target=0.5, compare=_quality(0.0), repeat=5,
         notes="unpenalised MLE on both sides (dask-glm's newton takes no penalty)"),
]
