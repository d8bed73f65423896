"""``out[:] = X_b * s[:, None]`` (rows of a block scaled, written into a reused buffer of
either precision) as one compiled loop: numpy's broadcast multiply with a dtype cast runs
~3x slower and allocates. Used by ``hessian.binary_pass`` for the SYRK input."""

from numba import njit


@njit(cache=True)
def scale_rows_into(Xb, s, out):
    """``out[i, j] = Xb[i, j] * s[i]`` (``out`` float32 or float64, at least as many rows)."""
    for i in range(Xb.shape[0]):
        si = s[i]
        for j in range(Xb.shape[1]):
            out[i, j] = Xb[i, j] * si
