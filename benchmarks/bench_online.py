"""Online learning: per-sample SGD (compiled textbook loop) against scikit-learn.

Three kinds of rows:

* default vs default: each library's defaults, each stopping by its own rule (linbook: the
  training objective stopped falling, ``tol=1e-3``, ``n_iter_no_change=5``; scikit-learn: its
  ``tol=1e-3`` rule). ``compare`` prints the training loss each reached and the epochs each ran.
* equal epochs (tuned): 5 epochs in both (``max_iter=5, tol=None``), linbook's defaults
  otherwise (``eta0="auto"``, constant step, Polyak-Ruppert averaging, ``lam=0``) against
  scikit-learn's defaults; the rows say what they change.
* equal objective (tuned): the same penalty and the same constant step on both sides, the
  same algorithm.

``compare`` prints the training loss each reached, so speed cannot be bought with accuracy.

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


def _epochs(lin, ref):
    return f"; epochs {lin.n_iter_} vs {ref.n_iter_}"


def _logloss(data, lin, ref):
    X, y = data
    a, b = log_loss(y, lin.predict_proba(X)), log_loss(y, ref.predict_proba(X))
    return (f"train log-loss linbook {a:.5f} vs sklearn {b:.5f} ({'linbook <= sklearn' if a <= b else 'linbook WORSE'})"
            + _epochs(lin, ref))


def _mse(data, lin, ref):
    X, y = data
    a, b = np.mean((lin.predict(X) - y) ** 2) / 2, np.mean((ref.predict(X) - y) ** 2) / 2
    return (f"train (1/2)MSE linbook {a:.5f} vs sklearn {b:.5f} ({'linbook <= sklearn' if a <= b else 'linbook WORSE'})"
            + _epochs(lin, ref))


def _penalised(alpha):
    """The l2-penalised objective both libraries minimise: mean log-loss + (alpha/2) ||w||^2 (alpha = lam / n)."""
    def compare(data, lin, ref):
        X, y = data
        a, b = (log_loss(y, m.predict_proba(X)) + 0.5 * alpha * float(np.sum(m.coef_ ** 2)) for m in (lin, ref))
        return (f"train penalised objective linbook {a:.5f} vs sklearn {b:.5f} "
                f"({'linbook <= sklearn' if a <= b else 'linbook WORSE'})" + _epochs(lin, ref))
    return compare


def _sk_clf(**kw):
    return lambda d: SkSGDC(loss="log_loss", max_iter=EPOCHS, tol=None, random_state=0, **kw).fit(*d)


FIXED = dict(max_iter=EPOCHS, tol=None)      # the textbook's fixed number of passes

CASES = [
    Case(name="online: SGDClassifier() default vs sklearn default, logistic 200kx100, own stop rules",
         setup=_dense_logistic, linbook=lambda d: SGDClassifier(random_state=0).fit(*d),
         reference=lambda d: SkSGDC(loss="log_loss", random_state=0).fit(*d),
         reference_name="sklearn SGDClassifier(log_loss)", target=1.0, compare=_logloss, repeat=5,
         notes="sklearn's default has an l2 penalty alpha=1e-4 and the 'optimal' schedule"),
    Case(name="online: SGDRegressor() default vs sklearn default, linear 200kx100, own stop rules",
         setup=_dense_linear, linbook=lambda d: SGDRegressor(random_state=0).fit(*d),
         reference=lambda d: SkSGDR(random_state=0).fit(*d), reference_name="sklearn SGDRegressor()",
         target=1.0, compare=_mse, repeat=5),
    Case(name="online: SGDClassifier() default vs sklearn default, sparse text CSR 100kx50k 0.1%, own stop rules",
         setup=_sparse_text, linbook=lambda d: SGDClassifier(random_state=0).fit(*d),
         reference=lambda d: SkSGDC(loss="log_loss", random_state=0).fit(*d),
         reference_name="sklearn SGDClassifier(log_loss) on CSR", target=1.0, compare=_logloss, repeat=5,
         notes="different objectives: sklearn's default adds an l2 penalty (alpha=1e-4, lam = 10 here), linbook's "
               "has none; both stop by the per-sample tol=1e-3 rule on their own objective (linbook's keeps "
               "falling on these nearly separable data)"),
    Case(name="online: SGDClassifier(lam=1e-4 n) vs sklearn default, sparse text CSR 100kx50k 0.1%, the same "
              "objective, own schedules and stop rules", setup=_sparse_text,
         linbook=lambda d: SGDClassifier(lam=1e-4 * d[0].shape[0], random_state=0).fit(*d),
         reference=lambda d: SkSGDC(loss="log_loss", random_state=0).fit(*d),
         reference_name="sklearn SGDClassifier(log_loss) on CSR", target=1.0, compare=_penalised(1e-4), repeat=5,
         notes="linbook: constant eta0='auto' with averaging; sklearn: its 'optimal' schedule"),
    Case(name="online: SGDClassifier() one epoch (tol=None) vs sklearn default, sparse text CSR 100kx50k 0.1%, "
              "training loss at least as low", setup=_sparse_text,
         linbook=lambda d: SGDClassifier(random_state=0, max_iter=1, tol=None).fit(*d),
         reference=lambda d: SkSGDC(loss="log_loss", random_state=0).fit(*d),
         reference_name="sklearn SGDClassifier(log_loss) on CSR", target=1.0, compare=_logloss, repeat=5,
         notes="the time linbook's default needs to reach sklearn's default's training loss"),
    Case(name="online: SGDClassifier equal objective tuned (l2 alpha=1e-4, constant eta0=0.01), logistic "
              "200kx100, 5 epochs", setup=_dense_logistic,
         linbook=lambda d: SGDClassifier(lam=1e-4 * N, learning_rate="constant", eta0=0.01, average=False,
                                         random_state=0, **FIXED).fit(*d),
         reference=_sk_clf(learning_rate="constant", eta0=0.01),
         reference_name="sklearn SGDClassifier(log_loss, alpha=1e-4, constant eta0=0.01)", target=1.0,
         compare=_logloss, repeat=5, notes="the same objective and schedule on both sides"),
    Case(name="online: SGDClassifier() 5 epochs tuned (tol=None), logistic 200kx100", setup=_dense_logistic,
         linbook=lambda d: SGDClassifier(random_state=0, **FIXED).fit(*d),
         reference=_sk_clf(), reference_name="sklearn SGDClassifier(log_loss, max_iter=5, tol=None)",
         target=1.0, compare=_logloss, repeat=5,
         notes="linbook defaults: averaged per-sample SGD, eta0='auto'; sklearn defaults: 'optimal' schedule"),
    Case(name="online: SGDClassifier(batch_size=32) tuned, logistic 200kx100, 5 epochs", setup=_dense_logistic,
         linbook=lambda d: SGDClassifier(batch_size=32, random_state=0, **FIXED).fit(*d),
         reference=_sk_clf(), reference_name="sklearn SGDClassifier(log_loss, max_iter=5, tol=None)",
         target=1.0, compare=_logloss, repeat=5, notes="minibatches of 32: one update per 32 samples"),
    Case(name="online: SGDRegressor() 5 epochs tuned (tol=None), linear 200kx100", setup=_dense_linear,
         linbook=lambda d: SGDRegressor(random_state=0, **FIXED).fit(*d),
         reference=lambda d: SkSGDR(max_iter=EPOCHS, tol=None, random_state=0).fit(*d),
         reference_name="sklearn SGDRegressor(max_iter=5, tol=None)", target=1.0, compare=_mse, repeat=5),
    Case(name="online: LMS(eta0=1e-3) tuned = constant-step SGD, linear 200kx100, 5 epochs", setup=_dense_linear,
         linbook=lambda d: LMS(eta0=1e-3, max_iter=EPOCHS, shuffle=True, random_state=0).fit(*d),
         reference=lambda d: SkSGDR(penalty=None, learning_rate="constant", eta0=1e-3, max_iter=EPOCHS, tol=None,
                                    random_state=0).fit(*d),
         reference_name="sklearn SGDRegressor(penalty=None, constant eta0=1e-3)", target=1.0, compare=_mse,
         repeat=5, notes="the same algorithm in both (the delta rule, 8.87)"),
    Case(name="online: SGDClassifier() 5 epochs tuned (tol=None), sparse text CSR 100kx50k 0.1%",
         setup=_sparse_text, linbook=lambda d: SGDClassifier(random_state=0, **FIXED).fit(*d),
         reference=_sk_clf(), reference_name="sklearn SGDClassifier(log_loss, max_iter=5, tol=None) on CSR",
         target=1.0, compare=_logloss, repeat=5),
    Case(name="online: SGDClassifier() vs sklearn average=True, 5 epochs tuned (tol=None), sparse text CSR",
         setup=_sparse_text, linbook=lambda d: SGDClassifier(random_state=0, **FIXED).fit(*d),
         reference=_sk_clf(average=True), reference_name="sklearn SGDClassifier(log_loss, average=True) on CSR",
         target=1.0, compare=_logloss, repeat=5, notes="both average the iterates"),
    Case(name="online: SGDClassifier(average=False) tuned, sparse text CSR, 5 epochs", setup=_sparse_text,
         linbook=lambda d: SGDClassifier(average=False, random_state=0, **FIXED).fit(*d),
         reference=_sk_clf(), reference_name="sklearn SGDClassifier(log_loss, max_iter=5, tol=None) on CSR",
         target=1.0, compare=_logloss, repeat=5, notes="the bare per-sample loop"),
]
