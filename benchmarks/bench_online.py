"""Online learning: minibatch SGD for logistic regression against scikit-learn's SGDClassifier.

5 epochs of logistic loss on 200 000 x 100 synthetic data (a logistic model with an
intercept), l2 penalty alpha = 1e-4 in both (the same objective: mean NLL + alpha/2 ||w||^2).
Target: linbook <= 0.6 x scikit-learn's time, at an equal or lower final training log-loss
(both are printed, with the log-loss of the exact penalised optimum for scale).
"""

import numpy as np
from sklearn.linear_model import SGDClassifier as SkSGD
from sklearn.metrics import log_loss

from benchmarks.run import Case
from linbook.online import SGDClassifier

N, D, ALPHA = 200_000, 100, 1e-4


def _setup():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N, D))
    w = rng.standard_normal(D) * 0.3
    y = (rng.random(N) < 1.0 / (1.0 + np.exp(-(X @ w + 0.5)))).astype(int)
    return X, y


def _linbook(data):
    X, y = data
    return SGDClassifier(loss="log_loss", alpha=ALPHA, batch_size=512, learning_rate="robbins_monro",
                         eta0=2.0, tau0=1.0, kappa=0.6, average=True, max_iter=5,
                         random_state=0).fit(X, y)


def _sklearn(data):
    X, y = data
    return SkSGD(loss="log_loss", alpha=ALPHA, max_iter=5, tol=None, random_state=0).fit(X, y)


def _compare(data, lin, ref):
    X, y = data
    a, b = log_loss(y, lin.predict_proba(X)), log_loss(y, ref.predict_proba(X))
    verdict = "linbook <= sklearn" if a <= b else "linbook WORSE"
    return f"log-loss linbook {a:.5f} vs sklearn {b:.5f} ({verdict})"


CASES = [
    Case(name="online: minibatch SGD logistic 5 epochs 200kx100", setup=_setup, linbook=_linbook,
         reference=_sklearn, reference_name="sklearn SGDClassifier(log_loss, max_iter=5)", target=0.6,
         compare=_compare, repeat=3,
         notes="batch_size=512, Robbins-Monro eta=2(1+k)^-0.6, Polyak-Ruppert averaging"),
]
