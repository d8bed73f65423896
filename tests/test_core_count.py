"""Results do not depend on the number of cores, to the last bit.

A stored notebook output is checked on the reader's machine, whatever its CPU count, and the row-chunk
kernels (``linbook._kernels.threads.map_row_chunks``) add their chunks' partial sums in chunk order: the
chunks must then be the same on every machine. Here the core count is faked (1, 3, 16) and every model whose
passes run in row chunks must give bit-identical fits and predictions.
"""

import numpy as np
import pytest
import scipy.sparse

import linbook
from linbook._kernels import threads


def _data(n=30_000, d=8, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * rng.uniform(0.1, 10.0, d) + rng.uniform(-3.0, 3.0, d)
    z = X @ rng.standard_normal(d) / 10
    y3 = np.digitize(z + rng.standard_normal(n), [-0.5, 0.5]).astype(float)
    return X, z + rng.standard_normal(n), (y3 > 0).astype(float), y3, rng.uniform(0.5, 2.0, n)


def _everything():
    """Fitted numbers and predictions of the models whose passes run in row chunks."""
    X, t, y2, y3, sw = _data()
    # sparse X of more than 2^19 entries: scipy's products a chunk of rows per core (threads.RowChunks)
    Xs = scipy.sparse.random(30_000, 1800, density=0.01, format="csr", random_state=1,
                             data_rvs=np.random.default_rng(1).standard_normal)
    ts = Xs @ np.random.default_rng(2).standard_normal(1800)
    ys = np.digitize(ts + np.random.default_rng(3).standard_normal(30_000), [-1.0, 1.0]).astype(float)
    out = []
    for m, X, y, w in [(linbook.LogisticRegression(), X, y2, None),                 # Newton: the Hessian chunks
                       (linbook.LogisticRegression(solver="lbfgs"), X, y2, sw),     # the gradient chunks
                       (linbook.LogisticRegression(solver="lbfgs"), X, y3, None),   # multinomial, symmetric
                       (linbook.LogisticRegression(solver="newton", lam=0.0), X, y3, sw),   # multinomial Hessian
                       (linbook.ProbitRegression(), X, y2, None),
                       (linbook.LinearRegression(), X, t, sw),                      # weighted Gram by blocks
                       (linbook.Ridge(lam=3.0), X, t + 1e3, None),
                       (linbook.LDA(), X, y3, None), (linbook.QDA(), X, y3, sw),
                       # symmetric Hessian products, then (weights differ) the reduced ones' step check
                       (linbook.LogisticRegression(solver="newton-cg"), Xs, ys, sw),
                       (linbook.Ridge(lam=3.0), Xs, ts, sw)]:                       # conjugate gradients on X
        m.fit(X, y, sample_weight=w)
        assert X is not Xs or m.solver_ in ("newton-cg", "cg")      # the paths of sparse products
        out += [np.asarray(m.coef_, dtype=float) if hasattr(m, "coef_") else np.zeros(1),
                np.asarray(getattr(m, "intercept_", 0.0), dtype=float), np.asarray(m.predict(X[:20_000]), dtype=float)]
        if hasattr(m, "predict_proba"):
            out.append(m.predict_proba(X))
    return out


@pytest.fixture
def fake_cores(monkeypatch):
    def use(n):
        monkeypatch.setattr(threads, "_n_cores", lambda: n)
        monkeypatch.setattr(threads, "_POOL", {})      # a pool of that many workers
    yield use
    threads._POOL.clear()


def test_fits_and_predictions_are_bit_identical_on_any_number_of_cores(fake_cores):
    reference = _everything()
    for cores in (1, 3, 16):
        fake_cores(cores)
        for i, (a, b) in enumerate(zip(reference, _everything())):
            assert np.array_equal(a, b), f"{cores} cores: result {i} differs by {np.max(np.abs(a - b)):.1e}"


def test_the_multinomial_hessian_is_bit_identical_on_any_number_of_cores(fake_cores):
    """The kernel alone, dense and sparse (more stored entries than ``THREADED_NNZ``): its row chunks' partial
    Hessians are added in chunk order."""
    from linbook._kernels.hessian import multinomial_hessian
    X, _, _, _, sw = _data(n=40_000)
    Xs = scipy.sparse.csr_matrix(np.where(np.random.default_rng(4).random(X.shape) < 0.9, X, 0.0))
    W = np.random.default_rng(5).standard_normal((3, X.shape[1])) / 10

    def hessians():
        return [multinomial_hessian(A, W, np.ones(3), weights=sw) for A in (X, Xs)]

    reference = hessians()
    for cores in (1, 3, 16):
        fake_cores(cores)
        for a, b in zip(reference, hessians()):
            assert np.array_equal(a, b), f"{cores} cores: the Hessian differs by {np.max(np.abs(a - b)):.1e}"
