"""Online learning: per-sample SGD (compiled textbook loop) against scikit-learn at equal epochs.

Every case runs 5 epochs in both libraries. The *default* rows use linbook's defaults
(``eta0="auto"``, constant step, Polyak-Ruppert averaging, ``lam=0``) against scikit-learn's
defaults with ``max_iter=5, tol=None``; the tuned rows say what they change. ``compare``
prints the training loss each reached, so speed cannot be bought with accuracy (target:
linbook's loss equal or lower).

Data: dense 200 000 x 100 standard normal features (logistic / linear model with an
intercept); sparse text-like CSR 100 000 x 50 000 with 0.1 % nonzeros (50 per row,
exponential tf-idf-like values, rows scaled to unit norm).
"""

import numpy as np
import scipy.sparse as sp
from sklearn.linear_model import SGDClassifier as SkSGDC
from sklearn.linear_model import SGDRegressor as SkSGDR
from sklearn.metrics import log_loss

from benchmarks.run import Case
from linbook.online import LMS, SGDClassifier, SGDRegressor

N, D, EPOCHS = 200_000, 100, 5


def _dense_logistic():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N, D))
    w = rng.standard_normal(D) * 0.3
    y = (rng.random(N) < 1.0 / (1.0 + np.exp(-(X @ w + 0.5)))).astype(int)
    return X, y


def _dense_linear():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((N, D))
    y = X @ (rng.standard_normal(D) * 0.3) + 0.5 + rng.standard_normal(N)
    return X, y


def _sparse_text(n=100_000, d=50_000, per_row=50):
    rng = np.random.default_rng(2)
    cols = rng.integers(0, d, (n, per_row))
    vals = rng.exponential(1.0, (n, per_row))
    X = sp.csr_matrix((vals.ravel(), cols.ravel(), np.arange(0, n * per_row + 1, per_row)), shape=(n, d))
    X.sum_duplicates()
    X = sp.diags(1.0 / np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())) @ X
    X = X.tocsr()
    w = rng.standard_normal(d) * 3.0
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-(X @ w + 0.2)))).astype(int)
    return X, y


def _logloss(data, lin, ref):
    X, y = data
    a, b = log_loss(y, lin.predict_proba(X)), log_loss(y, ref.predict_proba(X))
    return f"train log-loss linbook {a:.5f} vs sklearn {b:.5f} ({'linbook <= sklearn' if a <= b else 'linbook WORSE'})"


def _mse(data, lin, ref):
    X, y = data
    a, b = np.mean((lin.predict(X) - y) ** 2) / 2, np.mean((ref.predict(X) - y) ** 2) / 2
    return f"train (1/2)MSE linbook {a:.5f} vs sklearn {b:.5f} ({'linbook <= sklearn' if a <= b else 'linbook WORSE'})"


def _sk_clf(**kw):
    return lambda d: SkSGDC(loss="log_loss", max_iter=EPOCHS, tol=None, random_state=0, **kw).fit(*d)


CASES = [
    Case(name="online: SGDClassifier() default, logistic 200kx100, 5 epochs", setup=_dense_logistic,
         linbook=lambda d: SGDClassifier(random_state=0).fit(*d),
         reference=_sk_clf(), reference_name="sklearn SGDClassifier(log_loss, max_iter=5, tol=None)",
         target=1.0, compare=_logloss, repeat=5,
         notes="linbook defaults: averaged per-sample SGD, eta0='auto'; sklearn defaults: 'optimal' schedule"),
    Case(name="online: SGDClassifier(batch_size=32) tuned, logistic 200kx100, 5 epochs", setup=_dense_logistic,
         linbook=lambda d: SGDClassifier(batch_size=32, random_state=0).fit(*d),
         reference=_sk_clf(), reference_name="sklearn SGDClassifier(log_loss, max_iter=5, tol=None)",
         target=1.0, compare=_logloss, repeat=5, notes="minibatches of 32: one update per 32 samples"),
    Case(name="online: SGDRegressor() default, linear 200kx100, 5 epochs", setup=_dense_linear,
         linbook=lambda d: SGDRegressor(random_state=0).fit(*d),
         reference=lambda d: SkSGDR(max_iter=EPOCHS, tol=None, random_state=0).fit(*d),
         reference_name="sklearn SGDRegressor(max_iter=5, tol=None)", target=1.0, compare=_mse, repeat=5),
    Case(name="online: LMS(eta0=1e-3) tuned = constant-step SGD, linear 200kx100, 5 epochs", setup=_dense_linear,
         linbook=lambda d: LMS(eta0=1e-3, max_iter=EPOCHS, shuffle=True, random_state=0).fit(*d),
         reference=lambda d: SkSGDR(penalty=None, learning_rate="constant", eta0=1e-3, max_iter=EPOCHS, tol=None,
                                    random_state=0).fit(*d),
         reference_name="sklearn SGDRegressor(penalty=None, constant eta0=1e-3)", target=1.0, compare=_mse,
         repeat=5, notes="the same algorithm in both (the delta rule, 8.87)"),
    Case(name="online: SGDClassifier() default, sparse text CSR 100kx50k 0.1%, 5 epochs", setup=_sparse_text,
         linbook=lambda d: SGDClassifier(random_state=0).fit(*d),
         reference=_sk_clf(), reference_name="sklearn SGDClassifier(log_loss, max_iter=5, tol=None) on CSR",
         target=1.0, compare=_logloss, repeat=5),
    Case(name="online: SGDClassifier() default vs sklearn average=True, sparse text CSR, 5 epochs",
         setup=_sparse_text, linbook=lambda d: SGDClassifier(random_state=0).fit(*d),
         reference=_sk_clf(average=True), reference_name="sklearn SGDClassifier(log_loss, average=True) on CSR",
         target=1.0, compare=_logloss, repeat=5, notes="both average the iterates"),
    Case(name="online: SGDClassifier(average=False) tuned, sparse text CSR, 5 epochs", setup=_sparse_text,
         linbook=lambda d: SGDClassifier(average=False, random_state=0).fit(*d),
         reference=_sk_clf(), reference_name="sklearn SGDClassifier(log_loss, max_iter=5, tol=None) on CSR",
         target=1.0, compare=_logloss, repeat=5, notes="the bare per-sample loop"),
]
