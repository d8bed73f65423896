"""Stochastic gradient descent for linear models: Algorithm 8.3 with its variants.

``SGDRegressor`` and ``SGDClassifier`` run the loop of ``sgd_per_sample`` (the readable
reference in ``linbook.online.reference``) compiled (``linbook._kernels.sgd``), on dense
or sparse (CSR) ``X``, and are tested equal to it.

Derived in: chapter "Online learning and stochastic optimisation" § "Stochastic optimisation".
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from ..base import ClassifierMixin, RegressorMixin  # scikit-learn's, with score's y and weights checked
from sklearn.utils import metadata_routing
from sklearn.utils.metaestimators import available_if

from ..base import (DEPRECATED, NON_NEGATIVE, POSITIVE, POSITIVE_INT, StrOptions, as_rng, check_params,
                    class_index, dask_blocks, encode_labels, predict_input, renamed_param,
                    require_weighted_classes, without_zero_weight_rows)
from .._kernels.scores import row_argmax
from .._kernels.sgd_python import MAX_FEATURES, RESIDUALS, sgd_epoch_list
from .._kernels.sgd_python import step_size as _step_size
from .._predictor import finite_scores, linear_predictor
from ..numerics import log_sigmoid, log_softmax, sigmoid, softmax
from . import schedules
from ._stream import (CURE, chunk_sample_weight, diverged, numpy_fit, numpy_pass, numpy_steps_left, objective_stop, progress,
                      recheck_params, record_params, transactional, validate_chunk)

__all__ = ["SGDRegressor", "SGDClassifier"]

_LOSSES = {"squared_error": 0, "log_loss": 1, "perceptron": 2}   # the kernels' loss codes
_numpy_steps_left = numpy_steps_left   # the process's numpy budget (``_stream.NUMPY_STEPS``)


def _residual(loss, z, y):
    """``(r, f)``: the derivative ``r = dloss/dz`` at the scores ``z`` and the loss ``f`` (8.86-8.90).

    One output (``z`` a number): ``y`` is the real target (squared) or 0/1 (log, perceptron), ``z - y``,
    ``sigm(z) - y`` (stable) or ``1[z > 0] - y``. Several outputs (log-loss): ``y`` is the
    class code, ``r`` the softmax minus the one-hot vector.
    """
    if np.ndim(z) and z.shape[0] > 1:                    # softmax with the max subtracted
        c, top = int(y), z.max()
        r = np.exp(z - top)
        total = r.sum()
        r /= total
        r[c] -= 1.0
        return r, math.log(total) + top - z[c]
    return RESIDUALS[loss](float(z), y)      # one output: the scalar formulas


def _numpy_epoch(X, y, sw, order, W, b, Wbar, bbar, state, loss, code, eta0, tau0, kappa, lam_n, b_ratio,
                 fit_intercept, avg_start):
    """One epoch of per-sample SGD (batch 1, plain steps), eq. (8.86)/(8.88)/(8.90), in numpy.

    For each sample ``i`` in ``order``: scores ``z = W x_i + b``, residual ``r = dloss/dz``,
    then, with ``eta_k`` the schedule's step of update ``k``,

        W <- (1 - eta_k lam/n) W - eta_k s_i r x_i^T,     b <- b - b_ratio eta_k s_i r

    and the running mean of the iterates (8.80) from update ``avg_start`` on. ``W``, ``b``,
    ``Wbar``, ``bbar``, ``state = [updates, iterates averaged]`` are updated in place. Returns
    ``(summed loss, status)`` as ``linbook._kernels.sgd.sgd_epoch_dense`` (each sample's loss
    before its update; status -1 done, -2 shrink factor <= 0, else the position of a
    non-finite loss), which runs this loop compiled and is tested equal to it.
    """
    one = W.shape[0] == 1           # one output: a weight vector and a float intercept
    w, wbar = (W[0], Wbar[0]) if one else (W, Wbar)
    bias, bias_bar = (float(b[0]), float(bbar[0])) if one else (b, bbar)
    t, n_avg = state[0], state[1]
    total = 0.0
    status = -1
    ys, weights = y.tolist(), sw.tolist()
    for pos, i in enumerate(order.tolist()):
        x = X[i]
        r, f = _residual(loss, w @ x + bias, ys[i])
        if not math.isfinite(f):
            status = pos
            break
        total += weights[i] * f
        t += 1.0
        eta_w = _step_size(code, eta0, tau0, kappa, lam_n, t)
        shrink = 1.0 - eta_w * lam_n
        if shrink <= 0.0:
            status = -2
            break
        g = weights[i] * r                               # the sample's gradient is g x_i (and g for b)
        if shrink != 1.0:
            w *= shrink
        w -= (eta_w * g) * x if one else np.outer(eta_w * g, x)
        if fit_intercept:
            bias -= (b_ratio * eta_w) * g
        if avg_start > 0 and t >= avg_start:             # recursive mean of the iterates (8.80)
            n_avg += 1.0
            mu = 1.0 / n_avg
            wbar += mu * (w - wbar)
            bias_bar += mu * (bias - bias_bar)
    if one:
        b[0], bbar[0] = bias, bias_bar
    state[0], state[1] = t, n_avg
    return total, status



def _penalty(W, lam_n, n):
    """``(n lam_n / 2) ||W||^2``, the epoch objective's penalty, with ``||W||`` taken scaled: 0 without a
    penalty, and no overflow while the product is representable. Why: with ``lam = 0`` and weights near 1e300
    (a constant step of 1e300) ``0 * inf`` made every epoch's objective NaN, so the stop rule never fired and
    a thousand RuntimeWarnings leaked; with ``lam = 1e-300`` the objective ~1e302 was inf for the same reason."""
    top = float(np.abs(W).max(initial=0.0))
    if lam_n == 0 or top == 0:
        return 0.0
    with np.errstate(over="ignore"):       # beyond float64: inf, and the stop rule sees no fall
        return 0.5 * n * (lam_n * top) * top * float(np.sum((W / top) ** 2))

class _BaseSGD(BaseEstimator):
    """Shared engine: parameters ``W`` (M, D), ``b`` (M,), one compiled epoch at a time."""

    _parameter_constraints = {
        **schedules.CONSTRAINTS, "lam": [NON_NEGATIVE], "fit_intercept": ["boolean"],
        "average": ["boolean", POSITIVE_INT], "adagrad": ["boolean"], "adagrad_tau0": [POSITIVE],
        "batch_size": [POSITIVE_INT], "max_iter": [POSITIVE_INT], "shuffle": ["boolean"],
        "tol": [NON_NEGATIVE, None], "n_iter_no_change": [POSITIVE_INT],
    }

    def _checked_lam(self):
        """Check the parameters; ``lam`` (also when given by its old name ``alpha``)."""
        lam = renamed_param(self, "lam", "alpha", formula="lam=alpha * n_samples (alpha was the per-sample "
                            "share lam / n)")
        check_params(self, schedules.schedule_constraints(self), lam=lam)
        schedules.check_optimal_rate(self, lam)
        return lam

    def _init_state(self, n_features, n_outputs):
        M, D = n_outputs, n_features
        self._W, self._b = np.zeros((M, D)), np.zeros(M)
        self._G2W, self._G2b = np.zeros((M, D)), np.zeros(M)     # adagrad sums (8.85)
        self._Wbar, self._bbar = np.zeros((M, D)), np.zeros(M)   # Polyak-Ruppert averages (8.80)
        self._state = np.zeros(2)                                # [updates, iterates averaged]
        self._L_x = 0.0                                          # max ||x_i||^2 seen so far
        self._nnz = np.zeros(2)                                  # [nonzeros, rows] seen so far
        self._w_max = 0.0                                        # largest sample weight seen so far
        self._x_scale = None                                     # c: the state is that of X c (_scaled_rows)
        self._target_scale = None                                # s: the target's size (adagrad's auto step)
        self._y_scale = 1.0                                      # d: the state is that of the target T d
        self.t_ = 0
        record_params(self)

    def _run(self, X, T, sw, *, epochs, shuffle, rng, stop=False):
        """Up to ``epochs`` passes over ``(X, T)`` (Algorithm 8.3's outer loop); returns the passes run.

        Each pass takes the samples in a fresh random order (``shuffle``) and makes one step per
        sample or minibatch (``_epoch``). With ``stop`` (``fit``) and ``tol`` set, the passes end
        by the stop rule of ``linbook.online._stream.objective_stop``.
        """
        n = X.shape[0]
        T = self._scaled_targets(T, sw)
        stops = None
        if stop and self.tol is not None:
            stops = objective_stop(self.tol, self.n_iter_no_change, T, sw, fit_intercept=self.fit_intercept,
                                   squared=self._loss_name() == "squared_error")
        # the stop rule ends no fit before n_iter_no_change + 1 epochs
        least = n * (epochs if stops is None else min(epochs, int(self.n_iter_no_change) + 1))
        epoch_in = self._epoch(X, T, sw, numpy_fit(least, _numpy_steps_left))
        lam_n = self._lam_n(n)
        for epoch in range(1, epochs + 1):
            order = rng.permutation(n) if shuffle else np.arange(n)
            total = epoch_in(order)                                  # summed loss, each before its step
            if self.verbose:
                progress(self, epoch, epochs, total / sw.sum() / self._y_scale / self._y_scale)
            if stops is not None and stops(total + _penalty(self._W, lam_n, n)):
                break
        self.tol_reached_ = stops is not None and epoch < epochs
        self.t_ = int(self._state[0])
        use_avg = self._average_start() and self._state[1] > 0
        # the weights of X are c times those of X c, over d for the target T d (exact: powers of two)
        W, b = (self._Wbar, self._bbar) if use_avg else (self._W, self._b)
        self._publish(schedules.in_caller_units(self, W, self._x_scale, self._y_scale), b / self._y_scale)
        return epoch

    def _scaled_targets(self, T, sw):
        """The chunk's targets in the units the iterates run in, ``T d`` (``schedules.target_units``).

        The first chunk with a non-zero target picks ``d``, and a chunk whose targets leave ``2^+-64`` in
        its units picks it anew, the state rescaled alongside. Adagrad's steps are not scale-equivariant
        (``adagrad_tau0``), so it keeps ``d = 1``.
        """
        size = schedules.target_scale(T, sw, self._loss_name() == "squared_error")
        if self._target_scale is None:           # fixed by the first chunk with a non-zero target
            self._target_scale = size
        if not self.adagrad:
            d = schedules.target_units(size, self._y_scale)
            if d != self._y_scale:               # a chunk's targets beyond 2^+-64 in the units so far
                schedules.rescale_exactly((self._W, self._b, self._Wbar, self._bbar), self._y_scale, d)
                self._y_scale = d
        return T * self._y_scale if self._y_scale != 1.0 else T

    def _lam_n(self, n):
        """The per-sample penalty share ``lam / n`` (``lam`` also when given by its old name ``alpha``),
        in the units of the iterates: times ``c^2`` when they run on ``X c`` (``_scaled_rows``)."""
        lam = float(renamed_param(self, "lam", "alpha", convert=lambda alpha: alpha * n, warn=False))
        scale = self._x_scale or 1.0
        return lam / n * scale * scale           # (lam/n c) c: exact whenever the result is a normal number

    def _scaled_rows(self, X):
        """``(X c, max_i ||x_i c||^2, nonzeros)``: the chunk in the units the iterates run in.

        ``c`` is a power of two, 1 unless the squared row norms over- or underflow
        (``schedules.feature_scale``); the first chunk of a fit or stream picks it, and a chunk whose
        features leave the window in its units picks it anew, the state rescaled alongside. With the
        penalty share times ``c^2`` (``_lam_n``) and a given step over ``c^2``, the iterates on
        ``X c`` are those on ``X`` over ``c``, bit for bit. Adagrad's steps are not
        scale-equivariant (``adagrad_tau0`` in their denominator), so it keeps ``c = 1``.
        """
        old = self._x_scale
        X, scale, top, nnz = schedules.scaled_rows(X, 1.0 if self.adagrad else old, keep=self.adagrad)
        if old is not None and scale != old:     # the iterates w / c, and max ||x c||^2, in the new units
            schedules.rescale_exactly((self._W, self._Wbar), scale, old)
            L_x = np.array(self._L_x)
            schedules.rescale_exactly((L_x,), old, scale, power=2)
            self._L_x = float(L_x)
        self._x_scale = scale
        return X, top, nnz

    def _average_start(self):
        """The update from which the iterates are averaged (8.80); 0: no averaging."""
        return 0 if self.average is False else (1 if self.average is True else int(self.average))

    def _steps(self, top, nnz, n, sw, lam_n):
        """``(eta0, b_ratio)``: the weights' initial step and the intercept's step relative to it,
        from the chunk's (scaled) largest squared row norm ``top``, its ``nnz`` nonzeros and ``n`` rows."""
        self._L_x = schedules.curvature_bound(top, self._L_x, nnz)
        self._nnz += (nnz, n)
        if not isinstance(self.eta0, str):
            return schedules.scaled_fixed_step(float(self.eta0), self._x_scale)
        if self.adagrad:                                         # "auto" with adagrad: see adagrad_auto_steps
            eta_w, eta_b = schedules.adagrad_auto_steps(self._L_x, self._target_scale or 1.0)
            return eta_w, eta_b / eta_w
        self._w_max = max(self._w_max, float(sw.max()))
        eta_w, eta_b = schedules.auto_steps(self._L_x, lam_n, self._nnz[0] / self._nnz[1], self._w_max)
        return eta_w, eta_b / eta_w

    def _epoch(self, X, T, sw, numpy_first=True):
        """The function running one epoch in a given order: ``_numpy_epoch`` or the compiled kernel.

        Epochs run in numpy while ``numpy_first`` and the process's budget last (``_stream.numpy_pass``).

        It returns the epoch's summed loss and raises ``DivergenceError`` (the model is then
        restored by ``transactional``) when the loss, the weights or the shrink factor fail.
        """
        X, top, nnz = self._scaled_rows(X)
        lam_n = self._lam_n(X.shape[0])
        eta0, b_ratio = self._steps(top, nnz, X.shape[0], sw, lam_n)
        avg = self._average_start()
        options = (self._state, _LOSSES[self._loss_name()], schedules.SCHEDULES.index(self.learning_rate), eta0,
                   float(self.tau0), float(self.kappa), lam_n, b_ratio, bool(self.fit_intercept),
                   bool(self.adagrad), float(self.adagrad_tau0), avg)
        params = (int(self.batch_size), self._W, self._b, self._G2W, self._G2b, self._Wbar, self._bbar)
        # the numpy epoch covers dense input, one sample a step, plain steps (no multiclass perceptron ties)
        plain = (not sp.issparse(X) and int(self.batch_size) == 1 and not self.adagrad
                 and not (self._loss_name() == "perceptron" and self._W.shape[0] > 1))
        rows = []

        def run(order):
            if plain and numpy_first and numpy_pass(X.shape[0], _numpy_steps_left):
                # one output, few features: the same loop on Python floats (sgd_epoch_list, bit-equal)
                small = self._W.shape[0] == 1 and X.shape[1] <= MAX_FEATURES
                epoch = sgd_epoch_list if small else _numpy_epoch
                with np.errstate(over="ignore", invalid="ignore"):    # a divergence is reported below
                    total, status = epoch(X, T, sw, order, self._W, self._b, self._Wbar, self._bbar,
                                          *options[:8], bool(self.fit_intercept), avg)
            elif sp.issparse(X):
                from .._kernels.csr import csr_parts
                from .._kernels.sgd_sparse import sgd_epoch_csr

                rows[:] = rows or csr_parts(X)
                total, status = sgd_epoch_csr(*rows, T, sw, order, *params, *options)
            else:
                from .._kernels.sgd import sgd_epoch_dense

                total, status = sgd_epoch_dense(X, T, sw, order, *params, *options)
            self._check_status(status, T)
            return total

        return run

    def _check_status(self, status, T):
        """Raise ``DivergenceError`` when an epoch's status or the weights say it diverged."""
        if status == -2:
            raise diverged(self, "the shrink factor 1 - eta lam/n of the penalty",
                           "lower eta0 (or use eta0='auto') or lam")
        if status >= 0 or not (np.all(np.isfinite(self._W)) and np.all(np.isfinite(self._b))):
            big_y = self._loss_name() == "squared_error" and np.max(np.abs(T)) > 1e150
            cure = ("scale the target y (its values reach 1e150 or more, so the squared loss overflows)"
                    if big_y else CURE)
            raise diverged(self, "the loss" if status >= 0 else "the weights", cure)

    def _prepare(self, X, y, sample_weight, first, drop_zero_weight_rows=True):
        X, y = validate_chunk(self, X, y, first=first, y_numeric=self._loss_name() == "squared_error",
                              accept_sparse=True)
        if not sp.issparse(X):
            X = np.ascontiguousarray(X)
        sw = chunk_sample_weight(self, sample_weight, X, first=first)
        if not drop_zero_weight_rows:
            return X, y, sw
        # a row of weight 0 moves nothing, but its values would still set the step sizes and the feature scale
        return without_zero_weight_rows(X, y, sw)

    def _decision(self, X):
        """``X w + b``, with a row beyond float64 as an infinity, or, for several classes, shifted by its
        top score (``linbook._predictor``): what labels and probabilities need."""
        X = predict_input(self, X, accept_sparse=True)
        return linear_predictor(X, self.coef_.T, self.intercept_, shift_far_rows=True)

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
        ``adagrad``, whose steps move each parameter by about ``eta0`` whatever its gradient's
        size, the weights take ``s / max_i ||x_i||`` and the intercept ``s``, with ``s`` the
        root-mean-square of the target (1 for the classification losses): the size of the
        parameters the data call for (``linbook.online.schedules.adagrad_auto_steps``).
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
    max_iter : int, default 1000
        Most epochs run by ``fit``.
    tol : float or None, default 1e-3
        The stop rule of ``fit`` (scikit-learn's): stop when the epoch's training objective
        (summed loss, each sample's taken before its step, plus the penalty) has not fallen
        below ``best - tol * L_ref`` for ``n_iter_no_change`` epochs in a row, ``best`` the
        lowest so far. ``L_ref`` is the summed sample weight for the classification losses
        (``tol`` per sample, as scikit-learn) and the loss ``(1/2) sum_i s_i (y_i - ybar)^2``
        of the best constant for the squared error (so the rule does not depend on the
        scale of ``y``). ``None``: run all ``max_iter`` epochs (the textbook's fixed number
        of passes). ``partial_fit`` makes one pass whatever ``tol``.
        The rule watches the objective you asked for: with the default ``lam=0`` on data a
        linear model nearly separates (e.g. sparse text with many features) the unpenalised
        loss has no finite minimiser and keeps falling by more than ``tol`` per sample for
        many epochs, and ``fit`` runs until it slows down (a lower training loss, not a worse
        fit). scikit-learn's default stops sooner because it minimises a penalised loss
        (``alpha=1e-4``, i.e. ``lam = 1e-4 n``); pass ``lam`` for that objective, or
        ``max_iter`` for a fixed budget of epochs.
    n_iter_no_change : int, default 5
        Epochs without improvement before the rule stops ``fit``.
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
    tol_reached_ : bool
        Whether the ``tol`` rule stopped the last ``fit`` (before ``max_iter``). It says the
        objective stopped falling, not that the optimum was reached.
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
                 kappa=0.6, average=True, adagrad=False, adagrad_tau0=1e-8, batch_size=1, max_iter=1000,
                 tol=1e-3, n_iter_no_change=5, shuffle=True, random_state=None, verbose=0, alpha=DEPRECATED):
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
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.shuffle = shuffle
        self.random_state = random_state
        self.verbose = verbose

    def _loss_name(self):
        return "squared_error"

    @transactional
    def fit(self, X, y, sample_weight=None):
        """Run epochs from zero parameters until the stop rule (``tol``) or ``max_iter``. Returns ``self``."""
        self._checked_lam()
        X, y, sw = self._prepare(X, y, sample_weight, first=True)
        self._init_state(X.shape[1], 1)
        self.n_iter_ = self._run(X, y, sw, epochs=int(self.max_iter), shuffle=self.shuffle,
                                 rng=as_rng(self.random_state), stop=True)
        return self

    @transactional
    def partial_fit(self, X, y, sample_weight=None):
        """One pass over the chunk ``(X, y)`` in its order, continuing the stream. Returns ``self``."""
        first = not hasattr(self, "_W")
        if first:
            self._checked_lam()
        else:
            recheck_params(self, self._checked_lam)
        X, y, sw = self._prepare(X, y, sample_weight, first=first)
        if not X.shape[0]:     # every row of weight 0 (a later chunk): nothing moves
            return self
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
        return finite_scores(self, self._decision(X))


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
                 max_iter=1000, tol=1e-3, n_iter_no_change=5, shuffle=True, random_state=None, verbose=0,
                 alpha=DEPRECATED):
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
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.shuffle = shuffle
        self.random_state = random_state
        self.verbose = verbose

    def _loss_name(self):
        return self.loss

    _parameter_constraints = {**_BaseSGD._parameter_constraints, "loss": [StrOptions({"log_loss", "perceptron"})]}

    def _codes(self, y):
        """Class codes 0..K-1 of ``y`` as floats (the kernels' targets)."""
        return class_index(self, y, partial_fit=True).astype(np.float64)

    @transactional
    def fit(self, X, y, sample_weight=None):
        """Run epochs from zero parameters until the stop rule (``tol``) or ``max_iter``. Returns ``self``."""
        self._checked_lam()
        X, y, sw = self._prepare(X, y, sample_weight, first=True, drop_zero_weight_rows=False)
        # classes_ from every row of y (scikit-learn's); a class whose rows all have weight 0 is refused
        # with an intercept, as in LogisticRegression: its intercept would only fall for ever
        self.classes_, codes = encode_labels(y, model=type(self).__name__)
        K = self.classes_.size
        if sw is not None:
            require_weighted_classes(type(self).__name__, self.classes_, np.bincount(codes, weights=sw, minlength=K),
                                     self.fit_intercept)
        X, codes, sw = without_zero_weight_rows(X, codes, sw)
        self._init_state(X.shape[1], 1 if K == 2 else K)
        self.n_iter_ = self._run(X, codes.astype(np.float64), sw, epochs=int(self.max_iter), shuffle=self.shuffle,
                                 rng=as_rng(self.random_state), stop=True)
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
            self._checked_lam()
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit: pass classes, the "
                                 "full list of labels the stream can contain.")
            all_classes = np.unique(np.asarray(classes))
            if all_classes.size < 2:
                raise ValueError(f"{type(self).__name__} needs at least 2 classes; got {all_classes.tolist()}. "
                                 "A single class cannot be learned: pass every class of the stream.")
        else:
            recheck_params(self, self._checked_lam)
        if not first and classes is not None and not np.array_equal(np.unique(np.asarray(classes)), self.classes_):
            raise ValueError(f"classes {np.unique(classes).tolist()} differ from the classes of the first "
                             f"partial_fit call {self.classes_.tolist()}. Pass those classes (or classes=None) on "
                             "later calls, or call fit to start a new stream.")
        X, y, sw = self._prepare(X, y, sample_weight, first=first)
        if first:
            self.classes_ = all_classes
        codes = self._codes(y)
        if not X.shape[0]:     # every row of weight 0 (a later chunk): nothing moves
            return self
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
        Z = finite_scores(self, self._decision(X), "decision function")
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
        if Z.shape[1] == 1:      # each column as itself: 1 - p is 0 for scores above ~37
            return np.column_stack([sigmoid(-Z[:, 0]), sigmoid(Z[:, 0])])
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
        idx = (Z[:, 0] > 0).astype(int) if Z.shape[1] == 1 else row_argmax(Z)
        return self.classes_[idx]
