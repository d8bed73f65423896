"""Labels a loss cannot take are rejected with a clear error, never fitted in silence.

The log-loss of the online tools is the logistic NLL of labels in {0, 1}; labels coded
as {-1, 1}, {1, 2}, fractions or counts give a finite but meaningless fit. Every
public entry point that takes such labels (OnlineGradientDescent's fit / partial_fit /
regret, best_fixed_parameter, the reference sgd_per_sample) must refuse them; labels in
{0, 1} (ints, floats or bools) must still be accepted.
"""

import numpy as np
import pytest

from linbook.online import OnlineGradientDescent, best_fixed_parameter
from linbook.online.reference import sgd_per_sample

from .harness import assert_clear_error

BAD_LABELS = {"-1/+1": lambda z: np.where(z, 1, -1), "1/2": lambda z: z + 1, "0/0.5/1": lambda z: np.where(np.arange(z.size) % 3 == 0, 0.5, z),
              "counts": lambda z: z * 3, "one label 7": lambda z: np.where(np.arange(z.size) == 25, 7, z)}
GOOD_LABELS = {"ints": lambda z: z, "floats": lambda z: z.astype(float), "bools": lambda z: z.astype(bool)}


def _data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    return X, (X @ np.array([1.0, -1.0, 0.5]) > 0).astype(int)


def _entry_points():
    def ogd_fit(X, y):
        return OnlineGradientDescent(loss="log_loss").fit(X, y).coef_

    def ogd_partial(X, y):
        est = OnlineGradientDescent(loss="log_loss").partial_fit(X[:20], (X[:20, 0] > 0).astype(int))
        return est.partial_fit(X[20:], y[20:]).coef_

    def ogd_regret(X, y):
        est = OnlineGradientDescent(loss="log_loss").fit(X, (X[:, 0] > 0).astype(int))
        return est.regret(X, y, ks=[10, 40])

    def best_fixed(X, y):
        return best_fixed_parameter(X, y, loss="log_loss", radius=5.0)[0]

    def reference(X, y):
        return sgd_per_sample(X, y, loss="log_loss", eta=0.1, random_state=0)[0]

    def reference_perceptron(X, y):
        return sgd_per_sample(X, y, loss="perceptron", eta=0.1, random_state=0)[0]

    return {f.__name__: f for f in (ogd_fit, ogd_partial, ogd_regret, best_fixed, reference, reference_perceptron)}


ENTRY = _entry_points()


@pytest.mark.parametrize("labels", list(BAD_LABELS))
@pytest.mark.parametrize("entry", list(ENTRY))
def test_labels_outside_0_1_are_refused(entry, labels):
    X, z = _data()
    y = BAD_LABELS[labels](z)
    with pytest.raises(ValueError) as info:
        ENTRY[entry](X, y)
    assert_clear_error(info.value, "y")
    assert "{0, 1}" in str(info.value), str(info.value)


@pytest.mark.parametrize("labels", list(GOOD_LABELS))
@pytest.mark.parametrize("entry", list(ENTRY))
def test_labels_in_0_1_are_fitted(entry, labels):
    X, z = _data()
    out = ENTRY[entry](X, GOOD_LABELS[labels](z))
    assert np.all(np.isfinite(out))


@pytest.mark.parametrize("ks", [[0], [41], [1.5], [[1, 2]]], ids=str)
def test_regret_horizons_outside_the_stream_are_refused(ks):
    X, z = _data()
    est = OnlineGradientDescent(loss="log_loss").fit(X, z)
    with pytest.raises(ValueError) as info:
        est.regret(X, z, ks=ks)
    assert_clear_error(info.value, "ks")
