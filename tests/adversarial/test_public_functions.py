"""Adversarial inputs for the public functions that are not estimators (session 22's fuzzing):
``logistic_loss``, ``irls``, ``choose_solver``, ``perceptron_reference``, ``probit_kappa``,
``moderated_sigmoid``, ``bernoulli_mle``, ``gaussian_mle``.

Each bad input was accepted before (a wrong or NaN answer, or an error from inside numpy that
named nothing); now it is a clear error naming it. The valid inputs beside them keep their answers.
"""

from __future__ import annotations

import numpy as np
import pytest

from linbook.estimation import bernoulli_mle, gaussian_mle
from linbook.laplace import moderated_sigmoid, probit_kappa
from linbook.logistic import choose_solver, irls, logistic_loss
from linbook.perceptron import perceptron_reference

from .harness import assert_clear_error


def _data(seed=0, n=30, d=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = (X[:, 0] + rng.standard_normal(n) > 0).astype(float)
    return X, y, rng.standard_normal(d)


def _refused(call, corrupts):
    with pytest.raises((ValueError, TypeError)) as info:
        call()
    assert_clear_error(info.value, corrupts)


X, Y, W = _data()
LOSS_CASES = {   # name -> (kwargs changed from a valid call, the input it corrupts)
    "labels -1/+1": ({"y": 2 * Y - 1}, "y"),
    "label 2": ({"y": 2 * Y}, "y"),
    "NaN in X": ({"X": np.where(X > 1.5, np.nan, X)}, "X"),
    "inf in w": ({"w": np.array([np.inf, 0.0, 0.0])}, "w"),
    "lam = -1": ({"lam": -1.0}, "lam"),
    "lam = NaN": ({"lam": np.nan}, "lam"),
    "negative weights": ({"sample_weight": -np.ones(30)}, "sample_weight"),
    "NaN weights": ({"sample_weight": np.full(30, np.nan)}, "sample_weight"),
    "29 weights": ({"sample_weight": np.ones(29)}, "sample_weight"),
    "penalised of length 2": ({"lam": 1.0, "penalised": np.ones(2)}, "penalised"),
    "scores overflow": ({"X": X * 1e300, "w": W * 1e300}, ("X", "w")),
}


@pytest.mark.parametrize("case", sorted(LOSS_CASES))
def test_logistic_loss_refuses_bad_input(case):
    changed, corrupts = LOSS_CASES[case]
    args = {"w": W, "X": X, "y": Y, **changed}
    _refused(lambda: logistic_loss(args.pop("w"), args.pop("X"), args.pop("y"), **args), corrupts)


@pytest.mark.parametrize("scale", [1e-300, 1.0, 1e300])
def test_logistic_loss_keeps_valid_answers(scale):
    """The value against the sum written out (``log1p(exp(z))`` is exact enough at these margins)."""
    F, g, H = logistic_loss(W, X * scale, Y, 0.5, sample_weight=np.linspace(0.5, 2, 30))
    z = (X * scale) @ W
    want = np.sum(np.linspace(0.5, 2, 30) * (np.logaddexp(0, z) - Y * z)) + 0.25 * W @ W
    assert F == pytest.approx(want, rel=1e-12)
    assert np.all(np.isfinite(g)) and np.all(np.isfinite(H))


def test_irls_names_a_w0_of_the_wrong_length():
    _refused(lambda: irls(X, Y, w0=np.zeros(2)), "w0")


@pytest.mark.parametrize("args, corrupts", [
    ({"n": -5}, "n"), ({"d": -3}, "d"), ({"n_classes": 1}, "n_classes"), ({"n": 2.5}, "n"),
    ({"density": 2.0}, "density"), ({"density": np.nan}, "density"), ({"sparse": "yes"}, "sparse"),
])
def test_choose_solver_refuses_impossible_sizes(args, corrupts):
    call = {"solver": "auto", "n": 100, "d": 3, "n_classes": 2, "fit_intercept": True, "sparse": True, "density": 0.5}
    call.update(args)
    _refused(lambda: choose_solver(**call), corrupts)
    assert choose_solver("auto", 100, 3, 2, True, False) == "newton"


XP = np.random.default_rng(1).standard_normal((20, 2))
YP = np.where(XP[:, 0] > 0, 1.0, -1.0)
PERCEPTRON_CASES = {
    "labels 0/1": ({"y": (YP + 1) / 2}, "y"),
    "NaN in X": ({"X": np.where(XP > 1, np.nan, XP)}, "X"),
    "eta = 0": ({"eta": 0.0}, "eta"),
    "eta = NaN": ({"eta": np.nan}, "eta"),
    "max_iter = -1": ({"max_iter": -1}, "max_iter"),
    "max_iter = 1.5": ({"max_iter": 1.5}, "max_iter"),
    "intercept_scaling = NaN": ({"intercept_scaling": np.nan}, "intercept_scaling"),
    "order shorter than max_iter": ({"max_iter": 3, "order": [np.arange(20)]}, "order"),
    "order beyond the rows": ({"order": [np.arange(21)]}, "order"),
    "negative index in order": ({"order": [np.arange(-1, 19)]}, "order"),
}


@pytest.mark.parametrize("case", sorted(PERCEPTRON_CASES))
def test_perceptron_reference_refuses_bad_input(case):
    changed, corrupts = PERCEPTRON_CASES[case]
    args = {"X": XP, "y": YP, **changed}
    _refused(lambda: perceptron_reference(args.pop("X"), args.pop("y"), **args), corrupts)


def test_perceptron_reference_still_separates():
    w, b, _ = perceptron_reference(XP, YP, max_iter=100, order=[np.arange(20)] * 100)
    assert np.all(YP * (XP @ w + b) > 0)


@pytest.mark.parametrize("call, corrupts", [
    (lambda: probit_kappa("a"), "var"), (lambda: probit_kappa(1 + 1j), "var"),
    (lambda: moderated_sigmoid(np.nan, 1.0), "mu"), (lambda: moderated_sigmoid(np.array([0.0, np.nan]), 1.0), "mu"),
    (lambda: moderated_sigmoid("a", 1.0), "mu"), (lambda: moderated_sigmoid(1.0, 1 + 1j), "var"),
    (lambda: moderated_sigmoid(np.ones(3), np.ones(2)), ("mu", "var")),
])
def test_moderated_sigmoid_names_its_input(call, corrupts):
    _refused(call, corrupts)
    assert moderated_sigmoid(np.inf, 1.0) == 1.0 and moderated_sigmoid(-np.inf, 1e300) == 0.0


@pytest.mark.parametrize("call, corrupts", [
    (lambda: bernoulli_mle([]), "x"), (lambda: bernoulli_mle(["a", "b"]), "x"),
    (lambda: bernoulli_mle(np.array([1.0, 0.0]) + 0j), "x"),
    (lambda: gaussian_mle([["a"]]), "X"), (lambda: gaussian_mle(np.ones((3, 2)) + 1j), "X"),
    (lambda: gaussian_mle(np.ones((3, 2)), unbiased="no"), "unbiased"),
])
def test_estimates_name_their_input(call, corrupts):
    """A complex X lost its imaginary part (a wrong covariance, with only numpy's ComplexWarning)."""
    _refused(call, corrupts)


A_SPD = np.array([[4.0, 1.0], [1.0, 3.0]])
B_RHS = np.array([1.0, 2.0])


@pytest.mark.parametrize("a_scale, b_scale", [(1.0, 1e-300), (1.0, 1e300), (1e-300, 1e-300), (1e300, 1e300),
                                              (1e-200, 1.0), (1e200, 1.0)])
def test_conjugate_gradient_at_extreme_scales(a_scale, b_scale):
    """``b`` near 1e-300 was reported as ``b = 0`` (x = 0), near 1e300 as converged at x = 0: r'r over/underflowed."""
    from linbook.optim import conjugate_gradient
    res = conjugate_gradient(A_SPD * a_scale, B_RHS * b_scale)
    assert res.converged
    np.testing.assert_allclose(res.x, np.linalg.solve(A_SPD, B_RHS) * (b_scale / a_scale), rtol=1e-10)


@pytest.mark.parametrize("A, corrupts", [(np.array([[1.0, 2.0], [0.0, 1.0]]), "A"), (np.eye(3), "A"),
                                         (np.diag([1.0, -1.0]), "A")])
def test_conjugate_gradient_refuses_what_it_cannot_solve(A, corrupts):
    """A non-symmetric A gave a wrong x (converged or not) without a word."""
    from linbook.optim import conjugate_gradient
    _refused(lambda: conjugate_gradient(A, B_RHS), corrupts)


@pytest.mark.parametrize("scale", [1e-300, 1e-160, 1.0, 1e160, 1e300])
def test_bfgs_updates_keep_the_secant_condition_at_any_scale(scale):
    """A pair near 1e-300 (or 1e300) had ``s'y`` underflow (overflow) and the update was skipped."""
    from linbook.optim import bfgs_update_B, bfgs_update_H
    s, y = np.array([1.0, 0.0]) * scale, np.array([2.0, 0.5]) * scale
    np.testing.assert_allclose(bfgs_update_B(np.eye(2), s, y) @ s, y, rtol=1e-14, atol=1e-14 * scale)
    np.testing.assert_allclose(bfgs_update_H(np.eye(2), s, y) @ y, s, rtol=1e-14, atol=1e-14 * scale)


def test_lbfgs_two_loop_pairs_must_match():
    """``zip`` dropped the unmatched pairs: a different direction, silently."""
    from linbook.optim import lbfgs_two_loop
    _refused(lambda: lbfgs_two_loop(np.ones(2), [np.array([1.0, 0.0])], []), ("S", "Y"))


@pytest.mark.parametrize("scale", [1e-150, 1.0, 1e150])
def test_bfgs_minimises_a_scaled_quadratic(scale):
    """With the objective scaled by 1e-150 the first direction was NaN (``y'y`` underflowed) and bfgs refused."""
    from linbook.optim import bfgs
    A, b = np.diag([1.0, 10.0]) * scale, np.array([1.0, 1.0]) * scale
    res = bfgs(lambda x: 0.5 * x @ A @ x - b @ x, np.zeros(2), lambda x: A @ x - b)
    assert res.converged
    np.testing.assert_allclose(res.x, [1.0, 0.1], rtol=1e-5)


@pytest.mark.parametrize("call, corrupts", [
    (lambda d: d.make_separable(-1, 2, random_state=0), "n_samples"),
    (lambda d: d.make_separable(10, 0, random_state=0), "n_features"),
    (lambda d: d.make_separable(10, 2.5, random_state=0), "n_features"),
    (lambda d: d.make_separable(10, 2, labels=(1, 1), random_state=0), "labels"),
    (lambda d: d.make_regression(-1, 2, random_state=0), "n_samples"),
    (lambda d: d.make_regression(10, 2, coef=[1.0], random_state=0), "coef"),
])
def test_generators_name_impossible_sizes(call, corrupts):
    """Equal labels gave one class without a word; a negative count failed inside numpy."""
    from linbook import datasets
    _refused(lambda: call(datasets), corrupts)
    X, y, _ = datasets.make_separable(10, 2, random_state=0)
    assert X.shape == (10, 2) and set(np.unique(y)) <= {-1, 1}


@pytest.mark.parametrize("flag", ["no", 1.5, None])
def test_hat_diagonal_refuses_a_non_boolean_fit_intercept(flag):
    """``fit_intercept="no"`` was truthy: the hat matrix with an intercept, silently."""
    from linbook.selection import hat_diagonal
    _refused(lambda: hat_diagonal(np.eye(3, 2), fit_intercept=flag), ("fit_intercept",))
    np.testing.assert_allclose(hat_diagonal(np.eye(3, 2), fit_intercept=False), [1.0, 1.0, 0.0], atol=1e-12)


def test_sparse_logistic_fit_with_duplicate_stored_entries_chooses_a_solver():
    """CSR may store one cell twice (summed on use): the stored entries per cell reached 2, which
    ``choose_solver`` (since it checks ``density`` in [0, 1]) refused as an invalid parameter."""
    import scipy.sparse as sps
    from linbook import LogisticRegression
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] > 0).astype(int)
    # each cell stored twice, halves of its value, in (data, indices, indptr) form (a COO input would be summed)
    messy = sps.csr_matrix((np.repeat(X.ravel() / 2, 2), np.tile([0, 0, 1, 1], 40), np.arange(0, 161, 4)),
                           shape=(40, 2))
    assert messy.nnz == 160 and not messy.has_canonical_format
    fitted = LogisticRegression(lam=1.0).fit(messy, y)
    np.testing.assert_allclose(fitted.coef_, LogisticRegression(lam=1.0).fit(X, y).coef_, rtol=1e-8)
