"""Row blocks of dask inputs, the first pass over them, and the map-reduce every fit uses.

:func:`row_blocks` turns ``X`` (dask array or DataFrame), ``y`` and ``sample_weight`` into a
list of aligned row blocks (dask delayed objects, nothing computed). :func:`summarise` reads
them once: it checks every block (finite ``X``, ``y`` and weights, equal lengths) and returns
the global numbers a fit starts from -- the classes and their weighted counts, the weighted
column means and spreads (combined by Chan's parallel formula, so no cancellation), the column
extremes. :func:`map_reduce` sums a function of each block over the blocks, in a tree on
the workers; only the total reaches the client.

Derived in: chapter "Optimizers" § "When the data do not fit: the Newton step as a map-reduce".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import dask
import dask.array as da
import numpy as np

from .._kernels.scatter import column_range

__all__ = ["Blocks", "Summary", "check_block_lengths", "row_blocks", "summarise", "map_reduce", "map_method", "tree_sum"]

# Blocks' results are added FAN_IN at a time, in a tree of tasks on the workers: no worker
# (and not the client) ever holds more than FAN_IN partial sums of size O(D^2 x classes).
FAN_IN = 8
# More distinct labels than this is not a classification problem (and would grow the client's share)
MAX_CLASSES = 10_000
#: The most numbers a fit brings to the client, where a decision needs every row at once (80 MB: the one
#: exception to the client's O(D^2) share): the logistic fits' exact separation test, and a ridge fit whose
#: rows span too many decades for the Gram matrix.
CLIENT_NUMBERS = 10_000_000


@dataclass
class Blocks:
    """Aligned row blocks: ``parts[i] = (X_i, y_i, a_i)`` (delayed; ``y_i``/``a_i`` may be None)."""

    parts: list
    n_features: int
    feature_names: np.ndarray | None


def _is_dataframe(obj):
    return hasattr(obj, "__dask_graph__") and hasattr(obj, "columns") and hasattr(obj, "to_dask_array")


def _as_array(obj, what, model):
    """A dask array from a dask array, DataFrame or Series (or a numpy array); no data is read."""
    if obj is None:
        return None
    if _is_dataframe(obj) or (hasattr(obj, "__dask_graph__") and hasattr(obj, "to_dask_array")):
        return obj.to_dask_array()            # row chunks = partitions, lengths possibly unknown
    if isinstance(obj, da.Array):
        return obj
    arr = np.asarray(obj)
    return da.from_array(arr, chunks=(arr.shape[0],) + arr.shape[1:]) if arr.ndim else arr


def _unknown(chunks):
    return any(isinstance(c, float) and math.isnan(c) for c in chunks)


def _require_numeric(X, model):
    """A clear error, before any data is read, for a DataFrame or array X that is not numeric."""
    if _is_dataframe(X):
        kinds = {c: getattr(t, "kind", "O") for c, t in X.dtypes.items()}
        bad = [f"{c!r} ({X.dtypes[c]})" for c, k in kinds.items() if k not in "biuf"]
    else:
        kind = getattr(getattr(X, "dtype", None), "kind", "f")
        bad = [] if kind in "biuf" else [f"all (dtype {X.dtype})"]
    if bad:
        raise ValueError(f"{model}: X must be numeric, but these columns are not: {', '.join(bad[:10])}. Encode "
                         "string or categorical columns first (e.g. dd.get_dummies(X) for a dask DataFrame, "
                         "with the categories known), or drop them.")


def row_blocks(X, y=None, sample_weight=None, *, model="the model"):
    """``Blocks`` of ``X`` (rows split as X's chunks, one chunk across the columns), ``y``, weights.

    ``y`` and ``sample_weight`` chunked differently from ``X`` are rechunked to X's row chunks.
    When some row chunk sizes are unknown (an array filtered by a mask, a DataFrame's partitions)
    the blocks are paired one to one, and each pair's lengths are checked as it is read; if the
    numbers of blocks differ the error says to call ``compute_chunk_sizes()``.
    """
    names = np.asarray(X.columns, dtype=object) if _is_dataframe(X) else None
    if names is not None and not all(isinstance(c, str) for c in names):
        names = None                            # scikit-learn keeps only string column names
    _require_numeric(X, model)
    Xa = _as_array(X, "X", model)
    if Xa.ndim != 2:
        raise ValueError(f"{model}: X must be 2-D, of shape (n_samples, n_features); got {Xa.ndim}-D. "
                         "Reshape X to 2-D (X.reshape(-1, 1) for one feature).")
    if _unknown(Xa.shape[1:]):
        raise ValueError(f"{model}: X has an unknown number of columns. Pass X with known chunk sizes: "
                         "call X.compute_chunk_sizes() first.")
    Xa = Xa.rechunk({1: -1}) if len(Xa.chunks[1]) > 1 else Xa
    others = []
    for what, v in (("y", y), ("sample_weight", sample_weight)):
        va = _as_array(v, what, model)
        if va is not None and va.ndim != 1:
            if va.ndim == 2 and va.shape[1] == 1:
                va = va[:, 0]
            else:
                raise ValueError(f"{model}: {what} must be 1-D, one value per row of X; got shape {va.shape}. "
                                 f"Pass {what} as a 1-D array.")
        if va is not None and va.chunks[0] != Xa.chunks[0]:
            if _unknown(va.chunks[0]) or _unknown(Xa.chunks[0]):
                if len(va.chunks[0]) != len(Xa.chunks[0]):
                    raise ValueError(
                        f"{model}: X and {what} are split into row blocks of unknown sizes "
                        f"({len(Xa.chunks[0])} and {len(va.chunks[0])} blocks), which cannot be aligned. "
                        f"Call X.compute_chunk_sizes() and {what}.compute_chunk_sizes() first "
                        "(or build both from one DataFrame).")
            elif va.shape[0] != Xa.shape[0]:
                raise ValueError(f"{model}: X has {Xa.shape[0]} rows but {what} has {va.shape[0]}. "
                                 f"Pass X and {what} with one row per sample.")
            else:
                va = va.rechunk({0: Xa.chunks[0]})      # y's blocks follow X's rows
        elif va is not None and not _unknown(va.shape) and not _unknown(Xa.shape) and va.shape[0] != Xa.shape[0]:
            raise ValueError(f"{model}: X has {Xa.shape[0]} rows but {what} has {va.shape[0]}. "
                             f"Pass X and {what} with one row per sample.")
        others.append(va)
    # unoptimised graphs: optimising each collection on its own would fuse X's block into y's task
    # when y is computed from X (lazily generated or loaded data), so every pass read X twice
    xs = Xa.to_delayed(optimize_graph=False).ravel().tolist()
    ys, ws = [None if v is None else v.to_delayed(optimize_graph=False).ravel().tolist() for v in others]
    parts = [(xs[i], None if ys is None else ys[i], None if ws is None else ws[i]) for i in range(len(xs))]
    return Blocks(parts, int(Xa.shape[1]), names)


# ------------------------------------------------------------------------------- the map-reduce
def _add(*parts):
    """Elementwise sum of tuples of arrays/numbers (``None`` entries stay ``None``)."""
    first = parts[0]
    if isinstance(first, tuple):
        return tuple(_add(*(p[k] for p in parts)) for k in range(len(first)))
    if first is None:
        return None
    return sum(parts[1:], start=first)


def tree_sum(parts, combine=_add):
    """One delayed object: ``combine`` applied FAN_IN at a time, in a tree (on the workers)."""
    combine_d = dask.delayed(combine, pure=True)
    while len(parts) > 1:
        parts = [combine_d(*parts[i:i + FAN_IN]) if len(parts[i:i + FAN_IN]) > 1 else parts[i]
                 for i in range(0, len(parts), FAN_IN)]
    return parts[0]


def map_reduce(func, blocks, *args, combine=_add):
    """``sum_b func(X_b, y_b, a_b, *args)`` over the row blocks, computed on the active scheduler.

    ``func`` runs on the workers, once per block; the sum is a tree of ``combine`` tasks; the
    client receives the total only.
    """
    f = dask.delayed(func, pure=True)
    (total,) = dask.compute(tree_sum([f(*part, *args) for part in blocks.parts], combine))
    return total


# ------------------------------------------------------------------------------- the first pass
@dataclass
class Summary:
    """What one pass over the blocks finds: sizes, classes, moments, extremes (all global)."""

    n: int                      # rows
    n_positive: int             # rows of positive weight
    sw: float                   # sum of the weights
    labels: np.ndarray          # the distinct values of y, sorted (empty without y)
    label_weight: np.ndarray    # their summed weights
    label_rows: np.ndarray      # their numbers of rows of positive weight
    mean: np.ndarray            # weighted column means of X
    m2: np.ndarray              # weighted sums of squared deviations from the mean
    xmax: np.ndarray            # column maxima and minima over the rows of positive weight (NaN skipped)
    xmin: np.ndarray
    yabs: float = 0.0           # max |y| over the rows of positive weight (numeric y; 0 otherwise)
    wmin: float = np.inf        # the smallest and largest weight (no rows: inf, -inf)
    wmax: float = -np.inf

    def weights_differ(self):
        """Whether the weights are not all equal (the logistic first-order methods' Newton-step check)."""
        return self.wmax > self.wmin

    def spread(self):
        """Weighted column standard deviations."""
        return np.sqrt(self.m2 / self.sw)


def check_block_lengths(Xb, yb, swb, index, model):
    """Blocks of unknown sizes are paired one to one (``row_blocks``): say so when a pair's lengths differ,
    naming the cure, rather than letting the block's own validation report samples that do not match."""
    n = np.shape(Xb)[0]
    if yb is not None and np.shape(yb)[0] != n:
        raise ValueError(f"{model}: row block {index} of X has {n} rows but the matching block of y has "
                         f"{np.shape(yb)[0]}. Pass X and y split into the same row blocks: call "
                         "X.compute_chunk_sizes() and y.compute_chunk_sizes() (or build both from one DataFrame).")
    if swb is not None and np.shape(swb)[0] != n:
        raise ValueError(f"{model}: row block {index} of X has {n} rows but the matching block of "
                         f"sample_weight has {np.shape(swb)[0]}. Pass one sample_weight per row of X, split as X "
                         "(call compute_chunk_sizes() on both).")


def _summarise_block(Xb, yb, swb, index, model, labels_needed, allow_nan):
    check_block_lengths(Xb, yb, swb, index, model)
    Xb = np.asarray(Xb, dtype=np.float64)
    n = Xb.shape[0]
    if n and not (np.isfinite(Xb.max()) and np.isfinite(Xb.min())) and not (allow_nan and not np.isinf(Xb).any()):
        bad = "infinity" if np.isinf(Xb).any() else "NaN"
        raise ValueError(f"{model}: X contains {bad} (in row block {index}). Remove or impute the missing "
                         "or infinite values (e.g. X[~da.isnan(X).any(axis=1)]) first.")
    sw = np.ones(n) if swb is None else np.asarray(swb, dtype=np.float64)
    if n and not (np.all(np.isfinite(sw)) and sw.min() >= 0):
        raise ValueError(f"{model}: sample_weight has negative, NaN or infinite values (in row block {index}). "
                         "Pass finite sample_weight >= 0 (a weight of 0 leaves a sample out).")
    if yb is not None:
        yb = np.asarray(yb)
        if yb.dtype.kind == "f" and n and not np.all(np.isfinite(yb)):
            raise ValueError(f"{model}: y contains NaN or infinity (in row block {index}). Drop the samples "
                             "whose target is missing or infinite.")
        if not labels_needed and yb.dtype.kind not in "biuf":
            raise ValueError(f"{model}: y must be numeric for a regression; got dtype {yb.dtype} (in row block "
                             f"{index}). Use a classifier for class labels, or convert y to numbers.")
        if labels_needed:
            if yb.dtype.kind == "f" and n and np.any(yb != np.round(yb)):
                # continuous targets would make the set of "classes" O(N): refuse them in the block
                raise ValueError(f"{model}: Unknown label type: 'continuous'. {model} needs class labels, but y "
                                 f"looks 'continuous' (row block {index}). Use a regression model for a continuous "
                                 "target.")
            labels, inv = np.unique(yb, return_inverse=True)
            label_weight = np.bincount(inv.ravel(), weights=sw, minlength=labels.size)
            label_rows = np.bincount(inv.ravel()[sw > 0], minlength=labels.size)
        else:
            labels, label_weight, label_rows = np.empty(0), np.empty(0), np.empty(0, dtype=int)
    else:
        labels, label_weight, label_rows = np.empty(0), np.empty(0), np.empty(0, dtype=int)
    weight_sum = float(sw.sum())
    d = Xb.shape[1]
    yabs = 0.0
    if yb is not None and yb.dtype.kind in "fiub" and np.any(sw > 0):
        yabs = float(np.max(np.abs(yb[sw > 0]), initial=0.0))
    if weight_sum > 0:
        mean = (sw @ Xb) / weight_sum
        with np.errstate(over="ignore", invalid="ignore"):      # features near 1e300: m2 = inf (their users scale by xmax)
            m2 = sw @ (Xb - mean) ** 2
    else:
        mean, m2 = np.zeros(d), np.zeros(d)
    xmin, xmax = column_range(Xb, swb)     # over the rows of positive weight, NaN skipped
    return Summary(n, int(np.count_nonzero(sw > 0)), weight_sum, labels, label_weight, label_rows, mean, m2,
                   xmax, xmin, yabs, float(sw.min(initial=np.inf)), float(sw.max(initial=-np.inf)))


def merge_weight(w1, w2):
    """``w1 w2 / (w1 + w2)``, the weight of the squared gap between two parts' means in Chan et al.'s merge, as
    ``w1 (w2 / (w1 + w2))``: the product ``w1 w2`` of weights near 1e-200 underflowed to 0 (a least-squares fit
    on Dask lost the gap between its blocks' means: coefficients 10 % off, silently), near 1e200 overflowed."""
    return w1 * (w2 / (w1 + w2))


def _combine_summaries(*parts):
    """Chan et al.'s parallel update of weighted means and squared deviations, plus the rest."""
    out = parts[0]
    for s in parts[1:]:
        sw = out.sw + s.sw
        if sw > 0:
            delta = s.mean - out.mean
            mean = out.mean + delta * (s.sw / sw)
            with np.errstate(over="ignore", invalid="ignore"):
                m2 = out.m2 + s.m2 + delta * delta * merge_weight(out.sw, s.sw)
        else:
            mean, m2 = out.mean, out.m2
        labels, inv = np.unique(np.concatenate([out.labels, s.labels]), return_inverse=True)
        label_weight = np.bincount(inv.ravel(), weights=np.concatenate([out.label_weight, s.label_weight]),
                                   minlength=labels.size)
        label_rows = np.bincount(inv.ravel(), weights=np.concatenate([out.label_rows, s.label_rows]),
                                 minlength=labels.size).astype(int)
        if labels.size > MAX_CLASSES:
            raise ValueError(f"y has more than {MAX_CLASSES} distinct labels: pass class labels (a classifier "
                             "needs a few classes), or use a regression model for a continuous target.")
        out = Summary(out.n + s.n, out.n_positive + s.n_positive, sw, labels, label_weight, label_rows, mean, m2,
                      np.maximum(out.xmax, s.xmax), np.minimum(out.xmin, s.xmin), max(out.yabs, s.yabs),
                      min(out.wmin, s.wmin), max(out.wmax, s.wmax))
    return out


def summarise(blocks, model, labels=True, allow_nan=False):
    """One pass over the blocks: checks every block (the errors name the input and the block) and
    returns the :class:`Summary`. A block holding one class only is fine: classes are global."""
    f = dask.delayed(_summarise_block, pure=True)
    parts = [f(*part, i, model, labels, allow_nan) for i, part in enumerate(blocks.parts)]
    (total,) = dask.compute(tree_sum(parts, _combine_summaries))
    # a column with one value in every row of positive weight: its mean is that value exactly, not the
    # value to rounding (which the fits centring on it took for a feature: see linbook._design.constant_columns)
    constant = total.xmin == total.xmax
    total.mean, total.m2 = np.where(constant, total.xmin, total.mean), np.where(constant, 0.0, total.m2)
    if total.n == 0:
        raise ValueError(f"{model}: X has 0 samples. Pass more samples (rows of X): check the data or its split.")
    if not total.sw > 0:
        raise ValueError(f"{model}: sample_weight is zero for every sample: nothing to fit. "
                         "Give at least one sample a positive sample_weight.")
    if not np.isfinite(total.sw):      # as linbook.base.check_sample_weight in memory
        raise ValueError(f"{model}: sample_weight sums to more than float64 holds: rescale sample_weight, "
                         "dividing it by its largest value (for a model with a penalty lam, divide lam by the "
                         "same factor: the fit is then the same).")
    return total


# ------------------------------------------------------------------------------- predictions
def _method_on_block(block, estimator, method, names, args, kwargs, empty=None):
    """``method(estimator, block)``; ``empty`` (the output's type and trailing shape, 0 rows) for a block of
    no rows, which validation rejects as data but which filtering a dask collection leaves behind."""
    if empty is not None and block.shape[0] == 0:
        return empty
    if names is not None:
        import pandas as pd

        block = pd.DataFrame(block, columns=names)
    return method(estimator, block, *args, **kwargs)


def map_method(estimator, method, X, *args, **kwargs):
    """``method(estimator, X_b)`` on each row block of the dask collection ``X``: a dask array.

    The fitted estimator (``O(D^2 x classes)``) is sent to the workers; nothing is computed here
    except one call on a single row of zeros, for the shape and type of the output.
    """
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(estimator)
    model = type(estimator).__name__
    names = None
    if _is_dataframe(X):
        names = getattr(estimator, "feature_names_in_", None)
        if names is not None and list(X.columns) != list(names):
            raise ValueError(f"{model}: the columns of X are not those seen in fit ({list(names)[:10]}). "
                             "Pass X with the same columns, in the same order.")
    Xa = _as_array(X, "X", model)
    if Xa.ndim != 2 or Xa.shape[1] != estimator.n_features_in_:
        raise ValueError(f"{model}: X has shape {Xa.shape}, but {model} was fitted with "
                         f"{estimator.n_features_in_} features. Pass X with {estimator.n_features_in_} columns.")
    Xa = Xa.rechunk({1: -1}) if len(Xa.chunks[1]) > 1 else Xa
    probe = np.asarray(_method_on_block(np.zeros((1, Xa.shape[1])), estimator, method, names, args, kwargs))
    empty = np.empty((0,) + probe.shape[1:], dtype=probe.dtype)
    if probe.ndim == 1:
        return Xa.map_blocks(_method_on_block, estimator, method, names, args, kwargs, empty, drop_axis=1,
                             dtype=probe.dtype, meta=np.empty((0,), dtype=probe.dtype))
    return Xa.map_blocks(_method_on_block, estimator, method, names, args, kwargs, empty,
                         chunks=(Xa.chunks[0], probe.shape[1:]), dtype=probe.dtype,
                         meta=np.empty((0,) * probe.ndim, dtype=probe.dtype))
