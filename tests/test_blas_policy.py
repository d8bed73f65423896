"""linbook's BLAS-thread policy (``linbook._kernels.threads``): a fit on data of at least
``FIT_ONE_THREAD_ENTRIES`` entries runs on one BLAS thread, single large calls lift that, and the
caller's thread count comes back after every fit, failed or not, from any Python thread."""

import threading

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

import linbook
from linbook._kernels import threads
from linbook.base import all_or_nothing


def blas_threads():
    """The thread count of every loaded BLAS library, as threadpoolctl reads it."""
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


@pytest.fixture
def two_blas_threads():
    """BLAS at two threads (on a one-core runner too), the caller's setting the policy must give back."""
    with threadpool_limits(limits=2, user_api="blas"):
        outside = blas_threads()
        if not outside:     # e.g. threadpoolctl older than the BLAS build numpy ships: the policy does nothing
            pytest.skip("threadpoolctl finds no BLAS library to limit")
        assert all(n == outside[0] for n in outside)
        if outside[0] < 2:
            pytest.skip("this BLAS cannot be set to two threads")
        yield outside


class Recorder:
    """A training method under ``all_or_nothing`` that records BLAS's thread count while it runs."""

    def __init__(self, inner=None):
        self.inner = inner

    @all_or_nothing
    def fit(self, X, y=None):
        self.seen_ = blas_threads()
        if self.inner is not None:
            with self.inner:
                self.inner_seen_ = blas_threads()
        if y == "fail":
            raise ValueError("a fit that fails")
        return self


def large(n_rows=1000):
    return np.zeros((n_rows, threads.FIT_ONE_THREAD_ENTRIES // 1000 + 1))


def test_a_fit_on_large_data_runs_on_one_blas_thread_and_gives_the_count_back(two_blas_threads):
    model = Recorder().fit(large())
    assert model.seen_ == [1] * len(two_blas_threads)
    assert blas_threads() == two_blas_threads


def test_a_fit_on_small_data_leaves_blas_as_the_caller_set_it(two_blas_threads):
    model = Recorder().fit(np.zeros((10, 5)))
    assert model.seen_ == two_blas_threads


def test_a_failed_fit_gives_the_count_back(two_blas_threads):
    with pytest.raises(ValueError, match="a fit that fails"):
        Recorder().fit(large(), "fail")
    assert blas_threads() == two_blas_threads


def test_a_large_call_lifts_the_fit_limit_to_the_callers_count(two_blas_threads):
    model = Recorder(threads.blas_threads_for_one_call(2 * threads.THREADED_FLOPS)).fit(large())
    assert model.seen_ == [1] * len(two_blas_threads)
    assert model.inner_seen_ == two_blas_threads
    small_call = Recorder(threads.blas_threads_for_one_call(threads.THREADED_FLOPS / 2)).fit(np.zeros((10, 5)))
    assert small_call.inner_seen_ == [1] * len(two_blas_threads)


def test_the_multinomial_hessian_keeps_a_fits_one_blas_thread(monkeypatch):
    """Inside a fit's policy the multinomial Hessian runs its rows in chunks, one BLAS thread each: it never
    lifts the limit (session 22's lift by the total flops of its back-to-back products is gone)."""
    from linbook._kernels.hessian import multinomial_hessian
    entered, mode = [], threads._blas_mode

    def recording(one_thread):
        entered.append(one_thread)
        return mode(one_thread)

    monkeypatch.setattr(threads, "_blas_mode", recording)
    rng = np.random.default_rng(0)
    X, W = rng.normal(size=(20_000, 40)), rng.normal(size=(5, 40)) / 10   # 2 x 20,000 x 205^2 flops
    with threads.fit_blas_threads(X):
        multinomial_hessian(X, W, np.zeros(5), weights=rng.uniform(0.5, 2.0, 20_000))
    assert entered[0] and False not in entered


def test_modes_nest_as_a_stack(two_blas_threads):
    one = [1] * len(two_blas_threads)
    with threads.single_threaded_blas():
        assert blas_threads() == one
        with threads.blas_own_threads():
            assert blas_threads() == two_blas_threads
            with threads.single_threaded_blas():
                assert blas_threads() == one
                with threads.single_threaded_blas():
                    assert blas_threads() == one
                assert blas_threads() == one
            assert blas_threads() == two_blas_threads
        assert blas_threads() == one
    assert blas_threads() == two_blas_threads


def test_another_python_threads_limit_is_not_lifted(two_blas_threads):
    """Two threads calling BLAS at once keep one BLAS thread each: a lift in one does not undo the other's
    limit; the count comes back when neither limits."""
    one = [1] * len(two_blas_threads)
    entered, release, seen = threading.Event(), threading.Event(), {}

    def limited():
        with threads.single_threaded_blas():
            entered.set()
            release.wait(10)

    other = threading.Thread(target=limited)
    other.start()
    assert entered.wait(10)
    with threads.blas_own_threads():
        seen["lifted while the other limits"] = blas_threads()
    release.set()
    other.join()
    assert seen["lifted while the other limits"] == one
    assert blas_threads() == two_blas_threads


def test_fits_in_a_thread_pool_give_the_count_back(two_blas_threads):
    """Estimators fitted at once from several Python threads (GridSearchCV's threading backend): the count the
    caller set is back afterwards, whichever thread left last (threadpoolctl's own setter ignores calls from
    any thread but the first that set a limit; the policy uses the library's setter)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 20))
    y = (X[:, 0] + rng.normal(size=3000) > 0).astype(int)
    errors = []

    def fits(model):
        try:
            for _ in range(3):
                model.fit(X, y)
        except Exception as exc:            # pragma: no cover - reported below
            errors.append(exc)

    workers = [threading.Thread(target=fits, args=(model,))
               for model in (linbook.LDA(), linbook.LogisticRegression(), linbook.QDA())]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert not errors
    assert blas_threads() == two_blas_threads
    assert threads._STATE["limiting"] == 0 and threads._STATE["saved"] is None


def test_the_policy_does_not_change_a_fits_answer_beyond_rounding():
    """The same fit with the caller at one BLAS thread and at two: equal to rounding (the policy only moves
    where BLAS's threads run)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(4000, 30))
    y = X @ rng.normal(size=30) + rng.normal(size=4000)
    fits = []
    for n in (1, 2):
        with threadpool_limits(limits=n, user_api="blas"):
            fits.append(linbook.Ridge(lam=1.0).fit(X, y).coef_)
    np.testing.assert_allclose(fits[0], fits[1], rtol=1e-12, atol=0)


def test_rls_chunks_of_many_parameters_solve_on_one_blas_thread(two_blas_threads, monkeypatch):
    """A streamed RLS chunk of 100 rows and 101 parameters (1e4 entries, below the fit policy's size) forms
    its p x n x p product and p x p factor on one BLAS thread: two threads made a chunk 10-35x slower on
    2 busy cores (session 23). The answer is unchanged beyond rounding; the caller's count comes back."""
    from linbook.online import RecursiveLeastSquares, rls

    seen, solve = [], rls._normal_equations
    monkeypatch.setattr(rls, "_normal_equations", lambda *a: (seen.append(blas_threads()), solve(*a))[1])
    rng = np.random.default_rng(2)
    X = rng.standard_normal((600, 100))
    y = X @ rng.standard_normal(100) + 1.0
    model = RecursiveLeastSquares().partial_fit(X[:200], y[:200])
    for i in range(200, 600, 100):
        model.partial_fit(X[i:i + 100], y[i:i + 100])
    assert len(seen) == 5 and all(s == [1] * len(two_blas_threads) for s in seen), seen
    assert blas_threads() == two_blas_threads
    batch = np.linalg.lstsq(np.column_stack([X, np.ones(600)]), y, rcond=None)[0]
    np.testing.assert_allclose(np.r_[model.coef_, model.intercept_], batch, rtol=0, atol=1e-10)
