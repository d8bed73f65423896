"""``out[:] = X_b * s[:, None] * col[None, :]`` (rows of a block scaled, and the columns too
when ``col`` is not empty, written into a reused buffer of either precision) as one compiled
loop: numpy's broadcast multiply with a dtype cast runs ~3x slower and allocates. Used by
``hessian.binary_pass`` for the SYRK input."""

from . import _cache_load  # noqa: F401  (imports numba: before it, see the module)
from numba import njit


@njit(cache=True, nogil=True)   # runs in the row-chunk threads of binary_pass
def scale_rows_into(Xb, s, col, out):
    """``out[i, j] = Xb[i, j] * s[i] (* col[j])`` (``out`` float32 or float64)."""
    scale_cols = col.shape[0] > 0
    for i in range(Xb.shape[0]):
        si = s[i]
        for j in range(Xb.shape[1]):
            out[i, j] = Xb[i, j] * si * col[j] if scale_cols else Xb[i, j] * si
