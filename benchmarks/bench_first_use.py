"""Speed as users meet it: tiny fits in a loop, streaming RLS in chunks, the first fit of a process.

* tiny loop: a 200 x 5 fit + predict repeated 200 times (what GridSearchCV or a student's loop
  does), each estimator with its defaults against scikit-learn's counterpart with its fastest
  solver at this size; per-call overhead dominates.
* RLS chunks: ``RecursiveLeastSquares.partial_fit`` over chunks of 100 rows against the plain
  numpy alternative, accumulating ``X^T X`` and ``X^T y`` and re-solving after each chunk
  (scikit-learn has no recursive least squares); both end at the least-squares solution.
* first fit: a fresh Python process fits the eight main estimators once each (200 x 5 data,
  and 2,000 x 8 for the perceptron) against a process fitting scikit-learn's counterparts. At
  these sizes every linbook fit runs numpy only (the perceptron's and SGD's numpy loops), so
  "warm" (the numba cache that ``make env`` fills) and "cold" (an empty cache) do the same work.
* first fit of the online models: LMS, RLS and OGD on 200 x 5 in a fresh process (numpy loops)
  against scikit-learn's nearest counterparts.
* first fit on larger data: a fresh process fits ``Perceptron()`` and ``SGDClassifier()`` on
  20,000 x 20, where both run compiled numba epochs: "cold" (an empty cache) shows the
  compilation, "warm" the cost of importing numba and loading the cached machine code.

The first-fit rows time the whole process (interpreter start included); the quality column
gives the time inside each process and the medians of the CPU times and of their paired ratios
over every timed pair (CPU time is less sensitive to the load than wall time). Before timing, the
rows write linbook's bytecode (``linbook._warm.compile_bytecode``), as ``pip install`` did for
scikit-learn: under ``PYTHONDONTWRITEBYTECODE`` an editable linbook would otherwise compile its
modules from source in every process.
"""

import os
import statistics
import subprocess
import sys
import tempfile
import warnings

import numpy as np
from sklearn import discriminant_analysis as sk_da
from sklearn import linear_model as sk_lm

import linbook
from benchmarks.run import Case
from linbook._warm import compile_bytecode
from linbook.online import RecursiveLeastSquares

LOOPS = 200


def setup_tiny():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 5))
    y = X @ rng.standard_normal(5) + 0.5 * rng.standard_normal(200)
    return X, y, (y + rng.standard_normal(200) > 0).astype(int)


def _loop(make, target):
    def run(data):
        X, y = data[0], data[1 if target == "real" else 2]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(LOOPS):
                model = make().fit(X, y)
                model.predict(X)
        return model
    return run


def _agree(data, a, b):
    X = data[0]
    if hasattr(a, "predict_proba") and hasattr(b, "predict_proba") and not isinstance(a, linbook.Perceptron):
        return f"max |p_lin - p_ref| {np.abs(a.predict_proba(X) - b.predict_proba(X)).max():.1e}"
    pa, pb = a.predict(X), b.predict(X)
    if pa.dtype.kind == "f":
        return f"max |pred diff| {np.abs(pa - pb).max():.1e}"
    return f"predictions agree on {np.mean(pa == pb):.3f} of rows; train acc {np.mean(pa == data[2]):.3f} / " \
           f"{np.mean(pb == data[2]):.3f}"


TINY = [
    ("LinearRegression", lambda: linbook.LinearRegression(), lambda: sk_lm.LinearRegression(),
     "LinearRegression", "real"),
    ("Ridge", lambda: linbook.Ridge(), lambda: sk_lm.Ridge(solver="cholesky"), "Ridge(cholesky)", "real"),
    ("LogisticRegression", lambda: linbook.LogisticRegression(),
     lambda: sk_lm.LogisticRegression(solver="newton-cholesky"), "LogisticRegression(newton-cholesky)", "class"),
    ("LDA", lambda: linbook.LDA(), lambda: sk_da.LinearDiscriminantAnalysis(solver="lsqr"), "LDA(lsqr)", "class"),
    ("Perceptron", lambda: linbook.Perceptron(random_state=0), lambda: sk_lm.Perceptron(random_state=0),
     "Perceptron()", "class"),
]


def setup_stream(n=100_000, d=10):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((n, d))
    return X, X @ rng.standard_normal(d) + 1.0 + 0.1 * rng.standard_normal(n)


def setup_stream_wide():
    return setup_stream(n=10_000, d=100)


def _rls_chunks(data):
    """The first chunk holds 2 p rows (without a prior, fewer than p leave the solution undetermined)."""
    X, y = data
    model = RecursiveLeastSquares()
    first = max(100, 2 * X.shape[1])
    model.partial_fit(X[:first], y[:first])
    for i in range(first, len(y), 100):
        model.partial_fit(X[i:i + 100], y[i:i + 100])
    return np.r_[model.coef_, model.intercept_]


def _resolve_chunks(data):
    X, y = data
    p = X.shape[1] + 1
    A, r, w = np.zeros((p, p)), np.zeros(p), None
    first = max(100, 2 * X.shape[1])
    for i, j in zip([0, *range(first, len(y), 100)], [first, *range(first + 100, len(y) + 100, 100)]):
        Xa = np.column_stack([X[i:j], np.ones(len(y[i:j]))])
        A += Xa.T @ Xa
        r += Xa.T @ y[i:j]
        w = np.linalg.solve(A, r)
    return w


FIRST_FIT = """
import time, warnings
t0 = time.perf_counter()
import numpy as np
rng = np.random.default_rng(0)
X = rng.standard_normal((200, 5)); y = X @ rng.standard_normal(5) + rng.standard_normal(200); c = (y > 0).astype(int)
Xp = rng.standard_normal((2000, 8)); cp = (Xp @ rng.standard_normal(8) + rng.standard_normal(2000) > 0).astype(int)
warnings.simplefilter("ignore")
if LIB == "linbook":
    import linbook
    from linbook import online
    models = [(linbook.LinearRegression(), X, y), (linbook.Ridge(), X, y), (linbook.Lasso(lam=0.1), X, y),
              (linbook.LogisticRegression(), X, c), (linbook.LDA(), X, c), (linbook.QDA(), X, c),
              (linbook.Perceptron(random_state=0), Xp, cp), (online.SGDClassifier(random_state=0), X, c)]
else:
    from sklearn import linear_model as lm, discriminant_analysis as da
    models = [(lm.LinearRegression(), X, y), (lm.Ridge(), X, y), (lm.Lasso(alpha=0.1), X, y),
              (lm.LogisticRegression(), X, c), (da.LinearDiscriminantAnalysis(), X, c),
              (da.QuadraticDiscriminantAnalysis(), X, c), (lm.Perceptron(random_state=0), Xp, cp),
              (lm.SGDClassifier(random_state=0), X, c)]
for m, A, b in models:
    m.fit(A, b).predict(A)
print(time.perf_counter() - t0, time.process_time())
"""

FIRST_FIT_ONLINE = """
import time, warnings
t0 = time.perf_counter()
import numpy as np
rng = np.random.default_rng(0)
X = rng.standard_normal((200, 5)); y = X @ rng.standard_normal(5) + rng.standard_normal(200)
warnings.simplefilter("ignore")
if LIB == "linbook":
    from linbook import online
    models = [online.LMS(eta0=0.01, max_iter=5), online.RecursiveLeastSquares(), online.OnlineGradientDescent()]
else:
    from sklearn import linear_model as lm
    models = [lm.SGDRegressor(penalty=None, learning_rate="constant", eta0=0.01, max_iter=5, tol=None),
              lm.LinearRegression(), lm.SGDRegressor(penalty=None, learning_rate="invscaling", power_t=0.5,
                                                     max_iter=1, tol=None, shuffle=False)]
for m in models:
    m.fit(X, y).predict(X)
print(time.perf_counter() - t0, time.process_time())
"""

FIRST_FIT_LARGE = """
import time, warnings
t0 = time.perf_counter()
import numpy as np
rng = np.random.default_rng(0)
X = rng.standard_normal((20_000, 20)); c = (X @ rng.standard_normal(20) + rng.standard_normal(20_000) > 0).astype(int)
warnings.simplefilter("ignore")
if LIB == "linbook":
    import linbook
    from linbook import online
    models = [linbook.Perceptron(random_state=0), online.SGDClassifier(random_state=0)]
else:
    from sklearn import linear_model as lm
    models = [lm.Perceptron(random_state=0), lm.SGDClassifier(loss="log_loss", random_state=0)]
for m in models:
    m.fit(X, c).predict(X)
print(time.perf_counter() - t0, time.process_time())
"""


def _first_fit(lib, cold, script=FIRST_FIT):
    def run(_):
        env = dict(os.environ)
        with tempfile.TemporaryDirectory() as empty:
            if cold:
                env["NUMBA_CACHE_DIR"] = empty
            out = subprocess.run([sys.executable, "-c", f"LIB = {lib!r}\n" + script], env=env,
                                 capture_output=True, text=True, check=True)
        inside, cpu = map(float, out.stdout.split()[-2:])
        run.cpu.append(cpu)
        return inside, cpu
    run.cpu = []          # CPU time of every run (the harness's untimed warm-up first)
    return run


def _bytecode_setup(*runs):
    """A first-fit row's setup: linbook's bytecode written, the CPU records of its runs emptied."""
    def setup():
        compile_bytecode()
        for run in runs:
            run.cpu.clear()
    return setup


def _first_fit_case(name, lib_run, ref_run, what, **kwargs):
    """A first-fit row: the two scripts in fresh processes, with the CPU times of every timed pair."""
    def compare(data, a, b):
        lin, ref = lib_run.cpu[1:], ref_run.cpu[1:]          # without the untimed warm-up
        ratio = statistics.median(x / y for x, y in zip(lin, ref))
        return (f"inside the processes ({what}, last pair): linbook {a[0]:.2f} s, sklearn {b[0]:.2f} s; "
                f"CPU time medians linbook {statistics.median(lin):.2f} s, sklearn {statistics.median(ref):.2f} s "
                f"(paired ratio {ratio:.2f})")
    return Case(name=name, setup=_bytecode_setup(lib_run, ref_run), linbook=lib_run, reference=ref_run,
                compare=compare, repeat=5, **kwargs)


CASES = [
    Case(name=f"tiny default 200 x 5 fit+predict x {LOOPS}: {name}", setup=setup_tiny,
         linbook=_loop(make_lin, target), reference=_loop(make_ref, target), reference_name=f"sklearn {ref_name}",
         target=1.0, compare=_agree, repeat=5)
    for name, make_lin, make_ref, ref_name, target in TINY
] + [
    Case(name="RLS default partial_fit 1e5 x 10 in chunks of 100", setup=setup_stream, linbook=_rls_chunks,
         reference=_resolve_chunks, reference_name="numpy: accumulate X'X, re-solve per chunk", target=1.0,
         compare=lambda d, a, b: f"max |w_rls - w_solve| {np.abs(a - b).max():.1e}", repeat=5),
    Case(name="RLS default partial_fit 1e4 x 100 in chunks of 100", setup=setup_stream_wide,
         linbook=_rls_chunks, reference=_resolve_chunks, reference_name="numpy: accumulate X'X, re-solve per chunk",
         target=1.0, compare=lambda d, a, b: f"max |w_rls - w_solve| {np.abs(a - b).max():.1e}", repeat=5),
    _first_fit_case("first fits default, fresh process, warm numba cache (8 estimators)",
                    _first_fit("linbook", cold=False), _first_fit("sklearn", cold=False), "imports + 8 first fits",
                    reference_name="sklearn counterparts", target=1.1,
                    notes="wall time of the whole process, interpreter start included"),
    _first_fit_case("first fits default, fresh process, cold numba cache (8 estimators)",
                    _first_fit("linbook", cold=True), _first_fit("sklearn", cold=True), "imports + 8 first fits",
                    reference_name="sklearn counterparts", target=2.0),
    _first_fit_case("first fits tuned (same algorithms), fresh process, warm numba cache: online models (LMS, RLS, "
                    "OGD) 200 x 5",
                    _first_fit("linbook", cold=False, script=FIRST_FIT_ONLINE),
                    _first_fit("sklearn", cold=False, script=FIRST_FIT_ONLINE), "imports + 3 first fits",
                    reference_name="sklearn SGDRegressor (constant, invscaling 1 pass), LinearRegression", target=1.1,
                    notes="the same algorithms: LMS = constant-step SGD, RLS = least squares, OGD = eta0/sqrt(t) SGD"),
    _first_fit_case("first fits default, fresh process, warm numba cache, 20k x 20 (compiled Perceptron, SGD)",
                    _first_fit("linbook", cold=False, script=FIRST_FIT_LARGE),
                    _first_fit("sklearn", cold=False, script=FIRST_FIT_LARGE),
                    "imports + 2 first fits, cached kernels loaded",
                    reference_name="sklearn Perceptron, SGDClassifier", target=1.1),
    _first_fit_case("first fits default, fresh process, cold numba cache: compilation shown, 20k x 20 "
                    "(Perceptron, SGD)",
                    _first_fit("linbook", cold=True, script=FIRST_FIT_LARGE),
                    _first_fit("sklearn", cold=True, script=FIRST_FIT_LARGE), "imports + 2 first fits, kernels compiled",
                    reference_name="sklearn Perceptron, SGDClassifier", target=2.0),
]
