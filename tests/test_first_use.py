"""First use and the SGD stop rule (issue 22): small fits in numpy, the compiled kernels equal to them.

* The numpy SGD epoch (``linbook.online.sgd._numpy_epoch``, what a chapter's small fit runs) makes
  the same steps as the compiled one (``linbook._kernels.sgd.sgd_epoch_dense``).
* ``row_stats`` of dense X (numpy) equals that of CSR X (the compiled pass).
* A fresh process fitting the main estimators on small data never imports numba.
* ``fit``'s stop rule: it fires on noisy data, ``tol=None`` runs every epoch, and the squared
  error's rule does not depend on the scale of ``y``.
"""

import os
import subprocess
import sys

import numpy as np
import scipy.sparse as sp
import pytest

from linbook import Perceptron
from linbook.online import LMS, OnlineGradientDescent, RecursiveLeastSquares, SGDClassifier, SGDRegressor
from linbook import base as base_module
from linbook.online import _stream
from linbook.online import lms as lms_module
from linbook.online import ogd as ogd_module
from linbook.online import rls as rls_module
from linbook.online import sgd as sgd_module
from linbook._kernels import online as online_kernels
from tests.lockstep import assert_sweeps_in_lockstep


def _data(seed=0, n=300, d=6):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * rng.uniform(0.5, 3.0, d)
    y = X @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n)
    three = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
    return X, y, (y > 0).astype(int), three, rng.uniform(0.5, 2.0, n)


CASES = [
    (SGDRegressor, "real", {}),
    (SGDRegressor, "real", dict(lam=3.0, learning_rate="optimal")),
    (SGDRegressor, "real", dict(learning_rate="robbins_monro", average=7, eta0=0.01)),
    (SGDRegressor, "real", dict(fit_intercept=False, eta0=0.005, average=False)),
    (SGDClassifier, "binary", {}),
    (SGDClassifier, "binary", dict(lam=2.0, average=False, eta0=0.05)),
    (SGDClassifier, "three", {}),
    (SGDClassifier, "binary", dict(loss="perceptron", average=False, eta0=1.0)),
]


@pytest.mark.parametrize("cls, target, options", CASES)
@pytest.mark.parametrize("weighted", [False, True])
def test_numpy_epoch_equals_compiled_epoch(monkeypatch, cls, target, options, weighted):
    X, y, binary, three, sw = _data()
    t = {"real": y, "binary": binary, "three": three}[target]
    weights = sw if weighted else None
    fits = []
    for budget in (10 ** 9, 0):                      # all epochs in numpy, then all compiled
        monkeypatch.setattr(sgd_module, "_numpy_steps_left", [budget])
        fits.append(cls(random_state=3, max_iter=4, tol=None, **options).fit(X, t, sample_weight=weights))
    numpy_fit, compiled = fits
    assert numpy_fit.t_ == compiled.t_ == 4 * X.shape[0]
    np.testing.assert_allclose(numpy_fit.coef_, compiled.coef_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(numpy_fit.intercept_, compiled.intercept_, rtol=1e-12, atol=1e-12)


def test_budget_switches_to_compiled_midway(monkeypatch):
    """The stop rule runs at least n_iter_no_change + 1 = 3 epochs: a budget of 3 covers them in numpy,
    the later epochs run compiled."""
    X, y, *_ = _data(seed=1)
    options = dict(random_state=0, max_iter=8, tol=0.0, n_iter_no_change=2)
    monkeypatch.setattr(sgd_module, "_numpy_steps_left", [10 ** 9])
    reference = SGDRegressor(**options).fit(X, y)
    assert reference.n_iter_ > 3
    monkeypatch.setattr(sgd_module, "_numpy_steps_left", [3 * X.shape[0]])   # three epochs in numpy
    switched = SGDRegressor(**options).fit(X, y)
    assert sgd_module._numpy_steps_left[0] == 0
    assert switched.n_iter_ == reference.n_iter_
    np.testing.assert_allclose(switched.coef_, reference.coef_, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("make", [lambda: SGDRegressor(random_state=0, max_iter=6, tol=None),
                                  lambda: SGDRegressor(random_state=0), lambda: LMS(max_iter=6)])
def test_a_fit_beyond_the_budget_starts_compiled(numpy_budget, make):
    """A fit whose fewest epochs (all of max_iter without a stop rule; n_iter_no_change + 1 = 6 with one)
    need more steps than the budget holds runs compiled from its first epoch: it leaves the budget as
    it was instead of spending numpy time before loading the compiled loop anyway."""
    X, y, *_ = _data(seed=1)
    numpy_budget[0] = 5 * X.shape[0]
    model = make().fit(X, y)
    assert numpy_budget[0] == 5 * X.shape[0]
    assert model.n_iter_ >= 6
    numpy_budget[0] = 6 * X.shape[0]                   # now the fewest epochs fit: the first six run in numpy
    make().fit(X, y)
    assert numpy_budget[0] == 0


def test_numpy_epoch_reports_divergence(monkeypatch):
    from linbook.base import DivergenceError

    X, y, *_ = _data(seed=2)
    monkeypatch.setattr(sgd_module, "_numpy_steps_left", [10 ** 9])
    with pytest.raises(DivergenceError, match="diverged"):
        SGDRegressor(eta0=10.0, average=False, max_iter=3, tol=None).fit(X * 100, y)


def test_row_stats_dense_and_csr_agree():
    X, *_ = _data(seed=4)
    X[3] = 0.0
    X[5, 2] = 0.0
    dense, csr = base_module.row_stats(X), base_module.row_stats(sp.csr_matrix(X))
    assert dense[1] == csr[1] == np.count_nonzero(X)
    assert dense[0] == pytest.approx(csr[0], rel=1e-13)
    assert dense[0] == pytest.approx(np.max(np.sum(X * X, axis=1)), rel=1e-13)
    assert base_module.max_sq_row_norm(X) == dense[0]
    with np.errstate(over="ignore"):
        assert base_module.row_stats(np.full((2, 3), 1e200))[0] == np.inf


def test_small_first_fits_load_no_compiled_code():
    """The first cells of a chapter (small data, dense or sparse) run without importing numba."""
    script = """
import sys, warnings
import numpy as np
import linbook
from linbook import online
warnings.simplefilter("ignore")
rng = np.random.default_rng(0)
X = rng.standard_normal((200, 5)); y = X @ rng.standard_normal(5) + rng.standard_normal(200)
c = (y > 0).astype(int)
Xp = rng.standard_normal((2000, 8)); cp = (Xp @ rng.standard_normal(8) > 0).astype(int)
for m, A, b in [(linbook.LinearRegression(), X, y), (linbook.Ridge(), X, y), (linbook.Lasso(lam=0.1), X, y),
                (linbook.LogisticRegression(), X, c), (linbook.LDA(), X, c), (linbook.QDA(), X, c),
                (linbook.Perceptron(random_state=0), Xp, cp), (online.SGDClassifier(random_state=0), X, c),
                (online.SGDRegressor(random_state=0), X, y), (online.LMS(), X, y),
                (online.RecursiveLeastSquares(), X, y), (online.OnlineGradientDescent(), X, y)]:
    m.fit(A, b).predict(A)
import scipy.sparse as sps
S = sps.random(200, 5, density=0.5, format="csr", random_state=0)
for m in (linbook.LinearRegression(), linbook.Ridge(), linbook.Lasso(lam=0.1)):   # small sparse X too
    m.fit(S, y).predict(S)
print("numba" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.split()[-1] == "False"


_ONE_CONFIGURATION = """
import sys, warnings
import numpy as np
from linbook.online import SGDClassifier, sgd
from linbook._kernels import sgd as kernels
sgd._numpy_steps_left[0] = 0                      # compiled epochs from the first one
warnings.simplefilter("ignore")
rng = np.random.default_rng(0)
X = rng.standard_normal((300, 4)); y = X @ rng.standard_normal(4)
three = sys.argv[1] == "three"
SGDClassifier(random_state=0, max_iter=2, tol=None).fit(X, np.digitize(y, [-0.5, 0.5]) if three else y > 0)
loop = kernels._epoch_loop(kernels.LOG, three, False, False, True, False)   # the default fit on small X
# the residuals are inlined: their variables in the compiled loop's types say which were built
typed = [getattr(c.type_annotation, "typemap", ()) for c in loop.overloads.values()]   # none when loaded
built = sorted({name.split("_residual_v")[0] + "_residual" for names in typed for name in names if "_residual_v" in name})
print(sum(loop.stats.cache_hits.values()), sum(loop.stats.cache_misses.values()), *built)
"""


@pytest.mark.parametrize("target, residual", [("binary", "sigmoid_residual"), ("three", "softmax_residual")])
def test_a_fit_compiles_only_its_configuration_and_caches_it(tmp_path, target, residual):
    """The cold first fit compiles the epoch loop for its own loss and number of outputs only (of the
    residuals, only its loss's), and the next process loads that loop from numba's cache."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))

    def run():
        out = subprocess.run([sys.executable, "-c", _ONE_CONFIGURATION, target], env=env, capture_output=True,
                             text=True, check=True)
        return out.stdout.split()

    assert run() == ["0", "1", residual]          # compiled: one cache miss, one residual built
    assert run() == ["1", "0"]                    # loaded: nothing compiled


def test_stop_rule_fires_on_noisy_data_and_tol_none_runs_every_epoch():
    X, y, binary, *_ = _data(seed=5, n=2000)
    stopped = SGDClassifier(random_state=0, max_iter=300).fit(X, binary)
    assert stopped.tol_reached_ and stopped.n_iter_ < 300
    assert stopped.t_ == stopped.n_iter_ * X.shape[0]
    fixed = SGDClassifier(random_state=0, max_iter=7, tol=None).fit(X, binary)
    assert not fixed.tol_reached_ and fixed.n_iter_ == 7 and fixed.t_ == 7 * X.shape[0]
    # the rule only cuts the epochs short: the first n_iter_ epochs are the same steps (to the last
    # bits, which differ when one fit ran in numpy and the other compiled)
    same = SGDClassifier(random_state=0, max_iter=stopped.n_iter_, tol=None).fit(X, binary)
    np.testing.assert_allclose(same.coef_, stopped.coef_, rtol=1e-12, atol=1e-12)


def test_stop_rule_of_the_squared_error_does_not_depend_on_the_scale_of_y():
    X, y, *_ = _data(seed=6, n=1000)
    epochs = {scale: SGDRegressor(random_state=0).fit(X, scale * y + 5.0 * scale).n_iter_
              for scale in (1e-3, 1.0, 1e3)}
    assert len(set(epochs.values())) == 1, epochs
    assert epochs[1.0] < 1000


@pytest.mark.parametrize("bad", [dict(tol=-1.0), dict(tol="x"), dict(tol=np.nan), dict(n_iter_no_change=0)])
def test_stop_rule_parameters_are_checked(bad):
    X, y, *_ = _data(seed=7, n=50)
    model = SGDRegressor(**bad)
    with pytest.raises(ValueError, match="tol|n_iter_no_change"):
        model.fit(X, y)
    assert not hasattr(model, "coef_")


@pytest.fixture
def numpy_budget():
    """The process's numpy step budget (shared by the online models), restored after the test."""
    saved = _stream.numpy_steps_left[0]
    yield _stream.numpy_steps_left
    _stream.numpy_steps_left[0] = saved


LMS_CASES = [
    dict(fit_intercept=True, schedule=0, eta0=0.02, tol=-1.0, record=False),
    dict(fit_intercept=False, schedule=1, eta0=0.3, tol=-1.0, record=True),
    dict(fit_intercept=True, schedule=0, eta0=0.05, tol=1e-4, record=True),     # the note's test fires
    dict(fit_intercept=True, schedule=0, eta0=50.0, tol=-1.0, record=False),    # diverges
]


@pytest.mark.parametrize("case", LMS_CASES)
def test_lms_numpy_pass_equals_compiled_pass(case):
    X, y, *_ = _data(seed=8, n=200)
    order = np.random.default_rng(1).permutation(len(y))
    p = X.shape[1] + int(case["fit_intercept"])
    outs = []
    for run in (lms_module._delta_rule_pass, online_kernels.lms_pass):
        theta, state = np.full(p, 0.1), np.array([3.0])
        path = np.zeros((len(y) if case["record"] else 0, p))
        with np.errstate(over="ignore", invalid="ignore"):
            pos, code, loss = run(X, y, order, theta, case["fit_intercept"], case["schedule"], case["eta0"], 1.0,
                                  0.75, 0.5, state, case["tol"], path)
        outs.append((pos, code, loss, theta, state, path))
    (pos_a, code_a, loss_a, *arrays_a), (pos_b, code_b, loss_b, *arrays_b) = outs
    assert (pos_a, code_a) == (pos_b, code_b)
    assert code_a == (2 if case["eta0"] > 1 else 1 if case["tol"] > 0 else 0)
    if code_a != 2:
        assert loss_a == pytest.approx(loss_b, rel=1e-12)
        for a, b in zip(arrays_a, arrays_b):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("gain_limit", [np.inf, 0.5])
def test_rls_numpy_rows_equal_compiled_rows(gain_limit):
    X, y, *_, sw = _data(seed=9, n=150)
    sw[[4, 9]] = 0.0                                  # skipped rows
    Xa = np.c_[X, np.ones(len(y))]
    A0 = Xa[:20].T @ Xa[:20]
    start = np.linalg.inv(A0)

    def state():
        return start.copy(), np.zeros(Xa.shape[1]), A0.copy(), np.zeros(Xa.shape[1])

    a, b = state(), state()
    row_a, outcome_a = rls_module._sherman_morrison_rows(Xa, y, sw, *a, gain_limit)
    row_b, outcome_b = online_kernels.rls_pass(Xa, np.zeros(0), y, sw, *b, gain_limit)     # rows as given
    assert (row_a, outcome_a) == (row_b, outcome_b)
    for u, v in zip(a, b):
        np.testing.assert_allclose(u, v, rtol=1e-10, atol=1e-12)
    kept = np.arange(len(y)) < row_a
    np.testing.assert_allclose(a[2], A0 + Xa[kept].T @ (sw[kept, None] * Xa[kept]), rtol=1e-12)
    np.testing.assert_allclose(a[1], np.linalg.solve(a[2], a[3]), rtol=1e-8, atol=1e-10)     # m solves A m = r
    if gain_limit == np.inf:
        assert (row_a, outcome_a) == (len(y), rls_module.DONE)
    else:                                             # stopped before the first row of gain s x'Px > 0.5
        assert outcome_a == rls_module.LARGE_GAIN and 0 < row_a < len(y)
    shift = X.mean(axis=0)                            # rows [x - shift, 1] formed by the compiled loop
    Xs = np.c_[X - shift, np.ones(len(y))]
    a, b = state(), state()
    assert rls_module._sherman_morrison_rows(Xs, y, sw, *a, gain_limit) == \
        online_kernels.rls_pass(X, shift, y, sw, *b, gain_limit)
    for u, v in zip(a, b):
        np.testing.assert_allclose(u, v, rtol=1e-10, atol=1e-12)
    bad_P = -np.eye(Xa.shape[1])                      # not positive definite: the first weighted row fails
    for run in (lambda P: rls_module._sherman_morrison_rows(Xa, y, sw, P, *state()[1:], gain_limit),
                lambda P: online_kernels.rls_pass(X, shift, y, sw, P, *state()[1:], gain_limit)):
        assert run(bad_P.copy()) == (0, rls_module.LOST_DEFINITENESS)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_rls_numpy_normal_equations_equal_compiled(fit_intercept):
    """A chunk added to A m = r and solved: the numpy statement and the compiled call agree on A, r, the
    equilibrated factor, m and the outcome (solved, singular, overflow)."""
    X, y, *_, sw = _data(seed=11, n=120)
    sw[[3, 50]] = 0.0                                 # skipped rows
    shift = X.mean(axis=0) + 5.0 if fit_intercept else np.zeros(0)
    Z = np.c_[X - shift, np.ones(len(y))] if fit_intercept else X.copy()
    p = Z.shape[1]
    A0, r0 = np.diag(np.r_[np.full(X.shape[1], 0.3), np.zeros(p - X.shape[1])]), np.full(p, 0.1)

    def both(rows, A_start, ceiling=np.zeros(0)):
        A, r, factor, m, outcome = rls_module._normal_equations(A_start, r0, Z[rows].copy(), y[rows], sw[rows],
                                                                ceiling)
        A_c, r_c, C, e, m_c = A_start.copy(), r0.copy(), np.empty((p, p)), np.empty(p), np.full(p, 7.0)
        outcome_c = online_kernels.rls_normal_solve(X[rows], shift, y[rows], sw[rows], A_c, r_c, ceiling, C, e,
                                                    m_c)
        assert outcome_c == outcome
        return (A, r, factor, m), (A_c, r_c, (C, e), m_c), outcome

    (A, r, (C, e), m), (A_c, r_c, (C_c, e_c), m_c), outcome = both(slice(0, 120), A0)
    assert outcome == rls_module.CONDITION_UNKNOWN                      # no ceiling yet
    top = A.diagonal()
    numpy_done, compiled_done, outcome = both(slice(0, 120), A0, ceiling=2 * top)
    assert outcome == rls_module.DONE                                   # every A_jj below its ceiling:
    np.testing.assert_array_equal(numpy_done[2][1], np.ones(p))        # numpy factors A unscaled,
    np.testing.assert_allclose(numpy_done[3], compiled_done[3], rtol=1e-10, atol=1e-12)    # the same m
    assert both(slice(0, 120), A0, ceiling=np.r_[2 * top[:-1], top[-1]])[2] == rls_module.CONDITION_UNKNOWN
    for u, v in [(A, A_c), (r, r_c), (C, C_c), (e, e_c), (m, m_c)]:
        np.testing.assert_allclose(v, u, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(A_c, A0 + Z.T @ (sw[:, None] * Z), rtol=1e-12)
    np.testing.assert_allclose(A_c @ m_c, r_c, rtol=1e-9, atol=1e-9)     # m solves A m = r
    X[:, 1] = 0.0                                                        # a zero column, no prior: singular
    if fit_intercept:
        shift[1] = 0.0
    Z = np.c_[X - shift, np.ones(len(y))] if fit_intercept else X.copy()
    _, (*_, m_c), outcome = both(slice(0, 120), np.zeros((p, p)))
    assert outcome == rls_module.NOT_POSITIVE_DEFINITE and (m_c == 7.0).all()
    X[5] *= 1e200                                                        # x x^T overflows
    Z = np.c_[X - shift, np.ones(len(y))] if fit_intercept else X.copy()
    assert both(slice(0, 120), A0)[2] == rls_module.OVERFLOW


@pytest.mark.parametrize("loss", [0, 1, 2])
@pytest.mark.parametrize("radius, eta0, auto", [(-1.0, 1.0, True), (1.5, 0.2, False), (0.5, 1.0, True)])
def test_ogd_numpy_rounds_equal_compiled_rounds(loss, radius, eta0, auto):
    X, y, binary, *_ = _data(seed=10, n=200)
    target = binary.astype(float) if loss == 1 else y
    outs = []
    for run in (ogd_module._ogd_rounds, online_kernels.ogd_rounds):
        theta, state, losses = np.zeros(X.shape[1]), np.array([2.0, 0.5]), np.empty(len(y))
        assert run(X, target, theta, loss, radius, eta0, auto, state, losses) == -1
        outs.append((theta, state, losses))
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-12)
    if radius > 0:
        assert np.linalg.norm(outs[0][0]) <= radius * (1 + 1e-12)


@pytest.mark.parametrize("make, kind", [
    (lambda: LMS(eta0=0.01, max_iter=4, shuffle=True, random_state=0, record_path=True), "real"),
    (lambda: RecursiveLeastSquares(), "real"),
    (lambda: OnlineGradientDescent(loss="log_loss", radius=3.0), "binary"),
])
def test_online_models_fit_the_same_in_numpy_and_compiled(numpy_budget, make, kind):
    X, y, binary, *_ = _data(seed=11, n=400)
    target = y if kind == "real" else binary
    fits = []
    for budget in (10 ** 9, 0):                      # every pass in numpy, then every pass compiled
        numpy_budget[0] = budget
        fits.append(make().fit(X, target))
    assert numpy_budget[0] == 0
    np.testing.assert_allclose(fits[0].coef_, fits[1].coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fits[0].intercept_ if kind == "real" else 0.0,
                               fits[1].intercept_ if kind == "real" else 0.0, rtol=1e-10, atol=1e-12)


def test_lms_loss_rule_is_sgds_rule(numpy_budget):
    X, y, *_ = _data(seed=12, n=500)
    numpy_budget[0] = 10 ** 9                        # every fit in numpy: the same rounding in each
    epochs = {scale: LMS(eta0=0.005, max_iter=400, shuffle=True, random_state=0, loss_tol=1e-3)
              .fit(X, scale * y + 3.0 * scale) for scale in (1e-3, 1.0, 1e3)}
    assert len({m.n_iter_ for m in epochs.values()}) == 1
    stopped = epochs[1.0]
    assert stopped.tol_reached_ and 5 < stopped.n_iter_ < 400
    full = LMS(eta0=0.005, max_iter=40, shuffle=True, random_state=0).fit(X, y)
    assert not full.tol_reached_ and full.n_iter_ == 40
    # the rule only cuts the epochs short: the first n_iter_ epochs are the same steps
    same = LMS(eta0=0.005, max_iter=stopped.n_iter_, shuffle=True, random_state=0).fit(X, y + 3.0)
    np.testing.assert_allclose(same.coef_, stopped.coef_, rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="loss_tol"):
        LMS(loss_tol=-1.0).fit(X, y)


def _lasso_problem(seed, n, d, weighted=False):
    """Correlated columns of unequal scales with offsets (centring matters), a sparse truth."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) @ (np.eye(d) + 0.3 * rng.standard_normal((d, d))) * rng.uniform(0.5, 4.0, d)
    X += rng.normal(0.0, 2.0, d)
    k = min(d, 6)
    y = X[:, :k] @ rng.standard_normal(k) + 0.5 * rng.standard_normal(n) + 3.0
    lam_max = float(np.max(np.abs((X - X.mean(0)).T @ (y - y.mean()))))
    return X, y, lam_max, (rng.uniform(0.2, 3.0, n) if weighted else None)


LASSO_CASES = [(0, 300, 8, 0.05, False), (1, 300, 8, 0.3, True), (2, 40, 120, 0.02, False),
               (3, 40, 120, 0.2, True), (4, 60, 30, 0.0, False), (5, 25, 60, 1e-3, False)]


@pytest.mark.parametrize("seed, n, d, frac, weighted", LASSO_CASES)
def test_lasso_compiled_sweep_equals_readable_sweep(seed, n, d, frac, weighted):
    """Both variants (Gram: N > 2 D; residual: wide), from zero and from a polished point: the same
    iterates to rounding, sweep after sweep."""
    from linbook.linear import lasso as lasso_module
    from linbook.linear._base import moments

    X, y, lam_max, sw = _lasso_problem(seed, n, d, weighted)
    model = lasso_module.Lasso(lam=frac * lam_max)
    Xv, yv, swv = model._validate(X, y, sw)
    mom = moments(model, Xv, yv, swv, gram=n >= d, common_scale=False)
    lam_j = frac * lam_max / (mom.y_scale * mom.x_scale)
    use_gram = mom.gram_built and mom.n > 2 * mom.d
    assert use_gram == (n > 2 * d)
    mode = "gram" if use_gram else "residual"
    readable = lasso_module._CoordinateDescent(mom, lam_j, mode)
    compiled = lasso_module._CoordinateDescent(mom, lam_j, mode)
    assert assert_sweeps_in_lockstep(readable, compiled, ["grad" if use_gram else "r"])


@pytest.mark.parametrize("seed, n, d, frac, weighted", LASSO_CASES)
def test_lasso_fits_the_same_in_numpy_and_compiled(numpy_budget, seed, n, d, frac, weighted):
    """Whole fits (polishing and the certificate included): the same sweeps (give or take the one where
    the duality gap crosses tol, which rounding can move), coefficients to rounding; a budget that runs
    out mid-fit switches to the compiled sweep."""
    from linbook import Lasso

    X, y, lam_max, sw = _lasso_problem(seed, n, d, weighted)
    fits = []
    for budget in (10 ** 9, 0, 2 * d):                  # numpy throughout, compiled throughout, two sweeps in numpy
        numpy_budget[0] = budget
        fits.append(Lasso(lam=frac * lam_max, max_iter=5000).fit(X, y, sample_weight=sw))
        assert numpy_budget[0] == budget - d * min(fits[-1].n_iter_, budget // d)     # d steps a numpy sweep
    reference = fits[0]
    assert reference.converged_ and reference.n_iter_ > 2 * (frac < 0.3)     # most switch mid-fit
    for other in fits[1:]:
        assert other.converged_ and abs(other.n_iter_ - reference.n_iter_) <= 1
        np.testing.assert_allclose(other.coef_, reference.coef_, rtol=1e-8,
                                   atol=1e-10 * np.max(np.abs(reference.coef_)))
        assert np.array_equal(np.sign(other.coef_), np.sign(reference.coef_))


def test_small_lasso_fits_stay_in_numpy(numpy_budget):
    """A chapter's Lasso on 200 x 5 takes a few sweeps of five coordinates from the budget."""
    from linbook import Lasso

    X, y, lam_max, _ = _lasso_problem(6, 200, 5)
    numpy_budget[0] = 1000
    model = Lasso(lam=0.1).fit(X, y)
    assert numpy_budget[0] == 1000 - 5 * model.n_iter_ > 0


@pytest.mark.parametrize("make, target", [(lambda: SGDClassifier(random_state=0, max_iter=3, tol=None), "binary"),
                                          (lambda: SGDClassifier(random_state=0, max_iter=3, tol=None), "three"),
                                          (lambda: SGDRegressor(random_state=0, max_iter=3, tol=None), "real"),
                                          (lambda: Perceptron(random_state=0, max_iter=3, tol=None), "binary")])
def test_the_prefetching_loops_make_the_same_steps(monkeypatch, make, target):
    """Large X takes loops compiled with the prefetch of later rows (a hint: no value may change), small X
    loops without it; the tests' small data would otherwise never run the first kind."""
    from linbook import perceptron as perceptron_module
    from linbook._kernels import prefetch

    monkeypatch.setattr(sgd_module, "_numpy_steps_left", [0])            # the compiled epochs from the first
    monkeypatch.setattr(perceptron_module, "_numpy_updates_left", [0])
    X, y, binary, *_ = _data(seed=6, n=600)
    y = {"binary": binary, "three": np.digitize(y, [-0.5, 0.5]), "real": y}[target]
    assert X.nbytes < prefetch.PREFETCH_MIN_BYTES
    without = make().fit(X, y)
    monkeypatch.setattr(prefetch, "PREFETCH_MIN_BYTES", 0)
    with_prefetch = make().fit(X, y)
    np.testing.assert_array_equal(with_prefetch.coef_, without.coef_)
    np.testing.assert_array_equal(with_prefetch.intercept_, without.intercept_)
