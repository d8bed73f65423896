"""Newton's step test for the first-order methods: resume a run until a Newton step is short.

The gradient test ``max |g| <= gtol * gscale`` of :func:`linbook.optim.gradient_descent`,
:func:`linbook.optim.bfgs` and :func:`linbook.optim.lbfgs` can be met far from the minimiser
when ``gscale`` is fixed in advance and dominated by terms that are already minimised: a sum of
sample weights of which a few heavy, well-fitted rows make up nearly all, say (weights 1e7 and
1e-3: the light rows' gradient is below the test at the start, iteration 0). How far Newton's
next step ``-H^{-1} g`` would still move ``x`` does not depend on how the terms are weighted:
:func:`resume_until_step_is_short` runs the method, and wherever it stops on its gradient test
asks ``step_size(x)``; while that step is longer than ``step_tol``, the method resumes from
there with ``gtol`` shrunk by the step's excess. :func:`linbook.optim.newton` has the same test
built in (``step_tol``, ``step_scale``).

Derived in: chapter "Optimizers" § "Newton's method".
"""

from __future__ import annotations

import numpy as np

from .result import (MSG_DECREMENT, MSG_GTOL, MSG_NO_DECREASE, MSG_STEP_STILL_LONG, OptimizeResult, _msg_max_iter,
                     checked_arguments, real_scalar)

__all__ = ["resume_until_step_is_short"]


@checked_arguments
def resume_until_step_is_short(run, x0, step_size, *, step_tol, gtol=1e-8, max_iter=100):
    """Run ``run`` from ``x0``; converged only where its gradient test passes and ``step_size`` is short.

    Parameters
    ----------
    run : callable
        ``run(x, gtol, max_iter) -> OptimizeResult``: a first-order method started at ``x`` with that
        gradient tolerance and iteration budget, e.g.
        ``lambda x, gtol, max_iter: lbfgs(fg, x, grad=True, gtol=gtol, gscale=s, max_iter=max_iter)``
        (or Newton's method with ``gtol`` its ``decrement_tol``: :func:`linbook.laplace.laplace_approximation`).
    x0 : (d,) array
        The start.
    step_size : callable
        ``step_size(x) -> float``: the length of Newton's next step at ``x`` in the problem's own
        units, e.g. ``max_j |(H^{-1} g)_j| * scale_j``; ``nan`` when it cannot be judged there (``H``
        not positive definite): the run's own verdict then stands.
    step_tol : float
        The longest step that counts as short.
    gtol, max_iter :
        The first run's gradient tolerance, and the iterations of all runs together.

    Returns
    -------
    OptimizeResult
        The last run's result with ``n_iter``, ``n_fev`` and ``path`` over all runs. Where the gradient
        test passed but the step is long, the run resumes from its result with ``gtol`` divided by
        ``step_size / step_tol`` (at least 10, at most 1e6); ``converged`` is true only at a short step.
        A run ending at rounding level (no decrease) is converged where the step is short. Not
        converged: iterations ran out (the message says the step is still long), or a run ended at
        rounding level (no decrease) with the step still long.

    Derived in: chapter "Optimizers" § "Newton's method".
    """
    res = _ran(run, x0, gtol, max_iter)
    n_iter, n_fev, paths, resumed = res.n_iter, res.n_fev, [res.path], False
    # a run ending at rounding level (no decrease), the first too, counts if its step is short (a constant of 1e16
    # in E stalled the line search 3.5 standard deviations from the mode, and E alone judged it)
    while res.message == MSG_NO_DECREASE or (res.converged or resumed) and res.message in (MSG_GTOL, MSG_DECREMENT):
        with np.errstate(divide="ignore", invalid="ignore"):       # step_tol = 0: every step is long
            excess = np.float64(real_scalar(step_size(res.x), "the step length (from step_size)")) / step_tol
        if not excess > 1.0:                    # short (or nan: not judged)
            res.converged = True
            break
        if res.message == MSG_NO_DECREASE:      # the line search is at rounding: resuming cannot help
            res.converged, res.message = False, res.message + MSG_STEP_STILL_LONG
            break
        if n_iter >= max_iter:
            res.converged, res.message = False, _msg_max_iter(max_iter) + " (the Newton step is still long)"
            break
        gtol = gtol / max(min(excess, 1e6), 10.0)
        res, resumed = _ran(run, res.x, gtol, max_iter - n_iter), True
        n_iter, n_fev = n_iter + res.n_iter, n_fev + res.n_fev
        paths.append(None if res.path is None else res.path[1:])    # a user's run may keep no path
    if resumed and res.message == _msg_max_iter(res.n_iter):     # the count over all runs, as n_iter
        res.message = _msg_max_iter(n_iter)
    res.n_iter, res.n_fev = n_iter, n_fev
    if len(paths) > 1 and all(p is not None for p in paths):
        res.path = np.concatenate(paths)
    return res


def _ran(run, x, gtol, max_iter):
    """``run(x, gtol, max_iter)``, or a clear error when it does not return an :class:`OptimizeResult`."""
    res = run(x, gtol, max_iter)
    if not isinstance(res, OptimizeResult):
        raise TypeError(f"run must return a linbook.optim.OptimizeResult; got {type(res).__name__}. Fix run, "
                        "e.g. lambda x, gtol, max_iter: lbfgs(fg, x, grad=True, gtol=gtol, max_iter=max_iter)")
    return res
