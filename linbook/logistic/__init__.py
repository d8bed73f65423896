"""Logistic (binary and multinomial) and probit regression, fitted by Newton/IRLS or L-BFGS.

Objective (all solvers, all models here)::

    minimise  NLL(theta) + (lam / 2) * ||W||^2            (intercepts unpenalised)

where ``NLL = -sum_i a_i log p(y_i | x_i)`` is *summed* over samples (``a_i`` sample
weights, 1 by default), not averaged. With ``lam = 1 / C`` this is exactly
scikit-learn's ``LogisticRegression(C=C)``; with ``lam = 0`` it is the maximum-likelihood
fit of statsmodels ``Logit`` / ``MNLogit`` / ``Probit``.

Modules, from the public models down: :mod:`~linbook.logistic.logistic_regression` (the
model and ``logistic_loss``, the objective, gradient and Hessian in numpy; its ``fit`` shows
the chapter's Newton step), :mod:`~linbook.logistic.probit`, :mod:`~linbook.logistic.irls`
(IRLS), :mod:`~linbook.logistic.multinomial`, :mod:`~linbook.logistic.binary` (link terms,
what a fitted binary model does), :mod:`~linbook.logistic._scaled` (the speed path behind one
interface: ``logistic_loss``'s ``(F, g, H)`` on centred, scaled columns),
:mod:`~linbook.logistic.solvers` (``solver="auto"``, the call into :mod:`linbook.optim`),
:mod:`~linbook.logistic.separation` (exact LP tests).

Derived in: chapter "Logistic regression" (model, NLL, gradient, Hessian, MAP,
multinomial) and chapter "Optimizers" § "IRLS" (the solver).
"""

from ..base import SeparableDataWarning
from .irls import irls
from .logistic_regression import LogisticRegression, logistic_loss
from .probit import ProbitRegression
from .solvers import choose_solver

__all__ = ["LogisticRegression", "ProbitRegression", "irls", "logistic_loss", "choose_solver",
           "SeparableDataWarning"]
