"""The lasso (l1-penalised least squares) by cyclic coordinate descent.

Derived in: chapter "Linear regression" § "Ridge, lasso and least absolute deviations".
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import scipy.sparse as sps
from sklearn.exceptions import ConvergenceWarning

from numbers import Real

from ..base import NON_NEGATIVE, POSITIVE_INT, Interval, all_or_nothing, check_finite_fit
from .._kernels.numpy_budget import numpy_pass
from .._kernels.threads import single_threaded_blas
from ._base import LinearModel, moments, weights_beyond_rounding
from ._far_rows import rows_far_apart
from ._moments import MAX_GRAM_FEATURES, gram_pairs

__all__ = ["Lasso"]

_SERIAL_BLAS_MIN = 1 << 16     # entries of G (or of the centred X) from which the descent runs on one BLAS thread
_EXPECTED_SWEEPS = 20          # sweeps a sparse fit is budgeted when choosing residual updates over the Gram
_BLOCK_ROWS = 4096             # rows per block of the exact gap's centred gradient (no centred copy of X)
_ROUNDING = 8                  # rounding errors (in eps) allowed a computed x_j^T r or ||r||^2 / 2, per unit of its size


def descent_mode(X):
    """How the descent keeps its state: ``"gram"``, ``"residual"`` (centred dense copy) or
    ``"sparse_residual"`` (the CSC columns of sparse ``X`` themselves), whichever is cheaper.

    Dense ``X``: the Gram matrix when ``N > 2 D``. Sparse ``X``: residual updates cost ``nnz(X)`` a
    sweep, the Gram matrix ``sum_i nnz_i^2 / 2 + D^2`` once (building it, and a sweep's worst case);
    the residual updates are chosen when ``_EXPECTED_SWEEPS`` of their sweeps cost less, and always
    beyond ``MAX_GRAM_FEATURES`` columns (no ``D x D`` matrix is built there).
    """
    n, d = X.shape
    if not sps.issparse(X):
        return "gram" if n > 2 * d else "residual"
    if d > MAX_GRAM_FEATURES:
        return "sparse_residual"
    gram_cost = gram_pairs(X) + float(d) * d
    return "sparse_residual" if _EXPECTED_SWEEPS * (X.nnz + n) < gram_cost else "gram"


def soft_threshold(z, t):
    """``S(z, t) = sign(z) max(|z| - t, 0)``: the minimiser of ``1/2 (u - z)^2 + t |u|``."""
    return np.sign(z) * max(abs(z) - t, 0.0)


def objective(lam_j, rr, w):
    """The primal objective ``P = 1/2 ||r||^2 + sum_j lam_j |w_j|`` (``lam_j = inf`` only where ``w_j = 0``)."""
    nz = w != 0
    return 0.5 * rr + float(lam_j[nz] @ np.abs(w[nz]))


def duality_gap(lam_j, rr, grad, w, free=None, slack=None):
    """Gap between ``P = 1/2 ||r||^2 + sum_j lam_j |w_j|`` and the dual at ``theta = alpha r``.

    ``grad = Xc^T r``; ``alpha = min(1, min_j lam_j / |grad_j|)`` makes ``theta`` dual feasible
    (``|x_j^T theta| <= lam_j``), and the dual value is ``alpha yc^T r - alpha^2 ||r||^2 / 2``. With
    ``yc^T r = ||r||^2 + w^T grad`` the gap is ``(1 - alpha)^2 ||r||^2 / 2 + sum_j (lam_j |w_j| - alpha w_j grad_j)``:
    no term of the size of ``||yc||^2`` cancels (``yc`` may hold an offset ``X w`` absorbs), and each
    coordinate's term vanishes at its optimality condition.
    Coordinates in ``free`` (penalty below the rounding of ``x_j^T r``) are left out of
    ``alpha``: their optimality is ``x_j^T r = 0``, checked separately. ``lam_j = inf`` (a
    penalty that swamps the data) only allows ``w_j = 0``. ``slack_j``: a miss of the optimality condition
    (``grad_j = lam_j sign(w_j)`` at ``w_j != 0``, ``|grad_j| <= lam_j`` at 0) up to it is rounding (one ulp of
    a large ``w_j`` moves ``x_j^T r`` by ``||x_j||^2 eps |w_j|``, which may exceed ``lam_j``): ``grad_j`` counts as
    met there, so it neither shrinks ``alpha`` nor hides a positive term of another coordinate.
    """
    nz = w != 0
    g = np.abs(grad)
    if slack is not None:       # (at w_j != 0 optimality is grad_j = lam_j sign(w_j): a miss either way)
        sign = np.where(nz, np.sign(w), np.sign(grad))
        near = np.abs(grad * sign - lam_j) <= slack
        grad = np.where(near & (nz | (g > lam_j)), sign * lam_j, grad)
        g = np.abs(grad)
    active = g > lam_j
    if free is not None:
        active &= ~free
    alpha = 1.0 if not np.any(active) else float(np.min(lam_j[active] / g[active]))
    return 0.5 * (1.0 - alpha) ** 2 * rr + float(lam_j[nz] @ np.abs(w[nz]) - alpha * (w[nz] @ grad[nz]))


def objective_rounding(l1, root_rr, scale):
    """How far rounding leaves ``P`` itself undetermined: the floor of the stopping rule.

    ``w`` is known to ``eps |w_j|`` (its representation), which moves ``sum_j lam_j |w_j|`` by ``eps`` of it, and
    the residual's entries are differences ``yc_i - (X w)_i`` with errors ``eps (|yc_i| + sum_j |x_ij w_j|)``,
    which move ``||r||^2 / 2`` by ``eps ||r|| (||yc|| + sum_j ||x_j|| |w_j|)`` (``scale``). Below this, one
    ``w`` cannot be told better than another in double precision.
    """
    return _ROUNDING * np.finfo(float).eps * (l1 + root_rr * scale)


def gap_rounding(root_yy, root_rr, scale, spread):
    """The rounding of the gap computed from the descent's residual: its ``sum_j w_j x_j^T r`` and ``yc^T r``
    are products of ``X w`` or ``yc`` (at most ``||yc|| + ||r||``) with the residual, whose entries carry
    errors of ``eps (|yc_i| + sum_j |x_ij w_j|)`` (``scale``); the slack of :func:`duality_gap` may hide up to
    ``eps sum_j ||x_j||^2 w_j^2 <= eps spread^2`` (``spread = sum_j ||x_j|| |w_j|``). With ``yc`` holding an
    offset that ``X w`` absorbs (no intercept, ``y ~ 1e12 + signal``) this exceeds ``P`` itself."""
    return _ROUNDING * np.finfo(float).eps * ((root_yy + 2.0 * root_rr) * scale + spread * spread)


def _two_sum(a, b):
    """``(s, e)`` with ``s = fl(a + b)`` and ``a + b = s + e`` exactly (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _two_product(a, b):
    """``(p, e)`` with ``p = fl(a b)`` and ``a b = p + e`` exactly (Dekker's splitting into 26-bit halves)."""
    def split(x):
        c = 134217729.0 * x         # 2^27 + 1
        hi = c - (c - x)
        return hi, x - hi
    p = a * b
    (ah, al), (bh, bl) = split(a), split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _exact_residual(mom, v):
    """``r = yc - Xc v`` rounded once (error ``eps |r_i|``), by error-free products and sums per row.

    Why: the descent's residual is a difference of ``yc`` and ``X v`` with errors ``eps (|yc_i| + |X||v|_i)``;
    where ``X v`` absorbs an offset in ``y`` those errors swamp ``r``, and the gap computed from it is noise.
    ``O(nnz)`` vectorised work and ``O(N)`` memory: dense ``X`` column by column, sparse ``X`` by the ``k``-th
    stored entry of every row.
    """
    hi, lo = mom.yc.copy(), np.zeros(mom.n)
    shift, shift_lo = 0.0, 0.0          # (centre . v) in double-double: Xc v = X v - (centre . v)
    for part in (mom.x_mean_s, mom.x_mean_delta):     # the centre is held in two parts (weighted means)
        for j in np.flatnonzero(part * v):
            p, e = _two_product(part[j], v[j])
            shift, t = _two_sum(shift, p)
            shift_lo += t + e
    for rows, cols, x in _entries(mom.X):
        keep = v[cols] != 0
        rows, cols, x = rows[keep], cols[keep], x[keep]
        p, e = _two_product(x / mom.x_scale[cols], -v[cols])      # (x_scale: a power of 2, exact)
        hi[rows], t = _two_sum(hi[rows], p)
        lo[rows] += t + e
    hi, t = _two_sum(hi, shift)
    return hi + (lo + t + shift_lo)


def _entries(X):
    """``(rows, cols, values)`` of ``X`` in groups that hold each row at most once: a dense column, or the
    ``k``-th stored entry of every sparse row (so the per-row sums above can be vectorised)."""
    if not sps.issparse(X):
        rows = np.arange(X.shape[0])
        for j in range(X.shape[1]):
            yield rows, np.full(X.shape[0], j), X[:, j]
        return
    counts = np.diff(X.indptr)
    for k in range(int(counts.max(initial=0))):
        rows = np.flatnonzero(counts > k)
        at = X.indptr[rows] + k
        yield rows, X.indices[at], X.data[at]


def exact_gradient(mom, v):
    """``(||r||_S^2, Xc^T S r, r)`` at ``v`` from :func:`_exact_residual`: the gap then carries only the rounding
    of its own products, ``eps ||r|| sum_j ||x_j|| |v_j|`` and ``eps sum_j lam_j |v_j|`` (below
    :func:`objective_rounding`)."""
    r = _exact_residual(mom, v)
    sr = r if mom.sw is None else mom.sw * r
    if not (np.any(mom.x_mean_s) or np.any(mom.x_mean_delta)):
        return float(r @ sr), (mom.X.T @ sr) / mom.x_scale, r
    # centred entry by entry (a column of 1e8 + noise: X^T S r - m sum(S r) would cancel 8 digits)
    grad = np.zeros(mom.d)
    for i in range(0, mom.n, _BLOCK_ROWS):
        B = mom.X[i:i + _BLOCK_ROWS]
        B = ((B.toarray() if sps.issparse(B) else B) / mom.x_scale - mom.x_mean_s) - mom.x_mean_delta
        grad += B.T @ sr[i:i + _BLOCK_ROWS]
    return float(r @ sr), grad, r


def _polish(GA, gA, wA, lamA, signsA):
    """The step ``d`` to the exact lasso minimiser on a support ``A`` with signs ``s_A``, and the change of the
    objective it makes, or ``None``.

    On a fixed support with fixed signs the objective is quadratic, minimised where ``G_AA w_A = c_A - lam_A s_A``;
    from the current ``w_A`` and gradient ``g_A = c_A - G_AA w_A`` that is the Newton step
    ``G_AA d = g_A - lam_A s_A``. Taken from the gradient, not from ``c_A``, the step and the change
    ``-d.g_A + d.G_AA d / 2 + lam_A (|w_A + d| - |w_A|)`` carry the gradient's rounding only, not that of
    ``c_A`` (where ``y`` holds an offset ``X w`` absorbs, ``c_A``'s rounding exceeds the whole objective).
    The result counts only if it keeps every sign.
    """
    try:
        d = np.linalg.solve(GA, gA - lamA * signsA)
    except np.linalg.LinAlgError:
        return None
    new = wA + d
    if not (np.all(np.isfinite(new)) and np.array_equal(np.sign(new), signsA)):
        return None
    return d, float(-(d @ gA) + 0.5 * (d @ (GA @ d)) + lamA @ (np.abs(new) - np.abs(wA)))


class Lasso(LinearModel):
    """The lasso: minimises ``1/2 sum_i s_i (y_i - x_i . w - b)^2 + lam ||w||_1`` (intercept unpenalised).

    ``s_i`` are the sample weights (1 by default: ``1/2 ||y - X w - b||^2 + lam ||w||_1``).
    Equals scikit-learn's ``Lasso(alpha=lam / N)`` (with weights: ``alpha = lam / sum(s)``,
    because scikit-learn rescales the weights to sum to ``N``), whose objective
    ``1/(2N) ||y - Xw||^2 + alpha ||w||_1`` is ours divided by ``N``.

    **How it is solved.** Cyclic coordinate descent: with ``r`` the current residual and
    ``a_j = ||x_j||^2``, coordinate ``j`` becomes ``S(x_j^T r + a_j w_j, lam) / a_j`` where
    ``S(z, t) = sign(z) max(|z| - t, 0)`` is soft thresholding. The state kept up to date depends
    on ``X`` (``solver_`` says which ran):

    - ``"gram"``: the centred Gram matrix (``O(D)`` per coordinate, computed in one pass without
      copying ``X``), for dense ``X`` with ``N > 2 D`` and for sparse ``X`` where it is cheaper;
    - ``"residual"``: residual updates on a centred copy of dense ``X`` (``O(N)`` per coordinate);
    - ``"sparse_residual"``: residual updates on the sparse columns themselves (``O(nnz_j)`` per
      coordinate; never densified, no ``D x D`` matrix). The centring is implicit: the residual is
      kept up to a constant, and since ``xc_j^T S 1 = 0``, ``xc_j^T S r = x_j^T S r - mu_j sum(S r)``
      (``mu`` the weighted column means). Sparse ``X`` takes it when 20 sweeps of it
      (``20 (nnz(X) + N)``) cost less than the Gram matrix (``sum_i nnz_i^2 / 2 + D^2``), and always
      beyond 4096 columns. A column whose mean dominates its spread (centred norm below 1 % of its
      norm) would lose digits to that cancellation: the fit then takes the Gram matrix, centred
      exactly, or beyond 4096 columns raises a ``ValueError`` naming the column.

    The sweeps run as the readable loop (``_CoordinateDescent.sweep``) while the process's numpy budget lasts
    (a chapter's small fits load no numba), then as a compiled loop making the same updates
    (``linbook._kernels.lasso``). After a
    sweep that leaves the signs of ``w`` unchanged, the exact minimiser on that support
    (``G_AA w_A = c_A - lam s_A``; sparse residual updates form ``G_AA`` from the support's columns) is
    taken when it keeps the signs and lowers the objective,
    so correlated features do not make the descent crawl (tried only on supports within the rank of
    ``Xc``, where ``G_AA`` can be non-singular, and not more often than its cost in sweeps). The
    problem is solved on internally rescaled data (``y`` and every column divided by a power of
    two near its largest entry, ``lam`` mapped accordingly), so features from 1e-300 to 1e300 give
    the same coefficients as the scaled problem and no sweep overflows.

    **Stopping rule (scale-invariant).** Stop when the duality gap is at most ``max(tol P, floor)``, ``P`` the
    objective at the current ``w`` (a certificate: ``P`` is then within that of its minimum; both sides scale
    with ``y^2``, so the rule does not depend on the units, and it is relative to what the fit attains, not to
    ``||yc||^2``: without an intercept, ``y ~ 1e12 + signal`` makes ``||yc||^2`` far above ``P``). The floor is
    what rounding leaves ``P`` undetermined: ``w_j`` is known to ``eps |w_j|`` and the residual's entries
    ``yc_i - (X w)_i`` to ``eps (|yc_i| + sum_j |x_ij w_j|)``, so
    ``floor = 8 eps (sum_j lam_j |w_j| + ||r|| (||yc|| + sum_j ||x_j|| |w_j|))``; where it exceeds ``tol P``,
    ``converged_`` means "at the optimum to rounding". The gap is computed as
    ``(1 - alpha)^2 ||r||^2 / 2 + sum_j (lam_j |w_j| - alpha w_j x_j^T r)`` (no term of the size of ``||yc||^2``);
    a miss of ``x_j^T r = lam_j sign(w_j)`` below ``8 eps ||x_j|| (sum_k ||x_k|| |w_k| + ||r||)`` (what one ulp
    of the ``w_k`` moves it by) counts as met. Where the gap from the descent's residual is itself noise
    (its rounding ``8 eps ((||yc|| + 2 ||r||) (||yc|| + sum_j ||x_j|| |w_j|) + (sum_j ||x_j|| |w_j|)^2)``
    exceeds the bound), the residual is recomputed rounded once (error-free products and sums), the gap
    from it, and the descent continues from that residual. For ``lam = 0`` (no dual certificate) stop when every
    ``|x_j^T r| <= max(tol ||x_j|| ||r||, 8 eps ||x_j|| (||yc|| + sum_k ||x_k|| |w_k|))`` (the normal
    equations, relative to the residual, or to their rounding); the same test replaces the dual bound for
    single coordinates whose penalty is below the rounding of ``x_j^T r`` (a feature near 1e300 next to
    ordinary ones). ``converged_`` is true only when the rule was met; otherwise a ``ConvergenceWarning`` is given.

    Invariance: the fit on ``(X s, y)`` with ``lam`` is the fit on ``(X, y)`` with ``lam / s``
    divided by ``s``; on ``(X, c y)`` with ``c lam`` it is ``c`` times the fit on ``(X, y)``.

    Parameters
    ----------
    lam : float, default=1.0
        Penalty strength ``lam >= 0``; every coefficient is zero once
        ``lam >= max_j |x_j^T S yc|``.
    fit_intercept : bool, default=True
    max_iter : int, default=1000
        Maximum number of full sweeps over the coordinates.
    tol : float, default=1e-10
        Duality-gap tolerance relative to the objective ``P`` (see above; before session 29: relative to ``||yc||^2``).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    n_iter_ : int
        Sweeps performed.
    solver_ : str
        The descent's state: ``"gram"``, ``"residual"`` or ``"sparse_residual"`` (see above).
    dual_gap_ : float
        Duality gap at the returned solution relative to the objective ``P`` there (scale-free; the
        stopping rule compares it with ``tol``, or with the floor over ``P``); at least 0. ``inf`` where coefficients without an
        effective penalty (``lam = 0``, or ``lam`` below the rounding of ``x_j'r``) do not yet solve
        their normal equations: the dual point is then infeasible and certifies no gap.
    converged_ : bool
    sigma2_ : float
        ``sum_i s_i r_i^2 / N`` on the training data (floored at ``(eps max|y|)^2``, see ``log_likelihood``).
    n_params_ : int
        Number of non-zero coefficients (the lasso's degrees of freedom) + intercept.
    n_features_in_ : int
    feature_names_in_ : ndarray of str, only when ``X`` had string column names.

    Derived in: chapter "Linear regression" § "Ridge, lasso and least absolute deviations".
    """

    def __init__(self, lam=1.0, fit_intercept=True, max_iter=1000, tol=1e-10):
        self.lam = lam
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol

    _parameter_constraints = {**LinearModel._parameter_constraints, "lam": [NON_NEGATIVE],
                              "max_iter": [POSITIVE_INT], "tol": [Interval(Real, 0.0, 1.0, closed="neither")]}

    @all_or_nothing
    def fit(self, X, y, sample_weight=None):
        """Fit by cyclic coordinate descent; returns ``self``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights ``s_i`` (a weight 2 counts a row twice).

        Returns
        -------
        self
        """
        X, y, sw = self._validate(X, y, sample_weight)
        lam = float(self.lam)
        mode = descent_mode(X)
        dense_gram = isinstance(X, np.ndarray) and X.shape[0] >= X.shape[1]   # (also the polish's G_AA)
        mom = moments(self, X, y, sw, gram=mode == "gram" or dense_gram, common_scale=False)
        columns = _SparseColumns(mom) if mode == "sparse_residual" else None
        if columns is not None and not columns.centring_is_accurate():
            # a column whose mean dominates its spread: the Gram matrix's exact blockwise centring
            if mom.d > MAX_GRAM_FEATURES:
                raise ValueError(
                    f"Lasso on sparse X with {mom.d} > {MAX_GRAM_FEATURES} columns: column "
                    f"{columns.worst_centred_column()} holds values far from 0 with a small spread (its "
                    "centred norm is below 1 % of its norm), which residual updates on sparse columns "
                    "cannot centre accurately. Subtract that column's mean (or drop the column) first.")
            mode, columns = "gram", None
            mom = moments(self, X, y, sw, gram=True, common_scale=False)
        # the penalty of the scaled problem: w_j = y_scale v_j / x_scale_j
        with np.errstate(over="ignore"):
            lam_j = lam / (mom.y_scale * mom.x_scale)
        # the descent's BLAS calls are all small (products with a D-vector, k x k solves): a multi-threaded
        # BLAS synchronises its threads in each, and on busy cores waits for a descheduled one (a 163 x 163
        # solve of a polish: 64 ms on 2 shared cores, under 1 ms on one thread); small fits keep the
        # caller's BLAS (and skip threadpoolctl's import)
        serial = mom.d * (mom.d if mode == "gram" else mom.n) >= _SERIAL_BLAS_MIN
        with single_threaded_blas() if serial else contextlib.nullcontext():
            v, it, gap, primal, ok = self._descend(mom, lam_j, lam == 0, mode, columns)
        check_finite_fit(self, v, what="coordinate descent", cure="scale the features (StandardScaler)")
        # weights over 1 / eps: the certificate's rounding allowances are the heavy rows' (all coordinates looked
        # unpenalised; a fit that ignored all but 3 rows of weight 1e16 passed, its objective 45 times the least)
        heavy = lam > 0 and weights_beyond_rounding(sw)
        # a fit within 1e-4 of exact beside rows decades apart (one far row on the line): the centred moments hold
        # the other rows only to its rounding, and the intercept came out 0.625 for 0.509, "converged"
        far = mom.centring_may_have_lost_rows(v) and rows_far_apart(mom)
        self._set_convergence(it, ok, gap, primal, mode, heavy, far)
        return self._finish(mom, v, "Lasso")

    def _set_convergence(self, it, ok, gap, primal, mode, heavy, far):
        """``n_iter_``, ``converged_``, ``solver_`` and ``dual_gap_``, and the ``ConvergenceWarning`` that says why
        an optimum is not certified (``heavy``: weights beyond rounding; ``far``: rows decades apart, nearly exact)."""
        self.n_iter_, self.converged_, self.solver_ = it, ok and not heavy and not far, mode
        # gap / P (the stopping rule's scale); 0 and inf (no certificate) stay as they are
        self.dual_gap_ = float(gap / primal) if 0 < gap < np.inf and not heavy else np.inf if heavy else float(gap)
        if not self.converged_:
            reason = (f"relative duality gap {self.dual_gap_:.1e} > tol = {self.tol:g}" if np.isfinite(gap) else
                      "the coefficients without an effective penalty (lam_j below the rounding of x_j'r) do not "
                      f"yet solve their normal equations x_j'r = 0 to tol = {self.tol:g}: no duality gap is certified")
            if far:
                reason = ("rows of X and y span more than 1e8 in size and the fit is nearly exact, so the centred "
                          "moments hold the smaller rows only to the far rows' rounding; scale or drop the far rows")
            if heavy:
                reason = ("the positive sample weights span more than 1e16, so the light rows' share of x_j'r is "
                          "below the heavy rows' rounding and no optimum can be certified; merge or rescale the "
                          "extreme weights (or drop the negligible rows)")
            cure = "" if heavy or far else " Increase max_iter, or scale the features."
            warnings.warn(f"Lasso did not converge in {it} sweeps ({reason}).{cure}", ConvergenceWarning,
                          stacklevel=3)

    def _descend(self, mom, lam_j, unpenalised, mode, columns=None):
        """Coordinate descent on the scaled problem; returns ``(v, sweeps, gap, objective, converged)``."""
        cd = _CoordinateDescent(mom, lam_j, mode, columns)
        gap, primal, it, ok, support, polished = np.inf, np.nan, 0, False, None, 0
        for it in range(1, self.max_iter + 1):
            # the readable sweep while the process's numpy budget lasts (a chapter's small fits load
            # no numba), then the compiled one: the same updates
            if numpy_pass(cd.w.size):
                cd.sweep()
            else:
                cd.compiled_sweep()
            # once a sweep leaves the signs unchanged, jump to the exact minimiser on that
            # support (coordinate descent alone crawls when features are correlated), but not more
            # often than a polish costs in sweeps (large supports: its k x k solve outweighs a sweep)
            signs = np.sign(cd.w)
            if np.any(signs != 0) and (support is None or not np.array_equal(signs, support) or it % 2 == 0) \
                    and it - polished >= cd.polish_period(np.count_nonzero(signs)):
                cd.polish(signs)
                polished = it
            support = signs
            certificate = cd.certificate(self.tol, unpenalised, it, final=it == self.max_iter)
            if certificate is None:              # the residual overflowed
                break
            gap, primal, ok = certificate
            if ok:
                break
        return cd.w, it, gap, primal, ok

    @property
    def n_params_(self):
        return int(np.count_nonzero(self.coef_)) + int(self.fit_intercept)


class _SparseColumns:
    """The scaled CSC columns of sparse ``X`` for residual updates, centred implicitly (never densified).

    With ``mu`` the weighted column means (``x_mean_s + x_mean_delta``) the centred column is
    ``xc_j = x_j - mu_j``; since ``xc_j^T S 1 = 0``, a residual known only up to a constant ``r``
    gives ``xc_j^T S r = x_j^T S r - mu_j sum(S r)``: a product over the stored entries of column
    ``j`` and one scalar. Holds ``x`` (the stored values, divided by ``x_scale``), ``sx = s x``,
    ``colsum_j = x_j^T S 1`` and ``a_j = ||xc_j||_S^2`` (from the stored entries and the rows where
    the column is 0: a sum of squares, no cancellation).
    """

    def __init__(self, mom):
        C = mom.X.tocsc()           # canonical already (Moments); its arrays are only read, the values divided below
        col = np.repeat(np.arange(mom.d), np.diff(C.indptr))
        self.n, self.d = mom.n, mom.d
        self.indptr, self.indices, self.x = C.indptr, C.indices, C.data / mom.x_scale[col]
        self.X = sps.csc_matrix((self.x, self.indices, self.indptr), shape=(mom.n, mom.d))
        self.s = np.empty(0) if mom.sw is None else mom.sw           # empty: all weights 1 (the kernel's form)
        self.sum_w = mom.sum_w
        self.sx = self.x if mom.sw is None else self.x * mom.sw[self.indices]
        self.mu = mom.x_mean_s + mom.x_mean_delta
        self.colsum = np.bincount(col, weights=self.sx, minlength=mom.d)
        w_stored = np.bincount(col, weights=None if mom.sw is None else mom.sw[self.indices], minlength=mom.d)
        self.a = (np.bincount(col, weights=self.weighted(self.indices, (self.x - self.mu[col]) ** 2), minlength=mom.d)
                  + self.mu ** 2 * np.maximum(self.sum_w - w_stored, 0.0))
        self.raw = np.bincount(col, weights=self.sx * self.x, minlength=mom.d)       # ||x_j||_S^2, uncentred
        self.yc = mom.yc

    def centring_is_accurate(self):
        """Whether the implicit centring keeps the digits: a step moves ``r`` by ``x_j`` and the constant
        by ``mu_j``, so a column whose mean dominates its spread loses ``log10 sqrt(raw_j / a_j)`` digits
        to cancellation; at most two are allowed (as the Gram matrix's rank-one centring allows)."""
        return bool(np.all(self.a >= 1e-4 * self.raw))

    def worst_centred_column(self):
        return int(np.argmin(np.where(self.raw > 0, self.a / np.where(self.raw > 0, self.raw, 1.0), 1.0)))

    def weighted(self, rows, u):
        """``S u`` on the given rows."""
        return u if self.s.size == 0 else self.s[rows] * u

    def weighted_sum(self, u):
        """``sum(S u)``."""
        return float(u.sum() if self.s.size == 0 else self.s @ u)

    def gradient(self, r):
        """``Xc^T S r`` (one pass over the stored entries)."""
        Sr = r if self.s.size == 0 else self.s * r
        return self.X.T @ Sr - self.mu * float(Sr.sum())

    def residual(self, v):
        """``yc - Xc v`` (one pass over the stored entries of the columns where ``v != 0``)."""
        A = np.flatnonzero(v)
        return self.yc - (self.X[:, A] @ v[A] - float(self.mu[A] @ v[A]))

    def support_gram(self, A):
        """``(Xc_A^T S Xc_A, Xc_A^T S yc)`` from the support's columns (``k x k``): the uncentred products
        centred by subtraction, which loses at most the digits :meth:`centring_is_accurate` allows (the
        Gram mode's rank-one centring allows as many)."""
        XA, mu, cs = self.X[:, A], self.mu[A], self.colsum[A]
        raw = (XA.T @ (XA if self.s.size == 0 else sps.diags(self.s) @ XA)).toarray()
        G = raw - np.outer(cs, mu) - np.outer(mu, cs) + self.sum_w * np.outer(mu, mu)
        c = XA.T @ self.weighted(slice(None), self.yc) - mu * self.weighted_sum(self.yc)
        return G, c


class _CoordinateDescent:
    """Cyclic coordinate descent on the scaled lasso problem of ``mom``.

    Holds ``w`` and, kept up to date (``mode``), either the gradient ``Xc^T r`` (``"gram"``: from the
    centred Gram matrix ``G`` and ``c = Xc^T yc``, ``O(D)`` per coordinate), or the residual ``r``
    (``"residual"``: on a centred dense copy ``Z`` of ``X``, ``O(N)`` per coordinate;
    ``"sparse_residual"``: on the CSC columns of sparse ``X``, ``O(nnz_j)`` per coordinate, with
    ``r`` up to a constant and ``sr = sum(S r)``, see :class:`_SparseColumns`).
    """

    def __init__(self, mom, lam_j, mode, columns=None):
        self.mom, self.lam_j, self.mode, self.yy = mom, lam_j, mode, mom.yy
        if mode == "gram":
            self.G, self.c = mom.G, mom.c
            self.grad = self.c.copy()                   # Xc^T r, kept up to date
            self.a = np.diag(mom.G).copy()
        elif mode == "residual":
            Z, self.z = mom.design()
            self.Z = np.asfortranarray(Z)
            self.r = self.z.copy()
            self.a = np.diag(mom.G).copy() if mom.gram_built else np.einsum("ij,ij->j", self.Z, self.Z)
        else:
            self.cols = _SparseColumns(mom) if columns is None else columns
            self.r = self.cols.yc.copy()
            self.sr = self.cols.weighted_sum(self.r)
            self.a = self.cols.a
        self.w = np.zeros(mom.d)                        # a_j = ||x_j||^2 (centred, weighted)
        tiny = np.finfo(float).tiny
        self.norms = np.sqrt(np.where(self.a > 0, self.a, 1.0))
        self.root_yy = np.sqrt(max(self.yy, tiny))     # ||yc||
        # penalties below the rounding of x_j^T r (features near 1e300) act as no penalty
        self.free = (lam_j <= np.finfo(float).eps * self.norms * self.root_yy) & (self.a > 0)
        self.last_refinement, self.next_refinement = 0, 0      # sweeps of the exact-residual gap (certificate)

    def sweep(self):
        """One pass over the coordinates: ``w_j <- S(x_j^T r + a_j w_j, lam_j) / a_j``."""
        w, a, lam_j = self.w, self.a, self.lam_j
        offset = 0.0            # sparse_residual: what column steps added to every entry of r (not yet applied)
        for j in range(w.size):
            if a[j] <= 0.0:
                continue
            wj = w[j]
            if self.mode == "gram":
                rho = self.grad[j] + a[j] * wj
            elif self.mode == "residual":
                rho = self.Z[:, j] @ self.r + a[j] * wj
            else:
                cols, lo, hi = self.cols, self.cols.indptr[j], self.cols.indptr[j + 1]
                rows = cols.indices[lo:hi]
                rho = (cols.sx[lo:hi] @ self.r[rows] - cols.mu[j] * self.sr) + a[j] * wj
            new = soft_threshold(rho, lam_j[j]) / a[j]
            if new != wj:
                w[j] = new
                if self.mode == "gram":
                    self.grad -= (new - wj) * self.G[:, j]
                elif self.mode == "residual":
                    self.r -= (new - wj) * self.Z[:, j]
                else:           # r -= step (x_j - mu_j): on the stored rows now, the constant at the end
                    self.r[rows] -= (new - wj) * cols.x[lo:hi]
                    self.sr -= (new - wj) * cols.colsum[j]
                    offset += (new - wj) * cols.mu[j]
        if self.mode == "sparse_residual":
            self.r += offset
            self.sr = self.cols.weighted_sum(self.r)

    def compiled_sweep(self):
        """:meth:`sweep` by a compiled loop (``linbook._kernels.lasso``, tested equal to it)."""
        from .._kernels.lasso import gram_sweep, residual_sweep, sparse_residual_sweep

        if self.mode == "gram":
            gram_sweep(self.G, self.a, self.lam_j, self.w, self.grad)
        elif self.mode == "residual":
            residual_sweep(self.Z, self.a, self.lam_j, self.w, self.r)
        else:
            c = self.cols
            self.sr = sparse_residual_sweep(c.indptr, c.indices, c.x, c.sx, c.mu, c.colsum, c.s, self.a,
                                            self.lam_j, self.w, self.r, self.sr)

    def polish_period(self, k):
        """Sweeps from one polish to the next on a support of ``k`` features: the polish's flops (the
        ``k x k`` solve, and without the Gram matrix the ``k x k`` Gram) over a sweep's; 1 below ~1e6
        flops (Python's overhead dominates there: small problems polish as often as allowed)."""
        n, d = self.mom.n, self.mom.d
        if self.mode == "sparse_residual":
            nnz = self.cols.x.size
            polish, sweep = k ** 3 / 3 + k * k * nnz / max(d, 1), nnz + n
        else:
            polish = k ** 3 / 3 + (0 if self.mode == "gram" or self.mom.gram_built else n * k * k)
            sweep = d * d if self.mode == "gram" else 2 * n * d
        return max(1, int(polish // max(sweep, 1e6)))

    def polish(self, signs):
        """Take the exact minimiser on the support of ``signs`` when it keeps them and the
        objective does not go up (the duality gap decides the rest)."""
        A, w, mom = signs != 0, self.w, self.mom
        if np.count_nonzero(A) > mom.n - int(mom.fit_intercept):
            return          # more features than the rank of Xc allows: G_AA is singular, no unique minimiser
        if self.mode == "sparse_residual":
            return self._polish_sparse(A, signs)
        if self.mode == "gram" or mom.gram_built:
            GA = mom.G[np.ix_(A, A)]
        else:
            GA = self.Z[:, A].T @ self.Z[:, A]
        gA = self.grad[A] if self.mode == "gram" else self.Z[:, A].T @ self.r
        step = _polish(GA, gA, w[A], self.lam_j[A], signs[A])
        if step is None or step[1] > 0:
            return
        w[A] += step[0]
        if self.mode == "gram":
            self.grad -= self.G[:, A] @ step[0]
        else:
            self.r -= self.Z[:, A] @ step[0]

    def _polish_sparse(self, A, signs):
        """:meth:`polish` from the support's sparse columns (``G_AA`` is ``k x k``; no ``D x D`` matrix)."""
        cols = self.cols
        GA = cols.support_gram(A)[0]
        idx = np.flatnonzero(A)
        Sr = self.r if cols.s.size == 0 else cols.s * self.r
        gA = cols.X[:, idx].T @ Sr - cols.mu[idx] * float(Sr.sum())
        step = _polish(GA, gA, self.w[A], self.lam_j[A], signs[A])
        if step is None or step[1] > 0:
            return
        d = step[0]
        self.w[A] += d
        self.r = self.r - (cols.X[:, idx] @ d - float(cols.mu[idx] @ d))
        self.sr = cols.weighted_sum(self.r)

    def certificate(self, tol, unpenalised, sweep=0, final=False):
        """``(duality gap, objective P, converged)`` at the current ``w``; ``None`` when ``||r||^2`` overflowed.

        Converged: the normal equations of the (effectively) unpenalised coordinates hold relative to
        ``||x_j|| ||r||`` or to their rounding, and (unless ``unpenalised``) the gap is at most
        ``max(tol P, floor)`` (:func:`objective_rounding`). Where the double-precision gap's own rounding
        (:func:`gap_rounding`) exceeds that bound, the gap is recomputed from the exactly rounded residual
        (:func:`exact_gradient`), at sweeps spaced ever wider so the rare case costs ``O(log)`` of them (and at the
        ``final`` sweep, so a fit that stops reports the exact gap).
        """
        w, eps = self.w, np.finfo(float).eps
        rr = self._residual_norm2()
        if not np.isfinite(rr):
            return None
        scale = self.root_yy + float(np.abs(w) @ self.norms)        # the size of the terms of r = yc - X w
        free, root_rr = self.free, np.sqrt(rr)
        grad_rounding = _ROUNDING * eps * self.norms[free] * scale
        kkt = np.all(np.abs(self.grad[free]) <= np.maximum(tol * self.norms[free] * root_rr, grad_rounding))
        primal = objective(self.lam_j, rr, w)
        if not kkt:     # the dual point leaves the free coordinates out: it certifies nothing before they are solved
            return np.inf, primal, False
        gap = max(duality_gap(self.lam_j, rr, self.grad, w, free, self._slack(rr)), 0.0)     # below 0: rounding
        if unpenalised:
            return gap, primal, True
        bound = max(tol * primal, objective_rounding(primal - 0.5 * rr, root_rr, scale))
        noise = gap_rounding(self.root_yy, root_rr, scale, float(np.abs(w) @ self.norms))
        if noise <= bound or gap > bound + noise or (sweep < self.next_refinement and not final):
            return gap, primal, gap <= bound and noise <= bound
        self.next_refinement = sweep + 2 * max(sweep - self.last_refinement, 1)
        self.last_refinement = sweep
        rr, grad = self._refresh()
        primal = objective(self.lam_j, rr, w)
        gap = max(duality_gap(self.lam_j, rr, grad, w, free, self._slack(rr)), 0.0)
        return gap, primal, gap <= max(tol * primal, objective_rounding(primal - 0.5 * rr, np.sqrt(rr), scale))

    def _refresh(self):
        """``(||r||_S^2, Xc^T S r)`` from the exactly rounded residual (:func:`exact_gradient`), which also
        replaces the descent's state: its drift (the rounding of every step, ``eps (|yc| + |X||w|)`` an entry)
        would otherwise hold the sweeps where the old gap's noise was."""
        rr, grad, r = exact_gradient(self.mom, self.w)
        self.grad = grad
        if self.mode == "residual":
            self.r = r if self.mom.sw is None else np.sqrt(self.mom.sw) * r
        elif self.mode == "sparse_residual":
            self.r, self.sr = r, self.cols.weighted_sum(r)
        return rr, grad

    def _slack(self, rr):
        """What one ulp of each ``w_k`` (and the rounding of a product with ``r``) moves ``x_j^T r`` by,
        ``eps ||x_j|| (sum_k ||x_k|| |w_k| + ||r||)``: no descent in double precision gets ``x_j^T r`` closer to
        its optimality condition (see :func:`duality_gap`)."""
        spread = float(np.abs(self.w) @ self.norms)
        return _ROUNDING * np.finfo(float).eps * self.norms * (spread + np.sqrt(rr))

    def _residual_norm2(self):
        """``||r||_S^2`` at the current ``w`` (residual modes: also ``grad = Xc^T S r`` anew from ``r``)."""
        w = self.w
        if self.mode == "gram":
            # yy - 2 w'c + w'G w: its rounding, eps yy, enters the gap only times (1 - alpha)^2
            return max(self.yy - 2.0 * (w @ self.c) + w @ (self.G @ w), 0.0)
        if self.mode == "residual":
            self.grad = self.Z.T @ self.r
            return float(self.r @ self.r)
        self.grad = self.cols.gradient(self.r)      # after a sweep r is the residual itself (its constant applied)
        return self.cols.weighted_sum(self.r * self.r)
