"""Newton's method (the one Newton driver), truncated Newton and Levenberg-Marquardt.

:func:`newton` is the single Newton/IRLS driver of linbook: :func:`linbook.irls`,
:class:`linbook.LogisticRegression` and :class:`linbook.ProbitRegression`
(``solver="newton"``/``"irls"``) and :func:`linbook.laplace_approximation` call it with
their own objective, gradient and Hessian, so the safeguards live in one place: the
Hessian is equilibrated and factored by Cholesky, a failed factorisation is retried
with a growing ridge, the step is chosen by Armijo backtracking, and the method stops
at once (saying so) on a non-finite objective.

Derived in: chapter "Optimizers" § "Newton's method".
"""

from __future__ import annotations


import numpy as np
import scipy.linalg

from .._kernels.cholesky import equilibrated_cholesky, equilibrated_solve
from .line_search import _armijo, backtracking
from .result import (MSG_GTOL, MSG_NONFINITE, MSG_UNBOUNDED, MSG_XTOL, OptimizeResult, _Counted, _msg_max_iter,
                     _small_grad, _small_step, _start, _stop_reason, _x0, real_array)

__all__ = ["newton", "truncated_newton", "levenberg_marquardt"]

# The chord method keeps the last Hessian's factor while each step shrinks max|g| at least
# this much. For a GLM a new Hessian costs about three gradient passes, so one chord step
# that shrinks the gradient 4x gains about as much per pass as a Newton step shrinking it
# 4^4 = 256x (Newton's own ratios were 0.2-0.01 on the benchmark problems).
CHORD_CONTRACTION = 0.25
MSG_DECREMENT = "Newton decrement g'H^{-1}g/2 below decrement_tol"


def _newton_direction(H, g, damping=0.0):
    """Solve ``(H + tau I) d = -g`` by Cholesky with the smallest workable ridge ``tau``.

    ``H`` is first equilibrated, ``D^{-1} H D^{-1}`` with ``D = sqrt(diag H)``
    (:func:`linbook._kernels.cholesky.equilibrated_cholesky`), so the factorisation and the
    ridge do not depend on the units of the coordinates. ``tau`` grows until the factor
    exists and ``d`` is a descent direction (Levenberg-Marquardt). Returns
    ``(d, tau, factor)``; ``factor`` solves with the same matrix again
    (:func:`_chord_direction`), ``None`` after the scaled-gradient fallback.
    """
    if H is None:                  # the objective or gradient was not finite where H was asked for
        raise ValueError(MSG_NONFINITE)
    H = np.atleast_2d(np.asarray(H, dtype=float))
    if not np.all(np.isfinite(H)):
        raise ValueError("newton: the Hessian is not finite at the current point; check the "
                         "objective for overflow (scale the features or add a penalty)")
    if damping:
        H = H + damping * np.eye(H.shape[0])
    tau = 0.0
    while True:
        factor = equilibrated_cholesky(H, ridge=tau)
        if factor is not None:
            d = _chord_direction(factor, g)
            if float(g @ d) < 0 and np.all(np.isfinite(d)):
                return d, tau, factor
        tau = max(10.0 * tau, 1e-12)
        if tau > 1e12:
            dg = np.diag(H)
            return -g / np.where(dg > 0, dg, 1.0), tau, None   # a diagonally scaled gradient step: always descent


def _flat_step(fg, x, f, g, d, scale):
    """The full step ``x + d`` when ``f`` cannot tell it from ``x`` but the gradient shrinks.

    Armijo's test needs a decrease of ``f`` that rounding can show; when the whole predicted
    decrease ``-g'd / 2`` is below ``f``'s last bits (features of size 1e-200 under a penalty,
    say) every trial fails although ``x`` is not optimal. Near the minimum of a convex
    function the gradient is then the better merit: take the Newton step if ``f`` does not
    increase (it stays equal to rounding) and ``max |g| / scale`` shrinks. Returns
    ``fg(x + d)`` or ``None``.
    """
    new = fg(x + d)
    flat = f - 16 * np.finfo(float).eps * max(abs(f), 1.0) <= new[0] <= f     # never an increase
    if flat and np.all(np.isfinite(new[1])) and np.max(np.abs(new[1]) / scale) < np.max(np.abs(g) / scale):
        return new
    return None


def _line_search(fg, trial, x, f, g, d, scale, gtol):
    """Armijo backtracking along ``d``, then the flat step: ``(t, fg(x + t d), None)``, or
    ``(t, None, (message, converged))`` when no step can be taken."""
    t, new, _ = _armijo(trial, x, f, float(g @ d), d)
    if new is None and not (fg.nonfinite or trial.nonfinite):
        t, new = 1.0, _flat_step(trial, x, f, g, d, scale)
    if new is not None:
        return t, new, None
    if fg.nonfinite or trial.nonfinite:
        return t, None, (MSG_NONFINITE, False)
    return t, None, ("line search failed: no decrease of f at rounding level (x is optimal to the "
                     "precision f can resolve if the gradient is small)",
                     bool(_small_grad(g, 1e3 * gtol, scale)))


def _polished(x, out, g, factor, tau, damping):
    """``x`` after one more full Newton step with the Hessian already at hand (no evaluation):
    a chord step with the kept factor, else a step with ``out``'s Hessian when it is positive definite."""
    if factor is not None and tau == 0.0:
        return x + _chord_direction(factor, g)
    if len(out) == 3:
        d, tau, _ = _newton_direction(out[2], g, damping)
        if tau == 0.0:
            return x + d
    return x


def _chord_direction(factor, g):
    """``-H^{-1} g`` with the Cholesky factor of an earlier (equilibrated) Hessian."""
    return -equilibrated_solve(factor, g)


def newton(fun, x0, grad=None, hess=None, *, line_search=True, max_iter=100, gtol=1e-8,
           xtol=1e-12, gscale=None, damping=None, callback=None, polish=False, fun_grad=None,
           decrement_tol=None):
    """Newton's method with a backtracking line search (Algorithm 8.1 of MLAPP).

    Each step solves ``H d = -g`` by Cholesky and moves to ``x + t d`` with the largest
    ``t`` in 1, 1/2, 1/4, ... that passes Armijo's test. When ``H`` is not positive
    definite (the Cholesky factor fails or ``d`` is not a descent direction) ``H + tau I``
    is used with ``tau`` grown until it works, a Levenberg-Marquardt style fix.

    Parameters
    ----------
    fun, grad, x0 : see :func:`linbook.optim.gradient_descent`.
    hess : callable or True
        ``hess(x) -> (d, d)``; or ``True`` when ``fun(x)`` returns ``(f, g, H)`` from one
        evaluation (with ``grad=True``): a model that computes all three in one pass over
        its data then reads the data once per step.
    line_search : bool
        Armijo backtracking from t = 1 (``False``: always the full step t = 1).
    gtol, gscale : float
        Stop when ``max |g| <= gtol * gscale`` (``gscale`` defaults to ``max |g(x0)|``).
    xtol : float
        Stop when a step has ``max |step| <= xtol * max |x|``.
    damping : float, optional
        If given, always use ``H + damping I``.
    callback : callable, optional
        ``callback(x, f, g)`` after each step; returning ``True`` stops the method
        (``converged`` False, message "stopped by callback").
    polish : bool
        With ``hess=True``: after the gradient test passes, take one more full Newton
        step with the Hessian already at hand (no evaluation; its error is about the
        square of the current one). ``fun`` and ``grad`` are then those before it.
    fun_grad : callable, optional
        With ``hess=True``: ``fun_grad(x) -> (f, g)``, the objective without its Hessian
        (for a GLM a pass over the data costing ~1/4 of one with the Hessian). Then the
        Cholesky factor of the last Hessian is *reused* (the chord method, Shamanskii's
        modification of Newton) as long as each step is a full one that shrinks ``max |g|``
        at least fourfold (``CHORD_CONTRACTION``); otherwise a new Hessian is evaluated.
        Near the optimum most steps then cost one gradient. The stopping test is the same
        (the exact gradient); ``polish`` then takes a last chord step, whose error is about
        ``CHORD_CONTRACTION`` times the current one instead of its square.
    decrement_tol : float, optional
        Also stop (converged) when the Newton decrement ``g' H^{-1} g / 2`` -- the decrease
        the quadratic model predicts, affine invariant -- is at most ``decrement_tol``
        (Boyd and Vandenberghe's stopping rule; tested before each step whose ``H`` is
        positive definite).

    Returns
    -------
    OptimizeResult

    Derived in: chapter "Optimizers" § "Newton's method".
    """
    if hess is None:
        raise ValueError("newton needs hess: a callable hess(x), or hess=True when fun returns (f, g, H)")
    fg = _Counted(fun, grad, hess)
    x = _x0(x0)
    out, scale, early = _start(fg, x, gtol, gscale)
    if early:
        return early
    hessian = (lambda x, out: out[2]) if hess is True else (lambda x, out: hess(x))
    chord = fun_grad is not None and hess is True
    trial = _Counted(fun_grad, True) if chord else fg        # evaluations without a Hessian
    f, g = out[0], out[1]
    factor, tau = None, 0.0        # Cholesky factor kept for the next step (chord method)
    path, converged, k, msg = [x.copy()], False, 0, _msg_max_iter(max_iter)
    for k in range(1, max_iter + 1):
        try:                       # d = -H^{-1} g (Cholesky; a kept factor while the chord method lasts)
            d, tau, factor, out = _direction(factor, tau, g, x, out, fg, hessian, hess is True, damping or 0.0)
        except ValueError as exc:
            msg, k = str(exc), k - 1
            break
        if decrement_tol is not None and tau == 0.0 and -0.5 * float(g @ d) <= decrement_tol:
            converged, msg, k = True, MSG_DECREMENT, k - 1
            break
        t, new, stop = (_line_search(fg, trial, x, f, g, d, scale, gtol) if line_search
                        else _full_step(trial, x, d))
        if stop and new is None:   # no step taken
            (msg, converged), k = stop, k - 1
            break
        step, small = t * d, _small_step(t * d, x, xtol)
        if not (chord and t == 1.0 and np.max(np.abs(new[1])) <= CHORD_CONTRACTION * np.max(np.abs(g))):
            factor = None
        x, out = x + step, new
        f, g = out[0], out[1]
        path.append(x.copy())
        stop = stop or _stop_after_step(fg, trial, x, f, g, gtol, scale, small, callback)
        if stop:
            msg, converged = stop
            if msg == MSG_GTOL and polish and hess is True:
                x = _polished(x, out, g, factor, tau, damping or 0.0)
                path[-1] = x.copy()
            break
    return OptimizeResult(x, f, g, converged, k, fg.n + (trial.n if chord else 0), np.array(path), msg)


def _direction(factor, tau, g, x, out, fg, hessian, joint, damping):
    """``(d, tau, factor, out)``: the chord direction with the kept ``factor`` while it is one of
    descent, else the Newton direction of the Hessian at ``x`` (evaluated there when ``out``, a
    trial point's ``(f, g)``, has none and ``fun`` gives all three: ``joint``)."""
    d = _chord_direction(factor, g) if factor is not None else None
    if d is not None and float(g @ d) < 0 and np.all(np.isfinite(d)):
        return d, tau, factor, out
    if len(out) < 3 and joint:
        out = fg(x)
    d, tau, factor = _newton_direction(hessian(x, out), g, damping)
    return d, tau, factor, out


def _full_step(trial, x, d):
    """``(1, fg(x + d), stop)`` without a line search; ``stop`` when the objective is not finite there."""
    new = trial(x + d)
    if not np.isfinite(new[0]):
        return 1.0, (np.nan, new[1]), ("diverged: the objective is not finite after a full Newton step", False)
    return 1.0, new, None


def _stop_after_step(fg, trial, x, f, g, gtol, scale, small, callback):
    """``(message, converged)`` when the method stops at the new point ``x``, else ``None``."""
    if fg.unbounded or trial.unbounded:
        return MSG_UNBOUNDED, False
    if _small_grad(g, gtol, scale):
        return MSG_GTOL, True
    if small:
        return MSG_XTOL, True
    if callback is not None and callback(x, f, g):
        return "stopped by callback", False
    return None


def truncated_newton(fun, x0, grad=None, hessp=None, *, max_iter=100, gtol=1e-8, gscale=None,
                     cg_max_iter=None):
    """Truncated Newton (Newton-CG): solve ``H d = -g`` only approximately by CG.

    CG stops at the forcing tolerance ``||r|| <= min(0.5, sqrt(||g|| / ||g0||)) ||g||``
    (relative, so scale-invariant) or when it meets negative curvature (then it returns
    the last direction, or ``-g``). Only Hessian-vector products ``hessp(x, v)`` are
    needed, never the Hessian itself.

    Returns
    -------
    OptimizeResult

    Derived in: chapter "Optimizers" § "Newton's method".
    """
    if hessp is None:
        raise ValueError("truncated_newton needs hessp(x, v)")
    fg = _Counted(fun, grad)
    x = _x0(x0)
    (f, g), scale, early = _start(fg, x, gtol, gscale)
    if early:
        return early
    g0norm = np.linalg.norm(g)
    path, converged, k, msg = [x.copy()], False, 0, _msg_max_iter(max_iter)
    cg_max_iter = 2 * x.size if cg_max_iter is None else cg_max_iter
    for k in range(1, max_iter + 1):
        gnorm = np.linalg.norm(g)
        eps = min(0.5, np.sqrt(gnorm / g0norm)) * gnorm
        d = np.zeros_like(x)
        r = -g.copy()
        p = r.copy()
        for _ in range(cg_max_iter):
            Hp = hessp(x, p)
            pHp = float(p @ Hp)
            if not pHp > 0:
                if not d.any():
                    d = -g
                break
            alpha = float(r @ r) / pHp
            d = d + alpha * p
            r_new = r - alpha * Hp
            if np.linalg.norm(r_new) <= eps:
                break
            p = r_new + (float(r_new @ r_new) / float(r @ r)) * p
            r = r_new
        t, f_new, g_new, _ = backtracking(fg, x, f, g, d)
        if t == 0.0:
            k -= 1
            msg = MSG_NONFINITE if fg.nonfinite else "line search failed (at rounding level)"
            converged = not fg.nonfinite and bool(_small_grad(g, 1e3 * gtol, scale))
            break
        x = x + t * d
        f, g = f_new, g_new
        path.append(x.copy())
        stop = _stop_reason(fg, g, gtol, scale)
        if stop:
            converged, msg = stop
            break
    return OptimizeResult(x, f, g, converged, k, fg.n, np.array(path), msg)


def _damped_step(residual, J, g, x, f, lam):
    """``(d, r(x + d), f(x + d), lam, evaluations)``: the step ``(J'J + lam I) d = -J'r`` with
    ``lam`` multiplied by 10 until ``f`` decreases (then divided by 10 for the next step);
    ``d`` is None when ``lam`` exceeds 1e16 first."""
    A, evals = J.T @ J, 0
    while True:
        try:
            d = scipy.linalg.solve(A + lam * np.eye(x.size), -g, assume_a="pos")
        except np.linalg.LinAlgError:     # J'J + lam I numerically singular: damp more
            d = None
        if d is not None:
            r_new = real_array(residual(x + d), "the residual")
            evals += 1
            f_new = 0.5 * float(r_new @ r_new)
            if np.isfinite(f_new) and f_new < f:
                return d, r_new, f_new, max(lam / 10, 1e-15), evals
        lam *= 10
        if lam > 1e16:
            return None, None, None, lam, evals


def levenberg_marquardt(residual, x0, jac=None, *, lam0=1e-3, max_iter=200, gtol=1e-10, xtol=1e-12):
    """Levenberg-Marquardt for nonlinear least squares ``min (1/2) ||r(x)||^2``.

    Step ``(J'J + lam I) d = -J'r``: Gauss-Newton for small ``lam``, a short gradient step
    for large ``lam``. ``lam`` is divided by 10 after a step that lowers the objective
    and multiplied by 10 (step rejected) otherwise. Stops when ``max |J'r|`` falls below
    ``gtol`` times its value at ``x0`` or a step below ``xtol * max |x|`` (relative tests).

    Parameters
    ----------
    residual : callable
        ``r(x) -> (m,)``.
    jac : callable
        ``J(x) -> (m, d)``.

    Returns
    -------
    OptimizeResult
        ``fun`` is ``||r||^2 / 2``.

    Derived in: chapter "Optimizers" § "Levenberg–Marquardt and truncated Newton".
    """
    if jac is None:
        raise ValueError("levenberg_marquardt needs jac")
    x = _x0(x0)
    r = real_array(residual(x), "the residual")
    J = real_array(jac(x), "the Jacobian")
    f = 0.5 * float(r @ r)
    if not (np.isfinite(f) and np.all(np.isfinite(J))):
        return OptimizeResult(x, np.nan, None, False, 0, 1, x[None, :].copy(),
                              "the residual or its Jacobian is not finite at x0: start elsewhere")
    n_fev, lam = 1, float(lam0)
    g = J.T @ r
    scale = float(np.max(np.abs(g), initial=0.0))
    path, converged, k, msg = [x.copy()], False, 0, _msg_max_iter(max_iter)
    if scale == 0.0:
        return OptimizeResult(x, f, g, True, 0, 1, x[None, :].copy(), "the gradient is zero at x0")
    for k in range(1, max_iter + 1):
        if _small_grad(g, gtol, scale):
            converged, k, msg = True, k - 1, MSG_GTOL
            break
        d, r_new, f_new, lam, evals = _damped_step(residual, J, g, x, f, lam)
        n_fev += evals
        if d is None:
            msg, k = "no decrease possible (at rounding level if converged)", k - 1
            converged = bool(_small_grad(g, 1e3 * gtol, scale)) or f == 0.0
            break
        small = _small_step(d, x, xtol)
        x = x + d
        r, f = r_new, f_new
        J = real_array(jac(x), "the Jacobian")
        if not np.all(np.isfinite(J)):
            msg = "the Jacobian became non-finite: check jac (overflow?)"
            break
        g = J.T @ r
        path.append(x.copy())
        if small:
            converged, msg = True, MSG_XTOL
            break
    else:
        converged = bool(_small_grad(g, gtol, scale))
        if converged:
            msg = MSG_GTOL
    return OptimizeResult(x, f, g, converged, k, n_fev, np.array(path), msg)
