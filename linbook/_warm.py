"""Fill numba's on-disk cache for the kernels the book's estimators use (``make env`` runs it).

It first writes linbook's bytecode (``__pycache__``), as ``pip install`` does for an installed
package: an editable install under ``PYTHONDONTWRITEBYTECODE`` otherwise compiles every linbook
module from source in each fresh process (about 0.1 s of a first fit's CPU time).
``python -m linbook._warm`` then fits each main estimator once on small synthetic data, dense
and (where accepted) CSR, at sizes that take the compiled paths, so a student's first fit in a
fresh process loads compiled code instead of compiling it. It prints the seconds it took.
Safe to rerun: with a warm cache it only loads.
"""

from __future__ import annotations

import compileall
import os
import time
import warnings


def compile_bytecode():
    """Write the bytecode of linbook's modules where it is missing or stale (quietly: a package
    directory that is not writable, such as a system site-packages, keeps what pip wrote)."""
    compileall.compile_dir(os.path.dirname(os.path.abspath(__file__)), quiet=2)


def main():
    import numpy as np
    import scipy.sparse as sp

    import linbook
    from linbook import online, perceptron
    from linbook.online import sgd

    # small fits run numpy loops (no numba load in a chapter's first cells); here every fit must
    # take its compiled path, so that larger fits later load compiled code instead of compiling it
    sgd._numpy_steps_left[0] = 0        # the budget shared by SGD, LMS, RLS, online gradient descent and Lasso
    perceptron._numpy_updates_left[0] = 0

    start = time.perf_counter()
    compile_bytecode()
    rng = np.random.default_rng(0)
    n, d = 2_000, 8
    X = rng.standard_normal((n, d))
    y_real = X @ rng.standard_normal(d) + rng.standard_normal(n)
    y_bin = (y_real > 0).astype(int)
    y_three = np.digitize(y_real, np.quantile(y_real, [1 / 3, 2 / 3]))
    X_csr = sp.csr_matrix(np.where(rng.random((n, d)) < 0.3, X, 0.0))
    regressors = [linbook.LinearRegression(), linbook.Ridge(), linbook.Lasso(lam=0.1),
                  online.SGDRegressor(random_state=0), online.LMS(max_iter=2), online.RecursiveLeastSquares(),
                  online.OnlineGradientDescent()]
    classifiers = [linbook.LogisticRegression(), linbook.LDA(), linbook.QDA(), linbook.GaussianNaiveBayes(),
                   linbook.Perceptron(random_state=0, max_iter=2), linbook.Perceptron(form="pocket", max_iter=1),
                   online.SGDClassifier(random_state=0)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for model in regressors:
            model.fit(X, y_real).predict(X)
        for model in classifiers:
            model.fit(X, y_bin).predict(X)
        linbook.LogisticRegression().fit(X, y_three).predict(X)
        online.SGDClassifier(random_state=0).fit(X, y_three).predict(X)   # each loss and number of outputs
        online.SGDClassifier(loss="perceptron", random_state=0).fit(X, y_bin).predict(X)   # compiles its own loop
        linbook.Perceptron(form="dual", max_iter=1).fit(X[:300], y_bin[:300])
        stream = online.RecursiveLeastSquares()         # partial_fit's one-call chunks: rls_plain_chunk
        for i in range(0, 1000, 100):
            stream.partial_fit(X[i:i + 100], y_real[i:i + 100])
        _with_prefetch(lambda: [model.fit(X, target) for model, target in (
            (online.SGDRegressor(random_state=0), y_real), (online.SGDClassifier(random_state=0), y_bin),
            (online.SGDClassifier(random_state=0), y_three), (linbook.Perceptron(random_state=0, max_iter=2), y_bin))])
        linbook.Lasso(lam=0.1).fit(X[:10], y_real[:10])      # wide: the residual sweep (tall: the Gram sweep)
        wide_csr = sp.random(30, 4200, density=0.01, format="csr", random_state=0)   # over 4096 columns:
        _try(lambda: linbook.Lasso(lam=0.1).fit(wide_csr, y_real[:30]))          # the sparse residual sweep
        for model in (linbook.LinearRegression(), linbook.Ridge(), online.SGDRegressor(random_state=0)):
            _try(lambda m=model: m.fit(X_csr, y_real).predict(X_csr))
        for model in (linbook.LogisticRegression(), linbook.Perceptron(random_state=0, max_iter=2),
                      linbook.Perceptron(form="dual", max_iter=1), online.SGDClassifier(random_state=0)):
            _try(lambda m=model: m.fit(X_csr, y_bin).predict(X_csr))
    print(f"linbook: numba cache warm ({time.perf_counter() - start:.1f} s)")


def _with_prefetch(fits):
    """The default fits' dense loops again, compiled with the prefetch of rows that large ``X`` takes."""
    from linbook._kernels import prefetch

    default, prefetch.PREFETCH_MIN_BYTES = prefetch.PREFETCH_MIN_BYTES, 0
    try:
        fits()
    finally:
        prefetch.PREFETCH_MIN_BYTES = default


def _try(fit):
    """Sparse input where the estimator takes it (those that refuse it compile nothing for it)."""
    try:
        fit()
    except (TypeError, ValueError):
        pass


if __name__ == "__main__":
    main()
