"""First- and second-order optimizers, written out as the book teaches them.

Every optimizer minimises a smooth function and returns an :class:`OptimizeResult`
with the solution ``x``, the final value ``fun``, the final gradient ``grad``, a
``converged`` flag, the number of iterations ``n_iter``, the number of function
evaluations ``n_fev`` and the ``path`` of iterates (an array of shape
``(n_iter + 1, d)``, for contour plots).

Objectives are passed as ``fun(x) -> float`` and ``grad(x) -> ndarray``; or as one
function returning both, ``fun(x) -> (f, g)``, with ``grad=True`` (as ``jac=True`` in
``scipy.optimize.minimize``). Hessians are ``hess(x) -> (d, d) ndarray``.

Convergence (all methods): ``max |grad| <= gtol`` or a step with
``max |x_new - x| <= xtol * (1 + max |x|)``.

Derived in: chapter "Optimizers" (one section per method).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

from .numerics import log1pexp, sigmoid

__all__ = [
    "OptimizeResult", "backtracking", "wolfe_line_search", "gradient_descent", "momentum",
    "conjugate_gradient", "nonlinear_cg", "newton", "truncated_newton", "irls", "bfgs",
    "lbfgs", "levenberg_marquardt", "bfgs_update_B", "bfgs_update_H", "lbfgs_two_loop",
]


@dataclass
class OptimizeResult:
    """Result of a linbook optimizer.

    Attributes
    ----------
    x : ndarray
        The solution found.
    fun : float
        Objective at ``x``.
    grad : ndarray
        Gradient at ``x`` (``None`` where a method has no gradient).
    converged : bool
        Whether the convergence test passed before ``max_iter``.
    n_iter : int
        Number of iterations (steps) taken.
    n_fev : int
        Number of objective evaluations (line-search trials included).
    path : ndarray
        Iterates, shape ``(n_iter + 1, d)``; row 0 is the starting point.
    message : str
        Why the method stopped.

    Derived in: chapter "Optimizers" § "Gradient descent".
    """

    x: np.ndarray
    fun: float
    grad: np.ndarray = None
    converged: bool = False
    n_iter: int = 0
    n_fev: int = 0
    path: np.ndarray = field(default=None, repr=False)
    message: str = ""


class _Counted:
    """Wraps ``fun``/``grad`` into one ``fg(x) -> (f, g)`` that counts evaluations."""

    def __init__(self, fun, grad):
        self.n = 0
        if grad is True:
            self._fg = fun
        elif callable(grad):
            self._fg = lambda x: (fun(x), grad(x))
        else:
            raise ValueError("grad must be a callable, or True when fun returns (f, g)")

    def __call__(self, x):
        self.n += 1
        with np.errstate(over="ignore", invalid="ignore"):   # divergence is reported, not warned
            f, g = self._fg(x)
        f = float(f)
        g = np.asarray(g, dtype=float)
        if not np.isfinite(f) or not np.all(np.isfinite(g)):
            return np.inf, g
        return f, g


def _x0(x0):
    x = np.array(x0, dtype=float).ravel()
    if not np.all(np.isfinite(x)):
        raise ValueError("x0 must be finite")
    return x


def _small_step(step, x, xtol):
    return np.max(np.abs(step), initial=0.0) <= xtol * (1.0 + np.max(np.abs(x), initial=0.0))


def backtracking(fg, x, f, g, d, *, t0=1.0, c1=1e-4, shrink=0.5, max_halvings=60):
    """Backtracking (Armijo) line search.

    Shrinks ``t`` from ``t0`` by ``shrink`` until the sufficient-decrease condition
    ``f(x + t d) <= f(x) + c1 t g'd`` holds.

    Returns
    -------
    t, f_new, g_new, n_eval : float, float, ndarray, int
        ``t = 0`` when no decrease was found (``d`` not a descent direction or rounding).

    Derived in: chapter "Optimizers" § "Line search".
    """
    slope = float(g @ d)
    t = t0
    for k in range(1, max_halvings + 1):
        f_new, g_new = fg(x + t * d)
        if f_new <= f + c1 * t * slope:
            return t, f_new, g_new, k
        t *= shrink
    return 0.0, f, g, max_halvings


def wolfe_line_search(fg, x, f, g, d, *, t0=1.0, c1=1e-4, c2=0.9, max_eval=30):
    """Line search for the strong Wolfe conditions (Nocedal and Wright, Algorithms 3.5-3.6).

    Finds ``t`` with ``f(x + t d) <= f + c1 t g'd`` and ``|g(x + t d)'d| <= c2 |g'd|``,
    which guarantees the curvature ``y's > 0`` that keeps (L-)BFGS positive definite.
    Bracketing, then zoom by safeguarded cubic interpolation.

    Returns
    -------
    t, f_new, g_new, n_eval : float, float, ndarray, int
        ``t = 0`` when the search failed.

    Derived in: chapter "Optimizers" § "Quasi-Newton methods".
    """
    phi0, dphi0 = f, float(g @ d)
    if dphi0 >= 0:
        return 0.0, f, g, 0
    n = 0
    # Near the optimum f changes by less than its rounding error; then accept the
    # "approximate Wolfe" conditions of Hager and Zhang (2005): f did not rise beyond
    # rounding and the slope fell, dphi(t) <= (2 c1 - 1) dphi(0).
    eps_f = 1e-14 * abs(phi0)

    def approx_ok(phi, dphi):
        return phi <= phi0 + eps_f and (2 * c1 - 1) * dphi0 >= dphi >= c2 * dphi0

    t_prev, phi_prev, dphi_prev = 0.0, phi0, dphi0
    t = t0
    lo = hi = None
    while n < max_eval:
        phi, gt = fg(x + t * d)
        n += 1
        dphi = float(gt @ d)
        if approx_ok(phi, dphi):
            return t, phi, gt, n
        if phi > phi0 + c1 * t * dphi0 or (n > 1 and phi >= phi_prev):
            lo, hi = (t_prev, phi_prev, dphi_prev), (t, phi, dphi)
            break
        if abs(dphi) <= -c2 * dphi0:
            return t, phi, gt, n
        if dphi >= 0:
            lo, hi = (t, phi, dphi), (t_prev, phi_prev, dphi_prev)
            break
        t_prev, phi_prev, dphi_prev = t, phi, dphi
        t = 2.0 * t
    else:
        return 0.0, f, g, n
    best = None
    while n < max_eval:
        (ta, fa, da), (tb, fb, db) = lo, hi
        # cubic interpolation between the bracket ends, safeguarded to the middle 80%
        tj = _cubic_min(ta, fa, da, tb, fb, db)
        a, b = min(ta, tb), max(ta, tb)
        if not np.isfinite(tj) or tj < a + 0.1 * (b - a) or tj > b - 0.1 * (b - a):
            tj = 0.5 * (a + b)
        phi, gt = fg(x + tj * d)
        n += 1
        dphi = float(gt @ d)
        if approx_ok(phi, dphi):
            return tj, phi, gt, n
        if phi > phi0 + c1 * tj * dphi0 or phi >= fa:
            hi = (tj, phi, dphi)
        else:
            if abs(dphi) <= -c2 * dphi0:
                return tj, phi, gt, n
            best = (tj, phi, gt)
            if dphi * (tb - ta) >= 0:
                hi = lo
            lo = (tj, phi, dphi)
        if abs(hi[0] - lo[0]) <= 1e-12 * max(1.0, abs(lo[0])):
            break
    if best is not None or lo[0] > 0:
        # sufficient decrease holds at lo: accept it even if curvature is not met
        t_lo = lo[0]
        if t_lo > 0:
            phi, gt = fg(x + t_lo * d)
            return t_lo, phi, gt, n + 1
    return 0.0, f, g, n


def _cubic_min(a, fa, da, b, fb, db):
    d1 = da + db - 3 * (fa - fb) / (a - b)
    disc = d1 * d1 - da * db
    if disc < 0:
        return np.nan
    d2 = np.sign(b - a) * np.sqrt(disc)
    denom = db - da + 2 * d2
    if denom == 0:
        return np.nan
    return b - (b - a) * (db + d2 - d1) / denom


def gradient_descent(fun, x0, grad=None, *, step="backtracking", hess=None, max_iter=1000,
                     gtol=1e-6, xtol=0.0, c1=1e-4, shrink=0.5):
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
    max_iter, gtol, xtol : convergence controls (see the module docstring).

    Returns
    -------
    OptimizeResult

    Derived in: chapter "Optimizers" § "Gradient descent".
    """
    fg = _Counted(fun, grad)
    x = _x0(x0)
    f, g = fg(x)
    path, converged, msg = [x.copy()], False, "max_iter reached"
    if isinstance(step, str) and step not in ("backtracking", "exact"):
        raise ValueError("step must be a positive float, 'backtracking' or 'exact'")
    if step == "exact" and hess is None:
        raise ValueError("step='exact' needs hess=A (exact line search is for quadratics)")
    if not isinstance(step, str) and not step > 0:
        raise ValueError("a fixed step must be positive")
    k = 0
    for k in range(1, max_iter + 1):
        if np.max(np.abs(g)) <= gtol:
            converged, msg, k = True, "gradient below gtol", k - 1
            break
        d = -g
        if step == "backtracking":
            t, f_new, g_new, _ = backtracking(fg, x, f, g, d, c1=c1, shrink=shrink)
            if t == 0.0:
                msg, k = "line search failed (at rounding level if converged)", k - 1
                converged = bool(np.max(np.abs(g)) <= 1e3 * gtol)
                break
        else:
            if step == "exact":
                A = hess(x) if callable(hess) else np.asarray(hess, dtype=float)
                t = float(g @ g) / float(g @ A @ g)
            else:
                t = float(step)
            f_new, g_new = fg(x + t * d)
        x_new = x + t * d
        small = _small_step(x_new - x, x, xtol)
        x, f, g = x_new, f_new, g_new
        path.append(x.copy())
        if not np.isfinite(f):
            msg = "diverged (objective not finite): reduce the step size"
            break
        if small:
            converged, msg = True, "step below xtol"
            break
    else:
        if np.max(np.abs(g)) <= gtol:
            converged, msg = True, "gradient below gtol"
    return OptimizeResult(x, f, g, converged, k, fg.n, np.array(path), msg)


def momentum(fun, x0, grad=None, *, lr=0.1, beta=0.9, max_iter=1000, gtol=1e-6):
    """Heavy-ball (Polyak momentum) gradient descent.

    ``x_{k+1} = x_k - lr g_k + beta (x_k - x_{k-1})``.

    Parameters
    ----------
    fun, grad, x0 : see :func:`gradient_descent`.
    lr : float
        Step size.
    beta : float
        Momentum coefficient in [0, 1).

    Returns
    -------
    OptimizeResult

    Derived in: chapter "Optimizers" § "Momentum".
    """
    if not (0 <= beta < 1) or not lr > 0:
        raise ValueError("need lr > 0 and 0 <= beta < 1")
    fg = _Counted(fun, grad)
    x = _x0(x0)
    x_prev = x.copy()
    f, g = fg(x)
    path, converged, k = [x.copy()], False, 0
    for k in range(1, max_iter + 1):
        if np.max(np.abs(g)) <= gtol:
            converged, k = True, k - 1
            break
        x_new = x - lr * g + beta * (x - x_prev)
        x_prev, x = x, x_new
        f, g = fg(x)
        path.append(x.copy())
        if not np.isfinite(f):
            break
    else:
        converged = bool(np.max(np.abs(g)) <= gtol)
    return OptimizeResult(x, f, g, converged, k, fg.n, np.array(path),
                          "converged" if converged else "not converged")


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
        Stop when ``||r|| <= tol * ||b||``.
    max_iter : int, optional (``10 d``)

    Returns
    -------
    OptimizeResult
        ``grad`` is ``A x - b`` (minus the residual); ``fun`` is ``x'Ax/2 - b'x``.

    Derived in: chapter "Optimizers" § "Conjugate gradients".
    """
    matvec = A if callable(A) else (lambda v, A=np.asarray(A, dtype=float): A @ v)
    b = np.asarray(b, dtype=float).ravel()
    x = np.zeros_like(b) if x0 is None else _x0(x0)
    max_iter = 10 * b.size if max_iter is None else max_iter
    r = b - matvec(x)
    p = r.copy()
    rr = float(r @ r)
    path, converged, k = [x.copy()], False, 0
    bnorm = max(np.linalg.norm(b), 1e-300)
    for k in range(1, max_iter + 1):
        if np.sqrt(rr) <= tol * bnorm:
            converged, k = True, k - 1
            break
        Ap = matvec(p)
        pAp = float(p @ Ap)
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
                          "converged" if converged else "not converged")


def nonlinear_cg(fun, x0, grad=None, *, max_iter=1000, gtol=1e-6, xtol=0.0):
    """Nonlinear conjugate gradients (Polak-Ribiere+, restarted) with a Wolfe line search.

    ``d_k = -g_k + beta_k d_{k-1}``, ``beta_k = max(0, g_k'(g_k - g_{k-1}) / g_{k-1}'g_{k-1})``.

    Returns
    -------
    OptimizeResult

    Derived in: chapter "Optimizers" § "Conjugate gradients".
    """
    fg = _Counted(fun, grad)
    x = _x0(x0)
    f, g = fg(x)
    d = -g
    path, converged, k, msg = [x.copy()], False, 0, "max_iter reached"
    t_prev = 1.0 / max(np.linalg.norm(g), 1e-300)
    for k in range(1, max_iter + 1):
        if np.max(np.abs(g)) <= gtol:
            converged, k, msg = True, k - 1, "gradient below gtol"
            break
        if g @ d >= 0:
            d = -g
        t, f_new, g_new, _ = wolfe_line_search(fg, x, f, g, d, t0=min(1.0, 2 * t_prev), c2=0.1)
        if t == 0.0:
            msg, k = "line search failed (at rounding level if converged)", k - 1
            converged = bool(np.max(np.abs(g)) <= 1e3 * gtol)
            break
        x_new = x + t * d
        small = _small_step(x_new - x, x, xtol)
        beta = max(0.0, float(g_new @ (g_new - g)) / float(g @ g))
        x, f, g, t_prev = x_new, f_new, g_new, t
        d = -g + beta * d
        path.append(x.copy())
        if small:
            converged, msg = True, "step below xtol"
            break
    else:
        converged = bool(np.max(np.abs(g)) <= gtol)
    return OptimizeResult(x, f, g, converged, k, fg.n, np.array(path), msg)


def _solve_pd(H, g):
    """Solve ``H d = g`` by Cholesky; ``None`` if ``H`` is not positive definite."""
    try:
        c = scipy.linalg.cho_factor(H, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        return None
    return scipy.linalg.cho_solve(c, g, check_finite=False)


def newton(fun, x0, grad=None, hess=None, *, line_search=True, max_iter=100, gtol=1e-8,
           xtol=1e-12, damping=None):
    """Newton's method with a backtracking line search (Algorithm 8.1 of MLAPP).

    Direction ``d = -H^{-1} g`` by Cholesky. When ``H`` is not positive definite the
    direction is not a descent direction; then ``H + tau I`` is used with ``tau``
    increased until Cholesky succeeds (a Levenberg-Marquardt style fix).

    Parameters
    ----------
    fun, grad, x0 : see :func:`gradient_descent`.
    hess : callable
        ``hess(x) -> (d, d)``.
    line_search : bool
        Armijo backtracking from t = 1 (``False``: always the full step t = 1).
    damping : float, optional
        If given, always use ``H + damping I``.

    Returns
    -------
    OptimizeResult

    Derived in: chapter "Optimizers" § "Newton's method".
    """
    if hess is None:
        raise ValueError("newton needs hess")
    fg = _Counted(fun, grad)
    x = _x0(x0)
    f, g = fg(x)
    path, converged, k, msg = [x.copy()], False, 0, "max_iter reached"
    for k in range(1, max_iter + 1):
        if np.max(np.abs(g)) <= gtol:
            converged, k, msg = True, k - 1, "gradient below gtol"
            break
        H = np.atleast_2d(np.asarray(hess(x), dtype=float))
        tau = 0.0 if damping is None else float(damping)
        while True:
            d = _solve_pd(H + tau * np.eye(x.size), -g)
            if d is not None and g @ d < 0:
                break
            tau = max(2 * tau, 1e-8 * max(1.0, np.abs(H).max()))
            if tau > 1e20:
                raise ValueError("Hessian is not usable (not finite?)")
        if line_search:
            t, f_new, g_new, _ = backtracking(fg, x, f, g, d)
            if t == 0.0:
                msg, k = "line search failed (at machine precision)", k - 1
                converged = bool(np.max(np.abs(g)) <= 1e3 * gtol)
                break
        else:
            t = 1.0
            f_new, g_new = fg(x + d)
        x_new = x + t * d
        small = _small_step(x_new - x, x, xtol)
        x, f, g = x_new, f_new, g_new
        path.append(x.copy())
        if small:
            converged, msg = True, "step below xtol"
            break
    else:
        converged = bool(np.max(np.abs(g)) <= gtol)
    return OptimizeResult(x, f, g, converged, k, fg.n, np.array(path), msg)


def truncated_newton(fun, x0, grad=None, hessp=None, *, max_iter=100, gtol=1e-8, cg_max_iter=None):
    """Truncated Newton (Newton-CG): solve ``H d = -g`` only approximately by CG.

    CG stops at the forcing tolerance ``||r|| <= min(0.5, sqrt(||g||)) ||g||`` or when it
    meets negative curvature (then it returns the last direction, or ``-g``). Only
    Hessian-vector products ``hessp(x, v)`` are needed, never the Hessian itself.

    Returns
    -------
    OptimizeResult

    Derived in: chapter "Optimizers" § "Newton's method".
    """
    if hessp is None:
        raise ValueError("truncated_newton needs hessp(x, v)")
    fg = _Counted(fun, grad)
    x = _x0(x0)
    f, g = fg(x)
    path, converged, k, msg = [x.copy()], False, 0, "max_iter reached"
    cg_max_iter = 2 * x.size if cg_max_iter is None else cg_max_iter
    for k in range(1, max_iter + 1):
        gnorm = np.linalg.norm(g)
        if np.max(np.abs(g)) <= gtol:
            converged, k, msg = True, k - 1, "gradient below gtol"
            break
        eps = min(0.5, np.sqrt(gnorm)) * gnorm
        d = np.zeros_like(x)
        r = -g.copy()
        p = r.copy()
        for _ in range(cg_max_iter):
            Hp = hessp(x, p)
            pHp = float(p @ Hp)
            if pHp <= 0:
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
            msg, k = "line search failed", k - 1
            converged = bool(np.max(np.abs(g)) <= 1e3 * gtol)
            break
        x = x + t * d
        f, g = f_new, g_new
        path.append(x.copy())
    else:
        converged = bool(np.max(np.abs(g)) <= gtol)
    return OptimizeResult(x, f, g, converged, k, fg.n, np.array(path), msg)


def irls(X, y, w0=None, *, lam=0.0, max_iter=100, tol=1e-10):
    """Iteratively reweighted least squares for logistic regression (Algorithm 8.2 of MLAPP).

    Minimises ``NLL(w) + (lam/2) ||w||^2`` with ``NLL(w) = sum_i [log(1 + exp(w'x_i)) - y_i w'x_i]``
    for ``y_i`` in {0, 1} (no separate intercept: add a column of ones to ``X`` and note
    that ``lam`` then penalises it too). Each step solves the weighted least-squares problem

    ``w_new = argmin sum_i s_i (z_i - w'x_i)^2 + lam ||w||^2``, with weights
    ``s_i = mu_i (1 - mu_i)`` and working response ``z_i = w'x_i + (y_i - mu_i) / s_i``,

    i.e. ``w_new = (X'SX + lam I)^{-1} X'S z``, which is exactly the Newton step. For a
    large, fast implementation with intercept see :class:`linbook.LogisticRegression`.

    Returns
    -------
    OptimizeResult
        ``fun`` is the penalised NLL.

    Derived in: chapter "Optimizers" § "IRLS".
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float).ravel()
    if X.ndim != 2 or X.shape[0] != y.size:
        raise ValueError("X must be (N, D) and y (N,)")
    if not np.all(np.isin(y, (0.0, 1.0))):
        raise ValueError("irls needs labels y in {0, 1}")
    w = np.zeros(X.shape[1]) if w0 is None else _x0(w0)

    def objective(w):
        a = X @ w
        return float(np.sum(log1pexp(a) - y * a) + 0.5 * lam * w @ w)

    path, converged, k = [w.copy()], False, 0
    for k in range(1, max_iter + 1):
        a = X @ w
        mu = sigmoid(a)
        s = np.maximum(mu * (1 - mu), 1e-300)
        z = a + (y - mu) / s                     # working response
        A = X.T @ (s[:, None] * X) + lam * np.eye(X.shape[1])
        w_new = scipy.linalg.solve(A, X.T @ (s * z), assume_a="pos")
        step = w_new - w
        w = w_new
        path.append(w.copy())
        if _small_step(step, w, tol):
            converged = True
            break
    a = X @ w
    g = X.T @ (sigmoid(a) - y) + lam * w
    return OptimizeResult(w, objective(w), g, converged, k, k + 1, np.array(path),
                          "converged" if converged else "max_iter reached")


def bfgs_update_B(B, s, y):
    """BFGS update of the Hessian approximation (MLAPP eq. 8.26).

    ``B_new = B + y y'/(y's) - (B s)(B s)'/(s'B s)``; satisfies the secant condition
    ``B_new s = y`` and stays positive definite when ``y's > 0``.

    Derived in: chapter "Optimizers" § "Quasi-Newton methods".
    """
    Bs = B @ s
    return B + np.outer(y, y) / float(y @ s) - np.outer(Bs, Bs) / float(s @ Bs)


def bfgs_update_H(H, s, y):
    """BFGS update of the inverse-Hessian approximation (MLAPP eq. 8.28).

    ``H_new = (I - rho s y') H (I - rho y s') + rho s s'`` with ``rho = 1/(y's)``; this is
    the inverse of :func:`bfgs_update_B` applied to ``B = H^{-1}``.

    Derived in: chapter "Optimizers" § "Quasi-Newton methods".
    """
    rho = 1.0 / float(y @ s)
    Hy = H @ y
    # expanded form of (I - rho s y') H (I - rho y s') + rho s s', O(d^2)
    return (H - rho * (np.outer(s, Hy) + np.outer(Hy, s))
            + (rho * rho * float(y @ Hy) + rho) * np.outer(s, s))


def bfgs(fun, x0, grad=None, *, form="H", max_iter=1000, gtol=1e-6, xtol=0.0, B0=None):
    """BFGS quasi-Newton method with a Wolfe line search.

    Parameters
    ----------
    form : "H" or "B"
        Update the inverse Hessian ``H`` (direction ``-H g``, O(d^2) per step) or the
        Hessian ``B`` (direction by solving ``B d = -g``, O(d^3) per step). In exact
        arithmetic the two produce the same iterates.
    B0 : (d, d) array, optional
        Initial Hessian approximation (default: identity, scaled after the first step
        by ``y'y / y's``, Nocedal and Wright eq. 6.20).

    Returns
    -------
    OptimizeResult

    Derived in: chapter "Optimizers" § "Quasi-Newton methods".
    """
    if form not in ("H", "B"):
        raise ValueError("form must be 'H' or 'B'")
    fg = _Counted(fun, grad)
    x = _x0(x0)
    n = x.size
    f, g = fg(x)
    M = np.eye(n) if B0 is None else (np.array(B0, float) if form == "B" else np.linalg.inv(B0))
    scaled = B0 is not None
    path, converged, k, msg = [x.copy()], False, 0, "max_iter reached"
    for k in range(1, max_iter + 1):
        if np.max(np.abs(g)) <= gtol:
            converged, k, msg = True, k - 1, "gradient below gtol"
            break
        d = -M @ g if form == "H" else scipy.linalg.solve(M, -g, assume_a="pos")
        t0 = 1.0 if (scaled or k > 1) else min(1.0, 1.0 / max(np.abs(g).sum(), 1e-300))
        t, f_new, g_new, _ = wolfe_line_search(fg, x, f, g, d, t0=t0)
        if t == 0.0:
            msg, k = "line search failed", k - 1
            converged = bool(np.max(np.abs(g)) <= 1e3 * gtol)
            break
        s = t * d
        yv = g_new - g
        x_new = x + s
        small = _small_step(s, x, xtol)
        x, f, g = x_new, f_new, g_new
        path.append(x.copy())
        sy = float(s @ yv)
        if sy > 1e-12 * np.linalg.norm(s) * np.linalg.norm(yv):
            if not scaled:
                gamma = sy / float(yv @ yv)          # initial scaling, N&W (6.20)
                M = gamma * np.eye(n) if form == "H" else np.eye(n) / gamma
                scaled = True
            M = bfgs_update_H(M, s, yv) if form == "H" else bfgs_update_B(M, s, yv)
        if small:
            converged, msg = True, "step below xtol"
            break
    else:
        converged = bool(np.max(np.abs(g)) <= gtol)
    return OptimizeResult(x, f, g, converged, k, fg.n, np.array(path), msg)


def lbfgs_two_loop(g, S, Y, gamma=None):
    """L-BFGS two-loop recursion: returns ``H g`` for the implicit inverse Hessian.

    ``S`` and ``Y`` are lists of the last ``m`` pairs ``s_i = x_{i+1} - x_i`` and
    ``y_i = g_{i+1} - g_i`` (oldest first); the initial matrix is ``gamma I`` with
    ``gamma = s'y / y'y`` of the newest pair (or 1 without pairs). Equal to applying
    :func:`bfgs_update_H` ``m`` times to ``gamma I``, in O(m d) instead of O(d^2).

    Derived in: chapter "Optimizers" § "Quasi-Newton methods: BFGS and L-BFGS".
    """
    q = np.array(g, dtype=float)
    m = len(S)
    alpha = np.empty(m)
    rho = [1.0 / float(Y[i] @ S[i]) for i in range(m)]
    for i in range(m - 1, -1, -1):
        alpha[i] = rho[i] * float(S[i] @ q)
        q -= alpha[i] * Y[i]
    if gamma is None:
        gamma = float(S[-1] @ Y[-1]) / float(Y[-1] @ Y[-1]) if m else 1.0
    r = gamma * q
    for i in range(m):
        beta = rho[i] * float(Y[i] @ r)
        r += (alpha[i] - beta) * S[i]
    return r


def lbfgs(fun, x0, grad=None, *, m=10, max_iter=1000, gtol=1e-6, xtol=0.0, ftol=0.0):
    """Limited-memory BFGS with the two-loop recursion and a Wolfe line search.

    Parameters
    ----------
    m : int
        Number of stored pairs ``(s, y)``.
    ftol : float
        Also stop when ``(f_old - f_new) <= ftol * max(|f_old|, |f_new|, 1)``.

    Returns
    -------
    OptimizeResult

    Derived in: chapter "Optimizers" § "Quasi-Newton methods: BFGS and L-BFGS".
    """
    fg = _Counted(fun, grad)
    x = _x0(x0)
    f, g = fg(x)
    S, Y = [], []
    path, converged, k, msg = [x.copy()], False, 0, "max_iter reached"
    for k in range(1, max_iter + 1):
        if np.max(np.abs(g)) <= gtol:
            converged, k, msg = True, k - 1, "gradient below gtol"
            break
        d = -lbfgs_two_loop(g, S, Y)
        t0 = 1.0 if S else min(1.0, 1.0 / max(np.abs(g).sum(), 1e-300))
        t, f_new, g_new, _ = wolfe_line_search(fg, x, f, g, d, t0=t0)
        if t == 0.0:
            if S:            # drop the memory and retry with steepest descent once
                S, Y = [], []
                d = -g
                t, f_new, g_new, _ = wolfe_line_search(
                    fg, x, f, g, d, t0=min(1.0, 1.0 / max(np.abs(g).sum(), 1e-300)))
            if t == 0.0:
                msg, k = "line search failed", k - 1
                converged = bool(np.max(np.abs(g)) <= 1e3 * gtol)
                break
        s = t * d
        yv = g_new - g
        small = _small_step(s, x, xtol)
        fsmall = (f - f_new) <= ftol * max(abs(f), abs(f_new), 1.0)
        x, f, g = x + s, f_new, g_new
        path.append(x.copy())
        if float(s @ yv) > 1e-12 * np.linalg.norm(s) * np.linalg.norm(yv):
            S.append(s)
            Y.append(yv)
            if len(S) > m:
                S.pop(0)
                Y.pop(0)
        if small or (ftol > 0 and fsmall):
            converged, msg = True, "step below xtol" if small else "decrease below ftol"
            break
    else:
        converged = bool(np.max(np.abs(g)) <= gtol)
    return OptimizeResult(x, f, g, converged, k, fg.n, np.array(path), msg)


def levenberg_marquardt(residual, x0, jac=None, *, lam0=1e-3, max_iter=200, gtol=1e-10, xtol=1e-12):
    """Levenberg-Marquardt for nonlinear least squares ``min (1/2) ||r(x)||^2``.

    Step ``(J'J + lam I) d = -J'r``: Gauss-Newton for small ``lam``, a short gradient step
    for large ``lam``. ``lam`` is divided by 10 after a step that lowers the objective
    and multiplied by 10 (step rejected) otherwise.

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
    r = np.asarray(residual(x), float)
    J = np.asarray(jac(x), float)
    f = 0.5 * float(r @ r)
    n_fev, lam = 1, float(lam0)
    path, converged, k, msg = [x.copy()], False, 0, "max_iter reached"
    for k in range(1, max_iter + 1):
        g = J.T @ r
        if np.max(np.abs(g)) <= gtol:
            converged, k, msg = True, k - 1, "gradient below gtol"
            break
        A = J.T @ J
        while True:
            d = scipy.linalg.solve(A + lam * np.eye(x.size), -g, assume_a="pos")
            r_new = np.asarray(residual(x + d), float)
            n_fev += 1
            f_new = 0.5 * float(r_new @ r_new)
            if np.isfinite(f_new) and f_new < f:
                lam = max(lam / 10, 1e-15)
                break
            lam *= 10
            if lam > 1e16:
                d = None
                break
        if d is None:
            msg, k = "no decrease possible", k - 1
            converged = bool(np.max(np.abs(g)) <= 1e3 * gtol) or f == 0.0
            break
        small = _small_step(d, x, xtol)
        x = x + d
        r, f = r_new, f_new
        J = np.asarray(jac(x), float)
        path.append(x.copy())
        if small:
            converged, msg = True, "step below xtol"
            break
    else:
        converged = bool(np.max(np.abs(J.T @ r)) <= gtol)
    return OptimizeResult(x, f, J.T @ r, converged, k, n_fev, np.array(path), msg)
