"""Newton's method (the one Newton driver), truncated Newton and Levenberg-Marquardt.

:func:`newton` is the single Newton/IRLS driver of linbook: :func:`linbook.irls`,
:class:`linbook.LogisticRegression` and :class:`linbook.ProbitRegression`
(``solver="newton"``/``"irls"``) and :func:`linbook.laplace_approximation` call it with
their own objective, gradient and Hessian, so the safeguards live in one place: the
Hessian is equilibrated and factored by Cholesky, a failed factorisation is retried
with a growing ridge, the step is chosen by Armijo backtracking, and the method stops
at once (saying so) on a non-finite objective.

Three options of :func:`newton` save evaluations near the optimum:

* ``fun_grad`` (with ``hess=True``), the chord method (Shamanskii's modification of Newton):
  ``fun_grad(x) -> (f, g)`` is the objective without its Hessian (for a GLM a pass over the
  data costing ~1/4 of one with the Hessian), and the Cholesky factor of the last Hessian is
  reused as long as each step is a full one that shrinks ``max |g|`` at least fourfold
  (``CHORD_CONTRACTION``); otherwise a new Hessian is evaluated. Near the optimum most steps
  then cost one gradient; the stopping test is the same (the exact gradient).
* ``polish`` (with ``hess=True``): after the gradient test passes, one more full Newton step
  with the Hessian already at hand (no evaluation). Its error is about the square of the
  current one (about ``CHORD_CONTRACTION`` times it with a kept chord factor); the result's
  ``fun`` and ``grad`` are those before it.
* ``decrement_tol``: stop (converged) when the Newton decrement ``g' H^{-1} g / 2`` -- the
  decrease the quadratic model predicts, affine invariant -- is at most ``decrement_tol``
  (Boyd and Vandenberghe's stopping rule; tested before each step whose ``H`` is positive
  definite).

``step_tol`` (with ``step_scale``) makes the gradient test count only where the next Newton step is
short as well, ``max_j |(H^{-1} g)_j| * step_scale_j <= step_tol`` (checked when ``H`` is positive
definite). A gradient scale ``gscale`` fixed in advance can be met far from the minimiser (a sum of
sample weights dominated by a few heavy, well-fitted rows); the step is in units of ``x`` and does
not depend on how the objective is weighted. With ``polish`` that step is the polishing step.

Derived in: chapter "Optimizers" § "Newton's method".
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg

from .._kernels.cholesky import equilibrated_cholesky, equilibrated_solve
from ..numerics import _power_of_two_scale
from .line_search import _armijo, _flat_step
from .newton_cg import newton_cg
from .result import checked_arguments
from .result import _declared_convex, _lower_by_curvature, _verdict
from .result import (MSG_DECREMENT, MSG_GTOL, MSG_NONFINITE, MSG_UNBOUNDED, MSG_XTOL, ROUNDING_ALLOWANCE,
                     OptimizeResult, _Counted, _msg_max_iter, _nearly_small_grad, _no_decrease, _small_grad,
                     _small_step, _start, _x0, real_array)

__all__ = ["levenberg_marquardt", "newton", "truncated_newton"]

# The chord method keeps the last Hessian's factor while each step shrinks max|g| at least
# this much. For a GLM a new Hessian costs about three gradient passes, so one chord step
# that shrinks the gradient 4x gains about as much per pass as a Newton step shrinking it
# 4^4 = 256x (Newton's own ratios were 0.2-0.01 on the benchmark problems).
CHORD_CONTRACTION = 0.25


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
    if damping:
        H = H + damping * np.eye(H.shape[0])
    tau = 0.0
    while True:
        factor = equilibrated_cholesky(H, ridge=tau)
        # the factorisation checks that H is finite (None if not): look again only to say why it failed
        if factor is None and tau == 0.0 and not np.isfinite(H).all():
            raise ValueError("newton: the Hessian is not finite at the current point; check the "
                             "objective for overflow (scale the features or add a penalty)")
        if factor is not None:
            d = _chord_direction(factor, g)
            if _is_descent(g, d) or not np.any(g):     # at a stationary point the step is 0, not a ridge's
                return d, tau, factor
        tau = max(10.0 * tau, 1e-12)
        if tau > 1e12:
            dg = np.diag(H)
            return -g / np.where(dg > 0, dg, 1.0), tau, None   # a diagonally scaled gradient step: always descent


def _is_descent(g, d):
    """Whether ``d`` is a finite descent direction: ``g'd < 0`` and every ``d_j`` finite.

    A non-finite ``d_j`` makes ``g'd`` non-finite (``inf`` times a non-zero ``g_j`` is infinite,
    ``0 * inf`` and anything with NaN are NaN), so a finite ``g'd`` vouches for ``d``; its entries
    are looked at only when ``g'd`` overflowed to ``-inf``.
    """
    slope = float(g @ d)
    return slope < 0 and (math.isfinite(slope) or bool(np.isfinite(d).all()))


def _line_search(fg, trial, x, f, g, d, scale, gtol):
    """Armijo backtracking along ``d``, then the flat step: ``(t, fg(x + t d), None)``, or
    ``(t, None, (message, converged))`` when no step can be taken."""
    t, new, _ = _armijo(trial, x, f, float(g @ d), d)
    if new is None and not (fg.nonfinite or trial.nonfinite):
        t, new = _flat_step(trial, x, f, g, d, scale)
    if new is not None:
        return t, new, None
    return t, None, _no_decrease(g, gtol, scale, fg, trial)


def _polished(x, out, g, factor, tau, damping, d=None):
    """``x`` after one more full Newton step with the Hessian already at hand (no evaluation): ``d``, the
    step the step test computed at ``x``, if given; else a chord step with the kept factor, else a step
    with ``out``'s Hessian when it is positive definite."""
    if d is not None:
        return x + d
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


def _chord_lasts(chord, t, g_new, g):
    """Whether the chord method keeps its factor: a full step that shrank ``max |g|`` at least
    ``1 / CHORD_CONTRACTION``-fold."""
    return chord and t == 1.0 and np.max(np.abs(g_new)) <= CHORD_CONTRACTION * np.max(np.abs(g))


@checked_arguments
def newton(fun, x0, grad=None, hess=None, *, line_search=True, max_iter=100, gtol=1e-8,
           xtol=1e-12, gscale=None, damping=None, callback=None, polish=False, fun_grad=None,
           decrement_tol=None, step_tol=None, step_scale=1.0):
    """Newton's method with a backtracking line search (Algorithm 8.1 of MLAPP).

    Each step solves ``H d = -g`` by Cholesky and moves to ``x + t d``, the first ``t`` in 1, 1/2, 1/4, ...
    passing Armijo's test; where ``H`` is not positive definite, by ``H + tau I``, ``tau`` grown until descent.

    Parameters
    ----------
    fun, grad, x0 : see :func:`linbook.optim.gradient_descent`.
    hess : callable or True
        ``hess(x) -> (d, d)``, or ``True`` when ``fun(x)`` returns ``(f, g, H)`` (``grad=True``).
    line_search : bool, Armijo backtracking from t = 1 (``False``: always the full step t = 1).
    gtol, gscale, xtol : the relative stopping tests and ``converged`` rule of :func:`linbook.optim.gradient_descent`.
    damping : float, optional, if given: always use ``H + damping I``.
    callback : callable, optional
        ``callback(x, f, g)`` after each step a stopping test does not end; ``True`` stops (not converged).
    polish, fun_grad, decrement_tol, step_tol, step_scale : optional
        The polishing step, the chord method, the decrement test, the step test: see the module docstring.

    Returns
    -------
    OptimizeResult

    Derived in: chapter "Optimizers" § "Newton's method".
    """
    fg, trial, hessian, x, out, scale, early = _newton_start(fun, x0, grad, hess, fun_grad, gtol, gscale)
    factor, tau = None, 0.0        # the Cholesky factor kept for the next step (chord method)
    short = _StepTest(step_tol, step_scale, fg, hessian, damping or 0.0)
    if early and not (early.message == MSG_GTOL and not short(x, out, factor, tau)):
        return early
    out = short.take(out)
    f, g = out[0], out[1]
    path, k, (msg, converged) = [x.copy()], 0, (_msg_max_iter(max_iter), False)
    for k in range(1, max_iter + 1):
        # d = -H^{-1} g by Cholesky (or the kept factor); stop if H fails or the decrement is small
        d, tau, factor, out, stop = _direction(factor, tau, g, x, out, fg, hessian, damping, decrement_tol)
        t, new = 0.0, None
        if stop is None:           # t: Armijo backtracking from 1 (or the full step)
            t, new, stop = (_line_search if line_search else _full_step)(fg, trial, x, f, g, d, scale, gtol)
        if new is None:            # no step taken
            (msg, converged), k = _no_step(stop, f, g, d, lambda: short(x, out, factor, tau), fun), k - 1
            break
        factor = factor if _chord_lasts(trial is not fg, t, new[1], g) else None
        small = _small_step(d, x, xtol)     # the full step: a line search that shrank it says nothing of the optimum
        x, out, (f, g) = x + t * d, new, new[:2]
        path.append(x.copy())
        stop = stop or _stop_after_step(fg, trial, x, f, g, gtol, scale, small, callback,
                                        lambda: short(x, out, factor, tau))
        out = short.take(out)                # the Hessian the step test evaluated, for the next step
        if stop:
            msg, converged = stop
            break
    converged, msg = _verdict(trial, path, x, f, g, scale, converged, msg,
                              lambda: _positive_definite_at(x, out, fg, hessian), convex=_declared_convex(fg))
    if converged and msg == MSG_GTOL and polish and hess is True:      # one more full step, no evaluation
        x = path[-1] = _polished(x, out, g, factor, tau, damping or 0.0, short.polishing_step(fun))
    return OptimizeResult(x, f, g, converged, k, fg.n + (trial.n if trial is not fg else 0), np.array(path), msg)


#: A Newton step whose predicted gain ``|g.d|`` is below this fraction of ``|f|`` is one ``f``'s rounding hides
#: (~4,500 units in the last place of ``f``): a line search that finds no decrease along it says nothing more.
#: Only where the objective may have null directions (``_no_step``): beside a row 1e34 times the others a full-rank
#: logistic fit stuck short of its optimum predicted 2e-13 of ``f`` and was called converged.
_UNRESOLVED_GAIN = 1e-12
#: A step within this many units in the last place of a coordinate counts as short there (``_StepTest``).
_ULPS = 4 * np.finfo(float).eps


def _no_step(stop, f, g, d, settled, fun=None):
    """``(message, converged)`` when no step along ``d`` was taken: the ``stop`` of the line search, whose
    "no decrease at rounding level" with a small gradient is convergence only where the Newton step's predicted
    gain ``|g.d|`` is below the rounding of ``f`` (:data:`_UNRESOLVED_GAIN`) or ``settled()``, the step test of
    :func:`newton`, agrees, as after a step. Weights over 300 decades made the gradient test (relative to
    ``sum(sample_weight)``) pass at a logistic fit 1e15..1e174 times its minimum, where the line search found
    no decrease along a Newton step predicting a gain 1e14..1e133 times ``f``; on a rank-deficient design at the
    least-norm optimum the predicted gain is ~1e-22 of ``f`` and the step test alone (its step is rounding noise
    along the near-null direction) had refused it. The gain rule holds only where the objective may have null
    directions: an objective that says it has none (``fun.null_directions = False``, a logistic loss of a
    full-rank design) is judged by the step test alone (beside a row 1e34 times the others the Hessian's rounding
    hid every other row's curvature, the predicted gain was ~1e-31 of ``f``, and the fit was far off)."""
    msg, converged = stop
    if not converged or d is None:
        return msg, bool(converged)
    with np.errstate(over="ignore", invalid="ignore"):
        unresolved = getattr(fun, "null_directions", True) and abs(float(g @ d)) <= _UNRESOLVED_GAIN * abs(float(f))
    return msg, bool(unresolved or settled())


def _positive_definite_at(x, out, fg, hessian):
    """Whether the Hessian at ``x`` is positive definite (an equilibrated Cholesky factor exists): ``x`` is then a
    minimum and needs no probe (``result._verdict``). ``H`` is evaluated at ``x`` where ``out`` holds none: the
    Hessian of the last step, at the point before, was positive definite where a run on the axis of ``y^2 +
    x^2 (y^2 - 1/4) + x^4`` from ``(0, 1)`` ended at the saddle ``(0, 0)``."""
    if len(out) < 3 and fg.with_hess:
        out = fg(x)
    H = hessian(x, out)
    return H is not None and equilibrated_cholesky(np.atleast_2d(np.asarray(H, dtype=float))) is not None


def _newton_start(fun, x0, grad, hess, fun_grad, gtol, gscale):
    """``(fg, trial, hessian, x0, fg(x0), scale, early)``: the counted objective, the one evaluated
    at trial points (``fun_grad`` for the chord method, else ``fg``), ``hessian(x, out)``, the start,
    the gradient's scale and a result to return at once (see ``_start``) or ``None``."""
    if not (callable(hess) or hess is True):
        raise ValueError("newton needs hess: pass a callable hess(x), or hess=True when fun returns (f, g, H); "
                         f"got {type(hess).__name__}")
    fg = _Counted(fun, grad, hess)
    x = _x0(x0)
    out, scale, early = _start(fg, x, gtol, gscale)
    trial = _Counted(fun_grad, True) if fun_grad is not None and hess is True else fg
    hessian = (lambda x, out: out[2]) if hess is True else (lambda x, out: hess(x))
    return fg, trial, hessian, x, out, scale, early


def _direction(factor, tau, g, x, out, fg, hessian, damping, decrement_tol):
    """``(d, tau, factor, out, stop)``: the chord direction with the kept ``factor`` while it is one
    of descent, else the Newton direction of the Hessian at ``x`` (evaluated there when ``out``, a
    trial point's ``(f, g)``, has none and ``fun`` gives all three). ``stop`` is ``(message,
    converged)`` when there is no direction (the Hessian is not finite) or the Newton decrement
    ``-g'd / 2 = g'H^{-1}g / 2`` is at most ``decrement_tol`` (tested when ``H`` is positive definite)."""
    try:
        d = _chord_direction(factor, g) if factor is not None else None
        if d is None or not _is_descent(g, d):
            out_h = fg(x) if len(out) < 3 and fg.with_hess else out
            d, tau, factor = _newton_direction(hessian(x, out_h), g, damping or 0.0)
            out = out_h
    except ValueError as exc:
        return None, tau, factor, out, (str(exc), False)
    if decrement_tol is not None and tau == 0.0 and -0.5 * float(g @ d) <= decrement_tol:
        return d, tau, factor, out, (MSG_DECREMENT, True)
    return d, tau, factor, out, None


def _full_step(fg, trial, x, f, g, d, scale, gtol):
    """``(1, fg(x + d), stop)`` without a line search (the arguments of :func:`_line_search`); ``stop``
    when the objective is not finite there."""
    new = trial(x + d)
    if not np.isfinite(new[0]):
        return 1.0, (np.nan, new[1]), ("diverged: the objective is not finite after a full Newton step", False)
    return 1.0, new, None


class _StepTest:
    """The step test of :func:`newton` (``step_tol``): is the next Newton step at ``x`` short? Always, without
    ``step_tol``. It keeps that step ``d`` (for the polishing step; ``damped`` where ``H`` needed a ridge) and the
    evaluation ``out`` it made (with the Hessian), which ``take`` hands to the next iteration once."""

    def __init__(self, step_tol, step_scale, fg, hessian, damping):
        self.step_tol, self.step_scale, self.fg, self.hessian, self.damping = step_tol, step_scale, fg, hessian, damping
        self.d = self.damped = self.out = None

    def polishing_step(self, fun):
        """The step the test computed, for the polishing step; where ``fun`` has null directions (its Hessian is
        singular, so every step there is damped), the damped step: the ridge only shortens it along them and it
        still polishes the rest (a rank-deficient logistic fit was left 1.6e-7 off, a full-rank one 1e-13)."""
        return self.d if self.d is not None or not getattr(fun, "null_directions", False) else self.damped

    def take(self, out):
        """The evaluation the test made at the current point if it made one, else ``out``; then forget it."""
        out, self.out = self.out or out, None
        return out

    def __call__(self, x, out, factor, tau):
        if self.step_tol is None:
            return True
        d, damped, self.out = _next_step(x, out, self.fg, self.hessian, factor, tau, self.damping)
        self.d, self.damped = (None, d) if damped else (d, None)
        # H needed a ridge (not positive definite to rounding, as where a few heavy rows are fitted and the
        # light rows' curvature is at their rounding): the damped step is shorter than Newton's, so a long one
        # still says the point is not the optimum (BFGS stopped at F = 64 against 19.8, session 19)
        # an undamped step within 4 ulps of a coordinate is that coordinate's rounding, not a way to a better point
        # (a logistic fit at its optimum beside a row 1e34 times the others, coefficients ~5e34 in the fit's units,
        # had steps of 7e17 there and never stopped); a damped step is short by its ridge, so it does not count
        if d is None:
            return True
        rounding = 0.0 if damped else _ULPS * np.abs(x)
        return bool(np.all((np.abs(d) * self.step_scale <= self.step_tol) | (np.abs(d) <= rounding)))


def _next_step(x, out, fg, hessian, factor, tau, damping):
    """``(d, damped, out)``: the next Newton step ``-H^{-1} g`` at ``x`` (with the kept chord factor, else the
    Hessian in ``out``, evaluated when ``out`` has none); where ``H`` is not positive definite, the step with
    :func:`_newton_direction`'s ridge (``damped``); ``None`` where ``H`` is not finite or no ridge worked;
    ``out`` with the Hessian if it was evaluated here."""
    if factor is not None and tau == 0.0:
        return _chord_direction(factor, out[1]), False, out
    if len(out) < 3 and fg.with_hess:
        out = fg(x)
    try:
        d, tau, factor = _newton_direction(hessian(x, out), out[1], damping)
    except ValueError:
        return None, False, out
    return (d if factor is not None else None), tau != 0.0, out


def _stop_after_step(fg, trial, x, f, g, gtol, scale, small, callback, settled=None):
    """``(message, converged)`` when the method stops at the new point ``x``, else ``None``
    (the gradient test counts where ``settled()``, the step test of :func:`newton`, agrees)."""
    if fg.unbounded or trial.unbounded:
        return MSG_UNBOUNDED, False
    if _small_grad(g, gtol, scale) and (settled is None or settled()):
        return MSG_GTOL, True
    if small and _nearly_small_grad(g, gtol, scale):
        return MSG_XTOL, True
    if callback is not None and callback(x, f, g):
        return "stopped by callback", False
    return None


@checked_arguments
def truncated_newton(fun, x0, grad=None, hessp=None, *, max_iter=100, gtol=1e-8, gscale=None,
                     cg_max_iter=None):
    """Truncated Newton (Newton-CG) with ``hessp(x, v) -> H(x) v``: :func:`linbook.optim.newton_cg`.

    The same method, called the way the other optimizers are (``fun``, ``grad``, plus
    ``hessp``): CG solves ``H d = -g`` to the forcing tolerance
    ``||H d + g|| <= min(0.5, sqrt(||g|| / ||g0||)) ||g||`` (relative, so scale-invariant) or
    stops at negative curvature; only Hessian-vector products are needed, never the Hessian.
    ``cg_max_iter`` defaults to ``2 * x0.size``.

    Returns
    -------
    OptimizeResult
        ``converged`` only at a minimum (a stationary ``x0``, or a run confined to a subspace, is probed:
        ``result._verdict``).

    Derived in: chapter "Optimizers" § "Newton's method".
    """
    if hessp is None:
        raise ValueError("truncated_newton needs hessp: pass a callable hessp(x, v) -> H(x) v")
    if grad is True:
        objective = fun
    elif callable(grad):
        def objective(x):   # named here: newton_cg would say "from fun"
            return fun(x), real_array(grad(x), "the gradient (from grad)")
    else:
        raise ValueError("grad must be a callable, or True when fun returns (f, g): pass grad")

    def with_hessian_product(x):
        f, g = objective(x)
        return f, g, (lambda v: _hessian_product(hessp, x, v), None)

    cg_max_iter = 2 * np.size(x0) if cg_max_iter is None else cg_max_iter
    return newton_cg(with_hessian_product, x0, max_iter=max_iter, gtol=gtol, gscale=gscale,
                     cg_max_iter=cg_max_iter)


def _hessian_product(hessp, x, v):
    """``hessp(x, v)`` as a real vector of ``v``'s shape, or a clear error naming hessp."""
    Hv = real_array(hessp(x, v), "the Hessian product (from hessp)")
    if Hv.shape != v.shape:
        raise ValueError(f"hessp(x, v) returned shape {Hv.shape} for v of shape {v.shape}; fix hessp to return "
                         "the product H(x) v, one entry per coordinate of x")
    return Hv


def _column_norms(J):
    """``||J_:j||`` for each column, without overflow or underflow: each column is divided by a power of
    two near its largest entry first (exact), as columns of 1e-150 and 1e150 have squares beyond float64."""
    c = _power_of_two_scale(np.max(np.abs(J), axis=0), normal=True)
    return c * np.sqrt(np.sum((J / c) ** 2, axis=0))


def _marquardt_scales(J, D=None):
    """Marquardt's column scales ``D_j``: the running maximum over the iterations of ``||J_:j||`` (as
    MINPACK's ``lmder`` keeps it), 1 for a column that has been zero so far.

    Damping with ``D^2 = diag(J'J)`` rather than ``I`` makes the step the same whatever the units
    of each coordinate: with one column of 1e8 and one of 1e-8, ``lam I`` is far below the first
    column's curvature and far above the second's, so that coordinate never moves and the run stopped
    (converged) at the wrong point. The running maximum keeps ``lam`` from shrinking with a column."""
    norms = _column_norms(J)
    D = norms if D is None else np.maximum(D, norms)
    return D


def _damped_step(residual, J, r, x, f, lam, D):
    """``(d, r(x + d), f(x + d), lam, evaluations)``: the step ``(J'J + lam D^2) d = -J'r`` with
    ``lam`` multiplied by 10 until ``f`` decreases (then divided by 10 for the next step);
    ``d`` is None when ``lam`` exceeds 1e16 first.

    The system is solved in the scaled coordinates ``s = D d`` (:func:`_marquardt_scales`), as
    ``(Js'Js + lam I) s = -Js'r`` with ``Js = J D^{-1}``, whose columns have norms at most 1: so ``lam``
    and its range [1e-15, 1e16] are relative to ``J'J``, column by column, whatever the scale of ``J``."""
    Ds = np.where(D > 0, D, 1.0)
    Js, evals = J / Ds, 0
    A, rhs = Js.T @ Js, -(Js.T @ r)
    f_of = _lm_objective(residual, r)
    while True:
        try:
            d = scipy.linalg.solve(A + lam * np.eye(x.size), rhs, assume_a="pos") / Ds
        except np.linalg.LinAlgError:     # J'J + lam D^2 numerically singular: damp more
            d = None
        if d is not None and np.all(np.isfinite(d)):
            r_new = real_array(residual(x + d), "the residual (from residual)")
            evals += 1
            if f_of.scaled(r_new) < f_of.scaled(r):
                return d, r_new, 0.5 * float(r_new @ r_new), max(lam / 10, 1e-15), evals
        lam *= 10
        if lam > 1e16:
            return None, None, None, lam, evals


@checked_arguments
def levenberg_marquardt(residual, x0, jac=None, *, lam0=1e-3, max_iter=200, gtol=1e-10, xtol=1e-12):
    """Levenberg-Marquardt for nonlinear least squares ``min (1/2) ||r(x)||^2``.

    Step ``(J'J + lam D^2) d = -J'r``: Gauss-Newton for small ``lam``, a short gradient step for large
    ``lam``. ``D^2 = diag(J'J)`` is Marquardt's scaling (``D_j = ||J_:j||``, kept as the running maximum
    over the iterations, as MINPACK does), so ``lam`` is relative to each column's own curvature and the
    run is the same whatever the units of each coordinate of ``x`` or the scale of ``r``. ``lam`` is
    divided by 10 after a step that lowers the objective and multiplied by 10 (step rejected) otherwise.
    Stops when the scaled gradient ``max_j |(J'r)_j| / D_j`` falls below ``gtol`` times its value at ``x0`` or
    times ``||r||`` (the cosine test of MINPACK and scipy: it decides at a start at the minimiser, whose gradient
    no step can shrink), or a step below ``xtol * max |x|``, and only at a minimum: where ``r != 0``, ``f`` is probed
    along the direction of least ``J'J`` curvature (``linbook.optim.result._lower_by_curvature``; ``x^3 - 1`` at 0
    has ``J = 0``) and the run goes on from a lower point if the probe finds one.

    Parameters
    ----------
    residual : callable
        ``r(x) -> (m,)``.
    jac : callable
        ``J(x) -> (m, d)``, the Jacobian of ``residual`` (required: else a clear error says how to get one).

    Returns
    -------
    OptimizeResult
        ``fun`` is ``||r||^2 / 2``.

    Derived in: chapter "Optimizers" § "Levenberg–Marquardt and truncated Newton".
    """
    x, r, J, f, early = _lm_start(residual, jac, x0)
    if early:
        return early
    lm = _LM(residual, jac, x, r, J, f)
    lam, path, converged, k, msg = float(lam0), [x.copy()], False, 0, _msg_max_iter(max_iter)
    for k in range(1, max_iter + 1):
        if lm.small_grad(gtol):
            if not lm.escaped():
                converged, k, msg = True, k - 1, MSG_GTOL
                break
            path.append(lm.x.copy())        # the probe's point: a step, then on from there
            continue
        d, r_new, f_new, lam, evals = _damped_step(residual, lm.J, lm.r, lm.x, lm.f, lam, lm.D)
        lm.n_fev += evals
        if d is None:
            msg, k = "no decrease possible (at rounding level if converged)", k - 1
            # an exact fit (r = 0), not f = ||r||^2 / 2 == 0: that underflows for residuals below ~1e-162
            converged = (lm.small_grad(ROUNDING_ALLOWANCE * gtol) or not np.any(lm.r)) and not lm.escaped()
            break
        small = _small_step(d, lm.x, xtol)
        if not lm.move(lm.x + d, r_new, f_new):
            msg = "the Jacobian became non-finite: check jac (overflow?)"
            break
        path.append(lm.x.copy())
        if small and lm.small_grad(ROUNDING_ALLOWANCE * gtol) and not lm.escaped():
            converged, msg = True, MSG_XTOL
            break
    else:
        converged = lm.small_grad(gtol) and not lm.escaped()
        msg = MSG_GTOL if converged else msg
    return OptimizeResult(lm.x, lm.f, lm.g, bool(converged), k, lm.n_fev, np.array(path), msg)


class _LM:
    """The state of :func:`levenberg_marquardt` at its current point: ``x``, ``r``, ``J``, ``f``, the
    gradient ``g = J'r``, Marquardt's scales ``D`` and the scaled gradient's size at ``x0``."""

    def __init__(self, residual, jac, x, r, J, f):
        self.residual, self.jac, self.n_fev = residual, jac, 1
        self.D = _marquardt_scales(J)
        self._set(x, r, J, f)
        self.scale = float(np.max(np.abs(self._scaled_grad()), initial=0.0))
        self.scale_from_x0 = self.scale > 0

    def _set(self, x, r, J, f):
        """Move to ``x``; the reported gradient ``J'r`` is ``D`` times the scaled one (``J'r`` summed as it
        stands overflows to inf - inf = NaN for columns of 1e300 and residuals of 1e150)."""
        self.x, self.r, self.J, self.f = x, r, J, f
        self.unit = _power_of_two_scale(np.max(np.abs(r), initial=0.0), normal=True)   # ||r|| without overflow
        with np.errstate(over="ignore"):
            self.g = np.where(self.D > 0, self.D, 1.0) * self._scaled_grad()

    def _scaled_grad(self):
        """``(J'r)_j / D_j``, as ``(J D^{-1})'r``: ``J'r`` itself underflows for ``J`` and ``r`` of 1e-200."""
        return (self.J / np.where(self.D > 0, self.D, 1.0)).T @ self.r

    def small_grad(self, gtol):
        """The gradient test on ``(J'r)_j / D_j``: relative to its size at ``x0`` (to 0 if that was 0), or to
        ``||r||``, MINPACK's and scipy's: the cosine of the angle between ``r`` and each column of ``J``.

        The second alone is met at a start already at the minimiser (up to 1e-9, say): there the scaled gradient
        is ~1e-8 of ``||r||``, and 1e-10 of that is below the rounding of ``J'r``, so no step could pass the first
        and the run stopped with ``converged=False`` at the minimum."""
        gs = np.max(np.abs(self._scaled_grad()), initial=0.0)
        with np.errstate(over="ignore", under="ignore"):
            r_norm = self.unit * np.linalg.norm(self.r / self.unit)
        return bool(gs <= gtol * max(self.scale, r_norm)) if self.scale > 0 else not gs

    def move(self, x, r, f):
        """Go to ``x`` (with its residual ``r`` and ``f``); ``False`` if ``J`` is not finite there."""
        J = real_array(self.jac(x), "the Jacobian (from jac)")
        if not np.all(np.isfinite(J)):
            return False
        self.D = _marquardt_scales(J, self.D)
        self._set(x, r, J, f)
        if not self.scale_from_x0:      # x0 was stationary (and not a minimum): the largest gradient since
            self.scale = max(self.scale, float(np.max(np.abs(self._scaled_grad()), initial=0.0)))
        return True

    def escaped(self):
        """Whether the point, about to be called converged, is not a minimum and the run moved on from it.

        An exact fit (``r = 0``) is a global minimum. Otherwise ``J'J`` leaves the curvature of ``r``
        itself unknown, most of all along ``J``'s direction of least singular value; there ``f`` is
        probed (``linbook.optim.result._lower_by_curvature``), and a lower point found is moved to."""
        if not np.any(self.r):
            return False
        _, _, Vt = np.linalg.svd(self.J / np.where(self.D > 0, self.D, 1.0))
        f_at = _lm_objective(self.residual, self.r, self)       # in units of u^2: f and g divided by u^2
        gu = (self.J / f_at.unit).T @ (self.r / f_at.unit)
        lower = _lower_by_curvature(f_at, self.x, f_at.scaled(self.r), gu, [Vt[-1]])
        if lower is None:
            return False
        r = real_array(self.residual(lower), "the residual (from residual)")
        self.n_fev += 1
        return self.move(lower, r, 0.5 * float(r @ r))


class _lm_objective:
    """``||r||^2 / 2`` for comparisons near the current residual ``r``, in units of ``u^2``, ``u`` a power of
    two near ``max |r|`` (exact): ``||r||^2`` of residuals of 1e-170 underflows to 0, and then no step
    could be seen to lower it. Calling it, ``f_at(x)``, evaluates ``residual`` there (``inf`` where not finite)."""

    def __init__(self, residual, r, counter=None):
        self.residual, self.counter = residual, counter
        self.unit = _power_of_two_scale(np.max(np.abs(r), initial=0.0), normal=True)

    def scaled(self, r):
        with np.errstate(over="ignore", invalid="ignore"):
            ru = np.asarray(r, dtype=float) / self.unit
            f = 0.5 * float(ru @ ru)
        return f if np.isfinite(f) else np.inf

    def __call__(self, x):
        self.counter.n_fev += 1
        with np.errstate(over="ignore", invalid="ignore"):
            return self.scaled(self.residual(x))


def _lm_start(residual, jac, x0):
    """``(x0, r, J, f, early)`` at ``x0``, with ``f = ||r||^2 / 2``; ``early`` is the result to return at
    once when they are not finite, else ``None``."""
    if jac is None:
        raise ValueError("levenberg_marquardt needs jac, the Jacobian of residual: pass jac, a callable "
                         "jac(x) -> (m, d) array with entries d r_i / d x_j (e.g. from sympy, or by finite "
                         "differences: scipy.optimize.approx_fprime(x, residual))")
    x = _x0(x0)
    r = real_array(residual(x), "the residual (from residual)")
    J = real_array(jac(x), "the Jacobian (from jac)")
    if r.ndim != 1 or J.shape != (r.size, x.size):
        raise ValueError(f"residual(x0) has shape {r.shape} and jac(x0) {J.shape}; with x0 of length {x.size} "
                         f"they must be (m,) and (m, {x.size}): fix residual to return a vector and jac its "
                         "Jacobian, one row per residual and one column per coordinate of x")
    with np.errstate(over="ignore"):
        f = 0.5 * float(r @ r)
    if np.isinf(f) and np.all(np.isfinite(r)):
        raise ValueError(f"||residual(x0)||^2 overflows float64 (max |r| = {np.max(np.abs(r)):.3g}): divide the "
                         "residual (and jac) by a constant near that size; the minimiser is the same")
    if not (np.isfinite(f) and np.all(np.isfinite(J))):
        return x, r, J, f, OptimizeResult(x, np.nan, None, False, 0, 1, x[None, :].copy(),
                                          "the residual or its Jacobian is not finite at x0: start elsewhere")
    return x, r, J, f, None
