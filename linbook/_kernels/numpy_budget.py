"""The process's budget of steps in the readable numpy loops before the compiled ones load.

Imports no numba: the models consult it before choosing a loop.
"""

# The online models' small fits, and the lasso's sweeps, run their readable numpy loops (in the public
# class's module) until this process has made NUMPY_STEPS steps that way (a per-sample step, or one
# coordinate of a lasso sweep); then the compiled loops of
# ``linbook._kernels`` (the same steps, tested equal). Loading a compiled loop costs a numba import and
# a cache read (~0.5 s), more than a chapter's small fits; a numpy step costs ~10 microseconds, more
# than a compiled one in a loop of many fits. One budget for SGD, LMS, RLS, online gradient descent and
# the lasso.
NUMPY_STEPS = 20_000
numpy_steps_left = [NUMPY_STEPS]


def numpy_pass(n_steps, budget=numpy_steps_left):
    """Whether a pass of ``n_steps`` per-sample steps runs in numpy; if so, it is taken from the budget."""
    if budget[0] < n_steps:
        return False
    budget[0] -= n_steps
    return True


def numpy_fit(least_steps, budget=numpy_steps_left):
    """Whether a fit that makes at least ``least_steps`` steps may start in numpy: only when the budget
    covers them all. A fit that will load the compiled loops anyway loads them at once, instead of
    first spending numpy time (20,000 x 20, six epochs at least: 0.36 s CPU of a 1.4 s first fit)."""
    return least_steps <= budget[0]
