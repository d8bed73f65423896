"""First-order methods: gradient descent, momentum, linear and nonlinear conjugate gradients.

Derived in: chapter "Optimizers" § "Gradient descent".
"""

from __future__ import annotations

import numpy as np

from ..numerics import _power_of_two_scale
from .line_search import _armijo, _wolfe
from .result import checked_arguments
from .result import (MSG_GTOL, OptimizeResult, _check_args, _Counted, _declared_convex, _msg_max_iter, _no_decrease,
                     _small_grad, _small_step, _start, _stop_reason, _verdict, _x0, real_array)

__all__ = ["gradient_descent", "momentum", "conjugate_gradient", "nonlinear_cg"]


@checked_arguments
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
        Stop when ``max_j |g_j| / gscale_j <= gtol`` (which bounds ``||x - x*||`` only by ``||g|| / lambda_min``).
    xtol : float
        Stop when a step has ``max |step| <= xtol * max |x|`` (0: never).
    gscale : float or array, optional
        The gradient's natural size (a number, or one per coordinate); default
        ``max |g(x0)|`` (a relative test).

    Returns
    -------
    OptimizeResult
        ``converged`` only at a minimum (a stationary ``x0``, or a run confined to a subspace, is probed:
        ``result._verdict``).

    Derived in: chapter "Optimizers" § "Gradient descent".
    """
    _check_step(step, hess, c1, shrink)
    fg = _Counted(fun, grad)
    x = _x0(x0)
    (f, g), scale, early = _start(fg, x, gtol, gscale)
    if early:
        return early
    path, converged, msg = [x.copy()], False, _msg_max_iter(max_iter)
    k = 0
    for k in range(1, max_iter + 1):
        d = -g                     # steepest descent
        t, f_new, g_new = _step_length(step, fg, x, f, g, d, hess, c1, shrink)
        if t is None:              # the line search found no decrease
            (msg, converged), k = _no_decrease(g, gtol, scale, fg), k - 1
            break
        x_new = x + t * d
        if not np.isfinite(f_new):
            x, f, g, msg = x_new, np.nan, g_new, "diverged (objective or gradient not finite): reduce the step size"
            path.append(x)
            break
        small = _small_step(x_new - x, x, xtol)
        x, f, g = x_new, f_new, g_new
        path.append(x.copy())
        stop = _stop_reason(fg, g, gtol, scale, small)
        if stop:
            converged, msg = stop
            break
    converged, msg = _verdict(fg, path, x, f, g, scale, converged, msg, convex=_declared_convex(fg))
    return OptimizeResult(x, f, g, converged, k, fg.n, np.array(path), msg)


def _check_step(step, hess, c1, shrink):
    """``step`` a positive number, "backtracking" or "exact" (with ``hess``), ``c1`` and ``shrink``
    in (0, 1), or a clear error."""
    _check_args("gradient_descent", step=(step, lambda b: [b.POSITIVE, b.StrOptions({"backtracking", "exact"})]),
                c1=(c1, lambda b: [b.OPEN_UNIT]), shrink=(shrink, lambda b: [b.OPEN_UNIT]))
    if step == "exact" and hess is None:
        raise ValueError("step='exact' needs hess=A (exact line search is for quadratics): pass hess")


def _step_length(step, fg, x, f, g, d, hess, c1, shrink):
    """``(t, f(x + t d), g(x + t d))`` for the rule ``step``; ``t`` is ``None`` when backtracking
    found no decrease."""
    if step == "backtracking":     # Armijo: the largest t in 1, shrink, shrink^2, ... with enough decrease
        t, out, _ = _armijo(fg, x, f, float(g @ d), d, c1=c1, shrink=shrink)
        return (t, out[0], out[1]) if out is not None else (None, f, g)
    if step == "exact":            # the minimiser of a quadratic along d = -g: t = g'g / g'Ag
        A = hess(x) if callable(hess) else np.asarray(hess, dtype=float)
        t = float(g @ g) / float(g @ A @ g)
    else:
        t = float(step)
    f_new, g_new = fg(x + t * d)
    return t, f_new, g_new


@checked_arguments
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
        ``converged`` only at a minimum (a stationary ``x0``, or a run confined to a subspace, is probed:
        ``result._verdict``).

    Derived in: chapter "Optimizers" § "Momentum (heavy ball)".
    """
    _check_args("momentum", lr=(lr, lambda b: [b.POSITIVE]),
                beta=(beta, lambda b: [b.Interval(b.Real, 0, 1, closed="left")]))
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
    converged, msg = _verdict(fg, path, x, f, g, scale, converged, msg, convex=_declared_convex(fg))
    return OptimizeResult(x, f, g, converged, k, fg.n, np.array(path), msg)


@checked_arguments
def conjugate_gradient(A, b, x0=None, *, tol=1e-10, max_iter=None):
    """Linear conjugate gradients for ``A x = b``, i.e. minimising ``x'Ax/2 - b'x``.

    ``A`` is symmetric positive definite (a matrix, or a callable ``v -> A v``). In exact arithmetic it
    converges in at most ``d`` steps; successive residuals are orthogonal and successive directions ``A``-conjugate.

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
    matvec, b, x = _linear_system(A, b, x0)
    max_iter = 10 * b.size if max_iter is None else max_iter
    if not np.any(b):
        return OptimizeResult(np.zeros_like(b), 0.0, np.zeros_like(b), True, 0, 1,
                              np.zeros((1, b.size)), "b = 0: the solution is x = 0")
    c = _power_of_two_scale(np.max(np.abs(b)), normal=True)     # A (x / c) = b / c, exact: r'r of b ~1e+-300
    b, x = b / c, x / c                                          # overflowed or underflowed
    r = b - matvec(x)              # the residual, minus the gradient of x'Ax/2 - b'x
    p, rr = r.copy(), float(r @ r)
    path, k, top, products = [x * c], 0, 0.0, 1
    bnorm = np.linalg.norm(b)
    for k in range(1, max_iter + 1):
        if np.sqrt(rr) <= tol * bnorm:
            # only the true residual counts (the updated r drifts: at condition 1e10 9e-11 of b, b - A x 1.2e-7)
            r, products = b - matvec(x), products + 1
            rr = float(r @ r)
            if np.sqrt(rr) <= tol * bnorm:
                k -= 1
                break
            p = r.copy()
        Ap = matvec(p)
        pAp = float(p @ Ap)
        top = _checked_curvature(pAp, p, top)
        alpha = rr / pAp
        x = x + alpha * p
        r = r - alpha * Ap
        rr_new = float(r @ r)
        p, rr = r + (rr_new / rr) * p, rr_new
        path.append(x * c)
    Ax = matvec(x)
    r = b - Ax                              # the true residual, as the loop's last test read it
    converged = bool(np.linalg.norm(r) <= tol * bnorm)
    with np.errstate(over="ignore"):        # x'Ax/2 - b'x scales with c^2: it may overflow where x does not
        fun = float(0.5 * x @ Ax - b @ x) * c * c
    return OptimizeResult(x * c, fun, -r * c, converged, k, k + products + 1, np.array(path),
                          "residual below tol * ||b||" if converged else _msg_max_iter(k))


def _checked_curvature(pAp, p, top):
    """The largest curvature ``p'Ap / p'p`` seen so far (with ``top``, the one before), or a clear error where ``A`` is
    not finite, not positive definite, or singular to rounding (a curvature below ``16 eps`` times the largest:
    ``b`` outside the range of a singular ``A`` made ``alpha`` overflow, then "A v is not finite; check A for
    NaN/inf" was said of a finite ``A``)."""
    if not np.isfinite(pAp):
        raise ValueError("conjugate_gradient: A v is not finite; check A for NaN/inf")
    if pAp <= 0:
        raise ValueError("conjugate_gradient needs a positive definite A (found p'Ap <= 0); use a "
                         "general solver (or add lam I to A) for an indefinite one")
    curvature = pAp / float(p @ p)
    if curvature <= 16 * np.finfo(float).eps * top:
        raise ValueError(f"conjugate_gradient: A is singular to rounding (p'Ap / p'p = {curvature:.3g} along one "
                         f"direction, {top:.3g} along another), so A x = b has no solution or no unique one; add "
                         "lam I to A, or solve in the least-squares sense (numpy.linalg.lstsq)")
    return max(top, curvature)


def _linear_system(A, b, x0):
    """``(matvec, b, x0)``: ``v -> A v`` for a matrix (dense or sparse) or callable ``A``, ``b`` as a
    finite real vector and the start (zeros by default), or a clear error."""
    if not (callable(A) or (hasattr(A, "toarray") and not np.iscomplexobj(A))):   # sparse A works as is
        A = real_array(A, "A")
    if not callable(A) and (A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] != np.size(b)):
        raise ValueError(f"conjugate_gradient needs A of shape (d, d) for b of {np.size(b)} entries; got A of shape "
                         f"{A.shape}. Pass a square A with one row per entry of b")
    if not callable(A) and _largest(A - A.T) > 1e-12 * _largest(A):
        raise ValueError("conjugate_gradient needs a symmetric A (A != A'; CG would return a wrong x); "
                         "use a general solver, or pass (A + A') / 2 if A is symmetric up to rounding")
    matvec = _checked_matvec(A) if callable(A) else (lambda v, A=A: A @ v)
    b = real_array(b, "b").ravel()
    if not np.all(np.isfinite(b)):
        raise ValueError("conjugate_gradient: b must be finite (no NaN or inf); pass a finite b")
    return matvec, b, np.zeros_like(b) if x0 is None else _x0(x0)


def _checked_matvec(A):
    """``v -> A(v)`` for a callable ``A``, refusing a product that is not a real vector of ``v``'s shape."""
    def matvec(v):
        Av = real_array(A(v), "A v (from the callable A)")
        if Av.shape != v.shape:
            raise ValueError(f"conjugate_gradient: the callable A returned shape {Av.shape} for v of shape {v.shape}; "
                             "fix A to return the product A v, one entry per entry of b")
        return Av
    return matvec


def _largest(M):
    """``max |M_ij|`` of a dense or sparse matrix (0 for one without entries)."""
    return float(abs(M).max()) if M.size else 0.0


@checked_arguments
def nonlinear_cg(fun, x0, grad=None, *, max_iter=1000, gtol=1e-6, xtol=0.0, gscale=None):
    """Nonlinear conjugate gradients (Polak-Ribiere+, restarted) with a Wolfe line search.

    ``d_k = -g_k + beta_k d_{k-1}``, ``beta_k = max(0, g_k'(g_k - g_{k-1}) / g_{k-1}'g_{k-1})``.
    Stopping rules as :func:`gradient_descent`.

    Returns
    -------
    OptimizeResult
        ``converged`` only at a minimum (a stationary ``x0``, or a run confined to a subspace, is probed:
        ``result._verdict``).

    Derived in: chapter "Optimizers" § "Conjugate gradients".
    """
    fg = _Counted(fun, grad)
    x = _x0(x0)
    (f, g), scale, early = _start(fg, x, gtol, gscale)
    if early:
        return early
    d = -g
    path, converged, k, msg = [x.copy()], False, 0, _msg_max_iter(max_iter)
    c = _power_of_two_scale(np.max(np.abs(g)))
    t_prev = 1.0 / max(c * np.linalg.norm(g / c), 1e-300)     # 1 / ||g||, whose square would underflow
    for k in range(1, max_iter + 1):
        if g @ d >= 0:
            d = -g
        # d is in the units of g: the search runs along d / c (c a power of two near max |d|), so that g'd does
        # not underflow (|g| ~ 1e-158 made g'g ~ 1e-316, and a failed search passed for convergence) or overflow
        c = _power_of_two_scale(np.max(np.abs(d)))
        t, f_new, g_new, _ = _wolfe(fg, x, f, g, d / c, t0=2 * t_prev * c, c2=0.1)
        if t == 0.0:
            msg, converged = _no_decrease(g, gtol, scale, fg)
            k -= 1
            break
        t = t / c
        x_new = x + t * d
        small = _small_step(x_new - x, x, xtol)
        beta = _polak_ribiere(g_new, g)
        x, f, g, t_prev = x_new, f_new, g_new, t
        d = -g + beta * d
        path.append(x.copy())
        stop = _stop_reason(fg, g, gtol, scale, small)
        if stop:
            converged, msg = stop
            break
    converged, msg = _verdict(fg, path, x, f, g, scale, converged, msg, convex=_declared_convex(fg))
    return OptimizeResult(x, f, g, converged, k, fg.n, np.array(path), msg)


def _polak_ribiere(g_new, g):
    """``max(0, g_new'(g_new - g) / g'g)`` on both gradients divided by a power of two near ``max |g|`` (exact, the
    same ratio): ``g'g`` of a gradient near 1e-158 underflowed to 0 (ZeroDivisionError), one near 1e155 overflowed."""
    c = _power_of_two_scale(np.max(np.abs(g)))
    u, v = g_new / c, g / c
    return max(0.0, float(u @ (u - v)) / float(v @ v))

