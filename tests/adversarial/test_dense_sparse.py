"""Dense and sparse input give the same model.

The dense and the sparse SGD loops do the same arithmetic in different orders (the
sparse one keeps the weights as a scale times a vector, the dense one lets the compiler
reassociate and fuse). That may move the coefficients in the last bits, never more —
except where a decision is taken on a difference that is zero in exact arithmetic: the
multiclass perceptron's argmax over scores that tie, which integer and binary features
produce all the time. Generators: Gaussian, small-integer and binary features, three
classes, several step settings; the two fits must agree to 1e-9 and predict alike.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from linbook.online import SGDClassifier, SGDRegressor

KINDS = {"gaussian": lambda rng, n, d: rng.standard_normal((n, d)),
         "small integers": lambda rng, n, d: rng.integers(-3, 4, (n, d)).astype(float),
         "binary": lambda rng, n, d: (rng.random((n, d)) < 0.3).astype(float)}
SETTINGS = {"default": {}, "lam=1": {"lam": 1.0}, "eta0=0.3": {"eta0": 0.3}, "adagrad": {"adagrad": True},
            "plain perceptron": {"average": False, "eta0": 1.0}}


def _data(kind, seed, n=120, d=8, k=3):
    rng = np.random.default_rng(seed)
    X = KINDS[kind](rng, n, d)
    return X, rng.integers(0, k, n)


def _agree(dense, sparse, X):
    scale = max(np.max(np.abs(dense.coef_)), 1e-300)
    assert np.max(np.abs(dense.coef_ - sparse.coef_)) <= 1e-9 * scale
    if isinstance(dense, SGDRegressor):
        np.testing.assert_allclose(sparse.predict(sp.csr_matrix(X)), dense.predict(X), rtol=1e-9, atol=1e-9)
    else:
        np.testing.assert_array_equal(dense.predict(X), sparse.predict(sp.csr_matrix(X)))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("setting", list(SETTINGS))
@pytest.mark.parametrize("kind", list(KINDS))
def test_multiclass_perceptron_dense_equals_sparse(kind, setting, seed):
    X, y = _data(kind, seed)
    est = SGDClassifier(loss="perceptron", random_state=0, **SETTINGS[setting])
    _agree(est.fit(X, y), SGDClassifier(**est.get_params()).fit(sp.csr_matrix(X), y), X)


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("est", [SGDClassifier(random_state=0), SGDClassifier(loss="perceptron", random_state=0),
                                 SGDRegressor(random_state=0)], ids=repr)
def test_other_sgd_models_dense_equals_sparse(est, kind):
    X, y = _data(kind, 1)
    if not isinstance(est, SGDClassifier):
        y = X @ np.arange(1.0, 9.0)
    elif est.loss == "perceptron":
        y = (y > 0).astype(int)
    _agree(SGDClassifier(**est.get_params()).fit(X, y) if isinstance(est, SGDClassifier) else
           SGDRegressor(**est.get_params()).fit(X, y),
           type(est)(**est.get_params()).fit(sp.csr_matrix(X), y), X)
