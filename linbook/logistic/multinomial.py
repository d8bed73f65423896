"""Multinomial (softmax) logistic regression: objective, gradient, Hessian and fit.

With scores ``A = X W' + b`` (``C`` classes), ``P = softmax(A)`` and one-hot ``Y``::

    F = sum_i sw_i [logsumexp(A_i) - A_{i, y_i}] + (lam / 2) sum_c ||w_c||^2
    dF/dW = (sw * (P - Y))' X + lam W

Newton works in the reduced parameters (class ``classes_[0]`` as reference,
``v_c = w_c - w_0``, as statsmodels ``MNLogit``) where the Hessian
``H_ck = sum_i sw_i p_ic (delta_ck - p_ik) x~_i x~_i'`` is positive definite; the penalty of
the symmetric model minimised over the free shift is
``(lam/2)(sum_c ||v_c||^2 - ||sum_c v_c||^2 / C)``, so the fit is exactly scikit-learn's.
First-order methods with ``lam > 0`` run in the symmetric parameters (better conditioned), Newton-CG
among them; with ``lam = 0`` in the reduced ones. Where a few rows could pass the gradient test for all
(weights that differ, or rows far larger than the rest), Newton's step in the reduced parameters checks
their answer. Newton-CG uses products ``H u`` (:func:`hessian_product`:
with ``Z = X~ U'``, ``H u = X~' [sw * (P * Z - P * rowsum(P * Z))]``, two passes over ``X``, ``H`` never
formed), the same formula in either parametrisation (``P`` the softmax of its classes) plus its penalty.

Derived in: chapter "Logistic regression" § "Multinomial logistic regression".
"""

from __future__ import annotations

import numpy as np

from .._kernels.hessian import CHUNK_MIN_ROWS, multinomial_hessian
from .._kernels.threads import RowChunks, map_row_chunks
from ..numerics import logsumexp
from . import solvers
from ._scaled import ScaledColumns, scaled_design, uneven_rows
from .separation import separable_multinomial

__all__ = []


def reduced_objective(X, yidx, sw, C, lam, c, fit_intercept):
    """``(fgh, fg)`` in the reduced standardised parameters ``theta = [b_k, v_k]_{k=1..C-1}``."""
    return _reduced_objective(*scaled_design(X, c), c, yidx, sw, C, lam, fit_intercept)[:2]


def hessian_product(Xt, P, sw, U):
    """``H u`` of the reduced NLL (no penalty), never forming ``H``: the chapter's
    ``H_ck = sum_i sw_i p_ic (delta_ck - p_ik) x~_i x~_i'`` applied to the direction ``U``
    (``K = C - 1`` rows, one per free class), with ``X~ = Xt`` (N x p) and ``P`` the softmax of the
    free classes (N x K)::

        Z = X~ U',    H u = X~' [sw * (P * Z - P * rowsum(P * Z))]

    (row ``c`` of the result: ``sum_i sw_i x~_i p_ic (z_ic - sum_k p_ik z_ik)``). Two passes over ``X``.
    The fits' product (``_reduced_objective``) is this on the scaled design, intercept apart."""
    return (Xt.T @ _curvature_times(P, sw, Xt @ U.T)).T


def _curvature_times(P, sw, Z):
    """``sw * (P * Z - P * rowsum(P * Z))``: the softmax's per-row curvature applied to the scores ``Z``."""
    PZ = P * Z
    PZ -= P * PZ.sum(axis=1, keepdims=True)
    return sw[:, None] * PZ


def _reduced_objective(Xk, ck, c, yidx, sw, C, lam, fit_intercept):
    """:func:`reduced_objective` on the kernels' design ``(Xk, ck)`` (:class:`ScaledColumns`):
    ``(fgh, fg, with_hessian_product)``, the last for Newton-CG (``F, g, (hessp, diag_H)``)."""
    off, K = int(fit_intercept), C - 1
    p = Xk.shape[1] + off
    value_gradient = _reduced_value_gradient(Xk, ck, c, yidx, sw, C, lam, fit_intercept)

    def evaluate(theta, need_hess):
        f, G, _ = value_gradient(theta)
        if not need_hess:
            return f, G.ravel()
        T = theta.reshape(K, p)
        V, b = T[:, off:], (T[:, 0] if fit_intercept else np.zeros(K))
        H = multinomial_hessian(Xk, V, b, weights=sw, col_scale=ck, fit_intercept=fit_intercept)
        if lam > 0:
            pen = np.r_[np.zeros(off), _penalty_curvature(lam, c)]
            H += np.kron(np.eye(K) - np.ones((K, K)) / C, np.diag(pen))
        return f, G.ravel(), H

    products = _hessian_products(Xk, ck, c, sw, C, lam, fit_intercept, value_gradient, reference=True)
    return (lambda th: evaluate(th, True)), (lambda th: evaluate(th, False)), products


def _penalty_curvature(lam, c):
    """``lam / c^2``, the penalty's curvature per standardised coefficient (``c >= sqrt(4 lam / sum(sw))``,
    so at most ``sum(sw) / 4``: no overflow)."""
    return (lam / c) / c


def _reduced_value_gradient(Xk, ck, c, yidx, sw, C, lam, fit_intercept):
    """``theta -> (F, G, P)``: the objective, its gradient (K, p) and the softmax of the free classes (N, K)."""
    cs = np.ones(Xk.shape[1]) if ck is None else ck     # the design's own column scale
    n, d = Xk.shape
    off = int(fit_intercept)
    p, K, kappa = d + off, C - 1, 1.0 / C
    flat = np.arange(n) * C + yidx                      # positions of A[i, y_i] in the (n, C) scores
    sw_ones = np.ones(n) if sw is None else sw
    free = np.flatnonzero(yidx > 0)                     # rows whose class is not the reference
    rows = RowChunks(Xk)                                # sparse Xk: its products a chunk of rows per core

    def value_gradient(theta):
        T = theta.reshape(K, p)
        V, b = T[:, off:], (T[:, 0] if fit_intercept else np.zeros(K))
        A = np.zeros((n, C))
        A[:, 1:] = rows.dot((V / cs).T) + b
        nll, miss = _softmax_in_place(A, flat, axis=1)
        f = float(sw_ones @ nll)
        P = A[:, 1:]
        R = P.copy()
        R[free, yidx[free] - 1] = -miss[free]         # P - Y
        R *= sw_ones[:, None]
        G = np.empty((K, p))
        G[:, off:] = rows.tdot(R).T / cs
        if fit_intercept:
            G[:, 0] = R.sum(0)
        if lam > 0:            # lam = 0 adds nothing (and W = V / c may overflow for tiny features)
            W = V / c
            Ws = W.sum(0)
            f += 0.5 * lam * (float(np.sum(W * W)) - kappa * float(Ws @ Ws))
            G[:, off:] += (lam / c) * (W - kappa * Ws)
        return f, G, P

    return value_gradient


def _hessian_products(Xk, ck, c, sw, C, lam, fit_intercept, value_gradient, reference):
    """``theta -> (F, g, (hessp, diag_H))``: :func:`hessian_product` on the scaled design plus the
    penalty; the diagonal (Jacobi) for sparse ``X``, ``None`` for dense. ``reference``: the reduced
    parameters (``C - 1`` rows, penalty ``kron(I - 1/C, diag(lam / c^2))``), else the symmetric ones (``C``
    rows, penalty ``lam / c^2`` on each; ``H`` is singular along the intercepts' common shift, to which the
    gradient is orthogonal, so CG from 0 never moves along it). ``value_gradient(theta) -> (F, G, P)``, ``P``
    the softmax of the rows' classes."""
    cs = np.ones(Xk.shape[1]) if ck is None else ck
    off, K, kappa = int(fit_intercept), C - int(reference), (1.0 / C if reference else 0.0)
    p = Xk.shape[1] + off
    sw_ones = np.ones(Xk.shape[0]) if sw is None else sw
    pen = _penalty_curvature(lam, c) if lam > 0 else np.zeros(Xk.shape[1])
    rows = RowChunks(Xk)                                # sparse Xk: its products a chunk of rows per core
    squares = []                                        # sparse Xk's squared entries, made once a fit

    def with_hessian_product(theta):
        f, G, P = value_gradient(theta)

        def hessp(u):
            U = u.reshape(K, p)
            Z = rows.dot((U[:, off:] / cs).T)
            if fit_intercept:
                Z += U[:, 0]
            S = _curvature_times(P, sw_ones, Z)
            HU = np.empty((K, p))
            HU[:, off:] = rows.tdot(S).T / cs + pen * (U[:, off:] - kappa * U[:, off:].sum(0))
            if fit_intercept:
                HU[:, 0] = S.sum(0)
            return HU.ravel()

        diag = None
        if ck is None:
            if not squares:
                squares.append(RowChunks(Xk.multiply(Xk).tocsr()))
            s = sw_ones[:, None] * P * (1.0 - P)
            D = np.empty((K, p))
            D[:, off:] = squares[0].tdot(s).T + (1.0 - kappa) * pen
            if fit_intercept:
                D[:, 0] = s.sum(0)
            diag = D.ravel()
        return f, G.ravel(), (hessp, diag)

    return with_hessian_product


def symmetric_objective(Xk, ck, c, yidx, sw, C, lam, fit_intercept):
    """``fg`` in the symmetric standardised parameters (C rows of ``[b_c, v_c]``), ``lam > 0``, on
    the kernels' design ``(Xk, ck)`` (:class:`ScaledColumns`)."""
    cs = np.ones(Xk.shape[1]) if ck is None else ck
    n, d = Xk.shape
    off = int(fit_intercept)
    p = d + off
    sparse = ck is None
    rows = RowChunks(Xk) if sparse else None

    def fg(theta):
        T = theta.reshape(C, p)
        V = T[:, off:]
        if sparse:          # a chunk of rows per core for scipy's serial products (RowChunks)
            parts = rows.map(lambda B, i, j: _symmetric_rows(B, yidx[i:j], None if sw is None else sw[i:j],
                                                             T, V / cs, sparse, fit_intercept))
        else:
            # a contiguous chunk of rows per core, each with one BLAS thread (the GEMMs are C x D x rows:
            # on 2 busy cores, 20,000 x 100 with 20 classes took 0.2-0.55 s a call with BLAS's threads,
            # 0.04-0.06 s on one); the chunks' sums add up
            parts = map_row_chunks(lambda i, j: _symmetric_rows(Xk[i:j], yidx[i:j], None if sw is None else sw[i:j],
                                                                T, V / cs, sparse, fit_intercept),
                                   n, min_rows=CHUNK_MIN_ROWS)
        W = V / c
        f = sum(part[0] for part in parts) + 0.5 * lam * float(np.sum(W * W))
        G = np.empty((C, p))
        G[:, off:] = np.sum([part[1] for part in parts], axis=0) / cs + lam * W / c
        if fit_intercept:
            G[:, 0] = np.sum([part[2] for part in parts], axis=0)
        return f, G.ravel()

    return fg


def symmetric_hessian_products(Xk, ck, c, yidx, sw, C, lam, fit_intercept):
    """Newton-CG's ``theta -> (F, g, (hessp, diag_H))`` in the symmetric standardised parameters (``lam > 0``),
    where the penalty conditions ``H`` up to ``C`` times better than in the reduced ones (25k x 5000 sparse,
    50 classes: 78 products over 12 steps against 302 over 14)."""
    fg = symmetric_objective(Xk, ck, c, yidx, sw, C, lam, fit_intercept)
    cs = np.ones(Xk.shape[1]) if ck is None else ck
    off = int(fit_intercept)
    rows = RowChunks(Xk)

    def value_gradient(theta):
        f, g = fg(theta)
        T = theta.reshape(C, -1)
        A = rows.dot((T[:, off:] / cs).T)
        if fit_intercept:
            A += T[:, 0]
        P = np.exp(A - logsumexp(A, axis=1)[:, None])
        return f, g.reshape(C, -1), P

    return _hessian_products(Xk, ck, c, sw, C, lam, fit_intercept, value_gradient, reference=False)


def _symmetric_rows(Xb, yb, swb, T, U, sparse, fit_intercept):
    """The rows ``Xb``'s share of the symmetric objective: ``(sum of the (weighted) NLL, (P - Y)^T Xb,
    the column sums of P - Y)`` (``U = V / cs``, the class weights on the design's columns)."""
    nb = Xb.shape[0]
    flat = yb * nb + np.arange(nb)            # positions of A[y_i, i] in the (C, nb) scores
    # class-major scores (C, nb): reductions over classes are passes over contiguous rows
    A = np.ascontiguousarray((Xb @ U.T).T) if sparse else U @ Xb.T
    if fit_intercept:
        A += T[:, :1]
    nll, miss = _softmax_in_place(A, flat, axis=0)
    f = float(nll.sum() if swb is None else swb @ nll)
    R = A if swb is None else np.multiply(A, swb, out=A)
    np.put(R, flat, -miss if swb is None else -miss * swb)     # P - Y (times the weights)
    RX = (Xb.T @ R.T).T if sparse else R @ Xb
    return f, RX, R.sum(1)


def _softmax_in_place(A, flat, axis):
    """Turn the scores ``A`` (classes along ``axis``) into ``P = softmax(A)`` in place; return each row's
    NLL ``logsumexp(A_i) - A_{i, y_i}`` and ``1 - p_{i, y_i}`` (``flat``: the positions of ``A_{i, y_i}`` in
    ``A``, in row order).

    Both from ``t_i = sum_{k != y_i} exp(A_ik - m_i)`` (``m_i`` the row's maximum): NLL ``= (m_i - A_{i, y_i})
    + log1p(e_i - 1 + t_i)`` and ``1 - p_{i, y_i} = t_i / (e_i + t_i)``, ``e_i = exp(A_{i, y_i} - m_i)``. The
    textbook's ``logsumexp - A_y`` and ``1 - p_y`` cancel where the row's own class is near certain
    (``p ~ 1 - 1e-13``: only ~3 digits left); with weights near 1e7 beside 1e-3 that noise was above the
    light rows' share of ``F`` and ``g``, and the fits stalled 1e-3 off (session 19). The trick is
    ``linbook.numerics.logsumexp``'s (``log1p`` of the sum the 1 would round away); here the entry left out is
    the row's own class rather than its maximum, because ``1 - p_y`` needs that sum too."""
    m = A.max(axis=axis, keepdims=True)
    a_own = np.take(A, flat)
    A -= m
    np.exp(A, out=A)
    e_own = np.take(A, flat)
    np.put(A, flat, 0.0)
    others = A.sum(axis=axis)
    np.put(A, flat, e_own)
    total = e_own + others
    A /= np.expand_dims(total, axis)
    return (m.ravel() - a_own) + np.log1p((e_own - 1.0) + others), others / total


def fit_multinomial(X, yidx, sw, C, lam, fit_intercept, solver, max_iter, tol, declare=None):
    """Fit the softmax model: ``(W, b, result, separable)``, ``W`` (C, D) and ``b`` (C,) centred
    (``sum_c w_c = 0``, ``sum_c b_c = 0``) in the units of ``X``.

    Offset columns are centred and the coefficients live in standardised coordinates, as in
    :mod:`linbook.logistic._scaled`; Newton in the reduced parameters, first-order methods (Newton-CG
    among them) with ``lam > 0`` in the symmetric ones, their answer then checked by Newton's step in the
    reduced ones where the rows are uneven (:func:`uneven_rows`). With ``lam = 0`` the exact separation test
    runs where the margins saturate or the solver did not converge.
    """
    cols = ScaledColumns(X, sw, lam, fit_intercept)        # centred, standardised coordinates v = c w
    counts = np.bincount(yidx, weights=sw, minlength=C)
    counts = np.maximum(counts, 1e-12 * counts.sum())
    start = np.log(counts[1:] / counts[0]) if fit_intercept else None    # the intercept-only MLE
    design = (cols.Xk, cols.ck, cols.c, yidx, sw, C, lam, fit_intercept)
    fgh, fg, products = _reduced_objective(*design)
    # zscale: Newton's step test, as the binary loss's (weights over many decades, see solvers.minimise); Hessian
    # products for Newton-CG, and for that test beyond solvers._DENSE_CHECK_MAX parameters
    serial_products = solver == "newton-cg" and cols.ck is None       # _Loss says why
    reduced = _Loss(fgh, fg, cols.gradient_scale(C - 1), cols.predictor_scale(C - 1),
                    uneven_rows=uneven_rows(cols.X, sw, cols.m), hessian_product=products,
                    parallel_by_rows=serial_products)
    if declare is not None:          # the estimator's word on null directions of the design (optim.newton)
        declare(reduced)
    # lam = 0: Newton stops once its steps stop shrinking and the exact test says separable (as binary)
    watch = solvers.SeparationWatch(lambda: _separable(cols, yidx, C)) if lam == 0 else None
    if solver != "newton" and lam > 0:
        # the symmetric parameters, better conditioned (Newton-CG's products too), but without a Hessian
        sym_products = symmetric_hessian_products(*design) if solver == "newton-cg" else None
        loss = _Loss(None, symmetric_objective(*design), cols.gradient_scale(C), hessian_product=sym_products,
                     parallel_by_rows=serial_products)
        theta0 = _symmetric_start(start, C, X.shape[1])
        res = solvers.minimise(solver, loss, theta0.ravel(), max_iter=max_iter, tol=tol)
        if reduced.uneven_rows and res.converged:
            # a few heavy or far rows can meet the gradient test for all: Newton's step in the reduced parameters
            # decides (and Newton's method finishes where it is long)
            res = solvers.checked_by_newton(reduced, _as_reduced(res, C), tol, hessian_products=solver == "newton-cg")
    else:
        theta0 = np.zeros((C - 1, X.shape[1] + int(fit_intercept)))
        if fit_intercept:
            theta0[:, 0] = start
        res = solvers.minimise(solver, reduced, theta0.ravel(), max_iter=max_iter, tol=tol, callback=watch)
        if lam == 0 and solver != "newton" and res.converged and not (watch.separable or watch.tested):
            # the mean gradient's test passed where a class of one edge row was still being split off (margin
            # 23, below the saturation that calls the exact test): Newton's next step is long there, and Newton
            # finishes under the watch (L-BFGS and BFGS had converged_ True on separable classes)
            res = solvers.checked_by_newton(reduced, res, tol, watch, hessian_products=solver == "newton-cg")
    W, b = _unpack(res.x, C, cols.c, fit_intercept, reference=res.x.size < C * (X.shape[1] + int(fit_intercept)))
    sep = lam == 0 and np.all(np.isfinite(W)) and _separated(cols, yidx, W, b, res.converged, C, watch)
    origin = None if cols.shift is None else (cols.shift, b - b.mean())     # the scores' origin (predict_scores)
    if cols.shift is not None:
        b = b - W @ cols.shift                             # back to the units of X
    return W - W.mean(0), b - b.mean(), res, bool(sep), origin


def _as_reduced(res, C):
    """The symmetric parameters' result in the reduced ones (``theta_c - theta_0``, ``c = 1..C-1``): the same
    probabilities; at the symmetric optimum (``sum_c v_c = 0``) the same objective and a zero gradient."""
    T = res.x.reshape(C, -1)
    res.x, res.grad = (T[1:] - T[0]).ravel(), None
    return res


class _Loss:
    """``loss(theta) -> (F, g, H)``, ``loss.value_and_gradient``, ``loss.gscale`` (and, with a Hessian,
    ``loss.zscale``, ``loss.uneven_rows``; for Newton-CG ``loss.with_hessian_product``) for
    :func:`solvers.minimise`."""

    def __init__(self, fgh, fg, gscale, zscale=None, *, uneven_rows=False, hessian_product=None,
                 parallel_by_rows=False):
        self.fgh, self.value_and_gradient, self.gscale = fgh, fg, gscale
        self.zscale, self.uneven_rows = zscale, uneven_rows
        if hessian_product is not None:     # solvers.minimise asks hasattr(loss, "with_hessian_product")
            self.with_hessian_product = hessian_product
        # Newton-CG on sparse X: its sparse products run a chunk of rows per core (RowChunks), so BLAS's threads
        # would only slow CG's vector algebra (10,000 x 2000 sparse, 20 classes, load 2-4: a 38,000-long dot
        # product took 8 ms)
        self.parallel_by_rows = parallel_by_rows

    def __call__(self, theta):      # Newton calls the loss: the objective with its Hessian
        return self.fgh(theta)


def _symmetric_start(start, C, d):
    th = np.zeros((C, d + int(start is not None)))
    if start is not None:
        th[1:, 0] = start
        th[:, 0] -= th[:, 0].mean()
    return th.ravel()


def _unpack(theta, C, c, fit_intercept, reference):
    """``(W, b)`` in the units of the (centred) ``X`` from the standardised parameters."""
    off = int(fit_intercept)
    T = theta.reshape(C - int(reference), -1)
    W, b = np.zeros((C, T.shape[1] - off)), np.zeros(C)
    W[int(reference):] = T[:, off:] / c
    if fit_intercept:
        b[int(reference):] = T[:, 0]
    return W, b


def _separated(cols, yidx, W, b, converged, C, watch=None):
    """With ``lam = 0``: the exact test where the margins saturate or the solver did not converge
    (``watch``: a :class:`solvers.SeparationWatch` that may have run it already)."""
    if watch is not None and (watch.separable or watch.tested):
        return watch.separable
    A = cols.X @ W.T + b
    n = A.shape[0]
    A -= A[np.arange(n), yidx][:, None]
    A[np.arange(n), yidx] = -np.inf
    if np.any(-A.max(axis=1) > 25.0) or not converged:
        return _separable(cols, yidx, C)
    return False


def _separable(cols, yidx, C):
    """The exact test: are the classes (quasi-)separable, so that no finite MLE exists?"""
    return separable_multinomial(cols.X, yidx, C, cols.fit_intercept, col_scale=cols.c, weights=cols.sample_weight)


def reduced_hessian_at_fit(est, X, sw=None):
    """Hessian of the penalised NLL at the fit, reduced parameters, original units."""
    C = est.classes_.size
    ones = np.ones(X.shape[1])
    fgh, _ = reduced_objective(X, np.zeros(X.shape[0], dtype=int), sw, C, est.lam, ones,
                               est.fit_intercept)
    return fgh(reduced_theta(est))[2]


def reduced_gradient_at_fit(est, X, yidx):
    C = est.classes_.size
    _, fg = reduced_objective(X, yidx, None, C, est.lam, np.ones(X.shape[1]), est.fit_intercept)
    return fg(reduced_theta(est))[1]


def reduced_theta(est):
    T = est.coef_[1:] - est.coef_[0]
    if est.fit_intercept:
        T = np.column_stack([est.intercept_[1:] - est.intercept_[0], T])
    return T.ravel()
