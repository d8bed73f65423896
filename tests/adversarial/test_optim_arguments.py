"""Every public function of ``linbook.optim`` with bad arguments: a right answer or a clear error naming the argument.

Before session 23 (fuzzing every argument of every function with a wrong type, NaN, a negative or fractional
count, a junk-returning callable): about 1,000 of 1,300 cases ended in numpy's or Python's message from deep inside
the method ("'float' object cannot be interpreted as an integer", "The truth value of an array ... is ambiguous",
"'numpy.ndarray' object is not callable"); ``levenberg_marquardt`` without ``jac`` said only "needs jac"; the line
searches returned ``t = 0`` silently for an ascent or zero direction, took a step from a NaN ``f`` or ``g``
(``wolfe_line_search`` with ``f = nan`` returned ``t = 0.5``), returned a NaN gradient as an accepted step, and
doubled ``t`` past NaN values. The arguments now go through one table (``linbook.optim.result._ARGUMENT_RULES``,
applied by ``checked_arguments``), and the line searches check their start and treat a non-finite trial as no
decrease.
"""

import inspect

import numpy as np
import pytest
from adversarial.harness import answer_or_clear_error, assert_clear_error

from linbook import optim

A = np.array([[3.0, 1.0], [1.0, 2.0]])
B = np.array([1.0, -1.0])
X0 = np.array([0.5, -0.3])


def f(x):
    return 0.5 * x @ A @ x - B @ x


def g(x):
    return A @ x - B


def fg(x):
    return f(x), g(x)


def hess(x):
    return A


def residual(x):
    return np.array([x[0] - 1, 10 * (x[1] - x[0] ** 2)])


def jac(x):
    return np.array([[1.0, 0.0], [-20 * x[0], 10.0]])


def _step(x):
    return float(np.max(np.abs(np.linalg.solve(A, g(x)))))


CALLS = {
    "gradient_descent": dict(fun=f, x0=X0, grad=g),
    "momentum": dict(fun=f, x0=X0, grad=g),
    "nonlinear_cg": dict(fun=f, x0=X0, grad=g),
    "bfgs": dict(fun=f, x0=X0, grad=g),
    "lbfgs": dict(fun=f, x0=X0, grad=g),
    "newton": dict(fun=f, x0=X0, grad=g, hess=hess),
    "truncated_newton": dict(fun=f, x0=X0, grad=g, hessp=lambda x, v: A @ v),
    "newton_cg": dict(fun=lambda x: (f(x), g(x), (lambda v: A @ v, None)), x0=X0),
    "levenberg_marquardt": dict(residual=residual, x0=X0, jac=jac),
    "conjugate_gradient": dict(A=A, b=B),
    "resume_until_step_is_short": dict(run=lambda x, gtol, max_iter: optim.bfgs(f, x, g, gtol=gtol, max_iter=max_iter),
                                       x0=X0, step_size=_step, step_tol=1e-8),
}

#: argument kinds and values that are wrong for them
KINDS = {
    "callable": (("fun", "residual", "run", "step_size", "jac", "hessp", "callback", "fun_grad"),
                 {"a number": 3.0, "a string": "f", "an array": np.ones(2)}),
    "count": (("max_iter", "cg_max_iter", "m"), {"fractional": 2.5, "negative": -1, "a string": "10", "NaN": np.nan}),
    "tolerance": (("gtol", "xtol", "ftol", "tol", "step_tol", "decrement_tol", "damping", "lam0", "lr"),
                  {"negative": -1.0, "NaN": np.nan, "infinite": np.inf, "a string": "1e-6", "an array": np.ones(2)}),
    "flag": (("line_search", "polish"), {"a string": "yes", "an array": np.ones(2)}),
    "gradient": (("grad",), {"a number": 3.0, "a string": "g", "False": False}),
}


def _cases():
    for name, kw in CALLS.items():
        params = inspect.signature(getattr(optim, name)).parameters
        for kind, (names, values) in KINDS.items():
            for arg in names:
                if arg in params:
                    for label, value in values.items():
                        yield pytest.param(name, arg, value, id=f"{name}-{arg}-{label}")


@pytest.mark.parametrize("name, arg, value", list(_cases()))
def test_a_wrong_argument_is_a_clear_error(name, arg, value):
    kw = dict(CALLS[name], **{arg: value})
    got = answer_or_clear_error(lambda: getattr(optim, name)(**kw), corrupts=arg)
    assert got is None, f"{name}({arg}={value!r}) returned {got}"


@pytest.mark.parametrize("name", [n for n in CALLS if "fun" in CALLS[n] and n != "newton_cg"])
@pytest.mark.parametrize("junk", ["a string", "a tuple too short"])
def test_a_callable_returning_junk_is_named(name, junk):
    kw = dict(CALLS[name])
    kw["fun"] = (lambda x: "zz") if junk == "a string" else (lambda x: (1.0,))
    if junk == "a tuple too short":
        kw["grad"] = True
        kw.pop("hess", None), kw.pop("hessp", None)
        if name in ("newton", "truncated_newton"):
            pytest.skip("needs hess / hessp beside grad=True")
    with pytest.raises((ValueError, TypeError)) as info:
        getattr(optim, name)(**kw)
    assert_clear_error(info.value, "fun")


def test_levenberg_marquardt_without_jac_says_how_to_get_one():
    with pytest.raises(ValueError) as info:
        optim.levenberg_marquardt(residual, X0)
    assert_clear_error(info.value, "jac")
    assert "approx_fprime" in str(info.value)


def test_levenberg_marquardt_with_a_jacobian_of_the_wrong_shape():
    with pytest.raises(ValueError) as info:
        optim.levenberg_marquardt(residual, X0, lambda x: np.eye(3))
    assert_clear_error(info.value, "jac")


def test_newton_with_a_hessian_matrix_instead_of_a_callable():
    with pytest.raises(ValueError) as info:
        optim.newton(f, X0, g, hess=A)
    assert_clear_error(info.value, "hess")


@pytest.mark.parametrize("fn", ["bfgs_update_B", "bfgs_update_H"])
@pytest.mark.parametrize("arg, value", [("s", np.ones(3)), ("y", 1.0), ("M", np.ones((2, 3))), ("M", np.full((2, 2), np.nan))])
def test_bfgs_updates_name_a_bad_argument(fn, arg, value):
    M = "B" if fn.endswith("B") else "H"
    kw = {M: np.eye(2), "s": np.array([0.1, 0.2]), "y": np.array([0.3, 0.5])}
    kw[M if arg == "M" else arg] = value
    with pytest.raises(ValueError) as info:
        getattr(optim, fn)(**kw)
    assert_clear_error(info.value, M if arg == "M" else arg)


@pytest.mark.parametrize("arg, value", [("S", 1.0), ("S", [np.ones(3)]), ("gamma", -1.0), ("gamma", "a"),
                                        ("gamma", lambda: 1.0), ("gamma", True), ("gamma", 1 + 0j)],
                         ids=["S number", "S wrong length", "gamma negative", "gamma string", "gamma callable",
                              "gamma bool", "gamma complex"])
def test_lbfgs_two_loop_names_a_bad_argument(arg, value):
    kw = {"g": np.array([1.0, 2.0]), "S": [np.array([0.1, 0.2])], "Y": [np.array([0.3, 0.5])], arg: value}
    with pytest.raises(ValueError) as info:
        optim.lbfgs_two_loop(**kw)
    assert_clear_error(info.value, arg)


@pytest.mark.parametrize("junk", [lambda x: (float(x @ x), 2 * x), lambda x: "g"], ids=["a tuple (f, g)", "a string"])
def test_truncated_newton_names_a_grad_returning_junk(junk):
    """The tuple raised numpy's "setting an array element with a sequence" (from np.iscomplexobj in real_array),
    and a string was blamed on fun ("the gradient (from fun)"): truncated_newton hands newton_cg one objective."""
    with pytest.raises((ValueError, TypeError)) as info:
        optim.truncated_newton(f, X0, junk, hessp=lambda x, v: A @ v)
    assert_clear_error(info.value, "grad")
    assert "from grad" in str(info.value)


def test_truncated_newton_names_a_hessp_of_the_wrong_shape():
    with pytest.raises(ValueError) as info:   # was numpy's matmul "mismatch in its core dimension"
        optim.truncated_newton(f, X0, g, hessp=lambda x, v: np.ones(x.size + 1))
    assert_clear_error(info.value, "hessp")


@pytest.mark.parametrize("product", [lambda v: "Av", lambda v: np.ones(v.size + 1), lambda v: 2.0, lambda v: None],
                         ids=["a string", "too long", "a number", "None"])
def test_conjugate_gradient_names_a_callable_A_returning_junk(product):
    """A callable A is allowed (v -> A v); its junk raised numpy's broadcasting, matmul or ufunc errors."""
    with pytest.raises((ValueError, TypeError)) as info:
        optim.conjugate_gradient(product, B)
    assert_clear_error(info.value, "A")
    assert "callable A" in str(info.value)


@pytest.mark.parametrize("B0", [np.ones((1, 2)), np.full((2, 2), np.inf), "a"])
def test_bfgs_names_a_bad_B0(B0):
    with pytest.raises((ValueError, TypeError)) as info:
        optim.bfgs(f, X0, g, B0=B0)
    assert_clear_error(info.value, "B0")


def test_resume_with_a_run_that_returns_no_result_and_a_zero_step_tol():
    with pytest.raises(TypeError) as info:
        optim.resume_until_step_is_short(lambda x, gtol, max_iter: x, X0, _step, step_tol=1e-8)
    assert_clear_error(info.value, "run")
    res = optim.resume_until_step_is_short(CALLS["resume_until_step_is_short"]["run"], X0, _step, step_tol=0.0,
                                           max_iter=50)
    assert np.all(np.isfinite(res.x))


# ------------------------------------------------------------------------------------------ line searches

SEARCHES = ["backtracking", "wolfe_line_search"]
X = np.array([1.0, 2.0])
F, G = float(X @ X), 2 * X


def quad(x):
    return float(x @ x), 2 * x


def _far(value, grad_only=False):
    """``x'x`` and ``2x``, but ``value`` (the objective, or the gradient) beyond ``|x_0| > 0.5``."""
    def fgv(x):
        bad = abs(x[0]) > 0.5
        return (float(x @ x) if (grad_only or not bad) else value), (np.full_like(x, value) if grad_only and bad else 2 * x)
    return fgv


@pytest.mark.parametrize("search", SEARCHES)
@pytest.mark.parametrize("case, corrupts, over", [
    ("ascent direction", "d", dict(d=G)),
    ("zero direction", "d", dict(d=np.zeros(2))),
    ("orthogonal direction", "d", dict(d=np.array([2.0, -1.0]))),
    ("NaN f", "f", dict(f=np.nan)),
    ("infinite f", "f", dict(f=np.inf)),
    ("NaN g", "g", dict(g=np.array([np.nan, 1.0]))),
    ("infinite g", "g", dict(g=np.array([np.inf, 1.0]))),
    ("NaN x", "x", dict(x=np.array([np.nan, 1.0]))),
    ("fg not callable", "fg", dict(fg=3)),
    ("fg returns a number", "fg", dict(fg=lambda x: float(x @ x))),
    ("fg returns a gradient of the wrong length", "fg", dict(fg=lambda x: (float(x @ x), np.ones(3)))),
    ("fg NaN everywhere", "fg", dict(fg=lambda x: (np.nan, 2 * x))),
    ("fg's gradient NaN everywhere", "fg", dict(fg=lambda x: (float(x @ x), np.full(2, np.nan)))),
])
def test_line_search_bad_start_is_a_clear_error(search, case, corrupts, over):
    kw = dict(fg=quad, x=X, f=F, g=G, d=-G)
    kw.update(over)
    with pytest.raises((ValueError, TypeError)) as info:
        getattr(optim, search)(kw["fg"], kw["x"], kw["f"], kw["g"], kw["d"])
    assert_clear_error(info.value, corrupts)


@pytest.mark.parametrize("search", SEARCHES)
@pytest.mark.parametrize("value, grad_only", [(np.nan, False), (np.inf, False), (np.nan, True), (np.inf, True)])
def test_line_search_backs_away_from_non_finite_values(search, value, grad_only):
    """NaN or inf beyond |x_0| > 0.5: the step accepted is inside, with a finite objective and gradient."""
    x, d = np.array([0.4, 0.0]), np.array([-10.0, 0.0])
    t, f_new, g_new, _ = getattr(optim, search)(_far(value, grad_only), x, 0.16, 2 * x, d)
    assert 0 < t and abs(x[0] + t * d[0]) <= 0.5
    assert np.isfinite(f_new) and np.all(np.isfinite(g_new)) and f_new < 0.16


@pytest.mark.parametrize("search", SEARCHES)
def test_line_search_at_a_stationary_point_takes_no_step(search):
    t, f_new, g_new, n = getattr(optim, search)(quad, np.zeros(2), 0.0, np.zeros(2), np.array([1.0, 0.0]))
    assert t == 0.0 and f_new == 0.0 and n == 0
