"""The perceptron (Rosenblatt): primal, dual (Gram matrix) and pocket forms.

Training is the textbook per-sample loop - visit the samples in order (a fresh
permutation every epoch when ``shuffle``), and on a mistake ``y_i (w.x_i + b) <= 0``
update ``w <- w + eta y_i x_i``, ``b <- b + eta y_i`` - executed exactly but
vectorised over blocks: a block of upcoming samples is scored with the current
weights in one matrix product, the first mistake in it is located, the update is
applied, and only the rest of the block is rescored. The weights after every update
are therefore identical to those of the per-sample loop (up to floating-point
summation order inside a dot product), while a pass with few mistakes costs a few
matrix products.

Derived in: chapter "The perceptron".
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning

from .base import encode_labels, validate_X, validate_data
from .datasets import as_rng

__all__ = ["Perceptron", "perceptron_reference"]

_FORMS = ("primal", "dual", "pocket")
_CHUNK = 2048            # samples gathered at a time (~0.8 MB at D = 50: stays in cache)
_GRAM_MAX = 2000          # precompute the N x N Gram matrix only up to this many samples


def perceptron_reference(X, y, *, eta=1.0, max_epochs=1, order=None, fit_intercept=True):
    """The textbook per-sample perceptron loop, in plain Python (for tests and teaching).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,) with values in {-1, +1}
    eta : float
        Learning rate.
    max_epochs : int
        Passes over the data; stops early after a pass without mistakes.
    order : sequence of index arrays, optional
        ``order[e]`` is the visiting order of epoch ``e``; default ``0..N-1``.
    fit_intercept : bool

    Returns
    -------
    w : ndarray, b : float, updates : list of int
        Final weights and the indices of the samples that triggered updates.

    Derived in: chapter "The perceptron" § "The primal algorithm".
    """
    X = np.asarray(X, dtype=float)
    w, b, updates = np.zeros(X.shape[1]), 0.0, []
    for e in range(max_epochs):
        idx = np.arange(X.shape[0]) if order is None else order[e]
        mistakes = 0
        for i in idx:
            if y[i] * (X[i] @ w + b) <= 0:
                w = w + (eta * y[i]) * X[i]
                if fit_intercept:
                    b = b + eta * y[i]
                updates.append(int(i))
                mistakes += 1
        if mistakes == 0:
            break
    return w, b, updates


class Perceptron(ClassifierMixin, BaseEstimator):
    """Rosenblatt's perceptron for two classes.

    Minimises the perceptron criterion ``L(w, b) = - sum_{i in M} y_i (w.x_i + b)``
    over the set ``M`` of misclassified points (``y_i (w.x_i + b) <= 0``) by stochastic
    gradient descent on one misclassified point at a time, starting from ``w = 0``,
    ``b = 0``, with labels coded ``y in {-1, +1}``. Stops after an epoch without
    mistakes (the data are then separated) or after ``max_epochs``.

    ``form="primal"`` updates ``w``; ``form="dual"`` keeps ``alpha_i = n_i eta``
    (``n_i`` = number of updates on sample ``i``), scores with the Gram matrix
    ``G = X X^T`` and returns ``w = sum_i alpha_i y_i x_i`` (identical updates to the
    primal form); ``form="pocket"`` runs the primal loop and returns the visited weight
    vector with the fewest training errors (Gallant's pocket algorithm; it costs one
    pass over the data per update).

    Parameters
    ----------
    form : {"primal", "dual", "pocket"}, default="primal"
    eta : float, default=1.0
        Learning rate ``> 0``. With the zero start it only rescales ``w`` and ``b``;
        the predictions and the mistake sequence do not depend on it.
    max_epochs : int, default=1000
    shuffle : bool, default=True
        Visit the samples in a fresh random order every epoch.
    random_state : int, Generator or None
        Seed of the shuffling.
    fit_intercept : bool, default=True

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels; ``classes_[1]`` is coded ``+1``.
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    alpha_ : ndarray of shape (n_samples,)
        Dual coefficients ``n_i eta`` (``form="dual"`` only).
    n_mistakes_ : int
        Number of updates made (mistakes met during training).
    n_iter_ : int
        Epochs run.
    converged_ : bool
        Whether the last epoch was free of mistakes.
    update_indices_ : ndarray of int
        Sample index of every update, in order.
    updates_ : list of (int, ndarray, float)
        ``(sample index, w after the update, b after the update)`` for every update,
        for plotting (built on demand from ``update_indices_``).
    pocket_errors_ : int
        Training errors of the returned weights (``form="pocket"`` only).

    Notes
    -----
    ``predict`` uses ``sign(0) = +1`` (a point on the hyperplane goes to ``classes_[1]``),
    while training counts ``y_i (w.x_i + b) = 0`` as a mistake.

    Derived in: chapter "The perceptron" § "The primal algorithm".
    """

    def __init__(self, form="primal", eta=1.0, max_epochs=1000, shuffle=True, random_state=None,
                 fit_intercept=True):
        self.form = form
        self.eta = eta
        self.max_epochs = max_epochs
        self.shuffle = shuffle
        self.random_state = random_state
        self.fit_intercept = fit_intercept

    # ------------------------------------------------------------------ checks
    def _check_params(self):
        if self.form not in _FORMS:
            raise ValueError(f"form must be one of {_FORMS}, got {self.form!r}")
        if not (np.isscalar(self.eta) and np.isfinite(self.eta) and self.eta > 0):
            raise ValueError(f"eta must be a positive number, got {self.eta!r}")
        if not (isinstance(self.max_epochs, (int, np.integer)) and self.max_epochs >= 1):
            raise ValueError(f"max_epochs must be a positive integer, got {self.max_epochs!r}")
        for name in ("shuffle", "fit_intercept"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False")

    # ------------------------------------------------------------------ training
    def fit(self, X, y):
        """Train on ``(X, y)``; returns ``self``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), exactly two distinct labels

        Returns
        -------
        self
        """
        self._check_params()
        X, y = validate_data(X, y)
        self.classes_, codes = encode_labels(y, min_classes=2, max_classes=2, model="Perceptron")
        self.n_features_in_ = X.shape[1]
        t = np.where(codes == 1, 1.0, -1.0)
        rng = as_rng(self.random_state)
        n = X.shape[0]
        eta = float(self.eta)

        dual = self.form == "dual"
        pocket = self.form == "pocket"
        fi = bool(self.fit_intercept)
        d = X.shape[1]
        # u holds the parameters and a trailing intercept: u = [w, b] (primal) or
        # u = [v, b] with v_i = alpha_i y_i (dual); a chunk of samples becomes
        # Z = [y_i x_i, y_i] (primal) or [y_i G_i, y_i] (dual), so Z @ u are the margins
        # y_i (w.x_i + b) of the chunk in one matrix-vector product.
        if dual:
            G = X @ X.T if n <= _GRAM_MAX else None
            u = np.zeros(n + 1)
        else:
            u = np.zeros(d + 1)
        updates = []
        if pocket:
            best_err = self._errors(X, t, u[:d], 0.0)
            best = (np.zeros(d), 0.0, 0)

        # the dual form scores a chunk with rows of the N x N Gram matrix: keep a chunk <= ~32 MB
        chunk = max(16, min(_CHUNK, (1 << 22) // (n + 1))) if dual else _CHUNK
        converged = False
        epoch = 0
        for epoch in range(1, self.max_epochs + 1):
            order = rng.permutation(n) if self.shuffle else None
            mistakes = 0
            window = 64
            # chunks of the epoch's visiting order, gathered once (cache-sized); inside a
            # chunk, windows of upcoming samples are scored with the current weights
            for c0 in range(0, n, chunk):
                c1 = min(n, c0 + chunk)
                rows = order[c0:c1] if order is not None else np.arange(c0, c1)
                tc = t[rows] if dual else None
                if dual:
                    Z = np.empty((c1 - c0, n + 1))
                    np.multiply(G[rows] if G is not None else X[rows] @ X.T, tc[:, None], out=Z[:, :n])
                    Z[:, -1] = tc if fi else 0.0
                else:
                    # primal: margins y_i (x_i.w + b) straight from X (a view when not
                    # shuffling), as the textbook loop computes them; no copy of X
                    Xc = X[c0:c1] if order is None else X.take(rows, axis=0)
                    tc = t[c0:c1] if order is None else t[rows]
                size = c1 - c0
                pos = 0
                while pos < size:
                    stop = min(size, pos + window)
                    if dual:
                        bad = (Z[pos:stop] @ u) <= 0
                    else:
                        bad = tc[pos:stop] * (Xc[pos:stop] @ u[:d] + u[d]) <= 0
                    k = int(bad.argmax())
                    if not bad[k]:
                        pos = stop
                        window = min(2 * window, chunk)
                        continue
                    # first mistake in the window: update, then go on from the next sample
                    k += pos
                    i = int(rows[k])
                    if dual:
                        u[i] += eta * tc[k]
                        u[-1] += eta * Z[k, -1]
                    else:
                        u[:d] += (eta * tc[k]) * Xc[k]
                        if fi:
                            u[d] += eta * tc[k]
                    updates.append(i)
                    mistakes += 1
                    if pocket:
                        err = self._errors(X, t, u[:d], u[-1])
                        if err < best_err:
                            best_err, best = err, (u[:d].copy(), u[-1], len(updates))
                    window = max(16, (3 * (k + 1 - pos)) // 2)
                    pos = k + 1
            if mistakes == 0:
                converged = True
                break
            if pocket and best_err == 0:
                break

        self.update_indices_ = np.asarray(updates, dtype=np.intp)
        self.n_mistakes_ = len(updates)
        self.n_iter_ = epoch
        self.converged_ = converged
        self._t = t
        self._X_updates = X[self.update_indices_] if updates else np.zeros((0, X.shape[1]))
        b = float(u[-1])
        if dual:
            v = u[:n]
            self.alpha_ = np.abs(v)          # alpha_i = n_i eta >= 0
            self.coef_ = X.T @ v
            self.intercept_ = b
        elif pocket:
            self.coef_, self.intercept_ = best[0], float(best[1])
            self.pocket_errors_ = int(best_err)
            self.pocket_update_ = best[2]
        else:
            self.coef_, self.intercept_ = u[:d].copy(), b
        if not converged and not pocket:
            warnings.warn(
                f"Perceptron did not separate the data in {epoch} epochs ({self.n_mistakes_} updates): "
                "the data may not be linearly separable. Use form='pocket' to keep the best "
                "weights, or a probabilistic model (logistic regression).",
                ConvergenceWarning, stacklevel=2)
        return self

    @staticmethod
    def _errors(X, t, w, b):
        s = X @ w + b
        return int(np.count_nonzero(np.where(s >= 0, 1.0, -1.0) != t))

    @property
    def updates_(self):
        eta = float(self.eta)
        steps = (eta * self._t[self.update_indices_])
        W = np.cumsum(steps[:, None] * self._X_updates, axis=0)
        B = np.cumsum(steps) if self.fit_intercept else np.zeros(len(steps))
        return [(int(i), W[k], float(B[k])) for k, i in enumerate(self.update_indices_)]

    # ------------------------------------------------------------------ prediction
    def decision_function(self, X):
        """Signed score ``w.x + b`` (positive side: ``classes_[1]``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        X = validate_X(self, X)
        return X @ self.coef_ + self.intercept_

    def predict(self, X):
        """Class labels: ``classes_[1]`` where ``w.x + b >= 0`` (``sign(0) = +1``), else ``classes_[0]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return self.classes_[(self.decision_function(X) >= 0).astype(int)]
