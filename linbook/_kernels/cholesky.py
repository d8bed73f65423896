"""Cholesky factor of an equilibrated symmetric matrix, with its condition checked.

    equilibrated_cholesky(A) == (cholesky(A / outer(e, e)) upper, e)  with e = sqrt(diag A)

Symmetric diagonal scaling first, so that neither the factorisation nor the condition
number depends on the units of the coordinates. Used by least squares / ridge (to decide
between Cholesky and an orthogonal fallback) and by logistic regression (to decide whether
a single-precision Hessian is good enough).
"""

import numpy as np
from scipy.linalg import lapack


def equilibrated_cholesky(A, rcond_min=0.0):
    """``(C, e)``: the upper Cholesky factor ``C`` of ``A / outer(e, e)`` and ``e = sqrt(diag A)``.

    ``None`` when ``A`` is not finite, has a non-positive diagonal, is not numerically positive
    definite, or the reciprocal condition number of the scaled matrix (LAPACK's 1-norm
    estimate) is below ``rcond_min``.
    """
    A = np.asarray(A, dtype=float)
    if not np.all(np.isfinite(A)):
        return None
    e = np.sqrt(np.diag(A))
    if not np.all(e > 0):
        return None
    As = A / e[:, None] / e[None, :]
    C, info = lapack.dpotrf(As, lower=0, clean=1)
    if info != 0:
        return None
    if rcond_min > 0:
        rcond, info = lapack.dpocon(C, np.abs(As).sum(axis=0).max())
        if info != 0 or not rcond >= rcond_min:
            return None
    return C, e
