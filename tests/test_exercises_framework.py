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
