"""Line searches: Armijo backtracking and the strong Wolfe conditions.

Derived in: chapter "Optimizers" § "Line search".
"""

from __future__ import annotations

from numbers import Real

import numpy as np

from ..numerics import _power_of_two_scale

__all__ = ["backtracking", "wolfe_line_search"]

_NO_C2 = object()       # backtracking has no curvature constant c2


def _check_search(caller, fg, x, f, g, d, *, t0, c1, shrink=0.5, c2=_NO_C2, budget, budget_name):
    """The public searches' inputs: ``fg`` wrapped to check (and count) what it returns, the arrays as
    finite float vectors of one shape, ``d`` a descent direction (``g'd < 0``) and the constants in their
    ranges; or a clear error naming the argument."""
    from .result import _Counted, real_array, real_scalar
    if not callable(fg):
        raise TypeError(f"{caller}: fg must be a callable fg(x) -> (f, g); got {type(fg).__name__}. Pass fg")
    x, g, d = real_array(x, "x"), real_array(g, "g"), real_array(d, "the direction d")
    if not (x.shape == g.shape == d.shape and x.ndim == 1):
        raise ValueError(f"pass x, g and d as vectors of one length; got shapes {x.shape}, {g.shape}, {d.shape}")
    f = real_scalar(f, "f")
    for name, value, what in (("x", x, "the point"), ("f", f, "the objective at x"), ("g", g, "the gradient at x"),
                              ("d", d, "the direction")):
        if not np.all(np.isfinite(value)):
            raise ValueError(f"{caller}: {name} ({what}) must be finite; got {value!r}. Pass a finite {name} "
                             "(a line search starts from a point where the objective and its gradient are finite)")
    if not _constants_ok(t0, c1, shrink, c2, budget):
        _check_constants(caller, t0, c1, shrink, c2, budget, budget_name)
    slope = float(g @ d)
    if slope >= 0 and np.any(g != 0):
        why = "d is zero" if not np.any(d) else f"g'd = {slope:.3g} >= 0: f does not decrease along d"
        raise ValueError(f"{caller}: d must be a descent direction (g'd < 0), but {why}. Pass a d with "
                         "g @ d < 0, e.g. d = -g")
    return _Counted(fg, True, source="fg"), x, f, g, d


def _no_finite_trial(caller, fg, t):
    """A clear error when the search failed because ``fg`` was NaN or inf at every point it tried."""
    if t == 0.0 and fg.n and fg.n_nonfinite == fg.n:
        raise ValueError(f"{caller}: fg returned a NaN or infinite objective or gradient at every trial point "
                         f"x + t d ({fg.n} tried, t from t0 down), so no step can be taken. Fix fg (overflow? log "
                         "of 0?), or pass a smaller t0 or a shorter d")


def _constants_ok(t0, c1, shrink, c2, budget):
    """``0 < t0 < inf``, ``0 < shrink < 1``, ``0 < c1 < c2 < 1`` (``c2``: Wolfe's), ``budget >= 1`` an
    integer: a test cheap enough for every call (L-BFGS searches once per iteration)."""
    try:
        return bool(np.isfinite(t0) and t0 > 0 and 0 < shrink < 1 and 0 < c1 < 1 and (c2 is _NO_C2 or c1 < c2 < 1)
                    and isinstance(budget, (int, np.integer)) and budget >= 1)
    except TypeError:              # a constant that is not a number
        return False


def _check_constants(caller, t0, c1, shrink, c2, budget, budget_name):
    """Raise the one constraint scheme's error for the constant out of its range."""
    from .result import _check_args
    c1_low = c1 if isinstance(c1, Real) and 0 < c1 < 1 else 0.0     # c2's range starts at a valid c1
    wolfe = {} if c2 is _NO_C2 else {"c2": (c2, lambda b: [b.Interval(b.Real, c1_low, 1, closed="neither")])}
    _check_args(caller, t0=(t0, lambda b: [b.POSITIVE]), shrink=(shrink, lambda b: [b.OPEN_UNIT]),
                c1=(c1, lambda b: [b.OPEN_UNIT]), **wolfe, **{budget_name: (budget, lambda b: [b.POSITIVE_INT])})
    raise ValueError(f"{caller}: pass 0 < t0 < inf, 0 < shrink < 1, 0 < c1 < c2 < 1 and an integer "
                     f"{budget_name} >= 1")


def _armijo(fg, x, f, slope, d, *, t0=1.0, c1=1e-4, shrink=0.5, max_halvings=60):
    """Shrink ``t`` until ``f(x + t d) <= f + c1 t slope``; returns ``(t, fg(x + t d), n_eval)``.

    ``t = 0`` (and ``None``) when no such ``t`` was found.
    """
    fg.nonfinite = False            # what this search meets (see linbook.optim.result._Counted)
    t = t0
    for k in range(1, max_halvings + 1):
        out = fg(x + t * d)
        # strict decrease too: at rounding level f + c1 t slope == f would accept any t
        if out[0] <= f + c1 * t * slope and out[0] < f:
            return t, out, k
        t *= shrink
    return 0.0, None, max_halvings


def backtracking(fg, x, f, g, d, *, t0=1.0, c1=1e-4, shrink=0.5, max_halvings=60):
    """Backtracking (Armijo) line search.

    Shrinks ``t`` from ``t0`` by ``shrink`` until the sufficient-decrease condition
    ``f(x + t d) <= f(x) + c1 t g'd`` holds. A non-finite ``f(x + t d)`` counts as no
    decrease, so the search also backs away from overflow.

    Returns
    -------
    t, f_new, g_new, n_eval : float, float, ndarray, int
        ``t = 0`` when no decrease was found (at rounding level), or ``g = 0`` (``x`` is stationary).
        A trial where ``fg`` is not finite (objective or gradient) counts as no decrease.

    Raises ``ValueError``/``TypeError`` for arrays that are not finite real vectors of one length,
    ``d`` not a descent direction (``g'd >= 0`` with ``g != 0``), an ``fg`` that does not return
    ``(f, g)`` of the right shape or is NaN/inf at every trial, or constants outside ``t0 > 0``,
    ``0 < shrink < 1``, ``0 < c1 < 1``.

    Derived in: chapter "Optimizers" § "Line search".
    """
    fg, x, f, g, d = _check_search("backtracking", fg, x, f, g, d, t0=t0, c1=c1, shrink=shrink,
                                   budget=max_halvings, budget_name="max_halvings")
    if not np.any(g):                   # x is stationary: there is nothing to decrease
        return 0.0, f, g, 0
    t, out, k = _armijo(fg, x, f, float(g @ d), d, t0=t0, c1=c1, shrink=shrink,
                        max_halvings=max_halvings)
    _no_finite_trial("backtracking", fg, t)
    if out is None:
        return 0.0, f, g, k
    return t, out[0], out[1], k


def wolfe_line_search(fg, x, f, g, d, *, t0=1.0, c1=1e-4, c2=0.9, max_eval=30):
    """Line search for the strong Wolfe conditions (Nocedal and Wright, Algorithms 3.5-3.6).

    Finds ``t`` with ``f(x + t d) <= f + c1 t g'd`` and ``|g(x + t d)'d| <= c2 |g'd|``, or with
    Hager and Zhang's approximate Wolfe conditions, which it accepts first wherever ``f`` has not
    risen (``f(x + t d) <= f + 1e-14 |f|``): ``c2 g'd <= g(x + t d)'d <= (2 c1 - 1) g'd``, a slope
    that may have turned positive, up to ``(1 - 2 c1) |g'd|``, as in their CG_DESCENT (they hold
    near the minimum, where ``f``'s rounding hides the decrease Armijo's test asks for). Either
    way the curvature ``y's > 0`` holds, which keeps (L-)BFGS positive definite.
    Bracketing, then zoom by safeguarded cubic interpolation.

    Returns
    -------
    t, f_new, g_new, n_eval : float, float, ndarray, int
        ``t = 0`` when the search failed, or ``g = 0`` (``x`` is stationary). A trial where ``fg``
        is not finite (objective or gradient) counts as a step too long.

    Raises ``ValueError``/``TypeError`` as :func:`backtracking` does (arrays, ``d`` not a descent
    direction, ``fg``), or for constants outside ``t0 > 0``, ``0 < c1 < c2 < 1``.

    Derived in: chapter "Optimizers" § "Quasi-Newton methods: BFGS and L-BFGS".
    """
    fg, x, f, g, d = _check_search("wolfe_line_search", fg, x, f, g, d, t0=t0, c1=c1, c2=c2, budget=max_eval,
                                   budget_name="max_eval")
    out = _wolfe(fg, x, f, g, d, t0=t0, c1=c1, c2=c2, max_eval=max_eval)
    _no_finite_trial("wolfe_line_search", fg, out[0])
    return out


def _wolfe(fg, x, f, g, d, *, t0=1.0, c1=1e-4, c2=0.9, max_eval=30):
    """:func:`wolfe_line_search` on checked inputs (the optimizers' calls): ``t = 0`` when ``d`` is not a
    descent direction. ``fg`` returns ``f = inf`` where the objective or gradient is not finite (``_Counted``),
    which the search treats as a step too long."""
    fg.nonfinite = False            # what this search meets (see linbook.optim.result._Counted)
    # searched along d / c, c a power of two near max |d| (exact: the same trial points): g'd underflowed
    # to 0 for a gradient and direction of 1e-200 (an objective of scale 1e-200), and the search gave up
    c = _power_of_two_scale(np.max(np.abs(d), initial=0.0), normal=True)
    d, t0 = d / c, t0 * c
    phi0, dphi0 = f, float(g @ d)
    if not dphi0 < 0:               # (NaN too: a direction from an overflowed matrix)
        return 0.0, f, g, 0
    # Near the optimum f changes by less than its rounding error; then accept the
    # "approximate Wolfe" conditions of Hager and Zhang (2005): f did not rise beyond
    # rounding and the slope fell, dphi(t) <= (2 c1 - 1) dphi(0).
    eps_f = 1e-14 * abs(phi0)

    def approx_ok(phi, dphi):
        return phi <= phi0 + eps_f and (2 * c1 - 1) * dphi0 >= dphi >= c2 * dphi0

    search = (fg, x, d, phi0, dphi0, c1, c2, max_eval, approx_ok)
    found, lo, hi, n = _wolfe_bracket(search, t0)
    if found is None and lo is not None:
        found, n = _wolfe_zoom(search, lo, hi, n)
    return (found[0] / c, *found[1:]) if found is not None else (0.0, f, g, n)


def _wolfe_bracket(search, t):
    """Phase 1, doubling ``t``: ``(found, None, None, n)`` when a step passes, ``(None, lo, hi, n)``
    with a bracket ``(t, phi, dphi)`` at each end, ``(None, None, None, n)`` when the budget ran out."""
    fg, x, d, phi0, dphi0, c1, c2, max_eval, approx_ok = search
    n = 0
    t_prev, phi_prev, dphi_prev = 0.0, phi0, dphi0
    while n < max_eval:
        phi, gt = fg(x + t * d)
        n += 1
        dphi = float(gt @ d) if phi < np.inf else np.nan      # (a non-finite trial: too far)
        if approx_ok(phi, dphi):
            return (t, phi, gt, n), None, None, n
        if phi > phi0 + c1 * t * dphi0 or (n > 1 and phi >= phi_prev):
            return None, (t_prev, phi_prev, dphi_prev), (t, phi, dphi), n
        if abs(dphi) <= -c2 * dphi0:
            return (t, phi, gt, n), None, None, n
        if dphi >= 0:
            return None, (t, phi, dphi), (t_prev, phi_prev, dphi_prev), n
        t_prev, phi_prev, dphi_prev = t, phi, dphi
        t = 2.0 * t
    return None, None, None, n


def _wolfe_zoom(search, lo, hi, n):
    """Phase 2, shrinking the bracket by safeguarded cubic interpolation: ``((t, f, g, n), n)``,
    or ``(None, n)`` when no step could be accepted."""
    fg, x, d, phi0, dphi0, c1, c2, max_eval, approx_ok = search
    while n < max_eval:
        (ta, fa, da), (tb, fb, db) = lo, hi
        # cubic interpolation between the bracket ends, safeguarded to the middle 80%
        tj = _cubic_min(ta, fa, da, tb, fb, db)
        a, b = min(ta, tb), max(ta, tb)
        if not np.isfinite(tj) or tj < a + 0.1 * (b - a) or tj > b - 0.1 * (b - a):
            tj = 0.5 * (a + b)
        phi, gt = fg(x + tj * d)
        n += 1
        dphi = float(gt @ d) if phi < np.inf else np.nan      # (a non-finite trial: too far)
        if approx_ok(phi, dphi):
            return (tj, phi, gt, n), n
        if phi > phi0 + c1 * tj * dphi0 or phi >= fa:
            hi = (tj, phi, dphi)
        else:
            if abs(dphi) <= -c2 * dphi0:
                return (tj, phi, gt, n), n
            if dphi * (tb - ta) >= 0:
                hi = lo
            lo = (tj, phi, dphi)
        # relative to the bracket's own size: t is in the units of x / d (1e-149 for a gradient step on an
        # objective of scale 1e150), and an absolute 1e-12 ended the zoom before its first trial
        if abs(hi[0] - lo[0]) <= 1e-12 * max(abs(lo[0]), abs(hi[0])):
            break
    if lo[0] > 0:
        # sufficient decrease holds at lo: accept it even if curvature is not met
        phi, gt = fg(x + lo[0] * d)
        return (lo[0], phi, gt, n + 1), n + 1
    return None, n


def _cubic_min(a, fa, da, b, fb, db):
    """The minimiser of the cubic through ``(a, fa, da)`` and ``(b, fb, db)``; NaN where it has none. Computed
    with the values and slopes divided by a power of two near the larger slope (exact: the same minimiser), as
    ``d1 * d1`` underflowed for slopes near 1e-158 (an objective of scale 1e-150: the search then failed and
    ``nonlinear_cg`` stalled) and overflowed near 1e155."""
    k = _power_of_two_scale(max(abs(da), abs(db)))
    da, db = da / k, db / k
    d1 = da + db - 3 * ((fa - fb) / k) / (a - b)
    disc = d1 * d1 - da * db
    if disc < 0:
        return np.nan
    d2 = np.sign(b - a) * np.sqrt(disc)
    denom = db - da + 2 * d2
    if denom == 0:
        return np.nan
    return b - (b - a) * (db + d2 - d1) / denom


def _flat_step(fg, x, f, g, d, scale):
    """``(t, fg(x + t d))``, a step ``t >= 1`` along ``d`` when ``f`` cannot tell it from ``x`` but the gradient
    says it descends; ``(1, None)`` when there is none.

    Armijo's test needs a decrease of ``f`` that rounding can show; when the whole predicted
    decrease ``-g'd / 2`` is below ``f``'s last bits (features of size 1e-200 under a penalty,
    say) every trial fails although ``x`` is not optimal. Near the minimum of a convex
    function the gradient is then the better merit: take the Newton step if ``f`` stays equal
    to rounding (within 16 ulps either way: at the optimum the computed ``f`` may come out an ulp
    above its value one step before, and which way it rounds depends on the BLAS kernel) and
    ``max |g| / scale`` shrinks (scikit-learn's Newton solver uses the same rule), or the slope
    ``g(x + d)'d`` is still negative (for a convex ``f``, ``f(x + d) < f(x)`` then, whatever rounding shows) where
    the objective says it has no null directions (``fun.null_directions = False``; along a null direction the
    slope is rounding noise of either sign, and a rank-deficient logistic fit stepped along it until max_iter).

    Where the slope at the full step keeps at least 1/16 of its value at ``x`` (the quadratic model is far off),
    the step doubles while ``f`` stays flat and the slope at the doubled step is still negative, so never past the
    minimum along ``d`` (at most :data:`FLAT_DOUBLINGS` times).
    Why: a logistic fit with one row 1e38 times the others, classified right, has that row's loss below the
    rounding of ``f`` but its curvature above all the others' until its margin passes ~175; Newton's
    step raises a margin by ~1, so 100 steps stopped there, every other coefficient ~1e-33 of its value.
    """
    new = fg(x + d)
    if not _flat_and_finite(new, f):
        return 1.0, None
    descends = float(new[1] @ d) < 0 and not _may_have_null_directions(fg)
    if not (np.max(np.abs(new[1]) / scale) < np.max(np.abs(g) / scale) or descends):
        return 1.0, None
    # doubling only where the slope at the full step keeps 1/16 of its start: near a minimum where the quadratic
    # model holds, the slope there is rounding noise of either sign, and 2 would be the mirror point, as far off
    t, slope = 1.0, float(g @ d)
    for _ in range(FLAT_DOUBLINGS if float(new[1] @ d) <= slope / 16 else 0):
        trial = fg(x + 2.0 * t * d)
        if not (_flat_and_finite(trial, f) and float(trial[1] @ d) < 0):     # not past the minimum along d
            break
        t, new = 2.0 * t, trial
    return t, new


#: How many times :func:`_flat_step` may double a step along which ``f`` is flat to rounding but still descends.
FLAT_DOUBLINGS = 10


def _flat_and_finite(new, f):
    """Whether ``new = (f', g', ...)`` has ``f'`` within 16 ulps of ``f`` and a finite gradient."""
    return abs(new[0] - f) <= 16 * np.finfo(float).eps * max(abs(f), 1.0) and bool(np.all(np.isfinite(new[1])))


def _may_have_null_directions(fg):
    """Whether the objective behind ``fg`` (a ``result._Counted``) may have null directions: its
    ``null_directions`` attribute, True where it has none (as ``newton._no_step`` reads it)."""
    return bool(getattr(getattr(fg, "_fg", None), "null_directions", True))
