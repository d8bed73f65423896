"""Stochastic gradient descent for linear models: Algorithm 8.3 with its variants.

``SGDRegressor`` and ``SGDClassifier`` run the loop of ``sgd_per_sample`` (the readable
reference in ``linbook.online.reference``) compiled (``linbook._kernels.sgd``), on dense
or sparse (CSR) ``X``, and are tested equal to it.

Derived in: chapter "Online learning and stochastic optimisation" § "Stochastic optimisation".
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils import metadata_routing
from sklearn.utils.metaestimators import available_if

from ..base import DEPRECATED, check_sample_weight, dask_blocks, encode_labels, renamed_param
from ..datasets import as_rng
from ..numerics import log_sigmoid, log_softmax, sigmoid, softmax
from . import schedules
from ._stream import CURE, diverged, predict_input, progress, row_stats, transactional, validate_chunk

__all__ = ["SGDRegressor", "SGDClassifier"]

_LOSSES = {"squared_error": 0, "log_loss": 1, "perceptron": 2}   # the kernels' loss codes


class _BaseSGD(BaseEstimator):
    """Shared engine: parameters ``W`` (M, D), ``b`` (M,), one compiled epoch at a time."""

    def _check_params(self):
        lam = renamed_param(self, "lam", "alpha", formula="lam=alpha * n_samples (alpha was the per-sample "
                            "share lam / n)")
        schedules.check_schedule(self, lam=lam)
        if not (np.isscalar(lam) and np.isfinite(lam) and lam >= 0):
            raise ValueError(f"lam must be a finite number >= 0; got {lam!r}")
        schedules.check_positive_int(self.batch_size, "batch_size")
        schedules.check_positive_int(self.max_iter, "max_iter")
        if not (self.average is False or self.average is True or
                (isinstance(self.average, (int, np.integer)) and self.average >= 1)):
            raise ValueError(f"average must be True, False or an update number >= 1; got {self.average!r}")
        if not self.adagrad_tau0 > 0:
            raise ValueError(f"adagrad_tau0 must be > 0; got {self.adagrad_tau0!r}")

    def _init_state(self, n_features, n_outputs):
        M, D = n_outputs, n_features
        self._W, self._b = np.zeros((M, D)), np.zeros(M)
        self._G2W, self._G2b = np.zeros((M, D)), np.zeros(M)     # adagrad sums (8.85)
        self._Wbar, self._bbar = np.zeros((M, D)), np.zeros(M)   # Polyak-Ruppert averages (8.80)
        self._state = np.zeros(2)                                # [updates, iterates averaged]
        self._L_x = 0.0                                          # max ||x_i||^2 seen so far
        self._nnz = np.zeros(2)                                  # [nonzeros, rows] seen so far
        self._w_max = 0.0                                        # largest sample weight seen so far
        self.t_ = 0

    def _run(self, X, T, sw, *, epochs, shuffle, rng):
        """``epochs`` passes over ``(X, T)``; every pass is one call of the compiled kernel."""
        from .._kernels import sgd as kernel
        from .._kernels.csr import csr_parts
        from .._kernels.sgd_sparse import sgd_epoch_csr

        n = X.shape[0]
        top, nnz = row_stats(X)
        self._L_x = schedules.curvature_bound(top, self._L_x, nnz)
        self._nnz += (nnz, n)
        lam_n = float(renamed_param(self, "lam", "alpha", convert=lambda alpha: alpha * n, warn=False)) / n
        if isinstance(self.eta0, str):                           # "auto"
            if self.adagrad:
                eta0, b_ratio = 1.0, 1.0
            else:
                self._w_max = max(self._w_max, float(sw.max()))
                eta_w, eta_b = schedules.auto_steps(self._L_x, lam_n, self._nnz[0] / self._nnz[1], self._w_max)
                eta0, b_ratio = eta_w, eta_b / eta_w
        else:
            eta0, b_ratio = float(self.eta0), 1.0
        avg = 0 if self.average is False else (1 if self.average is True else int(self.average))
        code = schedules.SCHEDULES.index(self.learning_rate)
        options = (self._state, _LOSSES[self._loss_name()], code, eta0, float(self.tau0), float(self.kappa),
                   lam_n, b_ratio, bool(self.fit_intercept), bool(self.adagrad), float(self.adagrad_tau0), avg)
        params = (int(self.batch_size), self._W, self._b, self._G2W, self._G2b, self._Wbar, self._bbar)
        rows = csr_parts(X) if sp.issparse(X) else None
        for epoch in range(1, epochs + 1):
            order = rng.permutation(n) if shuffle else np.arange(n)
            if rows is not None:
                total, status = sgd_epoch_csr(*rows, T, sw, order, *params, *options)
            else:
                total, status = kernel.sgd_epoch_dense(X, T, sw, order, *params, *options)
            if status == -2:
                raise diverged(self, "the shrink factor 1 - eta lam/n of the penalty",
                               "lower eta0 (or use eta0='auto') or lam")
            if status >= 0 or not (np.all(np.isfinite(self._W)) and np.all(np.isfinite(self._b))):
                big_y = self._loss_name() == "squared_error" and np.max(np.abs(T)) > 1e150
                cure = ("scale the target y (its values reach 1e150 or more, so the squared loss overflows)"
                        if big_y else CURE)
                raise diverged(self, "the loss" if status >= 0 else "the weights", cure)
            if self.verbose:
                progress(self, epoch, epochs, total / sw.sum())
        self.t_ = int(self._state[0])
        use_avg = avg and self._state[1] > 0
        self._publish(self._Wbar if use_avg else self._W, self._bbar if use_avg else self._b)

    def _prepare(self, X, y, sample_weight, first):
        X, y = validate_chunk(self, X, y, first=first, y_numeric=self._loss_name() == "squared_error",
                              accept_sparse=True)
        if not sp.issparse(X):
            X = np.ascontiguousarray(X)
        return X, y, check_sample_weight(sample_weight, X, estimator=self)

    def _decision(self, X):
        X = predict_input(self, X, accept_sparse=True)
        return np.asarray(X @ self.coef_.T) + self.intercept_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


_SGD_DOC_PARAMS = """
    lam : float, default 0.0
        Strength of the l2 penalty on the **summed** loss (the objective above);
        each step uses the per-sample share ``lam / n`` with ``n`` the samples of the
        ``fit`` (or of the ``partial_fit`` chunk). scikit-learn's ``alpha = lam / n``.
    fit_intercept : bool, default True
    learning_rate : {"constant", "robbins_monro", "optimal"}, default "constant"
        Step-size schedule, see :func:`learning_rate_schedule`. ``k`` counts updates
        (minibatches), not samples. ``"optimal"`` needs ``lam > 0``.
    eta0 : "auto" or float, default "auto"
        Initial step. ``"auto"`` scales it by the data so that no feature scale makes
        the iteration diverge: the weights take ``1 / (2 L)`` with
        ``L = max_i ||x_i||^2 + lam/n`` (a bound on one sample's curvature, over the
        samples seen so far) and the intercept ``1 / (2 (m + 1))`` with ``m`` the mean
        number of nonzero features per row (the share of a typical feature); the
        iterates then scale like ``1/x`` when the features scale like ``x``. With
        ``adagrad`` it is ``1.0``.
        A number is used as given for both (scikit-learn's ``eta0``).
    tau0 : float, default 1.0
        Offset of the Robbins-Monro schedule ``eta0 (tau0 + k)^(-kappa)``.
    kappa : float in (0.5, 1], default 0.6
        Decay exponent of the Robbins-Monro schedule.
    average : bool or int, default True
        Polyak-Ruppert averaging (8.80) of the iterates; an int ``a`` starts the
        average at update ``a``. The averaged parameters become ``coef_``. With the
        constant default step this is averaged SGD (Bach and Moulines 2013).
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
        A fresh random order of the samples every epoch of ``fit`` (``partial_fit``
        takes the chunk in the given order).
    random_state : int, Generator or None
    verbose : int, default 0
        If > 0, print one progress line per epoch (plain text, stderr).
    alpha : float, deprecated
        The old parameter (scikit-learn's ``alpha``, the per-sample share ``lam / n``):
        works as ``lam = alpha * n`` with a FutureWarning; removed in linbook 0.3.
"""

_SGD_DOC_ATTRS = """
    Attributes
    ----------
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Column names, when ``X`` was a DataFrame with string column names.
    n_iter_ : int
        Epochs run by the last ``fit`` (0 after ``partial_fit`` only).
    t_ : int
        Updates (minibatch steps) so far.
"""


class SGDRegressor(RegressorMixin, _BaseSGD):
    __doc__ = """Linear regression by stochastic gradient descent (squared loss), dense or sparse ``X``.

    Minimises ``sum_i s_i (1/2) (w^T x_i + b - y_i)^2 + (lam/2) ||w||^2`` (weights ``s_i``,
    default 1; intercept unpenalised) by per-sample (or minibatch) SGD: the step of
    one sample is ``(yhat_i - y_i) x_i + (lam/n) w`` (eq. 8.86). A non-finite loss or
    weight raises ``linbook.base.DivergenceError``.

    Parameters
    ----------""" + _SGD_DOC_PARAMS + _SGD_DOC_ATTRS + """    coef_ : ndarray (n_features,)
    intercept_ : float

    Derived in: chapter "Online learning and stochastic optimisation" § "Stochastic optimisation".
    """

    def __init__(self, *, lam=0.0, fit_intercept=True, learning_rate="constant", eta0="auto", tau0=1.0,
                 kappa=0.6, average=True, adagrad=False, adagrad_tau0=1e-8, batch_size=1, max_iter=5,
                 shuffle=True, random_state=None, verbose=0, alpha=DEPRECATED):
        self.lam = lam
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

    def _loss_name(self):
        return "squared_error"

    @transactional
    def fit(self, X, y, sample_weight=None):
        """Run ``max_iter`` epochs from zero parameters. Returns ``self``."""
        self._check_params()
        X, y, sw = self._prepare(X, y, sample_weight, first=True)
        self._init_state(X.shape[1], 1)
        self._run(X, y, sw, epochs=int(self.max_iter), shuffle=self.shuffle, rng=as_rng(self.random_state))
        self.n_iter_ = int(self.max_iter)
        return self

    @transactional
    def partial_fit(self, X, y, sample_weight=None):
        """One pass over the chunk ``(X, y)`` in its order, continuing the stream. Returns ``self``."""
        first = not hasattr(self, "_W")
        if first:
            self._check_params()
        X, y, sw = self._prepare(X, y, sample_weight, first=first)
        if first:
            self._init_state(X.shape[1], 1)
            self.n_iter_ = 0
        self._run(X, y, sw, epochs=1, shuffle=False, rng=None)
        return self

    def _publish(self, W, b):
        self.coef_ = W[0].copy()
        self.intercept_ = float(b[0])

    @dask_blocks
    def predict(self, X):
        """Predicted means ``X w + b``."""
        return self._decision(X)


class SGDClassifier(ClassifierMixin, _BaseSGD):
    __doc__ = """Logistic regression (or the perceptron) by stochastic gradient descent, dense or sparse ``X``.

    With two classes, minimises ``sum_i s_i NLL_i + (lam/2) ||w||^2`` with
    ``NLL_i = log(1 + exp(z_i)) - y_i z_i``, ``z_i = w^T x_i + b``, ``y_i`` in {0, 1}
    (the second class of ``classes_`` is 1): the step of one sample is
    ``(sigm(z_i) - y_i) x_i + (lam/n) w`` (eq. 8.88). With K > 2 classes the loss is
    the multinomial (softmax) NLL with one weight vector per class. The optimum is
    that of ``linbook.LogisticRegression(lam=lam)``; scikit-learn's
    ``SGDClassifier(loss="log_loss", alpha=lam/n)`` (binary case).

    ``loss="perceptron"`` replaces ``sigm(z_i)`` by the hard prediction
    ``1[z_i > 0]`` (eq. 8.90): with ``learning_rate="constant"``, ``lam=0``,
    ``average=False``, ``batch_size=1`` this is the perceptron (Algorithm 8.4).

    Parameters
    ----------
    loss : {"log_loss", "perceptron"}, default "log_loss"
""" + _SGD_DOC_PARAMS + _SGD_DOC_ATTRS + """    classes_ : ndarray
    coef_ : ndarray (1, n_features) for two classes, (n_classes, n_features) otherwise
    intercept_ : ndarray (1,) or (n_classes,)

    Derived in: chapter "Online learning and stochastic optimisation" § "Stochastic optimisation".
    """

    # `classes` of partial_fit is not metadata to route (and no set_partial_fit_request is generated)
    __metadata_request__partial_fit = {"classes": metadata_routing.UNUSED}

    def __init__(self, *, loss="log_loss", lam=0.0, fit_intercept=True, learning_rate="constant", eta0="auto",
                 tau0=1.0, kappa=0.6, average=True, adagrad=False, adagrad_tau0=1e-8, batch_size=1,
                 max_iter=5, shuffle=True, random_state=None, verbose=0, alpha=DEPRECATED):
        self.loss = loss
        self.lam = lam
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

    def _loss_name(self):
        return self.loss

    def _check_params(self):
        if self.loss not in ("log_loss", "perceptron"):
            raise ValueError(f"loss must be 'log_loss' or 'perceptron'; got {self.loss!r}")
        super()._check_params()

    def _codes(self, y):
        """Class codes 0..K-1 of ``y`` as floats (the kernels' targets)."""
        codes = np.clip(np.searchsorted(self.classes_, y), 0, self.classes_.size - 1)
        bad = self.classes_[codes] != y
        if np.any(bad):
            raise ValueError(f"y contains labels {np.unique(y[bad]).tolist()[:10]} that are not in classes "
                             f"{self.classes_.tolist()}; pass every class in `classes` on the first "
                             "partial_fit call.")
        return codes.astype(np.float64)

    @transactional
    def fit(self, X, y, sample_weight=None):
        """Run ``max_iter`` epochs from zero parameters. Returns ``self``."""
        self._check_params()
        X, y, sw = self._prepare(X, y, sample_weight, first=True)
        self.classes_, codes = encode_labels(y, model=type(self).__name__)
        K = self.classes_.size
        self._init_state(X.shape[1], 1 if K == 2 else K)
        self._run(X, codes.astype(np.float64), sw, epochs=int(self.max_iter), shuffle=self.shuffle,
                  rng=as_rng(self.random_state))
        self.n_iter_ = int(self.max_iter)
        return self

    @transactional
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """One pass over the chunk ``(X, y)``, continuing the stream. Returns ``self``.

        Parameters
        ----------
        X : array_like or sparse matrix (n_samples, n_features)
        y : array_like (n_samples,)
        classes : array_like, optional
            Every class the stream can contain. Required on the first call (a
            chunk need not contain every class); if given later it must equal
            ``classes_``.
        sample_weight : array_like (n_samples,), optional

        Returns
        -------
        self
        """
        first = not hasattr(self, "_W")
        if first:
            self._check_params()
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit "
                                 "(the full list of labels the stream can contain).")
            all_classes = np.unique(np.asarray(classes))
            if all_classes.size < 2:
                raise ValueError(f"{type(self).__name__} needs at least 2 classes; got {all_classes.tolist()}. "
                                 "A single class cannot be learned: pass every class of the stream.")
        elif classes is not None and not np.array_equal(np.unique(np.asarray(classes)), self.classes_):
            raise ValueError(f"classes {np.unique(classes).tolist()} differ from the classes of the first "
                             f"partial_fit call {self.classes_.tolist()}.")
        X, y, sw = self._prepare(X, y, sample_weight, first=first)
        if first:
            self.classes_ = all_classes
        codes = self._codes(y)
        if first:
            K = self.classes_.size
            self._init_state(X.shape[1], 1 if K == 2 else K)
            self.n_iter_ = 0
        self._run(X, codes, sw, epochs=1, shuffle=False, rng=None)
        return self

    def _publish(self, W, b):
        self.coef_ = W.copy()
        self.intercept_ = b.copy()

    @dask_blocks
    def decision_function(self, X):
        """``X w + b``: shape (n,) for two classes, (n, K) otherwise."""
        Z = self._decision(X)
        return Z[:, 0] if Z.shape[1] == 1 else Z

    def _has_proba(self):
        if self.loss != "log_loss":
            raise AttributeError("predict_proba needs loss='log_loss'; the perceptron gives no probabilities.")
        return True

    @available_if(_has_proba)
    @dask_blocks
    def predict_proba(self, X):
        """Class probabilities (columns in the order of ``classes_``); only for ``loss="log_loss"``."""
        Z = self._decision(X)
        if Z.shape[1] == 1:
            p = sigmoid(Z[:, 0])
            return np.column_stack([1.0 - p, p])
        return softmax(Z, axis=1)

    @available_if(_has_proba)
    @dask_blocks
    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba` (computed stably)."""
        Z = self._decision(X)
        if Z.shape[1] == 1:
            return np.column_stack([log_sigmoid(-Z[:, 0]), log_sigmoid(Z[:, 0])])
        return log_softmax(Z, axis=1)

    @dask_blocks
    def predict(self, X):
        """Most probable class."""
        Z = self._decision(X)
        idx = (Z[:, 0] > 0).astype(int) if Z.shape[1] == 1 else np.argmax(Z, axis=1)
        return self.classes_[idx]
