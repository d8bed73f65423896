"""Out of core and faults (issue 24, item 3): a logistic fit on data that never exists in one place.

The data are generated lazily, block by block, on the workers (``np.random.default_rng([seed, i])``
for row block ``i``; labels drawn from the true model), so every pass over them regenerates them
and no process ever holds more than a few blocks. On a ``distributed.LocalCluster`` with two
worker processes (started here, each with a ``memory_limit`` so that it spills rather than dies):

* the fit's coefficients equal the truth within sampling error: ``|theta_j - theta*_j| < 5 se_j``,
  ``se_j`` the square root of the diagonal of the inverse Hessian at the fit (the Laplace
  covariance), computed here with plain dask array operations, not by linbook;
* the client process (which also runs the scheduler) stays small: its resident set, sampled every
  10 ms during the fit, stays under 1.5 GB and grows by less than a quarter of ``X``;
* a worker killed with SIGKILL while the fit runs (after the first Newton pass) changes nothing:
  the scheduler recomputes the lost blocks (the data are a pure function of the seed) and the
  coefficients equal the undisturbed fit's to 1e-10.

``make test`` runs this at 1e6 x 20 (``X`` is 160 MB): three fits of ~6 passes, each pass ~3 CPU
seconds of making and reducing blocks (measured: the module in 46 s at a load average of 5 on 2
cores, 7.5 to 8.5 minutes at a load average of 15 to 20). The issue's size, 2e7 x 20 (``X`` is 3.2 GB), is twenty times
the work; it runs with ``LINBOOK_FULL_SCALE=1``
(``LINBOOK_FULL_SCALE=1 .venv/bin/python -m pytest -q -rs -s tests/test_dask_scale.py``) and is
otherwise skipped, saying so.
"""

from __future__ import annotations

import os
import resource
import signal
import threading
import time

import numpy as np
import pytest

import linbook

da = pytest.importorskip("dask.array", reason="the dask extra is not installed (pip install 'linbook[dask]')")
distributed = pytest.importorskip("distributed")
psutil = pytest.importorskip("psutil")

D = 20
SEED = 20240
CLIENT_PEAK_BYTES = 1.5e9
FULL = os.environ.get("LINBOOK_FULL_SCALE") == "1"
# (rows, rows per block): 1e6 x 20 in 8 blocks of 20 MB for make test; the 2e7 x 20 in
# 80 blocks of 40 MB behind LINBOOK_FULL_SCALE=1
SIZES = [pytest.param((1_000_000, 125_000), id="1e6x20"),
         pytest.param((20_000_000, 250_000), id="2e7x20", marks=pytest.mark.skipif(
             not FULL, reason="the 2e7 x 20 (3.2 GB) run is 20x the 1e6 one: set LINBOOK_FULL_SCALE=1"))]


# ------------------------------------------------------------------------------- the lazy problem
def true_model(d=D, seed=SEED):
    """``(w*, b*)``: the coefficients the labels are drawn from."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal(d) / np.sqrt(d), 0.3


def _x_block(block_info=None, *, seed, d):
    (i, _), rows = block_info[None]["chunk-location"], block_info[None]["chunk-shape"][0]
    return np.random.default_rng([seed, i]).standard_normal((rows, d))


def _y_block(Xb, w, b, block_info=None, *, seed):
    i = block_info[0]["chunk-location"][0]
    p = linbook.sigmoid(Xb @ w + b)
    return (np.random.default_rng([seed, i, 1]).random(Xb.shape[0]) < p).astype(np.float64)


def lazy_problem(n, chunk_rows, d=D, seed=SEED):
    """``X`` (n x d standard normal) and ``y ~ Bernoulli(sigmoid(X w* + b*))`` as dask arrays: a
    graph of one task per block, nothing generated until a pass reads it."""
    w, b = true_model(d, seed)
    chunks = (tuple(min(chunk_rows, n - i) for i in range(0, n, chunk_rows)), (d,))
    X = da.map_blocks(_x_block, seed=seed, d=d, chunks=chunks, dtype=np.float64,
                      meta=np.empty((0, 0)), name=f"lazy-X-{n}-{seed}")
    y = X.map_blocks(_y_block, w, b, seed=seed, drop_axis=1, dtype=np.float64, meta=np.empty((0,)),
                     name=f"lazy-y-{n}-{seed}")
    return X, y


def laplace_se(X, y, w, b):
    """Standard errors of ``[b, w]`` from the Laplace covariance ``H^{-1}``, ``H = X~' S X~`` at
    ``(w, b)``: one pass of plain dask array operations (independent of linbook's code)."""
    e = da.exp(-abs(X @ w + b))                            # p (1 - p) = e / (1 + e)^2, no overflow
    s = e / (1 + e) ** 2
    Hww, Hwb, Hbb = da.compute((X * s[:, None]).T @ X, X.T @ s, s.sum())
    H = np.block([[np.atleast_2d(Hbb), Hwb[None, :]], [Hwb[:, None], Hww]])
    L = np.linalg.cholesky(H)
    Linv = np.linalg.solve(L, np.eye(H.shape[0]))        # diag(H^-1) = column sums of squares of L^-1
    return np.sqrt(np.sum(Linv ** 2, axis=0))


# ------------------------------------------------------------------------------- the cluster
@pytest.fixture(scope="module")
def client():
    # memory_limit: a worker spills to disk at 70 % of it rather than being killed; 1.5 GiB each
    # leaves the machine's other users their share.
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       memory_limit="1.5GiB", dashboard_address=":0", silence_logs=50)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


class RSSWatch:
    """The largest resident set of this process seen while the block runs (sampled every 10 ms)."""

    def __init__(self):
        self.proc = psutil.Process()

    def __enter__(self):
        self.before = self.proc.memory_info().rss
        self.peak = self.before
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self):
        while not self._stop.wait(0.01):
            self.peak = max(self.peak, self.proc.memory_info().rss)

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.proc.memory_info().rss)


def lifetime_peak_rss():
    """Peak resident set of this process since it started (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def fit(X, y):
    return linbook.LogisticRegression(lam=0.0).fit(X, y)


@pytest.fixture(scope="module")
def warm(client):
    """One small dask fit first, so the imports it triggers are not counted as the big fit's memory."""
    fit(*lazy_problem(20_000, 5_000))


@pytest.fixture(scope="module", params=SIZES)
def undisturbed(request, client, warm):
    """The lazy problem and its fit with every worker alive, with the client's memory and the time."""
    n, chunk_rows = request.param
    X, y = lazy_problem(n, chunk_rows)
    t0 = time.perf_counter()
    with RSSWatch() as rss:
        model = fit(X, y)
    return X, y, model, rss, time.perf_counter() - t0


# ------------------------------------------------------------------------------- the tests
def test_out_of_core_fit_is_small_on_the_client_and_right(undisturbed):
    X, y, model, rss, seconds = undisturbed
    n = X.shape[0]
    theta = np.r_[model.intercept_, model.coef_.ravel()]
    w, b = true_model()
    se = laplace_se(X, y, model.coef_.ravel(), float(model.intercept_[0]))
    z = np.abs(theta - np.r_[b, w]) / se
    print(f"\n{n:.0e} x {D}: fit {seconds:.1f} s; client RSS peak {rss.peak / 1e6:.0f} MB during the fit "
          f"(grew {(rss.peak - rss.before) / 1e6:.0f} MB; process lifetime peak {lifetime_peak_rss() / 1e6:.0f} MB); "
          f"max |theta - theta*| / se = {z.max():.2f}; max se = {se.max():.1e}")
    assert model.converged_
    assert z.max() < 5, f"coefficient {int(z.argmax())} is {z.max():.1f} standard errors from the truth"
    # within sampling error, and that error is small: se ~ 1 / sqrt(n E[p(1-p)]) with E[p(1-p)] > 0.1 here
    assert np.all(se < 1 / np.sqrt(0.1 * n))
    assert rss.peak < CLIENT_PEAK_BYTES, f"client peak RSS {rss.peak / 1e9:.2f} GB >= 1.5 GB"
    assert rss.peak - rss.before < X.nbytes / 4, (
        f"the client grew by {(rss.peak - rss.before) / 1e6:.0f} MB during the fit; X is {X.nbytes / 1e6:.0f} MB")


def _worker_pids(client):
    return client.run(os.getpid)


def _alive(pid):
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_worker_killed_mid_fit_changes_nothing(client, undisturbed, monkeypatch):
    from linbook.logistic import _dask_fit as glm

    X, y, reference, _, _ = undisturbed
    passes = []                      # one entry per map-reduce pass of the fit, as it completes
    first_pass_done = threading.Event()
    real_map_reduce = glm.map_reduce

    def counting_map_reduce(*args, **kwargs):
        out = real_map_reduce(*args, **kwargs)
        passes.append(time.perf_counter())
        first_pass_done.set()
        return out

    monkeypatch.setattr(glm, "map_reduce", counting_map_reduce)
    before = _worker_pids(client)
    killed = {}

    def kill_a_busy_worker():
        # after the first Newton pass, as soon as a worker is computing blocks of a later pass
        first_pass_done.wait()
        deadline = time.perf_counter() + 600
        while time.perf_counter() < deadline:
            busy = {a: keys for a, keys in client.processing().items() if keys}
            if busy:
                address = max(busy, key=lambda a: len(busy[a]))
                killed.update(pid=before[address], passes=len(passes), at=time.perf_counter())
                os.kill(before[address], signal.SIGKILL)
                return
            time.sleep(0.005)

    killer = threading.Thread(target=kill_a_busy_worker, daemon=True)
    killer.start()
    disturbed = fit(X, y)
    finished = time.perf_counter()
    killer.join(timeout=5)

    assert killed, "no worker was killed"
    assert killed["passes"] >= 1 and killed["at"] < finished, "the kill did not land inside the fit"
    assert killed["passes"] < len(passes), "the kill came after the last pass"
    assert not _alive(killed["pid"]), "the killed worker is still alive"
    gap = float(np.max(np.abs(np.r_[disturbed.intercept_ - reference.intercept_,
                                    (disturbed.coef_ - reference.coef_).ravel()])))
    print(f"\n{X.shape[0]:.0e} x {D}: worker killed after pass {killed['passes']} of {len(passes)}; "
          f"max coefficient gap to the undisturbed fit {gap:.1e}")
    assert disturbed.converged_
    assert gap <= 1e-10, f"the fit with a killed worker differs from the undisturbed fit by {gap:.1e}"


_reads = []


def _counted_x_block(block_info=None, *, seed, d):
    _reads.append(block_info[None]["chunk-location"][0])
    return _x_block(block_info, seed=seed, d=d)


def test_each_pass_reads_each_block_once(monkeypatch):
    """A pass over lazily made data costs one making of it: ``y`` is computed from ``X``'s block,
    and that block is not made a second time for ``y`` (on the synchronous scheduler, counted)."""
    import dask

    from linbook.logistic import _dask_fit as glm

    n, rows, d = 40_000, 10_000, 3
    w, b = true_model(d)
    X = da.map_blocks(_counted_x_block, seed=SEED, d=d, chunks=((rows,) * (n // rows), (d,)), dtype=np.float64,
                      meta=np.empty((0, 0)), name="counted-X")
    y = X.map_blocks(_y_block, w, b, seed=SEED, drop_axis=1, dtype=np.float64, meta=np.empty((0,)), name="counted-y")
    passes = []
    real_map_reduce = glm.map_reduce

    def counting_map_reduce(*args, **kwargs):
        passes.append(1)
        return real_map_reduce(*args, **kwargs)

    monkeypatch.setattr(glm, "map_reduce", counting_map_reduce)
    _reads.clear()
    with dask.config.set(scheduler="sync"):
        linbook.LogisticRegression().fit(X, y)
    # one summarising pass, then the Newton passes: each block made once per pass
    assert sorted(_reads) == sorted(list(range(n // rows)) * (1 + len(passes)))
