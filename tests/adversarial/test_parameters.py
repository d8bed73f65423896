"""Every public function validates its parameters: a clear error naming the argument, never a
raw numpy error, a ComplexWarning, or a result computed from a mangled argument.

Generators: out-of-range constants of the line searches; complex and sparse arrays handed
to every optimiser, irls and the line searches (a list must work like an array);
non-symmetric, complex covariances and non-triangular Cholesky factors for the Gaussian
helpers; 0-d and 3-d arrays (and lists) handed to the public helpers.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from linbook import mahalanobis, mvn_cholesky, mvn_logpdf
from linbook.optim import (backtracking, bfgs, conjugate_gradient, gradient_descent, irls, lbfgs,
                           levenberg_marquardt, momentum, newton, nonlinear_cg, truncated_newton,
                           wolfe_line_search)

from .harness import assert_clear_error


def _quadratic(x):
    x = np.asarray(x)
    return float(0.5 * x @ x), x.copy()


def _with_hess(x):
    f, g = _quadratic(x)
    return f, g, np.eye(x.size)


X0 = np.array([1.0, -2.0])


def _refused(call, name):
    """``call`` raises a clear ValueError/TypeError (naming ``name``) and warns nothing."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises((ValueError, TypeError)) as info:
            call()
    assert_clear_error(info.value, name)


# ------------------------------------------------------------------ line searches

SEARCHES = {"backtracking": backtracking, "wolfe": wolfe_line_search}
BAD_CONSTANTS = {
    "backtracking": {"shrink": [0.0, -0.5, 1.0, 1.5, np.nan], "t0": [0.0, -1.0, np.inf, np.nan],
                     "c1": [0.0, 1.0, -0.1], "max_halvings": [0, 2.5]},
    "wolfe": {"t0": [0.0, -1.0, np.inf], "c1": [0.0, 1.0], "c2": [1e-5, 1.0, 2.0], "max_eval": [0, 1.5]},
}


def _search_cases():
    for search, table in BAD_CONSTANTS.items():
        for name, values in table.items():
            for v in values:
                yield pytest.param(search, name, v, id=f"{search}-{name}={v}")


@pytest.mark.parametrize("search, name, value", list(_search_cases()))
def test_line_search_constants_out_of_range_are_refused(search, name, value):
    f, g = _quadratic(X0)
    _refused(lambda: SEARCHES[search](_quadratic, X0, f, g, -g, **{name: value}), name)


@pytest.mark.parametrize("search", list(SEARCHES))
def test_line_search_takes_a_list_as_direction(search):
    f, g = _quadratic(X0)
    as_list = SEARCHES[search](_quadratic, list(X0), f, list(g), list(-g))
    as_array = SEARCHES[search](_quadratic, X0, f, g, -g)
    assert as_list[0] == as_array[0] > 0
    np.testing.assert_array_equal(as_list[2], as_array[2])


@pytest.mark.parametrize("bad", ["complex", "sparse", "wrong length", "nan", "strings"])
@pytest.mark.parametrize("search", list(SEARCHES))
def test_line_search_direction_must_be_a_real_vector(search, bad):
    f, g = _quadratic(X0)
    d = {"complex": -g + 1j, "sparse": sp.csr_matrix(-g), "wrong length": np.r_[-g, 1.0],
         "nan": np.array([np.nan, 1.0]), "strings": np.array(["a", "b"])}[bad]
    _refused(lambda: SEARCHES[search](_quadratic, X0, f, g, d), "d")


# ------------------------------------------------------------------ optimisers and irls

OPTIMISERS = {
    "gradient_descent": lambda x0: gradient_descent(_quadratic, x0, grad=True),
    "momentum": lambda x0: momentum(_quadratic, x0, grad=True),
    "nonlinear_cg": lambda x0: nonlinear_cg(_quadratic, x0, grad=True),
    "newton": lambda x0: newton(_with_hess, x0, grad=True, hess=True),
    "truncated_newton": lambda x0: truncated_newton(_quadratic, x0, grad=True, hessp=lambda x, v: v),
    "bfgs": lambda x0: bfgs(_quadratic, x0, grad=True),
    "lbfgs": lambda x0: lbfgs(_quadratic, x0, grad=True),
    "levenberg_marquardt": lambda x0: levenberg_marquardt(lambda x: x - 1.0, x0, jac=lambda x: np.eye(x.size)),
    "conjugate_gradient": lambda x0: conjugate_gradient(np.eye(2), np.ones(2), x0),
}


@pytest.mark.parametrize("bad", ["complex", "sparse"])
@pytest.mark.parametrize("method", list(OPTIMISERS))
def test_optimisers_refuse_complex_or_sparse_start(method, bad):
    x0 = X0 + 1j if bad == "complex" else sp.csr_matrix(X0)
    _refused(lambda: OPTIMISERS[method](x0), "x0")


@pytest.mark.parametrize("method", ["gradient_descent", "bfgs", "lbfgs", "newton"])
def test_optimisers_refuse_a_complex_gradient(method):
    def complex_gradient(x):
        return float(0.5 * x @ x), x + 1j

    call = {"gradient_descent": lambda: gradient_descent(complex_gradient, X0, grad=True),
            "bfgs": lambda: bfgs(complex_gradient, X0, grad=True),
            "lbfgs": lambda: lbfgs(complex_gradient, X0, grad=True),
            "newton": lambda: newton(lambda x: (*complex_gradient(x), np.eye(2)), X0, grad=True, hess=True)}
    _refused(call[method], "gradient")


def test_levenberg_marquardt_refuses_sparse_or_complex_jacobian():
    _refused(lambda: levenberg_marquardt(lambda x: x - 1.0, X0, jac=lambda x: sp.eye(2, format="csr")), "Jacobian")
    _refused(lambda: levenberg_marquardt(lambda x: x - 1.0 + 0j, X0, jac=lambda x: np.eye(2)), "residual")


def test_conjugate_gradient_refuses_complex_system_and_keeps_sparse_A():
    _refused(lambda: conjugate_gradient(np.eye(2) * (1 + 1j), np.ones(2)), "A")
    _refused(lambda: conjugate_gradient(np.eye(2), np.ones(2) + 1j), "b")
    np.testing.assert_allclose(conjugate_gradient(sp.eye(2, format="csr") * 2.0, np.ones(2)).x, [0.5, 0.5])


def _logistic_data():
    rng = np.random.default_rng(0)
    X = np.c_[np.ones(40), rng.standard_normal((40, 2))]
    return X, (rng.random(40) < 0.5).astype(float)


@pytest.mark.parametrize("bad", ["sparse X", "complex X", "complex y", "complex w0", "sparse y"])
def test_irls_refuses_sparse_or_complex_input(bad):
    X, y = _logistic_data()
    args = {"sparse X": (sp.csr_matrix(X), y, None), "complex X": (X + 0j, y, None),
            "complex y": (X, y + 0j, None), "complex w0": (X, y, np.zeros(3) + 1j),
            "sparse y": (X, sp.csr_matrix(y), None)}[bad]
    _refused(lambda: irls(*args), bad.split()[-1])


# ------------------------------------------------------------------ Gaussian helpers

def test_non_symmetric_covariance_is_refused():
    cov = np.array([[2.0, 0.5], [-0.5, 1.0]])        # lower triangle of a PD matrix, upper of another
    for call in (lambda: mvn_logpdf(np.zeros((3, 2)), np.zeros(2), cov), lambda: mvn_cholesky(cov),
                 lambda: mahalanobis(np.zeros((3, 2)), np.zeros(2), cov)):
        _refused(call, "symmetric")


def test_rounding_level_asymmetry_is_accepted():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((4, 4))
    cov = A @ A.T + np.eye(4)
    cov[0, 1] *= 1 + 1e-15
    assert np.isfinite(mvn_logpdf(np.zeros((2, 4)), np.zeros(4), cov)).all()


@pytest.mark.parametrize("bad", ["complex", "sparse"])
def test_complex_or_sparse_covariance_is_refused(bad):
    cov = np.eye(2) + 0.1j if bad == "complex" else sp.eye(2, format="csr")
    _refused(lambda: mvn_logpdf(np.zeros((3, 2)), np.zeros(2), cov), "covariance")


def test_cholesky_factor_must_be_lower_triangular():
    chol = np.array([[1.0, 0.5], [0.0, 1.0]])
    _refused(lambda: mvn_logpdf(np.zeros((3, 2)), np.zeros(2), chol=chol), "chol")


# ------------------------------------------------------------------ estimators' hyperparameters

def _estimator_cases():
    import linbook
    import linbook.online as online
    from linbook.selection import loocv_ridge
    from linbook.online import best_fixed_parameter
    cases = {
        "Perceptron-eta": (lambda: linbook.Perceptron(eta=-1.0), "eta"),
        "Perceptron-form": (lambda: linbook.Perceptron(form="kernel"), "form"),
        "Perceptron-max_iter": (lambda: linbook.Perceptron(max_iter=0), "max_iter"),
        "Lasso-lam": (lambda: linbook.Lasso(lam=np.nan), "lam"),
        "Lasso-tol": (lambda: linbook.Lasso(tol=2.0), "tol"),
        "Ridge-lam": (lambda: linbook.Ridge(lam=-1.0), "lam"),
        "LinearRegression-fit_intercept": (lambda: linbook.LinearRegression(fit_intercept="yes"), "fit_intercept"),
        "SGDRegressor-lam": (lambda: online.SGDRegressor(lam=-1.0), "lam"),
        "SGDRegressor-kappa": (lambda: online.SGDRegressor(learning_rate="robbins_monro", kappa=0.5), "kappa"),
        "SGDClassifier-loss": (lambda: online.SGDClassifier(loss="hinge"), "loss"),
        "LMS-learning_rate": (lambda: online.LMS(learning_rate="optimal"), "learning_rate"),
        "OnlineGradientDescent-radius": (lambda: online.OnlineGradientDescent(radius=0.0), "radius"),
        "RecursiveLeastSquares-noise_variance": (lambda: online.RecursiveLeastSquares(noise_variance=0.0),
                                                 "noise_variance"),
        "GaussianNaiveBayes-var_smoothing": (lambda: linbook.GaussianNaiveBayes(var_smoothing=-1.0), "var_smoothing"),
        "RDA-shrinkage": (lambda: linbook.RDA(shrinkage=1.5), "shrinkage"),
        "NearestShrunkenCentroids-shrink_threshold": (
            lambda: linbook.NearestShrunkenCentroids(shrink_threshold=-1.0), "shrink_threshold"),
        "FisherLDA-n_components": (lambda: linbook.FisherLDA(n_components=0), "n_components"),
    }
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((30, 3)), np.tile([0.0, 1.0], 15)
    for key, (make, name) in cases.items():
        yield pytest.param(lambda make=make: make().fit(X, y), name, id=key)
    yield pytest.param(lambda: loocv_ridge(X, y, lam=-1.0), "lam", id="loocv_ridge-lam")
    yield pytest.param(lambda: best_fixed_parameter(X, y, loss="hinge"), "loss", id="best_fixed_parameter-loss")


@pytest.mark.parametrize("call, name", list(_estimator_cases()))
def test_hyperparameters_out_of_range_get_the_one_wording(call, name):
    """One scheme (base.check_params / check_param_values): scikit-learn's sentence naming the
    parameter, then "Set <name> to <what is allowed>"."""
    with pytest.raises(ValueError) as info:
        call()
    assert_clear_error(info.value, name)
    assert f"The '{name}' parameter of " in str(info.value) and f"Set {name} to " in str(info.value)


def _shape_cases():
    import linbook
    from linbook.online import best_fixed_parameter, sgd_per_sample

    X, y, C, mu = np.ones((5, 3)), np.array([0.0, 1.0, 0.0, 1.0, 1.0]), np.eye(3), np.zeros(3)
    X3 = X[:, :, None]
    return {
        "gaussian_mle X 3-d": (lambda: linbook.gaussian_mle(X3), "X"),
        "mvn_mle X 3-d": (lambda: linbook.mvn_mle(X3), "X"),
        "mvn_log_likelihood X 3-d": (lambda: linbook.mvn_log_likelihood(X3, mu, C), "X"),
        "mvn_log_likelihood mean 3-d": (lambda: linbook.mvn_log_likelihood(X, mu[:, None, None], C), "mean"),
        "bernoulli_mle x 3-d": (lambda: linbook.bernoulli_mle(y[:, None, None]), "x"),
        "kl_divergence p 0-d": (lambda: linbook.kl_divergence(1.0, np.ones(3) / 3), "p"),
        "mahalanobis X 3-d": (lambda: mahalanobis(X3, mu, C), "X"),
        "mahalanobis cov 3-d": (lambda: mahalanobis(X, mu, C[:, :, None]), "cov"),
        "mvn_cholesky cov 3-d": (lambda: mvn_cholesky(C[:, :, None]), "cov"),
        "mvn_logpdf X 3-d": (lambda: mvn_logpdf(X3, mu, C), "X"),
        "logistic_loss X 3-d": (lambda: linbook.logistic_loss(mu, X3, y), "X"),
        "logistic_loss y 0-d": (lambda: linbook.logistic_loss(mu, X, 1.0), "y"),
        "perceptron_reference X 3-d": (lambda: linbook.perceptron_reference(X3, 2 * y - 1), "X"),
        "perceptron_reference X 0-d": (lambda: linbook.perceptron_reference(1.0, 2 * y - 1), "X"),
        "sgd_per_sample X 0-d": (lambda: sgd_per_sample(1.0, y), "X"),
        "sgd_per_sample y 3-d": (lambda: sgd_per_sample(X, y[:, None, None]), "y"),
        "best_fixed_parameter X 3-d": (lambda: best_fixed_parameter(X3, y), "X"),
        "best_fixed_parameter y 3-d": (lambda: best_fixed_parameter(X, y[:, None, None]), "y"),
        "mutual_information_scores X 3-d": (lambda: linbook.mutual_information_scores(X3, y), "X"),
    }


@pytest.mark.parametrize("case", sorted(_shape_cases()))
def test_wrong_dimensions_are_named_with_what_to_do(case):
    """0-d and 3-d arrays handed to the public helpers: an error naming the argument and saying what to do.
    Before, most named it but advised nothing ("X must be 2-D; got shape (5, 3, 1)"), and logistic_loss,
    perceptron_reference and sgd_per_sample failed inside numpy (matmul, IndexError)."""
    call, name = _shape_cases()[case]
    _refused(call, name)


def test_logistic_loss_takes_a_list_X():
    """A nested list is an array to every other public function; logistic_loss raised AttributeError on ``X.T``."""
    import linbook

    rng = np.random.default_rng(0)
    X, w = rng.standard_normal((6, 2)), np.array([0.5, -1.0])
    y = np.array([0.0, 1.0, 1.0, 0.0, 1.0, 0.0])
    want = linbook.logistic_loss(w, X, y, 0.5)
    got = linbook.logistic_loss(w.tolist(), X.tolist(), y.tolist(), 0.5)
    assert got[0] == want[0]
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(got[2], want[2])


@pytest.mark.parametrize("intercept_scaling", [1e155, 1e300])
def test_perceptron_intercept_scaling_whose_square_overflows_is_a_clear_error(intercept_scaling):
    """``b`` moves by ``eta c^2 y_i``: with ``c^2`` beyond float64 the fit raised a raw ``OverflowError``."""
    import linbook

    X = np.random.default_rng(0).standard_normal((20, 3))
    with pytest.raises(ValueError, match="intercept_scaling") as err:
        linbook.Perceptron(intercept_scaling=intercept_scaling).fit(X, (X[:, 0] > 0).astype(int))
    assert_clear_error(err.value, "intercept_scaling")
