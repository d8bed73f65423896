"""Checked derivations: state a step in one line, and fail loudly when it is wrong.

A chapter shows a derivation step in prose and math, then verifies it in a code
cell::

    from linbook.symbolic import check_equal
    check_equal(sp.diff(nll, w), X.T @ (mu - y), "eq. (8.5)")

Each ``check_*`` function raises :class:`DerivationError` showing both sides when
the step is wrong; when the step holds it prints one short, deterministic line
(``ok  eq. (8.5)  [symbolic]``, so nbval can compare it) and returns it as a
:class:`Check`. A check is therefore one statement anywhere in a cell, with no
``print``; as a cell's last expression it still shows its line once.

How each checker decides
------------------------
``check_equal``
    Symbolic first: ``sympy.simplify(lhs - rhs) == 0`` (elementwise for
    matrices). If sympy cannot reduce the difference to zero, the two sides are
    evaluated at ``n_points`` seeded random points (positive symbols get positive
    values; every other point has magnitude ``10^U(-3, 3)``, the others lie near 1);
    a difference there raises, agreement is accepted and reported as ``numeric``.
    Pass ``method="symbolic"`` to refuse the numerical fallback.
``check_numeric``
    Two Python callables compared at random points.
``check_integral``
    A 1-D or 2-D integral by ``scipy.integrate`` quadrature against a value. The
    quadrature sees only where it samples: mass far from 0 on an infinite range (a
    density centred at 1000) can be missed, so give ``limits`` that cover it.
``check_gradient`` / ``check_hessian``
    An analytic gradient (Hessian) against central finite differences.
``check_close`` / ``check_true`` / ``check_positive_definite``
    Arrays equal within tolerance; a boolean claim; a matrix is PD by Cholesky.
``check_differs`` / ``check_fails``
    Negative checks, for "the note's form is wrong": they pass only when the
    wrong form is shown to differ (a witness point, or a nonzero symbolic
    difference) and raise, showing both sides, when it unexpectedly holds.

Matrix calculus with concrete sizes
-----------------------------------
sympy's matrix-expression calculus is limited, so identities such as
``d/dA log|A| = A^{-T}`` are checked on concrete sizes: :func:`matrix_symbols`
builds a matrix of scalar symbols, :func:`grad` / :func:`hessian` differentiate
a scalar with respect to a vector, and :func:`grad_matrix` with respect to every
entry of a matrix.

Derived in: chapter "Estimation: MLE, MAP and Bayes" § "How derivations are
checked" (every chapter uses it).
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass

import numpy as np
import sympy as sp

from .base import StrOptions, check_param_values

__all__ = [
    "DerivationError",
    "Check",
    "check_equal",
    "check_numeric",
    "check_integral",
    "check_gradient",
    "check_hessian",
    "check_close",
    "check_true",
    "check_positive_definite",
    "check_differs",
    "check_fails",
    "vector_symbols",
    "matrix_symbols",
    "symmetric_matrix_symbols",
    "grad",
    "hessian",
    "grad_matrix",
    "numeric_grad",
    "numeric_hessian",
]


class DerivationError(AssertionError):
    """A derivation step does not hold. The message shows both sides.

    Derived in: chapter "Estimation: MLE, MAP and Bayes" § "How derivations are checked".
    """


_WIDTH = 100  # widest output line the book's pages show without scrolling


@dataclass(frozen=True)
class Check:
    """Record of a passed check; prints as one line such as ``ok  eq. (8.5)  [symbolic]``.

    Derived in: chapter "Estimation: MLE, MAP and Bayes" § "How derivations are checked".
    """

    label: str
    method: str
    detail: str = ""

    def __repr__(self):
        extra = f"; {self.detail}" if self.detail else ""
        line = f"ok  {self.label}  [{self.method}{extra}]"
        if len(line) <= _WIDTH:
            return line
        # Long labels wrap (continuation lines indented) so no output line is wider than
        # the page's code box; the method tag stays on the last line.
        import textwrap
        return "\n".join(textwrap.wrap(line, _WIDTH, subsequent_indent="    ",
                                        break_long_words=False, break_on_hyphens=False))

    __str__ = __repr__

    def _ipython_display_(self):
        # The check printed its line when it passed; as a cell's last expression it would
        # show it a second time (the repr), so a notebook shows it only if it was not printed.
        if not self.__dict__.get("_printed", False):
            print(self)


#: Greater than 0 while :func:`check_fails` runs a checker whose success is not a result.
_SILENT = contextvars.ContextVar("linbook_checks_silent", default=0)


def _passed(label, method, detail=""):
    """The result of a check that holds: printed now, so a cell needs no ``print``."""
    result = Check(label, method, detail)
    if not _SILENT.get():
        print(result)
        object.__setattr__(result, "_printed", True)   # frozen dataclass: a private mark only
    return result


def _fail(label, message, lhs, rhs):
    raise DerivationError(
        f"{label}: {message}\n  left-hand side : {lhs}\n  right-hand side: {rhs}"
    )


#: The words a failure uses when no value could be compared; :func:`check_fails` reads them as
#: "inconclusive", never as a refutation.
_NOT_EVALUATED = "could not evaluate"


def _fail_if_not_finite(label, a, b, where=""):
    """Fail as not evaluated when either side holds NaN or inf: such a value neither confirms
    nor refutes a step (two NaNs are not "different", and an overflow is not a value)."""
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        _fail(label, f"{_NOT_EVALUATED} the sides{where}: NaN or inf", a, b)


def _finite_differ(a, b, rtol, atol):
    """For a negative check: True/False when the entries finite on both sides differ / agree;
    None when no entry is finite on both sides (nothing is shown)."""
    both = np.isfinite(a) & np.isfinite(b)
    if not np.any(both):
        return None
    return not np.allclose(a[both], b[both], rtol=rtol, atol=atol)


def _as_matrix(e):
    if isinstance(e, (sp.MatrixBase, sp.MatrixExpr)):
        return sp.Matrix(e)
    if isinstance(e, (list, tuple, np.ndarray)):   # a numpy array of sympy entries too (np.array([x, y]))
        return sp.Matrix(e)
    return None


def _sample_values(symbols, rng, wide=False):
    """Random values that respect each symbol's declared assumptions: near 1, or with ``wide`` of magnitude
    ``10^U(-3, 3)`` (integers up to 1000). Why both: a step wrong only away from 1 (a Huber threshold of 3 for 5,
    ``Heaviside(x - 5) = 0``, ``Min(n, 6) = n``) passed on points drawn from [-2, 2] alone."""
    values = {}
    for s in symbols:
        if s.is_integer:
            top = int(10 ** rng.uniform(0, 3)) + 1 if wide else 6
            v = int(rng.integers(1, top)) if s.is_positive or s.is_nonnegative else int(rng.integers(-top + 1, top))
        elif wide:
            size = float(10 ** rng.uniform(-3, 3))
            v = size if s.is_positive or s.is_nonnegative else -size if s.is_negative else size * rng.choice([-1, 1])
        elif s.is_positive:
            v = float(rng.uniform(0.2, 2.5))
        elif s.is_nonnegative:
            v = float(rng.uniform(0.0, 2.5))
        elif s.is_negative:
            v = -float(rng.uniform(0.2, 2.5))
        else:
            v = float(rng.uniform(-2.0, 2.0))
        values[s] = v
    return values


def _numeric_difference(lhs, rhs, n_points, seed, rtol, atol):
    """Largest scaled difference of lhs - rhs over random points (nan if not evaluable)."""
    free = sorted((lhs.free_symbols | rhs.free_symbols), key=lambda s: s.name)
    rng = np.random.default_rng(seed)
    worst = 0.0
    evaluated = 0
    for _ in range(n_points * 3):
        if evaluated >= n_points:
            break
        subs = _sample_values(free, rng, wide=evaluated % 2 == 1)      # every other point far from 1
        try:
            a = complex(sp.N(lhs.subs(subs), 30))
            b = complex(sp.N(rhs.subs(subs), 30))
        except (TypeError, ValueError, ZeroDivisionError):
            continue
        if not (np.isfinite(a) and np.isfinite(b)):
            continue
        evaluated += 1
        worst = max(worst, abs(a - b) / (atol + rtol * max(abs(a), abs(b))))
    return worst if evaluated else float("nan"), evaluated


def _entry_pairs(lhs, rhs, label):
    """The pairs of corresponding entries of two matrices (or the one pair of two scalars), as
    sympy objects; a failed check when one side is a matrix and the other not, or shapes differ."""
    L, R = _as_matrix(lhs), _as_matrix(rhs)
    if (L is None) != (R is None):
        _fail(label, "one side is a matrix and the other a scalar", lhs, rhs)
    if L is None:
        return [(sp.sympify(lhs), sp.sympify(rhs))]
    if L.shape != R.shape:
        _fail(label, f"shapes differ: {L.shape} vs {R.shape}", L, R)
    return [(sp.sympify(a), sp.sympify(b)) for a, b in zip(list(L), list(R))]


def check_equal(lhs, rhs, label="step", *, method="auto", n_points=12, seed=0, rtol=1e-9, atol=1e-12):
    """Check that two sympy expressions (or matrices of them) are equal.

    Parameters
    ----------
    lhs, rhs : sympy expression, sympy Matrix, or list of lists
        The two sides of the step. Shapes must match for matrices.
    label : str
        What is checked, e.g. ``"eq. (8.5)"``; shown in the result and the error.
    method : {"auto", "symbolic", "numeric"}
        ``"auto"`` tries ``simplify`` and falls back to random points if sympy
        cannot decide; ``"symbolic"`` refuses the fallback; ``"numeric"`` skips
        ``simplify`` (for expressions too large for it).
    n_points, seed : int
        Random points for the numerical fallback (reproducible via ``seed``).
    rtol, atol : float
        Tolerances of the numerical comparison.

    Returns
    -------
    Check

    Raises
    ------
    DerivationError
        If the sides differ (symbolically proven, or at some random point), or
        if ``method="symbolic"`` and sympy cannot prove equality.

    Derived in: chapter "Estimation: MLE, MAP and Bayes" § "How derivations are checked".
    """
    check_param_values("check_equal", {"method": [StrOptions({"auto", "symbolic", "numeric"})]}, {"method": method})
    used = "symbolic"
    for a, b in _entry_pairs(lhs, rhs, label):
        a, b = sp.sympify(a), sp.sympify(b)
        if method != "numeric":
            diff = sp.simplify(a - b)
            if diff == 0:
                continue
            if diff.is_number and diff.is_zero is False:
                _fail(label, f"sides differ by {diff}", lhs, rhs)
            if method == "symbolic":
                # A second, independent attempt before giving up.
                if sp.simplify(sp.expand(sp.expand_log(a - b, force=False))) == 0 or a.equals(b) is True:
                    continue
                _fail(label, f"sympy could not prove equality; difference simplifies to {diff}", lhs, rhs)
        worst, n = _numeric_difference(a, b, n_points, seed, rtol, atol)
        if n == 0:
            _fail(label, f"{_NOT_EVALUATED} the sides at any random point", lhs, rhs)
        if not worst <= 1.0:
            _fail(label, f"sides differ numerically (scaled difference {worst:.3g})", a, b)
        used = "numeric"
    detail = f"{n_points} random points" if used == "numeric" else ""
    return _passed(label, used, detail)


def check_numeric(f, g, label="step", *, points=None, n_points=20, low=-2.0, high=2.0, dim=1,
                  seed=0, rtol=1e-8, atol=1e-10):
    """Check ``f(x) == g(x)`` for Python callables at given or random points.

    Parameters
    ----------
    f, g : callable
        Each takes one point (a float, or a length-``dim`` array) and returns a
        float or array.
    points : sequence, optional
        Points to test; default ``n_points`` uniform draws from [low, high]^dim.

    Derived in: chapter "Estimation: MLE, MAP and Bayes" § "How derivations are checked".
    """
    rng = np.random.default_rng(seed)
    if points is None:
        points = rng.uniform(low, high, size=(n_points, dim))
        points = points[:, 0] if dim == 1 else points
    for x in points:
        a, b = np.asarray(f(x), dtype=float), np.asarray(g(x), dtype=float)
        if a.shape != b.shape:
            _fail(label, f"shapes differ at x={x}: {a.shape} vs {b.shape}", a, b)
        if not np.allclose(a, b, rtol=rtol, atol=atol):
            _fail_if_not_finite(label, a, b, f" at x={np.round(x, 6)}")
            _fail(label, f"values differ at x={np.round(x, 6)}", a, b)
    return _passed(label, "numeric", f"{len(points)} points")


def check_integral(f, value, label="integral", *, limits=((-np.inf, np.inf),), rtol=1e-7, atol=1e-10):
    """Check that the integral of ``f`` over ``limits`` equals ``value`` (1-D or 2-D quadrature).

    Parameters
    ----------
    f : callable
        ``f(x)`` for one limit pair, ``f(x, y)`` for two.
    value : float
        The claimed value of the integral.
    limits : tuple of (low, high)
        One pair for 1-D, two pairs for 2-D (the first for ``x``).

    Derived in: chapter "Estimation: MLE, MAP and Bayes" § "How derivations are checked".
    """
    from scipy import integrate

    if len(limits) == 1:
        (a, b), = limits
        got, err = integrate.quad(f, a, b, limit=200, epsabs=atol * 1e-2, epsrel=rtol * 1e-2)
    elif len(limits) == 2:
        (a, b), (c, d) = limits
        got, err = integrate.dblquad(lambda y, x: f(x, y), a, b, c, d, epsabs=atol * 1e-2, epsrel=rtol * 1e-2)
    else:
        raise ValueError("check_integral handles 1-D and 2-D integrals")
    if not np.isclose(got, value, rtol=rtol, atol=atol):
        _fail(label, f"quadrature gives {got:.12g} (error estimate {err:.1e})", got, value)
    return _passed(label, "quadrature", f"rtol {rtol:g}")


def numeric_grad(f, x, eps=None):
    """Central finite-difference gradient of scalar ``f`` at ``x``, at any scale of ``x``.

    The steps of :func:`check_gradient`: along each coordinate, fractions of ``|x_j|``, ``max |x|`` and 1,
    each pair of neighbouring steps giving a Richardson estimate, the one of smallest error kept (the span
    ``(x_j + h) - (x_j - h)`` actually made divides). A fixed absolute step of 1e-6 gave 0 at ``|x|`` near
    1e150 (``x + h == x``), 1-10 % errors at 1e8, and NaN for ``log`` at 1e-8 (``x - h < 0``).

    Parameters
    ----------
    eps : float, optional
        A fixed absolute step (with ``2 eps`` for the Richardson estimate) instead of those steps.

    Derived in: chapter "Estimation: MLE, MAP and Bayes" § "How derivations are checked".
    """
    x = np.asarray(x, dtype=float)
    flat = _finite_point("numeric_grad", x)
    f0 = _value_at("numeric_grad", f(x), "f(x)", flat)
    if f0.size != 1:
        raise ValueError(f"numeric_grad: f must return one number (a scalar objective), got shape {f0.shape}; "
                         "use numeric_hessian for the Jacobian of a vector function")
    return _fd_estimate("numeric_grad", lambda v: f(v.reshape(x.shape)), flat, f0, eps)[0].reshape(x.shape)


def numeric_hessian(grad_f, x, eps=None):
    """Central finite-difference Jacobian of a gradient function (a Hessian), symmetrised.

    Steps as in :func:`numeric_grad` (of each entry of the gradient).

    Derived in: chapter "Estimation: MLE, MAP and Bayes" § "How derivations are checked".
    """
    x = np.asarray(x, dtype=float).ravel()
    flat = _finite_point("numeric_hessian", x)
    g0 = _value_at("numeric_hessian", grad_f(x), "grad_f(x)", flat).ravel()
    H = _fd_estimate("numeric_hessian", grad_f, flat, g0, eps)
    return 0.5 * (H + H.T)


def _finite_point(caller, x):
    """``x`` flattened (a copy), or a clear error where it is not finite."""
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{caller}: x must be finite, got {x}; pass a point where the function is defined")
    return x.ravel().copy()


def _value_at(caller, value, what, x):
    """``value`` as floats, or a ``ValueError`` where it is NaN or inf (no derivative there)."""
    try:
        return _finite_at_x(caller, value, what, x)
    except DerivationError as exc:
        raise ValueError(f"{exc}; pass an x where it is finite") from None


def _fd_estimate(caller, fun, x, f0, eps):
    """The finite-difference Jacobian of :func:`_fd_jacobian` (without its errors), or a ``ValueError``."""
    try:
        return _fd_jacobian(caller, fun, x, f0, eps)[0]
    except DerivationError as exc:
        raise ValueError(f"{exc}; pass an x inside its domain, or a larger eps") from None


#: Finite differences that set their own steps and tolerance (check_gradient, check_hessian).
#: Along coordinate j the steps grow tenfold from 1e-9 min(|x_j|, max|x|, 1) to 0.1 max(|x_j|, max|x|, 1), so
#: x near 1e-150 and near 1e150 are both resolved. Each pair of neighbouring steps gives a Richardson estimate
#: and its error: their gap (truncation) + eps_machine |f| / span (rounding, the span actually stepped). The walk
#: keeps, entry by entry, the estimate of smallest error, and stops once the error has grown a hundredfold past
#: it (steps far beyond f's own scale can look linear, e.g. a logistic loss, so they are not tried). The
#: tolerance is ``rtol |fd| + _FD_SAFETY x error``: no absolute floor.
_FD_SAFETY = 10.0
_FD_RISE = 100.0


def _fd_steps(x, j, eps):
    """The steps tried along coordinate ``j``, smallest first: ``eps`` and ``2 eps`` when given."""
    if eps is not None:
        return [float(eps), 2.0 * float(eps)]
    bases = [b for b in (abs(x[j]), np.max(np.abs(x)), 1.0) if b > 0]
    low, high = np.floor(np.log10(min(bases))) - 9, np.ceil(np.log10(max(bases))) - 1
    return list(10.0 ** np.arange(low, high + 1))


def _central_difference(fun, x, j, h):
    """``(fun(x + h e_j) - fun(x - h e_j)) / span`` with the span actually stepped, and max |fun| there.

    None when the step is lost in the rounding of ``x_j``; "not finite" when ``fun`` is NaN or inf there.
    """
    xp, xm = x.copy(), x.copy()
    xp[j] += h
    xm[j] -= h
    span = xp[j] - xm[j]
    if not span > 0:
        return None
    with np.errstate(all="ignore"):   # a probe outside f's domain is skipped, not reported
        fp, fm = np.asarray(fun(xp), dtype=float).ravel(), np.asarray(fun(xm), dtype=float).ravel()
    if not (np.all(np.isfinite(fp)) and np.all(np.isfinite(fm))):
        return "not finite"
    return (fp - fm) / span, np.maximum(np.abs(fp), np.abs(fm)), span


def _richardson(small, large, f0):
    """Estimate from the differences at two steps, and its error (their gap + rounding at the smaller).

    The error is inf where either difference is exactly 0 (``f(x + h) == f(x - h)``): the step is below
    f's own resolution there, which may be far coarser than ``eps_machine |f|`` when f's terms cancel.
    """
    (d1, m1, s1), (d2, _, s2) = small, large
    rounding = (2 * np.finfo(float).eps * np.maximum(m1, np.abs(f0)) + np.finfo(float).tiny) / s1
    error = np.abs(d2 - d1) + rounding
    return d1 + (d1 - d2) / ((s2 / s1) ** 2 - 1), np.where((d1 == 0) | (d2 == 0), np.inf, error), error


def _keep_better(kept, new):
    """Entrywise, the (estimate, error) of smaller error."""
    if kept is None:
        return new
    better = new[1] < kept[1]
    return np.where(better, new[0], kept[0]), np.where(better, new[1], kept[1])


def _fd_derivative(fun, x, j, f0, eps):
    """Derivative of ``fun`` along coordinate ``j`` as ``(estimate, error)``, entrywise from the steps of
    smallest error; None when no two steps gave finite values. An entry whose differences are exactly 0 at
    every step is 0 (e.g. by symmetry), with the rounding error."""
    best = unresolved = previous = None
    for h in _fd_steps(x, j, eps):
        current = _central_difference(fun, x, j, h)
        if isinstance(current, str):   # left f's domain: larger steps will not come back
            if unresolved is not None:
                break
            current = None
        if current is not None and previous is not None:
            estimate, error, plain_error = _richardson(previous, current, f0)
            if best is not None and _risen(error, best[1]):
                break
            best, unresolved = _keep_better(best, (estimate, error)), _keep_better(unresolved, (estimate, plain_error))
        previous = current
    if best is None:
        return None
    resolved = np.isfinite(best[1])
    return np.where(resolved, best[0], unresolved[0]), np.where(resolved, best[1], unresolved[1])


def _risen(error, best_error):
    """Whether the error has grown ``_FD_RISE``-fold past the best one in every entry the walk resolved (an entry
    whose differences are all exactly 0, as the off-diagonal Hessian entries of a separable function, has the
    error inf and does not vote: it held every walk to its largest steps, where a function of scale 1e-150 is
    noise that differences to a small, confident, wrong derivative)."""
    resolved = np.isfinite(best_error)
    return bool(np.any(resolved) and np.all(error[resolved] > _FD_RISE * best_error[resolved]))


def _finite_at_x(label, value, what, x):
    """``value`` (f(x), or the analytic gradient / Hessian) as floats; a clear failure naming what was
    NaN or inf, and where (it neither confirms nor refutes the step)."""
    value = np.asarray(value, dtype=float)
    bad = np.flatnonzero(~np.isfinite(value))
    if bad.size:
        where = "" if value.size == 1 else f" at entries {np.unravel_index(bad[:5], value.shape)}"
        raise DerivationError(f"{label}: {_NOT_EVALUATED} the sides at x={np.round(x, 6)}: {what} is "
                              f"{value.ravel()[bad[0]]}{where}")
    return value


def _fd_jacobian(label, fun, x, f0, eps):
    """Columns ``d fun / d x_j`` with their error estimates, shape ``(f0.size, x.size)``."""
    est, err = np.empty((f0.size, x.size)), np.empty((f0.size, x.size))
    for j in range(x.size):
        column = _fd_derivative(fun, x, j, f0, eps)
        if column is None:
            raise DerivationError(f"{label}: {_NOT_EVALUATED} the finite differences along coordinate {j}: "
                                  f"the function is NaN or inf at every step tried from x={np.round(x, 6)}")
        est[:, j], err[:, j] = column
    return est, err


def _judge_derivative(label, what, claimed, est, err, rtol, atol):
    """Fail, naming the worst entry, both values and the tolerance, where ``claimed`` is farther from the
    finite difference than ``rtol |fd| + _FD_SAFETY x error estimate`` (+ ``atol`` when a caller set one)."""
    tol = rtol * np.abs(est) + _FD_SAFETY * err + (0.0 if atol is None else atol)
    gap = np.abs(claimed - est)
    if np.all(gap <= tol):
        return
    worst = np.unravel_index(np.argmax(gap / np.maximum(tol, np.finfo(float).tiny)), gap.shape)
    entry = worst[0] if len(worst) == 1 else worst
    _fail(label, f"analytic and finite-difference {what} differ; worst at {entry}: analytic "
                 f"{claimed[worst]:.6g}, finite difference {est[worst]:.6g}, |difference| {gap[worst]:.3g} > "
                 f"tolerance {tol[worst]:.3g} (rtol {rtol:g} x |fd| + {_FD_SAFETY:g} x fd error estimate "
                 f"{err[worst]:.2g}{'' if atol is None else f' + atol {atol:g}'})", claimed, est)


def _warn_atol(atol, name):
    if atol is not None:
        import warnings
        warnings.warn(f"{name}(atol=...) is deprecated and will be removed in linbook 0.3: the tolerance is now "
                      "rtol x |finite difference| plus the finite difference's own error estimate, at every "
                      "scale. A given atol is still added to it.", FutureWarning, stacklevel=3)


def check_gradient(f, grad_f, x, label="gradient", *, eps=None, rtol=1e-5, atol=None):
    """Check an analytic gradient against central finite differences at ``x``, at any scale of ``x`` and ``f``.

    Each coordinate is stepped by fractions of ``max(1, |x_j|)``, ``|x_j|`` and ``max|x|`` (the span
    ``(x_j + h) - (x_j - h)`` actually made divides); at each step ``h`` the differences at ``h`` and
    ``h/2`` give a Richardson estimate and its error (their gap for truncation, ``eps_machine |f| / h``
    for rounding), and the step of smallest error is judged. Coordinate ``j`` passes when
    ``|grad_j - fd_j| <= rtol |fd_j| + 10 x error_j``: a wrong gradient is caught however small or large
    it is, as far as finite differences can resolve it: an entry below ``f``'s own resolution at ``x``
    (``1e-95`` beside ``2e184``) is within its error estimate either way. The failure names the worst coordinate, both
    values and the tolerance; a NaN or inf in ``f(x)`` or the gradient fails as not evaluated.

    Parameters
    ----------
    eps : float, optional
        A fixed absolute step, the only one tried (default: the steps above).
    atol : float, optional
        Deprecated (FutureWarning): an absolute floor added to the tolerance, which hid a wrong gradient
        smaller than it; the error estimate now takes its place.

    Derived in: chapter "Estimation: MLE, MAP and Bayes" § "How derivations are checked".
    """
    _warn_atol(atol, "check_gradient")
    x = np.asarray(x, dtype=float)
    flat, shape = x.ravel().copy(), x.shape
    if not np.all(np.isfinite(flat)):
        raise ValueError(f"check_gradient: x must be finite, got {x}")
    f0 = _finite_at_x(label, f(x), "f(x)", flat)
    if f0.size != 1:
        raise ValueError(f"check_gradient: f must return one number (a scalar objective), got shape {f0.shape}")
    g = _finite_at_x(label, grad_f(x), "the analytic gradient", flat)
    if g.shape != shape:
        _fail(label, f"gradient shape {g.shape}, expected {shape}", g, f"an array of shape {shape}")
    est, err = _fd_jacobian(label, lambda v: f(v.reshape(shape)), flat, f0.ravel(), eps)
    _judge_derivative(label, "gradients", g.ravel(), est[0], err[0], rtol, atol)
    return _passed(label, "finite differences", f"{x.size} coordinates")


def check_hessian(grad_f, hess_f, x, label="Hessian", *, eps=None, rtol=1e-5, atol=None):
    """Check an analytic Hessian against finite differences of the gradient at ``x`` (symmetrised).

    Steps and tolerance as in :func:`check_gradient`, entry by entry; ``eps`` and ``atol`` likewise.

    Derived in: chapter "Estimation: MLE, MAP and Bayes" § "How derivations are checked".
    """
    _warn_atol(atol, "check_hessian")
    x = np.asarray(x, dtype=float).ravel().copy()
    if not np.all(np.isfinite(x)):
        raise ValueError(f"check_hessian: x must be finite, got {x}")
    g0 = _finite_at_x(label, grad_f(x), "the gradient", x).ravel()
    H = _finite_at_x(label, hess_f(x), "the analytic Hessian", x)
    if H.shape != (x.size, x.size) or g0.size != x.size:
        _fail(label, f"Hessian shape {H.shape} (gradient size {g0.size}), expected {(x.size, x.size)}", H,
              f"an array of shape {(x.size, x.size)}")
    est, err = _fd_jacobian(label, grad_f, x, g0, eps)
    _judge_derivative(label, "Hessians", H, 0.5 * (est + est.T), 0.5 * (err + err.T), rtol, atol)
    return _passed(label, "finite differences", f"{x.size}x{x.size}")


_CHECK_ATOL = 1e-10


def check_close(actual, expected, label="values", *, rtol=1e-8, atol=_CHECK_ATOL):
    """Check two arrays (or numbers) agree within tolerance: ``|actual - expected| <= atol + rtol |expected|``.

    The default ``atol`` is ``1e-10`` of the largest ``|expected|`` when that is below 1 (else, and where every
    expected value is 0, ``1e-10``): an absolute ``1e-10`` let any claimed value below ~1e-10 pass (chapter 7's
    evidence of ~4e-10 passed with a wrong prior). The printed result names ``rtol``, and ``atol`` too when a
    cell set its own (a looser ``atol`` may be what lets a check pass, e.g. a Monte Carlo estimate near 0).

    Derived in: chapter "Estimation: MLE, MAP and Bayes" § "How derivations are checked".
    """
    a, b = np.asarray(actual, dtype=float), np.asarray(expected, dtype=float)
    if a.shape != b.shape:
        _fail(label, f"shapes differ: {a.shape} vs {b.shape}", a, b)
    given = atol != _CHECK_ATOL
    if not given:
        scale = float(np.max(np.abs(b), initial=0.0))
        atol = _CHECK_ATOL * (scale if 0.0 < scale < 1.0 else 1.0)
    if not np.allclose(a, b, rtol=rtol, atol=atol):
        _fail_if_not_finite(label, a, b)
        _fail(label, f"max abs difference {np.max(np.abs(a - b)):.3g}", a, b)
    return _passed(label, "numeric", f"rtol {rtol:g}" + (f", atol {atol:.2g}" if given else ""))


def check_true(condition, label="claim", *, detail=""):
    """Check a boolean claim (e.g. an inequality evaluated on data); raise if it is false.

    Derived in: chapter "Estimation: MLE, MAP and Bayes" § "How derivations are checked".
    """
    if isinstance(condition, sp.Basic):
        condition = bool(sp.simplify(condition))
    values = np.asarray(condition)
    if values.size == 0:
        raise DerivationError(f"{label}: {_NOT_EVALUATED} the claim: it holds no values (an empty array)")
    if values.dtype.kind in "fc" and np.any(np.isnan(values)):
        # NaN is truthy in Python: without this a NaN would make any claim pass
        raise DerivationError(f"{label}: {_NOT_EVALUATED} the claim: its value is NaN")
    if not bool(np.all(condition)):
        raise DerivationError(f"{label}: claim is false{': ' + detail if detail else ''}")
    return _passed(label, "claim", detail)


def check_positive_definite(M, label="positive definite"):
    """Check a symmetric numeric matrix is positive definite (Cholesky succeeds).

    Derived in: chapter "Estimation: MLE, MAP and Bayes" § "How derivations are checked".
    """
    M = np.asarray(M, dtype=float)
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        _fail(label, f"not a square matrix: shape {M.shape}", M, "square")
    if M.size == 0 or not np.all(np.isfinite(M)):
        _fail(label, f"{_NOT_EVALUATED} the matrix: it is empty or holds NaN or inf", M, "PD")
    # relative to the matrix's own size: an absolute 1e-12 passed any matrix of entries below 1e-12 as symmetric
    if not np.allclose(M, M.T, rtol=1e-10, atol=1e-12 * np.max(np.abs(M))):
        _fail(label, "matrix is not symmetric", M, M.T)
    try:
        np.linalg.cholesky(M)
    except np.linalg.LinAlgError:
        ev = np.linalg.eigvalsh(M)
        _fail(label, f"not positive definite: smallest eigenvalue {ev.min():.3g}", M, "PD")
    return _passed(label, "Cholesky", f"{M.shape[0]}x{M.shape[0]}")


def vector_symbols(name, n, **assumptions):
    """Column sympy Matrix ``[name_0, ..., name_{n-1}]^T`` of scalar symbols.

    Derived in: chapter "Estimation: MLE, MAP and Bayes" § "How derivations are checked".
    """
    return sp.Matrix(sp.symbols(f"{name}_0:{n}", **assumptions))


def matrix_symbols(name, rows, cols, **assumptions):
    """``rows x cols`` sympy Matrix whose entries are scalar symbols ``name_ij``.

    Derived in: chapter "Estimation: MLE, MAP and Bayes" § "How derivations are checked".
    """
    return sp.Matrix(rows, cols, lambda i, j: sp.Symbol(f"{name}_{i}{j}", **assumptions))


def symmetric_matrix_symbols(name, n, **assumptions):
    """Symmetric ``n x n`` sympy Matrix of scalar symbols (``name_ij`` with i <= j).

    Derived in: chapter "Estimation: MLE, MAP and Bayes" § "How derivations are checked".
    """
    return sp.Matrix(n, n, lambda i, j: sp.Symbol(f"{name}_{min(i, j)}{max(i, j)}", **assumptions))


def grad(expr, vec):
    """Gradient (column Matrix) of scalar ``expr`` with respect to the symbols in ``vec``.

    Derived in: chapter "Estimation: MLE, MAP and Bayes" § "How derivations are checked".
    """
    vec = list(vec)
    return sp.Matrix([sp.diff(expr, v) for v in vec])


def hessian(expr, vec):
    """Hessian Matrix of scalar ``expr`` with respect to the symbols in ``vec``.

    Derived in: chapter "Estimation: MLE, MAP and Bayes" § "How derivations are checked".
    """
    return sp.hessian(expr, list(vec))


def grad_matrix(expr, M):
    """Matrix of partial derivatives ``d expr / d M_ij`` (same shape as ``M``).

    For a symmetric matrix built by :func:`symmetric_matrix_symbols` this is the
    derivative with respect to the shared entries (off-diagonals count twice);
    use :func:`matrix_symbols` for the unconstrained derivative of identities
    such as (4.10).

    Derived in: chapter "Estimation: MLE, MAP and Bayes" § "How derivations are checked".
    """
    return M.applyfunc(lambda m: sp.diff(expr, m))


def _differs_numerically(a, b, n_points, seed, rtol, atol):
    """True/False when random points show a difference / no difference; None if not evaluable."""
    worst, n = _numeric_difference(a, b, n_points, seed, rtol, atol)
    if n == 0:
        return None
    return worst > 1.0


def _callables_differ(wrong, right, label, points, n_points, seed, rtol, atol):
    """:func:`check_differs` for two callables: shown at the first of ``points`` (default
    ``n_points`` uniform draws from [-2, 2]) where they differ."""
    if points is None:
        points = np.random.default_rng(seed).uniform(-2.0, 2.0, n_points)
    evaluated = 0
    for x in points:
        a = np.asarray(wrong(x), dtype=float)
        b = np.asarray(right(x), dtype=float)
        if a.shape != b.shape:
            return _passed(label, "differs; numeric", f"{len(points)} points")
        differ = _finite_differ(a, b, rtol, atol)   # a NaN on either side shows nothing
        evaluated += differ is not None
        if differ:
            return _passed(label, "differs; numeric", f"{len(points)} points")
    if not evaluated:
        _fail(label, f"no difference could be shown: {_NOT_EVALUATED} both sides (finite) at any of the "
              f"{len(points)} points", wrong, right)
    _fail(label, f"the wrong form unexpectedly agrees with the right one at all {evaluated} points where "
          "both are finite", wrong, right)


def _arrays_differ(wrong, right, label, rtol, atol):
    """:func:`check_differs` for two arrays (or numbers): shown by an entry finite on both sides."""
    a, b = np.asarray(wrong, dtype=float), np.asarray(right, dtype=float)
    differ = a.shape != b.shape or _finite_differ(a, b, rtol, atol)
    if differ is None:
        _fail(label, f"no difference could be shown: {_NOT_EVALUATED} both sides (no entry finite on both)",
              wrong, right)
    if differ:
        return _passed(label, "differs; numeric")
    _fail(label, f"the wrong form unexpectedly equals the right one (rtol {rtol:g})", wrong, right)


def check_differs(wrong, right, label="the note's form is wrong", *, points=None, n_points=12,
                  seed=0, rtol=1e-6, atol=1e-9):
    """Check that a wrong form differs from the right one; raise if it unexpectedly holds.

    The negative counterpart of :func:`check_equal` / :func:`check_close` /
    :func:`check_numeric`, for the book's errata: "the note writes ``wrong``; the
    correct form is ``right``". It passes only when a difference is *shown*: sympy
    reduces ``wrong - right`` to a nonzero constant, or at least one of the seeded
    random points (or the given ``points``) separates the two sides beyond
    ``rtol``/``atol``. It raises :class:`DerivationError`, showing both sides, when
    the two forms agree everywhere it looked (the note would be right after all)
    or when no point could be evaluated (nothing was shown).

    Parameters
    ----------
    wrong, right : sympy expression or Matrix, array_like, or callable
        Both of the same kind. Callables take one point and are compared at
        ``points`` (default: ``n_points`` uniform draws from [-2, 2]).
    label : str
        What is refuted, e.g. ``"note's (8.9) [erratum opt-89-function]"``.

    Returns
    -------
    Check
        Prints as ``ok  <label>  [differs; symbolic]`` (or ``numeric``).

    Derived in: chapter "Estimation: MLE, MAP and Bayes" § "How derivations are checked".
    """
    if callable(wrong) and not isinstance(wrong, sp.Basic):
        return _callables_differ(wrong, right, label, points, n_points, seed, rtol, atol)

    is_sym = any(isinstance(v, (sp.Basic, sp.MatrixBase)) or (isinstance(v, np.ndarray) and v.dtype == object)
                 for v in (wrong, right))      # an object array holds sympy entries
    if not is_sym:
        return _arrays_differ(wrong, right, label, rtol, atol)

    W, R = _as_matrix(wrong), _as_matrix(right)
    if (W is None) != (R is None):
        return _passed(label, "differs; symbolic", "matrix vs scalar")
    if W is not None and W.shape != R.shape:
        return _passed(label, "differs; symbolic", "shapes differ")
    pairs = list(zip(list(W), list(R))) if W is not None else [(sp.sympify(wrong), sp.sympify(right))]
    inconclusive = False
    for a, b in pairs:
        a, b = sp.sympify(a), sp.sympify(b)
        diff = sp.simplify(a - b)
        if diff == 0:
            continue
        if diff.is_number and diff.is_zero is False:
            return _passed(label, "differs; symbolic")
        shown = _differs_numerically(a, b, n_points, seed, rtol, atol)
        if shown:
            return _passed(label, "differs; numeric", f"{n_points} random points")
        if shown is None:
            inconclusive = True
    if inconclusive:
        _fail(label, "no difference could be shown (the sides could not be evaluated)", wrong, right)
    _fail(label, "the wrong form unexpectedly holds: the two sides are equal", wrong, right)


def check_fails(checker, *args, **kwargs):
    """Run a positive checker that must raise; raise if it passes instead.

    For claims refuted by a failing positive check, e.g. a note's gradient that
    finite differences reject: ``check_fails(check_gradient, f, note_grad, x,
    "note's gradient [erratum …]")``. The arguments are the checker's own; its
    label labels the result. A failure that only says nothing could be
    evaluated does not count as a refutation.

    Derived in: chapter "Estimation: MLE, MAP and Bayes" § "How derivations are checked".
    """
    import inspect

    try:
        label = inspect.signature(checker).bind(*args, **kwargs).arguments.get("label", "expected to fail")
    except TypeError:
        label = kwargs.get("label", "expected to fail")
    token = _SILENT.set(_SILENT.get() + 1)   # the checker passing is a failure, not a line to print
    try:
        result, failed = checker(*args, **kwargs), False
    except DerivationError as exc:
        if _NOT_EVALUATED in str(exc):
            raise DerivationError(f"{label}: inconclusive, {exc}") from exc
        failed = True
    finally:
        _SILENT.reset(token)
    if failed:
        return _passed(label, "fails as expected", getattr(checker, "__name__", ""))
    raise DerivationError(f"{label}: expected {getattr(checker, '__name__', 'the check')} to fail, "
                          f"but it passed ({result})")
