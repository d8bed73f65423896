"""The result record and the stopping rules shared by every optimizer in :mod:`linbook.optim`.

Stopping rules are *scale-invariant*: the gradient test compares ``max |g|`` with the
gradient's own size at the start, ``gtol * max |g(x0)|`` (or a scale the caller
states, ``gscale``: a number, or one per coordinate, ``max_j |g_j| / gscale_j <= gtol``), and the step test compares ``max |step|`` with ``xtol * max |x|``.
Multiplying the objective by a constant, or every coordinate of ``x`` by one, leaves
both tests, and so the iterates at which a method stops, unchanged (an absolute test
``max |g| <= 1e-6`` would stop at once on a problem whose features were scaled by
``1e-8``, with the wrong answer).

What ``converged`` means (decided in session 30, and kept): the test that passed, at a point that is not a
detected saddle or maximum (:func:`_verdict`). It does not bound the distance to the minimiser. A gradient test
bounds ``||x - x*||`` only by ``||g|| / lambda_min(H)``: on a quadratic of condition ``kappa`` a point passing
``gtol`` may lie ``gtol * kappa`` times the start's distance away (gradient descent on ``diag(1e12, 1e8, 1e4, 1)``
stops 8.5e-7 from ``x*`` along the stiff axis, ``f = 0.36`` from ``5e11``; with coordinates in units ``1e3^j``,
condition 7e18, truncated Newton stops at ``x_0 = 8e-8`` against ``x*_0 = -0.024``). The quasi-Newton matrices
do not repair it: on that problem, with a line search able to move, BFGS passed ``gtol`` 100% off with ``H g`` of
1e-16, since ``H`` knows only the directions the run explored. Where a bound on ``x`` is
wanted, use Newton's step ``H^{-1} g`` with the exact Hessian: :func:`linbook.optim.newton` (``step_tol``,
``step_scale``) or :func:`linbook.optim.resume_until_step_is_short` around a first-order method, or state the
gradient's natural size per coordinate (``gscale``).

Derived in: chapter "Optimizers" § "Gradient descent".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

__all__ = ["OptimizeResult"]


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
        Whether a convergence test passed (never after a non-finite objective).
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
    """Wraps ``fun``/``grad`` into one ``fg(x) -> (f, g)`` that counts evaluations.

    A non-finite objective or gradient is returned as ``f = +inf`` (so line searches
    shrink away from it) and remembered in ``nonfinite``, so a method can stop at once
    and say so instead of running on to ``max_iter``. Each line search clears ``nonfinite`` as it
    starts: a search that fails is then blamed on overflow only where *it* met some, not where
    f's rounding stalled it long after an early trial step overflowed (a Laplace approximation
    refused such a mode as "overflow"). ``n_nonfinite`` counts them all.
    """

    def __init__(self, fun, grad, hess=None, *, source="fun"):
        self.n = self.n_nonfinite = 0
        self.source = source        # the argument the values come from, for the errors
        self.nonfinite = False
        self.unbounded = False      # f = -inf seen: unbounded below, or overflow
        self.with_hess = hess is True
        if self.with_hess:
            if grad is not True:
                raise ValueError("hess=True needs grad=True: fun(x) must return (f, g, H); pass grad=True")
            self._fg = fun
        elif grad is True:
            self._fg = fun
        elif callable(grad):
            self._fg = lambda x: (fun(x), grad(x))
        else:
            raise ValueError("grad must be a callable, or True when fun returns (f, g): pass grad")
        f_from, g_from = ("fun", "grad") if callable(grad) and not self.with_hess else (source, source)
        self._names = f"the objective value (from {f_from})", f"the gradient (from {g_from})"

    def __call__(self, x):
        self.n += 1
        with np.errstate(over="ignore", invalid="ignore"):   # divergence is reported, not warned
            out = self._fg(x)
        if not isinstance(out, (tuple, list)) or len(out) < 2 + self.with_hess:
            what = "(f, g, H)" if self.with_hess else "(f, g)"
            alone = ", or pass grad (and hess) as separate callables" if self.source == "fun" else ""
            raise TypeError(f"{self.source} must return the tuple {what}; got {type(out).__name__}. Fix "
                            f"{self.source} to return {what}{alone}")
        f, g = real_scalar(out[0], self._names[0]), real_array(out[1], self._names[1])
        if g.shape != x.shape:
            fix = "grad (or fun, with grad=True)" if self.source == "fun" else self.source
            raise ValueError(f"the gradient has shape {g.shape} but x has shape {x.shape}; "
                             f"fix {fix} to return one partial derivative per coordinate of x")
        ok = math.isfinite(f) and bool(np.isfinite(g).all())
        if not ok:
            self.nonfinite = True
            self.n_nonfinite += 1
            self.unbounded |= f == -np.inf
            f = np.inf
        if self.with_hess:
            return f, g, (out[2] if ok else None)
        return f, g


def real_array(value, name, *, copy=False):
    """``value`` as a float ndarray, or a clear error naming ``name``.

    Refuses what ``np.asarray(value, dtype=float)`` would mangle or fail on deep inside
    numpy: sparse matrices (an object array, "setting an array element with a
    sequence"), complex numbers (the imaginary part dropped with a ComplexWarning) and
    non-numeric entries.
    """
    if type(value) is np.ndarray and value.dtype == np.float64 and not copy:
        return value               # what np.array(value, dtype=float, copy=None) returns, without the checks
    if hasattr(value, "tocsr") or hasattr(value, "toarray"):
        raise TypeError(f"{name} must be a dense array; got a sparse matrix. Pass {name}.toarray() "
                        "(the optimisers and irls work on dense arrays).")
    try:
        complex_ = np.iscomplexobj(value)
    except (TypeError, ValueError):   # ragged, e.g. a tuple (f, g) where g alone was due: np.asarray raises
        complex_ = False              # below, with the message naming `name`
    if complex_:
        raise TypeError(f"{name} must be real; got complex numbers. Pass its real part (np.real) "
                        "or split real and imaginary parts into separate coordinates.")
    try:
        return np.array(value, dtype=float) if copy else np.asarray(value, dtype=float)   # copy=None needs numpy 2
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be an array of real numbers; np.asarray failed with: {exc}. "
                        f"Pass {name} as a numeric array") from None


def real_scalar(value, name):
    """``value`` as a Python float, or :func:`real_array`'s clear error naming ``name``.
    A float (``np.float64`` is one) is real as it is: objectives return one at every evaluation."""
    return float(value) if isinstance(value, float) else float(real_array(value, name))


def _check_args(caller, **args):
    """Check a function's arguments by linbook's one constraint scheme (:func:`linbook.base.check_param_values`,
    one wording: "The 'step' parameter of gradient_descent must be ... Got -1 instead. Set step to ...").

    Each keyword is ``name=(value, rules)`` with ``rules(base) -> [constraint, ...]`` built from
    :mod:`linbook.base`'s constraints: that module loads scikit-learn, so it is imported when an
    optimizer is first called, not by ``import linbook.optim``.
    """
    from .. import base
    base.check_param_values(caller, {name: rules(base) for name, (_, rules) in args.items()},
                            {name: value for name, (value, _) in args.items()})


def _rule(*names):
    """A rule from :mod:`linbook.base`'s constraints, by name ("callable" and "True" are Python's)."""
    def rule(b):
        return [callable if n == "callable" else b.Options(bool, {True}) if n == "True" else
                getattr(b, n, n) for n in names]
    return rule


#: linbook.optim's arguments by name, one rule each, so every public function checks an argument the same way
#: (``None`` is also accepted where it is the default): ``name -> rule(linbook.base) -> [constraint, ...]``.
_ARGUMENT_RULES = {
    **dict.fromkeys(("fun", "residual", "run", "step_size", "fg", "fun_grad", "hessp", "jac", "callback"),
                    _rule("callable")),
    "grad": _rule("callable", "True"), "hess": _rule("callable", "True", "array-like"),
    **dict.fromkeys(("max_iter", "cg_max_iter"), _rule("NON_NEGATIVE_INT")), "m": _rule("POSITIVE_INT"),
    **dict.fromkeys(("gtol", "xtol", "ftol", "tol", "step_tol", "decrement_tol", "damping"), _rule("NON_NEGATIVE")),
    **dict.fromkeys(("lam0", "lr"), _rule("POSITIVE")), **dict.fromkeys(("line_search", "polish"), _rule("boolean")),
}


def checked_arguments(func):
    """Check ``func``'s arguments named in :data:`_ARGUMENT_RULES` before calling it: a clear error naming
    the argument and what to set (linbook's one constraint wording), instead of numpy's or Python's from
    deep inside the method ("'float' object cannot be interpreted as an integer")."""
    import functools
    import inspect

    signature = inspect.signature(func)
    checked = [n for n in signature.parameters if n in _ARGUMENT_RULES]

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        given = signature.bind(*args, **kwargs).arguments
        values = {n: given.get(n, signature.parameters[n].default) for n in checked}
        _check_args(func.__name__, **{n: (v, _ARGUMENT_RULES[n]) for n, v in values.items()
                                      if not (v is None and signature.parameters[n].default is None)})
        return func(*args, **kwargs)

    return wrapper


def _x0(x0, name="x0"):
    x = real_array(x0, name, copy=True).ravel()
    if x.size == 0:
        raise ValueError(f"{name} is empty: pass a starting point with at least one coordinate")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must be finite: pass a starting point without NaN or inf")
    return x


def _gscale(g0, gscale):
    """The gradient's natural size: ``max |g(x0)|`` unless the caller states one (a number,
    or one positive number per coordinate)."""
    if gscale is not None:
        gs = real_array(gscale, "gscale")
        if gs.ndim > 1 or (gs.ndim == 1 and gs.shape != g0.shape) or not np.all((gs > 0) & np.isfinite(gs)):
            raise ValueError("gscale must be a positive finite number, or one per coordinate of x (the gradient's "
                             f"natural size); got {gscale!r}. Pass such a gscale, or None for max |g(x0)|")
        return gs if gs.ndim else float(gs)
    return float(np.max(np.abs(g0), initial=0.0))


def _small_grad(g, gtol, scale):
    """``max_j |g_j| / scale_j <= gtol`` (``scale`` a number or one per coordinate)."""
    return (np.abs(g) / scale).max(initial=0.0) <= gtol


#: Where ``f``'s rounding stops a run (no decrease found, or steps below ``xtol``), the gradient counts as small
#: up to this multiple of ``gtol``: the last digits of ``f`` limit how small it can get.
ROUNDING_ALLOWANCE = 1e3


def _nearly_small_grad(g, gtol, scale):
    """``_small_grad`` with :data:`ROUNDING_ALLOWANCE`: a run stopped by rounding is converged only there."""
    return _small_grad(g, ROUNDING_ALLOWANCE * gtol, scale)


def _small_step(step, x, xtol):
    """``max |step| <= xtol * max |x|``: relative, so it does not depend on the units of x. It ends a run only
    where the gradient is nearly small too (:func:`_nearly_small_grad`): beside a coordinate of 1e12 any step up to
    1 is "small", and Newton stopped after one step at f = 202 against a minimum of 1."""
    return xtol > 0 and np.max(np.abs(step), initial=0.0) <= xtol * np.max(np.abs(x), initial=0.0)


def _stop_reason(fg, g, gtol, scale, small_step=False):
    """The end-of-iteration test shared by the solvers: ``(converged, message)``, or ``None`` to go on.

    In order: the objective hit -inf (not converged), the gradient is small relative to its
    scale, the step is small relative to ``|x|``.
    """
    if fg.unbounded:
        return False, MSG_UNBOUNDED
    if _small_grad(g, gtol, scale):
        return True, MSG_GTOL
    if small_step and _nearly_small_grad(g, gtol, scale):
        return True, MSG_XTOL
    return None


MSG_NONFINITE_X0 = ("the objective or its gradient is not finite at the starting point x0: "
                    "check the objective (log of 0? overflow?) or start elsewhere")
MSG_NONFINITE = ("stopped: the objective or gradient became non-finite (NaN or inf) and no "
                 "finite point with a lower objective was found along the search direction; "
                 "scale the problem, reduce the step size or add a penalty")
MSG_UNBOUNDED = ("stopped: the objective reached -inf, so it is unbounded below (or overflowed); "
                 "check the objective, add a penalty or scale the problem")
MSG_ZERO_GRAD = "the gradient is zero at the starting point (x0 is stationary)"
MSG_GTOL = "gradient below gtol (relative to its size at the start)"
MSG_XTOL = "step below xtol (relative to |x|)"
MSG_DECREMENT = "Newton decrement g'H^{-1}g/2 below decrement_tol"


MSG_NO_DECREASE = ("line search failed: no decrease of f at rounding level (x is optimal to the "
                   "precision f can resolve if the gradient is small)")
#: Appended where the line search stalled at rounding level but Newton's next step is still long.
MSG_STEP_STILL_LONG = " (and the Newton step is still long: not converged)"


def _no_decrease(g, gtol, scale, *counted):
    """``(message, converged)`` when a line search found no decrease along a descent direction.

    After a non-finite objective (seen by any of the ``counted`` evaluations): not converged.
    Otherwise the decrease is below rounding, which is convergence only where the gradient
    is nearly small (:func:`_nearly_small_grad`).
    """
    if any(fg.nonfinite for fg in counted):
        return MSG_NONFINITE, False
    return MSG_NO_DECREASE, bool(_nearly_small_grad(g, gtol, scale))


def _msg_max_iter(k):
    return (f"max_iter reached: {k} iterations without meeting gtol or xtol; "
            "increase max_iter or loosen gtol")


MSG_NOT_A_MINIMUM = ("x0 is a stationary point (zero gradient) but not a minimum: f decreases along a probe "
                     "direction (a saddle or a maximum); start elsewhere, e.g. at x0 plus a small random step")
#: At most this many coordinate axes are probed at a stationary x0 (6 evaluations each).
_PROBE_AXES = 50
#: The probe's step sizes, relative to ``max |x|`` (to 1 at ``x = 0``, which has no scale of its own): small,
#: so that the probe sees the curvature at ``x`` and does not leap into another basin of a local minimum.
PROBE_SIZES = (2.0 ** -20, 2.0 ** -10, 2.0 ** -5)


def _lower_by_curvature(f_at, x, f, g, directions, size=None):
    """The rule for ``converged`` at a stationary point, shared by every method (their docstrings
    point here): a (nearly) zero gradient is a minimum only if ``f`` does not fall, along the directions
    the method knows least about, by more than the gradient explains. Returns a point with ``f`` lower
    than ``f(x)`` in that way, or ``None``.

    A method with curvature (Levenberg-Marquardt's ``J'J``) passes the directions of least or unknown
    curvature; one without, :func:`_probe_directions`. Along each direction ``v`` and size ``h``
    (:data:`PROBE_SIZES` times ``max |x|``) the lower of ``f(x + hv)`` and ``f(x - hv)`` must stay above
    ``f(x) - h |g'v|`` (to rounding): near a minimum ``f(x +- hv) = f(x) +- h g'v + (h^2 / 2) v'Hv`` with
    ``v'Hv >= 0``, so a small leftover gradient (a minimum met to ``gtol``) never counts, while a saddle,
    a maximum or ``x^3`` at 0 do. A flat plateau is left as a (weak) minimum. ``f_at(x) -> float`` may
    return ``inf`` (it then never counts as lower). ``size`` replaces ``max |x|`` where the caller knows a larger
    scale of ``x``.
    """
    size = size or float(np.max(np.abs(x), initial=0.0)) or 1.0
    rounding = 16 * np.finfo(float).eps * abs(f)
    for v in directions:
        v = v / np.max(np.abs(v))
        for h in PROBE_SIZES:
            step = h * size * v
            best = min((f_at(x + step), 1.0), (f_at(x - step), -1.0))
            if best[0] < f - abs(float(g @ step)) - rounding:
                return x + best[1] * step
    return None


def _probe_directions(d):
    """The directions probed where no curvature is known: the first :data:`_PROBE_AXES` axes, the
    all-ones and alternating-sign vectors (``x1 x2`` curves down only off the axes) and two fixed
    random ones (seeded, so a run is repeatable)."""
    rng = np.random.default_rng(0)
    signs = np.where(np.arange(d) % 2 == 0, 1.0, -1.0)
    return [*np.eye(d)[:_PROBE_AXES], np.ones(d), signs, *rng.standard_normal((2, d))]


MSG_CONFINED_NOT_A_MINIMUM = (
    "stopped at a stationary point that is not a minimum: the run stayed in a subspace its gradient never left "
    "(a symmetry of f, e.g. a start on an axis), and f decreases across it (a saddle or a maximum); start "
    "elsewhere, e.g. at x plus a small random step")
#: At most this many of the last steps define the subspace a run explored (see :func:`_explored_basis`).
_PATH_STEPS = 100
#: A gradient this small relative to its scale is rounding noise (~64 units in the last place of the gradient).
_ROUNDING_GRADIENT = 64 * np.finfo(float).eps
#: At most this many Lanczos steps (one gradient each) estimate the least curvature across it.
_LANCZOS_STEPS = 6


def _explored_basis(path, g, noise=False):
    """An orthonormal basis ``Q`` of the subspace a run was confined to, or ``None`` when it was not.

    Every method here steps within the span of the gradients it has seen (and Newton's steps, within an
    invariant subspace of a symmetric ``f``), so a start on a symmetry axis of ``f`` (``x^2 - y^2`` from
    ``(1, 0)``) never leaves it and can stop at a saddle with ``g = 0``, knowing nothing of ``f`` across the
    axis. A run confined so ends with its gradient inside the span of its steps; an ordinary one (not confined,
    or whose steps span every direction) does not, and costs no evaluation here. Steps are normalised first:
    the last steps of a converging run are many decades shorter than the first. A gradient at rounding level
    (``noise``) has no direction to tell: the run counts as confined where its steps do not span every direction
    (``x^2 - y^2`` turned by 45 degrees: the gradient at the saddle was 1e-16 off the axis).
    """
    steps = np.diff(np.asarray(path, dtype=float)[-_PATH_STEPS - 1:], axis=0)
    sizes = np.max(np.abs(steps), axis=1, initial=0.0)
    steps = steps[sizes > 0] / sizes[sizes > 0, None]
    if not steps.size or not np.all(np.isfinite(g)):
        return None
    Q, R, _ = scipy.linalg.qr(steps.T, mode="economic", pivoting=True)
    Q = Q[:, :int(np.sum(np.abs(np.diag(R)) > 1e-10 * abs(R[0, 0])))]
    top = np.max(np.abs(g), initial=0.0)
    u = g / top if top > 0 else g
    if Q.shape[1] == g.size or not noise and np.linalg.norm(u - Q @ (Q.T @ u)) > 1e-8 * np.linalg.norm(u):
        return None
    return Q


def _least_curvature_across(grad_at, x, g, Q, size):
    """The direction of least curvature of ``f`` across the span of ``Q`` (orthogonal to it), by a few
    Lanczos steps on gradient differences ``H v ~ (g(x + h v) - g) / h``: one gradient per step, where probing
    ``f`` along each of the (up to ``d - 1``) directions across would cost six each."""
    def across(v):
        return v - Q @ (Q.T @ v)
    h = 2.0 ** -10 * (size or 1.0)
    v = across(np.random.default_rng(0).standard_normal(x.size))
    V, alpha, beta = [v / np.linalg.norm(v)], [], []
    for _ in range(min(_LANCZOS_STEPS, x.size - Q.shape[1])):
        Hv = across((grad_at(x + h * V[-1]) - g) / h)
        if not np.all(np.isfinite(Hv)):
            break
        alpha.append(float(V[-1] @ Hv))
        w = Hv - sum(float(u @ Hv) * u for u in V)          # (full reorthogonalisation: a few vectors)
        if np.linalg.norm(w) <= 1e-8 * np.linalg.norm(Hv) or len(V) == _LANCZOS_STEPS:
            break
        beta.append(float(np.linalg.norm(w)))
        V.append(w / beta[-1])
    if not alpha:
        return V[0]
    _, vectors = scipy.linalg.eigh_tridiagonal(np.array(alpha), np.array(beta[:len(alpha) - 1]))
    return np.array(V[:len(alpha)]).T @ vectors[:, 0]


def _declared_convex(fg):
    """Whether the objective behind ``fg`` (a :class:`_Counted`) says it is convex (``fun.convex = True``): then a
    stationary point is a minimum and no probe runs. linbook's logistic and probit losses say so: over sample
    weights ten decades apart, ``f``'s rounding over the heavy rows read as a fall along a flat direction (a
    multinomial fit was called "not a minimum")."""
    return bool(getattr(getattr(fg, "_fg", None), "convex", False))


def _verdict(fg, path, x, f, g, scale, converged, msg, positive_definite=None, convex=False):
    """``(converged, msg)`` of a run that took steps: where the run was confined to a subspace
    (:func:`_explored_basis`), :func:`_lower_by_curvature` along the direction of least curvature across it
    turns a convergence at a saddle or maximum into ``False``, "not a minimum". ``fg(x) -> (f, g, ...)``;
    ``scale`` is the gradient's (see :func:`_gscale`); ``positive_definite()`` (Newton's), whether the Hessian at
    ``x`` is: a minimum then, without a probe. The one rule for ``converged`` after a step, as :func:`_start`'s
    is before the first. Not for an objective that declares itself ``convex`` (:func:`_declared_convex`)."""
    noise = bool(_small_grad(g, _ROUNDING_GRADIENT, scale))
    Q = _explored_basis(path, g, noise) if converged and len(path) > 1 and not convex else None
    if Q is None or (positive_definite is not None and positive_definite()):
        return converged, msg
    # x's scale: also the distance the run came (Newton stopped at y = 1e-12 on x^3 + y^2 from (0, 1), where probes
    # of 1e-12 * 2^-5 see x^3 below the rounding of f)
    size = max(float(np.max(np.abs(x))), float(np.max(np.abs(np.asarray(path) - x))))
    v = _least_curvature_across(lambda z: fg(z)[1], x, g, Q, size)
    if _lower_by_curvature(lambda z: fg(z)[0], x, f, g, [v], size) is not None:
        return False, MSG_CONFINED_NOT_A_MINIMUM
    return converged, msg


def _start(fg, x, gtol, gscale, path_x=None):
    """Evaluate at ``x0``. Returns ``(f, g, scale, early)`` where ``early`` is a result to
    return at once (objective not finite at x0, or x0 already stationary) or ``None``."""
    out = fg(x)
    f, g = out[0], out[1]
    if fg.nonfinite:
        return out, None, OptimizeResult(x, float("nan"), g, False, 0, fg.n, x[None, :].copy(),
                                         MSG_NONFINITE_X0)
    scale = _gscale(g, gscale)
    if np.all(scale == 0.0) or (np.all(scale > 0) and _small_grad(g, gtol, scale)):
        msg = MSG_ZERO_GRAD if np.all(scale == 0.0) else MSG_GTOL
        # a method that has not moved knows no curvature at a zero gradient: probe (see _lower_by_curvature), also
        # under a stated gscale (a saddle at x0 was called a minimum there), unless the objective is convex
        probe = not np.any(g) and not _declared_convex(fg)
        minimum = not probe or _lower_by_curvature(lambda z: fg(z)[0], x, f, g, _probe_directions(x.size)) is None
        return out, scale, OptimizeResult(x, f, g, minimum, 0, fg.n, x[None, :].copy(),
                                          msg if minimum else MSG_NOT_A_MINIMUM)
    return out, scale, None
