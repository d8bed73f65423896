"""Self-checks for the chapters' exercises.

In a notebook a student writes a function and runs::

    import linbook.exercises as ex
    ex.check("logreg.newton-step", my_newton_step)

``check`` tests the function against the reference on random and edge-case inputs and
prints one line per property (``pass`` / ``FAIL: what went wrong``), never the
solution. It returns an :class:`ExerciseResult` (truthy when everything passed).

Writing a self-check (chapter authors)
--------------------------------------
Each chapter has a module ``linbook/exercises/<chapter>.py`` that registers checks::

    from linbook.exercises import exercise, Property

    @exercise("logreg.newton-step", "One Newton step for logistic regression")
    def _check(fn):
        rng = np.random.default_rng(0)
        ...
        yield Property("matches the reference on random data", np.allclose(fn(X, y, w), ref))
        yield Property("handles all-zero weights", ...)

A check yields :class:`Property` objects; an exception raised by the student's code is
caught and reported as a failed property. Keys are ``<chapter-slug>.<name>``; the
chapter modules are imported on first use.

Derived in: the exercises at the end of each chapter.
"""

from __future__ import annotations

import importlib
import pkgutil
import traceback
from dataclasses import dataclass, field

import numpy as np

__all__ = ["check", "exercise", "Property", "ExerciseResult", "available", "close"]

_REGISTRY: dict = {}
_LOADED = False


@dataclass
class Property:
    """One property a student's function must have. ``hint`` is shown when it fails."""

    name: str
    passed: bool
    hint: str = ""


@dataclass
class ExerciseResult:
    key: str
    properties: list = field(default_factory=list)

    @property
    def passed(self):
        return bool(self.properties) and all(p.passed for p in self.properties)

    def __bool__(self):
        return self.passed

    def __repr__(self):
        n = sum(p.passed for p in self.properties)
        return f"{self.key}: {n}/{len(self.properties)} properties pass"


def close(a, b, tol=None, *, rtol=1e-8, atol=1e-10):
    """Does a student's answer ``a`` match the reference ``b``?

    True when ``a`` converts to a float array of the same shape as ``b``, is finite, and is
    ``allclose`` to ``b``; ``tol`` sets ``rtol`` and ``atol`` together. A non-numeric
    answer gives False (a failed property), not an exception.
    """
    if tol is not None:
        rtol = atol = tol
    try:
        a = np.asarray(a, dtype=float)
    except (TypeError, ValueError):
        return False
    b = np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.all(np.isfinite(a))) and bool(np.allclose(a, b, rtol=rtol, atol=atol))


def exercise(key, title=""):
    """Register a self-check generator under ``key``."""
    def deco(fn):
        if key in _REGISTRY:
            raise ValueError(f"exercise {key!r} registered twice")
        _REGISTRY[key] = (title, fn)
        return fn
    return deco


def _load_all():
    global _LOADED
    if not _LOADED:
        for mod in pkgutil.iter_modules(__path__):
            importlib.import_module(f"{__name__}.{mod.name}")
        _LOADED = True


def available():
    """Sorted list of the registered exercise keys."""
    _load_all()
    return sorted(_REGISTRY)


def check(key, student_fn, *, verbose=True):
    """Run the self-check ``key`` on ``student_fn``; print and return the result."""
    _load_all()
    if key not in _REGISTRY:
        raise KeyError(f"no exercise {key!r}; available: {available()}")
    title, gen = _REGISTRY[key]
    result = ExerciseResult(key)
    try:
        for prop in gen(student_fn):
            result.properties.append(prop)
    except Exception as exc:  # the student's code raised: report, do not crash the notebook
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        result.properties.append(Property(
            "your function runs without error", False,
            f"{type(exc).__name__}: {exc} (line {frame.lineno} of {frame.name})"))
    if verbose:
        print(f"{key}{' - ' + title if title else ''}")
        for p in result.properties:
            mark = "pass" if p.passed else "FAIL"
            print(f"  [{mark}] {p.name}" + (f": {p.hint}" if (not p.passed and p.hint) else ""))
        print("  all properties pass" if result.passed else "  some properties fail: revise and run again")
    return result
