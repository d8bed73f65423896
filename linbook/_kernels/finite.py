"""``is_finite(x)`` for the compiled loops that reassociate floating point (``fastmath``).

numba's ``np.isfinite`` of a float tests whether ``x - x`` is a number. In a loop compiled with
reassociation, LLVM may rewrite ``x - x`` once it sees how ``x`` was computed: in the SGD epoch,
once the squared error's residual was inlined, an overflowed loss (``inf``) passed the test and
the fit went on with weights of 1e199 instead of stopping. Comparing ``abs(x)`` with the largest
float does no arithmetic on ``x``, so no reassociation applies: it is False for ``inf`` and
``nan`` under the flags linbook's loops use (reassoc, contract, nsz; never ninf or nnan).
"""

import numpy as np

from . import _cache_load  # noqa: F401  (imports numba: before it, see the module)
from numba import njit

FLOAT_MAX = float(np.finfo(np.float64).max)


@njit(inline="always")
def is_finite(x):
    """``np.isfinite(x)`` for a float, safe under reassociation."""
    return abs(x) <= FLOAT_MAX
