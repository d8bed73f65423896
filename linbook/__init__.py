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
logistic      LogisticRegression, ProbitRegression (chapter 4)
optim         gradient descent, Newton, IRLS, BFGS, L-BFGS, ... (chapter 5)
gaussian      multivariate-normal helpers (chapter 6)
discriminant  QDA, LDA, RDA, DiagonalLDA, NearestShrunkenCentroids, GaussianNaiveBayes, FisherLDA
laplace       Laplace approximation, BIC/AIC, BayesianLogisticRegression (chapter 7)
online        streaming estimators: SGD, LMS, recursive least squares (chapter 8)
selection     model and feature selection helpers (chapter 10)
exercises     self-checks of the chapters' exercises: linbook.exercises.check(key, my_function)
              (imported on first use, so `import linbook` stays fast)
"""

from . import numerics
from .numerics import log1pexp, log_sigmoid, log_softmax, logsumexp, sigmoid, softmax

# Chapter modules: each defines its own __all__; see the module list above.
from . import estimation, linear, perceptron, logistic, optim, gaussian, discriminant, laplace, online, selection  # noqa: E401,E402
from .estimation import *  # noqa: F401,F403,E402
from .linear import *  # noqa: F401,F403,E402
from .perceptron import *  # noqa: F401,F403,E402
from .logistic import *  # noqa: F401,F403,E402
from .gaussian import *  # noqa: F401,F403,E402
from .discriminant import *  # noqa: F401,F403,E402
from .laplace import *  # noqa: F401,F403,E402
from .selection import *  # noqa: F401,F403,E402
from .criteria import aic, bic  # noqa: F401,E402

__version__ = "0.1.0"

__all__ = (
    ["sigmoid", "log_sigmoid", "log1pexp", "logsumexp", "softmax", "log_softmax", "DerivationError",
     "datasets", "numerics", "plotting", "symbolic", "optim", "online", "exercises", "aic", "bic"]
    + estimation.__all__ + linear.__all__ + perceptron.__all__ + logistic.__all__
    + gaussian.__all__ + discriminant.__all__ + laplace.__all__ + selection.__all__
)


# Modules that pull in heavy libraries (sympy, matplotlib, the exercise registry) load on
# first use, so `import linbook` stays fast; `linbook.plotting.use_book_style()` and
# `linbook.exercises.check(...)` work after a plain `import linbook`.
_LAZY_MODULES = {"symbolic", "plotting", "datasets", "exercises", "book"}


def __getattr__(name):
    import importlib

    if name in _LAZY_MODULES:
        return importlib.import_module(f".{name}", __name__)
    if name == "DerivationError":
        return importlib.import_module(".symbolic", __name__).DerivationError
    raise AttributeError(f"module 'linbook' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | _LAZY_MODULES | {"DerivationError"})
