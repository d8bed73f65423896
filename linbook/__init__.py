"""linbook: linear models for machine learning, as derived and checked in the linbook book.

Estimators follow scikit-learn conventions (``fit`` returns ``self``, learned
attributes end in ``_``, ``random_state`` for anything random) and work with
``clone``, ``Pipeline`` and ``cross_val_score``. Every public function's docstring
says where in the book it is derived ("Derived in: ...").

Modules
-------
numerics      stable sigmoid / log-sigmoid / softplus / logsumexp / softmax
symbolic      checked derivation steps (sympy, finite differences, quadrature)
datasets      seeded data generators and the small real data sets
plotting      shared figure helpers
estimation    MLE / MAP / Bayesian estimation of simple models (chapter 1)
linear        LinearRegression, Ridge, Lasso, LeastAbsoluteDeviation (chapter 2)
perceptron    Perceptron (primal, dual, pocket) (chapter 3)
logistic      LogisticRegression, ProbitRegression, irls (chapter 4)
optim         gradient descent, Newton, IRLS, BFGS, L-BFGS, ... (chapter 5)
gaussian      multivariate-normal helpers (chapter 6)
discriminant  QDA, LDA, RDA, DiagonalLDA, NearestShrunkenCentroids, GaussianNaiveBayes, FisherLDA
laplace       Laplace approximation, BIC/AIC, BayesianLogisticRegression (chapter 7)
online        streaming estimators: SGD, LMS, recursive least squares (chapter 8)
selection     model and feature selection helpers (chapter 10)
exercises     self-checks of the chapters' exercises: linbook.exercises.check(key, my_function)

Every module, and every name above, is imported on first use, so ``import linbook`` itself
loads numpy only (scikit-learn, scipy and numba load with the first estimator).
"""

from . import _imports

# Every submodule (numerics first) loads with Python's cyclic collector paused, and its objects go to the
# collector's oldest generation unwalked: ``linbook._imports``, 0.2 s of a first use.
_imports.install_finder()

from . import numerics  # noqa: E402
from .numerics import log1pexp, log_sigmoid, log_softmax, logsumexp, sigmoid, softmax  # noqa: E402

# Every chapter module loads on first use (PEP 562 ``__getattr__``): ``import linbook`` costs
# numpy only, and ``linbook.LogisticRegression`` imports ``linbook.logistic`` (and with it
# scikit-learn, whose ``BaseEstimator`` the estimators subclass) when it is first touched.
# ``_EXPORTS`` maps each top-level name to its module; tests/test_api_snapshot.py checks
# that it equals the modules' ``__all__``.
_EXPORTS = {
    "estimation": ["bernoulli_mle", "gaussian_mle", "mvn_mle", "mvn_log_likelihood", "BetaBernoulli",
                   "ridge_lambda_from_prior", "lasso_lambda_from_prior"],
    "linear": ["LinearRegression", "Ridge", "Lasso", "LeastAbsoluteDeviation"],
    "perceptron": ["Perceptron", "perceptron_reference"],
    "logistic": ["LogisticRegression", "ProbitRegression", "irls", "logistic_loss", "choose_solver",
                 "SeparableDataWarning"],
    "gaussian": ["mvn_cholesky", "mahalanobis", "mvn_logpdf", "mvn_sample", "mvn_entropy"],
    "discriminant": ["QDA", "LDA", "RDA", "DiagonalLDA", "GaussianNaiveBayes", "NearestShrunkenCentroids",
                     "FisherLDA"],
    "laplace": ["LaplaceResult", "laplace_approximation", "probit_kappa", "moderated_sigmoid",
                "BayesianLogisticRegression"],
    "selection": ["hat_diagonal", "loocv_least_squares", "loocv_ridge", "SearchResult", "forward_selection",
                  "backward_selection", "mutual_information", "mutual_information_scores", "kl_divergence"],
    "criteria": ["aic", "bic"],
    "symbolic": ["DerivationError"],
}
_NAME_TO_MODULE = {name: module for module, names in _EXPORTS.items() for name in names}
_SUBMODULES = {"numerics", "symbolic", "plotting", "datasets", "exercises", "book", "estimation", "linear",
               "perceptron", "logistic", "optim", "gaussian", "discriminant", "laplace", "online", "selection",
               "criteria", "base"}

__all__ = (
    ["sigmoid", "log_sigmoid", "log1pexp", "logsumexp", "softmax", "log_softmax", "datasets", "numerics",
     "plotting", "symbolic", "optim", "online", "exercises"]
    + [name for module, names in _EXPORTS.items() for name in names]
)


def _installed_version():
    """The version in the installed package's metadata, i.e. pyproject.toml's (its one source)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("linbook")
    except PackageNotFoundError:  # imported from a source tree that was never pip-installed
        return "0+unknown"


def __getattr__(name):
    import importlib

    if name == "__version__":   # on first use: `import linbook` loads numpy only, not importlib.metadata
        globals()[name] = _installed_version()
        return globals()[name]
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    if name in _NAME_TO_MODULE:
        value = getattr(importlib.import_module(f".{_NAME_TO_MODULE[name]}", __name__), name)
        globals()[name] = value          # later lookups skip __getattr__
        return value
    raise AttributeError(f"module 'linbook' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | _SUBMODULES | set(_NAME_TO_MODULE) | {"__version__"})
