"""Truncated Newton (Newton-CG): Newton's step from Hessian-vector products only.

Newton's step solves ``H d = -g``. Forming ``H`` costs ``N D^2`` for a GLM (and ``D^2`` memory,
out of reach for ``D = 50,000`` text features), but the product ``H v = X'(S (X v)) + lam v``
costs two passes over the non-zeros of ``X``. Conjugate gradients (CG) solve ``H d = -g``
with such products alone, and need not solve it exactly: far from the optimum a rough
direction is as good as the exact one. Each step::

    eta = min(1/2, sqrt(||g|| / ||g_0||))      # forcing term: tighter as the gradient shrinks
    d   = CG on H d = -g until ||H d + g|| <= eta ||g||     (preconditioned by diag(H))
    x   = x + t d                              # Armijo backtracking from t = 1

(Nocedal and Wright, Algorithm 7.1; the forcing term gives superlinear convergence, as
Eisenstat and Walker's.) CG starts at ``d = 0``, so its first iterate is a (scaled)
steepest-descent direction and every later one decreases the quadratic model further:
``d`` is a descent direction whenever ``H`` is positive definite. On negative or zero
curvature CG returns what it has (``-g`` if nothing). The stopping test is that of every
:mod:`linbook.optim` method: ``max |g| / gscale <= gtol``.

Derived in: chapter "Optimizers" § "Newton's method".
"""

from __future__ import annotations

import numpy as np

from ..numerics import _power_of_two_scale
from .line_search import _armijo, _flat_step
from .result import (OptimizeResult, _Counted, _declared_convex, _msg_max_iter, _no_decrease, _start, _stop_reason,
                     _verdict, _x0, checked_arguments)

__all__ = ["newton_cg"]


@checked_arguments
def newton_cg(fun, x0, *, max_iter=100, gtol=1e-8, gscale=None, cg_max_iter=250, callback=None):
    """Minimise ``fun`` by truncated Newton steps (see the module docstring).

    Parameters
    ----------
    fun : callable
        ``fun(x) -> (f, g, (hessp, diag_H))``: the objective, its gradient, ``hessp(v) -> H(x) v``
        and the diagonal of ``H(x)``, or ``None`` (given, CG is preconditioned by it: Jacobi).
    x0 : (D,) start
    max_iter : int, the number of Newton steps allowed
    gtol, gscale : the stopping test ``max |g| / gscale <= gtol`` (as :func:`linbook.optim.newton`)
    cg_max_iter : int, the CG iterations allowed per step
    callback : callable, optional
        ``callback(x, f, g)`` after each step a stopping test does not end; ``True`` stops (not converged).

    Returns
    -------
    OptimizeResult
        ``converged`` only at a minimum (a stationary ``x0``, or a run confined to a subspace, is probed:
        ``result._verdict``).

    Derived in: chapter "Optimizers" § "Newton's method".
    """
    fg = _Counted(fun, True, True)              # counts evaluations; a non-finite f becomes +inf
    x = _x0(x0)
    out, scale, early = _start(fg, x, gtol, gscale)
    if early:
        return early
    f, g = out[0], out[1]
    g0_norm = np.linalg.norm(g)
    path, k, (msg, converged) = [x.copy()], 0, (_msg_max_iter(max_iter), False)
    for k in range(1, max_iter + 1):
        eta = min(0.5, np.sqrt(np.linalg.norm(g) / g0_norm))        # forcing term
        hessp, diag = out[2]
        # CG on g / c (c a power of two near max |g|: exact, d is linear in g): r'r and p'Hp of an objective
        # scaled by 1e103 overflowed (1e-110: underflowed), and the step stayed 0
        c = _power_of_two_scale(np.max(np.abs(g)), normal=True)
        d = c * conjugate_gradient_step(hessp, g / c, eta, cg_max_iter, diag)
        t, new, _ = _armijo(fg, x, f, float(g @ d), d)                # backtracking from t = 1
        if new is None and not fg.nonfinite:     # f flat at rounding: the full step if it shrinks g (as Newton)
            t, new = _flat_step(fg, x, f, g, d, scale)
        if new is None:                                               # no decrease found
            (msg, converged), k = _no_decrease(g, gtol, scale, fg), k - 1
            break
        x, out = x + t * d, new
        f, g = out[0], out[1]
        path.append(x.copy())
        stop = _stop_reason(fg, g, gtol, scale)
        if stop:
            converged, msg = stop
            break
        if callback is not None and callback(x, f, g):
            msg, converged = "stopped by callback", False
            break
    converged, msg = _verdict(fg, path, x, f, g, scale, converged, msg, convex=_declared_convex(fg))
    return OptimizeResult(x, f, g, converged, k, fg.n, np.array(path), msg)


def conjugate_gradient_step(hessp, g, eta, max_iter, diag=None, stop=None, steps=None):
    """``d`` with ``||H d + g|| <= eta ||g||`` by (Jacobi-preconditioned) CG from ``d = 0``.

    Stops early on non-positive curvature ``p'Hp <= 0`` with the last iterate (``-g`` scaled
    by the preconditioner if there is none yet), a descent direction either way. ``stop(d, r)``
    (optional), asked after each iteration with the iterate and its residual ``r = -g - H d``
    (CG's recurrence), ends CG at ``d`` when it returns true. ``steps`` (optional, a dict of two
    lists) receives each iteration's ``alpha`` and ``beta``: the entries of the Lanczos tridiagonal
    matrix, whose eigenvalues estimate the spectrum of the preconditioned ``H`` (:func:`lanczos_condition`).
    """
    inv_m = np.ones_like(g) if diag is None else 1.0 / np.where(diag > 0, diag, 1.0)
    d = np.zeros_like(g)
    r = -g                                     # residual -g - H d at d = 0
    s = inv_m * r                              # preconditioned residual
    p = s
    rs = float(r @ s)
    tol = eta * np.linalg.norm(g)
    for _ in range(max_iter):
        Hp = hessp(p)
        curvature = float(p @ Hp)
        if not curvature > 0:                  # H not positive definite along p
            return d if d.any() else s
        alpha = rs / curvature
        d = d + alpha * p
        r = r - alpha * Hp
        if steps is not None:
            steps["alpha"].append(alpha)
        if np.linalg.norm(r) <= tol or (stop is not None and stop(d, r)):
            break
        s = inv_m * r
        rs, rs_old = float(r @ s), rs
        if steps is not None:
            steps["beta"].append(rs / rs_old)
        p = s + (rs / rs_old) * p
    return d


def lanczos_condition(steps):
    """The condition number of the preconditioned ``H`` as CG saw it: the ratio of the extreme
    eigenvalues of the Lanczos tridiagonal matrix built from CG's ``alpha_j`` and ``beta_j``
    (diagonal ``1/alpha_j + beta_{j-1}/alpha_{j-1}``, off-diagonal ``sqrt(beta_j)/alpha_j``; Saad,
    *Iterative Methods for Sparse Linear Systems*, 6.7.3). Its eigenvalues (Ritz values) lie inside
    ``H``'s spectrum and reach its ends as CG converges, so this is a lower bound that is sharp by then.
    """
    from scipy.linalg import eigvalsh_tridiagonal

    alpha = np.asarray(steps["alpha"], dtype=float)
    beta = np.asarray(steps["beta"][:len(alpha) - 1], dtype=float)
    if alpha.size == 0:
        return 1.0
    diagonal = 1.0 / alpha
    diagonal[1:] += beta / alpha[:-1]
    ritz = eigvalsh_tridiagonal(diagonal, np.sqrt(beta) / alpha[:-1])
    return float(ritz[-1] / ritz[0]) if ritz[0] > 0 else np.inf
