"""Self-checks for the chapters' exercises.

In a notebook a student writes a function and runs::

    import linbook
    linbook.exercises.check("logreg.newton-step", my_newton_step)

(``import linbook`` makes ``linbook.exercises`` available; ``import linbook.exercises as
ex`` works too.)

``check`` tests the function against the reference on random and edge-case inputs and
prints one line per property (``pass`` / ``FAIL: what went wrong``), never the
solution. It returns an :class:`ExerciseResult` (truthy when everything passed), which a
notebook does not display again after the printed report.

Writing a self-check (chapter authors)
--------------------------------------
Each chapter has a module ``linbook/exercises/<chapter>.py`` that registers checks::

    from linbook.exercises import Property, close, exercise

    @exercise("logreg.newton-step", "One Newton step for logistic regression")
    def _check(fn):
        rng = np.random.default_rng(0)
        ...
        yield Property("matches the reference on random data", close(fn(X, y, w), ref))
        yield Property("handles all-zero weights", ...)

A check yields :class:`Property` objects. The check receives the student's function
wrapped, so that every failure is reported as the student's, in their words, and never as a
line of the check:

* an exception raised inside the student's function becomes the failed property "your
  function runs without error" with ``your function raised ValueError: ... (line 3 of its
  cell)``;
* an exception raised by the check while it uses what the function returned (unpacking a
  tuple of the wrong length, an array of the wrong shape) becomes "your function returns
  what the exercise asks for" with ``your function returned an array of shape (3,), but
  linear.least-squares expects (w, b): ...`` -- the ``returns`` text of :func:`exercise`;
* a failed property gets a note when the function returned NaN/inf, None or a non-number,
  and :func:`close` says when shapes differ ("got shape (3,) where (2, 3) is expected");
* every array argument (also inside lists, tuples and dicts) reaches the student's function as
  a copy, so the check's own arrays stay as it made them and a reference computed after the
  call is computed from the inputs the function saw: a function that works in place is judged
  on what it returns, and one that changes its inputs cannot move the reference. The report
  then notes which argument it changed. A property about in-place behaviour itself (an
  exercise that says "do not modify w") calls ``fn.shared(...)``, which passes the arguments
  as they are.

Keys are ``<chapter-slug>.<name>``; the chapter modules are imported on first use.

Derived in: the exercises at the end of each chapter.
"""

from __future__ import annotations

import importlib
import inspect
import numbers
import os
import pkgutil
import sysconfig
import traceback
from dataclasses import dataclass, field

import numpy as np

__all__ = ["check", "exercise", "Property", "ExerciseResult", "StudentError", "available", "close", "describe",
           "has_shape", "is_tuple"]

_REGISTRY: dict = {}
_LOADED = False


class StudentError(Exception):
    """A failure of the student's function, worded for the student (raised inside a check)."""


class _Mismatch:
    """A falsy answer of :func:`close` that says why (kept through ``a and b``)."""

    __slots__ = ("problem",)

    def __init__(self, problem):
        self.problem = problem

    def __bool__(self):
        return False

    def __repr__(self):
        return f"False ({self.problem})"


@dataclass
class Property:
    """One property a student's function must have. ``hint`` is shown when it fails.

    ``passed`` may be the falsy result of :func:`close`; what it says about the mismatch
    (shape, NaN, type) is kept in ``problem`` and shown after the hint.
    """

    name: str
    passed: bool
    hint: str = ""
    problem: str = field(default="", init=False, repr=False)

    def __post_init__(self):
        self.problem = getattr(self.passed, "problem", "")
        self.passed = bool(self.passed)


@dataclass
class ExerciseResult:
    key: str
    properties: list = field(default_factory=list)
    title: str = ""
    #: True once :func:`check` has printed the report (a notebook then shows nothing more).
    printed: bool = field(default=False, repr=False, compare=False)
    #: Remarks on the function as a whole (it changed its inputs), printed before the verdict.
    notes: list = field(default_factory=list, init=False, repr=False, compare=False)

    @property
    def passed(self):
        return bool(self.properties) and all(p.passed for p in self.properties)

    def __bool__(self):
        return self.passed

    def __repr__(self):
        n = sum(p.passed for p in self.properties)
        return f"{self.key}: {n}/{len(self.properties)} properties pass"

    def report(self):
        """The text :func:`check` prints: the exercise, one line per property, the verdict."""
        lines = [f"{self.key}{' - ' + self.title if self.title else ''}"]
        for p in self.properties:
            mark = "pass" if p.passed else "FAIL"
            lines.append(f"  [{mark}] {p.name}" + (f": {p.hint}" if (not p.passed and p.hint) else ""))
        lines += [f"  note: {n}" for n in self.notes]
        lines.append("  all properties pass" if self.passed else "  some properties fail: revise and run again")
        return "\n".join(lines)

    def _ipython_display_(self):
        # `check(...)` as a cell's last line: the report it printed is the result, so the
        # notebook shows it once instead of adding the one-line repr as the cell's value.
        if not self.printed:
            print(self.report())


def describe(value):
    """A short description of a value for a student ("an array of shape (3,)", "None", ...)."""
    if value is None:
        return "None (is a `return` missing?)"
    if isinstance(value, (bool, np.bool_)):
        return f"the bool {bool(value)}"
    if isinstance(value, (numbers.Number, np.generic)):
        return f"the number {value!r}" if np.ndim(value) == 0 else f"a {type(value).__name__}"
    if isinstance(value, np.ndarray):
        kind = "" if value.dtype.kind in "biufc" else f" of dtype {value.dtype}"
        return f"an array of shape {value.shape}{kind}"
    if isinstance(value, (tuple, list)):
        kind = type(value).__name__
        if len(value) <= 4:
            inner = ", ".join(_short(v) for v in value)
            return f"a {kind} of {len(value)} ({inner})"
        return f"a {kind} of length {len(value)}"
    return f"a {type(value).__name__}"


def _short(value):
    if isinstance(value, np.ndarray):
        return f"shape {value.shape}"
    if isinstance(value, (numbers.Number, np.generic)) and not isinstance(value, (bool, np.bool_)):
        return "a number"
    return describe(value).removeprefix("an ").removeprefix("a ").split(" (")[0]


def close(a, b, tol=None, *, rtol=1e-8, atol=1e-10, scale=None):
    """Does a student's answer ``a`` match the reference ``b``?

    True when ``a`` converts to a float array of the same shape as ``b``, is finite, and
    every entry satisfies::

        |a_i - b_i| <= rtol * |b_i| + atol * scale,

    ``scale`` being the reference's own scale: by default the largest ``|b_i|`` (1 when ``b``
    is all zero). ``tol`` sets ``rtol`` and ``atol`` together. Otherwise a falsy value that
    says what differs (used in the printed hint): a non-numeric answer, a wrong shape or a
    NaN gives a failed property, never an exception. A reference holding NaN, inf or complex
    numbers, or a ``scale`` not finite, >= 0 and broadcasting to ``b``'s shape, is the check's
    error: ``ValueError``.

    Why this rule: the absolute part ``atol`` exists to accept rounding noise in entries that
    cancel to (nearly) zero, and that noise is a fraction of the size of the numbers the
    array was computed from, not an absolute amount. An absolute ``atol`` accepted any answer
    for a reference of 1e-12 and rejected correct answers for references of 1e20 whose small
    entries carry rounding noise of order 1e4. Measured against the array's largest entry,
    the verdict is the same at every scale: ``close(c a, c b) == close(a, b)`` for any
    ``c > 0``. The scale is per array, not per entry, because one formula computes the whole
    array from the same inputs; an entry 1e-15 times the largest is therefore judged only to
    about ``atol`` times the largest. A check whose entries are separate quantities passes
    ``scale`` (a number, or an array broadcasting to ``b``; ``scale=np.abs(b)`` judges every
    entry relative to itself), and a check whose reference is exactly zero but comes from
    numbers far from 1 passes their size as ``scale``.
    """
    if tol is not None:
        rtol = atol = tol
    if a is None:
        return _Mismatch("got None")
    if _complex(a):
        return _Mismatch(f"got {describe(a)} with complex entries, not real numbers")
    try:
        arr = _real_array(a)
    except (TypeError, ValueError):
        return _Mismatch(f"got {describe(a)}, not numbers")
    b = _real_reference(b)
    if arr.shape != b.shape:
        return _Mismatch(f"got shape {arr.shape} where {b.shape} is expected")
    if not np.all(np.isfinite(arr)):
        return _Mismatch("got NaN or inf")
    bound = rtol * np.abs(b) + atol * _checked_scale(scale, b)
    # The difference of two finite numbers near the largest float overflows; halves do not.
    if np.all(np.abs(arr / 2 - b / 2) <= bound / 2):
        return True
    return _low_precision_hint(a, arr, b, bound)


def _low_precision_hint(a, arr, b, bound):
    """``False``, saying so when the answer is float32 / float16 and right to that format's rounding: its ~7 (or
    ~3) digits cannot meet a float64 check, and "wrong" alone would send the student looking for a mistake in
    the maths instead of in the dtype."""
    dtype = getattr(a, "dtype", None)
    if dtype is None or dtype.kind != "f" or dtype.itemsize >= 8:
        return False
    eps = float(np.finfo(dtype).eps)
    loose = np.maximum(bound, 16 * eps * np.maximum(np.abs(b), float(np.max(np.abs(b), initial=0.0))))
    if np.all(np.abs(arr / 2 - b / 2) <= loose / 2):
        return _Mismatch(f"got {dtype.name}, right only to {dtype.name}'s ~{int(-np.log10(eps))} digits: "
                         "compute in float64 (start from float64 arrays, e.g. np.asarray(X, dtype=float))")
    return False


def _complex(value):
    """Whether ``value`` holds complex numbers with an imaginary part: ``np.asarray(..., dtype=float)`` of a
    complex array drops the imaginary parts with only a warning, so ``[1 + 5j, 2]`` matched ``[1, 2]``.
    (A complex array whose imaginary parts are all 0, as from ``np.linalg.eigvals``, is real.)"""
    try:
        values = _as_numbers(value)
        return np.iscomplexobj(values) and bool(np.any(values.imag != 0))
    except (TypeError, ValueError):
        return False


def _real_array(value):
    """``value`` as a float array, a complex one with zero imaginary parts (checked by :func:`_complex`) taken
    by its real part, so that no ComplexWarning reaches the reader."""
    values = _as_numbers(value)
    return np.asarray(values.real if np.iscomplexobj(values) else values, dtype=float)


def _as_numbers(value):
    """``np.asarray(value)``, an object array rebuilt from its elements (numpy then picks their common type, complex
    where one is). Why: an object array hides complex entries from ``np.iscomplexobj``, and ``float()`` of a numpy
    complex keeps the real part with only a ComplexWarning: an answer holding ``1 + 5j`` matched ``1``, and a
    reference holding one gave Python's TypeError instead of the check's error."""
    values = np.asarray(value)
    if values.dtype == object:
        try:
            values = np.array(values.tolist())
        except (TypeError, ValueError):
            pass
    return values


def _real_reference(b):
    """The reference as a finite float array. Why: an inf in ``b`` made the scale, and so every entry's bound,
    inf (any answer matched); a NaN failed every answer without a reason. Both are the check's error."""
    if _complex(b):
        raise ValueError(f"close: the reference b holds complex numbers ({describe(b)}); compare the real and "
                         "imaginary parts as two real arrays.")
    b = _real_array(b)
    if not np.all(np.isfinite(b)):
        raise ValueError("close: the reference b holds NaN or inf, which no answer can be judged against; "
                         "check the finite entries, and the non-finite ones with np.isnan / np.isinf.")
    return b


def _checked_scale(scale, b):
    """``scale`` as an array of ``b``'s shape (the reference's own by default). Why: a scale of shape (n, 1)
    broadcast the bound to (n, n) and judged each entry against the others' bounds; a negative or NaN one
    failed every answer without a reason."""
    if scale is None:
        return _reference_scale(b)
    try:
        s = np.asarray(scale, dtype=float)
        ok = np.broadcast_shapes(s.shape, b.shape) == b.shape
    except (TypeError, ValueError):
        ok = False
    if not (ok and np.all(s >= 0) and np.all(np.isfinite(s))):
        raise ValueError(f"close: scale must be a finite number >= 0 or such an array broadcasting to the "
                         f"reference's shape {b.shape}; got {describe(scale)}.")
    return s


def _reference_scale(b):
    """The size of the reference: its largest ``|entry|``, or 1 for an all-zero (or empty) one.

    An all-zero reference has no size of its own, so rounding noise is then measured in
    absolute terms, as numpy's ``allclose`` does.
    """
    largest = float(np.max(np.abs(b), initial=0.0))
    return largest if largest > 0 else 1.0


def has_shape(value, shape):
    """True when ``value`` is numbers of this shape, else a falsy value saying what came back."""
    if value is None:
        return _Mismatch("got None")
    try:
        got = np.asarray(value, dtype=float).shape
    except (TypeError, ValueError):
        return _Mismatch(f"got {describe(value)}, not numbers")
    return True if got == tuple(shape) else _Mismatch(f"got shape {got} where {tuple(shape)} is expected")


def is_tuple(value, n):
    """True when ``value`` is a tuple (or list) of ``n`` items, else a falsy value saying what came back."""
    if isinstance(value, (tuple, list)) and len(value) == n:
        return True
    return _Mismatch(f"got {describe(value)} where a tuple of {n} is expected")


def exercise(key, title="", returns=""):
    """Register a self-check generator under ``key``.

    ``returns`` says in words what the student's function must return (e.g. ``"(w, b): w of
    shape (D,), b a number"``); it is quoted when the check cannot use what came back.
    """
    def deco(fn):
        if key in _REGISTRY:
            raise ValueError(f"exercise {key!r} registered twice")
        _REGISTRY[key] = (title, fn, returns)
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


def _library_dirs():
    """Folders of installed code (Python, site-packages, linbook): not the student's."""
    paths = sysconfig.get_paths()
    dirs = {os.path.realpath(p) + os.sep for k in ("stdlib", "platstdlib", "purelib", "platlib") if (p := paths.get(k))}
    return tuple(dirs | {os.path.realpath(os.path.dirname(os.path.dirname(__file__))) + os.sep})


def _where(exc):
    """' (line 3 of its cell)': the last frame of the student's own code in the traceback."""
    frames = traceback.extract_tb(exc.__traceback__)[1:]   # [0] is _Student._run
    library = _library_dirs()
    own = [f for f in frames if not os.path.realpath(f.filename).startswith(library)]
    if not own:
        return ""
    f = own[-1]
    name = os.path.basename(f.filename)
    place = "its cell" if ("ipykernel" in f.filename or name.startswith("<")) else name
    return f" (in {f.name}, line {f.lineno} of {place})"


def _odd_kind(value, depth=0):
    """'none', 'type' or 'nan' when a returned value holds something no property can accept."""
    if value is None:
        return "none"
    if isinstance(value, (str, bytes, dict, set)) or callable(value):
        return "type"
    if isinstance(value, (tuple, list)):
        if depth >= 2:
            return ""
        return next((k for k in (_odd_kind(v, depth + 1) for v in value[:100]) if k), "")
    try:
        arr = np.asarray(value)
        if arr.dtype.kind in "fc" and not np.all(np.isfinite(arr)):
            return "nan"
    except Exception:   # an exotic object: the properties will say what is wrong
        pass
    return ""


def _odd(value):
    """A note on a returned value that no property can accept, else ''."""
    kind = _odd_kind(value)
    if kind == "nan":
        return "your function returned NaN or inf"
    if kind and isinstance(value, (tuple, list)):
        return f"your function returned {describe(value)}"
    if kind == "none":
        return "your function returned None (is a `return` missing?)"
    if kind == "type":
        return f"your function returned {describe(value)}, not numbers"
    return ""


def _copied(value, memo):
    """``value`` with every array in it copied (lists, tuples and dicts rebuilt around the copies).

    Why: a check computes its reference from the arrays it passed, often after the call; a student's
    function that works in place (``X -= mu``, ``y[y == 0] = -1``) changed them, so a right answer was
    judged against a moved reference and rejected, and a wrong one could move the reference onto itself.
    ``memo`` keeps one copy per object, so an argument passed twice (``fn(x, x)``) stays one array.
    Anything else (numbers, strings, callables) is passed as it is.
    """
    if id(value) in memo:
        return memo[id(value)][1]
    if isinstance(value, np.ndarray):
        out = np.array(value, copy=True, order="K", subok=True)
    elif type(value) in (list, tuple):
        out = type(value)(_copied(v, memo) for v in value)
    elif type(value) is dict:
        out = {k: _copied(v, memo) for k, v in value.items()}
    else:
        return value
    memo[id(value)] = (value, out)   # the original is kept alive so that its id is not reused
    return out


def _changed(original, copy):
    """Whether the student's function changed ``copy``, made from ``original`` by :func:`_copied`."""
    if copy is original:
        return False
    if isinstance(original, np.ndarray):
        if not isinstance(copy, np.ndarray) or copy.shape != original.shape or copy.dtype != original.dtype:
            return True   # replaced in a list by something else, or resized in place
        try:
            return not np.array_equal(copy, original, equal_nan=original.dtype.kind in "fc")
        except Exception:   # an exotic dtype or objects that cannot be compared: say nothing
            return False
    if isinstance(original, (dict, list, tuple)) and type(copy) is not type(original):
        return True
    if isinstance(original, dict):
        return copy.keys() != original.keys() or any(_changed(original[k], copy[k]) for k in original)
    if isinstance(original, (list, tuple)):
        return len(copy) != len(original) or any(_changed(a, b) for a, b in zip(original, copy))
    try:   # an item of a list replaced by the function (``y[0] = 5``)
        return not bool(copy == original)
    except Exception:   # an object that cannot say whether it is equal
        return True


def _arg_names(fn, n):
    """How the report names ``fn``'s first ``n`` positional arguments: by the parameter's name in backquotes,
    or ``argument 3`` where it has none (``*args``)."""
    try:
        params = [p.name for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    return [f"`{params[i]}`" if i < len(params) else f"argument {i + 1}" for i in range(n)]


class _Student:
    """The student's function as the check sees it: its failures become :class:`StudentError`, and it is
    called with copies of the check's arrays (:func:`_copied`)."""

    def __init__(self, fn, errstate):
        self._fn, self._errstate = fn, errstate
        self.calls, self.last, self.notes = 0, None, []
        self.changed = []   # the names of the arguments the function changed in place, in order
        self.__name__ = getattr(fn, "__name__", "your function")
        self.__doc__ = getattr(fn, "__doc__", None)

    def __call__(self, *args, **kwargs):
        memo = {}
        out = self._run(_copied(args, memo), _copied(kwargs, memo))
        names = _arg_names(self._fn, len(args))
        pairs = [(names[i], a) for i, a in enumerate(args)] + [(f"`{k}`", v) for k, v in kwargs.items()]
        for name, original in pairs:
            copy = memo.get(id(original), (None, original))[1]
            if _changed(original, copy) and name not in self.changed:
                self.changed.append(name)
        return out

    def shared(self, *args, **kwargs):
        """Call the function with the check's own arguments, not copies: for a property about what the
        function does to its inputs (``perceptron.epoch`` must leave ``w`` alone)."""
        return self._run(args, kwargs)

    def _run(self, args, kwargs):
        with np.errstate(**self._errstate):   # the student's own floating-point settings
            try:
                out = self._fn(*args, **kwargs)
            except Exception as exc:
                raise StudentError(f"your function raised {type(exc).__name__}: {exc}{_where(exc)}") from exc
        self.calls += 1
        self.last = out
        note = _odd(out)
        if note and note not in self.notes:
            self.notes.append(note)
        return out


def _in_place_note(names):
    """The report's note on arguments the function changed (the verdict did not depend on it)."""
    listed = ", ".join(names)
    return (f"your function changed its input {listed} in place; the check passed it copies, so the verdict "
            "is about what it returned, but code that uses those arrays after the call will see them changed")


def check(key, student_fn, *, verbose=True):
    """Run the self-check ``key`` on ``student_fn``; print and return the result.

    Every failure is reported as a failed property in the student's terms (what the function
    raised or returned), never as an error of the check.
    """
    _load_all()
    if key not in _REGISTRY:
        raise KeyError(f"no exercise {key!r}; available: {available()}")
    if not callable(student_fn):
        raise TypeError(f"check({key!r}, ...) needs your function itself (e.g. my_function, not "
                        f"my_function(X, y)); got {describe(student_fn)}")
    title, gen, returns = _REGISTRY[key]
    result = ExerciseResult(key, title=title)
    student = _Student(student_fn, np.geterr())
    notes = []
    try:
        with np.errstate(all="ignore"):   # a wrong answer (NaN, inf) must not flood the check with warnings
            for prop in gen(student):
                if student.notes:   # the values returned since the previous property
                    notes, student.notes = student.notes, []
                if not prop.passed:
                    problem = prop.problem
                    if notes and (problem == "got NaN or inf" or problem.startswith("got None")):
                        problem = ""   # the note about the returned value says it already
                    extra = "; ".join(x for x in (problem, *notes) if x)
                    if extra:
                        prop.hint = f"{prop.hint} ({extra})" if prop.hint else extra
                result.properties.append(prop)
    except StudentError as exc:
        result.properties.append(Property("your function runs without error", False, str(exc)))
    except Exception:
        if not student.calls:
            raise   # the self-check itself failed before calling the student's function: a bug of linbook
        expected = f", but {key} expects {returns}" if returns else f", which {key} cannot use"
        result.properties.append(Property("your function returns what the exercise asks for", False,
                                          f"your function returned {describe(student.last)}{expected}"))
    if student.changed:
        result.notes.append(_in_place_note(student.changed))
    if verbose:
        print(result.report())
        result.printed = True
    return result
