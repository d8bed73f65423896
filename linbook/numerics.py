"""Numerically stable elementwise primitives.

Every function here is exact to float64 rounding over the whole real line and
emits no overflow/underflow warning, including at ``abs(z) = 1000``, near ``+-1e308`` and at
``+-inf`` (where each returns its limit; the docstrings say which). NaN propagates.

Derived in: chapter "Logistic regression" § "The sigmoid and its logarithm"
(stability), and chapter "Estimation" for ``logsumexp`` (normalising a
discrete posterior).

Package-internal helpers at the end (not in ``__all__``) hold linbook's one exact
power-of-two scaling, ``_binary_exponent`` and ``_power_of_two_scale``, and its one sign
convention for eigen- and singular vectors, ``_orient_columns``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["sigmoid", "log_sigmoid", "log1pexp", "logsumexp", "softmax", "log_softmax"]


def sigmoid(z):
    """Logistic sigmoid ``1 / (1 + exp(-z))`` without overflow.

    For ``z >= 0`` it evaluates ``1 / (1 + exp(-z))``; for ``z < 0`` the
    algebraically equal ``exp(z) / (1 + exp(z))``, so ``exp`` only ever sees a
    non-positive argument.

    Parameters
    ----------
    z : array_like

    Returns
    -------
    ndarray or float
        Values in [0, 1], same shape as ``z``.

    Derived in: chapter "Logistic regression" § "Model".
    """
    z = _as_real(z, "z")
    with np.errstate(under="ignore"):  # exp(-1000) underflows to 0 by design
        e = np.exp(-np.abs(z))
    out = np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
    return out[()] if out.ndim == 0 else out


def log1pexp(z):
    """``log(1 + exp(z))`` (softplus), exact for every float64 ``z``.

    Uses ``max(z, 0) + log1p(exp(-|z|))``: the first term carries the
    asymptote, the second is in [0, log 2] and computed with ``log1p`` so
    that tiny values keep full relative precision.

    Derived in: chapter "Logistic regression" § "The sigmoid and its logarithm".
    """
    z = _as_real(z, "z")
    with np.errstate(under="ignore"):  # exp(-|z|) underflows to 0 by design
        out = np.maximum(z, 0.0) + np.log1p(np.exp(-np.abs(z)))
    # -inf: max(-inf,0)=0, exp(-inf)=0 -> 0; +inf: inf + 0 = inf. Both fine.
    return out[()] if out.ndim == 0 else out


def log_sigmoid(z):
    """``log sigmoid(z) = -log1pexp(-z)``, exact for every float64 ``z``.

    Derived in: chapter "Logistic regression" § "The sigmoid and its logarithm".
    """
    return -log1pexp(-_as_real(z, "z"))


def _row_max(a, axis):
    """Row maxima (keepdims) and the rows' +inf / all -inf masks."""
    m = np.max(a, axis=axis, keepdims=True)
    return m, np.isposinf(m), np.isneginf(m)


def _no_all_neg_inf(neg, name):
    if np.any(neg):
        raise ValueError(f"{name}: a row (slice along axis) is entirely -inf, i.e. every entry has "
                         "probability zero, so it cannot be normalised. Check the scores, or mask "
                         "such rows before calling (logsumexp gives -inf for them).")


def _log_shifted_sum(shifted, axis):
    """``log(sum(exp(shifted)))`` along ``axis`` (keepdims) for rows whose maximum is 0: ``log1p`` of the
    other entries' sum, leaving one maximum (``exp(0) = 1``) out. ``log(1 + t)`` rounds ``t`` below 1e-16 away:
    ``logsumexp([0, -50])`` came out 0 for 1.9e-22, the largest class's log-probability 0 for -1.9e-22."""
    e = np.exp(shifted)
    np.put_along_axis(e, np.argmax(shifted, axis=axis, keepdims=True), 0.0, axis=axis)
    return np.log1p(np.sum(e, axis=axis, keepdims=True))


def logsumexp(a, axis=None, keepdims=False):
    """``log(sum(exp(a)))`` along ``axis`` with the max subtracted first.

    Exact limits at the ends of the float range: rows that are entirely ``-inf`` give
    ``-inf``; a row holding ``+inf`` gives ``+inf``; entries near ``+-1e308`` do not overflow.
    NaN propagates (a row with NaN gives NaN), as in numpy. An empty row (a sum of no terms) gives
    ``log 0 = -inf``, as in scipy.

    Parameters
    ----------
    a : array_like
    axis : int, tuple of ints or None
        Axis or axes to reduce; ``None`` reduces everything.
    keepdims : bool

    Derived in: chapter "Logistic regression" § "Multinomial logistic regression".
    """
    a = _as_real(a, "a")
    axes = _reduction_axes(a.ndim, axis, "logsumexp")
    rows, _ = _as_rows(a, axes)
    out = _logsumexp_rows(rows)
    shape = [1 if i in axes else n for i, n in enumerate(a.shape)] if keepdims else \
        [n for i, n in enumerate(a.shape) if i not in axes]
    out = out.reshape(shape)
    return out[()] if out.ndim == 0 else out


def _logsumexp_rows(rows):
    """``logsumexp`` of each row of the 2-D ``rows``, shape ``(m,)``."""
    if rows.shape[1] == 0:
        return np.full(rows.shape[0], -np.inf)
    m, pos, neg = _row_max(rows, 1)
    shift = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore", under="ignore", over="ignore", invalid="ignore"):
        out = _log_shifted_sum(rows - shift, 1) + shift
    out = np.where(pos, np.inf, np.where(neg, -np.inf, out))
    out = np.where(np.isnan(m), np.nan, out)          # _log_shifted_sum may have left a NaN maximum out
    return out[:, 0]


def log_softmax(a, axis=-1):
    """``a - logsumexp(a)`` along ``axis``, computed without cancellation.

    Limits: in a row holding ``k`` entries equal to ``+inf``, those get ``-log k`` and the
    others ``-inf`` (the limit as they grow together: the mass is split evenly over them).
    A row that is entirely ``-inf`` has no normalisation and raises ``ValueError``. NaN
    propagates to its row. ``axis`` may be an int, a tuple of ints or ``None`` (all axes).

    Derived in: chapter "Logistic regression" § "Multinomial logistic regression".
    """
    return _along_axes(_log_softmax_rows, a, axis, "log_softmax")


def _log_softmax_rows(a):
    """:func:`log_softmax` of each row of the non-empty 2-D ``a``."""
    m, pos, neg = _row_max(a, 1)
    _no_all_neg_inf(neg, "log_softmax")
    # Shift first, then subtract the small log-sum: a - logsumexp(a) would cancel
    # two large numbers (|a| ~ 1000) and lose ~13 digits' worth of absolute accuracy.
    shift = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(under="ignore", divide="ignore", over="ignore", invalid="ignore"):
        shifted = a - shift
        out = np.where(np.isnan(m), np.nan, shifted - _log_shifted_sum(shifted, 1))
    if np.any(pos):
        hit = np.isposinf(a)
        k = np.sum(hit, axis=1, keepdims=True)
        out = np.where(pos, np.where(hit, -np.log(np.maximum(k, 1)), -np.inf), out)
    return out


def softmax(a, axis=-1):
    """``exp(a) / sum(exp(a))`` along ``axis``; rows sum to one exactly up to rounding.

    Limits: a row holding ``k`` entries equal to ``+inf`` puts mass ``1/k`` on each of them
    and 0 elsewhere (the limit as they grow together). A row that is entirely ``-inf`` (all
    probabilities zero) cannot be normalised and raises ``ValueError``. Entries near
    ``+-1e308`` do not overflow. NaN propagates to its row. ``axis`` may be an int, a tuple of
    ints or ``None`` (all axes).

    Derived in: chapter "Logistic regression" § "Multinomial logistic regression";
    temperature form in chapter "Gaussian models and GDA" § "Softmax and temperature".
    """
    return _along_axes(_softmax_rows, a, axis, "softmax")


def _softmax_rows(a):
    """:func:`softmax` of each row of the non-empty 2-D ``a``."""
    m, pos, neg = _row_max(a, 1)
    _no_all_neg_inf(neg, "softmax")
    shift = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(under="ignore", over="ignore", invalid="ignore"):
        e = np.exp(a - shift)
        out = e / np.sum(e, axis=1, keepdims=True)
    if np.any(pos):
        hit = np.isposinf(a)
        k = np.sum(hit, axis=1, keepdims=True)
        out = np.where(pos, hit / np.maximum(k, 1), out)
    return out


# ---------------------------------------------------------------- inputs and axes


def _as_real(a, name):
    """``a`` as a float64 array (float16/32, int and bool are computed in float64), or an error naming ``name``.

    Why not ``np.asarray(a, dtype=float)``: it turns ``None`` into NaN (a missing value made a silent NaN:
    ``sigmoid(None)`` was NaN), reads a masked array's hidden values as data, and refuses complex or text
    entries with numpy's own message, which names nothing.
    """
    if type(a) is np.ndarray and a.dtype == np.float64:
        return a
    _refuse_masked(a, name)
    arr = np.asarray(a)
    if arr.dtype.kind in "biuf":
        return arr.astype(float, copy=False)
    if arr.dtype.kind == "O" and not any(v is None or isinstance(v, (str, bytes, complex)) for v in arr.flat):
        try:
            return arr.astype(float)
        except (TypeError, ValueError):
            pass
    raise TypeError(f"{name} must hold real numbers; got an array of {arr.dtype} (None, text or complex "
                    f"entries). Pass {name} as a float array: np.nan for a missing value, np.real for complex ones")


def _refuse_masked(a, name):
    """A clear error for a masked array with masked entries: ``np.asarray`` reads their hidden values as data
    (``gaussian_mle`` of ``[1, 2, --]`` used the masked 100: a mean of 34.3)."""
    if isinstance(a, np.ma.MaskedArray) and np.ma.is_masked(a):
        raise ValueError(f"{name} is a masked array with masked entries, which would be read as their hidden "
                         f"values: fill them ({name}.filled(np.nan)) or drop them ({name}.compressed()) first")


def _reduction_axes(ndim, axis, caller):
    """``axis`` (``None``, an int or a tuple of ints) as a sorted tuple of axes of an ``ndim``-D array, or a clear
    error; ``()`` for a 0-d array, whose one entry is its own row."""
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    if not all(isinstance(ax, (int, np.integer)) and not isinstance(ax, (bool, np.bool_)) for ax in axes):
        raise TypeError(f"{caller}: axis must be None, an int or a tuple of ints; got {axis!r}. Pass an int axis")
    size = max(ndim, 1)
    if not all(-size <= ax < size for ax in axes) or len({int(ax) % size for ax in axes}) != len(axes):
        raise ValueError(f"{caller}: axis {axis!r} does not name distinct axes of an array of {ndim} dimensions; "
                         f"pass axes in [-{size}, {size - 1}], each once")
    return tuple(sorted(int(ax) % size for ax in axes)) if ndim else ()


def _as_rows(a, axes):
    """``(rows, moved_shape)``: ``a`` with the axes ``axes`` moved last and merged into one, shape ``(m, k)``,
    and the shape before merging."""
    last = range(a.ndim - len(axes), a.ndim)
    moved = np.moveaxis(a, axes, last)
    k = int(np.prod([a.shape[i] for i in axes], dtype=np.int64))
    return moved.reshape(int(np.prod(moved.shape[:a.ndim - len(axes)], dtype=np.int64)), k), moved.shape


def _along_axes(rows_fn, a, axis, caller):
    """``rows_fn`` (a map of the rows of a 2-D array to the same shape) applied along ``axis`` of ``a``."""
    a = _as_real(a, "a")
    axes = _reduction_axes(a.ndim, axis, caller)
    rows, moved_shape = _as_rows(a, axes)
    out = rows_fn(rows) if rows.size else rows.copy()         # no entries: nothing to normalise
    out = np.moveaxis(out.reshape(moved_shape), range(a.ndim - len(axes), a.ndim), axes)
    return out[()] if out.ndim == 0 else out


# ---------------------------------------------------------------- exact power-of-two scaling
# Package-internal (not in __all__): linbook divides data by powers of two so that squares and
# products of values near 1e300 or 1e-300 neither overflow nor underflow. Dividing or multiplying
# by 2**k only changes the exponent of a float64, so it is exact (no digit of the answer changes)
# as long as the result is a normal number; ``np.ldexp(x, k)`` does it without forming 2**k.


def _binary_exponent(x):
    """The integer ``e`` with ``2**(e-1) <= |x| < 2**e``, elementwise (the exponent of ``np.frexp``).

    So ``x / 2**e`` has magnitude in [0.5, 1): ``np.ldexp(x, -e)`` brings ``x`` near 1 exactly, and
    ``np.ldexp(y, -e)`` scales other values by the same power of two. Subnormal ``x`` get their true
    exponent (down to -1073 for the smallest, ``5e-324``). ``e`` is 0 where ``x`` is 0, ``+-inf`` or
    NaN (frexp's convention: no scaling). The sign of ``x`` is ignored.

    Returns
    -------
    ndarray of int32 (``np.intc``), same shape as ``x``, or one ``np.int32`` for a scalar.
    """
    return np.frexp(x)[1]


def _power_of_two_scale(m, *, below=False, normal=False):
    """A power of two ``s`` near ``m`` to divide by exactly, elementwise: ``m / s`` in [0.5, 1), or in [1, 2)
    with ``below=True``; ``s = 1`` where ``m`` is 0, negative, ``inf`` or NaN.

    ``m`` is a magnitude (e.g. a column's largest ``|x|``). With ``e = _binary_exponent(m)``,
    ``s = 2**e`` (just above ``m``: ``|x| / s < 1`` for every ``|x| <= m``) or, with ``below=True``,
    ``s = 2**(e-1)`` (at or below ``m``). Dividing by ``s`` is exact, so scaled sums of squares and
    products neither overflow nor underflow, and the answer maps back exactly.

    ``s`` is always a finite float64: the one exponent beyond the range, ``2**1024`` for
    ``m >= 2**1023`` with ``below=False``, is clipped to ``2**1023`` (then ``m / s`` is in [1, 2)).
    Subnormal ``m`` give subnormal ``s`` (down to ``2**-1074``), whose reciprocal overflows; with
    ``normal=True`` the exponent is clipped to [-1021, 1022] instead, so that ``s`` and ``1 / s`` are
    both normal numbers and multiplying by ``1 / s`` is exact too (then ``m / s`` is below 4 for
    every finite ``m``, and may be tiny for subnormal ``m``).

    Returns
    -------
    ndarray of float64, same shape as ``m``, or one ``np.float64`` for a scalar.
    """
    m = np.asarray(m, dtype=float)
    ok = np.isfinite(m) & (m > 0)
    e = _binary_exponent(np.where(ok, m, 1.0))
    k = np.where(ok, e - 1 if below else e, 0)                  # s = 2**0 = 1 where m is no magnitude
    k = np.clip(k, -1021, 1022) if normal else np.minimum(k, 1023)
    s = np.ldexp(1.0, k)
    return s[()] if s.ndim == 0 else s


#: Entries of a direction within this relative distance of its largest magnitude count as tied with it.
SIGN_TIE_RTOL = 1e-6


def _orient_columns(V):
    """``V`` with each column's sign fixed: the column's entry of largest magnitude is positive.

    An eigen- or singular vector is defined only up to its sign, which LAPACK picks by the path its
    arithmetic takes: it can differ between BLAS/LAPACK builds, CPUs and equivalent inputs (rows
    permuted, classes relabelled). This is linbook's one convention for every direction it exposes
    (scikit-learn's ``svd_flip`` rule), so those differences disappear. Ties: entries whose magnitudes
    are within a relative :data:`SIGN_TIE_RTOL` of the column's largest are tied up to rounding (e.g.
    ``(1, -1) / sqrt(2)``), and the first of them (lowest row index) is made positive, so rounding-level
    differences between builds cannot pick a different entry. A zero column (a dropped direction)
    stays zero; zero rows (columns of ``X`` dropped as constant) never decide. Returns a new array.
    """
    V = np.array(V, dtype=float)
    if V.size == 0:
        return V
    mag = np.abs(V)
    top = mag.max(axis=0)
    lead = np.argmax(mag >= top * (1.0 - SIGN_TIE_RTOL), axis=0)     # first entry tied with the largest
    signs = np.where(V[lead, np.arange(V.shape[1])] < 0, -1.0, 1.0)
    return V * signs
