"""Every registered self-check reports a broken student function as the student's.

For each exercise, a reference solution passes, and wrong answers derived from it (an
exception, a wrong shape, a wrong type, NaN, None, a tuple of the wrong length) fail with a
hint that speaks of "your function" -- never a line of the check, never an exception escaping
``check``.
"""

from __future__ import annotations

import copy
import re

import numpy as np
import pytest
from scipy.special import log_ndtr
from scipy import stats
from sklearn.metrics import mutual_info_score

import linbook
import linbook.exercises as ex
from linbook.numerics import log1pexp, sigmoid, softmax
from linbook.optim import bfgs_update_H, lbfgs_two_loop


def _gaussian_mle(X):
    m = X.mean(0)
    return m, (X - m).T @ (X - m) / len(X)


def _ls(X, y):
    xm, ym = X.mean(0), y.mean()
    w = np.linalg.lstsq(X - xm, y - ym, rcond=None)[0]
    return w, ym - xm @ w


def _ridge(X, y, lam):
    xm, ym = X.mean(0), y.mean()
    Xc = X - xm
    w = np.linalg.solve(Xc.T @ Xc + lam * np.eye(X.shape[1]), Xc.T @ (y - ym))
    return w, ym - xm @ w


def _epoch(X, y, w, b, eta):
    w, n = np.array(w, dtype=float), 0
    for xi, yi in zip(X, y):
        if yi * (xi @ w + b) <= 0:
            w, b, n = w + eta * yi * xi, b + eta * yi, n + 1
    return w, b, n


def _nll_grad_hess(X, y, w):
    z = X @ w
    mu = sigmoid(z)
    return float(np.sum(log1pexp(z) - y * z)), X.T @ (mu - y), X.T @ ((mu * (1 - mu))[:, None] * X)


def _newton(X, y, w, lam):
    _, g, H = _nll_grad_hess(X, y, w)
    return w - np.linalg.solve(H + lam * np.eye(len(w)), g + lam * w)


def _probit(X, y, w):
    t = 2 * y - 1
    u = t * (X @ w)
    lp = log_ndtr(u)
    return float(-lp.sum()), -X.T @ (t * np.exp(-0.5 * u * u - 0.5 * np.log(2 * np.pi) - lp))


def _backtracking(f, g, x, d):
    t = 1.0
    while f(x + t * d) > f(x) + 1e-4 * t * (g(x) @ d):
        t /= 2
    return t


def _irls(X, y, w):
    mu = sigmoid(X @ w)
    s = mu * (1 - mu)
    return np.linalg.solve(X.T @ (s[:, None] * X), X.T @ (s * (X @ w) + y - mu))


def _two_class(m0, m1, S, pi1):
    w = np.linalg.solve(S, m1 - m0)
    return w, 0.5 * (m1 + m0) - (m1 - m0) * np.log(pi1 / (1 - pi1)) / ((m1 - m0) @ w)


def _marginal(x, pis, mus, Sig):
    o = ~np.isnan(x)
    if not o.any():
        return np.asarray(pis, float)
    lj = np.array([np.log(p) + stats.multivariate_normal(m[o], S[np.ix_(o, o)]).logpdf(x[o])
                   for p, m, S in zip(pis, mus, Sig)])
    return np.exp(lj - linbook.logsumexp(lj))


def _fisher(X, y):
    c0, c1 = np.unique(y)
    m0, m1 = X[y == c0].mean(0), X[y == c1].mean(0)
    R = np.where((y == c0)[:, None], X - m0, X - m1)
    return np.linalg.solve(R.T @ R, m1 - m0)


def _log_evidence(E, grad, hess, x0):
    return linbook.laplace.laplace_approximation(E, grad, hess, np.atleast_1d(np.asarray(x0, float))).log_evidence


def _rls(m, P, x, y):
    Px = P @ x
    k = Px / (1 + x @ Px)
    return m + k * (y - x @ m), P - np.outer(k, Px)


def _adagrad(theta, g, s, eta, tau0):
    s = s + g ** 2
    return theta - eta * g / (tau0 + np.sqrt(s)), s


def _loo_residuals(X, y):
    Q, _ = np.linalg.qr(X)
    return (y - Q @ (Q.T @ y)) / (1 - np.sum(Q ** 2, axis=1))


def _kfold(n, k):
    sizes = n // k + (np.arange(k) < n % k)
    stops = np.cumsum(sizes)
    tests = [np.arange(stop - size, stop) for stop, size in zip(stops, sizes)]
    return [(np.setdiff1d(np.arange(n), te), te) for te in tests]


REFERENCES = {
    "estimation.gaussian-mle": _gaussian_mle,
    "estimation.beta-bernoulli-predictive": lambda x, a, b: (a + np.sum(x)) / (a + b + len(x)),
    "estimation.ridge-map": lambda X, y, s2, t2: np.linalg.solve(X.T @ X + s2 / t2 * np.eye(X.shape[1]), X.T @ y),
    "linear.least-squares": _ls,
    "linear.ridge": _ridge,
    "linear.lasso-coordinate": lambda z, a, lam: np.sign(z) * np.maximum(np.abs(z) - lam, 0.0) / a,
    "perceptron.epoch": _epoch,
    "perceptron.dual-to-primal": lambda a, X, y: (X.T @ (a * y), float(np.sum(a * y))),
    "perceptron.margin": lambda X, y, w, b: np.min(y * (X @ w + b)) / np.linalg.norm(w),
    "logreg.nll-grad-hess": _nll_grad_hess,
    "logreg.newton-step": _newton,
    "logreg.softmax-grad": lambda X, Y, W: X.T @ (softmax(X @ W, axis=1) - Y),
    "logreg.probit-nll": _probit,
    "optim.backtracking": _backtracking,
    "optim.bfgs-update-h": bfgs_update_H,
    "optim.lbfgs-two-loop": lbfgs_two_loop,
    "optim.irls-step": _irls,
    "gda.mahalanobis-eig": lambda X, mu, S: np.einsum("ij,ij->i", X - mu, np.linalg.solve(S, (X - mu).T).T),
    "gda.two-class-lda": _two_class,
    "gda.soft-threshold": lambda d, lam: np.sign(d) * np.maximum(np.abs(d) - lam, 0.0),
    "gendisc.marginal-posterior": _marginal,
    "gendisc.fisher-direction": _fisher,
    "gendisc.param-count": lambda M: 2 * M + M * (M + 1) // 2 + 1,
    "laplace.log-evidence": _log_evidence,
    "laplace.moderated-output": lambda mu, var: sigmoid(np.asarray(mu) / np.sqrt(1 + np.pi * np.asarray(var) / 8)),
    "laplace.loo-predictive": lambda lik: np.exp(np.log(len(lik)) - linbook.logsumexp(-np.log(lik), axis=0)),
    "online.polyak-average": lambda bar, th, k: bar + (np.asarray(th) - bar) / k,
    "online.rls-step": _rls,
    "online.adagrad-step": _adagrad,
    "selection.loo-residuals": _loo_residuals,
    "selection.mutual-information": lambda x, y: mutual_info_score(x, y),
    "selection.kfold": _kfold,
}

KEYS = [k for k in ex.available() if not k.startswith("test.")]

# What a check must never show a student: a line of the check, or its file.
CHECKER_TRACE = re.compile(r"line \d+ of _|linbook[/\\]exercises|Traceback")


def test_every_exercise_has_a_reference_here():
    assert sorted(REFERENCES) == KEYS


@pytest.mark.parametrize("key", KEYS)
def test_reference_passes(key):
    assert ex.check(key, REFERENCES[key], verbose=False)


# --- wrong answers built from the reference's output --------------------------------------

def _nan_like(v):
    if isinstance(v, tuple):
        return tuple(_nan_like(x) for x in v)
    if isinstance(v, list):
        return [_nan_like(x) for x in v]
    return np.full(np.shape(v), np.nan)


def _wrong_shape(v):
    """One entry too many (an array) or an array of two numbers instead of one."""
    if isinstance(v, tuple):
        return (_wrong_shape(v[0]),) + v[1:]
    if isinstance(v, list):
        return v[:-1] + [(v[-1][0], v[-1][1][None, :])] if v else [0]
    a = np.atleast_1d(np.asarray(v, dtype=float))
    return np.concatenate([a.ravel(), [1.0]]) if a.ndim == 1 else a[:, :-1]


def _raises(*args, **kwargs):
    raise ValueError("operands could not be broadcast (student bug)")


def _wrap(key, transform):
    ref = REFERENCES[key]

    def student(*args, **kwargs):
        return transform(ref(*args, **kwargs))
    return student


WRONG = {
    "raises": (lambda key: _raises, r"your function raised ValueError: operands could not be broadcast \(student bug\)"),
    "nan": (lambda key: _wrap(key, _nan_like), r"NaN|your function returned"),
    "wrong-shape": (lambda key: _wrap(key, _wrong_shape), r"shape|your function returned"),
    "string": (lambda key: _wrap(key, lambda v: "42"), r"your function returned a str"),
    "none": (lambda key: _wrap(key, lambda v: None), r"your function returned None"),
    "tuple-too-long": (lambda key: _wrap(key, lambda v: (v, v, v) if not isinstance(v, tuple) else v + v),
                       r"your function returned|shape|not numbers"),
}


@pytest.mark.parametrize("kind", sorted(WRONG))
@pytest.mark.parametrize("key", KEYS)
def test_wrong_answer_fails_in_the_students_words(key, kind, capsys):
    make, expected = WRONG[kind]
    with np.errstate(all="raise"):   # the check must not need the caller's error settings
        result = ex.check(key, make(key))
    out = capsys.readouterr().out
    assert not result, f"{key} accepted a {kind} answer:\n{out}"
    assert not CHECKER_TRACE.search(out), out
    failed = " | ".join(p.hint for p in result.properties if not p.passed)
    assert re.search(expected, failed), f"{key}, {kind}: hints do not say what is wrong:\n{out}"


def test_the_brief_examples():
    # an answer unpacked as (w, b) that returns w alone: the student's shape, not the checker's line
    r = ex.check("linear.least-squares", lambda X, y: np.zeros(X.shape[1]), verbose=False)
    (hint,) = [p.hint for p in r.properties if not p.passed]
    assert hint == ("your function returned an array of shape (3,), but linear.least-squares "
                    "expects (w, b): w of shape (D,), b a number")
    # a wrong shape that close() catches names both shapes
    r = ex.check("logreg.softmax-grad", lambda X, Y, W: (X.T @ (softmax(X @ W, axis=1) - Y)).T, verbose=False)
    assert any("got shape (4, 3) where (3, 4) is expected" in p.hint for p in r.properties)


def test_the_students_line_is_reported():
    def mine(X, y):
        w = np.linalg.solve(X, y)   # X is not square
        return w, 0.0
    r = ex.check("linear.least-squares", mine, verbose=False)
    (hint,) = [p.hint for p in r.properties if not p.passed]
    assert hint.startswith("your function raised LinAlgError")
    assert f"in mine, line {mine.__code__.co_firstlineno + 1} of test_exercises_wrong_answers.py" in hint


def test_not_a_function():
    with pytest.raises(TypeError, match="needs your function itself"):
        ex.check("linear.least-squares", np.zeros(3))


def test_a_bug_of_the_check_is_not_blamed_on_the_student():
    @ex.exercise("test.broken-check", "a check with a bug before it calls the function")
    def _broken(fn):
        raise RuntimeError("bug in the check")
        yield  # pragma: no cover

    with pytest.raises(RuntimeError, match="bug in the check"):
        ex.check("test.broken-check", lambda: 0, verbose=False)


def test_students_warnings_settings_are_kept():
    def noisy(z, a, lam):
        np.log(np.zeros(1))   # divide by zero: the student's own setting decides
        return np.sign(z) * np.maximum(np.abs(z) - lam, 0.0) / a
    with np.errstate(divide="raise"):
        r = ex.check("linear.lasso-coordinate", noisy, verbose=False)
    assert not r and "FloatingPointError" in r.properties[-1].hint


# --- functions that change their inputs: judged on what they return ----------------------------------------
# Checks computed their reference after calling the student's function, from arrays they had not copied: a
# right answer that works in place was rejected (with a hint about the maths) and a wrong one could move the
# reference onto itself. The framework now hands every call copies (linbook/exercises/__init__.py, _copied).

# the exercises whose text asks the function to leave an input alone, and whose check says so
DOCUMENTED_IN_PLACE = {"perceptron.epoch": "does not modify the input w",
                       "online.polyak-average": "does not modify its inputs in place"}


def _scramble(value):
    """Overwrite every array (and list) in an argument, as a careless in-place function would."""
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf" and value.flags.writeable:
        value[...] = 0 if value.dtype.kind != "f" else -7.5
    elif isinstance(value, list):
        for v in value:
            _scramble(v)
        value.append(np.zeros(1))


def _then_scrambles(key):
    ref = REFERENCES[key]

    def student(*args):
        out = copy.deepcopy(ref(*args))     # what it returns may be a view of an input (np.asarray(pis))
        for a in args:
            _scramble(a)
        return out
    return student


@pytest.mark.parametrize("key", sorted(set(KEYS) - set(DOCUMENTED_IN_PLACE)))
def test_a_right_answer_that_then_overwrites_its_inputs_is_accepted(key):
    r = ex.check(key, _then_scrambles(key), verbose=False)
    assert r, r.report()
    if key not in {"gendisc.param-count", "selection.kfold"}:   # these take numbers only: nothing to change
        assert r.notes and r.notes[0].startswith("your function changed its input"), r.report()


@pytest.mark.parametrize("key", sorted(DOCUMENTED_IN_PLACE))
def test_the_exercises_that_forbid_changing_an_input_still_say_so(key):
    r = ex.check(key, _then_scrambles(key), verbose=False)
    failed = [p.name for p in r.properties if not p.passed]
    assert failed == [DOCUMENTED_IN_PLACE[key]], r.report()


def _name(value):
    return getattr(value, "__name__", value)


def _lda_doubles_sigma(m0, m1, S, pi1):
    S += S.T                                 # "symmetrise" without the 1/2, in place: w is halved
    return _two_class(m0, m1, S, pi1)


def _zero_fill(x, pis, mus, Sig):
    """The wrong answer the hint names: missing features filled with 0 (in place)."""
    if np.all(np.isnan(x)):
        return np.asarray(pis, float)
    x[np.isnan(x)] = 0.0
    return _marginal(x, pis, mus, Sig)


def _nll_pm1_labels(X, y, w):
    y[y == 0] = -1                           # labels to +-1 in place, then the 0/1 formulas: all three wrong
    return _nll_grad_hess(X, y, w)


def _soft_doubles_at_zero(d, lam):
    if lam == 0:
        d *= 2
        return d
    return np.sign(d) * np.maximum(np.abs(d) - lam, 0)


@pytest.mark.parametrize("key, fn", [("gda.two-class-lda", _lda_doubles_sigma),
                                     ("gendisc.marginal-posterior", _zero_fill),
                                     ("logreg.nll-grad-hess", _nll_pm1_labels),
                                     ("gda.soft-threshold", _soft_doubles_at_zero)], ids=_name)
def test_a_wrong_answer_that_changes_its_inputs_cannot_move_the_reference(key, fn):
    assert not ex.check(key, fn, verbose=False)


def _moderated_in_place(mu, var):
    mu /= np.sqrt(1 + np.pi * var / 8)
    return sigmoid(mu)


def _soft_in_place(d, lam):
    d = np.asarray(d)
    d[np.abs(d) <= lam] = 0
    d -= lam * np.sign(d)
    return d


def _mahalanobis_in_place(X, mu, S):
    X -= mu
    lam, U = np.linalg.eigh(S)
    return ((X @ U) ** 2 / lam).sum(1)


def _lasso_in_place(z, a, lam):
    z[np.abs(z) <= lam] = 0
    z -= lam * np.sign(z)
    z /= a
    return z


@pytest.mark.parametrize("key, fn", [("laplace.moderated-output", _moderated_in_place),
                                     ("gda.soft-threshold", _soft_in_place),
                                     ("gda.mahalanobis-eig", _mahalanobis_in_place),
                                     ("linear.lasso-coordinate", _lasso_in_place)], ids=_name)
def test_a_right_answer_computed_in_place_is_accepted(key, fn):
    r = ex.check(key, fn, verbose=False)
    assert r, r.report()
    assert "in place" in r.notes[0]
