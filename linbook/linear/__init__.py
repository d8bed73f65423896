"""Linear regression: least squares, ridge, lasso and least absolute deviations.

Every estimator fits ``y ~ X w + b`` and accepts ``sample_weight`` ``s_i`` in ``fit``. With
``fit_intercept=True`` the intercept ``b`` is never penalised: the problem is solved for ``w``
on data centred by the (weighted) means, and ``b = mean(y) - mean(X) @ w``. Objectives are
*summed* over samples, and ``lam`` multiplies the penalty added to that sum:

==========================  ===============================================  ===========================================
estimator                   minimises                                        scikit-learn equivalent
==========================  ===============================================  ===========================================
``LinearRegression``        ``1/2 sum_i s_i r_i^2``                          ``LinearRegression()``
``Ridge(lam)``              ``1/2 sum_i s_i r_i^2 + lam/2 ||w||^2``          ``Ridge(alpha=lam)``
``Lasso(lam)``              ``1/2 sum_i s_i r_i^2 + lam ||w||_1``            ``Lasso(alpha=lam / sum_i s_i)`` (``lam / N``)
``LeastAbsoluteDeviation``  ``sum_i s_i |r_i|``                              ``QuantileRegressor(quantile=0.5, alpha=0)``
==========================  ===============================================  ===========================================

with ``r_i = y_i - x_i . w - b``. One module per model: :mod:`.least_squares`, :mod:`.ridge`,
:mod:`.lasso`, :mod:`.lad`; the shared Gram statistics (one blocked pass over ``X``, exact
power-of-two rescaling) are in ``_moments``.

Derived in: chapter "Linear regression".
"""

from .lad import LeastAbsoluteDeviation
from .lasso import Lasso
from .least_squares import LinearRegression
from .ridge import Ridge

__all__ = ["LinearRegression", "Ridge", "Lasso", "LeastAbsoluteDeviation"]

# The public path of each model is linbook.linear.<Name> (docs, pickles, the API snapshot),
# whichever file defines it.
for _cls in (LinearRegression, Ridge, Lasso, LeastAbsoluteDeviation):
    _cls.__module__ = __name__
del _cls
