"""Self-checks of the online-learning exercises: the references pass, plausible wrong answers fail."""

import numpy as np
import pytest

import linbook.exercises as ex


def test_polyak_reference_passes_and_wrong_answers_fail():
    good = lambda bar, th, k: bar + (np.asarray(th) - bar) / k          # noqa: E731
    assert ex.check("online.polyak-average", good, verbose=False)
    note = lambda bar, th, k: bar - (np.asarray(th) - bar) / k          # noqa: E731  sign error
    assert not ex.check("online.polyak-average", note, verbose=False)
    ema = lambda bar, th, k: bar + 0.1 * (np.asarray(th) - bar)          # noqa: E731  constant weight
    assert not ex.check("online.polyak-average", ema, verbose=False)

    def inplace(bar, th, k):
        bar += (th - bar) / k
        return bar
    assert not ex.check("online.polyak-average", inplace, verbose=False)


def test_rls_reference_passes_and_wrong_answers_fail():
    def good(m, P, x, y):
        Px = P @ x
        k = Px / (1 + x @ Px)
        return m + k * (y - x @ m), P - np.outer(k, Px)
    assert ex.check("online.rls-step", good, verbose=False)

    def no_one(m, P, x, y):            # forgets the 1 in the denominator
        Px = P @ x
        k = Px / (x @ Px)
        return m + k * (y - x @ m), P - np.outer(k, Px)
    assert not ex.check("online.rls-step", no_one, verbose=False)

    def lms_like(m, P, x, y):          # a fixed step instead of the gain
        return m + 0.1 * (y - x @ m) * x, P
    assert not ex.check("online.rls-step", lms_like, verbose=False)


def test_adagrad_reference_passes_and_wrong_answers_fail():
    def good(theta, g, s, eta, tau0):
        s = s + g ** 2
        return theta - eta * g / (tau0 + np.sqrt(s)), s
    assert ex.check("online.adagrad-step", good, verbose=False)

    def stale(theta, g, s, eta, tau0):  # uses the accumulator before adding g^2
        return theta - eta * g / (tau0 + np.sqrt(s)), s + g ** 2
    with pytest.warns(RuntimeWarning, match="divide by zero"):   # the student's own warning reaches them
        assert not ex.check("online.adagrad-step", stale, verbose=False)

    def no_sqrt(theta, g, s, eta, tau0):
        s = s + g ** 2
        return theta - eta * g / (tau0 + s), s
    assert not ex.check("online.adagrad-step", no_sqrt, verbose=False)

    def crashes(theta, g, s, eta, tau0):
        raise RuntimeError("not done")
    assert not ex.check("online.adagrad-step", crashes, verbose=False)
