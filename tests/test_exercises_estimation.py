"""The self-checks of the estimation chapter: reference solutions pass, plausible mistakes fail."""

import numpy as np

import linbook.exercises as ex


def test_keys_registered():
    keys = ex.available()
    for k in ("estimation.gaussian-mle", "estimation.beta-bernoulli-predictive", "estimation.ridge-map"):
        assert k in keys


def _mle(X):
    m = X.mean(0)
    R = X - m
    return m, R.T @ R / len(X)


def test_gaussian_mle_reference_passes_and_unbiased_fails():
    assert ex.check("estimation.gaussian-mle", _mle, verbose=False)
    res = ex.check("estimation.gaussian-mle", lambda X: (X.mean(0), np.cov(X.T, ddof=1).reshape(X.shape[1], -1)),
                   verbose=False)
    assert not res
    failed = [p for p in res.properties if not p.passed]
    assert any("N - 1" in p.hint for p in failed)
    assert not ex.check("estimation.gaussian-mle", lambda X: (X.mean(0), np.cov(X.T, bias=True)), verbose=False)


def test_beta_bernoulli_predictive():
    ref = lambda x, a, b: (a + np.sum(x)) / (a + b + len(x))
    assert ex.check("estimation.beta-bernoulli-predictive", ref, verbose=False)
    plug_in = lambda x, a, b: np.mean(x) if len(x) else a / (a + b)
    res = ex.check("estimation.beta-bernoulli-predictive", plug_in, verbose=False)
    assert not res
    map_plugin = lambda x, a, b: (a + np.sum(x) - 1) / (a + b + len(x) - 2)
    assert not ex.check("estimation.beta-bernoulli-predictive", map_plugin, verbose=False)


def test_ridge_map(capsys):
    ref = lambda X, y, s2, t2: np.linalg.solve(X.T @ X + s2 / t2 * np.eye(X.shape[1]), X.T @ y)
    assert ex.check("estimation.ridge-map", ref, verbose=False)
    note = lambda X, y, s2, t2: np.linalg.solve(X.T @ X + 1 / t2 * np.eye(X.shape[1]), X.T @ y)
    res = ex.check("estimation.ridge-map", note)
    assert not res
    assert "wrong strength" in capsys.readouterr().out


def test_student_exception_is_reported():
    def broken(X):
        raise RuntimeError("oops")
    res = ex.check("estimation.gaussian-mle", broken, verbose=False)
    assert not res and "RuntimeError" in res.properties[-1].hint
