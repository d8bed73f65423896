"""First-order methods: gradient descent, momentum, linear and nonlinear conjugate gradients.

Derived in: chapter "Optimizers" § "Gradient descent".
"""

from __future__ import annotations

import numpy as np

from .line_search import backtracking, wolfe_line_search
from .result import (MSG_GTOL, MSG_NONFINITE, OptimizeResult, _Counted, _msg_max_iter,
                     _small_grad, _small_step, _start, _stop_reason, _x0, real_array)

__all__ = ["gradient_descent", "momentum", "conjugate_gradient", "nonlinear_cg"]


def _line_search_failed(fg, g, gtol, scale):
    """Message and verdict after a line search found no decrease."""
    if fg.nonfinite:
        return MSG_NONFINITE, False
    # no decrease at rounding level: converged only if the gradient is (nearly) small
    return ("line search failed: no decrease of f at rounding level (x is optimal to the "
            "precision f can resolve if the gradient is small)"), bool(_small_grad(g, 1e3 * gtol, scale))


def gradient_descent(fun, x0, grad=None, *, step="backtracking", hess=None, max_iter=1000,
                     gtol=1e-6, xtol=0.0, gscale=None, c1=1e-4, shrink=0.5):
    """Steepest descent ``x <- x - t g``.

    Parameters
    ----------
    fun, grad : callable
        Objective and gradient (or ``grad=True`` when ``fun`` returns both).
    x0 : array_like
        Starting point.
    step : float, "backtracking" or "exact"
        A fixed step size ``eta``; an Armijo backtracking search starting from t = 1;
        or the exact minimiser along ``-g`` of a quadratic ``f = x'Ax/2 - b'x + c``,
        ``t = g'g / g'Ag``, which needs ``hess = A`` (a matrix or callable).
    max_iter : int
    gtol : float
        Stop when ``max_j |g_j| / gscale_j <= gtol``.
    xtol : float
        Stop when a step has ``max |step| <= xtol * max |x|`` (0: never).
    gscale : float or array, optional
        The gradient's natural size (a number, or one per coordinate); default
        ``max |g(x0)|`` (a relative test).

    Returns
    -------
    OptimizeResult

    Derived in: chapter "Optimizers" § "Gradient descent".
    """
    if isinstance(step, str) and step not in ("backtracking", "exact"):
        raise ValueError("step must be a positive float, 'backtracking' or 'exact'")
    if step == "exact" and hess is None:
        raise ValueError("step='exact' needs hess=A (exact line search is for quadratics)")
    if not isinstance(step, str) and not step > 0:
        raise ValueError("a fixed step must be positive")
    fg = _Counted(fun, grad)
    x = _x0(x0)
    (f, g), scale, early = _start(fg, x, gtol, gscale)
    if early:
        return early
    path, converged, msg = [x.copy()], False, _msg_max_iter(max_iter)
    k = 0
    for k in range(1, max_iter + 1):
        d = -g
        if step == "backtracking":
            t, f_new, g_new, _ = backtracking(fg, x, f, g, d, c1=c1, shrink=shrink)
            if t == 0.0:
                msg, converged = _line_search_failed(fg, g, gtol, scale)
                k -= 1
                break
        else:
            if step == "exact":
                A = hess(x) if callable(hess) else np.asarray(hess, dtype=float)
                t = float(g @ g) / float(g @ A @ g)
            else:
                t = float(step)
            f_new, g_new = fg(x + t * d)
        x_new = x + t * d
        if not np.isfinite(f_new):
            path.append(x_new)
            x = x_new
            msg = "diverged (objective or gradient not finite): reduce the step size"
            f, g = np.nan, g_new
            break
        small = _small_step(x_new - x, x, xtol)
        x, f, g = x_new, f_new, g_new
        path.append(x.copy())
        stop = _stop_reason(fg, g, gtol, scale, small)
        if stop:
            converged, msg = stop
            break
    return OptimizeResult(x, f, g, converged, k, fg.n, np.array(path), msg)


def momentum(fun, x0, grad=None, *, lr=0.1, beta=0.9, max_iter=1000, gtol=1e-6, gscale=None):
    """Heavy-ball (Polyak momentum) gradient descent.

    ``x_{k+1} = x_k - lr g_k + beta (x_k - x_{k-1})``.

    Parameters
    ----------
    fun, grad, x0 : see :func:`gradient_descent`.
    lr : float
        Step size.
    beta : float
        Momentum coefficient in [0, 1).
    gtol, gscale : the relative gradient test of :func:`gradient_descent`.

    Returns
    -------
    OptimizeResult

    Derived in: chapter "Optimizers" § "Momentum (heavy ball)".
    """
    if not (0 <= beta < 1) or not lr > 0:
        raise ValueError("need lr > 0 and 0 <= beta < 1")
    fg = _Counted(fun, grad)
    x = _x0(x0)
    (f, g), scale, early = _start(fg, x, gtol, gscale)
    if early:
        return early
    x_prev = x.copy()
    path, converged, k, msg = [x.copy()], False, 0, _msg_max_iter(max_iter)
    for k in range(1, max_iter + 1):
        x_new = x - lr * g + beta * (x - x_prev)
        x_prev, x = x, x_new
        f, g = fg(x)
        path.append(x.copy())
        if not np.isfinite(f):
            f, msg = np.nan, "diverged (objective or gradient not finite): reduce lr or beta"
            break
        if _small_grad(g, gtol, scale):
            converged, msg = True, MSG_GTOL
            break
    return OptimizeResult(x, f, g, converged, k, fg.n, np.array(path), msg)


def conjugate_gradient(A, b, x0=None, *, tol=1e-10, max_iter=None):
    """Linear conjugate gradients for ``A x = b``, i.e. minimising ``x'Ax/2 - b'x``.

    ``A`` is symmetric positive definite (a matrix, or a callable ``v -> A v``). In
    exact arithmetic it converges in at most ``d`` steps; successive residuals are
    orthogonal and successive directions are ``A``-conjugate.

    Parameters
    ----------
    A : (d, d) array or callable
    b : (d,) array
    x0 : (d,) array, optional (zeros)
    tol : float
        Stop when ``||r|| <= tol * ||b||`` (relative, so scale-invariant).
    max_iter : int, optional (``10 d``)

    Returns
    -------
    OptimizeResult
        ``grad`` is ``A x - b`` (minus the residual); ``fun`` is ``x'Ax/2 - b'x``.

    Derived in: chapter "Optimizers" § "Conjugate gradients".
    """
    if not (callable(A) or (hasattr(A, "toarray") and not np.iscomplexobj(A))):   # sparse A works as is
        A = real_array(A, "A")
    matvec = A if callable(A) else (lambda v, A=A: A @ v)
    b = real_array(b, "b").ravel()
    if not np.all(np.isfinite(b)):
        raise ValueError("conjugate_gradient: b must be finite (no NaN or inf)")
    x = np.zeros_like(b) if x0 is None else _x0(x0)
    max_iter = 10 * b.size if max_iter is None else max_iter
    r = b - matvec(x)
    p = r.copy()
    rr = float(r @ r)
    path, converged, k = [x.copy()], False, 0
    bnorm = np.linalg.norm(b)
    if bnorm == 0.0:
        return OptimizeResult(np.zeros_like(b), 0.0, np.zeros_like(b), True, 0, 1,
                              np.zeros((1, b.size)), "b = 0: the solution is x = 0")
    for k in range(1, max_iter + 1):
        if np.sqrt(rr) <= tol * bnorm:
            converged, k = True, k - 1
            break
        Ap = matvec(p)
        pAp = float(p @ Ap)
        if not np.isfinite(pAp):
            raise ValueError("conjugate_gradient: A v is not finite; check A for NaN/inf")
        if pAp <= 0:
            raise ValueError("conjugate_gradient needs a positive definite A (found p'Ap <= 0)")
        alpha = rr / pAp
        x = x + alpha * p
        r = r - alpha * Ap
        rr_new = float(r @ r)
        p = r + (rr_new / rr) * p
        rr = rr_new
        path.append(x.copy())
    else:
        converged = bool(np.sqrt(rr) <= tol * bnorm)
    fun = float(0.5 * x @ matvec(x) - b @ x)
    return OptimizeResult(x, fun, -r, converged, k, k + 1, np.array(path),
                          "residual below tol * ||b||" if converged else _msg_max_iter(k))


def nonlinear_cg(fun, x0, grad=None, *, max_iter=1000, gtol=1e-6, xtol=0.0, gscale=None):
    """Nonlinear conjugate gradients (Polak-Ribiere+, restarted) with a Wolfe line search.

    ``d_k = -g_k + beta_k d_{k-1}``, ``beta_k = max(0, g_k'(g_k - g_{k-1}) / g_{k-1}'g_{k-1})``.
    Stopping rules as :func:`gradient_descent`.

    Returns
    -------
    OptimizeResult

    Derived in: chapter "Optimizers" § "Conjugate gradients".
    """
    fg = _Counted(fun, grad)
    x = _x0(x0)
    (f, g), scale, early = _start(fg, x, gtol, gscale)
    if early:
        return early
    d = -g
    path, converged, k, msg = [x.copy()], False, 0, _msg_max_iter(max_iter)
    t_prev = 1.0 / max(np.linalg.norm(g), 1e-300)
    for k in range(1, max_iter + 1):
        if g @ d >= 0:
            d = -g
        t, f_new, g_new, _ = wolfe_line_search(fg, x, f, g, d, t0=2 * t_prev, c2=0.1)
        if t == 0.0:
            msg, converged = _line_search_failed(fg, g, gtol, scale)
            k -= 1
            break
        x_new = x + t * d
        small = _small_step(x_new - x, x, xtol)
        beta = max(0.0, float(g_new @ (g_new - g)) / float(g @ g))
        x, f, g, t_prev = x_new, f_new, g_new, t
        d = -g + beta * d
        path.append(x.copy())
        stop = _stop_reason(fg, g, gtol, scale, small)
        if stop:
            converged, msg = stop
            break
    return OptimizeResult(x, f, g, converged, k, fg.n, np.array(path), msg)
