"""The exercises' self-checks give the right verdict: they reject wrong answers and accept right ones.

Wrong answers are built from each exercise's reference solution (tests/test_exercises_wrong_answers.py):
each returned array flipped in sign or halved. Right answers are the reference's output written another
valid way (a list for an array, a list for a tuple, a 0-d array for a number). Two checks failed this:

* ``optim.backtracking`` accepted any step that satisfies Armijo, so a step halved once too often
  (a loop that halves before its first test), a step divided by 3, or a step from c1 = 0.5 passed; and
  its "accepts the full step" property tested a point where t = 1 fails Armijo, so it could not fail.
* ``selection.loo-residuals`` tested accuracy on columns of scales 1e4 and 1e-3, where inverting X^T X is
  as accurate as QR (inversion is exact under column scaling), so the hat matrix through
  ``inv(X.T @ X)`` (residuals off by up to 2 %, measured against mpmath) passed.
"""

from __future__ import annotations

import numpy as np
import pytest

import linbook.exercises as ex

from tests.test_exercises_wrong_answers import REFERENCES

# checks whose answer is defined only up to a positive factor (a direction), so halving it is right
SCALE_FREE = {"gendisc.fisher-direction"}


def _verdict(key, fn):
    return ex.check(key, fn, verbose=False)


def _leaves(out):
    return range(len(out)) if isinstance(out, tuple) else [None]


def _mutated(ref, leaf, change):
    """The reference with one returned array (``leaf`` of a tuple, or the whole output) changed."""
    def student(*args):
        out = ref(*args)
        if leaf is None:
            return change(out)
        return out[:leaf] + (change(out[leaf]),) + out[leaf + 1:]
    return student


def _numeric_leaves(key):
    """The positions of the reference's returned numbers (the kfold's index lists are not answers to scale)."""
    if key == "selection.kfold":
        return []
    probe = {}

    def spy(*args):
        probe.setdefault("out", REFERENCES[key](*args))
        return probe["out"]
    _verdict(key, spy)
    return list(_leaves(probe["out"]))


CASES = [(key, leaf) for key in sorted(REFERENCES) for leaf in _numeric_leaves(key)]


@pytest.mark.parametrize("key, leaf", CASES, ids=[f"{k}-{leaf}" for k, leaf in CASES])
@pytest.mark.parametrize("name, change", [("negated", lambda v: -np.asarray(v, dtype=float)),
                                          ("halved", lambda v: 0.5 * np.asarray(v, dtype=float))])
def test_a_changed_answer_is_rejected(key, leaf, name, change):
    if name == "halved" and key in SCALE_FREE:
        pytest.skip("a direction: half of it is the same direction")
    student = _mutated(REFERENCES[key], leaf, change)
    assert not _verdict(key, student), f"{key} accepted its reference answer {name} (output {leaf})"


@pytest.mark.parametrize("key", sorted(REFERENCES))
@pytest.mark.parametrize("name, change", [
    ("list", lambda out: [np.asarray(v).tolist() for v in out] if isinstance(out, tuple) else np.asarray(out).tolist()),
    ("tuple as list", lambda out: list(out) if isinstance(out, tuple) else out),
    ("0-d arrays", lambda out: tuple(np.asarray(v) for v in out) if isinstance(out, tuple) else np.asarray(out))])
def test_the_right_answer_written_another_way_is_accepted(key, name, change):
    if key == "selection.kfold" and name != "tuple as list":
        pytest.skip("returns index lists, which the listed rewrites do not apply to")
    ref = REFERENCES[key]
    assert _verdict(key, lambda *args: change(ref(*args)))


# ------------------------------------------------------------------------------- optim.backtracking
def _halving(f, g, x, d, c1=1e-4, shrink=0.5, first=1.0):
    t = first
    while f(x + t * d) > f(x) + c1 * t * (g(x) @ d):
        t *= shrink
    return t


def _halves_first(f, g, x, d):
    """Halves before testing (a do-while loop): never returns t = 1, one halving too many after."""
    return _halving(f, g, x, d, first=0.5)


WRONG_STEPS = {
    "halved before the first test": _halves_first,
    "one halving too many": lambda f, g, x, d: 0.5 * _halving(f, g, x, d),
    "divided by 3": lambda f, g, x, d: _halving(f, g, x, d, shrink=1 / 3),
    "c1 = 0.5": lambda f, g, x, d: _halving(f, g, x, d, c1=0.5),
}


@pytest.mark.parametrize("name", WRONG_STEPS)
def test_backtracking_rejects_a_step_off_the_halving_sequence(name):
    assert not _verdict("optim.backtracking", WRONG_STEPS[name])


def test_backtracking_full_step_property_can_fail():
    """The property's point must satisfy Armijo at t = 1, so a search that never returns 1 fails it."""
    failed = {p.name for p in _verdict("optim.backtracking", _halves_first).properties if not p.passed}
    assert "accepts the full step t = 1 when it already satisfies Armijo" in failed


@pytest.mark.parametrize("name, fn", [
    ("halving", _halving),
    ("powers of two", lambda f, g, x, d: next(0.5 ** k for k in range(60)
                                              if f(x + 0.5 ** k * d) <= f(x) + 1e-4 * 0.5 ** k * (g(x) @ d))),
    ("a 0-d array", lambda f, g, x, d: np.array(_halving(f, g, x, d)))])
def test_backtracking_accepts_the_halving_search(name, fn):
    assert _verdict("optim.backtracking", fn)


# --------------------------------------------------------------------------- selection.loo-residuals
def _inverse_hat(X, y):
    H = X @ np.linalg.inv(X.T @ X) @ X.T
    return (y - H @ y) / (1 - np.diag(H))


def _normal_equations(X, y):
    w = np.linalg.solve(X.T @ X, X.T @ y)
    h = np.einsum("ij,ji->i", X, np.linalg.solve(X.T @ X, X.T))
    return (y - X @ w) / (1 - h)


def _qr(X, y):
    Q, _ = np.linalg.qr(X)
    return (y - Q @ (Q.T @ y)) / (1 - np.sum(Q ** 2, axis=1))


def _svd(X, y):
    U = np.linalg.svd(X, full_matrices=False)[0]
    return (y - U @ (U.T @ y)) / (1 - np.sum(U ** 2, axis=1))


def _pinv(X, y):
    P = np.linalg.pinv(X)
    return (y - X @ (P @ y)) / (1 - np.einsum("ij,ji->i", X, P))


@pytest.mark.parametrize("fn", [_inverse_hat, _normal_equations], ids=lambda f: f.__name__)
def test_loo_residuals_reject_the_normal_equations(fn):
    failed = {p.name for p in _verdict("selection.loo-residuals", fn).properties if not p.passed}
    assert failed == {"accurate for nearly collinear columns"}


@pytest.mark.parametrize("fn", [_qr, _svd, _pinv], ids=lambda f: f.__name__)
def test_loo_residuals_accept_orthogonal_factorisations(fn):
    assert _verdict("selection.loo-residuals", fn)


def test_loo_residuals_accuracy_data_separate_the_methods():
    """On the check's collinear data (mpmath at 50 digits as the oracle) QR is right to 1e-7 and the
    inverse of X^T X is off by more than the check's 1e-6 (so the property tests what it names)."""
    mpmath = pytest.importorskip("mpmath")
    seen = []

    def spy(X, y):
        seen.append((X.copy(), y.copy()))
        return _qr(X, y)
    _verdict("selection.loo-residuals", spy)
    X, y = seen[-1]
    with mpmath.workdps(50):
        Xm, ym = mpmath.matrix(X.tolist()), mpmath.matrix(y.tolist())
        H = Xm * (Xm.T * Xm) ** -1 * Xm.T
        r = ym - H * ym
        exact = np.array([float(r[i] / (1 - H[i, i])) for i in range(len(y))])
    gap = lambda got: np.max(np.abs(got - exact) / (1e-6 * np.abs(exact) + 1e-8))   # noqa: E731 (close's rule)
    assert gap(_qr(X, y)) < 0.1
    assert gap(_inverse_hat(X, y)) > 10
