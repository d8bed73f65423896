"""Online learning and stochastic optimisation: streaming linear models.

Every estimator here learns from a stream. ``partial_fit(X, y)`` consumes one chunk
(e.g. read from disk) and continues where the previous call stopped; ``fit(X, y)``
starts afresh and runs at most ``max_iter`` epochs (passes) over the data, shuffled
with ``random_state`` (SGD stops earlier when its training objective stops falling,
``tol``). They follow scikit-learn's conventions (``clone``, ``Pipeline``,
``cross_val_score``, ``feature_names_in_``).

=============================  =================================================
``SGDRegressor``               squared loss, per-sample or minibatch SGD (schedules, averaging, adagrad)
``SGDClassifier``              logistic (or perceptron) loss, binary or multinomial
``LMS``                        least mean squares / delta rule, eq. (8.87), one sample a step
``RecursiveLeastSquares``      recursive Bayes / Kalman filter for linear regression
``OnlineGradientDescent``      projected online gradient descent (8.78) with a regret tracker
``sgd_per_sample``             the readable reference of Algorithm 8.3 (a numpy loop)
``learning_rate_schedule``     the step sizes eta_k of every schedule
``best_fixed_parameter``       the best parameter in hindsight over an l2 ball (for regret)
=============================  =================================================

Each model is the textbook loop, one sample at a time, compiled with numba
(``linbook._kernels``; compiled once into the on-disk cache by ``make env``). The first
SGD fits of a process on small dense data run the same loop in numpy instead, so a
chapter's first cells do not wait for numba to load. ``SGDRegressor`` and ``SGDClassifier`` take dense
or sparse (CSR) ``X``. A step that makes the loss or the parameters non-finite raises
``linbook.base.DivergenceError`` naming the cure; the default steps (``eta0="auto"``)
are scaled by the largest squared row norm, so unscaled features do not make them
diverge.

Modules: ``schedules`` (step sizes), ``reference`` (Algorithm 8.3 in numpy), ``sgd``,
``lms``, ``rls``, ``ogd`` (regret tools).

Derived in: chapter "Online learning and stochastic optimisation".
"""

from .lms import LMS
from .ogd import OnlineGradientDescent, best_fixed_parameter
from .rls import RecursiveLeastSquares
from .schedules import learning_rate_schedule
from .reference import sgd_per_sample
from .sgd import SGDClassifier, SGDRegressor

__all__ = ["SGDRegressor", "SGDClassifier", "LMS", "RecursiveLeastSquares",
           "OnlineGradientDescent", "sgd_per_sample", "learning_rate_schedule",
           "best_fixed_parameter"]
