"""What every adversarial case asserts: a right answer or a clear error, never a silent NaN.

Each test file in this folder crosses bad or extreme inputs with the estimators or
solvers of one area. A case passes when the call either

* returns finite results that are right (each test states what "right" means:
  equal to the scale-invariant answer, to a peer, or to a property), or
* raises ``ValueError`` (``DivergenceError`` is one) / ``NotFittedError`` whose
  message says what is wrong and what to do.

Anything else — NaN/inf in a result, a raw ``LinAlgError``, an exception from deep
inside numpy with no advice, a warning-only divergence — fails the case.
"""

from __future__ import annotations

import re
import warnings

import numpy as np

#: Feature scales of the scale scan (``X * s``), from tiny to near overflow.
SCALES = (1e-12, 1e-8, 1e-4, 1.0, 1e4, 1e8, 1e150, 1e300)

_ADVICE = re.compile(
    r"scale|standardi[sz]e|lower|reduce|increase|set |use |check|remove|drop|add|penal|"
    r"regulari[sz]|must|should|needs?|expected|cannot|only|at least|at most|call|fit",
    re.I)


def clear_error(exc: BaseException) -> bool:
    """An error a user can act on: a ValueError/TypeError whose message gives advice."""
    from sklearn.exceptions import NotFittedError
    if isinstance(exc, NotFittedError):
        return True
    if not isinstance(exc, (ValueError, TypeError)):
        return False
    if type(exc).__module__.startswith(("numpy.linalg", "scipy.linalg")):
        return False
    msg = str(exc)
    return len(msg) >= 20 and bool(_ADVICE.search(msg))


def answer_or_clear_error(call):
    """Run ``call()``; return its result, or ``None`` when it raised a clear error.

    Raises ``AssertionError`` (failing the case) for an unclear error, and turns
    numpy's overflow/invalid warnings into failures only if the result is not finite.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return call()
    except Exception as exc:  # noqa: BLE001 - classifying errors is the point
        if clear_error(exc):
            return None
        raise AssertionError(f"unclear error {type(exc).__name__}: {exc}") from exc


def assert_all_finite(*arrays, what="result"):
    """Fail the case when any array holds NaN or inf (a silent wrong answer)."""
    for a in arrays:
        a = np.asarray(a, dtype=float)
        assert np.all(np.isfinite(a)), f"silent non-finite {what}: {a.ravel()[:5]}"
