"""``linbook.symbolic.check_gradient`` / ``check_hessian`` at every scale of ``x`` and ``f``.

Until session 24 the step ``eps = 1e-6`` and ``atol = 1e-7`` were absolute: a wrong gradient smaller than
``atol`` passed, and a right gradient at ``|x|`` near 1e9 failed (the step was below the rounding of ``x``).
The checker now walks steps relative to ``|x_j|``, ``max|x|`` and 1, judges each coordinate at the step of
smallest estimated error (Richardson gap + rounding) and allows ``rtol |fd| + 10 x error``: no absolute
floor. The cases below are a seeded subset of a fuzz over polynomial, exp/log, logistic-loss, softmax and
quadratic-form objectives at scales 1e-150 .. 1e150, each with a right gradient and wrong ones (factor 2,
sign, one coordinate off by 1 % or doubled, 1e-3 relative).
"""

import numpy as np
import pytest
from scipy.special import expit, logsumexp

from linbook.symbolic import DerivationError, check_fails, check_gradient, check_hessian


def test_a_wrong_tiny_gradient_is_caught():
    with pytest.raises(DerivationError):
        check_gradient(lambda x: 1e-9 * np.sum(x ** 2), lambda x: 4e-9 * x, np.array([1.0, -0.5]), "tiny, wrong")


def test_a_right_gradient_at_a_large_x_passes():
    check_gradient(lambda x: 0.5 * np.sum(x ** 2), lambda x: x, np.array([1e9, 3e9]), "large x, right")


def test_a_wrong_large_gradient_is_caught():
    with pytest.raises(DerivationError):
        check_gradient(lambda x: 1e12 * np.sum(x ** 2), lambda x: 2e12 * x * (1 + 1e-4), np.array([1.0, -0.5]),
                       "large, wrong by 1e-4")


def _objectives(d, sx, sf, seed):
    """(f, grad f, grad f's Jacobian or None) of five families; ``x`` lives on scale ``sx``, ``f`` on ``sf``."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(d, d))
    A = A @ A.T + d * np.eye(d)
    b, c, X, t = rng.normal(size=d), rng.normal(size=(3, d)), rng.normal(size=(12, d)), rng.choice([-1.0, 1.0], 12)
    W, onehot = rng.normal(size=(3, d)), np.eye(3)[1]

    def softmax(x):
        return np.exp(W @ x / sx - logsumexp(W @ x / sx))

    return {
        "polynomial": (lambda x: sf * np.sum(c[0] + c[1] * x + c[2] * x ** 2), lambda x: sf * (c[1] + 2 * c[2] * x),
                       lambda x: sf * np.diag(2 * c[2])),
        "quadratic form": (lambda x: sf * (0.5 * x @ A @ x - b @ x), lambda x: sf * (A @ x - b), lambda x: sf * A),
        "exp/log": (lambda x: sf * np.sum(np.exp(x / sx) + np.log1p((x / sx) ** 2)),
                    lambda x: sf / sx * (np.exp(x / sx) + 2 * (x / sx) / (1 + (x / sx) ** 2)), None),
        "logistic loss": (lambda x: sf * np.sum(np.logaddexp(0, -t * (X @ x) / sx)),
                          lambda x: sf / sx * X.T @ (-t * expit(-t * (X @ x) / sx)),
                          lambda x: sf / sx ** 2 * (X.T * (expit(X @ x / sx) * expit(-X @ x / sx))) @ X),
        "softmax": (lambda x: sf * (logsumexp(W @ x / sx) - (W @ x / sx)[1]),
                    lambda x: sf / sx * W.T @ (softmax(x) - onehot),
                    lambda x: sf / sx ** 2 * W.T @ (np.diag(softmax(x)) - np.outer(softmax(x), softmax(x))) @ W),
    }


SCALES = [(1e-150, 1.0), (1e-150, 1e-150), (1e-40, 1e80), (1e-9, 1e-9), (1.0, 1.0), (1e9, 1e-30),
          (1e60, 1e-60), (1e149, 1e150)]
FAMILIES = ["polynomial", "quadratic form", "exp/log", "logistic loss", "softmax"]


def _wrong(g, how):
    wrong = np.array(g, dtype=float)
    j = int(np.argmax(np.abs(wrong)))
    if how == "factor 2":
        return 2 * wrong
    if how == "sign":
        return -wrong
    if how == "one coordinate doubled":
        wrong[j] *= 2
    elif how == "one coordinate 1% off":
        wrong[j] *= 1.01
    return wrong


def _case(family, sx, sf, seed=0):
    f, g, _ = _objectives(3, sx, sf, seed)[family]
    if family in ("polynomial", "quadratic form"):   # raw in x: x's scale sets f's
        f, g, _ = _objectives(3, sx, 1.0, seed)[family]
    x = sx * np.random.default_rng(seed + 1).normal(size=3)
    return f, g, x


@pytest.mark.parametrize("sx, sf", SCALES, ids=[f"x~{sx:g},f~{sf:g}" for sx, sf in SCALES])
@pytest.mark.parametrize("family", FAMILIES)
def test_right_gradients_pass_and_wrong_ones_fail_at_every_scale(family, sx, sf):
    f, g, x = _case(family, sx, sf)
    with np.errstate(all="ignore"):
        assert np.isfinite(f(x)) and np.all(np.isfinite(g(x)))
    check_gradient(f, g, x, f"{family}, right")
    for how in ["factor 2", "sign", "one coordinate doubled", "one coordinate 1% off"]:
        wrong = _wrong(g(x), how)
        check_fails(check_gradient, f, lambda v: wrong, x, f"{family}, wrong by {how}")


@pytest.mark.parametrize("sx, sf", [(1e-120, 1e30), (1.0, 1.0), (1e100, 1e-50)], ids=["tiny x", "unit", "huge x"])
@pytest.mark.parametrize("family", ["quadratic form", "logistic loss", "softmax", "polynomial"])
def test_hessians_are_judged_by_the_same_rule(family, sx, sf):
    _, g, H = _objectives(3, sx, sf, 0)[family]
    x = sx * np.random.default_rng(1).normal(size=3)
    check_hessian(g, H, x, f"{family} Hessian")
    H0 = H(x)
    check_fails(check_hessian, g, lambda v: 2 * H0, x, "doubled")
    diag = H0 * (1 + 0.01 * np.eye(3))
    check_fails(check_hessian, g, lambda v: diag, x, "diagonal 1% off")


def test_a_loss_whose_terms_cancel_is_judged_at_its_own_resolution():
    """softmax loss as logsumexp(z) - z_k, nearly saturated: f ~ 4e-49 is computed from terms near 1e2 x 1e-42,
    so f(x + h) == f(x - h) exactly at small steps; those steps count as unresolved, not as a zero derivative."""
    f, g, _ = _objectives(2, 100.0, 1e-42, 3)["softmax"]
    x = np.array([-1.42e4, -5e-3])
    check_gradient(f, g, x, "saturated softmax")


def test_the_failure_names_the_worst_coordinate_both_values_and_the_tolerance():
    x = np.array([0.5, -1.0, 2.0])
    wrong = 2 * x
    wrong[1] = -wrong[1]
    with pytest.raises(DerivationError, match=r"worst at 1: analytic 2, finite difference -2, .* > tolerance "):
        check_gradient(lambda v: v @ v, lambda v: wrong, x, "one sign")


@pytest.mark.parametrize("f, g, what", [
    (lambda v: np.nan * v[0], lambda v: v, "f\\(x\\) is nan"),
    (lambda v: np.inf + v @ v, lambda v: 2 * v, "f\\(x\\) is inf"),
    (lambda v: v @ v, lambda v: np.array([2 * v[0], np.nan]), "the analytic gradient is nan at entries"),
], ids=["f nan", "f inf", "gradient nan"])
def test_a_non_finite_value_at_x_is_named(f, g, what):
    with pytest.raises(DerivationError, match="could not evaluate.*" + what):
        check_gradient(f, g, np.array([1.0, 2.0]))


def test_f_non_finite_at_every_step_is_named():
    f = lambda v: 0.0 if v[0] == 1.0 else np.nan   # noqa: E731 (finite at x only)
    with pytest.raises(DerivationError, match="could not evaluate the finite differences along coordinate 0"):
        check_gradient(f, lambda v: np.zeros(1), np.array([1.0]))


def test_bad_x_and_a_vector_f_are_refused_naming_them():
    with pytest.raises(ValueError, match="x must be finite"):
        check_gradient(lambda v: v @ v, lambda v: 2 * v, np.array([np.nan, 1.0]))
    with pytest.raises(ValueError, match="f must return one number"):
        check_gradient(lambda v: v, lambda v: np.ones(2), np.array([1.0, 2.0]))


def test_atol_still_works_with_a_future_warning_and_eps_fixes_the_step():
    x = np.array([1.0, -0.5])
    with pytest.warns(FutureWarning, match="atol"):
        check_gradient(lambda v: 1e-9 * v @ v, lambda v: 4e-9 * v, x, atol=1e-7)   # as before: the floor hides it
    with pytest.warns(FutureWarning, match="atol"):
        check_hessian(lambda v: 2 * v, lambda v: 2 * np.eye(2), x, atol=1e-6)
    check_gradient(lambda v: np.sum(np.sin(v)), np.cos, x, eps=1e-4)
    with pytest.raises(DerivationError):
        check_gradient(lambda v: np.sum(np.sin(v)), lambda v: 1.01 * np.cos(v), x, eps=1e-4)
