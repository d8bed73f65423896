"""Logistic (binary and multinomial) and probit regression on row blocks: Newton as a map-reduce.

The binary objective is a sum over samples, so over row blocks::

    F(theta) = sum_b F_b(theta),  g = sum_b X_b'(a_b (mu_b - y_b)),  H = sum_b X_b' S_b X_b,

each block's ``(F_b, g_b, H_b)`` computed on a worker by the in-memory fit's own pass
(:func:`linbook._kernels.hessian.binary_pass`, which equals the chapter's
:func:`linbook.logistic.logistic_regression.logistic_loss`, with no penalty), the sum formed on
the workers, the penalty added on the client -- as the loss of no data, by the same function --
and the step taken by :func:`linbook.optim.newton` (Cholesky, Armijo backtracking) exactly as
the in-memory fit takes it. Wide problems use :func:`linbook.optim.lbfgs` on ``(F, g)`` alone.

Coordinates are the in-memory fit's: offset columns centred, each column divided by the
Jacobi scale ``c`` of :func:`linbook.logistic._scaled.column_scales`, the stopping rule in
max-abs units (:func:`linbook.logistic._scaled.gradient_scale`): the same optimum, the same
test, so the same coefficients.

Derived in: chapter "Optimizers" § "When the data do not fit: the Newton step as a map-reduce".
"""

from __future__ import annotations

import warnings

import numpy as np

from .._kernels.hessian import binary_pass
from ..base import (SMALL_WEIGHTS, SeparableDataWarning, check_params, encode_labels, require_weighted_classes,
                    require_y, weights_near_one)
from .multinomial import reduced_objective
from .separation import separable, separable_multinomial
from .solvers import DEFAULT_MAX_ITER, SeparationWatch, choose_solver, minimise
from ._scaled import _SATURATED, _jacobi, gradient_scale, predictor_scale
from .binary import intercept_only_start, logit_terms, probit_terms
from .._dask.blocks import CLIENT_NUMBERS, map_reduce, row_blocks, summarise
from ..linear._dask_fit import _combine_grams, _gram_block, _uncentred_block
from ..linear._moments import design_null_space, design_rank, gram_null_space
from .._design import offset_columns

__all__ = ["fit_logistic", "fit_probit"]


class Frame:
    """The in-memory fit's coordinates: ``x -> (x - shift) / c``, and back to the units of ``X``.

    ``shift`` centres the columns whose mean exceeds their spread (as :func:`linbook.base.centre_offsets`,
    here decided on all rows), only with an intercept; ``c`` is :func:`linbook.logistic._scaled.column_scales`'s
    Jacobi scale ``hypot(rms, sqrt(4 lam / sum(a)))`` of the centred columns; ``m`` their largest
    absolute value (the units of the stopping rule).
    """

    def __init__(self, summary, lam, fit_intercept):
        s = summary
        spread = s.spread()
        need = fit_intercept & offset_columns(s.mean, spread, 1.0)
        self.shift = np.where(need, s.mean, 0.0) if fit_intercept and np.any(need) else None
        shift = 0.0 if self.shift is None else self.shift
        m = np.maximum(np.abs(s.xmax - shift), np.abs(s.xmin - shift))
        self.m = np.where(m > 0, m, 1.0)
        # the rms of the centred columns from the mean and spread: sum a (x - shift)^2 / sum a;
        # for features near 1e300 the summed squares overflow, and the column maximum scales them
        # instead (the optimum and the stopping test do not depend on the scale c)
        with np.errstate(over="ignore", invalid="ignore"):
            rms = np.hypot(spread, s.mean - shift)
        rms = np.where(np.isfinite(rms), rms, self.m)
        self.c = _jacobi(rms, lam, s.sw)
        self.lam, self.fit_intercept = lam, fit_intercept

    def centred(self, Xb):
        """The block with offset columns centred (the columns the kernels then scale by ``c``)."""
        Xb = np.asarray(Xb, dtype=np.float64)
        return Xb if self.shift is None else Xb - self.shift

    def origin(self, b_shift):
        """``(shift, b_shift)``, the scores' origin for :func:`linbook._predictor.linear_predictor_from` (``b_shift``:
        the intercepts of the centred columns), or None where no column was centred."""
        return None if self.shift is None or not self.fit_intercept else (self.shift, b_shift)

    def to_units(self, V, b):
        """Coefficients ``V`` (rows, standardised) and intercepts ``b`` back in the units of ``X``."""
        W = V / self.c
        if self.shift is not None:
            b = b - W @ self.shift
        return W, b


def _prepare(est, X, y, sample_weight):
    """Parameters checked, blocks formed, one pass read: ``(blocks, summary, classes, frame, solver, max_iter)``."""
    check_params(est)
    model = type(est).__name__
    require_y(est, y)
    blocks = row_blocks(X, y, sample_weight, model=model)
    summary = summarise(blocks, model)
    lam = float(est.lam)
    if sample_weight is not None and 0.0 < summary.wmax < SMALL_WEIGHTS:
        # the weights near 1 and lam alongside, as in memory (weights_near_one), at the cost of one more pass: the
        # blocks' products of weights of 1e-250 with columns over a Jacobi scale of 1e108 were 0 ("converged")
        _, lam, unit = weights_near_one(np.array([summary.wmax]), lam)
        blocks = row_blocks(X, y, sample_weight / unit, model=model)
        summary = summarise(blocks, model)
    classes, _ = encode_labels(summary.labels, model=model)     # the global classes, whatever each block holds
    require_weighted_classes(model, classes, summary.label_weight, est.fit_intercept)
    solver = choose_solver(est.solver, summary.n, blocks.n_features, classes.size, est.fit_intercept, False)
    frame = Frame(summary, lam, est.fit_intercept)
    return blocks, summary, classes, frame, solver, est.max_iter or DEFAULT_MAX_ITER[solver]


# ------------------------------------------------------------------------------- binary logit
def _binary_block(Xb, yb, swb, theta, classes, frame, need_hess, terms):
    """One block's ``(F_b, g_b[, H_b])`` of a binary GLM, no penalty, in the coordinates ``theta = [b, v]``.

    The in-memory fit's pass (:func:`linbook._kernels.hessian.binary_pass`, what ``BinaryLoss``
    runs; ``tests/test_logistic_readable.py`` checks it equals ``logistic_loss`` on
    ``[1, (X - shift) / c]``) with the link's per-sample ``terms``: blocked, no copy of the
    block's design, the Hessian by SYRK (4-5x the speed of ``logistic_loss`` on a block).
    """
    t = 2.0 * (np.asarray(yb) == classes[1]) - 1.0
    sw = None if swb is None else np.asarray(swb, dtype=np.float64)
    off = int(frame.fit_intercept)
    F, g, H, _ = binary_pass(frame.centred(Xb), t, theta[off:], theta[0] if off else 0.0, terms, weights=sw,
                             col_scale=frame.c, fit_intercept=frame.fit_intercept, need_hess=need_hess)
    return (F, g, H) if need_hess else (F, g)


def _binary_penalty(frame):
    """``r`` with ``(lam/2) sum_j r_j v_j^2 = (lam/2) ||w||^2`` for ``w = v / c``; the intercept is free."""
    r = 1.0 / frame.c ** 2
    return np.r_[np.zeros(int(frame.fit_intercept)), r]


def fit_logistic(est, X, y, sample_weight=None, *, block_loss):
    """``LogisticRegression.fit`` on dask collections: binary or multinomial, the same optimum.

    ``block_loss`` is the model's ``logistic_loss`` (passed in: this module sits below the model).
    """
    blocks, summary, classes, frame, solver, max_iter = _prepare(est, X, y, sample_weight)
    if classes.size > 2:
        return _fit_multinomial(est, blocks, summary, classes, frame, solver, max_iter)
    p = blocks.n_features + int(est.fit_intercept)
    r = _binary_penalty(frame)
    no_data = (np.empty((0, p)), np.empty(0))

    def evaluate(theta, need_hess):
        data = map_reduce(_binary_block, blocks, theta, classes, frame, need_hess, logit_terms)
        pen = block_loss(theta, *no_data, frame.lam, penalised=r, hessian=need_hess)    # the penalty
        return tuple(x + y for x, y in zip(data, pen))

    b0 = intercept_only_start(np.arange(2), summary.label_weight)   # the intercept-only MLE (as in memory)
    return _finish_binary(est, evaluate, b0, blocks, summary, classes, frame, solver, max_iter, "logit")


class BlockLoss:
    """The summed loss with the contract of :func:`linbook.logistic.minimise`:
    ``loss(theta) -> (F, g, H)``, ``loss.value_and_gradient(theta) -> (F, g)``, ``loss.gscale``."""

    def __init__(self, evaluate, gscale, zscale=None, *, uneven_rows=False):
        self._evaluate, self.gscale, self.zscale = evaluate, gscale, zscale
        self.uneven_rows = uneven_rows    # solvers.minimise: the first-order methods' Newton-step check (weights only)

    def __call__(self, theta):
        return self._evaluate(theta, True)

    def value_and_gradient(self, theta):
        return self._evaluate(theta, False)


def _finish_binary(est, evaluate, b0, blocks, summary, classes, frame, solver, max_iter, link):
    fi = est.fit_intercept
    theta0 = np.zeros(blocks.n_features + int(fi))
    if fi:
        theta0[0] = b0
    loss = BlockLoss(evaluate, gradient_scale(None, np.array([summary.sw]), frame.c, frame.m, fi),
                     predictor_scale(frame.c, frame.m, fi), uneven_rows=summary.weights_differ())
    separation = Separation(blocks, summary, classes, frame, evaluate, link) if est.lam == 0 else None
    watch = SeparationWatch(separation) if separation is not None else None     # as in memory
    res = minimise(solver, loss, theta0, max_iter=max_iter, tol=est.tol, callback=watch)
    W, b = frame.to_units(res.x[None, int(fi):], np.array([res.x[0] if fi else 0.0]))
    est._check_result(res, W)
    sep = separation is not None and separation.after(W, b, res, watch)
    _set_common(est, blocks, classes, solver, summary, W.copy(), np.array([float(b[0]) if fi else 0.0]),
                frame.origin(float(res.x[0]) if fi else 0.0))
    _set_separation(est, res, separation, sep)
    return est


# ------------------------------------------------------------------------------- separation
# With lam = 0 the in-memory fit runs the exact separation test (a linear programme over all rows,
# :mod:`linbook.logistic.separation`) when Newton's steps stop shrinking (``SeparationWatch``), the
# margins saturate or the solver did not converge. Here the same test runs on the same rows -- the
# centred rows of positive weight, gathered from the blocks -- as long as they hold at most this
# many numbers (80 MB on the client, the one exception to its O(D^2 x classes) share: the test
# needs every row at once). Beyond it a saturated margin is checked by a ray test, which
# quasi-separation with overlapping classes can escape: the warning then says so.
EXACT_TEST_NUMBERS = CLIENT_NUMBERS


def _largest(*parts):
    return max(parts)


def _margin_block(Xb, yb, swb, W, b, classes):
    """The largest margin of the block's rows of positive weight: ``t z`` (binary), or the
    true class's score minus the best other class's (multinomial)."""
    X = np.asarray(Xb, dtype=np.float64)
    yi = np.searchsorted(classes, np.asarray(yb))
    if swb is not None:
        keep = np.asarray(swb) > 0
        X, yi = X[keep], yi[keep]
    if X.shape[0] == 0:
        return -np.inf
    A = X @ W.T + b
    if W.shape[0] == 1:
        return float(np.max((2.0 * yi - 1.0) * A[:, 0]))
    rows = np.arange(X.shape[0])
    own = A[rows, yi]
    A[rows, yi] = -np.inf
    return float(np.max(own - A.max(axis=1)))


def _rows_block(Xb, yb, swb, frame, classes):
    """The block's rows of positive weight as the exact test reads them: ``(X_b - shift, class index)``."""
    X, yi = frame.centred(Xb), np.searchsorted(classes, np.asarray(yb))
    if swb is None:
        return X, yi
    keep = np.asarray(swb) > 0
    return X[keep], yi[keep]


def _stack(*parts):
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


class Separation:
    """``lam = 0``: are the classes (quasi-)separated, so that no finite MLE exists?

    Calling it runs the in-memory exact test on the gathered rows (the ``test`` of
    :class:`linbook.logistic.solvers.SeparationWatch`); :meth:`after` decides at the end of the
    fit as the in-memory ``separated_at`` does. ``exact`` is False when the rows are too many
    to gather (:data:`EXACT_TEST_NUMBERS`); then a saturated margin falls to the ray test.
    """

    def __init__(self, blocks, summary, classes, frame, evaluate, link):
        self.blocks, self.classes, self.frame, self.evaluate = blocks, classes, frame, evaluate
        self.saturated = _SATURATED[link]
        numbers = summary.n_positive * (blocks.n_features + 1) * max(classes.size - 1, 1)
        self.exact = numbers <= EXACT_TEST_NUMBERS
        self.probable = False            # the ray test (not the exact one) found the loss falling

    def __call__(self):
        if not self.exact:
            return False                 # the watch cannot tell; the end of the fit decides
        X, yi = map_reduce(_rows_block, self.blocks, self.frame, self.classes, combine=_stack)
        fi, c = self.frame.fit_intercept, self.frame.c
        if self.classes.size == 2:
            return separable(X, 2 * yi - 1, fi, col_scale=c)
        return separable_multinomial(X, yi, self.classes.size, fi, col_scale=c)

    def after(self, W, b, res, watch=None):
        """Separable (exact test), given the fit ``(W, b)`` in the units of ``X`` and its result."""
        if watch is not None and self.exact and (watch.separable or watch.tested):
            return watch.separable
        if res.converged and map_reduce(_margin_block, self.blocks, W, b, self.classes,
                                        combine=_largest) <= self.saturated:
            return False
        if self.exact:
            return self()
        # too many rows to gather: not converged, or F still falls along the ray to 2 theta
        self.probable = not res.converged or self.evaluate(2.0 * res.x, False)[0] <= res.fun
        return False

    def warn_probable(self, model):
        warnings.warn(f"{model}: with lam = 0 the loss keeps falling as the coefficients grow (or Newton did "
                      "not converge): the classes are probably (quasi-)separable, and then the maximum-likelihood "
                      f"estimate does not exist. The exact separation test was not run (the rows of positive "
                      f"weight exceed {EXACT_TEST_NUMBERS:.0e} numbers, and it needs them all at once), so "
                      "converged_ is False. Set lam > 0 for a unique finite fit.", SeparableDataWarning,
                      stacklevel=4)


def _set_separation(est, res, separation, sep):
    """``n_iter_``, ``separable_``, ``converged_`` and the warnings, as the in-memory fit sets them."""
    est._set_convergence(res, sep)
    if separation is not None and separation.probable:
        est.converged_ = False
        separation.warn_probable(type(est).__name__)


def _set_common(est, blocks, classes, solver, summary, W, b, origin=None):
    """Set what every fit sets, and the coefficients ``(W, b)``: with ``lam = 0`` and a design of lower rank
    the least-norm member of the maximum-likelihood family, as in memory (``BinaryGLM._least_norm``);
    ``origin``: the scores' ``(shift, b_shift)`` (:meth:`Frame.origin`), kept unless the fit was moved."""
    est.classes_ = classes
    est.solver_ = solver
    est.n_features_in_ = blocks.n_features
    if blocks.feature_names is not None:
        est.feature_names_in_ = blocks.feature_names
    elif "feature_names_in_" in vars(est):
        del est.feature_names_in_
    est._free_columns = blocks.n_features + int(est.fit_intercept)     # n_params_: each counts under a penalty
    if est.lam == 0:
        shift = None if origin is None else origin[0]
        est._free_columns, N, centre = _design_null_space(blocks, summary, est.fit_intercept, shift)
        W, b, origin = est._least_norm(W, b, lambda: (N, centre), origin)
    est.coef_, est.intercept_ = W, b
    est._origin = origin                # predictions as (x - shift)^T w + b_shift, as in memory


def _design_null_space(blocks, summary, fit_intercept, shift=None):
    """``(rank of [1, X], N, centre)`` over the rows of positive weight, as the in-memory
    ``design_null_space`` decides them: from the Gram matrix of the columns scaled to at most 1 and centred at
    their mean (``LinearRegression``'s block statistics, combined exactly); of ``X - shift`` if given (then
    ``centre`` is measured from ``shift``, as ``BinaryGLM._least_norm`` reads it)."""
    if summary.n_positive * (blocks.n_features + 1) <= EXACT_TEST_NUMBERS:
        # the rows fit on the client (as for the exact separation test): the in-memory decision itself, whose
        # row-by-row test sees what a Gram matrix cannot (a row 1e9 times the others made X'X look rank one, and
        # the least-norm move erased the other rows' coefficients)
        X = map_reduce(_positive_rows, blocks, shift, combine=_concatenate)
        return (design_rank(X, None, fit_intercept), *design_null_space(X, None, fit_intercept))
    lo, hi = (summary.xmin, summary.xmax) if shift is None else (summary.xmin - shift, summary.xmax - shift)
    scale = np.maximum(np.abs(hi), np.abs(lo))
    scale = np.where(np.isfinite(scale) & (scale > 0), scale, 1.0)
    if fit_intercept:
        _, centre, _, G, _, _ = map_reduce(_positive_rows_gram, blocks, scale, True, shift, combine=_combine_grams)
    else:
        _, G, _, _ = map_reduce(_positive_rows_gram, blocks, scale, False, None)
        centre = np.zeros(scale.size)
    rank, N = gram_null_space(G, summary.n_positive, scale)
    return rank + int(fit_intercept), N, centre * scale


def _positive_rows(Xb, yb, swb, shift):
    """The block's rows of positive weight, ``X - shift`` where ``shift`` is given."""
    X = np.asarray(Xb, dtype=np.float64)
    if swb is not None:
        X = X[np.asarray(swb) > 0]
    return X if shift is None else X - shift


def _concatenate(*parts):
    return np.concatenate(parts)


def _positive_rows_gram(Xb, yb, swb, scale, centred, shift):
    """The block statistics of ``LinearRegression`` on the block's rows of positive weight (of ``X - shift``
    if given), unweighted."""
    X = _positive_rows(Xb, yb, swb, None)
    if not centred:
        return _uncentred_block(X, np.zeros(X.shape[0]), None, scale, 1.0)
    return _gram_block(X, np.zeros(X.shape[0]), None, scale, 1.0, shift)


# ------------------------------------------------------------------------------- multinomial
def _multinomial_block(Xb, yb, swb, theta, classes, frame, C, need_hess):
    """One block's ``(F_b, g_b[, H_b])`` in the reduced parameters: the in-memory ``reduced_objective``, no penalty."""
    yidx = np.searchsorted(classes, np.asarray(yb))
    sw = None if swb is None else np.asarray(swb, dtype=np.float64)
    fgh, fg = reduced_objective(frame.centred(Xb), yidx, sw, C, 0.0, frame.c, frame.fit_intercept)
    return fgh(theta) if need_hess else fg(theta)


def _fit_multinomial(est, blocks, summary, classes, frame, solver, max_iter):
    C, fi, d = classes.size, est.fit_intercept, blocks.n_features
    off, p = int(fi), d + int(fi)
    # the penalty is the reduced objective of no data
    pen_fgh, pen_fg = reduced_objective(np.empty((0, d)), np.empty(0, dtype=int), np.empty(0), C,
                                                    frame.lam, frame.c, fi)

    def evaluate(theta, need_hess):
        data = map_reduce(_multinomial_block, blocks, theta, classes, frame, C, need_hess)
        pen = pen_fgh(theta) if need_hess else pen_fg(theta)
        return tuple(x + y for x, y in zip(data, pen))

    th0 = np.zeros((C - 1, p))
    if fi:
        counts = np.maximum(summary.label_weight, 1e-12 * summary.label_weight.sum())
        th0[:, 0] = np.log(counts[1:] / counts[0])         # start as in memory
    loss = BlockLoss(evaluate, gradient_scale(None, np.array([summary.sw]), frame.c, frame.m, fi, C - 1),
                     predictor_scale(frame.c, frame.m, fi, C - 1),
                     uneven_rows=summary.weights_differ())      # as in memory
    separation = Separation(blocks, summary, classes, frame, evaluate, "logit") if est.lam == 0 else None
    watch = SeparationWatch(separation) if separation is not None else None     # as in memory
    res = minimise(solver, loss, th0.ravel(), max_iter=max_iter, tol=est.tol, callback=watch)
    T = res.x.reshape(C - 1, p)
    V, b = np.zeros((C, d)), np.zeros(C)
    V[1:] = T[:, off:]
    if fi:
        b[1:] = T[:, 0]
    origin = frame.origin(b - b.mean())
    W, b = frame.to_units(V, b)
    est._check_result(res, W, b)
    sep = separation is not None and bool(np.all(np.isfinite(W))) and separation.after(W, b, res, watch)
    _set_common(est, blocks, classes, solver, summary, W - W.mean(0), b - b.mean(), origin)
    _set_separation(est, res, separation, sep)
    return est


# ------------------------------------------------------------------------------- probit
def _l2_penalty(theta, lam_r, need_hess):
    """``(lam/2) sum_j r_j theta_j^2``, its gradient and Hessian (``lam_r = lam * r``)."""
    F, g = 0.5 * float(lam_r @ (theta * theta)), lam_r * theta
    return (F, g, np.diag(lam_r)) if need_hess else (F, g)


def fit_probit(est, X, y, sample_weight=None):
    """``ProbitRegression.fit`` on dask collections."""
    blocks, summary, classes, frame, solver, max_iter = _prepare(est, X, y, sample_weight)
    if classes.size > 2:           # the in-memory fit's message, from the classes the first pass found
        encode_labels(classes, max_classes=2, model="ProbitRegression",
                      more_classes="linbook.LogisticRegression (multinomial)")
    r = _binary_penalty(frame)

    def evaluate(theta, need_hess):
        data = map_reduce(_binary_block, blocks, theta, classes, frame, need_hess, probit_terms)
        pen = _l2_penalty(theta, frame.lam * r, need_hess)
        return tuple(x + y for x, y in zip(data, pen))

    b0 = intercept_only_start(np.arange(2), summary.label_weight, link="probit")
    return _finish_binary(est, evaluate, b0, blocks, summary, classes, frame, solver, max_iter, "probit")
