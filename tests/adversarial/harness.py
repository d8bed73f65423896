"""What every adversarial case asserts: a right answer or a clear error, never a silent NaN.

Each test file in this folder crosses bad or extreme inputs with the estimators or
solvers of one area. There are two kinds of case.

**Bad input** (NaN, wrong shape, a negative weight, ``lam=-1``, ...). The case declares
the input it corrupts (``corrupts="X"``, ``"y"``, ``"sample_weight"``, ``"lam"``, or
``"fit"`` for a call before ``fit``). It passes when the call returns finite results that
are right (each test states what "right" means), or raises a *clear error*:

* a ``ValueError`` / ``TypeError`` (``DivergenceError`` and ``NotFittedError`` are ones),
  not raised from inside ``numpy.linalg`` / ``scipy.linalg``;
* whose message **names the corrupted input**, spelled as the argument or parameter is
  (``sample_weight``, not "weights"), as a whole word;
* and **says what to do**: one of :data:`ACTIONS`, used as an imperative, i.e. at the
  start of a clause (after the start of the message, ``. ; : ! ? ( ,`` or ``or``/``and``/
  ``then``): "Set lam >= 0", "...: scale the features", "fix or drop the samples".

**Extreme but valid input** (features times 1e-12 ... 1e300). The problem has a right
answer, known from a reference (the same model on the data scaled back, mapped by the
scale, or a peer library). Only that answer passes (the test compares it): a refusal
fails the case, however well worded, unless the test shows with :func:`unrepresentable`
that the right answer cannot be held in float64 (it overflows, or falls below the
smallest normal double); then a clear error is accepted too.

Anything else — NaN/inf in a result, a raw ``LinAlgError``, an exception from deep
inside numpy, a message that names nothing or advises nothing, a warning-only
divergence — fails the case. ``tests/test_harness_can_fail.py`` feeds deliberately bad
fake estimators through these rules and asserts each is caught.
"""

from __future__ import annotations

import re
import warnings

import numpy as np

#: Feature scales of the scale scan (``X * s``), from tiny to near overflow.
SCALES = (1e-12, 1e-8, 1e-4, 1.0, 1e4, 1e8, 1e150, 1e300)

#: The verbs that count as telling the user what to do (as an imperative, see above).
ACTIONS = ("add", "call", "centre", "center", "choose", "clip", "collect", "convert", "drop",
           "encode", "fix", "give", "impute", "increase", "lower", "mask", "merge", "pass",
           "project", "raise", "reduce", "remove", "rescale", "reshape", "scale", "select",
           "set", "split", "standardise", "standardize", "use")

_ACTION = re.compile(r"(?:^|[.;:!?(,]\s*|\b(?:or|and|then)\s+)(?:" + "|".join(ACTIONS) + r")\b",
                     re.IGNORECASE | re.MULTILINE)
_LINALG_MODULES = ("numpy.linalg", "scipy.linalg")


def _names(corrupts):
    return (corrupts,) if isinstance(corrupts, str) else tuple(corrupts)


def says_what_to_do(message: str) -> bool:
    """Whether ``message`` holds an imperative from :data:`ACTIONS` (at the start of a clause)."""
    return bool(_ACTION.search(message))


def why_unclear(exc: BaseException, corrupts) -> str | None:
    """``None`` when ``exc`` is a clear error about the input ``corrupts`` (a name, or a
    tuple of names any of which may be named); otherwise what is missing."""
    if not isinstance(exc, (ValueError, TypeError)):
        return f"{type(exc).__name__} is not a ValueError/TypeError"
    if type(exc).__module__.startswith(_LINALG_MODULES):
        return f"raw {type(exc).__module__}.{type(exc).__name__}"
    msg = str(exc)
    names = _names(corrupts)
    if not any(re.search(rf"(?<!\w){re.escape(n)}(?!\w)", msg) for n in names):
        return f"does not name the offending input {' or '.join(names)}"
    if not says_what_to_do(msg):
        return f"says nothing to do (no imperative among {', '.join(ACTIONS)})"
    return None


def clear_error(exc: BaseException, corrupts) -> bool:
    """An error a user can act on: names the input ``corrupts`` and says what to do."""
    return why_unclear(exc, corrupts) is None


def assert_clear_error(exc: BaseException, corrupts) -> None:
    """Fail the case, quoting the message, unless ``exc`` is a clear error about ``corrupts``."""
    why = why_unclear(exc, corrupts)
    assert why is None, f"unclear error ({why}) {type(exc).__name__}: {exc}"


def answer_or_clear_error(call, *, corrupts):
    """Bad-input case: run ``call()``; return its result, or ``None`` when it raised a clear
    error about ``corrupts``. Any other exception fails the case (``AssertionError``).

    numpy's overflow/invalid warnings are silenced: the test checks the result is finite.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return call()
    except Exception as exc:  # classifying errors is the point
        why = why_unclear(exc, corrupts)
        if why is None:
            return None
        raise AssertionError(f"unclear error ({why}) {type(exc).__name__}: {exc}") from exc


def unrepresentable(reference, *factors) -> str | None:
    """Why the right answer ``reference * factors[0] * factors[1] * ...`` (an answer of
    the unscaled problem mapped to the scaled one) cannot be held in float64, or ``None``.

    Computed on logarithms, so the check itself cannot overflow or underflow: a nonzero
    entry whose magnitude exceeds the largest double, or falls below the smallest normal
    one (where digits are lost), makes the answer unreachable.
    """
    ref = np.abs(np.asarray(reference, dtype=float)).ravel()
    ref = ref[ref != 0]
    if ref.size == 0:
        return None
    if not np.all(np.isfinite(ref)):
        return "the reference itself is not finite"
    shift = sum(np.log10(abs(float(f))) for f in factors)
    top, bottom = np.log10(ref.max()) + shift, np.log10(ref.min()) + shift
    if top > np.log10(np.finfo(float).max):
        return f"the right answer reaches ~1e{top:.0f}, beyond the largest double"
    if bottom < np.log10(np.finfo(float).tiny):
        return f"the right answer falls to ~1e{bottom:.0f}, below the smallest normal double"
    return None


def right_answer_required(call, *, unreachable=None, corrupts="X"):
    """Extreme-but-valid case: run ``call()`` and return its result for the test to compare.

    A refusal fails the case unless ``unreachable`` (a reason from :func:`unrepresentable`)
    says the right answer cannot be represented; then a clear error about ``corrupts`` is
    accepted and ``None`` returned.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return call()
    except Exception as exc:  # classifying errors is the point
        if not unreachable:
            raise AssertionError(f"refused extreme but valid input whose right answer is representable: "
                                 f"{type(exc).__name__}: {exc}") from exc
        why = why_unclear(exc, corrupts)
        if why is not None:
            raise AssertionError(f"unclear error ({why}) {type(exc).__name__}: {exc}") from exc
        return None


def assert_all_finite(*arrays, what="result"):
    """Fail the case when any array holds NaN or inf (a silent wrong answer)."""
    for a in arrays:
        a = np.asarray(a, dtype=float)
        assert np.all(np.isfinite(a)), f"silent non-finite {what}: {a.ravel()[:5]}"


def public_estimators():
    """Every public estimator class of linbook (top level and ``linbook.online``), by name."""
    import inspect

    from sklearn.base import BaseEstimator

    import linbook
    import linbook.online

    found = {}
    for module in (linbook, linbook.online):
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) and issubclass(obj, BaseEstimator):
                found[obj.__name__] = obj
    return [found[name] for name in sorted(found)]


def gamma_quantiles_mp(q, a):
    """Quantiles ``q`` of ``Gamma(a, 1)`` by 40-digit root finding on mpmath's regularised incomplete gamma
    function: an oracle independent of scipy, whose beta quantiles in 1.10 return NaN or never return at counts
    far apart (``Beta(1e5, 1e100)``). ``Beta(a, b)`` with ``b`` far beyond ``a`` is ``Gamma(a) / b`` to a relative
    ``a / b``."""
    import mpmath

    out = []
    with mpmath.workdps(40):
        a_mp = mpmath.mpf(a)
        sd = mpmath.sqrt(a_mp)
        for qi in np.atleast_1d(q):
            target = mpmath.mpf(float(qi))
            lo, hi = max(mpmath.mpf(0), a_mp - 40 * sd - 40), a_mp + 40 * sd + 40
            for _ in range(400):            # bisection: the CDF is monotone, 400 halvings reach 40 digits
                mid = (lo + hi) / 2
                if mpmath.gammainc(a_mp, 0, mid, regularized=True) < target:
                    lo = mid
                else:
                    hi = mid
                if hi - lo <= mpmath.mpf(10) ** -30 * hi:
                    break
            out.append(float((lo + hi) / 2))
    return np.array(out)
