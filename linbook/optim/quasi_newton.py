"""Quasi-Newton methods: the BFGS updates, BFGS and L-BFGS (two-loop recursion).

Derived in: chapter "Optimizers" § "Quasi-Newton methods: BFGS and L-BFGS".
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from ..numerics import _power_of_two_scale
from .line_search import _wolfe
from .result import checked_arguments, real_array
from .result import (MSG_GTOL, MSG_UNBOUNDED, MSG_XTOL, OptimizeResult, _check_args, _Counted, _declared_convex,
                     _msg_max_iter, _nearly_small_grad, _no_decrease, _small_grad, _small_step, _start, _stop_reason,
                     _verdict, _x0)

__all__ = ["bfgs_update_B", "bfgs_update_H", "bfgs", "lbfgs_two_loop", "lbfgs"]


def _curvature_ok(s, y):
    """``s'y > 0`` beyond rounding: the pair keeps a BFGS matrix positive definite (judged on ``s`` and ``y``
    divided by powers of two near their largest entries, :func:`_unit_pair`, so at any scale)."""
    s, y = np.asarray(s, float), np.asarray(y, float)
    if not (np.all(np.isfinite(s)) and np.all(np.isfinite(y))):
        raise ValueError("BFGS update: s and y must be finite (the step or the gradient "
                         "difference holds NaN/inf); fix the objective or its gradient")
    u, v, _ = _unit_pair(s, y)
    return float(u @ v) > 1e-12 * np.linalg.norm(u) * np.linalg.norm(v)


def _unit_pair(s, y):
    """``(s / a, y / c, c / a)`` for powers of two ``a``, ``c`` near ``max |s|``, ``max |y|`` (exact). The BFGS
    updates in these: ``y y'/(y's) = (c/a) v v'/(v'u)`` and ``rho s s' = (a/c) u u'/(v'u)``, the other terms
    unchanged; ``s'y`` of a pair near 1e-300 underflowed to 0 (the update skipped), near 1e300 overflowed."""
    a = _power_of_two_scale(np.max(np.abs(s), initial=0.0), normal=True)
    c = _power_of_two_scale(np.max(np.abs(y), initial=0.0), normal=True)
    with np.errstate(over="ignore", under="ignore"):        # c / a beyond float64: see _finite
        return s / a, y / c, c / a


def _update_inputs(caller, M, name, s, y):
    """``(M, s, y)`` as float arrays, ``s`` and ``y`` vectors of one length ``d`` and ``M`` (``name``) a finite
    ``d x d`` matrix; or a clear error naming the argument."""
    M, s, y = real_array(M, name, copy=True), real_array(s, "s"), real_array(y, "y")
    if not (s.ndim == 1 and s.shape == y.shape and M.shape == (s.size, s.size)):
        raise ValueError(f"{caller}: pass s and y as vectors of one length d and {name} as a d x d matrix; got "
                         f"shapes s {s.shape}, y {y.shape}, {name} {M.shape}")
    if not np.all(np.isfinite(M)):
        raise ValueError(f"{caller}: {name} must be finite; pass a finite {name} (e.g. the identity to restart)")
    return M, s, y


def bfgs_update_B(B, s, y):
    """BFGS update of the Hessian approximation (MLAPP eq. 8.26).

    ``B_new = B + y y'/(y's) - (B s)(B s)'/(s'B s)``; satisfies the secant condition
    ``B_new s = y`` and stays positive definite when ``y's > 0``. When the curvature
    condition fails (``y's <= 0``, e.g. a step taken without a Wolfe line search on a
    non-convex function) the update would destroy positive definiteness: it is skipped
    and a copy of ``B`` is returned (Nocedal and Wright, § 6.1).

    Derived in: chapter "Optimizers" § "Quasi-Newton methods: BFGS and L-BFGS".
    """
    B, s, y = _update_inputs("bfgs_update_B", B, "B", s, y)
    if not _curvature_ok(s, y):
        return B
    with np.errstate(over="ignore", divide="ignore", invalid="ignore", under="ignore"):
        s, y, ratio = _unit_pair(s, y)    # (see _unit_pair)
        # (B s)(B s)'/(s'B s) = b (B^ s)(B^ s)'/(s'B^ s) with B = b B^, b a power of two near max |B| (exact): the
        # outer product of B s overflowed for curvatures near 1e160 (then "s and y within about 300 decades")
        b = _power_of_two_scale(np.max(np.abs(B), initial=0.0), normal=True)
        Bs = (B / b) @ s
        return _finite("bfgs_update_B", "B",
                       B + ratio * np.outer(y, y) / float(y @ s) - b * (np.outer(Bs, Bs) / float(s @ Bs)))


def bfgs_update_H(H, s, y):
    """BFGS update of the inverse-Hessian approximation (MLAPP eq. 8.29).

    ``H_new = (I - rho s y') H (I - rho y s') + rho s s'`` with ``rho = 1/(y's)``; this is
    the inverse of :func:`bfgs_update_B` applied to ``B = H^{-1}``. Skipped (a copy of
    ``H`` is returned) when ``y's <= 0``, as :func:`bfgs_update_B`.

    Derived in: chapter "Optimizers" § "Quasi-Newton methods: BFGS and L-BFGS".
    """
    H, s, y = _update_inputs("bfgs_update_H", H, "H", s, y)
    if not _curvature_ok(s, y):
        return H
    with np.errstate(over="ignore", divide="ignore", invalid="ignore", under="ignore"):
        s, y, ratio = _unit_pair(s, y)    # (see _unit_pair)
        rho = 1.0 / float(y @ s)
        Hy = H @ y
        # expanded form of (I - rho s y') H (I - rho y s') + rho s s', O(d^2)
        return _finite("bfgs_update_H", "H", H - rho * (np.outer(s, Hy) + np.outer(Hy, s))
                       + (rho * rho * float(y @ Hy) + rho / ratio) * np.outer(s, s))


def _finite(caller, name, M):
    """``M``, or a clear error where the update left float64: a pair with ``|y| / |s|`` near 1e400 (B's
    ``y y' / y's``) or 1e-400 (H's ``s s' / y's``) has entries beyond it, which came out NaN."""
    if not np.all(np.isfinite(M)):
        raise ValueError(f"{caller}: the updated {name} is beyond float64 (entries near |y| / |s| or |s| / |y| of the "
                         "pair, over 1e308); rescale x (or the objective) so that s and y are within about 300 decades "
                         "of each other")
    return M


@checked_arguments
def bfgs(fun, x0, grad=None, *, form="H", max_iter=1000, gtol=1e-6, xtol=0.0, gscale=None, B0=None):
    """BFGS quasi-Newton method with a Wolfe line search.

    Parameters
    ----------
    form : "H" or "B"
        Update the inverse Hessian ``H`` (direction ``-H g``, O(d^2) per step) or the
        Hessian ``B`` (direction by solving ``B d = -g``, O(d^3) per step). In exact
        arithmetic the two produce the same iterates.
    gtol, xtol, gscale : stopping rules (relative; see :func:`linbook.optim.gradient_descent`).
    B0 : (d, d) array, optional
        Initial Hessian approximation (default: identity, scaled after the first step
        by ``y'y / y's``, Nocedal and Wright eq. 6.20).

    Returns
    -------
    OptimizeResult
        ``converged`` only at a minimum (a stationary ``x0``, or a run confined to a subspace, is probed:
        ``result._verdict``).

    Derived in: chapter "Optimizers" § "Quasi-Newton methods: BFGS and L-BFGS".
    """
    _check_args("bfgs", form=(form, lambda b: [b.StrOptions({"H", "B"})]))
    fg = _Counted(fun, grad)
    x = _x0(x0)
    (f, g), scale, early = _start(fg, x, gtol, gscale)
    if early:
        return early
    M, scaled = _initial_matrix(B0, form, x.size)     # H_0 = B_0^{-1} or B_0
    path, converged, k, msg = [x.copy()], False, 0, _msg_max_iter(max_iter)
    for k in range(1, max_iter + 1):
        d, M, scaled = _bfgs_direction(M, g, form, scaled)      # d = -H g, or B d = -g
        t0 = 1.0 if (scaled or k > 1) else 1.0 / max(np.abs(g).sum(), 1e-300)   # unit-free in f
        t, f_new, g_new, _ = _wolfe(fg, x, f, g, d, t0=t0)
        if t == 0.0:
            (msg, converged), k = _no_decrease(g, gtol, scale, fg), k - 1
            break
        s, y = t * d, g_new - g
        small = _small_step(s, x, xtol)
        x, f, g = x + s, f_new, g_new
        path.append(x.copy())
        stop = _stop_reason(fg, g, gtol, scale, small)
        if stop:
            converged, msg = stop
            break
        M, scaled = _bfgs_update(M, s, y, form, scaled)
    converged, msg = _verdict(fg, path, x, f, g, scale, converged, msg, convex=_declared_convex(fg))
    return OptimizeResult(x, f, g, converged, k, fg.n, np.array(path), msg)


def _initial_matrix(B0, form, n):
    """``(M, scaled)``: the first inverse Hessian (``form="H"``) or Hessian (``"B"``) approximation,
    the identity unless ``B0`` is given; ``scaled`` says whether it is the caller's (else the first
    update rescales the identity)."""
    if B0 is None:
        return np.eye(n), False
    B0 = real_array(B0, "B0", copy=True)
    if B0.shape != (n, n) or not np.all(np.isfinite(B0)):
        raise ValueError(f"bfgs: B0 must be a finite {n} x {n} matrix (one row and column per coordinate of x0); "
                         f"got shape {B0.shape}. Pass such a B0, or leave it None for the identity")
    try:
        return (B0 if form == "B" else scipy.linalg.solve(B0, np.eye(n), assume_a="pos")), True
    except np.linalg.LinAlgError as exc:
        raise ValueError("bfgs: B0 must be symmetric positive definite (its Cholesky factor "
                         "failed); pass a positive definite B0 or leave it None") from exc


def _bfgs_direction(M, g, form, scaled):
    """``(d, M, scaled)``: ``d = -H g``, or ``d`` solving ``B d = -g`` (a numerically singular ``B``
    restarts from the identity: ``d = -g``)."""
    if form == "H":
        return -M @ g, M, scaled
    try:
        return scipy.linalg.solve(M, -g, assume_a="pos"), M, scaled
    except np.linalg.LinAlgError:
        return -g, np.eye(g.size), False


def _bfgs_update(M, s, y, form, scaled):
    """``(M, scaled)`` after the BFGS update with the pair ``(s, y)``, skipped when ``s'y <= 0``; the
    first update starts from the identity scaled by ``s'y / y'y`` (Nocedal and Wright eq. 6.20)."""
    if not _curvature_ok(s, y):
        return M, scaled
    if not scaled:
        u, v, ratio = _unit_pair(s, y)          # s'y / y'y, exactly, also where y'y underflows
        gamma = float(u @ v) / float(v @ v) / ratio
        M = gamma * np.eye(s.size) if form == "H" else np.eye(s.size) / gamma
    return (bfgs_update_H(M, s, y) if form == "H" else bfgs_update_B(M, s, y)), True


def lbfgs_two_loop(g, S, Y, gamma=None):
    """L-BFGS two-loop recursion: returns ``H g`` for the implicit inverse Hessian.

    ``S`` and ``Y`` are lists of the last ``m`` pairs ``s_i = x_{i+1} - x_i`` and
    ``y_i = g_{i+1} - g_i`` (oldest first); the initial matrix is ``gamma I`` with
    ``gamma = s'y / y'y`` of the newest pair (or 1 without pairs). Equal to applying
    :func:`bfgs_update_H` ``m`` times to ``gamma I``, in O(m d) instead of O(d^2);
    pairs with ``s'y <= 0`` are skipped, as there.

    Derived in: chapter "Optimizers" § "Quasi-Newton methods: BFGS and L-BFGS".
    """
    g = real_array(g, "g")
    S, Y = _vectors(S, "S"), _vectors(Y, "Y")
    if g.ndim != 1 or S is None or Y is None or any(v.shape != g.shape for v in S + Y):
        shapes = [[np.shape(v) for v in p] if p is not None else "not a list of vectors" for p in (S, Y)]
        raise ValueError(f"lbfgs_two_loop: pass g as a vector and S and Y as lists of vectors of its length "
                         f"(pairs s_i, y_i, oldest first); got g of shape {g.shape}, S {shapes[0]}, Y {shapes[1]}")
    if len(S) != len(Y):
        raise ValueError(f"lbfgs_two_loop needs as many pairs in S as in Y; got {len(S)} and {len(Y)}. "
                         "Pass S and Y of the same length (pair i is (S[i], Y[i]))")
    # a number, not a callable, string, bool or complex (float() raised a TypeError on those, or took True as 1)
    if gamma is not None and not (np.ndim(gamma) == 0 and np.asarray(gamma).dtype.kind in "fiu" and 0 < float(gamma) < np.inf):
        raise ValueError(f"lbfgs_two_loop: gamma must be a positive finite number (the initial H = gamma I); "
                         f"got {gamma!r}. Pass such a gamma, or None for s'y / y'y of the newest pair")
    pairs = [(s, y) for s, y in zip(S, Y) if _curvature_ok(s, y)]
    # on s / a and y / c, a and c powers of two near the largest |s| and |y| (exact): H g is a / c times the result
    # with gamma c / a. s'y of pairs near 1e155 overflowed (refused as beyond float64, though H g is near g)
    a = _power_of_two_scale(max((np.max(np.abs(s)) for s, _ in pairs), default=1.0), normal=True)
    c = _power_of_two_scale(max((np.max(np.abs(y)) for _, y in pairs), default=1.0), normal=True)
    S, Y = [p[0] / a for p in pairs], [p[1] / c for p in pairs]
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        rho = [1.0 / float(y @ s) for s, y in zip(S, Y)]
    if not all(np.isfinite(r) and r > 0 for r in rho):
        raise ValueError("lbfgs_two_loop: s'y of a pair is beyond float64 (pairs whose sizes differ by over 300 "
                         "decades); rescale the variables or the objective")
    with np.errstate(over="ignore", invalid="ignore"):
        Hg = (a / c) * _two_loop(g, S, Y, rho, None if gamma is None else gamma * c / a)
    return _finite("lbfgs_two_loop", "H g", Hg)


def _vectors(pairs, name):
    """``pairs`` (a list of vectors, or a 2-D array of them as rows) as a list of float arrays; ``None`` when
    it is not a sequence of vectors."""
    if isinstance(pairs, (str, bytes)) or np.ndim(pairs) == 0 or np.ndim(pairs) == 1 and len(pairs) > 0 \
            and np.ndim(pairs[0]) == 0:
        return None
    return [real_array(v, name) for v in pairs]


def _two_loop(g, S, Y, rho, gamma=None):
    """The recursion itself, for pairs already known to have ``s'y > 0``."""
    q = np.array(g, dtype=float)
    m = len(S)
    alpha = np.empty(m)
    for i in range(m - 1, -1, -1):
        alpha[i] = rho[i] * float(S[i] @ q)
        q -= alpha[i] * Y[i]
    if gamma is None:
        gamma = _initial_scaling(S[-1], Y[-1]) if m else 1.0
    r = gamma * q
    for i in range(m):
        beta = rho[i] * float(Y[i] @ r)
        r += (alpha[i] - beta) * S[i]
    return r


def _initial_scaling(s, y):
    """``s'y / y'y`` of the newest pair, with ``y`` divided by its largest entry first: a gradient
    difference near 1e-160 (an objective of ~1e-100, e.g. a logistic loss under sample weights that
    small) has ``y'y`` underflow to 0, and ``1 / (rho y'y)`` raised ZeroDivisionError."""
    top = float(np.max(np.abs(y)))
    u = y / top
    return float(s @ u) / float(u @ u) / top


@checked_arguments
def lbfgs(fun, x0, grad=None, *, m=10, max_iter=1000, gtol=1e-6, xtol=0.0, ftol=0.0, gscale=None):
    """Limited-memory BFGS with the two-loop recursion and a Wolfe line search.

    Parameters
    ----------
    m : int
        Number of stored pairs ``(s, y)``.
    gtol, xtol, gscale : stopping rules (relative; see :func:`linbook.optim.gradient_descent`).
    ftol : float
        Also stop when ``(f_old - f_new) <= ftol * max(|f_old|, |f_new|)`` (relative decrease) where
        the gradient is nearly small (within ``ROUNDING_ALLOWANCE gtol``, as the ``xtol`` stop): an
        additive constant in ``f`` makes any decrease relatively small.

    Returns
    -------
    OptimizeResult
        ``converged`` only at a minimum (a stationary ``x0``, or a run confined to a subspace, is probed:
        ``result._verdict``).

    Derived in: chapter "Optimizers" § "Quasi-Newton methods: BFGS and L-BFGS".
    """
    fg = _Counted(fun, grad)
    x = _x0(x0)
    (f, g), scale, early = _start(fg, x, gtol, gscale)
    if early:
        return early
    S, Y, R = [], [], []           # the last m pairs s = x_new - x, y = g_new - g, and 1 / s'y
    path, converged, k, msg = [x.copy()], False, 0, _msg_max_iter(max_iter)
    for k in range(1, max_iter + 1):
        d = -_two_loop(g, S, Y, R)     # d = -H g, H the inverse-Hessian estimate from the pairs
        t, d, f_new, g_new = _wolfe_step_or_restart(fg, x, f, g, d, (S, Y, R))
        if t == 0.0:
            (msg, converged), k = _no_decrease(g, gtol, scale, fg), k - 1
            break
        s = t * d
        yv = g_new - g
        small = _small_step(s, x, xtol)
        fsmall = ftol > 0 and (f - f_new) <= ftol * max(abs(f), abs(f_new))
        x, f, g = x + s, f_new, g_new
        path.append(x.copy())
        if fg.unbounded:
            msg = MSG_UNBOUNDED
            break
        _remember(S, Y, R, s, yv, m)
        if _small_grad(g, gtol, scale):
            converged, msg = True, MSG_GTOL
            break
        if (small or fsmall) and _nearly_small_grad(g, gtol, scale):     # (an f of 1e6 + ... met ftol far out)
            converged, msg = True, MSG_XTOL if small else "relative decrease of f below ftol"
            break
    converged, msg = _verdict(fg, path, x, f, g, scale, converged, msg, convex=_declared_convex(fg))
    return OptimizeResult(x, f, g, converged, k, fg.n, np.array(path), msg)


def _wolfe_step_or_restart(fg, x, f, g, d, memory):
    """``(t, d, f(x + t d), g(x + t d))`` by a Wolfe line search along ``d``; when it fails with pairs in
    ``memory``, they are dropped and the search is retried once along steepest descent ``-g``."""
    t0 = 1.0 if memory[0] else 1.0 / max(np.abs(g).sum(), 1e-300)   # unit-free in f
    t, f_new, g_new, _ = _wolfe(fg, x, f, g, d, t0=t0)
    if t == 0.0 and memory[0]:
        for pairs in memory:
            pairs.clear()
        d = -g
        t, f_new, g_new, _ = _wolfe(fg, x, f, g, d, t0=1.0 / max(np.abs(g).sum(), 1e-300))
    return t, d, f_new, g_new


def _remember(S, Y, R, s, yv, m):
    """Keep the pair ``(s, y)`` when its curvature ``s'y`` is positive, at most the last ``m`` pairs."""
    if _curvature_ok(s, yv) and np.finfo(float).tiny <= float(s @ yv) < np.inf:   # (rho = 1 / s'y stays finite)
        S.append(s)
        Y.append(yv)
        R.append(1.0 / float(s @ yv))
        if len(S) > m:
            del S[0], Y[0], R[0]
