"""The perceptron (Rosenblatt): primal, dual (Gram matrix) and pocket forms.

Training is the textbook per-sample loop - visit the samples in order (a fresh
permutation every epoch when ``shuffle``), and on a mistake ``y_i (w.x_i + b) <= 0``
update ``w <- w + eta y_i x_i``, ``b <- b + eta y_i``. ``perceptron_reference`` is that
loop in plain Python; ``Perceptron`` runs it compiled (``linbook._kernels.perceptron``,
numba, on dense or CSR ``X``) and is tested to make the same updates.

Derived in: chapter "The perceptron".
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning

from .base import encode_labels, validate_fit
from .datasets import as_rng
from .online._stream import predict_input, row_stats

__all__ = ["Perceptron", "perceptron_reference"]

_FORMS = ("primal", "dual", "pocket")
_KEEP_ROWS = 1_000_000     # numbers of X kept for updates_


def perceptron_reference(X, y, *, eta=1.0, max_epochs=1, order=None, fit_intercept=True, intercept_scaling=1.0):
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
    intercept_scaling : float
        Value ``c`` of the intercept's constant feature: ``b <- b + eta c^2 y_i``.

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
                    b = b + eta * intercept_scaling ** 2 * y[i]
                updates.append(int(i))
                mistakes += 1
        if mistakes == 0:
            break
    return w, b, updates


class Perceptron(ClassifierMixin, BaseEstimator):
    """Rosenblatt's perceptron for two classes, on dense or sparse (CSR) ``X``.

    Minimises the perceptron criterion ``L(w, b) = - sum_{i in M} y_i (w.x_i + b)``
    over the set ``M`` of misclassified points (``y_i (w.x_i + b) <= 0``) by stochastic
    gradient descent on one misclassified point at a time, starting from ``w = 0``,
    ``b = 0``, with labels coded ``y in {-1, +1}``. Stops after an epoch without
    mistakes (the data are then separated) or after ``max_epochs``.

    ``form="primal"`` updates ``w``; ``form="dual"`` keeps ``alpha_i = n_i eta``
    (``n_i`` = number of updates on sample ``i``), scores a sample with the inner
    products ``x_j . x_i`` of the samples updated so far (the Gram matrix entries,
    computed as needed) and returns ``w = sum_i alpha_i y_i x_i`` (the same updates as
    the primal form); ``form="pocket"`` runs the primal loop and returns the visited
    weight vector with the fewest training errors (Gallant's pocket algorithm; it
    counts the training errors after every update).

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
    intercept_scaling : float or "auto", default=1.0
        Value ``c`` of the constant feature that carries the intercept: the samples are
        augmented to ``(x, c)``, so a mistake moves ``b`` by ``eta c^2 y_i``. ``1.0`` is
        the textbook algorithm (Li Hang, scikit-learn). ``"auto"`` takes
        ``c = max_i ||x_i||`` (Cristianini and Shawe-Taylor's ``b <- b + eta y_i R^2``),
        which makes the run the same at every feature scale; with ``c = 1`` and features
        far from unit scale the intercept cannot keep up with ``w`` and the loop may not
        separate separable data (scale the features, or use ``"auto"``).

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
        Whether the last epoch was free of mistakes (the data are separated).
    update_indices_ : ndarray of int
        Sample index of every update, in order.
    updates_ : list of (int, ndarray, float)
        ``(sample index, w after the update, b after the update)`` for every update,
        for plotting. Built on demand from ``update_indices_`` and the rows of the
        updated samples, which ``fit`` keeps when they hold at most ``1e6`` numbers
        (``n_mistakes_ * n_features``); after a larger fit it raises ``AttributeError``.
    pocket_errors_ : int
        Training errors of the returned weights (``form="pocket"`` only).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Column names, when ``X`` was a DataFrame with string column names.

    Notes
    -----
    ``predict`` uses ``sign(0) = +1`` (a point on the hyperplane goes to ``classes_[1]``),
    while training counts ``y_i (w.x_i + b) = 0`` as a mistake.

    Derived in: chapter "The perceptron" § "The primal algorithm".
    """

    def __init__(self, form="primal", eta=1.0, max_epochs=1000, shuffle=True, random_state=None,
                 fit_intercept=True, intercept_scaling=1.0):
        self.form = form
        self.eta = eta
        self.max_epochs = max_epochs
        self.shuffle = shuffle
        self.random_state = random_state
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling

    def _check_params(self):
        if self.form not in _FORMS:
            raise ValueError(f"form must be one of {_FORMS}, got {self.form!r}")
        if not (isinstance(self.eta, numbers.Real) and np.isfinite(self.eta) and self.eta > 0):
            raise ValueError(f"eta must be a positive number, got {self.eta!r}")
        if not (isinstance(self.max_epochs, numbers.Integral) and self.max_epochs >= 1):
            raise ValueError(f"max_epochs must be a positive integer, got {self.max_epochs!r}")
        for name in ("shuffle", "fit_intercept"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False")
        c = self.intercept_scaling
        if not (c == "auto" if isinstance(c, str) else isinstance(c, numbers.Real) and np.isfinite(c) and c > 0):
            raise ValueError(f"intercept_scaling must be 'auto' or a finite number > 0, got {c!r}")

    def fit(self, X, y):
        """Train on ``(X, y)``; returns ``self``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), exactly two distinct labels

        Returns
        -------
        self
        """
        from ._kernels import perceptron as kernel

        self._check_params()
        if y is None:
            raise ValueError("Perceptron requires y to be passed, but the target y is None. "
                             "Call fit(X, y) with the labels.")
        X, y = validate_fit(self, X, y, accept_sparse=["csr", "csc", "coo"])
        self.classes_, codes = encode_labels(y, min_classes=2, max_classes=2, model="Perceptron")
        t = np.where(codes == 1, 1.0, -1.0)
        X, rows = _row_arrays(X)
        rng = as_rng(self.random_state)
        n, d = X.shape
        eta = float(self.eta)
        self._c2 = self._intercept_c2(X) if self.fit_intercept else 0.0
        eta_b = eta * self._c2
        w, b = np.zeros(d), np.zeros(1)
        dual, pocket = self.form == "dual", self.form == "pocket"
        if dual:
            alpha, support, n_support = np.zeros(n), np.empty(n, dtype=np.int64), np.zeros(1, dtype=np.int64)
        best_w = np.zeros(d)
        best = np.array([float(np.sum(t < 0)), 0.0, 0.0, 0.0])     # w = 0 predicts +1 everywhere
        updates, upd = [], np.empty(n, dtype=np.int64)
        converged = False
        for epoch in range(1, self.max_epochs + 1):
            order = rng.permutation(n) if self.shuffle else np.arange(n)
            if dual:
                k = kernel.dual_epoch(*rows, t, order, alpha, b, eta, eta_b, upd, support, n_support)
            elif pocket:
                best[3] = sum(len(u) for u in updates)
                k = kernel.pocket_epoch(*rows, t, order, w, b, eta, eta_b, upd, best_w, best)
            else:
                k = kernel.primal_epoch(*rows, t, order, w, b, eta, eta_b, upd)
            updates.append(upd[:k].copy())
            if k == 0:
                converged = True
                break
            if pocket and best[0] == 0:
                break
        self.update_indices_ = np.concatenate(updates)
        self.n_mistakes_ = int(self.update_indices_.size)
        self.n_iter_ = epoch
        self.converged_ = converged
        self._t = t
        # the rows behind updates_ (a plotting aid): kept for small runs only, copying them costs
        # as much as the training loop on large ones
        keep = self.n_mistakes_ * d <= _KEEP_ROWS
        self._X_updates = X[self.update_indices_] if keep else None
        if dual:
            self.alpha_ = alpha
            self.coef_ = np.asarray(X.T @ (alpha * t)).ravel()
        else:
            if pocket:
                w, b = best_w, best[1:2]
                self.pocket_errors_ = int(best[0])
                self.pocket_update_ = int(best[2])
            self.coef_ = w.copy()
        self.intercept_ = float(b[0])
        if not converged and not pocket:
            R2 = _max_sq_norm(X)
            scale = ""
            if self.fit_intercept and self._c2 > 0 and not 1e-4 <= R2 / self._c2 <= 1e4:
                scale = (f" The features have squared norm up to {R2:.1e} against {self._c2:.1e} for the "
                         "intercept's column, so the intercept can hardly move: scale the features "
                         "(StandardScaler) or set intercept_scaling='auto'.")
            warnings.warn(
                f"Perceptron did not separate the data in {epoch} epochs ({self.n_mistakes_} updates): "
                "the data may not be linearly separable. Use form='pocket' to keep the best "
                "weights, or a probabilistic model (logistic regression)." + scale,
                ConvergenceWarning, stacklevel=2)
        return self

    def _intercept_c2(self, X):
        """``c^2`` for the intercept's constant column (``intercept_scaling`` squared)."""
        if self.intercept_scaling != "auto":
            return float(self.intercept_scaling) ** 2
        R2 = _max_sq_norm(X)
        if not np.isfinite(R2):
            raise ValueError("The squared norms of the rows of X overflow (features of order 1e154 or larger): "
                             "scale the features before fitting.")
        return R2 if R2 > 0 else 1.0

    @property
    def updates_(self):
        if getattr(self, "_X_updates", None) is None:
            raise AttributeError(
                "updates_ is kept only for fits with n_mistakes_ * n_features <= 1e6 (a plotting aid); "
                "use update_indices_, or refit on a subset of the data to plot the path.")
        eta = float(self.eta)
        steps = (eta * self._t[self.update_indices_])
        Xu = self._X_updates.toarray() if sp.issparse(self._X_updates) else self._X_updates
        W = np.cumsum(steps[:, None] * Xu, axis=0)
        B = np.cumsum(steps * self._c2)
        return [(int(i), W[k], float(B[k])) for k, i in enumerate(self.update_indices_)]

    def decision_function(self, X):
        """Signed score ``w.x + b`` (positive side: ``classes_[1]``).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        X = predict_input(self, X, accept_sparse=True)
        return np.asarray(X @ self.coef_).ravel() + self.intercept_

    def predict(self, X):
        """Class labels: ``classes_[1]`` where ``w.x + b >= 0`` (``sign(0) = +1``), else ``classes_[0]``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        scores = self.decision_function(X)
        return self.classes_[(scores >= 0).astype(int)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = True
        return tags


def _max_sq_norm(X):
    """``max_i ||x_i||^2`` (inf when it overflows)."""
    return row_stats(X)[0]


def _row_arrays(X):
    """``X`` as a C-ordered array or CSR with sorted indices, and ``(X, data, indices, indptr)`` for the kernels."""
    from ._kernels.csr import csr_parts

    empty_f, empty_i = np.empty(0), np.empty(0, dtype=np.int64)
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        if not X.has_sorted_indices:
            X = X.sorted_indices()
        return X, (np.empty((0, 0)), *csr_parts(X))
    X = np.ascontiguousarray(X)
    return X, (X, empty_f, empty_i, empty_i)
