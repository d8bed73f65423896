"""Plumbing shared by the streaming estimators: chunk validation, divergence, progress."""

from __future__ import annotations

import functools
import operator
import sys

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import validate_data as _sk_validate_data

from ..base import (DivergenceError, _numeric_y, _plain_input, _with_advice, all_or_nothing, check_sample_weight, is_dask,
                    require_y, validate_fit)
# the process's budget of numpy steps before the compiled loops load (shared with the lasso's sweeps)
from .._kernels.numpy_budget import NUMPY_STEPS, numpy_fit, numpy_pass, numpy_steps_left  # noqa: F401

CURE = "scale the features (e.g. StandardScaler), lower eta0 (or use eta0='auto')"


def transactional(method):
    """Make a training method all-or-nothing (:func:`linbook.base.all_or_nothing`) for an update that may
    write into the arrays it holds.

    A stream update mutates its state arrays in place while it runs through a chunk;
    a chunk that diverges half-way would otherwise leave part of itself in the model
    (and the counters out of step with the data). Before the call every array attribute's
    contents are saved too, and on an exception copied back into the same array objects (so
    an array the caller also holds, like a parameter, keeps its identity).

    A class whose updates build new arrays instead of writing into the ones it holds says so with
    ``_updates_replace_arrays = True``; then putting the dictionary back is enough, and no array is copied.

    Dask collections go to :func:`linbook.online._dask_fit.stream`: the chunks are the row blocks, in order.
    """
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        saved = [] if getattr(self, "_updates_replace_arrays", False) else \
            [(value, value.copy()) for value in vars(self).values() if isinstance(value, np.ndarray)]
        try:
            if is_dask(*args, *kwargs.values()):
                from ._dask_fit import stream

                return stream(self, method.__name__, *args, **kwargs)
            return method(self, *args, **kwargs)        # under all_or_nothing's BLAS policy (fit_blas_threads)
        except BaseException:
            for array, contents in saved:
                np.copyto(array, contents)
            raise
    return all_or_nothing(wrapper)


def validate_chunk(est, X, y, *, first, y_numeric, accept_sparse=False):
    """Validate one chunk of a stream.

    The first chunk (or ``fit``) goes through ``linbook.base.validate_fit``, which records
    ``n_features_in_`` / ``feature_names_in_``; later chunks are checked against them
    (same width, same column names), as scikit-learn's ``partial_fit`` does.
    Sparse ``X`` comes back as CSR without duplicate entries and with its column indices checked
    (``linbook._kernels.csr.summed_csr``: a copy only when a row repeats a column; unsorted rows are
    kept as they are; an index outside ``[0, n_features)`` raises).
    """
    require_y(est, y)
    sparse = ["csr", "csc", "coo"] if accept_sparse else False
    if first:
        X, y = validate_fit(est, X, y, y_numeric=y_numeric, accept_sparse=sparse)
    else:
        if not _plain_input(est, X, y, reset=False):
            with _with_advice(est):          # same width and column names as the first chunk
                X, y = _sk_validate_data(est, X, y, reset=False, dtype=np.float64, accept_sparse=sparse,
                                         y_numeric=y_numeric)
        if y_numeric:
            y = _numeric_y(est, y)
    if sp.issparse(X):
        from .._kernels.csr import summed_csr
        X = summed_csr(sp.csr_matrix(X))        # duplicates summed: the answer of canonical X
    return X, y


def record_params(est):
    """Remember the parameter objects a stream was validated with (its first chunk, or ``fit``)."""
    est._stream_params = {name: getattr(est, name) for name in _param_names(type(est))}


def recheck_params(est, check, fixed=()):
    """Validate the parameters again on a later chunk of a stream when any was set since the last check.

    ``set_params`` between ``partial_fit`` calls is allowed (scikit-learn's streams take a new ``eta0``
    that way), but a bad value set there was never checked: ``lam=-1`` went on as a negative penalty.
    ``check`` is the model's own validation. Parameters in ``fixed`` shape the stream's state (the
    intercept's slot, the prior it started from) and cannot change mid-stream: a change raises.
    When every parameter is still the object last validated, nothing is checked (a chunk of one row
    would otherwise pay the validation many times over).
    """
    if params_unchanged(est):
        return
    last = getattr(est, "_stream_params", None)
    for name in fixed:
        if last is not None and name in last and not _same_value(getattr(est, name), last[name]):
            raise ValueError(f"{type(est).__name__}: {name} changed from {last[name]!r} to {getattr(est, name)!r} "
                             f"after the stream started, but it fixes the model the stream updates. Set {name} "
                             f"back to {last[name]!r}, or call fit (or partial_fit on a clone) to start a new stream.")
    check()
    record_params(est)


def params_unchanged(est):
    """Whether every parameter is still the object last validated (:func:`record_params`): then
    :func:`recheck_params` checks nothing. One C-level pass (``attrgetter``, ``map``): a generator over the names
    cost ~0.7 us of a streamed chunk's ~15."""
    last = getattr(est, "_stream_params", None)
    if last is None:
        return False
    names = _param_names(type(est))
    values = _param_getter(names)(est)
    return len(last) == len(values) and all(map(operator.is_, values, map(last.get, names)))


@functools.cache
def _param_getter(names):
    """``est -> tuple of its parameters named in names`` (``attrgetter`` of one name returns no tuple)."""
    get = operator.attrgetter(*names)
    return get if len(names) > 1 else (lambda est: (get(est),))


_PARAM_NAMES = {}


def _param_names(cls):
    """The class's parameter names (``get_params`` reads the signature each time; this once per class)."""
    if cls not in _PARAM_NAMES:
        _PARAM_NAMES[cls] = tuple(cls._get_param_names())
    return _PARAM_NAMES[cls]


def _same_value(a, b):
    try:
        return a is b or bool(np.all(a == b))
    except (TypeError, ValueError):
        return False


def chunk_sample_weight(est, sample_weight, X, *, first):
    """``check_sample_weight`` for one chunk of a stream, where a later chunk whose weights are all 0 is
    valid: its rows count for nothing, as they do inside a ``fit`` (or a dask collection's block of
    them), so the chunk changes nothing. The first chunk still needs a positive weight to start from."""
    if (not first and sample_weight is not None and np.ndim(sample_weight) == 1     # None: ones, no test
            and np.shape(sample_weight)[0] == X.shape[0]):
        try:
            w = np.asarray(sample_weight, dtype=np.float64)
        except (TypeError, ValueError):
            w = None                 # not numbers: check_sample_weight says so
        if w is not None and not np.any(w):   # all 0 (a NaN is truthy, so it goes on to be refused)
            return np.zeros(X.shape[0])
    return check_sample_weight(sample_weight, X, estimator=est)


def diverged(est, where, cure=CURE):
    """The :class:`DivergenceError` of a fit whose loss or parameters stopped being finite."""
    return DivergenceError(f"{type(est).__name__}: the iteration diverged ({where} became non-finite). "
                           f"Cure: {cure}.")


def progress(est, epoch, n_epochs, loss):
    """Plain-text progress line on stderr (only when ``verbose``)."""
    width = 20
    done = int(round(width * epoch / n_epochs))
    print(f"{type(est).__name__} [{'#' * done}{'.' * (width - done)}] epoch {epoch}/{n_epochs}"
          f"  mean loss {loss:.6f}", file=sys.stderr, flush=True)


def objective_stop(tol, n_iter_no_change, y, sw, *, squared, fit_intercept):
    """The stop rule of an online model's ``fit``: a function of each epoch's objective that says when to stop.

    Stop when the objective (the epoch's summed loss, each sample's loss taken before its
    step, plus any penalty) has not fallen below ``best - tol * L_ref`` for
    ``n_iter_no_change`` epochs in a row (``best``: the lowest so far): scikit-learn's rule
    with ``tol`` in units of ``L_ref``. ``L_ref`` is the summed sample weight for the
    classification losses (``tol`` per sample, as scikit-learn) and, for the squared error
    (``squared``), the loss ``(1/2) sum_i s_i (y_i - ybar)^2`` of the best constant (``ybar``
    the weighted mean; 0 without intercept), so that rescaling ``y`` does not change when
    the rule fires. Used by ``SGDRegressor``, ``SGDClassifier`` and ``LMS``.
    """
    if squared:
        centre = np.average(y, weights=sw) if fit_intercept and sw.sum() > 0 else 0.0
        with np.errstate(over="ignore"):     # a target that overflows is reported by the fit
            ref = 0.5 * float(sw @ (y - centre) ** 2)
    else:
        ref = float(sw.sum())
    margin = float(tol) * ref
    best, no_change = np.inf, 0

    def stops(objective):
        nonlocal best, no_change
        no_change = no_change + 1 if objective > best - margin else 0
        best = min(best, objective)
        return no_change >= n_iter_no_change

    return stops
