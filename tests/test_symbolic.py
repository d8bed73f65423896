"""Each checker passes a right step and raises DerivationError on a wrong one."""

import numpy as np
import pytest
import sympy as sp

from linbook.symbolic import (DerivationError, check_close, check_equal, check_gradient, check_hessian,
                              check_integral, check_numeric, check_positive_definite, check_true, grad,
                              grad_matrix, hessian, matrix_symbols, vector_symbols)

x, y = sp.symbols("x y", real=True)
s = sp.Symbol("s", positive=True)


def test_check_equal_symbolic_pass_and_fail():
    r = check_equal(sp.diff(sp.log(1 + sp.exp(x)), x), 1 / (1 + sp.exp(-x)), "softplus'")
    assert r.method == "symbolic" and "softplus'" in repr(r)
    with pytest.raises(DerivationError, match="left-hand side"):
        check_equal(sp.diff(sp.log(1 + sp.exp(x)), x), 1 / (1 + sp.exp(x)), "wrong sign")


def test_check_equal_wrong_factor_fails():
    # The classic wrong factor: d/dw (w^2/(2 s)) is w/s, not 2w/s.
    with pytest.raises(DerivationError):
        check_equal(sp.diff(x**2 / (2 * s), x), 2 * x / s, "factor")


def test_check_equal_matrices():
    w = vector_symbols("w", 3)
    A = matrix_symbols("A", 3, 3)
    f = (w.T * A * w)[0]
    check_equal(grad(f, w), (A + A.T) * w, "d/dw w'Aw")
    with pytest.raises(DerivationError):
        check_equal(grad(f, w), 2 * A * w, "only for symmetric A")
    with pytest.raises(DerivationError, match="shapes differ"):
        check_equal(grad(f, w), A, "shape")
    check_equal(hessian(f, w), A + A.T, "Hessian")


def test_matrix_calculus_identity_410():
    A = matrix_symbols("a", 2, 2)
    check_equal(grad_matrix(sp.log(A.det()), A), A.inv().T, "d log|A| / dA = A^-T", method="auto")
    B = matrix_symbols("b", 2, 2)
    check_equal(grad_matrix((A * B).trace(), A), B.T, "d tr(AB)/dA = B^T")
    with pytest.raises(DerivationError):
        check_equal(grad_matrix((A * B).trace(), A), B, "missing transpose")


def test_numeric_fallback_and_symbolic_only():
    # An identity simplify does not settle is accepted numerically, or refused with method="symbolic".
    lhs = sp.gamma(x + 1) - x * sp.gamma(x)
    r = check_equal(lhs, 0, "gamma recursion", method="numeric")
    assert r.method == "numeric"
    with pytest.raises(DerivationError):
        check_equal(sp.gamma(x + 1), sp.gamma(x), "wrong recursion", method="numeric")


def test_check_numeric_integral_gradient_hessian():
    check_numeric(np.sin, lambda t: np.cos(t - np.pi / 2), "sin = shifted cos")
    with pytest.raises(DerivationError):
        check_numeric(np.sin, np.cos, "sin != cos")
    check_integral(lambda t: np.exp(-t**2 / 2), np.sqrt(2 * np.pi), "Gaussian integral")
    with pytest.raises(DerivationError):
        check_integral(lambda t: np.exp(-t**2 / 2), np.sqrt(np.pi), "wrong normaliser")
    check_integral(lambda a, b: np.exp(-(a**2 + b**2) / 2), 2 * np.pi, "2-D", limits=((-10, 10), (-10, 10)))
    A = np.array([[3.0, 1.0], [1.0, 2.0]])
    f = lambda w: 0.5 * w @ A @ w
    check_gradient(f, lambda w: A @ w, np.array([0.3, -0.7]))
    with pytest.raises(DerivationError):
        check_gradient(f, lambda w: 2 * A @ w, np.array([0.3, -0.7]))
    check_hessian(lambda w: A @ w, lambda w: A, np.array([0.1, 0.2]))
    with pytest.raises(DerivationError):
        check_hessian(lambda w: A @ w, lambda w: A.T @ A, np.array([0.1, 0.2]))


def test_close_true_pd():
    check_close([1.0, 2.0], [1.0, 2.0 + 1e-12])
    with pytest.raises(DerivationError):
        check_close([1.0, 2.0], [1.0, 2.1])
    check_true(3 > 2, "order")
    with pytest.raises(DerivationError):
        check_true(np.array([True, False]), "all")
    check_positive_definite(np.eye(3))
    with pytest.raises(DerivationError, match="smallest eigenvalue"):
        check_positive_definite(np.diag([1.0, -1.0]))


def test_deliberately_wrong_derivation_step_fails():
    """The book's promise: a wrong step in a chapter-style derivation raises."""
    mu, xs = sp.Symbol("mu", real=True), sp.symbols("x0:4", real=True)
    loglik = -sum((xi - mu) ** 2 for xi in xs) / 2
    mle = sp.solve(sp.diff(loglik, mu), mu)[0]
    check_equal(mle, sum(xs) / 4, "Gaussian MLE of the mean")
    with pytest.raises(DerivationError):
        check_equal(mle, sum(xs) / 3, "off-by-one denominator")


def test_a_passing_check_prints_its_line_once(capsys):
    """Checks print themselves: a cell holds `check_true(...)` with no print, and the line
    appears once, also when the check is the cell's last expression (IPython display)."""
    r = check_true(1 < 2, "one is less than two")
    assert capsys.readouterr().out == "ok  one is less than two  [claim]\n"
    r._ipython_display_()                       # what a notebook does with a last expression
    assert capsys.readouterr().out == ""
    from linbook.symbolic import Check
    Check("built by hand", "claim")._ipython_display_()   # never printed: shown by display
    assert capsys.readouterr().out == "ok  built by hand  [claim]\n"
    with pytest.raises(DerivationError):
        check_true(2 < 1, "false claim")
    assert capsys.readouterr().out == ""        # a failed check prints no "ok" line


def test_check_fails_prints_only_its_own_line(capsys):
    from linbook.symbolic import check_fails
    check_fails(check_true, 2 < 1, "a false claim is refuted")
    assert capsys.readouterr().out == "ok  a false claim is refuted  [fails as expected; check_true]\n"
    with pytest.raises(DerivationError, match="expected check_true to fail"):
        check_fails(check_true, 1 < 2, "a true claim")
    assert "ok  a true claim" not in capsys.readouterr().out   # the inner pass is not reported
    check_true(True, "printing is back on after check_fails")
    assert capsys.readouterr().out.startswith("ok  printing is back on")


def test_a_check_as_the_last_expression_adds_no_result(capsys):
    """As a notebook cell's last expression, a printed check formats to nothing, so ipykernel
    sends no execute_result (its display hook sends one only for a non-empty format dict)."""
    IPython = pytest.importorskip("IPython")
    from IPython.core.formatters import DisplayFormatter

    r = check_true(True, "last")
    data, _ = DisplayFormatter().format(r)
    assert data == {} and capsys.readouterr().out == "ok  last  [claim]\n"


def test_check_close_prints_the_tolerance_that_decided(capsys):
    """The printed result names the cell's own ``atol`` when it set one (a looser ``atol`` may be what let
    the check pass); with the default it names ``rtol`` alone, as before."""
    from linbook.symbolic import check_close

    check_close(0.004, 0.0, "a Monte Carlo mean near 0", atol=5e-3)
    check_close(1.0, 1.0 + 1e-12, "an identity")
    printed = capsys.readouterr().out
    assert "rtol 1e-08, atol 0.005" in printed
    assert "an identity" in printed and "atol" not in printed.split("an identity")[1]
