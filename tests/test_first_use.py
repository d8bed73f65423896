"""First use and the SGD stop rule (issue 22): small fits in numpy, the compiled kernels equal to them.

* The numpy SGD epoch (``linbook.online.sgd._numpy_epoch``, what a chapter's small fit runs) makes
  the same steps as the compiled one (``linbook._kernels.sgd.sgd_epoch_dense``).
* ``row_stats`` in numpy equals the compiled pass.
* A fresh process fitting the main estimators on small data never imports numba.
* ``fit``'s stop rule: it fires on noisy data, ``tol=None`` runs every epoch, and the squared
  error's rule does not depend on the scale of ``y``.
"""

import subprocess
import sys

import numpy as np
import pytest

from linbook.online import SGDClassifier, SGDRegressor
from linbook import base as base_module
from linbook.online import sgd as sgd_module


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
    X, y, *_ = _data(seed=1)
    monkeypatch.setattr(sgd_module, "_numpy_steps_left", [10 ** 9])
    reference = SGDRegressor(random_state=0, max_iter=6, tol=None).fit(X, y)
    monkeypatch.setattr(sgd_module, "_numpy_steps_left", [2 * X.shape[0]])   # two epochs in numpy
    switched = SGDRegressor(random_state=0, max_iter=6, tol=None).fit(X, y)
    assert sgd_module._numpy_steps_left[0] == 0
    np.testing.assert_allclose(switched.coef_, reference.coef_, rtol=1e-12, atol=1e-12)


def test_numpy_epoch_reports_divergence(monkeypatch):
    from linbook.base import DivergenceError

    X, y, *_ = _data(seed=2)
    monkeypatch.setattr(sgd_module, "_numpy_steps_left", [10 ** 9])
    with pytest.raises(DivergenceError, match="diverged"):
        SGDRegressor(eta0=10.0, average=False, max_iter=3, tol=None).fit(X * 100, y)


def test_row_stats_numpy_equals_compiled(monkeypatch):
    X, *_ = _data(seed=4)
    X[3] = 0.0
    X[5, 2] = 0.0
    got = base_module.row_stats(X)
    monkeypatch.setattr(base_module, "_NUMPY_STATS_MAX", 0)
    want = base_module.row_stats(X)
    assert got[1] == want[1] == np.count_nonzero(X)
    assert got[0] == pytest.approx(want[0], rel=1e-13)
    assert got[0] == pytest.approx(np.max(np.sum(X * X, axis=1)), rel=1e-13)


def test_small_first_fits_load_no_compiled_code():
    """The first cells of a chapter (small data) run without importing numba."""
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
                (online.SGDRegressor(random_state=0), X, y)]:
    m.fit(A, b).predict(A)
print("numba" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.split()[-1] == "False"


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
