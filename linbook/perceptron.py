"""The perceptron (Rosenblatt): primal, dual (Gram matrix) and pocket forms.

Training is the textbook per-sample loop - visit the samples in order (a fresh
permutation every epoch when ``shuffle``), and on a mistake ``y_i (w.x_i + b) <= 0``
update ``w <- w + eta y_i x_i``, ``b <- b + eta y_i``. ``perceptron_reference`` is that
loop in plain Python. ``Perceptron.fit`` makes the update in numpy, and on large, sparse,
dual or pocket fits runs compiled epochs (``linbook._kernels.perceptron``, numba, behind
``_CompiledEpochs``), tested to make the same updates.

Derived in: chapter "The perceptron".
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning

from ._kernels.perceptron_numpy import primal_epoch as _numpy_epoch
from ._predictor import _far_rows, finite_scores, linear_predictor
from .base import (ClassifierMixin,  # scikit-learn's, with score's y and sample_weight checked
                   DEPRECATED, NON_NEGATIVE, POSITIVE, POSITIVE_INT, StrOptions, all_or_nothing, as_rng,
                   check_param_values, check_params, check_sample_weight, encode_labels, max_sq_row_norm,
                   predict_input, renamed_kwargs, renamed_param, require_weighted_classes, require_y, validate_fit)
from .optim.result import real_array

__all__ = ["Perceptron", "perceptron_reference"]

_FORMS = ("primal", "dual", "pocket")
_KEEP_ROWS = 1_000_000     # numbers of X kept for updates_
# Dense primal fits below _NUMPY_MAX_ROWS rows run the numpy epoch until this process has made
# _NUMPY_UPDATES steps that way (an update, or a block of _BLOCK samples scored); then the compiled
# epoch (the same updates, tested equal). Loading it costs a numba import and a cache read (~0.5 s),
# more than a chapter's fits; the numpy loop costs a few microseconds a step, more than the compiled
# one in a loop of many fits.
_NUMPY_MAX_ROWS = 10_000
_NUMPY_UPDATES = 20_000
_numpy_updates_left = [_NUMPY_UPDATES]
_BLOCK = 16                # samples counted as one step of that loop (scored by block products)

@renamed_kwargs(max_epochs="max_iter")
def perceptron_reference(X, y, *, eta=1.0, max_iter=1, order=None, fit_intercept=True, intercept_scaling=1.0):
    """The textbook per-sample perceptron loop, in plain Python (for tests and teaching).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,) with values in {-1, +1}
    eta : float
        Learning rate.
    max_iter : int
        Passes over the data (epochs); stops early after a pass without mistakes.
    order : sequence of index arrays, optional
        ``order[e]`` is the visiting order of epoch ``e``; default ``0..N-1``.
    fit_intercept : bool
    intercept_scaling : float
        Value ``c`` of the intercept's constant feature: ``b <- b + eta c^2 y_i``.

    ``max_epochs=`` still works as the old name of ``max_iter`` (FutureWarning) for one release.

    Returns
    -------
    w : ndarray, b : float, updates : list of int
        Final weights and the indices of the samples that triggered updates.

    Derived in: chapter "The perceptron" § "The primal algorithm".
    """
    X, y, order = _reference_arguments(X, y, eta, max_iter, order, fit_intercept, intercept_scaling)
    w, b, updates = np.zeros(X.shape[1]), 0.0, []
    with np.errstate(over="ignore"):
        c2 = np.float64(intercept_scaling) ** 2         # a Python float's ** raised OverflowError from 1e155 on
    for e in range(max_iter):
        idx = np.arange(X.shape[0]) if order is None else order[e]
        mistakes = 0
        for i in idx:
            if y[i] * (X[i] @ w + b) <= 0:
                with np.errstate(over="ignore"):
                    w = w + (eta * y[i]) * X[i]
                    b = b + eta * c2 * y[i] if fit_intercept else b
                _check_representable(w, b, len(updates) + 1)
                updates.append(int(i))
                mistakes += 1
        if mistakes == 0:
            break
    return w, b, updates


def _check_representable(w, b, n_updates):
    """A clear error when an update overflowed ``w`` or ``b``. Why: ``eta=1e308`` returned inf and NaN weights
    with only numpy's RuntimeWarnings. From ``w = 0, b = 0`` the iterates are ``eta`` times those of ``eta = 1``
    (the mistakes do not depend on ``eta``), so the answer itself is beyond float64."""
    if not (np.all(np.isfinite(w)) and np.isfinite(b)):
        raise ValueError(f"perceptron_reference: update {n_updates} overflowed the weights (eta times the summed "
                         "rows, or eta times intercept_scaling^2, is beyond 1e308); the mistakes do not depend on eta, "
                         "so use eta=1.0, or scale X and intercept_scaling down")


def _reference_arguments(X, y, eta, max_iter, order, fit_intercept, intercept_scaling):
    """``(X, y, order)`` as arrays, or a clear error naming the input: the loop itself accepted labels 0/1, NaN in
    ``X``, ``eta <= 0``, a negative ``max_iter`` and indices out of range without a word (a wrong answer)."""
    check_param_values("perceptron_reference", {"eta": [POSITIVE], "max_iter": [POSITIVE_INT],
                                                "fit_intercept": ["boolean"], "intercept_scaling": [POSITIVE]},
                       {"eta": eta, "max_iter": max_iter, "fit_intercept": fit_intercept,
                        "intercept_scaling": intercept_scaling})
    X, y = real_array(X, "X"), real_array(y, "y")
    if X.ndim != 2 or y.shape != (X.shape[0],):
        raise ValueError(f"perceptron_reference needs X of shape (N, D) and y of shape (N,); got X {X.shape} and "
                         f"y {y.shape}. Pass X as a 2-D array and y as a 1-D array of +-1 labels, one per row")
    if not np.all(np.isfinite(X)):
        raise ValueError("perceptron_reference: X contains NaN or inf; drop or impute those rows")
    if not np.all(np.abs(y) == 1):
        raise ValueError(f"perceptron_reference needs labels y in {{-1, +1}}; got "
                         f"{np.unique(y[np.abs(y) != 1])[:5].tolist()}. Encode y as +-1 first (from 0/1: 2 y - 1)")
    if order is not None:
        order = [np.asarray(idx) for idx in order]
        if len(order) < max_iter or not all(idx.ndim == 1 and idx.dtype.kind in "iu" and np.all(idx >= 0)
                                            and np.all(idx < X.shape[0]) for idx in order[:max_iter]):
            raise ValueError(f"perceptron_reference: order must hold max_iter = {max_iter} 1-D arrays of row indices "
                             f"in 0..{X.shape[0] - 1}; pass one visiting order per epoch")
    return X, y, order


class Perceptron(ClassifierMixin, BaseEstimator):
    """Rosenblatt's perceptron for two classes, on dense or sparse (CSR) ``X``.

    Minimises the perceptron criterion ``L(w, b) = - sum_{i in M} y_i (w.x_i + b)``
    over the set ``M`` of misclassified points (``y_i (w.x_i + b) <= 0``) by stochastic
    gradient descent on one misclassified point at a time, starting from ``w = 0``,
    ``b = 0``, with labels coded ``y in {-1, +1}``: on a mistake
    ``w <- w + eta y_i x_i``, ``b <- b + eta c^2 y_i``.

    Stopping: always after an epoch without mistakes (the data are separated, the
    criterion is at its minimum 0: ``converged_``), and after ``max_iter`` epochs.
    With ``tol`` a number (the default), also when the number of mistakes of an epoch
    has not fallen below the fewest so far by more than ``tol * n_samples`` for
    ``n_iter_no_change`` epochs in a row (scikit-learn's rule for its ``Perceptron``, on
    the count of mistakes, which does not depend on ``eta`` or the feature scale): on
    data that are not separable the loop otherwise runs all ``max_iter`` epochs without
    getting better. ``tol=None`` is the textbook algorithm: "repeat until an epoch
    without mistakes" (bounded by ``max_iter``).

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
    max_iter : int, default=1000
        Maximum number of epochs (passes over the data).
    tol : float or None, default=1e-3
        Stop when ``n_iter_no_change`` epochs in a row each make more than
        ``(fewest mistakes of an epoch so far) - tol * n_samples`` mistakes. ``None``: run
        until an epoch without mistakes or ``max_iter`` (the textbook algorithm).
    n_iter_no_change : int, default=5
        Epochs without improvement before the ``tol`` rule stops.
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
    max_epochs : int
        Deprecated alias of ``max_iter`` (a FutureWarning; removed in the next release).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels; ``classes_[1]`` is coded ``+1``.
    coef_ : ndarray of shape (1, n_features)
        ``w``, shaped like scikit-learn's binary linear classifiers.
    intercept_ : ndarray of shape (1,)
        ``b``.
    alpha_ : ndarray of shape (n_samples,)
        Dual coefficients ``n_i eta`` (``form="dual"`` only; ``w = sum_i alpha_i s_i y_i x_i``
        with sample weights ``s_i``).
    n_mistakes_ : int
        Number of updates made (mistakes met during training).
    n_iter_ : int
        Epochs run.
    converged_ : bool
        Whether the last epoch was free of mistakes (the data are separated); for
        ``form="pocket"``, whether the returned weights make no training error
        (``pocket_errors_ == 0``).
    tol_reached_ : bool
        Whether the ``tol`` rule stopped the fit (the mistakes stopped falling; the data
        were not separated).
    update_indices_ : ndarray of int
        Sample index of every update, in order.
    updates_ : list of (int, ndarray, float)
        ``(sample index, w after the update, b after the update)`` for every update,
        for plotting. Built on demand from ``update_indices_`` and the rows of the
        updated samples, which ``fit`` keeps when they hold at most ``1e6`` numbers
        (``n_mistakes_ * n_features``); after a larger fit it raises ``AttributeError``.
    pocket_errors_ : int or float
        Training errors of the returned weights (``form="pocket"`` only; with sample weights their
        weighted sum, a float).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Column names, when ``X`` was a DataFrame with string column names.

    Notes
    -----
    ``predict`` uses ``sign(0) = +1`` (a point on the hyperplane goes to ``classes_[1]``),
    while training counts ``y_i (w.x_i + b) = 0`` as a mistake. The primal epoch on dense
    input below 10,000 rows runs in numpy (``linbook._kernels.perceptron_numpy``: block products, the
    decisions and updates of ``perceptron_reference``'s loop bit for bit) until the process has made
    20,000 steps that way; other epochs run compiled (``linbook._kernels.perceptron``), tested to
    make the same updates.

    Derived in: chapter "The perceptron" § "The primal algorithm".
    """

    def __init__(self, form="primal", eta=1.0, max_iter=1000, tol=1e-3, n_iter_no_change=5, shuffle=True,
                 random_state=None, fit_intercept=True, intercept_scaling=1.0, max_epochs=DEPRECATED):
        self.form = form
        self.eta = eta
        self.max_iter = max_iter
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.shuffle = shuffle
        self.random_state = random_state
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.max_epochs = max_epochs

    _parameter_constraints = {
        "form": [StrOptions(set(_FORMS))], "eta": [POSITIVE], "max_iter": [POSITIVE_INT],
        "tol": [NON_NEGATIVE, None], "n_iter_no_change": [POSITIVE_INT], "shuffle": ["boolean"],
        "fit_intercept": ["boolean"], "intercept_scaling": [POSITIVE, StrOptions({"auto"})],
    }

    @all_or_nothing
    def fit(self, X, y, sample_weight=None):
        """Train on ``(X, y)``; returns ``self``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), exactly two distinct labels
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights ``s_i``: a mistake on sample ``i`` moves ``w`` by ``eta s_i y_i x_i``
            and ``b`` by ``eta c^2 s_i y_i`` (scikit-learn's meaning); samples of weight 0 are left
            out. As with SGD, a weight of 2 is one step twice as long, not two steps. The pocket
            form counts each training error ``s_i`` times.

        Returns
        -------
        self
        """
        max_iter = renamed_param(self, "max_iter", "max_epochs")
        check_params(self, max_iter=max_iter)
        X, t, classes = self._validate(X, y)             # labels coded t_i in {-1, +1}
        X, t, kept = self._weigh(X, t, classes, sample_weight)   # weights: t_i <- s_i t_i
        t, weight_scale = _split_weights(t)              # the run on t / 2^k (see _split_weights)
        n, d = X.shape
        eta, c2 = float(self.eta), self._intercept_c2(X)
        eta, eta_scale = _split_eta(eta)                 # the run at eta / 2^k (see _split_eta)
        X_user, scale = X, self._tiny_scale(X, eta)
        if scale != 1.0:                                 # the same run on X / scale (see _tiny_scale)
            X, c2 = self._scaled_run(X, eta, c2, scale)
        w, b = np.zeros(d), np.zeros(1)
        compiled = _CompiledEpochs(self.form, X, t, w, b, eta, eta * c2)
        rng, history = as_rng(self.random_state), _History(n, self.tol, self.n_iter_no_change)
        for epoch in range(1, int(max_iter) + 1):
            order = rng.permutation(n) if self.shuffle else np.arange(n)
            # the textbook epoch (perceptron_reference's loop): for each i in order with t_i (w.x_i + b) <= 0,
            #   w <- w + eta y_i x_i   (eta s_i y_i x_i)   and   b <- b + eta c^2 y_i   (eta c^2 s_i y_i)
            if compiled.textbook_primal():               # small dense data: numpy block products, no numba
                updated = _numpy_epoch(X, t, order, w, b, eta, eta * c2)
                _numpy_updates_left[0] -= len(updated) + n // _BLOCK
            else:                                        # the same updates, compiled (and dual, pocket)
                updated = compiled.epoch(order)
            if history.stop(updated, pocket_perfect=compiled.pocket_perfect()):
                break
        self.classes_, self._c2 = classes, c2 * scale * scale
        self._store(X_user, history, epoch, compiled.result(X), kept, t * weight_scale, scale, eta_scale,
                    weight_scale)
        return self

    def _validate(self, X, y):
        """``(X, t, classes_)``: ``X`` dense C-ordered or CSR (``_row_layout``), ``t`` the labels as -1/+1."""
        require_y(self, y)
        X, y = validate_fit(self, X, y, accept_sparse=["csr", "csc", "coo"])
        classes, codes = encode_labels(y, min_classes=2, max_classes=2, model="Perceptron",
                                      more_classes="linbook.SGDClassifier(loss='perceptron')")
        return _row_layout(X, self.form == "dual"), np.where(codes == 1, 1.0, -1.0), classes

    def _weigh(self, X, t, classes, sample_weight):
        """``(X, t, kept)``: the samples of positive weight, ``t_i = s_i y_i``, and the mask of those
        rows in the caller's ``X`` (``kept`` is None without weights). A mistake's test
        ``t_i (w.x_i + b) <= 0`` does not change with ``s_i > 0``; its update scales by ``s_i``."""
        if sample_weight is None:
            return X, t, None
        sw = check_sample_weight(sample_weight, X, estimator=self)
        require_weighted_classes("Perceptron", classes, np.bincount(t > 0, weights=sw, minlength=2), False)
        kept = sw > 0
        return X[kept], t[kept] * sw[kept], kept

    def _store(self, X, history, epoch, result, kept, t, scale, eta_scale=1.0, weight_scale=1.0):
        """Set the fitted attributes from the run's ``result`` (sample numbers in the caller's ``X``, whose rows
        ``kept`` were fitted; the run's weights times ``scale``, its intercept times ``scale^2``, both and the dual
        coefficients times ``eta_scale``, the weights, the intercept and the pocket's weighted error count times
        ``weight_scale``), and warn when the data were not separated."""
        w, b, pocket, alpha = result
        with np.errstate(over="ignore", under="ignore"):
            w, b = w * (scale * eta_scale) * weight_scale, b * (scale * scale * eta_scale) * weight_scale
            alpha = None if alpha is None else alpha * eta_scale
        if scale != 1.0 or eta_scale != 1.0 or weight_scale != 1.0:
            _check_representable_weights(result[:2], (w, b), self.eta, weight_scale)
        if weight_scale != 1.0 and pocket is not None:
            pocket = (pocket[0] * weight_scale, pocket[1])
        updated = np.concatenate(history.updates)
        self.update_indices_ = updated if kept is None else np.flatnonzero(kept)[updated]
        self.n_mistakes_ = int(updated.size)
        self.n_iter_ = epoch
        self.converged_ = history.converged
        self.tol_reached_ = history.tol_reached
        self._t = t if kept is None else _scatter(t, kept)
        # the rows behind updates_ (a plotting aid): kept for small runs only, copying them costs
        # as much as the training loop on large ones
        keep = self.n_mistakes_ * X.shape[1] <= _KEEP_ROWS
        self._X_updates = X[updated] if keep else None
        for name in ("alpha_", "pocket_errors_", "pocket_update_"):     # a refit in another form: not its attributes
            vars(self).pop(name, None)
        if self.form == "dual":
            self.alpha_ = alpha if kept is None else _scatter(alpha, kept)
        if self.form == "pocket":
            errors, self.pocket_update_ = pocket
            self.pocket_errors_ = int(errors) if kept is None else errors     # weighted: a float
            # the pocket stops as soon as its weights make no training error, before the epoch
            # without mistakes that sets history.converged: its answer separates the data then
            self.converged_ = errors == 0
        self.coef_ = w.reshape(1, -1).copy()
        self.intercept_ = b.copy()
        if not (history.converged or self.form == "pocket"):
            self._warn_not_separated(epoch, history.tol_reached)

    def _warn_not_separated(self, epoch, tol_reached):
        scale = ""
        if self.fit_intercept and self._c2 > 0 and not 1e-4 <= self._R2 / self._c2 <= 1e4:
            scale = (f" The features have squared norm up to {self._R2:.1e} against {self._c2:.1e} for the "
                     "intercept's column, so the intercept can hardly move: scale the features "
                     "(StandardScaler) or set intercept_scaling='auto'.")
        if scale or not tol_reached:         # the tol rule stopping on noisy data is no failure
            stop = (f"Perceptron: the mistakes stopped falling after {epoch} epochs" if tol_reached else
                    f"Perceptron did not separate the data in {epoch} epochs")
            warnings.warn(
                f"{stop} ({self.n_mistakes_} updates): the data may not be linearly separable. Use "
                "form='pocket' to keep the best weights, or a probabilistic model (logistic regression)."
                + scale, ConvergenceWarning, stacklevel=4)

    def _intercept_c2(self, X):
        """``c^2`` for the intercept's constant column: ``intercept_scaling`` squared, or
        ``R2 = max_i ||x_i||^2`` for ``"auto"``; 0 without an intercept. Records ``R2``."""
        self._R2 = R2 = max_sq_row_norm(X)
        if not np.isfinite(R2):              # the scores would overflow: every test y (w.x + b) <= 0 fails
            raise ValueError("The squared norms of the rows of X overflow (features of order 1e154 or larger): "
                             "scale the features before fitting.")
        if not self.fit_intercept:
            return 0.0
        if self.intercept_scaling != "auto":
            with np.errstate(over="ignore"):
                c2 = float(np.float64(self.intercept_scaling) ** 2)
                step = c2 * float(self.eta)
            if not np.isfinite(step):                      # b's step eta c^2 y_i would be infinite
                raise ValueError(f"Perceptron: eta * intercept_scaling^2 overflows float64 (intercept_scaling="
                                 f"{float(self.intercept_scaling):g}, eta={float(self.eta):g}). Set intercept_scaling "
                                 "to 1.0 or 'auto', or scale it down.")
            return c2
        return R2 if R2 > 0 else 1.0

    def _tiny_scale(self, X, eta):
        """1, or for features so small that ``eta x.x`` leaves the normal numbers (below ~1e-145 with ``eta = 1``)
        a power of two ``s`` near ``sqrt(eta) max|x|``: the run on ``x / s`` (and ``c / s``) makes exactly the same
        decisions with every score divided by ``s^2`` (powers of two), and its ``w`` and ``b`` are ``s`` and
        ``s^2`` times the unscaled run's. Unscaled, the scores underflowed to 0, every test ``y (w.x + b) <= 0``
        counted a mistake, and a fit of separable data at 1e-200 ended at 53 % training accuracy, silently. So
        too for large features (``sqrt(eta) max|x|`` above ``2^400``), whose scores overflowed: separable data at
        2^480 under ``eta = 2^60`` ended at 43 % training accuracy with ``converged_`` true."""
        values = X.data if sp.issparse(X) else X                # (scipy's abs() sums duplicates in place)
        largest = float(np.max(np.abs(values), initial=0.0))
        if largest == 0.0 or -480 <= np.log2(largest) + 0.5 * np.log2(eta) <= 400:
            return 1.0
        return float(np.ldexp(1.0, int(np.round(np.log2(largest) + 0.5 * np.log2(eta)))))

    def _scaled_run(self, X, eta, c2, scale):
        """``(X / s, c^2 / s^2)`` for the run of :meth:`_tiny_scale`, or a clear error where the intercept's step
        ``eta c^2`` cannot be represented beside features this small (``intercept_scaling = 1`` beside features
        below ~1e-154, or ``"auto"``, whose ``c^2 = max ||x||^2`` underflows)."""
        X = _divided(X, scale)
        if self.fit_intercept:
            c2 = max_sq_row_norm(X) if self.intercept_scaling == "auto" else c2 / scale / scale
            if not (np.isfinite(c2) and np.log2(eta * c2) + 2 * np.log2(scale) >= -1022):     # a normal number
                raise ValueError("Perceptron: the features are too small for the intercept (largest |x| below "
                                 "~1e-145): its steps eta * intercept_scaling^2 and the scores w.x cannot both be "
                                 "represented in float64. Scale the features (e.g. StandardScaler), or set "
                                 "fit_intercept=False.")
        return X, c2

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
        return finite_scores(self, self._scores(X), "decision function")

    def _scores(self, X):
        """``w.x + b``, with a row beyond float64 as an infinity of the right sign (``linbook._predictor``)."""
        X = predict_input(self, X, accept_sparse=True)
        return linear_predictor(X, self.coef_[0], self.intercept_[0])

    def predict(self, X):
        """Class labels: ``classes_[1]`` where ``w.x + b >= 0`` (``sign(0) = +1``), else ``classes_[0]``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        X = predict_input(self, X, accept_sparse=True)
        scores = linear_predictor(X, self.coef_[0], self.intercept_[0])
        # a score below the normal numbers (features near 1e-154: w.x ~ x.x underflows) is computed again on
        # exactly scaled rows, whose rounding keeps its sign (-0.0 for a negative score)
        tiny = np.flatnonzero(np.abs(scores) < 2.0 ** -960)
        if tiny.size:
            scores[tiny] = _far_rows(X[tiny], self.coef_[0], self.intercept_[0], False)
        return self.classes_[(~np.signbit(scores)).astype(int)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = True
        return tags


def _divided(X, scale):
    """``X / scale`` (a power of two: exact), dense or CSR."""
    if sp.issparse(X):
        X = X.copy()
        X.data /= scale
        return X
    return X / scale


def _scatter(values, kept):
    """``values`` where ``kept`` is True, 0 elsewhere (at the samples of weight 0)."""
    full = np.zeros(kept.size)
    full[kept] = values
    return full


def _row_layout(X, sorted_rows):
    """``X`` as a C-ordered array or CSR without duplicates and with its column indices checked, its rows
    sorted when ``sorted_rows`` (the dual form merges sorted rows; the primal loops take them in any order)."""
    if sp.issparse(X):
        from ._kernels.csr import canonical_csr, summed_csr

        # a copy only when needed: the caller's matrix stays as it was
        return (canonical_csr if sorted_rows else summed_csr)(sp.csr_matrix(X))
    return np.ascontiguousarray(X)


class _History:
    """The updates of each epoch and the stopping rules.

    Stop after an epoch without mistakes (``converged``) or, with ``tol`` a number, when
    ``n_iter_no_change`` epochs in a row each make more than ``fewest - tol * n`` mistakes
    (scikit-learn's rule, on the count of mistakes: ``tol_reached``).
    """

    def __init__(self, n, tol, n_iter_no_change):
        self.n, self.tol, self.patience = n, tol, n_iter_no_change
        self.updates, self.converged, self.tol_reached = [], False, False
        self.fewest, self.no_change = np.inf, 0

    def stop(self, updated, pocket_perfect=False):
        """Record the epoch's updates; whether to stop (``pocket_perfect``: the pocket holds
        weights without training errors)."""
        k = len(updated)
        self.updates.append(np.asarray(updated, dtype=np.int64).copy())
        if k == 0:
            self.converged = True
            return True
        if pocket_perfect:
            return True
        if self.tol is not None:
            self.no_change = self.no_change + 1 if k > self.fewest - self.tol * self.n else 0
            self.fewest = min(self.fewest, k)
            self.tol_reached = self.no_change >= self.patience
        return self.tol_reached


def _split_eta(eta):
    """``(eta / 2^k, 2^k)``: the run's step and the power of two its weights are multiplied by at the end.

    With zero initial weights every ``w`` and ``b`` of the run is ``eta`` times the run at ``eta = 1``, and the
    tests ``y (w.x + b) <= 0`` do not depend on ``eta``: the run at ``eta / 2^k`` makes the same mistakes, and
    its weights times ``2^k`` are the weights of ``eta`` bit for bit (a power of two scales exactly). ``k`` is
    0 for ``eta`` from ``2^-64`` to ``2^64``. Above, the unscaled run's scores ``eta x.x`` overflowed: at ``eta``
    near 1e308 the weights became inf and NaN and the fit returned them without a word (50 % training accuracy);
    below, they underflowed beside small features (``eta`` 1e-300 beside features of 1e-200: every score 0, no
    mistake seen, ``coef_ = 0``)."""
    if 2.0 ** -64 <= eta <= 2.0 ** 64:
        return eta, 1.0
    eta_scale = float(np.ldexp(1.0, int(np.floor(np.log2(eta)))))
    return eta / eta_scale, eta_scale


def _split_weights(t):
    """``(t / 2^k, 2^k)``: the run's signed weights ``t_i = s_i y_i`` and the power of two its weights are multiplied
    by at the end, as :func:`_split_eta` does for ``eta`` (every update is ``eta t_i x_i``, so scaling all ``t_i``
    by a power of two scales every ``w`` and ``b`` of the run exactly and leaves the tests ``t_i (w.x_i + b) <= 0``
    as they were). ``k`` brings the largest ``|t_i|`` to 1 when it is above 1, short of making the smallest
    positive one subnormal, and up to 1 when it is below ``2^-64``. Why: with ``sample_weight`` of 1e305 (or 1e10
    beside features of 1e150) the scores ``w.x`` overflowed, and the fit returned inf and NaN weights without a
    word; with weights below 1e-161 the test's product ``t_i (w.x_i + b)``, whose factors both scale with the
    weights, underflowed to 0 and counted every sample as a mistake (9 of 60 labels changed, no warning)."""
    size = np.abs(t)
    largest = float(np.max(size, initial=0.0))
    if largest == 0.0 or 2.0 ** -64 <= largest <= 1.0:
        return t, 1.0
    k = int(np.floor(np.log2(largest)))
    if largest > 1.0:
        k = min(k, int(np.floor(np.log2(np.min(size[size > 0])))) + 1021)
        if k <= 0:
            return t, 1.0
    weight_scale = float(np.ldexp(1.0, k))
    return t / weight_scale, weight_scale


def _check_representable_weights(run, scaled, eta, weight_scale):
    """A clear error when the weights ``w``, ``b`` of the run, scaled back to the caller's units, overflow, or
    underflow below the normal numbers (``eta`` 1e-320, or 1e-170 beside features of 1e-150: the weights
    ~1e-320 keep a few bits, and their predictions were 67 % right on separable data)."""
    if not all(np.all(np.isfinite(v)) for v in scaled):
        raise ValueError(f"Perceptron: the weights eta * sum_i s_i y_i x_i overflow float64 (eta = {float(eta):g}, "
                         f"sample weights up to ~{weight_scale:.0e}). Lower eta or divide sample_weight by its largest "
                         "value: the mistakes, and so the predictions, do not depend on their scale (eta = 1 and "
                         "weights at most 1 give the same classifier).")
    if any(np.any(v != 0) and np.max(np.abs(u)) < np.finfo(float).tiny for v, u in zip(run, scaled)):
        raise ValueError(f"Perceptron: the weights eta * sum_i s_i y_i x_i underflow float64 (below 2.2e-308; "
                         f"eta = {float(eta):g}, sample weights up to ~{weight_scale:.0e}). Raise eta, or multiply "
                         "sample_weight by a constant, or scale the features up: the mistakes, and so the predictions, "
                         "do not depend on eta or on the weights' scale (eta = 1 and weights near 1 give the same "
                         "classifier).")


class _CompiledEpochs:
    """The compiled epochs (``linbook._kernels.perceptron``) on the weights ``w``, ``b`` that
    ``fit`` holds: tested to make the same updates as its numpy epoch (``_kernels.perceptron_numpy``).

    The dual form keeps ``alpha_i`` (``w = sum_i alpha_i y_i x_i`` at the end), the pocket form
    the weights with the fewest training errors so far (``best = [errors, b, update number,
    updates of earlier epochs]``).
    """

    def __init__(self, form, X, t, w, b, eta, eta_b):
        n, d = X.shape
        self.form, self.t, self.w, self.b, self.eta, self.eta_b = form, t, w, b, eta, eta_b
        self.readable = form == "primal" and not sp.issparse(X) and n < _NUMPY_MAX_ROWS
        self.rows = _kernel_rows(X)
        self.upd = np.empty(n, dtype=np.int64)
        self.done = 0                                       # updates of earlier epochs
        if form == "dual":
            self.alpha, self.support, self.n_support = np.zeros(n), np.empty(n, np.int64), np.zeros(1, np.int64)
        self.best_w = np.zeros(d)
        self.best = np.array([float(-np.sum(t[t < 0])), 0.0, 0.0, 0.0])  # w = 0 predicts +1 everywhere

    def textbook_primal(self):
        """Whether this epoch runs fit's numpy loop (dense primal, small, within this process's budget)."""
        self.readable = self.readable and _numpy_updates_left[0] > 0
        return self.readable

    def epoch(self, order):
        """One compiled epoch in ``order``; the indices of the updated samples."""
        from ._kernels import perceptron as kernel

        args = (*self.rows, self.t, order)
        if self.form == "dual":
            k = kernel.dual_epoch(*args, self.alpha, self.b, self.eta, self.eta_b, self.upd, self.support,
                                  self.n_support)
        elif self.form == "pocket":
            self.best[3] = self.done
            k = kernel.pocket_epoch(*args, self.w, self.b, self.eta, self.eta_b, self.upd, self.best_w, self.best)
        else:
            k = kernel.primal_epoch(*args, self.w, self.b, self.eta, self.eta_b, self.upd)
        self.done += k
        return self.upd[:k]

    def pocket_perfect(self):
        return self.form == "pocket" and self.best[0] == 0

    def result(self, X):
        """``(w, b, (pocket errors, pocket update), alpha)``, ``w`` and ``b`` of the form's answer (``alpha``: the
        dual form's coefficients)."""
        if self.form == "dual":
            return np.asarray(X.T @ (self.alpha * self.t)).ravel(), self.b, None, self.alpha
        if self.form == "pocket":
            return self.best_w, self.best[1:2], (float(self.best[0]), int(self.best[2])), None
        return self.w, self.b, None, None


def _kernel_rows(X):
    """``(X, data, indices, indptr)`` for the kernels: a 0 x 0 placeholder for ``X`` when it is CSR,
    empty CSR arrays when it is dense."""
    if sp.issparse(X):
        from ._kernels.csr import csr_parts

        return (np.empty((0, 0)), *csr_parts(X))
    empty_f, empty_i = np.empty(0), np.empty(0, dtype=np.int64)
    return (X, empty_f, empty_i, empty_i)
