"""First- and second-order optimizers, written out as the book teaches them.

Every optimizer minimises a smooth function and returns an :class:`OptimizeResult`
with the solution ``x``, the final value ``fun``, the final gradient ``grad``, a
``converged`` flag, the number of iterations ``n_iter``, the number of function
evaluations ``n_fev``, the ``path`` of iterates (an array of shape ``(n_iter + 1, d)``,
for contour plots) and a ``message`` saying why it stopped.

Objectives are passed as ``fun(x) -> float`` and ``grad(x) -> ndarray``; or as one
function returning both, ``fun(x) -> (f, g)``, with ``grad=True`` (as ``jac=True`` in
``scipy.optimize.minimize``). Hessians are ``hess(x) -> (d, d) ndarray`` (or, for
:func:`newton`, ``hess=True`` with ``fun(x) -> (f, g, H)``).

Convergence (all methods) is tested relative to the problem's own scale, so it does
not depend on the units of ``x`` or ``f``: ``max |g| <= gtol * max |g(x0)|`` (or
``gtol * gscale`` for a stated ``gscale``), or a step with
``max |x_new - x| <= xtol * max |x|``. A non-finite objective or gradient stops a
method at once with ``converged = False`` and a message saying so.
``converged`` is true only at a minimum: a start with zero gradient is probed for descent along a
few directions (a saddle or maximum there gives ``converged = False``, "not a minimum"); so is, along
its direction of least curvature across, a run that stayed in a subspace its gradient never left (a
start on a symmetry axis of ``f`` that ends at a saddle); and Levenberg-Marquardt probes along its
direction of least curvature and moves on from a lower point. The one rule is
``linbook.optim.result._lower_by_curvature`` (after a step, its caller ``_verdict``).

Modules: :mod:`~linbook.optim.line_search` (Armijo, Wolfe),
:mod:`~linbook.optim.first_order` (gradient descent, momentum, CG),
:mod:`~linbook.optim.newton` (Newton, the one Newton/IRLS driver; truncated Newton;
Levenberg-Marquardt), :mod:`~linbook.optim.quasi_newton` (BFGS, L-BFGS),
:mod:`~linbook.optim.resume` (Newton's step test for the first-order methods: resume a run
until a Newton step is short).

Derived in: chapter "Optimizers" (one section per method).
"""

from .first_order import conjugate_gradient, gradient_descent, momentum, nonlinear_cg
from .line_search import backtracking, wolfe_line_search
from .newton import levenberg_marquardt, newton, truncated_newton
from .newton_cg import newton_cg
from .quasi_newton import bfgs, bfgs_update_B, bfgs_update_H, lbfgs, lbfgs_two_loop
from .result import OptimizeResult
from .resume import resume_until_step_is_short

__all__ = [
    "OptimizeResult", "backtracking", "wolfe_line_search", "gradient_descent", "momentum",
    "conjugate_gradient", "nonlinear_cg", "newton", "truncated_newton", "newton_cg", "bfgs",
    "lbfgs", "levenberg_marquardt", "bfgs_update_B", "bfgs_update_H", "lbfgs_two_loop",
    "resume_until_step_is_short",
]


def __getattr__(name):
    # IRLS is logistic regression's Newton method and lives with it (linbook.irls); this
    # forwarder keeps ``linbook.optim.irls`` working for one release, through the public
    # top-level name at call time (optim itself imports nothing from logistic).
    if name == "irls":
        import warnings

        import linbook

        warnings.warn("linbook.optim.irls moved to linbook.irls in linbook 0.2; linbook.optim.irls will "
                      "stop working in linbook 0.3. Call linbook.irls instead.", FutureWarning, stacklevel=2)
        return linbook.irls
    raise AttributeError(f"module 'linbook.optim' has no attribute {name!r}")
