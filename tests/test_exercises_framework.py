import ast
import re
from pathlib import Path

import numpy as np
import pytest

from linbook.exercises import Property, _REGISTRY, check, exercise


@exercise("test.square", "square a number")
def _sq(fn):
    for x in (0.0, 2.0, -3.0):
        yield Property(f"fn({x}) is {x}^2", np.isclose(fn(x), x * x), "compare with x*x")


def test_check_passes_and_fails(capsys):
    assert check("test.square", lambda x: x * x)
    r = check("test.square", lambda x: 2 * x)
    assert not r and any(not p.passed for p in r.properties)
    out = capsys.readouterr().out
    assert "FAIL" in out and "pass" in out


def test_student_exception_is_reported(capsys):
    r = check("test.square", lambda x: 1 / 0)
    assert not r.passed
    assert "ZeroDivisionError" in capsys.readouterr().out


def test_unknown_key():
    with pytest.raises(KeyError):
        check("nope.nothing", lambda x: x)


def test_duplicate_registration():
    with pytest.raises(ValueError):
        exercise("test.square")(lambda fn: iter(()))


def test_a_printed_result_is_not_displayed_again(capsys):
    r = check("test.square", lambda x: x * x)
    printed = capsys.readouterr().out
    assert printed.count("test.square") == 1 and r.printed
    r._ipython_display_()        # what a notebook calls for a cell's last value
    assert capsys.readouterr().out == ""
    quiet = check("test.square", lambda x: x * x, verbose=False)
    assert capsys.readouterr().out == "" and not quiet.printed
    quiet._ipython_display_()
    assert capsys.readouterr().out == printed


# A hint names the idea, not the answer: no equation, sum, inverse or transpose written out.
FORMULA = re.compile(r"[A-Za-z)\]]\s*=\s*[A-Za-z(]|\bsum_|\^-1|\^\{-1\}|\b[A-Z]'\s?[A-Za-z(]|\bdiag\(|[+-]=")


def _hints(module):
    """The literal hints (third argument of Property, or ``hint = "..."``) of an exercise module."""
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        value = None
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Property" and len(node.args) >= 3:
            value = node.args[2]
        elif isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == ["hint"]:
            value = node.value
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            yield value.value


def test_hints_do_not_give_the_formula_away():
    import importlib
    import pkgutil

    import linbook.exercises as ex

    found = []
    for info in pkgutil.iter_modules(ex.__path__):
        module = importlib.import_module(f"linbook.exercises.{info.name}")
        found += [(info.name, h) for h in _hints(module) if FORMULA.search(h)]
    assert not found, "hints that state the answer:\n" + "\n".join(f"{m}: {h}" for m, h in found)
    assert FORMULA.search("the Hessian is X' S X with S = diag(mu (1 - mu))")
    assert FORMULA.search("update w += eta y_i x_i")


# --- the student's function gets copies of the check's arrays ---------------------------------------------
SEEN = {}


@exercise("test.copies", "a check that computes its reference after the call, from the arrays it passed")
def _copies(fn):
    x, rows = np.array([1.0, -2.0, 3.0]), [np.zeros(2), np.ones(2)]
    out = fn(x, rows, scale=np.array([2.0]))
    SEEN["after"] = (x.copy(), [r.copy() for r in rows])
    yield Property("sum of x times scale", np.isclose(out, 2 * x.sum()), "")
    shared = np.array([5.0])
    fn.shared(shared, [np.zeros(2)], scale=np.array([1.0]))
    SEEN["shared"] = shared.copy()


@exercise("test.alias", "the same array passed twice")
def _alias(fn):
    x = np.arange(3.0)
    yield Property("the two arguments are one array", fn(x, x), "")


def _sum_then_scramble(x, rows, scale):
    out = float(np.sum(x) * scale[0])
    x *= -7                      # in place, after the answer is computed: right, but rude
    rows[0][:] = 9.0
    rows.append(np.ones(1))
    scale[0] = 0.0
    return out


def test_check_arrays_are_copied_and_changes_are_noted():
    r = check("test.copies", _sum_then_scramble, verbose=False)
    assert r, r.report()
    x, rows = SEEN["after"]
    assert np.array_equal(x, [1.0, -2.0, 3.0]) and len(rows) == 2 and np.all(rows[0] == 0)
    (note,) = r.notes
    assert note.startswith("your function changed its input `x`, `rows`, `scale` in place")
    assert "note: your function changed its input" in r.report()
    assert SEEN["shared"][0] == -35.0      # fn.shared passes the check's own array: the change is seen


def test_no_note_for_a_function_that_leaves_its_inputs_alone():
    r = check("test.copies", lambda x, rows, scale: float(np.sum(x) * scale[0]), verbose=False)
    assert r and r.notes == [] and "note:" not in r.report()


def test_an_array_passed_twice_stays_one_array():
    assert check("test.alias", lambda a, b: a is b, verbose=False)


def test_a_replaced_list_item_is_noted_without_error():
    def replaces(x, rows, scale):
        rows[0] = "not an array"      # a list item replaced by an object of another type
        return float(np.sum(x) * scale[0])
    r = check("test.copies", replaces, verbose=False)
    assert r and r.notes and "`rows`" in r.notes[0]
