"""Online learning and stochastic optimisation: streaming linear models.

Every estimator here learns from a stream. ``partial_fit(X, y)`` consumes one chunk
(e.g. read from disk) and continues where the previous call stopped; ``fit(X, y)``
starts afresh and runs ``max_iter`` epochs (passes) over the data, shuffled with
``random_state``. They follow scikit-learn's conventions (``clone``, ``Pipeline``,
``cross_val_score``).

=============================  =================================================
``SGDRegressor``               squared loss, minibatch SGD (schedules, averaging, adagrad)
``SGDClassifier``              logistic (or perceptron) loss, binary or multinomial
``LMS``                        least mean squares / delta rule, eq. (8.87), one sample a step
``RecursiveLeastSquares``      recursive Bayes / Kalman filter for linear regression
``OnlineGradientDescent``      projected online gradient descent (8.78) with a regret tracker
``sgd_per_sample``             the readable per-sample reference of Algorithm 8.3
``learning_rate_schedule``     the step sizes eta_k of every schedule
``best_fixed_parameter``       the best parameter in hindsight over an l2 ball (for regret)
=============================  =================================================

Speed (measured on the book's 2-core machine, 10 features): the per-sample paths
(``sgd_per_sample``, ``LMS``, ``OnlineGradientDescent``, ``RecursiveLeastSquares(block_size=1)``)
are Python loops kept for teaching, 4-7 microseconds per sample (about 1 s per 200 000
samples); ``SGDRegressor`` / ``SGDClassifier`` with ``batch_size=1`` pay the minibatch
machinery on every sample (about 15 microseconds). For real data use ``batch_size`` of
32-1024 (about 0.1 microsecond per sample at 256) and ``RecursiveLeastSquares(block_size=64)``
(about 1.4 microseconds per sample): these are vectorised over the block.

Derived in: chapter "Online learning and stochastic optimisation".
"""

from __future__ import annotations

import sys

import numpy as np
from scipy import linalg, optimize
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils import metadata_routing
from sklearn.utils.validation import check_array, check_is_fitted

from .base import validate_X
from .numerics import log1pexp, log_softmax, sigmoid, softmax

__all__ = ["SGDRegressor", "SGDClassifier", "LMS", "RecursiveLeastSquares",
           "OnlineGradientDescent", "sgd_per_sample", "learning_rate_schedule",
           "best_fixed_parameter"]

_SCHEDULES = ("constant", "robbins_monro", "optimal")


# --------------------------------------------------------------------------- helpers

def learning_rate_schedule(k, schedule="robbins_monro", *, eta0=0.1, tau0=1.0, kappa=0.75, alpha=0.0):
    """Step size ``eta_k`` of update number ``k = 1, 2, ...``.

    Parameters
    ----------
    k : int or array_like of int
        Update counter, starting at 1.
    schedule : {"constant", "robbins_monro", "optimal"}
        ``"constant"``: ``eta_k = eta0``.
        ``"robbins_monro"``: ``eta_k = eta0 * (tau0 + k) ** (-kappa)`` with
        ``kappa`` in (0.5, 1], which satisfies the Robbins-Monro conditions
        ``sum eta_k = inf``, ``sum eta_k^2 < inf`` (eq. 8.82, 8.83 corrected).
        ``"optimal"``: ``eta_k = eta0 / (1 + alpha * eta0 * (k - 1))``, i.e.
        ``1 / (alpha (t0 + k - 1))`` with ``t0 = 1 / (alpha eta0)``: the
        ``1/(lambda k)`` rate for an ``alpha``-strongly convex objective, starting at ``eta0``.
    eta0, tau0, kappa, alpha : float

    Returns
    -------
    float or ndarray

    Derived in: chapter "Online learning and stochastic optimisation" § "Step sizes".
    """
    k = np.asarray(k, dtype=float)
    if schedule == "constant":
        out = np.full_like(k, eta0)
    elif schedule == "robbins_monro":
        out = eta0 * (tau0 + k) ** (-kappa)
    elif schedule == "optimal":
        out = eta0 / (1.0 + alpha * eta0 * (k - 1.0))
    else:
        raise ValueError(f"schedule must be one of {_SCHEDULES}; got {schedule!r}")
    return out[()] if out.ndim == 0 else out


def _step_function(schedule, eta0, tau0, kappa, alpha):
    """The schedule of :func:`learning_rate_schedule` as a cheap scalar function of ``k``."""
    if schedule == "constant":
        return lambda k: eta0
    if schedule == "robbins_monro":
        return lambda k: eta0 * (tau0 + k) ** (-kappa)
    return lambda k: eta0 / (1.0 + alpha * eta0 * (k - 1.0))


def _check_schedule(est):
    if est.learning_rate not in _SCHEDULES:
        raise ValueError(f"learning_rate must be one of {_SCHEDULES}; got {est.learning_rate!r}")
    if not est.eta0 > 0:
        raise ValueError(f"eta0 must be > 0; got {est.eta0}")
    if est.learning_rate == "robbins_monro":
        if not 0.5 < est.kappa <= 1.0:
            raise ValueError(f"kappa must be in (0.5, 1] (Robbins-Monro conditions, eq. 8.82); got {est.kappa}")
        if est.tau0 < 0:
            raise ValueError(f"tau0 must be >= 0; got {est.tau0}")
    if est.learning_rate == "optimal" and not est.alpha > 0:
        raise ValueError("learning_rate='optimal' needs alpha > 0 (it is the 1/(alpha k) rate)")
    if est.alpha < 0:
        raise ValueError(f"alpha must be >= 0; got {est.alpha}")
    if int(est.batch_size) != est.batch_size or est.batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer; got {est.batch_size}")
    if int(est.max_iter) != est.max_iter or est.max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer; got {est.max_iter}")


def _check_chunk(est, X, y, first, *, y_numeric):
    """Validate one chunk: finite 2-D X, 1-D y of the same length, same width as before."""
    X = check_array(X, dtype=np.float64)
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D; got shape {y.shape}")
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} samples but y has {y.shape[0]}")
    if y_numeric:
        y = y.astype(np.float64)
        if not np.all(np.isfinite(y)):
            raise ValueError("y contains NaN or infinity.")
    if not first and X.shape[1] != est.n_features_in_:
        raise ValueError(f"X has {X.shape[1]} features, but {type(est).__name__} was fitted with "
                         f"{est.n_features_in_} features; every partial_fit chunk must have the same columns.")
    return X, y


def _progress(est, epoch, n_epochs, loss, eta):
    """Plain-text progress line on stderr (only when ``verbose``)."""
    width = 20
    done = int(round(width * epoch / n_epochs))
    print(f"{type(est).__name__} [{'#' * done}{'.' * (width - done)}] epoch {epoch}/{n_epochs}"
          f"  mean loss {loss:.6f}  eta {eta:.3g}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- minibatch SGD

class _NoRouting:
    """No metadata routing for ``score`` (so sklearn adds no ``set_score_request``; the estimators
    take no sample weights)."""

    __metadata_request__score = {"sample_weight": metadata_routing.UNUSED}


class _BaseSGD(_NoRouting, BaseEstimator):
    """Shared minibatch SGD engine; parameters are stored as ``W`` (D, M) and ``b`` (M,)."""

    def _residual(self, Z, Y):  # dLoss/dZ per sample, shape (B, M)
        raise NotImplementedError

    def _loss(self, Z, Y):  # summed loss over the rows
        raise NotImplementedError

    def _init_state(self, n_features, n_outputs):
        self.n_features_in_ = n_features
        self._W = np.zeros((n_features, n_outputs))
        self._b = np.zeros(n_outputs)
        self._sW = np.zeros_like(self._W)   # adagrad accumulators (8.85)
        self._sb = np.zeros_like(self._b)
        self._Wbar = np.zeros_like(self._W)  # Polyak-Ruppert averages (8.80)
        self._bbar = np.zeros_like(self._b)
        self._n_avg = 0
        self.t_ = 0

    @staticmethod
    def _gathered(X, Y, order, B):
        """Minibatches of the rows ``order`` (one gather per batch into a reused buffer)."""
        buf = np.empty((min(B, order.shape[0]), X.shape[1]))   # reused: no fresh pages every step
        for start in range(0, order.shape[0], B):
            idx = order[start:start + B]
            yield np.take(X, idx, axis=0, out=buf[:idx.shape[0]]), Y.take(idx, axis=0)

    @staticmethod
    def _blocks(X, Y, bounds):
        """Minibatches as contiguous row blocks ``[a, b)`` (views: no copy)."""
        for a, b in bounds:
            yield X[a:b], Y[a:b]

    def _pass(self, batches, n):
        """One pass over an iterable of minibatches (n samples in all); returns the mean loss."""
        alpha, fit_b = self.alpha, self.fit_intercept
        W, b, sW, sb = self._W, self._b, self._sW, self._sb
        avg_start = 1 if self.average is True else (int(self.average) if self.average else None)
        total = 0.0
        step = _step_function(self.learning_rate, self.eta0, self.tau0, self.kappa, self.alpha)
        eta = step(self.t_ + 1)
        for Xb, Yb in batches:
            Z = Xb @ W + b
            R = self._residual(Z, Yb)
            if self.verbose:
                total += self._loss(Z, Yb)
            R /= Xb.shape[0]                 # gradient of the batch MEAN loss
            gW = Xb.T @ R
            if alpha:
                gW += alpha * W
            gb = R.sum(axis=0) if fit_b else None
            self.t_ += 1
            eta = step(self.t_)
            if self.adagrad:   # (8.84)-(8.85): per-parameter steps eta / (tau + sqrt(s_i))
                sW += gW * gW
                W -= eta * gW / (self.adagrad_tau0 + np.sqrt(sW))
                if fit_b:
                    sb += gb * gb
                    b -= eta * gb / (self.adagrad_tau0 + np.sqrt(sb))
            else:
                W -= eta * gW
                if fit_b:
                    b -= eta * gb
            if avg_start is not None and self.t_ >= avg_start:   # recursive form of (8.80)
                self._n_avg += 1
                self._Wbar += (W - self._Wbar) / self._n_avg
                self._bbar += (b - self._bbar) / self._n_avg
        self._last_eta = eta
        return total / max(n, 1)

    def _publish(self):
        use_avg = self.average and self._n_avg > 0
        W = self._Wbar if use_avg else self._W
        b = self._bbar if use_avg else self._b
        self.coef_ = W.T.copy()          # (M, D)
        self.intercept_ = b.copy()

    def _run(self, X, Y, *, epochs, shuffle, rng):
        """Epochs over (X, Y). Shuffling: with B = 1 a fresh permutation of the samples every epoch
        (Algorithm 8.3). With B > 1 the samples are permuted once (one copy of X), and every epoch
        visits the contiguous minibatches of that permutation in a fresh random order, cut at a
        fresh random offset, so batch compositions change between epochs without copying X again
        (the copy per epoch would cost about as much as the whole gradient computation)."""
        n, B = X.shape[0], int(self.batch_size)
        if shuffle and B > 1:
            perm = rng.permutation(n)
            X, Y = X.take(perm, axis=0), Y.take(perm, axis=0)
        for epoch in range(1, epochs + 1):
            if not shuffle:
                batches = self._blocks(X, Y, ((a, min(a + B, n)) for a in range(0, n, B)))
            elif B == 1:
                batches = self._gathered(X, Y, rng.permutation(n), 1)
            else:
                off = int(rng.integers(B)) if n > B else 0
                cuts = np.r_[0, np.arange(off if off else B, n, B), n]
                cuts = np.unique(cuts)
                bounds = np.column_stack([cuts[:-1], cuts[1:]])[rng.permutation(cuts.size - 1)]
                batches = self._blocks(X, Y, bounds)
            loss = self._pass(batches, n)
            if self.verbose:
                _progress(self, epoch, epochs, loss, self._last_eta)
        self._publish()

    def _decision(self, X):
        X = validate_X(self, X)
        return X @ self.coef_.T + self.intercept_


_SGD_DOC_PARAMS = """
    alpha : float, default 1e-4
        Strength of the l2 penalty: the objective is the mean loss plus
        ``(alpha / 2) ||w||^2`` (intercept unpenalised); this equals
        scikit-learn's ``SGD*(penalty="l2", alpha=alpha)``.
    fit_intercept : bool, default True
    learning_rate : {"constant", "robbins_monro", "optimal"}, default "robbins_monro"
        Step-size schedule, see :func:`learning_rate_schedule`. ``k`` counts updates
        (minibatches), not samples.
    eta0 : float, default 0.1
    tau0 : float, default 1.0
        Offset of the Robbins-Monro schedule ``eta0 (tau0 + k)^(-kappa)``.
    kappa : float in (0.5, 1], default 0.6
        Decay exponent of the Robbins-Monro schedule.
    average : bool or int, default False
        Polyak-Ruppert averaging (8.80) of the iterates; an int ``a`` starts the
        average at update ``a``. The averaged parameters become ``coef_``.
    adagrad : bool, default False
        Per-parameter steps ``eta_k g_i / (adagrad_tau0 + sqrt(s_i))`` with
        ``s_i`` the running sum of squared gradients (8.84)-(8.85).
    adagrad_tau0 : float, default 1e-8
    batch_size : int, default 1
        Minibatch size B (the gradient is the batch mean). B = 1 is plain SGD,
        B = N is full-batch gradient descent. Minibatches never span two
        ``partial_fit`` calls.
    max_iter : int, default 5
        Epochs run by ``fit``.
    shuffle : bool, default True
        Shuffle in ``fit`` (``partial_fit`` always takes the chunk in the given
        order). With ``batch_size=1`` the samples are reshuffled every epoch
        (Algorithm 8.3). With larger batches the samples are permuted once per
        ``fit`` (one copy of ``X``) and each epoch visits the minibatches of that
        permutation in a new random order, cut at a new random offset, so that
        compositions change between epochs without copying ``X`` every epoch.
    random_state : int, Generator or None
    verbose : int, default 0
        If > 0, print one progress line per epoch (plain text, stderr).
"""


class SGDRegressor(RegressorMixin, _BaseSGD):
    __doc__ = """Linear regression by minibatch stochastic gradient descent (squared loss).

    Minimises ``(1/N) sum_i (1/2) (w^T x_i + b - y_i)^2 + (alpha/2) ||w||^2``
    (note the 1/2: the per-sample gradient is ``(yhat_i - y_i) x_i``, eq. 8.86).

    Parameters
    ----------""" + _SGD_DOC_PARAMS + """
    Attributes
    ----------
    coef_ : ndarray (n_features,)
    intercept_ : float
    n_features_in_ : int
    n_iter_ : int
        Epochs run by the last ``fit``.
    t_ : int
        Updates (minibatch steps) so far.

    Derived in: chapter "Online learning and stochastic optimisation" § "Stochastic optimisation".
    """

    def __init__(self, *, alpha=1e-4, fit_intercept=True, learning_rate="robbins_monro", eta0=0.1,
                 tau0=1.0, kappa=0.6, average=False, adagrad=False, adagrad_tau0=1e-8, batch_size=1,
                 max_iter=5, shuffle=True, random_state=None, verbose=0):
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.learning_rate = learning_rate
        self.eta0 = eta0
        self.tau0 = tau0
        self.kappa = kappa
        self.average = average
        self.adagrad = adagrad
        self.adagrad_tau0 = adagrad_tau0
        self.batch_size = batch_size
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.random_state = random_state
        self.verbose = verbose

    def _residual(self, Z, Y):
        return Z - Y

    def _loss(self, Z, Y):
        return 0.5 * float(np.sum((Z - Y) ** 2))

    def fit(self, X, y):
        """Run ``max_iter`` epochs from zero parameters. Returns ``self``."""
        _check_schedule(self)
        X, y = _check_chunk(self, X, y, True, y_numeric=True)
        self._init_state(X.shape[1], 1)
        self._run(X, y[:, None], epochs=int(self.max_iter), shuffle=self.shuffle,
                  rng=np.random.default_rng(self.random_state))
        self.n_iter_ = int(self.max_iter)
        return self

    def partial_fit(self, X, y):
        """One pass over the chunk ``(X, y)`` in its order, continuing the stream. Returns ``self``."""
        first = not hasattr(self, "_W")
        if first:
            _check_schedule(self)
        X, y = _check_chunk(self, X, y, first, y_numeric=True)
        if first:
            self._init_state(X.shape[1], 1)
            self.n_iter_ = 0
        self._run(X, y[:, None], epochs=1, shuffle=False, rng=None)
        return self

    def _publish(self):
        super()._publish()
        self.coef_ = self.coef_[0]
        self.intercept_ = float(self.intercept_[0])

    def predict(self, X):
        """Predicted means ``X w + b``."""
        X = validate_X(self, X)
        return X @ self.coef_ + self.intercept_


class SGDClassifier(ClassifierMixin, _BaseSGD):
    __doc__ = """Logistic regression (or the perceptron) by minibatch stochastic gradient descent.

    With two classes, minimises ``(1/N) sum_i NLL_i + (alpha/2) ||w||^2`` with
    ``NLL_i = log(1 + exp(z_i)) - y_i z_i``, ``z_i = w^T x_i + b``, ``y_i`` in {0, 1}
    (the second class of ``classes_`` is 1): the gradient of one sample is
    ``(sigm(z_i) - y_i) x_i`` (eq. 8.88). With K > 2 classes the loss is the
    multinomial (softmax) NLL with one weight vector per class. ``alpha`` is
    scikit-learn's ``alpha`` for ``SGDClassifier(loss="log_loss", penalty="l2")``
    (binary case).

    ``loss="perceptron"`` replaces ``sigm(z_i)`` by the hard prediction
    ``1[z_i > 0]`` (eq. 8.90): with ``learning_rate="constant"``, ``alpha=0``,
    ``batch_size=1`` this is the perceptron (Algorithm 8.4), with steps ``eta0``.

    Parameters
    ----------
    loss : {"log_loss", "perceptron"}, default "log_loss"
""" + _SGD_DOC_PARAMS + """
    Attributes
    ----------
    classes_ : ndarray
    coef_ : ndarray (1, n_features) for two classes, (n_classes, n_features) otherwise
    intercept_ : ndarray (1,) or (n_classes,)
    n_features_in_ : int
    n_iter_ : int
    t_ : int

    Derived in: chapter "Online learning and stochastic optimisation" § "Stochastic optimisation".
    """

    # `classes` of partial_fit is not metadata to route (and no set_partial_fit_request is generated)
    __metadata_request__partial_fit = {"classes": metadata_routing.UNUSED}

    def __init__(self, *, loss="log_loss", alpha=1e-4, fit_intercept=True, learning_rate="robbins_monro",
                 eta0=0.1, tau0=1.0, kappa=0.6, average=False, adagrad=False, adagrad_tau0=1e-8,
                 batch_size=1, max_iter=5, shuffle=True, random_state=None, verbose=0):
        self.loss = loss
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.learning_rate = learning_rate
        self.eta0 = eta0
        self.tau0 = tau0
        self.kappa = kappa
        self.average = average
        self.adagrad = adagrad
        self.adagrad_tau0 = adagrad_tau0
        self.batch_size = batch_size
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.random_state = random_state
        self.verbose = verbose

    # Y is (B, 1) of 0/1 for two classes, one-hot (B, K) otherwise.
    def _residual(self, Z, Y):
        if self.loss == "log_loss":
            # expit is scipy's stable sigmoid (one ufunc call: the hot path of every step)
            P = expit(Z) if Z.shape[1] == 1 else softmax(Z, axis=1)
        elif Z.shape[1] == 1:
            P = (Z > 0).astype(float)
        else:
            P = np.zeros_like(Z)
            P[np.arange(Z.shape[0]), np.argmax(Z, axis=1)] = 1.0
        return P - Y

    def _loss(self, Z, Y):
        if self.loss == "perceptron":
            return float(np.sum(np.maximum(0.0, -np.where(Y > 0, 1.0, -1.0) * Z))) if Z.shape[1] == 1 else \
                float(np.sum(Z.max(axis=1) - np.sum(Z * Y, axis=1)))
        if Z.shape[1] == 1:
            return float(np.sum(log1pexp(Z) - Y * Z))
        return float(-np.sum(Y * log_softmax(Z, axis=1)))

    def _encode(self, y):
        codes = np.searchsorted(self.classes_, y)
        codes = np.clip(codes, 0, self.classes_.size - 1)
        bad = self.classes_[codes] != y
        if np.any(bad):
            raise ValueError(f"y contains labels {np.unique(y[bad]).tolist()[:10]} that are not in classes "
                             f"{self.classes_.tolist()}; pass every class in `classes` on the first partial_fit call.")
        K = self.classes_.size
        if K == 2:
            return codes[:, None].astype(float)
        Y = np.zeros((y.shape[0], K))
        Y[np.arange(y.shape[0]), codes] = 1.0
        return Y

    def _set_classes(self, classes):
        classes = np.unique(np.asarray(classes))
        if classes.size < 2:
            raise ValueError(f"{type(self).__name__} needs at least 2 classes; got {classes.tolist()}. "
                             "A single class cannot be learned: check the data or its split.")
        self.classes_ = classes

    def _check_params(self):
        if self.loss not in ("log_loss", "perceptron"):
            raise ValueError(f"loss must be 'log_loss' or 'perceptron'; got {self.loss!r}")
        _check_schedule(self)

    def fit(self, X, y):
        """Run ``max_iter`` epochs from zero parameters. Returns ``self``."""
        self._check_params()
        X, y = _check_chunk(self, X, y, True, y_numeric=False)
        from sklearn.utils.multiclass import type_of_target
        kind = type_of_target(y)
        if kind not in ("binary", "multiclass"):
            raise ValueError(f"{type(self).__name__} needs class labels, but y looks {kind!r}.")
        self._set_classes(y)
        Y = self._encode(y)
        self._init_state(X.shape[1], Y.shape[1])
        self._run(X, Y, epochs=int(self.max_iter), shuffle=self.shuffle,
                  rng=np.random.default_rng(self.random_state))
        self.n_iter_ = int(self.max_iter)
        return self

    def partial_fit(self, X, y, classes=None):
        """One pass over the chunk ``(X, y)``, continuing the stream. Returns ``self``.

        Parameters
        ----------
        X : array_like (n_samples, n_features)
        y : array_like (n_samples,)
        classes : array_like, optional
            Every class the stream can contain. Required on the first call (a
            chunk need not contain every class); if given later it must equal
            ``classes_``.
        """
        first = not hasattr(self, "_W")
        if first:
            self._check_params()
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit "
                                 "(the full list of labels the stream can contain).")
            self._set_classes(classes)
        elif classes is not None and not np.array_equal(np.unique(np.asarray(classes)), self.classes_):
            raise ValueError(f"classes {np.unique(classes).tolist()} differ from the classes of the first "
                             f"partial_fit call {self.classes_.tolist()}.")
        X, y = _check_chunk(self, X, y, first, y_numeric=False)
        Y = self._encode(y)
        if first:
            self._init_state(X.shape[1], Y.shape[1])
            self.n_iter_ = 0
        self._run(X, Y, epochs=1, shuffle=False, rng=None)
        return self

    def decision_function(self, X):
        """``X w + b``: shape (n,) for two classes, (n, K) otherwise."""
        Z = self._decision(X)
        return Z[:, 0] if Z.shape[1] == 1 else Z

    def predict_proba(self, X):
        """Class probabilities (columns in the order of ``classes_``); only for ``loss="log_loss"``."""
        if self.loss != "log_loss":
            raise ValueError("predict_proba needs loss='log_loss'; the perceptron gives no probabilities.")
        Z = self._decision(X)
        if Z.shape[1] == 1:
            p = sigmoid(Z[:, 0])
            return np.column_stack([1.0 - p, p])
        return softmax(Z, axis=1)

    def predict(self, X):
        """Most probable class."""
        Z = self._decision(X)
        idx = (Z[:, 0] > 0).astype(int) if Z.shape[1] == 1 else np.argmax(Z, axis=1)
        return self.classes_[idx]


def sgd_per_sample(X, y, *, loss="squared_error", eta=0.1, n_epochs=1, shuffle=True, random_state=None,
                   average=False, theta0=None):
    """Algorithm 8.3, one sample at a time: the readable reference (slow, a Python loop).

    ``theta`` includes no intercept (add a column of ones to ``X`` for one). For
    epoch = 1..n_epochs: permute the data (if ``shuffle``), then for each sample
    ``g = grad f(theta, z_i)`` and ``theta <- theta - eta_k g``.

    Parameters
    ----------
    X : ndarray (N, D)
    y : ndarray (N,)
        Real targets for ``"squared_error"``, 0/1 labels for ``"log_loss"``.
    loss : {"squared_error", "log_loss", "perceptron"}
        Per-sample gradients ``(yhat - y) x`` with ``yhat = theta^T x``,
        ``sigm(theta^T x)`` or ``1[theta^T x > 0]`` (8.86, 8.88, 8.90).
    eta : float or callable
        Constant step, or ``eta(k)`` for update ``k = 1, 2, ...``.
    average : bool
        Also return the Polyak-Ruppert average, updated recursively.

    Returns
    -------
    theta : ndarray (D,)
        Last iterate (or the average when ``average``).
    path : ndarray (n_updates + 1, D)
        Every iterate, starting with ``theta0``.

    Derived in: chapter "Online learning and stochastic optimisation" § "Algorithm 8.3".
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    rng = np.random.default_rng(random_state)
    theta = np.zeros(X.shape[1]) if theta0 is None else np.array(theta0, dtype=float)
    theta_bar = theta.copy()
    path = [theta.copy()]
    step = eta if callable(eta) else (lambda k: eta)
    k = 0
    for _ in range(n_epochs):
        order = rng.permutation(len(y)) if shuffle else range(len(y))
        for i in order:
            x_i = X[i]
            z = theta @ x_i
            if loss == "squared_error":
                yhat = z
            elif loss == "log_loss":
                yhat = float(sigmoid(z))
            elif loss == "perceptron":
                yhat = 1.0 if z > 0 else 0.0
            else:
                raise ValueError("loss must be 'squared_error', 'log_loss' or 'perceptron'")
            g = (yhat - y[i]) * x_i
            k += 1
            theta = theta - step(k) * g
            theta_bar = theta_bar + (theta - theta_bar) / k
            path.append(theta.copy())
    return (theta_bar if average else theta), np.array(path)


# --------------------------------------------------------------------------- LMS

class LMS(RegressorMixin, _NoRouting, BaseEstimator):
    """Least mean squares (delta rule, Widrow-Hoff): ``theta <- theta - eta_k (yhat_k - y_k) x_k`` (8.87).

    Per-sample SGD on ``(1/2)(theta^T x - y)^2`` without penalty; a Python loop
    (a teaching implementation, about 5 microseconds per sample).

    Parameters
    ----------
    eta0 : float, default 0.1
    learning_rate : {"constant", "robbins_monro"}, default "constant"
        ``eta_k = eta0`` or ``eta0 (tau0 + k)^(-kappa)``.
    tau0, kappa : float
    fit_intercept : bool, default True
    max_iter : int, default 50
        Maximum epochs of ``fit``.
    tol : float or None, default None
        The note's convergence test: stop ``fit`` at the first update with
        ``||theta_k - theta_{k-1}||_2^2 < tol``. ``None`` runs every epoch.
    shuffle : bool, default False
        Shuffle before each epoch of ``fit`` (the stream order is used otherwise).
    record_path : bool, default False
        Keep every iterate in ``path_`` (rows ``[intercept, coef...]``).
    theta0 : array_like or None
        Start ``[intercept, coef...]`` (``[coef...]`` without intercept); default zeros.
    random_state : int, Generator or None

    Attributes
    ----------
    coef_, intercept_, n_features_in_, t_, path_, converged_, n_iter_

    Derived in: chapter "Online learning and stochastic optimisation" § "Least mean squares (the delta rule)".
    """

    def __init__(self, *, eta0=0.1, learning_rate="constant", tau0=1.0, kappa=0.75, fit_intercept=True,
                 max_iter=50, tol=None, shuffle=False, record_path=False, theta0=None, random_state=None):
        self.eta0 = eta0
        self.learning_rate = learning_rate
        self.tau0 = tau0
        self.kappa = kappa
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.shuffle = shuffle
        self.record_path = record_path
        self.theta0 = theta0
        self.random_state = random_state

    def _start(self, d):
        if self.learning_rate not in ("constant", "robbins_monro"):
            raise ValueError("learning_rate must be 'constant' or 'robbins_monro'")
        if not self.eta0 > 0:
            raise ValueError("eta0 must be > 0")
        if self.learning_rate == "robbins_monro" and not 0.5 < self.kappa <= 1:
            raise ValueError(f"kappa must be in (0.5, 1]; got {self.kappa}")
        p = d + int(self.fit_intercept)
        theta = np.zeros(p) if self.theta0 is None else np.array(self.theta0, dtype=float).reshape(-1)
        if theta.shape[0] != p:
            raise ValueError(f"theta0 must have {p} entries ([intercept, coef...])")
        self.n_features_in_ = d
        self._theta = theta
        self.t_ = 0
        self.converged_ = False
        self.path_ = [theta.copy()] if self.record_path else None

    def _pass(self, X, y, order):
        theta, tol = self._theta, self.tol
        off = int(self.fit_intercept)
        for i in order:
            x = X[i]
            yhat = theta[off:] @ x + (theta[0] if off else 0.0)
            self.t_ += 1
            eta = learning_rate_schedule(self.t_, self.learning_rate, eta0=self.eta0, tau0=self.tau0,
                                         kappa=self.kappa)
            e = eta * (yhat - y[i])
            step = np.concatenate(([e], e * x)) if off else e * x
            theta = theta - step
            if self.record_path:
                self.path_.append(theta.copy())
            if tol is not None and float(step @ step) < tol:
                self.converged_ = True
                break
        self._theta = theta
        self._publish()

    def _publish(self):
        off = int(self.fit_intercept)
        self.coef_ = self._theta[off:].copy()
        self.intercept_ = float(self._theta[0]) if off else 0.0

    def fit(self, X, y):
        """Run up to ``max_iter`` epochs (or until the ``tol`` test fires). Returns ``self``."""
        X, y = _check_chunk(self, X, y, True, y_numeric=True)
        self._start(X.shape[1])
        rng = np.random.default_rng(self.random_state)
        self.n_iter_ = 0
        for _ in range(int(self.max_iter)):
            order = rng.permutation(len(y)) if self.shuffle else range(len(y))
            self._pass(X, y, order)
            self.n_iter_ += 1
            if self.converged_:
                break
        if self.record_path:
            self.path_ = np.array(self.path_)
        return self

    def partial_fit(self, X, y):
        """Update on each sample of the chunk in order (the ``tol`` test is not applied). Returns ``self``."""
        first = not hasattr(self, "_theta")
        X, y = _check_chunk(self, X, y, first, y_numeric=True)
        if first:
            self._start(X.shape[1])
        if self.record_path:
            self.path_ = list(self.path_)
        tol, self.tol = self.tol, None
        try:
            self._pass(X, y, range(len(y)))
        finally:
            self.tol = tol
        if self.record_path:
            self.path_ = np.array(self.path_)
        return self

    def predict(self, X):
        """``X coef_ + intercept_``."""
        X = validate_X(self, X)
        return X @ self.coef_ + self.intercept_


# --------------------------------------------------------------------------- RLS

class RecursiveLeastSquares(RegressorMixin, _NoRouting, BaseEstimator):
    """Recursive least squares: the Kalman filter for a constant weight vector (recursive Bayes, 8.93).

    Model ``y = w^T x + b + eps``, ``eps ~ N(0, sigma^2)``, prior ``w ~ N(0, sigma^2 / alpha I)``
    (flat prior on ``b``). After every sample the posterior is ``N(m_k, sigma^2 P_k)`` with
    ``P_k = (alpha I + sum x x^T)^{-1}``, updated by Sherman-Morrison::

        s = 1 + x^T P x,   k = P x / s,   m <- m + k (y - x^T m),   P <- P - k x^T P

    so the mean after all N samples equals ridge regression with penalty
    ``(alpha/2) ||w||^2`` on ``(1/2) ||y - X w - b||^2`` -- batch least squares for
    ``alpha = 0`` -- in one pass. The gain ``P x`` is a per-parameter (matrix) step size.
    While the information matrix is still singular (``alpha = 0`` or an intercept, first few
    samples) the filter accumulates ``A = alpha I + sum x x^T`` and ``sum x y`` and switches to the
    covariance form once ``A`` is well conditioned.

    Parameters
    ----------
    alpha : float, default 0.0
        Prior precision of the weights relative to the noise precision (ridge penalty).
    fit_intercept : bool, default True
    block_size : int, default 64
        Samples per Woodbury block update (``1``: the per-sample teaching loop).
    noise_variance : float, default 1.0
        ``sigma^2``; only scales ``covariance_``.

    Attributes
    ----------
    coef_, intercept_ : the posterior mean
    P_ : ndarray (p, p)
        ``(alpha I + sum x x^T)^{-1}`` over ``[coef..., intercept]``.
    covariance_ : ndarray (p, p)
        ``noise_variance * P_``, the posterior covariance.
    n_samples_seen_, n_features_in_

    Derived in: chapter "Online learning and stochastic optimisation" § "The Bayesian view".
    """

    def __init__(self, *, alpha=0.0, fit_intercept=True, block_size=64, noise_variance=1.0):
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.block_size = block_size
        self.noise_variance = noise_variance

    def _start(self, d):
        if self.alpha < 0:
            raise ValueError(f"alpha must be >= 0; got {self.alpha}")
        if int(self.block_size) != self.block_size or self.block_size < 1:
            raise ValueError("block_size must be a positive integer")
        p = d + int(self.fit_intercept)
        self.n_features_in_ = d
        self.n_samples_seen_ = 0
        prior = np.full(p, float(self.alpha))
        if self.fit_intercept:
            prior[-1] = 0.0
        if np.all(prior > 0):      # proper prior: Kalman filter from N(0, P0)
            self._A = None
            self._P = np.diag(1.0 / prior)
            self._m = np.zeros(p)
        else:                      # information form until A is invertible
            self._A = np.diag(prior)
            self._r = np.zeros(p)
            self._P = self._m = None

    def _augment(self, X):
        return np.column_stack([X, np.ones(X.shape[0])]) if self.fit_intercept else X

    def _try_switch(self, final=False):
        """Leave the information phase once A is well conditioned (scale-free test; any PD A if final)."""
        A = self._A
        d = np.sqrt(np.diag(A))
        if np.any(d == 0):
            return
        if not final and np.linalg.cond(A / np.outer(d, d)) > 1e8:
            return
        try:
            c = linalg.cho_factor(A, lower=True)
        except linalg.LinAlgError:
            return
        self._P = linalg.cho_solve(c, np.eye(A.shape[0]))
        self._P = 0.5 * (self._P + self._P.T)
        self._m = linalg.cho_solve(c, self._r)
        self._A = None

    def _update(self, Xa, y):
        """Absorb rows Xa (already augmented) in blocks."""
        n, B, i = Xa.shape[0], int(self.block_size), 0
        while i < n and self._A is not None:   # information phase, sample by sample
            x = Xa[i]
            self._A += np.outer(x, x)
            self._r += x * y[i]
            i += 1
            if i >= Xa.shape[1] or i == n:
                self._try_switch()
        P, m = self._P, self._m
        if P is None:
            return
        if B == 1:                              # per-sample Sherman-Morrison (teaching loop)
            for j in range(i, n):
                x = Xa[j]
                Px = P @ x
                s = 1.0 + x @ Px
                k = Px / s
                m = m + k * (y[j] - x @ m)
                P = P - np.outer(k, Px)
        else:                                   # Woodbury over blocks of B rows
            for j in range(i, n, B):
                Xb, yb = Xa[j:j + B], y[j:j + B]
                PXt = P @ Xb.T                              # (p, b)
                S = Xb @ PXt + np.eye(Xb.shape[0])          # (b, b)
                c = linalg.cho_factor(S, lower=True)
                K = linalg.cho_solve(c, PXt.T).T            # P X^T S^{-1}, (p, b)
                m = m + K @ (yb - Xb @ m)
                P = P - K @ PXt.T
                P = 0.5 * (P + P.T)
        self._P, self._m = P, m

    def _publish(self):
        if self._P is None:
            self._try_switch(final=True)
        if self._P is None:
            raise ValueError("The design seen so far is rank deficient (fewer independent samples than "
                             "parameters) and alpha = 0: the least-squares solution is not unique. "
                             "Stream more samples or set alpha > 0.")
        m = self._m
        self.coef_ = m[:self.n_features_in_].copy()
        self.intercept_ = float(m[-1]) if self.fit_intercept else 0.0
        self.P_ = self._P.copy()
        self.covariance_ = self.noise_variance * self.P_

    def fit(self, X, y):
        """One pass over ``(X, y)`` from the prior. Returns ``self``."""
        X, y = _check_chunk(self, X, y, True, y_numeric=True)
        self._start(X.shape[1])
        self._update(self._augment(X), y)
        self.n_samples_seen_ = X.shape[0]
        self._publish()
        return self

    def partial_fit(self, X, y):
        """Absorb one chunk (continuing the posterior). Returns ``self``."""
        first = not hasattr(self, "_P")
        X, y = _check_chunk(self, X, y, first, y_numeric=True)
        if first:
            self._start(X.shape[1])
        self._update(self._augment(X), y)
        self.n_samples_seen_ += X.shape[0]
        self._publish()
        return self

    def predict(self, X):
        """Posterior mean prediction ``X coef_ + intercept_``."""
        X = validate_X(self, X)
        return X @ self.coef_ + self.intercept_


# --------------------------------------------------------------------------- online gradient descent + regret

def _project_ball(theta, radius):
    if radius is None:
        return theta
    nrm = np.linalg.norm(theta)
    return theta if nrm <= radius else theta * (radius / nrm)


def _loss_and_grad(loss, theta, x, y):
    z = float(theta @ x)
    if loss == "squared_error":
        return 0.5 * (z - y) ** 2, (z - y) * x
    if loss == "log_loss":   # y in {0, 1}
        return float(log1pexp(z) - y * z), (float(sigmoid(z)) - y) * x
    if loss == "absolute_error":
        return abs(z - y), np.sign(z - y) * x
    raise ValueError("loss must be 'squared_error', 'log_loss' or 'absolute_error'")


def _total_loss(loss, theta, X, y):
    Z = X @ theta
    if loss == "squared_error":
        R = Z - y
        return 0.5 * float(R @ R), X.T @ R
    if loss == "log_loss":
        return float(np.sum(log1pexp(Z) - y * Z)), X.T @ (sigmoid(Z) - y)
    if loss == "absolute_error":
        return float(np.sum(np.abs(Z - y))), X.T @ np.sign(Z - y)
    raise ValueError("loss must be 'squared_error', 'log_loss' or 'absolute_error'")


def best_fixed_parameter(X, y, *, loss="squared_error", radius=None):
    """The best fixed parameter in hindsight: ``argmin_{||theta|| <= radius} sum_t f(theta, z_t)``.

    Solved with SLSQP (the constraint ``radius^2 - ||theta||^2 >= 0``) or BFGS when
    ``radius`` is None; for the squared loss without a ball, by ``lstsq``.

    Returns
    -------
    theta : ndarray (D,)
    total : float
        ``sum_t f(theta, z_t)``.

    Derived in: chapter "Online learning and stochastic optimisation" § "Regret".
    """
    X = check_array(X, dtype=np.float64)
    y = np.asarray(y, dtype=float)
    if loss == "squared_error" and radius is None:
        theta = np.linalg.lstsq(X, y, rcond=None)[0]
    else:
        fun = lambda t: _total_loss(loss, t, X, y)  # noqa: E731
        x0 = np.zeros(X.shape[1])
        if radius is None:
            res = optimize.minimize(fun, x0, jac=True, method="BFGS", options={"gtol": 1e-10})
        else:
            cons = {"type": "ineq", "fun": lambda t: radius ** 2 - t @ t, "jac": lambda t: -2 * t}
            res = optimize.minimize(fun, x0, jac=True, method="SLSQP", constraints=[cons],
                                    options={"ftol": 1e-14, "maxiter": 1000})
        theta = res.x
    return theta, _total_loss(loss, theta, X, y)[0]


class OnlineGradientDescent(BaseEstimator):
    """Projected online gradient descent (8.78), predicting before each label arrives.

    For each sample ``z_t = (x_t, y_t)`` in turn: suffer ``f(theta_t, z_t)`` (recorded
    in ``losses_``), then ``theta_{t+1} = proj(theta_t - eta_t grad f(theta_t, z_t))``
    with ``proj`` the Euclidean projection onto the ball ``||theta|| <= radius`` and
    ``eta_t = eta0 / sqrt(t)``. With ``eta0 = diameter / G`` (G bounds the gradient
    norm) the cumulative regret is at most ``(3/2) diameter G sqrt(T)`` (Zinkevich 2003).
    No intercept: add a column of ones to ``X``. A Python loop (teaching code).

    Parameters
    ----------
    loss : {"squared_error", "log_loss", "absolute_error"}
        ``(1/2)(theta^T x - y)^2``, the logistic NLL with y in {0, 1}, or ``|theta^T x - y|``.
    radius : float or None, default None
        Radius of the feasible ball (None: no projection).
    eta0 : float, default 1.0

    Attributes
    ----------
    coef_ : ndarray (D,)
        The current parameter theta_{T+1}.
    losses_ : ndarray (T,)
        The learner's loss on each sample, suffered before the update.
    n_features_in_, t_

    Derived in: chapter "Online learning and stochastic optimisation" § "Regret".
    """

    def __init__(self, *, loss="squared_error", radius=None, eta0=1.0):
        self.loss = loss
        self.radius = radius
        self.eta0 = eta0

    def partial_fit(self, X, y):
        """Play the rounds of one chunk. Returns ``self``."""
        first = not hasattr(self, "coef_")
        X, y = _check_chunk(self, X, y, first, y_numeric=True)
        if first:
            if self.radius is not None and not self.radius > 0:
                raise ValueError("radius must be > 0 or None")
            _loss_and_grad(self.loss, np.zeros(X.shape[1]), np.zeros(X.shape[1]), 0.0)  # validates loss
            self.n_features_in_ = X.shape[1]
            self.coef_ = np.zeros(X.shape[1])
            self.t_ = 0
            self.losses_ = np.empty(0)
        theta, losses = self.coef_.copy(), []
        for i in range(X.shape[0]):
            f, g = _loss_and_grad(self.loss, theta, X[i], y[i])
            losses.append(f)
            self.t_ += 1
            theta = _project_ball(theta - self.eta0 / np.sqrt(self.t_) * g, self.radius)
        self.coef_ = theta
        self.losses_ = np.concatenate([self.losses_, losses])
        return self

    def fit(self, X, y):
        """Start afresh and play every sample once, in order. Returns ``self``."""
        for a in ("coef_", "losses_", "t_", "n_features_in_"):
            self.__dict__.pop(a, None)
        return self.partial_fit(X, y)

    def regret(self, X, y, ks=None):
        """Average regret (8.77) after ``k`` rounds, for each ``k`` in ``ks``.

        ``regret_k = (1/k) sum_{t<=k} f(theta_t, z_t) - min_{theta in ball} (1/k) sum_{t<=k} f(theta, z_t)``.

        Parameters
        ----------
        X, y : the samples played so far, in order.
        ks : array_like of int, optional
            Horizons (default: every ``k`` from 1 to ``t_``; costly for long streams).

        Returns
        -------
        ndarray
        """
        check_is_fitted(self)
        X, y = _check_chunk(self, X, y, False, y_numeric=True)
        if X.shape[0] != self.t_:
            raise ValueError(f"pass the {self.t_} samples played so far, in order; got {X.shape[0]}")
        ks = np.arange(1, self.t_ + 1) if ks is None else np.asarray(ks, dtype=int)
        cum = np.cumsum(self.losses_)
        out = []
        for k in ks:
            _, best = best_fixed_parameter(X[:k], y[:k], loss=self.loss, radius=self.radius)
            out.append((cum[k - 1] - best) / k)
        return np.array(out)
