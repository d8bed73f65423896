"""The lasso (l1-penalised least squares) by cyclic coordinate descent.

Derived in: chapter "Linear regression" § "Ridge, lasso and least absolute deviations".
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from numbers import Real

from ..base import NON_NEGATIVE, POSITIVE_INT, Interval, all_or_nothing, check_finite_fit
from .._kernels.numpy_budget import numpy_pass
from .._kernels.threads import single_threaded_blas
from ._base import LinearModel, moments

__all__ = ["Lasso"]

_SERIAL_BLAS_MIN = 1 << 16     # entries of G (or of the centred X) from which the descent runs on one BLAS thread


def soft_threshold(z, t):
    """``S(z, t) = sign(z) max(|z| - t, 0)``: the minimiser of ``1/2 (u - z)^2 + t |u|``."""
    return np.sign(z) * max(abs(z) - t, 0.0)


def duality_gap(lam_j, yy, yc_r, rr, grad, w, free=None):
    """Gap between ``1/2 ||r||^2 + sum_j lam_j |w_j|`` and the dual at ``theta = alpha r``.

    ``grad = Xc^T r``; ``alpha = min(1, min_j lam_j / |grad_j|)`` makes ``theta`` dual feasible
    (``|x_j^T theta| <= lam_j``), and the dual value is ``alpha yc^T r - alpha^2 ||r||^2 / 2``.
    Coordinates in ``free`` (penalty below the rounding of ``x_j^T r``) are left out of
    ``alpha``: their optimality is ``x_j^T r = 0``, checked separately. ``lam_j = inf`` (a
    penalty that swamps the data) only allows ``w_j = 0``.
    """
    nz = w != 0
    primal = 0.5 * rr + float(lam_j[nz] @ np.abs(w[nz]))
    g = np.abs(grad)
    active = g > lam_j
    if free is not None:
        active &= ~free
    alpha = 1.0 if not np.any(active) else float(np.min(lam_j[active] / g[active]))
    return primal - (alpha * yc_r - 0.5 * alpha * alpha * rr)


def _polish(GA, cA, lamA, signsA):
    """Exact lasso minimiser on a support ``A`` with signs ``s_A``, or ``None``.

    On a fixed support with fixed signs the objective is quadratic, minimised by
    ``G_AA w_A = c_A - lam_A s_A``; the result counts only if it keeps every sign.
    """
    try:
        wA = np.linalg.solve(GA, cA - lamA * signsA)
    except np.linalg.LinAlgError:
        return None
    if not (np.all(np.isfinite(wA)) and np.array_equal(np.sign(wA), signsA)):
        return None
    return wA


class Lasso(LinearModel):
    """The lasso: minimises ``1/2 sum_i s_i (y_i - x_i . w - b)^2 + lam ||w||_1`` (intercept unpenalised).

    ``s_i`` are the sample weights (1 by default: ``1/2 ||y - X w - b||^2 + lam ||w||_1``).
    Equals scikit-learn's ``Lasso(alpha=lam / N)`` (with weights: ``alpha = lam / sum(s)``,
    because scikit-learn rescales the weights to sum to ``N``), whose objective
    ``1/(2N) ||y - Xw||^2 + alpha ||w||_1`` is ours divided by ``N``.

    **How it is solved.** Cyclic coordinate descent: with ``r`` the current residual and
    ``a_j = ||x_j||^2``, coordinate ``j`` becomes ``S(x_j^T r + a_j w_j, lam) / a_j`` where
    ``S(z, t) = sign(z) max(|z| - t, 0)`` is soft thresholding. When ``N > 2 D`` (or ``X`` is
    sparse) the updates use the centred Gram matrix (``O(D)`` per coordinate, computed in one
    pass without copying ``X``), otherwise residual updates on a centred copy (``O(N)``). The sweeps
    run as the readable loop (``_CoordinateDescent.sweep``) while the process's numpy budget lasts
    (a chapter's small fits load no numba), then as a compiled loop making the same updates
    (``linbook._kernels.lasso``). After a
    sweep that leaves the signs of ``w`` unchanged, the exact minimiser on that support
    (``G_AA w_A = c_A - lam s_A``) is taken when it keeps the signs and lowers the objective,
    so correlated features do not make the descent crawl (tried only on supports within the rank of
    ``Xc``, where ``G_AA`` can be non-singular, and not more often than its cost in sweeps). The
    problem is solved on internally rescaled data (``y`` and every column divided by a power of
    two near its largest entry, ``lam`` mapped accordingly), so features from 1e-300 to 1e300 give
    the same coefficients as the scaled problem and no sweep overflows.

    **Stopping rule (scale-invariant).** Stop when the duality gap is at most
    ``tol * ||yc||^2`` (a certificate: the objective is then within that of its minimum; both sides
    scale with ``y^2``, so the rule does not depend on the units). For ``lam = 0`` (no dual
    certificate) stop when every ``|x_j^T r| <= tol ||x_j|| ||yc||`` (the normal equations); the
    same test replaces the dual bound for single coordinates whose penalty is below the rounding
    of ``x_j^T r`` (a feature near 1e300 next to ordinary ones).
    ``converged_`` is true only when the rule was met; otherwise a ``ConvergenceWarning`` is given.

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
        Relative duality-gap tolerance (see above).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    n_iter_ : int
        Sweeps performed.
    dual_gap_ : float
        Duality gap at the returned solution relative to ``||yc||^2`` (scale-free; the
        stopping rule compares it with ``tol``).
    converged_ : bool
    sigma2_ : float
        ``sum_i s_i r_i^2 / N`` on the training data.
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
        sparse = not isinstance(X, np.ndarray)
        mom = moments(self, X, y, sw, gram=sparse or X.shape[0] >= X.shape[1], common_scale=False)
        if sparse and not mom.gram_built:
            raise ValueError("Lasso on sparse X with more than 4096 columns is not supported here; "
                             "use sklearn.linear_model.Lasso(alpha=lam / n_samples), or select columns first.")
        # the penalty of the scaled problem: w_j = y_scale v_j / x_scale_j
        with np.errstate(over="ignore"):
            lam_j = lam / (mom.y_scale * mom.x_scale)
        use_gram = mom.gram_built and (mom.n > 2 * mom.d or sparse)
        # the descent's BLAS calls are all small (products with a D-vector, k x k solves): a multi-threaded
        # BLAS synchronises its threads in each, and on busy cores waits for a descheduled one (a 163 x 163
        # solve of a polish: 64 ms on 2 shared cores, under 1 ms on one thread); small fits keep the
        # caller's BLAS (and skip threadpoolctl's import)
        serial = mom.d * (mom.d if use_gram else mom.n) >= _SERIAL_BLAS_MIN
        with single_threaded_blas() if serial else contextlib.nullcontext():
            v, it, gap, ok = self._descend(mom, lam_j, lam == 0, use_gram)
        check_finite_fit(self, v, what="coordinate descent", cure="scale the features (StandardScaler)")
        self.n_iter_, self.converged_ = it, ok
        self.dual_gap_ = float(gap / max(mom.yy, np.finfo(float).tiny))
        if not ok:
            warnings.warn(f"Lasso did not converge in {it} sweeps (relative duality gap "
                          f"{self.dual_gap_:.1e} > tol = {self.tol:g}). "
                          "Increase max_iter, or scale the features.", ConvergenceWarning, stacklevel=2)
        return self._finish(mom, v, "Lasso")

    def _descend(self, mom, lam_j, unpenalised, use_gram):
        """Coordinate descent on the scaled problem; returns ``(v, sweeps, gap, converged)``."""
        cd = _CoordinateDescent(mom, lam_j, use_gram)
        gap, it, ok, support, polished = np.inf, 0, False, None, 0
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
            certificate = cd.certificate(self.tol, unpenalised)
            if certificate is None:              # the residual overflowed
                break
            gap, ok = certificate
            if ok:
                break
        return cd.w, it, gap, ok

    @property
    def n_params_(self):
        return int(np.count_nonzero(self.coef_)) + int(self.fit_intercept)


class _CoordinateDescent:
    """Cyclic coordinate descent on the scaled lasso problem of ``mom``.

    Holds ``w`` and, kept up to date, either the gradient ``Xc^T r`` (``use_gram``: from the
    centred Gram matrix ``G`` and ``c = Xc^T yc``, ``O(D)`` per coordinate) or the residual
    ``r`` (on a centred copy ``Z`` of ``X``, ``O(N)`` per coordinate).
    """

    def __init__(self, mom, lam_j, use_gram):
        self.mom, self.lam_j, self.use_gram, self.yy = mom, lam_j, use_gram, mom.yy
        if use_gram:
            self.G, self.c = mom.G, mom.c
            self.grad = self.c.copy()                   # Xc^T r, kept up to date
        else:
            Z, self.z = mom.design()
            self.Z = np.asfortranarray(Z)
            self.r = self.z.copy()
        self.a = np.diag(mom.G).copy() if mom.gram_built else np.einsum("ij,ij->j", self.Z, self.Z)  # ||x_j||^2
        self.w = np.zeros(mom.d)
        tiny = np.finfo(float).tiny
        self.norms = np.sqrt(np.where(self.a > 0, self.a, 1.0))
        self.root_yy = np.sqrt(max(self.yy, tiny))     # ||yc||
        # penalties below the rounding of x_j^T r (features near 1e300) act as no penalty
        self.free = (lam_j <= np.finfo(float).eps * self.norms * self.root_yy) & (self.a > 0)

    def sweep(self):
        """One pass over the coordinates: ``w_j <- S(x_j^T r + a_j w_j, lam_j) / a_j``."""
        w, a, lam_j = self.w, self.a, self.lam_j
        for j in range(w.size):
            if a[j] <= 0.0:
                continue
            wj = w[j]
            rho = (self.grad[j] if self.use_gram else self.Z[:, j] @ self.r) + a[j] * wj
            new = soft_threshold(rho, lam_j[j]) / a[j]
            if new != wj:
                w[j] = new
                if self.use_gram:
                    self.grad -= (new - wj) * self.G[:, j]
                else:
                    self.r -= (new - wj) * self.Z[:, j]

    def compiled_sweep(self):
        """:meth:`sweep` by a compiled loop (``linbook._kernels.lasso``, tested equal to it)."""
        from .._kernels.lasso import gram_sweep, residual_sweep

        if self.use_gram:
            gram_sweep(self.G, self.a, self.lam_j, self.w, self.grad)
        else:
            residual_sweep(self.Z, self.a, self.lam_j, self.w, self.r)

    def polish_period(self, k):
        """Sweeps from one polish to the next on a support of ``k`` features: the polish's flops (the
        ``k x k`` solve, and without the Gram matrix the ``k x k`` Gram) over a sweep's; 1 below ~1e6
        flops (Python's overhead dominates there: small problems polish as often as allowed)."""
        n, d = self.mom.n, self.mom.d
        polish = k ** 3 / 3 + (0 if self.use_gram or self.mom.gram_built else n * k * k)
        sweep = d * d if self.use_gram else 2 * n * d
        return max(1, int(polish // max(sweep, 1e6)))

    def polish(self, signs):
        """Take the exact minimiser on the support of ``signs`` when it keeps them and the
        objective does not go up (the duality gap decides the rest)."""
        A, w, mom, lam_j = signs != 0, self.w, self.mom, self.lam_j
        if np.count_nonzero(A) > mom.n - int(mom.fit_intercept):
            return          # more features than the rank of Xc allows: G_AA is singular, no unique minimiser
        if self.use_gram or mom.gram_built:
            GA, cA = mom.G[np.ix_(A, A)], mom.c[A]
        else:
            GA, cA = self.Z[:, A].T @ self.Z[:, A], self.Z[:, A].T @ self.z
        wA = _polish(GA, cA, lam_j[A], signs[A])
        if wA is None:
            return
        w_new = np.zeros_like(w)
        w_new[A] = wA
        f_old = 0.5 * (w[A] @ (GA @ w[A])) - w[A] @ cA + lam_j @ np.abs(w)
        f_new = 0.5 * (wA @ (GA @ wA)) - wA @ cA + lam_j @ np.abs(w_new)
        if f_new <= f_old:
            self.w = w_new
            if self.use_gram:
                self.grad = self.c - self.G @ w_new
            else:
                self.r = self.z - self.Z @ w_new

    def certificate(self, tol, unpenalised):
        """``(duality gap, converged)`` at the current ``w``; ``None`` when ``||r||^2`` overflowed.

        Converged: the gap is at most ``tol ||yc||^2`` (unless ``unpenalised``) and the
        normal equations of the (effectively) unpenalised coordinates hold relative to
        ``||x_j|| ||yc||``: the scale-free form of ``x_j^T r = 0``.
        """
        w, yy, tiny = self.w, self.yy, np.finfo(float).tiny
        if self.use_gram:
            yc_r = yy - w @ self.c
            rr = max(yy - 2.0 * (w @ self.c) + w @ (self.G @ w), 0.0)
        else:
            self.grad, yc_r, rr = self.Z.T @ self.r, float(self.z @ self.r), float(self.r @ self.r)
        if not np.isfinite(rr):
            return None
        gap = duality_gap(self.lam_j, yy, yc_r, rr, self.grad, w, self.free)
        kkt = np.abs(self.grad[self.free]) <= tol * self.norms[self.free] * self.root_yy
        return gap, bool(np.all(kkt)) and (unpenalised or gap <= tol * max(yy, tiny))

