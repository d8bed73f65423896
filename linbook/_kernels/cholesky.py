"""Cholesky factor of an equilibrated symmetric matrix, with its condition checked.

    equilibrated_cholesky(A, ridge=r) == (cholesky(A / outer(e, e) + r I) upper, e)  with e = sqrt(diag A)

Symmetric diagonal scaling first, so that neither the factorisation, the ridge nor the
condition number depends on the units of the coordinates. The one equilibrated Cholesky
of linbook: least squares / ridge (to decide between Cholesky and an orthogonal
fallback), Newton's method (its step, with a growing ridge where the Hessian is not
positive definite) and logistic regression (whether a single-precision Hessian is good
enough).
"""

import numpy as np
from scipy.linalg import lapack

from .threads import factorisation_threads


def equilibrated_cholesky(A, rcond_min=0.0, ridge=0.0):
    """``(C, e)``: the upper Cholesky factor ``C`` of ``A / outer(e, e) + ridge I``, ``e = sqrt(diag A)``.

    ``e_j = 1`` where ``A_jj <= 0`` (then only a ``ridge > 0`` can make the factor exist).
    ``None`` when ``A`` is not finite, the scaled matrix is not numerically positive definite,
    or its reciprocal condition number (LAPACK's 1-norm estimate) is below ``rcond_min``.
    """
    A = np.asarray(A, dtype=float)
    if not np.isfinite(A).all():
        return None
    diag = A.diagonal()
    e = np.sqrt(np.where(diag > 0, diag, 1.0))
    As = A / e[:, None] / e[None, :]
    if ridge:
        As[np.diag_indices_from(As)] += ridge
    with factorisation_threads(len(As)):
        C, info = lapack.dpotrf(As, lower=0, clean=1)
        if info != 0:
            return None
        if rcond_min > 0:
            rcond, info = lapack.dpocon(C, np.abs(As).sum(axis=0).max())
            if info != 0 or not rcond >= rcond_min:
                return None
    return C, e


# the diagonal range in which an unscaled factor's entries (~sqrt(A_jj)) and its solves stay as far from overflow
# and underflow as the equilibrated ones (within 1e50 of them)
_UNSCALED_DIAGONAL = (1e-100, 1e100)


def cholesky_known_conditioned(A):
    """``equilibrated_cholesky(A)``'s answer in its form ``(C, e)``, with ``e = 1`` (no scaling), for an ``A``
    whose scaled condition the caller has already proved small; ``None`` where the diagonal is outside
    ``1e-100 .. 1e100`` or LAPACK finds no factor (then :func:`equilibrated_cholesky`).

    Why no scaling is needed there: with ``A = D As D`` (``D`` diagonal), the computed Cholesky factor of ``A``
    and the solves with it are as accurate as those of ``As`` (van der Sluis; Higham, *Accuracy and Stability
    of Numerical Algorithms*, 2nd ed., Thm 10.5 and 10.7: the backward error is componentwise, so the bounds
    depend on ``cond(As)`` only), and the factorisation succeeds when ``cond(As)`` is small. Scaling only
    decides whether it succeeds where the condition is *not* known, and where to put the ridge. Saves the
    scaled copy, a finiteness pass and the divisions: a streamed RLS chunk of 101 parameters, ~30 of its
    ~200 microseconds."""
    diag = A.diagonal()
    if not (_UNSCALED_DIAGONAL[0] < diag.min() and diag.max() < _UNSCALED_DIAGONAL[1]):
        return None
    with factorisation_threads(len(A)):
        C, info = lapack.dpotrf(A, lower=0, clean=1)
    if info != 0:
        return None
    ones = np.empty(len(A))
    ones.fill(1.0)
    return C, ones


def equilibrated_solve(factor, b):
    """``A^{-1} b`` (with the ridge of the factor) from ``factor = equilibrated_cholesky(A, ...)``.

    ``b`` is a vector ``(D,)`` or a matrix ``(D, k)``: the scaling acts on its rows.
    """
    C, e = factor
    b = np.asarray(b, dtype=float)
    e_rows = e.reshape((-1,) + (1,) * (b.ndim - 1))   # (D,) or (D, 1): one scale per row of b
    return lapack.dpotrs(C, b / e_rows, lower=0)[0] / e_rows
